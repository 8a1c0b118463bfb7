package schema

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// The interpreter talks to the world only through the interfaces below. A target (the local
// machine, a Kubernetes cluster) is a Target value whose fields are drivers; a nil field means
// the target cannot run that kind of step, and a scenario that needs it is refused before it runs.
// Requests carry the step's parameters after ${...} interpolation, with namespaces defaulted.

// Target bundles the drivers of one target.
type Target struct {
	// Name is "local" or "kube" (or a test's own name).
	Name string
	// Describe says where the run goes, printed at start (e.g. the kube context and server).
	Describe string
	// Caps is what the target can do (nil: what its drivers can).
	Caps Caps

	Cluster   Cluster
	Exec      Executor
	Load      LoadGenerator
	Stats     StatsReader
	Logs      LogReader
	DNS       DNSWriter
	Processes ProcessRunner

	// Clusters are the targets of a scenario's clusters by name, when it declares clusters:
	// each its own cluster's drivers beside this machine's. The Target itself is then the
	// default cluster's; a step that names a cluster runs on that one's.
	Clusters map[string]*Target

	// Values are names the target gives expressions (e.g. local backends, the cluster domain),
	// merged into the expression environment.
	Values map[string]any

	// Close releases what the target holds (local servers, connections). Called last.
	Close func(ctx context.Context) error

	// Ended says what of the target's own world ended during the run ("" when nothing did, or
	// when Ended is nil): a local backend host killed mid-run took its backends with it, and
	// what the steps measured after it went is not of the world the scenario declares. The run
	// asks after its cleanup, before Close; what it says makes the run an error.
	Ended func() string
}

// Artifact is a raw input kept in the report's artifacts folder (a stats dump, fortio's JSON, logs).
type Artifact struct {
	// Name is a file name, unique within the step, e.g. "stats-counters.txt".
	Name string
	Data []byte
}

// ErrAlreadyGone is what Cluster.Delete's error is (errors.Is) when some of the objects did
// not exist (see AbsentError). The automatic cleanup, a cleanup step and `labrun clean` take
// it as done (the automatic cleanup says "already gone", not "removed"); a delete step of the
// steps fails on it unless it says ignoreNotFound.
var ErrAlreadyGone = errors.New("already gone")

// AbsentError is what Cluster.Delete returns when some of the objects it was given did not
// exist, or were of a kind the cluster does not serve: it has deleted (and waited for) the
// others. errors.Is(err, ErrAlreadyGone) holds.
type AbsentError struct {
	// Absent are the objects not found, Unserved those of a kind the cluster does not serve.
	Absent, Unserved []ObjectRef
	// All says none of the objects existed: nothing was deleted.
	All bool
}

func (e *AbsentError) Error() string {
	var parts []string
	for _, r := range e.Absent {
		parts = append(parts, r.NotFound())
	}
	for _, r := range e.Unserved {
		parts = append(parts, fmt.Sprintf("%s %s: the cluster serves no kind %s (%s)", r.Kind, r.Name, r.Kind, r.APIVersion))
	}
	return strings.Join(parts, "; ")
}

// Is makes an AbsentError ErrAlreadyGone.
func (e *AbsentError) Is(target error) bool { return target == ErrAlreadyGone }

// NotFound says, as kubectl does, that the object does not exist: "Deployment webb not found
// in namespace lab".
func (r ObjectRef) NotFound() string {
	if r.Namespace == "" {
		return fmt.Sprintf("%s %s not found", r.Kind, r.Name)
	}
	return fmt.Sprintf("%s %s not found in namespace %s", r.Kind, r.Name, r.Namespace)
}

// ErrEndedEarly is what the cleanup of a local process returns (wrapped, saying how) when the
// process had ended on its own with a failure before anything stopped it: the run's steps ran
// without it, so the run is an error.
var ErrEndedEarly = errors.New("it had already ended")

// ErrEndedOnItsOwn is what the cleanup of a local process returns (wrapped, saying how) when
// its command had exited with code 0 before anything stopped it: not an error of the run (a
// command that daemonizes exits so), but no "removed" either.
var ErrEndedOnItsOwn = errors.New("it had already ended")

// ErrKilled is what the cleanup of a local process returns (wrapped, saying why) when the
// process did not end on SIGTERM within its grace period and was killed (SIGKILL): it is
// removed, but what it does on TERM (flush, close, deregister) did not run, and the cleanup
// line says so rather than a plain "removed".
var ErrKilled = errors.New("killed")

// ErrNotFound is what Cluster.Get's error wraps when the object it names does not exist.
var ErrNotFound = errors.New("not found")

