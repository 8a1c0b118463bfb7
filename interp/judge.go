package interp

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/file"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/envoy/xdstype"
	"labrun.dev/labrun/internal/secretmask"
	"labrun.dev/labrun/schema"
)

// Judge evaluates expressions over a Record. It is used during a run (assert, wait until,
// repeat until, ${...}) and after it (expect), and by replay on a recorded run.
type Judge struct {
	rec *Record
	// snapshots are the scenario's snapshot steps in declaration order: delta compares the
	// first and the last of them (the plan's pair, dsl.Names.DeltaFrom and DeltaTo), or,
	// while the run is under way (running), the first and the last taken so far.
	snapshots []string
	// running says the judge judges during the steps (an assert, an until, a ${...}), where
	// a plain delta is the first and the last snapshot taken so far; otherwise (expectations,
	// replay, merge) it is the plan's pair, both taken once.
	running bool
	// planned are the snapshots of the plan's pair, in declaration order: the scenario's
	// snapshots but those of catch, which runs only where the run fails.
	planned []string
	allow   map[string]bool
	// noted avoids repeating a note.
	noted map[string]bool
	// steps are the scenario's named steps: outcome.<step> of one that has not run is "skipped".
	steps []string
	// pending, during a run (running), says whether a named step that has not started still
	// may: its outcome.<step> is then "pending", not the "skipped" of one that will not run.
	pending func(name string) bool
	// roundFrom, during a run (running), is for each named step of a repeat's round after
	// the first the index in rec.Steps its executions of the round start at (freshRound):
	// started, ended and outcome read none before it, as its results are dropped then, so
	// that a wait in round 2 does not hold at its first poll on what round 1 recorded.
	roundFrom map[string]int
	// names type what expressions read (the scenario's, as vet checked them): an explanation's
	// units are the types' (dsl.UnitOf).
	names *dsl.Names

	// merged caches what expressions see of each snapshot, its stats in one map: a snapshot
	// does not change once recorded (a mutant is judged by a judge of its own), and every
	// step with ${...} builds the environment anew, so a run of many named snapshots merged
	// each of them again for each such step.
	mergedMu sync.Mutex
	merged   map[*SnapshotRecord]schema.Stats
}

// snapshotStats is s.Stats(), merged once per judge.
func (j *Judge) snapshotStats(s *SnapshotRecord) schema.Stats {
	j.mergedMu.Lock()
	defer j.mergedMu.Unlock()
	if m, ok := j.merged[s]; ok {
		return m
	}
	if j.merged == nil {
		j.merged = map[*SnapshotRecord]schema.Stats{}
	}
	m := s.Stats()
	j.merged[s] = m
	return m
}

// NewJudge returns a judge over rec for scenario sc.
func NewJudge(rec *Record, sc *dsl.Scenario) *Judge {
	j := &Judge{rec: rec, allow: map[string]bool{}, noted: map[string]bool{}, steps: sc.Names(), names: sc.ExprNames}
	for _, n := range rec.Notes {
		j.noted[n] = true // a record judged again (replay) says each note once
	}
	for _, s := range sc.Snapshots {
		j.snapshots = append(j.snapshots, s.Name)
		if s.Phase != dsl.PhaseCatch {
			j.planned = append(j.planned, s.Name)
		}
	}
	for _, a := range rec.AllowReset {
		j.allow[a] = true
	}
	return j
}

// defaultPair is the pair a plain delta compares: the first and the last snapshot taken.
// Judged after the steps (not running), that is the plan's pair, the scenario's first and
// last snapshot: where either was not taken (a mayFail block skipped it), or the first was
// taken again (a repeat's rounds: the record keeps its last), the snapshots taken cover a
// shorter window than the one delta stands for, and a read of delta errs saying so, not
// judges the shorter window (before → mid, missing what came after mid).
func (j *Judge) defaultPair() (string, string, error) {
	if !j.running && len(j.planned) >= 2 {
		first, last := j.planned[0], j.planned[len(j.planned)-1]
		for _, n := range []string{first, last} {
			if j.rec.Snapshot(n) == nil {
				msg := fmt.Sprintf("delta is delta(%q, %q), the scenario's first and last snapshot, and snapshot %q has not been taken (%s): the snapshots taken span a shorter window than delta stands for", first, last, n, j.howUntaken(n))
				if a, b, err := j.takenPair(); err == nil {
					msg += fmt.Sprintf("; to claim something of that window, name its pair: delta(%q, %q)", a, b)
				}
				return "", "", fmt.Errorf("%s", msg)
			}
		}
		if n := j.executions(first); n > 1 {
			return "", "", fmt.Errorf("delta is delta(%q, %q), the scenario's first and last snapshot, but %q was taken %d times (a repeat's rounds) and the record keeps its last, so delta would cover only the last round; to claim something of that round, name its pair: delta(%q, %q)", first, last, first, n, first, last)
		}
	}
	return j.takenPair()
}

// takenPair is the first and the last snapshot taken, in the order they were taken.
func (j *Judge) takenPair() (string, string, error) {
	var taken []string
	for _, n := range j.snapshots {
		if j.rec.Snapshot(n) != nil {
			taken = append(taken, n)
		}
	}
	if len(taken) < 2 {
		return "", "", fmt.Errorf("delta needs two snapshots; taken so far: %s", listOrNone(taken))
	}
	// Taken order, not declaration order: a snapshot in a parallel block may come later.
	sort.SliceStable(taken, func(a, b int) bool {
		return j.rec.Snapshot(taken[a]).At.Before(j.rec.Snapshot(taken[b]).At)
	})
	return taken[0], taken[len(taken)-1], nil
}

// howUntaken says how a snapshot that has no result ended: skipped, or its error.
func (j *Judge) howUntaken(name string) string {
	how := fmt.Sprintf("outcome.%s is \"skipped\"", name)
	for _, s := range j.rec.Steps {
		if s.Name == name && s.Outcome != Skipped {
			how = fmt.Sprintf("outcome.%s is %q", name, ExprOutcome(s.Outcome))
			if s.Error != "" {
				how += ": " + dsl.Truncate(s.Error, 200)
			}
		}
	}
	return how
}

// executions counts the records of the named step that ran.
func (j *Judge) executions(name string) int {
	n := 0
	for _, s := range j.rec.Steps {
		if s.Name == name && s.Outcome != Skipped {
			n++
		}
	}
	return n
}

func listOrNone(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	return strings.Join(xs, ", ")
}

// Delta computes b − a for every counter of two snapshots. A counter absent from a and present
// in b counts from 0. A counter that went down was reset: if allowed, its delta is what it
// counted since the reset (b); if not, b − a is kept negative and the judge refuses to use it.
// Gauges and histograms have no delta.
func Delta(a, b *SnapshotRecord, allowReset map[string]bool) schema.Stats {
	out := schema.Stats{}
	for k, vb := range b.Counters {
		va := a.Counters[k]
		if vb < va && allowReset[k] {
			out[k] = vb
			continue
		}
		out[k] = vb - va
	}
	return out
}

// otherPod says why the delta of snapshots a and b (sa, sb) of one source means nothing when
// they read different pods: a selector picks the first ready pod it matches, another one once
// that pod is gone (a kill, a restart, a scale), and the counters are then two Envoys'. Two
// pods of one name are told apart by their uids (a StatefulSet's pod made again, or the pods
// of one name in two clusters). "" when they read the same pod, or a record does not say (one
// older than pods in records).
func otherPod(a, b string, sa, sb *SnapshotRecord) string {
	if sa.Source != sb.Source || sa.SamePod(sb) {
		return ""
	}
	if sa.Pod == sb.Pod {
		// One name, two pods: a StatefulSet's pod (or a bare pod) made again under its name
		// after a kill, restart or eviction, whose new Envoy counts from zero; or the pods of
		// one name in two clusters.
		return fmt.Sprintf("delta(%q, %q): %s read pod %s (uid %s), %s read pod %s (uid %s): a pod of the same name made again between them (a StatefulSet's pod after a kill, restart or eviction), or another cluster's: their counters are two Envoys'; snapshot a pod that stays, or read each snapshot alone",
			a, b, a, sa.Pod, sa.PodUID, b, sb.Pod, sb.PodUID)
	}
	return fmt.Sprintf("delta(%q, %q): %s read pod %s, %s read pod %s (%s picked another pod, e.g. after a kill/restart/scale): their counters are two Envoys'; snapshot a pod that stays, or read each snapshot alone",
		a, b, a, sa.PodName(sb), b, sb.PodName(sa), schema.SelectorOf(sa.Source))
}

// mixedPods says why e means nothing when it reads two results of one source (snapshots, a
// series) that read different pods, however it combines them (after.x - before.x is a delta
// written by hand), or "". A series whose own samples read two pods says so itself
// (SeriesRecord.NoValue); its count reads no counter.
func (j *Judge) mixedPods(e *dsl.Expr) string {
	type read struct {
		step string
		snap *SnapshotRecord
	}
	// Two claims joined by && (before.x == 10 && after.x == 10) read each pod alone: only
	// a conjunct that names both steps compares the two Envoys. Before, the whole
	// expression erred as one, naming neither claim.
	parts := conjuncts(e.Explain, nil)
	if len(parts) < 2 {
		parts = nil
	}
	bothIn := func(a, b string) (string, bool) {
		if parts == nil {
			return "", true
		}
		for _, p := range parts {
			if namesStep(p, a) && namesStep(p, b) {
				return p, true
			}
		}
		return "", false
	}
	seen := map[string][]read{} // by source
	for _, r := range e.Reads {
		x := j.rec.Results[r.Step]
		if x == nil || r.Via != "" {
			continue
		}
		var snaps []*SnapshotRecord
		switch v := x.Value.(type) {
		case *SnapshotRecord:
			snaps = []*SnapshotRecord{v}
		case *SeriesRecord:
			if r.Field != "count" && v != nil {
				snaps = v.Samples
			}
		}
		for _, s := range snaps {
			if s == nil || s.Pod == "" {
				continue
			}
			for _, f := range seen[s.Source] {
				if f.step == r.Step || f.snap.SamePod(s) {
					continue
				}
				part, both := bothIn(f.step, r.Step)
				if !both {
					continue
				}
				a, b := f, read{r.Step, s}
				if b.snap.At.Before(a.snap.At) {
					a, b = b, a // the one taken first first
				}
				in := ""
				if part != "" {
					in = "in " + part + ": "
				}
				return fmt.Sprintf("%s%s read pod %s, %s read pod %s (%s picked another pod, e.g. after a kill/restart/scale): an expression over both compares two Envoys' counters; read each alone, or snapshot a pod that stays",
					in, a.step, a.snap.PodName(b.snap), b.step, b.snap.PodName(a.snap), schema.SelectorOf(s.Source))
			}
			seen[s.Source] = append(seen[s.Source], read{r.Step, s})
		}
	}
	return ""
}

