package dsl

import (
	"fmt"
	"slices"
	"strings"

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

// equalityLabels reads a label selector made of equality terms (app=client,version=v1) as
// its labels; false for a set-based one (in, notin, !=, exists) or one with a ${...}.
func equalityLabels(sel string) (map[string]string, bool) {
	if HasInterpolation(sel) || strings.TrimSpace(sel) == "" {
		return nil, false
	}
	m := map[string]string{}
	for _, term := range strings.Split(sel, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(term), "=")
		k, v = strings.TrimSpace(k), strings.TrimPrefix(strings.TrimSpace(v), "=") // k==v
		if !ok || k == "" || strings.ContainsAny(k, "! ") || strings.ContainsAny(v, "() ") {
			return nil, false
		}
		m[k] = strings.TrimSpace(v)
	}
	return m, true
}

// overlap reports whether two equality selectors can match one pod: no label they both name
// with two values.
func overlap(a, b map[string]string) bool {
	for k, v := range a {
		if w, ok := b[k]; ok && w != v {
			return false
		}
	}
	return true
}

// replacesPods says how step s may delete or replace pods that envoy's selector matches (in
// its namespace), for a message; "" when it does not, or when the scenario does not say (a
// workload it does not apply, a name with a ${...}).
func (d *decoder) replacesPods(s *Step, envoy *schema.PodRef, objs []applied) string {
	ns := d.defaultNamespace(envoy.Namespace)
	want, ok := equalityLabels(envoy.Selector)
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
			if kill, ok := equalityLabels(p.Selector); ok && overlap(kill, want) {
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
			if del, ok := equalityLabels(p.Selector); ok && overlap(del, want) {
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
