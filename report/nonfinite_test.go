package report_test

import (
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"

	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/report"
)

// A record whose expectation read +Inf, -Inf and NaN, and whose JSON-like result (a config's)
// holds NaN, is written (encoding/json refuses non-finite numbers) and read back: the values
// read as the numbers, the result's as the string it was written as.
func TestWriteNonFinite(t *testing.T) {
	rec := sampleRecord()
	rec.Expectations[0].Values = interp.Values{"a / b": math.Inf(1), "c / b": math.Inf(-1), "0 / b": math.NaN(), "s": "x", "n": 2.5}
	rec.Put("cfg", "config", false, map[string]any{"weight": math.NaN(), "list": []any{math.Inf(1), "NaN"}})
	dir := t.TempDir()
	files, err := report.Write(dir, rec)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(files.JSON)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"a / b": "+Inf"`, `"c / b": "-Inf"`, `"0 / b": "NaN"`, `"weight": "NaN"`, `"+Inf",`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("record has no %s:\n%s", want, b)
		}
	}
	back, err := report.Read(files.JSON)
	if err != nil {
		t.Fatal(err)
	}
	v := back.Expectations[0].Values
	if x, _ := v["a / b"].(float64); !math.IsInf(x, 1) {
		t.Errorf("a / b read back as %#v, want +Inf", v["a / b"])
	}
	if x, _ := v["c / b"].(float64); !math.IsInf(x, -1) {
		t.Errorf("c / b read back as %#v, want -Inf", v["c / b"])
	}
	if x, ok := v["0 / b"].(float64); !ok || !math.IsNaN(x) {
		t.Errorf("0 / b read back as %#v, want NaN", v["0 / b"])
	}
	if v["s"] != "x" || v["n"] != 2.5 {
		t.Errorf("other values read back as %#v", v)
	}
	if back.Results["cfg"] == nil {
		t.Error("the config result was not read back")
	}
}

// Two summaries whose value went from 5 to +Inf (or back) differ beyond any tolerance, and
// their diff's JSON is written; +Inf against +Inf and NaN against NaN are no difference.
func TestDiffSummariesNonFinite(t *testing.T) {
	sum := func(x float64) *report.Summary {
		return &report.Summary{Scenario: "s", Count: 1, Combinations: 1, Planned: 1, Passed: 1, Verdict: "passed",
			Runs: []report.SummaryRun{{Vars: map[string]string{}, Round: 1, Outcome: interp.Passed, Values: interp.Values{"r": x}}}}
	}
	for _, c := range []struct{ a, b float64 }{{5, math.Inf(1)}, {math.Inf(1), 5}, {math.NaN(), 5}} {
		d, err := report.DiffSummaries(sum(c.a), sum(c.b), 0.5)
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Values) != 1 || !d.Values[0].Beyond || d.Beyond != 1 {
			t.Errorf("%v → %v: %+v", c.a, c.b, d)
		}
		if _, err := json.Marshal(d); err != nil {
			t.Errorf("%v → %v: %v", c.a, c.b, err)
		}
	}
	for _, x := range []float64{math.Inf(1), math.NaN()} {
		if d, err := report.DiffSummaries(sum(x), sum(x), 0); err != nil || d.Beyond != 0 {
			t.Errorf("%v against itself: %+v, %v", x, d, err)
		}
	}
	a, b := sum(1), sum(1)
	a.PassRate, b.Verdict = 0.5, "failed"
	if d, _ := report.DiffSummaries(a, b, 0); d.Verdict == nil || d.Beyond != 1 {
		t.Errorf("a changed verdict: %+v", d)
	}
}

// TestSummarySpreadNaN: a run that read NaN does not become the minimum of the others' values
// (sort puts NaN first): min, median and max are of the numbers, and the runs column says
// the NaN was left out.
func TestSummarySpreadNaN(t *testing.T) {
	run := func(x float64) report.SummaryRun {
		return report.SummaryRun{Vars: map[string]string{}, Round: 1, Outcome: interp.Passed, Values: interp.Values{"r": x}}
	}
	s := &report.Summary{Scenario: "s", Count: 3, Combinations: 1, Planned: 3, Passed: 3, Verdict: "passed",
		Runs: []report.SummaryRun{run(5), run(math.NaN()), run(7)}}
	md := report.SummaryMarkdown(s, nil)
	if !strings.Contains(md, "| r | – |  | 5 | 6 | 7 | 2, and 1 NaN left out |") {
		t.Errorf("values table:\n%s", md)
	}
}
