package main

import (
	"fmt"
	"strings"
	"testing"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/interp"
)

// TestContradiction: a record's outcome is checked against the verdicts it records. A passed
// run has every expectation passed, no step failed (but one a mayFail allowed, or one of the
// catch phase) and no error; a failed run has a failed or errored expectation, a failed step
// or an error. Other outcomes (error, interrupted, timeout) are not judged here.
func TestContradiction(t *testing.T) {
	exp := func(o interp.Outcome) *interp.Judgement { return &interp.Judgement{Src: "a == 1", Outcome: o} }
	step := func(o interp.Outcome, phase dsl.Phase, warnings ...string) *interp.StepRecord {
		return &interp.StepRecord{Path: "steps.0", Phase: phase, Outcome: o, Warnings: warnings}
	}
	for _, c := range []struct {
		name string
		rec  interp.Record
		want string // a part of the contradiction; "" for none
	}{
		{"passed, all passed", interp.Record{Outcome: interp.Passed, Expectations: []*interp.Judgement{exp(interp.Passed)}, Steps: []*interp.StepRecord{step(interp.Passed, dsl.PhaseSteps)}}, ""},
		{"passed, no expectations", interp.Record{Outcome: interp.Passed}, ""},
		{"passed, an expectation failed", interp.Record{Outcome: interp.Passed, Expectations: []*interp.Judgement{exp(interp.Passed), exp(interp.Failed)}}, `the record says passed; its expectation "a == 1" says failed`},
		{"passed, an expectation errored", interp.Record{Outcome: interp.Passed, Expectations: []*interp.Judgement{exp(interp.Errored)}}, `says error`},
		{"passed, an expectation skipped", interp.Record{Outcome: interp.Passed, Expectations: []*interp.Judgement{exp(interp.Skipped)}}, `says skipped`},
		{"passed, a step failed", interp.Record{Outcome: interp.Passed, Steps: []*interp.StepRecord{step(interp.Failed, dsl.PhaseSteps)}}, "its step steps.0 says failed"},
		{"passed, a cleanup step timed out", interp.Record{Outcome: interp.Passed, Steps: []*interp.StepRecord{step(interp.TimedOut, dsl.PhaseCleanup)}}, "says timeout"},
		{"passed, a mayFail step failed", interp.Record{Outcome: interp.Passed, Steps: []*interp.StepRecord{step(interp.Failed, dsl.PhaseSteps, interp.MayFailWarning)}}, ""},
		{"passed, a catch step failed", interp.Record{Outcome: interp.Passed, Steps: []*interp.StepRecord{step(interp.Failed, dsl.PhaseCatch)}}, ""},
		{"passed, a step cancelled", interp.Record{Outcome: interp.Passed, Steps: []*interp.StepRecord{step(interp.Cancelled, dsl.PhaseSteps)}}, ""},
		{"passed, an error", interp.Record{Outcome: interp.Passed, Error: "boom"}, `it records the error "boom"`},
		{"failed, an expectation failed", interp.Record{Outcome: interp.Failed, Expectations: []*interp.Judgement{exp(interp.Passed), exp(interp.Failed)}}, ""},
		{"failed, an expectation errored", interp.Record{Outcome: interp.Failed, Expectations: []*interp.Judgement{exp(interp.Errored)}}, ""},
		{"failed, a step failed", interp.Record{Outcome: interp.Failed, Expectations: []*interp.Judgement{exp(interp.Skipped)}, Steps: []*interp.StepRecord{step(interp.Failed, dsl.PhaseSteps)}}, ""},
		{"failed, an error", interp.Record{Outcome: interp.Failed, Error: "cleanup: boom"}, ""},
		{"failed, nothing failed", interp.Record{Outcome: interp.Failed, Expectations: []*interp.Judgement{exp(interp.Passed)}}, "the record says failed; its expectations passed"},
		{"failed, only a mayFail step failed", interp.Record{Outcome: interp.Failed, Steps: []*interp.StepRecord{step(interp.Failed, dsl.PhaseSteps, interp.MayFailWarning)}}, "the record says failed"},
		{"error, nothing failed", interp.Record{Outcome: interp.Errored}, ""},
		{"interrupted", interp.Record{Outcome: interp.Interrupted, Expectations: []*interp.Judgement{exp(interp.Skipped)}}, ""},
	} {
		got := contradiction(&c.rec)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: contradiction %q, want %q", c.name, got, c.want)
		}
	}
}

