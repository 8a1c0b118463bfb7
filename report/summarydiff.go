package report

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/interp"
)

// Comparing two summaries combination by combination: for every value the runs read, its
// median and spread (min–max) in A and in B, and the change of the median; for every
// combination, its runs passed. Two summaries that share no combination (other swept vars,
// other values) are not compared: ComboDiff says why.

// Spread is a value over the runs of one combination.
type Spread struct {
	Min    float64 `json:"min"`
	Median float64 `json:"median"`
	Max    float64 `json:"max"`
	Runs   int     `json:"runs"`
}

// ComboValueDiff is one value of one combination that differs.
type ComboValueDiff struct {
	Combination string  `json:"combination"`
	Value       string  `json:"value"`
	Unit        string  `json:"unit,omitempty"`
	A           *Spread `json:"a"`
	B           *Spread `json:"b"`
	// Rel is the median's relative change (absent when A's median is 0 or a side is absent).
	Rel    *float64 `json:"rel,omitempty"`
	Beyond bool     `json:"beyond"`
}

// PassChange is a combination whose runs passed differently.
type PassChange struct {
	Combination string `json:"combination"`
	A           string `json:"a"`
	B           string `json:"b"`
}

// SummaryDiff is the comparison of two summaries.
type SummaryDiff struct {
	ScenarioA string           `json:"scenarioA"`
	ScenarioB string           `json:"scenarioB"`
	Combos    []string         `json:"combinations"`
	OnlyA     []string         `json:"onlyA,omitempty"`
	OnlyB     []string         `json:"onlyB,omitempty"`
	Values    []ComboValueDiff `json:"values"`
	Passed    []PassChange     `json:"passed"`
	// Verdict is set when the summaries' verdicts differ (the same runs passed, judged by
	// another pass rate, or other runs).
	Verdict *SummaryVerdictChange `json:"verdict,omitempty"`
	// Beyond counts the values beyond the tolerance, the combinations in one summary only,
	// the pass counts that changed and a changed verdict.
	Beyond int `json:"beyond"`
}

// SummaryVerdictChange is a summary verdict that differs, with the pass rate each summary
// required (0: every run must pass).
type SummaryVerdictChange struct {
	A         string  `json:"a"`
	B         string  `json:"b"`
	PassRateA float64 `json:"passRateA"`
	PassRateB float64 `json:"passRateB"`
}

// PassRule says what a summary of pass rate passRate requires: "every run must pass", "pass
// rate 0.5".
func PassRule(passRate float64) string {
	if passRate > 0 {
		return fmt.Sprintf("pass rate %g", passRate)
	}
	return "every run must pass"
}

// MarshalJSON writes the spread, a non-finite number (a ratio read as +Inf) as its string.
func (s Spread) MarshalJSON() ([]byte, error) {
	return interp.MarshalUnescaped(struct {
		Min    any `json:"min"`
		Median any `json:"median"`
		Max    any `json:"max"`
		Runs   int `json:"runs"`
	}{interp.JSONNumber(s.Min), interp.JSONNumber(s.Median), interp.JSONNumber(s.Max), s.Runs})
}

// MarshalJSON writes the row, a non-finite relative change (from a value read as +Inf) as its
// string.
func (r ComboValueDiff) MarshalJSON() ([]byte, error) {
	var rel any
	if r.Rel != nil {
		rel = interp.JSONNumber(*r.Rel)
	}
	return interp.MarshalUnescaped(struct {
		Combination string  `json:"combination"`
		Value       string  `json:"value"`
		Unit        string  `json:"unit,omitempty"`
		A           *Spread `json:"a"`
		B           *Spread `json:"b"`
		Rel         any     `json:"rel,omitempty"`
		Beyond      bool    `json:"beyond"`
	}{r.Combination, r.Value, r.Unit, r.A, r.B, rel, r.Beyond})
}

// sameSpread says whether two spreads are equal, NaN equal to NaN.
func sameSpread(x, y Spread) bool {
	eq := func(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }
	return eq(x.Min, y.Min) && eq(x.Median, y.Median) && eq(x.Max, y.Max) && x.Runs == y.Runs
}

// comboKeyByValue is a combination's key with each value as its meaning writes it: a duration
// as Go writes it, a number as NumberText does. A summary made before a combination had one id
// however its values were given holds a swept "90s" (now 1m30s) or 1e+06 (now 1000000): keyed by
// the text, diff paired nothing of it with a newer summary of the same sweep ("only in A:
// d=90s", "only in B: d=1m30s").
func comboKeyByValue(vars map[string]string) string {
	m := make(map[string]string, len(vars))
	for k, v := range vars {
		m[k] = valueMeaning(v)
	}
	return dsl.ComboKey(m)
}

// valueMeaning writes a swept value by its meaning: a number (1e+06, 1000000.0) as NumberText, a
// duration with a unit (90s, 1500ms) as Go writes it, anything else without the spaces around
// it.
func valueMeaning(v string) string {
	v = strings.TrimSpace(v)
	if f, err := strconv.ParseFloat(v, 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
		return dsl.NumberText(f)
	}
	if d, err := time.ParseDuration(v); err == nil {
		return d.String()
	}
	return v
}

