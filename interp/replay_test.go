package interp_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"labrun.dev/labrun/driver/fakes"
	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/schema"
)

// replayWorld is the fake world of the replay tests: an exec whose argv names "fail" exits 1,
// one of "host" prints an address,
// a load answers 503 to every request whose URL asks for it ("status=503") and 200 otherwise.
// runInReplayWorld runs sc against replayWorld's stand-ins (no Envoy, no fortio), under
// synctest's clock, and returns its record.
func runInReplayWorld(t *testing.T, sc *dsl.Scenario) *interp.Record {
	t.Helper()
	var rec *interp.Record
	synctest.Test(t, func(t *testing.T) {
		rec = interp.New(replayWorld().Target()).Run(context.Background(), context.Background(), sc)
	})
	return rec
}

func replayWorld() *fakes.World {
	return &fakes.World{
		ExecResult: func(req schema.Exec) schema.ExecResult {
			if strings.Contains(strings.Join(req.Argv, " "), "fail") {
				return schema.ExecResult{Exit: 1}
			}
			if req.Argv[0] == "host" {
				return schema.ExecResult{Stdout: "127.0.0.1:9"}
			}
			return schema.ExecResult{Stdout: "notready\n"}
		},
		LoadResult: func(req schema.Load) schema.LoadResult {
			n := float64(req.Requests)
			if strings.Contains(req.URL, "status=503") {
				return schema.LoadResult{Requests: n, Codes: map[string]float64{"503": n}}
			}
			return schema.LoadResult{Requests: n, OK: n, Codes: map[string]float64{"200": n}}
		},
	}
}

// replayed runs src on the fake world (on synctest's clock: timeouts cost no time; slow: each
// exec takes 2 s), passes its
// record through JSON as replay reads it, applies edit to it, and replays it with the
// scenario as src, else as replaySrc when set.
func replayed(t *testing.T, src, replaySrc string, slow bool, edit func(*interp.Record)) (run *interp.Record, verdict interp.Outcome, why string) {
	t.Helper()
	sc := loadScenario(t, src)
	w := replayWorld()
	if slow {
		w.StepTime = 2 * time.Second
	}
	synctest.Test(t, func(t *testing.T) {
		run = interp.New(w.Target()).Run(context.Background(), context.Background(), sc)
	})
	b, err := json.Marshal(run)
	if err != nil {
		t.Fatal(err)
	}
	var rec interp.Record
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	if err := interp.RestoreTypes(&rec); err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(&rec)
	}
	if replaySrc != "" {
		sc = loadScenario(t, replaySrc)
	}
	if d := interp.ChangedStep(&rec, sc, nil); d != "" {
		t.Fatalf("the steps are the same, but ChangedStep says %s", d)
	}
	verdict, why = interp.Verdict(&rec, interp.Rejudge(&rec, sc))
	return run, verdict, why
}

// stepOutcome sets the outcome (and error) of the record's step named name.
func stepOutcome(name string, o interp.Outcome) func(*interp.Record) {
	return func(rec *interp.Record) {
		for _, sr := range rec.Steps {
			if sr.Name == name {
				sr.Outcome, sr.Error = o, "edited"
			}
		}
	}
}

