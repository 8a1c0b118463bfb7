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
	return &GuardRefused{Err: fmt.Errorf("%s would change %s, outside the scenario: %s", kind, strings.Join(bad, ", "), decl)}
}

// GuardRefused is the error of a step the namespace guard refused (this package's Guard, or a
// cluster driver's own check): the step changed nothing, so it tested nothing. A bare
// expectFail: true is no failure of what the step tests (an apply the guard stopped never
// reached the API server that was to reject it); a pattern naming the refusal is.
type GuardRefused struct{ Err error }

// InCluster is err, a refusal of the guard, said of a step of cluster c of a scenario of
// several clusters ("in cluster west, apply would change ..."); other errors as they are.
func InCluster(err error, c string) error {
	g, ok := err.(*GuardRefused)
	if !ok || c == "" {
		return err
	}
	return &GuardRefused{Err: fmt.Errorf("in cluster %s, %w", c, g.Err)}
}

func (e *GuardRefused) Error() string { return e.Err.Error() }
func (e *GuardRefused) Unwrap() error { return e.Err }

// NotTested says the guard refused the step, and what expectFail: true expects instead.
func (e *GuardRefused) NotTested() (why, expects string) {
	return "the namespace guard refused the step, which did nothing", "expectFail: true expects the step to fail, not to be refused"
}

// SystemNamespaces are the namespaces a scenario may change only when it opts in
// (systemNamespaces) and its run is given --allow-system-namespaces: Kubernetes' own, the
// default namespace (where everyone's unqualified objects land) and Istio's root namespace
// (istio-system by default: mesh-wide config lives there).
var SystemNamespaces = []string{"default", "istio-system", "kube-node-lease", "kube-public", "kube-system"}

// IsSystemNamespace reports whether ns is one of SystemNamespaces.
func IsSystemNamespace(ns string) bool { return slices.Contains(SystemNamespaces, ns) }

// CheckSystemNamespaces checks the system namespaces among a scenario's namespaces: each must
// be opted in (optIn, the scenario's systemNamespaces) and the command line must allow them
// (flag). It returns one message per namespace at fault, indexed as in namespaces, and one per
// opt-in that is not a system namespace listed in namespaces (index -1).
func CheckSystemNamespaces(namespaces, optIn []string, flag bool) map[int]string {
	out := map[int]string{}
	for i, ns := range namespaces {
		switch {
		case !IsSystemNamespace(ns):
		case !slices.Contains(optIn, ns):
			out[i] = fmt.Sprintf("namespace %q is a system namespace: a scenario that may change it says so with systemNamespaces: [%q], and its run needs --allow-system-namespaces", ns, ns)
		case !flag:
			out[i] = fmt.Sprintf("namespace %q is a system namespace: the scenario opts in (systemNamespaces), and the command line must too: add --allow-system-namespaces", ns)
		}
	}
	var bad []string
	for _, ns := range optIn {
		if !IsSystemNamespace(ns) || !slices.Contains(namespaces, ns) {
			bad = append(bad, fmt.Sprintf("%q", ns))
		}
	}
	if len(bad) > 0 {
		out[-1] = fmt.Sprintf("systemNamespaces lists %s: expected system namespaces (%s) that namespaces also lists", strings.Join(bad, ", "), strings.Join(SystemNamespaces, ", "))
	}
	return out
}
