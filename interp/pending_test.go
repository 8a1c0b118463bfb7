package interp_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"labrun.dev/labrun/driver/fakes"
	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/schema"
)

// TestOutcomePendingMidRun: during the run, a named step that has not started and still may
// (at: 1s in a parallel block, a later step) reads "pending", not the "skipped" of one that
// will never run. A wait until "outcome.job != 'running'" held at its first poll, 0 s in,
// and the check after it read the job's output before the job wrote it: the run passed.
// Once the step's block or phase has ended without it, it reads "skipped".
func TestOutcomePendingMidRun(t *testing.T) {
	sc := loadScenario(t, `
w: schema.#Scenario & {
	steps: [
		{parallel: [
			{name: "job", at: "1s", exec: argv: ["job"]},
			{sequence: [
				{name: "w", timeout: "5s", wait: until: "outcome.job != 'running'"},
				{name: "check", exec: argv: ["check"]},
			]},
		]},
		{name: "blk", mayFail: true, sequence: [
			{name: "bad", exec: argv: ["fail"]},
			{name: "never", exec: argv: ["never"]},
		]},
		{assert: "outcome.never == 'skipped'"},
		{name: "later", exec: argv: ["true"]},
	]
	expect: ["!(check.stdout contains 'ERROR')", "outcome.never == 'skipped'"]
}
`)
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		wrote := false
		w := &fakes.World{StepTime: 0, ExecResult: func(req schema.Exec) schema.ExecResult {
			mu.Lock()
			defer mu.Unlock()
			switch req.Argv[0] {
			case "job":
				wrote = true
			case "check":
				if wrote {
					return schema.ExecResult{Stdout: "ERROR\n"}
				}
				return schema.ExecResult{Stdout: "(nothing yet)\n"}
			case "fail":
				return schema.ExecResult{Exit: 1}
			}
			return schema.ExecResult{}
		}}
		rec := interp.New(w.Target()).Run(context.Background(), context.Background(), sc)
		if rec.Outcome != interp.Failed {
			t.Errorf("outcome %s (%s), want failed: the check runs after the job wrote ERROR", rec.Outcome, rec.Error)
		}
		for _, j := range rec.Expectations {
			want := interp.Passed
			if strings.Contains(j.Src, "check.stdout") {
				want = interp.Failed
			}
			if j.Outcome != want {
				t.Errorf("%s: %s, want %s: %s", j.Src, j.Outcome, want, j.Explanation)
			}
		}
	})
}
