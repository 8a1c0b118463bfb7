// Package interp runs validated scenarios: a timeline scheduler over the steps of a plan, a
// store of what each step recorded (snapshots, load results, captures, logs), deltas between
// snapshots, expression judgement, and the record a report is written from.
//
// The world is reached only through the driver interfaces of world.go. A run has two
// contexts: the run context (cancelled on the first interrupt: running steps stop, load stops
// through fortio's Aborter) and the cleanup context (cancelled on the second interrupt:
// cleanup is abandoned). Cleanup always runs, in reverse order of what the run created.
package interp

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/schema"
)

// Runner runs scenarios on one target.
type Runner struct {
	target   *schema.Target
	clock    Clock
	observe  func(Event)
	keep     bool
	defaults Defaults
	// parseAccessLog parses an access-log line (envoy's parser, given by the CLI: the
	// core does not import drivers).
	parseAccessLog func(string) (schema.LogEntry, bool)
	// spool is where streamed artifacts go ("" keeps them in memory; see WithSpool).
	spool string
}

// Defaults are the timeouts of steps that do not set their own.
type Defaults struct {
	// Wait bounds waits for pods and controllers (rollout, condition) and the waits of scale
	// and restart.
	Wait time.Duration
	// Assert bounds waits that judge the system under test (match, absent, until).
	Assert time.Duration
	// Step bounds every other step that talks to the world.
	Step time.Duration
	// Cleanup bounds the cleanup phase when the scenario does not say.
	Cleanup time.Duration
	// CleanupRetry bounds how long the automatic cleanup tries again what it could not
	// remove at first (within Cleanup).
	CleanupRetry time.Duration
}

// Option configures a Runner.
type Option func(*Runner)

// WithClock replaces the real clock.
func WithClock(c Clock) Option { return func(r *Runner) { r.clock = c } }

// WithObserver receives an event for every step that starts and ends (live progress).
func WithObserver(f func(Event)) Option { return func(r *Runner) { r.observe = f } }

// WithKeep skips the automatic cleanup of created objects (the scenario's cleanup steps still run).
func WithKeep(keep bool) Option { return func(r *Runner) { r.keep = keep } }

// WithDefaults sets default timeouts.
func WithDefaults(d Defaults) Option { return func(r *Runner) { r.defaults = d } }

// WithAccessLogParser sets the parser of access-log lines for logs steps.
func WithAccessLogParser(f func(string) (schema.LogEntry, bool)) Option {
	return func(r *Runner) { r.parseAccessLog = f }
}

// New returns a Runner for target.
func New(target *schema.Target, opts ...Option) *Runner {
	r := &Runner{
		target:   target,
		clock:    RealClock{},
		observe:  func(Event) {},
		defaults: Defaults{Wait: schema.DefaultWaitTimeout, Assert: schema.DefaultAssertTimeout, Step: schema.DefaultStepTimeout, Cleanup: schema.DefaultCleanupTimeout, CleanupRetry: DefaultCleanupRetry},
	}
	for _, o := range opts {
		o(r)
	}
	return r
}

// Event is a step starting or ending, or news of a running step: a load's meter (Load, sent
// once when the load starts) or a sample just taken (Sample).
type Event struct {
	Step  *StepRecord
	Ended bool
	// Load, when set, is the meter of the running load Step (no start or end).
	Load *schema.LoadMeter
	// Sample, when set, is the snapshot a sampling step (every) just took (no start or end).
	Sample *SnapshotRecord
	// Cleanup, when set, is the automatic cleanup at work (Step is nil): "removing X" while it
	// removes X, then, with CleanupDone, what Record.Cleanup says of it.
	Cleanup     string
	CleanupDone bool
	// CleanupBad says that what CleanupDone reports went wrong: a thing left behind, a
	// process that had ended with a failure before the cleanup (the run is an error).
	CleanupBad bool
}

// StepError is a step that failed, with the step's position.
type StepError struct {
	Step *dsl.Step
	// Kind says how the run ends: Failed (an assertion: exit 1) or Errored (the world: exit 3),
	// TimedOut (exit 3), Cancelled (interrupted).
	Kind Outcome
	Err  error
	// Pos is where in the step the error is (an apply's object field the cluster refused);
	// zero: the step's own position.
	Pos dsl.Pos
}

// pos is where the error is: Pos, else the step's position.
func (e *StepError) pos() dsl.Pos {
	if e.Pos.IsValid() {
		return e.Pos
	}
	return e.Step.Pos
}

func (e *StepError) Error() string {
	// A named step is called by its name, as progress and the report call it.
	label := e.Step.Path
	if e.Step.Shown != "" {
		label = e.Step.Shown // its name, or its named block's name and its place there
	}
	return fmt.Sprintf("%s: %s (%s): %v", e.pos(), label, e.Step.Kind, e.Err)
}

func (e *StepError) Unwrap() error { return e.Err }

// failure is a false assertion: the run fails (exit 1) rather than errors.
type failure struct{ msg string }

func (f *failure) Error() string { return f.msg }

// Failure marks a failed expectation for schema.IsFailure.
func (f *failure) Failure() {}

