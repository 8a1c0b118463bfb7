package interp_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"labrun.dev/labrun/driver/fakes"
	"labrun.dev/labrun/interp"
)

// TestProcessEndedOnItsOwn (fake processes: driver/fakes, whose World says how a process
// ended): a process step is a claim that the process ran while the steps did. One that ended
// on its own with a failure before anything stopped it makes the run an error, and the
// cleanup says so instead of "removed" (its line marked bad); one that exited 0 does not
// (a command that daemonizes exits so) but the cleanup says it had ended, not "removed"; one
// that a kill step stopped was already gone.
func TestProcessEndedOnItsOwn(t *testing.T) {
	for _, c := range []struct {
		name, steps, ended string
		want               interp.Outcome
		cleanup            string
		bad                bool // the cleanup's event says something went wrong
	}{
		{"failed on its own", `{name: "srv", process: argv: ["x"]}, {sleep: "1ms"}`, "exited with code 127", interp.Errored,
			"process srv had already ended: it exited with code 127 on its own, before the cleanup", true},
		{"killed by a signal on its own", `{name: "srv", process: argv: ["x"]}, {sleep: "1ms"}`, "was killed by signal killed", interp.Errored,
			"process srv had already ended: it was killed by signal killed on its own", true},
		{"finished", `{name: "srv", process: argv: ["x"]}, {sleep: "1ms"}`, "exited with code 0", interp.Passed,
			"process srv had already ended: its command exited with code 0 on its own, before the cleanup", false},
		{"still running", `{name: "srv", process: argv: ["x"]}, {sleep: "1ms"}`, "", interp.Passed, "removed process srv", false},
		// The kill step asks first (running), the cleanup after (ended, as the kill made it).
		{"stopped by a kill step", `{name: "srv", process: argv: ["x"]}, {kill: process: "srv"}`, "exited with code 143", interp.Passed, "already gone: process srv", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			sc := loadScenario(t, `s: schema.#Scenario & {steps: [`+c.steps+`], expect: ["ended.srv >= 0"]}`)
			asked := 0
			w := &fakes.World{Exited: func(string) (string, bool) {
				asked++
				if strings.Contains(c.steps, "kill:") && asked == 1 {
					return "", false
				}
				return c.ended, c.ended != ""
			}}
			bad := false
			observe := interp.WithObserver(func(e interp.Event) {
				if e.CleanupDone && strings.Contains(e.Cleanup, "process srv") {
					bad = e.CleanupBad
				}
			})
			rec := interp.New(w.Target(), observe).Run(context.Background(), context.Background(), sc)
			if bad != c.bad {
				t.Errorf("cleanup event bad %v, want %v", bad, c.bad)
			}
			if rec.Outcome != c.want {
				t.Errorf("outcome %s (%s), want %s", rec.Outcome, rec.Error, c.want)
			}
			if !strings.Contains(strings.Join(rec.Cleanup, "\n"), c.cleanup) {
				t.Errorf("cleanup %q, want one holding %q", rec.Cleanup, c.cleanup)
			}
			if c.want == interp.Errored && !strings.Contains(rec.Error, c.cleanup) {
				t.Errorf("error %q, want one holding %q", rec.Error, c.cleanup)
			}
		})
	}
}

// TestProcessKilledByTheCleanup (fake processes: driver/fakes): a process that did not end on
// the cleanup's SIGTERM within its grace period, and that its KILL ended, is removed, but the
// cleanup line says how ("removed process srv (it did not end on SIGTERM within its grace
// period, so it was killed with SIGKILL)"): before, a plain "removed process srv" read as a
// process that stopped as asked, its TERM handler (flush, close, deregister) run. The run's
// verdict is not changed.
func TestProcessKilledByTheCleanup(t *testing.T) {
	sc := loadScenario(t, `s: schema.#Scenario & {steps: [{name: "srv", process: argv: ["x"]}, {sleep: "1ms"}], expect: ["ended.srv >= 0"]}`)
	asked := 0
	w := &fakes.World{Exited: func(string) (string, bool) {
		asked++
		if asked == 1 { // the cleanup asks before it stops it: running
			return "", false
		}
		return "was killed by signal killed", true
	}}
	rec := interp.New(w.Target()).Run(context.Background(), context.Background(), sc)
	if rec.Outcome != interp.Passed {
		t.Errorf("outcome %s (%s), want passed", rec.Outcome, rec.Error)
	}
	want := "removed process srv (it did not end on SIGTERM within its grace period, so it was killed with SIGKILL)"
	if !slices.Contains(rec.Cleanup, want) {
		t.Errorf("cleanup %q, want the line %q", rec.Cleanup, want)
	}
}
