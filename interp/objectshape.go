package interp

import (
	"context"
	"time"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/internal/kubeshape"
	"labrun.dev/labrun/schema"
)

// objectShape is what a get step of a custom resource records, as its CRD's schema says.
type objectShape struct {
	shape *kubeshape.Shape
	kind  string
	base  []string
}

// shapeObject finds, before get step s reads a custom resource, the shape of what it records
// from the kind's CRD (once per kind and run): the names expressions read below it are then
// checked (objectMiss), as vet checks a built-in kind's. A kind whose CRD cannot be read is
// not checked.
func (ru *run) shapeObject(ctx context.Context, s *dsl.Step, g *schema.Get) {
	if s.Name == "" || ru.sc.ExprNames == nil {
		return
	}
	if r := ru.sc.ExprNames.Results[s.Name]; r == nil || r.Object != nil {
		return // unread, or a built-in kind: vet checked it
	}
	if sh, _ := kubeshape.Builtin(g.APIVersion, g.Kind); sh != nil {
		return
	}
	t := ru.targetOf(s)
	if t == nil || t.Cluster == nil {
		return
	}
	os, ok := t.Cluster.(schema.ObjectSchemas)
	if !ok {
		return
	}
	key := g.APIVersion + " " + g.Kind
	ru.mu.Lock()
	crd, seen := ru.crdShapes[key]
	ru.mu.Unlock()
	if !seen {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		kind, s, err := os.ObjectSchema(cctx, g.Kind, g.APIVersion)
		cancel()
		if err == nil && s != nil {
			crd = objectShape{shape: kubeshape.FromCRD(s), kind: kind}
		}
		ru.mu.Lock()
		if ru.crdShapes == nil {
			ru.crdShapes = map[string]objectShape{}
		}
		ru.crdShapes[key] = crd
		ru.mu.Unlock()
	}
	if crd.shape == nil {
		return
	}
	shape, base := dsl.ObjectShapeAt(crd.shape, g)
	if shape == nil {
		return
	}
	ru.mu.Lock()
	defer ru.mu.Unlock()
	if ru.judge.objects == nil {
		ru.judge.objects = map[string]objectShape{}
	}
	ru.judge.objects[s.Name] = objectShape{shape: shape, kind: crd.kind, base: base}
}

// objectMiss says which name e reads below a get step's object that the object's kind (its
// CRD) does not have: read, it would give nil whatever the object holds. "" when none.
func (j *Judge) objectMiss(e *dsl.Expr) string {
	for _, r := range e.ObjectReads {
		o, ok := j.objects[r.Step]
		if !ok {
			continue
		}
		if m := o.shape.Walk(r.Path); m != nil {
			return dsl.ObjectMiss(r.Step, o.shape, o.kind, o.base, r.Path, m)
		}
	}
	return ""
}