// conjuncts appends the sources of the claims x joins with && (x's own when it joins none).
func conjuncts(x *dsl.Explain, out []string) []string {
	if x == nil {
		return out
	}
	if x.Op == "&&" || x.Op == "and" {
		return conjuncts(x.Right, conjuncts(x.Left, out))
	}
	return append(out, x.Source())
}

// namesStep says whether src names step: as a word (a result read, started.<step>) or a
// quoted snapshot of delta("a", "b"). A word that only looks like it (a field of another
// step of the same name) counts too: the check then errs as it did.
func namesStep(src, step string) bool {
	for i := 0; ; {
		k := strings.Index(src[i:], step)
		if k < 0 {
			return false
		}
		k += i
		end := k + len(step)
		if (k == 0 || !isWordByte(src[k-1])) && (end == len(src) || !isWordByte(src[end])) {
			return true
		}
		i = k + 1
	}
}

// Env builds the expression environment from what has been recorded so far.
func (j *Judge) Env() map[string]any {
	rec := j.rec
	env := map[string]any{
		"vars":       rec.Vars,
		"approx":     dsl.Approx,
		"within":     dsl.Within,
		"quantity":   dsl.Quantity,
		"has":        dsl.Has,
		"backends":   map[string]schema.Endpoint{},
		"blackholes": map[string]schema.Endpoint{},
		"target":     rec.TargetValues,
	}
	for k, v := range rec.TargetValues {
		switch k {
		case "backends", "blackholes":
			if m, ok := v.(map[string]schema.Endpoint); ok {
				env[k] = m
			}
		}
	}
	if rec.Namespaces != nil {
		env["ns"] = rec.Namespaces
	}
	if env["vars"] == nil {
		env["vars"] = map[string]any{}
	}
	if env["target"] == nil {
		env["target"] = map[string]any{}
	}
	env[dsl.DeltaFunc] = func(a, b string) schema.Stats {
		sa, sb := rec.Snapshot(a), rec.Snapshot(b)
		if sa == nil || sb == nil {
			return schema.Stats{}
		}
		return Delta(sa, sb, j.allow)
	}
	env[dsl.EnvoyFunc] = xdstype.ReadAny
	env[dsl.EnvoyCmpFunc] = dsl.EnvoyCompared
	env[dsl.EnvoyJSONFunc] = xdstype.ReadJSON
	env[dsl.NonEmptyFunc] = dsl.NonEmpty
	env[dsl.DivisorFunc] = dsl.Divisor
	env[dsl.FiniteFunc] = dsl.FiniteText
	// A load's codes read by a key and its latencies, however the expression reached them:
	// each codes map is known by whose it is (registered below, with the results), so that a
	// code or a latency of a load no request of which was answered errs naming that load.
	loads := &schema.LoadReads{}
	env[dsl.KeyFunc] = func(src, mapSrc string, m, k any) (any, error) {
		if err := loads.Check(m, k, src); err != nil {
			return nil, err
		}
		return dsl.Key(src, mapSrc, m, k)
	}
	env[dsl.OptKeyFunc] = func(src string, m, k any) (any, error) {
		if err := loads.Check(m, k, src); err != nil {
			return nil, err
		}
		return dsl.OptKey(src, m, k)
	}
	env[dsl.StringFunc] = dsl.StringOf
	env[schema.OnlyIfFunc] = schema.ReadOnlyIf
	env[schema.SetFunc] = schema.ReadSet
	env[schema.GroupFunc] = schema.ReadGroup
	env[schema.CodeFunc] = loads.Read
	env[schema.CodeInFunc] = loads.Has
	env[schema.CodeGetFunc] = loads.Get
	env[schema.LatencyFunc] = loads.Latency
	env[dsl.HostsFunc] = func(name string) []schema.Host {
		if s := rec.Snapshot(name); s != nil {
			return s.Hosts
		}
		return nil
	}
	started, ended := map[string]float64{}, map[string]float64{}
	// Wall-clock readings only (Round(0) drops the monotonic one): a record read back from
	// JSON has no other, and started and ended must read the same there as in the run, to the
	// nanosecond, for replay and merge to hold a record's values to its data.
	base := rec.StepsStart.Round(0).Sub(rec.Start.Round(0))
	latest := latestRounds(rec.Steps)
	for i, s := range rec.Steps {
		if s.Name == "" || !j.thisRound(i, s, latest) {
			continue
		}
		if _, ok := started[s.Name]; !ok && s.Outcome != Skipped {
			// A step that did not run has no times: has(started, "x") is false, and a read
			// of started.x is refused (errorOfUnran), not 0.
			started[s.Name] = (s.Start - base).Seconds()
		}
		if s.End > 0 && s.Outcome != Skipped {
			ended[s.Name] = (s.End - base).Seconds()
		}
	}
	env["started"], env["ended"] = started, ended
	env["outcome"], env["error"] = j.outcomes()
	env["delta"] = schema.Stats{}
	if a, b, err := j.defaultPair(); err == nil {
		env["delta"] = Delta(rec.Snapshot(a), rec.Snapshot(b), j.allow)
	}
	for n, r := range rec.Results {
		if s, ok := r.Value.(*SnapshotRecord); ok && !r.Sampled {
			env[n] = j.snapshotStats(s)
			continue
		}
		env[n] = r.ExprValue(rec.StepsStart)
		if l, ok := env[n].(schema.LoadResult); ok {
			loads.Own(l.Codes, n, "load "+n)
			for i, p := range l.Pods {
				load := fmt.Sprintf("load %s from client pod %s", n, p.Pod)
				if p.Pod == "" {
					load = fmt.Sprintf("load %s from its client pod %d", n, i)
				}
				loads.Own(p.Codes, fmt.Sprintf("%s.pods[%d]", n, i), load)
			}
		}
	}
	for _, n := range j.snapshots {
		if _, ok := rec.Results[n]; !ok {
			env[n] = schema.Stats{} // not taken (yet): the judge's check says so first
		}
	}
	return env
}

// outcomes are what expressions read as outcome.<step> and error.<step>: the latest execution
// of each named step (a repeat's last round), from the record's steps alone, so that a
// replayed record (older ones too) gives the same values. A sampler's samples are one
// execution: the first sample that failed or erred is the step's outcome and error, whatever
// the samples after it did (a probe missing at one look and back by the last did not hold
// throughout). A step that has not run is "skipped" and has no error: not the "" of a step that
// passed (check says so where an expression reads it; has(error, "<step>") is false).
func (j *Judge) outcomes() (outcome, errs map[string]string) {
	outcome, errs = map[string]string{}, map[string]string{}
	for _, n := range j.steps {
		outcome[n] = dsl.OutcomeSkipped
		if j.running && j.pending != nil && j.pending(n) {
			outcome[n] = dsl.OutcomePending
		}
	}
	latest := latestRounds(j.rec.Steps)
	sampleFailed := map[string]bool{}
	for i, s := range j.rec.Steps {
		if s.Name == "" || s.Outcome == Skipped || !j.thisRound(i, s, latest) || sampleFailed[s.Name] {
			continue
		}
		if s.Sample > 0 {
			switch s.Outcome {
			case Failed, Errored, TimedOut, Refused:
				sampleFailed[s.Name] = true
			}
		}
		outcome[s.Name] = ExprOutcome(s.Outcome)
		errs[s.Name] = s.Error
		if s.Outcome == Passed {
			errs[s.Name] = s.ExpectedError
		}
	}
	return outcome, errs
}

// thisRound says whether s, rec.Steps[i], is of its step's current round: during the run
// from the start of the round (roundFrom, before the step has run in it), otherwise of the
// latest round it ran in (latest, from latestRounds). started, ended and outcome read that
// round's alone: after the run, started read round 1's start and ended round 2's end, and
// ended.s - started.s >= 0.15 held of a sleep of 100ms run in two rounds.
func (j *Judge) thisRound(i int, s *StepRecord, latest map[string]int) bool {
	if from, ok := j.roundFrom[s.Name]; ok && j.running {
		return i >= from
	}
	return i >= latest[s.Name]
}

// latestRounds is, for each named step a repeat ran, the index in steps of the first
// execution of its latest round: a record of another round than the step's record before
// (Round), or of another execution of its innermost repeat (the same round of an enclosing
// repeat's next round), begins a round. A repeat's record comes before its rounds'.
// It is no earlier than where the latest round of each repeat around the step begins, though
// the step did not run in it (a later step of a mayFail block whose step failed, in that
// round alone): the step reads as not run, as it did not in that round, not as what an
// earlier round recorded (outcome.x read "passed" and error.x "" of round 1 while x.stdout,
// dropped at round 2's start, had no value).
func latestRounds(steps []*StepRecord) map[string]int {
	type roundOf struct{ repeat, round int }
	from := map[string]int{}
	last := map[string]roundOf{}
	repeats := map[string]int{}    // by path, the index of the repeat's latest execution
	rounds := map[string]roundOf{} // by a repeat's path, its latest round
	roundStart := map[string]int{} // by a repeat's path, where its latest round begins
	paths := map[string]string{}   // by name, the path of a step a repeat ran
	for i, s := range steps {
		cur, inner := roundOf{-1, s.Round}, ""
		for p, k := range repeats {
			if strings.HasPrefix(s.Path, p+".") && len(p) > len(inner) {
				cur.repeat, inner = k, p
			}
		}
		if inner != "" && s.Round > 0 {
			if r, ok := rounds[inner]; !ok || r != cur {
				rounds[inner], roundStart[inner] = cur, i
			}
		}
		if s.Kind == "repeat" {
			repeats[s.Path] = i
		}
		if s.Name == "" || s.Round == 0 {
			continue
		}
		paths[s.Name] = s.Path
		if prev, ok := last[s.Name]; !ok || prev != cur {
			from[s.Name], last[s.Name] = i, cur
		}
	}
	for n, path := range paths {
		for p, i := range roundStart {
			if path != "" && strings.HasPrefix(path, p+".") && i > from[n] {
				from[n] = i
			}
		}
	}
	return from
}

