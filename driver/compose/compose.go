// Package compose joins a cluster target and this machine into one target: the kube target
// runs what happens in the cluster (objects, pods, sidecars) through its own drivers, and
// what happens here (exec and load without a pod, processes, logs of a process or a file,
// snapshot and config of an admin URL) through the local target's, so that a scenario can
// run kubectl, istioctl or curl from the machine labrun runs on. It imports neither driver:
// cmd/labrun builds both and hands them here.
package compose

import (
	"context"
	"errors"

	"labrun.dev/labrun/schema"
)

// WithHost returns cluster with host's drivers for this machine beside its own. Requests
// that name a pod (or an Envoy sidecar) go to cluster, the others to host. The result has
// cluster's name, description, values and capabilities plus this machine's (host and
// processes; not the local target's backends or DNS zone). Close closes host first (its
// processes stop), then cluster.
func WithHost(cluster, host *schema.Target) *schema.Target {
	caps := schema.Caps{}
	for c, ok := range cluster.Caps {
		caps[c] = ok
	}
	caps[schema.CapHost], caps[schema.CapProcesses] = true, true
	t := *cluster
	t.Caps = caps
	t.Exec = executor{cluster.Exec, host.Exec}
	t.Load = loadGenerator{cluster.Load, host.Load}
	t.Stats = statsReader{cluster.Stats, host.Stats}
	t.Logs = logReader{cluster.Logs, host.Logs}
	t.Processes = host.Processes
	t.Close = func(ctx context.Context) error {
		var errs []error
		if host.Close != nil {
			errs = append(errs, host.Close(ctx))
		}
		if cluster.Close != nil {
			errs = append(errs, cluster.Close(ctx))
		}
		return errors.Join(errs...)
	}
	return &t
}

// executor runs a command in a pod on the cluster, any other on this machine.
type executor struct{ cluster, host schema.Executor }

func (e executor) Exec(ctx context.Context, req schema.Exec) (schema.ExecResult, error) {
	if req.InPod() {
		return e.cluster.Exec(ctx, req)
	}
	return e.host.Exec(ctx, req)
}

// loadGenerator runs a load from a pod on the cluster, one from here in this process.
type loadGenerator struct{ cluster, host schema.LoadGenerator }

func (l loadGenerator) Load(ctx context.Context, req schema.Load) (schema.LoadResponse, error) {
	if req.From != nil {
		return l.cluster.Load(ctx, req)
	}
	return l.host.Load(ctx, req)
}

// statsReader reads a sidecar through the cluster, an admin or Prometheus URL from here.
type statsReader struct{ cluster, host schema.StatsReader }

func (s statsReader) Snapshot(ctx context.Context, req schema.Snapshot) (schema.StatsSnapshot, error) {
	if req.Envoy != nil {
		return s.cluster.Snapshot(ctx, req)
	}
	return s.host.Snapshot(ctx, req)
}

func (s statsReader) Config(ctx context.Context, req schema.Config) (schema.ConfigResult, error) {
	if req.Envoy != nil {
		return s.cluster.Config(ctx, req)
	}
	return s.host.Config(ctx, req)
}

// logReader reads a container's log on the cluster, a process's output or a file here.
type logReader struct{ cluster, host schema.LogReader }

func (l logReader) Logs(ctx context.Context, req schema.Logs, since schema.LogSince, line func(schema.LogLine)) error {
	if req.Process != "" || req.File != "" {
		return l.host.Logs(ctx, req, since, line)
	}
	return l.cluster.Logs(ctx, req, since, line)
}

// MarkFile notes where a file here ends, as the host's reader does.
func (l logReader) MarkFile(path string) (schema.FileMark, error) {
	m, ok := l.host.(schema.FileMarker)
	if !ok {
		return schema.FileMark{}, errors.New("this machine's log reader notes no file")
	}
	return m.MarkFile(path)
}