// Run runs sc: preflight checks, setup, steps, cleanup (always), then the expectations. ctx is
// the run context, cleanupCtx the cleanup context (see the package comment). The returned
// Record is complete whatever happened.
func (r *Runner) Run(ctx, cleanupCtx context.Context, sc *dsl.Scenario) *Record {
	now := r.clock.Now()
	// Every time the run records is its start plus the time elapsed since on the monotonic
	// clock (steadyClock): a wall clock set during the run (NTP, a person) moved the steps
	// phase's start and the run's end, not the steps' offsets, so that started.x read -3600
	// after a step of an hour, and the record read back lasted an hour.
	clock := steadyClock{Clock: r.clock, base: now}
	rec := &Record{
		Version: RecordVersion, Scenario: sc.Name, File: sc.Pos.File, Pos: sc.Pos, Doc: sc.Doc,
		Target: r.target.Name, Where: r.target.Describe, Vars: sc.Vars,
		TargetValues: r.target.Values, Clusters: clusterRecords(sc, r.target), Start: now, StepsStart: now,
		Results: map[string]*Result{}, AllowReset: sc.AllowReset,
		Namespaces: sc.Generated, Warnings: sc.Warnings, Lints: dsl.LintCodeList(),
	}
	ru := &run{Runner: r, clock: clock, sc: sc, rec: rec, steps: map[string]*stepState{}, procs: map[string]schema.RunningProcess{}, deferred: map[*dsl.Step]bool{}, redact: NewRedactor(sc)}
	ru.judge = NewJudge(rec, sc)
	ru.judge.running = true // the expectations are judged with it at the end (below)
	ru.judge.pending = ru.pending
	defer ru.removeCopies()
	for _, s := range sc.Names() {
		ru.steps[s] = &stepState{started: make(chan struct{}), done: make(chan struct{})}
	}
	ru.markReaders, ru.fileMarks, ru.podMarks = markReaders(sc), map[fileMarkKey]*schema.FileMark{}, map[podMarkKey]*schema.PodMark{}
	defer ru.stopMarks()
	ru.mark(ctx, "")
	ru.fileStart = startDigests(sc, ru.file, ru.judge.Env())

	err := ru.preflight(ctx)
	if err != nil {
		// Nothing has been touched: no cleanup either (it could mutate).
		rec.Outcome = Refused
		if re := (*RefusedError)(nil); errors.As(err, &re) && re.Infra {
			rec.Outcome = Errored // the target lacks a driver it claims: not the scenario's fault
		}
		rec.Error = err.Error()
		for _, e := range sc.Expect {
			rec.Expectations = append(rec.Expectations, &Judgement{Src: e.Src, Pos: e.Pos, Outcome: Skipped, Reason: "the scenario was refused"})
		}
		rec.End = ru.clock.Now()
		return ru.redact.Record(rec)
	}
	{
		runCtx := ctx
		if sc.Timeout > 0 {
			var cancel context.CancelFunc
			runCtx, cancel = context.WithTimeoutCause(ctx, sc.Timeout, &scenarioTimeoutError{sc.Timeout, sc.TimeoutPos})
			defer cancel()
		}
		err = ru.makeNamespaces(runCtx)
		if err == nil {
			err = ru.phase(runCtx, dsl.PhaseSetup, sc.Setup)
		}
		if err == nil {
			ru.mu.Lock()
			rec.StepsStart = ru.clock.Now()
			// The steps begin when the setup ended with its last step (not when this reads
			// the clock after its end was said to a slow terminal): replay holds the setup's
			// last end to it.
			if e := ru.phaseEnded; !e.IsZero() && e.Before(rec.StepsStart) {
				rec.StepsStart = e
			}
			ru.mu.Unlock()
			err = ru.phase(runCtx, dsl.PhaseSteps, sc.Steps)
		}
	}
	if ctx.Err() != nil && err == nil {
		err = context.Cause(ctx)
	}
	if err != nil {
		// The steps the run's stop kept from starting are listed as not run, in every view:
		// without them a run cut short reads as a shorter plan that ran to its end.
		ru.notRun(append(slices.Clip(sc.Setup), sc.Steps...), err)
	}
	cleanupTimeout := sc.CleanupTimeout
	if cleanupTimeout == 0 {
		cleanupTimeout = r.defaults.Cleanup
	}

	// Catch when the run failed (not when it was interrupted): each step whatever the others
	// did, as much as can be collected; what they record goes in the report, and the
	// verdict stays the failure's. A run whose steps all ended fails too when an expectation
	// fails: those that do not read a cleanup step are judged now, while what failed is still
	// there to collect (all are judged again, as always, after the cleanup).
	interruptedNow := ctx.Err() != nil && errors.Is(context.Cause(ctx), ErrInterrupted)
	if len(sc.Catch) > 0 && !interruptedNow && (err != nil || ru.expectationFailsEarly(sc)) {
		cctx, cancel := context.WithTimeoutCause(cleanupCtx, cleanupTimeout, &cleanupTimeoutError{cleanupTimeout, sc.CleanupTimeoutPos, true})
		for _, s := range sc.Catch {
			_ = ru.phase(cctx, dsl.PhaseCatch, []*dsl.Step{s})
		}
		cancel()
	}

	// Cleanup always: the scenario's cleanup steps, then what the run created, newest first.
	cctx, cancel := context.WithTimeoutCause(cleanupCtx, cleanupTimeout, &cleanupTimeoutError{cleanupTimeout, sc.CleanupTimeoutPos, false})
	cerr := ru.phase(cctx, dsl.PhaseCleanup, sc.Cleanup)
	ru.autoCleanup(cctx)
	ru.cleanupLate(cctx)
	cancel()
	ru.closeWriters()
	if ru.target.Ended != nil {
		if msg := ru.target.Ended(); msg != "" {
			// As a process that ended early: the steps after it ran without the world the
			// scenario declares, whatever the expectations found (a load against a backend
			// gone answers no 503).
			ru.mu.Lock()
			ru.endedEarly = append(ru.endedEarly, msg)
			ru.mu.Unlock()
			ru.addCleanup(msg)
			ru.observe(Event{Cleanup: msg, CleanupDone: true, CleanupBad: true})
		}
	}

	ru.mu.Lock()
	defer ru.mu.Unlock()
	switch {
	case ctx.Err() != nil && errors.Is(context.Cause(ctx), ErrInterrupted):
		rec.Outcome = Interrupted
		rec.Error = "interrupted"
		for _, e := range sc.Expect {
			rec.Expectations = append(rec.Expectations, &Judgement{Src: e.Src, Pos: e.Pos, Outcome: Skipped, Reason: "the run was interrupted"})
		}
	case err != nil:
		rec.Outcome, rec.Error, rec.ErrorPos = classify(err)
		for _, e := range sc.Expect {
			rec.Expectations = append(rec.Expectations, &Judgement{Src: e.Src, Pos: e.Pos, Outcome: Skipped, Reason: "the run stopped before its end: " + rec.Error})
		}
	default:
		rec.Outcome = Passed
		ru.judge.running = false // every step has had its turn: delta is the plan's pair
		for _, e := range sc.Expect {
			jd := ru.judge.Judge(e)
			jd.setValues(ru.judge.Reads(e))
			rec.Expectations = append(rec.Expectations, jd)
			if jd.Outcome == Failed && rec.Outcome == Passed {
				rec.Outcome = Failed
			}
			if jd.Outcome == Errored {
				rec.Outcome = Failed
			}
		}
	}
	if cerr != nil {
		// Every cleanup step ran (schedule.go): the error names each that failed.
		out, msg, pos := classifyAll(cerr)
		switch {
		case rec.Outcome == Passed || rec.Outcome == Failed && rec.Error == "":
			// The steps all ran (an expectation may have failed): the cleanup's failure is
			// the verdict, as replay has it (a failed expectation beside it said nothing of
			// the cleanup, exit 1, where replay of the record said the cleanup's error, exit 3).
			rec.Outcome, rec.Error, rec.ErrorPos = out, "cleanup: "+msg, pos
		case rec.Error != "":
			// The run had already stopped: its reason stays first, and its outcome. An
			// interrupted run's too: its verdict alone, after "running cleanup", read as if
			// the cleanup had done its work.
			if msg == ErrInterrupted.Error() {
				msg = "abandoned by a second interrupt"
			}
			rec.Error += "; cleanup: " + msg
		}
	}
	if len(ru.endedEarly) > 0 && (rec.Outcome == Passed || rec.Outcome == Failed) {
		// The steps ran without a process the scenario started for them: what they measured
		// is not what the file says, whatever the expectations found.
		rec.Outcome, rec.Error = Errored, strings.Join(ru.endedEarly, "; ")
	}
	rec.End = ru.clock.Now()
	out := ru.redact.Record(rec)
	// After the record's secrets are hidden: a digest's hex digits are not text to hide (a
	// secret "1234" in one would turn it into another, and the step into a changed one).
	out.StepParams = StepParams(sc, ru.redact)
	out.StepOptions = StepOptions(sc, ru.redact)
	ru.commandFilesAtEnd() // (ru.mu is held)
	if len(ru.fileDigests) > 0 {
		out.FileDigests = maps.Clone(ru.fileDigests)
	}
	return out
}

