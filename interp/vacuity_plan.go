package interp

import (
	"math"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/schema"
)

// What the plan guarantees of a passing run, for judging whether an expectation can fail: the
// order of its steps' times and which snapshots a plain delta compares. The model is looser than
// the scheduler (schedule.go), never tighter, so that what it calls guaranteed is:
//   - the phases run one after another, each joining its background steps (setup ends at or
//     before 0, where the steps start);
//   - in a sequence (and a phase's list) a step starts at or after the previous one that is
//     not in the background (nor a sampler) ended; a background step or a sampler starts
//     at or after the step before it ended and may end at any time in its phase;
//   - a block's child starts at or after the block starts and, unless it is in the
//     background, ends at or before it ends; the children of a parallel in no order;
//   - a repeat's steps in no order among themselves (started is a step's first round,
//     ended its last), only inside the repeat;
//   - a step under a block with mayFail or expectFail, or in catch or cleanup, may not have
//     run in a passing run (a failure before it ends its block); any other step of setup
//     or steps has.
//
// Offsets (at:) and awaits are left out: they bound a step's start or a background step's end
// further, and leaving a bound out can only keep an expectation a run could falsify.
type planOrder struct {
	parent map[*dsl.Step]*dsl.Step
	index  map[*dsl.Step]int // place in its parent's children (or its phase's list)
	id     map[*dsl.Step]int // walk order, the seed of a step's drawn durations
	phases [][]*dsl.Step     // setup, steps, catch, cleanup
}

func newPlanOrder(sc *dsl.Scenario) *planOrder {
	p := &planOrder{parent: map[*dsl.Step]*dsl.Step{}, index: map[*dsl.Step]int{}, id: map[*dsl.Step]int{}}
	var walk func(parent *dsl.Step, steps []*dsl.Step)
	walk = func(parent *dsl.Step, steps []*dsl.Step) {
		for i, s := range steps {
			p.parent[s], p.index[s], p.id[s] = parent, i, len(p.id)
			walk(s, s.Children)
		}
	}
	for _, ph := range sc.Phases() {
		p.phases = append(p.phases, ph.Steps)
		walk(nil, ph.Steps)
	}
	return p
}

// detached says s does not hold up the step after it nor its block's end: a background step
// or a sampler (which a sequence runs in the background).
func detached(s *dsl.Step) bool { return s.Background || s.Every > 0 }

var phaseRank = map[dsl.Phase]int{dsl.PhaseSetup: 0, dsl.PhaseSteps: 1, dsl.PhaseCatch: 2, dsl.PhaseCleanup: 3}

// precedes reports whether every run in which a and b both ran has a end at or before b
// starts.
func (p *planOrder) precedes(a, b *dsl.Step) bool {
	if a.Phase != b.Phase {
		return phaseRank[a.Phase] < phaseRank[b.Phase]
	}
	// The blocks around b, and the step below each of them on b's way down.
	below := map[*dsl.Step]*dsl.Step{}
	top := b
	for s := b; p.parent[s] != nil; s = p.parent[s] {
		below[p.parent[s]] = s
		top = p.parent[s]
	}
	// Up from a to the first block that holds b too (none: the phase's list).
	ca := a
	for {
		if detached(ca) {
			return false // a may end after its block, or after the step after it
		}
		up := p.parent[ca]
		if up == nil {
			return ca != top && p.index[ca] < p.index[top]
		}
		if cb, ok := below[up]; ok {
			if up.Kind != "sequence" || p.inRepeat(up) {
				return false
			}
			return p.index[ca] < p.index[cb]
		}
		if up == b {
			return false // a inside b
		}
		ca = up
	}
}

// inRepeat says s is inside a repeat (whose rounds interleave the times of its steps).
func (p *planOrder) inRepeat(s *dsl.Step) bool {
	for s = p.parent[s]; s != nil; s = p.parent[s] {
		if s.Kind == "repeat" {
			return true
		}
	}
	return false
}

// surelyRan says s ran in every passing run: a step of setup or steps under no block that
// may fail (mayFail, expectFail) and not itself one that may fail without recording.
func (p *planOrder) surelyRan(s *dsl.Step) bool {
	if s.Phase != dsl.PhaseSetup && s.Phase != dsl.PhaseSteps {
		return false
	}
	for ; s != nil; s = p.parent[s] {
		if s.MayFail || s.ExpectFail {
			return false
		}
	}
	return true
}

