package schema

import (
	"context"
	"fmt"
	"strings"
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
func (p *Snapshot) Needs() Need {
	switch {
	case p.Envoy != nil:
		return Need{CapPods, DriverStats}
	case p.Backend != "":
		return Need{CapBackends, DriverStats}
	}
	return Need{CapHost, DriverStats}
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
	// Artifacts first: a failed snapshot's (the full text of an error) matter most.
	for _, a := range snap.Artifacts {
		n := a.Name
		if rt.Sample() > 0 {
			n = fmt.Sprintf("%04d-%s", rt.Sample(), a.Name)
		}
		rt.Artifact(n, a.Data)
	}
	if err != nil {
		return err
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

// Family is the kind of source: "envoy" (a sidecar or an admin URL), "prometheus", "backend".
func (s Snapshot) Family() string {
	switch {
	case s.Envoy != nil || s.Admin != "":
		return "envoy"
	case s.Prometheus != "":
		return "prometheus"
	case s.Backend != "":
		return "backend"
	}
	return ""
}

// knownGauges are the gauges of each source family, as the stats are named after the cluster
// prefix is removed. A delta of one of them is refused before the run.
var knownGauges = map[string]map[string]bool{
	// The local backend's gauges (driver/local's stats).
	"backend": {
		"cx_active": true, "rq_active": true,
		// The same gauges under the names of Envoy's HTTP connection manager.
		"http.downstream_cx_active": true, "http.downstream_rq_active": true,
	},
	// Envoy's cluster gauges (envoyproxy.io: cluster manager statistics).
	"envoy": {
		"upstream_cx_active": true, "upstream_rq_active": true, "upstream_rq_pending_active": true,
		"upstream_cx_rx_bytes_buffered": true, "upstream_cx_tx_bytes_buffered": true,
		"membership_healthy": true, "membership_degraded": true, "membership_excluded": true,
		"membership_total": true, "max_host_weight": true, "lb_subsets_active": true, "version": true,
		"outlier_detection.ejections_active": true,
	},
}

// circuitBreakerGauges are the gauges under circuit_breakers.<priority>.
var circuitBreakerGauges = map[string]bool{
	"cx_open": true, "cx_pool_open": true, "rq_open": true, "rq_pending_open": true, "rq_retry_open": true,
	"remaining_cx": true, "remaining_pending": true, "remaining_rq": true, "remaining_retries": true,
	"remaining_cx_pools": true,
}

// KnownGauge reports whether stat is known to be a gauge in a source of family.
func KnownGauge(family, stat string) bool {
	if knownGauges[family][stat] {
		return true
	}
	if family == "envoy" {
		parts := strings.Split(stat, ".")
		return len(parts) == 3 && parts[0] == "circuit_breakers" && circuitBreakerGauges[parts[2]]
	}
	return false
}