// ErrNotObserved is what Cluster.Get's error wraps when an object it read has a status its
// controller wrote before observing the object's current generation (status.observedGeneration
// behind metadata.generation, or absent where the controller writes one): that status is not yet
// about the object as it is, and nothing may be judged on it. A get reads again until it is.
var ErrNotObserved = errors.New("its controller has not observed its current generation")

// Detailed is an error that a driver put in a few words for people (an API server's refusal
// without the object it quotes); Detail is the full text, which the step keeps as an artifact.
type Detailed interface {
	error
	Detail() string
}

// Details is the full text of every Detailed error in err's tree, one after the other; "" when
// there is none.
func Details(err error) string {
	var out []string
	var walk func(error)
	walk = func(e error) {
		for e != nil {
			if d, ok := e.(Detailed); ok {
				out = append(out, d.Detail())
				return
			}
			if j, ok := e.(interface{ Unwrap() []error }); ok {
				for _, c := range j.Unwrap() {
					walk(c)
				}
				return
			}
			e = errors.Unwrap(e)
		}
	}
	walk(err)
	return strings.Join(out, "\n\n")
}

// ObjectRef names a Kubernetes object.
type ObjectRef struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
}

// ApplyResult says what an apply did; Created objects are deleted by the automatic cleanup.
type ApplyResult struct {
	Applied []ObjectRef
	Created []ObjectRef
	// Unsure are objects that did not exist, whose create (or apply) got no answer: the
	// request was cancelled (an interrupt) or its connection lost, and the API server may
	// have created them. Their cleanup deletes them if they are there.
	Unsure []ObjectRef
}

// Cluster is the Kubernetes API. Every mutating method is called only after the interpreter has
// checked the namespaces against the scenario's; drivers check again (defence in depth).
type Cluster interface {
	// Objects decodes the objects of an apply or delete step (CUE structs and YAML files)
	// and fills in namespaces, without touching the cluster; used for the namespace guard.
	Objects(ctx context.Context, objects []Object, files []string, namespace string) ([]ObjectRef, error)
	Apply(ctx context.Context, objects []Object, files []string, namespace string) (ApplyResult, error)
	// Delete deletes the objects (and with wait, waits until they are gone). When some of
	// them did not exist (or their kind is not served), it deletes the others and returns an
	// *AbsentError naming them (errors.Is ErrAlreadyGone).
	Delete(ctx context.Context, refs []ObjectRef, wait bool) error
	Scale(ctx context.Context, namespace, deployment string, replicas int, wait bool) error
	Restart(ctx context.Context, namespace, deployment string, wait bool) error
	// KillPods deletes the pods a selector (or a name) picks and returns their names.
	KillPods(ctx context.Context, req Kill) ([]string, error)
	// WaitRollout blocks until the Deployment is rolled out by kubectl's rules.
	WaitRollout(ctx context.Context, namespace, deployment string) error
	// WaitCondition blocks until the condition holds.
	WaitCondition(ctx context.Context, namespace string, cond Condition, interval time.Duration) error
	// Get returns an object, a list or a field, as JSON-like values (map[string]any, []any, ...).
	Get(ctx context.Context, req Get) (any, error)
	// DryRun asks the API server to validate the objects without persisting them.
	DryRun(ctx context.Context, objects []Object, files []string, namespace string) error
	// ApplyWith is Apply in a mode (server-side apply, create, merge patch, replace), maybe of
	// a subresource; Apply is ApplyWith in mode "apply", forced.
	ApplyWith(ctx context.Context, objects []Object, files []string, namespace string, opts ApplyOptions) (ApplyResult, error)
	// WaitObjects blocks until an object matches w.Want (or, w.Absent, until none does).
	WaitObjects(ctx context.Context, namespace string, w ObjectWait, interval time.Duration) error
	// DefinedKinds returns the kinds the CRDs among the objects define, without touching the
	// cluster, so that later steps' objects of those kinds can wait for them to be served.
	DefinedKinds(ctx context.Context, objects []Object, files []string) ([]GroupKind, error)
	// Owned returns those of refs that this run created: with its marks, in a namespace it
	// created, or made for such an object by its controller (owner references). A delete by
	// kind deletes only those unless it says all.
	Owned(ctx context.Context, refs []ObjectRef) ([]ObjectRef, error)
}

// PatchDryRunner is a Cluster that can check a merge patch (apply mode "patch") against the
// objects as they are, without changing them (vet --server).
type PatchDryRunner interface {
	// DryRunPatch dry-runs the merge patch of each object that exists and returns what the
	// cluster's schemas refuse in the patch itself (an unknown field), each on a line that names
	// the object's source ("objects[0]") and the field; missing are the objects that do not
	// exist, which it could not check.
	DryRunPatch(ctx context.Context, objects []Object, files []string, namespace string) (missing []ObjectRef, err error)
}

