package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// asVersion1Record rewrites the record at path in the form of a record of version 1 (one
// section per kind of result, no source, no seal nor artifacts folder), as labrun wrote before
// records kept the hash of their scenario's source.
func asVersion1Record(t *testing.T, path string) map[string]any {
	t.Helper()
	rec := readJSON(t, path)
	rec["version"] = 1
	execs := map[string]any{}
	for name, r := range rec["results"].(map[string]any) {
		if m := r.(map[string]any); m["kind"] == "exec" {
			execs[name] = m["value"]
		}
	}
	rec["execs"] = execs
	for _, k := range []string{"results", "lints", "unit", "source", "labrun", "stepParams", "artifacts", "invocation", "fileDigests", "stepOptions"} {
		delete(rec, k)
	}
	if err := os.RemoveAll(strings.TrimSuffix(path, ".json")); err != nil {
		t.Fatal(err)
	}
	return rec
}

// failedFlRun runs fl.cue, whose state file says broken, in a new working directory with its
// report in r: the run fails, and its one record is recs[0].
func failedFlRun(t *testing.T) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	t.Chdir(dir)
	writeIn(t, filepath.Join(dir, "fl.cue"), flCUE)
	writeFile(t, filepath.Join(dir, "state"), "broken\n")
	if code, out := runIn(t, dir, "run", "-q", "--report-dir", "r", "fl.cue"); code != 1 {
		t.Fatalf("run: exit %d, want 1\n%s", code, out)
	}
	recs, _ := filepath.Glob(filepath.Join(dir, "r", "*[0-9a-f].json"))
	if len(recs) != 1 {
		t.Fatalf("records: %v", recs)
	}
	return dir, recs
}

// TestVersion1RecordFlippedNotMerged: a failed run's record rewritten in the form of version 1
// (which keeps no source) and its outcome flipped to passed. Replay judged it again over its
// data (FAILED, exit 1), but merge counted a record without a source as recorded, not judged
// again: "PASSED fl — unverified", exit 0, and "1 of 1 records were counted as recorded, not
// judged again over their data ()". Merge judges it again as replay does, its scenario file
// here, and refuses it (exit 2).
func TestVersion1RecordFlippedNotMerged(t *testing.T) {
	dir, recs := failedFlRun(t)
	rec := asVersion1Record(t, recs[0])
	passedAs(rec, nil)
	for _, e := range rec["expectations"].([]any) {
		m := e.(map[string]any)
		delete(m, "explanation")
		delete(m, "values")
	}
	writeJSON(t, recs[0], rec)
	if code, out := runIn(t, dir, "replay", recs[0]); code != 1 || !strings.Contains(out, "FAILED fl") {
		t.Errorf("replay: exit %d, want 1 (FAILED)\n%s", code, out)
	}
	refused(t, dir, []string{"the record says passed; its data says failed"}, "merge", "-q", "--report-dir", "out", "r")
}

// TestReplaySaysScenarioChanged: replay judges a record by its scenario file as it is now (to
// see an edited expectation's verdict on the run's data), but when that file is not the
// source the run had, its verdict line says so. Before, a failed run's record replayed
// "PASSED fl in …", exit 0, once its expectation was edited in fl.cue to what the run read,
// and nothing on the verdict line said the verdict was another scenario's.
func TestReplaySaysScenarioChanged(t *testing.T) {
	dir, recs := failedFlRun(t)
	for _, c := range []struct {
		name, src string
		code      int
		want      string
	}{
		{"unchanged", flCUE, 1, "FAILED fl in "},
		{"expectation edited", strings.Replace(flCUE, `\"ok\\n\"`, `\"broken\\n\"`, 1), 0, "— judged by fl.cue as it is now, not the source the run had (edited since the run, or --file): expectations other than the run's"},
		{"comment added", flCUE + "// a comment\n", 1, "— judged by fl.cue as it is now, not the source the run had (edited since the run, or --file)\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			writeIn(t, filepath.Join(dir, "fl.cue"), c.src)
			code, out := runIn(t, dir, "replay", recs[0])
			if code != c.code || !strings.Contains(out, c.want) || (c.src == flCUE && strings.Contains(out, "judged by")) {
				t.Errorf("replay: exit %d, want %d and %q\n%s", code, c.code, c.want, out)
			}
		})
	}
}

