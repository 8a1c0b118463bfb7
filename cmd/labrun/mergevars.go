package main

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"labrun.dev/labrun/dsl"
)

// checkGivenVars refuses records that one run would not have made together because the
// command lines that made them gave other vars (--var): the shards of one split (each job
// must be given the same flags), and the runs of one matrix, whose summary is of one
// experiment. A var a run's combination sets (its sweep) is that run's own; the others were
// given alike to every run, or to none. Before, shard 1/2 of a sweep run as it is and shard
// 2/2 run with --var max=100 (a threshold its expectation reads) merged as "SUMMARY sw: 4 of 4
// runs passed" and exit 0: the run ids do not hold a --var, no two records shared an id, and
// the summary named only the swept var, where one run of the whole sweep with either
// command line would have failed or said max=100. Records made before version 6 do not say
// which vars were given, and are not checked.
func checkGivenVars(cwd string, all []mergedRecord) error {
	// saying is how a record ran var k: given with its value, or as its scenario's own.
	type saying struct {
		m     mergedRecord
		given bool
		value string
	}
	type groupVar struct{ group, name string }
	byVar := map[groupVar][]saying{}
	var order []groupVar
	for _, m := range all {
		rec := m.rec
		if rec.Version < 6 {
			continue
		}
		u := unitOrSingle(rec)
		// The group: a shard's split (its jobs must be given the same flags), else the
		// matrix (the runs one summary counts).
		group := "matrix\x00" + matrixKey(u)
		if sh := rec.Shard; sh != nil {
			group = fmt.Sprintf("split\x00%d\x00%d\x00%s", sh.Count, sh.All, sh.Plan)
		}
		names := make([]string, 0, len(rec.Vars))
		for k := range rec.Vars {
			if _, swept := u.Vars[k]; !swept {
				names = append(names, k)
			}
		}
		sort.Strings(names)
		for _, k := range names {
			gk := groupVar{group, k}
			if _, ok := byVar[gk]; !ok {
				order = append(order, gk)
			}
			byVar[gk] = append(byVar[gk], saying{m: m, given: slices.Contains(rec.GivenVars, k), value: dsl.Stringify(rec.Vars[k])})
		}
	}
	var msgs []string
	for _, gk := range order {
		// One command line for all: at most one value given, and the runs not given it had
		// that value as their scenario's own (a run of every one with --var k=v would have
		// had it too). Runs none gave it had each its scenario's own.
		var given *saying
		for i, s := range byVar[gk] {
			if !s.given {
				continue
			}
			if given == nil {
				given = &byVar[gk][i]
			} else if s.value != given.value {
				msgs = append(msgs, fmt.Sprintf("%s ran with %s; %s with %s",
					runWhere(cwd, given.m), varSaying(gk.name, true, given.value), runWhere(cwd, s.m), varSaying(gk.name, true, s.value)))
				break
			}
		}
		if given == nil {
			continue
		}
		for _, s := range byVar[gk] {
			if !s.given && s.value != given.value {
				msgs = append(msgs, fmt.Sprintf("%s ran with %s; %s with %s",
					runWhere(cwd, s.m), varSaying(gk.name, false, s.value), runWhere(cwd, given.m), varSaying(gk.name, true, given.value)))
				break
			}
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	return &exitError{exitInvalid, "merge: " + strings.Join(msgs, "\nlabrun: merge: ") + "\nlabrun: merge: runs made with other --var are not one run of anything (a summary would count them as one experiment): give every shard, and every run of a sweep or --count, the same --var, and run again those that had others"}
}

// runWhere names a record's run and where it is: "run sw[n=1]#1 of shard 1/2 (sh1/….json)".
func runWhere(cwd string, m mergedRecord) string {
	s := "run " + unitOrSingle(m.rec).ID
	if sh := m.rec.Shard; sh != nil {
		s += fmt.Sprintf(" of shard %d/%d", sh.Index, sh.Count)
	}
	return s + " (" + relPath(cwd, m.from) + ")"
}

// varSaying says how a run had var k: "--var max=100", or "no --var max (its scenario's
// own: 5)".
func varSaying(k string, given bool, value string) string {
	if given {
		return "--var " + k + "=" + value
	}
	return "no --var " + k + " (its scenario's own: " + value + ")"
}
