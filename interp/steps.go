package interp

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"time"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/schema"
)

// KindUsage returns a usage line for every step kind of the registry, sorted by kind.
func KindUsage() []string {
	var out []string
	for _, k := range schema.KindNames() {
		out = append(out, fmt.Sprintf("%-9s %s", k, schema.Kinds[k].Usage))
	}
	return out
}

// resolve evaluates a step's ${...} into its parameters.
func (ru *run) resolve(s *dsl.Step) (schema.Params, error) {
	if !s.HasTemplates() {
		return s.Params, nil
	}
	ru.mu.Lock()
	for _, t := range s.Templates() {
		for _, e := range t.Exprs() {
			if reason := ru.judge.noValue(e); reason != "" {
				ru.mu.Unlock()
				return nil, fmt.Errorf("%s: ${%s}: %s", e.Pos, e.Src, reason)
			}
		}
	}
	env := ru.judge.Env()
	ru.mu.Unlock()
	params, err := s.Resolve(env)
	var ee *dsl.EvalError
	if errors.As(err, &ee) {
		// As an expectation says it: ${scan.stdout} of a step that did not run (a cleanup's
		// read of a step the run stopped before) has no value, where expr said "cannot get
		// stdout from <nil>".
		ru.mu.Lock()
		why := ru.judge.evalWhy(ee.Expr, ee.Err)
		ru.mu.Unlock()
		if why != "" {
			return nil, fmt.Errorf("%s: ${%s}: %s", ee.Expr.Pos, ee.Expr.Src, why)
		}
	}
	return params, err
}

// dispatch runs a step with its resolved parameters: the namespace guard (the same check vet
// makes, now with the cluster's view of the objects), then the kind's Run.
func (ru *run) dispatch(ctx context.Context, s *dsl.Step, sr *StepRecord, params schema.Params) error {
	if params == nil {
		return fmt.Errorf("step %s has no parameters", s.Path) // the loader refuses such a step
	}
	// preflight has refused a target without the driver; a step whose ${...} changed what it
	// needs is checked again here, so that no driver the target lacks is ever called.
	if need := params.Needs(); need.Driver != "" && !ru.targetOf(s).Drivers()[need.Driver] {
		return errors.New(schema.MissingDriver(s.Kind, need, ru.target.Name))
	}
	ru.noteCommandFiles(params)
	err := ru.runGuarded(ctx, s, sr, params)
	var sp *stepPanic
	if s.ExpectFail && !errors.As(err, &sp) { // a panic is never what a step was expected to do
		return ru.expectedFailure(ctx, s, sr, err)
	}
	return err
}

// runGuarded runs the namespace guard and the kind's Run, turning a panic into the step's error
// (an infrastructure error: the run goes on to its cleanup and writes its report). The stack is
// kept as the step's artifact panic.txt.
func (ru *run) runGuarded(ctx context.Context, s *dsl.Step, sr *StepRecord, params schema.Params) (err error) {
	rt := &stepRuntime{ru: ru, s: s, sr: sr}
	defer func() {
		if v := recover(); v != nil {
			err = &stepPanic{kind: s.Kind, value: v}
			// The panic may have come while the run's lock was held (a bug in the runtime
			// itself): the stack is then left out rather than wait for the lock forever.
			if ru.mu.TryLock() {
				ru.rec.Artifacts = append(ru.rec.Artifacts, &ArtifactRecord{Step: rt.Label(), Name: "panic.txt", Data: debug.Stack()})
				ru.mu.Unlock()
			}
		}
	}()
	decoded, err := ru.guard(ctx, s, params)
	if err != nil {
		return ru.fromCopies(err)
	}
	rt.guarded = decoded
	switch p := params.(type) {
	case *schema.Get:
		ru.shapeObject(ctx, rt, s, p)
	case *schema.Wait:
		if err := ru.checkPartials(ctx, rt, s, p); err != nil {
			return err
		}
	}
	return ru.fromCopies(params.Run(schema.WithRetriedAnswers(schema.WithPodPicks(ctx, rt.podPicked), rt.retried), rt))
}

