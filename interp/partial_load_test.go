package interp_test

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"labrun.dev/labrun/driver/fakes"
	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/schema"
)

// TestInterruptedLoadKeepsPartialResults: a load an interrupt stops keeps what it did until
// then in the record, marked partial, and an expectation that reads it, judged again (as
// replay does), has no value rather than pass on 30 requests of a load of 10 s. Before, the
// load recorded nothing: the report said nothing of what it had sent.
func TestInterruptedLoadKeepsPartialResults(t *testing.T) {
	sc := loadScenario(t, `
s: schema.#Scenario & {
	steps: [{name: "fortio", load: {url: "http://127.0.0.1:1/", duration: "10s"}}]
	expect: ["fortio.code200 == fortio.requests"]
}`)
	synctest.Test(t, func(t *testing.T) {
		w := &fakes.World{LoadResult: func(schema.Load) schema.LoadResult {
			return schema.LoadResult{Requests: 30, Codes: map[string]float64{"200": 30}, OK: 30}
		}}
		ctx, cancel := context.WithCancelCause(context.Background())
		time.AfterFunc(2*time.Second, func() { cancel(interp.ErrInterrupted) })
		rec := interp.New(w.Target()).Run(ctx, context.Background(), sc)
		if rec.Outcome != interp.Interrupted {
			t.Fatalf("run %s (%s), want interrupted", rec.Outcome, rec.Error)
		}
		res := rec.Results["fortio"]
		if res == nil {
			t.Fatal("the stopped load recorded nothing")
		}
		l, ok := res.Value.(*interp.LoadRecord)
		if !ok || l.Partial == "" || l.Requests != 30 {
			t.Fatalf("fortio's result %#v: want its 30 requests, marked partial", res.Value)
		}
		jd := interp.NewJudge(rec, sc).Judge(sc.Expect[0])
		if jd.Outcome == interp.Passed || !strings.Contains(jd.Reason, "partial") {
			t.Errorf("judged on the partial load: %s (%s), want no value, saying it is partial", jd.Outcome, jd.Reason)
		}
	})
}

// TestPartialLoadMarkContradictions: a record whose stopped load lost its partial mark (its
// 30 requests would be judged as the load of 10 s), or whose passed load gained one, is
// refused as edited.
func TestPartialLoadMarkContradictions(t *testing.T) {
	sc := loadScenario(t, `
s: schema.#Scenario & {
	steps: [{name: "fortio", load: {url: "http://127.0.0.1:1/", duration: "10s"}}]
	expect: ["fortio.code200 == fortio.requests"]
}`)
	run := func(stopAt time.Duration) *interp.Record {
		var rec *interp.Record
		synctest.Test(t, func(t *testing.T) {
			w := &fakes.World{LoadResult: func(schema.Load) schema.LoadResult {
				return schema.LoadResult{Requests: 30, Codes: map[string]float64{"200": 30}, OK: 30}
			}}
			ctx, cancel := context.WithCancelCause(context.Background())
			if stopAt > 0 {
				time.AfterFunc(stopAt, func() { cancel(interp.ErrInterrupted) })
			}
			rec = interp.New(w.Target()).Run(ctx, context.Background(), sc)
			cancel(nil)
		})
		return rec
	}
	stopped := run(2 * time.Second)
	if err := stopped.Contradictions(); err != nil {
		t.Fatalf("the stopped run's own record is refused: %v", err)
	}
	stopped.Results["fortio"].Value.(*interp.LoadRecord).Partial = ""
	if err := stopped.Contradictions(); err == nil || !strings.Contains(err.Error(), "not marked partial") {
		t.Errorf("a stopped load without its partial mark: %v, want refused", err)
	}
	passed := run(0)
	if err := passed.Contradictions(); err != nil {
		t.Fatalf("the passed run's own record is refused: %v", err)
	}
	passed.Results["fortio"].Value.(*interp.LoadRecord).Partial = "edited"
	if err := passed.Contradictions(); err == nil || !strings.Contains(err.Error(), "marked partial") {
		t.Errorf("a passed load marked partial: %v, want refused", err)
	}
}

// TestPartialLoadOfFixedRequests: a load of requests: 200 stopped after 30 records those 30,
// partial, and its record is not refused as one whose count differs from the step's (a load
// of fixed requests that ran to its end records exactly them; a stopped one, at most them).
func TestPartialLoadOfFixedRequests(t *testing.T) {
	sc := loadScenario(t, `
s: schema.#Scenario & {
	steps: [{name: "fortio", load: {url: "http://127.0.0.1:1/", requests: 200, qps: 10}}]
	expect: ["fortio.code200 == fortio.requests"]
}`)
	synctest.Test(t, func(t *testing.T) {
		w := &fakes.World{LoadTime: 20 * time.Second, LoadResult: func(schema.Load) schema.LoadResult {
			return schema.LoadResult{Requests: 30, Codes: map[string]float64{"200": 30}, OK: 30}
		}}
		ctx, cancel := context.WithCancelCause(context.Background())
		time.AfterFunc(3*time.Second, func() { cancel(interp.ErrInterrupted) })
		rec := interp.New(w.Target()).Run(ctx, context.Background(), sc)
		if l, ok := rec.Results["fortio"].Value.(*interp.LoadRecord); !ok || l.Partial == "" {
			t.Fatalf("fortio's result %#v: want it partial", rec.Results["fortio"])
		}
		if err := interp.OutcomeContradictions(rec, sc); err != nil {
			t.Errorf("the stopped run's own record is refused: %v", err)
		}
	})
}

// TestFakeDurationLoadCountsItsRequests: the fake target's duration load (no LoadResult of
// the test's) records the requests of the time it ran, at its qps: interrupted at 2s, a
// 10 s load at 50 qps made 100. It recorded 0 ("partial: 0 requests"), full or stopped.
func TestFakeDurationLoadCountsItsRequests(t *testing.T) {
	sc := loadScenario(t, `
s: schema.#Scenario & {
	steps: [{name: "fortio", load: {url: "http://127.0.0.1:1/", duration: "10s", qps: 50}}]
}`)
	synctest.Test(t, func(t *testing.T) {
		w := &fakes.World{}
		ctx, cancel := context.WithCancelCause(context.Background())
		time.AfterFunc(2*time.Second, func() { cancel(interp.ErrInterrupted) })
		rec := interp.New(w.Target()).Run(ctx, context.Background(), sc)
		l, ok := rec.Results["fortio"].Value.(*interp.LoadRecord)
		if !ok || l.Partial == "" || l.Requests != 100 {
			t.Fatalf("fortio's result %#v: want 100 requests (2s at 50 qps), marked partial", rec.Results["fortio"].Value)
		}
		if err := rec.Contradictions(); err != nil {
			t.Errorf("the record contradicts itself: %v", err)
		}
	})
}
