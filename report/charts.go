package report

import (
	"encoding/json"
	"fmt"
	"html"
	"math"
	"sort"
	"strings"
	"time"

	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/schema"
)

// The HTML report's charts: small inline SVGs, each with its own axis. Time axes are the
// run's (0 = the start of the run, to its end), with the spans of the loads shaded, so that
// every chart lines up with the timeline.

const (
	chartW, chartH                     = 560, 150
	padL, padR, padT, padB             = 56, 12, 22, 26
	plotW                              = chartW - padL - padR
	plotH                              = chartH - padT - padB
	colorLine, colorBand, colorPlanned = "#1565c0", "#e3f2fd", "#9e9e9e"
)

// span is a shaded stretch of the run's time axis.
type span struct {
	from, to time.Duration
	label    string
}

// timedSteps are the steps of a run with a planned time of their own (at), not samples: each
// time chart marks them, so a change in a chart lines up with what caused it (a DNS flip).
func timedSteps(rec *interp.Record) []*interp.StepRecord {
	var out []*interp.StepRecord
	for _, s := range rec.Steps {
		if s.Timed && s.Sample == 0 {
			out = append(out, s)
		}
	}
	return out
}

// stepMarks draws a dashed line at each timed step's actual start, labelled, with a grey tick
// at its planned start.
func (c *timeChart) stepMarks(steps []*interp.StepRecord) {
	for _, s := range steps {
		xa, xp := c.x(s.Start), c.x(s.Planned)
		fmt.Fprintf(&c.b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#6a1b9a" stroke-dasharray="4,3"><title>%s: planned %s, started %s (skew %s)</title></line>`,
			xa, padT, xa, padT+plotH, html.EscapeString(stepLabel(s)), secs(s.Planned), secs(s.Start), ms(s.Skew))
		fmt.Fprintf(&c.b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s" stroke-width="2"/>`, xp, padT, xp, padT+5, colorPlanned)
		fmt.Fprintf(&c.b, `<text x="%.1f" y="%d" fill="#6a1b9a" font-size="10" stroke="#fff" stroke-width="3" paint-order="stroke">%s</text>`, xa+3, padT+10, html.EscapeString(stepLabel(s)))
	}
}

// loadSpans are the loads of a run, for shading.
func loadSpans(rec *interp.Record) []span {
	var out []span
	for _, s := range rec.Steps {
		if s.Kind == "load" {
			out = append(out, span{s.Start, s.End, stepLabel(s)})
		}
	}
	return out
}

func stepLabel(s *interp.StepRecord) string {
	if s.Name != "" {
		return s.Name
	}
	return s.Path
}

// niceTicks returns about n round values covering [lo, hi].
func niceTicks(lo, hi float64, n int) []float64 {
	if hi <= lo {
		hi = lo + 1
	}
	raw := (hi - lo) / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	var out []float64
	for v := math.Floor(lo/step) * step; v <= hi+step*1e-9; v += step {
		out = append(out, v)
	}
	return out
}

// fmtNum prints an axis value compactly: 1.2k, 3.4M, 0.25.
func fmtNum(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 1e9:
		return trimZero(fmt.Sprintf("%.1f", v/1e9)) + "G"
	case a >= 1e6:
		return trimZero(fmt.Sprintf("%.1f", v/1e6)) + "M"
	case a >= 1e4:
		return trimZero(fmt.Sprintf("%.1f", v/1e3)) + "k"
	case a >= 100 || v == math.Trunc(v):
		return fmt.Sprintf("%.0f", v)
	case a >= 1:
		return trimZero(fmt.Sprintf("%.2f", v))
	}
	return trimZero(fmt.Sprintf("%.3f", v))
}

