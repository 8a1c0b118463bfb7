package interp_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"labrun.dev/labrun/driver/fakes"
	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/schema"
)

// TestStepsNotRunAreListed: the steps a run's stop kept from starting (a parallel child whose
// at had not come, two at the same at, a block after the failure and the steps in it, a sampler
// whose while step never started) are in the record as skipped, each saying that the run
// stopped before it and where; the cleanup still runs, and a step that did start keeps its
// own outcome. Before, they were in no view at all: the plan read shorter than it was.
func TestStepsNotRunAreListed(t *testing.T) {
	sc := loadScenario(t, `
s: schema.#Scenario & {
	steps: [
		{name: "first", exec: argv: ["ok"]},
		{parallel: [
			{name: "a", at: "1s", exec: argv: ["ok"]},
			{name: "b", at: "1s", exec: argv: ["ok"]},
			{name: "f", at: "500ms", exec: argv: ["boom"]},
			{name: "w", at: "2s", exec: argv: ["ok"]},
			{name: "g", every: "100ms", while: "w", exec: argv: ["ok"]},
		]},
		{name: "seq", sequence: [
			{name: "in1", exec: argv: ["ok"]},
		]},
		{name: "last", exec: argv: ["ok"]},
	]
	cleanup: [{name: "c", exec: argv: ["ok"]}]
}`)
	synctest.Test(t, func(t *testing.T) {
		w := &fakes.World{ExecResult: func(e schema.Exec) schema.ExecResult {
			if e.Argv[0] == "boom" {
				return schema.ExecResult{Exit: 1}
			}
			return schema.ExecResult{}
		}}
		rec := interp.New(w.Target()).Run(context.Background(), context.Background(), sc)
		if rec.Outcome != interp.Errored {
			t.Fatalf("run %s (%s), want error", rec.Outcome, rec.Error)
		}
		for _, n := range []string{"a", "b", "w", "g", "seq", "in1", "last"} {
			sr := stepRecord(t, rec, n)
			if sr.Outcome != interp.Skipped || !strings.HasPrefix(sr.Error, interp.NotRunReason) || !strings.Contains(sr.Error, "f (exec)") {
				t.Errorf("step %s: %s (%s), want skipped as not run, naming f", n, sr.Outcome, sr.Error)
			}
		}
		for n, want := range map[string]interp.Outcome{"first": interp.Passed, "f": interp.Errored, "c": interp.Passed} {
			if sr := stepRecord(t, rec, n); sr.Outcome != want {
				t.Errorf("step %s: %s, want %s", n, sr.Outcome, want)
			}
		}
		if err := rec.Contradictions(); err != nil {
			t.Errorf("the record contradicts itself: %v", err)
		}
	})
}

// TestScenarioTimeoutIsATimeout: a run cut short by the scenario's own timeout is a timeout
// (it read ERROR, the cause a plain error), its error names the timeout and where it is set,
// and the step it cut says so, not only its driver's "context deadline exceeded".
func TestScenarioTimeoutIsATimeout(t *testing.T) {
	sc := loadScenario(t, `
s: schema.#Scenario & {
	timeout: "1s"
	steps: [
		{name: "a", exec: argv: ["slow"]},
		{name: "b", exec: argv: ["ok"]},
	]
}`)
	synctest.Test(t, func(t *testing.T) {
		rec := runCtxErrExec(sc)
		where := sc.Pos.File + ":7:11"
		if rec.Outcome != interp.TimedOut || !strings.Contains(rec.Error, "the scenario's timeout (1s, "+where+")") {
			t.Errorf("run %s (%s), want a timeout naming the scenario's timeout at %s", rec.Outcome, rec.Error, where)
		}
		if rec.ErrorPos == nil || rec.ErrorPos.String() != where {
			t.Errorf("error position %v, want %s", rec.ErrorPos, where)
		}
		if a := stepRecord(t, rec, "a"); !strings.Contains(a.Error, "the scenario's timeout") {
			t.Errorf("step a: %s (%s), want its error to name the scenario's timeout", a.Outcome, a.Error)
		}
		if err := rec.Contradictions(); err != nil {
			t.Errorf("the record contradicts itself: %v", err)
		}
	})
}

// ctxErrExec is an exec that takes 3s, or says its context's error as drivers do ("context
// deadline exceeded"), not its cause.
type ctxErrExec struct{}