// TestReplayKeepsTheRunsVerdict: replay judges the expectations again and nothing else. A run
// that a step failed, erred or timed out (its cleanup's too), or that was interrupted, keeps
// its outcome and says why, whatever the expectations say, even when the record is edited to
// say so; a run whose steps all ended passes or fails by the expectations as they are now.
func TestReplayKeepsTheRunsVerdict(t *testing.T) {
	const assertFails = `
s: schema.#Scenario & {
	steps: [
		{name: "fortio", load: {url: "http://127.0.0.1:1/echo?status=503", requests: 20, connections: 1}},
		{name: "check", assert: "fortio.code503 == 0"},
	]
	expect: ["fortio.requests == 20"]
}`
	const passes = `
s: schema.#Scenario & {
	steps: [
		{name: "fortio", load: {url: "http://127.0.0.1:1/echo", requests: 20, connections: 1}},
		{name: "check", assert: "fortio.code503 == 0"},
	]
	cleanup: [{name: "rm", exec: argv: ["true"]}]
	expect: ["fortio.requests == 20"]
}`
	for _, tc := range []struct {
		name      string
		src       string
		replaySrc string // the scenario at replay, when edited since the run
		slow      bool   // each exec takes 2 s
		edit      func(*interp.Record)
		run       interp.Outcome // the run's outcome
		want      interp.Outcome // the replay's
		why       string         // in the replay's reason
	}{
		{
			name: "a failed assert step stays failed",
			src:  assertFails, run: interp.Failed, want: interp.Failed,
			why: "check (assert): assert failed: fortio.code503 (20) == 0",
		},
		{
			name: "a wait whose until never held stays failed",
			src: `
s: schema.#Scenario & {
	steps: [
		{name: "bg", background: true, sleep: "1s"},
		{name: "w", timeout: "300ms", wait: {interval: "50ms", until: "outcome.bg == 'passed'"}},
	]
	expect: ["outcome.bg == 'passed'"]
}`,
			run: interp.Failed, want: interp.Failed, why: "w (wait): wait timed out after 300ms",
		},
		{
			name: "a repeat whose until never held stays failed, without expectations",
			src: `
s: schema.#Scenario & {
	steps: [{name: "loop", repeat: {max: 3, interval: "10ms", steps: [{name: "probe", exec: argv: ["echo"]}], until: "probe.stdout == 'ready\\n'"}}]
}`,
			run: interp.Failed, want: interp.Failed, why: "was still not true after 3 rounds",
		},
		{
			name: "a cleanup step that erred stays an error",
			src: `
s: schema.#Scenario & {
	steps: [{name: "a", exec: argv: ["true"]}]
	cleanup: [{name: "rm", exec: argv: ["fail"]}]
	expect: ["a.exit == 0"]
}`,
			run: interp.Errored, want: interp.Errored, why: "cleanup: ",
		},
		{
			name: "a cleanup past cleanupTimeout stays a timeout",
			src: `
s: schema.#Scenario & {
	cleanupTimeout: "500ms"
	steps: [{name: "a", sleep: "10ms"}]
	cleanup: [{name: "slow", exec: argv: ["true"]}]
	expect: ["outcome.a == 'passed'"]
}`,
			slow: true,
			run:  interp.TimedOut, want: interp.TimedOut, why: "cleanup: ",
		},
		{
			name: "a cleanup step that erred in a run failed by an expectation stays an error when the expectation is fixed",
			src: `
s: schema.#Scenario & {
	steps: [{name: "a", exec: argv: ["true"]}]
	cleanup: [{name: "rm", exec: argv: ["fail"]}]
	expect: ["a.exit == 1"]
}`,
			replaySrc: `
s: schema.#Scenario & {
	steps: [{name: "a", exec: argv: ["true"]}]
	cleanup: [{name: "rm", exec: argv: ["fail"]}]
	expect: ["a.exit == 0"]
}`,
			run: interp.Errored, want: interp.Errored, why: "rm (exec): exited with code 1",
		},
		{
			// The run said FAILED (exit 1) and nothing of its cleanup, where replay of its
			// record said the cleanup's error (exit 3).
			name: "a cleanup step that erred in a run failed by an expectation is an error, in the run and its replay",
			src: `
s: schema.#Scenario & {
	steps: [{name: "a", exec: argv: ["true"]}]
	cleanup: [{name: "rm", exec: argv: ["fail"]}]
	expect: ["a.exit == 1"]
}`,
			run: interp.Errored, want: interp.Errored, why: "cleanup: ",
		},
		{
			name: "an unnamed sampler whose sample erred is an error",
			src: `
s: schema.#Scenario & {
	steps: [
		{name: "l", background: true, sleep: "1s"},
		{every: "300ms", while: "l", exec: argv: ["fail"]},
	]
}`,
			run: interp.Errored, want: interp.Errored, why: "steps.1 (exec): exited with code 1",
		},
		{
			name: "a step edited to failed fails",
			src:  passes, edit: stepOutcome("check", interp.Failed),
			run: interp.Passed, want: interp.Failed, why: "step check (assert) failed: edited",
		},
		{
			name: "a step edited to error is an error",
			src:  passes, edit: stepOutcome("fortio", interp.Errored),
			run: interp.Passed, want: interp.Errored, why: "step fortio (load) erred: edited",
		},
		{
			name: "a cleanup step edited to timeout is a timeout",
			src:  passes, edit: stepOutcome("rm", interp.TimedOut),
			run: interp.Passed, want: interp.TimedOut, why: "cleanup: step rm (exec) timed out: edited",
		},
		{
			name: "a run edited to interrupted stays interrupted",
			src:  passes, edit: func(rec *interp.Record) { rec.Outcome = interp.Interrupted },
			run: interp.Passed, want: interp.Interrupted, why: "interrupted",
		},
		{
			name: "a run edited to refused stays refused",
			src:  passes, edit: func(rec *interp.Record) { rec.Outcome, rec.Error = interp.Refused, "edited" },
			run: interp.Passed, want: interp.Refused, why: "edited",
		},
		{
			name: "a run edited to an outcome no run has is an error",
			src:  passes, edit: func(rec *interp.Record) { rec.Outcome = "fine" },
			run: interp.Passed, want: interp.Errored, why: `the record's outcome "fine"`,
		},
		{
			name: "a passed run with an error is not a pass",
			src:  passes, edit: func(rec *interp.Record) { rec.Error = "edited" },
			run: interp.Passed, want: interp.Failed, why: "edited",
		},
		{
			name: "a passed run passes",
			src:  passes, run: interp.Passed, want: interp.Passed,
		},
		{
			name: "a run failed only by an expectation passes once the expectation is changed",
			src:  strings.Replace(passes, `"fortio.requests == 20"`, `"fortio.requests == 21"`, 1), replaySrc: passes,
			run: interp.Failed, want: interp.Passed,
		},
		{
			name: "an expectation changed to fail fails a passed run",
			src:  passes, replaySrc: strings.Replace(passes, `"fortio.requests == 20"`, `"fortio.requests == 21"`, 1),
			run: interp.Passed, want: interp.Failed,
		},
		{
			name: "a step that mayFail let fail passes, as the run did",
			src: strings.Replace(strings.Replace(assertFails, `{name: "check", assert:`, `{name: "check", mayFail: true, assert:`, 1),
				`expect: ["fortio.requests == 20"]`, `expect: ["fortio.requests == 20", "outcome.check == 'failed'"]`, 1),
			run: interp.Passed, want: interp.Passed,
		},
		{
			name: "a failed step in a block that mayFail let fail passes, as the run did",
			src: `
s: schema.#Scenario & {
	steps: [
		{name: "fortio", load: {url: "http://127.0.0.1:1/echo?status=503", requests: 20, connections: 1}},
		{name: "blk", mayFail: true, sequence: [{name: "check", assert: "fortio.code503 == 0"}, {exec: argv: ["true"]}]},
	]
	expect: ["fortio.requests == 20", "outcome.blk == 'failed'"]
}`,
			run: interp.Passed, want: interp.Passed,
		},
		{
			name: "a step that failed as its expectFail expected passes, as the run did",
			src: `
s: schema.#Scenario & {
	steps: [{name: "nope", expectFail: "exited with code 1,", exec: argv: ["fail"]}]
	expect: ["outcome.nope == 'passed'"]
}`,
			run: interp.Passed, want: interp.Passed,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run, got, why := replayed(t, tc.src, tc.replaySrc, tc.slow, tc.edit)
			if run.Outcome != tc.run {
				t.Fatalf("the run: %s (%s), want %s", run.Outcome, run.Error, tc.run)
			}
			if got != tc.want {
				t.Errorf("replay: %s (%s), want %s", got, why, tc.want)
			}
			if !strings.Contains(why, tc.why) || tc.why == "" && why != "" {
				t.Errorf("replay's reason %q, want one containing %q", why, tc.why)
			}
		})
	}
}

