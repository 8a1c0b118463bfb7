package dsl

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"

	"labrun.dev/labrun/schema"
)

// lintPodReplaced warns of reads of an Envoy by selector across a step that replaces the pods
// the selector matches (LintPodReplaced): a delta of two snapshots by one selector with a kill,
// restart, scale or delete of those pods that may run between them, and a series sampled by
// selector while such a step may run. A selector reads the first ready pod it matches; once
// that pod is gone the next snapshot reads another pod's sidecar, a new Envoy counting from
// zero, and the run then errs on the delta (or the series has no max, min, first, last): vet
// says so before the run spends its time.
func (d *decoder) lintPodReplaced(objs []applied, warn func(s *Step, field, code, format string, args ...any)) {
	warned := map[*Step]bool{}
	for _, pr := range d.deltaPairs() {
		from, to := pr.from, pr.to
		fe, te := envoyBySelector(from), envoyBySelector(to)
		if fe == nil || te == nil || warned[to] || from.Cluster != to.Cluster ||
			fe.Selector != te.Selector || d.defaultNamespace(fe.Namespace) != d.defaultNamespace(te.Namespace) {
			continue
		}
		for _, s := range d.order {
			if s == from || s == to || d.endedBefore(s, from) || d.endedBefore(to, s) || s.Cluster != to.Cluster {
				continue
			}
			if what := d.replacesPods(s, fe, objs); what != "" {
				warned[to] = true
				warn(to, "envoy.selector", LintPodReplaced, "the delta of %s and %s reads both snapshots by selector %s, and %s %s may run between them: %s, so %s may read another pod's sidecar (a new Envoy, counting from zero) and the delta then errs when judged; snapshot a pod by name that the step leaves alone, or take before and after within one pod's life",
					from.Name, to.Name, fe.Selector, s.Kind, s.Shown, what, to.Name)
				break
			}
		}
	}
	reads := d.statsRead()
	for _, s := range d.order {
		e := envoyBySelector(s)
		if e == nil || s.Every <= 0 || s.Name == "" || len(reads[s.Name]) == 0 || warned[s] {
			continue
		}
		for _, k := range d.order {
			if k == s || k.Cluster != s.Cluster || !(d.mayRun(k, s) || d.mayRun(s, k)) {
				continue
			}
			if what := d.replacesPods(k, e, objs); what != "" {
				warned[s] = true
				warn(s, "envoy.selector", LintPodReplaced, "series %s samples by selector %s, and %s %s may run while it samples: %s, so later samples may read another pod's sidecar (a new Envoy, counting from zero) and the series' max, min, first, last and samples then have no value; sample a pod by name that the step leaves alone, or one series before the step and one after",
					s.Name, e.Selector, k.Kind, k.Shown, what)
				break
			}
		}
	}
}

// envoyBySelector is the Envoy a snapshot step reads by a selector known before the run, or nil.
func envoyBySelector(s *Step) *schema.PodRef {
	p, ok := s.Params.(*schema.Snapshot)
	if !ok || p.Envoy == nil || p.Envoy.Selector == "" || HasInterpolation(p.Envoy.Selector) {
		return nil
	}
	return p.Envoy
}

// parseSelector reads a label selector as the API server does (equality terms, and the
// set-based in, notin, !=, exists and !key); false for one with a ${...}, an empty one, or
// one the API server would refuse (its own check says so).
func parseSelector(sel string) (labels.Selector, bool) {
	if HasInterpolation(sel) || strings.TrimSpace(sel) == "" {
		return nil, false
	}
	parsed, err := labels.Parse(sel)
	if err != nil {
		return nil, false
	}
	return parsed, true
}

