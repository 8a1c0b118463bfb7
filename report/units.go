package report

import (
	"math"
	"strconv"
	"strings"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/schema"
)

// Units of the values expectations read, for the summaries' tables and axes and diff's
// table: the unit of the value's type as the steps' kinds declare it (schema/<kind>.go) and
// vet computes it (dsl.Names.TypeOf): fortio.p50 is milliseconds, delta.upstream_cx_rx_bytes_total
// bytes, started.flip - started.fortio seconds, fortio.code503 / fortio.requests a plain number.

// UnitOf is the unit of a value an expectation reads ("ms", "1/s", "s", "count", "bytes"), or
// "" when it has none or labrun cannot tell; names are the records' (interp.Record.Names),
// the first that types the value decides.
func UnitOf(value string, names ...*dsl.Names) string {
	for _, n := range names {
		if t := n.TypeOf(value); t != nil {
			if t.Kind == schema.TNumber {
				return string(t.Unit)
			}
			return ""
		}
	}
	return ""
}

// DiffUnit is the unit of a value labrun diff lists, by its path (loads.fortio.p50,
// snapshots.after.counters.x, delta.x, steps.s.durationMs), read as the expression it is.
func DiffUnit(path string, names ...*dsl.Names) string {
	if strings.HasPrefix(path, "steps.") && strings.HasSuffix(path, "Ms") {
		return "ms"
	}
	return UnitOf(DiffExpr(path), names...)
}

// DiffExpr is the expression that reads the value a diff path names: snapshots.a.counters.x
// is a.x, loads.f.p50 is f.p50, values.v.k is v.k.
func DiffExpr(path string) string {
	parts := strings.SplitN(path, ".", 4)
	switch {
	case len(parts) == 4 && parts[0] == "snapshots" && (parts[2] == "counters" || parts[2] == "gauges" || parts[2] == "histograms"):
		return parts[1] + "." + parts[3]
	case len(parts) >= 3 && (parts[0] == "loads" || parts[0] == "execs" || parts[0] == "logs" || parts[0] == "series"):
		return strings.TrimPrefix(path, parts[0]+".")
	case parts[0] == "values" && len(parts) > 1:
		return strings.TrimPrefix(path, "values.")
	}
	return path
}

// withUnit writes a number with its unit: "12 ms", "3.5 1/s", "7" for a count.
func withUnit(x float64, unit string) string {
	if unit == "" || unit == "count" {
		return sig4(x)
	}
	return sig4(x) + " " + unit
}

// Sig4 writes a number with at most 4 significant digits (see sig4).
func Sig4(x float64) string { return sig4(x) }

// sig4 writes a number with at most 4 significant digits and no exponent for the magnitudes a
// lab sees (12345 → 12350, 0.0012345 → 0.001235).
func sig4(x float64) string {
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
