package interp

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/schema"
)

// An assert step judged its expression during the run, over what had been recorded when it
// started. When everything the expression reads had been recorded by then and did not
// change after (the results of steps that had ended; vars; the target's names), the record
// still holds exactly what the assert saw, and its verdict can be had again: a record whose
// assert says passed where its expression is false over those data, or failed where it is
// true, was changed after the run. An assert whose expression reads now(), a step that ran
// while it ran or ran again after it (a result overwritten, a series that grew), is left as
// recorded: its value cannot be had again exactly as the run had it.

// staticNames are the names of the judge's environment that no step records.
var staticNames = map[string]bool{
	"vars": true, "approx": true, "within": true, "has": true, "quantity": true, "backends": true,
	"blackholes": true, "target": true, "ns": true, dsl.EnvoyFunc: true, dsl.EnvoyCmpFunc: true, dsl.EnvoyJSONFunc: true, schema.OnlyIfFunc: true, schema.SetFunc: true, schema.GroupFunc: true, schema.CodeFunc: true, schema.CodeInFunc: true, schema.CodeGetFunc: true, schema.LatencyFunc: true,
}

// OutcomeContradictions says how the outcomes of rec's steps contradict what the record holds
// and sc's steps at their paths say they follow from; nil when none does. Each assert and wait
// until whose value the record determines (see above) is judged again with sc's expression,
// each repeat's until as at its last round's end (repeatUntil), each get's and config's until
// over the value it read last (readUntil), and each exec's outcome is set against the exit
// code it records and the step's exitCode (execContradiction); each load whose step fixes its
// requests must record that many (loadCountContradictions); and each step's record must be
// what its step, as sc declares it, lets a run record (planContradictions: an expected error
// its expectFail's pattern matches).
func OutcomeContradictions(rec *Record, sc *dsl.Scenario) error {
	msgs := outcomeContradictions(rec, sc, "its record contradicts itself: ")
	if len(msgs) == 0 {
		return nil
	}
	return fmt.Errorf("%s; the record was changed after the run or is corrupt", strings.Join(msgs, "; "))
}

// ScenarioDisagreements is OutcomeContradictions for a scenario that is not the source the
// run had (replay --file, a file edited since): what it finds is where the record and that
// scenario disagree, which a change of the scenario explains as well as an edit of the
// record. file is where the scenario was read.
func ScenarioDisagreements(rec *Record, sc *dsl.Scenario, file string) error {
	msgs := outcomeContradictions(rec, sc, "")
	if len(msgs) == 0 {
		return nil
	}
	return fmt.Errorf("the record and the scenario in %s disagree (that file is not the source the run had): %s; the scenario changed since the run (run it again), or the record was edited", file, strings.Join(msgs, "; "))
}