// TestReplayRefusesChangedSteps: a scenario whose steps are not those the run recorded (a
// load's URL, a step's kind or name, a step added) is named by ChangedStep; one whose
// expectations alone changed, or whose ${...} resolve as the run resolved them, is not.
func TestReplayRefusesChangedSteps(t *testing.T) {
	const src = `
s: schema.#Scenario & {
	steps: [
		{name: "host", exec: argv: ["host"]},
		{name: "fortio", load: {url: "http://${host.stdout}/echo?status=503", requests: 20, connections: 1}},
		{name: "check", assert: "fortio.code503 == 20"},
	]
	expect: ["fortio.requests == 20"]
}`
	for _, tc := range []struct {
		name, from, to string // the replayed scenario: src with from replaced by to
		want           string // in ChangedStep's answer, "" for none
	}{
		{name: "the same", from: "", to: "", want: ""},
		{name: "an expectation changed", from: `"fortio.requests == 20"`, to: `"fortio.requests == 21"`, want: ""},
		{name: "the load's URL changed", from: "status=503", to: "status=200", want: `steps.1 (fortio, load) ran "20 req × 1 conn → http://127.0.0.1:9/echo?status=503" and would now run "20 req × 1 conn → http://127.0.0.1:9/echo?status=200"`},
		{name: "the load's requests changed", from: "requests: 20,", to: "requests: 30,", want: `steps.1 (fortio, load) ran "20 req`},
		{name: "a step renamed", from: `{name: "check", assert:`, to: `{name: "chk", assert:`, want: `steps.2 (check, assert) is named "chk" now`},
		{name: "a step of another kind", from: `{name: "check", assert: "fortio.code503 == 20"}`, to: `{name: "check", sleep: "1s"}`, want: "steps.2 (check, assert) is a sleep step now"},
		{name: "an assert changed", from: `assert: "fortio.code503 == 20"`, to: `assert: "fortio.code503 == 0"`, want: "steps.2 (check, assert) ran"},
		{name: "a step added", from: "\t]\n\texpect", to: "\t\t{assert: \"fortio.code503 == 0\"},\n\t]\n\texpect", want: "steps.3 (assert) is in the scenario but the run did not run it"},
		{name: "a step removed", from: "\t\t{name: \"check\", assert: \"fortio.code503 == 20\"},\n", to: "", want: "steps.2 (check, assert) is in the record but not in the scenario"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var rec *interp.Record
			run := loadScenario(t, src)
			synctest.Test(t, func(t *testing.T) {
				rec = interp.New(replayWorld().Target()).Run(context.Background(), context.Background(), run)
			})
			if rec.Outcome != interp.Passed {
				t.Fatalf("the run: %s (%s)", rec.Outcome, rec.Error)
			}
			if tc.from != "" && !strings.Contains(src, tc.from) {
				t.Fatalf("the scenario has no %q", tc.from)
			}
			now := loadScenario(t, strings.Replace(src, tc.from, tc.to, 1))
			got := interp.ChangedStep(rec, now, nil)
			if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
				t.Errorf("ChangedStep: %q, want %q", got, tc.want)
			}
		})
	}
}

