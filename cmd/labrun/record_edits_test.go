package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/schema"
)

// recordedRun writes the scenario src as s.cue in a new folder, runs it there (wantRun, its
// exit code) and returns the folder and the record's JSON, decoded.
func recordedRun(t *testing.T, src string, wantRun int, args ...string) (string, map[string]any) {
	t.Helper()
	dir := t.TempDir()
	t.Chdir(dir) // labrun reads the files named relative to the working directory
	writeIn(t, filepath.Join(dir, "s.cue"), src)
	code, out := runIn(t, dir, append([]string{"run", "-q", "--report-dir", "r"}, append(args, "s.cue")...)...)
	if code != wantRun {
		t.Fatalf("run: exit %d, want %d\n%s", code, wantRun, out)
	}
	recs, _ := filepath.Glob(filepath.Join(dir, "r", "*[0-9a-f].json"))
	if len(recs) == 0 {
		t.Fatalf("run wrote no record:\n%s", out)
	}
	return dir, readJSON(t, recs[0])
}

// writeIn writes s at path, making its folder.
func writeIn(t *testing.T, path, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, s)
}

func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// asOldRecord makes the record at path one of a run made before records kept their steps'
// parameters and own fields (version 2, no stepParams nor stepOptions, nor fileDigests, nor an
// exec's exit.txt, nor lints or invocation: a record of version 2 that keeps one had its version
// lowered), whose steps are compared by their summaries alone. The exit.txt files beside it are
// removed with their entries.
func asOldRecord(t *testing.T, path string) {
	t.Helper()
	rec := readJSON(t, path)
	rec["version"] = 2
	delete(rec, "stepParams")
	delete(rec, "stepOptions")
	delete(rec, "fileDigests")
	delete(rec, "lints")
	delete(rec, "invocation")
	if arts, ok := rec["artifacts"].([]any); ok {
		var kept []any
		for _, a := range arts {
			if m, ok := a.(map[string]any); ok && m["name"] == schema.ExitArtifact {
				os.Remove(filepath.Join(strings.TrimSuffix(path, ".json"), m["file"].(string)))
				continue
			}
			kept = append(kept, a)
		}
		rec["artifacts"] = kept
	}
	writeJSON(t, path, rec)
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	writeIn(t, path, string(b))
}

// stepOf is the first step record named name.
func stepOf(t *testing.T, rec map[string]any, name string) map[string]any {
	t.Helper()
	for _, s := range rec["steps"].([]any) {
		if m := s.(map[string]any); m["name"] == name {
			return m
		}
	}
	t.Fatalf("no step %s in the record", name)
	return nil
}

// listStdout lists a stdout.txt and an exit.txt of the exec step among rec's artifacts, as a
// run whose exec ran and printed lists them (their files are not beside the record: they are
// not compared).
func listStdout(rec map[string]any, step string) {
	arts, _ := rec["artifacts"].([]any)
	rec["artifacts"] = append(arts,
		map[string]any{"step": step, "name": "stdout.txt", "file": step + "-stdout.txt"},
		map[string]any{"step": step, "name": "exit.txt", "file": step + "-exit.txt"})
}

// passedAs edits rec into a passed run: no error, every expectation passed with values.
func passedAs(rec map[string]any, values map[string]any) {
	rec["outcome"] = "passed"
	delete(rec, "error")
	delete(rec, "errorPos")
	for _, e := range rec["expectations"].([]any) {
		m := e.(map[string]any)
		delete(m, "reason")
		m["outcome"], m["explanation"] = "passed", "edited"
		if values != nil {
			m["values"] = values
		}
	}
}

// refused runs labrun args in dir and wants exit 2 with each of want in its output.
func refused(t *testing.T, dir string, want []string, args ...string) {
	t.Helper()
	code, out := runIn(t, dir, args...)
	if code != 2 {
		t.Errorf("%s: exit %d, want 2 (refused)\n%s", strings.Join(args, " "), code, out)
		return
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("%s: the output lacks %q:\n%s", strings.Join(args, " "), w, out)
		}
	}
}

// TestExpectedErrorMatchesPattern: a step with expectFail: "exited with code 1," that erred
// (exit 2) edited to passed, "failed as expected", with its own error as the expected one,
// made replay and merge say PASSED: the judge never checked the recorded error against the
// step's pattern. A genuine record replayed with --file of a scenario whose pattern changed
// was accepted too.
func TestExpectedErrorMatchesPattern(t *testing.T) {
	const src = `package lab

import "labrun.dev/schema"

denied: schema.#Scenario & {
	steps: [{name: "t", expectFail: "exited with code 1,", exec: argv: ["sh", "-c", "echo usage >&2; exit ` + "%d" + `"]}]
	expect: ["outcome.t == 'passed'"]
}
`
	dir, rec := recordedRun(t, strings.Replace(src, "%d", "2", 1), 3)
	s := stepOf(t, rec, "t")
	msg, _, _ := strings.Cut(s["error"].(string), " (expectFail:")
	delete(s, "error")
	s["outcome"], s["expectedError"], s["warnings"] = "passed", msg, []any{"expectFail: failed as expected: " + msg}
	passedAs(rec, map[string]any{"outcome.t": "passed"})
	writeJSON(t, filepath.Join(dir, "m", "edited.json"), rec)
	want := []string{`step t: its record contradicts itself: it passed as its expectFail expected, with the error "exited with code 2, expected 0; stderr: usage"`, `which its pattern "exited with code 1," does not match`}
	refused(t, dir, want, "replay", "m/edited.json")
	refused(t, dir, want, "merge", "-q", "--report-dir", "out", "m")

	// A genuine record (exit 1, as expected), replayed with --file of the pattern changed: the
	// record keeps the step's expectFail (stepOptions); one made before it kept it is held to
	// the pattern.
	dir, _ = recordedRun(t, strings.Replace(src, "%d", "1", 1), 0)
	writeIn(t, filepath.Join(dir, "now", "s.cue"), strings.Replace(strings.Replace(src, "%d", "1", 1), "code 1,", "code 7,", 1))
	recs, _ := filepath.Glob(filepath.Join(dir, "r", "*[0-9a-f].json"))
	refused(t, dir, []string{`the steps of denied in now/s.cue differ from those the run recorded: steps.0 (t, exec) ran with expectFail "exited with code 1," and would now run with expectFail "exited with code 7,"`}, "replay", "--file", "now/s.cue", recs[0])
	asOldRecord(t, recs[0])
	refused(t, dir, []string{"the record and the scenario in now/s.cue disagree", `which its pattern "exited with code 7," does not match`}, "replay", "--file", "now/s.cue", recs[0])
}

// TestChangedScenarioNotBlamedOnRecord: a genuine record replayed with --file of a scenario
// whose step now says exitCode: 3 was refused as "its record contradicts itself … the record
// was changed after the run or is corrupt": the scenario changed, not the record. The same
// finding with the run's own source still blames the record. A record keeps its steps'
// parameters (stepParams): the step is one whose parameters changed; a record made before
// they were kept (here, taken out) is told by what its step recorded.
func TestChangedScenarioNotBlamedOnRecord(t *testing.T) {
	const src = `package lab

import "labrun.dev/schema"

slow: schema.#Scenario & {
	steps: [{name: "j", exec: {argv: ["sh", "-c", "echo ok"]}}]
	expect: ["j.stdout == 'ok\\n'"]
}
`
	dir, rec := recordedRun(t, src, 0)
	writeIn(t, filepath.Join(dir, "c", "s.cue"), strings.Replace(src, `"echo ok"]`, `"echo ok"], exitCode: 3`, 1))
	recs, _ := filepath.Glob(filepath.Join(dir, "r", "*[0-9a-f].json"))
	code, out := runIn(t, dir, "replay", "--file", "c/s.cue", recs[0])
	if want := "the steps of slow in c/s.cue differ from those the run recorded: steps.0 (j, exec) ran without exitCode and would now run with exitCode 3;"; code != 2 || !strings.Contains(out, want) || strings.Contains(out, "contradicts itself") {
		t.Errorf("replay --file c/s.cue: exit %d, want 2 and %q:\n%s", code, want, out)
	}
	if _, ok := rec["stepParams"]; !ok {
		t.Fatalf("the record keeps no stepParams")
	}
	asOldRecord(t, recs[0])
	code, out = runIn(t, dir, "replay", "--file", "c/s.cue", recs[0])
	want := "the record and the scenario in c/s.cue disagree (that file is not the source the run had): step j: its outcome is passed, but it records exit 0 and the step expects 3; the scenario changed since the run (run it again), or the record was edited"
	if code != 2 || !strings.Contains(out, want) || strings.Contains(out, "contradicts itself") {
		t.Errorf("replay --file c/s.cue: exit %d, want 2 and %q:\n%s", code, want, out)
	}
	// The run's own file edited the same way: it is not the source the run had either.
	writeIn(t, filepath.Join(dir, "s.cue"), strings.Replace(src, `"echo ok"]`, `"echo ok"], exitCode: 3`, 1))
	code, out = runIn(t, dir, "replay", recs[0])
	if want := "the record and the scenario in s.cue disagree"; code != 2 || !strings.Contains(out, want) {
		t.Errorf("replay with s.cue edited: exit %d, want 2 and %q:\n%s", code, want, out)
	}
}

