package dsl

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"

	"labrun.dev/labrun/internal/didyoumean"
	"labrun.dev/labrun/schema"
)

// podTemplateOf is the pod template of a workload the scenario applies (inline or from a
// file), with whether its labels are all known before the run.
type podTemplateOf struct {
	ns, kind, name string
	labels         labels.Set
	unknown        bool // a label's key or value is not a plain string known before the run
}

// podSelectorRef is a step's pick of pods by a label selector: the field it is written in,
// its namespace as written, and what picking none does.
type podSelectorRef struct {
	field, selector, namespace, consequence string
}

// podSelectorsOf are the selectors by which step s picks pods.
func podSelectorsOf(s *Step) []podSelectorRef {
	isPod := func(kind string) bool { return schema.KindKey(kind) == schema.KindKey("Pod") }
	const none = "the step finds no pod there"
	switch p := s.Params.(type) {
	case *schema.Logs:
		if p.Process == "" && p.File == "" {
			return []podSelectorRef{{"selector", p.Selector, p.Namespace, "the read finds no pod there and errs"}}
		}
	case *schema.Exec:
		return []podSelectorRef{{"selector", p.Selector, p.Namespace, none}}
	case *schema.Snapshot:
		if p.Envoy != nil {
			return []podSelectorRef{{"envoy.selector", p.Envoy.Selector, p.Envoy.Namespace, none}}
		}
	case *schema.Config:
		if p.Envoy != nil {
			return []podSelectorRef{{"envoy.selector", p.Envoy.Selector, p.Envoy.Namespace, none}}
		}
	case *schema.Load:
		if p.From != nil {
			return []podSelectorRef{{"from.selector", p.From.Selector, p.From.Namespace, none}}
		}
	case *schema.Kill:
		if p.Process == "" {
			return []podSelectorRef{{"selector", p.Selector, p.Namespace, "the kill deletes no pod there"}}
		}
	case *schema.Delete:
		if isPod(p.Kind) {
			return []podSelectorRef{{"selector", p.Selector, p.Namespace, "the delete deletes no pod there"}}
		}
	case *schema.Get:
		if isPod(p.Kind) {
			return []podSelectorRef{{"selector", p.Selector, p.Namespace, "the get lists no pod there, and a claim that none is there (len(…) == 0) holds whatever the pods did"}}
		}
	case *schema.Wait:
		if p.Condition != nil && isPod(p.Condition.Kind) {
			return []podSelectorRef{{"condition.selector", p.Condition.Selector, p.Namespace, "the wait finds no pod there"}}
		}
	}
	return nil
}

// lintPodSelectors warns of a step that picks pods by a label selector (logs, exec, snapshot,
// config, a load's from, kill, delete and get of pods, a wait for pods' condition) that no pod
// template the scenario applies in that namespace matches, where the scenario applies
// workloads there (LintUnmatchedLabels): a selector app=wbe beside a Deployment labelled
// app=web picks no pod, and the step errs, or reads nothing (a get's empty list holds
// "none left"). Set-based selectors (in, notin, !=, exists, !key) are judged as the API server
// judges them (labels.Parse, Matches). A selector with a ${...}, one that names a label a
// controller or Istio adds to pods (pod-template-hash, a *.kubernetes.io/ or *.istio.io/
// key) that no template carries, and a namespace where a template's labels or the
// scenario's applied files are not known before the run, are not judged; nor is a scenario
// with a local command that may make workloads (kubectl, helm, a shell).
func (d *decoder) lintPodSelectors(objs []applied, warn func(s *Step, field, code, format string, args ...any)) {
	var ts []podTemplateOf
	unknownFiles := false
	add := func(o schema.Object, ns string) {
		tl, _, ok := podTemplate(o)
		if !ok {
			return
		}
		kind, _ := o["kind"].(string)
		md, _ := o["metadata"].(map[string]any)
		name, _ := md["name"].(string)
		if mns, _ := md["namespace"].(string); mns != "" {
			ns = mns
		}
		t := podTemplateOf{ns: ns, kind: kind, name: name, labels: labels.Set{}}
		for k, v := range tl {
			s, ok := v.(string)
			if !ok || HasInterpolation(s) || HasInterpolation(k) {
				t.unknown = true
				continue
			}
			t.labels[k] = s
		}
		tmd := md
		if kind != "Pod" {
			tmd = dig(o, "spec", "template", "metadata")
			if kind == "CronJob" {
				tmd = dig(o, "spec", "jobTemplate", "spec", "template", "metadata")
			}
		}
		if raw, has := tmd["labels"]; has && tl == nil && raw != nil {
			t.unknown = true // labels that are not a map: a ${...}
		}
		ts = append(ts, t)
	}
	for _, a := range objs {
		add(a.obj, a.ns)
	}
	for _, s := range d.order {
		p, ok := s.Params.(*schema.Apply)
		if !ok || len(p.Files) == 0 {
			continue
		}
		for _, f := range p.Files {
			if strings.Contains(f, "${") {
				unknownFiles = true
			} else if _, _, err := d.readStepFile(f); err != nil {
				unknownFiles = true
			}
		}
		for _, fo := range d.stepFileObjects(p.Files) {
			add(fo.Object, d.defaultNamespace(p.Namespace))
		}
	}
	if len(ts) == 0 || unknownFiles || slices.ContainsFunc(d.order, makesWorkloads) {
		return
	}
	for _, s := range d.order {
		for _, ref := range podSelectorsOf(s) {
			if ref.selector == "" || HasInterpolation(ref.selector) {
				continue
			}
			ns := d.defaultNamespace(ref.namespace)
			if HasInterpolation(ns) && !strings.HasPrefix(ns, "${ns.") {
				continue
			}
			sel, err := labels.Parse(ref.selector)
			if err != nil {
				continue // the step's own check says so
			}
			var here []podTemplateOf
			unknown := false
			for _, t := range ts {
				switch {
				case t.ns == ns:
					here = append(here, t)
					unknown = unknown || t.unknown
				case HasInterpolation(t.ns):
					unknown = true // it may be applied in ns
				}
			}
			if len(here) == 0 || unknown || slices.ContainsFunc(here, func(t podTemplateOf) bool { return sel.Matches(t.labels) }) {
				continue
			}
			reqs, _ := sel.Requirements()
			if slices.ContainsFunc(reqs, func(r labels.Requirement) bool {
				return addedToPods(r.Key()) && !slices.ContainsFunc(here, func(t podTemplateOf) bool { return t.labels.Has(r.Key()) })
			}) {
				continue // a label the template does not say, on every pod
			}
			var carried []string
			for _, t := range here {
				carried = append(carried, fmt.Sprintf("%s %s: %s", t.kind, t.name, showLabelSet(t.labels)))
			}
			warn(s, ref.field, LintUnmatchedLabels,
				"selector %s matches no pod this scenario applies in namespace %s (%s)%s: unless something else makes pods labelled so there, %s; write the labels of the pods it is for",
				ref.selector, ns, strings.Join(carried, "; "), selectorNearMiss(reqs, here), ref.consequence)
		}
	}
}

