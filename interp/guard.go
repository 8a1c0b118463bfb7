package interp

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/schema"
)

// RefusedError is a scenario refused before anything ran: a step the target cannot run, or a
// mutation outside the scenario's namespaces (exit code 2); or a step whose driver the target
// lacks although it claims what the step needs (Infra: a fault of the target, exit code 3).
type RefusedError struct {
	Problems []string
	Infra    bool
}

func (e *RefusedError) Error() string {
	return "refused before running: " + strings.Join(e.Problems, "; ")
}

// preflight checks the whole scenario against the target before anything runs: the same
// checks vet makes (schema.Unsupported, schema.Guard), now against the target itself.
func (ru *run) preflight(ctx context.Context) error {
	var problems []string
	infra := false
	caps, drivers := targetCaps(ru.target), ru.target.Drivers()
	// What the load left to the cluster's CRDs of Istio kinds, a newer Istio than vet knows
	// may serve: judged now, by the cluster the run is on.
	istio, _ := JudgeIstio(ctx, ru.target, ru.sc)
	// And the names a wait's match, a get's path or an expression reads below an Istio kind's
	// object, which the load left to the cluster's CRD too (each step's cluster's).
	istio = append(istio, objectReadProblems(ctx, ru.target, ru.sc, true)...)
	for _, pr := range istio {
		if pr.Schema && !pr.Whole {
			pr.Msg = "by the cluster's CRD: " + pr.Msg
		}
		problems = append(problems, fmt.Sprintf("%s: %s", pr.Pos, pr.Msg))
	}
	defined := crdKinds{}
	for _, ph := range ru.sc.Phases() {
		dsl.Walk(ph.Steps, func(s *dsl.Step) {
			if s.Params == nil {
				problems = append(problems, fmt.Sprintf("%s: %s step without parameters", s.Pos, s.Kind))
				return
			}
			if msg := schema.Unsupported(s.Kind, s.Params, ru.target.Name, schema.TargetSpec{Caps: caps, Drivers: drivers}); msg != "" {
				if need := s.Params.Needs(); need.Cap == "" || caps[need.Cap] {
					infra = true // it has the capability, not the driver that serves it
				}
				problems = append(problems, fmt.Sprintf("%s: %s", s.Pos, msg))
				return
			}
			if cl := ru.targetOf(s).Cluster; cl != nil {
				defer defined.add(ctx, cl, ru.sc, s)
			}
			if s.HasTemplates() {
				return // guarded when the step starts, once its ${...} are known
			}
			_, err := ru.guard(ctx, s, s.Params)
			if _, ok := defined.deferrable(err); ok {
				// An earlier step applies the CRD: the step is guarded, and its objects
				// checked by the cluster, when it starts.
				ru.mu.Lock()
				ru.deferred[s] = true
				ru.mu.Unlock()
				return
			}
			if err != nil {
				problems = append(problems, fmt.Sprintf("%s: %v", s.Pos, err))
			}
		})
	}
	if len(problems) > 0 {
		return &RefusedError{Problems: problems, Infra: infra}
	}
	return nil
}

// targetCaps is the target's capabilities; a target that declares none has those of the
// drivers it holds.
func targetCaps(t *schema.Target) schema.Caps {
	if t.Caps != nil {
		return t.Caps
	}
	c := schema.Caps{}
	if t.Cluster != nil {
		c[schema.CapCluster], c[schema.CapPods], c[schema.CapHostsFile] = true, true, true
	}
	if t.Exec != nil || t.Load != nil {
		c[schema.CapHost] = true
	}
	if t.Stats != nil {
		c[schema.CapBackends] = true
	}
	if t.Processes != nil {
		c[schema.CapProcesses] = true
	}
	if t.DNS != nil {
		c[schema.CapLocalDNS] = true
	}
	return c
}

// guard refuses a mutation outside the scenario's namespaces, with the objects' scope as the
// cluster resolves it. decoded are the objects of params' objects and files as the cluster
// decoded them for that (nil when it names none): the step that writes or deletes them takes
// them (stepRuntime.GuardedObjects) instead of decoding them again.
func (ru *run) guard(ctx context.Context, s *dsl.Step, params schema.Params) (decoded []schema.ObjectRef, err error) {
	cluster := ru.targetOf(s).Cluster
	if cluster == nil {
		return nil, nil
	}
	ru.mu.Lock()
	deferred := ru.deferred[s]
	delete(ru.deferred, s)
	ru.mu.Unlock()
	if deferred {
		if err := ru.checkDeferred(ctx, s, params); err != nil {
			return nil, err
		}
	}
	m := params.Mutates(ru.namespace)
	var refs []schema.ObjectRef
	if len(m.Objects) > 0 || len(m.Files) > 0 {
		files := make([]string, len(m.Files))
		for i, f := range m.Files {
			p, err := (&stepRuntime{ru: ru, s: s}).ReadFile(f)
			if err != nil {
				return nil, err
			}
			files[i] = p
		}
		r, err := cluster.Objects(ctx, m.Objects, files, m.Namespace)
		if err != nil {
			return nil, err
		}
		refs = r
	}
	err = schema.Guard(s.Kind, m, refs, ru.sc.Allowed(), ru.sc.ClusterScoped)
	if len(ru.sc.Clusters) > 1 {
		err = schema.InCluster(err, ru.sc.ClusterOf(s)) // probe p30: which cluster's step
	}
	return refs, err
}

// checkDeferred does for a deferred apply step, when it starts, what the pre-run checks would
// have done had the cluster served its kinds: the cluster validates its objects (a dry run),
// and what it rejects is reported at the field written, as vet --server does.
func (ru *run) checkDeferred(ctx context.Context, s *dsl.Step, params schema.Params) error {
	p, ok := params.(*schema.Apply)
	if !ok {
		return nil
	}
	if opts := p.Options(); opts.Mode == "patch" || opts.Subresource != "" {
		return nil // a partial object: the write itself is the check
	}
	if s.ExpectFail {
		return nil // the apply's own rejection is judged by expectFail, as for any other apply
	}
	err := ru.targetOf(s).Cluster.DryRun(ctx, p.Objects, scenarioFiles(ru.sc, p.Files), ru.namespace(p.Namespace))
	problems := serverProblems(s, err)
	if len(problems) == 0 {
		return nil
	}
	lines := make([]string, len(problems))
	for i, pr := range problems {
		lines[i] = fmt.Sprintf("%s: rejected by the cluster: %s", pr.Pos, pr.Msg)
	}
	return errors.New(strings.Join(lines, "\n"))
}
