package report

import (
	"encoding/json"
	"fmt"
	"html"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"labrun.dev/labrun/interp"
)

// The summary of a matrix of runs (labrun run --count N, --sweep var=a,b,c, or a scenario's
// declared sweep): <time>_<scenario>.summary.{md,html,json} beside the runs' reports, and one
// SVG plot per numeric value an expectation reads against each swept var.

// Summary is what a matrix of runs writes per scenario.
type Summary struct {
	Version  int          `json:"version"`
	Scenario string       `json:"scenario"`
	Count    int          `json:"count"`
	Sweeps   []string     `json:"sweeps,omitempty"`
	PassRate float64      `json:"passRate"`
	Passed   int          `json:"passed"`
	Runs     []SummaryRun `json:"runs"`
	Verdict  string       `json:"verdict"`
}

// SummaryRun is one run of a combination.
type SummaryRun struct {
	Vars    map[string]string `json:"vars"`
	Round   int               `json:"round"`
	Outcome interp.Outcome    `json:"outcome"`
	// Report is the run's HTML report, relative to the summary.
	Report string `json:"report,omitempty"`
	// Expectations are the verdicts, by expression; Values every value they read.
	Expectations map[string]interp.Outcome `json:"expectations"`
	Values       map[string]any            `json:"values"`
}

// SweepVar is one swept var and its values, in the order given.
type SweepVar struct {
	Name   string
	Values []string
}

// Plot is one picture of a summary: a value against a swept var.
type Plot struct {
	Value, Var string
	// File is the SVG's file name, beside the summary.
	File string
	SVG  string
}

// Combo names a combination of vars ("connections=2, requests=4"), with "run i of n" when the
// matrix repeats it.
func Combo(vars map[string]string, round, count int) string {
	var parts []string
	for _, k := range sortedKeys(vars) {
		parts = append(parts, k+"="+vars[k])
	}
	if count > 1 {
		parts = append(parts, fmt.Sprintf("run %d of %d", round, count))
	}
	return strings.Join(parts, ", ")
}

// WriteSummary writes the summary's JSON, Markdown, HTML and plots into dir as
// <stamp>_<scenario>.summary.*; it returns their paths, the Markdown first.
func WriteSummary(dir, stamp string, s *Summary, sweeps []SweepVar) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	base := filepath.Join(dir, stamp+"_"+safeName(s.Scenario)+".summary")
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(base+".json", append(b, '\n'), 0o644); err != nil {
		return nil, err
	}
	plots := SummaryPlots(s, sweeps)
	paths := []string{base + ".md", base + ".html", base + ".json"}
	for i := range plots {
		plots[i].File = fmt.Sprintf("%s.plot-%d-%s.svg", filepath.Base(base), i, plots[i].Var)
		if err := os.WriteFile(filepath.Join(dir, plots[i].File), []byte(plots[i].SVG), 0o644); err != nil {
			return nil, err
		}
		paths = append(paths, filepath.Join(dir, plots[i].File))
	}
	if err := os.WriteFile(base+".md", []byte(SummaryMarkdown(s, plots)), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(base+".html", []byte(SummaryHTML(s, plots)), 0o644); err != nil {
		return nil, err
	}
	return paths, nil
}

// SummaryPlots draws every numeric value the expectations read (but the vars) against each
// swept var.
func SummaryPlots(s *Summary, sweeps []SweepVar) []Plot {
	var out []Plot
	for _, v := range summaryValues(s) {
		if strings.HasPrefix(v, "vars.") {
			continue // a var against the sweep is the sweep itself, or a flat line
		}
		for _, sw := range sweeps {
			if svg, ok := SweepPlot(s, v, sw); ok {
				out = append(out, Plot{Value: v, Var: sw.Name, SVG: svg})
			}
		}
	}
	return out
}

func summaryExprs(s *Summary) []string {
	m := map[string]bool{}
	for _, r := range s.Runs {
		for e := range r.Expectations {
			m[e] = true
		}
	}
	return sortedKeys(m)
}

func summaryValues(s *Summary) []string {
	m := map[string]bool{}
	for _, r := range s.Runs {
		for v := range r.Values {
			m[v] = true
		}
	}
	return sortedKeys(m)
}

// group is the runs of one combination.
type group struct {
	vars map[string]string
	runs []SummaryRun
}

