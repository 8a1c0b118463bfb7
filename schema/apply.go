package schema

import (
	"context"
	"fmt"
	"sort"
	"strings"
)

// Apply is the apply step: objects created or updated by server-side apply.
type Apply struct {
	Objects   []Object `json:"objects,omitempty"`
	Files     []string `json:"files,omitempty"`
	Namespace string   `json:"namespace,omitempty"`
	// Mode is "apply" (or ""), "create", "patch" or "replace".
	Mode        string `json:"mode,omitempty"`
	Force       *bool  `json:"force,omitempty"`
	Subresource string `json:"subresource,omitempty"`
}

// ApplyOptions say how an apply writes its objects.
type ApplyOptions struct {
	// Mode is "apply" (server-side apply; "" too), "create", "patch" (JSON merge patch) or "replace".
	Mode string
	// Force takes over conflicting fields in server-side apply.
	Force bool
	// Subresource is "" or "status".
	Subresource string
}

// Options are the step's apply options with defaults filled in.
func (p *Apply) Options() ApplyOptions {
	force := true
	if p.Force != nil {
		force = *p.Force
	}
	return ApplyOptions{Mode: or(p.Mode, "apply"), Force: force, Subresource: p.Subresource}
}

var applyKind = Kind{
	Usage: "create or update Kubernetes objects (server-side apply, create, merge patch, replace)",
	New:   func() Params { return new(Apply) },
}

// Check needs something to apply.
func (p *Apply) Check(c Checker) {
	if len(p.Objects) == 0 && len(p.Files) == 0 {
		c.Errorf("", "apply needs objects or files")
	}
	checkObjects(c, p.Objects)
	checkAppliedObjects(c, p.Objects)
	mode := or(p.Mode, "apply")
	if p.Subresource != "" && p.Subresource != "status" {
		c.Errorf("subresource", "expected subresource \"status\" (the only one an apply writes), got %q", p.Subresource)
	}
	if p.Subresource != "" && mode == "create" {
		c.Errorf("subresource", "subresource %q writes an existing object's %s; it takes mode \"apply\", \"patch\" or \"replace\", not \"create\"", p.Subresource, p.Subresource)
	}
	if p.Force != nil && mode != "apply" {
		c.Errorf("force", "force is about server-side apply conflicts; mode %q has none", mode)
	}
}

// Plan: an apply takes as long as the API server does.
func (p *Apply) Plan() Plan { return Plan{} }

// Needs the Kubernetes API.
func (p *Apply) Needs() Need { return Need{CapCluster, DriverCluster} }

// Mutates the objects.
func (p *Apply) Mutates(ns func(string) string) Mutation {
	return Mutation{Objects: p.Objects, Files: p.Files, Namespace: ns(p.Namespace)}
}

// Summary lists the objects, and the mode when it is not apply.
func (p *Apply) Summary() string {
	s := objectsSummary(p.Objects, p.Files)
	if p.Mode != "" && p.Mode != "apply" {
		s = p.Mode + " " + s
	}
	if p.Subresource != "" {
		s += " (" + p.Subresource + ")"
	}
	return s
}

// Run applies the objects; the ones it created are deleted by the automatic cleanup.
func (p *Apply) Run(ctx context.Context, rt Runtime) error {
	cl := rt.Target().Cluster
	fs, err := files(rt, p.Files)
	if err != nil {
		return err
	}
	// The objects written in the step are named by it whether or not the server takes them: a
	// wait: absent of one it refused claims that refusal, not a name no step made.
	if named, err := stepObjects(ctx, rt, p.Objects, fs, rt.Namespace(p.Namespace)); err == nil {
		rt.SawObjects(named)
	}
	res, err := cl.ApplyWith(ctx, p.Objects, fs, rt.Namespace(p.Namespace), p.Options())
	rt.SawObjects(append(append([]ObjectRef{}, res.Applied...), res.Created...))
	for _, ref := range res.Created {
		rt.Created(fmt.Sprintf("%s %s", ref.Kind, ref.Qualified()), func(ctx context.Context) error {
			return cl.Delete(ctx, []ObjectRef{ref}, true)
		})
	}
	for _, ref := range res.Unsure {
		// Interrupted while the API server was creating it: it may exist, marked as this
		// run's, with no one else to delete it.
		rt.Created(fmt.Sprintf("%s %s (its create got no answer)", ref.Kind, ref.Qualified()), func(ctx context.Context) error {
			return cl.Delete(ctx, []ObjectRef{ref}, true)
		})
	}
	if full := Details(err); full != "" {
		// The error says it in a few words; the API server's own text is kept.
		rt.Artifact("error.txt", []byte(full+"\n"))
	}
	return err
}

