package interp

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/schema"
)

// Mutation testing of expectations: an experiment proves something only if its expectations
// would fail on a wrong outcome. Mutants are copies of a recorded run, each changed in one way
// that matters to what the expectations read (a counter's delta set to 0, a load's codes all
// 503, a capture emptied, a step started late, ...). Each mutant is judged again with the
// scenario's expectations; a mutant that every expectation still passes has survived: the
// expectations cannot tell that outcome from the recorded one.

// Mutant is one perturbed copy of a record, named for a person.
type Mutant struct {
	Name  string
	apply func(*Record)
	// caughtBy, when set, is what fails the run itself on this outcome before any expectation
	// is judged (an exec step's exit code check): the mutant is killed by it.
	caughtBy string
	// ended: the mutant changes how a step ended, which its record's other fields (an exec's
	// exit code) may then contradict: a step can end otherwise for a cause they do not hold
	// (a timeout, a kill), so it is judged, not taken for impossible.
	ended bool
	// unbuilt, when set, says which run the mutant stands for and why it is not that run's
	// record: it heads the reasons the mutant is impossible, when it is.
	unbuilt string
}

// MutantResult is the verdict on one mutant.
type MutantResult struct {
	// Name says what was changed, e.g. "delta.upstream_rq_pending_overflow = 0 (before → after)".
	Name string `json:"name"`
	// Killed: at least one expectation failed or could not be judged on the mutant.
	Killed bool `json:"killed"`
	// KilledBy are those expectations (their source).
	KilledBy []string `json:"killedBy,omitempty"`
	// Survives is the scenario's reason why this mutant may survive (its survivors field).
	Survives string `json:"survives,omitempty"`
	// NotJudged are the expectations, of a mutant that survived, that call now(): they keep
	// the outcome the run recorded (Rejudge), so they cannot kill it, whatever the run would
	// have judged of such data.
	NotJudged []string `json:"notJudged,omitempty"`
	// Contradicted are the expectations that failed on the mutant only because it changed one
	// of two values they compare that the run recorded equal (two records of one fact: the
	// backend's count of 5xx and fortio's 503s), each with the pair: a run where both changed
	// alike passes them, so they did not kill the mutant.
	Contradicted []string `json:"contradicted,omitempty"`
	// Counterpart says what the run where both sides of each such comparison changed alike
	// recorded (the mutant's value on both, the other records of each step kept consistent),
	// on which every expectation was judged: KilledBy, of a mutant killed so, failed there.
	Counterpart string `json:"counterpart,omitempty"`
	// Impossible says what the mutant's record holds that no run writes (replay refuses such
	// a record): it is no outcome the expectations should tell apart, so it is neither
	// killed nor survived, and not judged.
	Impossible []string `json:"impossible,omitempty"`
}

// MutationReport is the result of mutating one record.
type MutationReport struct {
	Scenario string `json:"scenario"`
	// Expectations counts the scenario's expectations (mutate judges those; assert steps are
	// judged during the run).
	Expectations int            `json:"expectations"`
	Mutants      []MutantResult `json:"mutants"`
	Killed       int            `json:"killed"`
	// Allowed counts the survivors the scenario gives a reason for; Unexplained the others.
	Allowed     int `json:"allowed"`
	Unexplained int `json:"unexplained"`
	// Impossible counts the mutants no run records (MutantResult.Impossible), in Mutants
	// but neither killed nor survived.
	Impossible int `json:"impossible"`
	// Unused are the scenario's survivors keys that name none of this run's mutants: they
	// allow nothing (vet checks them against the mutants a run can have; a run whose
	// snapshots came in another order names a delta's pair otherwise).
	Unused []string `json:"unused,omitempty"`
}