// podPicked notes what a selector picked for the step: the step's record (and its console
// line) names the pod it used, and warns where the selector matched other ready pods, which
// the step did not read (a snapshot of one replica of three counts one replica's requests).
func (rt *stepRuntime) podPicked(p schema.PodPick) {
	ru := rt.ru
	ru.mu.Lock()
	defer ru.mu.Unlock()
	if ru.abandoned[rt.sr] {
		return
	}
	if rt.sr.Read == "" && len(p.Used) > 0 {
		used := make([]string, len(p.Used))
		for i, n := range p.Used {
			used[i] = p.Namespace + "/" + n
		}
		rt.sr.Read = "pod " + used[0]
		if len(used) > 1 {
			rt.sr.Read = "pods " + strings.Join(used, ", ")
		}
		if rt.s.Kind != "snapshot" { // a snapshot writes its pod.txt with the pod's uid
			// The pods used, one a line, as an artifact (schema.PodArtifact): the record says
			// them once, in the step's read, which an edit changes unseen but for this.
			n := schema.PodArtifact
			if rt.sr.Sample > 0 {
				n = fmt.Sprintf("%04d-%s", rt.sr.Sample, n)
			}
			ru.rec.Artifacts = append(ru.rec.Artifacts, &ArtifactRecord{Step: rt.Label(), Name: n, Data: []byte(strings.Join(used, "\n") + "\n")})
		}
	}
	// A sampler's later samples say it again only when it changed; every other execution of
	// the step (a repeat's next round, a sampler's first sample in it) picks anew, and its
	// record, which names the pod it read, says what that pick left out.
	w := p.Others()
	if w == "" || slices.Contains(rt.sr.Warnings, w) || rt.sr.Sample > 1 && ru.pickWarned[rt.s.Path] == w {
		return
	}
	if ru.pickWarned == nil {
		ru.pickWarned = map[string]string{}
	}
	ru.pickWarned[rt.s.Path] = w
	rt.sr.Warnings = append(rt.sr.Warnings, w)
}

// stepPanic is a panic inside a step's Run: a bug of labrun's (or of a driver), reported as the
// step's error instead of ending labrun with the cluster left as the run made it.
type stepPanic struct {
	kind  string
	value any
}

func (e *stepPanic) Error() string {
	return fmt.Sprintf("the %s step panicked (a bug in labrun: please report it, with the step's panic.txt artifact): %v", e.kind, e.value)
}

// expectFailSucceeded begins the error of a step with expectFail that succeeded (it failed).
const expectFailSucceeded = "expectFail: the step succeeded"

// expectedFailure judges a step with expectFail by the error its Run returned (ctx is the
// step's context). A step that failed as expected passes, its error kept in the record
// (error.<step>). One that succeeded fails. One whose error does not match the pattern keeps
// that error (an error stays an error, a failure a failure), saying what was expected. The
// step's own timeout is a failure like any other; an interrupt, the scenario's timeout or a
// parallel block's cancellation is never expected: it is returned as it is. An error that
// says the step tested nothing (schema.NotTested: a command that did not run, an expression
// that could not be evaluated) is no failure of what it tests: it stays an error unless the
// pattern matches that error itself.
func (ru *run) expectedFailure(ctx context.Context, s *dsl.Step, sr *StepRecord, err error) error {
	pattern := ""
	if s.ExpectFailRE != nil {
		pattern = fmt.Sprintf(" with an error matching %q", s.ExpectFailSrc)
	}
	if err == nil {
		return &failure{fmt.Sprintf("%s, but it was expected to fail%s", expectFailSucceeded, pattern)}
	}
	var timedOut *timeoutError
	if ctx.Err() != nil {
		if !errors.As(context.Cause(ctx), &timedOut) {
			return err
		}
	}
	msg := err.Error()
	var nt schema.NotTested
	if errors.As(err, &nt) {
		// A typo in a command, a value the expression reads that does not exist: not the
		// failure the step was written to show. A pattern is matched against what says why
		// (a wait's "last: …"), not against the timeout that ended it.
		why, expects := nt.NotTested()
		note := ""
		switch {
		case s.ExpectFailRE == nil:
			note = fmt.Sprintf(" (expectFail: %s; %s; give a pattern that matches this error if it is the failure expected)", why, expects)
		case !s.ExpectFailRE.MatchString(nt.Error()):
			note = fmt.Sprintf(" (expectFail: expected an error matching %q; %s, which the pattern does not match)", s.ExpectFailSrc, why)
		}
		if note != "" {
			if isFailure(err) {
				return &failure{msg + note}
			}
			return fmt.Errorf("%w%s", err, note)
		}
	} else {
		if timedOut != nil {
			msg = timedOut.Error()
		}
		if s.ExpectFailRE != nil && !expectedMatch(s, err, msg) {
			if timedOut != nil {
				err = timedOut
			}
			if isFailure(err) {
				return &failure{fmt.Sprintf("%s (expectFail: expected an error matching %q)", msg, s.ExpectFailSrc)}
			}
			return fmt.Errorf("%w (expectFail: expected an error matching %q)", err, s.ExpectFailSrc)
		}
		if un := unexpectedRefusals(s, err); len(un) > 0 {
			note := fmt.Sprintf(" (expectFail: expected each object's refusal to match %q; %d of %d do not: %s)",
				s.ExpectFailSrc, len(un), len(refusals(err)), strings.Join(un, "; "))
			if isFailure(err) {
				return &failure{msg + note}
			}
			return fmt.Errorf("%w%s", err, note)
		}
	}
	ru.mu.Lock()
	if !ru.abandoned[sr] { // abandoned, the step timed out and its runner no longer waits
		sr.ExpectedError = msg
		sr.Warnings = append(sr.Warnings, expectFailWarning+msg)
	}
	ru.mu.Unlock()
	return nil
}

