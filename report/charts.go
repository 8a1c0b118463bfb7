package report

import (
	"cmp"
	"encoding/json"
	"fmt"
	"html"
	"math"
	"slices"
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

// maxStepMarks is how many timed steps a time chart marks one by one, labelled.
const maxStepMarks = 40

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

// stepMarks draws a dashed line at each timed step's actual start, labelled (labels that would
// overlap go on rows below), with a grey tick at its planned start.
//
// More than maxStepMarks steps (a long timeline) are drawn as one unlabelled line per pixel
// column that holds any, its tooltip saying which steps it stands for: the chart's size
// follows its width, not the number of steps.
func (c *timeChart) stepMarks(steps []*interp.StepRecord) {
	if len(steps) > maxStepMarks {
		steps = slices.Clone(steps)
		slices.SortStableFunc(steps, func(a, b *interp.StepRecord) int { return cmp.Compare(a.Start, b.Start) })
		for i := 0; i < len(steps); {
			xa := math.Round(c.x(steps[i].Start))
			j := i + 1
			for j < len(steps) && math.Round(c.x(steps[j].Start)) == xa {
				j++
			}
			what := html.EscapeString(stepLabel(steps[i]))
			if j-i > 1 {
				what = fmt.Sprintf("%d timed steps, %s to %s", j-i, what, html.EscapeString(stepLabel(steps[j-1])))
			}
			fmt.Fprintf(&c.b, `<line x1="%.0f" y1="%d" x2="%.0f" y2="%d" stroke="#6a1b9a" stroke-opacity="0.35"><title>%s, from %s</title></line>`,
				xa, padT, xa, padT+plotH, what, secs(steps[i].Start))
			i = j
		}
		return
	}
	xs, ws := make([]float64, len(steps)), make([]float64, len(steps))
	for i, s := range steps {
		xs[i], ws[i] = c.x(s.Start)+3, textWidth(stepLabel(s), 10)
	}
	rows := labelRows(xs, ws, false)
	for _, s := range steps {
		xa, xp := c.x(s.Start), c.x(s.Planned)
		fmt.Fprintf(&c.b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#6a1b9a" stroke-dasharray="4,3"><title>%s: planned %s, started %s (skew %s)</title></line>`,
			xa, padT, xa, padT+plotH, html.EscapeString(stepLabel(s)), secs(s.Planned), secs(s.Start), ms(s.Skew))
		fmt.Fprintf(&c.b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s" stroke-width="2"/>`, xp, padT, xp, padT+5, colorPlanned)
	}
	// The labels after every line: a later step's line crossed an earlier step's label, which
	// runs to the right of its own line.
	for i, s := range steps {
		fmt.Fprintf(&c.b, `<text x="%.1f" y="%d" fill="#6a1b9a" font-size="10" stroke="#fff" stroke-width="3" paint-order="stroke">%s</text>`, xs[i], padT+10+11*rows[i], html.EscapeString(stepLabel(s)))
	}
}

// labelRows places labels of the given widths at xs (their left edge, or their centre when
// centred) on rows so that no two on one row overlap: each takes the first row where it fits.
func labelRows(xs, widths []float64, centred bool) []int {
	idx := make([]int, len(xs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return xs[idx[a]] < xs[idx[b]] })
	rows := make([]int, len(xs))
	var ends []float64 // the right edge of the last label of each row
	for _, i := range idx {
		left := xs[i]
		if centred {
			left -= widths[i] / 2
		}
		r := 0
		for r < len(ends) && ends[r]+3 > left {
			r++
		}
		if r == len(ends) {
			ends = append(ends, 0)
		}
		ends[r] = left + widths[i]
		rows[i] = r
	}
	return rows
}

// cutText keeps at most n runes of s (at least 4), the last of them an ellipsis when it cuts.
func cutText(s string, n int) string {
	r := []rune(s)
	n = max(n, 4)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// cutMiddle keeps at most n runes of s (at least 8), cutting its middle for an ellipsis:
// names that differ at their start or at their end (snapshot_before_… and snapshot_after_…,
// …_client and …_server) stay apart.
func cutMiddle(s string, n int) string {
	r := []rune(s)
	n = max(n, 8)
	if len(r) <= n {
		return s
	}
	head := (n - 1) / 2
	return string(r[:head]) + "…" + string(r[len(r)-(n-1-head):])
}

// backendLabelRunes is how many runes of 11 px sans-serif fit in a backend's 190 pixels.
const backendLabelRunes = 28

// fitTitle cuts a chart's title, name: what, to end before x, the chart's right-hand text:
// a long step name ran under its legend or unit, hiding which colour is which code.
func fitTitle(name, what string, x float64, px float64) string {
	room := x - padL - 8 - textWidth(what, px)
	return cutMiddle(name, int(room/(px*0.6))) + what
}

// textWidth estimates the width in pixels of s in a sans-serif font of size px.
func textWidth(s string, px float64) float64 {
	return float64(len([]rune(s))) * px * 0.6
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

// niceTicks returns about n round values covering [lo, hi]. Bounds a rounding apart (two
// medians of the same figure, 0.1 and 0.10000000000000002) span nothing: the ticks cover a
// span around lo instead. Before, the step came out below the bounds' precision, v += step
// never moved, and the summary of a --count run grew its ticks until the kernel killed it.
func niceTicks(lo, hi float64, n int) []float64 {
	if math.IsNaN(lo) || math.IsInf(lo, 0) {
		lo = 0
	}
	if math.IsNaN(hi) || math.IsInf(hi, 0) {
		hi = lo
	}
	if sameBound(lo, hi) || hi < lo {
		hi = lo + math.Max(1, math.Abs(lo)/10)
	}
	raw := (hi - lo) / float64(max(n, 1))
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	var out []float64
	for v := math.Floor(lo/step) * step; v <= hi+step*1e-9 && len(out) <= 4*n+4; v += step {
		out = append(out, v)
	}
	return out
}

// sameBound reports whether an axis's bounds lo and hi are equal or a rounding apart (too
// close for a step between them to move a float64 from one to the other).
func sameBound(lo, hi float64) bool {
	return math.Abs(hi-lo) <= 1e-9*math.Max(math.Abs(lo), math.Abs(hi))
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
	case v == math.Trunc(v):
		return fmt.Sprintf("%.0f", v)
	case a >= 100:
		// 4 significant digits, not a whole number: a latency axis from 200 to 202 ms ticked
		// at every 0.5 ms read "200, 200, 201, 202, 202".
		return sig4(v)
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
	for _, t := range axisTicks(end) {
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

// interval is a value that holds from one moment to another: a counter's rate between two
// samples, a gauge sampled until the next sample, a snapshot's value until the next snapshot.
type interval struct {
	from, to time.Duration
	v        float64
}

// maxMarkers is how many points a chart marks with a dot (and a tooltip); more are drawn as
// a line only.
const maxMarkers = 80

// steps draws values that hold over intervals as a step line: level over each interval, a
// vertical where one ends and the next begins, a gap where they do not meet. A dot marks each
// observation (at the interval's end when markEnd, else its start) while there are few. When
// there are more intervals than pixels, each pixel column shows the minimum to maximum of the
// values in it (a band) and their time-weighted mean (the line): the chart's size follows its
// width, not the run's length.
func (c *timeChart) steps(ivs []interval, color string, dashed, markEnd bool) {
	if len(ivs) == 0 {
		return
	}
	dash := ""
	if dashed {
		dash = ` stroke-dasharray="4,3"`
	}
	if len(ivs) > plotW/2 {
		c.columns(ivs, color)
		return
	}
	var d strings.Builder
	for i, iv := range ivs {
		x1, x2, y := c.x(iv.from), c.x(iv.to), c.y(iv.v)
		if i > 0 && ivs[i-1].to == iv.from {
			fmt.Fprintf(&d, " V%.1f", y)
		} else {
			fmt.Fprintf(&d, " M%.1f %.1f", x1, y)
		}
		fmt.Fprintf(&d, " H%.1f", math.Max(x2, x1+0.5))
	}
	fmt.Fprintf(&c.b, `<path fill="none" stroke="%s" stroke-width="1.8"%s d="%s"/>`, color, dash, strings.TrimSpace(d.String()))
	if len(ivs) > maxMarkers {
		return
	}
	for _, iv := range ivs {
		at := iv.from
		if markEnd {
			at = iv.to
		}
		what := secs(at)
		if iv.to != iv.from {
			what = secs(iv.from) + "–" + secs(iv.to)
		}
		fmt.Fprintf(&c.b, `<circle cx="%.1f" cy="%.1f" r="2.5" fill="%s"><title>%s: %s</title></circle>`, c.x(at), c.y(iv.v), color, what, sig4(iv.v))
	}
}

// columns draws ivs one pixel column at a time: the range of values in the column as a band,
// their time-weighted mean as a line.
func (c *timeChart) columns(ivs []interval, color string) {
	type col struct {
		lo, hi, sum, w float64
		seen           bool
	}
	cols := make([]col, plotW+1)
	for _, iv := range ivs {
		a, b := int(c.x(iv.from)-padL), int(c.x(iv.to)-padL)
		for k := max(0, a); k <= min(plotW, b); k++ {
			w := math.Max(float64(iv.to-iv.from), 1) / float64(b-a+1)
			cl := &cols[k]
			if !cl.seen {
				cl.lo, cl.hi, cl.seen = iv.v, iv.v, true
			}
			cl.lo, cl.hi = math.Min(cl.lo, iv.v), math.Max(cl.hi, iv.v)
			cl.sum += iv.v * w
			cl.w += w
		}
	}
	var top, bottom []string
	var mean strings.Builder
	flush := func() {
		if len(top) > 0 {
			for i, j := 0, len(bottom)-1; i < j; i, j = i+1, j-1 {
				bottom[i], bottom[j] = bottom[j], bottom[i]
			}
			fmt.Fprintf(&c.b, `<polygon fill="%s" fill-opacity="0.2" stroke="none" points="%s"/>`, color, strings.Join(append(top, bottom...), " "))
		}
		top, bottom = nil, nil
	}
	pen := false
	for k, cl := range cols {
		if !cl.seen {
			flush()
			pen = false
			continue
		}
		x := float64(padL + k)
		top = append(top, fmt.Sprintf("%.0f,%.1f", x, c.y(cl.hi)))
		bottom = append(bottom, fmt.Sprintf("%.0f,%.1f", x, c.y(cl.lo)))
		if pen {
			fmt.Fprintf(&mean, " L%.0f %.1f", x, c.y(cl.sum/cl.w))
		} else {
			fmt.Fprintf(&mean, " M%.0f %.1f", x, c.y(cl.sum/cl.w))
			pen = true
		}
	}
	flush()
	fmt.Fprintf(&c.b, `<path fill="none" stroke="%s" stroke-width="1.5" d="%s"/>`, color, strings.TrimSpace(mean.String()))
}

// plannedMarks draws, along the bottom, a grey tick at each planned time and a dark one at
// each actual start: the skew of sampling, visible. More samples than a chart has room for
// are summed up in its corner instead (the steps table lists their skew too).
func (c *timeChart) plannedMarks(samples []*interp.StepRecord) {
	y := float64(padT + plotH)
	if len(samples) > plotW/4 {
		var skews []time.Duration
		for _, s := range samples {
			if s.Timed {
				skews = append(skews, s.Skew)
			}
		}
		if len(skews) > 0 {
			sort.Slice(skews, func(a, b int) bool { return skews[a] < skews[b] })
			fmt.Fprintf(&c.b, `<text x="%d" y="%.1f" text-anchor="end" fill="#666" font-size="10">%d samples; skew p50 %s, max %s</text>`, chartW-padR, y-4, len(samples), ms(skews[len(skews)/2]), ms(skews[len(skews)-1]))
		}
		return
	}
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
	ivs     []interval
}

// seriesStats returns every stat of s that changes, counters turned into per-second rates
// over each interval between two consecutive samples, gauges held from one sample to the next.
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
	at := func(i int) time.Duration { return s.Samples[i].At.Sub(rec.Start) }
	var out []statSeries
	for _, name := range sortedKeys(stats) {
		a := stats[name]
		ss := statSeries{name: name, counter: a.counter}
		changing := false
		first, seen := 0.0, false
		for i := range s.Samples {
			v, ok := a.vals[i]
			if ok && !seen {
				first, seen = v, true
			}
			if ok && v != first {
				changing = true
			}
			if !a.counter {
				if ok {
					to := at(i)
					if i+1 < len(s.Samples) {
						to = at(i + 1)
					}
					ss.ivs = append(ss.ivs, interval{at(i), to, v})
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
			dt := s.Samples[i].At.Sub(s.Samples[i-1].At).Seconds()
			if dt <= 0 || v < prev || otherPod(s.Samples[i-1], s.Samples[i]) { // a reset, or two Envoys' counters, has no rate
				continue
			}
			ss.ivs = append(ss.ivs, interval{at(i - 1), at(i), (v - prev) / dt})
		}
		// A stat an expectation reads is drawn even when flat: flat is the finding then.
		if (changing || named(name)) && len(ss.ivs) > 0 {
			out = append(out, ss)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return named(out[i].name) && !named(out[j].name) })
	return out
}

// otherPod reports whether two samples of a series say they read two different pods (a
// selector that picked another pod between them): a counter's difference between them is
// no rate, and the chart marks the change.
func otherPod(a, b *interp.SnapshotRecord) bool {
	return a != nil && b != nil && a.Pod != "" && b.Pod != "" && !a.SamePod(b)
}

// podChange is a moment at which a series' samples start reading another pod.
type podChange struct {
	at  time.Duration
	pod string
}

// podChanges are the moments at which snapshots of one source (a series' samples) read
// another pod than the one before (a snapshot that does not say its pod is taken as the pod
// before it, as SeriesRecord.PodChange does).
func podChanges(rec *interp.Record, snaps []*interp.SnapshotRecord) []podChange {
	var out []podChange
	var last *interp.SnapshotRecord
	for _, smp := range snaps {
		if smp == nil || smp.Pod == "" {
			continue
		}
		if last != nil && !last.SamePod(smp) {
			out = append(out, podChange{smp.At.Sub(rec.Start), smp.PodName(last)})
		}
		last = smp
	}
	return out
}

// podMarks draws an orange line where the samples start reading another pod, labelled with
// that pod: the values on either side are two Envoys'.
func (c *timeChart) podMarks(changes []podChange) {
	for _, ch := range changes {
		x := c.x(ch.at)
		label := "→ pod " + ch.pod
		fmt.Fprintf(&c.b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#e65100" stroke-width="1.5" stroke-dasharray="2,2"><title>from %s the samples read pod %s: another Envoy, whose counters are not the earlier pod's</title></line>`,
			x, padT, x, padT+plotH, secs(ch.at), html.EscapeString(ch.pod))
		anchor, tx := "start", x+3
		if x+3+textWidth(label, 10) > chartW-padR {
			anchor, tx = "end", x-3
		}
		fmt.Fprintf(&c.b, `<text x="%.1f" y="%d" text-anchor="%s" fill="#e65100" font-size="10" stroke="#fff" stroke-width="3" paint-order="stroke">%s</text>`, tx, padT+plotH-4, anchor, html.EscapeString(label))
	}
}

// maxStatCharts bounds the charts of one series; the rest are listed by name.
const maxStatCharts = 24

func statChart(rec *interp.Record, ss statSeries, samples []*interp.StepRecord, changes []podChange) string {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, iv := range ss.ivs {
		lo, hi = math.Min(lo, iv.v), math.Max(hi, iv.v)
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
	c.podMarks(changes)
	c.steps(ss.ivs, colorLine, false, ss.counter)
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
	// The legend, right-aligned in the title line, left of the unit; the title cut to end
	// before it.
	const unit = "per second"
	legendW := 0.0
	for _, code := range order {
		legendW += 12 + textWidth(code, 11) + 8
	}
	lx := float64(chartW-padR) - textWidth(unit, 11) - 10 - legendW
	c := newTimeChart(fitTitle(stepLabel(step), ": responses by code", lx, 11), unit, rec.End.Sub(rec.Start), 0, hi, nil)
	for _, b := range buckets {
		at := step.Start + b.AtNs
		// A bucket is as wide as the load lasted into it: a load of 2 ms in a run of 11 ms
		// drew its 250 ms bucket to the run's end, responses where there were none.
		w := math.Max(1, c.x(min(at+width, max(step.End, at)))-c.x(at)-0.5)
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
	x := lx
	for _, code := range order {
		fmt.Fprintf(&c.b, `<rect x="%.1f" y="5" width="9" height="9" fill="%s"/><text x="%.1f" y="14">%s</text>`, x, codeColor(code), x+12, html.EscapeString(code))
		x += 12 + textWidth(code, 11) + 8
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

// latencyBins is about how many bars a latency histogram has.
const latencyBins = 30

// latencyChart draws fortio's latency histogram of a load (ms on the x axis, requests on y),
// with its percentiles marked. The bars are bins of one round width fitted to the data, from
// the fastest to the slowest request, about latencyBins of them but never narrower than the
// finest bucket fortio recorded (its buckets widen with the latency): each bucket's requests
// go to the bins it overlaps, in proportion.
func latencyChart(name, what string, raw []byte) string {
	var h fortioHistogram
	if err := json.Unmarshal(raw, &h); err != nil || len(h.DurationHistogram.Data) == 0 {
		return ""
	}
	d := h.DurationHistogram.Data
	lo, hi := d[0].Start*1000, d[len(d)-1].End*1000
	finest := math.Inf(1)
	for i, b := range d {
		// The first and last buckets are cut at the fastest and slowest request.
		if w := (b.End - b.Start) * 1000; w > 0 && (i > 0 && i < len(d)-1 || len(d) <= 2) {
			finest = math.Min(finest, w)
		}
	}
	width := niceWidth((hi - lo) / latencyBins)
	if !math.IsInf(finest, 1) {
		width = math.Max(width, niceWidth(finest*0.999))
	}
	if hi <= lo || width <= 0 {
		width = math.Max(width, 0.001)
		hi = lo + width
	}
	first := math.Floor(lo/width) * width
	n := max(1, int(math.Ceil((hi-first)/width-1e-9)))
	bins := make([]float64, n)
	for _, b := range d {
		s, e := b.Start*1000, b.End*1000
		if e <= s {
			bins[min(n-1, max(0, int((s-first)/width)))] += float64(b.Count)
			continue
		}
		for k := max(0, int((s-first)/width)); k < n; k++ {
			bs, be := first+float64(k)*width, first+float64(k+1)*width
			if bs >= e {
				break
			}
			bins[k] += float64(b.Count) * (math.Min(be, e) - math.Max(bs, s)) / (e - s)
		}
	}
	axisLo, axisHi := first, first+float64(n)*width
	maxCount := 1.0
	for _, c := range bins {
		maxCount = math.Max(maxCount, c)
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, `<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">`, chartW, chartH, chartW, chartH)
	unit := fmt.Sprintf("requests per %s ms by latency (ms)", sig4(width))
	title := fitTitle(name, what, float64(chartW-padR)-textWidth(unit, 11)-10, 11)
	fmt.Fprintf(&sb, `<text x="%d" y="14" font-weight="bold"><title>%s%s</title>%s</text><text x="%d" y="14" text-anchor="end" fill="#666">%s</text>`, padL, html.EscapeString(name), html.EscapeString(what), html.EscapeString(title), chartW-padR, unit)
	x := func(v float64) float64 { return padL + (v-axisLo)/(axisHi-axisLo)*plotW }
	y := func(c float64) float64 { return padT + (1-c/maxCount)*plotH }
	for _, t := range niceTicks(0, maxCount, 4) {
		if t > maxCount {
			continue
		}
		fmt.Fprintf(&sb, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#eee"/><text x="%d" y="%.1f" text-anchor="end" fill="#555">%s</text>`, padL, y(t), chartW-padR, y(t), padL-4, y(t)+4, fmtNum(t))
	}
	for _, t := range niceTicks(axisLo, axisHi, 6) {
		if t < axisLo-1e-9 || t > axisHi+1e-9 {
			continue
		}
		fmt.Fprintf(&sb, `<text x="%.1f" y="%d" text-anchor="middle" fill="#555">%s</text>`, x(t), chartH-8, fmtNum(t))
	}
	for k, c := range bins {
		if c == 0 {
			continue
		}
		bs := first + float64(k)*width
		x1, x2 := x(bs), x(bs+width)
		fmt.Fprintf(&sb, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s–%s ms: %s</title></rect>`,
			x1, y(c), math.Max(1, x2-x1-0.5), float64(padT+plotH)-y(c), colorLine, sig4(bs), sig4(bs+width), sig4(c))
	}
	ps := h.DurationHistogram.Percentiles
	xs, ws := make([]float64, len(ps)), make([]float64, len(ps))
	labels := make([]string, len(ps))
	for i, p := range ps {
		labels[i] = "p" + trimZero(fmt.Sprintf("%g", p.Percentile))
		xs[i], ws[i] = x(p.Value*1000), textWidth(labels[i], 11)
	}
	// A label is centred on its line but kept within the plot: p50 of a fast load, at the
	// axis, covered the y axis's top number ("40" read "4").
	lx := make([]float64, len(ps))
	for i := range ps {
		lx[i] = min(max(xs[i], float64(padL)+ws[i]/2+2), float64(chartW-padR)-ws[i]/2)
	}
	rows := labelRows(lx, ws, true)
	// Every line first, then every label on them: a line drawn after a neighbour's label
	// struck it through (p99.9's through p99's, p90's through p50's), where the labels sit
	// within a few pixels of each other.
	for i, p := range ps {
		fmt.Fprintf(&sb, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#c62828" stroke-dasharray="3,2"><title>%s: %s ms</title></line>`,
			xs[i], padT, xs[i], padT+plotH, labels[i], sig4(p.Value*1000))
	}
	for i := range ps {
		fmt.Fprintf(&sb, `<text x="%.1f" y="%d" fill="#c62828" text-anchor="middle" stroke="#fff" stroke-width="3" paint-order="stroke">%s</text>`,
			lx[i], padT+10+12*rows[i], labels[i])
	}
	fmt.Fprintf(&sb, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#999"/></svg>`, padL, padT+plotH, chartW-padR, padT+plotH)
	return sb.String()
}

// niceWidth is the smallest of 1, 2, 2.5 or 5 times a power of ten that is at least w.
func niceWidth(w float64) float64 {
	if w <= 0 || math.IsNaN(w) || math.IsInf(w, 0) {
		return 0
	}
	mag := math.Pow(10, math.Floor(math.Log10(w)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= w*(1-1e-9) {
			return m * mag
		}
	}
	return 10 * mag
}

// backendsChart draws a load's connects by destination address (the per-backend split
// fortio records: the connects it tried, a refused one too) as horizontal bars.
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
	fmt.Fprintf(&s, `<text x="8" y="14" font-weight="bold">%s: connects by backend (tried, a refused one too)</text>`, html.EscapeString(name))
	for i, a := range addrs {
		label, shown := a, a
		if n := names[a]; n != "" {
			label, shown = n+" "+a, cutMiddle(n, backendLabelRunes-len(a)-1)+" "+a
		}
		y := padT + i*rowH
		w := ips[a] / maxV * (chartW - 200 - padR - 40)
		// A label wider than its 190 pixels ran off the chart's left edge, the backend's name
		// with it: cut in the middle, whole in its tooltip.
		fmt.Fprintf(&s, `<text x="196" y="%d" text-anchor="end"><title>%s</title>%s</text><rect x="200" y="%d" width="%.1f" height="%d" fill="%s"/><text x="%.1f" y="%d">%s</text>`,
			y+12, html.EscapeString(label), html.EscapeString(cutMiddle(shown, backendLabelRunes)), y+2, math.Max(1, w), rowH-6, colorLine, 204+w, y+12, fmtNum(ips[a]))
	}
	s.WriteString("</svg>")
	return s.String()
}

// sourceColors tell the sources of a snapshot chart apart.
var sourceColors = []string{"#1565c0", "#c62828", "#2e7d32", "#ef6c00", "#6a1b9a", "#00838f"}

// snapshotChart is the chart of one counter at every snapshot.
type snapshotChart struct {
	stat, svg string
}

// snapshotCharts draws, for each counter an expectation reads, its value at every snapshot of
// every source that has it, one line per source (backends over time, in the quickstart: a keeps
// counting after the flip, b starts), on the run's time axis with the timed steps marked. A
// snapshot's value holds, dashed, until the next snapshot: what happened in between was not
// observed, and a straight line from one to the next would invent it.
func snapshotCharts(rec *interp.Record) []snapshotChart {
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
	var out []snapshotChart
	for _, stat := range stats {
		type line struct {
			src string
			ivs []interval
		}
		var lines []line
		hi := 0.0
		for _, src := range sources {
			l := line{src: src}
			var at []time.Duration
			var vs []float64
			for _, s := range bySource[src] {
				if v, ok := s.Counters[stat]; ok {
					at = append(at, s.At.Sub(rec.Start))
					vs = append(vs, v)
					hi = math.Max(hi, v)
				}
			}
			for i := range at {
				to := at[i]
				if i+1 < len(at) {
					to = at[i+1]
				}
				l.ivs = append(l.ivs, interval{at[i], to, vs[i]})
			}
			if len(l.ivs) >= 2 {
				lines = append(lines, l)
			}
		}
		if len(lines) == 0 {
			continue
		}
		c := newTimeChart(stat, "", rec.End.Sub(rec.Start), 0, hi, loadSpans(rec))
		c.stepMarks(timedSteps(rec))
		for _, l := range lines {
			c.podMarks(podChanges(rec, bySource[l.src]))
		}
		// The legend, right-aligned in the title line; sources' names (an Envoy cluster's are
		// long) cut to the room the title leaves, whole in their tooltip.
		room := float64(chartW-padR-padL-12) - textWidth(stat, 12)
		labels := make([]string, len(lines))
		width := 0.0
		for i, l := range lines {
			labels[i] = cutText(l.src, int((room/float64(len(lines))-18)/(11*0.6)))
			width += 18 + textWidth(labels[i], 11)
		}
		x := float64(chartW-padR) - width
		for i, l := range lines {
			color := sourceColors[i%len(sourceColors)]
			c.steps(l.ivs, color, true, false)
			fmt.Fprintf(&c.b, `<g><title>%s</title><rect x="%.1f" y="5" width="9" height="9" fill="%s"/><text x="%.1f" y="14">%s</text></g>`, html.EscapeString(l.src), x, color, x+12, html.EscapeString(labels[i]))
			x += 18 + textWidth(labels[i], 11)
		}
		out = append(out, snapshotChart{stat: stat, svg: c.String()})
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
