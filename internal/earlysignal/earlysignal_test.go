package earlysignal

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// child runs the body of a test in a fresh copy of the test binary, where the package's init
// has caught signals from the start, and returns how that process ended.
func child(t *testing.T, name string) error {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+name+"$")
	cmd.Env = append(os.Environ(), "EARLYSIGNAL_CHILD="+name)
	out, err := cmd.CombinedOutput()
	t.Logf("child output: %s", out)
	return err
}

func inChild(name string) bool { return os.Getenv("EARLYSIGNAL_CHILD") == name }

// waitCaught waits until the package's channel holds a signal.
func waitCaught() {
	for len(ch) == 0 {
		time.Sleep(time.Millisecond)
	}
}

func TestCaughtSignalIsKeptForTake(t *testing.T) {
	if inChild(t.Name()) {
		_ = syscall.Kill(os.Getpid(), syscall.SIGINT)
		sigs, stop := Take()
		defer stop()
		select {
		case s := <-sigs:
			if s != os.Interrupt {
				os.Exit(3)
			}
			os.Exit(0)
		case <-time.After(10 * time.Second):
			os.Exit(4)
		}
	}
	if err := child(t, t.Name()); err != nil {
		t.Fatalf("the child should have received its SIGINT and exited 0: %v", err)
	}
}

func TestReleaseRaisesACaughtSignal(t *testing.T) {
	if inChild(t.Name()) {
		_ = syscall.Kill(os.Getpid(), syscall.SIGTERM)
		waitCaught()
		Release()
		time.Sleep(10 * time.Second)
		os.Exit(0) // not reached: the signal's default action ends the process
	}
	err := child(t, t.Name())
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("the child should have been killed by SIGTERM, got %v", err)
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
		t.Fatalf("the child should have been killed by SIGTERM, got %v", err)
	}
}

func TestReleaseRestoresTheDefaultAction(t *testing.T) {
	if inChild(t.Name()) {
		Release()
		_ = syscall.Kill(os.Getpid(), syscall.SIGINT)
		time.Sleep(10 * time.Second)
		os.Exit(0) // not reached
	}
	err := child(t, t.Name())
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("the child should have been killed by SIGINT, got %v", err)
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGINT {
		t.Fatalf("the child should have been killed by SIGINT, got %v", err)
	}
}

func TestTakeAfterReleaseCatchesAgain(t *testing.T) {
	if inChild(t.Name()) {
		Release()
		sigs, stop := Take()
		defer stop()
		_ = syscall.Kill(os.Getpid(), syscall.SIGINT)
		select {
		case <-sigs:
			os.Exit(0)
		case <-time.After(10 * time.Second):
			os.Exit(4)
		}
	}
	if err := child(t, t.Name()); err != nil {
		t.Fatalf("after Release, Take should catch SIGINT again (the child exits 0): %v", err)
	}
}