// GroupKind is a kind of objects: its API group ("" for the core group) and kind.
type GroupKind struct {
	Group string
	Kind  string
}

// UnknownKindsError is the error of Objects or DryRun when the API server does not serve some
// kinds of the objects (their CRDs are not installed, maybe not yet).
type UnknownKindsError struct {
	Kinds []GroupKind
	Err   error
}

func (e *UnknownKindsError) Error() string { return e.Err.Error() }
func (e *UnknownKindsError) Unwrap() error { return e.Err }

// Executor runs a command (in a pod on kube, on this machine on local).
type Executor interface {
	Exec(ctx context.Context, req Exec) (ExecResult, error)
}

// LoadResponse is a load's results and its raw record.
type LoadResponse struct {
	LoadResult
	// Warnings are things the user should know, e.g. fortio lowering connections to requests/2.
	Warnings []string
	// Raw is fortio's own JSON result.
	Raw []byte
	// Artifacts are further raw records, e.g. each pod's fortio JSON of a load from several pods.
	Artifacts []Artifact
}

// LoadGenerator runs fortio. It must stop promptly when ctx is cancelled.
type LoadGenerator interface {
	Load(ctx context.Context, req Load) (LoadResponse, error)
}

// StatsSnapshot is the stats of one source at one moment.
type StatsSnapshot struct {
	// Source is Snapshot.Source of the request.
	Source   string
	Counters Stats
	Gauges   Stats
	// Histograms holds quantiles as "<stat>.p50", "<stat>.p99", ... (milliseconds as Envoy prints them).
	Histograms Stats
	Hosts      []Host
	Artifacts  []Artifact
	// Pod is the pod whose sidecar was read, "namespace/name" (a selector picks one of its
	// pods, and may pick another the next time), and PodUID its uid; "" when the source is
	// not a pod's.
	Pod    string
	PodUID string
}

// ConfigResult is part of a config dump.
type ConfigResult struct {
	// Value is the selected resource (or the value at the request's path) as JSON-like values,
	// read through Envoy's types (envoy.ReadConfig).
	Value any
	// Resource is the whole resource the path was taken in (Value when there is no path): a
	// config step's reflects looks for Istio's marks there.
	Resource  any
	Artifacts []Artifact
}

// StatsReader reads Envoy admin (or Prometheus, or local backend) data.
type StatsReader interface {
	Snapshot(ctx context.Context, req Snapshot) (StatsSnapshot, error)
	Config(ctx context.Context, req Config) (ConfigResult, error)
}

// LogLine is one line of output with the time it was written.
type LogLine struct {
	Time time.Time
	Text string
	// Pod is the pod whose log holds the line (kube), "" for a process's or a file's.
	Pod string
}

// LogReader reads log lines written at or after since, handing each to line in order as it
// reads them (it holds none): a log of any size costs no memory. It stops when ctx ends.
type LogReader interface {
	Logs(ctx context.Context, req Logs, since LogSince, line func(LogLine)) error
}

// LogSince is the mark a read of logs starts at: the run's start or a step's start.
type LogSince struct {
	// Time is when the mark was.
	Time time.Time
	// File is where the local file the read names ended at the mark, when labrun noted it
	// then (nil: it did not, e.g. the file's path had a ${...} it could not fill yet). Lines
	// without timestamps are read from there.
	File *FileMark
	// Sources, when set, is told the pods whose logs a read reads (every pod a selector
	// matches whose container has started), before their lines.
	Sources func(pods []string)
	// Pods is what labrun noted at the mark of the pods a read of pods names, when its
	// target notes them (PodMarker; nil: it did not).
	Pods *PodMark
}

// PodMark is what labrun noted of the pods a logs read of pods names (its pod, or every pod
// its selector matches) at the mark. A pod there then that is gone at the read, or replaced
// by another of its name, may have written lines since the mark that can no longer be read:
// judged without them, "no line says 503" would pass over the pod that logged it.
type PodMark struct {
	// UIDs are the pods' UIDs by name.
	UIDs map[string]string
	// Err is why they could not be noted ("" when they were).
	Err string
	// Since, when set, follows the pods a selector matches from the mark on (the target
	// watches them): a pod that came after the mark and went before the read wrote lines
	// since the mark that the read cannot read either.
	Since PodsSince
}

// PodsSince follows the pods a selector matches from a mark until Stop; the target that made
// it reads what it saw at the read.
type PodsSince interface {
	// Lost is why the pods could not be followed all the way ("" when they were): a pod that
	// came and went after that is not seen.
	Lost() string
	// Stop stops following them; the interpreter calls it when the run ends.
	Stop()
}

// PodMarker is a LogReader that reads pods' logs and notes the pods a read names now (see
// PodMark); the interpreter asks it at the run's start and at the start of each step a logs
// step of pods reads since.
type PodMarker interface {
	MarkPods(ctx context.Context, ref PodRef) (PodMark, error)
}

