package schema

import "context"

// Delete is the delete step; absent objects are not an error.
type Delete struct {
	Objects   []Object `json:"objects,omitempty"`
	Files     []string `json:"files,omitempty"`
	Namespace string   `json:"namespace,omitempty"`
	Wait      *bool    `json:"wait,omitempty"`
}

var deleteKind = Kind{
	Usage:  "delete Kubernetes objects",
	New:    func() Params { return new(Delete) },
	Result: ResultNone,
}

// Check needs something to delete.
func (p *Delete) Check(c Checker) {
	if len(p.Objects) == 0 && len(p.Files) == 0 {
		c.Errorf("", "delete needs objects or files")
	}
	checkObjects(c, p.Objects)
}

// Plan: a delete waits for the objects to be gone (by default), for as long as that takes.
func (p *Delete) Plan() Plan { return Plan{} }

// Needs the Kubernetes API.
func (p *Delete) Needs() Capability { return CapCluster }

// Mutates the objects.
func (p *Delete) Mutates(ns func(string) string) Mutation {
	return Mutation{Objects: p.Objects, Files: p.Files, Namespace: ns(p.Namespace)}
}

// Summary lists the objects.
func (p *Delete) Summary() string { return objectsSummary(p.Objects, p.Files) }

// Run deletes the objects and waits until they are gone unless wait is false.
func (p *Delete) Run(ctx context.Context, rt Runtime) error {
	cl := rt.Target().Cluster
	refs, err := cl.Objects(ctx, p.Objects, files(rt, p.Files), rt.Namespace(p.Namespace))
	if err != nil {
		return err
	}
	return cl.Delete(ctx, refs, Bool(p.Wait, true))
}
