package interp

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"time"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/schema"
)

// planContradictions say where a step's record holds what its step, as the scenario declares
// it, never lets a run record, one a finding, each begun with lead after the step's name:
//   - an expected error (the step failed as its expectFail expected) that the expectFail's
//     pattern does not match: the runner keeps such an error as the step's error, and the
//     step does not pass (interp.run.expectedFailure);
//   - an expected error on a step that has no expectFail;
//   - a step that passed (not as an expectFail expected) and lasted longer than its timeout
//     (with timeSlack): its timeout ends it, and it times out;
//   - a step of an exact duration (a sleep) that passed and lasted less than it (with
//     timeSlack): it ends only once its duration has passed (exactContradiction);
//   - a step with at: planned elsewhere than at that offset from the start of its parallel
//     block's execution (atContradiction).
func planContradictions(rec *Record, steps map[string]*dsl.Step, lead string) []string {
	var msgs []string
	for _, sr := range rec.Steps {
		s := steps[sr.Path]
		if s == nil || s.Kind != sr.Kind {
			continue // ChangedStep says so
		}
		for _, c := range []string{expectedErrorContradiction(sr, s), timeoutContradiction(sr, s), exactContradiction(sr, s), atContradiction(rec, sr, s)} {
			if c != "" {
				msgs = append(msgs, fmt.Sprintf("step %s: %s%s", shownStep(sr), lead, c))
			}
		}
	}
	return append(msgs, tickContradictions(rec, steps, lead)...)
}

// tickContradictions say where a sampler's samples are not at its ticks: a sampler plans its
// sample n at its first tick plus (n-1) every (a tick whose time passed while the sample
// before it ran is skipped, its number with it), and, when the step it samples during has
// ended, takes a last one after the one before it ended. Before, a series given samples
// between its ticks (their records and their snapshots copied, at half its every) replayed
// PASSED with a count the run never took (g.count >= 20 over a load of 1 s sampled every 100
// ms). Each execution of the sampler (its samples counted from 1, in each round of a repeat)
// is compared alone; one without its sample 1 is not.
func tickContradictions(rec *Record, steps map[string]*dsl.Step, lead string) []string {
	var msgs []string
	runs := map[string][][]*StepRecord{}
	var order []string
	for _, sr := range rec.Steps {
		if sr.Sample == 0 {
			continue
		}
		rs := runs[sr.Path]
		if len(rs) == 0 {
			order = append(order, sr.Path)
		}
		if n := len(rs); n == 0 || sr.Sample <= rs[n-1][len(rs[n-1])-1].Sample || sr.Round != rs[n-1][0].Round {
			rs = append(rs, nil)
		}
		rs[len(rs)-1] = append(rs[len(rs)-1], sr)
		runs[sr.Path] = rs
	}
	for _, path := range order {
		s := steps[path]
		if s == nil || s.Every <= 0 {
			continue
		}
		for _, run := range runs[path] {
			if run[0].Sample != 1 {
				continue
			}
			first := run[0].Planned
			for i, sr := range run {
				tick := first + time.Duration(sr.Sample-1)*s.Every
				if d := sr.Planned - tick; d >= -time.Microsecond && d <= time.Microsecond {
					continue
				}
				if i == len(run)-1 && i > 0 && sr.Sample == run[i-1].Sample+1 && sr.Planned >= run[i-1].End-time.Millisecond {
					continue // the last sample, once the step it samples during ended
				}
				at := func(d time.Duration) string { return dsl.WithUnit(float64(d)/float64(time.Millisecond), "ms") }
				msgs = append(msgs, fmt.Sprintf("step %s: %sit is planned at %s, but its sampler plans sample %d at %s (its sample 1 at %s, then every %s)", shownStep(sr), lead, at(sr.Planned), sr.Sample, at(tick), at(first), s.Every))
				break
			}
		}
	}
	return msgs
}