// TestPassedStepWithinItsTimeout: a step that lasted 300 ms was accepted as passed under a
// scenario whose step has timeout: "100ms" (a genuine record replayed with --file of it), and
// a TIMEOUT record edited to passed, the step's end moved past the run's own end, replayed
// and merged as PASSED.
func TestPassedStepWithinItsTimeout(t *testing.T) {
	const src = `package lab

import "labrun.dev/schema"

slow: schema.#Scenario & {
	steps: [{name: "j", exec: argv: ["sh", "-c", "sleep 0.3; echo ok"]}]
	expect: ["j.stdout == 'ok\\n'"]
}
`
	timed := strings.Replace(src, `name: "j",`, `name: "j", timeout: "100ms",`, 1)
	dir, rec := recordedRun(t, src, 0)
	writeIn(t, filepath.Join(dir, "b", "s.cue"), timed)
	recs, _ := filepath.Glob(filepath.Join(dir, "r", "*[0-9a-f].json"))
	// How long the step lasted is the record's (at least the 300 ms it slept; more on a
	// loaded machine): the message says that duration, whatever it was.
	s := stepOf(t, rec, "j")
	lasted := time.Duration(s["endNs"].(float64) - s["startNs"].(float64))
	if lasted < 300*time.Millisecond {
		t.Fatalf("step j of the genuine record lasted %s, less than the 300ms it slept", lasted)
	}
	// The record keeps the step's timeout (stepOptions): the step is one whose timeout
	// changed; a record made before it kept it is held to the timeout.
	refused(t, dir, []string{`steps.0 (j, exec) ran without timeout and would now run with timeout "100ms"`}, "replay", "--file", "b/s.cue", recs[0])
	asOldRecord(t, recs[0])
	refused(t, dir, []string{"the record and the scenario in b/s.cue disagree", "step j: it passed, but it lasted " + lasted.String() + ", longer than its timeout of 100ms"}, "replay", "--file", "b/s.cue", recs[0])

	dir, rec = recordedRun(t, timed, 3)
	s = stepOf(t, rec, "j")
	// The step's end moved 425 ms past the run's end, however long the run took.
	runStart, err := time.Parse(time.RFC3339Nano, rec["start"].(string))
	if err != nil {
		t.Fatal(err)
	}
	runEnd, err := time.Parse(time.RFC3339Nano, rec["end"].(string))
	if err != nil {
		t.Fatal(err)
	}
	moved := runEnd.Sub(runStart) + 425*time.Millisecond
	s["outcome"], s["endNs"] = "passed", float64(moved)
	delete(s, "error")
	rec["results"] = map[string]any{"j": map[string]any{"kind": "exec", "value": map[string]any{"stdout": "ok\n", "stderr": "", "exit": 0}}}
	listStdout(rec, "j")
	passedAs(rec, map[string]any{"j.stdout": "ok\n"})
	writeJSON(t, filepath.Join(dir, "m", "edited.json"), rec)
	want := []string{"step j: its record contradicts itself: it ends at " + moved.String() + ", after the run's end at "}
	refused(t, dir, want, "replay", "m/edited.json")
	refused(t, dir, want, "merge", "-q", "--report-dir", "out", "m")
	// Its end left within the run's: the timeout refuses it.
	s["endNs"] = s["startNs"].(float64) + 150e6
	rec["end"] = "2099-01-01T00:00:00Z"
	writeJSON(t, filepath.Join(dir, "m", "edited.json"), rec)
	refused(t, dir, []string{"step j: its record contradicts itself: it passed, but it lasted 150ms, longer than its timeout of 100ms"}, "replay", "m/edited.json")
	// A step that ended within its timeout and the run passes.
	s["endNs"] = s["startNs"].(float64) + 90e6
	writeJSON(t, filepath.Join(dir, "m", "edited.json"), rec)
	code, out := runIn(t, dir, "replay", "m/edited.json")
	if code != 0 {
		t.Errorf("replay of a step that ended within its timeout: exit %d\n%s", code, out)
	}
}

// TestPlannedOffsetIsThePlans: a step with at: "100ms" whose recorded plannedNs, startNs and
// endNs were moved by 150ms (its skew unchanged, the value its expectation read and the run's end moved too)
// replayed and merged as PASSED: no run of the scenario plans it there.
func TestPlannedOffsetIsThePlans(t *testing.T) {
	const src = `package lab

import "labrun.dev/schema"

tm: schema.#Scenario & {
	steps: [{parallel: [
		{name: "job", exec: argv: ["sleep", "1"]},
		{name: "mark", at: "100ms", exec: argv: ["true"]},
	]}]
	expect: ["started.mark < 60"]
}
`
	// job outlasts mark by far, so that mark moved 150ms later still ends before the run: the
	// edit is refused for its planned offset alone (a loaded machine made mark end late, and the
	// edit was refused as ending after the run instead).
	dir, rec := recordedRun(t, src, 0)
	writeJSON(t, filepath.Join(dir, "m", "genuine.json"), rec)
	if code, out := runIn(t, dir, "replay", "m/genuine.json"); code != 0 {
		t.Fatalf("replay of the genuine record: exit %d\n%s", code, out)
	}
	s := stepOf(t, rec, "mark")
	// The times the message says are the record's: the block starts later on a loaded machine.
	planned := time.Duration(s["plannedNs"].(float64)) + 150*time.Millisecond
	path := s["path"].(string)
	parts := strings.Split(path, ".")
	parent := strings.Join(parts[:len(parts)-2], ".")
	var plans time.Duration
	for _, o := range rec["steps"].([]any) {
		if o := o.(map[string]any); o["path"] == parent {
			plans = time.Duration(o["startNs"].(float64)) + 100*time.Millisecond
		}
	}
	if plans == 0 {
		t.Fatalf("no record of the block %q of step mark (%s)", parent, path)
	}
	for _, k := range []string{"plannedNs", "startNs", "endNs"} {
		s[k] = s[k].(float64) + 150e6
	}
	// The run's end moved with it: job may end less than 150 ms after mark on a
	// loaded machine, and mark's end would then be after the run's (another contradiction).
	end, err := time.Parse(time.RFC3339Nano, rec["end"].(string))
	if err != nil {
		t.Fatal(err)
	}
	rec["end"] = end.Add(150 * time.Millisecond).Format(time.RFC3339Nano)
	v := rec["expectations"].([]any)[0].(map[string]any)["values"].(map[string]any)
	v["started.mark"] = v["started.mark"].(float64) + 0.15
	writeJSON(t, filepath.Join(dir, "m", "genuine.json"), rec)
	want := []string{"step mark: its record contradicts itself: it was planned at " + planned.String() + ", but its at: 100ms after the start of its block", "plans it at " + plans.String()}
	refused(t, dir, want, "replay", "m/genuine.json")
	refused(t, dir, want, "merge", "-q", "--report-dir", "out", "m")
}

// TestStepsStartBeforeItsSteps: the record's stepsStart moved 60ms later, the steps' times
// left alone (ended.j then reads 60ms less), replayed and merged as PASSED, though step j of
// the steps phase then starts before that phase; moved earlier, the setup's step ends after it.
func TestStepsStartBeforeItsSteps(t *testing.T) {
	const src = `package lab

import "labrun.dev/schema"

ss: schema.#Scenario & {
	setup: [{name: "prep", exec: argv: ["sleep", "0.2"]}]
	steps: [{name: "j", exec: argv: ["sleep", "0.2"]}]
	expect: ["ended.j < 60"]
}
`
	dir, rec := recordedRun(t, src, 0)
	start, err := time.Parse(time.RFC3339Nano, rec["stepsStart"].(string))
	if err != nil {
		t.Fatal(err)
	}
	// Moved 60 ms past step j's start (and the setup's end, below), wherever that start was: a
	// loaded machine starts j more than a timeSlack after stepsStart.
	runStart, err := time.Parse(time.RFC3339Nano, rec["start"].(string))
	if err != nil {
		t.Fatal(err)
	}
	offset := start.Sub(runStart) // of stepsStart in the run
	later := time.Duration(stepOf(t, rec, "j")["startNs"].(float64)) - offset + 60*time.Millisecond
	earlier := offset - time.Duration(stepOf(t, rec, "prep")["endNs"].(float64)) + 60*time.Millisecond
	rec["stepsStart"] = start.Add(later).Format(time.RFC3339Nano)
	v := rec["expectations"].([]any)[0].(map[string]any)["values"].(map[string]any)
	v["ended.j"] = v["ended.j"].(float64) - later.Seconds()
	writeJSON(t, filepath.Join(dir, "m", "edited.json"), rec)
	want := []string{"step j: its record contradicts itself: it is a step of the steps phase and starts at ", "before that phase's start (stepsStart) at "}
	refused(t, dir, want, "replay", "m/edited.json")
	refused(t, dir, want, "merge", "-q", "--report-dir", "out", "m")
	// Moved earlier: the setup's step ends after it.
	rec["stepsStart"] = start.Add(-earlier).Format(time.RFC3339Nano)
	v["ended.j"] = v["ended.j"].(float64) + later.Seconds() + earlier.Seconds()
	writeJSON(t, filepath.Join(dir, "m", "edited.json"), rec)
	refused(t, dir, []string{"step prep: its record contradicts itself: it is a step of the setup and ends at ", "after the steps phase's start (stepsStart) at "}, "replay", "m/edited.json")
	// Moved past the run's end.
	rec["stepsStart"] = start.Add(time.Hour).Format(time.RFC3339Nano)
	writeJSON(t, filepath.Join(dir, "m", "edited.json"), rec)
	refused(t, dir, []string{"its steps phase starts (stepsStart) at " + (offset + time.Hour).String() + ", outside the run, which started at 0s and ended at "}, "replay", "m/edited.json")
}

// TestMergeRefusesShiftedCopy: merge of run --count 3's rounds 1 and 3 (passed) with a copy
// of round 1's record as round 2 (which failed), every step's times moved by 1ns and the
// run's by 1µs, said "3 of 3 runs passed": the check of one run counted twice wanted the
// timings equal to the nanosecond. With each step moved by an amount of its own, it said so
// again: the check then wanted every step's offset from the first the same. A run with no
// load holds nothing that only it measured but how long each step took: the copy holds the
// same results, and each step lasted as long, with the same skew, wherever it was moved.
func TestMergeRefusesShiftedCopy(t *testing.T) {
	const src = `package lab

import "labrun.dev/schema"

flaky: schema.#Scenario & {
	steps: [
		{name: "a", exec: argv: ["echo", "a"]},
		{name: "c", exec: argv: ["sh", "-c", "n=$(cat n 2>/dev/null || echo 0); n=$((n+1)); echo $n > n; echo $n"]},
		{name: "z", exec: argv: ["echo", "z"]},
	]
	expect: ["int(trim(c.stdout)) != 2"]
}
`
	dir, _ := recordedRun(t, src, 1, "--count", "3")
	recs, _ := filepath.Glob(filepath.Join(dir, "r", "*[0-9a-f].json"))
	var first map[string]any
	for _, f := range recs {
		rec := readJSON(t, f)
		if rec["outcome"] != "passed" {
			continue
		}
		writeJSON(t, filepath.Join(dir, "m", filepath.Base(f)), rec)
		if u := rec["unit"].(map[string]any); u["round"].(float64) == 1 {
			first = rec
		}
	}
	if first == nil {
		t.Fatal("round 1 did not pass")
	}
	if code, out := runIn(t, dir, "merge", "--report-dir", "out0", "m"); code != 1 || !strings.Contains(out, "2 of 3 runs passed") {
		t.Fatalf("merge of rounds 1 and 3: exit %d\n%s", code, out)
	}
	for _, by := range []func(i int) time.Duration{
		func(int) time.Duration { return 1 },
		func(i int) time.Duration { return time.Duration(i+1) * 1013 },
	} {
		c := copyAsRound(t, first, 2)
		moveRun(t, c, time.Microsecond)
		moveSteps(t, c, by)
		writeJSON(t, filepath.Join(dir, "m", "copy.json"), c)
		refused(t, dir, []string{"(run flaky#1) and m/copy.json (run flaky#2) are records of one run: they hold the same results and expectation values (the times in them aside), and each of their 3 steps lasted as long, with the same skew, to the nanosecond, whenever it ran",
			"labrun: merge: one of each two is a copy of the other's record under another run's id"}, "merge", "--report-dir", "out", "m")
	}
}

