package schema

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"labrun.dev/labrun/internal/didyoumean"
)

// Delete is the delete step. An object it names that is not found (a selector that picks
// none) fails the step, as kubectl delete does, unless IgnoreNotFound, or in cleanup.
type Delete struct {
	Objects    []Object `json:"objects,omitempty"`
	Files      []string `json:"files,omitempty"`
	Kind       string   `json:"kind,omitempty"`
	APIVersion string   `json:"apiVersion,omitempty"`
	Selector   string   `json:"selector,omitempty"`
	Namespace  string   `json:"namespace,omitempty"`
	Wait       *bool    `json:"wait,omitempty"`
	// All makes a delete by kind delete every object it finds, not only those this run
	// created (Cluster.Owned).
	All bool `json:"all,omitempty"`
	// IgnoreNotFound takes what is not found as deleted (kubectl's --ignore-not-found).
	IgnoreNotFound bool `json:"ignoreNotFound,omitempty"`
}

var deleteKind = Kind{
	Usage: "delete Kubernetes objects",
	New:   func() Params { return new(Delete) },
}

// Check needs something to delete: objects and files, or a kind.
func (p *Delete) Check(c Checker) {
	switch {
	case p.Kind != "" && (len(p.Objects) > 0 || len(p.Files) > 0):
		c.Errorf("kind", "delete takes objects and files (by name) or kind (every object of the kind), not both")
	case p.Kind == "" && (p.Selector != "" || p.APIVersion != "" || p.All):
		field := "selector"
		switch {
		case p.All:
			field = "all"
		case p.Selector == "":
			field = "apiVersion"
		}
		c.Errorf(field, "%s applies to delete by kind: add kind (e.g. kind: \"Pod\")", field)
	case p.Kind == "Namespace":
		c.Errorf("kind", "delete by kind is for namespaced kinds; delete a namespace by name: objects: [{apiVersion: \"v1\", kind: \"Namespace\", metadata: name: \"…\"}]")
	case p.Kind == "" && len(p.Objects) == 0 && len(p.Files) == 0:
		c.Errorf("", "delete needs objects, files or kind")
	}
	checkObjects(c, p.Objects)
	checkDeletedObjects(c, p.Objects)
	checkLookupKind(c, "", p.Kind, p.APIVersion)
}

// Plan: a delete waits for the objects to be gone (by default), for as long as that takes.
func (p *Delete) Plan() Plan { return Plan{} }

// Needs the Kubernetes API.
func (p *Delete) Needs() Need { return Need{CapCluster, DriverCluster} }

// Mutates the objects.
func (p *Delete) Mutates(ns func(string) string) Mutation {
	if p.Kind != "" {
		return Mutation{Namespaces: []string{ns(p.Namespace)}}
	}
	return Mutation{Objects: p.Objects, Files: p.Files, Namespace: ns(p.Namespace)}
}

// Summary lists the objects, or the kind and selector.
func (p *Delete) Summary() string {
	if p.Kind != "" {
		if p.Selector != "" {
			return p.Kind + " {" + p.Selector + "}"
		}
		return "every " + p.Kind
	}
	return objectsSummary(p.Objects, p.Files)
}

// Run deletes the objects and waits until they are gone unless wait is false. By kind, the
// objects are those of the kind in the namespace (that the selector picks) when the step runs
// that this run created, or all of them with all.
func (p *Delete) Run(ctx context.Context, rt Runtime) error {
	cl := rt.Target().Cluster
	if p.Kind != "" {
		ns := rt.Namespace(p.Namespace)
		found, err := p.byKind(ctx, cl, ns)
		if err != nil {
			return err
		}
		refs := found
		if !p.All {
			if refs, err = cl.Owned(ctx, found); err != nil {
				return fmt.Errorf("delete %s: %w", p.Summary(), err)
			}
		}
		what := p.Kind
		if p.Selector != "" {
			what += " {" + p.Selector + "}"
		}
		switch kept := len(found) - len(refs); {
		case len(found) == 0 && p.Selector != "" && !p.IgnoreNotFound && !rt.InCleanup():
			return fmt.Errorf("no %s in namespace %s: nothing to delete (ignoreNotFound: true if none may be left)", what, ns)
		case len(found) == 0:
			rt.Warn(fmt.Sprintf("no %s in %s: nothing to delete", what, ns))
			return nil
		case len(refs) == 0:
			rt.Warn(fmt.Sprintf("%d %s in %s, none created by this run: nothing deleted (all: true deletes them)", kept, what, ns))
			return nil
		case kept > 0:
			rt.Warn(fmt.Sprintf("%d %s in %s not created by this run kept (all: true deletes them)", kept, what, ns))
		}
		rt.SawObjects(refs)
		return lastState(ctx, rt, alreadyGone(rt, cl.Delete(ctx, refs, Bool(p.Wait, true))))
	}
	fs, err := files(rt, p.Files)
	if err != nil {
		return err
	}
	refs, err := stepObjects(ctx, rt, p.Objects, fs, rt.Namespace(p.Namespace))
	if err != nil {
		return err
	}
	// A wait: absent of them after this step waits for objects the scenario named: those that
	// were not found fail the step, unless it says they may be gone already.
	rt.SawObjects(refs)
	err = cl.Delete(ctx, refs, Bool(p.Wait, true))
	if errors.Is(err, ErrAlreadyGone) && !p.IgnoreNotFound && !rt.InCleanup() {
		return p.notFound(ctx, cl, refs, err)
	}
	return lastState(ctx, rt, alreadyGone(rt, err))
}