// Mutate builds the mutants of rec from what sc's expectations read, and judges each. The
// record must pass the expectations as they are (a mutant of a failing run says nothing).
func Mutate(rec *Record, sc *dsl.Scenario) (*MutationReport, error) {
	base, err := cloneRecord(rec)
	if err != nil {
		return nil, err
	}
	judged := Rejudge(base, sc)
	for _, jd := range judged {
		if jd.Outcome != Passed {
			why := jd.Explanation
			if jd.Reason != "" {
				why = jd.Reason
			}
			return nil, fmt.Errorf("the recorded run does not pass %q (%s): mutation needs a run whose expectations hold", jd.Src, why)
		}
	}
	if v, why := Verdict(base, judged); v != Passed {
		// Its expectations hold, but a step failed or the run did not end: no mutant of it
		// can say whether the expectations would catch a wrong outcome of a passing run.
		return nil, fmt.Errorf("the recorded run did not pass (%s: %s): mutation needs a run that passed", v, why)
	}
	orig := recordJSON(base)
	j0 := NewJudge(base, sc)
	env0 := j0.Env()
	var pair [2]string
	pair[0], pair[1], _ = j0.defaultPair()
	rep := &MutationReport{Scenario: sc.Name, Expectations: len(sc.Expect), Mutants: []MutantResult{}}
	seen := map[string]bool{}
	before := recordContradictions(base, sc)
	for _, m := range Mutants(base, sc) {
		if seen[m.Name] {
			continue
		}
		seen[m.Name] = true
		mr, err := cloneRecord(base)
		if err != nil {
			return nil, err
		}
		m.apply(mr)
		if b := recordJSON(mr); string(b) == string(orig) {
			continue // the change changes nothing here (e.g. doubling a delta of 0)
		}
		res := MutantResult{Name: m.Name}
		if why := newContradictions(before, mr, sc); m.caughtBy == "" && !m.ended && len(why) > 0 {
			// No run records this outcome (fortio's sums broken, a fixed request count not
			// made): an expectation that fails on it tells no wrong outcome apart, so it
			// is not counted as killed (it counted before: "fortio: no request made" of a
			// load of requests: 40, which a run records only with 40 requests, inflated
			// every seed's score). One the run itself fails on (an exec's exit code) is that
			// run's outcome, which its record would say.
			if m.unbuilt != "" {
				why = append([]string{m.unbuilt}, why...)
			}
			res.Impossible = why
			rep.Impossible++
			rep.Mutants = append(rep.Mutants, res)
			continue
		}
		if m.caughtBy != "" {
			res.Killed = true
			res.KilledBy = append(res.KilledBy, m.caughtBy)
		}
		var env1 map[string]any
		var ties []tie
		var mentionedBy []string // the expectations with a tie whose other side another names
		for i, jd := range Rejudge(mr, sc) {
			if jd.Outcome == Passed {
				continue
			}
			if jd.Outcome == Failed && i < len(sc.Expect) && m.caughtBy == "" {
				// An expectation that failed only because the mutant changed one of two
				// records of one fact that it compares (delta.rq_5xx == fortio.code503,
				// fortio's 503s changed, the backend's count not) did not judge a wrong
				// outcome: a run where both read the new value passes it. Whether the
				// other expectations pass that run is judged below (counterpart).
				if env1 == nil {
					env1 = NewJudge(mr, sc).Env()
				}
				if why, ts := contradictionTies(sc.Expect[i], env0, env1, sc, pair); why != "" {
					res.Contradicted = append(res.Contradicted, jd.Src+": "+why)
					ties = append(ties, ts...)
					if slices.ContainsFunc(ts, func(t tie) bool { return t.mentioned }) {
						mentionedBy = append(mentionedBy, jd.Src)
					}
					continue
				}
			}
			res.Killed = true
			res.KilledBy = append(res.KilledBy, jd.Src)
		}
		if len(ties) > 0 && !res.Killed {
			if failed, set, ok := counterpart(mr, sc, env0, pair, before, ties); ok {
				res.Counterpart = counterpartNote(set)
				if len(failed) > 0 {
					res.Killed = true
					res.KilledBy = failed
				}
			} else if len(mentionedBy) > 0 {
				res.Killed = true // the textual rule: another expectation reads the other side
				res.KilledBy = mentionedBy
				res.Contradicted = nil
			}
		} else if len(mentionedBy) > 0 {
			res.KilledBy = append(res.KilledBy, mentionedBy...)
		}
		if !res.Killed {
			for _, e := range sc.Expect {
				if e.Now {
					res.NotJudged = append(res.NotJudged, e.Src)
				}
			}
		}
		switch {
		case res.Killed:
			rep.Killed++
		case sc.Survivors[m.Name] != "":
			res.Survives = sc.Survivors[m.Name]
			rep.Allowed++
		default:
			rep.Unexplained++
		}
		rep.Mutants = append(rep.Mutants, res)
	}
	rep.Unused = unusedSurvivors(sc, seen)
	return rep, nil
}

