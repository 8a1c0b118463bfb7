package suite

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/schema"
)

// Access is the Kubernetes API access that runs of scenarios on the kube target need, for a
// Role (labrun job): in each fixed namespace they declare, the kinds they apply, read and
// delete, and what their steps do to pods and workloads (exec, logs, kill, scale, rollouts).
// It is worked out from the scenarios as written: an object whose kind is a ${...} template
// is not seen (its kind is known only when the step runs).
type Access struct {
	// Namespaces are the rules in each fixed namespace the scenarios declare.
	Namespaces map[string][]Rule
	// Anywhere are the rules needed in namespaces named only when a run starts (ephemeral
	// namespaces): a Role cannot name them, so they are granted in every namespace.
	Anywhere []Rule
	// Cluster are the rules on cluster-scoped resources: namespaces (read; created and
	// deleted for ephemeral namespaces), and the cluster-scoped kinds a scenario that opts in
	// (clusterScoped) applies.
	Cluster []Rule
	// Unseen are the objects whose kinds cannot be known before a run, each at its position:
	// a kind or apiVersion written as ${...}, a file of apply.files that cannot be read yet.
	// The rules grant nothing for them.
	Unseen dsl.Errors
}

// Rule is a rule of a Role: verbs on resources of an API group ("" the core group).
type Rule struct {
	Group     string
	Resources []string
	// ResourceNames, when set, limit the rule to objects of these names.
	ResourceNames []string
	Verbs         []string
}

var (
	readVerbs  = []string{"get", "list", "watch"}
	writeVerbs = []string{"get", "list", "watch", "create", "update", "patch", "delete"}
)

// rules gathers verbs by group and resource.
type rules map[[3]string]map[string]bool

func (r rules) add(group, resource string, verbs ...string) {
	r.addNamed(group, resource, "", verbs...)
}

// addNamed adds verbs on the object of that name ("": every object).
func (r rules) addNamed(group, resource, name string, verbs ...string) {
	k := [3]string{group, resource, name}
	if r[k] == nil {
		r[k] = map[string]bool{}
	}
	for _, v := range verbs {
		r[k][v] = true
	}
}

// list is the rules, one per group and set of verbs, sorted.
func (r rules) list() []Rule {
	byVerbs := map[string]*Rule{}
	var out []*Rule
	for k, vs := range r {
		verbs := make([]string, 0, len(vs))
		for v := range vs {
			verbs = append(verbs, v)
		}
		sort.Strings(verbs)
		key := k[0] + "\x00" + k[1] + "\x00" + strings.Join(verbs, ",")
		if k[2] == "" {
			key = k[0] + "\x00\x00" + strings.Join(verbs, ",")
		}
		if byVerbs[key] == nil {
			byVerbs[key] = &Rule{Group: k[0], Verbs: verbs}
			out = append(out, byVerbs[key])
		}
		r := byVerbs[key]
		if !slices.Contains(r.Resources, k[1]) {
			r.Resources = append(r.Resources, k[1])
		}
		if k[2] != "" {
			r.ResourceNames = append(r.ResourceNames, k[2])
		}
	}
	res := make([]Rule, len(out))
	for i, r := range out {
		sort.Strings(r.Resources)
		sort.Strings(r.ResourceNames)
		res[i] = *r
	}
	sort.Slice(res, func(i, j int) bool {
		if res[i].Group != res[j].Group {
			return res[i].Group < res[j].Group
		}
		if a, b := strings.Join(res[i].Resources, ","), strings.Join(res[j].Resources, ","); a != b {
			return a < b
		}
		return strings.Join(res[i].ResourceNames, ",") < strings.Join(res[j].ResourceNames, ",")
	})
	return res
}