// sequenceOrderContradictions say where two steps one after the other in a sequence (a phase,
// a sequence block, a repeat's steps) are recorded out of that order: a step starts once the
// step before it ended (once it started, for one in the background or sampling), so a record
// where it started before (with 1ms of slack) was edited; and it is planned when the step
// before it ended (not in the background nor sampling), so a record where it was planned later
// (with timeSlack) was edited too. Before, a reader's times swapped
// with those of the step that wrote what it read (started.r < 0.1 made true) replayed PASSED.
// Two steps are compared run by run: each run once, or once in each round of a repeat
// (StepRecord.Round); others (a record made before rounds were numbered) are not.
func sequenceOrderContradictions(rec *Record, sc *dsl.Scenario, lead string) []string {
	byPath := map[string][]*StepRecord{}
	// A sampler's executions are its samples (Sample from 1): in its sequence it stands by
	// its first of each round, which it takes once the sequence has started it. Before, a
	// sampler had no record here, and the step after it was held to nothing: a wait that
	// timed out, its plan and start moved 0.8 s later to where its until held, replayed PASSED.
	firstSample := map[string]map[int]*StepRecord{}
	for _, sr := range rec.Steps {
		if sr.Sample == 0 {
			byPath[sr.Path] = append(byPath[sr.Path], sr)
			continue
		}
		if firstSample[sr.Path] == nil {
			firstSample[sr.Path] = map[int]*StepRecord{}
		}
		if f := firstSample[sr.Path][sr.Round]; f == nil || sr.Start < f.Start {
			firstSample[sr.Path][sr.Round] = sr
		}
	}
	for path, rounds := range firstSample {
		if len(byPath[path]) > 0 {
			continue // also recorded unsampled (skipped): those stand for it
		}
		for _, round := range slices.Sorted(maps.Keys(rounds)) {
			byPath[path] = append(byPath[path], rounds[round])
		}
	}
	named := map[string]string{} // path by name
	for _, ph := range sc.Phases() {
		dsl.Walk(ph.Steps, func(s *dsl.Step) {
			if s.Name != "" {
				named[s.Name] = s.Path
			}
		})
	}
	var msgs []string
	var walk func(list []*dsl.Step, seq bool)
	walk = func(list []*dsl.Step, seq bool) {
		for i, s := range list {
			if seq && i > 0 {
				nexts := byPath[s.Path]
				if s.Every > 0 {
					nexts = nil // its first sample waits for its while step: not held here
				}
				if c := orderContradiction(list[i-1], s, byPath[list[i-1].Path], nexts, lead); c != "" {
					msgs = append(msgs, c)
				}
			}
			for _, n := range s.Await {
				if c := joinContradiction(byPath[s.Path], byPath[named[n]], lead); c != "" {
					msgs = append(msgs, c)
				}
			}
			switch s.Kind {
			case "parallel":
				walk(s.Children, false)
			case "sequence", "repeat":
				walk(s.Children, true)
			}
			if s.Kind == "repeat" {
				msgs = append(msgs, roundJoinContradictions(s, byPath, lead)...)
				msgs = append(msgs, nextRoundContradictions(s, byPath, lead)...)
			}
		}
	}
	for _, ph := range sc.Phases() {
		walk(ph.Steps, true)
	}
	return msgs
}

