package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/interp"
)

// checkInvocations refuses the records of a labrun run of several runs (interp.Record's
// Invocation: several scenarios, a matrix) where a scenario it ran has no record among those
// given, or a record is of a scenario it did not run, and those that say it ran fewer runs at
// once (its --parallel) than their times overlap. Before, a run of s.cue t.cue whose records of
// t were taken out of the folder merged as PASSED s, and a record's parallel edited from 2 to 1
// (so that a run would read as one that ran alone) went unseen. The records of one run say the
// same of it. A scenario of which some records are given is held to its matrix (checkMatrices:
// its runs without a record fail it). A run under --fail-fast that holds a run that did not
// pass may hold no record of a scenario (the runs not started after it have none). Records
// without invocation (a run alone, or made before version 7) are not checked; nor are records
// whose invocation was taken out of every one of them (they read as runs of labrun run each
// alone: records are not signed).
func checkInvocations(cwd string, all []mergedRecord) error {
	byID := map[string][]mergedRecord{}
	var order []string
	for _, m := range all {
		inv := m.rec.Invocation
		if inv == nil {
			continue
		}
		if _, ok := byID[inv.ID]; !ok {
			order = append(order, inv.ID)
		}
		byID[inv.ID] = append(byID[inv.ID], m)
	}
	var msgs []string
	for _, id := range order {
		ms := byID[id]
		inv := *ms[0].rec.Invocation
		if i := slices.IndexFunc(ms, func(m mergedRecord) bool { return !sameInvocation(*m.rec.Invocation, inv) }); i > 0 {
			msgs = append(msgs, fmt.Sprintf("%s and %s are records of one labrun run (invocation %s) that say otherwise of it (%s; %s): one was edited", relPath(cwd, ms[0].from), relPath(cwd, ms[i].from), id, invocationWords(inv), invocationWords(*ms[i].rec.Invocation)))
			continue
		}
		held := map[string]bool{}
		notPassed := false
		for _, m := range ms {
			k := scenarioKey(unitOrSingle(m.rec))
			if inv.Scenarios[k] == 0 {
				msgs = append(msgs, fmt.Sprintf("%s: the labrun run that made it (invocation %s) ran %s, not %s: a record of a scenario it did not run (one whose scenario or file was edited) stands for one it ran", relPath(cwd, m.from), id, invocationWords(inv), k))
			}
			held[k] = true
			notPassed = notPassed || m.rec.Outcome != interp.Passed
		}
		var absent []string
		for _, k := range slices.Sorted(maps.Keys(inv.Scenarios)) {
			if !held[k] {
				absent = append(absent, fmt.Sprintf("%s (%d run%s)", k, inv.Scenarios[k], plural(inv.Scenarios[k])))
			}
		}
		if len(absent) > 0 && !(inv.FailFast && notPassed) {
			msgs = append(msgs, fmt.Sprintf("%s: the labrun run that made it (invocation %s) ran %s, but the records given hold none of %s: taken out, or not given; a summary of part of its runs would not say what ran: merge the records of every run it ran", relPath(cwd, ms[0].from), id, invocationWords(inv), strings.Join(absent, ", ")))
		}
		if inv.Sources != nil {
			msgs = append(msgs, invocationStandIns(cwd, id, inv, ms)...)
		}
		if inv.Start != nil {
			if msg := idleGap(cwd, id, *inv.Start, ms); msg != "" {
				msgs = append(msgs, msg)
			}
		}
		if n, at := mostAtOnce(ms); n > inv.Parallel {
			msgs = append(msgs, fmt.Sprintf("%s: the labrun run that made it (invocation %s) ran at most %d run%s at once (--parallel %d), but %d of its records ran at once at %s: %s; the record was changed after the run or is corrupt", relPath(cwd, ms[0].from), id, inv.Parallel, plural(inv.Parallel), inv.Parallel, n, at.UTC().Format(time.RFC3339Nano), strings.Join(ranAt(cwd, ms, at), ", ")))
		}
	}
	msgs = append(msgs, partsOfRuns(all)...)
	if len(msgs) == 0 {
		return nil
	}
	return &exitError{exitInvalid, "merge: " + strings.Join(msgs, "\nlabrun: merge: ")}
}