// TestProcessEndedEarlyOnItsStep: a run that is an ERROR because its process exited on its own
// (code 3) kept that only in the record's top-level error and cleanup lines, the process
// step saying passed: replacing them with what a run whose process stayed up records made
// replay and merge say PASSED. The process step's record keeps its early end now.
//
// The job outlasts the process by waiting for it: side writes its parent's pid (its keeper's,
// which labrun waits for and reaps) and exits; the job polls that pid until it is gone (for
// at most 20 s), then leaves labrun 0.2 s to note the end. Two sleeps (0.05 s against 0.2 s)
// raced on a loaded machine: the run exited 0, its process stopped by the cleanup.
func TestProcessEndedEarlyOnItsStep(t *testing.T) {
	const src = `package lab

import "labrun.dev/schema"

pr: schema.#Scenario & {
	steps: [
		{name: "side", process: argv: ["sh", "-c", "echo $PPID > side.ppid; exit 3"]},
		{name: "job", exec: argv: ["sh", "-c", "i=0; until [ -s side.ppid ] && ! kill -0 $(cat side.ppid) 2>/dev/null || [ $i -ge 2000 ]; do sleep 0.01; i=$((i+1)); done; sleep 0.2; echo ok"]},
	]
	expect: ["job.stdout == 'ok\\n'"]
}
`
	dir, rec := recordedRun(t, src, 3)
	writeJSON(t, filepath.Join(dir, "m", "edited.json"), rec)
	if code, out := runIn(t, dir, "replay", "m/edited.json"); code != 3 {
		t.Fatalf("replay of the genuine record: exit %d, want 3\n%s", code, out)
	}
	if w := stepOf(t, rec, "side")["warnings"]; w == nil {
		t.Errorf("the process step records no warning of its early end")
	}
	rec["outcome"], rec["cleanup"] = "passed", []any{"removed process side"}
	delete(rec, "error")
	writeJSON(t, filepath.Join(dir, "m", "edited.json"), rec)
	want := []string{"step side: its record contradicts itself: it records that its process ended on its own (process side had already ended: it exited with code 3 on its own, before the cleanup", "which makes the run an error, but the run's outcome is passed"}
	refused(t, dir, append(want, "and its cleanup does not say so"), "replay", "m/edited.json")
	refused(t, dir, want, "merge", "-q", "--report-dir", "out", "m")
}

// TestPassedWithinScenarioTimeout: a run that erred at its scenario's timeout (300ms), its step
// cancelled, edited so that the step passed at 520ms with its output (the run's end moved
// after it) and the run passed, replayed and merged PASSED: the scenario's timeout, which
// cancels the setup and steps, was held to no step.
func TestPassedWithinScenarioTimeout(t *testing.T) {
	const src = `package lab

import "labrun.dev/schema"

slow: schema.#Scenario & {
	timeout: "300ms"
	steps: [{name: "j", exec: argv: ["sh", "-c", "sleep 0.5; echo ok"]}]
	expect: ["j.stdout == 'ok\\n'"]
}
`
	dir, rec := recordedRun(t, src, 3)
	s := stepOf(t, rec, "j")
	// The times the message says are the record's (j, the first step, starts later on a
	// loaded machine).
	first := time.Duration(s["startNs"].(float64))
	s["outcome"], s["endNs"] = "passed", float64(first+520*time.Millisecond)
	delete(s, "error")
	rec["end"] = "2099-01-01T00:00:00Z"
	rec["results"] = map[string]any{"j": map[string]any{"kind": "exec", "value": map[string]any{"stdout": "ok\n", "stderr": "", "exit": 0}}}
	listStdout(rec, "j")
	passedAs(rec, map[string]any{"j.stdout": "ok\n"})
	writeJSON(t, filepath.Join(dir, "m", "edited.json"), rec)
	want := []string{"step j: its record contradicts itself: it passed at " + (first + 520*time.Millisecond).String() + ", but the scenario's timeout (300ms) had expired by " + (first + 300*time.Millisecond).String() + " (its first step started at " + first.String() + "), which cancels the setup and steps still running"}
	refused(t, dir, want, "replay", "m/edited.json")
	refused(t, dir, want, "merge", "-q", "--report-dir", "out", "m")

	// A run within its timeout replays as it ran.
	dir, _ = recordedRun(t, strings.Replace(src, `"300ms"`, `"5s"`, 1), 0)
	recs, _ := filepath.Glob(filepath.Join(dir, "r", "*[0-9a-f].json"))
	if code, out := runIn(t, dir, "replay", recs[0]); code != 0 {
		t.Errorf("replay of a run within its timeout: exit %d\n%s", code, out)
	}
}

// TestMayFailWarningHeldToTheStep: a step whose mayFail let it fail records the warning
// "mayFail: the run goes on", and the verdict takes the warning as the step's mayFail. A
// record made before records kept their steps' own fields (stepOptions), replayed with --file
// of the scenario whose step lost its mayFail (where its failure fails the run), said PASSED,
// exit 0. A record of version 3 names the changed field.
func TestMayFailWarningHeldToTheStep(t *testing.T) {
	const src = `package lab

import "labrun.dev/schema"

s: schema.#Scenario & {
	steps: [
		{name: "t", mayFail: true, exec: argv: ["sh", "-c", "exit 2"]},
		{name: "j", exec: argv: ["sh", "-c", "echo ok"]},
	]
	expect: ["j.stdout == 'ok\\n'"]
}
`
	dir, _ := recordedRun(t, src, 0)
	writeIn(t, filepath.Join(dir, "now", "s.cue"), strings.Replace(src, "mayFail: true, ", "", 1))
	recs, _ := filepath.Glob(filepath.Join(dir, "r", "*[0-9a-f].json"))
	refused(t, dir, []string{"steps.0 (t, exec) ran with mayFail true and would now run without it"}, "replay", "--file", "now/s.cue", recs[0])
	asOldRecord(t, recs[0])
	refused(t, dir, []string{`the record and the scenario in now/s.cue disagree (that file is not the source the run had): step t: it records the warning "mayFail: the run goes on", but the step has no mayFail`}, "replay", "--file", "now/s.cue", recs[0])
}

// editedLoadRecord runs a load every request of which the backend answers 503, judged by
// fortio.code503 == 0 (FAILED), and edits its record into a pass: the load's codes all 200.
// It returns the folder, the record and the text of its fortio.json as the run kept it. The
// URL writes the 503s as a distribution (503:100), which the rule that holds a load to a
// ?status= of one code does not read, so that the edits are refused for what they test.
func editedLoadRecord(t *testing.T) (string, map[string]any, map[string]any) {
	t.Helper()
	dir, rec := recordedRun(t, `package lab

import "labrun.dev/schema"

ld: schema.#Scenario & {
	local: backends: a: {}
	steps: [{name: "fortio", load: {url: "${backends.a.url}/echo?status=503:100", requests: 4, connections: 1}}]
	expect: ["fortio.code503 == 0"]
}
`, 1)
	l := rec["results"].(map[string]any)["fortio"].(map[string]any)["value"].(map[string]any)
	l["codes"], l["ok"], l["errors"] = map[string]any{"200": 4}, 4, 0
	passedAs(rec, map[string]any{"fortio.code503": 0})
	recs, _ := filepath.Glob(filepath.Join(dir, "r", "*[0-9a-f].json"))
	var entry map[string]any
	if err := json.Unmarshal([]byte(readFileString(t, filepath.Join(strings.TrimSuffix(recs[0], ".json"), "fortio.json.jsonl"))), &entry); err != nil {
		t.Fatal(err)
	}
	return dir, rec, entry
}

