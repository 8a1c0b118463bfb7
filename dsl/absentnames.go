package dsl

import (
	"fmt"
	"slices"
	"strings"

	"labrun.dev/labrun/internal/didyoumean"
	"labrun.dev/labrun/schema"
)

// A wait: absent of an object by name holds at its first poll when the object does not
// exist: "flgs is gone" passes over a typo of flags, which lives on. In a namespace the
// scenario owns, an object is there because a step put it there (or a command, a controller,
// or it was there before the run). So a wait: absent (or an object of absentFiles) by a
// literal name, of a literal kind, in one of the scenario's namespaces, that no step of the
// scenario applies, deletes or reads by name (get, wait match, condition, rollout, scale,
// restart, kill), is refused, with the name of that kind the scenario does name that is
// closest; mayNeverExist: true lets it be one a command or a controller makes, or one that
// must never exist. Where a step names objects vet cannot read (a ${...} in a name or a
// kind, a file it cannot read or that holds ${...}), what the run applies is known only then:
// the run checks the wait when it starts (schema.Wait's neverSeen).

// named is an object a step names: its kind (schema.KindKey) and name.
type named struct{ kind, name string }

// stepNames are the objects the scenario's steps apply, delete or read by name, each with the
// namespaces a step names it in ("" for one a ${...} names), and whether vet knows them all
// (no ${...} in their names or kinds, every file read).
func (d *decoder) stepNames() (map[named]map[string]bool, bool) {
	out := map[named]map[string]bool{}
	known := true
	ns := ""          // the namespace of the step being walked: its own, else the scenario's first
	var stepNS string // the step's namespace field
	addIn := func(kind, name, in string) {
		if strings.Contains(kind, "${") || strings.Contains(name, "${") {
			known = false
			return
		}
		if kind != "" && name != "" {
			n := named{schema.KindKey(kind), name}
			if out[n] == nil {
				out[n] = map[string]bool{}
			}
			switch {
			case schema.NamespaceTemplate(in) != "":
				return // no namespace: said at its field
			case strings.Contains(in, "${") && !slices.Contains(d.sc.Allowed(), in):
				in = "" // known when the step runs
			}
			out[n][in] = true
		}
	}
	add := func(kind, name string) { addIn(kind, name, ns) }
	addObjects := func(objs []schema.Object) {
		for _, o := range objs {
			kind, _ := o["kind"].(string)
			md, _ := o["metadata"].(map[string]any)
			name, _ := md["name"].(string)
			if _, ok := md["name"]; ok && name == "" {
				known = false // not a literal string
			}
			in, _ := md["namespace"].(string)
			if in == "" {
				in = stepNS
			}
			addIn(kind, name, d.defaultNamespace(in))
		}
	}
	addFiles := func(files []string) {
		for _, f := range files {
			data, _, err := d.readStepFile(f)
			if err != nil || strings.Contains(f, "${") || strings.Contains(string(data), "${") {
				known = false
				continue
			}
			objs, err := YAMLObjects(f, data)
			if err != nil {
				known = false
				continue
			}
			for _, o := range objs {
				addObjects([]schema.Object{o.Object})
			}
		}
	}
	for _, s := range d.order {
		stepNS = stepNamespace(s)
		ns = d.defaultNamespace(stepNS)
		switch p := s.Params.(type) {
		case *schema.Apply:
			addObjects(p.Objects)
			addFiles(p.Files)
		case *schema.Delete:
			addObjects(p.Objects)
			addFiles(p.Files)
		case *schema.Get:
			add(p.Kind, p.Name)
		case *schema.Wait:
			if p.Match != nil {
				addObjects([]schema.Object{p.Match})
			}
			addFiles(p.MatchFiles)
			if p.Condition != nil {
				add(p.Condition.Kind, p.Condition.Name)
			}
			add("Deployment", p.Rollout)
		case *schema.Scale:
			add("Deployment", p.Deployment)
		case *schema.Restart:
			add("Deployment", p.Deployment)
		case *schema.Kill:
			add("Pod", p.Pod)
		}
	}
	return out, known
}

// stepNamespace is the namespace field of a step that names objects ("" for none).
func stepNamespace(s *Step) string {
	switch p := s.Params.(type) {
	case *schema.Apply:
		return p.Namespace
	case *schema.Delete:
		return p.Namespace
	case *schema.Get:
		return p.Namespace
	case *schema.Wait:
		return p.Namespace
	case *schema.Scale:
		return p.Namespace
	case *schema.Restart:
		return p.Namespace
	case *schema.Kill:
		return p.Namespace
	}
	return ""
}

