package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/report"
)

// TestFinishRecordWrittenPagesNot: when the record (JSON) was written whole and only a page
// (a folder in its place; a full disk after the JSON alike) could not be, the verdict line
// names what was written and says what was lost, and the run's JSON path is kept; it said "its
// report could not be written" of a run whose record was there, and "its pages could not be"
// of one whose Markdown page was written, the HTML alone lost (a disk that filled between
// them), with the error that lost it, not "<nil>". The exit code stays 3 (infrastructure).
func TestFinishRecordWrittenPagesNot(t *testing.T) {
	for _, tc := range []struct{ lost, want string }{
		{".md", "its record is written (reports/B.json), its pages could not be"},
		{".html", "its record and Markdown page are written (reports/B.json, reports/B.md), its HTML page could not be"},
	} {
		t.Run(tc.lost, func(t *testing.T) {
			dir := t.TempDir()
			var stdout, stderr strings.Builder
			p := &process{Stdout: &stdout, Stderr: &stderr, Getenv: func(string) string { return "" }, Cwd: dir}
			start := time.Date(2026, 12, 5, 13, 0, 0, 0, time.UTC)
			rec := &interp.Record{Version: interp.RecordVersion, Scenario: "s", File: filepath.Join(dir, "s.cue"), Target: "local",
				Start: start, StepsStart: start, End: start.Add(time.Second), Outcome: interp.Passed, Results: map[string]*interp.Result{}}
			u := &dsl.Unit{ID: "s", Matrix: &dsl.Matrix{Scenario: "s", File: filepath.Join(dir, "s.cue")}}
			run := runInfo{id: "0123456789"}
			base := report.Base(rec) + "_" + run.id
			if err := os.MkdirAll(filepath.Join(dir, "reports", base+tc.lost), 0o755); err != nil {
				t.Fatal(err)
			}
			out := p.finish(u, rec, &runFlags{reportDir: "reports"}, run, true)
			if out.code != exitInfra {
				t.Errorf("exit %d, want %d", out.code, exitInfra)
			}
			json := filepath.Join(dir, "reports", base+".json")
			if _, err := os.Stat(json); err != nil {
				t.Fatalf("the record was not written: %v", err)
			}
			if out.json != json {
				t.Errorf("the run's JSON path is %q, want %q", out.json, json)
			}
			want := strings.ReplaceAll(strings.ReplaceAll(tc.want, "reports/", filepath.Join("reports", "")+string(filepath.Separator)), "B.", base+".")
			// The reason is the error's (it read "<nil>" when the Markdown page was written).
			want += ": rename "
			if s := stdout.String(); strings.Contains(s, "its report could not be written") || !strings.Contains(s, want) || strings.Contains(s, "<nil>") {
				t.Errorf("verdict:\n%s\nwant it to say %q", s, want)
			}
		})
	}
}
