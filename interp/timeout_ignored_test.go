package interp_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"labrun.dev/labrun/driver/fakes"
	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/schema"
)

// TestStepPastItsTimeoutIsNotPassed: a driver that returns success after the step's timeout,
// not having seen it (a stand-in exec that sleeps through its context), does not make the step
// passed: it ended past its timeout, which a passed record may not say (replay refuses it).
func TestStepPastItsTimeoutIsNotPassed(t *testing.T) {
	sc := loadScenario(t, `
s: schema.#Scenario & {
	steps: [{name: "x", timeout: "1s", exec: argv: ["slow"]}]
}`)
	synctest.Test(t, func(t *testing.T) {
		w := &fakes.World{
			ExecResult: func(schema.Exec) schema.ExecResult {
				time.Sleep(2 * time.Second) // deaf to the step's context
				return schema.ExecResult{Stdout: "done"}
			},
		}
		rec := interp.New(w.Target()).Run(context.Background(), context.Background(), sc)
		x := stepRecord(t, rec, "x")
		if x.Outcome != interp.TimedOut || rec.Outcome != interp.TimedOut {
			t.Errorf("step x %s (%s), run %s: want timeout", x.Outcome, x.Error, rec.Outcome)
		}
	})
}