// surelyPassed says s's outcome is passed wherever an expectation judged at at (nil: the end
// of the run) reads it: s is a step of setup or steps under no block that may fail (mayFail,
// expectFail), has no mayFail of its own and is no sampler (which may take no sample), so
// that its failure would stop the run — and the expectations at its end are judged only
// when every step passed; for an assert, wait or repeat, s ends before at starts in the
// plan, so that its failure would have stopped the run before at. A step with expectFail
// (which passes when it fails as expected) is left drawn as any: a bound left out is safe.
func (p *planOrder) surelyPassed(s, at *dsl.Step) bool {
	if s == nil || s.MayFail || s.ExpectFail || s.Every > 0 || s.Phase != dsl.PhaseSetup && s.Phase != dsl.PhaseSteps {
		return false
	}
	for a := p.parent[s]; a != nil; a = p.parent[a] {
		if a.MayFail || a.ExpectFail {
			return false
		}
	}
	if at == nil {
		return true
	}
	return (at.Phase == dsl.PhaseSetup || at.Phase == dsl.PhaseSteps) && p.precedes(s, at)
}

// endedBy says s has ended, or never ran, wherever an assert, wait or repeat at (of setup or
// steps) judges its until or assertion: s precedes at in the plan, or s is one of repeat at's
// own steps (its until is judged after each round) held up by no background block on its way.
func (p *planOrder) endedBy(s, at *dsl.Step) bool {
	if s == nil || at == nil || at.Phase != dsl.PhaseSetup && at.Phase != dsl.PhaseSteps {
		return false
	}
	if p.precedes(s, at) {
		return true
	}
	if at.Kind != "repeat" {
		return false
	}
	for a := s; a != nil; a = p.parent[a] {
		if a == at {
			return true
		}
		if detached(a) {
			return false
		}
	}
	return false
}

// surelyEnded says s started and ended in every passing run by where an expression judged at
// at (nil: the end of the run) is judged: has(started, s) and has(ended, s) hold there.
func (p *planOrder) surelyEnded(s, at *dsl.Step) bool {
	return !p.mayBeSkipped(s) && (at == nil || p.endedBy(s, at))
}

// mayBeSkipped says s may not have run in a passing run: under a block that may fail (its
// own mayFail or expectFail does not stop it starting and ending), or in catch or cleanup.
func (p *planOrder) mayBeSkipped(s *dsl.Step) bool {
	if s.Phase != dsl.PhaseSetup && s.Phase != dsl.PhaseSteps {
		return true
	}
	for s = p.parent[s]; s != nil; s = p.parent[s] {
		if s.MayFail || s.ExpectFail {
			return true
		}
	}
	return false
}

// defaultPair is the pair of snapshots a plain delta compares in every passing run in which
// the expression (judged at the end, or by the assert step at) is judged: the first and the
// last declared, when both surely ran by then and every other snapshot comes between them.
// ok is false when the plan does not say (the runner takes the first and last taken).
func (p *planOrder) defaultPair(sc *dsl.Scenario, at *dsl.Step) (from, to string, ok bool) {
	if sc.ExprNames == nil || sc.ExprNames.DeltaErr != "" || len(sc.Snapshots) < 2 {
		return "", "", false
	}
	first, last := sc.Snapshots[0], sc.Snapshots[len(sc.Snapshots)-1]
	if !p.surelyTaken(first, at) || !p.surelyTaken(last, at) {
		return "", "", false
	}
	for _, s := range sc.Snapshots[1 : len(sc.Snapshots)-1] {
		if !p.precedes(first, s) || !p.precedes(s, last) {
			return "", "", false
		}
	}
	if !p.precedes(first, last) {
		return "", "", false
	}
	return first.Name, last.Name, true
}

// surelyTaken says snapshot s surely ran before an expression judged by the assert step at
// (nil: at the end) is judged.
func (p *planOrder) surelyTaken(s, at *dsl.Step) bool {
	return s != nil && s.Every == 0 && p.surelyRan(s) && (at == nil || p.precedes(s, at))
}