// TestFailedStepTakenOutOfRecordAndScenario: a run whose step b failed (exit 3), b taken out
// of its record (its step, result, artifact and parameters, the outcome made passed, the
// seal computed again) and out of the scenario file. The record and the file agree, and its
// data say passed: that cannot be told from the run's without a signature. But the file is
// not the source the run had (the record keeps its hash): replay's verdict line says so, and
// merge's line, which before said "PASSED s" alone, exit 0, says "— unverified: judged by
// its scenario file as it is now, not the source its run had (edited since the run)".
func TestFailedStepTakenOutOfRecordAndScenario(t *testing.T) {
	const two = `package lab

import "labrun.dev/schema"

s: schema.#Scenario & {
	steps: [
		{name: "a", exec: argv: ["echo", "a"]},
		{name: "b", exec: argv: ["sh", "-c", "exit 1"]},
	]
	expect: ["a.stdout == \"a\\n\""]
}
`
	dir, rec := recordedRun(t, two, 3)
	recs, _ := filepath.Glob(filepath.Join(dir, "r", "*[0-9a-f].json"))
	rec["steps"] = rec["steps"].([]any)[:1]
	delete(rec["results"].(map[string]any), "b")
	delete(rec["stepParams"].(map[string]any), "steps.1")
	var arts []any
	for _, a := range rec["artifacts"].([]any) {
		if m := a.(map[string]any); m["step"] == "b" {
			if err := os.Remove(filepath.Join(strings.TrimSuffix(recs[0], ".json"), m["file"].(string))); err != nil {
				t.Fatal(err)
			}
			continue
		}
		arts = append(arts, a)
	}
	rec["artifacts"] = arts
	passedAs(rec, map[string]any{"a.stdout": "a\n"})
	for _, e := range rec["expectations"].([]any) {
		e.(map[string]any)["explanation"] = `a.stdout ("a\n") == "a\n"`
	}
	writeJSON(t, recs[0], rec)
	if err := resealRecord(recs[0]); err != nil {
		t.Fatal(err)
	}
	writeIn(t, filepath.Join(dir, "s.cue"), strings.Replace(two, "\t\t{name: \"b\", exec: argv: [\"sh\", \"-c\", \"exit 1\"]},\n", "", 1))
	code, out := runIn(t, dir, "replay", recs[0])
	if want := "PASSED s in "; code != 0 || !strings.Contains(out, want) || !strings.Contains(out, "— judged by s.cue as it is now, not the source the run had (edited since the run, or --file)\n") {
		t.Errorf("replay: exit %d\n%s", code, out)
	}
	code, out = runIn(t, dir, "merge", "-q", "--report-dir", "out", "r")
	if want := "PASSED s — unverified: judged by its scenario file as it is now, not the source its run had (edited since the run)\n"; code != 0 || !strings.Contains(out, want) {
		t.Errorf("merge: exit %d, want 0 and %q\n%s", code, want, out)
	}
	// Beside another scenario's run, its line in the table says it too.
	writeIn(t, filepath.Join(dir, "ok.cue"), okCUE)
	if code, out := runIn(t, dir, "run", "-q", "--report-dir", "r", "ok.cue"); code != 0 {
		t.Fatalf("run ok: exit %d\n%s", code, out)
	}
	code, out = runIn(t, dir, "merge", "-q", "--report-dir", "out2", "r")
	if want := "unverified: judged by its scenario file as it is now, not the source its run had (edited since the run)"; code != 0 || !regexp.MustCompile(`(?m)^  PASSED  s .*`+regexp.QuoteMeta(want)).MatchString(out) {
		t.Errorf("merge of two scenarios: exit %d, want 0 and the line of s with %q\n%s", code, want, out)
	}
}

// TestWaitAfterSamplerMovedLater: a wait that timed out before its until held, its plan, start
// and end moved later, to where the until held of the samples (the wait passed, the outcome
// made passed, the seal computed again). The step before the wait is a sampler, whose records
// are its samples: the wait was held to no step before it, and the record replayed PASSED. A
// sequence plans the step after a background or sampling step once it has started it: the
// wait planned long after the sampler's first sample is refused.
func TestWaitAfterSamplerMovedLater(t *testing.T) {
	dir, rec := recordedRun(t, `package lab

import "labrun.dev/schema"

s: schema.#Scenario & {
	local: backends: a: {}
	steps: [
		{name: "soak", background: true, load: {url: "${backends.a.url}/echo?delay=20ms", duration: "600ms", connections: 1}},
		{name: "g", every: "50ms", while: "soak", snapshot: backend: "a"},
		{name: "busy", timeout: "120ms", wait: {until: "g.count >= 8", interval: "50ms"}},
		{await: "soak"},
	]
	expect: ["g.count >= 8"]
}
`, 1)
	recs, _ := filepath.Glob(filepath.Join(dir, "r", "*[0-9a-f].json"))
	ms := float64(time.Millisecond)
	for _, s := range rec["steps"].([]any) {
		m := s.(map[string]any)
		switch m["path"] {
		case "steps.2":
			m["plannedNs"], m["startNs"], m["endNs"], m["skewNs"], m["outcome"] = 400*ms, 400.1*ms, 450*ms, 0.1*ms, "passed"
			delete(m, "error")
		case "steps.3":
			m["plannedNs"], m["startNs"], m["outcome"] = 450*ms, 450*ms, "passed"
			delete(m, "error")
		}
	}
	passedAs(rec, nil)
	writeJSON(t, recs[0], rec)
	if err := resealRecord(recs[0]); err != nil {
		t.Fatal(err)
	}
	editedRefused(t, dir, rec, "step busy: its record contradicts itself: it was planned at 400ms, but the step before it in its sequence, g (sample 1), which runs in the background, started at ")
}

// TestVersion1RecordsNotJudgedSayWhy: the records of version 1 in docs/records keep no source,
// and their scenario file has changed steps since: merge counts them as recorded and says why.
// Since merge judges a record without a source again when it can (59680e67), the reason given
// was "their scenario file here is not the source they ran", which a record that keeps no
// source cannot tell.
func TestVersion1RecordsNotJudgedSayWhy(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(root)
	code, out := runIn(t, root, "merge", "-q", "--report-dir", "", "docs/records/kitb-mode1_strict.json")
	if want := "1 of 1 records were counted as recorded, not judged again over their data (they keep no source (records of version 1), and their scenario file here has not the steps or expectations they hold)"; code != 0 || !strings.Contains(out, want) {
		t.Errorf("merge: exit %d, want 0 and %q\n%s", code, want, out)
	}
}
