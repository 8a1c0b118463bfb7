package dsl

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"labrun.dev/labrun/schema"
)

// appliedPods is the labels of the pods a workload the scenario applies makes, and where.
type appliedPods struct {
	ns, kind, name string
	labels         map[string]string
}

// appliedPodsOf are the pod templates of the objects the scenario applies (podTemplate). A
// label whose value is not a plain string (a ${...} is a string) is left out.
func appliedPodsOf(objs []applied) []appliedPods {
	var out []appliedPods
	for _, a := range objs {
		labels, _, ok := podTemplate(a.obj)
		if !ok {
			continue
		}
		kind, _ := a.obj["kind"].(string)
		md, _ := a.obj["metadata"].(map[string]any)
		name, _ := md["name"].(string)
		t := appliedPods{ns: a.namespace(), kind: kind, name: name, labels: map[string]string{}}
		for k, v := range labels {
			if s, ok := v.(string); ok {
				t.labels[k] = s
			}
		}
		out = append(out, t)
	}
	return out
}

// dig is the map at path below m, or nil.
func dig(m map[string]any, path ...string) map[string]any {
	for _, k := range path {
		next, ok := m[k].(map[string]any)
		if !ok {
			return nil
		}
		m = next
	}
	return m
}

// stringMap is the plain string entries of a map written in an object; ok is false when any
// key or value is not known before the run (a ${...}), or the map is not one.
func stringMap(v any) (map[string]string, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	out := map[string]string{}
	for k, e := range m {
		s, ok := e.(string)
		if !ok || HasInterpolation(s) || HasInterpolation(k) {
			return nil, false
		}
		out[k] = s
	}
	return out, true
}

// matches says every label of sel is among labels.
func (t appliedPods) matches(sel map[string]string) bool {
	for k, v := range sel {
		if t.labels[k] != v {
			return false
		}
	}
	return true
}

// nearMiss names, for sel that matches none of ts, a template whose labels differ from it
// in one value, one that differs only in case first, then the one whose value is closest:
// "Deployment reviews-v2's pods carry version: v2" (app: backnd named client's app: client,
// the first template, where backend's is closer).
func nearMiss(ts []appliedPods, sel map[string]string) string {
	best, bestFold, bestDist := "", false, 0
	for _, t := range ts {
		var off []string
		fold := true
		dist := 0
		for _, k := range slices.Sorted(maps.Keys(sel)) {
			v, ok := t.labels[k]
			if !ok {
				off = nil
				break
			}
			if v != sel[k] {
				off = append(off, fmt.Sprintf("%s: %s", k, v))
				fold = fold && strings.EqualFold(v, sel[k])
				dist = EditDistance(v, sel[k])
			}
		}
		if len(off) == 1 && (best == "" || fold && !bestFold || fold == bestFold && dist < bestDist) {
			best, bestFold, bestDist = fmt.Sprintf(" (%s %s's pods carry %s)", t.kind, t.name, off[0]), fold, dist
		}
	}
	return best
}

// workloadSelectors are the kinds whose spec picks workloads by labels, and where.
var workloadSelectors = map[string][]string{
	"AuthorizationPolicy":   {"selector", "matchLabels"},
	"PeerAuthentication":    {"selector", "matchLabels"},
	"RequestAuthentication": {"selector", "matchLabels"},
	"Telemetry":             {"selector", "matchLabels"},
	"WasmPlugin":            {"selector", "matchLabels"},
	"Sidecar":               {"workloadSelector", "labels"},
	"EnvoyFilter":           {"workloadSelector", "labels"},
}