// makesWorkloads says whether s is a command on this machine that may make workloads vet
// cannot see (kubectl, helm, istioctl, kustomize, a shell): their pods' labels are unknown.
func makesWorkloads(s *Step) bool {
	p, ok := s.Params.(*schema.Exec)
	if !ok || p.Pod != "" || p.Selector != "" || len(p.Argv) == 0 {
		return false
	}
	base := p.Argv[0][strings.LastIndex(p.Argv[0], "/")+1:]
	return slices.Contains([]string{"kubectl", "helm", "istioctl", "kustomize", "sh", "bash"}, base) || HasInterpolation(base)
}

// addedToPods says whether a label key is one Kubernetes' controllers or Istio may add to a
// pod beyond its template's (pod-template-hash, statefulset.kubernetes.io/pod-name,
// service.istio.io/canonical-name, …): a selector on it is not judged by the templates.
func addedToPods(key string) bool {
	switch key {
	case "pod-template-hash", "controller-revision-hash", "job-name", "controller-uid":
		return true
	}
	prefix, _, ok := strings.Cut(key, "/")
	if !ok {
		return false
	}
	for _, d := range []string{"kubernetes.io", "k8s.io", "istio.io"} {
		if prefix == d || strings.HasSuffix(prefix, "."+d) {
			return true
		}
	}
	return false
}

// selectorNearMiss is a " (did you mean …?)" for the first requirement of a selector that
// no template here meets where a label key or value the templates carry is close to it, or "".
func selectorNearMiss(reqs []labels.Requirement, here []podTemplateOf) string {
	values := map[string][]string{}
	for _, t := range here {
		for k, v := range t.labels {
			if !slices.Contains(values[k], v) {
				values[k] = append(values[k], v)
			}
		}
	}
	keys := slices.Sorted(maps.Keys(values))
	for _, r := range reqs {
		vals, has := values[r.Key()]
		switch r.Operator() {
		case selection.Equals, selection.DoubleEquals, selection.In, selection.Exists:
		default:
			continue // a key or value it excludes: no spelling to suggest
		}
		if !has {
			if near := didyoumean.Closest(r.Key(), keys); near != "" {
				return fmt.Sprintf(" (did you mean the label %s?)", near)
			}
			continue
		}
		slices.Sort(vals)
		for _, v := range slices.Sorted(maps.Keys(r.Values())) {
			if slices.Contains(vals, v) {
				continue
			}
			if near := didyoumean.Closest(v, vals); near != "" {
				return fmt.Sprintf(" (did you mean %s=%s?)", r.Key(), near)
			}
		}
	}
	return ""
}

// showLabelSet writes labels as "{app: web, version: v2}", keys in order.
func showLabelSet(l labels.Set) string {
	return showLabels(map[string]string(l))
}
