package interp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/schema"
)

// DryRunProblem is an object of a scenario that the cluster would reject.
type DryRunProblem struct {
	Pos dsl.Pos
	Msg string
	// Schema says the problem is a name the cluster's CRD has not (objectReadProblems), not
	// an object the cluster rejected.
	Schema bool
	// Whole says Msg says whose judgement it is (JudgeIstio's: the cluster's CRD, or Istio's
	// CRDs of the release vet knows where the cluster cannot judge).
	Whole bool
}

// DryRun asks the cluster to validate, without persisting anything, every object the
// scenario's apply steps would apply, so that the cluster's schemas (e.g. Istio's CRDs) catch
// misspelled fields before a run. ${...} are evaluated with what is known before a run (vars,
// the target's values such as target.clusterDomain); an object whose ${...} need run-time
// captures is skipped, and skipped says which. A merge patch is dry-run as a patch of the
// objects that exist, where the cluster can (schema.PatchDryRunner), and skipped names those
// that do not exist yet; a status write is skipped.
func DryRun(ctx context.Context, t *schema.Target, sc *dsl.Scenario) (problems []DryRunProblem, skipped []string, err error) {
	if t.Cluster == nil {
		return nil, nil, fmt.Errorf("the %s target has no cluster to validate against", t.Name)
	}
	// The problems of Istio kinds the load left to the cluster's CRDs: a step refused so is
	// not dry-run too (one problem is said once).
	problems, refused := JudgeIstio(ctx, t, sc)
	// Ephemeral namespaces get names of their own here too (they do not exist: their objects
	// are validated in namespace default, as those of a namespace the setup creates).
	sc = sc.ForRun("dry-run")
	namespace := func(ns string) string {
		if ns == "" {
			return sc.DefaultNamespace()
		}
		return ns
	}
	rec := &Record{Vars: sc.Vars, TargetValues: t.Values, Results: map[string]*Result{}, Namespaces: sc.Generated}
	env := NewJudge(rec, sc).Env()
	defined := crdKinds{}
	for _, ph := range sc.Phases() {
		dsl.Walk(ph.Steps, func(s *dsl.Step) {
			p, ok := s.Params.(*schema.Apply)
			if !ok {
				return
			}
			// The CRDs of this step define kinds for the steps after it (its own objects of
			// those kinds the driver handles itself).
			cl := t.Cluster
			if ct := t.Clusters[sc.ClusterOf(s)]; ct != nil && ct.Cluster != nil {
				cl = ct.Cluster // each step is validated by the cluster it runs on
			}
			defer defined.add(ctx, cl, sc, s)
			if refused[s.Path] {
				return
			}
			// A partial object (a merge patch) or a status is not an object a dry run of
			// server-side apply can judge; a merge patch is dry-run as a patch of the objects
			// that exist already, where the cluster can (PatchDryRunner).
			opts := p.Options()
			patcher, canPatch := cl.(schema.PatchDryRunner)
			patch := opts.Mode == "patch" && opts.Subresource == "" && canPatch
			if (opts.Mode == "patch" || opts.Subresource != "") && !patch {
				what := "merge patch"
				if opts.Subresource != "" {
					what = opts.Subresource + " write"
				}
				skipped = append(skipped, fmt.Sprintf("%s: %s (a %s is checked against the object when the step runs)", s.Pos, s.Path, what))
				return
			}
			if s.FileTemplates {
				skipped = append(skipped, fmt.Sprintf("%s: %s (its files' ${...} are filled when the step runs)", s.Pos, s.Path))
				return
			}
			if s.HasTemplates() {
				resolved, err := s.ResolveKnown(env)
				if err != nil {
					skipped = append(skipped, fmt.Sprintf("%s: %s (its ${...} need values captured during the run: %v)", s.Pos, s.Path, err))
					return
				}
				p = resolved.(*schema.Apply)
			}
			var e error
			if patch {
				var missing []schema.ObjectRef
				missing, e = patcher.DryRunPatch(ctx, p.Objects, scenarioFiles(sc, p.Files), namespace(p.Namespace))
				if len(missing) > 0 {
					names := make([]string, len(missing))
					for i, r := range missing {
						names[i] = r.Kind + " " + r.Qualified()
					}
					skipped = append(skipped, fmt.Sprintf("%s: %s (a merge patch of %s, which does not exist yet, is checked against the object when the step runs)", s.Pos, s.Path, strings.Join(names, ", ")))
				}
			} else {
				e = cl.DryRun(ctx, p.Objects, scenarioFiles(sc, p.Files), namespace(p.Namespace))
			}
			if e != nil && s.ExpectFail {
				// The step says the cluster refuses it: its rejection is the run's to judge.
				skipped = append(skipped, fmt.Sprintf("%s: %s (expectFail: the cluster rejects it, which the run judges against the step's expectFail)", s.Pos, s.Path))
				return
			}
			if by, ok := defined.deferrable(e); ok {
				skipped = append(skipped, fmt.Sprintf("%s: %s (checked when the step runs: the cluster does not serve %s before the run)", s.Pos, s.Path, strings.Join(by, ", ")))
				return
			}
			for _, pr := range serverProblems(s, e) {
				if c := sc.ClusterOf(s); c != "" {
					pr.Msg = "cluster " + c + ": " + pr.Msg // which cluster's schemas refused it
				}
				problems = append(problems, pr)
			}
		})
	}
	problems = append(problems, objectReadProblems(ctx, t, sc, false)...)
	return problems, skipped, nil
}

