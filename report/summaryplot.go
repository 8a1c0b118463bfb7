package report

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"labrun.dev/labrun/dsl"
)

// The summary's plots, drawn as a scientist would publish them: every run is a point, a band
// spans min–max of a combination's runs beside the line through the medians, the axes have
// round ticks and units, the legend shows each line's stroke, every mark has its value on
// hover (an SVG <title>), and numbers have at most 4 significant digits. Without a sweep
// (--count alone), a strip plot per value: each run a point, the median a bar, min–max a
// whisker.

// Plot is one picture of a summary.
type Plot struct {
	// Title is the picture's title: "fortio.p50 against requests", "fortio.p50 over 5 runs".
	Title string
	// Value is what is drawn; Var the swept var it is drawn against ("" for a strip plot).
	Value, Var string
	// File is the SVG's file name, beside the summary.
	File string
	SVG  string
}

var plotColors = []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"}

// SummaryPlots draws the plots the scenario asks for (plot:) first, then every numeric value
// the expectations read (but the vars) against each swept var, or, without a sweep, a strip
// plot of each.
func SummaryPlots(s *Summary) []Plot {
	var out []Plot
	done := map[string]bool{}
	// The vars swept over more than one value are the x axes; without one, strip plots.
	swept := map[string]bool{}
	var axes []string
	for _, sw := range s.Sweep {
		if len(sw.Values) > 1 {
			swept[sw.Name] = true
			axes = append(axes, sw.Name)
		}
	}
	add := func(v, x string) {
		if len(axes) == 0 {
			x = ""
		} else if !swept[x] {
			x = axes[0]
		}
		if done[v+"\x00"+x] {
			return
		}
		done[v+"\x00"+x] = true
		var p Plot
		var ok bool
		if x == "" {
			p, ok = StripPlot(s, v)
		} else {
			p, ok = SweepPlot(s, v, x)
		}
		if ok {
			out = append(out, p)
		}
	}
	for _, p := range s.Plot {
		add(p.Y, p.X)
	}
	for _, v := range summaryValues(s) {
		if varsOnly(v) {
			continue // a var against the sweep is the sweep itself, or a flat line
		}
		if len(axes) == 0 {
			add(v, "")
		}
		for _, x := range axes {
			add(v, x)
		}
	}
	return out
}

// axis maps values to pixels over round ticks that cover every value drawn.
type axis struct {
	ticks    []float64
	lo, hi   float64
	from, to float64 // pixels of lo and hi
}

func newAxis(lo, hi, from, to float64) axis {
	if lo > 0 && lo <= hi/2 {
		lo = 0 // near zero: start at zero, so that heights compare
	}
	if sameBound(lo, hi) {
		hi, lo = hi+1, lo-math.Min(1, math.Abs(lo))
		if lo < 0 && hi-1 >= 0 {
			lo = 0
		}
	}
	t := niceTicks(lo, hi, 5)
	if len(t) > 1 {
		for step := t[1] - t[0]; t[len(t)-1] < hi && step > 0 && len(t) < 100; {
			t = append(t, t[len(t)-1]+step) // the top tick covers the highest value drawn
		}
	}
	return axis{ticks: t, lo: t[0], hi: t[len(t)-1], from: from, to: to}
}

// tickCharWidth is about the width of a digit of the plots' 11 px sans-serif font.
const tickCharWidth = 6.2

// margin is the left margin a y axis with these ticks needs, at least least: its tick labels
// end 6 px left of the axis, and the unit, drawn upright at x = 16, stands clear left of the
// widest. A value of a few µs in s ("0.0000057") was written over its unit.
func (a axis) margin(least float64) float64 {
	widest := 0
	for _, tk := range a.ticks {
		widest = max(widest, len(sig4(tk)))
	}
	return max(least, 16+6+6+6+tickCharWidth*float64(widest))
}

func (a axis) px(v float64) float64 {
	if a.hi == a.lo {
		return a.from
	}
	return a.from + (v-a.lo)/(a.hi-a.lo)*(a.to-a.from)
}

