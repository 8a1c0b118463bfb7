package local

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"labrun.dev/labrun/schema"
)

func TestProcessReadiness(t *testing.T) {
	tg := newTarget(t, nil, Options{})
	httpAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t, "127.0.0.1"))
	tcpAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t, "127.0.0.1"))
	for _, tc := range []struct {
		name string
		req  schema.Process
	}{
		{"http", helperProcess("serve-http", httpAddr, &schema.Ready{HTTP: "http://" + httpAddr + "/ready"})},
		{"tcp", helperProcess("listen-tcp", tcpAddr, &schema.Ready{TCP: tcpAddr})},
		{"log", schema.Process{Argv: []string{"sh", "-c", "echo starting; sleep 0.2; echo 'server ready on :9'; sleep 30"},
			Ready: &schema.Ready{Log: `ready on :\d+`}}},
		{"none", schema.Process{Argv: []string{"sleep", "30"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := bg()
			defer cancel()
			start := time.Now()
			p, err := tg.Processes.Start(ctx, tc.name, tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if tc.req.Ready != nil && time.Since(start) < 150*time.Millisecond {
				t.Errorf("ready after %v, before the process could be", time.Since(start))
			}
			if err := p.Stop(ctx, "TERM"); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestProcessNotReady(t *testing.T) {
	tg := newTarget(t, nil, Options{})
	ctx, cancel := bg()
	defer cancel()

	// Exits before it is ready: the error says how, and shows its output.
	_, err := tg.Processes.Start(ctx, "early", helperProcess("exit-early", "x", &schema.Ready{Log: "never"}))
	if err == nil || !strings.Contains(err.Error(), "exited with code 7 before it was ready") ||
		!strings.Contains(err.Error(), "fatal: config is broken") {
		t.Fatalf("err = %v", err)
	}

	// Not ready in time: an error, and the process is killed (its group too).
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	start := time.Now()
	_, err = tg.Processes.Start(ctx, "slow", schema.Process{
		Argv:  []string{"sh", "-c", "sleep 30 & echo $! > child.pid; echo waiting; wait"},
		Dir:   dir,
		Ready: &schema.Ready{Log: "never", Timeout: schema.Duration(300 * time.Millisecond)},
	})
	if err == nil || !strings.Contains(err.Error(), "not ready after 300ms") || !strings.Contains(err.Error(), "waiting") {
		t.Fatalf("err = %v", err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("took %v", took)
	}
	assertGone(t, pidFile)

	if _, err := tg.Processes.Start(ctx, "bad", schema.Process{Argv: []string{"true"}, Ready: &schema.Ready{}}); err == nil {
		t.Error("a readiness check with nothing to check was accepted")
	}
	if _, err := tg.Processes.Start(ctx, "missing", schema.Process{Argv: []string{"/nonexistent/labrun-cmd"}}); err == nil {
		t.Error("a missing command started")
	}
}

func TestProcessStop(t *testing.T) {
	tg := newTarget(t, nil, Options{StopGrace: 300 * time.Millisecond})
	ctx, cancel := bg()
	defer cancel()
	dir := t.TempDir()

	// TERM reaches the whole group: the shell and the sleep it started.
	p, err := tg.Processes.Start(ctx, "group", schema.Process{
		Argv:  []string{"sh", "-c", "sleep 30 & echo $! > child.pid; echo started; wait"},
		Dir:   dir,
		Ready: &schema.Ready{Log: "started"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tg.Processes.Start(ctx, "group", schema.Process{Argv: []string{"true"}}); err == nil ||
		!strings.Contains(err.Error(), "still running") {
		t.Errorf("second process of the same name: %v", err)
	}
	if err := p.Stop(ctx, "TERM"); err != nil {
		t.Fatal(err)
	}
	assertGone(t, filepath.Join(dir, "child.pid"))
	if err := p.Stop(ctx, "TERM"); err != nil {
		t.Errorf("stopping a stopped process: %v", err)
	}

	// A process that ignores TERM is killed after the grace period.
	p, err = tg.Processes.Start(ctx, "stubborn", helperProcess("ignore-term", "x", &schema.Ready{Log: "ignoring TERM"}))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := p.Stop(ctx, "TERM"); err != nil {
		t.Fatal(err)
	}
	// The lower bound is the grace; the upper only catches a KILL that never came (a loaded
	// machine stretches a 300ms wait, so no tight bound: no timed assertion).
	if took := time.Since(start); took < 300*time.Millisecond || took > 30*time.Second {
		t.Errorf("TERM then KILL took %v, want the 300ms grace", took)
	}
	if err := p.Stop(ctx, "HUP"); err == nil {
		t.Error("unknown signal accepted")
	}

	// KILL does not wait for a grace period: with a grace of a minute, a KILL that waited
	// for it would take a minute; no bound tighter than that is held (a loaded machine took
	// over 250ms to reap a killed process, and the test failed on a correct Stop).
	long := newTarget(t, nil, Options{StopGrace: time.Minute})
	p, err = long.Processes.Start(ctx, "killme", helperProcess("ignore-term", "x", &schema.Ready{Log: "ignoring TERM"}))
	if err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	if err := p.Stop(ctx, "KILL"); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took >= 30*time.Second {
		t.Errorf("KILL took %v: it waited for the grace period", took)
	}
}

// Output and logs: lines with the time they were read; logs since a mark; every line streamed
// to the step's writer as "<time> <text>".
func TestProcessOutputAndLogs(t *testing.T) {
	tg := newTarget(t, nil, Options{})
	ctx, cancel := bg()
	defer cancel()
	var out lockedBuffer
	p, err := tg.Processes.Start(ctx, "talker", schema.Process{
		Argv:   []string{"sh", "-c", "echo one; echo two >&2; sleep 0.3; echo three; printf partial; sleep 30"},
		Env:    map[string]string{"LABRUN_TEST": "1"},
		Ready:  &schema.Ready{Log: "two"},
		Output: &out,
	})
	if err != nil {
		t.Fatal(err)
	}
	// stdout and stderr are read by two goroutines: ready on "two" (stderr) does not mean
	// "one" (stdout) has been read yet. Mark only once both have, so that a busy machine
	// cannot time "one" after the mark.
	for deadline := time.Now().Add(5 * time.Second); ; {
		have := map[string]bool{}
		all, _ := schema.ReadLogs(ctx, tg.Logs, schema.Logs{Process: "talker"}, time.Time{})
		for _, l := range all {
			have[l.Text] = true
		}
		if have["one"] && have["two"] {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("one and two not read within 5 s: %+v", all)
		}
		time.Sleep(5 * time.Millisecond)
	}
	mark := time.Now()
	time.Sleep(500 * time.Millisecond)
	if _, err := schema.ReadLogs(ctx, tg.Logs, schema.Logs{Process: "nobody"}, mark); err == nil {
		t.Error("logs of an unknown process")
	}
	lines, err := schema.ReadLogs(ctx, tg.Logs, schema.Logs{Process: "talker"}, mark)
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 1 || lines[0].Text != "three" || lines[0].Time.Before(mark) {
		t.Errorf("since the mark: %+v", lines)
	}
	if err := p.Stop(ctx, "TERM"); err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, l := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		stamp, text, _ := strings.Cut(l, " ")
		if _, err := time.Parse(time.RFC3339Nano, stamp); err != nil {
			t.Errorf("line %q: %v", l, err)
		}
		texts = append(texts, text)
	}
	// stdout and stderr are separate pipes: "one" and "two" may be read in either order.
	got := strings.Join(texts, ",")
	if got != "one,two,three,partial" && got != "two,one,three,partial" {
		t.Errorf("output %q", got)
	}
}

// lockedBuffer is a bytes.Buffer for one writer and a reader at the end.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// A process that writes without end keeps a bounded head and tail in memory: logs since its
// start hand on those and say the rest was cut; the step's writer got every byte.
func TestProcessOutputIsBounded(t *testing.T) {
	tg := newTarget(t, nil, Options{StopGrace: 100 * time.Millisecond})
	ctx, cancel := bg()
	defer cancel()
	var out countingWriter
	mark := time.Now()
	// 64 MiB in lines of 1 KiB, then "done".
	p, err := tg.Processes.Start(ctx, "flood", schema.Process{
		Argv:   []string{"sh", "-c", "head -c 67108864 /dev/zero | tr '\\0' x | fold -w 1023; echo; echo done; exec sleep 30"},
		Ready:  &schema.Ready{Log: "^done$", Timeout: schema.Duration(30 * time.Second)},
		Output: &out,
	})
	if err != nil {
		t.Fatal(err)
	}
	var kept int
	var last string
	err = tg.Logs.Logs(ctx, schema.Logs{Process: "flood"}, schema.LogSince{Time: mark}, func(l schema.LogLine) { kept += len(l.Text); last = l.Text })
	if !errors.Is(err, schema.ErrLinesCut) {
		t.Errorf("logs: %v, want ErrLinesCut", err)
	}
	if kept > schema.OutputHead+schema.OutputTail || last != "done" {
		t.Errorf("kept %d bytes of lines, the last %q", kept, last)
	}
	if err := p.Stop(ctx, "TERM"); err != nil {
		t.Fatal(err)
	}
	if n := out.n.Load(); n < 64<<20 {
		t.Errorf("the writer got %d bytes, want all 64 MiB and their time stamps", n)
	}
}

type countingWriter struct{ n atomic.Int64 }

func (w *countingWriter) Write(p []byte) (int, error) { w.n.Add(int64(len(p))); return len(p), nil }

// Close stops every process still running.
func TestCloseStopsProcesses(t *testing.T) {
	ctx, cancel := bg()
	defer cancel()
	tg, err := New(ctx, nil, Options{StopGrace: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := tg.Processes.Start(ctx, "sleeper", schema.Process{
		Argv: []string{"sh", "-c", "echo $$ > pid; echo up; exec sleep 30"}, Dir: dir, Ready: &schema.Ready{Log: "up"}}); err != nil {
		t.Fatal(err)
	}
	stubborn, err := tg.Processes.Start(ctx, "stubborn", helperProcess("ignore-term", "x", &schema.Ready{Log: "ignoring"}))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := tg.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("Close took %v", took)
	}
	assertGone(t, filepath.Join(dir, "pid"))
	if p := stubborn.(*process); !p.exited() {
		t.Error("the process that ignores TERM survived Close")
	}
}

// assertGone waits briefly for the process whose pid is in file to be gone.
func assertGone(t *testing.T, file string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	for range 100 {
		if syscall.Kill(pid, 0) == syscall.ESRCH || isZombie(pid) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Errorf("process %d is still running", pid)
}

// isZombie: a killed grandchild whose parent (init in a container) has not reaped it yet.
func isZombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	_, rest, ok := strings.Cut(string(b), ") ")
	return ok && strings.HasPrefix(rest, "Z")
}

// Output without newlines comes in pieces of maxLineBytes, each byte once (as the step's
// writer sees it; memory keeps what its budgets allow).
func TestProcessLongLinesInPieces(t *testing.T) {
	var out bytes.Buffer
	p := process{out: &out}
	p.stdout.p = &p
	chunk := bytes.Repeat([]byte("x"), 32<<10)
	for range 112 { // 3.5 MiB in writes of 32 KiB, as a pipe delivers them
		_, _ = p.stdout.Write(chunk)
	}
	_, _ = p.stdout.Write([]byte("y\nend\n"))
	var sizes []int
	for _, l := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		_, text, _ := strings.Cut(l, " ")
		sizes = append(sizes, len(text))
	}
	want := []int{maxLineBytes, maxLineBytes, maxLineBytes, maxLineBytes/2 + 1, 3}
	if fmt.Sprint(sizes) != fmt.Sprint(want) {
		t.Errorf("line sizes %v, want %v", sizes, want)
	}
}
