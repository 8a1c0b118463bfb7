package dsl

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The experiment matrix: a scenario run at every combination of its swept vars (its own
// sweep:, each --sweep flag replacing the values of the var it names), each combination
// --count times. The matrix is an explicit list of units computed before anything runs — each
// with its vars, a stable id and its planned span — which plan prints, run runs in order, and
// which a scheduler or a shard splitter can take. Every run record carries its unit, matrix
// included, so that a summary is made from the records alone.

// SweepVar is one swept var: its values in order, and who gave them.
type SweepVar struct {
	Name   string   `json:"name"`
	Values []string `json:"values"`
	// From is "scenario" (the scenario's sweep:) or "--sweep"; Instead, of a var --sweep
	// sweeps over other values than the scenario's sweep declares, those (none for a secret).
	From    string   `json:"from"`
	Instead []string `json:"instead,omitempty"`
}

// Source says where the values come from: "the scenario's sweep", "--sweep", or "--sweep;
// the scenario sweeps 2, 4, 8" where the flag replaced what the file declares.
func (s SweepVar) Source() string {
	switch {
	case s.From != "--sweep":
		return "the scenario's sweep"
	case len(s.Instead) > 0:
		return "--sweep; the scenario sweeps " + strings.Join(s.Instead, ", ")
	}
	return "--sweep"
}

// PlotSpec is a plot a scenario asks its summary to draw first (plot:).
type PlotSpec struct {
	// Y is a value an expectation reads, as ReadsOf names it; X the swept var it is drawn
	// against ("": the first swept var); Unit the unit of Y ("": labrun's guess).
	Y    string `json:"y"`
	X    string `json:"x,omitempty"`
	Unit string `json:"unit,omitempty"`
	Pos  Pos    `json:"pos"`
}

// Matrix is the runs of one scenario that one invocation makes.
type Matrix struct {
	Scenario string `json:"scenario"`
	// File is the file that declares the scenario.
	File string `json:"file"`
	// Sweep is the swept vars, sorted by name; the first varies slowest.
	Sweep []SweepVar `json:"sweep,omitempty"`
	// Count is how many times each combination runs.
	Count int `json:"count"`
	// PassRate is the fraction of runs that must pass (0: all).
	PassRate float64    `json:"passRate,omitempty"`
	Plot     []PlotSpec `json:"plot,omitempty"`
	// Fixed are the vars of the scenario's sweep that --var fixed at one value.
	Fixed []FixedVar `json:"fixed,omitempty"`
}

// Plan is m as a plan of runs: where each swept var's values came from (the scenario's sweep
// or --sweep) left out, so that a --sweep of exactly the values the scenario declares is the
// same plan as the scenario's own sweep (merge took the two for two plans).
func (m Matrix) Plan() Matrix {
	m.Sweep = slices.Clone(m.Sweep)
	for i := range m.Sweep {
		m.Sweep[i].From = ""
	}
	return m
}

// FixedVar is a var the scenario sweeps, fixed at one value by --var.
type FixedVar struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	// From is who fixed it ("--var"); Instead the values the scenario's sweep declares.
	From    string   `json:"from"`
	Instead []string `json:"instead,omitempty"`
}

// Unit is one run of a matrix: the scenario at one combination of its swept vars, one
// repetition.
type Unit struct {
	// ID is stable: the same scenario, combination and round have the same id in every
	// process ("sweep[connections=1,requests=2]#1").
	ID     string  `json:"id"`
	Matrix *Matrix `json:"matrix"`
	// Vars are the combination's values, as the command line writes them.
	Vars map[string]string `json:"vars,omitempty"`
	// Combination is the index of Vars among the matrix's combinations, Round the repetition;
	// both count from 1.
	Combination int `json:"combination"`
	Round       int `json:"round"`
	// Planned is the run's planned span (setup, steps, cleanup) from its plan; a lower bound
	// when a step's duration is known only at run time.
	Planned Offset `json:"planned"`
	// Scenario is the scenario loaded with the combination's vars.
	Scenario *Scenario `json:"-"`
}

// PlanUnit is a unit as plan lists it.
type PlanUnit struct {
	ID          string            `json:"id"`
	Vars        map[string]string `json:"vars,omitempty"`
	Combination int               `json:"combination"`
	Round       int               `json:"round"`
	Planned     Offset            `json:"planned"`
}

// PlanUnits lists units for a plan.
func PlanUnits(units []*Unit) []PlanUnit {
	out := make([]PlanUnit, len(units))
	for i, u := range units {
		out[i] = PlanUnit{ID: u.ID, Vars: u.Vars, Combination: u.Combination, Round: u.Round, Planned: u.Planned}
	}
	return out
}

