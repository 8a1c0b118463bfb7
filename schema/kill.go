package schema

import (
	"context"
	"fmt"
	"strconv"
)

// Kill is the kill step: pods deleted (kube), or a local process stopped.
type Kill struct {
	Selector    string    `json:"selector,omitempty"`
	Pod         string    `json:"pod,omitempty"`
	Namespace   string    `json:"namespace,omitempty"`
	GracePeriod *Duration `json:"gracePeriod,omitempty"`
	Process     string    `json:"process,omitempty"`
	Signal      string    `json:"signal,omitempty"`
}

var killKind = Kind{
	Usage: "delete pods by selector, or stop a local process",
	New:   func() Params { return new(Kill) },
}

// Check needs one target, and a process to be a process step that has started.
func (p *Kill) Check(c Checker) {
	c.ExactlyOne("selector", "pod", "process")
	if p.Process != "" {
		if p.GracePeriod != nil {
			c.Errorf("gracePeriod", "gracePeriod applies to pods; a process is stopped with signal")
		}
		checkProcessRef(c, "process", p.Process, "kill")
	} else if p.Signal != "" {
		c.Errorf("signal", "signal applies to a process; pods are deleted (use gracePeriod)")
	}
}

// checkProcessRef checks that field names a process step that has started before this step.
func checkProcessRef(c Checker, field, name, what string) {
	kind, ok := c.Step(name)
	switch {
	case c.Templated(field):
	case !ok && isLocalEndpoint(c.Local(), name):
		c.Errorf(field, "%s names process %q, but %q is a backend or blackhole of local:, which labrun runs for the whole run and no step stops; to stop a server mid-run, start it with a process step (its argv a server of your own) and name that step", what, name, name)
	case !ok:
		c.Errorf(field, "%s names process %q, but no step has that name%s", what, name, c.Suggest(name))
	case kind != "process":
		c.Errorf(field, "%s names %q, %s step: expected the name of a process step", what, name, A(kind))
	case !c.StartedBefore(name):
		c.Errorf(field, "%s names process %q, which has not started when this step runs: put its process step earlier", what, name)
	}
}

// isLocalEndpoint says whether name is a backend or blackhole of the local world l.
func isLocalEndpoint(l *Local, name string) bool {
	if l == nil {
		return false
	}
	_, backend := l.Backends[name]
	_, hole := l.Blackholes[name]
	return backend || hole
}

// Plan: killing returns once the pods are deleted or the process has ended.
func (p *Kill) Plan() Plan { return Plan{} }

// Needs local processes for a process, the Kubernetes API for pods.
func (p *Kill) Needs() Need {
	if p.Process != "" {
		return Need{CapProcesses, DriverProcesses}
	}
	return Need{CapCluster, DriverCluster}
}

// Mutates the pods' namespace.
func (p *Kill) Mutates(ns func(string) string) Mutation {
	if p.Process != "" {
		return Mutation{}
	}
	return Mutation{Namespaces: []string{ns(p.Namespace)}}
}

// Summary names what is killed.
func (p *Kill) Summary() string {
	switch {
	case p.Process != "":
		return "process " + p.Process
	case p.Pod != "":
		return "pod " + p.Pod
	}
	return "pods " + p.Selector
}

// Run stops the process, or deletes the pods (a warning when none matched).
func (p *Kill) Run(ctx context.Context, rt Runtime) error {
	if p.Process != "" {
		proc, ok := rt.Process(p.Process)
		if !ok {
			return fmt.Errorf("no running process %q: its process step has not run", p.Process)
		}
		if w, ok := proc.(*watchedProcess); ok {
			// The kill says what became of the process: its end, expected or not, is the
			// step's to judge, not the cleanup's.
			w.stopped.Store(true)
		}
		// A kill is a claim that the process ran until now: one that had already ended (it
		// crashed, or its command finished) fails the step instead of passing for nothing.
		if how, ended := proc.Ended(); ended {
			return fmt.Errorf("process %s had already ended before the kill (it %s): nothing to stop; mayFail: true if that may happen", p.Process, how)
		}
		return proc.Stop(ctx, or(p.Signal, "TERM"))
	}
	q := *p
	q.Namespace = rt.Namespace(p.Namespace)
	killed, err := rt.Target().Cluster.KillPods(ctx, q)
	for _, name := range killed {
		rt.SawObjects([]ObjectRef{{APIVersion: "v1", Kind: "Pod", Namespace: q.Namespace, Name: name}})
	}
	if err == nil && len(killed) == 0 {
		// Nothing killed is not a kill: the step fails rather than pass for nothing.
		what := "selector " + strconv.Quote(q.Selector)
		if q.Pod != "" {
			what = "pod " + q.Pod
		}
		return fmt.Errorf("no pod matched %s in namespace %s: nothing was killed; mayFail: true if that may happen", what, q.Namespace)
	}
	return err
}

func or[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}
