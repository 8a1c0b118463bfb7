package dsl

import (
	"fmt"
	"slices"

	"labrun.dev/labrun/schema"
)

// timeline is the shape of a scenario's plan as vet reasons about it: for two steps, whether
// one has always started, or always ended, by the time the other starts, or may run beside
// it. Every read of an expression (expect, assert, until, ${…}) is checked against it: a value
// is read only where it exists.
type timeline struct {
	// order is every step in document order (its index is the step's pre-order number).
	order []*Step
	// parent maps a step to the step that holds it (nil at the top of a phase).
	parent map[*Step]*Step
	// index is each step's place in order.
	index map[*Step]int
}

// indexSteps numbers the steps of order.
func (tl *timeline) indexSteps() {
	tl.index = make(map[*Step]int, len(tl.order))
	for i, s := range tl.order {
		tl.index[s] = i
	}
}

var phaseRank = phaseOrder

// ancestor reports whether a holds s.
func (tl *timeline) ancestor(a, s *Step) bool {
	for p := tl.parent[s]; p != nil; p = tl.parent[p] {
		if p == a {
			return true
		}
	}
	return false
}

// branch returns the child of block p that holds s.
func (tl *timeline) branch(p, s *Step) *Step {
	for c := s; c != nil; c = tl.parent[c] {
		if tl.parent[c] == p {
			return c
		}
	}
	return nil
}

// startedBefore reports whether t has always started by the time s starts.
func (tl *timeline) startedBefore(t, s *Step) bool {
	if tl.ancestor(t, s) {
		return true
	}
	if phaseRank[t.Phase] != phaseRank[s.Phase] {
		return phaseRank[t.Phase] < phaseRank[s.Phase]
	}
	// In different branches of one parallel block, t starts first if its branch's offset is
	// smaller and t leads its branch.
	for p := tl.parent[s]; p != nil; p = tl.parent[p] {
		if p.Kind == "parallel" && tl.ancestor(p, t) {
			bt, bs := tl.branch(p, t), tl.branch(p, s)
			if bt == bs {
				break
			}
			return bt == t && bt.At < bs.At
		}
	}
	return tl.index[t] < tl.index[s]
}

// concurrent reports whether target can have started by the time s starts: it comes earlier
// in document order (and is not still to come in the same sequence), or both sit in different
// branches of one parallel block. It may have ended already: see mayRun.
func (tl *timeline) concurrent(s, target *Step) bool {
	if target.Phase != s.Phase && !(target.Phase == PhaseSetup && s.Phase == PhaseSteps) {
		return false
	}
	// Different branches of a common parallel ancestor run together.
	for p := tl.parent[s]; p != nil; p = tl.parent[p] {
		if p.Kind == "parallel" && tl.ancestor(p, target) {
			return tl.branch(p, s) != tl.branch(p, target)
		}
	}
	return tl.index[target] < tl.index[s] && (target.Background || tl.parent[target] != nil && tl.parent[target].Kind == "parallel")
}

// mayRun reports whether t can be running when s starts, or start while s runs.
func (tl *timeline) mayRun(t, s *Step) bool {
	return t != s && tl.concurrent(s, t) && !tl.endedBefore(t, s)
}

// endedBefore reports whether t has always ended (or been skipped) by the time s starts: t
// comes earlier in a sequence that holds both and nothing between keeps it running (a
// background step or sampler counts as ended once awaited, or at the end of its phase); a
// repeat's own steps have ended when its until is judged.
func (tl *timeline) endedBefore(t, s *Step) bool {
	if t == s || tl.ancestor(t, s) {
		return false
	}
	if tl.ancestor(s, t) {
		_, repeat := s.Params.(*schema.Repeat)
		return repeat
	}
	if phaseRank[t.Phase] != phaseRank[s.Phase] {
		return phaseRank[t.Phase] < phaseRank[s.Phase] // a phase joins its background steps
	}
	if tl.index[t] > tl.index[s] {
		return false
	}
	lca := tl.commonBlock(t, s)
	if lca != nil && lca.Kind == "parallel" {
		return false // different branches run together
	}
	if c := tl.outliving(t, lca); c != nil {
		return tl.awaitedBefore(c, s)
	}
	return true
}

// commonBlock is the lowest block that holds both t and s (nil: the phase).
func (tl *timeline) commonBlock(t, s *Step) *Step {
	for p := tl.parent[s]; p != nil; p = tl.parent[p] {
		if tl.ancestor(p, t) {
			return p
		}
	}
	return nil
}

// outliving is the step, from t up to its branch of block lca, that goes on after the
// sequence moves past it: a background step, or a sampler in a sequence (a parallel block
// joins its samplers). Nil when there is none.
func (tl *timeline) outliving(t, lca *Step) *Step {
	for c := t; c != nil; c = tl.parent[c] {
		if c.Background || (c.Every > 0 && (tl.parent[c] == nil || tl.parent[c].Kind != "parallel")) {
			return c
		}
		if tl.parent[c] == lca {
			break
		}
	}
	return nil
}

