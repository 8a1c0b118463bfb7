package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/interp"
)

// Experiments as science: --count N runs each scenario N times, --sweep var=a,b,c runs it once
// per value (repeatable: the cartesian product), the two combined run every combination N
// times. Each run is an ordinary run (setup, steps, cleanup, its own report); the vars of a
// combination go through the same mechanism as --var, so CUE fields change with them. A
// summary per scenario is written beside the reports: <time>_<scenario>.summary.{md,json},
// plus one SVG plot per value an expectation reads against each swept var.

// sweep is one --sweep flag: a var and its values.
type sweep struct {
	name   string
	values []string
}

func parseSweeps(flags []string) ([]sweep, error) {
	var out []sweep
	seen := map[string]bool{}
	for _, f := range flags {
		name, vals, ok := strings.Cut(f, "=")
		if !ok || name == "" || vals == "" {
			return nil, &exitError{exitInvalid, fmt.Sprintf("--sweep %q: expected name=v1,v2,...", f)}
		}
		if seen[name] {
			return nil, &exitError{exitInvalid, fmt.Sprintf("--sweep %s given twice: give its values in one flag", name)}
		}
		seen[name] = true
		out = append(out, sweep{name, strings.Split(vals, ",")})
	}
	return out, nil
}

// combinations is the cartesian product of the sweeps (one empty combination without sweeps).
func combinations(sweeps []sweep) []map[string]string {
	combos := []map[string]string{{}}
	for _, s := range sweeps {
		var next []map[string]string
		for _, c := range combos {
			for _, v := range s.values {
				m := map[string]string{}
				for k, x := range c {
					m[k] = x
				}
				m[s.name] = v
				next = append(next, m)
			}
		}
		combos = next
	}
	return combos
}

// matrixRun is one run of a combination.
type matrixRun struct {
	Vars    map[string]string `json:"vars"`
	Round   int               `json:"round"`
	Outcome interp.Outcome    `json:"outcome"`
	Report  string            `json:"report,omitempty"`
	// Expectations are the verdicts, by expression; Values every value they read.
	Expectations map[string]interp.Outcome `json:"expectations"`
	Values       map[string]any            `json:"values"`
}

// summary is what a matrix writes per scenario.
type summary struct {
	Version  int         `json:"version"`
	Scenario string      `json:"scenario"`
	Count    int         `json:"count"`
	Sweeps   []string    `json:"sweeps,omitempty"`
	PassRate float64     `json:"passRate"`
	Passed   int         `json:"passed"`
	Runs     []matrixRun `json:"runs"`
	Verdict  string      `json:"verdict"`
}