// unexpectedRefusals are the refusals of an apply's objects (each object's error, as the
// driver joins them: an apply writes every object) that the step's expectFail pattern does not
// match. One object's refusal matching the pattern made the whole step's error match it, and
// the step passed over another object refused for another reason: Chainsaw's apply with an
// expect on the object named bad fails when the object named good is refused too (its error
// was not expected). Nil for other steps, without a pattern, or with a single refusal (the
// pattern has judged it).
func unexpectedRefusals(s *dsl.Step, err error) []string {
	if _, ok := s.Params.(*schema.Apply); !ok || s.ExpectFailRE == nil {
		return nil
	}
	parts := refusals(err)
	if len(parts) < 2 {
		return nil
	}
	var out []string
	for _, e := range parts {
		if !s.ExpectFailRE.MatchString(matchText(e)) {
			out = append(out, e.Error())
		}
	}
	return out
}

// unsourced is an apply's refusal of one object that can say itself without where the object
// was written (its file and line): the API server's reason and the object, which an expectFail
// pattern is matched against.
type unsourced interface{ Unsourced() string }

// matchText is what an expectFail pattern is matched against of one error: an object's
// refusal without its file and line, else the error.
func matchText(err error) string {
	if u, ok := err.(unsourced); ok {
		return u.Unsourced()
	}
	return err.Error()
}

// expectedMatch reports whether the step's expectFail pattern matches its error msg (of err):
// for an apply whose error joins objects' refusals, one of those refusals without its file
// and line (unexpectedRefusals then asks it of each); else msg.
func expectedMatch(s *dsl.Step, err error, msg string) bool {
	if _, ok := s.Params.(*schema.Apply); ok {
		parts := refusals(err)
		if len(parts) == 0 {
			if _, ok := err.(unsourced); ok {
				parts = []error{err}
			}
		}
		if slices.ContainsFunc(parts, func(e error) bool { _, ok := e.(unsourced); return ok }) {
			return slices.ContainsFunc(parts, func(e error) bool { return s.ExpectFailRE.MatchString(matchText(e)) })
		}
	}
	return s.ExpectFailRE.MatchString(msg)
}

// refusals are the errors joined in err (errors.Join), nil when it joins none.
func refusals(err error) []error {
	var j interface{ Unwrap() []error }
	if !errors.As(err, &j) {
		return nil
	}
	return j.Unwrap()
}

// targetOf is the target a step runs on: its cluster's, in a scenario that declares clusters,
// else the run's.
func (ru *run) targetOf(s *dsl.Step) *schema.Target {
	if t := ru.target.Clusters[ru.sc.ClusterOf(s)]; t != nil {
		return t
	}
	return ru.target
}

// namespace picks a step's namespace: its own, else the scenario's first.
func (ru *run) namespace(ns string) string {
	if ns != "" {
		return ns
	}
	return ru.sc.DefaultNamespace()
}

// stepRuntime is the schema.Runtime of one execution of one step.
type stepRuntime struct {
	ru *run
	s  *dsl.Step
	sr *StepRecord
	// guarded are the objects the namespace guard decoded of the step's objects and files,
	// right before its Run, with the same parameters (nil: none).
	guarded []schema.ObjectRef
}

// GuardedObjects are the objects the namespace guard decoded of the step's objects and files
// (schema.GuardedObjects).
func (rt *stepRuntime) GuardedObjects() ([]schema.ObjectRef, bool) {
	return rt.guarded, rt.guarded != nil
}

func (rt *stepRuntime) Target() *schema.Target     { return rt.ru.targetOf(rt.s) }
func (rt *stepRuntime) Namespace(ns string) string { return rt.ru.namespace(ns) }
func (rt *stepRuntime) Label() string              { return or(rt.s.Name, rt.s.Path) }
func (rt *stepRuntime) InCleanup() bool            { return rt.s.Phase == dsl.PhaseCleanup }
func (rt *stepRuntime) Sample() int                { return rt.sr.Sample }
func (rt *stepRuntime) RunStart() time.Time        { return rt.ru.rec.Start }
func (rt *stepRuntime) Now() time.Time             { return rt.ru.clock.Now() }