// AccessOf is the access the scenarios' runs on the kube target need (target: --target, or
// "" for each scenario's own).
func AccessOf(scenarios []*dsl.Scenario, target string) Access {
	byNS := map[string]rules{}
	anywhere, cluster := rules{}, rules{}
	var unseen dsl.Errors
	for _, sc := range scenarios {
		if or(target, sc.Target) != "kube" {
			continue
		}
		here := rules{}
		clusterScoped := rules{}
		// Every run reads the pods it works with and the events of its namespaces (a failed
		// run's catch, rollouts).
		here.add("", "pods", readVerbs...)
		here.add("", "events", readVerbs...)
		var step *dsl.Step // the step whose objects obj is given
		var field string   // and where in it
		obj := func(o map[string]any, verbs []string) {
			kind, _ := o["kind"].(string)
			api, _ := o["apiVersion"].(string)
			if strings.Contains(kind+api, "${") {
				unseen = append(unseen, &dsl.Error{Pos: step.FieldPos(field), Path: sc.Name + "." + step.Path + "." + step.Kind + "." + field,
					Msg: fmt.Sprintf("this object's apiVersion or kind (%s %s) is known only when the step runs: the Roles grant nothing for it; add its rule by hand", or(api, "?"), or(kind, "?"))})
				return
			}
			if kind == "" {
				return
			}
			md, _ := o["metadata"].(map[string]any)
			ns, _ := md["namespace"].(string)
			group := groupOf(api)
			if group == "" && kind == "Namespace" {
				// Created by name; then changed and deleted by that name only.
				name, _ := md["name"].(string)
				if name == "" || strings.Contains(name, "${") {
					cluster.add("", "namespaces", verbs...)
					return
				}
				for _, v := range verbs {
					if v == "create" || v == "list" || v == "watch" {
						cluster.add("", "namespaces", v) // RBAC cannot limit these by name
					} else {
						cluster.addNamed("", "namespaces", name, v)
					}
				}
				return
			}
			if sc.ClusterScoped && ns == "" && clusterKinds[kind] {
				clusterScoped.add(group, ResourceOf(kind), verbs...)
				return
			}
			here.add(group, ResourceOf(kind), verbs...)
		}
		kindRef := func(api, kind string, verbs []string) {
			if kind != "" {
				obj(map[string]any{"apiVersion": or(api, "v1"), "kind": kind}, verbs)
			}
		}
		for _, ph := range sc.Phases() {
			dsl.Walk(ph.Steps, func(s *dsl.Step) {
				step = s
				switch p := s.Params.(type) {
				case *schema.Apply:
					for i, o := range p.Objects {
						field = fmt.Sprintf("objects.%d", i)
						obj(o, writeVerbs)
					}
					for i, file := range p.Files {
						field = fmt.Sprintf("files.%d", i)
						objs, err := readObjectsErr(sc.Dir, file)
						if err != nil {
							unseen = append(unseen, &dsl.Error{Pos: s.FieldPos(field), Path: sc.Name + "." + s.Path + "." + s.Kind + "." + field,
								Msg: fmt.Sprintf("%s cannot be read before the run (%v): the Roles grant nothing for its objects; add their rules by hand", file, err)})
						}
						for _, o := range objs {
							obj(o, writeVerbs)
						}
					}
				case *schema.Delete:
					for i, o := range p.Objects {
						field = fmt.Sprintf("objects.%d", i)
						obj(o, writeVerbs)
					}
					kindRef(p.APIVersion, p.Kind, writeVerbs)
				case *schema.Get:
					kindRef(p.APIVersion, p.Kind, readVerbs)
				case *schema.Wait:
					for f, o := range map[string]schema.Object{"match": p.Match, "absent": p.Absent} {
						if o != nil {
							field = f
							obj(o, readVerbs)
						}
					}
				}
				switch s.Kind {
				case "exec", "load", "snapshot", "config":
					// Commands in pods, and Envoy's admin API read by exec (pilot-agent request)
					// or a port-forward.
					here.add("", "pods/exec", "create", "get")
					here.add("", "pods/portforward", "create", "get")
				case "logs":
					here.add("", "pods/log", "get")
				case "kill":
					here.add("", "pods", "delete")
				case "scale", "restart", "wait":
					for _, r := range []string{"deployments", "statefulsets", "daemonsets", "replicasets"} {
						here.add("apps", r, readVerbs...)
					}
					if s.Kind != "wait" {
						for _, r := range []string{"deployments", "statefulsets"} {
							here.add("apps", r, "patch", "update")
							here.add("apps", r+"/scale", "get", "patch", "update")
						}
						here.add("apps", "daemonsets", "patch", "update")
					}
				case "events":
					here.add("events.k8s.io", "events", readVerbs...)
				}
			})
		}
		cluster.add("", "namespaces", readVerbs...)
		if len(sc.Ephemeral) > 0 {
			cluster.add("", "namespaces", "create", "delete")
			for k, v := range here {
				for verb := range v {
					anywhere.addNamed(k[0], k[1], k[2], verb)
				}
			}
		}
		for _, ns := range sc.Namespaces {
			if byNS[ns] == nil {
				byNS[ns] = rules{}
			}
			for k, v := range here {
				for verb := range v {
					byNS[ns].addNamed(k[0], k[1], k[2], verb)
				}
			}
		}
		for k, v := range clusterScoped {
			for verb := range v {
				cluster.addNamed(k[0], k[1], k[2], verb)
			}
		}
	}
	a := Access{Namespaces: map[string][]Rule{}}
	for ns, r := range byNS {
		a.Namespaces[ns] = r.list()
	}
	a.Anywhere, a.Cluster = anywhere.list(), cluster.list()
	a.Unseen = unseen
	if len(a.Cluster) == 0 {
		a.Cluster = nil
	}
	return a
}

