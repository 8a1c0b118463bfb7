package schema

import (
	"context"
	"strings"
)

// Config is the config step: part of an Envoy config_dump.
type Config struct {
	Envoy    *PodRef `json:"envoy,omitempty"`
	Admin    string  `json:"admin,omitempty"`
	Cluster  string  `json:"cluster,omitempty"`
	Listener string  `json:"listener,omitempty"`
	Route    string  `json:"route,omitempty"`
	Path     string  `json:"path,omitempty"`
}

var configKind = Kind{
	Usage:  "record part of an Envoy config_dump",
	New:    func() Params { return new(Config) },
	Result: ResultValue,
}

// Check: one Envoy, one resource.
func (p *Config) Check(c Checker) {
	src := c.ExactlyOne("envoy", "admin")
	n := 0
	for _, x := range []string{p.Cluster, p.Listener, p.Route} {
		if x != "" {
			n++
		}
	}
	if n != 1 {
		c.Errorf("", "config needs exactly one of cluster, listener, route")
	}
	if src == "admin" && !c.Templated("admin") {
		if err := checkHTTPURL(p.Admin); err != nil {
			c.Errorf("admin", "%v", err)
		}
	}
	if p.Envoy != nil && p.Envoy.Pod == "" && p.Envoy.Selector == "" {
		c.Errorf("envoy", "envoy needs pod or selector: the pod whose sidecar to read")
	}
}

// Plan: one read.
func (p *Config) Plan() Plan { return Plan{} }

// Needs pods for a sidecar, this machine for an admin URL.
func (p *Config) Needs() Capability {
	if p.Envoy != nil {
		return CapPods
	}
	return CapHost
}

// Mutates nothing.
func (p *Config) Mutates(func(string) string) Mutation { return Mutation{} }

// Summary names the resource and the path.
func (p *Config) Summary() string {
	return strings.TrimSpace(or(p.Cluster, or(p.Listener, p.Route)) + " " + p.Path)
}

// Run reads the config dump and records the selected value.
func (p *Config) Run(ctx context.Context, rt Runtime) error {
	q := *p
	if q.Envoy != nil {
		e := *q.Envoy
		e.Namespace = rt.Namespace(e.Namespace)
		q.Envoy = &e
	}
	res, err := rt.Target().Stats.Config(ctx, q)
	for _, a := range res.Artifacts {
		rt.Artifact(a.Name, a.Data)
	}
	if err != nil {
		return err
	}
	rt.Record(res.Value)
	return nil
}