// keysApart reports whether key gives every group of one summary a key of its own: a string var
// swept over "90s" and "1m30s" is two combinations, which their meaning would make one (then
// diff pairs by the text).
func keysApart(groups []*group, key func(map[string]string) string) bool {
	seen := map[string]bool{}
	for _, g := range groups {
		k := key(g.vars)
		if seen[k] {
			return false
		}
		seen[k] = true
	}
	return true
}

// DiffSummaries compares a and b combination by combination (their values by meaning:
// comboKeyByValue); it refuses (an error saying why) when they share no combination.
func DiffSummaries(a, b *Summary, tolerance float64) (*SummaryDiff, error) {
	sa, sb := slices.Sorted(slices.Values(a.Sweeps)), slices.Sorted(slices.Values(b.Sweeps))
	if !slices.Equal(sa, sb) {
		return nil, fmt.Errorf("A sweeps %s and B sweeps %s: their combinations cannot be paired (diff compares summaries of the same swept vars)", sweptNames(a), sweptNames(b))
	}
	ga, gb := map[string]*group{}, map[string]*group{}
	var order []string
	groupsA, groupsB := summaryGroups(a), summaryGroups(b)
	key := comboKeyByValue
	if !keysApart(groupsA, key) || !keysApart(groupsB, key) {
		key = func(vars map[string]string) string { return dsl.ComboKey(vars) }
	}
	for _, g := range groupsA {
		k := key(g.vars)
		ga[k] = g
		order = append(order, k)
	}
	for _, g := range groupsB {
		k := key(g.vars)
		gb[k] = g
		if ga[k] == nil {
			order = append(order, k)
		}
	}
	d := &SummaryDiff{ScenarioA: a.Scenario, ScenarioB: b.Scenario, Values: []ComboValueDiff{}, Passed: []PassChange{}}
	for _, k := range order {
		switch {
		case gb[k] == nil:
			d.OnlyA = append(d.OnlyA, k)
		case ga[k] == nil:
			d.OnlyB = append(d.OnlyB, k)
		default:
			d.Combos = append(d.Combos, k)
		}
	}
	if len(d.Combos) == 0 {
		return nil, fmt.Errorf("A and B share no combination of %s (A: %s; B: %s)", sweptNames(a), strings.Join(d.OnlyA, "; "), strings.Join(d.OnlyB, "; "))
	}
	d.Beyond = len(d.OnlyA) + len(d.OnlyB)
	if a.Verdict != b.Verdict {
		d.Verdict = &SummaryVerdictChange{A: a.Verdict, B: b.Verdict, PassRateA: a.PassRate, PassRateB: b.PassRate}
		d.Beyond++
	}
	values := map[string]bool{}
	for _, v := range append(summaryValues(a), summaryValues(b)...) {
		values[v] = true
	}
	for _, k := range d.Combos {
		na, ea := runCounts(ga[k])
		nb, eb := runCounts(gb[k])
		if na*b.Count != nb*a.Count || ea*b.Count != eb*a.Count { // the share of runs passed, or erred, changed
			d.Passed = append(d.Passed, PassChange{Combination: k, A: passedOf(ga[k], a.Count), B: passedOf(gb[k], b.Count)})
			d.Beyond++
		}
		for _, v := range sortedKeys(values) {
			x, y := spreadOf(ga[k].runs, v), spreadOf(gb[k].runs, v)
			if x == nil && y == nil || x != nil && y != nil && sameSpread(*x, *y) {
				continue
			}
			row := ComboValueDiff{Combination: k, Value: v, Unit: or(a.Units[v], b.Units[v]), A: x, B: y, Beyond: true}
			if x != nil && y != nil {
				if x.Median != 0 {
					rel := (y.Median - x.Median) / math.Abs(x.Median)
					row.Rel = &rel
					row.Beyond = !(math.Abs(rel) <= tolerance) // from ±Inf or NaN: NaN, beyond
				} else {
					row.Beyond = y.Median != 0
				}
			}
			if row.Beyond {
				d.Beyond++
			}
			d.Values = append(d.Values, row)
		}
	}
	return d, nil
}

func spreadOf(runs []SummaryRun, v string) *Spread {
	lo, med, hi, n := spread(runs, v)
	if n == 0 {
		return nil
	}
	return &Spread{Min: lo, Median: med, Max: hi, Runs: n}
}

func sweptNames(s *Summary) string {
	if len(s.Sweeps) == 0 {
		return "nothing"
	}
	return strings.Join(s.Sweeps, " × ")
}

// SortByChange orders rows by the size of their relative change, largest first; a value
// present on one side only, or that left 0, comes first.
func SortByChange[T any](rows []T, rel func(T) (float64, bool), key func(T) string) {
	size := func(r T) float64 {
		if x, ok := rel(r); ok {
			return math.Abs(x)
		}
		return math.Inf(1)
	}
	sort.SliceStable(rows, func(i, j int) bool {
		si, sj := size(rows[i]), size(rows[j])
		if si != sj {
			return si > sj
		}
		return key(rows[i]) < key(rows[j])
	})
}

// SpreadText writes a spread: "12 ms (10–15)", its median alone for one run.
func SpreadText(s *Spread, unit string) string {
	if s == nil {
		return "—"
	}
	if s.Runs == 1 || s.Min == s.Max {
		return withUnit(s.Median, unit)
	}
	return fmt.Sprintf("%s (%s–%s)", withUnit(s.Median, unit), sig4(s.Min), sig4(s.Max))
}