// Combinations is the cartesian product of the sweep, the first var varying slowest (one
// empty combination without a sweep).
func (m *Matrix) Combinations() []map[string]string {
	combos := []map[string]string{{}}
	for _, s := range m.Sweep {
		var next []map[string]string
		for _, c := range combos {
			for _, v := range s.Values {
				n := make(map[string]string, len(c)+1)
				for k, x := range c {
					n[k] = x
				}
				n[s.Name] = v
				next = append(next, n)
			}
		}
		combos = next
	}
	return combos
}

// Runs is how many runs the matrix makes.
func (m *Matrix) Runs() int { return len(m.Combinations()) * m.Count }

// Summarized reports whether the matrix writes a summary: it sweeps, or repeats.
func (m *Matrix) Summarized() bool { return len(m.Sweep) > 0 || m.Count > 1 }

// Units lists the matrix's runs, combination by combination, each combination's rounds in
// order; load returns the scenario at a combination's vars. Each unit's Planned is its
// scenario's planned span.
func (m *Matrix) Units(load func(vars map[string]string) *Scenario) []*Unit {
	return m.units(load, true)
}

// UnitsUnplanned is Units without the plans: every Planned is zero. vet and the language
// server show no unit's span, and planning every run was 3 % of a vet of 1,000 files.
func (m *Matrix) UnitsUnplanned(load func(vars map[string]string) *Scenario) []*Unit {
	return m.units(load, false)
}

func (m *Matrix) units(load func(vars map[string]string) *Scenario, plan bool) []*Unit {
	var out []*Unit
	for i, c := range m.Combinations() {
		sc := load(c)
		planned := Offset{Exact: true}
		if sc != nil && plan {
			planned = planTimes(sc).Span() // the span reads no summary
		}
		for r := 1; r <= m.Count; r++ {
			out = append(out, &Unit{ID: UnitID(m.Scenario, c, r), Matrix: m, Vars: c, Combination: i + 1, Round: r, Planned: planned, Scenario: sc})
		}
	}
	return out
}

// ComboKey writes a combination as "connections=1,requests=2" (sorted by name).
func ComboKey(vars map[string]string) string { return Pairs(vars, ",") }

// Pairs writes m's entries as name=value, sorted by name, joined by sep.
func Pairs(m map[string]string, sep string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + m[k]
	}
	return strings.Join(parts, sep)
}

// SameID is the first two combinations of m whose runs would have one id, and a var of the
// first whose value holds the comma that makes them one ("" when none does): a swept string
// that holds a comma (a = "1,b=2" beside b = "3", and a = "1" beside b = "2,b=3", are both
// s[a=1,b=2,b=3]#1). Nil when every combination has an id of its own.
func (m *Matrix) SameID() (a, b map[string]string, culprit string) {
	seen := map[string]map[string]string{}
	for _, c := range m.Combinations() {
		k := ComboKey(c)
		prev, ok := seen[k]
		if !ok {
			seen[k] = c
			continue
		}
		for _, vars := range []map[string]string{prev, c} {
			for _, n := range sortedKeys(vars) {
				if culprit == "" && strings.Contains(vars[n], ",") {
					culprit = n
				}
			}
		}
		return prev, c, culprit
	}
	return nil, nil, ""
}

// UnitID is a unit's stable id: scenario[combination]#round.
func UnitID(scenario string, vars map[string]string, round int) string {
	id := scenario
	if len(vars) > 0 {
		id += "[" + ComboKey(vars) + "]"
	}
	return fmt.Sprintf("%s#%d", id, round)
}