// TestMutateRefusesAFailedRun: a run that an assert step failed is not a passing run, though
// its expectation holds on what it recorded: mutate refuses it, with the run's reason.
func TestMutateRefusesAFailedRun(t *testing.T) {
	const src = `
s: schema.#Scenario & {
	steps: [
		{name: "fortio", load: {url: "http://127.0.0.1:1/echo?status=503", requests: 20, connections: 1}},
		{name: "check", assert: "fortio.code503 == 0"},
	]
	expect: ["fortio.requests == 20"]
}`
	sc := loadScenario(t, src)
	rec := runInReplayWorld(t, sc)
	_, err := interp.Mutate(rec, sc)
	if err == nil || !strings.Contains(err.Error(), "the recorded run did not pass (failed: ") || !strings.Contains(err.Error(), "check (assert): assert failed") {
		t.Fatalf("Mutate of a failed run: %v, want a refusal naming the failed assert", err)
	}
}

// TestChangedStepAfterCleanupError: a run whose cleanup erred ran all its steps: a step added
// since is one it did not run.
func TestChangedStepAfterCleanupError(t *testing.T) {
	const src = `
s: schema.#Scenario & {
	steps: [{name: "a", exec: argv: ["true"]}]
	cleanup: [{name: "rm", exec: argv: ["fail"]}]
}`
	sc := loadScenario(t, src)
	rec := runInReplayWorld(t, sc)
	if rec.Outcome != interp.Errored || !strings.HasPrefix(rec.Error, "cleanup: ") {
		t.Fatalf("the run: %s (%s), want a cleanup error", rec.Outcome, rec.Error)
	}
	if got := interp.ChangedStep(rec, sc, nil); got != "" {
		t.Errorf("the same scenario: ChangedStep says %q", got)
	}
	now := loadScenario(t, strings.Replace(src, `exec: argv: ["true"]}]`, `exec: argv: ["true"]}, {name: "b", exec: argv: ["true"]}]`, 1))
	if got, want := interp.ChangedStep(rec, now, nil), "steps.1 (b, exec) is in the scenario but the run did not run it"; got != want {
		t.Errorf("ChangedStep: %q, want %q", got, want)
	}
}
