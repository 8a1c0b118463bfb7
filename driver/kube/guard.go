package kube

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"labrun.dev/labrun/schema"
)

// ErrRefused is wrapped by every error of a mutation the namespace guard refused, each a
// *schema.GuardRefused (refused): the step did nothing, which expectFail does not take for the
// failure it expects.
var ErrRefused = errors.New("refused")

// refused is a refusal of the guard's.
func refused(format string, args ...any) error {
	return &schema.GuardRefused{Err: fmt.Errorf(format, args...)}
}

// guard refuses mutations outside the allowed namespaces. It repeats the interpreter's own check
// so that a bug there (or a caller other than the interpreter) cannot touch other namespaces.
type guard struct {
	allowed       []string
	clusterScoped bool
}

func newGuard(namespaces []string, clusterScoped bool) guard {
	a := slices.Clone(namespaces)
	slices.Sort(a)
	return guard{allowed: slices.Compact(a), clusterScoped: clusterScoped}
}

// withoutSystem returns namespaces without the system namespaces that are not in optIn.
func withoutSystem(namespaces, optIn []string) []string {
	return slices.DeleteFunc(slices.Clone(namespaces), func(ns string) bool {
		return schema.IsSystemNamespace(ns) && !slices.Contains(optIn, ns)
	})
}

func (g guard) allows(ns string) bool { return ns != "" && slices.Contains(g.allowed, ns) }

func (g guard) list() string {
	if len(g.allowed) == 0 {
		return "none: the scenario lists no namespaces"
	}
	return strings.Join(g.allowed, ", ")
}

// namespace checks a mutation (op, e.g. "scale deployment backend") in namespace ns.
func (g guard) namespace(op, ns string) error {
	if g.allows(ns) {
		return nil
	}
	return refused("%s: %w: namespace %q is not one of the allowed namespaces (%s)%s", op, ErrRefused, ns, g.list(), systemNote(ns))
}

// systemNote explains the refusal of a system namespace.
func systemNote(ns string) string {
	if !schema.IsSystemNamespace(ns) {
		return ""
	}
	return "; it is a system namespace: the scenario must list it in systemNamespaces and the run needs --allow-system-namespaces"
}

// object checks a mutation of one object. namespaced says whether its kind lives in a namespace.
// A Namespace object must itself be allowed; other cluster-scoped objects need clusterScoped.
func (g guard) object(op string, kind, group, namespace, name string, namespaced bool) error {
	what := kindName(kind, namespace, name)
	switch {
	case namespaced:
		return g.namespace(op+" "+what, namespace)
	case kind == "Namespace" && group == "":
		if g.allows(name) {
			return nil
		}
		return refused("%s %s: %w: namespace %q is not one of the allowed namespaces (%s)%s", op, what, ErrRefused, name, g.list(), systemNote(name))
	case g.clusterScoped:
		return nil
	default:
		return refused("%s %s: %w: it is cluster-scoped and the scenario does not set clusterScoped: true", op, what, ErrRefused)
	}
}

// kindName prints an object as "Kind namespace/name" (or "Kind name" when cluster-scoped).
func kindName(kind, namespace, name string) string {
	if namespace == "" {
		return kind + " " + name
	}
	return kind + " " + namespace + "/" + name
}