// ExprOutcome maps a step record's outcome to the value of outcome.<step>: passed, failed and
// error as they are; a timeout is an error (the world did not answer in time, as the run's
// exit code 3 says); cancelled (an interrupt, the scenario's timeout, a parallel block stopped
// by a failed child) is interrupted; a step that has started and not ended is running.
func ExprOutcome(o Outcome) string {
	switch o {
	case Passed:
		return dsl.OutcomePassed
	case Failed:
		return dsl.OutcomeFailed
	case Errored, TimedOut, Refused:
		return dsl.OutcomeError
	case Cancelled, Interrupted:
		return dsl.OutcomeInterrupted
	case Skipped:
		return dsl.OutcomeSkipped
	case "":
		return dsl.OutcomeRunning
	}
	return string(o)
}

// check verifies the stats an expression reads before it is evaluated. A problem that makes
// the expression meaningless as written is returned as the reason (the judgement errors); a
// counter reset is a failure with its reason.
func (j *Judge) check(e *dsl.Expr) (reason string, failed bool) {
	rec := j.rec
	if reason := j.noValue(e); reason != "" {
		return reason, false
	}
	for _, ref := range e.Refs {
		switch ref.Kind {
		case dsl.RefSnapshot:
			s := rec.Snapshot(ref.Name)
			if s == nil {
				return fmt.Sprintf("snapshot %q has not been taken (yet) when %q is evaluated", ref.Name, e.Src), false
			}
			if !s.Has(ref.Stat) && !ref.Guarded {
				return missingStat(ref.Stat, []*SnapshotRecord{s}), false
			}
			if why := nanStat(ref.Stat, s); why != "" {
				return why, false
			}
		case dsl.RefDelta, dsl.RefDeltaPair:
			a, b := ref.From, ref.To
			if ref.Kind == dsl.RefDelta {
				var err error
				if a, b, err = j.defaultPair(); err != nil {
					return err.Error(), false
				}
			}
			sa, sb := rec.Snapshot(a), rec.Snapshot(b)
			if sa == nil || sb == nil {
				missing := a
				if sa != nil {
					missing = b
				}
				return fmt.Sprintf("delta(%q, %q): snapshot %q has not been taken", a, b, missing), false
			}
			if why := otherPod(a, b, sa, sb); why != "" {
				return why, false
			}
			if _, g := sa.Gauges[ref.Stat]; g || hasKey(sb.Gauges, ref.Stat) {
				return fmt.Sprintf("%s is a gauge: a gauge has no delta (it is a level, not a count); compare the snapshots instead, e.g. %s.%s and %s.%s", ref.Stat, a, ref.Stat, b, ref.Stat), false
			}
			if hasKey(sa.Histograms, ref.Stat) || hasKey(sb.Histograms, ref.Stat) {
				return fmt.Sprintf("%s is a histogram quantile: it has no delta; compare the snapshots instead", ref.Stat), false
			}
			va, inA := sa.Counters[ref.Stat]
			vb, inB := sb.Counters[ref.Stat]
			for _, s := range []*SnapshotRecord{sa, sb} {
				if why := nanStat(ref.Stat, s); why != "" {
					return why, false
				}
			}
			switch {
			case !inA && !inB && ref.Guarded:
				// has() found it absent: the expression does not read it.
			case !inA && !inB:
				d := "delta"
				if ref.Kind == dsl.RefDeltaPair {
					d = fmt.Sprintf("delta(%q, %q)", a, b)
				}
				// Erring is the safe side (a misspelt stat cannot be told from a count of
				// zero); say how to claim that absent means zero, explicitly.
				return missingStat(ref.Stat, []*SnapshotRecord{sa, sb}) + fmt.Sprintf(". If it may never be created (a response code this run may not see), to count it as 0 where no snapshot holds it, say so: get(%s, %q) ?? 0, or has(%s, %q) ? %s : 0 (%s ?? 0 does not: a stat read is checked before the expression is evaluated)",
					d, ref.Stat, b, ref.Stat, statRead(d, ref.Stat), statRead(d, ref.Stat)), false
			case !inA:
				j.note(fmt.Sprintf("%s was absent in %q and present in %q (stats are created on first use): counted from 0", ref.Stat, a, b))
			case !inB:
				if !j.allow[ref.Stat] {
					return fmt.Sprintf("counter %s was present in %q (%s) and is gone in %q: the Envoy cluster was removed or rebuilt, so its delta means nothing (allowReset lists counters for which that is expected)", ref.Stat, a, dsl.FormatValue(va), b), true
				}
			case vb < va:
				if !j.allow[ref.Stat] {
					return fmt.Sprintf("counter %s went down from %s (%q) to %s (%q): it was reset — the Envoy cluster was rebuilt (e.g. by a DestinationRule change) or the proxy restarted — so the delta means nothing; take the snapshots after the change, or list the counter in allowReset", ref.Stat, dsl.FormatValue(va), a, dsl.FormatValue(vb), b), true
				}
				j.note(fmt.Sprintf("counter %s reset between %q and %q (allowed by allowReset)", ref.Stat, a, b))
			}
		case dsl.RefSource:
			if ref.Guarded {
				continue
			}
			// One snapshot of each step for the message (a series by its first sample).
			var seen []*SnapshotRecord
			found, samples := false, 0
			for _, n := range ref.StepNames() {
				if s := rec.Snapshot(n); s != nil {
					seen = append(seen, s)
					found = found || s.Has(ref.Stat)
				}
				if s := rec.SeriesOf(n); s != nil && len(s.Samples) > 0 {
					seen = append(seen, s.Samples[0])
					samples += len(s.Samples)
					for _, smp := range s.Samples {
						found = found || smp.Has(ref.Stat)
					}
				}
			}
			if len(seen) > 0 && !found {
				msg := missingStat(ref.Stat, seen)
				if samples > 0 {
					msg += fmt.Sprintf(" (nor in any of the %d samples)", samples)
				}
				return msg, false
			}
			for _, n := range ref.StepNames() {
				if s := rec.Snapshot(n); s != nil {
					if why := nanStat(ref.Stat, s); why != "" {
						return why, false
					}
				}
				if s := rec.SeriesOf(n); s != nil {
					for _, smp := range s.Samples {
						if why := nanStat(ref.Stat, smp); why != "" {
							return why, false
						}
					}
				}
			}
		case dsl.RefSeries:
			name, agg, _ := strings.Cut(ref.Name, ".")
			s := rec.SeriesOf(name)
			if s == nil || len(s.Samples) == 0 {
				return fmt.Sprintf("series %q has no samples: the step it samples while may have ended before the first tick", name), false
			}
			found := false
			for _, smp := range s.Samples {
				if smp.Has(ref.Stat) {
					found = true
					break
				}
			}
			if !found && !ref.Guarded {
				return missingStat(ref.Stat, s.Samples[:1]) + fmt.Sprintf(" (in none of the %d samples of %q; asked for its %s)", len(s.Samples), name, agg), false
			}
			if why := nanSample(ref.Stat, agg, s); why != "" {
				return why, false
			}
		}
	}
	return "", false
}

// noValue says why e reads what has no value, or "": a group of an exec's capture that
// matched nothing, a field a result says has none (schema.NoValuer: a logs step's codes where
// no line parsed as an access line), or the error of a step that did not run (errorOfUnran). Read as "", either
// would pass for a value: an expectation or a ${...} that reads one errors instead.
func (j *Judge) noValue(e *dsl.Expr) string {
	for _, c := range e.Captures {
		if x := j.rec.Results[c.Step]; x != nil && !c.Guarded && c.Group == "" {
			// A whole capture compared: {} where nothing matched, and two such are equal.
			switch r := x.Value.(type) {
			case schema.ExecResult:
				// (Of a stdout cut, reading captured at all is the error: schema's capturedWhole.)
				if len(r.Captured) == 0 && !r.StdoutCut {
					return fmt.Sprintf("%s.captured has no value: the capture of %q matched nothing in its stdout, so comparing it says nothing of what was captured; compare its groups, or claim len(%s.captured) == 0", c.Step, c.Step, c.Step)
				}
			case schema.LogResult:
				if len(r.Capture) == 0 && !r.Cut {
					return fmt.Sprintf("%s.capture has no value: the capture of %q matched none of the %g line(s) it read, so comparing it says nothing of what was captured; compare its groups, or claim len(%s.capture) == 0", c.Step, c.Step, r.Count, c.Step)
				}
				if why := ambiguousCapture(c.Step, "", r); why != "" {
					return why
				}
			}
			continue
		}
		if x := j.rec.Results[c.Step]; x != nil && !c.Guarded {
			if r, ok := x.Value.(schema.ExecResult); ok && !r.StdoutCut {
				if _, has := r.Captured[c.Group]; !has && len(r.Captured) > 0 {
					return fmt.Sprintf("%s.captured.%s has no value: group %s took no part in the match the capture of %q found in its stdout (it sits in an alternative the match did not take)", c.Step, c.Group, c.Group, c.Step)
				} else if !has {
					return fmt.Sprintf("%s.captured.%s has no value: the capture of %q matched nothing in its stdout", c.Step, c.Group, c.Step)
				}
			}
			if r, ok := x.Value.(schema.LogResult); ok && !r.Cut {
				// Read as "", l2.capture.cid == l1.capture.cid held where neither matched.
				if _, has := r.Capture[c.Group]; !has && len(r.Capture) > 0 {
					return fmt.Sprintf("%s.capture.%s has no value: group %s took no part in the first match of the capture of %q (it sits in an alternative that match did not take)", c.Step, c.Group, c.Group, c.Step)
				} else if !has {
					return fmt.Sprintf("%s.capture.%s has no value: the capture of %q matched none of the %g line(s) it read", c.Step, c.Group, c.Step, r.Count)
				}
				if why := ambiguousCapture(c.Step, c.Group, r); why != "" {
					return why
				}
			}
		}
	}
	for _, r := range e.Reads {
		if x := j.rec.Results[r.Step]; x != nil && r.Via == "" {
			if inner, ok := x.absent[r.Field]; ok && inner != "" {
				return fmt.Sprintf("%s.%s has no value: the record's %s for step %q (a record written before labrun recorded it, or edited), so reading it as 0 or empty would judge what nobody recorded; a claim on it is judged on a run of the scenario that records it", r.Step, r.Field, inner, r.Step)
			} else if ok {
				return fmt.Sprintf("%s.%s has no value: the record holds no %s for step %q (a record written before labrun recorded it, or edited), so reading it as 0 or empty would judge what nobody recorded; a claim on it is judged on a run of the scenario that records it", r.Step, r.Field, r.Field, r.Step)
			}
			if nv, ok := x.Value.(schema.NoValuer); ok {
				if why := nv.NoValue(r.Field); why != "" {
					if r.Field == "" {
						// The result read whole (let r = f; r.code200 == r.requests).
						return fmt.Sprintf("%s has no value: %s", r.Step, why)
					}
					return fmt.Sprintf("%s.%s has no value: %s", r.Step, r.Field, strings.ReplaceAll(why, "<step>", r.Step))
				}
			}
		}
	}
	if why := j.mixedPods(e); why != "" {
		return why
	}
	if why := j.pendingRead(e); why != "" {
		return why
	}
	if why := j.objectMiss(e); why != "" {
		return why
	}
	return j.errorOfUnran(e)
}