// timeline draws the start and end of steps as a passing run could record them, in the
// order the plan guarantees and in no other: each gap and duration the plan leaves open is
// one of the sampler's reals, chosen by the sample, the step and what is drawn.
type timeline struct {
	p       *planOrder
	reals   []float64
	sample  uint64
	read    map[*dsl.Step]bool // the steps timed and the blocks around them
	timed   map[*dsl.Step]bool
	started map[string]float64
	ended   map[string]float64
	end     float64 // the latest end drawn in the phase
}

// timesOf draws the times of steps (the steps an expression times) for the i-th sample.
func (p *planOrder) timesOf(steps []*dsl.Step, reals []float64, i int) (started, ended map[string]float64) {
	tl := &timeline{p: p, reals: reals, sample: uint64(i), read: map[*dsl.Step]bool{}, timed: map[*dsl.Step]bool{},
		started: map[string]float64{}, ended: map[string]float64{}}
	for _, s := range steps {
		tl.timed[s] = true
		for ; s != nil; s = p.parent[s] {
			tl.read[s] = true
		}
	}
	origin := 0.0
	for k, ph := range p.phases {
		if !slicesHasRead(ph, tl.read) {
			continue
		}
		tl.end = math.Inf(-1)
		tl.block(ph, origin+tl.pick(nil, k), true)
		if k == 0 {
			// Setup ends, its background steps joined, at or before the steps start.
			shift := -(tl.end + tl.pick(nil, 7))
			for _, s := range steps {
				if s.Phase == dsl.PhaseSetup {
					tl.started[s.Name] += shift
					tl.ended[s.Name] += shift
				}
			}
			continue
		}
		origin = tl.end + tl.pick(nil, 8+k)
	}
	for _, s := range steps {
		// A step that may not have run in a passing run is missing from some samples.
		if p.mayBeSkipped(s) && tl.pick(s, 5) == reals[0] {
			delete(tl.started, s.Name)
			delete(tl.ended, s.Name)
		}
	}
	return tl.started, tl.ended
}

func slicesHasRead(steps []*dsl.Step, read map[*dsl.Step]bool) bool {
	for _, s := range steps {
		if read[s] {
			return true
		}
	}
	return false
}

// pick is the gap or duration what (0..9) of step s in this sample.
func (tl *timeline) pick(s *dsl.Step, what int) float64 {
	id := -1
	if s != nil {
		id = tl.p.id[s]
	}
	x := tl.sample*0x9E3779B97F4A7C15 + uint64(id+1)*0xBF58476D1CE4E5B9 + uint64(what)*0x94D049BB133111EB
	x ^= x >> 31
	x *= 0xD6E8FEB86659FD93
	x ^= x >> 32
	return tl.reals[x%uint64(len(tl.reals))]
}

// block runs steps from start, in order when ordered, and returns when they are done: the
// end of the last that holds the block up (start when none does). Steps no expression times
// are left out: they only widen gaps, and a gap is drawn anyway.
func (tl *timeline) block(steps []*dsl.Step, start float64, ordered bool) float64 {
	t, done := start, start
	for _, c := range steps {
		if !tl.read[c] {
			continue
		}
		from := start
		if ordered {
			from = t
		}
		end := tl.step(c, from+tl.pick(c, 0))
		if detached(c) {
			continue
		}
		done = math.Max(done, end)
		if ordered {
			t = end
		}
	}
	if ordered {
		return t
	}
	return done
}

// step runs s from start and returns its end.
func (tl *timeline) step(s *dsl.Step, start float64) float64 {
	var end float64
	switch s.Kind {
	case "parallel":
		end = tl.block(s.Children, start, false)
	case "sequence":
		end = tl.block(s.Children, start, !tl.p.inRepeat(s))
	case "repeat":
		end = tl.block(s.Children, start, false)
	default:
		end = start
	}
	end += tl.pick(s, 1)
	tl.end = math.Max(tl.end, end)
	if tl.timed[s] {
		tl.started[s.Name], tl.ended[s.Name] = start, end
	}
	return end
}

