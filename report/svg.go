package report

import (
	"cmp"
	"fmt"
	"html"
	"math"
	"slices"
	"strings"
	"time"

	"labrun.dev/labrun/interp"
)

// timelineRow is a row of the timeline: a step's executions.
type timelineRow struct {
	label, kind string
	steps       []*interp.StepRecord
	// merged: the row holds the steps of many rows (a long timeline's middle).
	merged bool
}

// text is the row's label and kind: "before (snapshot)".
func (r *timelineRow) text() string {
	if r.kind == "" {
		return r.label
	}
	return fmt.Sprintf("%s (%s)", r.label, r.kind)
}

// fit is text cut to px pixels of 12 px sans-serif: the label cut in the middle, the kind
// kept whole.
func (r *timelineRow) fit(px int) string {
	if textWidth(r.text(), 12) <= float64(px) {
		return r.text()
	}
	n := int(float64(px)/(12*0.6)) - len([]rune(r.text())) + len([]rune(r.label))
	l := *r
	l.label = cutMiddle(r.label, n)
	return l.text()
}

// TimelineSVG draws the run's steps as bars (actual start to end), a tick at each planned
// start where it differs from the actual one, and a mark for every snapshot.
func TimelineSVG(rec *interp.Record) string {
	type row = timelineRow
	var rows []*row
	byKey := map[string]*row{}
	var end time.Duration
	for _, s := range rec.Steps {
		if s.Kind == "parallel" || s.Kind == "sequence" {
			continue
		}
		key := s.Path
		label := s.Path
		if s.Name != "" {
			label = s.Name
		}
		r := byKey[key]
		if r == nil {
			r = &row{label: label, kind: s.Kind}
			byKey[key] = r
			rows = append(rows, r)
		}
		r.steps = append(r.steps, s)
		end = max(end, s.End, s.Planned)
	}
	if end <= 0 {
		end = time.Second
	}
	// A long timeline: its first and last rows, and one row between them holding every other
	// step (marks that start within 3 pixels of each other are one, as a repeat's are).
	if len(rows) > maxTimelineRows {
		mid := &row{merged: true}
		for _, r := range rows[maxTimelineRows/2 : len(rows)-maxTimelineRows/2] {
			mid.steps = append(mid.steps, r.steps...)
		}
		slices.SortStableFunc(mid.steps, func(a, b *interp.StepRecord) int { return cmp.Compare(a.Start, b.Start) })
		mid.label = fmt.Sprintf("… %d more steps", len(rows)-maxTimelineRows)
		rows = append(append(slices.Clone(rows[:maxTimelineRows/2]), mid), rows[len(rows)-maxTimelineRows/2:]...)
	}
	// The labels' column is as wide as the longest label needs, up to 400 pixels; a longer
	// label is cut in the middle (whole in its tooltip): right-aligned, it ran off the
	// picture's left edge, and two snapshots named snapshot_before_… and snapshot_after_…
	// both read "…_name (snapshot)".
	const rowH, width = 22, 900
	left := 220
	for _, r := range rows {
		left = max(left, min(400, int(textWidth(r.text(), 12))+16))
	}
	height := 40 + rowH*len(rows) + 30
	x := func(d time.Duration) float64 { return float64(left) + float64(d)/float64(end)*float64(width-left-20) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<text x="10" y="18" font-weight="bold">%s — timeline (%s)</text>`+"\n", html.EscapeString(rec.Scenario), rec.Outcome)
	// Time axis with about ten ticks.
	for _, t := range axisTicks(end) {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="28" x2="%.1f" y2="%d" stroke="#ddd"/>`, x(t), x(t), height-25)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle" fill="#666">%s</text>`+"\n", x(t), height-10, fmtAxis(t))
	}
	color := func(s *interp.StepRecord) string {
		if c := map[interp.Outcome]string{interp.Passed: "#4c9a2a", interp.Failed: "#c62828", interp.Errored: "#ef6c00", interp.TimedOut: "#ef6c00", interp.Cancelled: "#9e9e9e", interp.Skipped: "#e0e0e0"}[s.Outcome]; c != "" {
			return c
		}
		return "#1565c0"
	}
	for i, r := range rows {
		y := 32 + i*rowH
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end"><title>%s</title>%s</text>`, left-6, y+14, html.EscapeString(r.text()), html.EscapeString(r.fit(left-16)))
		// Executions of a step (samples, a repeat's rounds) that start within 3 pixels of the
		// first of them are one mark (its colour the worst outcome among them), without ticks:
		// a 5-minute run sampled every 100ms draws a row as wide as the picture, not 3,000
		// marks.
		for k := 0; k < len(r.steps); k++ {
			s := r.steps[k]
			j := k
			for j+1 < len(r.steps) && x(r.steps[j+1].Start)-x(s.Start) < 3 {
				j++
			}
			if j > k {
				worst, last := s, s
				for _, m := range r.steps[k : j+1] {
					if m.Outcome != interp.Passed {
						worst = m
					}
					if m.End > last.End {
						last = m
					}
				}
				what := fmt.Sprintf("%d runs", j-k+1)
				switch {
				case r.merged:
					what = fmt.Sprintf("%d steps, %s to %s,", j-k+1, stepLabel(s), stepLabel(r.steps[j]))
				case s.Sample > 0:
					what = fmt.Sprintf("#%d–#%d: %d samples", s.Sample, r.steps[j].Sample, j-k+1)
				case s.Round > 0:
					what = fmt.Sprintf("rounds %d–%d", s.Round, r.steps[j].Round)
				}
				title := fmt.Sprintf("%s %s from %s to %s", html.EscapeString(r.text()), what, secs(s.Start), secs(last.End))
				if s.Kind == "snapshot" {
					fmt.Fprintf(&b, `<circle cx="%.1f" cy="%d" r="4" fill="%s"><title>%s</title></circle>`, x(s.Start), y+10, color(worst), title)
				} else {
					fmt.Fprintf(&b, `<rect x="%.1f" y="%d" width="%.1f" height="14" fill="%s" opacity="0.8"><title>%s</title></rect>`, x(s.Start), y+3, math.Max(2, x(last.End)-x(s.Start)), color(worst), title)
				}
				k = j
				continue
			}
			w := math.Max(2, x(s.End)-x(s.Start))
			if s.Kind == "snapshot" {
				fmt.Fprintf(&b, `<circle cx="%.1f" cy="%d" r="5" fill="%s"><title>%s at %s</title></circle>`, x(s.Start), y+10, color(s), html.EscapeString(r.text()), secs(s.Start))
			} else {
				fmt.Fprintf(&b, `<rect x="%.1f" y="%d" width="%.1f" height="14" fill="%s" opacity="0.8"><title>%s: %s → %s (%s)</title></rect>`,
					x(s.Start), y+3, w, color(s), html.EscapeString(r.text()), secs(s.Start), secs(s.End), s.Outcome)
			}
			if s.Timed {
				fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#000" stroke-width="1.5"><title>planned %s, skew %s</title></line>`,
					x(s.Planned), y, x(s.Planned), y+20, secs(s.Planned), ms(s.Skew))
			}
		}
		b.WriteString("\n")
	}
	// The times labrun was stopped (SIGSTOP, Ctrl-Z): a hatched band across the rows where
	// each happened, labelled with its length. Before, the record's note said it and the
	// picture drew the steps it held as if they had run slow.
	for _, st := range rec.Stops {
		from, to := max(st.At, 0), min(st.At+st.For, end)
		if to <= from {
			continue
		}
		took := st.For.Round(100 * time.Millisecond).String() // as the note says it
		label := "stopped " + took
		fmt.Fprintf(&b, `<g class="stop"><rect x="%.1f" y="28" width="%.1f" height="%d" fill="#9e9e9e" fill-opacity="0.25" stroke="#616161" stroke-dasharray="4 3"><title>labrun was stopped (SIGSTOP or Ctrl-Z, then continued) for %s, %s into the steps</title></rect>`,
			x(from), max(x(to)-x(from), 2), height-53, took, secs(st.At))
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle" fill="#424242" font-weight="bold">%s</text></g>`+"\n", (x(from)+x(to))/2, height-28, html.EscapeString(label))
	}
	b.WriteString("</svg>\n")
	return b.String()
}