// orderContradiction says how the runs of next (records nexts) started before the runs of
// prev (prevs) that come before them in their sequence had ended (started, prev in the
// background or sampling); "" when none did or they cannot be paired (see
// sequenceOrderContradictions).
func orderContradiction(prev, next *dsl.Step, prevs, nexts []*StepRecord, lead string) string {
	ps, ns := byRound(prevs), byRound(nexts)
	for _, round := range slices.Sorted(maps.Keys(ns)) {
		n, p := ns[round], ps[round]
		if p == nil || n.Outcome == Skipped && n.Start == n.End {
			continue
		}
		after, what, slack := p.End, "ended", time.Millisecond
		switch {
		case prev.Every > 0:
			// A sampler takes its start in its own goroutine once its while step has started,
			// which the sequence does not wait for: it may come after the next step started.
			after, what, slack = p.Start, "started", timeSlack(0)
		case prev.Background:
			// The sequence starts the next step once a background one has started (de95c36):
			// the two are in order to the clock's reading, whenever the background step's
			// goroutine ran (TestBackgroundStartOrderWithoutSlack).
			after, what = p.Start, "started"
		}
		if n.Start < after-slack {
			return fmt.Sprintf("step %s: %sit started at %s, before the step before it in its sequence, %s, %s (at %s): a sequence starts a step once the one before it %s", shownStep(n), lead, n.Start, shownStep(p), what, after, what)
		}
		// A sequence plans a step when the one before it has ended (sequence: planned is
		// the clock read once that one's run returned): a step planned later than that was
		// moved, or the end of the one before it. Before, an exec's end moved from 0.6 s
		// to 50 ms after its start (ended.s - started.s < duration('100ms') made true)
		// replayed PASSED, the step after it still planned at 0.6 s.
		if prev.Every == 0 && !prev.Background && n.Planned > p.End+timeSlack(p.End) {
			return fmt.Sprintf("step %s: %sit was planned at %s, but the step before it in its sequence, %s, ended at %s: a sequence plans a step when the one before it ends", shownStep(n), lead, n.Planned, shownStep(p), p.End)
		}
		// After a step in the background, the sequence plans the next once it has started
		// that one (a sampler: once it has started its goroutine, before its first sample):
		// a step planned later than that start was moved. One with at: waits for its offset.
		if (prev.Every > 0 || prev.Background) && (next == nil || next.At == 0) && n.Planned > p.Start+timeSlack(p.Start) {
			return fmt.Sprintf("step %s: %sit was planned at %s, but the step before it in its sequence, %s, which runs in the background, started at %s: a sequence plans the step after a background or sampling step once it has started it", shownStep(n), lead, n.Planned, shownStep(p), p.Start)
		}
	}
	return ""
}

// joinContradiction says how a run of a step an await joins (records joined) ended after the
// run of the await (awaits) of its round had ended: an await ends once the steps it joins
// have, and their end is taken before (on one clock: no slack). Before, a background load's end moved past its await's
// and past the start of the step after it replayed PASSED. "" when none did or they cannot be
// paired (byRound).
func joinContradiction(awaits, joined []*StepRecord, lead string) string {
	as, js := byRound(awaits), byRound(joined)
	for _, round := range slices.Sorted(maps.Keys(as)) {
		a, j := as[round], js[round]
		switch {
		case j == nil || j.Outcome == "":
			continue
		case a.Outcome != Passed && a.Outcome != Failed && a.Outcome != Errored:
			continue // cancelled or timed out, it stopped waiting (run.await)
		}
		if j.End > a.End { // both read on the run's clock, the joined step's end first
			ended, joined := apartSecs(j.End, a.End)
			return fmt.Sprintf("step %s: %sit ended at %s, after the await that joins it, %s, ended (at %s): an await ends once the steps it joins have", shownStep(j), lead, ended, shownStep(a), joined)
		}
	}
	return ""
}

// roundJoinContradictions say where a background step of the repeat s (not a sampler) ended
// after the execution of s whose round started it had ended: a round ends when the background
// steps it started have, before its until is judged, and the repeat ends after its last
// round. Before, a round's background step whose end was moved past the repeat's end and the
// start of the step after it replayed PASSED a claim that it still ran then.
func roundJoinContradictions(s *dsl.Step, byPath map[string][]*StepRecord, lead string) []string {
	var msgs []string
	dsl.Walk(s.Children, func(c *dsl.Step) {
		if !c.Background || c.Every > 0 {
			return
		}
		for _, r := range byPath[s.Path] {
			if r.Outcome == "" || r.Outcome == Skipped {
				continue
			}
			for _, b := range byPath[c.Path] {
				// One cancelled may have been abandoned (dispatchBounded), its end recorded late.
				if b.Outcome != Passed && b.Outcome != Failed || b.Start < r.Start || b.Start > r.End || b.End <= r.End {
					continue
				}
				ended, joined := apartSecs(b.End, r.End)
				msgs = append(msgs, fmt.Sprintf("step %s: %sit ended at %s, after the repeat whose round started it, %s, ended (at %s): a round ends once the background steps it started have", shownStep(b), lead, ended, shownStep(r), joined))
				return
			}
		}
	})
	return msgs
}

