package schema

import (
	"context"
	"fmt"
	"time"
)

// Snapshot is the snapshot step: the stats of one source at one moment.
type Snapshot struct {
	Envoy      *PodRef `json:"envoy,omitempty"`
	Admin      string  `json:"admin,omitempty"`
	Prometheus string  `json:"prometheus,omitempty"`
	Backend    string  `json:"backend,omitempty"`
	Cluster    string  `json:"cluster,omitempty"`
	Hosts      bool    `json:"hosts,omitempty"`
	Histograms bool    `json:"histograms,omitempty"`
}

var snapshotKind = Kind{
	Usage:  "record the stats of an Envoy cluster, a Prometheus endpoint or a local backend",
	New:    func() Params { return new(Snapshot) },
	Result: ResultSnapshot,
}

// Source is a stable description of where the snapshot reads from; snapshots with the same
// source form the pairs that a plain `delta` compares.
func (s Snapshot) Source() string {
	switch {
	case s.Envoy != nil:
		return "envoy " + s.Envoy.String() + " cluster " + s.Cluster
	case s.Admin != "":
		return "admin " + s.Admin + " cluster " + s.Cluster
	case s.Prometheus != "":
		return "prometheus " + s.Prometheus
	case s.Backend != "":
		return "backend " + s.Backend
	}
	return ""
}

// Check: one source; a cluster for Envoy; a backend the scenario declares.
func (p *Snapshot) Check(c Checker) {
	src := c.ExactlyOne("envoy", "admin", "prometheus", "backend")
	if (src == "envoy" || src == "admin") && p.Cluster == "" {
		c.Errorf("", "a snapshot of Envoy needs cluster: the exact cluster name, e.g. \"outbound|8080||backend.conn-lab.svc.cluster.local\"")
	}
	if (src == "prometheus" || src == "backend") && (p.Hosts || p.Cluster != "" || p.Histograms) {
		c.Errorf("", "cluster, hosts and histograms apply only to an Envoy snapshot (envoy or admin)")
	}
	if src == "backend" && !c.Templated("backend") {
		l := c.Local()
		if _, ok := localBackends(l)[p.Backend]; !ok {
			c.Errorf("backend", "no local backend named %q: expected one of local.backends (%s)", p.Backend, backendNames(l))
		}
	}
	for _, f := range []string{"admin", "prometheus"} {
		v := map[string]string{"admin": p.Admin, "prometheus": p.Prometheus}[f]
		if v != "" && !c.Templated(f) {
			if err := checkHTTPURL(v); err != nil {
				c.Errorf(f, "%v", err)
			}
		}
	}
	if p.Envoy != nil && p.Envoy.Pod == "" && p.Envoy.Selector == "" {
		c.Errorf("envoy", "envoy needs pod or selector: the pod whose sidecar to read")
	}
}

func localBackends(l *Local) map[string]Backend {
	if l == nil {
		return nil
	}
	return l.Backends
}

func backendNames(l *Local) string {
	if l == nil || len(l.Backends) == 0 {
		return "none declared"
	}
	return sortedKeys(l.Backends)
}

// Plan: a few reads.
func (p *Snapshot) Plan() Plan { return Plan{} }

// Needs pods for a sidecar, the local backends for a backend, this machine for a URL.
func (p *Snapshot) Needs() Capability {
	switch {
	case p.Envoy != nil:
		return CapPods
	case p.Backend != "":
		return CapBackends
	}
	return CapHost
}

// Mutates nothing.
func (p *Snapshot) Mutates(func(string) string) Mutation { return Mutation{} }

// Summary is the source.
func (p *Snapshot) Summary() string { return p.Source() }

// Run reads the stats and records the snapshot (one sample of a series when sampled).
func (p *Snapshot) Run(ctx context.Context, rt Runtime) error {
	q := *p
	if q.Envoy != nil {
		e := *q.Envoy
		e.Namespace = rt.Namespace(e.Namespace)
		q.Envoy = &e
	}
	at := rt.Now()
	snap, err := rt.Target().Stats.Snapshot(ctx, q)
	if err != nil {
		return err
	}
	for _, a := range snap.Artifacts {
		n := a.Name
		if rt.Sample() > 0 {
			n = fmt.Sprintf("%04d-%s", rt.Sample(), a.Name)
		}
		rt.Artifact(n, a.Data)
	}
	rt.Record(SnapshotTaken{Source: q.Source(), At: at, Counters: nonNil(snap.Counters),
		Gauges: nonNil(snap.Gauges), Histograms: snap.Histograms, Hosts: snap.Hosts})
	return nil
}

// SnapshotTaken is what a snapshot step records.
type SnapshotTaken struct {
	Source     string
	At         time.Time
	Counters   Stats
	Gauges     Stats
	Histograms Stats
	Hosts      []Host
}

func nonNil(s Stats) Stats {
	if s == nil {
		return Stats{}
	}
	return s
}