// groupOf is the API group of an apiVersion ("" for the core group's "v1").
func groupOf(apiVersion string) string {
	if g, _, ok := strings.Cut(apiVersion, "/"); ok {
		return g
	}
	return ""
}

// clusterKinds are the built-in kinds that are cluster-scoped, and those of Istio's and
// Gateway API's that are (none of theirs are, but GatewayClass).
var clusterKinds = map[string]bool{
	"Namespace": true, "Node": true, "PersistentVolume": true, "ClusterRole": true, "ClusterRoleBinding": true,
	"CustomResourceDefinition": true, "StorageClass": true, "PriorityClass": true, "IngressClass": true,
	"MutatingWebhookConfiguration": true, "ValidatingWebhookConfiguration": true, "GatewayClass": true,
	"RuntimeClass": true, "APIService": true,
}

// ResourceOf is a kind's resource name, as the API server names it by default: the kind in
// lower case, in the plural ("DestinationRule" → "destinationrules", "ServiceEntry" →
// "serviceentries", "Ingress" → "ingresses"; "Endpoints" stays).
func ResourceOf(kind string) string {
	k := strings.ToLower(kind)
	switch {
	case k == "endpoints":
		return k
	case strings.HasSuffix(k, "y") && len(k) > 1 && !strings.ContainsRune("aeiou", rune(k[len(k)-2])):
		return k[:len(k)-1] + "ies"
	case strings.HasSuffix(k, "s"), strings.HasSuffix(k, "x"), strings.HasSuffix(k, "ch"), strings.HasSuffix(k, "sh"):
		return k + "es"
	}
	return k + "s"
}

// Empty reports an access that needs nothing of the cluster (every scenario runs locally).
func (a Access) Empty() bool {
	return len(a.Namespaces) == 0 && len(a.Anywhere) == 0 && len(a.Cluster) == 0
}

// NamespaceNames are the namespaces with rules, sorted.
func (a Access) NamespaceNames() []string {
	out := make([]string, 0, len(a.Namespaces))
	for ns := range a.Namespaces {
		out = append(out, ns)
	}
	slices.Sort(out)
	return out
}