// deltaPairs are the snapshots each delta of stats compares in every passing run, by its
// place in stats: a pair written (delta("a", "b")) when both surely were taken, a plain
// delta when the plan says which pair it is (defaultPair). A delta missing here is drawn
// apart from the snapshots.
func deltaPairs(sc *dsl.Scenario, p *planOrder, at *dsl.Step, stats []dsl.Ref) map[int][2]string {
	pairs := map[int][2]string{}
	for k, r := range stats {
		switch r.Kind {
		case dsl.RefDelta:
			if from, to, ok := p.defaultPair(sc, at); ok {
				pairs[k] = [2]string{from, to}
			}
		case dsl.RefDeltaPair:
			if p.surelyTaken(sc.Step(r.From), at) && p.surelyTaken(sc.Step(r.To), at) {
				pairs[k] = [2]string{r.From, r.To}
			}
		}
	}
	// A delta read with nothing it follows from or bears on (no snapshot of its pair, no other
	// delta of the stat) keeps its own draws.
	reads := map[string]map[dsl.Ref]bool{} // stat → deltas with a pair and snapshots of their pairs read
	for k, pr := range pairs {
		stat := stats[k].Stat
		if reads[stat] == nil {
			reads[stat] = map[dsl.Ref]bool{}
		}
		reads[stat][stats[k]] = true
		for _, r := range stats {
			if r.Kind == dsl.RefSnapshot && r.Stat == stat && (r.Name == pr[0] || r.Name == pr[1]) {
				reads[stat][r] = true
			}
		}
	}
	for k := range pairs {
		if len(reads[stats[k].Stat]) < 2 {
			delete(pairs, k)
		}
	}
	return pairs
}

// statsSample are the values of stats in the i-th sample: each drawn as loadSampler.stat
// draws it, but a delta whose pair is known is what the judge computes of the two snapshots
// (Delta): the later one is the earlier plus the delta drawn, and a snapshot read beside it
// is that value. So after.x - before.x == delta.x holds of every sample, as of every run.
func statsSample(ls *loadSampler, i int, stats []dsl.Ref, pairs map[int][2]string, allow map[string]bool) []float64 {
	vals := make([]float64, len(stats))
	for k, r := range stats {
		vals[k] = ls.stat(i, k)
		if schema.OnOff(r.Stat) {
			vals[k] = min(vals[k], 1) // a circuit breaker's open gauge: 0 or 1, nothing else
		}
	}
	if len(pairs) == 0 {
		return vals
	}
	nodes := map[string]map[string]float64{} // stat → snapshot → its value
	for k, r := range stats {
		pr, ok := pairs[k]
		if !ok {
			continue
		}
		at := nodes[r.Stat]
		if at == nil {
			at = map[string]float64{}
			nodes[r.Stat] = at
		}
		a, b, d := pr[0], pr[1], vals[k]
		if allow[r.Stat] && ls.resetTurn(i, k) {
			d = -d // a reset between the two snapshots: the later one lower (Delta counts it from 0)
		}
		va, okA := at[a]
		vb, okB := at[b]
		switch {
		case okA && okB: // both set by another delta: this one follows from them
		case okA:
			at[b] = counterAfter(va, d)
		case okB:
			at[a] = counterBefore(vb, d)
		default:
			base := ls.stat(i, len(stats)+k)
			for k2, r2 := range stats {
				if r2.Kind == dsl.RefSnapshot && r2.Name == a && r2.Stat == r.Stat {
					base = vals[k2]
					break
				}
			}
			at[a] = base
			if a != b {
				at[b] = counterAfter(base, d)
			}
		}
	}
	for k, r := range stats {
		at := nodes[r.Stat]
		if pr, ok := pairs[k]; ok {
			va, vb := at[pr[0]], at[pr[1]]
			vals[k] = vb - va
			if vb < va && allow[r.Stat] {
				vals[k] = vb // a reset, as Delta counts it
			}
			continue
		}
		if v, ok := at[r.Name]; ok && r.Kind == dsl.RefSnapshot {
			vals[k] = v
		}
	}
	return vals
}

// counterAfter is a counter's value d after it was a: a + d, or, for a negative d (a reset
// allowReset allows), a value below a when a leaves room for one.
func counterAfter(a, d float64) float64 {
	if d >= 0 || a < 1 {
		return a + math.Abs(d)
	}
	return math.Min(-d, a) - 1
}

// counterBefore is a counter's value d before it is b: b - d (0 if d is more than b), or, for
// a negative d (a reset), a value above b.
func counterBefore(b, d float64) float64 {
	if d >= 0 {
		return math.Max(b-d, 0)
	}
	return b - d
}
