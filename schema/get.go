package schema

import (
	"context"
	"fmt"
	"strings"
)

// Get is the get step: an object, a list of objects, or one field of them.
type Get struct {
	Kind       string `json:"kind"`
	APIVersion string `json:"apiVersion,omitempty"`
	Name       string `json:"name,omitempty"`
	Selector   string `json:"selector,omitempty"`
	Namespace  string `json:"namespace,omitempty"`
	Path       string `json:"path,omitempty"`
}

var getKind = Kind{
	Usage: "capture a Kubernetes object or field",
	New:   func() Params { return new(Get) },
}

// Result: the object, the list of objects or the field, as JSON-like data whose shape is
// known only at run time.
func (p *Get) Result(c ResultContext) *Type { return AnyType }

// Check: name or selector, not both.
func (p *Get) Check(c Checker) {
	if p.Name != "" && p.Selector != "" {
		c.Errorf("", "get takes name or selector, not both")
	}
	checkDottedPath(c, "path", p.Path)
}

// checkDottedPath refuses a kubectl JSONPath or jq path where labrun reads a dotted one: its
// first key would be "{" or "$", and nothing is ever found there.
func checkDottedPath(c Checker, field, path string) {
	if c.Templated(field) {
		return
	}
	if strings.HasPrefix(path, "{") || strings.HasPrefix(path, "$") || strings.HasPrefix(path, ".") {
		c.Errorf(field, "path %q looks like a JSONPath: write a dotted path, e.g. status.podIP or spec.containers.0.name", path)
	}
}

// Plan: one API call.
func (p *Get) Plan() Plan { return Plan{} }

// Needs the Kubernetes API.
func (p *Get) Needs() Need { return Need{CapCluster, DriverCluster} }

// Mutates nothing.
func (p *Get) Mutates(func(string) string) Mutation { return Mutation{} }

// Summary names the object and the path.
func (p *Get) Summary() string {
	return strings.TrimSpace(fmt.Sprintf("%s %s%s %s", p.Kind, p.Name, p.Selector, p.Path))
}

// Run reads the object and records it (or the field).
func (p *Get) Run(ctx context.Context, rt Runtime) error {
	q := *p
	q.Namespace = rt.Namespace(p.Namespace)
	v, err := rt.Target().Cluster.Get(ctx, q)
	if err != nil {
		return err
	}
	rt.Record(v)
	return nil
}
