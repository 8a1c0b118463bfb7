package local

import (
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestEndedSeesAHostKilledBeforeItsWait: a backend host killed during the run is gone when the
// run asks as it ends, even where the goroutine in the host's Wait has not run yet (here it
// never starts: a busy machine, where the run said FAILED instead of the host's end).
// childExit reads how a child ended without reaping it, so its Wait still gets the status.
func TestEndedSeesAHostKilledBeforeItsWait(t *testing.T) {
	for _, c := range []struct{ script, want string }{
		{"kill -9 $$", "signal: killed"},
		{"exit 3", "exit status 3"},
	} {
		cmd := exec.Command("sh", "-c", c.script)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		h := &backendHost{cmd: cmd, exited: make(chan struct{}), backends: []string{"a"}}
		// Polled until the child has ended (10 s only bounds the wait for it).
		var got string
		for deadline := time.Now().Add(10 * time.Second); got == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			got = h.ended()
		}
		if !strings.Contains(got, "is gone ("+c.want+"), and backend a with it") {
			t.Errorf("%s: ended() = %q, want the host gone (%s)", c.script, got, c.want)
		}
		err := cmd.Wait() // not reaped by ended: its Wait still has the status
		var exit *exec.ExitError
		if !errors.As(err, &exit) || err.Error() != c.want {
			t.Errorf("%s: Wait = %v, want %s", c.script, err, c.want)
		}
	}
	sleep := exec.Command("sleep", "60")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { sleep.Process.Kill(); sleep.Wait() }()
	if how := childExit(sleep.Process.Pid); how != "" {
		t.Errorf("childExit of a running child = %q, want \"\"", how)
	}
}