// ambiguousCapture says why <step>.capture.<group> (group "": the whole capture) of logs
// result r is no one value, or "": the capture matched several lines that captured it
// differently. capture holds the first match only; read as "the" captured value, a claim
// judged the first line and ignored the others, which may be the ones it meant (a connection
// id logged on the line after the one the claim is about), so it passed or failed on a line
// the user did not pick. The same value on every line is one value.
func ambiguousCapture(step, group string, r schema.LogResult) string {
	var vals []string
	seen := map[string]bool{}
	for _, c := range r.Captures {
		v, ok := c[group]
		if group == "" {
			v = captureString(c)
		} else if !ok {
			continue // a line where the group took no part holds no other value of it
		}
		if !seen[v] {
			seen[v] = true
			vals = append(vals, v)
		}
	}
	if len(vals) < 2 {
		return ""
	}
	what, each := step+".capture", "all("+step+".captures, # == ...)"
	if group != "" {
		what += "." + group
		each = "all(" + step + ".captures, ." + group + " == ...)"
	}
	shown := make([]string, 0, 3)
	for _, v := range vals[:min(len(vals), 3)] {
		shown = append(shown, strconv.Quote(v))
	}
	more := ""
	if len(vals) > 3 {
		more = fmt.Sprintf(" and %d more", len(vals)-3)
	}
	first := step + ".captures[0]"
	if group != "" {
		first += "." + group
	}
	return fmt.Sprintf("%s has no one value: the capture of %q matched %d lines, which captured %d different values (%s%s), and %s holds the first line's only; say which line the claim is about: %s for the first, %s for every one, any(...) for some", what, step, len(r.Captures), len(vals), strings.Join(shown, ", "), more, step+".capture", first, each)
}

// captureString is a capture's groups as one string, sorted by name.
func captureString(c map[string]string) string { return dsl.Pairs(c, " ") }

// pendingRead says why e has no answer yet during the run when it reads outcome.<step> of a
// step that has not started and still may ("pending"): whatever it claims of that step would
// be judged before the step ran. A wait until "outcome.job != 'running'" held at its first
// poll, before job (at: 1s) started. An until goes on polling; an assert errs. "" when none.
func (j *Judge) pendingRead(e *dsl.Expr) string {
	if !j.running || j.pending == nil || len(e.Outcomes) == 0 {
		return ""
	}
	for _, n := range e.Outcomes {
		if !j.pending(n) || slices.ContainsFunc(j.rec.Steps, func(s *StepRecord) bool { return s.Name == n }) {
			continue
		}
		return fmt.Sprintf("outcome.%s has no value yet: step %q has not started, and still may (outcome.%s is %q), so a claim about it would be judged before it ran", n, n, n, dsl.OutcomePending)
	}
	return ""
}

// indexAsField matches a read by a literal index, ended["migrate"], to write it ended.migrate.
var indexAsField = regexp.MustCompile(`\[(["'])([A-Za-z_][A-Za-z0-9_]*)["']\]`)

// errorOfUnran says why e cannot be evaluated when it reads error.<step>, started.<step> or
// ended.<step> of a step that has not run, other than where has() or outcome.<step> found that
// it ran: such a step has no error, and "" would say it passed; no times, and 0 would time it.
// "" when it can.
func (j *Judge) errorOfUnran(e *dsl.Expr) string {
	if len(e.ErrorReads) == 0 {
		return ""
	}
	// Of the step's latest round, as outcome reads it: one a repeat ran in an earlier round
	// and not in its last has no error nor times of that round, and is said so (earlier), as
	// a read of its result is (noResult).
	ran, earlier := map[string]bool{}, map[string]bool{}
	latest := latestRounds(j.rec.Steps)
	for i, s := range j.rec.Steps {
		switch {
		case s.Name == "" || s.Outcome == Skipped:
		case j.thisRound(i, s, latest):
			ran[s.Name] = true
		default:
			earlier[s.Name] = true
		}
	}
	var skipped map[string]bool // the reads in sides the evaluation does not take
	for _, r := range e.ErrorReads {
		if ran[r.Step] || r.Guarded {
			continue
		}
		// A read in a branch of c ? a : b the condition did not choose, or in a side of &&
		// or || that the other decided, is not evaluated: the claim does not rest on it.
		// Before, outcome.check == 'error' ? ended.check >= 1 : ended.migrate > 1 erred of
		// a skipped migrate where check had failed, whatever guarded it.
		if skipped == nil {
			skipped = map[string]bool{}
			for k := range notEvaluated(e, j.Env()) {
				skipped[indexAsField.ReplaceAllString(strings.ReplaceAll(k, " ", ""), ".$2")] = true
			}
		}
		if skipped[r.Via+"."+r.Step] {
			continue
		}
		did := "did not run"
		if earlier[r.Step] {
			did = "did not run in the latest round of its repeat"
		}
		if r.Via == "started" || r.Via == "ended" {
			return fmt.Sprintf("%s.%s has no value: step %q %s (outcome.%s is \"skipped\"), so it has no start or end, not 0; read %s.%s only where it ran (outcome.%s != 'skipped' && …, or has(%s, %q))", r.Via, r.Step, r.Step, did, r.Step, r.Via, r.Step, r.Step, r.Via, r.Step)
		}
		return fmt.Sprintf("error.%s has no value: step %q %s (outcome.%s is \"skipped\"), so it neither passed nor failed; read error.%s only where it ran (outcome.%s == 'passed' && error.%s == '', or has(error, %q))", r.Step, r.Step, did, r.Step, r.Step, r.Step, r.Step, r.Step)
	}
	return ""
}

func hasKey(m schema.Stats, k string) bool {
	_, ok := m[k]
	return ok
}

// missingStat explains a stat that no snapshot holds.
func missingStat(stat string, snaps []*SnapshotRecord) string {
	var names []string
	for _, s := range snaps {
		names = append(names, fmt.Sprintf("%q (%s)", s.Name, s.Source))
	}
	msg := fmt.Sprintf("stat %s is in none of the snapshots %s", stat, strings.Join(names, ", "))
	if close := closestStat(stat, snaps); close != "" && (!knownStat(stat, snaps) || codeStat(close)) {
		msg += fmt.Sprintf("; did you mean %s?", close)
	}
	var causes []string
	seen := map[string]bool{}
	for _, s := range snaps {
		kind, _, _ := strings.Cut(s.Source, " ")
		if seen[kind] {
			continue
		}
		seen[kind] = true
		switch kind {
		case "envoy", "admin":
			causes = append(causes, "the proxy does not record it (Istio records no cluster stats unless the pod's proxyStatsMatcher includes them: annotation proxy.istio.io/config with proxyStatsMatcher.inclusionRegexps, and a pod restart), or Envoy has not created it yet (stats are created on first use; /stats?usedonly hides unused ones), or the snapshot reads another cluster")
		case "backend":
			causes = append(causes, "a local backend creates a counter the first time it counts, so rq_<code> exists only once a response with that code was sent (rq_total, rq_<class>xx and cx_total count every request and connection)")
		case "prometheus":
			causes = append(causes, "the endpoint does not export it (names are as the endpoint prints them, a series with labels as name{a=\"x\",b=\"y\"}, labels sorted by name), or not yet (a metric may appear on first use)")
		}
	}
	if len(causes) == 0 {
		return msg
	}
	if !strings.HasSuffix(msg, "?") {
		msg += "."
	}
	return msg + " Likely causes: " + strings.Join(causes, "; or ")
}

// nanStat says why stat, as snapshot s holds it, has no value: NaN, which a Prometheus
// endpoint writes for a value it does not have (a summary's quantile with no observations).
// Read as a number, !(p99 >= 1000) and p99 != 3 held of it. "" when it has one.
func nanStat(stat string, s *SnapshotRecord) string {
	if v, ok := s.Stat(stat); !ok || !math.IsNaN(v) {
		return ""
	}
	return fmt.Sprintf("stat %s is NaN in snapshot %q (%s): its source wrote no number for it (a summary's quantile with no observations, a value the exporter could not read), so it has no value, and a claim about it would hold or fail of nothing", stat, s.Name, s.Source)
}

// nanSample says why the aggregate agg (max, min, first, last) of stat over series s has no
// value: a sample it takes holds NaN for it (max and min take every sample that has the stat,
// first and last one). max kept a NaN first sample (so !(p.max.p99 >= 1000) held) and skipped a
// later one. "" when it has one.
func nanSample(stat, agg string, s *SeriesRecord) string {
	var with []int
	for i, smp := range s.Samples {
		if smp.Has(stat) {
			with = append(with, i)
		}
	}
	switch {
	case len(with) == 0:
		return ""
	case agg == "first":
		with = with[:1]
	case agg == "last":
		with = with[len(with)-1:]
	}
	for _, i := range with {
		if v, _ := s.Samples[i].Stat(stat); math.IsNaN(v) {
			return fmt.Sprintf("stat %s is NaN in sample %d of series %q (%s), so %s.%s.%s has no value: its source wrote no number for it (a summary's quantile with no observations, a value the exporter could not read), and a claim about it would hold or fail of nothing", stat, i+1, s.Name, s.Source, s.Name, agg, stat)
		}
	}
	return ""
}