// checkInvocationRuns refuses records whose matrix plans another number of runs of their
// scenario (combinations × count) than the labrun run that made them ran (their invocation's
// count): a --count 3's failed last round taken out and the count made 2 in the records left,
// or a --sweep's failed value taken out of the matrix with its record, the invocation left as
// the run wrote it, merged as "2 of 2 runs passed", exit 0. It runs after the checks that say
// more of such an edit (a matrix that is not its scenario's, a summary beside the records).
// A shard's invocation counts the shard's runs alone (checkShards holds them to their split).
func checkInvocationRuns(cwd string, all []mergedRecord) error {
	msgs := invocationRuns(cwd, all)
	if len(msgs) == 0 {
		return nil
	}
	return &exitError{exitInvalid, "merge: " + strings.Join(msgs, "\nlabrun: merge: ") + "\nlabrun: merge: a record whose matrix is not the one its run had was edited or damaged; merge counts no run from it"}
}

// invocationRuns says, of each scenario of each labrun run among all, where its records'
// matrix plans another number of runs than the run ran (checkInvocationRuns); labrun diff
// holds the records beside a summary to it too.
func invocationRuns(cwd string, all []mergedRecord) []string {
	said := map[[2]string]bool{}
	var msgs []string
	for _, m := range all {
		inv := m.rec.Invocation
		if inv == nil || m.rec.Shard != nil {
			continue
		}
		u := unitOrSingle(m.rec)
		k := scenarioKey(u)
		ran, n := inv.Scenarios[k], u.Matrix.Runs()
		if ran == 0 || n == ran || said[[2]string{inv.ID, k}] {
			continue
		}
		said[[2]string{inv.ID, k}] = true
		combos := len(u.Matrix.Combinations())
		edit := "smaller (a run taken out)"
		if n > ran {
			edit = "larger"
		}
		msgs = append(msgs, fmt.Sprintf("%s: run %s: its matrix plans %d run%s (%d combination%s × %d), but the labrun run that made it (invocation %s) ran %d run%s of %s: its matrix was made %s, or the invocation was edited", relPath(cwd, m.from), u.ID, n, plural(n), combos, plural(combos), u.Matrix.Count, inv.ID, ran, plural(ran), k, edit))
	}
	return msgs
}

// partsOfRuns says where the records of one scenario (none of a shard) are parts of several
// labrun runs: the runs of a scenario in one labrun run keep one invocation, and records of it
// from several runs hold all of each run's runs of it (its invocation's count) — a labrun run
// again makes them all. Before, the record of a sweep's failed combination replaced by the
// passed record of that combination from another labrun run (no edit: every record and seal
// as the runs wrote them) merged as "2 of 2 runs passed", exit 0; and a summary whose failed
// run was edited to passed and linked to that record read "2 of 2 runs passed" in diff, each
// run what its record said. A record kept as the later of two of one run (a retry) is one of
// its labrun run's runs as any other. Shards' records (each shard a labrun run of its own
// part) are held to their split (checkShards), and records made before version 7 (which kept
// no invocation) are not checked, nor a run of --fail-fast that holds a run that did not pass
// (those after it never started). A record of version 7 on that keeps no invocation is a part
// of its own: its invocation taken out, the stand-in read as a run alone.
func partsOfRuns(recs []mergedRecord) []string {
	type group struct{ key, id string }
	runs := map[group][]string{}
	invs := map[string][]string{}
	var keys []string
	for _, m := range recs {
		inv := m.rec.Invocation
		if m.rec.Shard != nil || inv == nil && m.rec.Version < 7 {
			continue
		}
		// A record of version 7 on without invocation is of a labrun run of one run (or its
		// invocation was taken out): a part of its own beside the runs of others.
		id := ""
		if inv != nil {
			id = inv.ID
		}
		k := scenarioKey(unitOrSingle(m.rec))
		g := group{k, id}
		if _, ok := invs[k]; !ok {
			keys = append(keys, k)
		}
		if _, ok := runs[g]; !ok {
			invs[k] = append(invs[k], id)
		}
		runs[g] = append(runs[g], unitOrSingle(m.rec).ID)
	}
	planned := map[group]int{}
	cut := map[string]bool{} // a run of --fail-fast whose runs after one that did not pass did not start
	for _, m := range recs {
		if inv := m.rec.Invocation; inv != nil && m.rec.Shard == nil {
			k := scenarioKey(unitOrSingle(m.rec))
			planned[group{k, inv.ID}] = inv.Scenarios[k]
			cut[inv.ID] = cut[inv.ID] || inv.FailFast && m.rec.Outcome != interp.Passed
		}
	}
	var out []string
	for _, k := range keys {
		if len(invs[k]) < 2 {
			continue
		}
		var parts []string
		for _, id := range invs[k] {
			g := group{k, id}
			if n := planned[g]; len(runs[g]) < n && !cut[id] {
				parts = append(parts, fmt.Sprintf("%d of the %d runs of labrun run %s (%s)", len(runs[g]), n, id, strings.Join(runs[g], ", ")))
			}
		}
		if g := (group{k, ""}); len(parts) > 0 && len(runs[g]) > 0 {
			parts = append(parts, fmt.Sprintf("%s, of a record that keeps no invocation (a labrun run of one run, or one whose invocation was taken out)", strings.Join(runs[g], ", ")))
		}
		if len(parts) > 0 {
			out = append(out, fmt.Sprintf("the records of %s are of %d labrun runs, and hold only part of the runs of it of each: %s; a labrun run makes every run of a scenario it runs: a record of another run stands for one of the run the others are of", k, len(invs[k]), strings.Join(parts, "; ")))
		}
	}
	return out
}