// notRun records the steps under steps that have no record (they never started: the run
// stopped before them) as skipped, saying so and what stopped the run.
func (ru *run) notRun(steps []*dsl.Step, stop error) {
	type key struct {
		path  string
		round int
	}
	ru.mu.Lock()
	ran := map[key]bool{}
	for _, sr := range ru.rec.Steps {
		ran[key{sr.Path, sr.Round}] = true // a sampler's records are its samples (1, 2, …)
	}
	ru.mu.Unlock()
	why := fmt.Errorf("%s, %s", NotRunReason, stopReason(stop))
	// A repeat's steps are walked in its last round (their records say it, StepRecord.Round):
	// a step of a later round that never started has a record of the same path from an
	// earlier one.
	type notStarted struct {
		step  *dsl.Step
		round int
	}
	var missing []notStarted
	var walk func([]*dsl.Step, int)
	walk = func(ss []*dsl.Step, round int) {
		for _, d := range ss {
			if !ran[key{d.Path, round}] {
				missing = append(missing, notStarted{d, round}) // unreached records its children too
				continue
			}
			if d.Kind != "repeat" {
				walk(d.Children, round)
				continue
			}
			last := 0
			for k := range ran {
				for _, c := range d.Children {
					if k.path == c.Path {
						last = max(last, k.round)
					}
				}
			}
			if last > 0 {
				walk(d.Children, last)
			}
		}
	}
	walk(steps, 0)
	for _, m := range missing {
		ru.unreached([]*dsl.Step{m.step}, why, m.round)
	}
}

// NotRunReason begins the error of a step of the setup or the steps the run's stop kept from
// starting (its outcome is skipped).
const NotRunReason = "not run: the run stopped before it"