// knownStat says stat is one that every snapshot's source has, by its closed catalogue (a
// local backend's rq_503): absent, it was not created yet, so a did-you-mean of another
// family (rq_5xx) would mislead.
func knownStat(stat string, snaps []*SnapshotRecord) bool {
	for _, s := range snaps {
		kind, _, _ := strings.Cut(s.Source, " ")
		if kind != "backend" {
			return false
		}
		if _, ok := schema.BackendStats.Lookup(stat); !ok {
			return false
		}
	}
	return len(snaps) > 0
}

// codeStat says stat is a local backend's count of one status code (rq_503): another code's
// count is a likely typo of it (rq_530), a class's (rq_5xx) is not.
func codeStat(stat string) bool {
	code, ok := strings.CutPrefix(stat, "rq_")
	if !ok || len(code) != 3 {
		return false
	}
	for _, r := range code {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// statRead writes the read of stat from m as an expression does: m.stat, or m["stat"] where
// the name is no identifier path.
func statRead(m, stat string) string {
	for _, part := range strings.Split(stat, ".") {
		if part == "" || !isIdent(part) {
			return fmt.Sprintf("%s[%q]", m, stat)
		}
	}
	return m + "." + stat
}

func isIdent(s string) bool {
	for i, r := range s {
		if r != '_' && !unicode.IsLetter(r) && (i == 0 || !unicode.IsDigit(r)) {
			return false
		}
	}
	return s != ""
}

func closestStat(stat string, snaps []*SnapshotRecord) string {
	best, bestD := "", 1<<30
	for _, s := range snaps {
		for _, m := range []schema.Stats{s.Counters, s.Gauges, s.Histograms} {
			for k := range m {
				if d := dsl.EditDistance(stat, k); d < bestD {
					best, bestD = k, d
				}
			}
		}
	}
	if bestD <= max(2, len(stat)/4) {
		return best
	}
	return ""
}

func (j *Judge) note(n string) {
	if !j.noted[n] {
		j.noted[n] = true
		j.rec.Notes = append(j.rec.Notes, n)
	}
}

// Judge evaluates a boolean expression now.
func (j *Judge) Judge(e *dsl.Expr) *Judgement {
	jd := &Judgement{Src: e.Src, Pos: e.Pos}
	if reason, failed := j.check(e); reason != "" {
		jd.Reason = reason
		jd.Outcome = Errored
		if failed {
			jd.Outcome = Failed
		}
		return jd
	}
	env := j.Env()
	out, err := expr.Run(e.Program, env)
	if err != nil {
		jd.Outcome = Errored
		jd.Reason = err.Error()
		if msg, at, ok := runtimeError(e, err); ok {
			jd.Reason, jd.ReasonPos = msg, &at
		}
		if empty := (*dsl.EmptyCollection)(nil); errors.As(err, &empty) {
			// Only a claim that would pass having read nothing has no value: one that is false
			// over the empty collection (any(preds, .name == "x") of no predicate) fails, as
			// a wrong outcome should.
			if failed := j.falseOverEmpty(e, env); failed != nil {
				failed.Reason = fmt.Sprintf("%s is empty", empty.Src)
				return failed
			}
			jd.Reason = empty.Error() // not expr's, with its snippet of the rewritten expression
			jd.emptyUntil = empty.Until
		}
		if absent := (*dsl.AbsentKey)(nil); errors.As(err, &absent) {
			jd.Reason = absent.Error() // not expr's, with its snippet of the rewritten expression
		}
		if zero := (*dsl.ZeroDivisor)(nil); errors.As(err, &zero) {
			jd.Reason = zero.Error() // at the operator (ReasonPos), in the claim's words
			jd.zeroDivisor = true
		}
		if nv := (*schema.NoValueError)(nil); errors.As(err, &nv) {
			jd.Reason = nv.Error() // it names the read as written; expr's snippet is of the rewritten expression
		}
		if why := j.noResult(e); why != "" && readOfNil(jd.Reason) {
			jd.Reason = why // not expr's "cannot get codes from <nil>"
		} else if why := foundNothing(e.Src, jd.Reason); why != "" {
			jd.Reason = why // not Go's "interface conversion: interface {} is nil, not int"
			jd.Reason += j.whyEmpty(firstArg(why))
		} else if why := j.outOfRange(e.Src, err); why != "" {
			jd.Reason = why // not expr's "index out of range: 0 (array length is 0)"
		} else if why := j.fieldOfNil(e, err); why != "" {
			jd.Reason = why // not expr's bare "cannot fetch interval from <nil>"
		}
		jd.Reason = clipReason(jd.Reason)
		return jd
	}
	jd.Outcome = Failed
	if ok, _ := out.(bool); ok {
		jd.Outcome = Passed
	}
	// Pass or fail, the verdict shows what was measured.
	jd.Explanation = (&shower{env: env, names: []*dsl.Names{j.names, j.rec.Names()}}).explain(e.Explain)
	if jd.Outcome == Passed {
		if why := newlineDecided(e, env); why != "" {
			jd.Outcome, jd.Reason = Errored, why
		}
	}
	return jd
}

// runtimeError is expr's error err of evaluating e as the verdict says it: its message alone,
// at the position in the scenario's file of the part that erred (e.PosAt of expr's offset).
// expr's own text ends "(1:16)\n | p.exit == 0 && int(p.stdout) > 2\n | ...............^":
// a place in the expression's coordinates, its caret at the terminal's first column under a
// copy of the expression, not under the expression the verdict line shows. ok is false when
// err is not expr's or says no place within e.Src (the error is then said as it is).
func runtimeError(e *dsl.Expr, err error) (msg string, at dsl.Pos, ok bool) {
	var fe *file.Error
	if !errors.As(err, &fe) || fe.Line == 0 || fe.From < 0 || fe.From >= utf8.RuneCountInString(e.Src) || !e.Pos.IsValid() {
		return "", dsl.Pos{}, false
	}
	// A value in the message keeps its newlines (int(abc\n)): one line, as the verdict's.
	return strings.ReplaceAll(strings.TrimRight(fe.Message, "\n"), "\n", `\n`), e.PosAt(fe.From), true
}

// falseOverEmpty is the judgement of e, Failed, when e evaluates to false with its empty
// collections read as they are (not refused by __nonEmpty); nil when it is true, or errs.
func (j *Judge) falseOverEmpty(e *dsl.Expr, env map[string]any) *Judgement {
	lax := maps.Clone(env)
	lax[dsl.NonEmptyFunc] = func(call, src, claim string, until bool, c any) (any, error) { return c, nil }
	out, err := expr.Run(e.Program, lax)
	if ok, isBool := out.(bool); err != nil || !isBool || ok {
		return nil
	}
	return &Judgement{Src: e.Src, Pos: e.Pos, Outcome: Failed,
		Explanation: (&shower{env: lax, names: []*dsl.Names{j.names, j.rec.Names()}}).explain(e.Explain)}
}

// noResult says which step e reads recorded no result, and how that step ended ("" when
// every step it reads recorded one): a load its timeout cut, a sampling step that took no
// sample.
func (j *Judge) noResult(e *dsl.Expr) string {
	for _, r := range e.Reads {
		if r.Via != "" {
			continue
		}
		if x := j.rec.Results[r.Step]; x != nil && x.Value != nil {
			continue
		}
		how := fmt.Sprintf("it did not run: outcome.%s is \"skipped\"", r.Step)
		latest := latestRounds(j.rec.Steps)
		for i, s := range j.rec.Steps {
			if s.Name != r.Step {
				continue
			}
			if !j.thisRound(i, s, latest) {
				// Of an earlier round than the step's latest (a repeat's round it did
				// not run in): not how the step's result came to be missing.
				how = fmt.Sprintf("it did not run in the latest round of its repeat: outcome.%s is \"skipped\"", r.Step)
				continue
			}
			switch s.Outcome {
			case Skipped:
				how = fmt.Sprintf("it did not run: outcome.%s is \"skipped\"", r.Step)
			case "":
				how = "it is still running"
			default:
				how = "its outcome is " + string(s.Outcome)
				if s.Error != "" {
					how += ": " + dsl.Truncate(s.Error, 200)
				}
			}
		}
		return fmt.Sprintf("%s.%s has no value: step %q recorded no result (%s)", r.Step, r.Field, r.Step, how)
	}
	return ""
}

// foundNothing says, in the claim's terms, why an expression of source src erred with msg when
// the nil it compared is what findIndex or findLastIndex give when no item matches (not -1:
// expr 1.17.8), or what min or max give of an empty list: Go's "interface conversion:
// interface {} is nil, not int" or expr's "invalid operation: <nil> < int" said nothing of
// it. "" when msg is not about a nil operand or src calls none of them.
func foundNothing(src, msg string) string {
	if !strings.Contains(msg, "interface {} is nil") && !strings.Contains(msg, "<nil>") {
		return ""
	}
	for _, fn := range []string{"findLastIndex", "findIndex", "findLast", "find", "min", "max", "first", "last"} {
		call := callText(src, fn)
		if call == "" {
			continue
		}
		switch fn {
		case "findIndex", "findLastIndex":
			return fmt.Sprintf("%s found no item: %s gives nil, not -1, when nothing matches, and a comparison of nil errs; to claim that nothing matches write none(…) with the same list and predicate, to claim that something does, any(…)", call, fn)
		case "first", "last":
			if !strings.Contains(msg, "from <nil>") {
				continue
			}
			list := strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(call, fn+"("), ")"))
			return fmt.Sprintf("%s has no value: %s is empty (%s gives nil then)", call, list, fn)
		case "find", "findLast":
			return fmt.Sprintf("%s found no item: %s gives nil when nothing matches, and reading or comparing nil errs; claim that something matches first (any(…) && …), or that nothing does with none(…)", call, fn)
		default:
			return fmt.Sprintf("%s has no value: the list it takes the %s of is empty (%s gives nil then), and a comparison of nil errs; claim that the list has items (len(…) > 0 && …), or, where an empty one is the claim, say so (len(…) == 0 || …)", call, map[string]string{"min": "least", "max": "greatest"}[fn], fn)
		}
	}
	return ""
}