// lintUnmatchedLabels warns of subsets and policy selectors that no pod template of the
// scenario matches, where the scenario applies the workloads they would pick.
func (d *decoder) lintUnmatchedLabels(objs []applied, ix hosts, warn func(s *Step, field, code, format string, args ...any)) {
	ts := appliedPodsOf(objs)
	made := d.madeEmptyable(objs)
	if len(ts) == 0 && len(made) == 0 {
		return
	}
	inNS := func(ns string) []appliedPods {
		var out []appliedPods
		for _, t := range ts {
			if t.ns == ns {
				out = append(out, t)
			}
		}
		return out
	}
	for i, a := range objs {
		kind, _ := a.obj["kind"].(string)
		spec, _ := a.obj["spec"].(map[string]any)
		field := fmt.Sprintf("objects.%d", objIndex(objs, i))
		ns := a.namespace()
		if HasInterpolation(ns) && !strings.HasPrefix(ns, "${ns.") {
			continue
		}
		if kind == "DestinationRule" {
			host, _ := spec["host"].(string)
			svc := ix.service(host, ns)
			if svc == nil {
				continue
			}
			sel, ok := stringMap(dig(svc, "spec")["selector"])
			if !ok || len(sel) == 0 {
				continue
			}
			svcNS := ns
			if md, _ := svc["metadata"].(map[string]any); md != nil {
				if s, _ := md["namespace"].(string); s != "" {
					svcNS = s
				}
			}
			var backing []appliedPods
			for _, t := range inNS(svcNS) {
				if t.matches(sel) {
					backing = append(backing, t)
				}
			}
			if len(backing) == 0 {
				continue // the Service's pods are not the scenario's
			}
			subsets, _ := spec["subsets"].([]any)
			for j, sub := range subsets {
				sm, _ := sub.(map[string]any)
				labels, ok := stringMap(sm["labels"])
				if !ok || len(labels) == 0 || slices.ContainsFunc(backing, func(t appliedPods) bool { return t.matches(labels) }) {
					continue
				}
				name, _ := sm["name"].(string)
				warn(a.step, fmt.Sprintf("%s.spec.subsets.%d.labels", field, j), LintUnmatchedLabels,
					"DestinationRule subset %q selects pods labelled %s, but no pod of Service %q this scenario applies carries them%s: the subset has no endpoint, and every request routed to it fails (503 UH); write the labels its pod template has",
					name, showLabels(labels), host, nearMiss(backing, labels))
			}
			continue
		}
		path, ok := workloadSelectors[kind]
		if !ok {
			continue
		}
		labels, ok := stringMap(dig(spec, path[0])[path[1]])
		if !ok || len(labels) == 0 {
			continue
		}
		here := inNS(ns)
		if len(here) == 0 && made[ns] {
			warn(a.step, fmt.Sprintf("%s.spec.%s.%s", field, path[0], path[1]), LintUnmatchedLabels,
				"%s selects workloads labelled %s in namespace %s, which this scenario makes and applies no workload in: it applies to nothing there; apply it in the namespace of the pods it is for",
				kind, showLabels(labels), ns)
			continue
		}
		if len(here) == 0 || slices.ContainsFunc(here, func(t appliedPods) bool { return t.matches(labels) }) {
			continue
		}
		warn(a.step, fmt.Sprintf("%s.spec.%s.%s", field, path[0], path[1]), LintUnmatchedLabels,
			"%s selects workloads labelled %s, but no pod this scenario applies in namespace %s carries them%s: it applies to nothing there; write the labels of the pods it is for",
			kind, showLabels(labels), ns, nearMiss(here, labels))
	}
}

// madeEmptyable are the namespaces this scenario makes itself, whose pods are those it
// applies: its ephemeral namespaces ("${ns.KEY}", new and empty on every run) and the
// Namespaces it applies (a fresh one in a lab; one that existed already may hold pods, which
// the warning's words allow). None where a pod template vet cannot read may be applied: an
// apply's files, or a command that may make workloads (kubectl, helm, a shell).
func (d *decoder) madeEmptyable(objs []applied) map[string]bool {
	for _, s := range d.order {
		if p, ok := s.Params.(*schema.Apply); ok && len(p.Files) > 0 || makesWorkloads(s) {
			return nil
		}
	}
	made := map[string]bool{}
	for _, e := range d.sc.Ephemeral {
		made["${ns."+e.Key+"}"] = true
	}
	for _, a := range objs {
		if kind, _ := a.obj["kind"].(string); kind != "Namespace" {
			continue
		}
		md, _ := a.obj["metadata"].(map[string]any)
		if name, _ := md["name"].(string); name != "" && !HasInterpolation(name) && !schema.IsSystemNamespace(name) {
			made[name] = true
		}
	}
	for _, a := range objs {
		if _, _, ok := podTemplate(a.obj); ok && a.namespace() != "" && HasInterpolation(a.namespace()) && !strings.HasPrefix(a.namespace(), "${ns.") {
			return nil // a workload whose namespace is known only at run time may land in any
		}
	}
	return made
}

// showLabels writes labels as "{app: web, version: v2}", keys in order.
func showLabels(m map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, k+": "+m[k])
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// replicasOf is how many pods a workload the scenario applies runs: a Deployment's,
// StatefulSet's or ReplicaSet's spec.replicas (1 where it gives none, as Kubernetes
// defaults it), 1 for a Pod; ok is false where the scenario does not say (a DaemonSet, a
// Job, a ${...}).
func replicasOf(o schema.Object) (int, bool) {
	kind, _ := o["kind"].(string)
	switch kind {
	case "Pod":
		return 1, true
	case "Deployment", "StatefulSet", "ReplicaSet":
	default:
		return 0, false
	}
	spec, _ := o["spec"].(map[string]any)
	v, has := spec["replicas"]
	if !has {
		return 1, true
	}
	return plainInt(v)
}

