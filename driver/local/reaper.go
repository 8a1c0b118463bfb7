package local

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"sync"
	"syscall"
	"time"
)

// markerEnv is set on every command the local target starts (process and exec steps), with a
// value unique to the target: the reaper finds what the run started by it (see reaper_linux.go).
const markerEnv = "LABRUN_RUN_MARKER"

// reaperEnv, when set, makes the binary act as the reaper of the run whose marker it holds
// (Linux only: see reaper_linux.go).
const reaperEnv = "LABRUN_LOCAL_REAPER"

// reaperClient is labrun's end of the reaper: it starts the reaper on first use, tells it each
// process group, and on close lets it kill what escaped and waits for it.
type reaperClient struct {
	marker string
	logf   func(string, ...any)
	spawn  spawner

	mu     sync.Mutex
	cmd    *exec.Cmd
	w      *os.File
	failed bool
	closed bool
}

func newReaperClient(logf func(string, ...any)) *reaperClient {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return &reaperClient{marker: fmt.Sprintf("%d-%s", os.Getpid(), hex.EncodeToString(b)), logf: logf}
}

// env returns env (nil: this process's) with the run's marker added.
func (r *reaperClient) env(env []string) []string {
	if env == nil {
		env = os.Environ()
	}
	return append(slices.Clone(env), markerEnv+"="+r.marker)
}

// ensure starts the reaper unless it runs already. Call it before starting a command, so that
// the command never lives a moment unwatched. A reaper that cannot start is logged once;
// commands still start (Pdeathsig and process groups still apply).
func (r *reaperClient) ensure() {
	if !reaperSupported() {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cmd != nil || r.failed || r.closed {
		return
	}
	if err := r.startLocked(); err != nil {
		r.failed = true
		r.logf("reaper not started (children of a labrun killed with -9 may outlive it): %v", err)
	}
}

func (r *reaperClient) startLocked() error {
	// /proc/self/exe is this very binary even when its file was replaced or deleted since it
	// started (a rebuild during a long run, go run's temp binary).
	self := "/proc/self/exe"
	if _, err := os.Stat(self); err != nil {
		if self, err = os.Executable(); err != nil {
			return err
		}
	}
	pr, pw, err := os.Pipe() // close-on-exec: no command but the reaper gets either end
	if err != nil {
		return err
	}
	defer pr.Close()
	cmd := exec.Command(self)
	cmd.Env = []string{reaperEnv + "=" + r.marker}
	cmd.Stdin = pr // stdout and stderr: the null device
	setProcessGroup(cmd)
	if err := cmd.Start(); err != nil {
		pw.Close()
		return err
	}
	r.cmd, r.w = cmd, pw
	return nil
}

// start starts cmd (which must lead its own process group) watched by the reaper.
func (r *reaperClient) start(cmd *exec.Cmd) error {
	r.ensure()
	if err := r.spawn.start(cmd); err != nil {
		return err
	}
	r.watch(cmd.Process.Pid)
	return nil
}

// watch tells the reaper about a new process group.
func (r *reaperClient) watch(pgid int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.w != nil {
		_, _ = fmt.Fprintf(r.w, "G %d\n", pgid)
	}
}

// signalEscaped sends sig to what carries the run's marker: this process does the reaper's
// work itself when the target closes, so that a descendant holding a process's output open
// does not keep that process's wait waiting.
func (r *reaperClient) signalEscaped(sig syscall.Signal) {
	signalMarked(r.marker, nil, os.Getpid(), sig)
}

// close ends the reaper: it kills whatever still carries the run's marker (processes already
// stopped are not there any more) and exits. It waits for that, within ctx and 5s.
func (r *reaperClient) close(ctx context.Context) error {
	r.spawn.stop()
	r.mu.Lock()
	r.closed = true
	cmd, w := r.cmd, r.w
	r.cmd, r.w = nil, nil
	r.mu.Unlock()
	if cmd == nil {
		return nil
	}
	w.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t := time.NewTimer(5 * time.Second)
	defer t.Stop()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("reaper: %w", err)
		}
		return nil
	case <-ctx.Done():
	case <-t.C:
	}
	_ = cmd.Process.Kill()
	<-done
	return fmt.Errorf("reaper (pid %d) did not end in time", cmd.Process.Pid)
}
