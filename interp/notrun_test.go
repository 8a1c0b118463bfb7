package interp_test

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"

	"labrun.dev/labrun/driver/fakes"
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
