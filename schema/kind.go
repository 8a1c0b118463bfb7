package schema

import (
	"context"
	"io"
	"sort"
	"time"
)

// A step kind is one Go file and one CUE file of this package, named after the kind
// (load.go and load.cue). The CUE file declares the kind's field of #Step and its parameters'
// definition; the Go file holds the parameters' type and everything labrun does with them:
// the static check (Check), the place in the plan (Plan), the capability the target must have
// and the driver Run calls for it (Needs), the namespaces it changes (Mutates), a summary for
// plans and reports (Summary), and how it runs (Run). What a named step records for
// expressions is declared by the kind's Result method (Recorder), in the type model of type.go.
//
// Kinds is the one list of kinds. The loader decodes and checks through it, the interpreter
// dispatches through it, and `labrun help steps` and docs/language.md print it.

// Kind is one entry of the registry.
type Kind struct {
	// Usage is one line: what the step does, shown by `labrun help steps` and in the docs.
	Usage string
	// New returns the kind's zero parameters, for decoding.
	New func() Params
}

// Kinds is the registry of step kinds: name → kind. Nothing else lists them.
var Kinds = map[string]Kind{
	"apply":    applyKind,
	"delete":   deleteKind,
	"scale":    scaleKind,
	"restart":  restartKind,
	"kill":     killKind,
	"wait":     waitKind,
	"get":      getKind,
	"events":   eventsKind,
	"exec":     execKind,
	"load":     loadKind,
	"snapshot": snapshotKind,
	"config":   configKind,
	"logs":     logsKind,
	"dns":      dnsKind,
	"assert":   assertKind,
	"sleep":    sleepKind,
	"process":  processKind,
	"parallel": parallelKind,
	"sequence": sequenceKind,
	"repeat":   repeatKind,
	"await":    awaitKind,
}