// nextRoundContradictions say where a background step of a round of the repeat s (not a
// sampler) that passed or failed ended after the next round's first step started: a round
// ends, and the next starts, once the background steps it started have. Before, a round's
// background step was held to the repeat's end alone (roundJoinContradictions), and its end
// moved past the next round's start replayed PASSED. The steps of a repeat within s number
// the rounds of their own, and are left out; so are records made before rounds were numbered.
func nextRoundContradictions(s *dsl.Step, byPath map[string][]*StepRecord, lead string) []string {
	var msgs []string
	for _, r := range byPath[s.Path] {
		if r.Outcome == "" || r.Outcome == Skipped {
			continue
		}
		first := map[int]*StepRecord{} // the first step of each round of r to start
		var bgs []*StepRecord
		roundSteps(s.Children, func(c *dsl.Step) {
			for _, b := range byPath[c.Path] {
				if b.Round == 0 || b.Start < r.Start || b.Start > r.End || b.Outcome == Skipped && b.Start == b.End {
					continue
				}
				if f := first[b.Round]; f == nil || b.Start < f.Start {
					first[b.Round] = b
				}
				if c.Background && c.Every == 0 && (b.Outcome == Passed || b.Outcome == Failed) {
					bgs = append(bgs, b)
				}
			}
		})
		for _, b := range bgs {
			if next := first[b.Round+1]; next != nil && b.End > next.Start {
				ended, started := apartSecs(b.End, next.Start)
				msgs = append(msgs, fmt.Sprintf("step %s: %sit ended at %s, after step %s of the next round of %s started (at %s): a round ends once the background steps it started have", shownStep(b), lead, ended, shownStep(next), shownStep(r), started))
			}
		}
	}
	return msgs
}

// roundSteps calls fn with each step of steps, a repeat's, and those within them that run in
// its rounds: not the steps of a repeat within them, which run in rounds of their own.
func roundSteps(steps []*dsl.Step, fn func(*dsl.Step)) {
	for _, c := range steps {
		fn(c)
		if c.Kind != "repeat" {
			roundSteps(c.Children, fn)
		}
	}
}

// apartSecs are two different times in seconds (secs), each written in full where 4
// significant digits would show them equal.
func apartSecs(a, b time.Duration) (string, string) {
	if x, y := secs(a), secs(b); x != y {
		return x, y
	}
	return a.String(), b.String()
}

// byRound are the records rs by their round; nil when two are of one round (they cannot be
// paired with another step's).
func byRound(rs []*StepRecord) map[int]*StepRecord {
	m := map[int]*StepRecord{}
	for _, r := range rs {
		if _, dup := m[r.Round]; dup {
			return nil
		}
		m[r.Round] = r
	}
	return m
}

// runTimeoutContradiction says how a step of rec's setup or steps that ended (passed or failed)
// did so after the scenario's timeout, which bounds those phases, had expired: the run cancels
// them then, its steps still running, and errs. The timeout starts after the run's checks and
// before its first step: it expired at the latest at the first step's start plus the timeout.
// "" when none did. Before, a run that erred at its timeout (300ms), its step cancelled, edited
// so that the step passed at 520ms with its output and the run passed, replayed PASSED.
func runTimeoutContradiction(rec *Record, sc *dsl.Scenario, lead string) string {
	if sc.Timeout <= 0 {
		return ""
	}
	first, found := time.Duration(0), false
	for _, sr := range rec.Steps {
		if sr.Phase != dsl.PhaseSetup && sr.Phase != dsl.PhaseSteps {
			continue
		}
		if !found || sr.Start < first {
			first, found = sr.Start, true
		}
	}
	if !found {
		return ""
	}
	deadline := first + sc.Timeout
	for _, sr := range rec.Steps {
		if sr.Phase != dsl.PhaseSetup && sr.Phase != dsl.PhaseSteps || sr.Outcome != Passed && sr.Outcome != Failed {
			continue
		}
		if sr.End > deadline+timeSlack(deadline) {
			return fmt.Sprintf("step %s: %sit %s at %s, but the scenario's timeout (%s) had expired by %s (its first step started at %s), which cancels the setup and steps still running", shownStep(sr), lead, sr.Outcome, sr.End, sc.Timeout, deadline, first)
		}
	}
	return ""
}

