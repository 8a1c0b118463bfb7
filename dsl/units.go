package dsl

import (
	"math"
	"strconv"
	"strings"

	"labrun.dev/labrun/schema"
)

// Units and numbers as people read them: every number labrun shows (the terminal, the reports,
// the summaries, diff) is written here, with its unit and at most 4 significant digits.
//
// A value's unit is not guessed here: UnitOf asks the types the kinds declare.

// UnitOf is the unit of a value an expression reads ("ms", "1/s", "s", "count", "bytes"), or
// "" when it has none or labrun cannot tell: the unit of its type, as the steps' kinds declare
// it (schema/<kind>.go) and vet computes it (Names.TypeOf), arithmetic included. The value is
// written as the expression writes it (fortio.p50, delta.upstream_rq_pending_overflow,
// perconn.ips[backends.a.address], ended.flip - started.flip); the first of names that types
// it decides.
func UnitOf(value string, names ...*Names) string {
	for _, n := range names {
		if n == nil {
			continue
		}
		if t := n.TypeOf(value); t != nil {
			if t.Kind == schema.TNumber {
				return string(t.Unit)
			}
			return ""
		}
	}
	return ""
}

// WithUnit writes a number with its unit: "12 ms", "3.5 1/s", "7" for a count.
func WithUnit(x float64, unit string) string {
	if unit == "" || unit == "count" {
		return Sig4(x)
	}
	return Sig4(x) + " " + unit
}

// Sig4 writes a number with at most 4 significant digits and no exponent for the magnitudes a
// lab sees (12345 → 12350, 0.0012345 → 0.001235).
func Sig4(x float64) string {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	e := math.Floor(math.Log10(math.Abs(x)))
	if e > 15 || e < -6 {
		return strconv.FormatFloat(x, 'g', 4, 64)
	}
	p := math.Pow(10, e-3)
	r := math.Round(x/p) * p
	// The rounding leaves binary noise (0.1+0.2): print the shortest form of the rounded value
	// at 4 significant digits.
	s := strconv.FormatFloat(r, 'f', max(0, int(3-e)), 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// ShowValue writes a value an expression read as people read it: a measured number (one with
// a unit) or a fraction with at most 4 significant digits and its unit; a whole number of no
// known unit (a config value, a var: 4294967295 is Envoy's "no limit") as it is; anything else
// as FormatValue does.
func ShowValue(v any, unit string) string {
	if f, ok := v.(float64); ok && unit == "" && f == math.Trunc(f) {
		return FormatValue(f)
	}
	switch x := v.(type) {
	case float64:
		return WithUnit(x, unit)
	case float32:
		return WithUnit(float64(x), unit)
	case int:
		return WithUnit(float64(x), unit)
	case int64:
		return WithUnit(float64(x), unit)
	}
	return FormatValue(v)
}
