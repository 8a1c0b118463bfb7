package report

import (
	"fmt"
	"math"
	"strings"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/interp"
)

// DiffSVG draws the picture of a comparison (labrun diff --plot): one row per counter delta and
// load figure that differs beyond the tolerance, A's bar above B's, each row on its own scale
// (its larger magnitude fills the width) with both values written at the bars' ends. It
// reports false when no such value differs.
func DiffSVG(d *interp.RunDiff, names ...*dsl.Names) (string, bool) {
	type row struct {
		path       string
		a, b       float64
		hasA, hasB bool
		rel        *float64
	}
	var rows []row
	for _, df := range d.Differences {
		if !df.Beyond || !(strings.HasPrefix(df.Path, "delta") || strings.HasPrefix(df.Path, "loads.")) {
			continue
		}
		a, okA := df.A.(float64)
		b, okB := df.B.(float64)
		if !okA && !okB {
			continue
		}
		rows = append(rows, row{df.Path, a, b, okA, okB, df.Rel}) // absent is drawn as absent, not as 0
	}
	if len(rows) == 0 {
		return "", false
	}
	SortByChange(rows, func(r row) (float64, bool) {
		if r.rel != nil {
			return *r.rel, true
		}
		return 0, false
	}, func(r row) string { return r.path })
	const w, label, right, top, rowH, barH = 820.0, 400.0, 70.0, 46.0, 34.0, 12.0
	h := top + rowH*float64(len(rows)) + 12
	colA, colB := "#1f77b4", "#d62728"
	var sb strings.Builder
	fmt.Fprintf(&sb, `<svg xmlns="http://www.w3.org/2000/svg" width="%g" height="%g" viewBox="0 0 %g %g" font-family="sans-serif" font-size="11">`, w, h, w, h)
	fmt.Fprintf(&sb, `<rect width="100%%" height="100%%" fill="white"/>`)
	fmt.Fprintf(&sb, `<text x="8" y="16" font-size="13">What differs: A %s, B %s</text>`, xmlEsc(d.ScenarioA), xmlEsc(d.ScenarioB))
	fmt.Fprintf(&sb, `<rect x="8" y="26" width="10" height="10" fill="%s"/><text x="22" y="35">A %s</text>`, colA, xmlEsc(d.ScenarioA))
	fmt.Fprintf(&sb, `<rect x="220" y="26" width="10" height="10" fill="%s"/><text x="234" y="35">B %s</text>`, colB, xmlEsc(d.ScenarioB))
	fmt.Fprintf(&sb, `<text x="%g" y="35" text-anchor="end" fill="#666">each row on its own scale</text>`, w-8)
	span := w - label - right
	for i, r := range rows {
		y := top + rowH*float64(i)
		if i%2 == 1 {
			fmt.Fprintf(&sb, `<rect x="0" y="%g" width="%g" height="%g" fill="#f7f7f7"/>`, y, w, rowH)
		}
		fmt.Fprintf(&sb, `<text x="%g" y="%g" text-anchor="end">%s</text>`, label-8, y+rowH/2+4, xmlEsc(truncate(r.path, 64)))
		m := math.Max(math.Abs(r.a), math.Abs(r.b))
		if m == 0 {
			m = 1
		}
		// Negative values (a reset) grow to the left of a zero line in the middle.
		zero, scale := label, span
		if r.a < 0 || r.b < 0 {
			zero, scale = label+span/2, span/2
		}
		fmt.Fprintf(&sb, `<line x1="%g" y1="%g" x2="%g" y2="%g" stroke="#999"/>`, zero, y+3, zero, y+rowH-3)
		for j, v := range []float64{r.a, r.b} {
			c := []string{colA, colB}[j]
			by := y + 4 + float64(j)*(barH+2)
			if !([]bool{r.hasA, r.hasB}[j]) {
				fmt.Fprintf(&sb, `<text x="%g" y="%g" fill="#888" font-style="italic"><title>%s: absent from %s</title>absent</text>`, zero+4, by+barH-2, xmlEsc(r.path), []string{"A", "B"}[j])
				continue
			}
			bw := math.Abs(v) / m * scale
			x := zero
			if v < 0 {
				x = zero - bw
			}
			fmt.Fprintf(&sb, `<rect x="%g" y="%g" width="%g" height="%g" fill="%s"><title>%s, %s: %s</title></rect>`, x, by, math.Max(bw, 1), barH, c, xmlEsc(r.path), []string{"A", "B"}[j], xmlEsc(withUnit(v, DiffUnit(r.path, names...))))
			tx, anchor := x+bw+4, "start"
			if v < 0 {
				tx, anchor = x-4, "end"
			}
			fmt.Fprintf(&sb, `<text x="%g" y="%g" text-anchor="%s" fill="%s">%s</text>`, tx, by+barH-2, anchor, c, sig4(v))
		}
	}
	sb.WriteString(`</svg>`)
	return sb.String(), true
}