// lintOneReplica warns of a snapshot by selector whose stats the expressions read, where the
// selector matches the pods of workloads the scenario applies that run several replicas, and
// no load of the scenario runs from that selector: the snapshot reads one pod's sidecar (the
// first ready by name), so a delta or a count of it is one replica's (a backend's 503s on
// another replica are not in it). A load from the same selector runs in the same first pod,
// whose sidecar is then the one to read (the client's side); from several pods, not.
func (d *decoder) lintOneReplica(s *Step, envoy *schema.PodRef, objs []applied, warned map[string]bool, warn func(*Step, string, string, string, ...any)) {
	if envoy.Selector == "" || HasInterpolation(envoy.Selector) {
		return
	}
	ns := d.defaultNamespace(envoy.Namespace)
	key := ns + "/" + envoy.Selector
	if warned[key] {
		return
	}
	sc := d.sc
	loadFrom := false
	Walk(append(append(append(append([]*Step{}, sc.Setup...), sc.Steps...), sc.Catch...), sc.Cleanup...), func(l *Step) {
		if p, ok := l.Params.(*schema.Load); ok && p.From != nil && p.From.Selector == envoy.Selector && p.From.Pods <= 1 &&
			d.defaultNamespace(p.From.Namespace) == ns {
			loadFrom = true
		}
	})
	if loadFrom {
		return
	}
	pods := 0
	var which []string
	for _, a := range objs {
		labels, _, ok := podTemplate(a.obj)
		if !ok || !selects(&schema.PodRef{Selector: envoy.Selector}, labels, a.obj) {
			continue
		}
		if ons := a.namespace(); ons != ns && !HasInterpolation(ons) && !HasInterpolation(ns) {
			continue
		}
		n, ok := replicasOf(a.obj)
		if !ok {
			return // how many the scenario does not say
		}
		kind, _ := a.obj["kind"].(string)
		md, _ := a.obj["metadata"].(map[string]any)
		name, _ := md["name"].(string)
		pods += n
		which = append(which, fmt.Sprintf("%s %s: %d", kind, name, n))
	}
	if pods < 2 {
		return
	}
	warned[key] = true
	warn(s, "envoy.selector", LintOneReplica, "snapshot %q reads the sidecar of one pod of selector %s (the first ready by name), and the scenario runs %d pods it matches (%s): the stats its expressions read are one replica's, not the others' (a 503 on another replica is not counted); snapshot each pod by name (envoy: {pod: ...}), give the replica to read a label of its own, or say that one replica is what you mean (lint: ignore: {%q: \"why\"})",
		s.Name, envoy.Selector, pods, strings.Join(which, ", "), LintOneReplica)
}

