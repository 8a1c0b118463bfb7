package kube

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"labrun.dev/labrun/internal/kubeshape"
)

// fieldDiff is one field where an object is not what a partial object wants.
type fieldDiff struct {
	// path is the field, e.g. "spec.replicas" or "spec.template.spec.containers[0].image".
	path string
	want string
	got  string
}

func (f fieldDiff) String() string { return fmt.Sprintf("%s: want %s, got %s", f.path, f.want, f.got) }

// matchPartial compares an object with a partial object, the way Chainsaw's assertions do:
// every field written must be in the object with that value, and fields not written are
// ignored; a struct matches field by field; a list matches element by element, in order, and
// must have as many elements as written, unless anyOrder, where each element written must
// match a different element of the list, which may have more; null wants the field absent or
// null, as does a struct whose fields all ask null, and [] an empty list or none (see
// absentIsWanted); numbers compare by value whatever their Go type; a field whose Go type is a resource
// quantity (a built-in kind's, by kubeshape) compares as a quantity: "0.5" is the server's 500m,
// 1024Mi its 1Gi, 1 its "1". It returns where they differ, in the
// order of the fields' paths (nil: the object matches).
//
// The data of a Secret is never shown: where a Secret differs in data or stringData, the
// difference says so without the values.
func matchPartial(want, got any, anyOrder bool) []fieldDiff {
	return matchObject(want, got, anyOrder, false)
}

// matchObject is matchPartial, where custom says got is a custom resource (its kind's CRD was
// read): the API server keeps its fields as written, quantities too, so they compare as
// written ("1024Mi" is not its "1Gi"), as in Chainsaw and KUTTL.
func matchObject(want, got any, anyOrder, custom bool) []fieldDiff {
	var diffs []fieldDiff
	g := normalize(got)
	m := matcher{anyOrder: anyOrder, secret: isSecret(g), shape: shapeOf(g), asWritten: custom}
	m.value(&diffs, "", normalize(want), g, true)
	return diffs
}

// PartialMatches says object got (decoded JSON) matches the partial object want as a wait's
// match does (see matchPartial): the fake target's waits judge its objects with it.
func PartialMatches(want, got any, anyOrder bool) bool {
	return len(matchPartial(want, got, anyOrder)) == 0
}

// matcher compares a partial object with an object.
type matcher struct {
	anyOrder bool
	// secret: the object is a Secret, whose data must not be shown.
	secret bool
	// shape: the shape of the value compared, where known (nil: unknown).
	shape *kubeshape.Shape
	// asWritten: a custom resource's value, which no quantity rule applies to (matchObject).
	asWritten bool
}

// shapeOf is the shape of object o of a built-in kind, by its apiVersion and kind (nil for
// another kind).
func shapeOf(o any) *kubeshape.Shape {
	m, _ := o.(map[string]any)
	kind, _ := m["kind"].(string)
	apiVersion, _ := m["apiVersion"].(string)
	if kind == "" || apiVersion == "" {
		return nil
	}
	sh, _ := kubeshape.Builtin(apiVersion, kind)
	return sh
}

// below is m comparing the value at key (a field name, a map key, or "*" for a list element).
func (m matcher) below(key string) matcher {
	if m.shape != nil {
		m.shape = m.shape.At([]string{key})
	}
	return m
}

// sameQuantity says want and got are the same quantity, at a field of quantity type (a
// built-in kind's, of any group: an autoscaling/v2 HorizontalPodAutoscaler's averageValue
// too); or, at a field whose type labrun does not know (a CRD's field without a schema),
// where both are quantities and one is written with a suffix ("500m", "1Gi"): the API server
// returns a quantity canonical, so "0.5" never equalled its "500m" there, and an absence of
// it held at once. A plain number written otherwise ("1.0", "1") is no sign of a quantity
// (a version), and stays as written; so does every value of a custom resource whose CRD was
// read (asWritten), which the API server does not make canonical.
func (m matcher) sameQuantity(want, got any) bool {
	if m.asWritten {
		return false
	}
	if m.shape != nil && m.shape.Kind == kubeshape.Scalar && m.shape.Scalar == kubeshape.QuantityScalar {
		return kubeshape.SameQuantity(want, got)
	}
	untyped := m.shape == nil || m.shape.Kind == kubeshape.Opaque || m.shape.Kind == kubeshape.Scalar && m.shape.Scalar == kubeshape.AnyScalar
	return untyped && (quantitySuffix(want) || quantitySuffix(got)) && kubeshape.SameQuantity(want, got)
}

// quantitySuffix says v is a string that ends in a quantity's suffix (m, k, M, G, T, P, E, or
// Ki … Ei) after a digit.
func quantitySuffix(v any) bool {
	s, ok := v.(string)
	if !ok {
		return false
	}
	for _, suf := range []string{"Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "m", "k", "M", "G", "T", "P", "E"} {
		if rest, ok := strings.CutSuffix(s, suf); ok && rest != "" && rest[len(rest)-1] >= '0' && rest[len(rest)-1] <= '9' {
			return true
		}
	}
	return false
}

// isSecret reports a core Secret.
func isSecret(o any) bool {
	m, _ := o.(map[string]any)
	return m["kind"] == "Secret" && m["apiVersion"] == "v1"
}

// hiddenSecretData stands for a Secret's data in a difference.
const hiddenSecretData = "(Secret data, not shown)"