func (rt *stepRuntime) File(path string) string { return rt.ru.file(path) }

func (rt *stepRuntime) FileMark(since, path string) *schema.FileMark {
	rt.ru.mu.Lock()
	defer rt.ru.mu.Unlock()
	return rt.ru.fileMarks[fileMarkKey{since, path}]
}

func (rt *stepRuntime) PodMark(since string, ref schema.PodRef) *schema.PodMark {
	rt.ru.mu.Lock()
	defer rt.ru.mu.Unlock()
	return rt.ru.podMarks[podMarkKey{since, rt.ru.sc.ClusterOf(rt.s), ref.Namespace, ref.Pod, ref.Selector}]
}

func (rt *stepRuntime) Sleep(ctx context.Context, d time.Duration) error {
	return rt.ru.clock.Sleep(ctx, rt.ru.clock.Now().Add(d), nil)
}

func (rt *stepRuntime) Artifact(name string, data []byte) {
	rt.ru.mu.Lock()
	if rt.ru.abandoned[rt.sr] {
		rt.ru.mu.Unlock()
		return
	}
	rt.ru.rec.Artifacts = append(rt.ru.rec.Artifacts, &ArtifactRecord{Step: rt.Label(), Name: name, Data: data})
	rt.ru.mu.Unlock()
}

func (rt *stepRuntime) Warn(msg string) { rt.warn(msg, false) }

// warn adds msg to the step's warnings (once: unless it has it already), unless the step was
// abandoned.
func (rt *stepRuntime) warn(msg string, once bool) {
	rt.ru.mu.Lock()
	defer rt.ru.mu.Unlock()
	if rt.ru.abandoned[rt.sr] || once && slices.Contains(rt.sr.Warnings, msg) {
		return
	}
	rt.sr.Warnings = append(rt.sr.Warnings, msg)
}

// retried warns, once each, of the answers the step's client retried without returning them
// (an API server's 429): a step whose time ran out meanwhile says why it did not end sooner.
func (rt *stepRuntime) retried(msg string) { rt.warn(msg, true) }

func (rt *stepRuntime) Created(what string, undo func(context.Context) error) {
	if c := rt.ru.sc.ClusterOf(rt.s); c != "" && rt.s.Params != nil && rt.s.Params.Needs().Cap == schema.CapCluster {
		what += " in cluster " + c // the cleanup says which cluster each object was in
	}
	rt.ru.created1(what, undo, rt.sr)
}

func (rt *stepRuntime) Process(name string) (schema.RunningProcess, bool) {
	rt.ru.mu.Lock()
	defer rt.ru.mu.Unlock()
	p, ok := rt.ru.procs[name]
	return p, ok
}

func (rt *stepRuntime) AddProcess(name string, p schema.RunningProcess) {
	rt.ru.mu.Lock()
	rt.ru.procs[name] = p
	rt.ru.mu.Unlock()
}

func (rt *stepRuntime) Started(step string) (time.Time, bool) {
	st := rt.ru.state(step)
	if st == nil {
		return time.Time{}, false
	}
	select {
	case <-st.started:
		return st.start, true
	default:
		return time.Time{}, false
	}
}

func (rt *stepRuntime) Judge() error {
	s := rt.s
	jd := rt.ru.judgeNow(s.Expr)
	switch jd.Outcome {
	case Passed:
		return nil
	case Errored: // no answer, true or false: what the step claims was not tested
		if jd.emptyUntil { // a get's or a config's until over an empty collection: not there yet
			return &schema.EmptyUntil{Err: fmt.Errorf("assert %s: %s", s.Expr.Src, jd.Reason)}
		}
		if jd.ReasonPos != nil { // the part that erred: int(p.stdout) of a stdout that is no number
			return &schema.NotJudged{Err: fmt.Errorf("assert %s: %s: %s", s.Expr.Src, jd.ReasonPos, jd.Reason)}
		}
		return &schema.NotJudged{Err: fmt.Errorf("assert %s: %s", s.Expr.Src, jd.Reason)}
	}
	if jd.Reason != "" {
		return &failure{fmt.Sprintf("assert %s failed: %s", s.Expr.Src, jd.Reason)}
	}
	return &failure{fmt.Sprintf("assert failed: %s", jd.Explanation)}
}