// stopReason is what stopped the run, short: the step that did, and how it ended.
func stopReason(err error) string {
	var se *StepError
	if errors.As(err, &se) {
		label := se.Step.Path
		if se.Step.Shown != "" {
			label = se.Step.Shown
		}
		return fmt.Sprintf("at %s (%s): %s", label, se.Step.Kind, se.Kind)
	}
	return err.Error()
}

// expectationFailsEarly reports whether an expectation that reads no cleanup step fails (or
// errs) on what the run recorded so far.
func (ru *run) expectationFailsEarly(sc *dsl.Scenario) bool {
	ru.mu.Lock()
	defer ru.mu.Unlock()
	ru.judge.running = false // the steps have ended: delta is the plan's pair
	defer func() { ru.judge.running = true }()
	for _, e := range sc.Expect {
		if slices.ContainsFunc(e.Names, func(n string) bool { st := sc.Step(n); return st != nil && st.Phase == dsl.PhaseCleanup }) {
			continue
		}
		if jd := ru.judge.Judge(e); jd.Outcome == Failed || jd.Outcome == Errored {
			return true
		}
	}
	return false
}

// cleanupTimeoutError is the cleanup's timeout (cleanupTimeout) expiring, over the cleanup or
// over the catch steps (which it bounds too): a timeout (errors.Is context.DeadlineExceeded),
// which says whose, and where it is set.
type cleanupTimeoutError struct {
	d     time.Duration
	pos   dsl.Pos // where it is set (none: the default)
	catch bool
}

func (e *cleanupTimeoutError) Error() string {
	whose := "the cleanup's timeout"
	if e.catch {
		whose = "the cleanup's timeout over the catch steps"
	}
	if !e.pos.IsValid() {
		return fmt.Sprintf("%s (%s) expired", whose, e.d)
	}
	return fmt.Sprintf("%s (%s, %s) expired", whose, e.d, e.pos)
}

func (e *cleanupTimeoutError) Is(target error) bool { return target == context.DeadlineExceeded }

// scenarioTimeoutError is the scenario's timeout expiring: a timeout (errors.Is
// context.DeadlineExceeded) that says where it is set. It read as an error (ERROR, a plain
// error its cause), not as the timeout it is.
type scenarioTimeoutError struct {
	d   time.Duration
	pos dsl.Pos
}

func (e *scenarioTimeoutError) Error() string {
	if !e.pos.IsValid() {
		return fmt.Sprintf("the scenario's timeout (%s) expired", e.d)
	}
	return fmt.Sprintf("the scenario's timeout (%s, %s) expired", e.d, e.pos)
}

func (e *scenarioTimeoutError) Is(target error) bool { return target == context.DeadlineExceeded }

// DefaultCleanupRetry is how long the automatic cleanup tries again, by default, what it
// could not remove at first.
const DefaultCleanupRetry = 30 * time.Second

// steadyClock reads Clock's time as base plus the time elapsed since base, which Go measures
// on the monotonic clock when both readings have one (time.Now's do): its wall readings move
// with that clock, not with the wall clock's steps.
type steadyClock struct {
	Clock
	base time.Time
}

// Now returns base plus the time elapsed since base.
func (c steadyClock) Now() time.Time { return c.base.Add(c.Clock.Now().Sub(c.base)) }

// ErrInterrupted is the cause of a run context cancelled by an interrupt.
var ErrInterrupted = errors.New("interrupted")

// classifyAll is classify of an error that may join several (the cleanup's, of every step
// that failed): the outcome is the first's, an error's when one of them is (exit 3 whatever
// the order), and the message names each, "; "-separated.
func classifyAll(err error) (Outcome, string, *dsl.Pos) {
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return classify(err)
	}
	var out Outcome
	var msgs []string
	var pos *dsl.Pos
	for i, e := range j.Unwrap() {
		o, m, p := classify(e)
		if i == 0 || out == Failed && o != Failed {
			out = o
		}
		if pos == nil {
			pos = p
		}
		msgs = append(msgs, m)
	}
	return out, strings.Join(msgs, "; "), pos
}

// classify turns the error that stopped a run into its outcome.
func classify(err error) (Outcome, string, *dsl.Pos) {
	var se *StepError
	if errors.As(err, &se) {
		pos := se.pos()
		var f *failure
		if errors.As(se.Err, &f) {
			return Failed, se.Error(), &pos
		}
		if se.Kind == TimedOut {
			return TimedOut, se.Error(), &pos
		}
		return Errored, se.Error(), &pos
	}
	var f *failure
	if errors.As(err, &f) {
		return Failed, err.Error(), nil
	}
	if ste := (*scenarioTimeoutError)(nil); errors.As(err, &ste) && ste.pos.IsValid() {
		return TimedOut, err.Error(), &ste.pos
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return TimedOut, err.Error(), nil
	}
	return Errored, err.Error(), nil
}

