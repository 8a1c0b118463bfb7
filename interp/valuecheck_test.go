package interp

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"labrun.dev/labrun/dsl"
)

func TestValueContradictions(t *testing.T) {
	j := func(src string, v Values) *Judgement { return &Judgement{Src: src, Values: v} }
	tenth, fifth := 0.1, 0.2 // variables: a constant tenth + fifth is exactly 0.3 in Go
	// roundTrip is what a record read back from JSON holds.
	roundTrip := func(v Values) Values {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var out Values
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, c := range []struct {
		name     string
		recorded []*Judgement
		judged   []*Judgement
		hide     *Redactor
		want     []string // substrings of each message, in order; none: no contradiction
	}{
		{name: "same values", recorded: []*Judgement{j("a == 1", Values{"a": 1.0})}, judged: []*Judgement{j("a == 1", Values{"a": 1.0})}},
		{name: "through JSON, non-finite and strings", recorded: []*Judgement{j("x", roundTrip(Values{"a": math.Inf(1), "b": tenth + fifth, "s": "é\n", "t": true}))},
			judged: []*Judgement{j("x", Values{"a": math.Inf(1), "b": tenth + fifth, "s": "é\n", "t": true})}},
		{name: "a var edited", recorded: []*Judgement{j("c <= vars.m", Values{"c": 7.0, "vars.m": 0.0})}, judged: []*Judgement{j("c <= vars.m", Values{"c": 7.0, "vars.m": 100.0})},
			want: []string{`expectation "c <= vars.m": the record says it read vars.m = 0; its data read 100`}},
		{name: "the last bit of a float", recorded: []*Judgement{j("x", Values{"a": 0.3})}, judged: []*Judgement{j("x", Values{"a": tenth + fifth})},
			want: []string{"a = 0.3; its data read 0.30000000000000004"}},
		{name: "an expression the record did not judge", recorded: []*Judgement{j("a == 1", Values{"a": 1.0})}, judged: []*Judgement{j("a == 2", Values{"a": 5.0})}},
		{name: "reads only one side holds", recorded: []*Judgement{j("x", Values{"a": 1.0})}, judged: []*Judgement{j("x", Values{"b": 2.0})}},
		{name: "no values recorded", recorded: []*Judgement{j("x", nil)}, judged: []*Judgement{j("x", Values{"a": 2.0})}},
		{name: "the n-th of one source with the n-th", recorded: []*Judgement{j("x", Values{"a": 1.0}), j("y", nil), j("x", Values{"a": 2.0})},
			judged: []*Judgement{j("x", Values{"a": 1.0}), j("x", Values{"a": 3.0})}, want: []string{"a = 2; its data read 3"}},
		{name: "started and ended within a microsecond", recorded: []*Judgement{j("ended.z - started.z < 1", Values{"started.z": 0.000001905, "ended.z": 0.00100854})},
			judged: []*Judgement{j("ended.z - started.z < 1", Values{"started.z": 0.000001899, "ended.z": 0.001008534})}},
		{name: "started a second later", recorded: []*Judgement{j("started.z < 1", Values{"started.z": 0.5})},
			judged: []*Judgement{j("started.z < 1", Values{"started.z": 1.5})}, want: []string{"started.z = 0.5; its data read 1.5"}},
		{name: "a source that holds a secret's value, as the record masks it", recorded: []*Judgement{j("vars.n == 1 || '[secret token]' == 'x'", Values{"vars.n": 1.0})},
			judged: []*Judgement{j("vars.n == 1 || 's3cr3t' == 'x'", Values{"vars.n": 2.0})}, hide: SourceRedactor(&dsl.Scenario{Secrets: []string{"token"}, Vars: map[string]any{"token": "s3cr3t"}}),
			want: []string{`expectation "vars.n == 1 || '[secret token]' == 'x'": the record says it read vars.n = 1; its data read 2`}},
		{name: "a source edited next to the secret is another", recorded: []*Judgement{j("vars.n == 1 || '[secret token]' == 'x'", Values{"vars.n": 1.0})},
			judged: []*Judgement{j("vars.n == 1 || 's3cr3t!' == 'x'", Values{"vars.n": 2.0})}, hide: SourceRedactor(&dsl.Scenario{Secrets: []string{"token"}, Vars: map[string]any{"token": "s3cr3t"}})},
		{name: "no secrets hidden: a mask is text", recorded: []*Judgement{j("vars.n == 1 || '[secret token]' == 'x'", Values{"vars.n": 1.0})},
			judged: []*Judgement{j("vars.n == 1 || 's3cr3t' == 'x'", Values{"vars.n": 2.0})}},
		{name: "a long string is clipped", recorded: []*Judgement{j("x", Values{"s": strings.Repeat("a", 500)})}, judged: []*Judgement{j("x", Values{"s": "b"})},
			want: []string{`… (502 bytes); its data read "b"`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := ValueContradictions(c.recorded, c.judged, c.hide)
			if len(got) != len(c.want) {
				t.Fatalf("got %q, want %d messages", got, len(c.want))
			}
			for i, w := range c.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("message %d = %q, want it to hold %q", i, got[i], w)
				}
			}
		})
	}
}

// A var an expectation the run judged reads is among the values it recorded (records of
// version 2): a var edited and its value taken out showed nowhere.
func TestUnrecordedVarReads(t *testing.T) {
	j := func(src string, o Outcome, v Values) *Judgement { return &Judgement{Src: src, Outcome: o, Values: v} }
	judged := []*Judgement{j("c <= vars.m", Passed, Values{"c": 4.0, "vars.m": 19.0})}
	for _, c := range []struct {
		name string
		rec  *Record
		want string // "": none
	}{
		{"held", &Record{Version: 2, Expectations: []*Judgement{j("c <= vars.m", Passed, Values{"c": 4.0, "vars.m": 0.0})}}, ""},
		{"taken out", &Record{Version: 2, Expectations: []*Judgement{j("c <= vars.m", Passed, Values{"c": 4.0})}},
			`expectation "c <= vars.m": the record holds no value of vars.m, which it reads`},
		{"no values at all", &Record{Version: 2, Expectations: []*Judgement{j("c <= vars.m", Failed, nil)}}, "no value of vars.m"},
		{"another read taken out is not a var", &Record{Version: 2, Expectations: []*Judgement{j("c <= vars.m", Passed, Values{"vars.m": 0.0})}}, ""},
		{"not judged by the run", &Record{Version: 2, Expectations: []*Judgement{j("c <= vars.m", Skipped, nil)}}, ""},
		{"version 1 records hold no values", &Record{Version: 1, Expectations: []*Judgement{j("c <= vars.m", Passed, nil)}}, ""},
	} {
		got := strings.Join(UnrecordedVarReads(c.rec, judged, nil), "\n")
		if c.want == "" && got != "" || !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
