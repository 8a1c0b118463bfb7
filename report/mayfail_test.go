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
		// The title says the lints' warning too (TestWarnedBesideVerdict).
		"# " + rec.Scenario + " — PASSED — 1 step that may fail failed: busy (wait) — with 1 vet warning: mayfail-unread at s.cue:11:18\n",
		"- ⚠ /lab/s.cue:11:18: warning\\[mayfail-unread\\]: a wait with mayFail: true whose outcome nothing reads\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the Markdown report lacks %q:\n%s", want, md)
		}
	}
	h := report.HTML(rec, report.Files{})
	for _, want := range []string{
		"<title>" + rec.Scenario + " — PASSED — 1 step that may fail failed: busy (wait) — with 1 vet warning: mayfail-unread at s.cue:11:18</title>",
		`<span class="badge passed">PASSED</span> <span class="mayfailed warn">1 step that may fail failed: busy (wait)</span> <a class="warned warn" href="#warnings">with 1 vet warning: mayfail-unread at s.cue:11:18</a></h1>`,
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

// TestWarnedBesideVerdict: a run that passed with the lints' warnings in its scenario says so
// beside its verdict, how many and of which lint where (the first three, then how many more),
// so that a pass whose claim a warning undermines (unknown-subset: every request routed to
// the subset fails while a claim on the route's cluster holds) is not read as a clean one;
// a run that did not pass, or had no warning, says nothing more. Before, the verdict line and
// the reports' titles said plain PASSED.
func TestWarnedBesideVerdict(t *testing.T) {
	w := func(code string, line int) *dsl.Warning {
		return &dsl.Warning{Pos: dsl.Pos{File: "/lab/x.cue", Line: line, Col: 5}, Code: code, Msg: "m"}
	}
	sub := w(dsl.LintUnknownSubset, 20)
	for _, c := range []struct {
		outcome  interp.Outcome
		warnings []*dsl.Warning
		dir      string
		want     string
	}{
		{interp.Passed, nil, "/lab", ""},
		{interp.Failed, []*dsl.Warning{sub}, "/lab", ""},
		{interp.Passed, []*dsl.Warning{sub}, "/lab", "with 1 vet warning: unknown-subset at x.cue:20:5"},
		{interp.Passed, []*dsl.Warning{sub}, "/elsewhere", "with 1 vet warning: unknown-subset at /lab/x.cue:20:5"},
		{interp.Passed, []*dsl.Warning{sub}, "", "with 1 vet warning: unknown-subset at x.cue:20:5"},
		{interp.Passed, []*dsl.Warning{sub, w(dsl.LintUnknownSubset, 21), w(dsl.LintOneSample, 30), w(dsl.LintUnknownStat, 31), w(dsl.LintUnknownStat, 32)}, "/lab",
			"with 5 vet warnings: unknown-subset at x.cue:20:5, unknown-subset at x.cue:21:5, one-sample at x.cue:30:5, 2 more"},
	} {
		rec := &interp.Record{Outcome: c.outcome, Warnings: c.warnings}
		if got := report.Warned(rec, c.dir); got != c.want {
			t.Errorf("Warned(%s, %d warnings, %q) = %q, want %q", c.outcome, len(c.warnings), c.dir, got, c.want)
		}
	}
}

// TestWarnedRuns: a summary says how many of its runs passed with the lints' warnings, and
// of which lints; before, "SUMMARY s: 6 of 6 runs passed" of runs that each passed with an
// unknown-subset warning said nothing of it (each run's verdict line did).
func TestWarnedRuns(t *testing.T) {
	w := func(code string) *dsl.Warning {
		return &dsl.Warning{Pos: dsl.Pos{File: "/lab/x.cue", Line: 3, Col: 5}, Code: code, Msg: "m"}
	}
	rec := func(o interp.Outcome, ws ...*dsl.Warning) *interp.Record {
		return &interp.Record{Scenario: "s", Outcome: o, Warnings: ws}
	}
	for _, tc := range []struct {
		recs []*interp.Record
		want string
	}{
		{nil, ""},
		{[]*interp.Record{rec(interp.Passed), rec(interp.Passed)}, ""},
		{[]*interp.Record{rec(interp.Failed, w(dsl.LintUnknownSubset))}, ""},
		{[]*interp.Record{rec(interp.Passed, w(dsl.LintUnknownSubset)), nil, rec(interp.Passed, w(dsl.LintUnknownSubset), w(dsl.LintOneSample))},
			"2 passed with vet warnings: unknown-subset, one-sample; each run's verdict says where"},
	} {
		if got := report.WarnedRuns(tc.recs); got != tc.want {
			t.Errorf("WarnedRuns = %q, want %q", got, tc.want)
		}
	}
}