// serverProblems splits a dry run's error into one problem per line, each at the field of the
// step it is about.
func serverProblems(s *dsl.Step, err error) []DryRunProblem {
	if err == nil {
		return nil
	}
	var out []DryRunProblem
	for _, line := range strings.Split(err.Error(), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			out = append(out, DryRunProblem{Pos: s.FieldPos(serverFieldPath(line)), Msg: line})
		}
	}
	return out
}

// errorPos is where in an apply step the cluster's refusal of one of its objects is: the field
// its (first) error names, as serverProblems places a dry run's, or the object; zero when the
// error names no object of the step, or the step is no apply.
func errorPos(s *dsl.Step, err error) dsl.Pos {
	if _, ok := s.Params.(*schema.Apply); !ok || err == nil {
		return dsl.Pos{}
	}
	first, _, _ := strings.Cut(err.Error(), "\n")
	path := serverFieldPath(first)
	if path == "" {
		return dsl.Pos{}
	}
	return s.FieldPos(path)
}

// scenarioFiles resolves step file paths against the scenario's directory.
func scenarioFiles(sc *dsl.Scenario, fs []string) []string {
	files := make([]string, len(fs))
	for i, f := range fs {
		if !strings.HasPrefix(f, "/") && sc.Dir != "" {
			f = sc.Dir + "/" + f
		}
		files[i] = f
	}
	return files
}

// crdKinds are the kinds the CRDs of a scenario's apply steps define, each with the first
// step that applies it: objects of those kinds in later steps are checked when they run,
// once the cluster serves the kind, rather than refused before the run.
type crdKinds map[schema.GroupKind]*dsl.Step

// add records the kinds the CRDs of step s define (nothing for another kind of step).
func (k crdKinds) add(ctx context.Context, cl schema.Cluster, sc *dsl.Scenario, s *dsl.Step) {
	p, ok := s.Params.(*schema.Apply)
	if !ok || cl == nil {
		return
	}
	gks, err := cl.DefinedKinds(ctx, p.Objects, scenarioFiles(sc, p.Files))
	if err != nil {
		return // the step's own checks report what does not decode
	}
	for _, gk := range gks {
		if _, ok := k[gk]; !ok {
			k[gk] = s
		}
	}
}

// deferrable says whether err is only that the cluster does not serve kinds that earlier
// steps' CRDs define, and names them with those steps.
func (k crdKinds) deferrable(err error) ([]string, bool) {
	var uk *schema.UnknownKindsError
	if !errors.As(err, &uk) || len(uk.Kinds) == 0 {
		return nil, false
	}
	var by []string
	for _, gk := range uk.Kinds {
		s, ok := k[gk]
		if !ok {
			return nil, false
		}
		by = append(by, fmt.Sprintf("kind %s (its CRD is applied by the step at %s)", gk.Kind, s.Pos))
	}
	return by, true
}