// awaitedBefore reports whether an await of background step b has ended by the time s starts.
func (tl *timeline) awaitedBefore(b, s *Step) bool {
	if b.Name == "" {
		return false
	}
	for _, a := range tl.order {
		if slices.Contains(a.Await, b.Name) && a != s && !tl.ancestor(a, s) && tl.endedBefore(a, s) {
			return true
		}
	}
	return false
}

// need is what a read needs of the step it reads.
type need uint8

const (
	// needEnd: the value is recorded when the step ends (a result, ended.<step>, an outcome).
	needEnd need = iota
	// needStart: the value exists once the step has started (started.<step>, a live field).
	needStart
	// needSample: the value exists once a sampling step has taken its first sample, and
	// grows with every sample: whole once the step has ended (a wait may watch it grow).
	needSample
)

// unavailable says why step s cannot read what t gives with need n when it evaluates its
// expression, and where it could read it ("" when it can). polls says s evaluates it again
// until it holds (a wait): it may read a step that runs meanwhile.
func (tl *timeline) unavailable(s, t *Step, n need, polls bool) (why, where string, notStarted bool) {
	switch {
	case t == s:
		return "it is what this step itself records, which does not exist while it runs", "in a later step", false
	case tl.ancestor(t, s):
		if n == needStart {
			return "", "", false
		}
		return fmt.Sprintf("this step runs inside %q", t.Name), fmt.Sprintf("after %q", t.Name), false
	case tl.ancestor(s, t):
		if _, repeat := s.Params.(*schema.Repeat); repeat {
			return "", "", false // a repeat's until reads its own steps after each round
		}
		return "it runs inside this step", "after this step", false
	case tl.endedBefore(t, s):
		return "", "", false
	case n == needStart && tl.startedBefore(t, s):
		return "", "", false
	case polls && (tl.startedBefore(t, s) || tl.concurrent(s, t)):
		return "", "", false // a wait polls until the value is there
	case !tl.startedBefore(t, s):
		return "it has not run when this step starts", fmt.Sprintf("after %q", t.Name), true
	}
	why, where = tl.stillRunning(t, s)
	return why, where, false
}

// stillRunning says why t, started before s, may still run when s starts, and after what it
// has ended.
func (tl *timeline) stillRunning(t, s *Step) (why, where string) {
	lca := tl.commonBlock(t, s)
	if lca != nil && lca.Kind == "parallel" {
		return fmt.Sprintf("it runs beside this step in the parallel block at %s", lca.Path), "after the block"
	}
	if c := tl.outliving(t, lca); c != nil {
		if c.Every > 0 && !c.Background {
			return fmt.Sprintf("it samples while %q runs, beside the steps after it", c.While), fmt.Sprintf("after %q", c.While)
		}
		if c == t {
			return "it runs in the background until awaited", fmt.Sprintf("after {await: %q}", c.Name)
		}
		return fmt.Sprintf("it runs inside the background step %q", c.Name), fmt.Sprintf("after {await: %q}", c.Name)
	}
	return "it may still be running when this step starts", fmt.Sprintf("after %q", t.Name)
}

// Unavailable says why step s (nil: the scenario's expectations, judged at the end) cannot
// read r, what one of its expressions reads, when it evaluates it; "" when it can. Editors
// offer at a point of the plan only the names this accepts.
func (sc *Scenario) Unavailable(s *Step, r Read) string {
	t := sc.names[r.Step]
	if t != nil && t.Phase == PhaseCatch && (s == nil || s.Phase != PhaseCatch) {
		// As vet refuses them (decode's expectations, checkReads): a catch step runs only
		// when the run failed.
		if s == nil {
			return fmt.Sprintf("%q is a catch step, which runs only when the run failed, and the expectations decide whether it runs: they cannot read it", r.Step)
		}
		if r.Via != "outcome" && !r.Ran {
			return fmt.Sprintf("%q is a catch step, which runs only when the run failed: read it only where it ran (has(ended, %q) ? … : …, or outcome.%s != 'skipped' && …)", r.Step, r.Step, r.Step)
		}
	}
	if s == nil || t == nil || sc.timeline == nil {
		return ""
	}
	_, polls := s.Params.(*schema.Wait)
	why, _, _ := sc.timeline.unavailable(s, t, sc.needOf(r), polls)
	return why
}

// needOf is what read r needs of its step: a field's moment, as the step's kind declares it.
func (sc *Scenario) needOf(r Read) need {
	switch r.Via {
	case "started":
		return needStart
	case "ended", "outcome", "error":
		return needEnd
	}
	res := sc.ExprNames.Results[r.Step]
	if res == nil {
		return needEnd
	}
	if f := res.Type.Field(r.Field); f != nil {
		switch f.When {
		case schema.Live:
			return needStart
		case schema.PerSample:
			return needSample
		}
		return needEnd
	}
	if res.Sampled {
		return needSample
	}
	return needEnd
}