// checkAbsentNames refuses a wait: absent of an object by name that no step of the scenario
// names (see above).
func (d *decoder) checkAbsentNames() {
	owned := d.sc.Allowed()
	if len(owned) == 0 {
		return // the namespaces are -n's or the context's: they hold what they hold
	}
	var names map[named]map[string]bool
	known, looked := false, false
	for _, s := range d.order {
		p, ok := s.Params.(*schema.Wait)
		if !ok || p.MayNeverExist || p.Absent == nil && len(p.AbsentFiles) == 0 {
			continue
		}
		if !looked {
			names, known = d.stepNames()
			looked = true
		}
		if !known {
			return // the run checks each wait when it starts
		}
		c := &stepChecker{d: d, s: s, kv: d.kindValue[s], kpath: s.Path + "." + s.Kind}
		check := func(field, what string, o schema.Object) {
			kind, _ := o["kind"].(string)
			md, _ := o["metadata"].(map[string]any)
			name, _ := md["name"].(string)
			ns, _ := md["namespace"].(string)
			if ns == "" {
				ns = d.defaultNamespace(p.Namespace)
			}
			switch {
			case kind == "" || name == "" || strings.Contains(kind, "${") || strings.Contains(name, "${"):
				return
			case slices.Contains(clusterScopedKinds, kind):
				return
			case !slices.Contains(owned, ns):
				// Not an object of the scenario's namespaces: the world's, waited for as
				// written; but one the scenario's steps make in its own namespaces, and name
				// nowhere else, is that object looked for in the wrong namespace (a KUTTL or
				// Chainsaw file's namespace: default): its absence there holds at once.
				in := names[named{schema.KindKey(kind), name}]
				if len(in) == 0 || in[ns] || in[""] || strings.Contains(ns, "${") || schema.NamespaceTemplate(ns) != "" {
					return
				}
				for _, e := range d.sc.Ephemeral {
					if ns == e.Key {
						return // an ephemeral namespace's key: said at the namespace
					}
				}
				var where []string
				for n := range in {
					if slices.Contains(owned, n) {
						where = append(where, n)
					}
				}
				if len(where) == 0 {
					return
				}
				slices.Sort(where)
				c.Errorf(field, "%s: the scenario names %s %q in %s, not in %s, a namespace it does not own: the wait would hold at its first poll over an object that is not there, whatever became of %s; drop metadata.namespace (the step's namespace is %s), or say mayNeverExist: true for one that must never exist in %s",
					what, kind, name, strings.Join(where, ", "), ns, name, d.defaultNamespace(p.Namespace), ns)
				return
			case names[named{schema.KindKey(kind), name}] != nil || slices.Contains(schema.EveryNamespace[kind], name):
				return // a step names it, or every namespace has it
			}
			var same []string
			for n := range names {
				if n.kind == schema.KindKey(kind) {
					same = append(same, n.name)
				}
			}
			slices.Sort(same)
			mean := ""
			if near := didyoumean.Closest(name, same); near != "" {
				mean = fmt.Sprintf(" (did you mean %q?)", near)
			}
			c.Errorf(field, "%s: no step of the scenario applies, deletes or reads %s %q%s: in %s, a namespace of the scenario, the wait would hold at its first poll over an object that never existed; name one a step makes, or say mayNeverExist: true for one a command or a controller makes, or one that must never exist",
				what, kind, name, mean, ns)
		}
		if p.Absent != nil {
			md, _ := p.Absent["metadata"].(map[string]any)
			field := "absent"
			if _, ok := md["name"]; ok {
				field = "absent.metadata.name"
			}
			check(field, "wait.absent", p.Absent)
		}
		for i, f := range p.AbsentFiles {
			data, _, err := d.readStepFile(f)
			if err != nil || strings.Contains(f, "${") || strings.Contains(string(data), "${") {
				continue // the run checks it
			}
			objs, err := YAMLObjects(f, data)
			if err != nil {
				continue
			}
			for _, o := range objs {
				check(fmt.Sprintf("absentFiles.%d", i), fmt.Sprintf("wait.absentFiles (%s)", o.Source), o.Object)
			}
		}
	}
}