// firstArg is the list a foundNothing message of first or last names ("first(xs) has no
// value: xs is empty …" gives xs); "" for the others.
func firstArg(why string) string {
	_, rest, ok := strings.Cut(why, " has no value: ")
	if !ok {
		return ""
	}
	list, _, ok := strings.Cut(rest, " is empty (")
	if !ok {
		return ""
	}
	return list
}

// whyEmpty says why list, as written, is empty where it is the captures of a logs step whose
// capture matched no line (": the capture of "l2" matched none of the 1 line(s) it read");
// "" otherwise.
func (j *Judge) whyEmpty(list string) string {
	step, ok := strings.CutSuffix(list, ".captures")
	if !ok {
		return ""
	}
	if x := j.rec.Results[step]; x != nil {
		if r, ok := x.Value.(schema.LogResult); ok && len(r.Captures) == 0 && !r.Cut {
			return fmt.Sprintf(": the capture of %q matched none of the %g line(s) it read", step, r.Count)
		}
	}
	return ""
}

// outOfRange says, in the claim's terms, why an expression of source src erred with err
// where err is expr's "index out of range: 0 (array length is 0)" of an index written xs[i]:
// which list, how many items it holds (none: why, for a logs step's captures). "" for any
// other error, or where the index cannot be found in src.
func (j *Judge) outOfRange(src string, err error) string {
	var fe *file.Error
	if !errors.As(err, &fe) {
		return ""
	}
	var index, length int
	switch {
	case fe.Message == "reflect: slice index out of range":
		// xs[0]?.code: expr's optional read indexes the list by reflection, which says
		// neither the index nor the length.
		length = -1
	case !strings.HasPrefix(fe.Message, "index out of range: "):
		return ""
	default:
		if _, e := fmt.Sscanf(fe.Message, "index out of range: %d (array length is %d)", &index, &length); e != nil {
			return ""
		}
	}
	open := dsl.ByteOffset(src, fe.From)
	if open <= 0 || open >= len(src) || src[open] != '[' {
		return ""
	}
	b := dsl.PairBrackets(src)
	end := b.Close(open)
	if end < 0 {
		return ""
	}
	start := operandStart(src, b, open)
	if start == open {
		return ""
	}
	list, read := src[start:open], src[start:end+1]
	if length < 0 {
		// ?. reads a field of an item that is missing as nil, not a missing item: the
		// list holds fewer items than the index, and ?? would read nothing as its default.
		idx := strings.TrimSpace(src[open+1 : end])
		bound := fmt.Sprintf("len(%s) > %s", list, idx)
		if n, ok := strings.CutPrefix(idx, "-"); ok {
			bound = fmt.Sprintf("len(%s) >= %s", list, n) // xs[-2]: the second from the end
		}
		return fmt.Sprintf("%s has no value: %s holds no item at index %s (?. makes a missing field nil, not a missing item, and ?? would read an item nobody recorded as its default); claim %s first, or that it is empty (len(%s) == 0)", read, list, idx, bound, list)
	}
	if length == 0 {
		why := j.whyEmpty(list)
		claim := ""
		if why != "" {
			claim = fmt.Sprintf("; claim len(%s) > 0 first", list)
		}
		return fmt.Sprintf("%s has no value: %s is empty%s%s", read, list, why, claim)
	}
	items := "items"
	if length == 1 {
		items = "item"
	}
	return fmt.Sprintf("%s has no value: %s holds %d %s (indexes 0 to %d, or -%d to -1 from its end)", read, list, length, items, length-1, length)
}

// fieldOfNil says which read of e gave nil where a field of it is read (expr's "cannot fetch
// interval from <nil>"), and what to write instead: cl.outlier_detection.interval, of a
// cluster without outlier_detection (a message Envoy left out of its dump: unset). "" when
// err is not that, or its place in e.Src is not a field read.
func (j *Judge) fieldOfNil(e *dsl.Expr, err error) string {
	var fe *file.Error
	if !errors.As(err, &fe) {
		return ""
	}
	field, ok := strings.CutPrefix(fe.Message, "cannot fetch ")
	if field, ok = strings.CutSuffix(field, " from <nil>"); !ok || field == "" || strings.Contains(field, " ") {
		return ""
	}
	src := e.Src
	dot := dsl.ByteOffset(src, fe.From-1) // expr places the error at the field's name
	if dot <= 0 || dot >= len(src) || src[dot] != '.' || !strings.HasPrefix(src[dot+1:], field) || src[dot-1] == '?' {
		return ""
	}
	start := operandStart(src, dsl.PairBrackets(src), dot)
	if start == dot {
		return ""
	}
	parent := src[start:dot]
	what := "is nil (absent from what the step recorded)"
	root, _, _ := strings.Cut(parent, ".")
	if x := j.rec.Results[root]; x != nil && x.Kind == "config" {
		what = "is unset (Envoy left it out of its config dump: a message, which has no default, or a map's key it did not write)"
	}
	return fmt.Sprintf("%s.%s has no value: %s %s, so it has no %s; claim that it is unset (%s == nil), or that it is set and what it holds (%s != nil && …); %s?.%s reads nil where it is unset",
		parent, field, parent, what, field, parent, parent, parent, field)
}

// operandStart is where the operand that ends just before src[end] begins: a name, a member
// chain (l2.captures, .captures, #.x), indexes and calls included (filter(xs, p)[0]); b are
// src's brackets.
func operandStart(src string, b dsl.Brackets, end int) int {
	i := end
	for i > 0 {
		c := src[i-1]
		switch {
		case c == ')' || c == ']':
			j := b.Open(i - 1)
			if j < 0 {
				return i
			}
			i = j
		case c == '.' || c == '#' || c == '_' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z',
			c == '?' && i < len(src) && src[i] == '.': // ?.
			i--
		default:
			return i
		}
	}
	return i
}

// callText is the first call of function fn in src, as written ("findIndex(xs, # > 1)"), ""
// when src calls none.
func callText(src, fn string) string {
	var b *dsl.Brackets
	for k := dsl.SkipStrings(src, 0); k < len(src); k = dsl.SkipStrings(src, k+1) {
		if !strings.HasPrefix(src[k:], fn+"(") || k > 0 && (isWordByte(src[k-1]) || src[k-1] == '.') {
			continue // not a call of fn: part of another name, or a method
		}
		if b == nil {
			pairs := dsl.PairBrackets(src)
			b = &pairs
		}
		if end := b.Close(k + len(fn)); end >= 0 {
			return src[k : end+1]
		}
		return ""
	}
	return ""
}

// readOfNil says an evaluation error is expr's (or a function's) about a value that is nil:
// a field read from it, its length, a predicate over it. Where the expression reads a step
// that recorded no result, that is the cause, said as "has no value" (noResult).
func readOfNil(msg string) bool {
	return strings.Contains(msg, "from <nil>") || strings.Contains(msg, "on zero Value") ||
		strings.Contains(msg, "(type <nil>)")
}

// Value evaluates an expression for its value (a ${...}).
func (j *Judge) Value(e *dsl.Expr) (any, error) {
	if reason, _ := j.check(e); reason != "" {
		return nil, fmt.Errorf("%s", reason)
	}
	v, err := expr.Run(e.Program, j.Env())
	if err != nil {
		if why := j.evalWhy(e, err); why != "" {
			return nil, errors.New(why)
		}
	}
	return v, err
}

// evalWhy says why the evaluation of e erred with err, in the scenario's terms (a step that
// recorded no result, an index out of range, a field of nil); "" when it cannot say more.
func (j *Judge) evalWhy(e *dsl.Expr, err error) string {
	if nv := (*schema.NoValueError)(nil); errors.As(err, &nv) {
		return nv.Error()
	}
	if zero := (*dsl.ZeroDivisor)(nil); errors.As(err, &zero) {
		if _, at, ok := runtimeError(e, err); ok {
			return fmt.Sprintf("%s: %s", at, zero.Error()) // at the operator
		}
		return zero.Error()
	}
	if why := j.noResult(e); why != "" && readOfNil(err.Error()) {
		return why
	}
	if why := j.outOfRange(e.Src, err); why != "" {
		return why
	}
	return j.fieldOfNil(e, err)
}

// shower renders an expression with the value of each part, each number with its unit
// (dsl.UnitOf: the type the kinds declare) and at most 4 significant digits: `delta.upstream_rq_pending_overflow (12) ==
// fortio.code503 (15)`, `keepalive.p99 (1.66 ms) < 1`.
type shower struct {
	env map[string]any
	// names type the parts: the scenario's, then the record's (dsl.UnitOf takes the first that
	// types a part).
	names []*dsl.Names
	// exact writes numbers in full: two sides that differ only beyond 4 digits.
	exact bool
}

func (sh *shower) explain(x *dsl.Explain) string {
	if x == nil {
		return ""
	}
	switch x.Op {
	case "":
		if x.Value() == nil {
			return x.Src
		}
		return sh.leaf(x)
	case "!", "not":
		// The value shown inside is the operand's: parenthesised, so that `!(has(…) (false))`
		// does not read as the negation being false.
		if x.Op == "not" {
			return "not (" + sh.explain(x.Left) + ")"
		}
		return "!(" + sh.explain(x.Left) + ")"
	case "&&", "and", "||", "or":
		// The judge did not evaluate the right side where the left decided: its values would
		// be ones it never read (a step that did not run reads 0 here), so it is shown as
		// written.
		if held, ok := x.Left.Holds(sh.env); ok && held == (x.Op == "||" || x.Op == "or") {
			return "(" + sh.explain(x.Left) + ") " + x.Op + " (" + x.Right.Source() + ": not evaluated)"
		}
		return "(" + sh.explain(x.Left) + ") " + x.Op + " (" + sh.explain(x.Right) + ")"
	case "let":
		// let i = findIndex(…) (3); i (3) >= 0 && …: the value bound (a map, let s = after,
		// as written: its values are shown where the body reads them), then the body.
		left := sh.explain(x.Left)
		if x.Left != nil && x.Left.Op == "" && x.Left.Value() != nil {
			left = sh.part(x.Left, true)
		}
		return "let " + x.Name + " = " + left + "; " + sh.explain(x.Right)
	}
	// Two numbers that differ only beyond the digits shown would read as equal (x (10) == 10
	// failing): both sides are then written in full.
	// So would a time of the run and a duration (started.lb - started.la (0.5 s) >=
	// duration("500ms") failing), the duration taken in the time's unit.
	if !sh.exact {
		a, okA := sh.number(x.Left)
		b, okB := sh.number(x.Right)
		if okA && !okB {
			b, okB = sh.durationIn(x.Right, x.Left)
		} else if okB && !okA {
			a, okA = sh.durationIn(x.Left, x.Right)
		}
		if okA && okB && a != b && dsl.Sig4(a) == dsl.Sig4(b) {
			full := &shower{env: sh.env, names: sh.names, exact: true}
			return full.explain(x.Left) + " " + x.Op + " " + full.explain(x.Right)
		}
	}
	return sh.explain(x.Left) + " " + x.Op + " " + sh.explain(x.Right)
}

