package report

import (
	"strings"

	"labrun.dev/labrun/dsl"
)

// Units of the values expectations read, for the summaries' tables and axes and diff's
// table: the unit of the value's type as the steps' kinds declare it (schema/<kind>.go) and
// vet computes it (dsl.UnitOf over dsl.Names.TypeOf): fortio.p50 is milliseconds,
// delta.upstream_cx_rx_bytes_total bytes, started.flip - started.fortio seconds,
// fortio.code503 / fortio.requests a plain number. The numbers themselves are written by
// dsl/units.go, the one place that writes a number for people.

// UnitOf is the unit of a value an expectation reads ("ms", "1/s", "s", "count", "bytes"), or
// "" when it has none or labrun cannot tell; names are the records' (interp.Record.Names),
// the first that types the value decides (dsl.UnitOf).
func UnitOf(value string, names ...*dsl.Names) string { return dsl.UnitOf(value, names...) }

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

// Sig4 writes a number with at most 4 significant digits (dsl.Sig4).
func Sig4(x float64) string { return dsl.Sig4(x) }

func sig4(x float64) string { return dsl.Sig4(x) }

// withUnit writes a number with its unit: "12 ms", "3.5 1/s", "7" for a count (dsl.WithUnit).
func withUnit(x float64, unit string) string { return dsl.WithUnit(x, unit) }