func summaryGroups(s *Summary) []*group {
	byKey := map[string]*group{}
	var out []*group
	for _, r := range s.Runs {
		k := Combo(r.Vars, 0, 1)
		g := byKey[k]
		if g == nil {
			g = &group{vars: r.Vars}
			byKey[k] = g
			out = append(out, g)
		}
		g.runs = append(g.runs, r)
	}
	return out
}

// spread is min, median and max of a value over runs (ok false when no run has it as a number).
func spread(runs []SummaryRun, v string) (lo, med, hi float64, n int) {
	var xs []float64
	for _, r := range runs {
		if x, ok := r.Values[v].(float64); ok {
			xs = append(xs, x)
		}
	}
	if len(xs) == 0 {
		return 0, 0, 0, 0
	}
	sort.Float64s(xs)
	return xs[0], median(xs), xs[len(xs)-1], len(xs)
}

func passedCount(runs []SummaryRun, expr string) int {
	n := 0
	for _, r := range runs {
		if r.Expectations[expr] == interp.Passed {
			n++
		}
	}
	return n
}

func passRule(s *Summary) string {
	if s.PassRate > 0 {
		return fmt.Sprintf("Pass rate required: %g (`--pass-rate`); verdict: **%s**.", s.PassRate, s.Verdict)
	}
	return fmt.Sprintf("Every run must pass; verdict: **%s**.", s.Verdict)
}

// SummaryMarkdown renders the summary as Markdown; plots are linked by file name.
func SummaryMarkdown(s *Summary, plots []Plot) string {
	var md strings.Builder
	fmt.Fprintf(&md, "# %s: %d of %d runs passed\n\n%s\n\n", s.Scenario, s.Passed, len(s.Runs), passRule(s))
	exprs := summaryExprs(s)
	md.WriteString("## Runs\n\n| run | vars | verdict |")
	for _, e := range exprs {
		fmt.Fprintf(&md, " %s |", sumCell(e))
	}
	md.WriteString(" report |\n|---|---|---|")
	for range exprs {
		md.WriteString("---|")
	}
	md.WriteString("---|\n")
	for i, r := range s.Runs {
		fmt.Fprintf(&md, "| %d | %s | %s |", i+1, sumCell(Combo(r.Vars, r.Round, s.Count)), r.Outcome)
		for _, e := range exprs {
			fmt.Fprintf(&md, " %s |", r.Expectations[e])
		}
		if r.Report != "" {
			md.WriteString(" [html](" + mdURL(r.Report) + ") |\n")
		} else {
			md.WriteString(" |\n")
		}
	}
	md.WriteString("\n## Expectations\n\n| expectation | passed |\n|---|---|\n")
	for _, e := range exprs {
		fmt.Fprintf(&md, "| %s | %d of %d |\n", sumCell(e), passedCount(s.Runs, e), len(s.Runs))
	}
	md.WriteString("\n## Values the expectations read\n\n| value | vars | min | median | max | runs |\n|---|---|---|---|---|---|\n")
	groups := summaryGroups(s)
	for _, v := range summaryValues(s) {
		for _, g := range groups {
			lo, med, hi, n := spread(g.runs, v)
			if n == 0 {
				continue
			}
			fmt.Fprintf(&md, "| %s | %s | %s | %s | %s | %d |\n", sumCell(v), sumCell(Combo(g.vars, 0, 1)), num(lo), num(med), num(hi), n)
		}
	}
	if len(plots) > 0 {
		md.WriteString("\n## Plots\n\n")
		for _, p := range plots {
			fmt.Fprintf(&md, "![%s against %s](%s)\n\n", sumCell(p.Value), p.Var, p.File)
		}
	}
	return md.String()
}

