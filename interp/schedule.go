package interp

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/schema"
)

// phase runs the steps of one phase, then joins the background steps nobody awaited.
func (ru *run) phase(ctx context.Context, ph dsl.Phase, steps []*dsl.Step) error {
	// The phases before this one have ended: a step of theirs that has not started (a phase
	// that did not run, a catch not needed) no longer may.
	for _, p := range ru.sc.Phases() {
		if phaseRank[p.Phase] < phaseRank[ph] {
			ru.settle(p.Steps)
		}
	}
	// The phase before this one, when it ended with its last step (nothing in the background
	// to join) and without an error, ended when that step did: this phase's first step is
	// planned then, as a sequence's next step is, so that its last step's end cannot be moved
	// earlier unseen (replay refuses a phase planned later than the one before it ended).
	// (The steps' clock, rec.StepsStart, starts then too.)
	ended := ru.phaseEnded
	ru.phaseEnded = time.Time{}
	if len(steps) == 0 {
		return nil
	}
	defer ru.settle(steps)
	ctx, bg := withBackground(ctx)
	err := ru.join(ctx, bg, ru.sequenceFrom(ctx, steps, ended))
	if err == nil && !phaseJoins(steps) {
		ru.phaseEnded = ru.endOf(steps[len(steps)-1])
	}
	return err
}

// phaseJoins reports whether a phase of steps may wait, after its last step, for steps it
// started in the background (a background step or a sampler at any depth).
func phaseJoins(steps []*dsl.Step) bool {
	joins := false
	dsl.Walk(steps, func(s *dsl.Step) {
		if s.Background || s.Every > 0 {
			joins = true
		}
	})
	return joins
}

// bgScope holds the background steps a phase or a repeat's round started (under ru.mu), which
// its end joins: bg are the named ones not yet awaited; runs close when each run of a named
// one has ended; unnamed are the ends of the unnamed samplers (each sends its error).
type bgScope struct {
	parent  *bgScope
	bg      []*dsl.Step
	runs    []chan struct{}
	unnamed []chan error
}

// bgKey holds, in a context, the bgScope its background steps join.
type bgKey struct{}

// withBackground is ctx for steps whose background steps a new scope, within ctx's, joins.
func withBackground(ctx context.Context) (context.Context, *bgScope) {
	bg := &bgScope{parent: backgroundIn(ctx)}
	return context.WithValue(ctx, bgKey{}, bg), bg
}

// backgroundIn is the scope of ctx's background steps (nil outside any phase).
func backgroundIn(ctx context.Context) *bgScope {
	bg, _ := ctx.Value(bgKey{}).(*bgScope)
	return bg
}

// join waits for the background steps of bg to end (they end with their phase or round: they
// are joined, not abandoned) and returns err, else the first error of one nobody awaited.
func (ru *run) join(ctx context.Context, bg *bgScope, err error) error {
	ru.mu.Lock()
	named, runs := bg.bg, bg.runs
	bg.bg, bg.runs = nil, nil
	ru.mu.Unlock()
	for _, s := range named {
		st := ru.state(s.Name)
		select {
		case <-st.done:
		case <-ctx.Done():
			<-st.done // cancelled with ctx; wait for it to record its end
		}
		if err == nil && st.err != nil {
			err = st.err
		}
	}
	// Every run of them, too: a sampler's last sample may be taken after the step it samples
	// during has ended (its state's end); the phase ended, and the expectations were judged,
	// while it still sampled into the record.
	for _, ended := range runs {
		<-ended // each ends with ctx, or is abandoned (dispatchBounded)
	}
	// So are the unnamed samplers (their while steps have ended by now, or end with ctx): a
	// sample that failed without mayFail fails the run, as a named sampler's does.
	ru.mu.Lock()
	unnamed := bg.unnamed
	bg.unnamed = nil
	ru.mu.Unlock()
	for _, done := range unnamed {
		if e := <-done; err == nil && e != nil {
			err = e
		}
	}
	return err
}

