package schema

import (
	"strings"
	"testing"
)

// TestLogContradictions: a logs result a run could have recorded (access and plain lines,
// captures, nothing read, a cut result) is told nothing; one changed so that its counts,
// lines or captures no longer are its lines' is told, naming the fields and values.
func TestLogContradictions(t *testing.T) {
	ok := LogEntry{Line: "a 200", Access: true, Code: 200, Details: "via_upstream"}
	uo := LogEntry{Line: "b 503", Access: true, Code: 503, Flags: []string{"UO"}, Details: "overflow"}
	plain := LogEntry{Line: "id=7", Captures: map[string]string{"id": "7"}}
	good := func() LogResult {
		r := LogResult{Codes: map[string]float64{}, Flags: map[string]float64{}, Details: map[string]float64{}, Capture: map[string]string{}}
		for _, e := range []LogEntry{ok, uo, plain} {
			e.Flags = append([]string(nil), e.Flags...)
			r.Entries, r.Lines = append(r.Entries, e), append(r.Lines, e.Line)
			r.Count++
			if e.Access {
				r.countLine(e, 1)
			}
		}
		r.Captures, r.Capture = []map[string]string{{"id": "7"}}, map[string]string{"id": "7"}
		return r
	}
	cut := func(r *LogResult) { // the middle line dropped by the budgets
		r.Cut, r.Count = true, 4
		r.Codes["200"]++
		r.Details["via_upstream"]++
	}
	for _, c := range []struct {
		name string
		edit func(r *LogResult)
		want string // "" for none
	}{
		{"as recorded", func(*LogResult) {}, ""},
		{"nothing read", func(r *LogResult) {
			*r = LogResult{Codes: map[string]float64{}, Flags: map[string]float64{}, Details: map[string]float64{}, Capture: map[string]string{}}
		}, ""},
		{"cut", cut, ""},
		{"recounted as a mutant does", func(r *LogResult) { *r, _ = r.Recount("codes", "503", 2) }, ""},
		{"codes moved, entries left", func(r *LogResult) { r.Codes = map[string]float64{"200": 2} },
			"codes is 200×2, but its access entries count 200×1, 503×1"},
		{"a flag removed", func(r *LogResult) { r.Flags = map[string]float64{} }, "flags is none, but its access entries count -×1, UO×1"},
		{"details changed", func(r *LogResult) { r.Details["overflow"] = 5 },
			"the details count 6 access lines, but the codes (200×1, 503×1) count 2"},
		{"count changed", func(r *LogResult) { r.Count = 10 }, "count is 10, but it keeps 3 entries and is not cut"},
		{"more access lines than lines", func(r *LogResult) { cut(r); r.Codes["503"] = 9 }, "count is 4, but the codes (200×2, 503×9) count 11 access lines"},
		{"a line dropped", func(r *LogResult) { r.Lines = r.Lines[:2] }, "it keeps 2 lines but 3 entries"},
		{"a line changed", func(r *LogResult) { r.Lines[1] = "b 200" }, `lines[1] is "b 200", but entries[1].line is "b 503"`},
		{"captures changed", func(r *LogResult) { r.Captures = []map[string]string{{"id": "8"}} },
			"captures is [map[id:8]], but its entries captured [map[id:7]]"},
		{"capture changed", func(r *LogResult) { r.Capture = map[string]string{"id": "8"} },
			"capture is map[id:8], but its first entry that captured captured map[id:7]"},
		{"cut, a kept line's code not counted", func(r *LogResult) { cut(r); r.Codes = map[string]float64{"200": 3} },
			`codes["503"] is 0, but 1 of the access entries kept count under it`},
		{"cut, more entries than lines", func(r *LogResult) { cut(r); r.Count = 2; r.Codes = map[string]float64{"200": 1, "503": 1} },
			"count is 2, but it keeps 3 entries"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := good()
			c.edit(&r)
			got := strings.Join(r.Contradictions(), "; ")
			if c.want == "" && got != "" || !strings.Contains(got, c.want) {
				t.Errorf("contradictions %q, want %q", got, c.want)
			}
		})
	}
}