// runCtxErrExec runs sc on a fake target whose execs are ctxErrExec's (in a synctest bubble).
func runCtxErrExec(sc *dsl.Scenario) *interp.Record {
	tg := (&fakes.World{}).Target()
	tg.Exec = ctxErrExec{}
	return interp.New(tg).Run(context.Background(), context.Background(), sc)
}

func (ctxErrExec) Exec(ctx context.Context, req schema.Exec) (schema.ExecResult, error) {
	select {
	case <-ctx.Done():
		return schema.ExecResult{}, fmt.Errorf("exec %s: %w", req.Argv[0], ctx.Err())
	case <-time.After(3 * time.Second):
		return schema.ExecResult{}, nil
	}
}

// TestStepsNotRunInALaterRoundAreListed: a repeat's step that fails in its second round stops
// the run; the steps of that round after it are listed as not run in that round. Before,
// their path had a record from the first round, and the second round read as ending with
// the failed step.
func TestStepsNotRunInALaterRoundAreListed(t *testing.T) {
	sc := loadScenario(t, `
s: schema.#Scenario & {
	steps: [{name: "r", repeat: {max: 3, until: "c.stdout == 'never'", steps: [
		{name: "a", exec: argv: ["ok"]},
		{name: "b", exec: argv: ["secondfails"]},
		{name: "c", exec: argv: ["ok"]},
	]}}]
}`)
	synctest.Test(t, func(t *testing.T) {
		n := 0
		w := &fakes.World{ExecResult: func(e schema.Exec) schema.ExecResult {
			if e.Argv[0] == "secondfails" {
				if n++; n == 2 {
					return schema.ExecResult{Exit: 1}
				}
			}
			return schema.ExecResult{}
		}}
		rec := interp.New(w.Target()).Run(context.Background(), context.Background(), sc)
		var got []string
		for _, sr := range rec.Steps {
			if sr.Name == "c" {
				got = append(got, fmt.Sprintf("round %d %s", sr.Round, sr.Outcome))
				if sr.Outcome == interp.Skipped && !strings.HasPrefix(sr.Error, interp.NotRunReason) {
					t.Errorf("c in round %d: %q, want %q…", sr.Round, sr.Error, interp.NotRunReason)
				}
			}
		}
		if want := "round 1 passed, round 2 skipped"; strings.Join(got, ", ") != want {
			t.Errorf("records of c: %q, want %q", strings.Join(got, ", "), want)
		}
		if err := rec.Contradictions(); err != nil {
			t.Errorf("the record contradicts itself: %v", err)
		}
	})
}

// TestCleanupTimeoutSaysWhere: the cleanup's timeout, set in the file, is named with where it
// is set, as the scenario's is.
func TestCleanupTimeoutSaysWhere(t *testing.T) {
	sc := loadScenario(t, `
s: schema.#Scenario & {
	cleanupTimeout: "1s"
	steps: [{name: "a", exec: argv: ["ok"]}]
	cleanup: [{name: "c", exec: argv: ["slow"]}]
}`)
	synctest.Test(t, func(t *testing.T) {
		rec := runCtxErrExec(sc)
		where := sc.Pos.File + ":7:18"
		if rec.Outcome != interp.TimedOut || !strings.Contains(rec.Error, "the cleanup's timeout (1s, "+where+") expired") {
			t.Errorf("run %s (%s), want a timeout naming the cleanup's timeout at %s", rec.Outcome, rec.Error, where)
		}
		if err := rec.Contradictions(); err != nil {
			t.Errorf("the record contradicts itself: %v", err)
		}
	})
}

// TestCleanupTimeoutNamedByItsSteps: a catch or cleanup step that the cleanup's timeout cuts
// says so, as a step the scenario's timeout cuts does; it said the driver's "exec slow:
// context deadline exceeded" alone, whose deadline unsaid (the catch steps' had no cause).
func TestCleanupTimeoutNamedByItsSteps(t *testing.T) {
	sc := loadScenario(t, `
s: schema.#Scenario & {
	cleanupTimeout: "1s"
	steps: [{name: "a", exec: argv: ["ok"]}]
	catch: [{name: "k", exec: argv: ["slow"]}]
	cleanup: [{name: "c", exec: argv: ["slow"]}]
	expect: ["a.exit == 1"]
}`)
	synctest.Test(t, func(t *testing.T) {
		rec := runCtxErrExec(sc)
		where := sc.Pos.File + ":7:18"
		for _, c := range []struct{ step, want string }{
			{"k", "the cleanup's timeout over the catch steps (1s, " + where + ") expired"},
			{"c", "the cleanup's timeout (1s, " + where + ") expired"},
		} {
			var got *interp.StepRecord
			for _, s := range rec.Steps {
				if s.Name == c.step {
					got = s
				}
			}
			if got == nil || !strings.Contains(got.Error, c.want) {
				t.Errorf("step %s: %+v, want an error saying %q", c.step, got, c.want)
			}
		}
	})
}