// SweepPlot draws value v against swept var x: one line per combination of the other swept
// vars through the medians of its runs, a band over min–max, each run a point. A swept value
// that is not a number is a category, in the order given. It reports false when no run has v
// as a number.
func SweepPlot(s *Summary, v, x string) (Plot, bool) {
	var sw dsl.SweepVar
	for _, c := range s.Sweep {
		if c.Name == x {
			sw = c
		}
	}
	if sw.Name == "" || len(sw.Values) == 0 {
		return Plot{}, false
	}
	numeric := true
	xv := make([]float64, len(sw.Values))
	for i, val := range sw.Values {
		f, err := strconv.ParseFloat(val, 64)
		if err != nil {
			numeric = false
		}
		xv[i] = f
	}
	if !numeric {
		for i := range xv {
			xv[i] = float64(i)
		}
	}
	xIndex := map[string]int{}
	for i, val := range sw.Values {
		xIndex[val] = i
	}
	// Lines: the combinations of the other swept vars, in the matrix's order.
	type line struct {
		label string
		ys    [][]float64 // per x value, each run's value
		runs  [][]string  // per x value, each run's name (for hover)
	}
	var lines []*line
	var nonFinite []string // the runs left out whose value no axis holds, by the value
	byKey := map[string]*line{}
	for _, g := range summaryGroups(s) {
		others := map[string]string{}
		for k, val := range g.vars {
			if k != x {
				others[k] = val
			}
		}
		key := Combo(others, 0, 1)
		l := byKey[key]
		if l == nil {
			l = &line{label: key, ys: make([][]float64, len(sw.Values)), runs: make([][]string, len(sw.Values))}
			byKey[key] = l
			lines = append(lines, l)
		}
		i, ok := xIndex[g.vars[x]]
		if !ok {
			continue
		}
		for _, r := range g.runs {
			if y, ok := plottable(r.Values[v]); ok {
				l.ys[i] = append(l.ys[i], y)
				l.runs[i] = append(l.runs[i], Combo(r.Vars, r.Round, s.Count))
			} else if f, ok := r.Values[v].(float64); ok {
				nonFinite = append(nonFinite, sig4(f))
			}
		}
	}
	lo, hi, n := math.Inf(1), math.Inf(-1), 0
	for _, l := range lines {
		for _, ys := range l.ys {
			for _, y := range ys {
				lo, hi, n = math.Min(lo, y), math.Max(hi, y), n+1
			}
		}
	}
	if n == 0 {
		return Plot{}, false
	}
	unit := s.Units[v]
	title := v + " against " + x
	if len(nonFinite) > 0 {
		// Its bands and medians are of the other runs: said, as the strip plot says it.
		title += " (" + nonFiniteLeftOut(nonFinite) + ")"
	}
	const w, h, r, t, b = 560.0, 320.0, 164.0, 34.0, 48.0
	ya := newAxis(lo, hi, h-b, t)
	l := ya.margin(64)
	xlo, xhi := xv[0], xv[0]
	for _, f := range xv {
		xlo, xhi = math.Min(xlo, f), math.Max(xhi, f)
	}
	if xhi == xlo {
		xlo, xhi = xlo-1, xhi+1
	}
	pad := (xhi - xlo) * 0.06
	xa := axis{lo: xlo - pad, hi: xhi + pad, from: l, to: w - r}
	var sb strings.Builder
	svgOpen(&sb, w, h, title, l)
	// The y axis: grid at round ticks, the unit beside it.
	for _, tk := range ya.ticks {
		fmt.Fprintf(&sb, `<line x1="%g" y1="%.1f" x2="%g" y2="%.1f" stroke="#e4e4e4"/><text x="%g" y="%.1f" text-anchor="end">%s</text>`, l, ya.px(tk), w-r, ya.px(tk), l-6, ya.px(tk)+4, sig4(tk))
	}
	fmt.Fprintf(&sb, `<text transform="translate(16,%g) rotate(-90)" text-anchor="middle" fill="#444">%s</text>`, (t+h-b)/2, xmlEsc(axisLabel(v, unit)))
	fmt.Fprintf(&sb, `<line x1="%g" y1="%g" x2="%g" y2="%g" stroke="#333"/><line x1="%g" y1="%g" x2="%g" y2="%g" stroke="#333"/>`, l, h-b, w-r, h-b, l, t, l, h-b)
	// The x axis: a tick at each swept value.
	for i, f := range xv {
		fmt.Fprintf(&sb, `<line x1="%.1f" y1="%g" x2="%.1f" y2="%g" stroke="#333"/><text x="%.1f" y="%g" text-anchor="middle">%s</text>`, xa.px(f), h-b, xa.px(f), h-b+4, xa.px(f), h-b+17, xmlEsc(xLabel(sw.Values[i], numeric)))
	}
	fmt.Fprintf(&sb, `<text x="%g" y="%g" text-anchor="middle" fill="#444">%s</text>`, (l+w-r)/2, h-12, xmlEsc(x))
	many := s.Count > 1
	for li, ln := range lines {
		c := plotColors[li%len(plotColors)]
		dodge := (float64(li) - float64(len(lines)-1)/2) * 5
		px := func(i int) float64 { return xa.px(xv[i]) + dodge }
		// Runs of consecutive x values with data: a missing value breaks the line and the band.
		var segs [][]int
		var cur []int
		for i := range xv {
			if len(ln.ys[i]) == 0 {
				if len(cur) > 0 {
					segs = append(segs, cur)
				}
				cur = nil
				continue
			}
			cur = append(cur, i)
		}
		if len(cur) > 0 {
			segs = append(segs, cur)
		}
		stat := func(i int) (lo, med, hi float64) {
			ys := append([]float64(nil), ln.ys[i]...)
			sort.Float64s(ys)
			return ys[0], median(ys), ys[len(ys)-1]
		}
		if many {
			for _, seg := range segs {
				var top, bottom []string
				for _, i := range seg {
					lo, _, hi := stat(i)
					top = append(top, fmt.Sprintf("%.1f,%.1f", px(i), ya.px(hi)))
					bottom = append([]string{fmt.Sprintf("%.1f,%.1f", px(i), ya.px(lo))}, bottom...)
				}
				if len(seg) == 1 { // one x: a bar from min to max
					i := seg[0]
					lo, _, hi := stat(i)
					fmt.Fprintf(&sb, `<rect x="%.1f" y="%.1f" width="8" height="%.1f" fill="%s" fill-opacity="0.18"/>`, px(i)-4, ya.px(hi), math.Max(1, ya.px(lo)-ya.px(hi)), c)
					continue
				}
				fmt.Fprintf(&sb, `<polygon points="%s" fill="%s" fill-opacity="0.15" stroke="none"/>`, strings.Join(append(top, bottom...), " "), c)
			}
		}
		dash := lineDash(li)
		for _, seg := range segs {
			var pts []string
			for _, i := range seg {
				_, med, _ := stat(i)
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", px(i), ya.px(med)))
			}
			fmt.Fprintf(&sb, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"%s/>`, strings.Join(pts, " "), c, dash)
		}
		for i := range xv {
			if len(ln.ys[i]) == 0 {
				continue
			}
			for j, y := range ln.ys[i] {
				fmt.Fprintf(&sb, `<circle cx="%.1f" cy="%.1f" r="3" fill="white" stroke="%s" stroke-width="1.3"><title>%s: %s</title></circle>`, px(i), ya.px(y), c, xmlEsc(ln.runs[i][j]), xmlEsc(withUnit(y, unit)))
			}
			lo, med, hi := stat(i)
			hover := fmt.Sprintf("%s=%s", x, sw.Values[i])
			if ln.label != "" {
				hover += ", " + ln.label
			}
			hover += ": median " + withUnit(med, unit)
			if len(ln.ys[i]) > 1 {
				hover += fmt.Sprintf(" (min %s, max %s; %d runs)", sig4(lo), sig4(hi), len(ln.ys[i]))
			}
			fmt.Fprintf(&sb, `<circle cx="%.1f" cy="%.1f" r="4" fill="%s"><title>%s</title></circle>`, px(i), ya.px(med), c, xmlEsc(hover))
		}
		// The legend: the line's stroke and marker, its label.
		ly := t + 8 + 18*float64(li)
		label := ln.label
		if label == "" {
			label = "median"
		}
		if !slices.ContainsFunc(ln.ys, func(ys []float64) bool { return len(ys) > 0 }) {
			// A line none of whose runs has the value (each erred, or did not judge what
			// reads it): its legend says so, where a sample would read as a line hidden
			// behind another.
			fmt.Fprintf(&sb, `<text x="%g" y="%g" fill="#777"><title>%s: no run has %s (their runs erred, or judged nothing that reads it)</title>%s: none</text>`,
				w-r+12, ly+4, xmlEsc(label), xmlEsc(v), xmlEsc(truncate(label, 19)))
			continue
		}
		fmt.Fprintf(&sb, `<line x1="%g" y1="%g" x2="%g" y2="%g" stroke="%s" stroke-width="2"%s/><circle cx="%g" cy="%g" r="4" fill="%s"/><text x="%g" y="%g">%s</text>`,
			w-r+12, ly, w-r+42, ly, c, dash, w-r+27, ly, c, w-r+48, ly+4, xmlEsc(truncate(label, 19)))
	}
	ly := t + 8 + 18*float64(len(lines)) + 6
	fmt.Fprintf(&sb, `<circle cx="%g" cy="%g" r="3" fill="white" stroke="#555" stroke-width="1.3"/><text x="%g" y="%g" fill="#444">one run</text>`, w-r+27, ly, w-r+48, ly+4)
	if many {
		fmt.Fprintf(&sb, `<rect x="%g" y="%g" width="30" height="10" fill="#555" fill-opacity="0.18"/><text x="%g" y="%g" fill="#444">min–max of %d runs</text>`, w-r+12, ly+13, w-r+48, ly+22, s.Count)
	}
	sb.WriteString(`</svg>`)
	return Plot{Title: title, Value: v, Var: x, SVG: sb.String()}, true
}

// plottable is x as a point of a plot: a finite number (a ratio's +Inf or NaN has no place on
// an axis; the summary's table shows it).
func plottable(x any) (float64, bool) {
	y, ok := x.(float64)
	return y, ok && !math.IsInf(y, 0) && !math.IsNaN(y)
}

// stripTitle is a strip plot's title: the value and the runs it draws, and, of the summary's
// others, how many are left out for a value no axis holds (+Inf, NaN: each said) and how many
// have no value (they erred before it, or did not judge what reads it). Before, "over 1 runs"
// of four said nothing of the three not drawn, whose median the plot's bar is not.
func stripTitle(v string, drawn, all int, nonFinite []string, without int) string {
	if drawn == all {
		return fmt.Sprintf("%s over %d run%s", v, drawn, plural(drawn))
	}
	var why []string
	if len(nonFinite) > 0 {
		why = append(why, nonFiniteLeftOut(nonFinite))
	}
	if without > 0 {
		why = append(why, fmt.Sprintf("%d without the value", without))
	}
	return fmt.Sprintf("%s over %d of %d runs (%s)", v, drawn, all, strings.Join(why, "; "))
}

// nonFiniteLeftOut says how many runs a plot left out for a value no axis holds, and which:
// "2 left out: +Inf, NaN", "2 left out: NaN ×2".
func nonFiniteLeftOut(nonFinite []string) string {
	var kinds []string // each value once, with its count where several runs have it
	for _, k := range []string{"+Inf", "-Inf", "NaN"} {
		switch n := slices.Index(nonFinite, k); {
		case n < 0:
		case slices.Index(nonFinite[n+1:], k) < 0:
			kinds = append(kinds, k)
		default:
			kinds = append(kinds, fmt.Sprintf("%s ×%d", k, countOf(nonFinite, k)))
		}
	}
	return fmt.Sprintf("%d left out: %s", len(nonFinite), strings.Join(kinds, ", "))
}

func countOf(xs []string, x string) int {
	n := 0
	for _, y := range xs {
		if y == x {
			n++
		}
	}
	return n
}

// StripPlot draws value v over the runs of a matrix without a sweep: each run a point (spread
// sideways so that equal values stay visible), the median a bar, min–max a whisker. It
// reports false when no run has v as a number.
func StripPlot(s *Summary, v string) (Plot, bool) {
	var ys []float64
	var names []string
	var nonFinite []string // the runs left out whose value no axis holds, by the value
	without := 0
	for _, r := range s.Runs {
		if y, ok := plottable(r.Values[v]); ok {
			ys = append(ys, y)
			names = append(names, fmt.Sprintf("run %d", r.Round))
		} else if f, ok := r.Values[v].(float64); ok {
			nonFinite = append(nonFinite, sig4(f))
		} else {
			without++
		}
	}
	if len(ys) == 0 {
		return Plot{}, false
	}
	sorted := append([]float64(nil), ys...)
	sort.Float64s(sorted)
	lo, med, hi := sorted[0], median(sorted), sorted[len(sorted)-1]
	unit := s.Units[v]
	title := stripTitle(v, len(ys), len(s.Runs), nonFinite, without)
	const w, h, t, b = 380.0, 280.0, 34.0, 30.0
	ya := newAxis(lo, hi, h-b, t)
	l := ya.margin(70)
	cx := l + (w-l-20)/2
	var sb strings.Builder
	svgOpen(&sb, w, h, title, l)
	for _, tk := range ya.ticks {
		fmt.Fprintf(&sb, `<line x1="%g" y1="%.1f" x2="%g" y2="%.1f" stroke="#e4e4e4"/><text x="%g" y="%.1f" text-anchor="end">%s</text>`, l, ya.px(tk), w-20, ya.px(tk), l-6, ya.px(tk)+4, sig4(tk))
	}
	fmt.Fprintf(&sb, `<text transform="translate(16,%g) rotate(-90)" text-anchor="middle" fill="#444">%s</text>`, (t+h-b)/2, xmlEsc(axisLabel(v, unit)))
	fmt.Fprintf(&sb, `<line x1="%g" y1="%g" x2="%g" y2="%g" stroke="#333"/><line x1="%g" y1="%g" x2="%g" y2="%g" stroke="#333"/>`, l, h-b, w-20, h-b, l, t, l, h-b)
	c := plotColors[0]
	fmt.Fprintf(&sb, `<line x1="%g" y1="%.1f" x2="%g" y2="%.1f" stroke="#555"/><line x1="%g" y1="%.1f" x2="%g" y2="%.1f" stroke="#555"/><line x1="%g" y1="%.1f" x2="%g" y2="%.1f" stroke="#555"/>`,
		cx, ya.px(lo), cx, ya.px(hi), cx-10, ya.px(lo), cx+10, ya.px(lo), cx-10, ya.px(hi), cx+10, ya.px(hi))
	fmt.Fprintf(&sb, `<line x1="%g" y1="%.1f" x2="%g" y2="%.1f" stroke="%s" stroke-width="3"><title>median %s (min %s, max %s; %d runs)</title></line>`,
		cx-40, ya.px(med), cx+40, ya.px(med), c, xmlEsc(withUnit(med, unit)), sig4(lo), sig4(hi), len(ys))
	for i, y := range ys {
		dx := float64(i%9-4) * 6
		fmt.Fprintf(&sb, `<circle cx="%.1f" cy="%.1f" r="3.5" fill="white" stroke="%s" stroke-width="1.5"><title>%s: %s</title></circle>`, cx+dx, ya.px(y), c, names[i], xmlEsc(withUnit(y, unit)))
	}
	fmt.Fprintf(&sb, `<text x="%g" y="%g" fill="#444">median %s · min–max %s–%s</text>`, l, h-8, xmlEsc(withUnit(med, unit)), sig4(lo), sig4(hi))
	sb.WriteString(`</svg>`)
	return Plot{Title: title, Value: v, SVG: sb.String()}, true
}

var varRead = regexp.MustCompile(`vars\.[A-Za-z_][A-Za-z0-9_]*|[0-9.]+|[-+*/%() ]`)

// varsOnly reports whether a value is computed from the vars alone (vars.connections * 500):
// the combination fixes it, so the summary neither tabulates nor plots it.
func varsOnly(v string) bool {
	return strings.HasPrefix(v, "vars.") && varRead.ReplaceAllString(v, "") == ""
}

func svgOpen(sb *strings.Builder, w, h float64, title string, l float64) {
	fmt.Fprintf(sb, `<svg xmlns="http://www.w3.org/2000/svg" width="%g" height="%g" viewBox="0 0 %g %g" font-family="sans-serif" font-size="11">`, w, h, w, h)
	// A title wider than the picture was cut mid-word by its edge: it is cut with "…" to
	// fit (a 13 px character is at most about 7.5 px wide on average), whole in its hover.
	shown := truncate(title, max(10, int((w-l-6)/7.5)-1))
	fmt.Fprintf(sb, `<rect width="100%%" height="100%%" fill="white"/><g><title>%s</title><text x="%g" y="18" font-size="13">%s</text></g>`, xmlEsc(title), l, xmlEsc(shown))
}

// axisLabel is the y axis's label: the unit, or the value when its unit is unknown.
func axisLabel(v, unit string) string {
	if unit == "" {
		return v
	}
	return unit
}

// xLabel is a swept value as a tick label: a number with at most 4 significant digits.
func xLabel(v string, numeric bool) string {
	if !numeric {
		return truncate(v, 14)
	}
	f, _ := strconv.ParseFloat(v, 64)
	return sig4(f)
}

func lineDash(i int) string {
	if i == 0 {
		return ""
	}
	return fmt.Sprintf(` stroke-dasharray="%d,4"`, 4+2*i)
}

func xmlEsc(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}
