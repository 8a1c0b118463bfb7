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
	// A read whose pods may not be all it names since the mark: its lines are of the pods
	// read only, and "no 503" would pass over a pod it missed.
	missed := plain(0)
	missed.Missed, missed.Pods = "the watch of pods lab/{app=web} ended: gone", []string{"web-a"}
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
		{"missed pods, count", missed, "count", "may have missed pods: the watch of pods lab/{app=web} ended: gone"},
		{"missed pods, lines", missed, "lines", "may have missed pods"},
		{"missed pods, entries", missed, "entries", "may have missed pods"},
		{"missed pods, codes", missed, "codes", "may have missed pods"},
		{"missed pods, read whole", missed, "", "may have missed pods"},
		{"missed pods, the pods read", missed, "pods", ""},
	} {
		got := tc.l.NoValue(tc.field)
		if (got == "") != (tc.want == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: NoValue(%q) = %q, want %q", tc.name, tc.field, got, tc.want)
		}
	}
}

// TestLogCountsByFormat: a line with no response flag counts under flags["-"] (none did, so
// flags["-"] == 0 held over lines that had none); a line whose format does not give a field
// counts under no key of its count but in untold, and that count has no value then.
func TestLogCountsByFormat(t *testing.T) {
	entries := map[string]LogEntry{
		"none":   {Access: true, Code: 200},
		"uo":     {Access: true, Code: 503, Flags: []string{"UO"}},
		"noflag": {Access: true, Code: 503, Format: "json", Lacks: []string{"flags", "details"}},
	}
	acc, err := newLogAccumulator("", "", func(s string) (LogEntry, bool) { return entries[s], true }, OutputHead, OutputTail)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []string{"none", "uo", "noflag"} {
		acc.add(LogLine{Text: l})
	}
	res := acc.result()
	if want := map[string]float64{"-": 1, "UO": 1}; !sameCounts(res.Flags, want) {
		t.Errorf("flags %v, want %v", res.Flags, want)
	}
	if want := map[string]float64{"flags": 1, "details": 1}; !sameCounts(res.Untold, want) {
		t.Errorf("untold %v, want %v", res.Untold, want)
	}
	if why := res.NoValue("flags"); !strings.Contains(why, "1 access line is in a format that does not give its flags") {
		t.Errorf("NoValue(flags) = %q", why)
	}
	if why := res.NoValue("codes"); why != "" {
		t.Errorf("NoValue(codes) = %q, want a value", why)
	}
	if c := res.Contradictions(); len(c) > 0 {
		t.Errorf("contradictions of a result as a run records it: %v", c)
	}
}

// TestLacksField: reading a field an entry's format does not give errs, naming the field,
// the format and the operator; a field it gives reads.
func TestLacksField(t *testing.T) {
	for _, tc := range []struct {
		e     LogEntry
		field string
		want  string // "" for no error
	}{
		{LogEntry{Format: "envoy", Lacks: []string{"details", "termination", "failure", "cluster"}}, "cluster", `cluster has no value: this line is in Envoy's default access-log format (a proxy without Istio's mesh config: a plain Envoy, a gateway), which does not give the cluster (%UPSTREAM_CLUSTER%)`},
		{LogEntry{Format: "envoy", Lacks: []string{"cluster"}}, "upstream_host", ""},
		{LogEntry{Format: "envoy", Lacks: []string{"upstream_host"}}, "upstream_host", `but its end is not the default's ("%UPSTREAM_HOST%" last, an address)`},
		{LogEntry{Format: "json", Lacks: []string{"flags"}}, "flags", `without the key "response_flags": its format does not give the flags (%RESPONSE_FLAGS%)`},
		{LogEntry{Format: "istio", Lacks: []string{"upstream_host", "cluster"}}, "upstream_host", `its end is not Istio's`},
		{LogEntry{Format: "istio"}, "cluster", ""},
	} {
		err := tc.e.LacksField(tc.field)
		if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s of %+v: %v, want %q", tc.field, tc.e, err, tc.want)
		}
	}
}
