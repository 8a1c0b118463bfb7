package interp

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/schema"
)

// RefusedError is a scenario refused before anything ran: a step the target cannot run, or a
// mutation outside the scenario's namespaces. Exit code 2.
type RefusedError struct {
	Problems []string
}

func (e *RefusedError) Error() string {
	return "refused before running: " + strings.Join(e.Problems, "; ")
}

// preflight checks the whole scenario against the target before anything runs.
func (ru *run) preflight(ctx context.Context) error {
	var problems []string
	for _, ph := range ru.sc.Phases() {
		dsl.Walk(ph.Steps, func(s *dsl.Step) {
			if msg := ru.unsupported(s); msg != "" {
				problems = append(problems, fmt.Sprintf("%s: %s", s.Pos, msg))
				return
			}
			if s.HasTemplates() {
				return // checked when the step starts, once its ${...} are known
			}
			if err := ru.guard(ctx, s, s.Params); err != nil {
				problems = append(problems, fmt.Sprintf("%s: %v", s.Pos, err))
			}
		})
	}
	if len(problems) > 0 {
		return &RefusedError{Problems: problems}
	}
	return nil
}

// unsupported says why the target cannot run s, or "".
func (ru *run) unsupported(s *dsl.Step) string {
	t := ru.target
	need := kinds[s.Kind].driver
	switch p := s.Params.(type) {
	case *schema.Kill:
		if p.Process != "" {
			need = "Processes"
		} else {
			need = "Cluster"
		}
	case *schema.Wait:
		if p.Until == "" {
			need = "Cluster"
		}
	}
	have := map[string]bool{
		"": true, "Cluster": t.Cluster != nil, "Exec": t.Exec != nil, "Load": t.Load != nil,
		"Stats": t.Stats != nil, "Logs": t.Logs != nil, "DNS": t.DNS != nil, "Processes": t.Processes != nil,
	}
	if have[need] {
		return ""
	}
	what := map[string]string{
		"Cluster": "a Kubernetes cluster", "Exec": "command execution", "Load": "load generation",
		"Stats": "stats reading", "Logs": "log reading", "DNS": "a lab DNS server", "Processes": "local processes",
	}[need]
	return fmt.Sprintf("a %s step needs %s, which the %s target does not have", s.Kind, what, t.Name)
}

// guard refuses a mutation outside the scenario's namespaces.
func (ru *run) guard(ctx context.Context, s *dsl.Step, params any) error {
	if ru.target.Cluster == nil {
		return nil
	}
	var namespaces []string
	var refs []schema.ObjectRef
	switch p := params.(type) {
	case *schema.Apply:
		r, err := ru.target.Cluster.Objects(ctx, p.Objects, ru.files(p.Files), ru.namespace(p.Namespace))
		if err != nil {
			return err
		}
		refs = r
	case *schema.Delete:
		r, err := ru.target.Cluster.Objects(ctx, p.Objects, ru.files(p.Files), ru.namespace(p.Namespace))
		if err != nil {
			return err
		}
		refs = r
	case *schema.Scale:
		namespaces = append(namespaces, ru.namespace(p.Namespace))
	case *schema.Restart:
		namespaces = append(namespaces, ru.namespace(p.Namespace))
	case *schema.Kill:
		if p.Process == "" {
			namespaces = append(namespaces, ru.namespace(p.Namespace))
		}
	case *schema.DNS:
		if p.Server != nil {
			namespaces = append(namespaces, ru.namespace(p.Server.Namespace))
		}
	default:
		return nil
	}
	allowed := ru.sc.Namespaces
	var bad []string
	for _, ns := range namespaces {
		if !slices.Contains(allowed, ns) {
			bad = append(bad, fmt.Sprintf("namespace %q", ns))
		}
	}
	for _, r := range refs {
		switch {
		case r.Namespace != "":
			if !slices.Contains(allowed, r.Namespace) {
				bad = append(bad, fmt.Sprintf("%s %s/%s", r.Kind, r.Namespace, r.Name))
			}
		case r.Kind == "Namespace" && slices.Contains(allowed, r.Name):
		case !ru.sc.ClusterScoped:
			bad = append(bad, fmt.Sprintf("cluster-scoped %s %s (set clusterScoped: true to allow it)", r.Kind, r.Name))
		}
	}
	if len(bad) == 0 {
		return nil
	}
	decl := "the scenario declares no namespaces"
	if len(allowed) > 0 {
		decl = "the scenario's namespaces are " + strings.Join(allowed, ", ")
	}
	return fmt.Errorf("%s would change %s, outside the scenario: %s", s.Kind, strings.Join(bad, ", "), decl)
}