func readFileString(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// writeEdited writes rec as m/edited.json and the artifacts folder beside it with fortio.json's
// entry (nil: none, and none listed); the record lists no other artifact (the folder holds
// none: a listed artifact missing from it is refused).
func writeEdited(t *testing.T, dir string, rec, fortioJSON map[string]any) {
	t.Helper()
	var kept []any
	for _, a := range rec["artifacts"].([]any) {
		if fortioJSON != nil && a.(map[string]any)["name"] == "fortio.json" {
			kept = append(kept, a)
		}
	}
	rec["artifacts"] = kept
	if fortioJSON != nil {
		b, err := json.Marshal(fortioJSON)
		if err != nil {
			t.Fatal(err)
		}
		writeIn(t, filepath.Join(dir, "m", "edited", "fortio.json.jsonl"), string(b)+"\n")
	}
	writeJSON(t, filepath.Join(dir, "m", "edited.json"), rec)
}

// TestLoadHeldToItsFortioJSON: a load's result edited into a pass (its 503s made 200s) beside
// its fortio.json replayed and merged PASSED, exit 0, when fortio.json was edited too - its
// codes alone, its histogram of failed calls still counting the 503s -, cut short so that it
// does not decode, or taken out of the folder and the record's artifacts: the check compared
// only a fortio.json that decodes and is listed.
func TestLoadHeldToItsFortioJSON(t *testing.T) {
	t.Run("codes edited in fortio.json", func(t *testing.T) {
		dir, rec, entry := editedLoadRecord(t)
		var fj map[string]any
		if err := json.Unmarshal([]byte(entry["text"].(string)), &fj); err != nil {
			t.Fatal(err)
		}
		fj["RetCodes"] = map[string]any{"200": 4}
		b, _ := json.Marshal(fj)
		entry["text"] = string(b)
		writeEdited(t, dir, rec, entry)
		want := []string{"step fortio (load): its artifact fortio.json (in fortio.json.jsonl) breaks the sums fortio keeps in every result: its codes hold 0 calls answered with no success, but its histogram of failed calls (ErrorsDurationHistogram) counts 4"}
		refused(t, dir, want, "replay", "m/edited.json")
		refused(t, dir, want, "merge", "-q", "--report-dir", "out", "m")
	})
	t.Run("fortio.json cut short", func(t *testing.T) {
		dir, rec, entry := editedLoadRecord(t)
		text := entry["text"].(string)
		entry["text"] = text[:len(text)/2]
		writeEdited(t, dir, rec, entry)
		want := []string{"step fortio (load): its artifact fortio.json (in fortio.json.jsonl) does not read as fortio's result (decoding fortio's JSON result: unexpected EOF", "but a load on the local target keeps fortio's result as fortio wrote it"}
		refused(t, dir, want, "replay", "m/edited.json")
		refused(t, dir, want, "merge", "-q", "--report-dir", "out", "m")
	})
	t.Run("fortio.json taken out", func(t *testing.T) {
		dir, rec, _ := editedLoadRecord(t)
		writeEdited(t, dir, rec, nil)
		want := []string{"step fortio: it recorded a load result (4 requests), but the record lists no fortio.json of the step, which a load on the local target writes fortio's result to before it records its own"}
		refused(t, dir, want, "replay", "m/edited.json")
		refused(t, dir, want, "merge", "-q", "--report-dir", "out", "m")
	})
}

// TestRepeatRoundsHeldToMax: a repeat (max 2) whose until never held (FAILED), edited into a
// pass by a third round added (its step record, the result's stdout and a stdout.txt that make
// the until hold) replayed and merged PASSED, exit 0: nothing held a repeat's runs to its max,
// and the rounds' records said no round (StepRecord.Round was never set). A genuine record
// numbers its rounds; runs renumbered (a round duplicated) are refused.
func TestRepeatRoundsHeldToMax(t *testing.T) {
	const src = `package lab

import "labrun.dev/schema"

rp: schema.#Scenario & {
	steps: [
		{name: "w", exec: argv: ["sh", "-c", "rm -f c"]},
		{name: "tick", repeat: {max: 2, until: "t.stdout == 'n=3\\n'", steps: [{name: "t", exec: argv: ["sh", "-c", "n=$(cat c 2>/dev/null || echo 0); n=$((n+1)); echo $n > c; echo n=$n"]}]}},
		{name: "r", exec: argv: ["echo", "ok"]},
	]
	expect: ["r.stdout == 'ok\\n'"]
}
`
	dir, rec := recordedRun(t, src, 1)
	var rounds []map[string]any
	for _, s := range rec["steps"].([]any) {
		if m := s.(map[string]any); m["name"] == "t" {
			rounds = append(rounds, m)
		}
	}
	if len(rounds) != 2 || rounds[0]["round"] != 1.0 || rounds[1]["round"] != 2.0 {
		t.Fatalf("the rounds of t record rounds %v, %v, want 1, 2", rounds[0]["round"], rounds[len(rounds)-1]["round"])
	}
	recs, _ := filepath.Glob(filepath.Join(dir, "r", "*[0-9a-f].json"))
	folder := strings.TrimSuffix(recs[0], ".json")

	// A third round added, after the second, that printed n=3.
	third := map[string]any{}
	for k, v := range rounds[1] {
		third[k] = v
	}
	end := rounds[1]["endNs"].(float64)
	third["plannedNs"], third["startNs"], third["endNs"], third["skewNs"], third["round"] = end+1000, end+1000, end+2000000, 0, 3
	tick := stepOf(t, rec, "tick")
	tick["outcome"], tick["endNs"] = "passed", end+3000000
	delete(tick, "error")
	var steps []any
	for _, s := range rec["steps"].([]any) {
		steps = append(steps, s)
		if s.(map[string]any)["name"] == "t" && s.(map[string]any)["round"] == 2.0 {
			steps = append(steps, third)
		}
	}
	rec["steps"] = steps
	w := stepOf(t, rec, "w") // the run stopped before r: its record is made after w's
	r := map[string]any{"path": "steps.2", "name": "r", "kind": "exec", "phase": "steps", "summary": "echo ok", "pos": map[string]any{"file": w["pos"].(map[string]any)["file"], "line": 9, "col": 3},
		"plannedNs": end + 3000000, "startNs": end + 3000000, "endNs": end + 5000000, "skewNs": 0, "outcome": "passed"}
	steps = append(steps, r)
	rec["steps"] = steps
	res := rec["results"].(map[string]any)
	res["t"].(map[string]any)["value"].(map[string]any)["stdout"] = "n=3\n"
	res["r"] = map[string]any{"kind": "exec", "value": map[string]any{"stdout": "ok\n", "stderr": "", "exit": 0}}
	rec["artifacts"] = append(rec["artifacts"].([]any),
		map[string]any{"step": "t", "name": "stdout.txt", "file": "t-stdout-3.txt"},
		map[string]any{"step": "r", "name": "stdout.txt", "file": "r-stdout.txt"})
	passedAs(rec, map[string]any{"r.stdout": "ok\n"})
	if err := os.CopyFS(filepath.Join(dir, "m", "edited"), os.DirFS(folder)); err != nil {
		t.Fatal(err)
	}
	writeIn(t, filepath.Join(dir, "m", "edited", "t-stdout-3.txt"), "n=3\n")
	writeIn(t, filepath.Join(dir, "m", "edited", "r-stdout.txt"), "ok\n")
	writeJSON(t, filepath.Join(dir, "m", "edited.json"), rec)
	want := []string{"step tick: its repeat stops after its max of 2 rounds, but the record holds 3 runs of its first step t between its start and its end"}
	refused(t, dir, want, "replay", "m/edited.json")
	refused(t, dir, want, "merge", "-q", "--report-dir", "out", "m")

	// Within its max, a round recorded twice.
	third["round"] = 2
	rec["steps"] = slices.DeleteFunc(rec["steps"].([]any), func(s any) bool { return s.(map[string]any)["round"] == 1.0 })
	writeJSON(t, filepath.Join(dir, "m", "edited.json"), rec)
	refused(t, dir, []string{"step tick: the runs of its first step t say rounds 2, 2 (in the order they started), but a repeat's rounds are 1, 2, … in turn"}, "replay", "m/edited.json")
}

// TestSequenceOrderHeld: a step that reads what the step before it in its sequence wrote,
// whose start was judged (started.r < 0.1: FAILED, r started after w's 0.15 s), edited so
// that the two steps' times are swapped - r first, then w - with the expectation passed,
// replayed and merged PASSED, exit 0: nothing held a sequence's steps to its order.
func TestSequenceOrderHeld(t *testing.T) {
	dir, rec := recordedRun(t, `package lab

import "labrun.dev/schema"

sw: schema.#Scenario & {
	steps: [
		{name: "w", exec: argv: ["sh", "-c", "sleep 0.15; echo queue=9 > q.txt"]},
		{name: "r", exec: argv: ["cat", "q.txt"]},
	]
	expect: ["started.r < 0.1"]
}
`, 1)
	w, r := stepOf(t, rec, "w"), stepOf(t, rec, "r")
	for _, k := range []string{"plannedNs", "startNs", "endNs", "skewNs"} {
		w[k], r[k] = r[k], w[k]
	}
	start, _ := time.Parse(time.RFC3339Nano, rec["start"].(string))
	stepsStart, _ := time.Parse(time.RFC3339Nano, rec["stepsStart"].(string))
	started := (time.Duration(r["startNs"].(float64)) - stepsStart.Sub(start)).Seconds()
	passedAs(rec, map[string]any{"started.r": started})
	recs, _ := filepath.Glob(filepath.Join(dir, "r", "*[0-9a-f].json"))
	if err := os.CopyFS(filepath.Join(dir, "m", "edited"), os.DirFS(strings.TrimSuffix(recs[0], ".json"))); err != nil {
		t.Fatal(err)
	}
	writeJSON(t, filepath.Join(dir, "m", "edited.json"), rec)
	want := []string{"step r: its record contradicts itself: it started at ", "before the step before it in its sequence, w, ended (at "}
	refused(t, dir, want, "replay", "m/edited.json")
	refused(t, dir, want, "merge", "-q", "--report-dir", "out", "m")
}

// TestSnapshotTextThatDoesNotParse: prometheus snapshots of a local backend around a load that
// got 503s (delta.rq_5xx == 0: FAILED), the after snapshot's 5xx counts edited to 0 in the
// record and its prometheus.txt made unreadable (one value written as a word): replay and
// merge PASSED, exit 0. The snapshot check skipped a text that does not parse, though the
// snapshot passed only over one that did.
func TestSnapshotTextThatDoesNotParse(t *testing.T) {
	dir, rec := recordedRun(t, `package lab

import "labrun.dev/schema"

pr: schema.#Scenario & {
	local: backends: a: {}
	steps: [
		{name: "before", snapshot: prometheus: "${backends.a.url}/metrics"},
		{name: "fortio", load: {url: "${backends.a.url}/echo?status=503", requests: 4, connections: 1}},
		{name: "after", snapshot: prometheus: "${backends.a.url}/metrics"},
	]
	expect: ["delta.rq_5xx == 0"]
}
`, 1)
	c := rec["results"].(map[string]any)["after"].(map[string]any)["value"].(map[string]any)["counters"].(map[string]any)
	delete(c, "rq_503")
	c["rq_5xx"], c["http_downstream_rq_5xx"] = 0, 0
	delete(rec, "notes")
	passedAs(rec, map[string]any{"delta.rq_5xx": 0})
	recs, _ := filepath.Glob(filepath.Join(dir, "r", "*[0-9a-f].json"))
	folder := strings.TrimSuffix(recs[0], ".json")
	if err := os.CopyFS(filepath.Join(dir, "m", "edited"), os.DirFS(folder)); err != nil {
		t.Fatal(err)
	}
	prom := filepath.Join(dir, "m", "edited", "prometheus.txt.jsonl")
	lines := strings.Split(readFileString(t, prom), "\n")
	for i, l := range lines {
		if strings.Contains(l, `"step":"after"`) {
			lines[i] = strings.Replace(l, `\nrq_503 4\n`, `\nrq_503 four\n`, 1)
			if lines[i] == l {
				t.Fatalf("no rq_503 4 in after's prometheus.txt: %s", l)
			}
		}
	}
	writeIn(t, prom, strings.Join(lines, "\n"))
	writeJSON(t, filepath.Join(dir, "m", "edited.json"), rec)
	want := []string{`step after (snapshot): its artifact prometheus.txt (in prometheus.txt.jsonl) does not parse as the snapshot parsed it (prometheus: line `, `value "four" is not a number`, "but the snapshot passed"}
	refused(t, dir, want, "replay", "m/edited.json")
	refused(t, dir, want, "merge", "-q", "--report-dir", "out", "m")
}

// TestLogsTextThatDoesNotParse: a logs step counted a 503 line (log.count == 0: FAILED); the
// line taken out of the result, and its time taken off the line in its logs.txt: replay and
// merge PASSED, exit 0. The logs check skipped a logs.txt that does not parse, though labrun
// writes every line there with its time.
func TestLogsTextThatDoesNotParse(t *testing.T) {
	dir, rec := recordedRun(t, `package lab

import "labrun.dev/schema"

lg: schema.#Scenario & {
	steps: [
		{name: "w", exec: argv: ["sh", "-c", "echo 'GET / 503 UO' >> app.log"]},
		{name: "log", logs: {file: "app.log", match: " 503 "}},
	]
	expect: ["log.count == 0"]
}
`, 1)
	v := rec["results"].(map[string]any)["log"].(map[string]any)["value"].(map[string]any)
	v["lines"], v["entries"], v["count"] = []any{}, []any{}, 0
	passedAs(rec, map[string]any{"log.count": 0})
	recs, _ := filepath.Glob(filepath.Join(dir, "r", "*[0-9a-f].json"))
	if err := os.CopyFS(filepath.Join(dir, "m", "edited"), os.DirFS(strings.TrimSuffix(recs[0], ".json"))); err != nil {
		t.Fatal(err)
	}
	logs := filepath.Join(dir, "m", "edited", "log-logs.txt")
	_, text, ok := strings.Cut(readFileString(t, logs), " ")
	if !ok || text != "GET / 503 UO\n" {
		t.Fatalf("log-logs.txt: %q", text)
	}
	writeIn(t, logs, text)
	writeJSON(t, filepath.Join(dir, "m", "edited.json"), rec)
	want := []string{"step log (logs): its artifact log-logs.txt does not read as the lines labrun writes there, each with its time (a line's time: ", "but the step saved its log whole"}
	refused(t, dir, want, "replay", "m/edited.json")
	refused(t, dir, want, "merge", "-q", "--report-dir", "out", "m")
}

// TestLogsMarkNotMovedPastALine: a logs step reads a process's lines since its mark (the start
// of the step its since names). A run whose 503 came after the mark failed "no 503 since the
// mark"; its record edited so that the mark started after that line (the steps after it moved
// later, the sleep before the read shortened to keep the read where it was), the line left
// out of what the step read (result and logs.txt, which still follows on from the process's
// output.txt), replayed PASSED. A sleep lasts at least its duration: one shorter is refused.
func TestLogsMarkNotMovedPastALine(t *testing.T) {
	const src = `package lab

import "labrun.dev/schema"

s: schema.#Scenario & {
	doc: "the server logged no 503 since the mark"
	steps: [
		{name: "srv", process: {argv: ["sh", "-c", "sleep 0.5; echo 'GET / 200'; echo 'GET / 503 UO'; echo 'GET / 200'; sleep 5"]}},
		{name: "pre", sleep: "300ms"},
		{name: "mark", sleep: "100ms"},
		{name: "pause", sleep: "600ms"},
		{name: "log", logs: {process: "srv", match: " 503 ", since: "mark"}},
	]
	expect: ["log.count == 0"]
}
`
	dir, rec := recordedRun(t, src, 1)
	recs, _ := filepath.Glob(filepath.Join(dir, "r", "*[0-9a-f].json"))
	value := rec["results"].(map[string]any)["log"].(map[string]any)["value"].(map[string]any)
	entries := value["entries"].([]any)
	if len(entries) != 1 {
		t.Fatalf("the run read %d lines of 503, want 1", len(entries))
	}
	runStart, err := time.Parse(time.RFC3339Nano, rec["start"].(string))
	if err != nil {
		t.Fatal(err)
	}
	line, err := time.Parse(time.RFC3339Nano, entries[0].(map[string]any)["time"].(string))
	if err != nil {
		t.Fatal(err)
	}
	// The mark moved to 1 ms after the line, the pause after it; the read stays.
	mark, pause, pre := stepOf(t, rec, "mark"), stepOf(t, rec, "pause"), stepOf(t, rec, "pre")
	d := float64(line.Sub(runStart)+time.Millisecond) - mark["startNs"].(float64)
	if d <= 0 {
		t.Fatalf("the 503 was written %s after the mark, at %s: the mark cannot be moved past it", line.Sub(runStart), time.Duration(mark["startNs"].(float64)))
	}
	pre["endNs"] = pre["endNs"].(float64) + d
	for _, s := range []map[string]any{mark, pause} {
		for _, k := range []string{"plannedNs", "startNs"} {
			s[k] = s[k].(float64) + d
		}
	}
	mark["endNs"] = mark["endNs"].(float64) + d
	value["lines"], value["entries"], value["count"] = nil, nil, 0
	passedAs(rec, map[string]any{"log.count": 0})
	edited := filepath.Join(dir, "m", "edited.json")
	// logs.txt begins after the mark: the lines up to the 503 taken out.
	folder := strings.TrimSuffix(recs[0], ".json")
	if err := os.CopyFS(strings.TrimSuffix(edited, ".json"), os.DirFS(folder)); err != nil {
		t.Fatal(err)
	}
	logs := filepath.Join(strings.TrimSuffix(edited, ".json"), "log-logs.txt")
	b, err := os.ReadFile(logs)
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(b), " 503 UO\n")
	if !ok {
		t.Fatalf("log-logs.txt holds no 503:\n%s", b)
	}
	writeFile(t, logs, after)
	lasted := time.Duration(pause["endNs"].(float64) - pause["startNs"].(float64))
	editedRefused(t, dir, rec, "step pause: its record contradicts itself: it passed, but it lasted "+dsl.WithUnit(float64(lasted)/float64(time.Millisecond), "ms")+", less than the 600ms it takes")
}