// outcomeContradictions are OutcomeContradictions' findings, one a step; lead begins what
// a step's record says against its step (an exec's exit, an expected error, a time).
func outcomeContradictions(rec *Record, sc *dsl.Scenario, lead string) []string {
	steps := map[string]*dsl.Step{}
	for _, ph := range sc.Phases() {
		dsl.Walk(ph.Steps, func(s *dsl.Step) { steps[s.Path] = s })
	}
	msgs := loadCountContradictions(rec, sc)
	msgs = append(msgs, targetValueContradictions(rec, sc)...)
	msgs = append(msgs, planContradictions(rec, steps, lead)...)
	msgs = append(msgs, sequenceOrderContradictions(rec, sc, lead)...)
	msgs = append(msgs, phaseEndContradictions(rec, sc, lead)...)
	if c := runTimeoutContradiction(rec, sc, lead); c != "" {
		msgs = append(msgs, c)
	}
	for _, sr := range rec.Steps {
		s := steps[sr.Path]
		if s != nil && s.Kind == sr.Kind && !s.MayFail && slices.Contains(sr.Warnings, MayFailWarning) {
			// A run writes the warning only of a step whose own mayFail let it fail. Before,
			// a failed step given the warning (the run's outcome and error edited to a pass)
			// replayed PASSED: the verdict takes the warning as the step's mayFail.
			msgs = append(msgs, fmt.Sprintf("step %s: %sit records the warning %q, but the step has no mayFail", shownStep(sr), lead, MayFailWarning))
		}
		if sr.Kind == "exec" && s != nil && s.Kind == "exec" {
			if c := execContradiction(rec, sr, s); c != "" {
				msgs = append(msgs, fmt.Sprintf("step %s: %s%s", shownStep(sr), lead, c))
			}
			continue
		}
		if sr.Kind == "logs" && s != nil && s.Kind == "logs" {
			if c := logsCaptureContradiction(rec, sr, s); c != "" {
				msgs = append(msgs, fmt.Sprintf("step %s: %s%s", shownStep(sr), lead, c))
			}
			continue
		}
		if s == nil || s.Kind != sr.Kind || s.Expr == nil {
			continue
		}
		var (
			held, ok bool
			jd       *Judgement
			what     = "assert"
			over     = "from before it ran"
		)
		switch sr.Kind {
		case "assert", "wait":
			if held, ok = recordedHeld(sr, s); ok {
				jd, ok = judgeAsAt(rec, sc, s.Expr, sr)
				if !ok && held && sr.Kind == "wait" {
					jd, ok = waitOverSeries(rec, sc, s.Expr, sr)
					over = "at any moment while it waited (each series and step as recorded by then)"
				}
			}
			if sr.Kind == "wait" {
				what = "wait until"
			}
		case "repeat":
			held, jd, ok = repeatUntil(rec, sc, sr, s)
			what, over = "repeat until", "at its last round's end"
		case "get", "config":
			held, jd, ok = readUntil(rec, sc, sr, s)
			what, over = sr.Kind+" until", "from its last read"
		}
		if !ok {
			continue
		}
		why := jd.Explanation
		if jd.Reason != "" {
			why = jd.Reason
		}
		if jd.Outcome == Errored && sr.ExpectedError != "" && s.ExpectFail && s.ExpectFailRE == nil {
			// An expression with no answer tested nothing: a bare expectFail: true keeps
			// its error, the run errs (schema.NotJudged). Before, such a run's error edited
			// into "failed as expected" replayed PASSED: false and no answer both read as
			// "did not hold".
			msgs = append(msgs, fmt.Sprintf("step %s: its %s %q says it failed as its expectFail: true expected, but over the data the record holds %s the expression has no answer (%s), which expectFail: true does not take for a failure: the step keeps that error", shownStep(sr), what, s.Expr.Src, over, why))
			continue
		}
		now := jd.Outcome == Passed
		if now == held {
			continue
		}
		says := "failed"
		if held {
			says = "passed"
		}
		word := "false"
		switch {
		case jd.Outcome == Passed:
			word = "true"
		case jd.Outcome == Errored:
			word = "an error"
		}
		msgs = append(msgs, fmt.Sprintf("step %s: its %s %q says %s, but over the data the record holds %s the expression is %s: %s", shownStep(sr), what, s.Expr.Src, says, over, word, why))
	}
	return msgs
}

// repeatUntil judges again the until of sr, an execution of the repeat s, as the run judged it
// last: after its last round's steps had ended, before it ended. held is what its record says
// of that judgement: a repeat that passed saw it hold; one that failed with none of its steps
// stopping it (each passed, or its mayFail let it go) ran its rounds to its max, the until
// false to the end. ok is false when the record says neither, or the value cannot be had
// again (judgeWithin).
func repeatUntil(rec *Record, sc *dsl.Scenario, sr *StepRecord, s *dsl.Step) (held bool, jd *Judgement, ok bool) {
	if s.ExpectFail || sr.Outcome != Passed && sr.Outcome != Failed {
		return false, nil, false
	}
	at := slices.Index(rec.Steps, sr)
	last, from, stopped := -1, sr.Start, false
	for i := at + 1; i < len(rec.Steps); i++ {
		c := rec.Steps[i]
		if c.Path == sr.Path {
			break // its next execution (in an enclosing repeat's next round)
		}
		if !strings.HasPrefix(c.Path, sr.Path+".") {
			continue
		}
		if c.Outcome == "" {
			return false, nil, false
		}
		if c.Outcome != Passed && !slices.Contains(c.Warnings, MayFailWarning) {
			stopped = true
		}
		last, from = i, max(from, c.End)
	}
	if last < 0 || sr.Outcome == Failed && stopped {
		return false, nil, false
	}
	jd, ok = judgeWithin(rec, sc, s.Expr, at, last, from, sr.End, "")
	return sr.Outcome == Passed, jd, ok
}