// KindNames returns the registry's kind names, sorted.
func KindNames() []string {
	out := make([]string, 0, len(Kinds))
	for k := range Kinds {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Params is a step kind's parameters, as decoded from the scenario, and what the kind does.
type Params interface {
	// Check reports what the schema cannot say: one-of choices, cross-field rules, names that
	// must resolve, shapes of values. It runs in vet and before every run, never later.
	Check(c Checker)
	// Plan is the step's place on the timeline.
	Plan() Plan
	// Needs is what the target must be able to do for this step, and the driver of the
	// target that Run calls for it (Need{} for nothing): vet refuses a target without
	// either, and the runner never calls a driver the target does not have.
	Needs() Need
	// Mutates is what the step changes on a cluster, with namespaces defaulted by ns; the
	// namespace guard refuses anything outside the scenario's namespaces.
	Mutates(ns func(string) string) Mutation
	// Summary describes the parameters in a few words, for plans, progress and reports.
	Summary() string
	// Run runs the step. Results go to rt.Record; raw inputs to rt.Artifact.
	Run(ctx context.Context, rt Runtime) error
}

// Plan is what a step kind tells the planner.
type Plan struct {
	// Duration is how long the step takes when that is known before the run; Exact says it
	// is exact rather than a lower bound.
	Duration time.Duration
	Exact    bool
	// Timeout is the default bound of a step that sets none.
	Timeout TimeoutClass
	// Limit is a bound of the step's own, written in its parameters (a readiness timeout),
	// and LimitField where: a step timeout shorter than it makes it unreachable.
	Limit      time.Duration
	LimitField string
}

// TimeoutClass picks a step's default timeout.
type TimeoutClass int

// The default timeouts.
const (
	// TimeoutStep is the runner's default step timeout (a call to the world).
	TimeoutStep TimeoutClass = iota
	// TimeoutWait is the runner's default wait timeout (a rollout, a condition).
	TimeoutWait
	// TimeoutNone: the step bounds itself (a load, a sleep) or its children do (blocks).
	TimeoutNone
	// TimeoutAssert is the default bound of a wait that judges the system under test (an
	// object's fields, its absence, an expression): Chainsaw's assert timeout. Such a wait
	// that does not hold in time is a failed expectation, not an error.
	TimeoutAssert
)

// Default is the bound of a step of the class that sets no timeout (0: none).
func (c TimeoutClass) Default() time.Duration {
	switch c {
	case TimeoutStep:
		return DefaultStepTimeout
	case TimeoutWait:
		return DefaultWaitTimeout
	case TimeoutAssert:
		return DefaultAssertTimeout
	}
	return 0
}

// Recorder is a kind whose named steps record a result that expressions read by the step's
// name. Kinds that record nothing do not implement it.
type Recorder interface {
	// Result is the type of what the step records, given its parameters (a capture pattern's
	// groups, a snapshot's source) and how it runs (sampled with every/while).
	Result(c ResultContext) *Type
}

// ResultContext is what a kind's Result sees of the step.
type ResultContext interface {
	// Sampled reports whether the step samples (every/while).
	Sampled() bool
	// Templated reports whether field holds a ${...} (its value is known only at run time).
	Templated(field string) bool
}

// The forms of a result in the run's record. A kind whose record keeps more than expressions
// see (a load's times, a snapshot's counters and gauges apart) records a value that gives
// expressions their view (ExprValuer), and says what to read a record into (RecordForm). A
// sampling step's result is the last sample's, unless it accumulates (a snapshot's samples
// make a series).
type (
	// ExprValuer is a recorded result whose expressions see another form of it.
	ExprValuer interface {
		ExprValue(stepsStart time.Time) any
	}
	// Accumulator is one sample's result that adds to what its step recorded so far (nil at
	// the first sample).
	Accumulator interface {
		Accumulate(soFar any, every time.Duration) any
	}
	// RecordForm is a kind whose record's Go type is not its result type's: NewRecord is an
	// empty one, for reading a run's record (sampled: the form of a sampling step).
	RecordForm interface {
		NewRecord(sampled bool) any
	}
)

// Mutator is a kind that says what wrong outcomes of its result look like, for `labrun
// mutate`: each mutant changes what the step recorded, in the kind's record form. A kind
// without one gets the mutants of any value (absent; every field changed).
type Mutator interface {
	Mutants(recorded any) []Mutant
}

// Mutant is one wrong outcome of a step's result.
type Mutant struct {
	// Name says what changed, after the step's name ("every request 503").
	Name string
	// Apply returns the changed value; it may change recorded in place.
	Apply func(recorded any) any
	// CaughtBy, when set, is what fails the step itself on this outcome (an exec's exit code),
	// unless the step may fail.
	CaughtBy string
	// Stretch says the changed value ends at another time than the recorded one (a load at
	// full speed whose calls take twice as long runs twice as long, its End moved alike): its
	// step ends with it, and what started once the step had ended moves with it.
	Stretch bool
	// Unbuilt, when set, says which run the mutant stands for and why its changed value is
	// not that run's record (a load of a duration whose calls take twice as long makes half
	// as many): it heads the reasons the mutant is impossible, when its record is.
	Unbuilt string
}

// KeepsSamples reports whether a sampling step of the kind keeps every sample (its record of
// one sample accumulates: a snapshot's make a series) rather than its last.
func KeepsSamples(p Params) bool {
	rf, ok := p.(RecordForm)
	if !ok {
		return false
	}
	_, acc := rf.NewRecord(false).(Accumulator)
	return acc
}

// ResultOf is the type of what a step of kind k with parameters p records (nil: nothing).
func ResultOf(p Params, c ResultContext) *Type {
	if r, ok := p.(Recorder); ok {
		return r.Result(c)
	}
	return nil
}

type plainContext struct{}

func (plainContext) Sampled() bool         { return false }
func (plainContext) ExpectsFailure() bool  { return false }
func (plainContext) Templated(string) bool { return false }

// PlainContext is a ResultContext for a step that does not sample and holds no ${...}.
var PlainContext ResultContext = plainContext{}

// Mutation is what a step changes on a cluster.
type Mutation struct {
	// Namespaces are changed as a whole (scale, restart, kill, a hosts file).
	Namespaces []string
	// Objects and Files are applied or deleted; Namespace is the namespace of objects that
	// name none.
	Objects   []Object
	Files     []string
	Namespace string
}

// Checker is what a kind's Check sees: the scenario around the step, and a way to report.
// Fields are dotted paths inside the kind's value ("" is the value itself).
type Checker interface {
	// Errorf reports a problem at field (where it is written: its presence is the mistake).
	Errorf(field, format string, args ...any)
	// ValueErrorf reports a problem with field's value, at the value ("0s", a pattern).
	ValueErrorf(field, format string, args ...any)
	// ValueErrorAt reports a problem at a byte offset of field's string value (a path's
	// misspelled step), at that column when the string is written as one literal, else at the
	// value.
	ValueErrorAt(field string, offset int, format string, args ...any)
	// Has reports whether field is written.
	Has(field string) bool
	// Templated reports whether field holds a ${...} (its value is known only at run time).
	Templated(field string) bool
	// ExactlyOne reports unless exactly one of fields is written, and returns that one.
	ExactlyOne(fields ...string) string
	// ExactlyOneOf is ExactlyOne inside the struct at field (e.g. a process's ready).
	ExactlyOneOf(field string, fields ...string) string
	// Target is the target the scenario will run on ("local", "kube"; "" when not known).
	Target() string
	// Local is the scenario's local world (nil when it declares none).
	Local() *Local
	// Namespaces are the scenario's namespaces.
	Namespaces() []string
	// Step reports the kind of the step with this name, if there is one.
	Step(name string) (kind string, ok bool)
	// Suggest says what the user may have meant by a step name that no step has:
	// ` (did you mean "x"?)`, or the names there are.
	Suggest(name string) string
	// Params returns the parameters of the step with this name (nil if none, or not decoded).
	Params(name string) Params
	// StartedBefore reports whether the named step always starts before this one does.
	StartedBefore(name string) bool
	// RunsDuring reports whether the named step can still be running when this one starts.
	RunsDuring(name string) bool
	// Sampled reports whether this step samples (every/while).
	Sampled() bool
	// ExpectsFailure reports whether this step is written to fail (expectFail): what it
	// would be refused for at run time is then what it tests (an apply of an object the API
	// server refuses, as Chainsaw's negative tests apply one).
	ExpectsFailure() bool
}

// Runtime is what a kind's Run sees of the run: the target's drivers and the run's services.
type Runtime interface {
	// Target is the run's target.
	Target() *Target
	// Namespace defaults a namespace: ns, else the scenario's first.
	Namespace(ns string) string
	// File resolves a path of the scenario against the scenario's directory.
	File(path string) string
	// Now is the run's clock.
	Now() time.Time
	// Sleep waits for d or until ctx ends.
	Sleep(ctx context.Context, d time.Duration) error
	// Record stores the step's result under its name (see Kind.Result).
	Record(v any)
	// Artifact keeps a raw input of the step for the report.
	Artifact(name string, data []byte)
	// ArtifactWriter streams a raw input of the step for the report as it comes (a command's
	// output, a log): memory holds none of it. Close it when the stream ends.
	ArtifactWriter(name string) io.WriteCloser
	// Warn adds a warning to the step's record.
	Warn(msg string)
	// Created registers how to undo something the step created; the run undoes it at the end.
	Created(what string, undo func(context.Context) error)
	// Process returns the running process a process step started under name.
	Process(name string) (RunningProcess, bool)
	// AddProcess registers a started process under name.
	AddProcess(name string, p RunningProcess)
	// Label is the step's name, or its path when it has none.
	Label() string
	// InCleanup says the step is one of the scenario's cleanup steps (which take what is
	// already gone as done).
	InCleanup() bool
	// Sample is the sample number of a sampled step (0 otherwise).
	Sample() int
	// Started returns when the named step started, if it has.
	Started(step string) (time.Time, bool)
	// RunStart is when the run started.
	RunStart() time.Time
	// FileMark is where the local file at path (as File returns it) ended when the step
	// named since started ("": when the run started), if labrun noted it then.
	FileMark(since, path string) *FileMark
	// PodMark is what labrun noted of the pods ref names (its namespace as Namespace
	// returns it) when the step named since started ("": when the run started), if it
	// noted them then.
	PodMark(since string, ref PodRef) *PodMark
	// Judge evaluates the step's expression now; false is a failure.
	Judge() error
	// WaitUntil polls the step's expression until it holds.
	WaitUntil(ctx context.Context, interval time.Duration) error
	// Block runs a block step (parallel, sequence, repeat, await) through the scheduler.
	Block(ctx context.Context) error
	// LoadStarted tells live progress that a load began, with the meter its generator counts
	// requests on (see WithLoadMeter).
	LoadStarted(m *LoadMeter)
	// ParseAccessLog parses an Istio access-log line.
	ParseAccessLog(line string) (LogEntry, bool)
	// ReadFile is the path a step reads for a file of the scenario: the file itself, or, when
	// it holds ${...}, a copy with them filled (see dsl.Scenario.ExpandFile).
	ReadFile(path string) (string, error)
	// ReadObjects reads the objects of YAML or JSON files of the scenario (their ${...}
	// filled; every document, and the items of a List), each with where it is written.
	ReadObjects(ctx context.Context, paths []string) ([]FileObject, error)
	// SawObjects notes objects a step of the run applied, deleted, read by name or matched
	// by name: the run knows they existed (or, a delete's, were meant to).
	SawObjects(refs []ObjectRef)
	// Unseen reports whether ref (kind, namespace and name; its apiVersion is not compared)
	// is in one of the scenario's namespaces and no step of the run has noted it
	// (SawObjects): a wait: absent of it that finds it absent at its start would hold over
	// an object that, for all the run knows, never existed. Outside them, whether the run
	// noted it only in the scenario's namespaces (those it is in): the object looked for in
	// the wrong one.
	Unseen(ref ObjectRef) (bool, []string)
}

// FileObject is an object read from a file, and where: "assert.yaml, document 2".
type FileObject struct {
	Object Object
	Source string
	// Line is the line of the file where the object's document begins (1-based).
	Line int
}

// Parent is a kind that holds steps; ChildField is the field of its value that lists them
// ("" when the value itself is the list).
type Parent interface {
	ChildField() string
}

// Conditional is a kind that holds an expression, compiled when the scenario loads;
// ExprField is where it is written inside the kind's value ("" for the value itself).
type Conditional interface {
	ExprField() (field string, ok bool)
}

// FileMarked is a kind that reads a local file since a mark (logs): where the file ends at
// the mark is noted then, so that what it gains after can be told from what it held.
type FileMarked interface {
	MarkedFile() (file, since string, ok bool)
}

// PodsMarked is a kind that reads pods' logs since a mark (logs): the pods it names are
// noted at the mark, so that one gone since, whose lines cannot be read, is told.
type PodsMarked interface {
	MarkedPods() (ref PodRef, since string, ok bool)
}

// NoValuer is a recorded result some of whose fields can have no value: NoValue says why
// field has none in it, or "". An expression that reads such a field errors, saying why,
// rather than read a zero that would pass for a value.
type NoValuer interface {
	NoValue(field string) string
}

// Joiner is a kind that waits for other steps by name (await).
type Joiner interface {
	Joins() []string
}

// GenerateNameHint is what an object written with metadata.generateName and no name is told:
// labrun does not let the API server choose the name (a server-side apply needs one, and
// later steps and the cleanup find the object by it).
const GenerateNameHint = "metadata.generateName is not supported: an apply (server-side) needs the name, and later steps (get, wait, delete) and the cleanup find the object by it; write metadata.name, made distinct per run with ${...} where it must be (e.g. \"c-${ns.test}\" with an ephemeral namespace test)"
