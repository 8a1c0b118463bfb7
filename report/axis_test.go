package report

import (
	"math"
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