// run is the state of one run.
type run struct {
	// clock is the Runner's, read as the run's start plus the time elapsed since
	// (steadyClock).
	clock Clock
	// phaseEnded is when the phase that ran last ended with its last step (see phase): the
	// next phase's first step is planned then. Zero where it did not (an error, steps to join).
	phaseEnded time.Time
	// crdShapes are the custom resources' shapes found so far, by apiVersion and kind
	// (shapeObject).
	crdShapes map[string]objectShape
	// unknown are, by get step, the names read below its custom resource that the CRD has not
	// (Result.Unknown), found before the step runs.
	unknown map[string]map[string]string
	// pickWarned is, by step path, the last warning that its selector matched more ready pods
	// than it used (schema.PodPick.Others): a sampler's later samples say it again only when
	// it changes.
	pickWarned map[string]string
	// earlier are, by named sampler of a repeat, the series its earlier rounds took (under
	// mu): a round reads its own samples (freshRound), the steps after the repeat every
	// round's (wholeSeries).
	earlier map[string]*Result
	*Runner
	sc    *dsl.Scenario
	rec   *Record
	judge *Judge

	mu sync.Mutex
	// steps tracks named steps: started and done channels for while and await. A repeat gives
	// the steps of its children new states before each round after the first (freshRound),
	// under stepsMu; read them with state.
	steps   map[string]*stepState
	stepsMu sync.RWMutex
	// created is what the run made, oldest first, for the automatic cleanup.
	created []createdThing
	// endedEarly says which local processes had ended on their own with a failure before
	// the cleanup (schema.ErrEndedEarly): the run is an error.
	endedEarly []string
	procs      map[string]schema.RunningProcess
	// writers are the streamed artifacts of the run, closed at its end (writersClosed: a
	// writer asked for later is closed).
	writers       []*artifactWriter
	writersClosed bool
	// redact hides the scenario's secret vars in what the run writes (nil: none).
	redact *Redactor
	// filesDir holds the copies of the files steps read with their ${...} filled; copies
	// maps each copy to the scenario's file.
	filesDir string
	copies   map[string]string
	// fileDigests are the digests of the files steps read, by the path they name
	// (Record.FileDigests).
	fileDigests map[string]string
	// fileStart are the digests of those files when the run started (startDigests).
	fileStart map[string]string
	// commandRead are the files of fileDigests that a command named (noteCommandFiles).
	commandRead map[string]bool
	// markReaders are the steps that read a local file or pods' logs since a mark, by the
	// mark's step ("": the run's start); fileMarks where each file ended at its mark,
	// podMarks the pods each read of pods named then.
	markReaders map[string][]*dsl.Step
	fileMarks   map[fileMarkKey]*schema.FileMark
	podMarks    map[podMarkKey]*schema.PodMark
	// deferred are the steps whose objects' kinds the cluster did not serve before the run
	// because an earlier step applies their CRD; each is checked when it first starts.
	deferred map[*dsl.Step]bool
	// abandoned are the records of the steps the runner stopped waiting for
	// (dispatchBounded): what their driver records afterwards is dropped.
	abandoned map[*StepRecord]bool
	// stillRunning are the abandoned steps, for the cleanup: what one creates after the
	// automatic cleanup's first pass is removed by another (cleanupLate).
	stillRunning []abandonedStep
	// seen are the objects steps of the run applied, deleted, read or matched by name
	// (schema.Runtime.SawObjects), by cluster, kind, namespace and name.
	seen map[seenKey]bool
}

// seenKey is an object the run has seen: its cluster ("" the only one), kind
// (schema.KindKey), namespace and name.
type seenKey struct{ cluster, kind, ns, name string }

type stepState struct {
	// dispatched says the step has been handed to be run (it may wait for its planned start);
	// settled that it has ended, or can no longer start (its block or phase ended without it):
	// until then, outcome.<step> of one that has not started reads "pending", not "skipped".
	dispatched, settled atomic.Bool
	once                sync.Once
	started             chan struct{}
	doneOnce            sync.Once
	done                chan struct{}
	err                 error
	start               time.Time
}

// hasStarted says whether the step has started.
func (st *stepState) hasStarted() bool {
	select {
	case <-st.started:
		return true
	default:
		return false
	}
}

func (st *stepState) markStarted(t time.Time) {
	st.once.Do(func() { st.start = t; close(st.started) })
}

func (st *stepState) markDone(err error) {
	st.doneOnce.Do(func() { st.err = err; close(st.done) })
}

// state is the named step's state in the current round (nil for a name the scenario does
// not have).
func (ru *run) state(name string) *stepState {
	ru.stepsMu.RLock()
	defer ru.stepsMu.RUnlock()
	return ru.steps[name]
}

// freshRound gives the named steps under children new states, before a repeat's next round:
// a sampler's while step, an await, started/ended and outcome then read this round's run of
// them, not the last round's (a sampler while a step of the round took no sample in the
// second round: its while step had "ended" in the first). A round joins its background steps
// (repeat), so none of the last round's still runs; one that did would keep its state.
func (ru *run) freshRound(children []*dsl.Step) {
	var fresh []*dsl.Step
	ru.stepsMu.Lock()
	dsl.Walk(children, func(c *dsl.Step) {
		if st := ru.steps[c.Name]; c.Name != "" && st != nil && (isDone(st.done) || !st.dispatched.Load()) {
			ru.steps[c.Name] = &stepState{started: make(chan struct{}), done: make(chan struct{})}
			fresh = append(fresh, c)
		}
	})
	ru.stepsMu.Unlock()
	// Nor do their results and times: a wait of round 2 over the round's background load
	// held at its first poll on round 1's result, before the load had sent anything. Nor a
	// sampler's series: a wait of round 2 until g.count >= 3 held at its first poll on round
	// 1's samples, and an until held over samples no round took. The series is set aside and
	// joined again at the repeat's end (wholeSeries; docs/language.md, "Steps that fail inside
	// a repeat").
	ru.mu.Lock()
	defer ru.mu.Unlock()
	for _, c := range fresh {
		if r := ru.rec.Results[c.Name]; r != nil && r.Sampled {
			if ser, ok := r.Value.(*SeriesRecord); ok {
				if ru.earlier == nil {
					ru.earlier = map[string]*Result{}
				}
				ru.earlier[c.Name] = joinSeries(ru.earlier[c.Name], r)
				// From now on the record's series reads from here (replay judges as the run).
				ser.Views = append(ser.Views, schema.SeriesView{At: ru.clock.Now(), From: len(ser.Samples)})
			}
		}
		delete(ru.rec.Results, c.Name)
		if ru.judge.roundFrom == nil {
			ru.judge.roundFrom = map[string]int{}
		}
		ru.judge.roundFrom[c.Name] = len(ru.rec.Steps)
	}
}