var (
	// objectSourceRE finds which object of an apply step a server error is about.
	objectSourceRE = regexp.MustCompile(`\(objects\[(\d+)\]\)`)
	// fieldPathRE finds the field a server error names: spec.a.b[0].c, .spec.a, metadata.x.
	fieldPathRE = regexp.MustCompile(`(?:^|[\s.(])((?:spec|metadata|data|stringData)(?:\.[A-Za-z0-9_-]+|\[\d+\])*)`)
	indexRE     = regexp.MustCompile(`\[(\d+)\]`)
)

// serverFieldPath turns an API server's error about an object of an apply step into the path
// of the field inside the step ("objects.0.spec.listeners.0.protocl"), so that vet --server
// points at the field the user wrote; "" when the error names no object.
func serverFieldPath(msg string) string {
	m := objectSourceRE.FindStringSubmatch(msg)
	if m == nil {
		return ""
	}
	path := "objects." + m[1]
	if f := fieldPathRE.FindStringSubmatch(msg[strings.Index(msg, m[0])+len(m[0]):]); f != nil {
		path += "." + indexRE.ReplaceAllString(f[1], ".$1")
	}
	return path
}

// DryRunKey is what DryRun reads of sc: its clusters and namespaces, each apply step (place,
// cluster, objects, files), each get step, the object reads of its expressions and the checks
// of its Istio kinds, and its vars where an apply's ${...} reads them. Two scenarios with the
// same key (combinations of a sweep whose vars change only loads or claims) get the same
// answers from the same cluster, so vet --server asks once. "" when the key cannot be made:
// the scenario is dry-run on its own. A change to what DryRun reads belongs here too.
func DryRunKey(sc *dsl.Scenario) string {
	type stepKey struct {
		Path, Pos, Cluster string
		Kind               string
		Params             any
		ExpectFail         bool
		Templates          bool
	}
	type readKey struct {
		Pos   string
		Reads []dsl.ObjectRead
	}
	type istioKey struct {
		Check              schema.IstioCheck
		Pos, Field, Prefix string
		Step               string
	}
	k := struct {
		Name, Dir, Target, DefaultNamespace string
		Clusters                            []dsl.Cluster
		Namespaces, System                  []string
		Ephemeral                           []dsl.EphemeralNamespace
		ClusterScoped                       bool
		Steps                               []stepKey
		Reads                               []readKey
		Istio                               []istioKey
		Vars                                map[string]any
	}{
		Name: sc.Name, Dir: sc.Dir, Target: sc.Target, DefaultNamespace: sc.DefaultNamespace(),
		Clusters: sc.Clusters, Namespaces: sc.Namespaces, System: sc.SystemNamespaces,
		Ephemeral: sc.Ephemeral, ClusterScoped: sc.ClusterScoped,
	}
	// A ${...} of an object is sent as its value: resolved here with the vars alone (what
	// DryRun's own resolution reads besides them, a target's value or a namespace's name, is
	// the same at every combination); one that needs more makes the vars part of the key.
	env := NewJudge(&Record{Vars: sc.Vars, Results: map[string]*Result{}}, sc).Env()
	unresolved := false
	for _, ph := range sc.Phases() {
		dsl.Walk(ph.Steps, func(s *dsl.Step) {
			switch s.Params.(type) {
			case *schema.Apply, *schema.Get:
			default:
				return
			}
			params := s.Params
			if s.HasTemplates() && !s.FileTemplates {
				if r, err := s.ResolveKnown(env); err == nil {
					params = r
				} else {
					unresolved = true
				}
			}
			k.Steps = append(k.Steps, stepKey{Path: s.Path, Pos: s.Pos.String(), Cluster: sc.ClusterOf(s),
				Kind: fmt.Sprintf("%T", s.Params), Params: params, ExpectFail: s.ExpectFail, Templates: s.HasTemplates()})
		})
	}
	for _, e := range sc.AllExprs() {
		if len(e.ObjectReads) > 0 {
			k.Reads = append(k.Reads, readKey{Pos: e.Pos.String(), Reads: e.ObjectReads})
		}
	}
	for _, c := range sc.IstioChecks {
		ik := istioKey{Check: c.IstioCheck, Pos: c.Pos.String(), Field: c.Field, Prefix: c.Prefix}
		if c.Step != nil {
			ik.Step = c.Step.Path
		}
		k.Istio = append(k.Istio, ik)
	}
	if unresolved {
		k.Vars = sc.Vars
	}
	b, err := json.Marshal(k)
	if err != nil {
		return ""
	}
	return string(b)
}