// readUntil judges again the until of sr, an execution of the get or config s, over the value
// the record holds under its name, as the run judged it right after its last read recorded
// that value. The step's Run ended without an error exactly when the until held over what it
// had just recorded: held is true for a step that passed (with expectFail, one that failed as
// "the step succeeded"), false for one that failed, erred or timed out otherwise (its last
// value judged false, or without an answer). A config with reflects may have stopped at the
// mark before judging its until: only its passing says what the until was. ok is false when
// the record says neither (cancelled, interrupted), when the value under its name may be
// another execution's (ownResult: an execution that did not pass may have recorded nothing),
// or when the value cannot be had again (judgeWithin).
func readUntil(rec *Record, sc *dsl.Scenario, sr *StepRecord, s *dsl.Step) (held bool, jd *Judgement, ok bool) {
	switch sr.Outcome {
	case Passed, Failed, Errored, TimedOut:
	default:
		return false, nil, false
	}
	held = sr.Outcome == Passed && sr.ExpectedError == "" ||
		sr.Outcome == Failed && s.ExpectFail && strings.HasPrefix(sr.Error, expectFailSucceeded)
	if c, isConfig := s.Params.(*schema.Config); isConfig && c.Reflects != nil && !held {
		return false, nil, false
	}
	r, ok := ownResult(rec, sr, held)
	if !ok || r.Sampled {
		return false, nil, false
	}
	at := slices.Index(rec.Steps, sr)
	jd, ok = judgeWithin(rec, sc, s.Expr, at, at, sr.Start, sr.End, sr.Name)
	return held, jd, ok
}

// waitOverSeries judges again the until of at, a wait that passed, whose until reads what
// changed while it waited (which judgeAsAt cannot have again): sampled series that grew, and
// steps that ended while it polled. A wait passes when its until holds over what had been
// recorded at one of its polls: each series then a prefix of the one the record holds (its
// samples taken by then), each step read recorded if it had ended by then. The until is judged
// over every such state, at the wait's start and at each moment within it that one of those
// changed (a step ended, a sample was taken), each series cut to each prefix it may have had
// by then; ok is true (and jd the judgement over the last state) only when it holds in none:
// no poll of the wait saw it hold, the record's "passed" was not the run's. Before, a wait
// until that timed out (its until false over every sample, or over the output of the job it
// waited for) edited to passed - the step, its mayFail warning and error, the expectations
// reading its outcome - replayed and merged PASSED, exit 0. ok is false when the until reads
// what the record does not hold as it was at each moment: a step that ran more than once, or
// ran across the wait without a single run, a step's outcome, error, start or end, a delta,
// now().
func waitOverSeries(rec *Record, sc *dsl.Scenario, e *dsl.Expr, at *StepRecord) (*Judgement, bool) {
	if e.Now || e.Program == nil || rec.Start.IsZero() {
		return nil, false
	}
	series := map[string]*SeriesRecord{}
	ended := map[string]time.Duration{} // the steps read, each when it ended
	started := map[string]time.Duration{}
	changed := false
	for _, id := range e.Names {
		if staticNames[id] {
			continue
		}
		switch id {
		case "delta", dsl.DeltaFunc, dsl.HostsFunc, "outcome", "error", "started", "ended":
			return nil, false
		}
		if r := rec.Results[id]; r != nil && r.Sampled {
			ser, ok := r.Value.(*SeriesRecord)
			if !ok || ser == nil {
				return nil, false
			}
			series[id] = ser
			changed = true
			continue
		}
		runs := 0
		for _, s := range rec.Steps {
			if s.Name != id || s == at {
				continue
			}
			runs++
			if s.Outcome == "" || runs > 1 && s.End > at.Start {
				return nil, false // running at the record's end, or run again
			}
			ended[id], started[id] = s.End, s.Start
			if s.End > at.Start {
				changed = true
			}
		}
		if runs > 1 && ended[id] > at.Start {
			return nil, false
		}
		if runs == 0 && rec.Results[id] != nil {
			return nil, false // a result with no step record to say when it was made
		}
	}
	if !changed {
		return nil, false
	}
	// The moments the state changed while the wait polled.
	moments := []time.Duration{at.Start, at.End}
	for _, t := range ended {
		if t > at.Start && t <= at.End {
			moments = append(moments, t)
		}
	}
	for _, ser := range series {
		for _, sn := range ser.Samples {
			if sn == nil || sn.At.IsZero() {
				return nil, false
			}
			if t := sn.At.Sub(rec.Start); t > at.Start && t <= at.End+timeSlack(at.End) {
				moments = append(moments, t)
			}
		}
	}
	slices.Sort(moments)
	moments = slices.Compact(moments)
	var jd *Judgement
	for _, t := range moments {
		seen := *rec
		seen.Notes = nil
		seen.Steps = nil
		for _, s := range rec.Steps {
			if s != at && s.Sample == 0 && s.Outcome != "" && s.End <= t {
				seen.Steps = append(seen.Steps, s)
			}
		}
		// The samples each series had taken by t: the longest prefix a poll then saw.
		taken := map[string]int{}
		most := 0
		for n, ser := range series {
			for _, sn := range ser.Samples {
				if sn.At.Sub(rec.Start) <= t+timeSlack(t) {
					taken[n]++
				}
			}
			most = max(most, taken[n])
		}
		// Each series grows by its own samples: the prefixes tried take k samples of each
		// (fewer when it had fewer by then).
		for k := 0; k <= most; k++ {
			seen.Results = map[string]*Result{}
			for n, r := range rec.Results {
				_, isSeries := series[n]
				if !isSeries {
					// A step records its result before its end is taken: at the wait's end,
					// one that had started may have been seen.
					if end, read := ended[n]; !read || end <= t || t == at.End && started[n] <= at.End {
						seen.Results[n] = r
					}
					continue
				}
				seen.Results[n] = seenAt(rec, r, t, min(k, taken[n]))
			}
			j := NewJudge(&seen, sc)
			j.running = true
			jd = j.Judge(e)
			if jd.Outcome == Passed {
				return nil, false
			}
		}
	}
	return jd, true
}

