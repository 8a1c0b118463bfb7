package schema

import (
	"strings"
	"testing"
)

// TestLogNoValue: codes, flags and details have no value where no line matched, or lines
// matched and none parsed as an access line; they have one where one parsed (even cut away
// from the lines kept); other fields always have one.
func TestLogNoValue(t *testing.T) {
	none := map[string]float64{}
	plain := func(n float64, lines ...string) LogResult {
		return LogResult{Count: n, Lines: lines, Codes: none, Flags: none, Details: none}
	}
	cutAccess := plain(3, "debug")
	cutAccess.Cut, cutAccess.Codes = true, map[string]float64{"503": 2}
	for _, tc := range []struct {
		name  string
		l     LogResult
		field string
		want  string // "" for a value
	}{
		{"two plain lines", plain(2, "GET /x 503 UF", "GET /y"), "codes", `2 lines matched, none parsed as an access line (Istio's text or JSON format, or Envoy's default), so it counts none by code, flag or details; the first: "GET /x 503 UF"`},
		{"one plain line", plain(1, "x"), "flags", `1 line matched, and it did not parse as an access line`},
		{"details too", plain(1, "x"), "details", `1 line matched`},
		{"a long line is cut", plain(1, strings.Repeat("y", 300)), "codes", strings.Repeat("y", 160) + `…"`},
		{"count and lines read", plain(2, "a", "b"), "count", ""},
		{"lines", plain(2, "a", "b"), "lines", ""},
		{"no line", plain(0), "codes", "no line matched since the mark, so it counts none by code, flag or details"},
		{"no line, its count", plain(0), "count", ""},
		{"an access line counted, cut from the lines", cutAccess, "codes", ""},
	} {
		got := tc.l.NoValue(tc.field)
		if (got == "") != (tc.want == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: NoValue(%q) = %q, want %q", tc.name, tc.field, got, tc.want)
		}
	}
}