// TestPastTheScenarioTimeoutIsNotPassed: a driver deaf to its context that returns success
// after the scenario's timeout (within its grace) does not make its step passed: a record of
// a step that passed after the scenario's timeout is one replay refuses, and the run's own
// record was refused so.
func TestPastTheScenarioTimeoutIsNotPassed(t *testing.T) {
	sc := loadScenario(t, `
s: schema.#Scenario & {
	timeout: "1s"
	steps: [
		{name: "a", exec: argv: ["deaf"]},
		{name: "b", exec: argv: ["ok"]},
	]
}`)
	synctest.Test(t, func(t *testing.T) {
		w := &fakes.World{ExecResult: func(e schema.Exec) schema.ExecResult {
			if e.Argv[0] == "deaf" {
				time.Sleep(2 * time.Second) // deaf to the scenario's timeout
			}
			return schema.ExecResult{}
		}}
		rec := interp.New(w.Target()).Run(context.Background(), context.Background(), sc)
		if a := stepRecord(t, rec, "a"); a.Outcome == interp.Passed {
			t.Errorf("step a passed at %s, after the scenario's timeout (1s)", a.End)
		}
		if rec.Outcome != interp.TimedOut {
			t.Errorf("run %s (%s), want a timeout", rec.Outcome, rec.Error)
		}
		if err := interp.OutcomeContradictions(rec, sc); err != nil {
			t.Errorf("replay would refuse the run's own record: %v", err)
		}
	})
}

// TestSamplerThatRanIsNotListedNotRun: a sampler's records are its samples (1, 2, …); one
// that sampled before the run stopped is not listed as not run.
func TestSamplerThatRanIsNotListedNotRun(t *testing.T) {
	sc := loadScenario(t, `
s: schema.#Scenario & {
	steps: [
		{name: "w", background: true, sleep: "300ms"},
		{name: "g", every: "100ms", while: "w", exec: argv: ["ok"]},
		{await: "w"},
		{name: "boom", exec: argv: ["boom"]},
	]
}`)
	synctest.Test(t, func(t *testing.T) {
		w := &fakes.World{ExecResult: func(e schema.Exec) schema.ExecResult {
			if e.Argv[0] == "boom" {
				return schema.ExecResult{Exit: 1}
			}
			return schema.ExecResult{}
		}}
		rec := interp.New(w.Target()).Run(context.Background(), context.Background(), sc)
		for _, sr := range rec.Steps {
			if sr.Name == "g" && sr.Outcome == interp.Skipped {
				t.Errorf("g, which sampled, is listed: %s", sr.Error)
			}
		}
		if err := rec.Contradictions(); err != nil {
			t.Errorf("the record contradicts itself: %v", err)
		}
	})
}

// TestPastAnInterruptIsNotPassed: a driver deaf to its context (a stand-in exec that sleeps
// through it) that returns success after an interrupt, within its grace, does not make its
// step passed, nor keeps the result it came back with: the run had stopped the step, and it
// did not end before that. So for a cleanup step that returns past the cleanup's timeout, and
// a child of a block past the block's timeout or after a sibling failed: each ends as a driver
// that saw the stop would have.
func TestPastAnInterruptIsNotPassed(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		step      string
		interrupt bool
	}{
		{"interrupted", `
s: schema.#Scenario & {
	steps: [{name: "a", exec: argv: ["deaf"]}]
}`, "a", true},
		{"past the cleanup's timeout", `
s: schema.#Scenario & {
	cleanupTimeout: "1s"
	steps: [{name: "a", exec: argv: ["ok"]}]
	cleanup: [{name: "c", exec: argv: ["deaf"]}]
}`, "c", false},
		{"past its block's timeout", `
s: schema.#Scenario & {
	steps: [{name: "p", timeout: "1s", parallel: [{name: "a", exec: argv: ["deaf"]}]}]
}`, "a", false},
		{"after a sibling failed", `
s: schema.#Scenario & {
	steps: [{name: "p", parallel: [
		{name: "a", exec: argv: ["deaf"]},
		{name: "b", exec: argv: ["boom"]},
	]}]
}`, "a", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := loadScenario(t, tc.src)
			synctest.Test(t, func(t *testing.T) {
				w := &fakes.World{ExecResult: func(e schema.Exec) schema.ExecResult {
					switch e.Argv[0] {
					case "deaf":
						time.Sleep(2 * time.Second) // deaf to its context, back within StopGrace
					case "boom":
						time.Sleep(time.Second) // fails while deaf runs
						return schema.ExecResult{Exit: 1}
					}
					return schema.ExecResult{Stdout: "done"}
				}}
				ctx, cancel := context.WithCancelCause(context.Background())
				defer cancel(nil)
				if tc.interrupt {
					time.AfterFunc(time.Second, func() { cancel(interp.ErrInterrupted) })
				}
				rec := interp.New(w.Target()).Run(ctx, context.Background(), sc)
				if s := stepRecord(t, rec, tc.step); s.Outcome == interp.Passed {
					t.Errorf("step %s passed at %s, after it was stopped at 1s", tc.step, s.End)
				}
				if r := rec.Results[tc.step]; r != nil {
					t.Errorf("the late result of %s was recorded: %+v", tc.step, r.Value)
				}
				if rec.Outcome == interp.Passed {
					t.Errorf("run passed")
				}
				if err := interp.OutcomeContradictions(rec, sc); err != nil {
					t.Errorf("replay would refuse the run's own record: %v", err)
				}
			})
		})
	}
}

