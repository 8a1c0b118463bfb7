package dsl

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestMatrix: a flag replaces the values of the var it names only, --var takes a var out of
// the sweep, a flag naming another scenario's var is left out; combinations run first var
// slowest, each repeated Count times with a stable id.
func TestMatrix(t *testing.T) {
	sc := &Scenario{Name: "s", Vars: map[string]any{"requests": 4.0, "connections": 1.0, "mode": "a"},
		Sweep: map[string][]string{"requests": {"2", "4", "8"}, "connections": {"1", "2"}}}
	for _, c := range []struct {
		name   string
		flags  []SweepVar
		pinned map[string]string
		count  int
		want   []string // the unit ids
	}{
		{"declared, twice", nil, nil, 2, []string{
			"s[connections=1,requests=2]#1", "s[connections=1,requests=2]#2", "s[connections=1,requests=4]#1", "s[connections=1,requests=4]#2",
			"s[connections=1,requests=8]#1", "s[connections=1,requests=8]#2", "s[connections=2,requests=2]#1", "s[connections=2,requests=2]#2",
			"s[connections=2,requests=4]#1", "s[connections=2,requests=4]#2", "s[connections=2,requests=8]#1", "s[connections=2,requests=8]#2"}},
		{"a flag replaces one var", []SweepVar{{Name: "requests", Values: []string{"2", "8"}}}, nil, 1, []string{
			"s[connections=1,requests=2]#1", "s[connections=1,requests=8]#1", "s[connections=2,requests=2]#1", "s[connections=2,requests=8]#1"}},
		{"a flag adds a declared var", []SweepVar{{Name: "mode", Values: []string{"a", "b"}}}, map[string]string{"requests": "4"}, 1, []string{
			"s[connections=1,mode=a]#1", "s[connections=1,mode=b]#1", "s[connections=2,mode=a]#1", "s[connections=2,mode=b]#1"}},
		{"another scenario's var", []SweepVar{{Name: "share", Values: []string{"0", "100"}}}, map[string]string{"requests": "4", "connections": "1"}, 3, []string{
			"s#1", "s#2", "s#3"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := NewMatrix(sc, c.flags, c.pinned, c.count, 0)
			var ids []string
			for _, u := range m.Units(func(map[string]string) *Scenario { return nil }) {
				ids = append(ids, u.ID)
			}
			if !reflect.DeepEqual(ids, c.want) {
				t.Errorf("units\n %v\nwant\n %v", ids, c.want)
			}
			if m.Runs() != len(c.want) {
				t.Errorf("Runs() = %d, want %d", m.Runs(), len(c.want))
			}
		})
	}
}

// TestCheckSweep: a --sweep value is checked against the var's declared type, at the var's
// declaration, naming the flag and every bad value.
func TestCheckSweep(t *testing.T) {
	sc := &Scenario{Name: "s", VarKinds: map[string]string{"requests": "int", "rate": "number", "on": "bool", "host": "string"},
		Declared: map[string]Pos{"requests": {File: "x.cue", Line: 6, Col: 19}}}
	errs := CheckSweep(sc, []SweepVar{
		{Name: "requests", Values: []string{"2", "nine", "4.5"}},
		{Name: "rate", Values: []string{"0.5", "1e3"}},
		{Name: "on", Values: []string{"true", "maybe"}},
		{Name: "host", Values: []string{"a", "1"}},
		{Name: "other", Values: []string{"x"}},
	})
	var got []string
	for _, e := range errs {
		got = append(got, e.Error())
	}
	want := []string{
		"x.cue:6:19: --sweep requests=2,nine,4.5: expected an integer, as vars.requests is declared here; got nine, 4.5",
		"-: --sweep on=true,maybe: expected true or false, as vars.on is declared here; got maybe",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("errors\n %s\nwant\n %s", strings.Join(got, "\n "), strings.Join(want, "\n "))
	}
}

// TestPlanSpan: a run's planned span sums its phases' planned ends; it is a lower bound when a
// step's duration is known only at run time.
func TestPlanSpan(t *testing.T) {
	d := func(s string) *time.Duration { x, _ := time.ParseDuration(s); return &x }
	p := &Plan{Entries: []Entry{
		{Phase: PhaseSetup, Kind: "sleep", Start: Offset{Exact: true}, Duration: d("1s")},
		{Phase: PhaseSteps, Kind: "sleep", Start: Offset{Exact: true}, Duration: d("2s")},
		{Phase: PhaseSteps, Kind: "sleep", Start: Offset{D: 2e9, Exact: true}, Duration: d("500ms")},
	}}
	if got := p.Span(); got != (Offset{D: 3500 * time.Millisecond, Exact: true}) {
		t.Errorf("Span = %v, want +3.5s", got)
	}
	p.Entries = append(p.Entries, Entry{Phase: PhaseCleanup, Kind: "load", Start: Offset{Exact: true}, MinDuration: d("1s")})
	if got := p.Span(); got.String() != "≥4.5s" {
		t.Errorf("Span = %v, want ≥4.5s", got)
	}
}