// invocationStandIns are why records of ms, all of invocation id (inv, which keeps its sources
// and vars), are of another run of their scenario than the one it ran: given a --var it was
// not given, or not given one it was (a var their scenario declares), or run from another
// source than the one it ran their scenario from, or started before it began its runs (an
// older run's record).
// Before, a suite's failed run replaced by a passed run of the same scenario (run alone
// with --var, or from a checkout that fixed it) with the invocation copied into it merged as
// PASSED, exit 0: the invocation named the scenario and its count of runs, which the stand-in
// matched.
func invocationStandIns(cwd, id string, inv interp.InvocationRecord, ms []mergedRecord) []string {
	var msgs []string
	for _, m := range ms {
		rec := m.rec
		var given, notGiven []string
		swept := unitOrSingle(rec).Vars
		for _, k := range rec.GivenVars {
			if _, ok := swept[k]; !ok && !slices.Contains(inv.Vars, k) {
				given = append(given, k)
			}
		}
		for _, k := range inv.Vars {
			if _, ok := rec.Vars[k]; ok && !slices.Contains(rec.GivenVars, k) {
				notGiven = append(notGiven, k)
			}
		}
		var why []string
		if len(given) > 0 {
			why = append(why, fmt.Sprintf("it says --var gave its run %s, which that run was not given (%s)", strings.Join(given, ", "), varWords(inv.Vars)))
		}
		if len(notGiven) > 0 {
			why = append(why, fmt.Sprintf("that run was given --var %s, which its scenario declares, and it says its run was not given it", strings.Join(notGiven, ", ")))
		}
		if k := scenarioKey(unitOrSingle(rec)); inv.Scenarios[k] > 0 && inv.Sources[k] != rec.Source {
			why = append(why, fmt.Sprintf("that run ran %s from source %s, and its record is of a run from source %s (another checkout: its scenario file edited)", k, shortHash(inv.Sources[k]), shortHash(rec.Source)))
		}
		if inv.Start != nil && !rec.Start.IsZero() && rec.Start.Before(*inv.Start) {
			why = append(why, fmt.Sprintf("it started at %s, before that run began its runs at %s", rec.Start.UTC().Format(time.RFC3339Nano), inv.Start.UTC().Format(time.RFC3339Nano)))
		}
		if len(why) > 0 {
			msgs = append(msgs, fmt.Sprintf("%s: the labrun run whose invocation it keeps (%s) did not make it: %s; a record of another run of its scenario stands for the one that run made", relPath(cwd, m.from), id, strings.Join(why, "; ")))
		}
	}
	return msgs
}

// sameTime says whether a and b are the same instant, or both nil.
func sameTime(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equal(*b)
}

// shortHash is a source's hash as merge names it: its first 12 hex digits, or "(none)".
func shortHash(h string) string {
	h = strings.TrimPrefix(h, "sha256:")
	if h == "" {
		return "(none)"
	}
	return h[:min(12, len(h))]
}

// varWords says the --vars a labrun run was given: "--var a, --var b", or "no --var".
func varWords(names []string) string {
	if len(names) == 0 {
		return "no --var"
	}
	return "--var " + strings.Join(names, ", --var ")
}

