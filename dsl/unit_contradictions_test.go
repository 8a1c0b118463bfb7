package dsl

import (
	"strings"
	"testing"
)

// TestUnitContradictions: every unit of a matrix NewMatrix makes (a declared sweep, a --sweep
// flag, a --var, --count) is told nothing, against the scenario too; a unit whose record was
// edited (a value of the sweep taken out, the sweep taken out, a var fixed or swept that the
// scenario does not sweep, a combination or round the matrix does not have, an id they do not
// make) is told, naming what and the values.
func TestUnitContradictions(t *testing.T) {
	sc := &Scenario{Name: "s", Vars: map[string]any{"share": 0.0, "mode": "a", "token": "x"},
		Sweep: map[string][]string{"share": {"0", "100"}, "token": {"p", "q"}}, Secrets: []string{"token"}}
	first := func(flags []SweepVar, pinned map[string]string, count int) *Unit {
		return NewMatrix(sc, flags, pinned, count, 0).Units(func(map[string]string) *Scenario { return nil })[0]
	}
	for _, c := range []struct {
		name string
		unit func() *Unit
		want string // "" for none
	}{
		{"declared", func() *Unit { return first(nil, nil, 1) }, ""},
		{"--sweep and --count", func() *Unit {
			return first([]SweepVar{{Name: "share", Values: []string{"50"}}, {Name: "mode", Values: []string{"a", "b"}}}, nil, 3)
		}, ""},
		{"--var", func() *Unit { return first(nil, map[string]string{"share": "100"}, 1) }, ""},
		{"a secret's values hidden", func() *Unit {
			u := first(nil, nil, 1)
			u.Matrix.Sweep[1].Values = []string{"[secret]", "[secret]"}
			u.Vars["token"] = "[secret]"
			u.ID = UnitID("s", u.Vars, 1)
			return u
		}, ""},
		{"a value taken out", func() *Unit {
			u := first(nil, nil, 1)
			u.Matrix.Sweep[0].Values = []string{"0"}
			return u
		}, "its matrix sweeps share over 0 as the scenario's sweep, but the scenario sweeps it over 0, 100"},
		{"the sweep taken out", func() *Unit {
			u := first(nil, nil, 1)
			u.Matrix.Sweep, u.Vars, u.ID = nil, nil, "s#1"
			return u
		}, "the scenario sweeps share over 0, 100, but its matrix neither sweeps share nor fixes it with --var"},
		{"said to be a flag's", func() *Unit {
			u := first(nil, nil, 1)
			u.Matrix.Sweep[0].From = "--sweep"
			u.Matrix.Sweep[0].Name, u.Vars = "other", map[string]string{"other": "0", "token": "p"}
			u.ID = UnitID("s", u.Vars, 1)
			return u
		}, "its matrix sweeps other (--sweep), a var the scenario does not declare"},
		{"fixed instead of other values", func() *Unit {
			u := first(nil, map[string]string{"share": "100"}, 1)
			u.Matrix.Fixed[0].Instead = []string{"100"}
			return u
		}, "its matrix fixes share (--var) instead of 100, but the scenario sweeps it over 0, 100"},
		{"a combination of other vars", func() *Unit {
			u := first(nil, nil, 1)
			u.Combination = 3
			return u
		}, "it is combination 3 with share=0,token=p, but combination 3 of its matrix (share: 0, 100; token: p, q) is share=100,token=p"},
		{"a combination the matrix has not", func() *Unit {
			u := first(nil, nil, 1)
			u.Combination = 9
			return u
		}, "it is combination 9, but its matrix (share: 0, 100; token: p, q) has 4"},
		{"a round the matrix has not", func() *Unit {
			u := first(nil, nil, 2)
			u.Matrix.Count = 1
			u.Round = 2
			u.ID = UnitID("s", u.Vars, 2)
			return u
		}, "it is round 2, but its matrix runs each combination 1 times"},
		{"another id", func() *Unit {
			u := first(nil, nil, 1)
			u.ID = "s[share=100,token=p]#1"
			return u
		}, "its id is s[share=100,token=p]#1, but its scenario, vars and round make s[share=0,token=p]#1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := strings.Join(c.unit().Contradictions(sc), "; ")
			if c.want == "" && got != "" || !strings.Contains(got, c.want) {
				t.Errorf("contradictions %q, want %q", got, c.want)
			}
		})
	}
}