// TestSamplesAtTheirTicks: a sampler takes sample n at its first tick plus (n-1) every. A
// series given a sample between each two of its ticks (their step records and snapshots
// copied, at half its every, numbered in turn, the count its expectation read edited with
// them) replayed PASSED with twice the samples the run took: g.count >= 15 of a load of 1 s
// sampled every 100 ms.
func TestSamplesAtTheirTicks(t *testing.T) {
	const src = `package lab

import "labrun.dev/schema"

s: schema.#Scenario & {
	local: backends: a: {}
	steps: [
		{parallel: [
			{name: "fortio", load: {url: "${backends.a.url}/echo?delay=200ms", requests: 20, connections: 4}},
			{name: "g", every: "100ms", while: "fortio", snapshot: backend: "a"},
		]},
	]
	expect: ["g.count >= 15"]
}
`
	dir, rec := recordedRun(t, src, 1)
	start, err := time.Parse(time.RFC3339Nano, rec["start"].(string))
	if err != nil {
		t.Fatal(err)
	}
	steps := rec["steps"].([]any)
	series := rec["results"].(map[string]any)["g"].(map[string]any)["value"].(map[string]any)
	samples := series["samples"].([]any)
	var out, outSamples []any
	n, taken := 0, 0
	for i, s := range steps {
		m := s.(map[string]any)
		if m["name"] != "g" {
			out = append(out, m)
			continue
		}
		n++
		m["sample"] = float64(n)
		out = append(out, m)
		outSamples = append(outSamples, samples[taken])
		taken++
		if i+1 >= len(steps) || steps[i+1].(map[string]any)["name"] != "g" {
			continue
		}
		next := steps[i+1].(map[string]any)
		mid := map[string]any{}
		for k, v := range m {
			mid[k] = v
		}
		n++
		mid["sample"] = float64(n)
		mid["plannedNs"] = m["plannedNs"].(float64) + 50e6
		mid["startNs"] = math.Round((m["endNs"].(float64) + next["startNs"].(float64)) / 2)
		mid["endNs"] = mid["startNs"].(float64) + 1e5
		mid["skewNs"] = mid["startNs"].(float64) - mid["plannedNs"].(float64)
		out = append(out, mid)
		sm := map[string]any{}
		for k, v := range samples[taken-1].(map[string]any) {
			sm[k] = v
		}
		sm["at"] = start.Add(time.Duration(mid["startNs"].(float64) + 5e4)).Format(time.RFC3339Nano)
		outSamples = append(outSamples, sm)
	}
	if n < 15 || taken >= 15 {
		t.Fatalf("the run took %d samples, edited to %d: the edit must make g.count >= 15 hold where it did not", taken, n)
	}
	rec["steps"], series["samples"] = out, outSamples
	passedAs(rec, map[string]any{"g.count": n})
	// The first sample copied is 2 or a later one: the load's own record falls between two
	// samples' as the run's timing has it (under load, after sample 1's).
	editedRefused(t, dir, rec, "its record contradicts itself: it is planned at ", "ms, but its sampler plans sample ")
}

// editedRefused writes rec as m/edited.json in dir and wants replay and merge to refuse it,
// each with want in its output.
func editedRefused(t *testing.T, dir string, rec map[string]any, want ...string) {
	t.Helper()
	writeJSON(t, filepath.Join(dir, "m", "edited.json"), rec)
	refused(t, dir, want, "replay", "m/edited.json")
	refused(t, dir, want, "merge", "-q", "--report-dir", "out", "m")
}

