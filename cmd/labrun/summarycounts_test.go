package main

import (
	"testing"

	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/report"
)

// TestSummaryLineSaysRunsInterrupted: a sweep of 4 interrupted under --parallel 2, two runs
// passed and two stopped midway, read "SUMMARY sw: 2 of 4 runs passed (every run must pass)"
// on the console, as if the two had failed (its Markdown said interrupted; probe p109). The
// line now counts them, apart from the runs never started.
func TestSummaryLineSaysRunsInterrupted(t *testing.T) {
	s := &report.Summary{Planned: 5, Passed: 2, NotStarted: 1, Runs: []report.SummaryRun{
		{Outcome: interp.Passed}, {Outcome: interp.Passed},
		{Outcome: interp.Interrupted}, {Outcome: interp.Interrupted},
		{Outcome: interp.Skipped, NotStarted: report.NotStartedInterrupted},
	}}
	if got, want := summaryCounts(s), "2 of 5 runs passed, 2 interrupted, 1 not started"; got != want {
		t.Errorf("summary counts %q, want %q", got, want)
	}
}