// SummaryHTML renders the summary as one self-contained page in the look of the run reports
// (HTML): the verdict, a table with a row per combination (its vars, runs passed, each
// expectation's pass count, each value's median and range), the expectations, the plots
// inline, and the runs
// with their verdicts and links to their reports.
func SummaryHTML(s *Summary, plots []Plot) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	e := html.EscapeString
	w("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n")
	w("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
	w("<title>%s — %d of %d runs passed</title>\n<style>%s%s</style></head><body>\n", e(s.Scenario), s.Passed, len(s.Runs), htmlCSS, summaryCSS)
	w("<h1>%s <span class=\"badge %s\">%s</span></h1>\n", e(s.Scenario), e(s.Verdict), strings.ToUpper(e(s.Verdict)))
	w("<p class=\"doc\">%d of %d runs passed. %s</p>\n", s.Passed, len(s.Runs), strings.ReplaceAll(strings.ReplaceAll(e(passRule(s)), "**", ""), "`", ""))
	w("<table class=\"meta\">")
	if len(s.Sweeps) > 0 {
		w("<tr><th>swept</th><td>%s</td></tr>", e(strings.Join(s.Sweeps, " × ")))
	}
	w("<tr><th>runs</th><td>%d per combination</td></tr>", s.Count)
	w("</table>\n")

	exprs := summaryExprs(s)
	values := summaryValues(s)
	groups := summaryGroups(s)
	vars := s.Sweeps
	w("<h2>Combinations</h2>\n<p class=\"hint\">One row per combination of the swept vars. e1, e2, …: how many of its runs each expectation passed (listed below); each value: the median over the runs")
	if s.Count > 1 {
		w(", min–max under it")
	}
	w(".</p>\n<div class=\"scroll\"><table class=\"combos\"><tr>")
	for _, v := range vars {
		w("<th>%s</th>", e(v))
	}
	w("<th>passed</th>")
	for i := range exprs {
		w("<th title=\"%s\">e%d</th>", e(exprs[i]), i+1)
	}
	for _, v := range values {
		w("<th>%s</th>", e(v))
	}
	w("</tr>\n")
	for _, g := range groups {
		ok := 0
		for _, r := range g.runs {
			if r.Outcome == interp.Passed {
				ok++
			}
		}
		cls := "passed"
		if ok < len(g.runs) {
			cls = "failed"
		}
		w("<tr class=\"%s\">", cls)
		for _, v := range vars {
			w("<td class=\"num\">%s</td>", e(g.vars[v]))
		}
		w("<td class=\"num\">%d of %d</td>", ok, len(g.runs))
		for _, x := range exprs {
			n := passedCount(g.runs, x)
			c := "ok"
			if n < len(g.runs) {
				c = "err"
			}
			w("<td class=\"num %s\">%d/%d</td>", c, n, len(g.runs))
		}
		for _, v := range values {
			lo, med, hi, n := spread(g.runs, v)
			switch {
			case n == 0:
				w("<td class=\"num\">%s</td>", e(otherValue(g.runs, v)))
			case s.Count > 1:
				w("<td class=\"num\">%s<br><span class=\"hint\">%s–%s</span></td>", num(med), num(lo), num(hi))
			default:
				w("<td class=\"num\">%s</td>", num(med))
			}
		}
		w("</tr>\n")
	}
	w("</table></div>\n")

	w("<h2>Expectations</h2>\n<table><tr><th></th><th>expectation</th><th>passed</th></tr>\n")
	for i, x := range exprs {
		n := passedCount(s.Runs, x)
		cls := "passed"
		if n < len(s.Runs) {
			cls = "failed"
		}
		w("<tr class=\"%s\"><td>e%d</td><td><code>%s</code></td><td class=\"num\">%d of %d</td></tr>\n", cls, i+1, e(x), n, len(s.Runs))
	}
	w("</table>\n")

	if len(plots) > 0 {
		w("<h2>Plots</h2>\n<p class=\"hint\">Each numeric value against each swept var (the median over the runs of a combination), one line per combination of the other vars; dashed from the second line on, so that lines that coincide stay visible.</p>\n<div class=\"charts\">")
		for _, p := range plots {
			w("<div class=\"chart\">%s</div>", p.SVG)
		}
		w("</div>\n")
	}

	w("<h2>Runs</h2>\n<table><tr><th>run</th><th>vars</th><th>verdict</th>")
	for i := range exprs {
		w("<th title=\"%s\">e%d</th>", e(exprs[i]), i+1)
	}
	w("<th>report</th></tr>\n")
	mark := map[interp.Outcome]string{interp.Passed: "✓", interp.Failed: "✗", interp.Errored: "!", interp.Skipped: "–"}
	for i, r := range s.Runs {
		w("<tr class=\"%s\"><td class=\"num\">%d</td><td>%s</td><td><span class=\"badge %s\">%s</span></td>", e(string(r.Outcome)), i+1, e(Combo(r.Vars, r.Round, s.Count)), e(string(r.Outcome)), e(string(r.Outcome)))
		for _, x := range exprs {
			o := r.Expectations[x]
			w("<td class=\"vm %s\" title=\"%s\">%s</td>", e(string(o)), e(string(o)), mark[o])
		}
		if r.Report != "" {
			w("<td><a href=\"%s\">%s</a></td>", e(filepath.ToSlash(r.Report)), e(filepath.Base(r.Report)))
		} else {
			w("<td></td>")
		}
		w("</tr>\n")
	}
	w("</table>\n<p class=\"hint\">Written by labrun. The complete summary: the <code>.summary.json</code> beside this page.</p>\n</body></html>\n")
	return b.String()
}

