package report_test

import (
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/report"
)

// junitCases are records of the ways a run ends, for the JUnit tests.
func junitCases() map[string]*interp.Record {
	failed := sampleRecord()

	interrupted := sampleRecord()
	interrupted.Outcome = interp.Interrupted
	interrupted.Error = "interrupted"
	interrupted.Steps[1].Outcome = interp.Cancelled
	interrupted.Steps[1].Error = "context canceled"
	interrupted.Steps[1].End = 91 * time.Microsecond // the time that once printed as 9.1e-05
	interrupted.Steps = interrupted.Steps[:2]
	for _, j := range interrupted.Expectations {
		j.Outcome, j.Explanation, j.Reason = interp.Skipped, "", "the run was interrupted"
	}

	errored := sampleRecord()
	errored.Outcome = interp.Errored
	errored.Error = "/lab/s2.cue:9:3: steps.0 (snapshot): GET /stats: connection refused"
	errored.ErrorPos = &dsl.Pos{File: "/lab/s2.cue", Line: 9, Col: 3}
	errored.Steps[0].Outcome = interp.Errored
	errored.Steps[0].Error = "GET /stats: connection refused <&>\x01"
	errored.Steps = errored.Steps[:1]
	for _, j := range errored.Expectations {
		j.Outcome, j.Explanation, j.Reason = interp.Skipped, "", "the run stopped before its end"
	}

	refused := sampleRecord()
	refused.Outcome = interp.Refused
	refused.Error = "apply outside the scenario's namespaces"
	refused.Steps = nil
	refused.Expectations = nil

	passed := sampleRecord()
	passed.Outcome = interp.Passed
	passed.Expectations = passed.Expectations[1:]
	passed.Scenario = "é ünïcode & <name>"
	return map[string]*interp.Record{"failed": failed, "interrupted": interrupted, "errored": errored, "refused": refused, "passed": passed}
}