// wholeSeries gives the named samplers under children, at the end of their repeat, the
// samples of every round, which its rounds read apart (freshRound).
func (ru *run) wholeSeries(children []*dsl.Step) {
	ru.mu.Lock()
	defer ru.mu.Unlock()
	dsl.Walk(children, func(c *dsl.Step) {
		if prev := ru.earlier[c.Name]; c.Name != "" && prev != nil {
			r := joinSeries(prev, ru.rec.Results[c.Name])
			if ser, ok := r.Value.(*SeriesRecord); ok {
				ser.Views = append(ser.Views, schema.SeriesView{At: ru.clock.Now()})
			}
			ru.rec.Results[c.Name] = r
			delete(ru.earlier, c.Name)
		}
	})
}

// joinSeries is the sampled result b, a series, after a's samples (a or b nil: the other). A
// series whose sampler saw only the ends of what it sampled during in one round
// (SeriesRecord.Ends) says so of the whole.
func joinSeries(a, b *Result) *Result {
	if b == nil {
		return a
	}
	if a == nil {
		return b
	}
	as, _ := a.Value.(*SeriesRecord)
	bs, _ := b.Value.(*SeriesRecord)
	if as == nil || bs == nil {
		return b
	}
	bs.Samples = append(slices.Clip(as.Samples), bs.Samples...)
	bs.Views = append(slices.Clip(as.Views), bs.Views...)
	bs.Ends = bs.Ends || as.Ends
	return b
}

// pending says whether the named step has not started and still may: it has not ended, and
// neither its block nor its phase has ended without it.
func (ru *run) pending(name string) bool {
	st := ru.state(name)
	return st != nil && !st.settled.Load()
}

// settle notes that the steps under s (s itself too, with self) that were not handed to be
// run can no longer start: the block or phase they are in has ended. One handed on (a
// background step waiting for its at) settles when it ends.
func (ru *run) settle(steps []*dsl.Step) {
	dsl.Walk(steps, func(d *dsl.Step) {
		if st := ru.state(d.Name); st != nil && d.Name != "" && !st.dispatched.Load() {
			st.settled.Store(true)
		}
	})
}

// createdThing is something the automatic cleanup removes; sr is the record of the step that
// created it (nil for the run's own, a namespace).
type createdThing struct {
	desc   string
	remove func(ctx context.Context) error
	sr     *StepRecord
}

func (ru *run) created1(desc string, remove func(ctx context.Context) error, sr *StepRecord) {
	ru.mu.Lock()
	ru.created = append(ru.created, createdThing{desc, remove, sr})
	ru.mu.Unlock()
}