// TestInterruptedRunSaysItsCleanupFailed: a run interrupted whose cleanup then failed, or
// whose cleanup a second interrupt abandoned, says so in its error (the verdict line, the
// reports' "stopped by", the JUnit's run case) and in its replay's verdict. Before, its error
// was "interrupted" alone, after "running cleanup" on the console: as if the cleanup had done
// its work, though a step that was to undo the run's changes had failed or never ended.
func TestInterruptedRunSaysItsCleanupFailed(t *testing.T) {
	for _, tc := range []struct {
		name, cleanup string
		abandon       bool
		want, wantIn  string // the error's start, and what it says after
	}{
		{"cleanup failed", `{name: "c", exec: argv: ["boom"]}`, false, `interrupted; cleanup: `, `s.cue:8:12: c (exec): exited with code 1, expected 0`},
		{"cleanup abandoned", `{sleep: "30s"}, {name: "c", exec: argv: ["ok"]}`, true, `interrupted; cleanup: abandoned by a second interrupt`, ""},
		{"cleanup done", `{name: "c", exec: argv: ["ok"]}`, false, `interrupted`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := loadScenario(t, `
s: schema.#Scenario & {
	steps: [{name: "a", sleep: "10s"}]
	cleanup: [`+tc.cleanup+`]
}`)
			synctest.Test(t, func(t *testing.T) {
				w := &fakes.World{ExecResult: func(e schema.Exec) schema.ExecResult {
					if e.Argv[0] == "boom" {
						return schema.ExecResult{Exit: 1}
					}
					return schema.ExecResult{Stdout: "done"}
				}}
				ctx, cancel := context.WithCancelCause(context.Background())
				defer cancel(nil)
				cctx, cancelCleanup := context.WithCancelCause(context.Background())
				defer cancelCleanup(nil)
				time.AfterFunc(time.Second, func() { cancel(interp.ErrInterrupted) })
				if tc.abandon {
					time.AfterFunc(2*time.Second, func() { cancelCleanup(interp.ErrInterrupted) })
				}
				rec := interp.New(w.Target()).Run(ctx, cctx, sc)
				if rec.Outcome != interp.Interrupted {
					t.Fatalf("outcome %s, want interrupted", rec.Outcome)
				}
				if !strings.HasPrefix(rec.Error, tc.want) || !strings.Contains(rec.Error, tc.wantIn) || tc.want == "interrupted" && rec.Error != tc.want {
					t.Errorf("error %q, want %q … %q", rec.Error, tc.want, tc.wantIn)
				}
				out, why := interp.Verdict(rec, nil)
				wantWhy := "the run was interrupted: it did not reach its end" + strings.TrimPrefix(tc.want, "interrupted")
				if out != interp.Interrupted || !strings.HasPrefix(why, wantWhy) || !strings.Contains(why, tc.wantIn) || tc.want == "interrupted" && why != wantWhy {
					t.Errorf("replay's verdict %s %q, want interrupted %q … %q", out, why, wantWhy, tc.wantIn)
				}
				if err := interp.OutcomeContradictions(rec, sc); err != nil {
					t.Errorf("replay would refuse the run's own record: %v", err)
				}
			})
		})
	}
}
