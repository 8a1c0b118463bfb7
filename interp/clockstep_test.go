package interp_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"labrun.dev/labrun/driver/fakes"
	"labrun.dev/labrun/interp"
)

// steppedClock is the real clock whose wall time is stepped by step after its first reading,
// its monotonic time not: a stand-in for the machine's clock set forward (NTP, a person) while
// a run runs, as time.Now's wall reading moves then and its monotonic one does not.
type steppedClock struct {
	interp.RealClock
	step  time.Duration
	reads *atomic.Int64
}

func (c steppedClock) Now() time.Time {
	now := time.Now()
	if c.reads.Add(1) == 1 {
		return now
	}
	return wallStepped(now, c.step)
}

// timeLayout is time.Time's layout: wall (with the monotonic flag), ext (the monotonic
// reading when the flag is set), loc.
type timeLayout struct {
	wall uint64
	ext  int64
	loc  *time.Location
}

// wallStepped is t with its wall reading moved by d and its monotonic reading kept.
func wallStepped(t time.Time, d time.Duration) time.Time {
	u := t.Add(d)
	(*timeLayout)(unsafe.Pointer(&u)).ext = (*timeLayout)(unsafe.Pointer(&t)).ext
	return u
}

// TestClockSteppedDuringARun: the machine's clock set an hour forward after the run started
// changes nothing a run records or judges. Every time of its record is its start plus a
// duration measured on the monotonic clock: before, the steps phase's start and the run's end
// were wall readings, so that started.x read -3600 s (the steps' offsets are monotonic, their
// base was not), and the record read back from JSON (replay) lasted an hour and contradicted
// itself ("its steps phase starts (stepsStart) at 1h0m0s, outside the run").
func TestClockSteppedDuringARun(t *testing.T) {
	t0 := time.Now()
	if u := wallStepped(t0, time.Hour); u.Sub(t0) != 0 || u.Round(0).Sub(t0.Round(0)) != time.Hour {
		t.Skip("time.Time's layout is not the one this test knows: it cannot step the wall clock alone")
	}
	sc := loadScenario(t, `
s: schema.#Scenario & {
	steps: [{name: "x", exec: argv: ["ok"]}]
	expect: ["started.x >= 0 && started.x < 60", "ended.x < 60"]
}`)
	clock := steppedClock{step: time.Hour, reads: new(atomic.Int64)}
	rec := interp.New((&fakes.World{}).Target(), interp.WithClock(clock)).Run(context.Background(), context.Background(), sc)
	if rec.Outcome != interp.Passed {
		for _, e := range rec.Expectations {
			t.Logf("%s: %s %s", e.Src, e.Outcome, e.Reason)
		}
		t.Errorf("outcome %s (%s), want passed", rec.Outcome, rec.Error)
	}
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	var back interp.Record
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if d := back.End.Sub(back.Start); d < 0 || d > time.Minute {
		t.Errorf("the record read back lasts %s", d)
	}
	if err := interp.OutcomeContradictions(&back, sc); err != nil {
		t.Errorf("replay would refuse the run's own record: %v", err)
	}
}
