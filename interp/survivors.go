package interp

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/schema"
)

// A scenario's survivors name mutants of `labrun mutate` that may survive its expectations. A
// key that names no mutant the scenario can have (a misspelled stat, a step renamed since)
// allows nothing, and nothing would say so: CheckSurvivors refuses it before any run, with the
// closest mutant name.

// MutantNames are the names of the mutants a run of sc can have, as Mutants names them for a
// run whose snapshots were taken in declaration order.
func MutantNames(sc *dsl.Scenario) []string {
	var names []string
	for _, m := range Mutants(plannedRecord(sc), sc) {
		names = append(names, m.Name)
	}
	return names
}

// plannedRecord is a record of what a run of sc records, with no values: a snapshot per
// snapshot step (taken in declaration order), and for every other named step that records a
// result, an empty one in the form its kind records, a step record per named step.
func plannedRecord(sc *dsl.Scenario) *Record {
	rec := &Record{Results: map[string]*Result{}}
	for i, s := range sc.Snapshots {
		rec.Put(s.Name, s.Kind, false, &SnapshotRecord{Name: s.Name, At: time.Unix(int64(i), 0), Counters: schema.Stats{}, Gauges: schema.Stats{}})
	}
	for _, ph := range sc.Phases() {
		dsl.Walk(ph.Steps, func(s *dsl.Step) {
			if s.Name == "" {
				return
			}
			rec.Steps = append(rec.Steps, &StepRecord{Name: s.Name, Kind: s.Kind, Path: s.Path})
			if _, taken := rec.Results[s.Name]; taken || s.Params == nil || schema.ResultOf(s.Params, recordContext(s.Every > 0)) == nil {
				return
			}
			sampled := s.Every > 0
			v, err := decodeResult(s.Kind, sampled, []byte("null"))
			if err == nil {
				rec.Put(s.Name, s.Kind, sampled, v)
			}
		})
	}
	return rec
}

// recordContext is the ResultContext of a step as a plan knows it.
type recordContext bool

func (c recordContext) Sampled() bool         { return bool(c) }
func (recordContext) ExpectsFailure() bool    { return false }
func (c recordContext) Templated(string) bool { return false }

// deltaPair is the " (a → b)" that names the snapshots of a plain delta's mutant: a run takes
// them in its own order, which may differ from the declaration's.
var deltaPair = regexp.MustCompile(` \([A-Za-z_][A-Za-z0-9_]* → [A-Za-z_][A-Za-z0-9_]*\)$`)

// withoutDeltaPair is name without its deltaPair; most names have none, and are returned
// without a regexp scan (every mutant's name is looked at).
func withoutDeltaPair(name string) string {
	if !strings.HasSuffix(name, ")") || !strings.Contains(name, " → ") {
		return name
	}
	return deltaPair.ReplaceAllString(name, "")
}

// CheckSurvivors returns a problem for every survivors key of sc that names no mutant a run of
// sc can have, at the key's position.
func CheckSurvivors(sc *dsl.Scenario) dsl.Errors {
	if len(sc.Survivors) == 0 {
		return nil
	}
	names := MutantNames(sc)
	known := map[string]bool{}
	for _, n := range names {
		known[withoutDeltaPair(n)] = true
	}
	keys := make([]string, 0, len(sc.Survivors))
	for k := range sc.Survivors {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var errs dsl.Errors
	for _, k := range keys {
		if known[withoutDeltaPair(k)] {
			continue
		}
		msg := fmt.Sprintf("survivors names %q, which is not a mutant of this scenario, so it allows nothing%s", k, dsl.DidYouMean(k, names))
		if len(names) == 0 {
			msg += "; its expectations read nothing labrun mutate perturbs"
		} else {
			msg += "; `labrun mutate` on a run lists the mutants"
		}
		pos := sc.SurvivorPos[k]
		if !pos.IsValid() {
			pos = sc.Pos
		}
		errs = append(errs, &dsl.Error{Pos: pos, Path: sc.Name + ".survivors", Msg: msg})
	}
	return errs
}

// unusedSurvivors are the survivors keys that name none of the mutants built for a run.
func unusedSurvivors(sc *dsl.Scenario, built map[string]bool) []string {
	var out []string
	for k := range sc.Survivors {
		if !built[k] {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}