// passedAfter edits rec into a passed run whose expectation "ended.bg > started.after" read
// the times of the records bg and after as the judge reads them (from the steps' start).
func passedAfter(t *testing.T, rec, bg, after map[string]any) {
	t.Helper()
	start, err := time.Parse(time.RFC3339Nano, rec["start"].(string))
	if err != nil {
		t.Fatal(err)
	}
	stepsStart, err := time.Parse(time.RFC3339Nano, rec["stepsStart"].(string))
	if err != nil {
		t.Fatal(err)
	}
	base := stepsStart.Sub(start)
	passedAs(rec, map[string]any{
		"ended.bg":      (time.Duration(bg["endNs"].(float64)) - base).Seconds(),
		"started.after": (time.Duration(after["startNs"].(float64)) - base).Seconds(),
	})
}

// TestAwaitJoinsItsSteps: an await ends once the background steps it joins have. A run whose
// claim that the background step still ran when the step after the await started failed (the
// await joined it), its step's end moved past that start and the values and outcomes with it,
// replayed PASSED.
func TestAwaitJoinsItsSteps(t *testing.T) {
	const src = `package lab

import "labrun.dev/schema"

s: schema.#Scenario & {
	steps: [
		{name: "bg", background: true, exec: argv: ["sleep", "0.2"]},
		{await: "bg"},
		{name: "after", exec: argv: ["true"]},
	]
	expect: ["ended.bg > started.after"]
}
`
	dir, rec := recordedRun(t, src, 1)
	bg, after := stepOf(t, rec, "bg"), stepOf(t, rec, "after")
	bg["endNs"] = after["startNs"].(float64) + 1e6
	passedAfter(t, rec, bg, after)
	editedRefused(t, dir, rec, "step bg: its record contradicts itself: it ended at ", ", after the await that joins it, steps.1, ended (at ")
}

// bgRounds is a scenario whose repeat runs two rounds of a background sleep of 0.2 s and a
// step after it, then the steps %s (a step or none), with the expectations %s.
const bgRounds = `package lab

import "labrun.dev/schema"

s: schema.#Scenario & {
	steps: [
		{name: "rounds", mayFail: true, repeat: {
			max: 2
			until: "false"
			steps: [
				{name: "bg", background: true, exec: argv: ["sleep", "0.2"]},
				{name: "x", exec: argv: ["true"]},
			]
		}},
		%s
	]
	expect: [%s]
}
`

// TestRoundJoinsItsBackgroundSteps: a repeat's round ends when the background steps it
// started have, before its until is judged. A run whose claim that a round's background step
// still ran when the step after the repeat started failed, its last round's background step's
// end moved past that start (the values and outcomes with it), replayed PASSED.
func TestRoundJoinsItsBackgroundSteps(t *testing.T) {
	dir, rec := recordedRun(t, fmt.Sprintf(bgRounds, `{name: "after", exec: argv: ["true"]}`, `"outcome.rounds == 'failed'", "ended.bg > started.after"`), 1)
	var bg map[string]any // its last round's
	for _, s := range rec["steps"].([]any) {
		if m := s.(map[string]any); m["name"] == "bg" {
			bg = m
		}
	}
	after := stepOf(t, rec, "after")
	bg["endNs"] = after["startNs"].(float64) + 1e6
	passedAfter(t, rec, bg, after)
	for _, e := range rec["expectations"].([]any) {
		if m := e.(map[string]any); m["expr"] == "outcome.rounds == 'failed'" {
			m["values"] = map[string]any{"outcome.rounds": "failed"}
		}
	}
	editedRefused(t, dir, rec, "step bg (round 2): its record contradicts itself: it ended at ", ", after the repeat whose round started it, rounds, ended (at ")
}

// TestNextRoundAfterItsBackgroundSteps: a repeat's next round starts once the background steps
// the round before it started have ended (the round joins them). A record whose first round's
// background step's end was moved past the start of the second round's first step, within the
// repeat's end, replayed PASSED: it was held to the repeat's end alone.
func TestNextRoundAfterItsBackgroundSteps(t *testing.T) {
	dir, rec := recordedRun(t, fmt.Sprintf(bgRounds, "", `"outcome.rounds == 'failed'"`), 0)
	var bg1, bg2 map[string]any
	for _, s := range rec["steps"].([]any) {
		if m := s.(map[string]any); m["name"] == "bg" {
			if bg1 == nil {
				bg1 = m
			}
			bg2 = m
		}
	}
	bg1["endNs"] = bg2["startNs"].(float64) + 1e6 // round 2's bg is its first step
	editedRefused(t, dir, rec, "step bg (round 1): its record contradicts itself: it ended at ", ", after step bg (round 2) of the next round of rounds started (at ")
}

// TestLaterPhaseAfterBackgroundSteps: a phase ends once the background steps it started have,
// and the next phase starts then. A run whose claim that a background step of its steps still
// ran when its cleanup started failed, the step's end moved past the cleanup step's start (the
// run's end after both, the values and outcomes edited), replayed PASSED: nothing but the run's
// end bounded it.
func TestLaterPhaseAfterBackgroundSteps(t *testing.T) {
	const src = `package lab

import "labrun.dev/schema"

s: schema.#Scenario & {
	steps: [
		{name: "bg", background: true, exec: argv: ["sleep", "0.2"]},
	]
	cleanup: [
		{name: "after", exec: argv: ["true"]},
	]
	expect: ["ended.bg > started.after"]
}
`
	dir, rec := recordedRun(t, src, 1)
	bg, after := stepOf(t, rec, "bg"), stepOf(t, rec, "after")
	bg["endNs"] = after["startNs"].(float64) + 1e5
	if after["endNs"].(float64) < bg["endNs"].(float64) {
		t.Fatalf("the cleanup step lasted less than 0.1 ms: %v", after)
	}
	passedAfter(t, rec, bg, after)
	editedRefused(t, dir, rec, "step bg: its record contradicts itself: it is a step of the steps phase and ends at ", ", after step after of the cleanup phase started (at ")
}

// TestShiftedLoadHeldToFortioStart: a load step, its result's start and end and the run's end
// moved 2 s later together (every time the record holds consistent), so that "the load started
// more than 1 s after the step before it ended" held, replayed PASSED beside its fortio.json,
// which says when fortio (labrun's own, on the local target) started it.
func TestShiftedLoadHeldToFortioStart(t *testing.T) {
	dir, rec := recordedRun(t, `package lab

import "labrun.dev/schema"

s: schema.#Scenario & {
	local: backends: a: {}
	steps: [
		{name: "first", exec: argv: ["true"]},
		{name: "fortio", load: {url: "${backends.a.url}/echo", requests: 4, connections: 1}},
	]
	expect: ["started.fortio - ended.first > duration('1s')"]
}
`, 1)
	const shift = 2 * time.Second
	later := func(m map[string]any, key string) {
		at, err := time.Parse(time.RFC3339Nano, m[key].(string))
		if err != nil {
			t.Fatal(err)
		}
		m[key] = at.Add(shift).Format(time.RFC3339Nano)
	}
	fortio := stepOf(t, rec, "fortio")
	// Its plan kept (started late against it): a sequence plans a step when the one before
	// it ends, and a plan moved too is refused for that first.
	for _, k := range []string{"startNs", "endNs", "skewNs"} {
		fortio[k] = fortio[k].(float64) + float64(shift)
	}
	l := rec["results"].(map[string]any)["fortio"].(map[string]any)["value"].(map[string]any)
	later(l, "start")
	later(l, "end")
	later(rec, "end")
	values := rec["expectations"].([]any)[0].(map[string]any)["values"].(map[string]any)
	for k, v := range values {
		if strings.HasPrefix(k, "started.fortio") {
			values[k] = v.(float64) + shift.Seconds()
		}
	}
	passedAs(rec, values)
	recs, _ := filepath.Glob(filepath.Join(dir, "r", "*[0-9a-f].json"))
	if err := os.CopyFS(filepath.Join(dir, "m", "edited"), os.DirFS(strings.TrimSuffix(recs[0], ".json"))); err != nil {
		t.Fatal(err)
	}
	editedRefused(t, dir, rec, "step fortio (load): its artifact fortio.json (in fortio.json.jsonl) says fortio started the load at ", ", but the record's load ran from ")
}

// TestExpectFailTrueNotANotRun: a bare expectFail: true takes no command that did not run (a
// shell's exit 127, "command not found") for the failure it expects: the run errs. Its record
// edited into "failed as expected" (the step passed with its error as the expected one, the
// run and its expectation passed) replayed PASSED beside the exit.txt that says 127.
func TestExpectFailTrueNotANotRun(t *testing.T) {
	dir, rec := recordedRun(t, `package lab

import "labrun.dev/schema"

s: schema.#Scenario & {
	steps: [{name: "x", expectFail: true, exec: argv: ["sh", "-c", "exit 127"]}]
	expect: ["outcome.x == 'passed'"]
}
`, 3)
	passedAsExpected(t, dir, rec, "x")
	editedRefused(t, dir, rec, "step x: its record contradicts itself: it passed as its expectFail: true expected, but it records exit 127, a shell's command not found or not executable: the command did not run")
}

// passedAsExpected edits rec, of a run in dir whose step name erred under expectFail: true,
// into a passed run whose step failed as expected, with its error, and whose expectation read
// outcome.<name> "passed"; its artifacts folder is copied beside m/edited.json.
func passedAsExpected(t *testing.T, dir string, rec map[string]any, name string) {
	t.Helper()
	step := stepOf(t, rec, name)
	expected, _, _ := strings.Cut(step["error"].(string), " (expectFail: ")
	delete(step, "error")
	step["outcome"], step["expectedError"], step["warnings"] = "passed", expected, []any{"expectFail: failed as expected: " + expected}
	passedAs(rec, map[string]any{"outcome." + name: "passed"})
	recs, _ := filepath.Glob(filepath.Join(dir, "r", "*[0-9a-f].json"))
	if err := os.CopyFS(filepath.Join(dir, "m", "edited"), os.DirFS(strings.TrimSuffix(recs[0], ".json"))); err != nil {
		t.Fatal(err)
	}
}

