package interp

import (
	"context"
	"fmt"
	"strings"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/schema"
)

// DryRunProblem is an object of a scenario that the cluster would reject.
type DryRunProblem struct {
	Pos dsl.Pos
	Msg string
}

// DryRun asks the cluster to validate, without persisting anything, every object the
// scenario's apply steps would apply, so that the cluster's schemas (e.g. Istio's CRDs) catch
// misspelled fields before a run. ${...} are evaluated with what is known before a run (vars,
// the target's values such as target.clusterDomain); an object whose ${...} need run-time
// captures is skipped, and skipped says which.
func DryRun(ctx context.Context, t *schema.Target, sc *dsl.Scenario) (problems []DryRunProblem, skipped []string, err error) {
	if t.Cluster == nil {
		return nil, nil, fmt.Errorf("the %s target has no cluster to validate against", t.Name)
	}
	namespace := func(ns string) string {
		if ns == "" && len(sc.Namespaces) > 0 {
			return sc.Namespaces[0]
		}
		return ns
	}
	rec := &Record{Vars: sc.Vars, TargetValues: t.Values, Snapshots: map[string]*SnapshotRecord{}}
	env := NewJudge(rec, sc).Env()
	for _, ph := range sc.Phases() {
		dsl.Walk(ph.Steps, func(s *dsl.Step) {
			p, ok := s.Params.(*schema.Apply)
			if !ok {
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
			files := make([]string, len(p.Files))
			for i, f := range p.Files {
				if !strings.HasPrefix(f, "/") && sc.Dir != "" {
					f = sc.Dir + "/" + f
				}
				files[i] = f
			}
			if e := t.Cluster.DryRun(ctx, p.Objects, files, namespace(p.Namespace)); e != nil {
				for _, line := range strings.Split(e.Error(), "\n") {
					if line = strings.TrimSpace(line); line != "" {
						problems = append(problems, DryRunProblem{Pos: s.Pos, Msg: line})
					}
				}
			}
		})
	}
	return problems, skipped, nil
}
