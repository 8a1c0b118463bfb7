package report

import (
	"strings"
	"testing"

	"labrun.dev/labrun/interp"
)

// twoBy is a sweep of max=1,2 with one run failing its second expectation.
func twoBy() *Summary {
	run := func(max string, e2 interp.Outcome, code503 float64, report string) SummaryRun {
		out := interp.Passed
		if e2 != interp.Passed {
			out = interp.Failed
		}
		return SummaryRun{
			Vars: map[string]string{"max": max}, Round: 1, Outcome: out, Report: report,
			Expectations: map[string]interp.Outcome{"fortio.code503 > 0": interp.Passed, "fortio.code503 < 5": e2},
			Values:       map[string]any{"fortio.code503": code503, "vars.max": 1.0, "backend": "a<b>"},
		}
	}
	return &Summary{
		Version: 1, Scenario: "dr", Count: 1, Sweeps: []string{"max"}, Passed: 1, Verdict: "failed",
		Runs: []SummaryRun{run("1", interp.Passed, 3, "r1.html"), run("2", interp.Failed, 7, `a"b.html`)},
	}
}

func TestSummaryHTML(t *testing.T) {
	s := twoBy()
	plots := SummaryPlots(s, []SweepVar{{Name: "max", Values: []string{"1", "2"}}})
	// fortio.code503 is plotted; vars.max (the sweep itself) and backend (not a number) are not.
	if len(plots) != 1 || plots[0].Value != "fortio.code503" || plots[0].Var != "max" {
		t.Fatalf("plots = %+v, want one of fortio.code503 against max", plots)
	}
	h := SummaryHTML(s, plots)
	for _, want := range []string{
		`<span class="badge failed">FAILED</span>`,
		`<p class="doc">1 of 2 runs passed. Every run must pass; verdict: failed.</p>`,
		// The combination whose run failed is marked, its failing expectation (e1, sorted first)
		// counted 0/1.
		`<tr class="failed"><td class="num">2</td><td class="num">0 of 1</td><td class="num err">0/1</td><td class="num ok">1/1</td><td class="num">a&lt;b&gt;</td><td class="num">7</td>`,
		`<th title="fortio.code503 &lt; 5">e1</th>`,
		`<td class="vm failed" title="failed">✗</td>`,
		`<a href="a&#34;b.html">a&#34;b.html</a>`,
		`<div class="chart"><svg`,
		">fortio.code503 against max</text>",
	} {
		if !strings.Contains(h, want) {
			t.Errorf("the HTML summary lacks %s", want)
		}
	}
	if strings.Contains(h, "<script") || strings.Contains(h, `src="`) || strings.Contains(h, "<link") {
		t.Errorf("the HTML summary is not self-contained")
	}
}

func TestSummaryExpected(t *testing.T) {
	got := SummaryExpected(twoBy(), []string{"fortio: 200 503", ""})
	want := `sweep dr: 1 of 2 runs passed
| max | outcome | codes | e1 | e2 |
| 1 | passed | fortio: 200 503 | passed | passed |
| 2 | failed | – | failed | passed |
e1: fortio.code503 < 5
e2: fortio.code503 > 0
`
	if got != want {
		t.Errorf("SummaryExpected =\n%s\nwant\n%s", got, want)
	}
}