// autoCleanup removes what the run created, newest first. What it cannot remove (a cluster
// that stopped answering, a process that would not end) is tried again with backoff for
// Defaults.CleanupRetry, within ctx; what is still there then is the record's Leftovers, as is
// what an abandoned cleanup did not reach.
func (ru *run) autoCleanup(ctx context.Context) {
	ru.mu.Lock()
	things := ru.created
	ru.created = nil
	ru.mu.Unlock()
	type pending struct {
		createdThing
		tries int
		err   error
	}
	var failed []*pending
	try := func(ctx context.Context, t *pending) bool {
		t.tries++
		ru.observe(Event{Cleanup: "removing " + t.desc})
		msg := "removed " + t.desc
		if t.tries > 1 {
			msg = fmt.Sprintf("removed %s (attempt %d)", t.desc, t.tries)
		}
		bad := false
		switch err := t.remove(ctx); {
		case errors.Is(err, schema.ErrAlreadyGone):
			msg = "already gone: " + t.desc // a step or a command deleted it
		case errors.Is(err, schema.ErrKilled):
			// Removed, but not as asked: what the process does on TERM did not run.
			msg += " (" + strings.TrimPrefix(err.Error(), schema.ErrKilled.Error()+": ") + ")"
		case errors.Is(err, schema.ErrEndedEarly):
			msg = fmt.Sprintf("%s had already ended: %s", t.desc, strings.TrimPrefix(err.Error(), schema.ErrEndedEarly.Error()+": "))
			ru.mu.Lock()
			ru.endedEarly = append(ru.endedEarly, msg)
			if t.sr != nil {
				// The step that started it keeps it too: the run's error and cleanup
				// lines alone, edited, would make a run that erred pass.
				t.sr.Warnings = append(t.sr.Warnings, EndedEarlyWarning+msg)
			}
			ru.mu.Unlock()
			bad = true
		case errors.Is(err, schema.ErrEndedOnItsOwn):
			msg = fmt.Sprintf("%s had already ended: %s", t.desc, strings.TrimPrefix(err.Error(), schema.ErrEndedOnItsOwn.Error()+": "))
		case err != nil:
			if t.err == nil || ctx.Err() == nil {
				t.err = err // an attempt cut by the retry time's end keeps the last one's error
			}
			return false
		}
		ru.addCleanup(msg)
		ru.observe(Event{Cleanup: msg, CleanupDone: true, CleanupBad: bad})
		return true
	}
	// Each thing's first attempt has the retry time at most (as Chainsaw gives each object its
	// cleanup timeout): a deletion that never ends (a finalizer that nothing removes) took the
	// whole cleanup's time, and every thing created before it (an object, a process still
	// running) was abandoned, left behind. Cut, the attempt is tried again below.
	first := func(t *pending) bool {
		if ru.defaults.CleanupRetry <= 0 { // Defaults without one: the cleanup's time alone
			return try(ctx, t)
		}
		actx, cancel := context.WithTimeoutCause(ctx, ru.defaults.CleanupRetry,
			fmt.Errorf("the automatic cleanup's time for one attempt (%s) expired", ru.defaults.CleanupRetry))
		defer cancel()
		return try(actx, t)
	}
	for i := len(things) - 1; i >= 0; i-- {
		t := &pending{createdThing: things[i]}
		switch {
		case ru.keep && !t.always():
			ru.addCleanup("kept " + t.desc + " (--keep)")
		case ctx.Err() != nil:
			ru.leftover(abandonedLine+t.desc, t.desc)
		case !first(t):
			failed = append(failed, t)
		}
	}
	if len(failed) > 0 && ctx.Err() == nil {
		ru.observe(Event{Cleanup: fmt.Sprintf("%d not removed yet (%v): retrying for up to %s", len(failed), failed[0].err, ru.defaults.CleanupRetry)})
	}
	// Again, oldest failure first (the order of the first pass), until all are removed or
	// the retry time is over.
	// An attempt in flight ends with the retry time too: against a server that hangs each
	// request, the last one ran up to the client's request timeout past it.
	deadline := ru.clock.Now().Add(ru.defaults.CleanupRetry)
	rctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	for backoff := cleanupBackoff; len(failed) > 0 && rctx.Err() == nil; backoff = min(2*backoff, maxCleanupBackoff) {
		next := ru.clock.Now().Add(backoff)
		if next.After(deadline) || ru.clock.Sleep(rctx, next, nil) != nil {
			break
		}
		failed = slices.DeleteFunc(failed, func(t *pending) bool { return rctx.Err() == nil && try(rctx, t) })
	}
	for _, t := range failed {
		msg := fmt.Sprintf("%s%s: %v", failedLine, t.desc, t.err)
		if t.tries > 1 {
			msg = fmt.Sprintf("%s%s (%d attempts): %v", failedLine, t.desc, t.tries, t.err)
		}
		ru.leftover(msg, t.desc)
		ru.observe(Event{Cleanup: msg, CleanupDone: true, CleanupBad: true})
	}
}

// abandonedStep is a step that creates what the automatic cleanup removes (an apply, a
// process) which the runner stopped waiting for (dispatchBounded): returned closes when its
// driver returns at last; what is what the record's Leftovers say of it while it has not.
type abandonedStep struct {
	what     string
	returned chan struct{}
}

// cleanupLate gives the abandoned steps still running another StopGrace (within ctx, the
// cleanup's) to return, then removes what they created since the automatic cleanup's first
// pass: an apply abandoned mid-call whose object the API server created after that pass was
// left on the cluster. One that has still not returned is named in the record's Leftovers:
// what it creates once labrun has ended, no cleanup removes.
func (ru *run) cleanupLate(ctx context.Context) {
	ru.mu.Lock()
	steps := ru.stillRunning
	ru.mu.Unlock()
	if ru.keep {
		// --keep: what they create stays, as the rest does; a process is stopped all the same.
		steps = slices.DeleteFunc(slices.Clone(steps), func(a abandonedStep) bool {
			if !strings.HasPrefix(a.what, "process ") {
				ru.addCleanup("kept what " + a.what + " creates (--keep)")
				return true
			}
			return false
		})
	}
	if len(steps) == 0 {
		return
	}
	deadline := ru.clock.Now().Add(StopGrace)
	for _, a := range steps {
		_ = ru.clock.Sleep(ctx, deadline, a.returned)
	}
	ru.mu.Lock()
	late := len(ru.created) > 0
	ru.mu.Unlock()
	if late {
		ru.autoCleanup(ctx)
	}
	for _, a := range steps {
		if !isDone(a.returned) {
			ru.leftover(notWaitedLine+a.what+" had not returned when the cleanup ended; what it creates after is not removed", a.what)
		}
	}
}

// cleanupBackoff is the first wait before the automatic cleanup tries again; it doubles up
// to maxCleanupBackoff.
const (
	cleanupBackoff    = 250 * time.Millisecond
	maxCleanupBackoff = 4 * time.Second
)

// The beginnings of the cleanup's lines that say what it left (leftover): "failed to remove
// what: …" or "failed to remove what (3 attempts): …", "abandoned: what", "not waited for: what
// had not returned …". No other line of the cleanup begins so (Record.leftoverContradictions).
const (
	failedLine    = "failed to remove "
	abandonedLine = "abandoned: "
	notWaitedLine = "not waited for: "
)

