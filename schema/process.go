package schema

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"time"
)

// Process is the process step: a local command that runs until killed or the run ends (on
// every target: on kube too, it runs on this machine).
type Process struct {
	Argv  []string          `json:"argv"`
	Dir   string            `json:"dir,omitempty"`
	Env   map[string]string `json:"env,omitempty"`
	Ready *Ready            `json:"ready,omitempty"`

	// Output, set by the step for its driver, receives every line of the process's output
	// as it comes, as "<RFC 3339 time> <text>\n" (the step's artifact file): the driver keeps
	// only a bounded head and tail in memory.
	Output io.Writer `json:"-"`
}

// DefaultReadyTimeout bounds a readiness check that sets no timeout.
const DefaultReadyTimeout = 10 * time.Second

// Ready is a readiness check.
type Ready struct {
	HTTP    string   `json:"http,omitempty"`
	TCP     string   `json:"tcp,omitempty"`
	Log     string   `json:"log,omitempty"`
	Timeout Duration `json:"timeout,omitempty"`
}

var processKind = Kind{
	Usage: "start a local command in the background",
	New:   func() Params { return new(Process) },
}

// Check: env names, one readiness check, of a valid shape.
func (p *Process) Check(c Checker) {
	checkArgv(c, p.Argv)
	checkEnv(c, p.Env)
	if p.Ready == nil {
		return
	}
	checkNotZero(c, "ready.timeout", p.Ready.Timeout, DefaultReadyTimeout.String())
	switch c.ExactlyOneOf("ready", "http", "tcp", "log") {
	case "log":
		checkRE(c, "ready.log", p.Ready.Log)
	case "http":
		if !c.Templated("ready.http") {
			if err := checkHTTPURL(p.Ready.HTTP); err != nil {
				c.Errorf("ready.http", "%v", err)
			}
		}
	case "tcp":
		if !c.Templated("ready.tcp") {
			if err := CheckHostPort(p.Ready.TCP); err != nil {
				c.Errorf("ready.tcp", "%v", err)
			}
		}
	}
}

// Result: the process's name and command line (its output is the report's, and logs reads it).
func (p *Process) Result(c ResultContext) *Type { return processResult }

var processResult = StructOf(nil,
	F("name", StringType, "the name kill and logs use (the step's)"),
	F("argv", ListOf(StringType), "the command line"),
)

// Plan: the step ends when the process is ready, within ready.timeout.
func (p *Process) Plan() Plan {
	if p.Ready != nil && p.Ready.Timeout > 0 {
		return Plan{Limit: p.Ready.Timeout.D(), LimitField: "ready.timeout"}
	}
	return Plan{}
}

// Needs local processes.
func (p *Process) Needs() Need { return Need{CapProcesses, DriverProcesses} }

// Mutates nothing on a cluster.
func (p *Process) Mutates(func(string) string) Mutation { return Mutation{} }

// Summary is the command.
func (p *Process) Summary() string { return strings.Join(p.Argv, " ") }

// Run starts the command; the automatic cleanup stops it and keeps its output.
// watchedProcess is a process a run started, which knows whether a step stopped it.
type watchedProcess struct {
	RunningProcess
	stopped atomic.Bool
}

func (w *watchedProcess) Stop(ctx context.Context, signal string) error {
	w.stopped.Store(true)
	return w.RunningProcess.Stop(ctx, signal)
}

func (p *Process) Run(ctx context.Context, rt Runtime) error {
	q := *p
	q.Dir = rt.File(or(q.Dir, "."))
	q.Env = withNamespace(q.Env, rt.Namespace(""))
	name := rt.Label()
	out := rt.ArtifactWriter("output.txt")
	q.Output = out
	proc, err := rt.Target().Processes.Start(ctx, name, q)
	if err != nil {
		out.Close()
		return err
	}
	w := &watchedProcess{RunningProcess: proc}
	rt.AddProcess(name, w)
	rt.Created("process "+name, func(ctx context.Context) error {
		// A process is a claim that it ran while the steps did: one that ended on its own
		// with a failure (a command not found, a crash) before anything stopped it is said,
		// not "removed".
		how, ended := proc.Ended()
		err := proc.Stop(ctx, "TERM")
		if err == nil {
			out.Close() // the process has ended: its output is complete
		}
		switch {
		case err == nil && ended && !w.stopped.Load() && how != "exited with code 0":
			return fmt.Errorf("%w: it %s on its own, before the cleanup (its output: %s)", ErrEndedEarly, how, "output.txt")
		case err == nil && ended && !w.stopped.Load():
			// A command that daemonizes exits 0 with its server still running (stopped
			// now, with its process group); one that simply ended left the steps after it
			// without it. Either way the cleanup says so, not "removed".
			return fmt.Errorf("%w: its command exited with code 0 on its own, before the cleanup; what it started, if anything, was stopped (its output: %s)", ErrEndedOnItsOwn, "output.txt")
		case err == nil && w.stopped.Load():
			// A kill step stopped it: the cleanup found it gone, and says so.
			return ErrAlreadyGone
		case err == nil:
			if after, _ := proc.Ended(); after == "was killed by signal killed" {
				// TERM did not end it within its grace: the cleanup's KILL did.
				return fmt.Errorf("%w: it did not end on SIGTERM within its grace period, so it was killed with SIGKILL", ErrKilled)
			}
		}
		return err
	})
	rt.Record(map[string]any{"name": name, "argv": p.Argv})
	return nil
}