// recordJSON is rec's JSON, a non-finite number in a result as its string.
func recordJSON(rec *Record) []byte {
	b, err := json.Marshal(rec)
	if IsNonFinite(err) {
		b, _ = json.Marshal(rec.WithFiniteJSON())
	}
	return b
}

// cloneRecord deep-copies a record through its JSON form (as replay reads it).
func cloneRecord(rec *Record) (*Record, error) {
	b, err := json.Marshal(rec)
	if IsNonFinite(err) {
		b, err = json.Marshal(rec.WithFiniteJSON())
	}
	if err != nil {
		return nil, err
	}
	var out Record
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	if err := RestoreTypes(&out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Mutants lists the mutants of rec for sc's expectations: from every stat, series, load, logs,
// exec, value and step time they read.
func Mutants(rec *Record, sc *dsl.Scenario) []Mutant {
	var out []Mutant
	add := func(name string, f func(*Record)) { out = append(out, Mutant{Name: name, apply: f}) }
	names := map[string]bool{}
	j := NewJudge(rec, sc)
	for _, e := range sc.Expect {
		for _, n := range e.Names {
			names[n] = true
		}
		for _, ref := range e.Refs {
			switch ref.Kind {
			case dsl.RefDelta, dsl.RefDeltaPair:
				a, b := ref.From, ref.To
				label := fmt.Sprintf("delta(%q, %q).%s", a, b, ref.Stat)
				if ref.Kind == dsl.RefDelta {
					var err error
					if a, b, err = j.defaultPair(); err != nil {
						continue
					}
					label = "delta." + ref.Stat
				}
				deltaMutants(add, label, a, b, ref.Stat)
				pair := ""
				if ref.Kind == dsl.RefDelta {
					pair = fmt.Sprintf(" (%s → %s)", a, b)
				}
				deltaNumeric(add, label, pair, a, b, ref.Stat)
			case dsl.RefSnapshot:
				snapshotMutants(add, ref.Name, ref.Stat)
			case dsl.RefSeries:
				seriesNumeric(add, strings.SplitN(ref.Name, ".", 2)[0], ref.Stat) // "mid.max" reads series mid
			}
		}
	}
	for _, n := range sortedKeys(names) {
		res := rec.Results[n]
		if res == nil {
			continue
		}
		if _, ok := res.Value.(*SnapshotRecord); ok {
			continue // its stats are mutated by the references above
		}
		st := sc.Step(n)
		var p schema.Params
		if st != nil && st.Params != nil && st.Kind == res.Kind {
			p = st.Params
		} else if k, ok := schema.Kinds[res.Kind]; ok {
			p = k.New()
		}
		m, ok := p.(schema.Mutator)
		if !ok {
			valueMutants(add, n)
			continue
		}
		for _, mu := range m.Mutants(res.Value) {
			caught := mu.CaughtBy
			if caught != "" {
				if st == nil || st.MayFail || st.ExpectFail {
					caught = ""
				} else {
					caught = fmt.Sprintf("the %s step itself%s", n, strings.TrimPrefix(caught, "the step itself"))
				}
			}
			out = append(out, Mutant{Name: n + ": " + mu.Name, caughtBy: caught, unbuilt: mu.Unbuilt, apply: func(r *Record) {
				x := r.Results[n]
				if x == nil {
					return
				}
				var end time.Time
				if l, ok := x.Value.(*LoadRecord); ok && l != nil {
					end = l.End
				}
				x.Value = mu.Apply(x.Value)
				if l, ok := x.Value.(*LoadRecord); ok && l != nil && mu.Stretch && !end.IsZero() {
					shift(r, n, l.End.Sub(end), false)
				}
			}})
		}
	}
	resultNumeric(add, rec, sc)
	if names["started"] || names["ended"] {
		read := stepsRead(sc)
		for _, s := range rec.Steps {
			if s.Name == "" || s.Sample > 0 || s.Round > 1 || (read != nil && !read[s.Name]) {
				continue
			}
			name := s.Name
			add(fmt.Sprintf("step %s starts 1s late", name), func(r *Record) { shift(r, name, time.Second, true) })
		}
	}
	outcomeMutants(func(m Mutant) { out = append(out, m) }, sc)
	return out
}

// shift moves the end of step name by d, and its start too when whole (the step starts d
// late, with what it holds), with what waits for it to end: the steps after it in its
// sequence, and, where a block ends later because of it, what follows that block. What ran
// beside it does not move: a sibling in a parallel block starts at the block's start plus
// its at, and a background step's successors do not wait for it (its phase or block joins
// it at its end). A step moved alone would end after the steps that follow it began, which
// no run does; one moved with its parallel siblings would hide the order it changed.
func shift(r *Record, name string, d time.Duration, whole bool) {
	var last *StepRecord // the step's last round, whose result the record keeps
	for _, x := range r.Steps {
		if x.Name == name && (last == nil || x.End >= last.End) {
			last = x
		}
	}
	if last == nil {
		return
	}
	within := func(x *StepRecord, p string) bool { return strings.HasPrefix(x.Path, p+".") }
	moves := map[*StepRecord]time.Duration{}
	ends := map[*StepRecord]time.Duration{} // blocks whose end alone moves
	for _, x := range r.Steps {
		if x.Name == name && (whole || x == last) || whole && within(x, last.Path) && x.Start >= last.Start && x.End <= last.End {
			moves[x] = d
		}
	}
	if !whole {
		delete(moves, last)
		ends[last] = d
	}
	// Up from the step, block by block, then its phase: at each level node is what moved
	// (by delta at its end), container what holds it.
	node, delta := last, d
	for delta > 0 && node != nil {
		var container *StepRecord
		for _, x := range r.Steps {
			if x != node && within(node, x.Path) && x.Start <= node.Start && x.End >= node.End &&
				(container == nil || len(x.Path) > len(container.Path)) {
				container = x
			}
		}
		inContainer := func(x *StepRecord) bool {
			if container != nil {
				return within(x, container.Path) && x.Start >= container.Start && x.End <= container.End
			}
			return x.Phase == node.Phase
		}
		containerEnd := time.Duration(0)
		if container != nil {
			containerEnd = container.End
		} else {
			for _, x := range r.Steps {
				if x.Phase == node.Phase {
					containerEnd = max(containerEnd, x.End)
				}
			}
		}
		if node.Background {
			// An await that ended when it had is what waits for it in its sequence.
			var await *StepRecord
			for _, x := range r.Steps {
				if x.Kind == "await" && inContainer(x) && x.Start <= node.End && x.End >= node.End && (await == nil || x.End < await.End) {
					await = x
				}
			}
			if await != nil {
				node, delta = await, max(0, node.End+delta-await.End)
				if delta > 0 {
					ends[await] = delta
				}
				continue
			}
		}
		next := delta // how much later the container ends
		if container != nil && container.Kind == "parallel" || node.Background {
			next = max(0, node.End+delta-containerEnd)
		} else {
			for _, x := range r.Steps {
				if _, moved := moves[x]; !moved && x != node && inContainer(x) && !within(x, node.Path) && x.Start >= node.End {
					moves[x] = delta
				}
			}
		}
		if container == nil {
			// The phases after it start once it has ended.
			for _, x := range r.Steps {
				if _, moved := moves[x]; !moved && next > 0 && x.Phase != node.Phase && x.Start >= containerEnd {
					moves[x] = next
				}
			}
			if next > 0 && !r.End.IsZero() {
				r.End = r.End.Add(next) // the run ends once its last step has
			}
			break
		}
		if next > 0 {
			if _, moved := moves[container]; !moved {
				ends[container] = max(ends[container], next)
			}
		}
		node, delta = container, next
	}
	for x, e := range ends {
		if _, moved := moves[x]; !moved {
			x.End += e
		}
	}
	read := map[string]bool{}
	for x, m := range moves {
		x.Start += m
		x.End += m
		// Late against its plan, as a run records it: a step of a block planned at its
		// block's start plus its at keeps that plan.
		x.Skew += m
		// What it read, it read later (a snapshot's time, a load's run), once per result.
		if x.Name == "" || read[x.Name] {
			continue
		}
		read[x.Name] = true
		if res := r.Results[x.Name]; res != nil {
			switch v := res.Value.(type) {
			case *SnapshotRecord:
				if v != nil {
					v.At = v.At.Add(m)
				}
			case *LoadRecord:
				if v != nil && !v.Start.IsZero() {
					v.Start, v.End = v.Start.Add(m), v.End.Add(m)
				}
			}
		}
	}
}

// outcomeMutants end each step whose outcome.<step> or error.<step> an expectation reads
// otherwise: a step that passed fails (with an error no run wrote), one that did not pass
// passes. A step the run did not record (skipped) is left: its outcome says so.
func outcomeMutants(add func(Mutant), sc *dsl.Scenario) {
	read := map[string]bool{}
	for _, e := range sc.Expect {
		for _, n := range e.Outcomes {
			read[n] = true
		}
	}
	for _, n := range sortedKeys(read) {
		name := n
		add(Mutant{Name: fmt.Sprintf("step %s ended otherwise", name), ended: true, apply: func(r *Record) {
			for _, x := range r.Steps {
				if x.Name != name {
					continue
				}
				if x.Outcome == Passed {
					x.Outcome, x.Error, x.ExpectedError = Failed, "mutant: the step failed", ""
				} else {
					x.Outcome, x.Error, x.ExpectedError = Passed, "", ""
				}
			}
		}})
	}
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// deltaMutants change the counter stat between snapshots a and b.
func deltaMutants(add func(string, func(*Record)), label, a, b, stat string) {
	pair := ""
	if strings.HasPrefix(label, "delta.") {
		pair = fmt.Sprintf(" (%s → %s)", a, b)
	}
	with := func(f func(sa, sb *SnapshotRecord)) func(*Record) {
		return func(r *Record) {
			sa, sb := r.Snapshot(a), r.Snapshot(b)
			if sa != nil && sb != nil {
				f(sa, sb)
			}
		}
	}
	add(label+" = 0"+pair, with(func(sa, sb *SnapshotRecord) {
		if v, ok := sa.Counters[stat]; ok {
			sb.Counters[stat] = v
		} else if _, ok := sb.Counters[stat]; ok {
			sb.Counters[stat] = 0
		}
	}))
	add(label+" doubled"+pair, with(func(sa, sb *SnapshotRecord) {
		if vb, ok := sb.Counters[stat]; ok {
			sb.Counters[stat] = sa.Counters[stat] + 2*(vb-sa.Counters[stat])
		}
	}))
	add(label+" + 1"+pair, with(func(sa, sb *SnapshotRecord) {
		if vb, ok := sb.Counters[stat]; ok {
			sb.Counters[stat] = vb + 1
		}
	}))
	add(label+": the counter reset"+pair, with(func(sa, sb *SnapshotRecord) {
		if vb, ok := sb.Counters[stat]; ok {
			sa.Counters[stat] = vb + 1
		}
	}))
	add(stat+" absent from every snapshot", func(r *Record) {
		for _, s := range r.Snapshots() {
			s.Drop(stat)
		}
		for _, ser := range r.Series() {
			for _, s := range ser.Samples {
				s.Drop(stat)
			}
		}
	})
}

// snapshotMutants change one stat of one snapshot.
func snapshotMutants(add func(string, func(*Record)), snap, stat string) {
	set := func(f func(float64) float64) func(*Record) {
		return func(r *Record) {
			s := r.Snapshot(snap)
			if s == nil {
				return
			}
			for _, m := range []map[string]float64{s.Counters, s.Gauges, s.Histograms} {
				if v, ok := m[stat]; ok {
					m[stat] = f(v)
				}
			}
		}
	}
	label := snap + "." + stat
	add(label+" = 0", set(func(float64) float64 { return 0 }))
	add(label+" doubled", set(func(v float64) float64 { return 2 * v }))
	add(label+" halved", set(half))
	add(label+" - 1", set(func(v float64) float64 { return max(v-1, min(v, 0)) })) // a 0 stays 0
	add(label+" + 1", set(func(v float64) float64 { return v + 1 }))
	add(label+" absent", func(r *Record) {
		if s := r.Snapshot(snap); s != nil {
			s.Drop(stat)
		}
	})
}

// valueMutants remove or change a value whose kind says nothing of its wrong outcomes (a get,
// a config value).
func valueMutants(add func(string, func(*Record)), name string) {
	add(name+": absent", func(r *Record) { delete(r.Results, name) })
	add(name+": every field changed", func(r *Record) {
		if x := r.Results[name]; x != nil {
			x.Value = perturb(x.Value)
		}
	})
	valueNumeric(add, name)
}

// perturb changes every leaf of a JSON-like value: numbers +1, strings suffixed, booleans
// negated.
func perturb(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = perturb(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = perturb(e)
		}
		return out
	case float64:
		return x + 1
	case string:
		if strings.HasSuffix(x, "s") && len(x) > 1 {
			if d, err := time.ParseDuration(x); err == nil {
				return (d + time.Second).String()
			}
		}
		return x + "-changed"
	case bool:
		return !x
	}
	return v
}

// recordContradictions are what rec holds that no run of sc writes (Record.Contradictions and
// OutcomeContradictions' findings), as a set of messages.
func recordContradictions(rec *Record, sc *dsl.Scenario) map[string]bool {
	out := map[string]bool{}
	if nulls := rec.NullEntries(); len(nulls) > 0 {
		out[nullEntriesError(nulls).Error()] = true
		return out
	}
	for _, m := range append(rec.contradictions(), outcomeContradictions(rec, sc, "")...) {
		if strings.Contains(m, localBackendSums) {
			// A delta's or a stat's mutants change the stat an expectation reads, not the
			// local backend's other names of that count (http.downstream_rq_total for
			// rq_total, rq_503 in rq_5xx): a run that records the mutant's value records it
			// under each name, and the expectation reads the one; not an impossible outcome.
			continue
		}
		out[m] = true
	}
	return out
}

// newContradictions are the contradictions of mutant mr, whose base record holds before:
// what the mutation made that no run writes.
func newContradictions(before map[string]bool, mr *Record, sc *dsl.Scenario) []string {
	if len(before) > 0 {
		// The base contradicts itself already (a record built by hand: labrun mutate
		// refuses such a run's record as replay does): its mutants' contradictions, which
		// name their values, cannot be told from its own.
		return nil
	}
	var out []string
	for m := range recordContradictions(mr, sc) {
		if !before[m] {
			out = append(out, m)
		}
	}
	sort.Strings(out)
	return out
}