// runMatrix runs every combination of the sweeps count times.
func (p *process) runMatrix(args []string, f *runFlags, base dsl.Options) error {
	sweeps, err := parseSweeps(f.sweeps)
	if err != nil {
		return err
	}
	if f.count < 1 {
		return &exitError{exitInvalid, fmt.Sprintf("--count %d: expected 1 or more", f.count)}
	}
	if f.passRate < 0 || f.passRate > 1 {
		return &exitError{exitInvalid, fmt.Sprintf("--pass-rate %g: expected a fraction from 0 to 1", f.passRate)}
	}
	for _, s := range sweeps {
		if _, ok := base.Vars[s.name]; ok {
			return &exitError{exitInvalid, fmt.Sprintf("--sweep %s and --var %s: give one", s.name, s.name)}
		}
	}
	if f.reportDir == "" {
		return &exitError{exitInvalid, "--count and --sweep write a summary: give --report-dir"}
	}
	runCtx, cleanupCtx, stop := p.runContexts()
	defer stop()
	sums := map[string]*summary{}
	var order []string
	code := exitOK
	for _, combo := range combinations(sweeps) {
		opts := base
		opts.Vars = map[string]string{}
		for k, v := range base.Vars {
			opts.Vars[k] = v
		}
		for k, v := range combo {
			opts.Vars[k] = v
		}
		scenarios, err := p.loadSelected(args, opts, f)
		if err != nil {
			return err
		}
		if err := p.checkRunFlags(scenarios, f); err != nil {
			return err
		}
		for round := 1; round <= f.count; round++ {
			for _, sc := range scenarios {
				if runCtx.Err() != nil {
					break
				}
				if len(combo) > 0 || f.count > 1 {
					fmt.Fprintf(p.Stdout, "● %s: %s\n", sc.Name, describeCombo(combo, round, f.count))
				}
				rec, c := p.runOne(runCtx, cleanupCtx, sc, f)
				if c == exitInterrupted || c == exitInvalid {
					code = worse(code, c)
				}
				if rec == nil {
					continue
				}
				s := sums[sc.Name]
				if s == nil {
					s = &summary{Version: 1, Scenario: sc.Name, Count: f.count, PassRate: f.passRate}
					for _, sw := range sweeps {
						s.Sweeps = append(s.Sweeps, sw.name)
					}
					sums[sc.Name] = s
					order = append(order, sc.Name)
				}
				mr := matrixRun{Vars: combo, Round: round, Outcome: rec.Outcome, Expectations: map[string]interp.Outcome{}, Values: map[string]any{}}
				j := interp.NewJudge(rec, sc)
				for _, e := range sc.Expect {
					for k, v := range j.Values(e) {
						mr.Values[k] = v
					}
				}
				for _, jd := range rec.Expectations {
					mr.Expectations[jd.Src] = jd.Outcome
				}
				if rec.Outcome == interp.Passed {
					s.Passed++
				}
				s.Runs = append(s.Runs, mr)
			}
		}
	}
	dir := f.reportDir
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(p.Cwd, dir)
	}
	stamp := time.Now().UTC().Format("20060102T150405Z")
	for _, name := range order {
		s := sums[name]
		need := 1.0
		if f.passRate > 0 {
			need = f.passRate
		}
		rate := float64(s.Passed) / float64(len(s.Runs))
		s.Verdict = "passed"
		if rate < need {
			s.Verdict = "failed"
			code = worse(code, exitFailed)
		}
		paths, err := writeSummary(dir, stamp, s, sweeps)
		if err != nil {
			fmt.Fprintf(p.Stderr, "labrun: %s: writing the summary: %v\n", name, err)
			code = worse(code, exitInfra)
			continue
		}
		fmt.Fprintf(p.Stdout, "SUMMARY %s: %d of %d runs passed (%s) — %s\n", name, s.Passed, len(s.Runs), passNeed(f.passRate), relPath(p.Cwd, paths[0]))
	}
	if code != exitOK {
		return &exitError{code: code}
	}
	return nil
}

func passNeed(rate float64) string {
	if rate > 0 {
		return fmt.Sprintf("--pass-rate %g", rate)
	}
	return "every run must pass"
}

func describeCombo(combo map[string]string, round, count int) string {
	var parts []string
	for _, k := range sortedKeys(combo) {
		parts = append(parts, k+"="+combo[k])
	}
	if count > 1 {
		parts = append(parts, fmt.Sprintf("run %d of %d", round, count))
	}
	return strings.Join(parts, ", ")
}

