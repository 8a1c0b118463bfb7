package main

import (
	"path/filepath"
	"testing"
	"time"
)

// TestRecordClockRemoved: every run's record says when the run started and ended (start, end)
// and when its steps began (stepsStart): labrun has written them since its first record, a
// run refused before its steps included. A record without one was edited. Before, a record
// whose start was taken out replayed PASSED ("recorded 0001-01-01 00:00:00 UTC", "in
// 2562047h47m16s"), and merge, which places a record among its labrun run's others by its
// start, skipped it: a passed run of another labrun run, the invocation copied in, its start
// taken out, stood for the failed run it replaced and merged PASSED, exit 0. Replay and
// merge refuse such a record (exit 2), naming the field.
func TestRecordClockRemoved(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(rec map[string]any)
		want string
	}{
		{"start taken out", func(rec map[string]any) { delete(rec, "start") }, "it keeps no start"},
		{"end taken out", func(rec map[string]any) { delete(rec, "end") }, "it keeps no end"},
		{"stepsStart taken out", func(rec map[string]any) { delete(rec, "stepsStart") }, "it keeps no stepsStart"},
		{"start zeroed", func(rec map[string]any) { rec["start"] = "0001-01-01T00:00:00Z" }, "it keeps no start"},
		{"end before start", func(rec map[string]any) { rec["start"], rec["end"] = rec["end"], rec["start"] }, "it ends (end) at "},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, rec := recordedRun(t, okCUE, 0)
			c.edit(rec)
			recs, _ := filepath.Glob(filepath.Join(dir, "r", "*[0-9a-f].json"))
			writeJSON(t, recs[0], rec)
			if err := resealRecord(recs[0]); err != nil {
				t.Fatal(err)
			}
			refused(t, dir, []string{c.want}, "replay", recs[0])
			refused(t, dir, []string{c.want}, "merge", "-q", "--report-dir", "out", "r")
		})
	}
}

// TestSuiteRunReplacedByAnEarlierRun: TestSuiteRunReplacedByALaterRun the other way: the
// stand-in is an earlier labrun run's passed record (its times moved an hour back, as a run
// made an hour before the suite), and the suite's invocation start moved back to its start in
// every record (the seals computed again), so that it did not start before the run began its
// runs. Merge refused it (exit 2) by the idle window, but named only the suite's own record
// after the hour without a run, as "a record of a later run": the stand-in before the gap was
// not named. It says both sides.
func TestSuiteRunReplacedByAnEarlierRun(t *testing.T) {
	dir, ok, earlier := suiteWithOtherPassedFl(t, "earlier", true, "ok.cue", "fl.cue")
	rec := readJSON(t, earlier)
	inv := readJSON(t, ok)["invocation"].(map[string]any)
	for _, k := range []string{"start", "end", "stepsStart"} {
		at, err := time.Parse(time.RFC3339Nano, rec[k].(string))
		if err != nil {
			t.Fatal(err)
		}
		rec[k] = at.Add(-time.Hour).Format(time.RFC3339Nano)
	}
	inv["start"] = rec["start"]
	rec["invocation"] = inv
	stand := standInFor(t, dir, earlier, rec)
	okRec := readJSON(t, ok)
	okRec["invocation"] = inv
	writeJSON(t, ok, okRec)
	for _, f := range []string{stand, ok} {
		if err := resealRecord(f); err != nil {
			t.Fatal(err)
		}
	}
	refused(t, dir, []string{"last had a run running (the end of m/", "a record of a later run of its scenario stands for the one that run made", "or the record before those 1h0m0s without a run, " + relPath(dir, stand) + ", is of an earlier run of its scenario, the invocation's start moved back with it"}, "merge", "-q", "--report-dir", "out", "m")
}