// lintEventsObjects warns of an events step (of setup, steps or cleanup: catch steps judge
// nothing) filtered by an object, a literal kind and name in one of the scenario's namespaces,
// that no step of the scenario applies, deletes or reads: events: {kind: "Pod", name: "wbe"}
// keeps no event, and "no BackOff for web" (len(ev) == 0) held whatever happened to web. A
// command or a controller may make such an object (a warning, then: lint.ignore says so).
func (d *decoder) lintEventsObjects(warn func(s *Step, field, code, format string, args ...any)) {
	owned := d.sc.Allowed()
	if len(owned) == 0 {
		return
	}
	var names map[named]map[string]bool
	looked := false
	sc := d.sc
	Walk(append(append(append([]*Step{}, sc.Setup...), sc.Steps...), sc.Cleanup...), func(s *Step) {
		p, ok := s.Params.(*schema.Events)
		if !ok || p.Name == "" || p.Kind == "" || HasInterpolation(p.Name) || HasInterpolation(p.Kind) {
			return
		}
		ns := d.defaultNamespace(p.Namespace)
		if !slices.Contains(owned, ns) {
			return
		}
		if !looked {
			var known bool
			names, known = d.stepNames()
			looked = true
			if !known {
				names = nil // the run's names are known only then
			}
		}
		if names == nil || names[named{schema.KindKey(p.Kind), p.Name}] != nil {
			return
		}
		var same []string
		for n := range names {
			if n.kind == schema.KindKey(p.Kind) {
				same = append(same, n.name)
			}
		}
		slices.Sort(same)
		mean := ""
		if near := didyoumean.Closest(p.Name, same); near != "" {
			mean = fmt.Sprintf(" (did you mean %q?)", near)
		}
		warn(s, "name", LintEventsUnknownObject, "events of %s %q: no step of the scenario applies, deletes or reads %s %q%s in %s: unless a command or a controller makes it, the step keeps no event, and a claim that none happened (len(…) == 0) holds whatever happened",
			p.Kind, p.Name, p.Kind, p.Name, mean, ns)
	})
}

// lintAbsentLabels warns of a wait: absent by labels (no name), in one of the scenario's
// namespaces, whose labels no object the scenario applies there carries, where one carries a
// label close to them: absent: {kind: "Pod", metadata: labels: app: "wbe"} held at once while
// the pods labelled app=web lived on. Pods are judged by the labels of the Pods and workload
// templates applied; other kinds by their objects' labels. A label no applied object comes
// close to (one a controller adds: job-name, pod-template-hash) is not warned of.
func (d *decoder) lintAbsentLabels(objs []applied, warn func(s *Step, field, code, format string, args ...any)) {
	owned := d.sc.Allowed()
	if len(owned) == 0 {
		return
	}
	sc := d.sc
	Walk(append(append(append([]*Step{}, sc.Setup...), sc.Steps...), sc.Cleanup...), func(s *Step) {
		p, ok := s.Params.(*schema.Wait)
		if !ok || p.Absent == nil || p.MayNeverExist {
			return
		}
		kind, _ := p.Absent["kind"].(string)
		md, _ := p.Absent["metadata"].(map[string]any)
		want, _ := md["labels"].(map[string]any)
		if _, named := md["name"]; named || len(want) == 0 || kind == "" || HasInterpolation(kind) {
			return
		}
		ns, _ := md["namespace"].(string)
		if ns == "" {
			ns = d.defaultNamespace(p.Namespace)
		}
		if !slices.Contains(owned, ns) {
			return
		}
		var sets []map[string]any
		for _, a := range objs {
			if a.namespace() != ns {
				continue
			}
			if schema.KindKey(kind) == schema.KindKey("Pod") {
				if l, _, ok := podTemplate(a.obj); ok && l != nil {
					sets = append(sets, l)
				}
				continue
			}
			if k, _ := a.obj["kind"].(string); schema.KindKey(k) == schema.KindKey(kind) {
				amd, _ := a.obj["metadata"].(map[string]any)
				if l, _ := amd["labels"].(map[string]any); l != nil {
					sets = append(sets, l)
				}
			}
		}
		keys := map[string][]string{} // a label key → its values among the sets
		for _, l := range sets {
			carries := true
			for k, v := range want {
				if s, _ := v.(string); HasInterpolation(s) || HasInterpolation(k) {
					return // known when the step runs
				}
				if l[k] != v {
					carries = false
				}
			}
			if carries {
				return
			}
			for k, v := range l {
				if s, ok := v.(string); ok && !slices.Contains(keys[k], s) {
					keys[k] = append(keys[k], s)
				}
			}
		}
		allKeys := make([]string, 0, len(keys))
		for k := range keys {
			allKeys = append(allKeys, k)
		}
		slices.Sort(allKeys)
		wk := make([]string, 0, len(want))
		for k := range want {
			wk = append(wk, k)
		}
		slices.Sort(wk)
		for _, k := range wk {
			v, _ := want[k].(string)
			var mean string
			if vals, ok := keys[k]; ok {
				if slices.Contains(vals, v) {
					continue
				}
				slices.Sort(vals)
				if near := didyoumean.Closest(v, vals); near != "" {
					mean = fmt.Sprintf("%s=%s", k, near)
				}
			} else if near := didyoumean.Closest(k, allKeys); near != "" {
				mean = near
			}
			if mean == "" {
				continue
			}
			warn(s, "absent.metadata.labels."+k, LintAbsentUnknownLabels, "wait.absent of %s labelled %s=%s: no %s the scenario applies in %s carries it (did you mean %s?): unless a controller or a command labels one so, the absence holds at its first poll whatever became of the objects it applies",
				kind, k, v, kind, ns, mean)
			return
		}
	})
}
