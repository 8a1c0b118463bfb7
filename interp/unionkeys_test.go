package interp

import (
	"slices"
	"testing"
)

// TestUnionKeys: the keys of both maps, each once, sorted, as Diff's paths and verdicts and
// paramsDiff's parameters are compared.
func TestUnionKeys(t *testing.T) {
	for _, c := range []struct {
		a, b map[string]int
		want []string
	}{
		{nil, nil, []string{}},
		{map[string]int{"b": 1, "a": 2}, nil, []string{"a", "b"}},
		{map[string]int{"b": 1}, map[string]int{"c": 1, "b": 2, "a": 3}, []string{"a", "b", "c"}},
	} {
		if got := unionKeys(c.a, c.b); !slices.Equal(got, c.want) {
			t.Errorf("unionKeys(%v, %v) = %q, want %q", c.a, c.b, got, c.want)
		}
	}
}
