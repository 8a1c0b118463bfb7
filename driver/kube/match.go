package kube

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
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
// null; numbers compare by value whatever their Go type. It returns where they differ, in the
// order of the fields' paths (nil: the object matches).
func matchPartial(want, got any, anyOrder bool) []fieldDiff {
	var diffs []fieldDiff
	matchValue(&diffs, "", normalize(want), normalize(got), true, anyOrder)
	return diffs
}

func matchValue(diffs *[]fieldDiff, path string, want, got any, present, anyOrder bool) {
	if want == nil {
		if present && got != nil {
			*diffs = append(*diffs, fieldDiff{path: or(path, "."), want: "null or no field", got: render(got)})
		}
		return
	}
	if !present {
		*diffs = append(*diffs, fieldDiff{path: or(path, "."), want: render(want), got: "no field"})
		return
	}
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			*diffs = append(*diffs, fieldDiff{path: or(path, "."), want: "a struct", got: render(got)})
			return
		}
		keys := make([]string, 0, len(w))
		for k := range w {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			gv, ok := g[k]
			matchValue(diffs, joinPath(path, k), w[k], gv, ok, anyOrder)
		}
	case []any:
		g, ok := got.([]any)
		if !ok {
			*diffs = append(*diffs, fieldDiff{path: or(path, "."), want: "a list", got: render(got)})
			return
		}
		if anyOrder {
			matchAnyOrder(diffs, path, w, g)
			return
		}
		if len(w) != len(g) {
			*diffs = append(*diffs, fieldDiff{path: or(path, "."), want: fmt.Sprintf("a list of %d", len(w)), got: fmt.Sprintf("%d elements", len(g))})
		}
		for i := 0; i < len(w) && i < len(g); i++ {
			matchValue(diffs, fmt.Sprintf("%s[%d]", path, i), w[i], g[i], true, anyOrder)
		}
	default:
		if want != got {
			*diffs = append(*diffs, fieldDiff{path: or(path, "."), want: render(want), got: render(got)})
		}
	}
}

// matchAnyOrder finds, for each wanted element, a different element of got that matches it
// (trying the assignments in turn: the lists of an object are short).
func matchAnyOrder(diffs *[]fieldDiff, path string, want, got []any) {
	matches := make([][]int, len(want))
	for i, w := range want {
		for j, g := range got {
			var d []fieldDiff
			matchValue(&d, "", w, g, true, true)
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
	for i, m := range matches {
		if len(m) == 0 {
			*diffs = append(*diffs, fieldDiff{path: fmt.Sprintf("%s[%d]", path, i), want: render(want[i]) + " in any element", got: fmt.Sprintf("none of %d elements", len(got))})
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

// normalize gives values one shape: a JSON round trip (int64, float64, string, bool, []any,
// map[string]any, nil) with every number a float64.
func normalize(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return jsonLike(v)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return jsonLike(v)
	}
	return out
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