// sequence runs steps one after another; each is planned to start when the previous ends.
// The first that fails ends the sequence, except in the cleanup: every cleanup step runs
// whatever an earlier one did (as a finally block's statements would), and the error names
// every one that failed.
func (ru *run) sequence(ctx context.Context, steps []*dsl.Step) error {
	return ru.sequenceFrom(ctx, steps, time.Time{})
}

// sequenceFrom is sequence whose first step is planned at ended when it is not zero (the end
// of the phase before).
func (ru *run) sequenceFrom(ctx context.Context, steps []*dsl.Step, ended time.Time) error {
	var failed []error
	// ended is when the step before, run in the foreground, ended (its record's end): the
	// next step is planned then, not when this loop reads the clock after the step's end was
	// said (progress written to a slow terminal or pipe, a descheduled goroutine), which a
	// record would show as a step planned later than the one before it ended, and replay
	// refuses as an edit.
	for i, s := range steps {
		if err := ctx.Err(); err != nil {
			cause := context.Cause(ctx)
			if s.Phase == dsl.PhaseCleanup {
				// The cleanup's time ran out (or a second interrupt came) before these
				// steps: each is shown and recorded as skipped, not left out.
				ru.unreached(steps[i:], cause, roundIn(ctx))
			}
			return joinErrors(append(failed, cause))
		}
		planned := ru.clock.Now()
		if !ended.IsZero() && ended.Before(planned) {
			planned = ended
		}
		ended = time.Time{}
		switch {
		case s.Background && s.Every == 0:
			ru.background(ctx, s, planned, false)
			// The next step starts once this one has (its record's start before the next's):
			// the goroutine recorded its start when it ran, on a loaded machine after the
			// next step's, which replay refuses ("it started … before the step before it in
			// its sequence … started").
			if st := ru.state(s.Name); st != nil {
				select {
				case <-st.started:
				case <-st.done:
				case <-ctx.Done():
				}
			}
		case s.Every > 0:
			// A sampler in a sequence samples on while the sequence goes on.
			ru.background(ctx, s, planned, false)
		default:
			err := ru.timed(ctx, s, planned, false)
			ended = ru.endOf(s)
			if err != nil {
				if s.Phase != dsl.PhaseCleanup {
					return err
				}
				failed = append(failed, err)
			}
		}
	}
	return joinErrors(failed)
}

// endOf is when the last record of s (its latest run) says it ended; zero when there is none.
func (ru *run) endOf(s *dsl.Step) time.Time {
	ru.mu.Lock()
	defer ru.mu.Unlock()
	for i := len(ru.rec.Steps) - 1; i >= 0; i-- {
		if sr := ru.rec.Steps[i]; sr.Path == s.Path {
			if sr.Outcome == "" {
				return time.Time{}
			}
			return ru.rec.Start.Add(sr.End)
		}
	}
	return time.Time{}
}

// joinErrors is nil for none, the error itself for one, else their errors.Join. An error
// already among those before it is left out: the cleanup's timeout, which ends a step that
// was running and keeps those after it from starting, is said once.
func joinErrors(errs []error) error {
	var kept []error
	for _, e := range errs {
		if !slices.ContainsFunc(kept, func(k error) bool { return errors.Is(k, e) }) {
			kept = append(kept, e)
		}
	}
	switch len(kept) {
	case 0:
		return nil
	case 1:
		return kept[0]
	}
	return errors.Join(kept...)
}

// unreached records the cleanup steps the cleanup's end kept from starting (and the steps
// under them) as skipped, with why, and shows them so: a cleanup cut short by its timeout
// lists every step it did not run, not only those it ran. So are the steps a stopped run did
// not reach (notRun).
func (ru *run) unreached(steps []*dsl.Step, why error, round int) {
	now := ru.offset(ru.clock.Now())
	dsl.Walk(steps, func(d *dsl.Step) {
		sr := &StepRecord{
			Path: d.Path, Name: d.Name, Label: blockLabel(d), Kind: d.Kind, Cluster: ru.sc.ClusterOf(d), Phase: d.Phase, Pos: d.Pos, Summary: dsl.Summary(d),
			Planned: now, Start: now, End: now, Background: d.Background,
			Outcome: Skipped, Error: why.Error(), Round: round,
		}
		ru.mu.Lock()
		ru.rec.Steps = append(ru.rec.Steps, sr)
		ru.mu.Unlock()
		ru.observe(Event{Step: sr, Ended: true})
	})
}