// NewMatrix is sc's matrix: its own sweep, with the values of each flag's var replacing that
// var's (a flag naming a var sc does not declare is another scenario's, and left out), the
// vars pinned by --var taken out, each combination run count times.
func NewMatrix(sc *Scenario, flags []SweepVar, pinned map[string]string, count int, passRate float64) *Matrix {
	m := &Matrix{Scenario: sc.Name, File: sc.Pos.File, Count: count, PassRate: passRate, Plot: sc.Plot}
	byName := map[string]SweepVar{}
	for k, vals := range sc.Sweep {
		byName[k] = SweepVar{Name: k, Values: vals, From: "scenario"}
	}
	for _, f := range flags {
		if _, ok := sc.Vars[f.Name]; ok {
			// Each value as the var's type writes it (01 of an integer is 1, 0.50 of a
			// number 0.5): before, --sweep n=01 ran sw[n=01]#1, the run sw[n=1]#1 of
			// another invocation under another id, and diff of their summaries found no
			// combination in common ("only in A: n=1", "only in B: n=01").
			vals := make([]string, len(f.Values))
			for i, v := range f.Values {
				vals[i] = sweptValue(sc.VarKinds[f.Name], v)
			}
			sv := SweepVar{Name: f.Name, Values: vals, From: "--sweep"}
			if declared, ok := sc.Sweep[f.Name]; ok && !slices.Equal(declared, vals) && !slices.Contains(sc.Secrets, f.Name) {
				sv.Instead = declared
			}
			byName[f.Name] = sv
		}
	}
	for _, k := range sortedKeys(pinned) {
		if vals, ok := sc.Sweep[k]; ok {
			if slices.Contains(sc.Secrets, k) {
				vals = nil // a secret's declared values are not written anywhere
			}
			v := pinned[k]
			if sc.VarKinds[k] == "duration" {
				v = sweptValue("duration", v) // as the run has it (overrideLit), and the sweep's values
			}
			m.Fixed = append(m.Fixed, FixedVar{Name: k, Value: v, From: "--var", Instead: vals})
		}
		delete(byName, k)
	}
	for _, k := range sortedKeys(byName) {
		m.Sweep = append(m.Sweep, byName[k])
	}
	return m
}

// CheckSweep checks every value of each --sweep flag against the type of the var as sc
// declares it: a problem is reported at the var's declaration, naming the flag.
func CheckSweep(sc *Scenario, flags []SweepVar) Errors {
	var errs Errors
	for _, f := range flags {
		kind, ok := sc.VarKinds[f.Name]
		if !ok {
			continue
		}
		var bad []string
		want := ""
		for _, v := range f.Values {
			if w, ok := VarValueOK(kind, v); !ok {
				if v == "" {
					v = "an empty value (two commas, or one at an end)" // it read "got " alone
				}
				bad, want = append(bad, v), w
			}
		}
		if len(bad) > 0 {
			errs = append(errs, &Error{Pos: sc.Declared[f.Name], Msg: fmt.Sprintf("--sweep %s=%s: expected %s, as vars.%s is declared here; got %s",
				f.Name, strings.Join(f.Values, ","), want, f.Name, strings.Join(bad, ", "))})
		}
		for _, msg := range sweepFlagProblems(sc, f) {
			errs = append(errs, &Error{Pos: sc.Declared[f.Name], Msg: msg})
		}
	}
	return errs
}

// VarValueOK checks a value written on the command line against a var's declared kind (see
// Scenario.VarKinds); it returns what was expected.
func VarValueOK(kind, raw string) (string, bool) {
	switch kind {
	case "int":
		_, err := strconv.ParseInt(raw, 10, 64)
		return "an integer", err == nil
	case "number":
		_, err := strconv.ParseFloat(raw, 64)
		return "a number", err == nil
	case "bool":
		_, err := strconv.ParseBool(raw)
		return "true or false", err == nil
	case "duration":
		return durationWanted, isDuration(raw)
	}
	return "", true
}

// durationWanted is what a var declared with a duration string must be given.
const durationWanted = `a duration such as "500ms" or "2s"`

// isDuration reports whether s is a Go duration with a unit ("100ms", "1m30s"; not "0" or
// "1 second").
func isDuration(s string) bool {
	if _, err := time.ParseDuration(s); err != nil {
		return false
	}
	return strings.ContainsAny(s, "nsuµmh")
}

// Span is the run's planned span: each phase's latest planned end (a step's start and its
// known duration), summed. It is exact only when every step's start and duration are.
func (p *Plan) Span() Offset {
	total := Offset{Exact: true}
	for _, ph := range []Phase{PhaseSetup, PhaseSteps, PhaseCleanup} {
		end := Offset{Exact: true}
		for _, e := range p.Entries {
			if e.Phase != ph || e.Background || slices.Contains([]string{"parallel", "sequence", "repeat"}, e.Kind) {
				continue
			}
			var d time.Duration
			exact := e.Start.Exact
			switch {
			case e.Duration != nil:
				d = *e.Duration
			case e.MinDuration != nil:
				d, exact = *e.MinDuration, false
			default:
				exact = false
			}
			if e.Start.D+d > end.D {
				end.D = e.Start.D + d
			}
			end.Exact = end.Exact && exact
		}
		total = total.add(end.D, end.Exact)
	}
	return total
}