// GuardedObjects is a Runtime that has decoded the step's objects and files already: the
// namespace guard does, right before the step runs, with the same objects, files and
// namespace. A step that names them (an apply, a delete of objects) takes what it decoded
// rather than ask the cluster to decode them again.
type GuardedObjects interface {
	GuardedObjects() ([]ObjectRef, bool)
}

// stepObjects are the objects and files the step names (objs, fs, in namespace ns), as the
// namespace guard decoded them (GuardedObjects), or as the cluster decodes them.
func stepObjects(ctx context.Context, rt Runtime, objs []Object, fs []string, ns string) ([]ObjectRef, error) {
	if g, ok := rt.(GuardedObjects); ok {
		if refs, ok := g.GuardedObjects(); ok {
			return refs, nil
		}
	}
	return rt.Target().Cluster.Objects(ctx, objs, fs, ns)
}

// Qualified is namespace/name, or the name of a cluster-scoped object.
func (r ObjectRef) Qualified() string {
	if r.Namespace == "" {
		return r.Name
	}
	return r.Namespace + "/" + r.Name
}

// files resolves step file paths against the scenario's directory, their ${...} filled.
func files(rt Runtime, fs []string) ([]string, error) {
	out := make([]string, len(fs))
	for i, f := range fs {
		p, err := rt.ReadFile(f)
		if err != nil {
			return nil, err
		}
		out[i] = p
	}
	return out, nil
}

// checkObjects checks what the schema cannot: a name and a kind that is a single word.
func checkObjects(c Checker, objs []Object) {
	for i, o := range objs {
		if k, ok := o["kind"].(string); ok && strings.ContainsAny(k, " /.") {
			c.Errorf(fmt.Sprintf("objects.%d.kind", i), "expected a Kubernetes kind such as \"DestinationRule\", got %q", k)
		}
	}
}

// checkAppliedObjects checks each object an apply writes against its kind, where vet knows it
// (ObjectProblems).
func checkAppliedObjects(c Checker, objs []Object) {
	for field, o := range kindedObjects(c, objs) {
		// A misspelled field is refused when the step runs (the steps before it have
		// changed the cluster), or dropped where the kind keeps unknown fields, and the
		// experiment runs without it: a built-in or Istio kind's fields are known now.
		// An Istio kind's, which a newer Istio may serve, is its cluster's CRD's to judge
		// where the scenario meets its cluster first (ClusterJudge).
		ObjectProblems(o, false, func(path []string, msg string, value bool, istio *IstioCheck) {
			f := field + "." + strings.Join(path, ".")
			switch {
			case leaveToCluster(c, f, value, istio):
			case value:
				c.ValueErrorf(f, "%s", msg)
			default:
				c.Errorf(f, "%s", msg)
			}
		})
	}
}

func objectsSummary(objs []Object, files []string) string {
	var parts []string
	for _, o := range objs {
		kind, _ := o["kind"].(string)
		name := ""
		if md, ok := o["metadata"].(map[string]any); ok {
			name, _ = md["name"].(string)
		}
		parts = append(parts, kind+"/"+name)
	}
	parts = append(parts, files...)
	sort.Strings(parts)
	return strings.Join(parts, " ")
}