// seenAt is r as expressions read it at t (from the record's start): a series its samples
// then (SeriesRecord.SeenAt), of the first n taken (n < 0: all); any other result as it is.
func seenAt(rec *Record, r *Result, t time.Duration, n int) *Result {
	ser, ok := r.Value.(*SeriesRecord)
	if !ok || ser == nil {
		return r
	}
	cr := *r
	cr.Value = ser.SeenAt(rec.Start.Add(t), n)
	return &cr
}

// recordedHeld says whether the assert's record says its expression held, and whether it says
// either (an assert that erred, timed out or was cancelled says neither). One that failed as
// its expectFail expected passed with the failure's error: it did not hold. One with expectFail
// that failed held (expectFail: the step succeeded), unless its failure did not match the
// expectFail's pattern.
func recordedHeld(sr *StepRecord, s *dsl.Step) (held, ok bool) {
	switch sr.Outcome {
	case Passed:
		return sr.ExpectedError == "", true
	case Failed:
		return s.ExpectFail && strings.HasPrefix(sr.Error, expectFailSucceeded), true
	}
	return false, false
}

// judgeAsAt judges e over rec as it was when the step of record at started: the steps that had
// ended by then, and their results. ok is false when what e reads cannot be had again so: a
// step it reads ran while the assert ran, started before it and ended after, or ran both
// before and after it (its result is the later run's now); a result recorded under no step's
// name (an unnamed sampler's series); now().
func judgeAsAt(rec *Record, sc *dsl.Scenario, e *dsl.Expr, at *StepRecord) (*Judgement, bool) {
	i := slices.Index(rec.Steps, at)
	return judgeWithin(rec, sc, e, i, i, at.Start, at.End, "")
}