// TestExpectFailTrueNotAnUnanswered: a bare expectFail: true takes no assert whose expression
// has no answer (a type error) for the failure it expects: the run errs. Its record edited into
// "failed as expected" replayed PASSED: judged again, no answer read as "did not hold".
func TestExpectFailTrueNotAnUnanswered(t *testing.T) {
	dir, rec := recordedRun(t, `package lab

import "labrun.dev/schema"

s: schema.#Scenario & {
	steps: [
		{name: "x", exec: argv: ["echo", "hi"]},
		{name: "chk", expectFail: true, assert: "int(trim(x.stdout)) == 3"},
	]
	expect: ["outcome.chk == 'passed'"]
}
`, 3)
	passedAsExpected(t, dir, rec, "chk")
	editedRefused(t, dir, rec, `step chk: its assert "int(trim(x.stdout)) == 3" says it failed as its expectFail: true expected, but over the data the record holds from before it ran the expression has no answer (invalid operation: int(hi)`)
}

// TestExpectFailTrueNotANotStarted: a bare expectFail: true takes no command that could not
// be started (not found) for the failure it expects: the run errs. Such an exec records no
// result, as one its timeout cut does (which expectFail: true expects), so its record edited
// into "failed as expected" replayed PASSED. The exec's exit.txt now says why it ended without
// an exit code (schema.ExitNotStarted, schema.ExitCut); the run it was told from, an exec its
// timeout cut under expectFail: true, replays as it ran.
func TestExpectFailTrueNotANotStarted(t *testing.T) {
	dir, rec := recordedRun(t, `package lab

import "labrun.dev/schema"

s: schema.#Scenario & {
	steps: [{name: "x", expectFail: true, exec: argv: ["labrun-no-such-command"]}]
	expect: ["outcome.x == 'passed'"]
}
`, 3)
	passedAsExpected(t, dir, rec, "x")
	editedRefused(t, dir, rec, "step x (exec): its artifact x-exit.txt says the command was not started, but the record says the step passed as its expectFail: true expected")
	// Its version lowered to one before exit.txt said why, or the exit.txt's entry taken out.
	rec["version"] = 6.0
	delete(rec, "lints")
	editedRefused(t, dir, rec, "it says it is of version 6, but it keeps the exit.txt of exec x, which recorded no result (written since version 7)")
	rec["version"], rec["lints"] = 7.0, []any{}
	rec["artifacts"] = slices.DeleteFunc(rec["artifacts"].([]any), func(a any) bool { return a.(map[string]any)["name"] == "exit.txt" })
	if err := os.Remove(filepath.Join(dir, "m", "edited", "x-exit.txt")); err != nil {
		t.Fatal(err)
	}
	editedRefused(t, dir, rec, "step x: its record contradicts itself: it passed, but the record lists no exit.txt of the step")

	cut, _ := recordedRun(t, `package lab

import "labrun.dev/schema"

s: schema.#Scenario & {
	steps: [{name: "x", expectFail: true, timeout: "100ms", exec: argv: ["sleep", "5"]}]
	expect: ["outcome.x == 'passed'"]
}
`, 0)
	recs, _ := filepath.Glob(filepath.Join(cut, "r", "*[0-9a-f].json"))
	if code, out := runIn(t, cut, "replay", recs[0]); code != 0 {
		t.Errorf("replay of an exec its timeout cut under expectFail: true: exit %d, want 0\n%s", code, out)
	}
}

// TestWarningsHeldToTheLints: a run keeps its scenario's lint warnings (warning[mayfail-unread]:
// a wait that may fail whose outcome nothing reads); taken out of the record, the reports that
// replay and merge write from it said nothing of the finding. replay, mutate and merge make the
// lints of the source the run had again and refuse a record that lacks one of a code its labrun
// knew (lints); a record that does not say which lints its labrun knew is of an older version.
func TestWarningsHeldToTheLints(t *testing.T) {
	dir, rec := recordedRun(t, `package lab

import "labrun.dev/schema"

s: schema.#Scenario & {
	local: backends: a: {}
	steps: [
		{name: "soak", background: true, load: {url: "${backends.a.url}/echo", duration: "300ms", connections: 1}},
		{name: "g", every: "100ms", while: "soak", snapshot: backend: "a"},
		{name: "settle", mayFail: true, timeout: "200ms", wait: {until: "g.count >= 1 && g.last.rq_active >= 50", interval: "50ms"}},
		{await: "soak"},
	]
	expect: ["g.max.rq_total >= 1"]
}
`, 0)
	if len(rec["warnings"].([]any)) == 0 || rec["lints"] == nil {
		t.Fatalf("the run kept no warnings or no lints: %v, %v", rec["warnings"], rec["lints"])
	}
	recs, _ := filepath.Glob(filepath.Join(dir, "r", "*[0-9a-f].json"))
	if err := os.CopyFS(filepath.Join(dir, "m", "edited"), os.DirFS(strings.TrimSuffix(recs[0], ".json"))); err != nil {
		t.Fatal(err)
	}
	delete(rec, "warnings")
	editedRefused(t, dir, rec, "the scenario's lints give warning[mayfail-unread] at line 10, column 20", "which its warnings lack, and the labrun that ran knew that lint (lints): a warning was taken out after the run")
	refused(t, dir, []string{"which its warnings lack"}, "mutate", "m/edited.json")
	// The lints' codes taken out too: a record of version 7 on keeps them.
	delete(rec, "lints")
	editedRefused(t, dir, rec, "it is a record of version 9 without lints")
}

// TestMergeHoldsTheInvocationsRuns: a labrun run of several scenarios keeps in each record
// the runs it ran and its --parallel (invocation). A run of s.cue t.cue whose records of t
// were taken out merged as PASSED s; records of runs that ran at once (--parallel 2) edited
// to say --parallel 1, so that each read as a run that ran alone, merged as they were.
func TestMergeHoldsTheInvocationsRuns(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	for _, n := range []string{"s", "t"} {
		writeIn(t, filepath.Join(dir, n+".cue"), `package lab

import "labrun.dev/schema"

`+n+`: schema.#Scenario & {
	steps: [{name: "x", exec: argv: ["sleep", "0.3"]}]
	expect: ["x.exit == 0"]
}
`)
	}
	if code, out := runIn(t, dir, "run", "-q", "--parallel", "2", "--report-dir", "r", "s.cue", "t.cue"); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	if code, out := runIn(t, dir, "merge", "-q", "--report-dir", "out", "r"); code != 0 {
		t.Fatalf("merge of the genuine records: exit %d, want 0\n%s", code, out)
	}
	recs, _ := filepath.Glob(filepath.Join(dir, "r", "*[0-9a-f].json"))
	if len(recs) != 2 {
		t.Fatalf("%d records, want 2", len(recs))
	}
	copyRun := func(to, rec string) {
		t.Helper()
		if err := os.CopyFS(filepath.Join(dir, to, strings.TrimSuffix(filepath.Base(rec), ".json")), os.DirFS(strings.TrimSuffix(rec, ".json"))); err != nil {
			t.Fatal(err)
		}
	}
	// The record of t taken out.
	s := recs[0]
	if strings.Contains(s, "_t_") {
		s = recs[1]
	}
	copyRun("alone", s)
	writeJSON(t, filepath.Join(dir, "alone", filepath.Base(s)), readJSON(t, s))
	refused(t, dir, []string{"ran 2 runs (", "but the records given hold none of ", "t.cue t (1 run): taken out, or not given"}, "merge", "-q", "--report-dir", "out", "alone")
	// Both said to have run alone, one after the other.
	for _, r := range recs {
		copyRun("serial", r)
		rec := readJSON(t, r)
		rec["invocation"].(map[string]any)["parallel"] = 1.0
		writeJSON(t, filepath.Join(dir, "serial", filepath.Base(r)), rec)
	}
	refused(t, dir, []string{"ran at most 1 run at once (--parallel 1), but 2 of its records ran at once at "}, "merge", "-q", "--report-dir", "out", "serial")
}

// TestCutExecNotPassed: an exec its timeout cut (or an interrupt) records no result and errs;
// its record edited into a pass (the step's and the run's outcome passed, their errors taken
// out, its end moved within its timeout), where no expectation reads its result, replayed
// PASSED. A named exec that passed records its result; an unnamed one records none, and its
// exit.txt says it was cut (records of version 7). Lowered to version 6 (no exit.txt of an
// exec that exited with no code, no lints), the unnamed one replayed PASSED ("unverified"): an
// exec that passed other than as an expectFail expected exited, and wrote its exit.txt (since
// version 4).
func TestCutExecNotPassed(t *testing.T) {
	const noExit = "its record contradicts itself: it passed, but the record lists no exit.txt of the step, which an exec that exited writes its exit code to (records of version 4 on)"
	for _, c := range []struct{ step, path, want, want6 string }{
		{`{name: "x", timeout: "100ms", exec: argv: ["sleep", "5"]}`, "x", "step x: its record contradicts itself: it passed, but the record holds no result of it, which an exec records before it passes", "step x: " + noExit},
		{`{timeout: "100ms", exec: argv: ["sleep", "5"]}`, "steps.1", "step steps.1 (exec): its artifact steps.1-exit.txt says the command was cut, but the record says the step passed", "step steps.1: " + noExit},
	} {
		dir, rec := recordedRun(t, `package lab

import "labrun.dev/schema"

s: schema.#Scenario & {
	steps: [
		{name: "y", exec: argv: ["echo", "ok"]},
		`+c.step+`,
	]
	expect: ["y.stdout == 'ok\\n'"]
}
`, 3)
		var x map[string]any
		for _, st := range rec["steps"].([]any) {
			if m := st.(map[string]any); m["path"] == "steps.1" {
				x = m
			}
		}
		delete(x, "error")
		x["outcome"], x["endNs"] = "passed", x["startNs"].(float64)+50e6 // within its timeout
		passedAs(rec, nil)
		recs, _ := filepath.Glob(filepath.Join(dir, "r", "*[0-9a-f].json"))
		if err := os.CopyFS(filepath.Join(dir, "m", "edited"), os.DirFS(strings.TrimSuffix(recs[0], ".json"))); err != nil {
			t.Fatal(err)
		}
		editedRefused(t, dir, rec, c.want)
		// Made a record of version 6 (no exit.txt of an exec without a result, no lints, no
		// invocation): a passed exec exited, and wrote its exit.txt.
		rec["version"] = 6.0
		delete(rec, "lints")
		delete(rec, "invocation")
		rec["artifacts"] = slices.DeleteFunc(rec["artifacts"].([]any), func(a any) bool {
			return a.(map[string]any)["step"] == c.path && a.(map[string]any)["name"] == "exit.txt"
		})
		if err := os.Remove(filepath.Join(dir, "m", "edited", c.path+"-exit.txt")); err != nil {
			t.Fatal(err)
		}
		editedRefused(t, dir, rec, c.want6)
	}
}

