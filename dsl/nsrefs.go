package dsl

import (
	"fmt"
	"maps"
	"slices"
	"strconv"

	"cuelang.org/go/cue"
	"k8s.io/apimachinery/pkg/labels"

	"labrun.dev/labrun/schema"
)

// A step that reads or acts in a namespace (a get, a wait, logs, an exec in a pod, a kill...)
// and names it by a literal that is none of the scenario's namespaces finds nothing there: a
// wait: absent holds at once, a get reads no object. Reads of namespaces the scenario does not
// own stay allowed (istio-system's istiod, kube-system's CoreDNS); what cannot be meant is
// refused, what is likely a typo is warned of.

// LintUnknownNamespace is the code of a literal namespace that is none of the scenario's but
// is close to one of them.
const LintUnknownNamespace = "unknown-namespace"

// stringField is a string a step's value writes: its dotted field inside the kind's value and
// its value.
type stringField struct {
	field, value string
}

// stepStrings lists, for each of labels, the strings so labelled written in a step's value, at
// any depth (the kind's own namespace, a pod reference's such as envoy or from), and of the
// objects the step names (wait: absent, delete) those of their metadata only: an object's other
// fields are its content (a RoleBinding's subjects), no reference of the step's. One walk serves
// every label: walking a step's CUE value is most of what the checks that read these cost.
func stepStrings(v cue.Value, labels ...string) map[string][]stringField {
	out := map[string][]stringField{}
	var walk func(v cue.Value, path string)
	join := func(path, label string) string {
		if path == "" {
			return label
		}
		return path + "." + label
	}
	walk = func(v cue.Value, path string) {
		switch v.IncompleteKind() {
		case cue.StructKind:
			if md := v.LookupPath(cue.MakePath(cue.Str("metadata"))); md.Exists() {
				for _, label := range labels {
					if s, err := md.LookupPath(cue.MakePath(cue.Str(label))).String(); err == nil {
						out[label] = append(out[label], stringField{join(path, "metadata."+label), s})
					}
				}
				return
			}
			it, err := v.Fields()
			if err != nil {
				return
			}
			for it.Next() {
				l := it.Selector().Unquoted()
				if slices.Contains(labels, l) {
					if s, err := it.Value().String(); err == nil {
						out[l] = append(out[l], stringField{join(path, l), s})
					}
					continue
				}
				walk(it.Value(), join(path, l))
			}
		case cue.ListKind:
			it, err := v.List()
			if err != nil {
				return
			}
			for i := 0; it.Next(); i++ {
				walk(it.Value(), join(path, strconv.Itoa(i)))
			}
		}
	}
	walk(v, "")
	return out
}

// rawStrings is stepStrings over raw, the step's kind value as decoded (Step.raw: kv decoded,
// what its parameters are made of), in name order: the same strings at the same fields,
// found without listing the fields of each struct in CUE, which sorts them (the repository's
// vet: most of the kube steps' checks).
func rawStrings(raw any, labels ...string) map[string][]stringField {
	out := map[string][]stringField{}
	join := func(path, label string) string {
		if path == "" {
			return label
		}
		return path + "." + label
	}
	var walk func(x any, path string)
	walk = func(x any, path string) {
		switch x := x.(type) {
		case map[string]any:
			if md, ok := x["metadata"]; ok {
				if m, ok := md.(map[string]any); ok {
					for _, label := range labels {
						if s, ok := m[label].(string); ok {
							out[label] = append(out[label], stringField{join(path, "metadata."+label), s})
						}
					}
				}
				return
			}
			for _, l := range sortedKeys(x) {
				if slices.Contains(labels, l) {
					if s, ok := x[l].(string); ok {
						out[l] = append(out[l], stringField{join(path, l), s})
					}
					continue
				}
				walk(x[l], join(path, l))
			}
		case []any:
			for i, e := range x {
				walk(e, join(path, strconv.Itoa(i)))
			}
		}
	}
	walk(raw, "")
	return out
}

// refStrings are the step's strings labelled label, of those the kube checks read (namespace,
// selector), walked once for all of them: in the step's decoded form when it has one (vet's
// loads keep it), else in its CUE value.
func (c *stepChecker) refStrings(label string) []stringField {
	if c.refs == nil {
		if c.s != nil && c.s.raw != nil {
			c.refs = rawStrings(c.s.raw, "namespace", "selector")
		} else {
			c.refs = stepStrings(c.kv, "namespace", "selector")
		}
	}
	return c.refs[label]
}

// checkNamespaceRefs refuses a literal namespace of the step that is the key of an ephemeral
// namespace (its name in a run is the key and a suffix: ${ns.key} names it), and warns of one
// that is none of the scenario's namespaces but close to one (a typo). It reports whether it
// refused anything.
func (d *decoder) checkNamespaceRefs(c *stepChecker) bool {
	if d.target() == "local" {
		return false
	}
	refused := false
	var declared []string
	for _, e := range d.sc.Ephemeral {
		declared = append(declared, e.Key)
	}
	declared = append(declared, d.sc.Namespaces...)
	// ref is how the scenario writes a declared namespace.
	ref := func(name string) string {
		if slices.Contains(d.sc.Namespaces, name) {
			return name
		}
		return "${" + NamespaceRef(name) + "}"
	}
	for _, f := range c.refStrings("namespace") {
		if f.value == "" || HasInterpolation(f.value) || slices.Contains(d.sc.Namespaces, f.value) || slices.Contains(slices.Collect(maps.Values(d.sc.Generated)), f.value) {
			continue
		}
		if slices.ContainsFunc(d.sc.Ephemeral, func(e EphemeralNamespace) bool { return e.Key == f.value }) && !schema.IsSystemNamespace(f.value) {
			c.ValueErrorf(f.field, "namespace %q is the key of an ephemeral namespace, whose name in a run is the key and a suffix: write %q (as written, the step looks in a namespace named %q, where the scenario put nothing)", f.value, ref(f.value), f.value)
			refused = true
			continue
		}
		if schema.IsSystemNamespace(f.value) {
			continue
		}
		if near := closest(f.value, declared); near != "" {
			pos := d.sc.Pos
			if p := d.l.litPos(c.lookup(f.field)); p.IsValid() {
				pos = p
			}
			d.warn(pos, LintUnknownNamespace, "namespace %q is none of the scenario's namespaces (%s): did you mean %q? A step in a namespace the scenario does not declare finds nothing of what it applies (a wait: absent there holds at once)", f.value, joinQuoted(declaredRefs(declared, ref)), ref(near))
		}
	}
	return refused
}

func declaredRefs(declared []string, ref func(string) string) []string {
	out := make([]string, len(declared))
	for i, n := range declared {
		out[i] = ref(n)
	}
	return out
}

func joinQuoted(list []string) string {
	s := ""
	for i, x := range list {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%q", x)
	}
	return s
}

// checkSelectors refuses a label selector of the step that does not parse (`app in (web`,
// `app=web,`): the run would fail at the step, after its setup ran. It reports whether it
// refused anything.
func (d *decoder) checkSelectors(c *stepChecker) bool {
	if d.target() == "local" {
		return false // selectors pick pods and objects: kube's (a local step has none to check)
	}
	refused := false
	for _, f := range c.refStrings("selector") {
		if HasInterpolation(f.value) {
			continue // checked when the step starts, its ${...} filled
		}
		if _, err := labels.Parse(f.value); err != nil {
			c.ValueErrorf(f.field, "selector %q does not parse: %v; expected a label selector, e.g. \"app=web\", \"app in (web, api),tier!=db\"", f.value, err)
			refused = true
		}
	}
	return refused
}