// leftoverLine says whether line, a line of a record's cleanup, says that the cleanup left
// something, and, when what is not "", that it is what.
func leftoverLine(line, what string) bool {
	for _, p := range []string{failedLine, abandonedLine, notWaitedLine} {
		rest, ok := strings.CutPrefix(line, p)
		if !ok {
			continue
		}
		if what == "" {
			return true
		}
		rest, ok = strings.CutPrefix(rest, what)
		switch {
		case !ok:
		case p == failedLine:
			return strings.HasPrefix(rest, ": ") || strings.HasPrefix(rest, " (")
		case p == abandonedLine:
			return rest == ""
		default:
			return strings.HasPrefix(rest, " had not returned")
		}
	}
	return false
}

// leftover records what the automatic cleanup left: msg in Cleanup, what in Leftovers.
func (ru *run) leftover(msg, what string) {
	ru.mu.Lock()
	ru.rec.Cleanup = append(ru.rec.Cleanup, msg)
	ru.rec.Leftovers = append(ru.rec.Leftovers, what)
	ru.mu.Unlock()
}

// always reports whether a created thing is removed even with --keep: local processes die
// with labrun anyway.
func (t createdThing) always() bool { return len(t.desc) > 8 && t.desc[:8] == "process " }

func (ru *run) addCleanup(s string) {
	ru.mu.Lock()
	ru.rec.Cleanup = append(ru.rec.Cleanup, s)
	ru.mu.Unlock()
}

// offset is t as an offset from the start of the run.
func (ru *run) offset(t time.Time) time.Duration { return t.Sub(ru.rec.Start) }

// makeNamespaces creates the run's ephemeral namespaces, before its setup. The automatic
// cleanup deletes them last and does not wait for them to go: no other run uses their names.
func (ru *run) makeNamespaces(ctx context.Context) error {
	sc := ru.sc
	if len(sc.Ephemeral) == 0 {
		return nil
	}
	if ru.target.Cluster == nil || sc.Generated == nil {
		return fmt.Errorf("ephemeral namespaces need a cluster and a run id (the %s target has no cluster)", ru.target.Name)
	}
	var objs []schema.Object
	for _, e := range sc.Ephemeral {
		md := map[string]any{"name": sc.Generated[e.Key]}
		if len(e.Labels) > 0 {
			md["labels"] = e.Labels
		}
		if len(e.Annotations) > 0 {
			md["annotations"] = e.Annotations
		}
		objs = append(objs, schema.Object{"apiVersion": "v1", "kind": "Namespace", "metadata": md})
	}
	ctx, cancel := context.WithTimeout(ctx, ru.defaults.Step)
	defer cancel()
	// In every cluster of the scenario (one timeline, one name per key in all of them).
	clusters := sc.ClusterNames()
	if len(clusters) == 0 {
		clusters = []string{""}
	}
	for _, name := range clusters {
		cl, in := ru.target.Cluster, ""
		if t := ru.target.Clusters[name]; t != nil && t.Cluster != nil {
			cl, in = t.Cluster, " in cluster "+name
		}
		res, err := cl.Apply(ctx, objs, nil, "")
		for _, ref := range res.Created {
			ru.created1("ephemeral Namespace "+ref.Name+in+" (its deletion is not waited for)", func(ctx context.Context) error {
				if err := cl.Delete(ctx, []schema.ObjectRef{ref}, false); err != nil {
					return err
				}
				return heldByFinalizers(ctx, cl, ref.Name)
			}, nil)
		}
		if err != nil {
			return fmt.Errorf("creating the ephemeral namespaces%s: %w", in, err)
		}
	}
	return nil
}

// heldByFinalizers says, by one read of the namespace just deleted, that its own finalizers
// (metadata.finalizers, which a step or a controller added) hold it Terminating: nothing
// removes them but whoever added them, so it stays, and the cleanup that did not wait for it
// must not say it removed it (Chainsaw fails such a test). nil when it is gone, has none, or
// cannot be read (its deletion was accepted). Its content's finalizers are not seen here:
// the namespace controller meets them only later.
func heldByFinalizers(ctx context.Context, cl schema.Cluster, name string) error {
	v, err := cl.Get(ctx, schema.Get{APIVersion: "v1", Kind: "Namespace", Name: name, Path: "metadata"})
	if err != nil {
		return nil
	}
	md, _ := v.(map[string]any)
	fins, _ := md["finalizers"].([]any)
	if md["deletionTimestamp"] == nil || len(fins) == 0 {
		return nil
	}
	names := make([]string, 0, len(fins))
	for _, f := range fins {
		names = append(names, fmt.Sprint(f))
	}
	return fmt.Errorf("it stays Terminating: its finalizers (%s) hold it until what added them removes them (by hand: kubectl patch namespace %s --type=merge -p '{\"metadata\":{\"finalizers\":null}}')", strings.Join(names, ", "), name)
}

// clusterRecords are the scenario's clusters with what each connected to.
func clusterRecords(sc *dsl.Scenario, t *schema.Target) []ClusterRecord {
	var out []ClusterRecord
	for _, c := range sc.Clusters {
		where := ""
		if ct := t.Clusters[c.Name]; ct != nil {
			where = ct.Describe
		}
		out = append(out, ClusterRecord{Name: c.Name, Where: where})
	}
	return out
}