// otherValue shows a value that is not a number (the first run's), or "–".
func otherValue(runs []SummaryRun, v string) string {
	for _, r := range runs {
		if x, ok := r.Values[v]; ok {
			return truncate(fmt.Sprint(x), 40)
		}
	}
	return "–"
}

const summaryCSS = `
.badge.passed,.badge.failed,.badge.error{font-size:12px;padding:1px 6px}
table.combos td.ok{color:#2e7d32} table.combos td.err{color:#c62828;font-weight:bold}
td.vm{text-align:center;font-weight:bold} td.vm.passed{color:#2e7d32} td.vm.failed{color:#c62828} td.vm.error{color:#ef6c00}
.scroll{overflow-x:auto} .chart svg{display:block}
`

// SummaryExpected renders a summary as the expected-output block of a document holds it: a
// row per run with its vars, outcome, the response codes its loads saw and each expectation's
// verdict (e1, e2, … listed under the table). The numbers the expectations read are left out:
// they vary between runs and clusters; the verdicts say what the numbers showed.
func SummaryExpected(s *Summary, codes []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "sweep %s: %d of %d runs passed\n", s.Scenario, s.Passed, len(s.Runs))
	exprs := summaryExprs(s)
	b.WriteString("|")
	for _, v := range s.Sweeps {
		b.WriteString(" " + v + " |")
	}
	b.WriteString(" outcome | codes |")
	for i := range exprs {
		fmt.Fprintf(&b, " e%d |", i+1)
	}
	b.WriteString("\n")
	for i, r := range s.Runs {
		b.WriteString("|")
		for _, v := range s.Sweeps {
			b.WriteString(" " + r.Vars[v] + " |")
		}
		c := ""
		if i < len(codes) {
			c = codes[i]
		}
		fmt.Fprintf(&b, " %s | %s |", r.Outcome, or(c, "–"))
		for _, x := range exprs {
			fmt.Fprintf(&b, " %s |", r.Expectations[x])
		}
		b.WriteString("\n")
	}
	for i, x := range exprs {
		fmt.Fprintf(&b, "e%d: %s\n", i+1, x)
	}
	return b.String()
}