// writeSummary writes the summary's JSON, Markdown and plots; it returns their paths, the
// Markdown first.
func writeSummary(dir, stamp string, s *summary, sweeps []sweep) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	base := filepath.Join(dir, stamp+"_"+s.Scenario+".summary")
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(base+".json", b, 0o644); err != nil {
		return nil, err
	}
	var md strings.Builder
	fmt.Fprintf(&md, "# %s: %d of %d runs passed\n\n", s.Scenario, s.Passed, len(s.Runs))
	if s.PassRate > 0 {
		fmt.Fprintf(&md, "Pass rate required: %g (`--pass-rate`); verdict: **%s**.\n\n", s.PassRate, s.Verdict)
	} else {
		fmt.Fprintf(&md, "Every run must pass; verdict: **%s**.\n\n", s.Verdict)
	}
	exprs := map[string]bool{}
	values := map[string]bool{}
	for _, r := range s.Runs {
		for e := range r.Expectations {
			exprs[e] = true
		}
		for v := range r.Values {
			values[v] = true
		}
	}
	// Runs.
	md.WriteString("## Runs\n\n| run | vars | verdict |")
	for _, e := range sortedKeys(exprs) {
		fmt.Fprintf(&md, " %s |", mdCell(e))
	}
	md.WriteString("\n|---|---|---|")
	for range exprs {
		md.WriteString("---|")
	}
	md.WriteString("\n")
	for i, r := range s.Runs {
		fmt.Fprintf(&md, "| %d | %s | %s |", i+1, mdCell(describeCombo(r.Vars, r.Round, s.Count)), r.Outcome)
		for _, e := range sortedKeys(exprs) {
			fmt.Fprintf(&md, " %s |", r.Expectations[e])
		}
		md.WriteString("\n")
	}
	// Expectations: pass counts.
	md.WriteString("\n## Expectations\n\n| expectation | passed |\n|---|---|\n")
	for _, e := range sortedKeys(exprs) {
		n := 0
		for _, r := range s.Runs {
			if r.Expectations[e] == interp.Passed {
				n++
			}
		}
		fmt.Fprintf(&md, "| %s | %d of %d |\n", mdCell(e), n, len(s.Runs))
	}
	// Values: spread over the runs of each combination.
	md.WriteString("\n## Values the expectations read\n\n| value | vars | min | median | max | runs |\n|---|---|---|---|---|---|\n")
	groups := map[string][]matrixRun{}
	var gorder []string
	for _, r := range s.Runs {
		k := describeCombo(r.Vars, 0, 1)
		if _, ok := groups[k]; !ok {
			gorder = append(gorder, k)
		}
		groups[k] = append(groups[k], r)
	}
	for _, v := range sortedKeys(values) {
		for _, g := range gorder {
			var xs []float64
			for _, r := range groups[g] {
				if x, ok := r.Values[v].(float64); ok {
					xs = append(xs, x)
				}
			}
			if len(xs) == 0 {
				continue
			}
			sort.Float64s(xs)
			fmt.Fprintf(&md, "| %s | %s | %s | %s | %s | %d |\n", mdCell(v), mdCell(g), num(xs[0]), num(median(xs)), num(xs[len(xs)-1]), len(xs))
		}
	}
	paths := []string{base + ".md", base + ".json"}
	// Plots: each numeric value against each swept var (one line per value of the others).
	if len(sweeps) > 0 {
		md.WriteString("\n## Plots\n\n")
		for i, v := range sortedKeys(values) {
			for _, sw := range sweeps {
				svg, ok := plotAgainst(s, v, sw, sweeps)
				if !ok {
					continue
				}
				name := fmt.Sprintf("%s.plot-%d-%s.svg", filepath.Base(base), i, sw.name)
				if err := os.WriteFile(filepath.Join(dir, name), []byte(svg), 0o644); err != nil {
					return nil, err
				}
				paths = append(paths, filepath.Join(dir, name))
				fmt.Fprintf(&md, "![%s against %s](%s)\n\n", mdCell(v), sw.name, name)
			}
		}
	}
	if err := os.WriteFile(base+".md", []byte(md.String()), 0o644); err != nil {
		return nil, err
	}
	return paths, nil
}

func mdCell(s string) string {
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

// plotAgainst draws value v (the median over rounds) against swept var sw, one line per
// combination of the other sweeps. It reports false when v is not numeric or sw's values are
// not numbers.
func plotAgainst(s *summary, v string, sw sweep, sweeps []sweep) (string, bool) {
	xsOf := make([]float64, len(sw.values))
	for i, x := range sw.values {
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
		x, _ := strconv.ParseFloat(r.Vars[sw.name], 64)
		others := map[string]string{}
		for k, val := range r.Vars {
			if k != sw.name {
				others[k] = val
			}
		}
		key := describeCombo(others, 0, 1)
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
	fmt.Fprintf(&sb, `<rect width="100%%" height="100%%" fill="white"/><text x="%g" y="18" font-size="13">%s against %s</text>`, l, xmlEsc(v), xmlEsc(sw.name))
	fmt.Fprintf(&sb, `<line x1="%g" y1="%g" x2="%g" y2="%g" stroke="#333"/><line x1="%g" y1="%g" x2="%g" y2="%g" stroke="#333"/>`, l, h-b, w-r, h-b, l, t, l, h-b)
	for _, x := range xsOf {
		fmt.Fprintf(&sb, `<text x="%g" y="%g" text-anchor="middle">%s</text>`, px(x), h-b+15, num(x))
	}
	fmt.Fprintf(&sb, `<text x="%g" y="%g" text-anchor="middle">%s</text>`, (l+w-r)/2, h-6, xmlEsc(sw.name))
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