// expectedErrorContradiction says how the expected error sr records contradicts the
// expectFail of its step s; "" when it does not.
func expectedErrorContradiction(sr *StepRecord, s *dsl.Step) string {
	if sr.ExpectedError == "" {
		return ""
	}
	switch {
	case !s.ExpectFail:
		return fmt.Sprintf("it passed as an expectFail expected, with the error %q, but the step has no expectFail", clip(sr.ExpectedError))
	case s.ExpectFailRE != nil && !s.ExpectFailRE.MatchString(expectedText(s, sr.ExpectedError)):
		return fmt.Sprintf("it passed as its expectFail expected, with the error %q, which its pattern %q does not match: a step whose error the pattern does not match keeps that error and does not pass", clip(sr.ExpectedError), s.ExpectFailSrc)
	}
	return ""
}

// refusalLine is one object's refusal as an apply's error words it: "apply Kind ns/name
// (source): why".
var refusalLine = regexp.MustCompile(`(?m)^([a-z-]+ [A-Za-z0-9.]+ [^ ()]+) \([^()\n]*\): `)

// expectedText is what the expectFail pattern of step s was matched against of the expected
// error msg a record holds: an apply's refusals without their file and line (as the run
// matched them, expectedMatch), else msg.
func expectedText(s *dsl.Step, msg string) string {
	if _, ok := s.Params.(*schema.Apply); !ok {
		return msg
	}
	return refusalLine.ReplaceAllString(msg, "$1: ")
}

// timeoutContradiction says how sr, which passed, lasted longer than the timeout of its step
// s allows; "" when it did not, or did not pass.
func timeoutContradiction(sr *StepRecord, s *dsl.Step) string {
	if sr.Outcome != Passed || sr.ExpectedError != "" || s.Timeout <= 0 {
		return ""
	}
	if d := sr.End - sr.Start; d > s.Timeout+timeSlack(s.Timeout) {
		return fmt.Sprintf("it passed, but it lasted %s, longer than its timeout of %s, which would have ended it (timeout)", d, s.Timeout)
	}
	return ""
}

// exactContradiction says how sr, an execution of s that passed, lasted less than the exact
// duration its kind plans (a sleep's): it ends once that has passed on the run's clock, the
// clock of the record's offsets. Before, a sleep between a logs step's mark and its read,
// shortened so that the mark (the step before it) could be moved later, past a 503 the
// process wrote, replayed PASSED with that line left out of what the step read. "" when it
// lasted at least that, or its kind's duration is not exact.
func exactContradiction(sr *StepRecord, s *dsl.Step) string {
	if sr.Outcome != Passed || s.Params == nil {
		return ""
	}
	p := s.Params.Plan()
	if !p.Exact || p.Duration <= 0 {
		return ""
	}
	if d := sr.End - sr.Start; d < p.Duration-timeSlack(p.Duration) {
		return fmt.Sprintf("it passed, but it lasted %s, less than the %s it takes", dsl.WithUnit(float64(d)/float64(time.Millisecond), "ms"), p.Duration)
	}
	return ""
}

// atContradiction says how the planned offset sr records contradicts the at of its step s:
// the parallel block plans each child at its start plus the child's at, the start taken as
// the block begins to run, just after its own record's start (interp.run.parallel). The
// block's execution is the last one of its path that started before sr; a planned offset
// from 1ms before that start plus at to timeSlack after it is the plan's. "" when sr agrees,
// or its step has no at, or samples (its ticks plan it), or the block's execution is not
// recorded.
func atContradiction(rec *Record, sr *StepRecord, s *dsl.Step) string {
	if !s.HasAt || s.Every > 0 || sr.Sample > 0 || sr.Outcome == Skipped {
		return "" // a skipped step (a cleanup cut short) was not planned: it did not run
	}
	parent := parentPath(sr.Path)
	var block *StepRecord
	for _, o := range rec.Steps {
		if o == sr {
			break
		}
		if o.Path == parent && o.Start <= sr.Start {
			block = o
		}
	}
	if block == nil {
		return ""
	}
	want := block.Start + s.At
	if sr.Planned < want-time.Millisecond || sr.Planned > want+timeSlack(want) {
		return fmt.Sprintf("it was planned at %s, but its at: %s after the start of its block %s (at %s) plans it at %s", sr.Planned, s.At, stepName(block), block.Start, want)
	}
	return ""
}

