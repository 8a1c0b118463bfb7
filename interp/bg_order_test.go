package interp_test

import (
	"context"
	"testing"

	"labrun.dev/labrun/driver/fakes"
	"labrun.dev/labrun/interp"
)

// TestBackgroundStepStartsBeforeTheNext: a sequence starts the step after a background one
// once that one has started, and their records say so. Before, the sequence went on as soon as
// it had started the background step's goroutine, which recorded its start when it ran: on a
// loaded machine 1.7 ms after the next step's (replay_edited_wait_until_series under load),
// which replay refuses in the run's own record ("it started at 76µs, before the step before it
// in its sequence, job, started (at 1.77ms)").
func TestBackgroundStepStartsBeforeTheNext(t *testing.T) {
	sc := loadScenario(t, `
s: schema.#Scenario & {
	steps: [
		{name: "job", background: true, exec: argv: ["ok"]},
		{name: "next", exec: argv: ["ok"]},
		{await: "job"},
	]
}`)
	for i := range 50 {
		rec := interp.New((&fakes.World{}).Target()).Run(context.Background(), context.Background(), sc)
		job, next := stepRecord(t, rec, "job"), stepRecord(t, rec, "next")
		if job.Start > next.Start {
			t.Fatalf("run %d: job started at %s, after next, at %s", i, job.Start, next.Start)
		}
	}
}