// lintUnknownSubsets warns of a VirtualService destination (an http, tcp or tls route's, an
// http mirror's) whose subset no DestinationRule the scenario applies for that host defines,
// where the scenario applies one or more rules for the host: istiod still writes the route to
// the subset's cluster name (outbound|8080|v2|backend…, seen in the sandbox), but sends no
// proxy that cluster, so every request routed there fails (503 NC), while a claim on the
// route's cluster holds. A host no rule of the scenario names is not judged: its rule may
// exist already. The subsets of every rule of the host count (istiod merges them).
func (d *decoder) lintUnknownSubsets(objs []applied, ix hosts, warn func(s *Step, field, code, format string, args ...any)) {
	hostKey := func(host, ns string) string {
		if svc := ix.service(host, ns); svc != nil {
			md, _ := svc["metadata"].(map[string]any)
			name, _ := md["name"].(string)
			svcNS, _ := md["namespace"].(string)
			return "service " + or(svcNS, ns) + "/" + name
		}
		// A Service's name the scenario does not apply: backend in lab, backend.lab,
		// backend.lab.svc and backend.lab.svc.<domain> are one host (a rule of the cluster's
		// writes it one way, the route another).
		h := strings.TrimSuffix(host, ".")
		if i := strings.Index(h, ".svc"); i > 0 && strings.Count(h[:i], ".") == 1 && (len(h) == i+4 || h[i+4] == '.') {
			h = h[:i]
		} else if !strings.ContainsAny(h, ".*") && ns != "" {
			h += "." + ns
		}
		if HasInterpolation(h) {
			return "" // known at run time
		}
		return h
	}
	// The objects the scenario applies from files too: a rule's subsets, a route to one.
	type fromFile struct {
		applied
		where string // "vs.yaml, line 5"
	}
	all := make([]fromFile, 0, len(objs))
	for _, a := range objs {
		all = append(all, fromFile{applied: a})
	}
	for _, s := range d.order {
		if p, ok := s.Params.(*schema.Apply); ok {
			for _, fo := range d.stepFileObjects(p.Files) {
				all = append(all, fromFile{applied{fo.Object, s, d.defaultNamespace(p.Namespace)}, fo.Source})
			}
		}
	}
	// The cluster's own rules (vet --server), but for those the scenario replaces (same
	// namespace and name).
	clusterRules, readCluster := d.l.opts.ClusterRules[d.sc.Name]
	replaced := map[string]bool{}
	for _, a := range all {
		if kind, _ := a.obj["kind"].(string); kind == "DestinationRule" {
			md, _ := a.obj["metadata"].(map[string]any)
			name, _ := md["name"].(string)
			replaced[a.namespace()+"/"+name] = true
		}
	}
	rules := slices.Clone(all)
	for _, r := range clusterRules {
		md, _ := r["metadata"].(map[string]any)
		name, _ := md["name"].(string)
		ns, _ := md["namespace"].(string)
		if !replaced[ns+"/"+name] {
			rules = append(rules, fromFile{applied{r, nil, ns}, "the cluster's DestinationRule " + ns + "/" + name})
		}
	}
	subsets := map[string][]string{} // host key → the subsets its rules define
	for _, a := range rules {
		if kind, _ := a.obj["kind"].(string); kind != "DestinationRule" {
			continue
		}
		spec, _ := a.obj["spec"].(map[string]any)
		host, _ := spec["host"].(string)
		k := hostKey(host, a.namespace())
		if k == "" {
			continue
		}
		if subsets[k] == nil {
			subsets[k] = []string{}
		}
		list, _ := spec["subsets"].([]any)
		for _, sub := range list {
			sm, _ := sub.(map[string]any)
			if name, ok := sm["name"].(string); ok {
				subsets[k] = append(subsets[k], name)
			}
		}
	}
	if len(subsets) == 0 && !readCluster {
		return
	}
	for i, a := range all {
		if kind, _ := a.obj["kind"].(string); kind != "VirtualService" {
			continue
		}
		spec, _ := a.obj["spec"].(map[string]any)
		field, in := "", ""
		if a.where == "" {
			field = fmt.Sprintf("objects.%d.spec", objIndex(objs, i))
		} else {
			in = " (" + a.where + ")"
		}
		check := func(dest map[string]any, at string) {
			host, _ := dest["host"].(string)
			subset, _ := dest["subset"].(string)
			if subset == "" || HasInterpolation(subset) {
				return
			}
			k := hostKey(host, a.namespace())
			have, ok := subsets[k]
			if (!ok && (!readCluster || k == "")) || slices.Contains(have, subset) {
				return
			}
			defined := "it defines no subset"
			if len(have) > 0 {
				defined = "its subsets: " + strings.Join(have, ", ")
			}
			whose := "this scenario applies"
			if readCluster {
				whose = "this scenario applies or the cluster holds (read by vet --server)"
				if !ok {
					defined = "there is no rule for the host"
				}
			}
			if a.where != "" {
				at = "files" // the step's files; the message names the file and line
			} else {
				at += ".subset"
			}
			warn(a.step, at, LintUnknownSubset,
				"VirtualService%s routes to subset %q of host %q, which no DestinationRule %s for that host defines (%s): istiod still writes the route to the subset's cluster (outbound|<port>|%s|…), but sends no proxy that cluster, so every request routed there fails (503, flag NC) while a claim on the route's cluster holds; define the subset in the rule, or route to one it defines",
				in, subset, host, whose, defined, subset)
		}
		for _, kind := range []string{"http", "tcp", "tls"} {
			routes, _ := spec[kind].([]any)
			for j, r := range routes {
				route, _ := r.(map[string]any)
				dests, _ := route["route"].([]any)
				for k, dst := range dests {
					dm, _ := dst.(map[string]any)
					if dest, ok := dm["destination"].(map[string]any); ok {
						check(dest, fmt.Sprintf("%s.%s.%d.route.%d.destination", field, kind, j, k))
					}
				}
				if mirror, ok := route["mirror"].(map[string]any); ok {
					check(mirror, fmt.Sprintf("%s.%s.%d.mirror", field, kind, j))
				}
				mirrors, _ := route["mirrors"].([]any)
				for k, m := range mirrors {
					mm, _ := m.(map[string]any)
					if dest, ok := mm["destination"].(map[string]any); ok {
						check(dest, fmt.Sprintf("%s.%s.%d.mirrors.%d.destination", field, kind, j, k))
					}
				}
			}
		}
	}
}
