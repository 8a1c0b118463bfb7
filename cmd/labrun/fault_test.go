package main

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The fault tests break the real labrun binary on purpose, on the local target: kill -9 in the
// middle of a run, SIGINT at many moments from start-up on, a port taken by another program,
// concurrent runs of one scenario. Every wait is bounded, everything listens on loopback, and
// every test kills what it started.

// orphanScenario starts a process step that leaves three kinds of descendants: the direct
// child (a shell, which Pdeathsig covers), a grandchild in the same process group, and one that
// escaped into a new session (setsid): only the reaper finds that one.
const orphanScenario = `package s

import "labrun.dev/schema"

s: schema.#Scenario & {
	steps: [
		{name: "srv", process: {
			argv: ["sh", "-c", """
				echo $$ > child.pid
				sh -c 'echo $$ > grandchild.pid; exec sleep 300' &
				setsid sh -c 'echo $$ > escaped.pid; exec sleep 300' &
				sleep 0.2
				echo up
				exec sleep 300
				"""]
			ready: log: "^up$"
		}},
		{sleep: "60s"},
	]
}
`

// TestKill9LeavesNoChildren: kill -9 of labrun in the middle of a run leaves none of its process
// step's descendants alive, and a rerun in the same directory runs normally (nothing of the
// first run holds anything).
func TestKill9LeavesNoChildren(t *testing.T) {
	bin := buildFakeBinary(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "s.cue"), orphanScenario)
	pidFiles := []string{"child.pid", "grandchild.pid", "escaped.pid"}

	for round := range 2 { // kill -9, then the same again: the rerun
		for _, f := range pidFiles {
			os.Remove(filepath.Join(dir, f))
		}
		cmd := exec.Command(bin, "run", "--report-dir", "", "s.cue")
		cmd.Dir = dir
		out := startLogged(t, cmd)
		pids := waitPidFiles(t, dir, pidFiles, 10*time.Second, out)
		t.Cleanup(func() { killAll(pids) })
		waitLine(t, out, "srv", 10*time.Second)
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
		if left := waitGone(pids, 5*time.Second); len(left) > 0 {
			t.Fatalf("round %d: after kill -9 of labrun, still alive: %v", round, left)
		}
	}
}

// startLogged starts cmd with stdout and stderr collected line by line in a channel-fed log.
func startLogged(t *testing.T, cmd *exec.Cmd) *lineLog {
	t.Helper()
	l := &lineLog{lines: make(chan string, 1000)}
	r, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			l.lines <- sc.Text()
		}
		close(l.lines)
	}()
	return l
}

type lineLog struct {
	lines chan string
	seen  []string
}

func (l *lineLog) String() string { return strings.Join(l.seen, "\n") }

// waitLine waits until a line containing s is read.
func waitLine(t *testing.T, l *lineLog, s string, within time.Duration) {
	t.Helper()
	deadline := time.After(within)
	for {
		select {
		case line, ok := <-l.lines:
			if !ok {
				t.Fatalf("output ended before a line with %q:\n%s", s, l)
			}
			l.seen = append(l.seen, line)
			if strings.Contains(line, s) {
				return
			}
		case <-deadline:
			t.Fatalf("no line with %q within %s:\n%s", s, within, l)
		}
	}
}

func waitPidFiles(t *testing.T, dir string, names []string, within time.Duration, l *lineLog) []int {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		var pids []int
		for _, n := range names {
			b, err := os.ReadFile(filepath.Join(dir, n))
			if err != nil {
				break
			}
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				break
			}
			pids = append(pids, pid)
		}
		if len(pids) == len(names) {
			return pids
		}
		if time.Now().After(deadline) {
			t.Fatalf("pid files %v not all written within %s; output:\n%s", names, within, l)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// alive reports a process that exists and is not a zombie.
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || len(s) < i+3 || (s[i+2] != 'Z' && s[i+2] != 'X')
}

// waitGone waits until none of pids is alive and returns those still alive at the end.
func waitGone(pids []int, within time.Duration) []int {
	deadline := time.Now().Add(within)
	for {
		var left []int
		for _, p := range pids {
			if alive(p) {
				left = append(left, p)
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func killAll(pids []int) {
	for _, p := range pids {
		if alive(p) {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
	}
}

func writeFile(t *testing.T, p, data string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func exitCodeOf(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err == nil {
		return 0
	}
	return -1
}

// TestReadyOnTakenPort: a process step whose ready check names a port another program holds
// fails the run (exit 3) with a message naming that program, instead of passing against it.
func TestReadyOnTakenPort(t *testing.T) {
	bin := buildFakeBinary(t)
	dir := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	writeFile(t, filepath.Join(dir, "s.cue"), fmt.Sprintf(`package s

import "labrun.dev/schema"

s: schema.#Scenario & {
	steps: [{name: "srv", process: {argv: ["sleep", "30"], ready: tcp: %q}}]
}
`, ln.Addr().String()))
	cmd := exec.Command(bin, "run", "--report-dir", "", "s.cue")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if code := exitCodeOf(err); code != exitInfra {
		t.Fatalf("exit %d, want %d; output:\n%s", code, exitInfra, out)
	}
	want := fmt.Sprintf("already in use before the process started, by pid %d", os.Getpid())
	if !strings.Contains(string(out), want) {
		t.Errorf("output does not say %q:\n%s", want, out)
	}
}
