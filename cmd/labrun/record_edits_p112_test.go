package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSummaryMatrixSmallerThanInvocation: a --count 3 run's failed last round taken out of its
// folder, the count made 2 in the records left (their seals computed again) and in the
// summary (its run, plan and verdict), the invocation each record keeps left as the run wrote
// it (3 runs): labrun diff of it and another run's summary said "2 of 2 runs passed",
// "verdict changed: failed → passed". The records beside a summary are held to their
// invocation's count of runs, as merge holds them (merge_matrix_fewer_than_invocation).
func TestSummaryMatrixSmallerThanInvocation(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	writeIn(t, filepath.Join(dir, "s.cue"), `package lab

import "labrun.dev/schema"

// Its third run fails: each run counts itself in the file c.
s: schema.#Scenario & {
	steps: [{name: "x", exec: argv: ["sh", "-c", "n=$(($(cat c 2>/dev/null || echo 0) + 1)); echo $n > c; echo $n"]}]
	expect: ["int(trim(x.stdout)) < 3"]
}
`)
	var sums [2]string
	for i, d := range []string{"a", "b"} {
		os.Remove(filepath.Join(dir, "c"))
		if code, out := runIn(t, dir, "run", "-q", "--count", "3", "--report-dir", d, "s.cue"); code != 1 {
			t.Fatalf("run: exit %d, want 1 (its third run fails)\n%s", code, out)
		}
		ss, _ := filepath.Glob(filepath.Join(dir, d, "*.summary.json"))
		if len(ss) != 1 {
			t.Fatalf("summaries in %s: %v", d, ss)
		}
		sums[i] = ss[0]
	}
	s := readJSON(t, sums[1])
	runs := s["runs"].([]any)
	third := runs[2].(map[string]any)
	if third["outcome"] != "failed" {
		t.Fatalf("the third run of the summary did not fail: %v", third)
	}
	base := filepath.Join(dir, "b", strings.TrimSuffix(third["report"].(string), ".html"))
	for _, p := range []string{base, base + ".json", base + ".md", base + ".html"} {
		if err := os.RemoveAll(p); err != nil {
			t.Fatal(err)
		}
	}
	s["runs"], s["passed"], s["verdict"], s["count"], s["planned"] = runs[:2], 2, "passed", 2, 2
	writeJSON(t, sums[1], s)
	recs, _ := filepath.Glob(filepath.Join(dir, "b", "*_s_*[0-9a-f].json"))
	if len(recs) != 2 {
		t.Fatalf("records left in b: %v", recs)
	}
	for _, p := range recs {
		rec := readJSON(t, p)
		rec["unit"].(map[string]any)["matrix"].(map[string]any)["count"] = 2
		writeJSON(t, p, rec)
		if err := resealRecord(p); err != nil {
			t.Fatal(err)
		}
	}
	refused(t, dir, []string{"its matrix plans 2 runs (1 combination × 2), but the labrun run that made it (invocation ", ") ran 3 runs of ", "the summary was changed after it was written"}, "diff", sums[0], sums[1])
}
