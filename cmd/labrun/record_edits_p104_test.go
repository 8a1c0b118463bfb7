package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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

// TestVersion1RecordFlippedNotMerged: a failed run's record rewritten in the form of version 1
// (which keeps no source) and its outcome flipped to passed. Replay judged it again over its
// data (FAILED, exit 1), but merge counted a record without a source as recorded, not judged
// again: "PASSED fl — unverified", exit 0, and "1 of 1 records were counted as recorded, not
// judged again over their data ()". Merge judges it again as replay does, its scenario file
// here, and refuses it (exit 2).
func TestVersion1RecordFlippedNotMerged(t *testing.T) {
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
	for _, c := range []struct {
		name, src string
		code      int
		want      string
	}{
		{"unchanged", flCUE, 1, "FAILED fl in "},
		{"expectation edited", strings.Replace(flCUE, `\"ok\\n\"`, `\"broken\\n\"`, 1), 0, "— judged by fl.cue as it is now, not the source the run had (edited since the run, or --file): expectations other than the run's"},
		{"comment added", flCUE + "// a comment\n", 1, "— judged by fl.cue as it is now, not the source the run had (edited since the run, or --file): its steps and expectations as the run had them"},
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
