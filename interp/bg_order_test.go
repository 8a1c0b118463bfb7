package interp_test

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"labrun.dev/labrun/driver/fakes"
	"labrun.dev/labrun/interp"
)

// jobThenNext is a background step, job, then the next step of its sequence, next.
const jobThenNext = `
s: schema.#Scenario & {
	steps: [
		{name: "job", background: true, exec: argv: ["ok"]},
		{name: "next", exec: argv: ["ok"]},
		{await: "job"},
	]
}`

// TestBackgroundStepStartsBeforeTheNext: a sequence starts the step after a background one
// once that one has started, and their records say so. Before, the sequence went on as soon as
// it had started the background step's goroutine, which recorded its start when it ran: on a
// loaded machine 1.7 ms after the next step's (replay_edited_wait_until_series under load),
// which replay refuses in the run's own record ("it started at 76µs, before the step before it
// in its sequence, job, started (at 1.77ms)").
func TestBackgroundStepStartsBeforeTheNext(t *testing.T) {
	sc := loadScenario(t, jobThenNext)
	for i := range 50 {
		rec := interp.New((&fakes.World{}).Target()).Run(context.Background(), context.Background(), sc)
		job, next := stepRecord(t, rec, "job"), stepRecord(t, rec, "next")
		if job.Start > next.Start {
			t.Fatalf("run %d: job started at %s, after next, at %s", i, job.Start, next.Start)
		}
		if err := interp.OutcomeContradictions(rec, sc); err != nil {
			t.Fatalf("run %d: replay would refuse the run's own record: %v", i, err)
		}
	}
}

// lateBackgroundClock is the real clock, but a background step's goroutine reads the time
// only lag after it asks (a stand-in for a goroutine descheduled on a loaded machine: seen
// 1.8 ms late under load).
type lateBackgroundClock struct {
	interp.RealClock
	lag time.Duration
}

func (c lateBackgroundClock) Now() time.Time {
	pc := make([]uintptr, 32)
	frames := runtime.CallersFrames(pc[:runtime.Callers(2, pc)])
	for {
		f, more := frames.Next()
		if strings.Contains(f.Function, "(*run).background.func") {
			time.Sleep(c.lag)
			break
		}
		if !more {
			break
		}
	}
	return time.Now()
}

// TestBackgroundStartOrderWithoutSlack: a background step whose goroutine runs late still
// starts, in its record, before the next step of its sequence (the sequence waits for its
// start), so replay holds the two to their order within a millisecond, not 20 ms (b011130's
// slack, from before the sequence waited): the run's own record is accepted, and one whose
// next step was edited 2 ms before the background step's start is refused.
func TestBackgroundStartOrderWithoutSlack(t *testing.T) {
	sc := loadScenario(t, jobThenNext)
	synctest.Test(t, func(t *testing.T) {
		clock := lateBackgroundClock{lag: 5 * time.Millisecond}
		rec := interp.New((&fakes.World{}).Target(), interp.WithClock(clock)).Run(context.Background(), context.Background(), sc)
		job, next := stepRecord(t, rec, "job"), stepRecord(t, rec, "next")
		if job.Start > next.Start {
			t.Fatalf("job started at %s, after next, at %s", job.Start, next.Start)
		}
		if err := interp.OutcomeContradictions(rec, sc); err != nil {
			t.Errorf("replay would refuse the run's own record: %v", err)
		}
		next.Start, next.End = job.Start-2*time.Millisecond, job.Start-time.Millisecond
		if err := interp.OutcomeContradictions(rec, sc); err == nil || !strings.Contains(err.Error(), "before the step before it in its sequence") {
			t.Errorf("next edited to start 2 ms before job: %v, want the order refused", err)
		}
	})
}