func (rt *stepRuntime) SawObjects(refs []schema.ObjectRef) {
	cluster := rt.ru.sc.ClusterOf(rt.s)
	rt.ru.mu.Lock()
	defer rt.ru.mu.Unlock()
	if rt.ru.seen == nil {
		rt.ru.seen = map[seenKey]bool{}
	}
	for _, r := range refs {
		rt.ru.seen[seenKey{cluster, schema.KindKey(r.Kind), r.Namespace, r.Name}] = true
	}
}

// Unseen implements schema.Runtime. An object outside the scenario's namespaces is the
// world's, unless the run saw an object of its kind and name in one of the scenario's
// namespaces and never in this one: that object looked for in the wrong namespace (a file's
// namespace: default), whose absence there would hold at once (vet says so of what it reads).
func (rt *stepRuntime) Unseen(r schema.ObjectRef) (bool, []string) {
	if r.Name == "" || r.Namespace == "" {
		return false, nil
	}
	cluster := rt.ru.sc.ClusterOf(rt.s)
	allowed := rt.ru.sc.Allowed()
	rt.ru.mu.Lock()
	defer rt.ru.mu.Unlock()
	if rt.ru.seen[seenKey{cluster, schema.KindKey(r.Kind), r.Namespace, r.Name}] {
		return false, nil
	}
	if slices.Contains(allowed, r.Namespace) {
		return true, nil
	}
	var in []string
	for _, ns := range allowed {
		if rt.ru.seen[seenKey{cluster, schema.KindKey(r.Kind), ns, r.Name}] {
			in = append(in, ns)
		}
	}
	return len(in) > 0, in // none: not an object of the scenario's namespaces, the world's
}

func (rt *stepRuntime) WaitUntil(ctx context.Context, interval time.Duration) error {
	return rt.ru.waitUntil(ctx, rt.s.Expr, interval)
}

func (rt *stepRuntime) Block(ctx context.Context) error {
	s := rt.s
	switch s.Params.(type) {
	case *schema.Parallel:
		return rt.ru.parallel(ctx, s, rt.ru.rec.Start.Add(rt.sr.Start))
	case *schema.Sequence:
		return rt.ru.sequence(ctx, s.Children)
	case *schema.Repeat:
		return rt.ru.repeat(ctx, s, rt.sr)
	case *schema.Await:
		return rt.ru.await(ctx, s)
	}
	return fmt.Errorf("%s is not a block", s.Kind)
}

func (rt *stepRuntime) LoadStarted(m *schema.LoadMeter) {
	rt.ru.observe(Event{Step: rt.sr, Load: m})
}

func (rt *stepRuntime) ParseAccessLog(line string) (schema.LogEntry, bool) {
	if rt.ru.parseAccessLog == nil {
		return schema.LogEntry{}, false
	}
	return rt.ru.parseAccessLog(line)
}

// Record is the one store of results: a step's result goes into the run's record under the
// step's name, in the form its kind records it (a sampling step's samples accumulate when its
// kind's result does: a snapshot's make a series). The judge's environment, the JSON record
// and the reports read it from there, through the kind's declarations; the loader compiled
// expressions against the same declarations (schema.Recorder).
func (rt *stepRuntime) Record(v any) {
	s, ru := rt.s, rt.ru
	sampled := s.Every > 0
	var sample *SnapshotRecord
	defer func() { // runs after the unlock below: observers may take the lock
		if sample != nil {
			ru.observe(Event{Step: rt.sr, Sample: sample})
		}
	}()
	ru.mu.Lock()
	defer ru.mu.Unlock()
	if ru.abandoned[rt.sr] {
		return // the runner stopped waiting for the step: its result came too late to count
	}
	if snap, ok := v.(*SnapshotRecord); ok && snap.Pod != "" {
		rt.sr.Read = "pod " + snap.Pod // the pod read (a selector picks one): the console line says it
	}
	if acc, ok := v.(schema.Accumulator); ok && sampled {
		name := rt.Label() // an unnamed sampler's series is the report's, by its path
		var soFar any
		if prev := ru.rec.Results[name]; prev != nil {
			soFar = prev.Value
		}
		ru.rec.Put(name, s.Kind, true, acc.Accumulate(soFar, s.Every))
		ru.rec.Results[name].Cluster = ru.sc.ClusterOf(s)
		sample, _ = v.(*SnapshotRecord)
		return
	}
	if s.Name != "" {
		ru.rec.Put(s.Name, s.Kind, sampled, v)
		ru.rec.Results[s.Name].Cluster = ru.sc.ClusterOf(s)
		ru.rec.Results[s.Name].Unknown = ru.unknown[s.Name]
	}
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// sortedNames returns the keys of m, sorted.
func sortedNames[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
