package schema

import (
	"fmt"
	"strings"

	"labrun.dev/labrun/internal/kubeshape"
)

// ObjectKindProblem says what is wrong with the kind and apiVersion of o, an object an apply
// writes or a delete names, and at which of the two: an apiVersion Kubernetes removed, an Istio
// group's kind or version Istio does not serve, a kind not spelled as the API spells it (the
// API server takes an object's kind as written: a plural or short name is kubectl's); "" when
// nothing is, or vet cannot tell (a templated one, a custom resource of another group). istio
// says the problem is that Istio's CRDs of kubeshape.IstioAPIVersion serve no such kind or
// version, which a newer Istio may (IstioCheck).
func ObjectKindProblem(o Object) (field, msg string, istio bool) {
	kind, _ := o["kind"].(string)
	apiVersion, _ := o["apiVersion"].(string)
	if kind == "" || strings.Contains(kind, "${") || strings.Contains(apiVersion, "${") {
		return "", "", false
	}
	if msg := kubeshape.Removed(apiVersion, kind); msg != "" {
		return "apiVersion", msg, false
	}
	if field, msg := kubeshape.IstioServes(apiVersion, kind); msg != "" {
		_, short := kubeshape.IstioShortKind(kind)
		return field, msg, short == "" // a short name is no kind in any release
	}
	if _, name := kubeshape.Known(apiVersion, kind); name != "" && name != kind {
		return "kind", fmt.Sprintf("kind %q: expected %q, as the API spells it (an object's kind is case-sensitive, and a plural or short name is kubectl's, not the API's): the API server serves no kind %s", kind, name, kind), false
	}
	return "", "", false
}

// ObjectProblems calls miss for every field of o, a whole object an apply writes (one of its
// objects, or of its files), that the API server refuses or drops, as vet can tell without a
// cluster: for a built-in kind (kubeshape.Builtin) and an Istio kind (kubeshape.Istio, from
// Istio's CRDs), a field the kind has not (with did-you-mean), a scalar of another JSON type
// than its field's ("1" where Istio wants an integer), a value its field's enum has not
// (loadBalancer.simple: ROUNDROBIN), a kind not spelled as the API spells it (destinationrule),
// an apiVersion Kubernetes removed or Istio does not serve. Each with its path in o ("kind",
// "spec.trafficPolicy.loadBalancer.simple") and what is wrong. A field of an Istio CRD that
// keeps unknown fields would be dropped, not refused: the experiment would run without it.
// A custom resource of another group is left to the cluster. value says the value written at
// path is wrong (its type, an enum's, a kind's or apiVersion's spelling), not its name.
// fromYAML says o was read from a file's YAML: a bool where a string belongs then says that
// YAML reads an unquoted on, off, yes or no as one. istio, when not nil, is the problem as the
// cluster's CRD can judge it instead: one of an Istio kind, which a newer Istio may not have.
func ObjectProblems(o Object, fromYAML bool, miss func(path []string, msg string, value bool, istio *IstioCheck)) {
	kind, _ := o["kind"].(string)
	apiVersion, _ := o["apiVersion"].(string)
	if kind == "" || strings.Contains(kind, "${") || strings.Contains(apiVersion, "${") {
		return
	}
	if field, msg, istio := ObjectKindProblem(o); msg != "" {
		var ic *IstioCheck
		if istio {
			ic = &IstioCheck{Kind: kind, APIVersion: apiVersion, Msg: msg}
		}
		miss([]string{field}, msg, true, ic)
		if field != "kind" || istio {
			return // a removed version's fields differ from the current one's; Istio serves none
		}
	}
	sh, name := kubeshape.Known(apiVersion, kind)
	if sh == nil {
		return
	}
	// An Istio kind's fields and enums are those of one Istio release: a newer one may have
	// more, and its user reads which release vet knows.
	from := kubeshape.From(apiVersion)
	sh.CheckObject(map[string]any(o), func(path []string, m *kubeshape.Miss) {
		subject := name
		if m.At > 0 {
			subject += " " + strings.Join(path[:m.At], ".")
		}
		msg := subject + from + " " + m.Msg
		if fromYAML && m.BoolForString {
			msg += " (YAML reads an unquoted on, off, yes, no as a bool: quote it)"
		}
		var ic *IstioCheck
		if from != "" && m.Release {
			msg += kubeshape.Newer(apiVersion)
			ic = &IstioCheck{Kind: kind, APIVersion: apiVersion, Object: o, Path: path, Msg: msg}
		}
		miss(path, msg, m.Value, ic)
	})
}
