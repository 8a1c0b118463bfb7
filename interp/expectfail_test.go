package interp_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"labrun.dev/labrun/driver/fakes"
	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/schema"
)

// stepRecord is the last record of the named step.
func stepRecord(t *testing.T, rec *interp.Record, name string) *interp.StepRecord {
	t.Helper()
	var out *interp.StepRecord
	for _, s := range rec.Steps {
		if s.Name == name {
			out = s
		}
	}
	if out == nil {
		t.Fatalf("no record of step %s", name)
	}
	return out
}

// TestExpectFail: a step's own timeout is a failure expectFail accepts; mayFail lets a step
// expected to fail that succeeded go on, and expressions see it as failed; a repeat retries a
// mayFail step until outcome.<step> says it passed; an error that does not match the pattern
// keeps its kind (exit 3, not 1).
func TestExpectFail(t *testing.T) {
	sc := loadScenario(t, `
s: schema.#Scenario & {
	steps: [
		{name: "hang", timeout: "1s", expectFail: "timed out after 1s", exec: argv: ["sleep"]},
		{name: "ok", mayFail: true, expectFail: true, exec: argv: ["true"]},
		{name: "r", repeat: {max: 5, until: "outcome.probe == 'passed'", steps: [
			{name: "probe", mayFail: true, exec: argv: ["probe"]},
		]}},
		{assert: "outcome.hang == 'passed' && error.hang == 'exec timed out after 1s'"},
	]
	expect: [
		"outcome.ok == 'failed' && error.ok contains 'expected to fail'",
		"outcome.probe == 'passed' && outcome.r == 'passed'",
	]
}
`)
	synctest.Test(t, func(t *testing.T) {
		probes := 0
		w := &fakes.World{StepTime: 0, ExecResult: func(req schema.Exec) schema.ExecResult {
			if req.Argv[0] == "probe" {
				probes++
				if probes < 3 {
					return schema.ExecResult{Exit: 1}
				}
			}
			return schema.ExecResult{}
		}}
		tg := w.Target()
		slow := &slowSleep{tg.Exec}
		tg.Exec = slow
		rec := interp.New(tg).Run(context.Background(), context.Background(), sc)
		if rec.Outcome != interp.Passed {
			t.Fatalf("outcome %s: %s", rec.Outcome, rec.Error)
		}
		if h := stepRecord(t, rec, "hang"); h.Outcome != interp.Passed || h.ExpectedError != "exec timed out after 1s" {
			t.Errorf("hang: %s %q", h.Outcome, h.ExpectedError)
		}
		if probes != 3 {
			t.Errorf("probe ran %d times, want 3", probes)
		}
		for _, j := range rec.Expectations {
			if j.Outcome != interp.Passed {
				t.Errorf("%s: %s %s", j.Src, j.Outcome, j.Explanation)
			}
		}
	})

	mismatch := loadScenario(t, `
s: schema.#Scenario & {
	steps: [{name: "x", expectFail: "NotFound", exec: argv: ["false"]}]
}
`)
	w := &fakes.World{ExecResult: func(schema.Exec) schema.ExecResult { return schema.ExecResult{Exit: 1} }}
	rec := interp.New(w.Target()).Run(context.Background(), context.Background(), mismatch)
	if rec.Outcome != interp.Errored || !strings.Contains(rec.Error, `(expectFail: expected an error matching "NotFound")`) {
		t.Errorf("mismatch: %s %q", rec.Outcome, rec.Error)
	}
}

// slowSleep makes `sleep` hang until its context ends (the fakes' exec returns at once).
type slowSleep struct{ schema.Executor }

func (s *slowSleep) Exec(ctx context.Context, req schema.Exec) (schema.ExecResult, error) {
	if req.Argv[0] == "sleep" {
		<-ctx.Done()
		return schema.ExecResult{}, ctx.Err()
	}
	return s.Executor.Exec(ctx, req)
}

// TestExpectFailNotOnInterrupt: an interrupt is never the failure a step expects: the run is
// interrupted, the step cancelled.
func TestExpectFailNotOnInterrupt(t *testing.T) {
	sc := loadScenario(t, `
s: schema.#Scenario & {
	steps: [{name: "hang", expectFail: true, exec: argv: ["sleep"]}]
}
`)
	synctest.Test(t, func(t *testing.T) {
		w := &fakes.World{}
		tg := w.Target()
		tg.Exec = &slowSleep{tg.Exec}
		ctx, cancel := context.WithCancelCause(context.Background())
		time.AfterFunc(2*time.Second, func() { cancel(interp.ErrInterrupted) })
		rec := interp.New(tg).Run(ctx, context.Background(), sc)
		if rec.Outcome != interp.Interrupted {
			t.Fatalf("outcome %s: %s", rec.Outcome, rec.Error)
		}
		if h := stepRecord(t, rec, "hang"); h.Outcome != interp.Cancelled || h.ExpectedError != "" {
			t.Errorf("hang: %s %q", h.Outcome, h.ExpectedError)
		}
	})
}

// TestOutcomeOfOldRecord: a record written before outcome.<step> existed (no expectedError)
// is judged from its steps alone; a named step without a record was skipped, and has no error.
func TestOutcomeOfOldRecord(t *testing.T) {
	sc := loadScenario(t, `
s: schema.#Scenario & {
	steps: [
		{name: "a", mayFail: true, exec: argv: ["x"]},
		{name: "b", exec: argv: ["y"]},
	]
	expect: ["outcome.a == 'error' && error.a == 'boom'", "outcome.b == 'skipped' && !has(error, 'b')"]
}
`)
	var rec interp.Record
	old := `{"version": 1, "scenario": "s", "outcome": "passed", "steps": [
		{"path": "steps.0", "name": "a", "kind": "exec", "outcome": "error", "error": "boom"}]}`
	if err := json.Unmarshal([]byte(old), &rec); err != nil {
		t.Fatal(err)
	}
	for _, j := range interp.Rejudge(&rec, sc) {
		if j.Outcome != interp.Passed {
			t.Errorf("%s: %s %s %s", j.Src, j.Outcome, j.Explanation, j.Reason)
		}
	}
}

// TestExprOutcome maps every outcome a step record can have.
func TestExprOutcome(t *testing.T) {
	for in, want := range map[interp.Outcome]string{
		interp.Passed: "passed", interp.Failed: "failed", interp.Errored: "error", interp.TimedOut: "error",
		interp.Cancelled: "interrupted", interp.Interrupted: "interrupted", interp.Skipped: "skipped", "": "running",
	} {
		if got := interp.ExprOutcome(in); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}
