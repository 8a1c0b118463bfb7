package interp

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/internal/kubeshape"
	"labrun.dev/labrun/schema"
)

// objectShape is a custom resource's object, as its CRD's schema says.
type objectShape struct {
	shape *kubeshape.Shape
	kind  string
	base  []string
	// unread is why the kind's CRD could not be read (forbidden): its names go unchecked.
	unread error
	// from says where the shape is from where it is not the cluster's CRD: an Istio kind's,
	// when the cluster cannot give its CRD, is that of Istio's CRDs vet knows (istioShape).
	from string
}

// istioShape is the shape of an Istio kind whose CRD the cluster could not give (why: the
// error reading it; nil when it has none, or none with a schema): that of Istio's CRDs of the
// release vet knows, as vet checks it without a cluster, rather than nothing (a load for a
// run, and vet --server's, leave an Istio kind's names to the cluster); none for another kind.
func istioShape(kind, apiVersion string, why error) objectShape {
	if !kubeshape.IstioGroup(apiVersion) {
		return objectShape{}
	}
	sh, name := kubeshape.Istio(apiVersion, kind)
	if sh == nil {
		return objectShape{}
	}
	from := kubeshape.From(apiVersion)
	if why != nil {
		from = strings.TrimSuffix(from, ")") + fmt.Sprintf(": the cluster's could not be read: %v)", why)
	} else {
		from = strings.TrimSuffix(from, ")") + ": the cluster has none with a schema)"
	}
	return objectShape{shape: sh, kind: name, from: from}
}

// shapeObject finds, before get step s reads a custom resource, the shape of what it records
// from the kind's CRD (once per kind and run), or of a built-in kind that a ${...} named (vet
// could not tell): the names expressions read below it that the kind has not are kept for the
// record (Result.Unknown), and a read of one errs (objectMiss). A kind whose CRD cannot be
// read is not checked, and the step's record warns of it: a misspelled name there reads nil.
func (ru *run) shapeObject(ctx context.Context, rt *stepRuntime, s *dsl.Step, g *schema.Get) {
	if s.Name == "" || ru.sc.ExprNames == nil {
		return
	}
	if r := ru.sc.ExprNames.Results[s.Name]; r == nil || (r.Object != nil && !kubeshape.IstioGroup(g.APIVersion)) {
		return // unread, or a built-in kind: vet checked it
	}
	// An Istio kind vet checked against Istio's CRDs of kubeshape.IstioAPIVersion: the
	// cluster's may be another release's, without a field those have (the API server drops
	// it, and a read of it gives nil), so its own CRD is asked too.
	var crd objectShape
	if sh, kind := kubeshape.Builtin(g.APIVersion, g.Kind); sh != nil {
		crd = objectShape{shape: sh, kind: kind} // a kind ${...} made built-in: vet could not
	} else {
		crd = ru.crdShape(ctx, s, g.Kind, g.APIVersion)
	}
	if crd.shape == nil {
		if crd.unread != nil {
			ru.warnUnchecked(rt, s, g, crd.unread)
		}
		return
	}
	shape, base := dsl.ObjectShapeAt(crd.shape, g)
	if shape == nil {
		return
	}
	unknown := map[string]string{}
	for _, e := range ru.sc.AllExprs() {
		for _, r := range e.ObjectReads {
			if r.Step != s.Name {
				continue
			}
			if m := shape.Walk(r.Path); m != nil {
				unknown[strings.Join(r.Path, ".")] = dsl.ObjectMiss(r.Step, shape, crd.kind, crd.from, base, r.Path, m)
			}
		}
	}
	if len(unknown) == 0 {
		return
	}
	ru.mu.Lock()
	defer ru.mu.Unlock()
	if ru.unknown == nil {
		ru.unknown = map[string]map[string]string{}
	}
	ru.unknown[s.Name] = unknown
}

// warnUnchecked warns, in get step s's record, that the names expressions read below its
// object are not checked because its kind's CRD could not be read (why).
func (ru *run) warnUnchecked(rt *stepRuntime, s *dsl.Step, g *schema.Get, why error) {
	var reads []string
	for _, e := range ru.sc.AllExprs() {
		for _, r := range e.ObjectReads {
			if r.Step == s.Name {
				reads = append(reads, dsl.ObjectReadString(r))
			}
		}
	}
	if len(reads) == 0 {
		return
	}
	slices.Sort(reads)
	reads = slices.Compact(reads)
	rt.Warn(fmt.Sprintf("the names read below %s's %s objects (%s) are not checked against its CRD, which could not be read (%v): a misspelled one reads as nil", s.Name, g.Kind, strings.Join(reads, ", "), why))
}