// flagNames are the names of the --var flags (name=value), sorted, once each.
func flagNames(flags []string) []string {
	var out []string
	for _, v := range flags {
		out = append(out, strings.SplitN(v, "=", 2)[0])
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// scenarioKey names u's scenario as merge does: its file's folder and name, and its name.
func scenarioKey(u *dsl.Unit) string { return fileKey(u.Matrix.File) + " " + u.Matrix.Scenario }

// sameInvocation says whether a and b say the same of a labrun run.
func sameInvocation(a, b interp.InvocationRecord) bool {
	return a.ID == b.ID && a.Parallel == b.Parallel && a.FailFast == b.FailFast && maps.Equal(a.Scenarios, b.Scenarios) && slices.Equal(a.Vars, b.Vars) && maps.Equal(a.Sources, b.Sources) && sameTime(a.Start, b.Start)
}

// invocationWords says what a record says of the labrun run that made it: "2 runs (a/s.cue s:
// 1, a/t.cue t: 1), --parallel 2".
func invocationWords(inv interp.InvocationRecord) string {
	var runs []string
	n := 0
	for _, k := range slices.Sorted(maps.Keys(inv.Scenarios)) {
		runs = append(runs, fmt.Sprintf("%s: %d", k, inv.Scenarios[k]))
		n += inv.Scenarios[k]
	}
	w := fmt.Sprintf("%d runs (%s), --parallel %d", n, strings.Join(runs, ", "), inv.Parallel)
	if inv.FailFast {
		w += ", --fail-fast"
	}
	return w
}

// mostAtOnce is the most of ms's runs that ran at one instant (each from its start to its end;
// one that did not start its steps, interrupted or refused, is not counted), and that instant.
func mostAtOnce(ms []mergedRecord) (int, time.Time) {
	type edge struct {
		t     time.Time
		delta int
	}
	var edges []edge
	for _, m := range ms {
		r := m.rec
		if r.Outcome == interp.Interrupted || r.Outcome == interp.Refused || !r.Start.Before(r.End) {
			continue
		}
		edges = append(edges, edge{r.Start, 1}, edge{r.End, -1})
	}
	// An end before a start at one instant: a run that ends as the next starts ran alone.
	slices.SortFunc(edges, func(a, b edge) int {
		if c := a.t.Compare(b.t); c != 0 {
			return c
		}
		return a.delta - b.delta
	})
	most, n := 0, 0
	var at time.Time
	for _, e := range edges {
		n += e.delta
		if n > most {
			most, at = n, e.t
		}
	}
	return most, at
}

// ranAt names the records of ms whose runs ran at t.
func ranAt(cwd string, ms []mergedRecord, t time.Time) []string {
	var out []string
	for _, m := range ms {
		if r := m.rec; !r.Start.After(t) && r.End.After(t) && r.Outcome != interp.Interrupted && r.Outcome != interp.Refused {
			out = append(out, relPath(cwd, m.from))
		}
	}
	return out
}

// invocationIdle is the longest a labrun run of several runs may have had none of its runs
// running between its start and its last run's: it starts a run when it begins and, after,
// each when one of its runs ends (a slot of --parallel frees), after writing that run's report
// and making the next's target (a kube target connects and reads the cluster). Generous: a
// genuine record refused would be the worse error, and a later run's record made within it
// is not told apart.
const invocationIdle = 5 * time.Minute

// idleGap says where the records ms of invocation id, which began its runs at start, hold a
// run that started more than invocationIdle after none of the others was running: the record
// of a later run of its scenario, the invocation copied in, standing for the one that run
// made. Before, a suite's failed run replaced by a passed run of the same scenario, from the
// same source and with the same vars, made after the suite ended (a later labrun run), its
// invocation copied in, merged as PASSED, exit 0: it started after the invocation's start, as
// its own runs do.
func idleGap(cwd, id string, start time.Time, ms []mergedRecord) string {
	sorted := slices.Clone(ms)
	slices.SortStableFunc(sorted, func(a, b mergedRecord) int { return a.rec.Start.Compare(b.rec.Start) })
	busy, last := start, "it began its runs"
	for i, m := range sorted {
		r := m.rec
		if r.Start.IsZero() {
			continue
		}
		if gap := r.Start.Sub(busy); gap > invocationIdle {
			// The gap has two sides: a later run's record after it, or an earlier run's
			// before it (the invocation's start moved back with it in every record).
			var before []string
			for _, b := range sorted[:i] {
				if !b.rec.Start.IsZero() {
					before = append(before, relPath(cwd, b.from))
				}
			}
			earlier := ""
			switch {
			case len(before) == 1:
				earlier = fmt.Sprintf(", or the record before those %s without a run, %s, is of an earlier run of its scenario, the invocation's start moved back with it", gap.Round(time.Second), before[0])
			case len(before) > 1:
				earlier = fmt.Sprintf(", or the records before those %s without a run, %s, are of earlier runs of their scenarios, the invocation's start moved back with them", gap.Round(time.Second), strings.Join(before, ", "))
			}
			return fmt.Sprintf("%s: it started at %s, %s after the labrun run whose invocation it keeps (%s) last had a run running (%s at %s), and that run starts each of its runs when it begins or when another of its runs ends; a record of a later run of its scenario stands for the one that run made%s", relPath(cwd, m.from), r.Start.UTC().Format(time.RFC3339Nano), gap.Round(time.Second), id, last, busy.UTC().Format(time.RFC3339Nano), earlier)
		}
		if r.End.After(busy) {
			busy, last = r.End, "the end of "+relPath(cwd, m.from)
		}
	}
	return ""
}
