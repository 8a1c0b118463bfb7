package report

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestAxisBoundsARoundingApart: a --count run's summary whose three runs read a value 0.1,
// 0.1 and 0.10000000000000002 (one figure computed two ways) drew a strip plot over bounds a
// rounding apart: niceTicks' step fell below 0.1's precision, v += step never moved, and the
// process grew its ticks to 24 GB until the kernel killed it (seen in matrix_plot.txtar under
// load). Each case must end, with a few ticks covering its bounds.
func TestAxisBoundsARoundingApart(t *testing.T) {
	for _, c := range []struct {
		name   string
		lo, hi float64
	}{
		{"a rounding apart", 0.1, math.Nextafter(0.1, 1)},
		{"equal", 0.1, 0.1},
		{"a rounding apart, large", 1e17, math.Nextafter(1e17, 2e17)},
		{"equal, large", 1e17, 1e17},
		{"a rounding apart, negative", -3.3, math.Nextafter(-3.3, 0)},
		{"zero", 0, 0},
		{"ordinary", 2772, 3713},
	} {
		t.Run(c.name, func(t *testing.T) {
			done := make(chan axis, 1)
			go func() { done <- newAxis(c.lo, c.hi, 250, 34) }()
			select {
			case a := <-done:
				if n := len(a.ticks); n < 2 || n > 12 {
					t.Fatalf("newAxis(%v, %v): %d ticks %v, want 2 to 12", c.lo, c.hi, n, a.ticks)
				}
				if a.lo > c.lo || a.hi < c.hi {
					t.Errorf("newAxis(%v, %v): ticks %v do not cover the bounds", c.lo, c.hi, a.ticks)
				}
			case <-time.After(2 * time.Second):
				t.Fatalf("newAxis(%v, %v) did not end in 2 s", c.lo, c.hi)
			}
			if n := len(niceTicks(c.lo, c.hi, 5)); n < 2 || n > 24 {
				t.Errorf("niceTicks(%v, %v, 5): %d ticks", c.lo, c.hi, n)
			}
		})
	}
}

// TestAxisLabelClearOfTicks: a sweep's plot of started.p (a few µs, in s) wrote its y ticks
// "0.0000057" from the plot's left edge over its unit, "s" drawn on "0.00002" (seen in headless
// Chromium on a sweep's summary); so did a --count strip plot. The unit stands left of the
// widest tick label, the plot's margin widened for it, and the labels stay inside the picture.
func TestAxisLabelClearOfTicks(t *testing.T) {
	for _, ys := range [][]float64{{5.2e-6, 3.0e-5}, {5.16e-6, 5.64e-6}, {1, 2}, {123456, 234567}} {
		s := twoBy()
		s.Units["started.p"] = "s"
		for i := range s.Runs {
			s.Runs[i].Values["started.p"] = ys[i]
		}
		sweep, ok := SweepPlot(s, "started.p", "max")
		if !ok {
			t.Fatalf("%v: no sweep plot", ys)
		}
		s.Count = 2
		strip, ok := StripPlot(s, "started.p")
		if !ok {
			t.Fatalf("%v: no strip plot", ys)
		}
		for _, svg := range []string{sweep.SVG, strip.SVG} {
			label := regexp.MustCompile(`<text transform="translate\(([0-9.]+),[0-9.]+\) rotate\(-90\)"`).FindStringSubmatch(svg)
			if label == nil {
				t.Fatalf("%v: no unit label in\n%s", ys, svg)
			}
			labelX, _ := strconv.ParseFloat(label[1], 64)
			for _, tk := range regexp.MustCompile(`<text x="([0-9.]+)" y="[0-9.]+" text-anchor="end">([^<]*)</text>`).FindAllStringSubmatch(svg, -1) {
				end, _ := strconv.ParseFloat(tk[1], 64)
				left := end - 6.2*float64(len(tk[2])) // a digit of an 11 px sans-serif font is about 6.2 px wide
				if left < labelX+6 || left < 0 {
					t.Errorf("%v: tick %q spans from x=%.0f, over the unit at x=%.0f", ys, tk[2], left, labelX)
				}
			}
		}
	}
}

// TestPlotTitleFits: a --count strip plot of a ternary's value titled itself "vars.strict ?
// fortio.code503 : fortio.code200 over 3 runs", cut by the picture's right edge mid-word
// (seen in headless Chromium). A title too long for its picture is cut with "…", whole in
// its hover text.
func TestPlotTitleFits(t *testing.T) {
	long := "vars.strict ? fortio.code503 : fortio.code200 + fortio.code504"
	s := twoBy()
	s.Count = 2
	for i := range s.Runs {
		s.Runs[i].Values[long] = float64(i + 3)
	}
	strip, ok := StripPlot(s, long)
	if !ok {
		t.Fatal("no strip plot")
	}
	sweep, ok := SweepPlot(s, long, "max")
	if !ok {
		t.Fatal("no sweep plot")
	}
	for _, svg := range []string{strip.SVG, sweep.SVG} {
		m := regexp.MustCompile(`<svg [^>]*width="([0-9.]+)"[^>]*>.*?<text x="([0-9.]+)" y="18" font-size="13">([^<]*)</text>`).FindStringSubmatch(svg)
		if m == nil {
			t.Fatalf("no title in\n%s", svg)
		}
		w, _ := strconv.ParseFloat(m[1], 64)
		x, _ := strconv.ParseFloat(m[2], 64)
		// A character of a 13 px sans-serif font is at most about 7.5 px wide on average.
		if right := x + 7.5*float64(len([]rune(m[3]))); right > w {
			t.Errorf("title %q runs to x=%.0f, past the picture's width %.0f", m[3], right, w)
		}
		if !strings.Contains(svg, "<title>"+long) && !strings.Contains(svg, long+" over 2 runs</title>") && !strings.Contains(svg, long+" against max</title>") {
			t.Errorf("the whole title is nowhere in the picture:\n%s", svg)
		}
	}
}
