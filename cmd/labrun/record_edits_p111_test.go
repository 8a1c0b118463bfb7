package main

import (
	"path/filepath"
	"testing"
)

// TestRecordExpectationOutcomeContradicts: a passed run's record whose expectation's outcome
// was edited to failed (the seal computed again) contradicts itself. Merge refused it; replay
// judged the expectation again over the data, which still held, and said PASSED, exit 0, of a
// record that says one of its claims failed. Replay refuses it as merge does (exit 2), naming
// the expectation.
func TestRecordExpectationOutcomeContradicts(t *testing.T) {
	dir, rec := recordedRun(t, okCUE, 0)
	exps := rec["expectations"].([]any)
	exps[0].(map[string]any)["outcome"] = "failed"
	recs, _ := filepath.Glob(filepath.Join(dir, "r", "*[0-9a-f].json"))
	writeJSON(t, recs[0], rec)
	if err := resealRecord(recs[0]); err != nil {
		t.Fatal(err)
	}
	refused(t, dir, []string{"the record says passed; its expectation", "says failed"}, "replay", recs[0])
	refused(t, dir, []string{"the record says passed; its expectation", "says failed"}, "merge", "-q", "--report-dir", "out", "r")
}