// TestRepeatedExecHeldToItsExits: an exec a repeat runs in several rounds was held to no
// exit.txt (which is whose was not known): a run whose second round its timeout cut, edited
// into a pass with the result that makes the repeat's until hold (the step's, the repeat's and
// the run's outcomes passed, the round's end moved within its timeout), replayed PASSED beside
// the exit.txt of that round that says cut, and so did the same edit with that exit.txt taken
// out. Each round writes its own, in the order they run.
func TestRepeatedExecHeldToItsExits(t *testing.T) {
	dir, rec := recordedRun(t, `package lab

import "labrun.dev/schema"

s: schema.#Scenario & {
	steps: [{name: "loop", repeat: {
		max: 3
		steps: [{name: "c", timeout: "200ms", exec: argv: ["sh", "-c", "n=$(cat n 2>/dev/null || echo 0); n=$((n+1)); echo $n > n; echo $n; test $n -lt 2 || sleep 5"]}]
		until: "c.stdout == '2\\n'"
	}}]
	expect: ["c.exit == 0"]
}
`, 3)
	var last map[string]any
	for _, st := range rec["steps"].([]any) {
		m := st.(map[string]any)
		if m["outcome"] != "passed" {
			delete(m, "error")
			m["outcome"] = "passed"
		}
		if m["name"] == "c" {
			last = m
		}
	}
	if last["round"] != 2.0 {
		t.Fatalf("the last run of c is not round 2: %v", last)
	}
	last["endNs"] = last["startNs"].(float64) + 50e6 // within its timeout
	stepOf(t, rec, "loop")["endNs"] = last["endNs"].(float64) + 1e3
	rec["results"] = map[string]any{"c": map[string]any{"kind": "exec", "value": map[string]any{"stdout": "2\n", "stderr": "", "exit": 0}}}
	passedAs(rec, map[string]any{"c.exit": 0})
	recs, _ := filepath.Glob(filepath.Join(dir, "r", "*[0-9a-f].json"))
	if err := os.CopyFS(filepath.Join(dir, "m", "edited"), os.DirFS(strings.TrimSuffix(recs[0], ".json"))); err != nil {
		t.Fatal(err)
	}
	editedRefused(t, dir, rec, "step c (round 2) (exec): its artifact exit.txt (in c-exit-2.txt) says the command was cut, but the record says the step passed")
	// The exit.txt of round 2 taken out (entry and file).
	rec["artifacts"] = slices.DeleteFunc(rec["artifacts"].([]any), func(a any) bool { return a.(map[string]any)["file"] == "c-exit-2.txt" })
	if err := os.Remove(filepath.Join(dir, "m", "edited", "c-exit-2.txt")); err != nil {
		t.Fatal(err)
	}
	editedRefused(t, dir, rec, "step c (round 2): its record contradicts itself: 2 of its executions passed, but the record lists only 1 exit.txt of the step: each wrote one")
}

// TestSampledExecHeldToItsExits: an exec sampled with every runs its samples one after
// another, each writing its exit.txt; a run whose third sample its timeout cut, edited into a
// pass (the sample, the step it samples during, their block and the run passed, the sampled
// step's and the block's ends moved to its sleep's), replayed PASSED beside the exit.txt of
// that sample that says cut, and with it taken out.
func TestSampledExecHeldToItsExits(t *testing.T) {
	dir, rec := recordedRun(t, `package lab

import "labrun.dev/schema"

s: schema.#Scenario & {
	steps: [{parallel: [
		{name: "bg", sleep: "1200ms"},
		{name: "p", every: "100ms", while: "bg", timeout: "300ms", exec: argv: ["sh", "-c", "n=$(cat n 2>/dev/null || echo 0); n=$((n+1)); echo $n > n; test $n -lt 3 || sleep 5"]},
	]}]
	expect: ["outcome.p == 'passed'"]
}
`, 3)
	var cut, bg, block map[string]any
	for _, st := range rec["steps"].([]any) {
		m := st.(map[string]any)
		switch {
		case m["name"] == "p" && m["outcome"] != "passed":
			cut = m
		case m["name"] == "bg":
			bg = m
		case m["path"] == "steps.0":
			block = m
		}
	}
	if cut == nil {
		t.Fatal("no sample of p that did not pass")
	}
	// The third execution (a tick a sample overran on a loaded machine is skipped: its
	// number may be higher), whose exit.txt is the last of p's.
	var exit string
	for _, a := range rec["artifacts"].([]any) {
		if m := a.(map[string]any); m["step"] == "p" && m["name"] == "exit.txt" {
			exit = m["file"].(string)
		}
	}
	sample := fmt.Sprintf("step p (sample %v)", cut["sample"])
	for _, m := range []map[string]any{cut, bg, block} {
		delete(m, "error")
		m["outcome"] = "passed"
	}
	cut["endNs"] = cut["startNs"].(float64) + 50e6 // within its timeout
	bg["endNs"] = bg["startNs"].(float64) + 1200.5e6
	block["endNs"] = bg["endNs"].(float64) + 1e5
	start, err := time.Parse(time.RFC3339Nano, rec["start"].(string))
	if err != nil {
		t.Fatal(err)
	}
	rec["end"] = start.Add(time.Duration(block["endNs"].(float64)) + time.Millisecond).Format(time.RFC3339Nano)
	passedAs(rec, map[string]any{"outcome.p": "passed"})
	recs, _ := filepath.Glob(filepath.Join(dir, "r", "*[0-9a-f].json"))
	if err := os.CopyFS(filepath.Join(dir, "m", "edited"), os.DirFS(strings.TrimSuffix(recs[0], ".json"))); err != nil {
		t.Fatal(err)
	}
	editedRefused(t, dir, rec, sample+" (exec): its artifact exit.txt (in "+exit+") says the command was cut, but the record says the step passed")
	// The exit.txt of that sample taken out (entry and file).
	rec["artifacts"] = slices.DeleteFunc(rec["artifacts"].([]any), func(a any) bool { return a.(map[string]any)["file"] == exit })
	if err := os.Remove(filepath.Join(dir, "m", "edited", exit)); err != nil {
		t.Fatal(err)
	}
	editedRefused(t, dir, rec, sample+": its record contradicts itself: 3 of its executions passed, but the record lists only 2 exit.txt of the step: each wrote one")
}

// TestLoadHeldToTheBackendsCodes: a load on the local target whose requests all went to one
// local backend, between two snapshots of it, edited from its 503s to 200s in the record,
// fortio.json and codes-over-time.json together, the seal computed again (an edit the seal
// does not tell from the run's), replayed and merged PASSED, exit 0: the snapshot after the
// load still counted rq_503 4 and no rq_200, and nothing compared a load's codes with the
// backend's.
func TestLoadHeldToTheBackendsCodes(t *testing.T) {
	dir, rec := recordedRun(t, `package lab

import "labrun.dev/schema"

ld: schema.#Scenario & {
	local: backends: a: {}
	steps: [
		{name: "before", snapshot: backend: "a"},
		{name: "fortio", load: {url: "${backends.a.url}/echo?status=503", requests: 4, connections: 1}},
		{name: "after", snapshot: backend: "a"},
	]
	expect: ["fortio.code503 == 0"]
}
`, 1)
	recs, _ := filepath.Glob(filepath.Join(dir, "r", "*[0-9a-f].json"))
	edited := filepath.Join(dir, "m", "edited")
	if err := os.CopyFS(edited, os.DirFS(strings.TrimSuffix(recs[0], ".json"))); err != nil {
		t.Fatal(err)
	}
	l := rec["results"].(map[string]any)["fortio"].(map[string]any)["value"].(map[string]any)
	l["codes"], l["ok"], l["errors"] = map[string]any{"200": 4}, 4, 0
	passedAs(rec, map[string]any{"fortio.code503": 0})
	// fortio.json: its codes, and its histogram of failed calls emptied (fortio's sums).
	editLine := func(file string, edit func(text string) string) {
		var entry map[string]any
		if err := json.Unmarshal([]byte(readFileString(t, filepath.Join(edited, file))), &entry); err != nil {
			t.Fatal(err)
		}
		entry["text"] = edit(entry["text"].(string))
		b, _ := json.Marshal(entry)
		writeIn(t, filepath.Join(edited, file), string(b)+"\n")
	}
	editLine("fortio.json.jsonl", func(text string) string {
		var fj map[string]any
		if err := json.Unmarshal([]byte(text), &fj); err != nil {
			t.Fatal(err)
		}
		fj["RetCodes"] = map[string]any{"200": 4}
		if h, ok := fj["ErrorsDurationHistogram"].(map[string]any); ok {
			h["Count"], h["Data"], h["Min"], h["Max"], h["Sum"], h["Avg"], h["StdDev"] = 0, []any{}, 0, 0, 0, 0, 0
		}
		b, _ := json.Marshal(fj)
		return string(b)
	})
	editLine("codes-over-time.json.jsonl", func(text string) string { return strings.ReplaceAll(text, `"503"`, `"200"`) })
	writeJSON(t, filepath.Join(dir, "m", "edited.json"), rec)
	if err := resealRecord(filepath.Join(dir, "m", "edited.json")); err != nil {
		t.Fatal(err)
	}
	want := []string{"step fortio: its load sent every request to backend a (127.0.0.1:", ") and counts 4 answered 200, but step after's snapshot of it, taken after the load, counts 0 rq_200 since step before's read, which ended before the load started: the backend counts each code it answers"}
	refused(t, dir, want, "replay", "m/edited.json")
	refused(t, dir, want, "merge", "-q", "--report-dir", "out", "m")
}