// StampUnit is the precision a written RFC 3339 time has: one second for
// "2026-12-05T04:06:39Z", a millisecond for "…:39.123Z", a nanosecond for nine digits. A
// time is only as precise as it is written: "04:06:39Z" is any instant of that second.
func StampUnit(stamp string) time.Duration {
	dot := strings.IndexByte(stamp, '.')
	if dot < 0 {
		return time.Second
	}
	digits := 0
	for _, c := range stamp[dot+1:] {
		if c < '0' || c > '9' {
			break
		}
		digits++
	}
	unit := time.Second
	for ; digits > 0 && unit > time.Nanosecond; digits-- {
		unit /= 10
	}
	return unit
}

// NotBefore says whether a line stamped t, written at precision unit (StampUnit), may have
// been written at or after the mark: unless the whole of its unit lies before the mark
// (t + unit <= mark), it may, and is read. Reading a line written just before the mark errs on
// the side of a failure; dropping one written after it, on the side of a pass.
func (s LogSince) NotBefore(t time.Time, unit time.Duration) bool {
	return t.Add(unit).After(s.Time)
}

// FileMark is what labrun noted of a local file at a mark: a read after it takes the lines
// that carry no timestamp from what the file gained since, and refuses a file that was
// truncated or replaced since (which of its lines are new cannot be told).
type FileMark struct {
	// Exists says the file was there at the mark (when not, all of it is new).
	Exists bool `json:"exists"`
	// Size is its length in bytes then.
	Size int64 `json:"size"`
	// ID names the file itself (device and inode where the system has them; "" elsewhere):
	// another ID later is a file put in its place.
	ID string `json:"id,omitempty"`
	// Sum is a digest of its first and last bytes (up to 64 KiB each) then: another sum of
	// the same bytes later is a file rewritten.
	Sum string `json:"sum,omitempty"`
	// ModTime is its modification time then: a file written since and no longer than it was
	// had its bytes rewritten, the same bytes too (a job that truncates its log and writes
	// the same lines again), which the sum cannot tell.
	ModTime time.Time `json:"modTime,omitzero"`
}

// FileMarker is a LogReader that reads local files and notes where one ends now (see
// FileMark); the interpreter asks it at the run's start and at the start of each step a
// logs step of a file reads since.
type FileMarker interface {
	MarkFile(path string) (FileMark, error)
}

// ErrLinesCut is what LogReader.Logs returns, after the lines it has, when lines of the window
// were dropped before labrun read them (a process's output is held as a bounded head and
// tail): the logs step's result then says it was cut.
var ErrLinesCut = errors.New("lines were cut")

// DNSWriter sets the records of one host name, leaving every other host name as it was.
type DNSWriter interface {
	SetRecords(ctx context.Context, req DNS) error
}

// RunningProcess is a running local command.
type RunningProcess interface {
	// Stop signals the process ("TERM" or "KILL") and waits for it, and everything it
	// started, to end.
	Stop(ctx context.Context, signal string) error
	// Ended says how the process ended ("exited with code 1"), or false while it runs.
	Ended() (string, bool)
}

// ProcessRunner starts local commands.
type ProcessRunner interface {
	// Start starts the command and waits for its readiness check.
	Start(ctx context.Context, name string, req Process) (RunningProcess, error)
}

// ReadLogs collects what r reads into a slice, for tests and callers that know the log is
// small (a logs step streams instead).
func ReadLogs(ctx context.Context, r LogReader, req Logs, since time.Time) ([]LogLine, error) {
	var out []LogLine
	err := r.Logs(ctx, req, LogSince{Time: since}, func(l LogLine) { out = append(out, l) })
	return out, err
}

// ObjectSchemas is a Cluster that knows a custom resource's schema, so that the names
// expressions read below a get step's object can be checked when the step runs (a built-in
// kind's are checked by vet).
type ObjectSchemas interface {
	// ObjectSchema is the kind's name as the API server serves it and the openAPIV3Schema of
	// its CRD at the version served; a nil schema when the kind has no CRD (a built-in kind),
	// or its CRD has no schema; an error when the CRD cannot be read (forbidden).
	ObjectSchema(ctx context.Context, kind, apiVersion string) (string, map[string]any, error)
}

// CRDSources is a Cluster that names the CRD a kind's schema is from, so that a problem the
// cluster's CRD finds says whose it is.
type CRDSources interface {
	// CRDSource is the name of the kind's CRD (destinationrules.networking.istio.io) and the
	// Istio release its labels say installed it ("1.31.0"; "" when they say none); "" and ""
	// when the cluster cannot say.
	CRDSource(ctx context.Context, kind, apiVersion string) (crd, release string)
}