// show renders a value at path, hiding a Secret's data (the whole object's too).
func (m matcher) show(path string, v any) string {
	if !m.secret {
		return render(v)
	}
	for _, f := range []string{"data", "stringData"} {
		if path == f || strings.HasPrefix(path, f+".") || strings.HasPrefix(path, f+"[") {
			return hiddenSecretData
		}
	}
	if o, ok := v.(map[string]any); ok && path == "" {
		c := make(map[string]any, len(o))
		for k, e := range o {
			c[k] = e
			if k == "data" || k == "stringData" {
				c[k] = hiddenSecretData
			}
		}
		return render(c)
	}
	return render(v)
}

func (m matcher) value(diffs *[]fieldDiff, path string, want, got any, present bool) {
	if want == nil {
		if present && got != nil {
			*diffs = append(*diffs, fieldDiff{path: or(path, "."), want: "null or no field", got: m.show(path, got)})
		}
		return
	}
	if (!present || got == nil) && absentIsWanted(want) {
		return
	}
	if !present {
		*diffs = append(*diffs, fieldDiff{path: or(path, "."), want: m.show(path, want), got: "no field"})
		return
	}
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			*diffs = append(*diffs, fieldDiff{path: or(path, "."), want: "a struct", got: m.show(path, got)})
			return
		}
		keys := make([]string, 0, len(w))
		for k := range w {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			gv, ok := g[k]
			m.below(k).value(diffs, joinPath(path, k), w[k], gv, ok)
		}
	case []any:
		g, ok := got.([]any)
		if !ok {
			*diffs = append(*diffs, fieldDiff{path: or(path, "."), want: "a list", got: m.show(path, got)})
			return
		}
		if m.anyOrder {
			m.anyOrderList(diffs, path, w, g)
			return
		}
		if len(w) != len(g) {
			*diffs = append(*diffs, fieldDiff{path: or(path, "."), want: fmt.Sprintf("a list of %d", len(w)), got: fmt.Sprintf("%d elements", len(g))})
		}
		for i := 0; i < len(w) && i < len(g); i++ {
			m.below("*").value(diffs, fmt.Sprintf("%s[%d]", path, i), w[i], g[i], true)
		}
	default:
		if want != got && !m.sameQuantity(want, got) {
			*diffs = append(*diffs, fieldDiff{path: or(path, "."), want: m.show(path, want), got: m.show(path, got)})
		}
	}
}

// absentIsWanted says a field that is absent (or null) has what want asks: want is an empty
// list (the API server leaves an empty list out: finalizers: [] is "no finalizers"), or a
// struct whose fields all ask that, at any depth (annotations: {"x": null} wants no x, which
// an object without annotations has not). Chainsaw and KUTTL say "not found" of both, as labrun
// did: a match of them never held, and an absence of them ("no web lacks the annotation") held
// over an object without annotations at all.
func absentIsWanted(want any) bool {
	switch w := want.(type) {
	case []any:
		return len(w) == 0
	case map[string]any:
		if len(w) == 0 {
			return false // {} asks for a struct
		}
		for _, v := range w {
			if v != nil && !absentIsWanted(v) {
				return false
			}
		}
		return true
	}
	return false
}

// anyOrderList finds, for each wanted element, a different element of got that matches it
// (trying the assignments in turn: the lists of an object are short).
func (m matcher) anyOrderList(diffs *[]fieldDiff, path string, want, got []any) {
	matches := make([][]int, len(want))
	for i, w := range want {
		for j, g := range got {
			var d []fieldDiff
			matcher{anyOrder: true, shape: m.below("*").shape, asWritten: m.asWritten}.value(&d, "", w, g, true)
			if len(d) == 0 {
				matches[i] = append(matches[i], j)
			}
		}
	}
	used := make([]bool, len(got))
	var assign func(i int) bool
	assign = func(i int) bool {
		if i == len(want) {
			return true
		}
		for _, j := range matches[i] {
			if !used[j] {
				used[j] = true
				if assign(i + 1) {
					return true
				}
				used[j] = false
			}
		}
		return false
	}
	if assign(0) {
		return
	}
	for i, found := range matches {
		if len(found) == 0 {
			*diffs = append(*diffs, fieldDiff{path: fmt.Sprintf("%s[%d]", path, i), want: m.show(path, want[i]) + " in any element", got: fmt.Sprintf("none of %d elements", len(got))})
			return
		}
	}
	*diffs = append(*diffs, fieldDiff{path: or(path, "."), want: fmt.Sprintf("%d different elements matching", len(want)), got: "some match only the same elements"})
}

var plainKeyRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// joinPath appends a key to a path; a key that is not a plain word is quoted: annotations["a/b"].
func joinPath(path, key string) string {
	if !plainKeyRE.MatchString(key) {
		return fmt.Sprintf("%s[%q]", path, key)
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

// normalize gives values one shape: a JSON round trip (float64, string, bool, []any,
// map[string]any, nil) with every number a float64, but an integer a float64 cannot hold
// exactly (beyond 2^53), which stays an int64: as float64s, 9007199254740993 equalled
// 9007199254740992.
func normalize(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return jsonLike(v)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		return jsonLike(v)
	}
	return numbers(out)
}

// numbers replaces the json.Numbers of v (see normalize).
func numbers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = numbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = numbers(e)
		}
	case json.Number:
		if n, err := x.Int64(); err == nil && (n > 1<<53 || n < -(1<<53)) {
			return n
		}
		f, _ := x.Float64() // ±Inf beyond float64's range, as before
		return f
	}
	return v
}

// render prints a value as JSON, cut if long.
func render(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	s := string(b)
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return s
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// describeDiffs prints up to max differences, then how many more.
func describeDiffs(diffs []fieldDiff, max int) string {
	var parts []string
	for i, d := range diffs {
		if i == max {
			parts = append(parts, fmt.Sprintf("and %d more", len(diffs)-max))
			break
		}
		parts = append(parts, d.String())
	}
	return strings.Join(parts, "; ")
}
