package dsl

import (
	"fmt"
	"maps"
	"slices"
	"strconv"

	"cuelang.org/go/cue"

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

// nsField is a namespace a step's value writes: its dotted field inside the kind's value and
// its literal value.
type nsField struct {
	field, ns string
}

// namespaceFields lists the literal namespaces written in a step's value: the kind's own
// namespace, a pod reference's (envoy, from, server...), and metadata.namespace of the objects
// it names (wait: absent, delete). Inside an object only its metadata is a reference: its
// other fields are the object's content (a RoleBinding's subjects).
func namespaceFields(v cue.Value) []nsField {
	var out []nsField
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
				if ns, err := md.LookupPath(cue.MakePath(cue.Str("namespace"))).String(); err == nil {
					out = append(out, nsField{join(path, "metadata.namespace"), ns})
				}
				return
			}
			it, err := v.Fields()
			if err != nil {
				return
			}
			for it.Next() {
				label := it.Selector().Unquoted()
				if label == "namespace" {
					if ns, err := it.Value().String(); err == nil {
						out = append(out, nsField{join(path, label), ns})
					}
					continue
				}
				walk(it.Value(), join(path, label))
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
	for _, f := range namespaceFields(c.kv) {
		if f.ns == "" || HasInterpolation(f.ns) || slices.Contains(d.sc.Namespaces, f.ns) || slices.Contains(slices.Collect(maps.Values(d.sc.Generated)), f.ns) {
			continue
		}
		if slices.ContainsFunc(d.sc.Ephemeral, func(e EphemeralNamespace) bool { return e.Key == f.ns }) && !schema.IsSystemNamespace(f.ns) {
			c.ValueErrorf(f.field, "namespace %q is the key of an ephemeral namespace, whose name in a run is the key and a suffix: write %q (as written, the step looks in a namespace named %q, where the scenario put nothing)", f.ns, ref(f.ns), f.ns)
			refused = true
			continue
		}
		if schema.IsSystemNamespace(f.ns) {
			continue
		}
		if near := closest(f.ns, declared); near != "" {
			pos := d.sc.Pos
			if p := d.l.litPos(c.lookup(f.field)); p.IsValid() {
				pos = p
			}
			d.warn(pos, LintUnknownNamespace, "namespace %q is none of the scenario's namespaces (%s): did you mean %q? A step in a namespace the scenario does not declare finds nothing of what it applies (a wait: absent there holds at once)", f.ns, joinQuoted(declaredRefs(declared, ref)), ref(near))
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
