package report

import (
	"encoding/json"
	"maps"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/schema"
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
		Kind: SummaryKind, Version: SummaryVersion, Scenario: "dr", Count: 1, Combinations: 2, Planned: 2,
		Sweeps: []string{"max"}, Sweep: []dsl.SweepVar{{Name: "max", Values: []string{"1", "2"}, From: "--sweep"}},
		Passed: 1, Verdict: "failed", Units: map[string]string{"fortio.code503": "count"},
		Runs: []SummaryRun{run("1", interp.Passed, 3, "r1.html"), run("2", interp.Failed, 7, `a"b.html`)},
	}
}

func TestSummaryHTML(t *testing.T) {
	s := twoBy()
	plots := SummaryPlots(s)
	// fortio.code503 is plotted; vars.max (the sweep itself) and backend (not a number) are not.
	if len(plots) != 1 || plots[0].Value != "fortio.code503" || plots[0].Var != "max" {
		t.Fatalf("plots = %+v, want one of fortio.code503 against max", plots)
	}
	h := SummaryHTML(s, plots)
	for _, want := range []string{
		`<span class="badge failed">FAILED</span>`,
		`<p class="doc">1 of 2 runs passed. Every run must pass; verdict: failed.</p>`,
		// The combination whose run failed is marked, its failing expectation (e1, sorted first)
		// counted 0/1; the numbers come first, with their unit in the header.
		`<tr class="failed"><td class="num">2</td><td class="num err">0 of 1 <span class="hint">never passed</span></td><td class="num err">0/1</td><td class="num ok">1/1</td><td class="num">7</td><td class="num">&#34;a&lt;b&gt;&#34;</td></tr>`, // vars.max is the combination itself: not a column
		`<th>fortio.code503 <span class="unit">count</span></th>`,
		`<th title="fortio.code503 &lt; 5">e1</th>`,
		`<td class="vm failed" title="failed">✗</td>`,
		`<a href="a&#34;b.html" title="a&#34;b.html">html</a>`,
		`<div class="chart"><svg`,
		">fortio.code503 against max</text>",
		"<th>max</th><td>1, 2 <span class=\"hint\">(--sweep)</span></td>",
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

// matrixRecords are the records of a 2×2 sweep run twice: p50 is the latency each run read.
func matrixRecords() (*dsl.Matrix, []RunFile) {
	m := &dsl.Matrix{Scenario: "s", File: "/x/s.cue", Count: 2, Sweep: []dsl.SweepVar{
		{Name: "connections", Values: []string{"1", "2"}, From: "scenario"},
		{Name: "requests", Values: []string{"10", "100"}, From: "--sweep"},
	}}
	var runs []RunFile
	p50 := 1.0
	for i, c := range m.Combinations() {
		for r := 1; r <= m.Count; r++ {
			p50 += 0.5
			outcome := interp.Passed
			if i == 3 && r == 2 {
				outcome = interp.Failed
			}
			rec := &interp.Record{Scenario: "s", Outcome: outcome,
				Results: map[string]*interp.Result{"fortio": {Kind: "load", Value: &interp.LoadRecord{}}},
				Unit:    &dsl.Unit{ID: dsl.UnitID("s", c, r), Matrix: m, Vars: c, Combination: i + 1, Round: r},
				Expectations: []*interp.Judgement{{Src: "within(fortio.p50, 0, 1000)", Outcome: outcome,
					Values: map[string]any{"fortio.p50": p50, "fortio.qps": 100 / p50}}}}
			runs = append(runs, RunFile{Rec: rec, JSON: "/r/run" + dsl.UnitID("s", c, r) + ".json"})
		}
	}
	return m, runs
}

// TestSummaryFromRecords: a summary is made from the records alone, whatever their order (the
// records of several processes merged), and a missing run counts as not passed.
func TestSummaryFromRecords(t *testing.T) {
	m, runs := matrixRecords()
	want := SummaryOf(m, runs, "/r")
	if want.Planned != 8 || want.Passed != 7 || want.Verdict != "failed" || len(want.Runs) != 8 {
		t.Fatalf("planned %d passed %d verdict %s runs %d, want 8, 7, failed, 8", want.Planned, want.Passed, want.Verdict, len(want.Runs))
	}
	if want.Units["fortio.p50"] != "ms" || want.Units["fortio.qps"] != "1/s" {
		t.Errorf("units %v, want fortio.p50 ms, fortio.qps 1/s", want.Units)
	}
	if want.Runs[0].Report != "runs[connections=1,requests=10]#1.html" {
		t.Errorf("the first run's report is %q", want.Runs[0].Report)
	}
	for i := 0; i < 5; i++ {
		shuffled := append([]RunFile(nil), runs...)
		rand.Shuffle(len(shuffled), func(a, b int) { shuffled[a], shuffled[b] = shuffled[b], shuffled[a] })
		got := Summarize(shuffled, "/r")
		if len(got) != 1 || !reflect.DeepEqual(got[0], want) {
			a, _ := json.Marshal(got)
			b, _ := json.Marshal(want)
			t.Fatalf("shuffled records give another summary:\n%s\nwant\n%s", a, b)
		}
	}
	s := SummaryOf(m, runs[:6], "/r")
	if s.Verdict != "failed" || s.Passed != 6 || !strings.Contains(SummaryMarkdown(s, nil), "2 of the 8 planned runs have no record") {
		t.Errorf("with 2 records missing: verdict %s, passed %d", s.Verdict, s.Passed)
	}
}

// TestSweepPlot looks at what a sweep's plot draws: every run a point, a band over min–max,
// a line per combination of the other vars with a legend sample, round ticks, the unit, hover
// values with at most 4 significant digits, and a missing value as a gap.
func TestSweepPlot(t *testing.T) {
	m, runs := matrixRecords()
	s := SummaryOf(m, runs, "")
	p, ok := SweepPlot(s, "fortio.p50", "requests")
	if !ok {
		t.Fatal("no plot")
	}
	svg := p.SVG
	if n := strings.Count(svg, `fill="white" stroke=`); n != 8+1 { // 8 runs, and the legend's "one run"
		t.Errorf("%d run points, want 8 and the legend's", n)
	}
	if n := strings.Count(svg, "<polygon "); n != 2 {
		t.Errorf("%d min–max bands, want one per connection count", n)
	}
	if n := strings.Count(svg, "<polyline "); n != 2 {
		t.Errorf("%d median lines, want 2", n)
	}
	for _, want := range []string{
		">fortio.p50 against requests</text>",
		">ms</text>",                      // the unit on the y axis
		">connections=2</text>",           // the legend
		`stroke-dasharray="6,4"/><circle`, // the legend's sample of the second, dashed, line
		"<title>requests=10, connections=1: median 1.75 ms (min 1.5, max 2; 2 runs)</title>",
		"<title>connections=2, requests=100, run 2 of 2: 5 ms</title>",
		"min–max of 2 runs",
	} {
		if !strings.Contains(svg, want) {
			t.Errorf("the plot lacks %s", want)
		}
	}
	// The y ticks are round, with at most 4 significant digits.
	for _, m := range regexp.MustCompile(`text-anchor="end">([^<]+)</text>`).FindAllStringSubmatch(svg, -1) {
		if !regexp.MustCompile(`^-?\d+(\.\d)?$`).MatchString(m[1]) {
			t.Errorf("y tick %q is not round", m[1])
		}
	}
	// A combination without a value breaks its line: the missing point is not drawn as 0.
	for i := range runs {
		if runs[i].Rec.Unit.Combination == 2 { // connections=1, requests=100
			runs[i].Rec.Expectations[0].Values = nil
		}
	}
	s = SummaryOf(m, runs, "")
	p, _ = SweepPlot(s, "fortio.p50", "requests")
	if n := strings.Count(p.SVG, "<polyline "); n != 2 {
		t.Errorf("%d lines with a missing point, want 2 (one of a single point)", n)
	}
	if strings.Contains(p.SVG, "requests=100, connections=1: median") {
		t.Errorf("the missing combination is drawn")
	} // A line with no value at all is "none" in the legend, not a sample of a line not drawn.
	for i := range runs {
		if runs[i].Rec.Unit.Vars["connections"] == "2" {
			runs[i].Rec.Expectations[0].Values = nil
		}
	}
	s = SummaryOf(m, runs, "")
	p, _ = SweepPlot(s, "fortio.p50", "requests")
	if !strings.Contains(p.SVG, ">connections=2: none</text>") || strings.Count(p.SVG, "<polyline ") != 1 {
		t.Errorf("a line without values: the legend does not say none, or a line is drawn:\n%s", p.SVG)
	}
}

// TestStripPlot: --count without a sweep draws each value's runs as points, the median and
// min–max.
func TestStripPlot(t *testing.T) {
	m := &dsl.Matrix{Scenario: "s", Count: 3}
	var runs []RunFile
	for r, v := range []float64{12.34567, 15, 11} {
		runs = append(runs, RunFile{Rec: &interp.Record{Outcome: interp.Passed, Results: map[string]*interp.Result{"f": {Kind: "load", Value: &interp.LoadRecord{}}},
			Unit:         &dsl.Unit{Matrix: m, Round: r + 1, Combination: 1},
			Expectations: []*interp.Judgement{{Src: "f.p99 < 100", Outcome: interp.Passed, Values: map[string]any{"f.p99": v}}}}})
	}
	s := SummaryOf(m, runs, "")
	plots := SummaryPlots(s)
	if len(plots) != 1 || plots[0].Title != "f.p99 over 3 runs" {
		t.Fatalf("plots %+v, want a strip plot of f.p99", plots)
	}
	for _, want := range []string{"<title>run 1: 12.35 ms</title>", "<title>median 12.35 ms (min 11, max 15; 3 runs)</title>", ">ms</text>"} {
		if !strings.Contains(plots[0].SVG, want) {
			t.Errorf("the strip plot lacks %s", want)
		}
	}
}

// TestSweepPlotSaysRunsLeftOut: a run whose value no axis holds (+Inf, NaN) is not among a sweep
// plot's circles, bands and medians; its title says so, where it said "x against n" alone,
// the band of n=1 drawn over one of its two runs.
func TestSweepPlotSaysRunsLeftOut(t *testing.T) {
	m := &dsl.Matrix{Scenario: "s", Count: 2, Sweep: []dsl.SweepVar{{Name: "n", Values: []string{"1", "2"}, From: "scenario"}}}
	var runs []RunFile
	for i, v := range []float64{5, math.Inf(1), 7, 8} {
		n := []string{"1", "2"}[i/2]
		u := &dsl.Unit{ID: dsl.UnitID("s", map[string]string{"n": n}, i%2+1), Matrix: m, Vars: map[string]string{"n": n}, Combination: i/2 + 1, Round: i%2 + 1}
		runs = append(runs, RunFile{Rec: &interp.Record{Scenario: "s", Outcome: interp.Passed, Unit: u,
			Expectations: []*interp.Judgement{{Src: "x < 100", Outcome: interp.Passed, Values: interp.Values{"x": v}}}}})
	}
	s := SummaryOf(m, runs, "")
	if p, ok := SweepPlot(s, "x", "n"); !ok || p.Title != "x against n (1 left out: +Inf)" {
		t.Errorf("title %q, want it to say the +Inf run was left out", p.Title)
	}
	runs[1].Rec.Expectations[0].Values = interp.Values{"x": 6.0}
	if p, ok := SweepPlot(SummaryOf(m, runs, ""), "x", "n"); !ok || p.Title != "x against n" {
		t.Errorf("every run drawn: title %q, want x against n", p.Title)
	}
}

// TestStripPlotSaysRunsLeftOut: a strip plot of a value some runs do not have as a finite
// number (a run that erred before it, a +Inf or a NaN, which no axis holds) says how many of the
// runs it draws and why the others are not there: "over 1 runs" of a --count 4 summary drew one
// point, its median a median of one run, with nothing saying three runs were left out.
func TestStripPlotSaysRunsLeftOut(t *testing.T) {
	m := &dsl.Matrix{Scenario: "s", Count: 4}
	var runs []RunFile
	for r, v := range []any{5.0, math.Inf(1), math.NaN(), nil} {
		vals := map[string]any{"x": v}
		if v == nil {
			vals = nil
		}
		runs = append(runs, RunFile{Rec: &interp.Record{Outcome: interp.Failed,
			Unit:         &dsl.Unit{Matrix: m, Round: r + 1, Combination: 1},
			Expectations: []*interp.Judgement{{Src: "x < 1", Outcome: interp.Failed, Values: vals}}}})
	}
	s := SummaryOf(m, runs, "")
	for _, tc := range []struct {
		runs []SummaryRun
		want string
	}{
		{s.Runs, "x over 1 of 4 runs (2 left out: +Inf, NaN; 1 without the value)"},
		{s.Runs[:2], "x over 1 of 2 runs (1 left out: +Inf)"},
		{[]SummaryRun{s.Runs[0], s.Runs[3]}, "x over 1 of 2 runs (1 without the value)"},
		{s.Runs[:1], "x over 1 run"},
		{[]SummaryRun{s.Runs[0], s.Runs[2], s.Runs[2]}, "x over 1 of 3 runs (2 left out: NaN ×2)"},
	} {
		c := *s
		c.Runs = tc.runs
		p, ok := StripPlot(&c, "x")
		if !ok || p.Title != tc.want {
			t.Errorf("%d runs: title %q, want %q", len(tc.runs), p.Title, tc.want)
		}
	}
}

// TestUnitOf: a value's unit is its type's, as the kinds declare it and vet computes it, from
// what a record holds (no scenario needed).
func TestUnitOf(t *testing.T) {
	t0 := time.Unix(1000, 0)
	src := "admin http://127.0.0.1:15000 cluster c"
	rec := &interp.Record{Vars: map[string]any{"requests": 4.0}, Steps: []*interp.StepRecord{{Name: "flip", Kind: "dns"}}}
	rec.Put("fortio", "load", false, &interp.LoadRecord{})
	rec.Put("before", "snapshot", false, &interp.SnapshotRecord{Name: "before", Source: src, At: t0})
	rec.Put("after", "snapshot", false, &interp.SnapshotRecord{Name: "after", Source: src, At: t0.Add(time.Second)})
	rec.Put("g", "snapshot", true, &interp.SeriesRecord{Name: "g", Source: src})
	rec.Put("access", "logs", false, schema.LogResult{})
	rec.Put("ip", "exec", false, schema.ExecResult{})
	names := rec.Names()
	for v, want := range map[string]string{
		"fortio.p50": "ms", "fortio.qps": "1/s", "fortio.code503": "count", `fortio.codes["503"]`: "count", "fortio.duration": "s",
		"delta.upstream_rq_pending_overflow": "count", "after.upstream_cx_rx_bytes_total": "bytes", "after.upstream_cx_length_ms.p99": "ms",
		"g.max.upstream_rq_active": "count", "access.count": "count", "vars.requests": "", "started.flip": "s",
		"ended.flip - started.flip": "s", "fortio.code503 / fortio.requests": "", "ip.stdout": "", "ip.exit": "",
		"delta.upstream_cx_length_ms.p99": "", // a histogram has no delta: vet refuses it
	} {
		if got := UnitOf(v, names); got != want {
			t.Errorf("UnitOf(%s) = %q, want %q", v, got, want)
		}
	}
}

// TestWriteSummaryNeverOverwrites: two summaries written with the same id in the same second
// (two processes that drew the same id) both stay; the second gets a suffix.
func TestWriteSummaryNeverOverwrites(t *testing.T) {
	dir := t.TempDir()
	m, runs := matrixRecords()
	s := SummaryOf(m, runs, dir)
	a, err := WriteSummary(dir, "same", s)
	if err != nil {
		t.Fatal(err)
	}
	b, err := WriteSummary(dir, "same", s)
	if err != nil {
		t.Fatal(err)
	}
	sameSecond := filepath.Base(a[2])[:16] == filepath.Base(b[2])[:16]
	if a[2] == b[2] || sameSecond && !strings.HasSuffix(b[2], "_s_same-2.summary.json") {
		t.Errorf("second summary %s, first %s: want another name (suffixed -2 in the same second)", b[2], a[2])
	}
	for _, p := range append(a, b...) {
		if _, err := os.Stat(p); err != nil {
			t.Error(err)
		}
	}
	if a[0] == b[0] || a[1] == b[1] || a[3] == b[3] {
		t.Errorf("the Markdown, HTML or plots share a name: %v, %v", a, b)
	}
}

// TestAxisCoversEveryValue: the axis's round ticks reach past the highest value drawn.
func TestAxisCoversEveryValue(t *testing.T) {
	for _, c := range [][2]float64{{2.2, 26.92}, {0, 8}, {361, 842.7}, {0.01, 0.0312}, {5, 5}, {-3, 7}} {
		a := newAxis(c[0], c[1], 300, 0)
		if a.lo > c[0] || a.hi < c[1] {
			t.Errorf("axis of %v: ticks %v do not cover it", c, a.ticks)
		}
		if len(a.ticks) > 8 {
			t.Errorf("axis of %v: %d ticks", c, len(a.ticks))
		}
	}
}

// TestSummaryVerdict: a pass rate is judged per combination, over runs judged by their
// expectations; a run labrun could not make is an error whatever the rate; an interrupt makes
// the verdict interrupted; runs --fail-fast kept from starting are listed as skipped.
func TestSummaryVerdict(t *testing.T) {
	// outcomes of a sweep of two combinations (a=1, a=2), two runs each; "" is a run not started.
	type tc struct {
		name     string
		rate     float64
		outcomes [4]interp.Outcome
		why      string // why the runs without an outcome never started ("": no record)
		verdict  string
		md       []string
		below    string // the console's combinations that did not pass
		html     string
	}
	P, F, E, I := interp.Passed, interp.Failed, interp.Errored, interp.Interrupted
	for _, c := range []tc{
		{name: "all passed", outcomes: [4]interp.Outcome{P, P, P, P}, verdict: "passed"},
		{name: "one failed, no rate", outcomes: [4]interp.Outcome{P, P, P, F}, verdict: "failed"},
		{name: "one failed per combination, rate 0.5", rate: 0.5, outcomes: [4]interp.Outcome{P, F, F, P}, verdict: "passed"},
		{name: "half overall, one combination never passed", rate: 0.5, outcomes: [4]interp.Outcome{P, P, F, F}, verdict: "failed",
			md: []string{"| a=2 | 0 of 2 | never passed |", "Pass rate required: 0.5 of each combination's runs"}},
		{name: "an error is not covered by the rate", rate: 0.5, outcomes: [4]interp.Outcome{P, E, P, P}, verdict: "error",
			md: []string{"1 run ended in an error (labrun could not make the run, or could not judge one of its expectations): no pass rate covers it."}},
		{name: "a combination that erred says so, not only that it never passed", outcomes: [4]interp.Outcome{P, P, E, E}, verdict: "error",
			md: []string{"| a=2 | 0 of 2, 2 errors | never passed |"}, below: "a=2: 0 of 2, 2 errors", html: `0 of 2, 2 errors <span class="hint">never passed</span>`},
		{name: "interrupted, the rate met by what ran", rate: 0.5, outcomes: [4]interp.Outcome{P, I, "", ""}, why: NotStartedInterrupted, verdict: "interrupted",
			md: []string{"| 3 | a=2, run 1 of 2 | skipped (interrupted before it started) |", "2 of the 4 planned runs never started"}},
		{name: "fail-fast kept a combination from starting", outcomes: [4]interp.Outcome{P, P, "", ""}, why: NotStartedFailFast, verdict: "skipped",
			md: []string{"| a=2 | 0 of 2 | never started |", "skipped (not started: --fail-fast, after a run that did not pass)"}},
		{name: "fail-fast after a failure of this matrix", outcomes: [4]interp.Outcome{P, F, "", ""}, why: NotStartedFailFast, verdict: "failed"},
		{name: "records missing", outcomes: [4]interp.Outcome{P, P, P, ""}, verdict: "failed",
			md: []string{"1 of the 4 planned runs have no record"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := &dsl.Matrix{Scenario: "s", Count: 2, PassRate: c.rate, Sweep: []dsl.SweepVar{{Name: "a", Values: []string{"1", "2"}, From: "scenario"}},
				Fixed: []dsl.FixedVar{{Name: "b", Value: "3", From: "--var", Instead: []string{"2", "4"}}}}
			var runs []RunFile
			why := map[RunKey]string{}
			for i, o := range c.outcomes {
				vars := m.Combinations()[i/2]
				u := &dsl.Unit{ID: dsl.UnitID("s", vars, i%2+1), Matrix: m, Vars: vars, Combination: i/2 + 1, Round: i%2 + 1}
				if o == "" {
					if c.why != "" {
						why[RunKey{u.Combination, u.Round}] = c.why
					}
					continue
				}
				runs = append(runs, RunFile{Rec: &interp.Record{Scenario: "s", Outcome: o, Unit: u}})
			}
			s := SummaryWith(m, runs, why, "")
			if s.Verdict != c.verdict {
				t.Errorf("verdict %s, want %s", s.Verdict, c.verdict)
			}
			md := SummaryMarkdown(s, nil)
			for _, want := range append(c.md, "verdict: **"+c.verdict+"**", "Fixed: b = 3 (--var; the scenario sweeps 2, 4).") {
				if !strings.Contains(md, want) {
					t.Errorf("the Markdown lacks %q:\n%s", want, md)
				}
			}
			if html := SummaryHTML(s, nil); !strings.Contains(html, `<span class="badge `+c.verdict+`">`+strings.ToUpper(c.verdict)+`</span>`) ||
				!strings.Contains(html, "(fixed by --var; the scenario sweeps 2, 4)") || !strings.Contains(html, c.html) {
				t.Errorf("the HTML's badge is not %s, or it does not show the fixed var, or it lacks %q", c.verdict, c.html)
			}
			if below := strings.Join(CombinationsBelow(s), "; "); c.below != "" && below != c.below {
				t.Errorf("combinations that did not pass: %q, want %q", below, c.below)
			}
		})
	}
}

// TestSummaryMarkdownNoValues: a summary whose expectations read no number says so, rather
// than a table of headers alone, as if its rows had been lost.
func TestSummaryMarkdownNoValues(t *testing.T) {
	m := &dsl.Matrix{Scenario: "s", Count: 2}
	var runs []RunFile
	for round := 1; round <= 2; round++ {
		u := &dsl.Unit{ID: dsl.UnitID("s", nil, round), Matrix: m, Combination: 1, Round: round}
		runs = append(runs, RunFile{Rec: &interp.Record{Scenario: "s", Outcome: interp.Passed, Unit: u,
			Expectations: []*interp.Judgement{{Src: "x.stdout != 'v=4\\n'", Outcome: interp.Passed, Values: interp.Values{"x.stdout": "v=1\n"}}}}})
	}
	md := SummaryMarkdown(SummaryOf(m, runs, ""), nil)
	if !strings.Contains(md, "## Values the expectations read\n\nNone: the expectations read no number (strings, booleans, outcomes).\n") || strings.Contains(md, "| value | unit |") {
		t.Errorf("the Markdown does not say that no number was read:\n%s", md)
	}
	runs[0].Rec.Expectations[0].Values = interp.Values{"x.exit": 0.0}
	if md := SummaryMarkdown(SummaryOf(m, runs, ""), nil); !strings.Contains(md, "| value | unit | vars | min | median | max | runs |") || strings.Contains(md, "None: the expectations") {
		t.Errorf("a number read has no table:\n%s", md)
	}
}

// TestSummaryValuesSayNaNLeftOut: a run whose value is NaN has no place among min, median and
// max; the values table left it out and its runs column counted the others alone ("3" of a
// --count 4 whose fourth run read NaN), nothing saying a run had read it. It says so now, in
// the Markdown's runs column and under the HTML's min–max; a value every run read as NaN
// shows NaN.
func TestSummaryValuesSayNaNLeftOut(t *testing.T) {
	m := &dsl.Matrix{Scenario: "s", Count: 4}
	var runs []RunFile
	for r, v := range []float64{5, math.NaN(), 7, math.Inf(1)} {
		u := &dsl.Unit{ID: dsl.UnitID("s", nil, r+1), Matrix: m, Combination: 1, Round: r + 1}
		runs = append(runs, RunFile{Rec: &interp.Record{Scenario: "s", Outcome: interp.Passed, Unit: u,
			Expectations: []*interp.Judgement{{Src: "!(x > 100)", Outcome: interp.Passed, Values: interp.Values{"x": v}}}}})
	}
	s := SummaryOf(m, runs, "")
	if md := SummaryMarkdown(s, nil); !strings.Contains(md, "| x | – |  | 5 | 7 | +Inf | 3, and 1 NaN left out |\n") {
		t.Errorf("the values table does not say the NaN run was left out:\n%s", md)
	}
	if html := SummaryHTML(s, nil); !strings.Contains(html, "5–+Inf, 1 NaN left out</span>") {
		t.Errorf("the HTML does not say the NaN run was left out:\n%s", html)
	}
	for i := range runs {
		runs[i].Rec.Expectations[0].Values = interp.Values{"x": math.NaN()}
	}
	if md := SummaryMarkdown(SummaryOf(m, runs, ""), nil); !strings.Contains(md, "| x | – |  | NaN | NaN | NaN | 4 |\n") {
		t.Errorf("a value every run read as NaN:\n%s", md)
	}
}

// TestSummaryNotJudgedCell: a combination whose runs judged an expectation in none of them
// (interrupted, never started) showed it as "0/2" in red, as if it had failed twice (seen in
// headless Chromium on a sweep interrupted with Ctrl-C). It shows "–", saying in its tooltip
// that no run judged it; a combination that judged it keeps its count.
func TestSummaryNotJudgedCell(t *testing.T) {
	s := twoBy()
	s.Verdict, s.Passed = "interrupted", 1
	s.Runs[1].Outcome = interp.Interrupted
	for e := range s.Runs[1].Expectations {
		s.Runs[1].Expectations[e] = interp.Skipped
	}
	h := SummaryHTML(s, SummaryPlots(s))
	want := `<td class="num hint" title="not judged in any run of this combination">–</td><td class="num hint" title="not judged in any run of this combination">–</td>`
	if !strings.Contains(h, want) {
		t.Errorf("the HTML summary lacks %s", want)
	}
	if !strings.Contains(h, `<td class="num ok">1/1</td><td class="num ok">1/1</td>`) {
		t.Errorf("the combination that judged its expectations lost its counts")
	}
}

// TestSummaryNarrow: the summary page's tables ran off a 480-pixel page as the report's did
// (only the combinations table scrolled), and its plots, drawn without a viewBox, were cut
// instead of scaled when the page narrowed them; so was labrun diff --plot's picture.
func TestSummaryNarrow(t *testing.T) {
	s := twoBy()
	page := SummaryHTML(s, SummaryPlots(s))
	for _, l := range regexp.MustCompile(`<table[ >]`).FindAllStringIndex(page, -1) {
		if !strings.HasSuffix(page[:l[0]], `<div class="scroll">`) {
			t.Errorf("summary: %s… is not in a box that scrolls", page[l[0]:min(len(page), l[0]+40)])
		}
	}
	svgs := regexp.MustCompile(`<svg[^>]*>`).FindAllString(page, -1)
	strip := twoBy()
	strip.Sweeps, strip.Sweep = nil, nil
	for _, p := range SummaryPlots(strip) {
		svgs = append(svgs, regexp.MustCompile(`<svg[^>]*>`).FindString(p.SVG))
	}
	diff, ok := DiffSVG(&interp.RunDiff{ScenarioA: "a", ScenarioB: "b", Differences: []interp.Difference{{Path: "delta.rq_total", A: 1.0, B: 2.0, Beyond: true}}})
	if !ok {
		t.Fatal("no diff picture")
	}
	svgs = append(svgs, regexp.MustCompile(`<svg[^>]*>`).FindString(diff))
	if len(svgs) < 3 {
		t.Fatalf("only %d pictures: %q", len(svgs), svgs)
	}
	for _, open := range svgs {
		if !strings.Contains(open, "viewBox=") {
			t.Errorf("%s has no viewBox: narrowed, it is cut instead of scaled", open)
		}
	}
	if !strings.Contains(summaryCSS, ".chart svg{display:block;max-width:100%;height:auto}") {
		t.Errorf("the summary's CSS does not let its plots shrink with the page")
	}
}

// TestDiffSummariesSaysErrors: a combination whose runs erred in A and failed in B passed
// none in either; diff compared only the runs passed, and said nothing of the combination
// (the summaries' verdicts alone changed, error → failed). Its errors are a change too.
func TestDiffSummariesSaysErrors(t *testing.T) {
	m := &dsl.Matrix{Scenario: "s", Count: 2, Sweep: []dsl.SweepVar{{Name: "a", Values: []string{"1", "2"}, From: "scenario"}}}
	summary := func(o interp.Outcome) *Summary {
		var runs []RunFile
		for i := range 4 {
			vars := m.Combinations()[i/2]
			u := &dsl.Unit{ID: dsl.UnitID("s", vars, i%2+1), Matrix: m, Vars: vars, Combination: i/2 + 1, Round: i%2 + 1}
			out := interp.Passed
			if i >= 2 {
				out = o
			}
			runs = append(runs, RunFile{Rec: &interp.Record{Scenario: "s", Outcome: out, Unit: u}})
		}
		return SummaryWith(m, runs, nil, "")
	}
	d, err := DiffSummaries(summary(interp.Errored), summary(interp.Failed), 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []PassChange{{Combination: "a=2", A: "0 of 2, 2 errors", B: "0 of 2"}}
	if !reflect.DeepEqual(d.Passed, want) {
		t.Errorf("passed changes %+v, want %+v", d.Passed, want)
	}
}

// TestSummaryExpectationNotJudged: an expectation of runs that erred before it was judged
// (skipped) read "1 of 2" passed, as if it had failed in the other run; and the Markdown
// counted the runs with a record, the HTML the planned runs.
func TestSummaryExpectationNotJudged(t *testing.T) {
	m := &dsl.Matrix{Scenario: "s", Count: 3}
	var runs []RunFile
	for i, o := range []interp.Outcome{interp.Passed, interp.Errored} {
		u := &dsl.Unit{ID: dsl.UnitID("s", nil, i+1), Matrix: m, Combination: 1, Round: i + 1}
		jd := &interp.Judgement{Src: "x", Outcome: interp.Passed}
		if o == interp.Errored {
			jd = &interp.Judgement{Src: "x", Outcome: interp.Skipped}
		}
		runs = append(runs, RunFile{Rec: &interp.Record{Scenario: "s", Outcome: o, Unit: u, Expectations: []*interp.Judgement{jd}}})
	}
	s := SummaryOf(m, runs, "") // run 3 has no record
	if md := SummaryMarkdown(s, nil); !strings.Contains(md, "| x | 1 of 3, 2 not judged |") {
		t.Errorf("the Markdown's expectations:\n%s", md)
	}
	if html := SummaryHTML(s, nil); !strings.Contains(html, `<td class="num">1 of 3, 2 not judged</td>`) {
		t.Errorf("the HTML lacks the expectation's count with the runs that did not judge it")
	}
}

// TestSummaryExpectationsInScenarioOrder: a summary lists the expectations as the scenario
// writes them (its records' order), in the Markdown's columns and table, the HTML's e1, e2, …
// and a document's expected block, and the values in the order they read them. Before, by their text: `delta.rq_total == …` came before
// the `fortio.code200 == …` the scenario wrote first, and e1 in the HTML was not the
// scenario's first expectation.
func TestSummaryExpectationsInScenarioOrder(t *testing.T) {
	m := &dsl.Matrix{Scenario: "s", File: "/x/s.cue", Count: 2}
	exprs := []string{"fortio.code200 == fortio.requests", "delta.rq_total == fortio.requests", "within(fortio.min, 0, 1000)"}
	var runs []RunFile
	for r := 1; r <= 2; r++ {
		rec := &interp.Record{Scenario: "s", Outcome: interp.Passed,
			Unit: &dsl.Unit{ID: dsl.UnitID("s", nil, r), Matrix: m, Combination: 1, Round: r}}
		reads := [][]string{{"fortio.code200", "fortio.requests"}, {"delta.rq_total", "fortio.requests"}, {"fortio.min"}}
		for i, e := range exprs {
			jd := &interp.Judgement{Src: e, Outcome: interp.Passed, Values: interp.Values{}}
			for _, v := range reads[i] {
				jd.Values[v] = 4.0
			}
			rec.Expectations = append(rec.Expectations, jd)
		}
		runs = append(runs, RunFile{Rec: rec})
	}
	s := SummaryOf(m, runs, "")
	if got := summaryExprs(s); !reflect.DeepEqual(got, exprs) {
		t.Fatalf("the summary's expectations are %q, want the scenario's order %q", got, exprs)
	}
	md := SummaryMarkdown(s, nil)
	if !strings.Contains(md, "| run | vars | verdict | fortio.code200 == fortio.requests | delta.rq\\_total == fortio.requests | within(fortio.min, 0, 1000) | report |") {
		t.Errorf("the Markdown's runs table is not in the scenario's order:\n%s", md)
	}
	// The values too, in the order the expectations read them.
	if got, want := summaryValues(s), []string{"fortio.code200", "fortio.requests", "delta.rq_total", "fortio.min"}; !reflect.DeepEqual(got, want) {
		t.Errorf("the summary's values are %q, want the order the expectations read them, %q", got, want)
	}
	if h := SummaryHTML(s, nil); !strings.Contains(h, `<th title="fortio.code200 == fortio.requests">e1</th>`) {
		t.Errorf("the HTML's e1 is not the scenario's first expectation")
	}
	// Read back from its JSON, the summary keeps the order.
	b, _ := json.Marshal(s)
	var back Summary
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if got := summaryExprs(&back); !reflect.DeepEqual(got, exprs) {
		t.Errorf("read back, the summary's expectations are %q, want %q", got, exprs)
	}
}

// TestSummaryErrorPaths: a summary keeps a run's error with its positions in the scenario's
// folder by the file's name, and one in another folder relative to it; the record has the
// absolute paths of the machine that ran it.
func TestSummaryErrorPaths(t *testing.T) {
	for _, c := range []struct {
		name, file, at, err, want string
	}{
		{"same file", "/m/lab/s.cue", "/m/lab/s.cue", "/m/lab/s.cue:9:3: probe (exec): exited with code 3", "s.cue:9:3: probe (exec): exited with code 3"},
		{"a kit's file above", "/m/kit/scenarios/s.cue", "/m/kit/scenarios.cue", "/m/kit/scenarios.cue:5:3: x (exec): y", "../scenarios.cue:5:3: x (exec): y"},
		{"a folder inside", "/m/lab/s.cue", "/m/lab/sub/t.cue", "/m/lab/sub/t.cue:2:1: x; /m/lab/s.cue:3:1: y", "sub/t.cue:2:1: x; s.cue:3:1: y"},
		{"a sibling folder", "/m/a/s.cue", "/m/b/t.cue", "/m/b/t.cue:2:1: x", "../b/t.cue:2:1: x"},
		{"no position", "/m/lab/s.cue", "", "cleanup: the cleanup's timeout (1m0s) expired", "cleanup: the cleanup's timeout (1m0s) expired"},
		{"a relative file", "lab/s.cue", "lab/s.cue", "lab/s.cue:9:3: x", "lab/s.cue:9:3: x"},
	} {
		rec := &interp.Record{File: c.file, Error: c.err}
		if c.at != "" {
			rec.ErrorPos = &dsl.Pos{File: c.at, Line: 1, Col: 1}
		}
		if got := summaryError(rec); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// TestDiffSummariesPairsByValue: a summary made before a combination had one id however its
// values were given holds "d=90s" and "x=1e+06" where a newer one holds "d=1m30s" and
// "x=1000000": diff paired none of them ("only in A", "only in B", and then "share no
// combination"). A string var swept over two spellings of one duration keeps them apart.
func TestDiffSummariesPairsByValue(t *testing.T) {
	summary := func(sweep map[string][]string) *Summary {
		var sv []dsl.SweepVar
		for _, n := range slices.Sorted(maps.Keys(sweep)) {
			sv = append(sv, dsl.SweepVar{Name: n, Values: sweep[n], From: "scenario"})
		}
		m := &dsl.Matrix{Scenario: "s", Count: 1, Sweep: sv}
		var runs []RunFile
		for i, vars := range m.Combinations() {
			u := &dsl.Unit{ID: dsl.UnitID("s", vars, 1), Matrix: m, Vars: vars, Combination: i + 1, Round: 1}
			runs = append(runs, RunFile{Rec: &interp.Record{Scenario: "s", Outcome: interp.Passed, Unit: u}})
		}
		return SummaryWith(m, runs, nil, "")
	}
	d, err := DiffSummaries(summary(map[string][]string{"d": {"90s", "2s"}, "x": {"1e+06"}}), summary(map[string][]string{"d": {"1m30s", "2s"}, "x": {"1000000"}}), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Combos) != 2 || len(d.OnlyA) != 0 || len(d.OnlyB) != 0 {
		t.Errorf("paired %q, only in A %q, only in B %q; want both combinations paired", d.Combos, d.OnlyA, d.OnlyB)
	}
	// Two spellings swept side by side are two combinations (a string var): paired by text.
	d, err = DiffSummaries(summary(map[string][]string{"s": {"90s", "1m30s"}}), summary(map[string][]string{"s": {"90s", "1m30s"}}), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Combos) != 2 {
		t.Errorf("paired %q; want s=90s and s=1m30s each with itself", d.Combos)
	}
}

// TestSummaryStringValueQuoted: the summary page's combinations table showed a string an
// expectation read as the page renders text, p.stdout "2\n" as 2 (seen in headless Chromium on
// a sweep whose p.stdout == '1\n' failed where n=2): the newline that decides such a claim,
// and a value's spaces, were lost. It is written as the console writes it, quoted, and a long
// one cut inside its quotes.
func TestSummaryStringValueQuoted(t *testing.T) {
	s := twoBy()
	s.Runs[0].Values["p.stdout"] = "2\n"
	s.Runs[1].Values["p.stdout"] = strings.Repeat("x", 100)
	h := SummaryHTML(s, SummaryPlots(s))
	for _, want := range []string{`<td class="num">&#34;2\n&#34;</td>`, `<td class="num">&#34;` + strings.Repeat("x", 40) + `…&#34;</td>`} {
		if !strings.Contains(h, want) {
			t.Errorf("the HTML summary lacks %s", want)
		}
	}
}

// TestSummaryInterruptedCombination: a sweep interrupted with Ctrl-C showed the combination
// whose run was stopped as "0 of 1 never passed" in red, the words of one that failed, where
// the console's SUMMARY line said "1 interrupted" (seen in headless Chromium). The
// combination's cell counts its interrupted runs as it counts its errors.
func TestSummaryInterruptedCombination(t *testing.T) {
	s := twoBy()
	s.Verdict, s.Passed = "interrupted", 1
	s.Runs[1].Outcome = interp.Interrupted
	for e := range s.Runs[1].Expectations {
		s.Runs[1].Expectations[e] = interp.Skipped
	}
	h := SummaryHTML(s, SummaryPlots(s))
	if !strings.Contains(h, `0 of 1, 1 interrupted`) {
		t.Errorf("the HTML summary does not count the interrupted run:\n%s", h)
	}
	if md := SummaryMarkdown(s, nil); !strings.Contains(md, "| max=2 | 0 of 1, 1 interrupted |") {
		t.Errorf("the Markdown summary does not count the interrupted run:\n%s", md)
	}
}

// TestSummaryInterruptedRunSaysItOnce: a run stopped by Ctrl-C, whose error is "interrupted",
// read "interrupted: interrupted" in the summary's Runs table (seen in the Markdown and in
// headless Chromium). Its verdict says it once; an error that says more is kept.
func TestSummaryInterruptedRunSaysItOnce(t *testing.T) {
	s := twoBy()
	s.Verdict, s.Passed = "interrupted", 1
	s.Runs[1].Outcome, s.Runs[1].Error = interp.Interrupted, "interrupted"
	for e := range s.Runs[1].Expectations {
		s.Runs[1].Expectations[e] = interp.Skipped
	}
	if md := SummaryMarkdown(s, nil); strings.Contains(md, "interrupted: interrupted") || !strings.Contains(md, "| interrupted |") {
		t.Errorf("the Markdown summary's run:\n%s", md)
	}
	if h := SummaryHTML(s, SummaryPlots(s)); strings.Contains(h, "interrupted</span> interrupted") {
		t.Errorf("the HTML summary says interrupted twice")
	}
	s.Runs[1].Error = "interrupted: the step fortio was stopped"
	if md := SummaryMarkdown(s, nil); !strings.Contains(md, "interrupted: interrupted: the step fortio was stopped") {
		t.Errorf("the Markdown summary lost the error:\n%s", md)
	}
}