// durationIn is the value of side x when it is a duration, in the unit of the time it is
// compared with (seconds or milliseconds, as the kinds declare the other side's).
func (sh *shower) durationIn(x, other *dsl.Explain) (float64, bool) {
	if x == nil || x.Op != "" || x.Value() == nil || other == nil {
		return 0, false
	}
	v, err := expr.Run(x.Value(), sh.env)
	d, ok := v.(time.Duration)
	if err != nil || !ok {
		return 0, false
	}
	switch dsl.UnitOf(other.WithLets(), sh.names...) {
	case "s":
		return d.Seconds(), true
	case "ms":
		return d.Seconds() * 1000, true
	}
	return 0, false
}

// number is the value of a side of a comparison when it is a number: a literal as written,
// anything else evaluated.
func (sh *shower) number(x *dsl.Explain) (float64, bool) {
	if x == nil || x.Op != "" {
		return 0, false
	}
	if x.Value() == nil {
		f, err := strconv.ParseFloat(x.Src, 64)
		return f, err == nil
	}
	v, err := expr.Run(x.Value(), sh.env)
	if err != nil {
		return 0, false
	}
	switch n := v.(type) {
	case float64:
		return n, true
	case int:
		return float64(n), true
	}
	return 0, false
}

// leaf renders a leaf with its value; a call with its arguments' values
// (approx(fortio.code503 (15), 20, 0.1) (false)), arithmetic with its operands'.
func (sh *shower) leaf(x *dsl.Explain) string { return sh.part(x, false) }

// part renders a leaf, or an argument of a call or of arithmetic (asArg).
func (sh *shower) part(x *dsl.Explain, asArg bool) string {
	src := x.Src
	var fields []string // what a predicate argument reads of each item
	switch {
	case x.Call != "":
		for _, a := range x.Args {
			for _, f := range a.Fields {
				if !slices.Contains(fields, f) {
					fields = append(fields, f)
				}
			}
		}
		var args []string
		for i, a := range x.Args {
			if i == 0 && len(fields) > 0 && a.Call == "" && a.Infix == "" && a.Value() != nil {
				// A list of samples shown whole is [map with 23 entries, …]: shown by the
				// fields the predicate reads of each, the values it read are seen.
				if v, err := expr.Run(a.Value(), sh.env); err == nil {
					if by, ok := sh.byFields(a.Src+"[].%s (%s)", v, fields); ok {
						if d := sh.deciding(x, a, v, fields); d != "" {
							by += ", " + d
						}
						args = append(args, by)
						continue
					}
				}
			}
			args = append(args, sh.arg(a))
		}
		src = x.Call + "(" + strings.Join(args, ", ") + ")"
	case x.Infix == "?:" && len(x.Args) == 3:
		src = sh.conditional(x.Args[0], x.Args[1], x.Args[2])
	case x.Infix == "[]" && len(x.Args) == 2:
		src = x.Args[0].Src + "[" + sh.arg(x.Args[1]) + "]"
	case x.Infix != "" && len(x.Args) == 2:
		src = sh.arg(x.Args[0]) + " " + x.Infix + " " + sh.arg(x.Args[1])
	}
	if x.Value() == nil {
		return src
	}
	v, err := expr.Run(x.Value(), sh.env)
	if err != nil {
		return fmt.Sprintf("%s (error: %v)", src, err)
	}
	if x.Infix != "" && x.Infix != "[]" || x.Grouped {
		src = "(" + src + ")"
	}
	if asArg && reflect.ValueOf(v).Kind() == reflect.Map {
		return src // keys(fortio.ips): the call's value says what matters, not the whole map
	}
	switch v.(type) {
	case schema.LoadLatency, schema.LoadResult:
		if asArg {
			// let e = f.errorLatency, let r = f: each read of it shows its value, with its
			// unit (the struct whole had every number in full, none with its unit).
			return src
		}
	}
	if by, ok := sh.byFields(".%s: %s", v, fields); ok {
		// filter(g.samples, .rq_active > 2): the items it kept, by the same fields.
		return fmt.Sprintf("%s (%s)", src, by)
	}
	if b, ok := v.(bool); ok && !b && x.Call == "approx" && len(x.Args) == 3 {
		// approx(fortio.qps (80.2), 100, 0.1) (false; it accepts 90 to 110): the range
		// the claim set, which the call's arguments leave to arithmetic.
		want, ok := sh.number(x.Args[1])
		if !ok {
			want, ok = sh.durationIn(x.Args[1], x.Args[0]) // approx(f.p50, duration('20ms'), 0.1)
		}
		if ok {
			if rel, ok := sh.number(x.Args[2]); ok {
				unit := dsl.UnitOf(x.Args[0].WithLets(), sh.names...)
				d := math.Abs(rel * want)
				return fmt.Sprintf("%s (false; it accepts %s to %s)", src, sh.value(want-d, unit), sh.value(want+d, unit))
			}
		}
	}
	// A let's name has its value's unit: let r = fortio.requests (24620); r (24616) == 1 read
	// two counts of one value, the second without the unit's 4 digits.
	return fmt.Sprintf("%s (%s)", src, sh.value(v, dsl.UnitOf(x.WithLets(), sh.names...)))
}

// conditional renders c ? a : b with the values of the condition's parts, and of the branch
// the condition chose; the other branch was not evaluated (its values would be ones the
// judge never read), so it is shown as written, as both are where the condition has no
// boolean value.
func (sh *shower) conditional(c, a, b *dsl.Explain) string {
	cond := sh.explain(c)
	if c.Op == "" && c.Value() == nil {
		cond = c.Src // a literal
	}
	yes, no := a.Source(), b.Source()
	held, ok := c.Holds(sh.env)
	if c.Op == "" && c.Value() == nil {
		held, ok = c.Src == "true", c.Src == "true" || c.Src == "false" // true ? a : b
	}
	if ok {
		if held {
			yes = sh.branch(a)
		} else {
			no = sh.branch(b)
		}
	}
	return cond + " ? " + yes + " : " + no
}

// branch is a conditional's branch with its values: a comparison or a conjunction as a whole
// expression shows it, anything else as an argument is shown.
func (sh *shower) branch(x *dsl.Explain) string {
	if x.Op != "" {
		return sh.explain(x)
	}
	return sh.arg(x)
}

// byFields shows a list of maps (a series' samples) by the fields a predicate reads of each
// item, format taking the field and its list ("g.samples[].%s (%s)": "g.samples[].rq_active
// ([0, 4, 4])"), one list per field, each with its unit; ok is false when v is not a
// non-empty list of maps, or no item has any of the fields.
func (sh *shower) byFields(format string, v any, fields []string) (string, bool) {
	rv := reflect.ValueOf(v)
	if len(fields) == 0 || v == nil || rv.Kind() != reflect.Slice && rv.Kind() != reflect.Array || rv.Len() == 0 {
		return "", false
	}
	found := false
	var parts []string
	for _, f := range fields {
		vals := make([]any, rv.Len())
		for i := range vals {
			vals[i] = absentField{}
			item := reflect.ValueOf(rv.Index(i).Interface())
			if !hasFields(item) {
				return "", false
			}
			if fv, ok := fieldOf(item, f); ok {
				vals[i], found = fv, true
			}
		}
		unit := ""
		if f == "at" {
			unit = "s" // a sample's time: seconds from the start of the steps
		}
		parts = append(parts, fmt.Sprintf(format, f, sh.value(vals, unit)))
	}
	return strings.Join(parts, ", "), found
}

// deciding is the item of list v (the first argument a of the call x) that decided the
// call, by the fields its predicate reads ("g.samples[11].rq_active (9)"), when it is past
// the items an explanation shows: the first that fails the predicate of an all(), the first
// that holds it for an any() or a none(). "" when none decided there (an all() that held).
func (sh *shower) deciding(x, a *dsl.Explain, v any, fields []string) string {
	rv := reflect.ValueOf(v)
	if rv.Len() <= maxListItems || len(x.Args) != 2 || x.Args[1].Fields == nil {
		return ""
	}
	pred := x.Args[1].Src
	switch x.Call {
	case "all":
		pred = "!(" + pred + ")"
	case "any", "none":
	default:
		return ""
	}
	find := a.Derived("findIndex(" + a.Src + ", " + pred + ")")
	if find == nil || find.Value() == nil {
		return ""
	}
	r, err := expr.Run(find.Value(), sh.env)
	i, ok := r.(int)
	if err != nil || !ok || i < maxListItems || i >= rv.Len() {
		return ""
	}
	item := reflect.ValueOf(rv.Index(i).Interface())
	var parts []string
	for _, f := range fields {
		fv, ok := fieldOf(item, f)
		if !ok {
			fv = absentField{}
		}
		unit := ""
		if f == "at" {
			unit = "s"
		}
		parts = append(parts, fmt.Sprintf("%s[%d].%s (%s)", a.Src, i, f, sh.value(fv, unit)))
	}
	return strings.Join(parts, ", ")
}

// absentField is an item's field that the item lacks (a counter a sample was taken before
// it was created), shown as the deltas show one: "absent".
type absentField struct{}

func (absentField) String() string { return "absent" }

// hasFields reports whether item is what a predicate reads fields of: a map of strings (a
// sample, a capture) or a struct (a log entry).
func hasFields(item reflect.Value) bool {
	return item.Kind() == reflect.Map && item.Type().Key().Kind() == reflect.String || item.Kind() == reflect.Struct
}