// LoadCodes lists the response codes each load of a run saw: "fortio: 200 503".
func LoadCodes(rec *interp.Record) string {
	var parts []string
	for _, n := range sortedKeys(rec.Loads) {
		parts = append(parts, n+": "+strings.Join(sortedKeys(rec.Loads[n].Codes), " "))
	}
	return strings.Join(parts, "; ")
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// sumCell escapes a summary's Markdown table cell.
func sumCell(s string) string {
	r := strings.NewReplacer("|", `\|`, "<", "&lt;", ">", "&gt;", "\n", " ", "`", "\\`", "*", `\*`, "_", `\_`)
	return r.Replace(s)
}

func num(x float64) string { return strconv.FormatFloat(x, 'g', 6, 64) }

func median(xs []float64) float64 {
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// SweepPlot draws value v (the median over rounds) against swept var sw, one line per
// combination of the other sweeps. It reports false when v is not numeric or sw's values are
// not numbers.
func SweepPlot(s *Summary, v string, sw SweepVar) (string, bool) {
	xsOf := make([]float64, len(sw.Values))
	for i, x := range sw.Values {
		f, err := strconv.ParseFloat(x, 64)
		if err != nil {
			return "", false
		}
		xsOf[i] = f
	}
	type pt struct{ x, y float64 }
	lines := map[string][]pt{}
	var lorder []string
	for _, r := range s.Runs {
		y, ok := r.Values[v].(float64)
		if !ok {
			continue
		}
		x, _ := strconv.ParseFloat(r.Vars[sw.Name], 64)
		others := map[string]string{}
		for k, val := range r.Vars {
			if k != sw.Name {
				others[k] = val
			}
		}
		key := Combo(others, 0, 1)
		if _, ok := lines[key]; !ok {
			lorder = append(lorder, key)
		}
		lines[key] = append(lines[key], pt{x, y})
	}
	if len(lines) == 0 {
		return "", false
	}
	minX, maxX := xsOf[0], xsOf[0]
	for _, x := range xsOf {
		minX, maxX = math.Min(minX, x), math.Max(maxX, x)
	}
	minY, maxY := math.Inf(1), math.Inf(-1)
	for _, l := range lines {
		for _, p := range l {
			minY, maxY = math.Min(minY, p.y), math.Max(maxY, p.y)
		}
	}
	minY = math.Min(minY, 0)
	if maxY == minY {
		maxY = minY + 1
	}
	if maxX == minX {
		maxX = minX + 1
	}
	const w, h, l, r, t, b = 560.0, 300.0, 60.0, 160.0, 30.0, 40.0
	px := func(x float64) float64 { return l + (x-minX)/(maxX-minX)*(w-l-r) }
	py := func(y float64) float64 { return h - b - (y-minY)/(maxY-minY)*(h-t-b) }
	var sb strings.Builder
	fmt.Fprintf(&sb, `<svg xmlns="http://www.w3.org/2000/svg" width="%g" height="%g" font-family="sans-serif" font-size="11">`, w, h)
	fmt.Fprintf(&sb, `<rect width="100%%" height="100%%" fill="white"/><text x="%g" y="18" font-size="13">%s against %s</text>`, l, xmlEsc(v), xmlEsc(sw.Name))
	fmt.Fprintf(&sb, `<line x1="%g" y1="%g" x2="%g" y2="%g" stroke="#333"/><line x1="%g" y1="%g" x2="%g" y2="%g" stroke="#333"/>`, l, h-b, w-r, h-b, l, t, l, h-b)
	for _, x := range xsOf {
		fmt.Fprintf(&sb, `<text x="%g" y="%g" text-anchor="middle">%s</text>`, px(x), h-b+15, num(x))
	}
	fmt.Fprintf(&sb, `<text x="%g" y="%g" text-anchor="middle">%s</text>`, (l+w-r)/2, h-6, xmlEsc(sw.Name))
	for i := 0; i <= 4; i++ {
		y := minY + (maxY-minY)*float64(i)/4
		fmt.Fprintf(&sb, `<text x="%g" y="%g" text-anchor="end">%s</text><line x1="%g" y1="%g" x2="%g" y2="%g" stroke="#ddd"/>`, l-5, py(y)+4, num(y), l, py(y), w-r, py(y))
	}
	colors := []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"}
	for i, key := range lorder {
		pts := lines[key]
		sort.Slice(pts, func(a, b int) bool { return pts[a].x < pts[b].x })
		// The median per x.
		var med []pt
		for j := 0; j < len(pts); {
			k := j
			var ys []float64
			for k < len(pts) && pts[k].x == pts[j].x {
				ys = append(ys, pts[k].y)
				k++
			}
			sort.Float64s(ys)
			med = append(med, pt{pts[j].x, median(ys)})
			j = k
		}
		c := colors[i%len(colors)]
		var d []string
		for _, p := range med {
			d = append(d, fmt.Sprintf("%g,%g", px(p.x), py(p.y)))
			fmt.Fprintf(&sb, `<circle cx="%g" cy="%g" r="3" fill="%s"/>`, px(p.x), py(p.y), c)
		}
		// Dashes from the second line on, so that lines that coincide stay visible.
		dash := ""
		if i > 0 {
			dash = fmt.Sprintf(` stroke-dasharray="%d,4"`, 4+2*i)
		}
		fmt.Fprintf(&sb, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"%s/>`, strings.Join(d, " "), c, dash)
		label := key
		if label == "" {
			label = "median"
		}
		fmt.Fprintf(&sb, `<text x="%g" y="%g" fill="%s">%s</text>`, w-r+10, t+14*float64(i+1), c, xmlEsc(label))
	}
	sb.WriteString(`</svg>`)
	return sb.String(), true
}

func xmlEsc(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}