// Contradictions say how u, a run's unit as its record holds it, cannot be one that run made:
// its round is not one of its matrix's rounds, its combination not the matrix's combination
// of that index, its id not the one the two give. When sc is not nil (the scenario loaded from
// the source the run ran), they also say how u's matrix is not the one sc declares with the
// flags the matrix records: a var sc sweeps that the matrix neither sweeps nor fixes (--var),
// a var swept "from the scenario" with other values than sc's, a var swept or fixed that sc
// does not declare. The count and the values of --sweep came from the command line, which
// only the record holds. A secret var's values are not compared (the record hides them).
func (u *Unit) Contradictions(sc *Scenario) []string {
	m := u.Matrix
	if m == nil {
		return nil
	}
	var out []string
	if m.Count < 1 {
		out = append(out, fmt.Sprintf("its matrix runs each combination %d times", m.Count))
	} else if u.Round < 1 || u.Round > m.Count {
		out = append(out, fmt.Sprintf("it is round %d, but its matrix runs each combination %d times", u.Round, m.Count))
	}
	combos := m.Combinations()
	switch {
	case u.Combination < 1 || u.Combination > len(combos):
		out = append(out, fmt.Sprintf("it is combination %d, but its matrix (%s) has %d", u.Combination, sweepText(m.Sweep), len(combos)))
	case ComboKey(combos[u.Combination-1]) != ComboKey(u.Vars):
		out = append(out, fmt.Sprintf("it is combination %d with %s, but combination %d of its matrix (%s) is %s", u.Combination, orNone(ComboKey(u.Vars)), u.Combination, sweepText(m.Sweep), orNone(ComboKey(combos[u.Combination-1]))))
	}
	if id := UnitID(m.Scenario, u.Vars, u.Round); u.ID != id && !strings.HasSuffix(u.ID, ":"+id) {
		out = append(out, fmt.Sprintf("its id is %s, but its scenario, vars and round make %s", u.ID, id))
	}
	if sc == nil {
		return out
	}
	secret := func(k string) bool { return slices.Contains(sc.Secrets, k) }
	swept := map[string]bool{}
	for _, s := range m.Sweep {
		swept[s.Name] = true
		declared, sweeps := sc.Sweep[s.Name]
		switch {
		case s.From == "--sweep":
			if _, ok := sc.Vars[s.Name]; !ok {
				out = append(out, fmt.Sprintf("its matrix sweeps %s (--sweep), a var the scenario does not declare", s.Name))
			}
		case !sweeps:
			out = append(out, fmt.Sprintf("its matrix sweeps %s over %s as the scenario's sweep, but the scenario does not sweep %s", s.Name, strings.Join(s.Values, ", "), s.Name))
		case !secret(s.Name) && !sameSwept(sc.VarKinds[s.Name], s.Values, declared):
			out = append(out, fmt.Sprintf("its matrix sweeps %s over %s as the scenario's sweep, but the scenario sweeps it over %s", s.Name, strings.Join(s.Values, ", "), strings.Join(declared, ", ")))
		}
	}
	for _, f := range m.Fixed {
		swept[f.Name] = true
		declared, sweeps := sc.Sweep[f.Name]
		switch {
		case !sweeps:
			out = append(out, fmt.Sprintf("its matrix fixes %s (--var) in the scenario's sweep, but the scenario does not sweep %s", f.Name, f.Name))
		case !secret(f.Name) && !sameSwept(sc.VarKinds[f.Name], f.Instead, declared):
			out = append(out, fmt.Sprintf("its matrix fixes %s (--var) instead of %s, but the scenario sweeps it over %s", f.Name, strings.Join(f.Instead, ", "), strings.Join(declared, ", ")))
		}
	}
	for _, k := range sortedKeys(sc.Sweep) {
		if !swept[k] {
			out = append(out, fmt.Sprintf("the scenario sweeps %s over %s, but its matrix neither sweeps %s nor fixes it with --var", k, strings.Join(sc.Sweep[k], ", "), k))
		}
	}
	return out
}

// sameSwept reports whether two lists of a var's swept values are the same values, each as
// its kind writes it: a record made before the scenario's own values were kept so holds a
// duration as the file writes it ("90s", now 1m30s).
func sameSwept(kind string, a, b []string) bool {
	return slices.EqualFunc(a, b, func(x, y string) bool { return x == y || sweptValue(kind, x) == sweptValue(kind, y) })
}

// sweepText writes a matrix's sweep: "share: 0, 100; x: a" ("no sweep" without one).
func sweepText(sweep []SweepVar) string {
	if len(sweep) == 0 {
		return "no sweep"
	}
	parts := make([]string, len(sweep))
	for i, s := range sweep {
		parts[i] = s.Name + ": " + strings.Join(s.Values, ", ")
	}
	return strings.Join(parts, "; ")
}

func orNone(s string) string {
	if s == "" {
		return "no vars"
	}
	return s
}
