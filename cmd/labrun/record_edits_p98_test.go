package main

import (
	"path/filepath"
	"testing"
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
