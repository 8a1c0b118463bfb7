package schema

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
)

// Chainsaw's assertion trees (kyverno-json, the version Chainsaw v0.2.x vendors) read a key
// of an assert or error object as an expression, not a field name, when it is written
// (jmespath) or (cel;…) (a projection), ~.(…) or ~name.(…) (iterate over the projected list
// or map), "… -> name" (bind the projection), or \…\ (an escaped key); and a string value
// written (…) as an expression whose result is the value wanted (($namespace), ($x.y),
// (join('-', […]))). labrun's partial objects have no expressions: such a key is a field name
// no object has, so a match of it never holds and, worse, an absence of it (an errors file
// copied as is) holds at its first poll whatever the cluster holds. In a map (labels,
// annotations, a ConfigMap's data, a field a CRD leaves free-form) or a custom resource
// vet does not know the fields of, no field check saw it.
var (
	chainsawProjection = regexp.MustCompile(`^\((?:\w+;)?.+\)$`)
	chainsawForeach    = regexp.MustCompile(`^~\w*\.`)
	chainsawBinding    = regexp.MustCompile(`\s*->\s*\w+$`)
	chainsawEscape     = regexp.MustCompile(`^\\.+\\$`)
	// A value is read as an expression by the same rule, but "(…)" may be text (a ConfigMap's
	// script): only one that reads a binding ($name) or names a compiler is taken for one.
	chainsawValue = regexp.MustCompile(`^\((?:(?:jp|cel);.+|.*\$[A-Za-z_].*)\)$`)
)

// ChainsawKey says why key is a Chainsaw expression key ("" when it is a plain field name).
func ChainsawKey(key string) string {
	switch {
	case chainsawForeach.MatchString(key):
		return "a Chainsaw iteration key (~…), which judges each element of the list it projects"
	case chainsawBinding.MatchString(key):
		return "a Chainsaw binding key (… -> name)"
	case chainsawEscape.MatchString(key):
		return "a Chainsaw escaped key (\\…\\); write the field's name as it is"
	case chainsawProjection.MatchString(key):
		return "a Chainsaw expression key ((…), a JMESPath or CEL projection)"
	}
	return ""
}

// ChainsawForms calls f with the path of every key of the partial object o that Chainsaw
// reads as an expression (ChainsawKey), and of every string value that reads a Chainsaw
// binding or names its compiler (($namespace), (cel;…)), with what is wrong. metadata.namespace
// is left to NamespaceTemplate, which says the same of ($namespace).
func ChainsawForms(o Object, f func(path []string, msg string)) {
	const tail = "so a match of it never holds and an absence of it holds at once; write the claim as a get with until (an expr expression over the object)"
	walkObject(o, func(v any, path []string, isKey bool) bool {
		if isKey {
			k := path[len(path)-1]
			if why := ChainsawKey(k); why != "" {
				f(path, fmt.Sprintf("key %q is %s: labrun reads it as a field name, which no object has, %s", k, why, tail))
				return false
			}
		}
		if x, ok := v.(string); ok && chainsawValue.MatchString(x) && strings.Join(path, ".") != "metadata.namespace" {
			f(path, fmt.Sprintf("value %q is a Chainsaw expression (it reads a binding $…, or names a compiler): labrun compares it as written, text no field holds, %s; a value the run knows is written ${...}", x, tail))
		}
		return true
	})
}

// walkObject calls visit with every value of the object o and its path, parents before their
// values, a map's keys in sorted order; isKey says the last element of path is a map's key,
// not a list's index. visit returns whether to walk the value's own values.
func walkObject(o Object, visit func(v any, path []string, isKey bool) bool) {
	var walk func(v any, path []string, isKey bool)
	walk = func(v any, path []string, isKey bool) {
		if !visit(v, path, isKey) {
			return
		}
		switch x := v.(type) {
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(x)) {
				walk(x[k], append(path[:len(path):len(path)], k), true)
			}
		case []any:
			for i, e := range x {
				walk(e, append(path[:len(path):len(path)], fmt.Sprint(i)), false)
			}
		}
	}
	if o != nil {
		walk(map[string]any(o), nil, false)
	}
}

// ChainsawTemplates calls f with the path of every string value of the object o, an object
// an apply writes, that Chainsaw's templating fills in (a value ChainsawForms takes for an
// expression: it reads a binding, ($namespace), or names a compiler, (cel;…)), with what is
// wrong. Chainsaw templates the values of the resources it applies, not their keys (its
// pkg/mutate, v0.2.15-7-g625077865); labrun writes such a value into the object as text, and
// the run went on as if the object held what the test meant. metadata.namespace is left to
// NamespaceTemplate, which says the same of ($namespace).
func ChainsawTemplates(o Object, f func(path []string, msg string)) {
	walkObject(o, func(v any, path []string, _ bool) bool {
		if x, ok := v.(string); ok && chainsawValue.MatchString(x) && strings.Join(path, ".") != "metadata.namespace" {
			f(path, fmt.Sprintf("value %q is a Chainsaw expression (it reads a binding $…, or names a compiler), which Chainsaw's templating fills in: labrun writes it into the object as text; a value the run knows is written ${...} (($namespace) is ${ns.<key>}, the scenario's ephemeralNamespaces)", x))
		}
		return true
	})
}

// hasChainsawKey says a key of path is one ChainsawKey reads as an expression.
func hasChainsawKey(path []string) bool {
	return slices.ContainsFunc(path, func(k string) bool { return ChainsawKey(k) != "" })
}