// phaseEndContradictions say where the last step of a phase was recorded as ending earlier
// than what follows the phase says it ended (#31): a phase that ends with its last step
// (nothing in the background to join) and without an error ends when that step ends, so the
// first step of a catch or cleanup phase after it is planned then (schedule.go: phase), and
// the steps' clock (StepsStart) starts right after the setup's. Before, the last step of a
// phase, whose end no step after it in its sequence bounds, could have its end moved earlier
// (a duration claim made true, the seal computed again) and replay PASSED. A phase's end
// that every time after it moved with (the class the seal cannot tell) is not seen, nor the
// last phase's (what ends the run, its own cleanup, takes a time of its own).
func phaseEndContradictions(rec *Record, sc *dsl.Scenario, lead string) []string {
	records := func(s *dsl.Step) []*StepRecord {
		var out []*StepRecord
		for _, sr := range rec.Steps {
			if sr.Path == s.Path && sr.Sample == 0 {
				out = append(out, sr)
			}
		}
		return out
	}
	ran := func(sr *StepRecord) bool { return sr != nil && !(sr.Outcome == Skipped && sr.Start == sr.End) }
	// The phases as the run runs them: each catch step is a phase of its own.
	var phases [][]*dsl.Step
	for _, ph := range sc.Phases() {
		if ph.Phase == dsl.PhaseCatch {
			for _, s := range ph.Steps {
				phases = append(phases, []*dsl.Step{s})
			}
			continue
		}
		phases = append(phases, ph.Steps)
	}
	var msgs []string
	if rec.Outcome != Passed {
		return nil // a run stopped (interrupted, an error) may end a phase late
	}
	if rec.Labrun == "" {
		// Made before phases were followed at once (2026-12-07, when records began to keep
		// the build that made them): its steps' clock and its cleanup's first step were
		// read after the observers had been told of the phase's end, which a loaded
		// terminal can make later than 20 ms. Not held to it, so that a genuine older
		// record is never refused as edited.
		return nil
	}
	var prev *StepRecord // the last step's record of the phase run last, when it bounds
	for i, steps := range phases {
		if len(steps) == 0 {
			if i <= 1 {
				prev = nil // the run calls it all the same: it bounds nothing after it
			}
			continue
		}
		first := records(steps[0])
		var f *StepRecord
		if len(first) > 0 {
			f = first[0]
		}
		if !ran(f) {
			continue
		}
		if prev != nil && i > 1 && f.Planned > prev.End+timeSlack(prev.End) {
			msgs = append(msgs, fmt.Sprintf("step %s: %sit was planned at %s, but the step before it, %s, the last of the phase before, ended at %s: a phase that ends with its last step is followed at once", shownStep(f), lead, f.Planned, shownStep(prev), prev.End))
		}
		prev = nil
		last := records(steps[len(steps)-1])
		if len(last) == 0 || phaseJoins(steps) {
			continue
		}
		if l := last[len(last)-1]; l.Outcome == Passed {
			prev = l
		}
		if i == 0 && prev != nil && !rec.StepsStart.IsZero() && len(sc.Steps) > 0 {
			if at := rec.StepsStart.Sub(rec.Start); at > prev.End+timeSlack(prev.End) {
				msgs = append(msgs, fmt.Sprintf("step %s: %sit ended at %s, the last of the setup, but the steps began at %s: the steps begin once the setup has ended", shownStep(prev), lead, prev.End, at))
			}
		}
	}
	return msgs
}