func trimZero(s string) string {
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// timeChart is a chart over the run's time axis.
type timeChart struct {
	b        strings.Builder
	end      time.Duration
	lo, hi   float64
	title    string
	unit     string
	finished bool
}

func newTimeChart(title, unit string, end time.Duration, lo, hi float64, spans []span) *timeChart {
	if end <= 0 {
		end = time.Second
	}
	if hi <= lo {
		hi = lo + 1
	}
	c := &timeChart{end: end, title: title, unit: unit}
	ticks := niceTicks(lo, hi, 4)
	c.lo, c.hi = math.Min(lo, ticks[0]), math.Max(hi, ticks[len(ticks)-1])
	fmt.Fprintf(&c.b, `<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">`, chartW, chartH, chartW, chartH)
	fmt.Fprintf(&c.b, `<text x="%d" y="14" font-weight="bold">%s</text>`, padL, html.EscapeString(title))
	if unit != "" {
		fmt.Fprintf(&c.b, `<text x="%d" y="14" text-anchor="end" fill="#666">%s</text>`, chartW-padR, html.EscapeString(unit))
	}
	for _, s := range spans {
		x1, x2 := c.x(s.from), c.x(s.to)
		fmt.Fprintf(&c.b, `<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s"><title>%s</title></rect>`, x1, padT, math.Max(1, x2-x1), plotH, colorBand, html.EscapeString(s.label))
	}
	for _, v := range ticks {
		y := c.y(v)
		fmt.Fprintf(&c.b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#eee"/><text x="%d" y="%.1f" text-anchor="end" fill="#555">%s</text>`, padL, y, chartW-padR, y, padL-4, y+4, fmtNum(v))
	}
	step := niceStep(end)
	for t := time.Duration(0); t <= end; t += step {
		fmt.Fprintf(&c.b, `<text x="%.1f" y="%d" text-anchor="middle" fill="#555">%s</text>`, c.x(t), chartH-8, fmtAxis(t))
	}
	fmt.Fprintf(&c.b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#999"/>`, padL, padT+plotH, chartW-padR, padT+plotH)
	fmt.Fprintf(&c.b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#999"/>`, padL, padT, padL, padT+plotH)
	return c
}

func (c *timeChart) x(t time.Duration) float64 {
	return padL + math.Max(0, math.Min(1, float64(t)/float64(c.end)))*plotW
}

func (c *timeChart) y(v float64) float64 {
	return padT + (1-(v-c.lo)/(c.hi-c.lo))*plotH
}

func (c *timeChart) line(ts []time.Duration, vs []float64, color string) {
	var pts []string
	for i := range ts {
		if !math.IsNaN(vs[i]) {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", c.x(ts[i]), c.y(vs[i])))
		}
	}
	if len(pts) == 1 {
		pts = append(pts, pts[0])
	}
	fmt.Fprintf(&c.b, `<polyline fill="none" stroke="%s" stroke-width="1.8" points="%s"/>`, color, strings.Join(pts, " "))
	for i := range ts {
		if !math.IsNaN(vs[i]) {
			fmt.Fprintf(&c.b, `<circle cx="%.1f" cy="%.1f" r="2" fill="%s"><title>%s: %s</title></circle>`, c.x(ts[i]), c.y(vs[i]), color, secs(ts[i]), fmtNum(vs[i]))
		}
	}
}

// plannedMarks draws, along the bottom, a grey tick at each planned time and a dark one at
// each actual start, joined when they differ: the skew of sampling, visible.
func (c *timeChart) plannedMarks(samples []*interp.StepRecord) {
	y := float64(padT + plotH)
	for _, s := range samples {
		if !s.Timed {
			continue
		}
		xp, xa := c.x(s.Planned), c.x(s.Start)
		fmt.Fprintf(&c.b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s"><title>planned %s</title></line>`, xp, y-6, xp, y, colorPlanned, secs(s.Planned))
		fmt.Fprintf(&c.b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333"><title>started %s (skew %s)</title></line>`, xa, y-3, xa, y+3, secs(s.Start), ms(s.Skew))
	}
}

func (c *timeChart) String() string {
	if !c.finished {
		c.b.WriteString("</svg>")
		c.finished = true
	}
	return c.b.String()
}

// statSeries is one stat of a sampled series over the run's time axis; counters as rates.
type statSeries struct {
	name    string
	counter bool
	ts      []time.Duration
	vs      []float64
}

// seriesStats returns every stat of s that changes, counters turned into per-second rates
// between consecutive samples (placed at the later sample).
func seriesStats(rec *interp.Record, s *interp.SeriesRecord) []statSeries {
	type acc struct {
		counter bool
		vals    map[int]float64
	}
	stats := map[string]*acc{}
	for i, smp := range s.Samples {
		for k, v := range smp.Counters {
			if stats[k] == nil {
				stats[k] = &acc{counter: true, vals: map[int]float64{}}
			}
			stats[k].vals[i] = v
		}
		for _, m := range []map[string]float64{smp.Gauges, smp.Histograms} {
			for k, v := range m {
				if stats[k] == nil {
					stats[k] = &acc{vals: map[int]float64{}}
				}
				stats[k].vals[i] = v
			}
		}
	}
	// The stats the expectations name come first.
	named := func(n string) bool {
		for _, j := range rec.Expectations {
			if strings.Contains(j.Src, n) {
				return true
			}
		}
		return false
	}
	var out []statSeries
	for _, name := range sortedKeys(stats) {
		a := stats[name]
		ss := statSeries{name: name, counter: a.counter}
		changing := false
		first, seen := 0.0, false
		for i, smp := range s.Samples {
			v, ok := a.vals[i]
			if ok && !seen {
				first, seen = v, true
			}
			if ok && v != first {
				changing = true
			}
			at := smp.At.Sub(rec.Start)
			if !a.counter {
				ss.ts = append(ss.ts, at)
				if ok {
					ss.vs = append(ss.vs, v)
				} else {
					ss.vs = append(ss.vs, math.NaN())
				}
				continue
			}
			prev, okPrev := a.vals[i-1]
			if i == 0 || !ok {
				continue
			}
			if !okPrev {
				prev = 0 // a counter appears at its first count: absent before is 0
			}
			dt := smp.At.Sub(s.Samples[i-1].At).Seconds()
			if dt <= 0 || v < prev { // a reset has no rate
				continue
			}
			ss.ts = append(ss.ts, at)
			ss.vs = append(ss.vs, (v-prev)/dt)
		}
		// A stat an expectation reads is drawn even when flat: flat is the finding then.
		if (changing || named(name)) && len(ss.ts) > 0 {
			out = append(out, ss)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return named(out[i].name) && !named(out[j].name) })
	return out
}

// maxStatCharts bounds the charts of one series; the rest are listed by name.
const maxStatCharts = 24

func statChart(rec *interp.Record, ss statSeries, samples []*interp.StepRecord) string {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range ss.vs {
		if !math.IsNaN(v) {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	if lo > 0 {
		lo = 0
	}
	unit := "value"
	if ss.counter {
		unit = "per second"
	}
	c := newTimeChart(ss.name, unit, rec.End.Sub(rec.Start), lo, hi, loadSpans(rec))
	c.plannedMarks(samples)
	c.stepMarks(timedSteps(rec))
	c.line(ss.ts, ss.vs, colorLine)
	return c.String()
}

// codeColors: 2xx green, 3xx blue, 4xx orange, 5xx red, socket errors grey.
func codeColor(code string) string {
	switch {
	case strings.HasPrefix(code, "2"):
		return "#2e7d32"
	case strings.HasPrefix(code, "3"):
		return "#1565c0"
	case strings.HasPrefix(code, "4"):
		return "#ef6c00"
	case strings.HasPrefix(code, "5"):
		return "#c62828"
	}
	return "#757575"
}

// codesChart draws a load's responses per second by code, stacked, over the run's time axis.
func codesChart(rec *interp.Record, step *interp.StepRecord, data []byte) string {
	var buckets []schema.CodesOverTime
	if err := json.Unmarshal(data, &buckets); err != nil || len(buckets) == 0 {
		return ""
	}
	// Wider bars for longer loads: at 10 qps a 250 ms bucket holds 2 or 3 requests, and the
	// chart would show that quantisation rather than the rate.
	width := max(schema.CodesBucket, niceStep(step.End-step.Start))
	merged := map[time.Duration]map[string]int{}
	for _, b := range buckets {
		at := b.AtNs / width * width
		if merged[at] == nil {
			merged[at] = map[string]int{}
		}
		for c, n := range b.Codes {
			merged[at][c] += n
		}
	}
	buckets = buckets[:0]
	for at, c := range merged {
		buckets = append(buckets, schema.CodesOverTime{AtNs: at, Codes: c})
	}
	sort.Slice(buckets, func(i, j int) bool { return buckets[i].AtNs < buckets[j].AtNs })
	// A rate is per second of the load: a load shorter than a bucket counts its own duration
	// (60 requests in 4 ms are 15,000/s, not 240/s). A partial last bucket is not stretched: a
	// single request in its last 3 ms would read as a spike.
	denom := width
	if d := step.End - step.Start; d > 0 && d < width {
		denom = d
	}
	perSec := func(time.Duration) float64 { return float64(time.Second) / float64(denom) }
	hi := 0.0
	codes := map[string]bool{}
	for _, b := range buckets {
		sum := 0
		for c, n := range b.Codes {
			sum += n
			codes[c] = true
		}
		hi = math.Max(hi, float64(sum)*perSec(b.AtNs))
	}
	order := sortedKeys(codes)
	c := newTimeChart(stepLabel(step)+": responses by code", "per second", rec.End.Sub(rec.Start), 0, hi, nil)
	for _, b := range buckets {
		at := step.Start + b.AtNs
		w := math.Max(1, c.x(at+width)-c.x(at)-0.5)
		base := 0.0
		for _, code := range order {
			n := float64(b.Codes[code]) * perSec(b.AtNs)
			if n == 0 {
				continue
			}
			y1, y2 := c.y(base+n), c.y(base)
			fmt.Fprintf(&c.b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s at %s: %s/s</title></rect>`, c.x(at), y1, w, y2-y1, codeColor(code), html.EscapeString(code), secs(at), fmtNum(n))
			base += n
		}
	}
	c.stepMarks(timedSteps(rec))
	// The legend, right-aligned in the title line, left of the unit.
	x := float64(chartW - padR - 70 - 30*len(order))
	for _, code := range order {
		fmt.Fprintf(&c.b, `<rect x="%.1f" y="5" width="9" height="9" fill="%s"/><text x="%.1f" y="14">%s</text>`, x, codeColor(code), x+12, html.EscapeString(code))
		x += 30
	}
	return c.String()
}

// fortioHistogram is the part of fortio's JSON result that holds the latency histogram.
type fortioHistogram struct {
	DurationHistogram struct {
		Count int64
		Data  []struct {
			Start, End float64
			Count      int64
		}
		Percentiles []struct {
			Percentile, Value float64
		}
	}
}

// latencyChart draws fortio's latency histogram of a load (ms on the x axis, requests on y),
// with its percentiles marked.
func latencyChart(name string, raw []byte) string {
	var h fortioHistogram
	if err := json.Unmarshal(raw, &h); err != nil || len(h.DurationHistogram.Data) == 0 {
		return ""
	}
	d := h.DurationHistogram.Data
	lo, hi := d[0].Start*1000, d[len(d)-1].End*1000
	if hi <= lo {
		hi = lo + 1
	}
	maxCount := int64(1)
	for _, b := range d {
		maxCount = max(maxCount, b.Count)
	}
	var s strings.Builder
	fmt.Fprintf(&s, `<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">`, chartW, chartH, chartW, chartH)
	fmt.Fprintf(&s, `<text x="%d" y="14" font-weight="bold">%s: latency histogram</text><text x="%d" y="14" text-anchor="end" fill="#666">requests by latency (ms)</text>`, padL, html.EscapeString(name), chartW-padR)
	x := func(v float64) float64 { return padL + (v-lo)/(hi-lo)*plotW }
	y := func(n float64) float64 { return padT + (1-n/float64(maxCount))*plotH }
	for _, t := range niceTicks(0, float64(maxCount), 4) {
		if t > float64(maxCount) {
			continue
		}
		fmt.Fprintf(&s, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#eee"/><text x="%d" y="%.1f" text-anchor="end" fill="#555">%s</text>`, padL, y(t), chartW-padR, y(t), padL-4, y(t)+4, fmtNum(t))
	}
	for _, t := range niceTicks(lo, hi, 6) {
		if t < lo || t > hi {
			continue
		}
		fmt.Fprintf(&s, `<text x="%.1f" y="%d" text-anchor="middle" fill="#555">%s</text>`, x(t), chartH-8, fmtNum(t))
	}
	for _, b := range d {
		x1, x2 := x(b.Start*1000), x(b.End*1000)
		fmt.Fprintf(&s, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s–%s ms: %d</title></rect>`,
			x1, y(float64(b.Count)), math.Max(1, x2-x1-0.5), float64(padT+plotH)-y(float64(b.Count)), colorLine, fmtNum(b.Start*1000), fmtNum(b.End*1000), b.Count)
	}
	for _, p := range h.DurationHistogram.Percentiles {
		px := x(p.Value * 1000)
		fmt.Fprintf(&s, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#c62828" stroke-dasharray="3,2"/><text x="%.1f" y="%d" fill="#c62828" text-anchor="middle">p%s</text>`,
			px, padT, px, padT+plotH, px, padT+10, trimZero(fmt.Sprintf("%g", p.Percentile)))
	}
	fmt.Fprintf(&s, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#999"/></svg>`, padL, padT+plotH, chartW-padR, padT+plotH)
	return s.String()
}

// backendsChart draws a load's connections by destination address (the per-backend split
// fortio records) as horizontal bars.
func backendsChart(name string, ips map[string]float64, names map[string]string) string {
	if len(ips) == 0 {
		return ""
	}
	addrs := sortedKeys(ips)
	maxV := 1.0
	for _, a := range addrs {
		maxV = math.Max(maxV, ips[a])
	}
	const rowH = 18
	h := padT + rowH*len(addrs) + 8
	var s strings.Builder
	fmt.Fprintf(&s, `<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">`, chartW, h, chartW, h)
	fmt.Fprintf(&s, `<text x="8" y="14" font-weight="bold">%s: connections by backend</text>`, html.EscapeString(name))
	for i, a := range addrs {
		label := a
		if n := names[a]; n != "" {
			label = n + " " + a
		}
		y := padT + i*rowH
		w := ips[a] / maxV * (chartW - 200 - padR - 40)
		fmt.Fprintf(&s, `<text x="196" y="%d" text-anchor="end">%s</text><rect x="200" y="%d" width="%.1f" height="%d" fill="%s"/><text x="%.1f" y="%d">%s</text>`,
			y+12, html.EscapeString(label), y+2, math.Max(1, w), rowH-6, colorLine, 204+w, y+12, fmtNum(ips[a]))
	}
	s.WriteString("</svg>")
	return s.String()
}

// sourceColors tell the sources of a snapshot chart apart.
var sourceColors = []string{"#1565c0", "#c62828", "#2e7d32", "#ef6c00", "#6a1b9a", "#00838f"}

// snapshotCharts draws, for each counter an expectation reads, its value at every snapshot of
// every source that has it, one line per source (backends over time, in the quickstart: a keeps
// counting after the flip, b starts), on the run's time axis with the timed steps marked.
func snapshotCharts(rec *interp.Record) []string {
	names := snapshotOrder(rec)
	bySource := map[string][]*interp.SnapshotRecord{}
	var sources []string
	for _, n := range names {
		s := rec.Snapshot(n)
		if _, ok := bySource[s.Source]; !ok {
			sources = append(sources, s.Source)
		}
		bySource[s.Source] = append(bySource[s.Source], s)
	}
	var stats []string
	seen := map[string]bool{}
	for _, j := range rec.Expectations {
		for _, src := range sources {
			for _, s := range bySource[src] {
				for k := range s.Counters {
					if !seen[k] && strings.Contains(j.Src, k) && isWordAt(j.Src, k) {
						seen[k] = true
						stats = append(stats, k)
					}
				}
			}
		}
	}
	sort.Strings(stats)
	var out []string
	for _, stat := range stats {
		type line struct {
			src string
			ts  []time.Duration
			vs  []float64
		}
		var lines []line
		hi := 0.0
		for _, src := range sources {
			l := line{src: src}
			for _, s := range bySource[src] {
				if v, ok := s.Counters[stat]; ok {
					l.ts = append(l.ts, s.At.Sub(rec.Start))
					l.vs = append(l.vs, v)
					hi = math.Max(hi, v)
				}
			}
			if len(l.ts) >= 2 {
				lines = append(lines, l)
			}
		}
		if len(lines) == 0 {
			continue
		}
		c := newTimeChart(stat+" at each snapshot", "cumulative", rec.End.Sub(rec.Start), 0, hi, loadSpans(rec))
		c.stepMarks(timedSteps(rec))
		x := float64(padL + 8)
		for i, l := range lines {
			color := sourceColors[i%len(sourceColors)]
			c.line(l.ts, l.vs, color)
			fmt.Fprintf(&c.b, `<rect x="%.1f" y="%d" width="9" height="9" fill="%s"/><text x="%.1f" y="%d">%s</text>`, x, padT+4, color, x+12, padT+12, html.EscapeString(l.src))
			x += 24 + 6*float64(len([]rune(l.src)))
		}
		out = append(out, c.String())
	}
	return out
}

// isWordAt reports whether name occurs in src as a whole name (rq_total, not rq_total_x).
func isWordAt(src, name string) bool {
	for i := 0; ; {
		j := strings.Index(src[i:], name)
		if j < 0 {
			return false
		}
		a, b := i+j, i+j+len(name)
		okA := a == 0 || !isNameByte(src[a-1])
		okB := b == len(src) || !isNameByte(src[b])
		if okA && okB {
			return true
		}
		i = a + 1
	}
}

func isNameByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
