package report_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/report"
)

// TestMayFailed: a run whose steps that may fail failed says so beside its verdict, each step
// once with its kind (a sampler's failed samples counted); a step that failed without mayFail,
// or a mayFail step that passed, is not one of them. Beside a run that did not pass, it says
// "besides": "FAILED s in 1s — 1 step that may fail failed: busy (wait)" read as the cause
// where an expectation had failed.
func TestMayFailed(t *testing.T) {
	step := func(name, kind string, o interp.Outcome, sample int, mayFail bool) *interp.StepRecord {
		s := &interp.StepRecord{Path: "steps.x", Name: name, Kind: kind, Outcome: o, Sample: sample}
		if mayFail {
			s.Warnings = []string{interp.MayFailWarning}
		}
		return s
	}
	for _, c := range []struct {
		outcome interp.Outcome
		steps   []*interp.StepRecord
		want    string
	}{
		{interp.Passed, nil, ""},
		{interp.Failed, []*interp.StepRecord{step("busy", "wait", interp.TimedOut, 0, true)}, "besides, 1 step that may fail failed: busy (wait)"},
		{interp.Errored, []*interp.StepRecord{step("busy", "wait", interp.TimedOut, 0, true)}, "besides, 1 step that may fail failed: busy (wait)"},
		{interp.Failed, []*interp.StepRecord{step("busy", "wait", interp.Passed, 0, false), step("x", "exec", interp.Failed, 0, false)}, ""},
		{interp.Passed, []*interp.StepRecord{step("busy", "wait", interp.TimedOut, 0, true)}, "1 step that may fail failed: busy (wait)"},
		{interp.Passed, []*interp.StepRecord{
			step("busy", "wait", interp.Failed, 0, true),
			step("g", "exec", interp.Failed, 1, true), step("g", "exec", interp.Passed, 2, false), step("g", "exec", interp.Errored, 3, true),
		}, "2 steps that may fail failed: busy (wait), g (exec) ×2"},
	} {
		if got := report.MayFailed(&interp.Record{Outcome: c.outcome, Steps: c.steps}); got != c.want {
			t.Errorf("MayFailed = %q, want %q", got, c.want)
		}
	}
}

// TestReportSaysMayFailedAndWarnings: a run passed whose wait with mayFail failed and whose
// lints warned (warning[mayfail-unread]): before, the Markdown and HTML reports' headers said
// PASSED alone, the failure was one row of the timeline, and the warnings were nowhere in them.
func TestReportSaysMayFailedAndWarnings(t *testing.T) {
	rec := mayFailedRecord()
	md := report.Markdown(rec, report.Files{})
	for _, want := range []string{
		"# " + rec.Scenario + " — PASSED — 1 step that may fail failed: busy (wait)\n",
		"- ⚠ /lab/s.cue:11:18: warning\\[mayfail-unread\\]: a wait with mayFail: true whose outcome nothing reads\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the Markdown report lacks %q:\n%s", want, md)
		}
	}
	h := report.HTML(rec, report.Files{})
	for _, want := range []string{
		"<title>" + rec.Scenario + " — PASSED — 1 step that may fail failed: busy (wait)</title>",
		`<span class="badge passed">PASSED</span> <span class="mayfailed warn">1 step that may fail failed: busy (wait)</span></h1>`,
		"<li>⚠ /lab/s.cue:11:18: warning[mayfail-unread]: a wait with mayFail: true whose outcome nothing reads</li>",
	} {
		if !strings.Contains(h, want) {
			t.Errorf("the HTML report lacks %q", want)
		}
	}
}

// TestJUnitSaysMayFailedAndWarnings: the suite's system-out says what the reports' titles say
// of steps that may fail that failed, and the lints' warnings (before, its first line said
// "passed" alone and the warnings were not in the file).
func TestJUnitSaysMayFailedAndWarnings(t *testing.T) {
	rec := mayFailedRecord()
	p := filepath.Join(t.TempDir(), "junit.xml")
	if err := report.JUnit(p, []*interp.Record{rec}, nil); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	b = []byte(strings.ReplaceAll(string(b), "&#xA;", "\n")) // the XML's newlines
	for _, want := range []string{
		"<system-out>" + rec.Scenario + ": passed in 3.000 — 1 step that may fail failed: busy (wait)\n",
		"/lab/s.cue:11:18: warning[mayfail-unread]: a wait with mayFail: true whose outcome nothing reads\n",
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the JUnit file lacks %q:\n%s", want, b)
		}
	}
}

// TestMayFailedRuns: a summary says which steps that may fail failed in its runs, each with how
// many of the runs that started it failed in; a run not started counts in none.
func TestMayFailedRuns(t *testing.T) {
	for _, c := range []struct {
		runs []report.SummaryRun
		want string
	}{
		{[]report.SummaryRun{{}, {}}, ""},
		{[]report.SummaryRun{{MayFailed: []string{"busy (wait)"}}, {}, {NotStarted: report.NotStartedFailFast}}, "1 step that may fail failed: busy (wait) in 1 of 2 runs"},
		{[]report.SummaryRun{{MayFailed: []string{"busy (wait)"}}, {MayFailed: []string{"g (exec)", "busy (wait)"}}},
			"2 steps that may fail failed: busy (wait) in 2 of 2 runs, g (exec) in 1 of 2 runs"},
	} {
		if got := report.MayFailedRuns(&report.Summary{Runs: c.runs}); got != c.want {
			t.Errorf("MayFailedRuns = %q, want %q", got, c.want)
		}
	}
}

// mayFailedRecord is a run that passed while its wait busy, which may fail, timed out, and
// whose lints warned (warning[mayfail-unread]).
func mayFailedRecord() *interp.Record {
	rec := sampleRecord()
	rec.Outcome = interp.Passed
	rec.Steps = append(rec.Steps, &interp.StepRecord{Path: "steps.3", Name: "busy", Kind: "wait", Outcome: interp.TimedOut,
		Error: "wait timed out after 600ms", Warnings: []string{interp.MayFailWarning}})
	rec.Warnings = []*dsl.Warning{{Pos: dsl.Pos{File: "/lab/s.cue", Line: 11, Col: 18}, Code: dsl.LintMayFailUnread, Scenario: rec.Scenario,
		Msg: "a wait with mayFail: true whose outcome nothing reads"}}
	return rec
}