// judgeWithin judges e over rec as it was at a moment between from and to at which the step of
// record at (its index in rec.Steps) judged it, when the records before index last+1 had
// been added: ok is false when what e reads cannot be had again so (see judgeAsAt). own, when
// not "", is the name of the step of record at, whose result e reads as it judged it: the
// caller has made sure the record's is that one (ownResult). What e reads of that step's
// record (its outcome, its error, when it started or ended) was not yet there: such an e
// cannot be had again.
func judgeWithin(rec *Record, sc *dsl.Scenario, e *dsl.Expr, atIndex, last int, from, to time.Duration, own string) (*Judgement, bool) {
	if e.Now || e.Program == nil {
		return nil, false
	}
	named := map[string]bool{}
	for _, n := range sc.Names() {
		named[n] = true
	}
	for _, s := range rec.Steps {
		if s.Name != "" {
			named[s.Name] = true
		}
	}
	snapshots := make([]string, 0, len(sc.Snapshots))
	for _, s := range sc.Snapshots {
		snapshots = append(snapshots, s.Name)
	}
	allNamed := slices.Sorted(maps.Keys(named))
	// The steps whose records or results e reads.
	reads := map[string]bool{}
	for _, id := range e.Names {
		switch {
		case staticNames[id]:
		case id == "delta" || id == dsl.DeltaFunc || id == dsl.HostsFunc:
			for _, n := range snapshots {
				reads[n] = true
			}
			for _, r := range e.Refs {
				if r.Kind == dsl.RefDeltaPair {
					reads[r.From], reads[r.To] = true, true
				}
			}
		case id == "outcome" || id == "error":
			if own != "" && (e.ReadsAllOutcomes() || slices.Contains(e.Outcomes, own)) {
				return nil, false
			}
			for _, n := range e.Outcomes {
				reads[n] = true
			}
			if e.ReadsAllOutcomes() {
				for _, n := range allNamed {
					reads[n] = true
				}
			}
		case id == "started" || id == "ended":
			if own != "" {
				return nil, false
			}
			for _, n := range allNamed {
				reads[n] = true
			}
		case named[id]:
			reads[id] = true
		case rec.Results[id] != nil:
			return nil, false // a result under no step's name: when it was recorded is not known
		}
	}
	// Each step read had ended before the assert started (its result was in the record when
	// the assert judged), or started after the assert ended (it was not), in all its runs. A
	// step's record is added when it starts: one added after the assert's started after it.
	before, after := map[string]bool{}, map[string]bool{}
	for i, s := range rec.Steps {
		if s.Name == "" || !reads[s.Name] || i == atIndex {
			continue // the step judging: vet refuses an expression that reads its own record
		}
		switch {
		case i <= last && s.Outcome != "" && s.End <= from:
			// Its result was recorded before its end was taken; the assert judged after its
			// start was. (Vet lets an assert read only steps that end before it starts: the
			// two are equal only on a clock that stood still, as a test's.)
			before[s.Name] = true
		case i > last && s.Start > to:
			after[s.Name] = true
		default:
			return nil, false
		}
		if before[s.Name] && after[s.Name] {
			return nil, false
		}
	}
	for n := range reads {
		if rec.Results[n] != nil && !before[n] && !after[n] && n != own {
			return nil, false // a result with no step record to say when it was made
		}
	}
	seen := *rec
	seen.Notes = nil
	seen.Steps = nil
	for i, s := range rec.Steps[:max(last+1, 0)] {
		switch {
		case i == atIndex:
			// The step judging had started and not ended, as the run's record then said
			// (len(started) counts it). Before, any read of started or ended (which reads
			// every step's) was not judged again: a repeat whose until over its steps' times
			// never held, edited to passed, replayed PASSED.
			running := *s
			running.End, running.Outcome, running.Error, running.ExpectedError, running.Warnings = 0, "", "", "", nil
			seen.Steps = append(seen.Steps, &running)
		case s.Outcome != "" && s.End <= from:
			seen.Steps = append(seen.Steps, s)
		}
	}
	seen.Results = map[string]*Result{}
	for n, r := range rec.Results {
		if before[n] || !reads[n] || n == own {
			seen.Results[n] = seenAt(rec, r, from, -1)
		}
	}
	for n := range after {
		delete(seen.Results, n)
	}
	// A step e reads the outcome of that started after the assert was "pending" then; one that
	// never started may have been pending or settled ("skipped") then, which the record does
	// not say.
	for _, n := range e.Outcomes {
		if !after[n] && !slices.ContainsFunc(rec.Steps, func(s *StepRecord) bool { return s.Name == n }) {
			return nil, false
		}
	}
	j := NewJudge(&seen, sc)
	j.running = true // as during the run: a plain delta is the snapshots taken by then
	j.pending = func(n string) bool { return after[n] }
	return j.Judge(e), true
}
