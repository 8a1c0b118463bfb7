package dsl

import (
	"math"
	"regexp"
	"strconv"
	"strings"
)

// Units and numbers as people read them: every number labrun shows (the terminal, the reports,
// the summaries, diff) is written here, with its unit and at most 4 significant digits.
//
// UnitOf is where a value's unit comes from until each kind declares its results' units: it is
// the one function to replace by a lookup in those declarations.

var (
	loadLatency = map[string]bool{"avg": true, "min": true, "max": true, "p50": true, "p75": true, "p90": true, "p99": true, "p999": true}
	loadCounts  = map[string]bool{"requests": true, "ok": true, "errors": true, "sockets": true, "connections": true}
	codeField   = regexp.MustCompile(`^code_?\d+$`)
	rootOf      = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)`)
)

// UnitOf is the unit of a value an expression reads ("ms", "1/s", "s", "count", "bytes"), or
// "" when labrun cannot tell. The value is named as the expression writes it (fortio.p50,
// delta.upstream_rq_pending_overflow, g.max.rq_active, perconn.ips[backends.a.address]): its
// root says what recorded it, roots mapping a record's names to "load", "snapshot", "series",
// "logs" or "exec", and its last part what it counts.
func UnitOf(value string, roots map[string]string) string {
	m := rootOf.FindString(value)
	rest := strings.TrimPrefix(value[len(m):], ".")
	if strings.ContainsAny(value, "+-*/%(") && !strings.HasPrefix(value, "delta(") {
		return "" // arithmetic or a call: its unit is the author's
	}
	// An index is a key of the map before it (ips[backends.a.address] counts connections): the
	// field is the last part before the first index.
	field := rest
	if i := strings.IndexByte(rest, '['); i >= 0 {
		field = rest[:i]
	}
	last := field
	if i := strings.LastIndexAny(field, ".\""); i >= 0 {
		last = strings.Trim(field[i+1:], `"]`)
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
		case loadCounts[last] || codeField.MatchString(last) || last == "codes" || last == "ips":
			return "count"
		}
		return ""
	case roots[m] == "logs":
		if last == "count" || last == "codes" || last == "flags" {
			return "count"
		}
		return ""
	case m == "delta" || roots[m] == "snapshot" || roots[m] == "series":
		if roots[m] == "series" && rest == "count" {
			return "count"
		}
		if strings.Contains(rest, "[") {
			return "" // a stat picked by a computed name: the author's
		}
		last = rest
		if i := strings.LastIndexAny(rest, ".\""); i >= 0 {
			last = strings.Trim(rest[i+1:], `"]`)
		}
		return StatUnit(last)
	}
	return ""
}

// StatUnit is the unit of an Envoy or backend stat by its name.
func StatUnit(stat string) string {
	switch {
	case strings.Contains(stat, "bytes"):
		return "bytes"
	case strings.HasSuffix(stat, "_ms") || strings.Contains(stat, "_time") || strings.Contains(stat, "_ms."):
		return "ms"
	}
	return "count"
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