// notFound is the error of a delete by name of objects that did not exist (err, from
// Cluster.Delete): each named as kubectl names it, with the object of its kind whose name
// is closest, when one is near enough to be what was meant.
func (p *Delete) notFound(ctx context.Context, cl Cluster, refs []ObjectRef, err error) error {
	var ae *AbsentError
	if !errors.As(err, &ae) {
		ae = &AbsentError{Absent: refs, All: true}
	}
	var msgs []string
	for _, r := range ae.Absent {
		msg := r.NotFound()
		if near := nearName(ctx, cl, r); near != "" {
			msg += fmt.Sprintf(" (did you mean %s?)", near)
		}
		msgs = append(msgs, msg)
	}
	for _, r := range ae.Unserved {
		msgs = append(msgs, fmt.Sprintf("%s %s: the cluster serves no kind %s (%s)", r.Kind, r.Name, r.Kind, r.APIVersion))
	}
	what := "nothing was deleted"
	if !ae.All {
		what = "the others were deleted"
	}
	return fmt.Errorf("%s: %s; ignoreNotFound: true if it may be gone already", strings.Join(msgs, "; "), what)
}

// nearName is the name of an object of r's kind in its namespace close enough to r's to be
// what was meant, or "".
func nearName(ctx context.Context, cl Cluster, r ObjectRef) string {
	v, err := cl.Get(ctx, Get{Kind: r.Kind, APIVersion: r.APIVersion, Namespace: r.Namespace})
	if err != nil {
		return ""
	}
	list, _ := v.([]any)
	var names []string
	for _, o := range list {
		m, _ := o.(map[string]any)
		md, _ := m["metadata"].(map[string]any)
		if n, _ := md["name"].(string); n != "" && n != r.Name {
			names = append(names, n)
		}
	}
	return didyoumean.Closest(r.Name, names)
}

// alreadyGone makes a delete of objects that no longer exist a success, with a warning (a
// cleanup step, ignoreNotFound, a delete by kind of objects gone since they were listed).
func alreadyGone(rt Runtime, err error) error {
	if !errors.Is(err, ErrAlreadyGone) {
		return err
	}
	var ae *AbsentError
	if errors.As(err, &ae) && !ae.All {
		rt.Warn(ae.Error() + ": already gone")
		return nil
	}
	rt.Warn("nothing to delete: already gone")
	return nil
}

// byKind lists the objects of the kind in ns (those the selector picks); a cluster-scoped kind
// is refused (its list would be the whole cluster's).
func (p *Delete) byKind(ctx context.Context, cl Cluster, ns string) ([]ObjectRef, error) {
	v, err := cl.Get(ctx, Get{Kind: p.Kind, APIVersion: p.APIVersion, Selector: p.Selector, Namespace: ns})
	if err != nil {
		return nil, fmt.Errorf("delete %s: %w", p.Summary(), err)
	}
	list, _ := v.([]any)
	var refs []ObjectRef
	for _, o := range list {
		m, _ := o.(map[string]any)
		md, _ := m["metadata"].(map[string]any)
		r := ObjectRef{}
		r.APIVersion, _ = m["apiVersion"].(string)
		r.Kind, _ = m["kind"].(string)
		r.Name, _ = md["name"].(string)
		r.Namespace, _ = md["namespace"].(string)
		if r.Namespace == "" {
			return nil, fmt.Errorf("delete %s: %s is cluster-scoped: delete by kind is for namespaced kinds (name the objects instead)", p.Summary(), p.Kind)
		}
		refs = append(refs, r)
	}
	return refs, nil
}