// background starts s and returns at once; await (or the end of the phase) joins it.
func (ru *run) background(ctx context.Context, s *dsl.Step, planned time.Time, timed bool) {
	bg := backgroundIn(ctx)
	if s.Name != "" {
		ended := make(chan struct{})
		ru.mu.Lock()
		bg.bg = append(bg.bg, s)
		bg.runs = append(bg.runs, ended)
		ru.mu.Unlock()
		go func() { // its end and error: ru.steps
			defer close(ended)
			_ = ru.timed(ctx, s, planned, timed)
		}()
		return
	}
	done := make(chan error, 1)
	ru.mu.Lock()
	bg.unnamed = append(bg.unnamed, done)
	ru.mu.Unlock()
	go func() { done <- ru.timed(ctx, s, planned, timed) }()
}

// parallel runs its children at once, each at its offset from the block's start; the block
// ends when every child that is not in the background has ended. The first failure cancels
// the others, except in the cleanup, where every child runs on and the error names each
// that failed.
//
// start is the block's start as its record holds it: its children's at: offsets count from
// it, so that a record's planned times are its block's start plus their offsets (replay holds
// them to that), however long the block took to get here.
func (ru *run) parallel(ctx context.Context, s *dsl.Step, start time.Time) error {
	outer := ctx // background children outlive the block
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	var all []error // in the cleanup
	launch := func(c *dsl.Step, planned time.Time) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := ru.timed(ctx, c, planned, c.HasAt); err != nil {
				mu.Lock()
				switch {
				case s.Phase == dsl.PhaseCleanup:
					all = append(all, err)
				case first == nil:
					first = err
					cancel(err)
				}
				mu.Unlock()
			}
		}()
	}
	// Children start in the order of their offsets, each launched shortly before its time
	// (timed waits out the rest precisely): a block of 10,000 timed steps keeps a handful of
	// goroutines and timers alive instead of 20,000, whose stacks every GC cycle would scan
	// while steps are due.
	var later []*dsl.Step
	for _, c := range s.Children {
		planned := start.Add(c.At)
		switch {
		case c.Background:
			ru.background(outer, c, planned, c.HasAt)
		case c.At <= launchLead:
			launch(c, planned)
		default:
			later = append(later, c)
		}
	}
	sort.SliceStable(later, func(i, j int) bool { return later[i].At < later[j].At })
	for i, c := range later {
		planned := start.Add(c.At)
		if ctx.Err() == nil && planned.Sub(ru.clock.Now()) > launchLead {
			_ = ru.clock.Sleep(ctx, planned.Add(-launchLead), nil) // ctx's end is seen below
		}
		if ctx.Err() != nil {
			// Cancelled: the children still to come are marked as timed does it.
			for _, rest := range later[i:] {
				launch(rest, start.Add(rest.At))
			}
			break
		}
		launch(c, planned)
	}
	wg.Wait()
	if s.Phase == dsl.PhaseCleanup {
		return joinErrors(all)
	}
	return first
}

// launchLead is how long before its planned start a child of a parallel block is launched.
const launchLead = 20 * time.Millisecond

// timed waits until planned, then runs s (a sampler samples until its while step ends).
func (ru *run) timed(ctx context.Context, s *dsl.Step, planned time.Time, timed bool) error {
	if st := ru.state(s.Name); st != nil && s.Name != "" {
		st.dispatched.Store(true)
		defer st.settled.Store(true)
	}
	defer ru.settle(s.Children) // those its end left unstarted
	if wait := planned.Sub(ru.clock.Now()); wait > 0 {
		if err := ru.clock.Sleep(ctx, planned, nil); err != nil {
			ru.markNamed(s, planned, err)
			if s.Phase == dsl.PhaseCleanup {
				ru.unreached([]*dsl.Step{s}, err, roundIn(ctx)) // a cleanup child whose at the cleanup's end came before
			}
			return err
		}
	}
	if s.Every > 0 {
		return ru.sample(ctx, s, planned)
	}
	return ru.execute(ctx, s, planned, timed, 0, 0)
}