// labelSetOf is the plain string labels of a map written in an object.
func labelSetOf(m map[string]any) labels.Set {
	out := labels.Set{}
	for k, v := range m {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}

// mayOverlap reports whether two selectors can match one pod: no two of their requirements
// on one key contradict each other (app=a and app=b; app in (a) and app notin (a); app and
// !app). Requirements on different keys never do.
func mayOverlap(a, b labels.Selector) bool {
	ra, _ := a.Requirements()
	rb, _ := b.Requirements()
	for _, x := range ra {
		for _, y := range rb {
			if x.Key() == y.Key() && (contradicts(x, y) || contradicts(y, x)) {
				return false
			}
		}
	}
	return true
}

// contradicts says no label value meets both x and y (x one that asks for the key).
func contradicts(x, y labels.Requirement) bool {
	var want []string // the values x allows, nil for any
	switch x.Operator() {
	case selection.Equals, selection.DoubleEquals, selection.In:
		want = slices.Collect(maps.Keys(x.Values()))
	case selection.Exists:
	default:
		return false
	}
	switch y.Operator() {
	case selection.DoesNotExist:
		return true
	case selection.Equals, selection.DoubleEquals, selection.In:
		return want != nil && !slices.ContainsFunc(want, func(v string) bool { return y.Values().Has(v) })
	case selection.NotEquals, selection.NotIn:
		return want != nil && !slices.ContainsFunc(want, func(v string) bool { return !y.Values().Has(v) })
	}
	return false
}

// replacesPods says how step s may delete or replace pods that envoy's selector matches (in
// its namespace), for a message; "" when it does not, or when the scenario does not say (a
// workload it does not apply, a name with a ${...}).
func (d *decoder) replacesPods(s *Step, envoy *schema.PodRef, objs []applied) string {
	ns := d.defaultNamespace(envoy.Namespace)
	want, ok := parseSelector(envoy.Selector)
	if !ok {
		return ""
	}
	sameNS := func(n string) bool { return d.defaultNamespace(n) == ns }
	// workload finds the applied workload of a kind and name whose pods the selector matches.
	workload := func(kinds []string, name, namespace string) string {
		if name == "" || HasInterpolation(name) || !sameNS(namespace) {
			return ""
		}
		for _, a := range objs {
			kind, _ := a.obj["kind"].(string)
			md, _ := a.obj["metadata"].(map[string]any)
			n, _ := md["name"].(string)
			if n != name || a.namespace() != ns || !slices.Contains(kinds, kind) {
				continue
			}
			if labels, _, ok := podTemplate(a.obj); ok && selects(envoy, labels, a.obj) {
				return fmt.Sprintf("%s %s, whose pods selector %s matches", kind, name, envoy.Selector)
			}
		}
		return ""
	}
	switch p := s.Params.(type) {
	case *schema.Kill:
		if p.Process != "" || !sameNS(p.Namespace) {
			return ""
		}
		if p.Selector != "" {
			if kill, ok := parseSelector(p.Selector); ok && mayOverlap(kill, want) {
				return fmt.Sprintf("it deletes the pods of selector %s, among them perhaps the one %s picked", p.Selector, envoy.Selector)
			}
			return ""
		}
		if p.Pod != "" && !HasInterpolation(p.Pod) {
			for _, a := range objs {
				if a.namespace() != ns {
					continue
				}
				if labels, _, ok := podTemplate(a.obj); ok && selects(&schema.PodRef{Pod: p.Pod}, labels, a.obj) && selects(envoy, labels, a.obj) {
					return fmt.Sprintf("it deletes pod %s, which selector %s matches", p.Pod, envoy.Selector)
				}
			}
		}
	case *schema.Restart:
		if w := workload([]string{"Deployment"}, p.Deployment, p.Namespace); w != "" {
			return "it replaces every pod of " + w
		}
	case *schema.Scale:
		if w := workload([]string{"Deployment"}, p.Deployment, p.Namespace); w != "" {
			return "it adds or removes pods of " + w + " (the first ready by name may change)"
		}
	case *schema.Delete:
		if !sameNS(p.Namespace) && p.Namespace != "" {
			return ""
		}
		if strings.EqualFold(p.Kind, "Pod") || strings.EqualFold(p.Kind, "pods") {
			if del, ok := parseSelector(p.Selector); ok && mayOverlap(del, want) {
				return fmt.Sprintf("it deletes the pods of selector %s, among them perhaps the one %s picked", p.Selector, envoy.Selector)
			}
		}
		for _, o := range p.Objects {
			kind, _ := o["kind"].(string)
			md, _ := o["metadata"].(map[string]any)
			name, _ := md["name"].(string)
			onNS, _ := md["namespace"].(string)
			if onNS == "" {
				onNS = p.Namespace
			}
			if w := workload([]string{kind}, name, onNS); w != "" {
				return "it deletes " + w
			}
		}
	}
	return ""
}
