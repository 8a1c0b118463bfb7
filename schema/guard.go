package schema

import (
	"fmt"
	"slices"
	"strings"
)

// Guard refuses a mutation outside the scenario's namespaces: m is what a step of kind changes,
// refs its objects with their scope resolved (by the cluster at run time, or as far as they are
// known before it). The loader and the runner both call it.
func Guard(kind string, m Mutation, refs []ObjectRef, allowed []string, clusterScoped bool) error {
	var bad []string
	for _, ns := range m.Namespaces {
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
		case !clusterScoped:
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
	return fmt.Errorf("%s would change %s, outside the scenario: %s", kind, strings.Join(bad, ", "), decl)
}