// markNamed marks a named step started and done without running it (cancelled before its time).
func (ru *run) markNamed(s *dsl.Step, t time.Time, err error) {
	if st := ru.state(s.Name); st != nil && s.Name != "" {
		st.markStarted(t)
		st.markDone(err)
	}
}

// sample runs s every s.Every from the moment its while step starts until that step ends.
// Ticks are planned from the first one (no drift); a tick that comes while the previous
// sample still runs is skipped and noted as a warning.
func (ru *run) sample(ctx context.Context, s *dsl.Step, planned time.Time) error {
	st := ru.state(s.While)
	select {
	case <-st.started:
	case <-ctx.Done():
		ru.markNamed(s, planned, context.Cause(ctx))
		return context.Cause(ctx)
	}
	if own := ru.state(s.Name); own != nil && s.Name != "" {
		if !own.hasStarted() {
			ru.mark(ctx, s.Name)
		}
		own.markStarted(ru.clock.Now())
	}
	first := ru.clock.Now()
	var err error
	took, last := 0, 0
	for i := 0; ; i++ {
		tick := first.Add(time.Duration(i) * s.Every)
		if i > 0 {
			_ = ru.clock.Sleep(ctx, tick, st.done) // which of the three ended it is seen below
		}
		select {
		case <-st.done:
			goto end
		case <-ctx.Done():
			err = context.Cause(ctx)
			goto end
		default:
		}
		if now := ru.clock.Now(); now.Sub(tick) >= s.Every {
			continue // this tick's time has passed: the previous sample overran it
		}
		took++
		last = i + 1
		if e := ru.execute(ctx, s, tick, true, 0, i+1); e != nil && !s.MayFail {
			err = e
			break
		}
	}
end:
	if took == 0 && err == nil && ctx.Err() == nil {
		err = ru.noSample(s, planned, first)
	}
	if took > 0 && err == nil && ctx.Err() == nil && isDone(st.done) {
		// A last sample when what it samples during has ended: a step shorter than every was
		// seen at its start only (a max over one sample, taken before a load sent anything,
		// passed), now at its start and its end at least; one sampled at those two alone
		// says nothing of what happened in between (schema.SeriesRecord.Ends).
		if e := ru.execute(ctx, s, ru.clock.Now(), true, 0, last+1); e != nil && !s.MayFail {
			err = e
		}
		if took == 1 {
			ru.mu.Lock()
			if r := ru.rec.Results[or(s.Name, s.Path)]; r != nil {
				if ser, ok := r.Value.(*schema.SeriesRecord); ok && len(ser.Samples) == 2 {
					ser.Ends = true
				}
			}
			ru.mu.Unlock()
		}
	}
	if own := ru.state(s.Name); own != nil && s.Name != "" {
		own.markDone(err)
	}
	return err
}