// TestFileKey: a scenario file is named by its folder and its own name, whatever the path to
// the checkout on the machine that ran it.
func TestFileKey(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"/home/a/lab/dup/p1/x.cue", "p1/x.cue"},
		{"/builds/ci/lab/dup/p1/x.cue", "p1/x.cue"},
		{"/home/a/lab/dup/p2/x.cue", "p2/x.cue"},
		{"scenarios/mode1.cue", "scenarios/mode1.cue"},
		{"x.cue", "x.cue"},
		{"./x.cue", "x.cue"},
		{"/x.cue", "x.cue"},
		{"", "."},
	} {
		if got := fileKey(c.in); got != c.want {
			t.Errorf("fileKey(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestDifferentRuns: two records of one run id are copies of one run only when their vars
// agree (compared as they print).
func TestDifferentRuns(t *testing.T) {
	for _, c := range []struct {
		name string
		a, b interp.Record
		want string
	}{
		{"same", interp.Record{Vars: map[string]any{"share": 50.0}, Source: "sha256:a"}, interp.Record{Vars: map[string]any{"share": 50.0}, Source: "sha256:a"}, ""},
		{"no vars", interp.Record{}, interp.Record{}, ""},
		{"a var differs", interp.Record{Vars: map[string]any{"share": 100.0, "n": 1.0}}, interp.Record{Vars: map[string]any{"share": 0.0, "n": 1.0}}, "var share is 100 in the first, 0 in the second"},
		{"a var only in one", interp.Record{Vars: map[string]any{"n": 1.0}}, interp.Record{}, "var n is 1 in the first, unset in the second"},
		{"a var only in the other", interp.Record{}, interp.Record{Vars: map[string]any{"n": "x"}}, "var n is unset in the first, x in the second"},
	} {
		got := differentRuns(&c.a, &c.b)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: differentRuns %q, want %q", c.name, got, c.want)
		}
	}
}

// TestRecordLinesDamaged: a line that begins as a record does and does not parse is an error
// naming file:line; other lines (text, JSON that is no record, a line merely starting with a
// brace) are skipped.
func TestRecordLinesDamaged(t *testing.T) {
	for _, c := range []struct {
		name, in, want string
	}{
		{"cut short", "hello\n{\"version\":2,\"scenario\":\"pb\",\"fi\n", "pod.log:2: a run record that does not parse (cut short or damaged)"},
		{"cut short, spaced", "{ \"version\" : 2, \"scen\n", "pod.log:1: a run record that does not parse"},
		{"other JSON", "{\"not\": \"a record\"}\n{\"kind\": \"x\"}\n", ""},
		{"a brace", "{ not json at all\n", ""},
		{"text", "labrun: hi\n", ""},
		{"after text", "ok\nW1206 slow {\"version\":2,\"scenario\":\"pb\"}\n", "pod.log:2:12: a run record after other text on its line (\"W1206 slow \")"},
		{"text quoting a version", "note: {\"version\": \"1.2\"}\n", ""},
	} {
		_, err := recordLines("pod.log", strings.NewReader(c.in), func(msg string) { t.Errorf("%s: warned %q", c.name, msg) })
		got := ""
		if err != nil {
			got = err.Error()
		}
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: error %q, want %q", c.name, got, c.want)
		}
	}
}

// TestCheckShards: the records of a split's shards must hold every run it planned; a shard
// absent is missing unless the others hold all; records without a shard are not checked.
func TestCheckShards(t *testing.T) {
	rec := func(i, n, runs, all int) mergedRecord {
		return mergedRecord{rec: &interp.Record{Shard: &interp.ShardRecord{Index: i, Count: n, Runs: runs, All: all}}}
	}
	withPlan := func(m mergedRecord, plan string) mergedRecord {
		m.rec.Shard.Plan = plan
		return m
	}
	old := mergedRecord{rec: &interp.Record{}}
	// planned is a shard's record of a run of scenario s at --count 4 with passRate.
	planned := func(i int, passRate float64) mergedRecord {
		r := rec(i, 2, 2, 4)
		r.rec.Scenario = "s"
		r.rec.Unit = &dsl.Unit{ID: "s#1", Matrix: &dsl.Matrix{Scenario: "s", Count: 4, PassRate: passRate}, Combination: 1, Round: 1}
		return r
	}
	// ofPlan is shard i's record of run id of scenario s, of a split of s#1 to s#4.
	m := &dsl.Matrix{Scenario: "s", File: "/lab/a/x.cue", Count: 4}
	var plan []*dsl.Unit
	for r := 1; r <= 4; r++ {
		plan = append(plan, &dsl.Unit{ID: fmt.Sprintf("s#%d", r), Matrix: m, Combination: 1, Round: r})
	}
	ofPlan := func(i int, id string) mergedRecord {
		r := withPlan(rec(i, 2, 2, 4), planHash(plan, nil))
		r.rec.Scenario = "s"
		r.rec.Unit = &dsl.Unit{ID: id, Matrix: m, Combination: 1, Round: 1}
		return r
	}
	for _, c := range []struct {
		name string
		recs []mergedRecord
		want string
	}{
		{"one plan", []mergedRecord{planned(1, 0.5), planned(1, 0.5), planned(2, 0.5), planned(2, 0.5)}, ""},
		// Each shard whole, the split whole by count: but two plans, summarized apart.
		{"two plans", []mergedRecord{planned(1, 0.5), planned(1, 0.5), planned(2, 0.25), planned(2, 0.25)},
			"shard 1/2 ran scenario s as --count 4 --pass-rate 0.5, shard 2/2 as --count 4 --pass-rate 0.25: the shards of one split run one plan"},
		{"all", []mergedRecord{rec(1, 2, 2, 3), rec(1, 2, 2, 3), rec(2, 2, 1, 3)}, ""},
		{"a shard without runs", []mergedRecord{rec(1, 3, 2, 3), rec(1, 3, 2, 3), rec(3, 3, 1, 3)}, ""},
		{"old records", []mergedRecord{old, old}, ""},
		{"a shard missing", []mergedRecord{rec(1, 2, 2, 3), rec(1, 2, 2, 3), old}, "the 2 shards planned 3 runs; the records hold 2: no records of shard 2/2 (1 run)"},
		{"a run of a shard missing", []mergedRecord{rec(1, 2, 2, 3), rec(2, 2, 1, 3)}, "the records hold 2: shard 1/2 holds 1 of its 2 runs"},
		{"two shards missing", []mergedRecord{rec(2, 3, 1, 4)}, "no records of shards 1/3, 3/3 (3 runs between them)"},
		{"two splits, one whole", []mergedRecord{rec(1, 1, 1, 1), rec(1, 2, 1, 2)}, "the 2 shards planned 2 runs; the records hold 1"},
		// Shards of two scenario sets of as many runs are two splits (their plans differ).
		{"two splits of as many runs", []mergedRecord{withPlan(rec(1, 2, 2, 4), "A"), withPlan(rec(1, 2, 2, 4), "A"), withPlan(rec(2, 2, 2, 4), "B"), withPlan(rec(2, 2, 2, 4), "B")},
			"no records of shard 2/2 (2 runs); the records of shard 2/2 here are of another split of 4 runs"},
		{"one split, one plan", []mergedRecord{ofPlan(1, "s#1"), ofPlan(1, "s#2"), ofPlan(2, "s#3"), ofPlan(2, "s#4")}, ""},
		// As many runs as planned, one of them not planned (a record renamed, or another's).
		{"a run not planned", []mergedRecord{ofPlan(1, "s#1"), ofPlan(1, "s#2"), ofPlan(2, "s#3"), ofPlan(2, "t#4")},
			"the 2 shards planned 4 runs; the records hold 4, but not the runs planned (a/x.cue s: 4 runs)"},
		// A shard's records made before records kept the plan are told by count and runs, as
		// they were: a split whose shards ran two labrun versions is one split.
		{"a shard without plan", []mergedRecord{withPlan(rec(1, 2, 2, 4), "A"), withPlan(rec(1, 2, 2, 4), "A"), rec(2, 2, 2, 4), rec(2, 2, 2, 4)}, ""},
	} {
		got := ""
		if err := checkShards(c.recs); err != nil {
			got = err.Error()
		}
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