// objectMiss says which name e reads below a get step's object that the object's kind (its
// CRD) does not have, as the run found it (Result.Unknown): read, it would give nil whatever
// the object holds. "" when none.
func (j *Judge) objectMiss(e *dsl.Expr) string {
	for _, r := range e.ObjectReads {
		if x := j.rec.Results[r.Step]; x != nil {
			if why, ok := x.Unknown[strings.Join(r.Path, ".")]; ok {
				return why
			}
		}
	}
	return ""
}

// crdShape is the shape of a custom resource's object from its CRD, asked of the step's
// cluster once per kind and run; none when the cluster cannot say (no CRD, a built-in kind, an
// error: then nothing is checked).
func (ru *run) crdShape(ctx context.Context, s *dsl.Step, kind, apiVersion string) objectShape {
	t := ru.targetOf(s)
	if t == nil || t.Cluster == nil {
		return objectShape{}
	}
	os, ok := t.Cluster.(schema.ObjectSchemas)
	if !ok {
		return objectShape{}
	}
	key := apiVersion + " " + kind
	ru.mu.Lock()
	crd, seen := ru.crdShapes[key]
	ru.mu.Unlock()
	if seen {
		return crd
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	name, sch, err := os.ObjectSchema(cctx, kind, apiVersion)
	cancel()
	if err == nil && sch != nil {
		crd = objectShape{shape: kubeshape.FromCRD(sch), kind: name}
	} else if ist := istioShape(kind, apiVersion, err); ist.shape != nil {
		crd = ist // as vet checks it without a cluster
	} else if err != nil {
		crd = objectShape{kind: name, unread: err}
	}
	ru.mu.Lock()
	if ru.crdShapes == nil {
		ru.crdShapes = map[string]objectShape{}
	}
	ru.crdShapes[key] = crd
	ru.mu.Unlock()
	return crd
}

// checkPartials refuses, before a wait polls, a field of its match or absent that the custom
// resource's CRD does not have, or a built-in kind's (vet has checked those it could see: a
// ${...} fills a string only now, "${vars.n}" for spec.replicas is "1", no number): a
// misspelled field asked null, or a value of another type, would hold at once in an
// absence, and never match.
func (ru *run) checkPartials(ctx context.Context, rt *stepRuntime, s *dsl.Step, w *schema.Wait) error {
	for _, x := range []struct {
		field string
		o     schema.Object
	}{{"match", w.Match}, {"absent", w.Absent}} {
		msgs := ru.partialMisses(ctx, rt, s, x.field, x.o, true)
		for i := range msgs {
			msgs[i] = x.field + "." + msgs[i]
		}
		if len(msgs) > 0 {
			return errors.New(strings.Join(msgs, "; "))
		}
	}
	return nil
}

// partialMisses are the fields of the partial object o (of the wait's field: match, or a
// file's object) that its kind has not, each "path: what is wrong": a custom resource's, from
// its CRD; with builtin, a built-in kind's too (an object of a file vet could not read before
// the run, or that held ${...}).
func (ru *run) partialMisses(ctx context.Context, rt *stepRuntime, s *dsl.Step, field string, o schema.Object, builtin bool) []string {
	kind, _ := o["kind"].(string)
	if kind == "" {
		return nil
	}
	apiVersion, _ := o["apiVersion"].(string)
	var msgs []string
	if sh, _ := kubeshape.Builtin(apiVersion, kind); sh != nil {
		if builtin {
			schema.PartialMisses(o, func(path []string, msg string, _ *schema.IstioCheck) {
				msgs = append(msgs, fmt.Sprintf("%s: %s", strings.Join(path, "."), msg))
			})
		}
		return msgs
	}
	if builtin {
		// A file's object vet could not read: a Chainsaw expression key or value is refused
		// whatever its kind (schema.ChainsawForms; a built-in kind's above).
		schema.ChainsawForms(o, func(path []string, msg string) {
			msgs = append(msgs, fmt.Sprintf("%s: %s", strings.Join(path, "."), msg))
		})
		if len(msgs) > 0 {
			return msgs
		}
	}
	crd := ru.crdShape(ctx, s, kind, apiVersion)
	if crd.shape == nil {
		if crd.unread != nil {
			rt.Warn(fmt.Sprintf("the fields of the wait's %s are not checked against %s's CRD, which could not be read (%v): a misspelled one asked null holds at once", field, kind, crd.unread))
		}
		return nil
	}
	crd.shape.Check(map[string]any(o), func(path []string, m *kubeshape.Miss) {
		subject := crd.kind
		if m.At > 0 {
			subject += " " + strings.Join(path[:m.At], ".")
		}
		msgs = append(msgs, fmt.Sprintf("%s: %s%s %s", strings.Join(path, "."), subject, crd.from, m.Msg))
	})
	return msgs
}

// objectReadProblems are, for vet --server, the names the scenario's expressions read below
// its get steps' custom resources, and its waits' matches name, that the cluster's CRDs do not
// have: what the run would refuse when it first reads the kind (a built-in kind's vet has
// checked without a cluster).
//
// With istioOnly, only an Istio kind's: a run's preflight asks them, as a load for a run leaves
// them to the cluster's CRD (dsl.Options.IstioByCluster).
func objectReadProblems(ctx context.Context, t *schema.Target, sc *dsl.Scenario, istioOnly bool) []DryRunProblem {
	cache := map[string]objectShape{}
	crdOf := func(s *dsl.Step, kind, apiVersion string) objectShape {
		if kind == "" || dsl.HasInterpolation(kind) || dsl.HasInterpolation(apiVersion) || (istioOnly && !kubeshape.IstioGroup(apiVersion)) {
			return objectShape{}
		}
		if sh, _ := kubeshape.Builtin(apiVersion, kind); sh != nil {
			return objectShape{}
		}
		cl := t.Cluster
		if ct := t.Clusters[sc.ClusterOf(s)]; ct != nil && ct.Cluster != nil {
			cl = ct.Cluster
		}
		os, ok := cl.(schema.ObjectSchemas)
		if !ok {
			return objectShape{}
		}
		key := sc.ClusterOf(s) + " " + apiVersion + " " + kind
		if o, ok := cache[key]; ok {
			return o
		}
		var o objectShape
		if name, sch, err := os.ObjectSchema(ctx, kind, apiVersion); err == nil && sch != nil {
			o = objectShape{shape: kubeshape.FromCRD(sch), kind: name}
		} else {
			o = istioShape(kind, apiVersion, err) // as vet checks it without a cluster
		}
		cache[key] = o
		return o
	}
	var problems []DryRunProblem
	for _, e := range sc.AllExprs() {
		for _, r := range e.ObjectReads {
			s := sc.Step(r.Step)
			if s == nil {
				continue
			}
			g, ok := s.Params.(*schema.Get)
			if !ok || dsl.HasInterpolation(g.Path) {
				continue
			}
			crd := crdOf(s, g.Kind, g.APIVersion)
			if crd.shape == nil {
				continue
			}
			shape, base := dsl.ObjectShapeAt(crd.shape, g)
			if shape == nil {
				continue
			}
			if m := shape.Walk(r.Path); m != nil {
				col := r.Col[m.At]
				if col < 0 {
					col = r.Col[len(r.Col)-1]
				}
				problems = append(problems, DryRunProblem{Pos: e.PosAt(col), Msg: fmt.Sprintf("in expression %q: %s", e.Src, dsl.ObjectMiss(r.Step, shape, crd.kind, crd.from, base, r.Path, m)), Schema: crd.from == "", Whole: crd.from != ""})
			}
		}
	}
	for _, ph := range sc.Phases() {
		dsl.Walk(ph.Steps, func(s *dsl.Step) {
			if g, ok := s.Params.(*schema.Get); ok && kubeshape.IstioGroup(g.APIVersion) && g.Path != "" && !dsl.HasInterpolation(g.Path) && !strings.ContainsAny(g.Path, `"'[]{`) {
				// A get's path of an Istio kind, which the load left to the cluster's CRD
				// (vet checks a built-in kind's).
				if crd := crdOf(s, g.Kind, g.APIVersion); crd.shape != nil {
					path := strings.Split(g.Path, ".")
					if m := crd.shape.Walk(path); m != nil {
						subject := crd.kind
						if m.At > 0 {
							subject += " " + strings.Join(path[:m.At], ".")
						}
						problems = append(problems, DryRunProblem{Pos: s.FieldPos("path"), Msg: fmt.Sprintf("path %q: %s%s %s", g.Path, subject, crd.from, m.Msg), Schema: crd.from == "", Whole: crd.from != ""})
					}
				}
			}
			w, ok := s.Params.(*schema.Wait)
			if !ok {
				return
			}
			for _, x := range []struct {
				field string
				o     schema.Object
			}{{"match", w.Match}, {"absent", w.Absent}} {
				kind, _ := x.o["kind"].(string)
				apiVersion, _ := x.o["apiVersion"].(string)
				crd := crdOf(s, kind, apiVersion)
				if crd.shape == nil {
					continue
				}
				crd.shape.Check(map[string]any(x.o), func(path []string, m *kubeshape.Miss) {
					subject := crd.kind
					if m.At > 0 {
						subject += " " + strings.Join(path[:m.At], ".")
					}
					field := x.field + "." + strings.Join(path, ".")
					problems = append(problems, DryRunProblem{Pos: s.FieldPos(field), Msg: fmt.Sprintf("%s: %s%s %s", field, subject, crd.from, m.Msg), Schema: crd.from == "", Whole: crd.from != ""})
				})
			}
		})
	}
	return problems
}