// isDone says whether ch is closed.
func isDone(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// noSample records s, a sampling step whose while step had ended before its first tick (at
// first), as an error (nil under mayFail, with its warning): it measured nothing, and before,
// it was in no record, report or progress line at all.
func (ru *run) noSample(s *dsl.Step, planned, first time.Time) error {
	msg := fmt.Sprintf("took no sample: its while step %q had ended before its first tick at +%s (every %s while %s)", s.While, ru.offset(first).Round(time.Millisecond), s.Every, s.While)
	sr := &StepRecord{
		Path: s.Path, Name: s.Name, Label: blockLabel(s), Kind: s.Kind, Cluster: ru.sc.ClusterOf(s), Phase: s.Phase, Pos: s.Pos, Summary: dsl.Summary(s),
		Planned: ru.offset(planned), Start: ru.offset(first), End: ru.offset(first), Skew: first.Sub(planned), Timed: true, Background: s.Background,
		Outcome: Errored, Error: msg,
	}
	var err error = &StepError{Step: s, Kind: Errored, Err: errors.New(msg)}
	if s.MayFail {
		sr.Warnings = append(sr.Warnings, MayFailWarning)
		err = nil
	}
	ru.mu.Lock()
	ru.rec.Steps = append(ru.rec.Steps, sr)
	ru.mu.Unlock()
	ru.observe(Event{Step: sr})
	ru.observe(Event{Step: sr, Ended: true})
	return err
}

// execute runs one step now and records it. planned is when it was meant to start.
func (ru *run) execute(ctx context.Context, s *dsl.Step, planned time.Time, timed bool, round, sample int) error {
	st := ru.state(s.Name)
	if st != nil && sample == 0 && !st.hasStarted() {
		ru.mark(ctx, s.Name) // before the start: what the step writes is after the mark
	}
	start := ru.clock.Now()
	if st != nil && sample == 0 {
		st.markStarted(start)
	}
	// ${...} are evaluated now, when the step starts, so that its record and progress line show
	// what really runs.
	params, perr := ru.resolve(s)
	summary := dsl.Summary(s)
	if perr == nil && s.HasTemplates() {
		summary = dsl.SummaryOf(params)
	}
	sr := &StepRecord{
		Path: s.Path, Name: s.Name, Label: blockLabel(s), Kind: s.Kind, Cluster: ru.sc.ClusterOf(s), Phase: s.Phase, Pos: s.Pos, Summary: summary,
		Planned: ru.offset(planned), Start: ru.offset(start), Skew: start.Sub(planned),
		Timed: timed, Round: cmp.Or(round, roundIn(ctx)), Sample: sample, Background: s.Background,
	}
	ru.mu.Lock()
	ru.rec.Steps = append(ru.rec.Steps, sr)
	ru.mu.Unlock()
	ru.observe(Event{Step: sr})

	sctx := ctx
	timeout := s.Timeout
	if timeout == 0 {
		timeout = ru.defaultTimeout(s)
	}
	var cancel context.CancelFunc = func() {}
	// The timeout counts from the step's start as its record holds it, and its end is read
	// as soon as the driver returns: a passed step's record lasts no longer than its
	// timeout, whatever the machine did between (the ${...}, the start's event, a descheduled
	// goroutine), which replay holds it to.
	deadline := start.Add(timeout)
	if timeout > 0 {
		sctx, cancel = context.WithDeadlineCause(ctx, deadline, &timeoutError{s.Kind, timeout})
	}
	err := perr
	if err == nil {
		err = ru.dispatchBounded(sctx, s, sr, params)
	}
	end := ru.clock.Now()
	var te *timeoutError
	var unmet *schema.Unmet
	if err != nil && sctx.Err() != nil && ctx.Err() == nil && errors.As(err, &unmet) {
		// A wait whose condition never held on what it saw: the system under test is not
		// as expected, a failed expectation (exit 1) that says what was last observed.
		err = &failure{err.Error()}
	}
	if err != nil && sctx.Err() != nil && ctx.Err() == nil && errors.As(context.Cause(sctx), &te) && !errors.As(err, &te) && !isFailure(err) {
		// The step's own timeout ended it. An error that already wraps the timeout keeps
		// what it adds (a wait's "last: …", why its condition did not hold); any other
		// (a driver's "context deadline exceeded") says less than the timeout does.
		err = te
	}
	if err == nil && timeout > 0 && end.After(deadline) && ctx.Err() == nil && sr.ExpectedError == "" {
		te = &timeoutError{s.Kind, timeout}
		// The driver returned success after the step's own timeout, without seeing it: the
		// step did not end in time, and a record of it passed would say it did (replay
		// refuses a passed step that lasted past its timeout). An expected failure (its
		// timeout, under expectFail) is the step's pass.
		err = te
		ru.dropLateResult(s)
	}
	if ste := (*scenarioTimeoutError)(nil); err == nil && ctx.Err() != nil && sr.ExpectedError == "" {
		// The driver returned success after the step was stopped (the scenario's timeout, an
		// interrupt, the cleanup's timeout, its block's timeout or a failed sibling), not
		// having seen it: the step did not end before it was stopped, and a record of it
		// passed then says it did (replay refuses one that passed after the scenario's
		// timeout). It ends as it would have, had it seen the stop: with its cause.
		err = context.Cause(ctx)
		ru.dropLateResult(s)
	} else if err != nil && ctx.Err() != nil && errors.As(context.Cause(ctx), &ste) && !errors.As(err, &ste) && !errors.As(err, &te) {
		// The scenario's timeout ended it: a driver's "context deadline exceeded" does not
		// say whose deadline.
		err = fmt.Errorf("%w: %v", err, ste)
	} else if cte := (*cleanupTimeoutError)(nil); err != nil && ctx.Err() != nil && errors.As(context.Cause(ctx), &cte) && !errors.As(err, &cte) && !errors.As(err, &te) {
		// So did the cleanup's (over a cleanup or catch step).
		err = fmt.Errorf("%w: %v", err, cte)
	}
	cancel()

	ru.mu.Lock()
	sr.End = ru.offset(end)
	switch {
	case err == nil:
		sr.Outcome = Passed
	case errors.As(err, &te):
		sr.Outcome = TimedOut
	case ctx.Err() != nil:
		sr.Outcome = Cancelled
	case isFailure(err):
		sr.Outcome = Failed
	default:
		sr.Outcome = Errored
	}
	if err != nil {
		sr.Error = err.Error()
	}
	ru.mu.Unlock()
	ru.observe(Event{Step: sr, Ended: true})

	if err != nil {
		kind := sr.Outcome
		if se := (*StepError)(nil); errors.As(err, &se) {
			// A child's error (parallel, sequence, repeat) already names the child.
			err = se
		} else if ctx.Err() != nil && !errors.As(err, &te) {
			err = context.Cause(ctx)
		} else {
			err = &StepError{Step: s, Kind: kind, Err: err, Pos: errorPos(s, err)}
		}
		if s.MayFail && ctx.Err() == nil {
			ru.mu.Lock()
			sr.Warnings = append(sr.Warnings, MayFailWarning)
			ru.mu.Unlock()
			err = nil
		}
	}
	if st != nil && sample == 0 && round == 0 {
		st.markDone(err)
	}
	return err
}

// dropLateResult drops the result s recorded when its driver returned success past its
// deadline (its own timeout, the scenario's): the step did not end in time, and the result
// it came back with is not one it had then (an exec's exit 0 beside a timeout is a record
// replay refuses: the code with which the step passes).
func (ru *run) dropLateResult(s *dsl.Step) {
	if s.Name == "" || s.Every > 0 {
		return
	}
	ru.mu.Lock()
	delete(ru.rec.Results, s.Name)
	ru.mu.Unlock()
}

// StopGrace is how long a step whose context has ended (its own timeout, the scenario's, an
// interrupt, a failed sibling, the cleanup's timeout) has to return before the runner stops
// waiting for it (a load's in-flight requests get their request timeout on top).
const StopGrace = 5 * time.Second

// dispatchBounded is dispatch, bounded by ctx: a step that does not return within its grace
// (stopGrace) once ctx has ended (a driver blocked where its context does not reach: a
// syscall, a stand-in that sleeps through it) is abandoned. Its error says so and wraps ctx's
// cause (the step's timeout, an interrupt), and what it records or warns of afterwards is
// dropped: a step's timeout bounds how long the run waits for it, whatever the driver does.
func (ru *run) dispatchBounded(ctx context.Context, s *dsl.Step, sr *StepRecord, params schema.Params) error {
	if _, parent := params.(schema.Parent); parent {
		// A block ends when its children do, each bounded so: abandoned itself, it would
		// leave a child's record to be finished after the run's end.
		return ru.dispatch(ctx, s, sr, params)
	}
	returned := make(chan struct{})
	var err error
	go func() {
		defer close(returned)
		err = ru.dispatch(ctx, s, sr, params)
	}()
	select {
	case <-returned:
		return err
	case <-ctx.Done():
	}
	grace := stopGrace(params)
	_ = ru.clock.Sleep(context.Background(), ru.clock.Now().Add(grace), returned)
	select {
	case <-returned:
		return err
	default:
	}
	ru.mu.Lock()
	if ru.abandoned == nil {
		ru.abandoned = map[*StepRecord]bool{}
	}
	ru.abandoned[sr] = true
	switch params.(type) {
	case *schema.Apply: // what the automatic cleanup removes, the steps that may create it
		ru.stillRunning = append(ru.stillRunning, abandonedStep{what: "step " + or(s.Name, s.Path) + " (abandoned)", returned: returned})
	case *schema.Process:
		ru.stillRunning = append(ru.stillRunning, abandonedStep{what: "process " + or(s.Name, s.Path) + " (its start was abandoned)", returned: returned})
	}
	ru.mu.Unlock()
	return &abandonedError{cause: context.Cause(ctx), grace: grace}
}

// stopGrace is how long a step of params has to return once its context has ended: StopGrace,
// and a load's request timeout on top (fortio stops starting requests, and those in flight end
// by their own timeout).
func stopGrace(params schema.Params) time.Duration {
	if l, ok := params.(*schema.Load); ok {
		return StopGrace + l.WithDefaults().Timeout.D()
	}
	return StopGrace
}

// abandonedError is a step that had not returned its grace after its context ended.
type abandonedError struct {
	cause error
	grace time.Duration
}

func (e *abandonedError) Error() string {
	return fmt.Sprintf("%v; the step had not returned %s later and was abandoned (what it does after that is not recorded)", e.cause, e.grace)
}

func (e *abandonedError) Unwrap() error { return e.cause }

// MayFailWarning is the warning of a step whose failure its mayFail allowed.
const MayFailWarning = "mayFail: the run goes on"

// EndedEarlyWarning begins the warning of a process step whose process ended on its own with
// a failure before the cleanup stopped it (the cleanup's line follows): such a run is an
// error (Run), whatever its steps and expectations say.
const EndedEarlyWarning = "ended early: "

// expectFailWarning begins the warning of a step that failed as its expectFail expected; the
// error follows.
const expectFailWarning = "expectFail: failed as expected: "

// timeoutError is a step's own timeout expiring.
type timeoutError struct {
	kind string
	d    time.Duration
}

func (e *timeoutError) Error() string { return fmt.Sprintf("%s timed out after %s", e.kind, e.d) }

func isFailure(err error) bool {
	var f *failure
	return errors.As(err, &f)
}

// defaultTimeout is the timeout of a step that sets none: blocks and pure steps have none
// (their children do); steps that talk to the world get the runner's defaults.
func (ru *run) defaultTimeout(s *dsl.Step) time.Duration {
	if s.Params == nil {
		return ru.defaults.Step
	}
	switch s.Params.Plan().Timeout {
	case schema.TimeoutNone:
		return 0
	case schema.TimeoutWait:
		return ru.defaults.Wait
	case schema.TimeoutAssert:
		if ru.defaults.Assert == 0 {
			return ru.defaults.Wait // options that predate the assert bound
		}
		return ru.defaults.Assert
	}
	return ru.defaults.Step
}

// await joins background steps.
func (ru *run) await(ctx context.Context, s *dsl.Step) error {
	var errs []string
	for _, name := range s.Await {
		st := ru.state(name)
		select {
		case <-st.done:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
		ru.mu.Lock()
		for bg := backgroundIn(ctx); bg != nil; bg = bg.parent {
			bg.bg = slices.DeleteFunc(bg.bg, func(b *dsl.Step) bool { return b.Name == name })
		}
		ru.mu.Unlock()
		if st.err != nil {
			var se *StepError
			if errors.As(st.err, &se) {
				return se
			}
			errs = append(errs, fmt.Sprintf("%s: %v", name, st.err))
		}
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}

// repeat runs its steps until its expression holds.
func (ru *run) repeat(ctx context.Context, s *dsl.Step, sr *StepRecord) error {
	p := s.Params.(*schema.Repeat)
	defer ru.wholeSeries(s.Children)
	for round := 1; ; round++ {
		if round > 1 {
			ru.freshRound(s.Children)
		}
		// A round ends when the background steps it started have: the next round's run of
		// one starts after the last's ended, and the until reads the round's own (round 2
		// started a load again while round 1's still loaded, the two sharing one state, and
		// its snapshot counted round 1's requests).
		rctx, bg := withBackground(withRound(ctx, round))
		if err := ru.join(rctx, bg, ru.sequence(rctx, s.Children)); err != nil {
			return err
		}
		jd := ru.judgeNow(s.Expr)
		if jd.Outcome == Passed {
			return nil
		}
		if round >= p.Max {
			why := jd.Explanation
			if jd.Reason != "" {
				why = jd.Reason
				if jd.ReasonPos != nil && !jd.emptyUntil { // the part that erred: 1 / p.exit of an exit 0
					why = fmt.Sprintf("%s: %s", jd.ReasonPos, jd.Reason)
				}
			}
			if jd.Outcome == Errored && !jd.emptyUntil {
				// no answer at the last round, true or false: what the repeat waits for was
				// not tested (as a wait's until that ends so), an error, not "still not true"
				return &schema.NotJudged{Err: fmt.Errorf("repeat: %s had no answer after %s: %s", s.Expr.Src, countOf(round, "round"), why)}
			}
			f := &failure{fmt.Sprintf("repeat: %s was still not true after %s: %s", s.Expr.Src, countOf(round, "round"), why)}
			if jd.emptyUntil {
				return &schema.EmptyUntil{Err: f}
			}
			return f
		}
		if p.Interval > 0 {
			if err := ru.clock.Sleep(ctx, ru.clock.Now().Add(p.Interval.D()), nil); err != nil {
				return err
			}
		}
	}
}

// roundKey holds, in the context of a repeat's steps, the round they run in.
type roundKey struct{}

// withRound is ctx for the steps of a repeat's round (from 1): their records say it (Round),
// those of a repeat within it its own.
func withRound(ctx context.Context, round int) context.Context {
	return context.WithValue(ctx, roundKey{}, round)
}

// roundIn is the round of the repeat whose steps ctx runs, 0 outside any.
func roundIn(ctx context.Context) int {
	r, _ := ctx.Value(roundKey{}).(int)
	return r
}

// judgeNow judges an expression against what has been recorded so far.
func (ru *run) judgeNow(e *dsl.Expr) *Judgement {
	ru.mu.Lock()
	defer ru.mu.Unlock()
	return ru.judge.Judge(e)
}

// waitUntil polls an expression until it holds or ctx ends.
func (ru *run) waitUntil(ctx context.Context, e *dsl.Expr, interval time.Duration) error {
	if interval == 0 {
		interval = time.Second
	}
	for {
		jd := ru.judgeNow(e)
		if jd.Outcome == Passed {
			return nil
		}
		if err := ru.clock.Sleep(ctx, ru.clock.Now().Add(interval), nil); err != nil {
			why := jd.Explanation
			if jd.Reason != "" {
				why = jd.Reason
				if jd.ReasonPos != nil && !jd.emptyUntil { // the part that erred: 1 / p.exit of an exit 0
					why = fmt.Sprintf("%s: %s", jd.ReasonPos, jd.Reason)
				}
			}
			if jd.Outcome == Failed {
				return &schema.Unmet{Err: fmt.Errorf("%w; last: %s", err, why)} // judged false to the end: the run fails
			}
			if jd.emptyUntil { // its collection empty to the end: the state awaited never came
				return &schema.Unmet{Err: &schema.EmptyUntil{Err: fmt.Errorf("%w; last: %s", err, why)}}
			}
			// no answer at the last poll, true or false: what the wait claims was not tested
			return fmt.Errorf("%w; last: %w", err, &schema.NotJudged{Err: errors.New(why)})
		}
	}
}

// blockLabel is what an unnamed step inside a named block is called ("" for any other).
func blockLabel(s *dsl.Step) string {
	if s.Name == "" && s.Shown != "" && s.Shown != s.Path {
		return s.Shown
	}
	return ""
}