// fieldOf reads the path f of a map as an expression does, a dotted stat name
// (http.downstream_rq_active) being a key of its own; of a struct (a log entry), the field
// its expr tag names, none where the entry says its format lacks it (LacksField).
func fieldOf(m reflect.Value, f string) (any, bool) {
	if m.Kind() == reflect.Struct {
		head, rest, deeper := strings.Cut(f, ".")
		if l, ok := m.Interface().(interface{ LacksField(string) error }); ok && l.LacksField(head) != nil {
			return nil, false
		}
		for i := 0; i < m.NumField(); i++ {
			sf := m.Type().Field(i)
			name, _, _ := strings.Cut(sf.Tag.Get("expr"), ",")
			if name == "" {
				name = sf.Name
			}
			if !sf.IsExported() || name != head {
				continue
			}
			v := m.Field(i).Interface()
			if !deeper {
				return v, true
			}
			if next := reflect.ValueOf(v); hasFields(next) {
				return fieldOf(next, rest)
			}
			return nil, false
		}
		return nil, false
	}
	segs := strings.Split(f, ".")
	for i := len(segs); i > 0; i-- {
		v := m.MapIndex(reflect.ValueOf(strings.Join(segs[:i], ".")).Convert(m.Type().Key()))
		if !v.IsValid() {
			continue
		}
		if i == len(segs) {
			return v.Interface(), true
		}
		next := reflect.ValueOf(v.Interface())
		if next.Kind() == reflect.Map && next.Type().Key().Kind() == reflect.String {
			return fieldOf(next, strings.Join(segs[i:], "."))
		}
		return nil, false
	}
	return nil, false
}

// arg is an argument as a failure shows it: a literal or predicate as written, anything
// else with its value.
func (sh *shower) arg(a *dsl.Explain) string {
	if a.Value() == nil && a.Call == "" && a.Infix == "" {
		return a.Src
	}
	return sh.part(a, true)
}

// maxListItems is how many items of a list a failure shows, maxShownString how many
// characters of a string (its length in bytes follows).
const (
	maxListItems   = 10
	maxShownString = 200
)

// value formats a value for an explanation: a number with its unit, a list in full when short,
// otherwise its first items and its length.
func (sh *shower) value(v any, unit string) string {
	rv := reflect.ValueOf(v)
	if v == nil || rv.Kind() != reflect.Slice && rv.Kind() != reflect.Array {
		if f, ok := v.(float64); ok && sh.exact {
			return strings.TrimSpace(strconv.FormatFloat(f, 'g', -1, 64) + " " + strings.TrimPrefix(unit, "count"))
		}
		if s, ok := v.(string); ok && len(s) > maxShownString {
			// A command's output of a MiB, shown whole, was a MiB on the console and in
			// every report of the run.
			return dsl.Truncate(dsl.ShowValue(s, unit), maxShownString) + fmt.Sprintf(" (%d bytes)", len(s))
		}
		return dsl.ShowValue(v, unit)
	}
	n := rv.Len()
	var items []string
	for i := 0; i < n && i < maxListItems; i++ {
		items = append(items, sh.item(rv.Index(i).Interface(), unit))
	}
	if n > maxListItems {
		return fmt.Sprintf("[%s, …] (%d items)", strings.Join(items, ", "), n)
	}
	return "[" + strings.Join(items, ", ") + "]"
}

func (sh *shower) item(v any, unit string) string {
	rv := reflect.ValueOf(v)
	if v != nil && (rv.Kind() == reflect.Slice || rv.Kind() == reflect.Array) {
		return sh.value(v, unit)
	}
	return dsl.Truncate(sh.value(v, unit), 80)
}

// Rejudge judges every expectation of sc again over a recorded run, as replay does.
//
// An expectation that calls now() is not judged again: its value depends on when it is judged,
// and judged at replay's (or merge's, or a mutant's) time it says another thing than the run
// did (a fresh stamp turns stale, an untouched record reads as edited). It keeps the outcome
// the record gives it, with no values (ValueContradictions has none to hold to the data), and
// a note says so; one the record does not hold errs.
//
// An expectation that read a value the record holds redacted (a secret's value, shown as
// "[secret NAME]" wherever it occurs: in a command's output too) keeps the outcome the run
// gave it over the real value, with a note: judged again, it would read the redaction. Before,
// `trim(who.stdout) == 'logged in as admin'` of a run that passed replayed FAILED (the user
// name was the password too), and merge refused the untouched record as edited.
func Rejudge(rec *Record, sc *dsl.Scenario) []*Judgement {
	recorded := rec.Expectations
	rec.Notes = slices.Clone(rec.Notes)
	j := NewJudge(rec, sc)
	var out []*Judgement
	seen := map[string]int{}
	for _, e := range sc.Expect {
		n := seen[e.Src]
		seen[e.Src]++
		// (A left side that reads a secret's redaction decides nothing: its value is not the run's.)
		if e.Now && (nowDecides(e, j.Env()) || readsRedacted(j.Reads(e), sc.Secrets)) {
			out = append(out, j.keptAsRecorded(e, nthRedacted(recorded, e.Src, n, sc.Secrets)))
			continue
		}
		jd := j.Judge(e)
		jd.setValues(j.Reads(e))
		if readsRedacted(jd.Values, sc.Secrets) {
			if r := nthRedacted(recorded, e.Src, n, sc.Secrets); r != nil {
				kept := *r
				kept.Pos = jd.Pos
				out = append(out, &kept)
				rec.Notes = append(rec.Notes, fmt.Sprintf("expectation %q read a value the record holds with a secret redacted: not judged again, its outcome is the run's (%s)", r.Src, r.Outcome)) // r.Src: redacted as the record writes it
				continue
			}
		}
		out = append(out, jd)
	}
	return out
}

// nthRedacted is the n-th (from 0) of js whose source is src as the record writes it: with
// each secret's value redacted ("[secret NAME]" stands for any text), or nil.
func nthRedacted(js []*Judgement, src string, n int, secrets []string) *Judgement {
	for _, j := range js {
		if !sameRedacted(j.Src, src, secrets) {
			continue
		}
		if n == 0 {
			return j
		}
		n--
	}
	return nil
}

// sameRedacted reports whether src, as a record with secrets redacted writes it, is recorded.
func sameRedacted(recorded, src string, secrets []string) bool {
	if recorded == src {
		return true
	}
	var marks []string
	for _, name := range secrets {
		marks = append(marks, secretmask.Pattern(name))
	}
	if len(marks) == 0 {
		return false
	}
	mark := regexp.MustCompile(strings.Join(marks, "|"))
	var pattern strings.Builder
	last := 0
	for _, m := range mark.FindAllStringIndex(recorded, -1) {
		pattern.WriteString(regexp.QuoteMeta(recorded[last:m[0]]) + "(?s:.*?)")
		last = m[1]
	}
	if last == 0 {
		return false
	}
	pattern.WriteString(regexp.QuoteMeta(recorded[last:]))
	re, err := regexp.Compile("^" + pattern.String() + "$")
	return err == nil && re.MatchString(src)
}

// readsRedacted reports whether a value of vs is a string that holds the redaction of one of
// secrets ("[secret NAME]", "[secret NAME #i]"): only a scenario that declares secrets has
// any, so a string that merely looks so is data.
func readsRedacted(vs Values, secrets []string) bool {
	if len(secrets) == 0 {
		return false
	}
	for _, v := range vs {
		s, ok := v.(string)
		if !ok {
			continue
		}
		for _, name := range secrets {
			if secretmask.Mentions(s, name) {
				return true
			}
		}
	}
	return false
}

// nowDecides says whether e, which calls now(), may read now() when judged over env: a call
// outside a side of && or || that a left side which calls no now() decides (e.stdout == "0"
// && now().Unix() > 0 over a stdout of 7 reads no time, and fails whenever it is judged).
// Before, every expectation that called now() kept the outcome the record gave it: that one,
// its outcome edited from failed to passed with the run's, replayed PASSED, its own
// explanation showing the left side false.
func nowDecides(e *dsl.Expr, env map[string]any) bool {
	if e.Explain == nil {
		return true
	}
	var reaches func(x *dsl.Explain) bool
	reaches = func(x *dsl.Explain) bool {
		if x == nil || !callsNow.MatchString(x.Source()) {
			return false
		}
		switch x.Op {
		case "&&", "and", "||", "or":
			if callsNow.MatchString(x.Left.Source()) {
				return true
			}
			if held, ok := x.Left.Holds(env); ok && held == (x.Op == "||" || x.Op == "or") {
				return false // decided on the left: the right side is not evaluated
			} else if !ok {
				return true
			}
			return reaches(x.Right)
		}
		return true
	}
	return reaches(e.Explain)
}

// callsNow finds a call of now() in an expression's source (one in a string literal too: such
// an expression is kept as recorded, as before).
var callsNow = regexp.MustCompile(`\bnow\s*\(`)

// keptAsRecorded is the judgement of e, which calls now(), as the run recorded it (r; nil when
// the record holds none).
func (j *Judge) keptAsRecorded(e *dsl.Expr, r *Judgement) *Judgement {
	if r == nil {
		return &Judgement{Src: e.Src, Pos: e.Pos, Outcome: Errored,
			Reason: fmt.Sprintf("%q calls now(), so only the run can judge it, at its time, and the record holds no judgement of it", e.Src)}
	}
	// r.Src: as the record writes it, a secret's value redacted
	j.note(fmt.Sprintf("expectation %q calls now(): it keeps the outcome the run recorded (%s): judged again, now() would read this time, not the run's", r.Src, r.Outcome))
	return &Judgement{Src: e.Src, Pos: e.Pos, Outcome: r.Outcome, Reason: r.Reason, Explanation: r.Explanation}
}

// clipReason keeps an error's reason readable where expr's message holds a huge value whole
// (int(p.stdout) of a command that printed 100 KB: a console line, and the report's, of
// 128,939 characters): its start and its end, which say what erred and on what, and how many
// bytes were left out. The value is whole in the report's artifacts.
func clipReason(s string) string {
	const head, tail = 600, 300
	if len(s) <= head+tail+100 {
		return s
	}
	h, t := head, len(s)-tail
	for h > 0 && !utf8.RuneStart(s[h]) {
		h--
	}
	for t < len(s) && !utf8.RuneStart(s[t]) {
		t++
	}
	return fmt.Sprintf("%s… (%d bytes of the message left out) …%s", s[:h], t-h, s[t:])
}