type junitDoc struct {
	Suites []struct {
		Name     string `xml:"name,attr"`
		Tests    int    `xml:"tests,attr"`
		Failures int    `xml:"failures,attr"`
		Errors   int    `xml:"errors,attr"`
		Skipped  int    `xml:"skipped,attr"`
		Time     string `xml:"time,attr"`
		Props    []struct {
			Name  string `xml:"name,attr"`
			Value string `xml:"value,attr"`
		} `xml:"properties>property"`
		Cases []struct {
			Name  string `xml:"name,attr"`
			Time  string `xml:"time,attr"`
			Error *struct {
				Type    string `xml:"type,attr"`
				Message string `xml:"message,attr"`
				Text    string `xml:",chardata"`
			} `xml:"error"`
			Failure *struct {
				Type string `xml:"type,attr"`
				Text string `xml:",chardata"`
			} `xml:"failure"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func readJUnit(t *testing.T, recs ...*interp.Record) (string, junitDoc) {
	t.Helper()
	return readJUnitDocs(t, recs)
}

// readJUnitDocs is readJUnit with the checks of documents' expected blocks.
func readJUnitDocs(t *testing.T, recs []*interp.Record, docs ...report.DocCheck) (string, junitDoc) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "junit.xml")
	if err := report.JUnit(p, recs, nil, docs...); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	var doc junitDoc
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("invalid XML: %v\n%s", err, b)
	}
	return p, doc
}

// TestJUnitCounts checks that no run that did not pass reads as a success to a CI that counts
// failures and errors, and that an interrupted run names the step it stopped in.
func TestJUnitCounts(t *testing.T) {
	for name, rec := range junitCases() {
		_, doc := readJUnit(t, rec)
		s := doc.Suites[0]
		bad := s.Failures + s.Errors
		if (rec.Outcome == interp.Passed) != (bad == 0) {
			t.Errorf("%s: failures %d, errors %d for a run that %s", name, s.Failures, s.Errors, rec.Outcome)
		}
	}
	_, doc := readJUnit(t, junitCases()["interrupted"])
	s := doc.Suites[0]
	if s.Errors != 2 || s.Skipped != 2 {
		t.Errorf("interrupted: errors %d skipped %d, want 2 (the step, the run) and 2 (the expectations)", s.Errors, s.Skipped)
	}
	var run, step bool
	for _, c := range s.Cases {
		if c.Error == nil {
			continue
		}
		if c.Name == "run" && c.Error.Type == "interrupted" && strings.Contains(c.Error.Text, "fortio (steps.1.parallel.0)") {
			run = true
		}
		if c.Name == "fortio (steps.1.parallel.0)" && c.Error.Type == "interrupted" {
			step = true
		}
	}
	if !run || !step {
		t.Errorf("interrupted: want an error case for the run naming the step, and one for the step: %+v", s.Cases)
	}
}

// TestJUnitDocChecks checks that an expected-output block of a Markdown document that did not
// match the run is a failure in the JUnit, holding the diff, and one not compared is skipped:
// before, the JUnit of labrun run FILE.md held only the records, so a CI reading it took a
// document whose expected block differed (exit 1) for a success.
func TestJUnitDocChecks(t *testing.T) {
	passed := junitCases()["passed"]
	docs := []report.DocCheck{
		{File: "a.md", Line: 13, Failure: "a.md:14: the expected output differs from the run (- expected, + got):\n  - scenario s: failed\n  + scenario s: passed\n"},
		{File: "a.md", Line: 30},
		{File: "a.md", Line: 40, Skipped: "not compared with the run: scenario t was not selected"},
		{File: "b.md", Line: 5},
		{File: "c.md", Error: "its expected-output blocks were not compared with the run: permission denied"},
	}
	p, doc := readJUnitDocs(t, []*interp.Record{passed}, docs...)
	b, _ := os.ReadFile(p)
	type counts struct{ tests, failures, errors, skipped int }
	want := map[string]counts{"a.md": {3, 1, 0, 1}, "b.md": {1, 0, 0, 0}, "c.md": {1, 0, 1, 0}}
	wantOutcome := map[string]string{"a.md": "failed", "b.md": "passed", "c.md": string(interp.Errored)}
	seen := 0
	for _, s := range doc.Suites {
		w, ok := want[s.Name]
		if !ok {
			continue
		}
		seen++
		if got := (counts{s.Tests, s.Failures, s.Errors, s.Skipped}); got != w {
			t.Errorf("%s: tests, failures, errors, skipped = %v, want %v\n%s", s.Name, got, w, b)
		}
		for _, pr := range s.Props {
			if pr.Name == "outcome" && pr.Value != wantOutcome[s.Name] {
				t.Errorf("%s: outcome %s, want %s", s.Name, pr.Value, wantOutcome[s.Name])
			}
		}
		if s.Name == "a.md" {
			f := s.Cases[0].Failure
			if f == nil || f.Type != "expected-output" || !strings.Contains(f.Text, "+ scenario s: passed") {
				t.Errorf("a.md: want the first case to fail with the diff: %+v\n%s", s.Cases, b)
			}
		}
	}
	if seen != 3 {
		t.Errorf("want a suite per document (a.md, b.md, c.md), found %d:\n%s", seen, b)
	}
}

var plainDecimal = regexp.MustCompile(`^[0-9]+\.[0-9]+$|^0$`)

func TestJUnitTimesArePlainDecimals(t *testing.T) {
	_, doc := readJUnit(t, junitCases()["interrupted"])
	for _, s := range doc.Suites {
		if !plainDecimal.MatchString(s.Time) {
			t.Errorf("suite time %q is not a plain decimal", s.Time)
		}
		for _, c := range s.Cases {
			if !plainDecimal.MatchString(c.Time) {
				t.Errorf("case %s: time %q is not a plain decimal", c.Name, c.Time)
			}
		}
	}
}

// TestJUnitSchemas validates the JUnit of every kind of run against the strict Ant JUnit schema
// and Jenkins' xunit JUnit schema (testdata/*.xsd) with xmllint.
func TestJUnitSchemas(t *testing.T) {
	xmllint, err := exec.LookPath("xmllint")
	if err != nil {
		t.Skip("xmllint is not installed (Debian: apt-get install libxml2-utils); the JUnit schemas are not checked")
	}
	cases := junitCases()
	all := []*interp.Record{cases["failed"], cases["interrupted"], cases["errored"], cases["refused"], cases["passed"]}
	files := map[string][]*interp.Record{"all": all, "none": nil, "invocation refused": nil}
	for name, rec := range cases {
		files[name] = []*interp.Record{rec}
	}
	for name, recs := range files {
		p, _ := readJUnit(t, recs...)
		if name == "all" {
			// with the expected-output blocks of documents: matched, not, not compared, unread
			p = filepath.Join(t.TempDir(), "docs.xml")
			if err := report.JUnit(p, recs, []report.NotStarted{{ID: "s#1", Scenario: "s", File: "s.cue", Why: "--fail-fast"}},
				report.DocCheck{File: "a.md", Line: 3, Failure: "a.md:4: differs\n  - x\n  + y\n"}, report.DocCheck{File: "a.md", Line: 9},
				report.DocCheck{File: "a.md", Line: 20, Skipped: "not selected"}, report.DocCheck{File: "b.md", Error: "permission denied"}); err != nil {
				t.Fatal(err)
			}
		}
		if name == "invocation refused" {
			// an invocation refused before any run (report.JUnitRefused)
			p = filepath.Join(t.TempDir(), "refused.xml")
			if err := report.JUnitRefused(p, "labrun run", 2, "s.cue:6:57: unknown field \"requets\" <&>"); err != nil {
				t.Fatal(err)
			}
		}
		for _, xsd := range []string{"testdata/junit-ant-strict.xsd", "testdata/junit-jenkins-xunit.xsd"} {
			out, err := exec.Command(xmllint, "--noout", "--schema", xsd, p).CombinedOutput()
			if err != nil {
				b, _ := os.ReadFile(p)
				t.Errorf("%s: %s rejects it: %v\n%s\n%s", name, xsd, err, out, b)
			}
		}
	}
}

// TestJUnitSchemasReject makes sure the schema check can fail: the JUnit the old writer made
// (no timestamp, hostname, id, package; untyped failures; an exponent time) is refused.
func TestJUnitSchemasReject(t *testing.T) {
	xmllint, err := exec.LookPath("xmllint")
	if err != nil {
		t.Skip("xmllint is not installed (Debian: apt-get install libxml2-utils)")
	}
	old := `<?xml version="1.0" encoding="UTF-8"?>
<testsuites><testsuite name="s2" tests="1" failures="1" errors="0" skipped="0" time="9.1186e-05">
<testcase name="x" classname="s2.expect" time="9.1186e-05"><failure message="m">m</failure></testcase>
</testsuite></testsuites>
`
	p := filepath.Join(t.TempDir(), "old.xml")
	os.WriteFile(p, []byte(old), 0o644)
	for _, xsd := range []string{"testdata/junit-ant-strict.xsd", "testdata/junit-jenkins-xunit.xsd"} {
		if out, err := exec.Command(xmllint, "--noout", "--schema", xsd, p).CombinedOutput(); err == nil {
			t.Errorf("%s accepts the old JUnit:\n%s", xsd, out)
		}
	}
}

// TestJUnitReportLost: a run whose record could not be written (the run command sets
// ReportLost; labrun exits 3) has an error case of its own, whatever its verdict: its JUnit
// said failures 0, errors 0 beside the exit code 3 of a full report directory.
func TestJUnitReportLost(t *testing.T) {
	oneErrorCaseMore(t, func(rec *interp.Record) { rec.ReportLost = "its report could not be written: no space left on device" }, "no space left on device")
}

// oneErrorCaseMore checks that set, on a record of every outcome, gives its suite one error
// case more, whose message holds want.
func oneErrorCaseMore(t *testing.T, set func(*interp.Record), want string) {
	t.Helper()
	for name, rec := range junitCases() {
		_, doc := readJUnit(t, rec)
		before := doc.Suites[0]
		set(rec)
		_, doc = readJUnit(t, rec)
		s := doc.Suites[0]
		if s.Errors != before.Errors+1 {
			t.Errorf("%s: errors %d, %d before: want one more", name, s.Errors, before.Errors)
		}
		var found bool
		for _, c := range s.Cases {
			if c.Error != nil && strings.Contains(c.Error.Message, want) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: no error case says %q", name, want)
		}
	}
}

// TestJUnitLeftovers: a run whose cleanup left objects or processes behind (labrun, and labrun
// merge of its record, exit 4) has an error case of its own, whatever its verdict: its JUnit
// said failures 0, errors 0 beside the exit code 4, and a CI reading it counted the run a
// success.
func TestJUnitLeftovers(t *testing.T) {
	oneErrorCaseMore(t, func(rec *interp.Record) { rec.Leftovers = []string{"ConfigMap lab/c"} }, "left 1 object behind (ConfigMap lab/c)")
	// A failed run its pass rate covers (labrun exits 0 for the failure) still exits 4 for
	// what it left: its leftovers case stays an error.
	m := &dsl.Matrix{Scenario: "s", Count: 2, PassRate: 0.5}
	passed, failed := junitCases()["passed"], junitCases()["failed"]
	passed.Scenario, failed.Scenario = "s", "s"
	passed.Unit = &dsl.Unit{ID: "s#1", Matrix: m, Combination: 1, Round: 1}
	failed.Unit = &dsl.Unit{ID: "s#2", Matrix: m, Combination: 1, Round: 2}
	failed.Leftovers = []string{"ConfigMap lab/c"}
	_, doc := readJUnit(t, passed, failed)
	s := doc.Suites[1]
	if s.Errors != 1 || s.Failures != 0 {
		t.Errorf("a covered run that left objects behind: %d errors, %d failures; want 1 error (the leftovers), 0 failures", s.Errors, s.Failures)
	}
}

// TestJUnitNotRunStep: a step a stopped run did not reach is a skipped case whose message says
// once that it did not run, as the record says it (not "not run: not run: …").
func TestJUnitNotRunStep(t *testing.T) {
	rec := junitCases()["errored"]
	rec.Steps = append(rec.Steps, &interp.StepRecord{Path: "steps.1", Name: "after", Kind: "snapshot", Phase: dsl.PhaseSteps,
		Outcome: interp.Skipped, Error: interp.NotRunReason + ", at steps.0 (snapshot): error"})
	p, _ := readJUnit(t, rec)
	b, _ := os.ReadFile(p)
	if !strings.Contains(string(b), `message="not run: the run stopped before it, at steps.0 (snapshot): error"`) || strings.Contains(string(b), "not run: not run") {
		t.Errorf("the step not run is not one skipped case saying so once:\n%s", b)
	}
}
