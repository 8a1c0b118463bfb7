//go:build linux

package keeper

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The keeper is this test binary started again (init runs it), as it is labrun in labrun.

// escapers is a shell script that leaves descendants of every kind, each writing its pid to a
// file in the current folder: a new session, a cleared environment, both, and a double fork
// whose middle process exits at once (the grandchild is an orphan).
const escapers = `
setsid sh -c 'echo $$ > setsid.pid; exec sleep 300' &
env -i /bin/sh -c 'echo $$ > envi.pid; exec sleep 300' &
setsid env -i /bin/sh -c 'echo $$ > both.pid; exec sleep 300' &
sh -c '(setsid env -i /bin/sh -c "echo \$\$ > daemon.pid; exec sleep 300" &)'
`

var escaperFiles = []string{"setsid.pid", "envi.pid", "both.pid", "daemon.pid"}

func start(t *testing.T, dir, script string, grace time.Duration) (*exec.Cmd, *Control) {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	ctl, err := Wrap(cmd, grace)
	if err != nil {
		t.Fatal(err)
	}
	err = cmd.Start()
	ctl.Started()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctl.Kill()
		_ = cmd.Wait()
	})
	return cmd, ctl
}

func pids(t *testing.T, dir string) []int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	var out []int
	for _, f := range escaperFiles {
		for {
			b, err := os.ReadFile(filepath.Join(dir, f))
			if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && perr == nil {
				out = append(out, pid)
				t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s not written within 10s", f)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	return out
}

// alive: a process that exists and is not a zombie.
func alive(pid int) bool {
	_, state, ok := parentOf(pid)
	return ok && state != 'Z' && state != 'X'
}

func living(ps []int) []int {
	var out []int
	for _, p := range ps {
		if alive(p) {
			out = append(out, p)
		}
	}
	return out
}

// TestKillKillsTheWholeTree: Kill makes the keeper kill every descendant, whatever it did to
// its session and environment, before it exits.
func TestKillKillsTheWholeTree(t *testing.T) {
	dir := t.TempDir()
	cmd, ctl := start(t, dir, escapers+"exec sleep 300", time.Minute)
	ps := pids(t, dir)
	if left := living(ps); len(left) != len(ps) {
		t.Fatalf("only %v of %v alive before the kill", left, ps)
	}
	ctl.Kill()
	err := cmd.Wait()
	if left := living(ps); len(left) > 0 {
		t.Fatalf("the keeper exited with %v alive", left)
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Errorf("exit %v, want killed by SIGKILL (as its command was)", err)
	}
}

// TestLabrunGone: when the control pipe's other end closes because its holder died (here: the
// process that started the keeper, killed with -9), the keeper kills the tree.
func TestLabrunGone(t *testing.T) {
	if os.Getenv("KEEPER_TEST_PARENT") != "" {
		cmd := exec.Command("sh", "-c", escapers+"exec sleep 300")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		ctl, err := Wrap(cmd, time.Minute)
		if err != nil {
			os.Exit(3)
		}
		if err := cmd.Start(); err != nil {
			os.Exit(4)
		}
		ctl.Started()
		time.Sleep(time.Hour) // killed with -9 by the test
	}
	dir := t.TempDir()
	parent := exec.Command(os.Args[0], "-test.run=^TestLabrunGone$")
	parent.Dir = dir
	parent.Env = append(os.Environ(), "KEEPER_TEST_PARENT=1")
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	ps := pids(t, dir)
	_ = parent.Process.Kill()
	_ = parent.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for len(living(ps)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("5s after its parent's kill -9, still alive: %v", living(ps))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestCommandExitEndsTheTree: when the command exits, what it left gets TERM, then KILL after
// the grace period, and the keeper exits with the command's exit code.
func TestCommandExitEndsTheTree(t *testing.T) {
	dir := t.TempDir()
	// One of them ignores TERM: KILL after the grace period ends it.
	script := escapers + `env -i /bin/sh -c 'trap "" TERM; echo $$ > stubborn.pid; while :; do sleep 1; done' &
for f in setsid envi both daemon stubborn; do while [ ! -s $f.pid ]; do sleep 0.01; done; done
exit 7`
	cmd, _ := start(t, dir, script, 300*time.Millisecond)
	ps := pids(t, dir)
	begin := time.Now()
	err := cmd.Wait()
	took := time.Since(begin)
	b, _ := os.ReadFile(filepath.Join(dir, "stubborn.pid"))
	stubborn, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if left := living(append(ps, stubborn)); len(left) > 0 {
		t.Fatalf("the keeper exited with %v alive", left)
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 7 {
		t.Errorf("exit %v, want 7 (the command's)", err)
	}
	if took < 250*time.Millisecond {
		t.Errorf("the keeper exited after %s: the process that ignores TERM had its 300ms of grace?", took)
	}
}

// TestExitStatusMirrorsTheCommand: a command killed by a signal makes its keeper die of it.
func TestExitStatusMirrorsTheCommand(t *testing.T) {
	cmd, _ := start(t, t.TempDir(), "kill -TERM $$", time.Second)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGTERM {
		t.Errorf("exit %v, want killed by SIGTERM", err)
	}
}

// TestMissingCommand: a command that does not exist fails in Wrap, as exec.Cmd.Start would.
func TestMissingCommand(t *testing.T) {
	for _, argv0 := range []string{"/nonexistent/labrun-cmd", "labrun-no-such-command"} {
		cmd := exec.Command(argv0)
		if _, err := Wrap(cmd, time.Second); err == nil {
			t.Errorf("%s: Wrap succeeded", argv0)
		}
	}
}
