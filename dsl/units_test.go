package dsl

import "testing"

func TestSig4(t *testing.T) {
	for _, c := range []struct {
		x    float64
		want string
	}{{0, "0"}, {12345, "12350"}, {1.23456, "1.235"}, {0.00123456, "0.001235"}, {-2.5, "-2.5"}, {100, "100"}, {0.1 + 0.2, "0.3"}, {3e20, "3e+20"}} {
		if got := Sig4(c.x); got != c.want {
			t.Errorf("Sig4(%v) = %s, want %s", c.x, got, c.want)
		}
	}
}

func TestShowValue(t *testing.T) {
	for _, c := range []struct {
		v    any
		unit string
		want string
	}{{1.66046, "ms", "1.66 ms"}, {16.0, "count", "16"}, {"x", "", `"x"`}, {true, "", "true"}, {12345.6, "1/s", "12350 1/s"}, {4294967295.0, "", "4294967295"}, {0.123456, "", "0.1235"}} {
		if got := ShowValue(c.v, c.unit); got != c.want {
			t.Errorf("ShowValue(%v, %q) = %s, want %s", c.v, c.unit, got, c.want)
		}
	}
}
