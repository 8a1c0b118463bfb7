package interp

import (
	"context"
	"runtime"
	"sync"
	"time"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/schema"
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

	Cluster   Cluster
	Exec      Executor
	Load      LoadGenerator
	Stats     StatsReader
	Logs      LogReader
	DNS       DNSWriter
	Processes ProcessRunner

	// Values are names the target gives expressions (e.g. local backends, the cluster domain),
	// merged into the expression environment.
	Values map[string]any

	// Close releases what the target holds (local servers, connections). Called last.
	Close func(ctx context.Context) error
}

// Artifact is a raw input kept in the report's artifacts folder (a stats dump, fortio's JSON, logs).
type Artifact struct {
	// Name is a file name, unique within the step, e.g. "stats-counters.txt".
	Name string
	Data []byte
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
}

// Cluster is the Kubernetes API. Every mutating method is called only after the interpreter has
// checked the namespaces against the scenario's; drivers check again (defence in depth).
type Cluster interface {
	// Objects decodes the objects of an apply or delete step (CUE structs and YAML files)
	// and fills in namespaces, without touching the cluster; used for the namespace guard.
	Objects(ctx context.Context, objects []schema.Object, files []string, namespace string) ([]ObjectRef, error)
	Apply(ctx context.Context, objects []schema.Object, files []string, namespace string) (ApplyResult, error)
	Delete(ctx context.Context, refs []ObjectRef, wait bool) error
	Scale(ctx context.Context, namespace, deployment string, replicas int, wait bool) error
	Restart(ctx context.Context, namespace, deployment string, wait bool) error
	// KillPods deletes the pods a selector (or a name) picks and returns their names.
	KillPods(ctx context.Context, req schema.Kill) ([]string, error)
	// WaitRollout blocks until the Deployment is rolled out by kubectl's rules.
	WaitRollout(ctx context.Context, namespace, deployment string) error
	// WaitCondition blocks until the condition holds.
	WaitCondition(ctx context.Context, namespace string, cond schema.Condition, interval time.Duration) error
	// Get returns an object, a list or a field, as JSON-like values (map[string]any, []any, ...).
	Get(ctx context.Context, req schema.Get) (any, error)
	// DryRun asks the API server to validate the objects without persisting them.
	DryRun(ctx context.Context, objects []schema.Object, files []string, namespace string) error
}

// Executor runs a command (in a pod on kube, on this machine on local).
type Executor interface {
	Exec(ctx context.Context, req schema.Exec) (dsl.ExecResult, error)
}

// LoadResult is a load's results and its raw record.
type LoadResult struct {
	dsl.LoadResult
	// Warnings are things the user should know, e.g. fortio lowering connections to requests/2.
	Warnings []string
	// Raw is fortio's own JSON result.
	Raw []byte
}

// LoadGenerator runs fortio. It must stop promptly when ctx is cancelled.
type LoadGenerator interface {
	Load(ctx context.Context, req schema.Load) (LoadResult, error)
}

// Snapshot is the stats of one source at one moment.
type Snapshot struct {
	// Source is schema.Snapshot.Source of the request.
	Source   string
	Counters dsl.Stats
	Gauges   dsl.Stats
	// Histograms holds quantiles as "<stat>.p50", "<stat>.p99", ... (milliseconds as Envoy prints them).
	Histograms dsl.Stats
	Hosts      []dsl.Host
	Artifacts  []Artifact
}

// ConfigResult is part of a config dump.
type ConfigResult struct {
	// Value is the selected resource (or the value at the request's path) as JSON-like values.
	Value     any
	Artifacts []Artifact
}

// StatsReader reads Envoy admin (or Prometheus, or local backend) data.
type StatsReader interface {
	Snapshot(ctx context.Context, req schema.Snapshot) (Snapshot, error)
	Config(ctx context.Context, req schema.Config) (ConfigResult, error)
}

// LogLine is one line of output with the time it was written.
type LogLine struct {
	Time time.Time
	Text string
}

// LogReader reads log lines written at or after since.
type LogReader interface {
	Logs(ctx context.Context, req schema.Logs, since time.Time) ([]LogLine, error)
}

// DNSWriter sets the records of one host name, leaving every other host name as it was.
type DNSWriter interface {
	SetRecords(ctx context.Context, req schema.DNS) error
}

// Process is a running local command.
type Process interface {
	// Stop signals the process ("TERM" or "KILL") and waits for it to end.
	Stop(ctx context.Context, signal string) error
	// Output returns what the process wrote so far, stdout and stderr interleaved, by line.
	Output() []LogLine
}

// ProcessRunner starts local commands.
type ProcessRunner interface {
	// Start starts the command and waits for its readiness check.
	Start(ctx context.Context, name string, req schema.Process) (Process, error)
}

// Clock is the interpreter's time source. Tests run under testing/synctest with the real clock.
type Clock interface {
	Now() time.Time
	// Until returns a channel that receives when t has come.
	Until(t time.Time) (<-chan time.Time, func())
}

// RealClock is the Clock of the time package.
type RealClock struct{}

// Now returns time.Now().
func (RealClock) Now() time.Time { return time.Now() }

// Until returns a timer channel for t and its stop function.
func (RealClock) Until(t time.Time) (<-chan time.Time, func()) {
	tm := time.NewTimer(time.Until(t))
	return tm.C, func() { tm.Stop() }
}

// PreciseClock is the real clock with sub-millisecond wake-ups. Go's timers fire up to about a
// millisecond late on some machines (here: 0.6 ms at the median, 1.1 ms at p99, measured), so
// Until sets its timer early and spins the last stretch, yielding the processor as it goes.
// The CLI uses it. Not for testing/synctest bubbles, where time stands still while a goroutine
// spins.
type PreciseClock struct {
	// Early is how long before the target the timer fires (default 1.5 ms).
	Early time.Duration
}

// Now returns time.Now().
func (PreciseClock) Now() time.Time { return time.Now() }

// Until returns a channel that receives at t, within microseconds, and its stop function.
func (c PreciseClock) Until(t time.Time) (<-chan time.Time, func()) {
	early := c.Early
	if early == 0 {
		early = 1500 * time.Microsecond
	}
	ch := make(chan time.Time, 1)
	stop := make(chan struct{})
	var once sync.Once
	go func() {
		if d := time.Until(t) - early; d > 0 {
			tm := time.NewTimer(d)
			select {
			case <-tm.C:
			case <-stop:
				tm.Stop()
				return
			}
		}
		for {
			if now := time.Now(); !now.Before(t) {
				ch <- now
				return
			}
			select {
			case <-stop:
				return
			default:
				runtime.Gosched()
			}
		}
	}()
	return ch, func() { once.Do(func() { close(stop) }) }
}
