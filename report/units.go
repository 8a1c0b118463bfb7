package report

import (
	"math"
	"regexp"
	"strconv"
	"strings"

	"labrun.dev/labrun/interp"
)

// Units of the values expectations read, for the summaries' tables and axes. A value is named
// as the expectation writes it (fortio.p50, delta.upstream_rq_pending_overflow,
// g.max.rq_active); its root says what recorded it (a load, a snapshot, a sampled series, a
// logs step), its last part what it counts.

// Roots maps the names a record gives expressions to what recorded them: "load", "snapshot",
// "series", "logs", "exec".
func Roots(rec *interp.Record) map[string]string {
	out := map[string]string{}
	for k := range rec.Loads() {
		out[k] = "load"
	}
	for k := range rec.Snapshots() {
		out[k] = "snapshot"
	}
	for k := range rec.Series() {
		out[k] = "series"
	}
	for k := range rec.Logs() {
		out[k] = "logs"
	}
	for k := range rec.Execs() {
		out[k] = "exec"
	}
	return out
}

var (
	loadLatency = map[string]bool{"avg": true, "min": true, "max": true, "p50": true, "p75": true, "p90": true, "p99": true, "p999": true}
	loadCounts  = map[string]bool{"requests": true, "ok": true, "errors": true, "sockets": true, "connections": true}
	codeField   = regexp.MustCompile(`^code_?\d+$`)
	rootOf      = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)`)
)

// UnitOf is the unit of a value an expectation reads ("ms", "1/s", "s", "count", "bytes"), or
// "" when labrun cannot tell; roots is Roots of the runs.
func UnitOf(value string, roots map[string]string) string {
	m := rootOf.FindString(value)
	rest := strings.TrimPrefix(value[len(m):], ".")
	last := rest
	if i := strings.LastIndexAny(rest, ".[\""); i >= 0 {
		last = strings.Trim(rest[i+1:], `"]`)
	}
	if strings.ContainsAny(value, "+-*/%(") && !strings.HasPrefix(value, "delta(") {
		return "" // arithmetic or a call: its unit is the author's
	}
	switch {
	case m == "started" || m == "ended":
		return "s"
	case m == "vars":
		return ""
	case roots[m] == "load":
		switch {
		case loadLatency[last]:
			return "ms"
		case last == "qps":
			return "1/s"
		case last == "duration":
			return "s"
		case loadCounts[last] || codeField.MatchString(last) || strings.HasPrefix(rest, "codes"):
			return "count"
		}
		return ""
	case roots[m] == "logs":
		if last == "count" || strings.HasPrefix(rest, "codes") || strings.HasPrefix(rest, "flags") {
			return "count"
		}
		return ""
	case m == "delta" || roots[m] == "snapshot" || roots[m] == "series":
		if roots[m] == "series" && rest == "count" {
			return "count"
		}
		return statUnit(last)
	}
	return ""
}

// statUnit is the unit of an Envoy or backend stat by its name.
func statUnit(stat string) string {
	switch {
	case strings.Contains(stat, "bytes"):
		return "bytes"
	case strings.HasSuffix(stat, "_ms") || strings.Contains(stat, "_time") || strings.Contains(stat, "_ms."):
		return "ms"
	}
	return "count"
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