func niceStep(end time.Duration) time.Duration {
	for _, s := range []time.Duration{
		time.Millisecond, 2 * time.Millisecond, 5 * time.Millisecond,
		10 * time.Millisecond, 50 * time.Millisecond, 100 * time.Millisecond, 500 * time.Millisecond,
		time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 30 * time.Second, time.Minute, 5 * time.Minute,
		10 * time.Minute, 30 * time.Minute, time.Hour, 2 * time.Hour, 6 * time.Hour, 24 * time.Hour,
	} {
		if end/s <= 12 {
			return s
		}
	}
	// Days by tens: a record whose end was edited years on draws a dozen ticks, not millions.
	s := 10 * 24 * time.Hour
	for end/s > 12 {
		s *= 10
	}
	return s
}

// axisTicks are the times of a time axis's ticks from 0 to end, niceStep apart: at most 13.
func axisTicks(end time.Duration) []time.Duration {
	step := niceStep(end)
	var out []time.Duration
	for t := time.Duration(0); t <= end; t += step {
		out = append(out, t)
		if t > end-step { // the next would pass end, or overflow
			break
		}
	}
	return out
}

func fmtAxis(t time.Duration) string {
	if t < time.Second && t > 0 {
		return fmt.Sprintf("%dms", t.Milliseconds())
	}
	return fmt.Sprintf("%gs", t.Seconds())
}
