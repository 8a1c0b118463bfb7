package interp

import (
	"context"
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
						problems = append(problems, DryRunProblem{Pos: s.FieldPos(serverFieldPath(line)), Msg: line})
					}
				}
			}
		})
	}
	return problems, skipped, nil
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
