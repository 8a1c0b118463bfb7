package dsl

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"sort"
	"testing"

	"labrun.dev/labrun/schema"
)

// viaJSON is what params did before convertJSONLike: the round trip through JSON text.
func viaJSON(raw any, dst any) error {
	b, _ := json.Marshal(raw)
	return json.Unmarshal(b, dst)
}

// checkConvert fails when convertJSONLike reports success with a result other than the
// round trip's, or where the round trip fails.
func checkConvert(t *testing.T, what string, raw any, newDst func() any) (converted bool) {
	t.Helper()
	direct, want := newDst(), newDst()
	ok := convertJSONLike(raw, direct)
	err := viaJSON(raw, want)
	if !ok {
		return false
	}
	if err != nil {
		t.Errorf("%s: convertJSONLike(%#v) succeeded where json fails: %v", what, raw, err)
		return true
	}
	if !reflect.DeepEqual(direct, want) {
		t.Errorf("%s: convertJSONLike(%#v)\n got %#v\nwant %#v (json)", what, raw, direct, want)
	}
	return true
}

type convEmbedded struct {
	Name string `json:"name"`
	Port int    `json:"port,omitempty"`
}

type convTarget struct {
	convEmbedded
	S     string            `json:"s"`
	I     int               `json:"i"`
	I8    int8              `json:"i8"`
	F     float64           `json:"f"`
	B     *bool             `json:"b"`
	D     schema.Duration   `json:"d"`
	L     []string          `json:"l"`
	M     map[string]string `json:"m"`
	A     any               `json:"a"`
	P     *convEmbedded     `json:"p"`
	Skip  int               `json:"-"`
	NoTag string
	u     int
}

func TestConvertJSONLikeTable(t *testing.T) {
	newT := func() any { return new(convTarget) }
	for _, tc := range []struct {
		name string
		raw  any
		ok   bool // whether the direct path is expected to take it
	}{
		{"empty", map[string]any{}, true},
		{"scalars", map[string]any{"s": "x", "i": int64(3), "f": 1.5, "b": true}, true},
		{"int from integral float", map[string]any{"i": 2.0}, true},
		{"float from int", map[string]any{"f": int64(1) << 60}, true},
		{"promoted field", map[string]any{"name": "n", "port": int64(8080)}, true},
		{"duration text", map[string]any{"d": "1m30s"}, true},
		{"list map any", map[string]any{"l": []any{"a", "b"}, "m": map[string]any{"k": "v"}, "a": map[string]any{"n": int64(1), "l": []any{true, nil, "s", 2.5}}}, true},
		{"empty list and map", map[string]any{"l": []any{}, "m": map[string]any{}}, true},
		{"pointer struct", map[string]any{"p": map[string]any{"name": "x"}}, true},
		{"nulls", map[string]any{"b": nil, "l": nil, "a": nil, "s": nil, "i": nil}, true},
		{"untagged exact Go name", map[string]any{"NoTag": "x"}, true},
		// Left to json: a type mismatch, a name json matches without case, out of range.
		{"string for int", map[string]any{"i": "3"}, false},
		{"fraction for int", map[string]any{"i": 2.5}, false},
		{"int8 overflow", map[string]any{"i8": int64(300)}, false},
		{"int64 overflow from float", map[string]any{"i": 1e19}, false},
		{"huge float for int", map[string]any{"i": 1e21}, false},
		{"case-folded name", map[string]any{"S": "x"}, false},
		{"unknown field", map[string]any{"zzz": "x"}, false},
		{"skipped field", map[string]any{"Skip": int64(1)}, false},
		{"unexported field", map[string]any{"u": int64(1)}, false},
		{"bad duration", map[string]any{"d": "soon"}, false},
		{"number for duration", map[string]any{"d": int64(5)}, false},
		{"list for string", map[string]any{"s": []any{"x"}}, false},
		{"NaN", map[string]any{"f": math.NaN()}, false},
		{"Go int (not what CUE decodes)", map[string]any{"i": 3}, false},
		{"bytes", map[string]any{"a": []byte("x")}, false},
		{"invalid UTF-8", map[string]any{"s": "\xff"}, false},
		{"not an object", []any{"x"}, false},
		{"null object", nil, true},
	} {
		if got := checkConvert(t, tc.name, tc.raw, newT); got != tc.ok {
			t.Errorf("%s: direct path taken = %v, want %v", tc.name, got, tc.ok)
		}
	}
}

// TestConvertJSONLikeOnTheRepository decodes every step of the repository's scenarios both
// ways: the direct path must take every one of them (else it saves nothing) and agree.
func TestConvertJSONLikeOnTheRepository(t *testing.T) {
	paths := []string{filepath.Join("..", "examples"), filepath.Join("..", "scenarios"), filepath.Join("..", "docs")}
	res, err := Load(paths, Options{})
	if err != nil {
		t.Fatal(err)
	}
	steps, direct := 0, 0
	for _, sc := range res.Scenarios {
		Walk(append(append(append([]*Step{}, sc.Setup...), sc.Steps...), sc.Cleanup...), func(s *Step) {
			k, ok := schema.Kinds[s.Kind]
			if !ok || s.raw == nil {
				return
			}
			steps++
			if checkConvert(t, sc.Name+"."+s.Path, s.raw, func() any { return k.New() }) {
				direct++
			}
		})
	}
	if steps < 100 || direct != steps {
		t.Errorf("%d of %d steps took the direct path, want all (and at least 100 steps)", direct, steps)
	}
}

// TestConvertJSONLikeMutations perturbs the repository's step parameters (a leaf replaced by
// a value of another shape, a field renamed or added) and checks each against the round trip.
func TestConvertJSONLikeMutations(t *testing.T) {
	res, err := Load([]string{filepath.Join("..", "examples"), filepath.Join("..", "scenarios")}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	leaves := []any{nil, true, "", "x", "1s", "${vars.x}", int64(0), int64(-7), int64(1) << 40, 0.5, 3.0, -1e300, []any{}, []any{"a", int64(1)}, map[string]any{}, map[string]any{"name": "n"}}
	r := rand.New(rand.NewPCG(1, 2))
	cases, direct := 0, 0
	for _, sc := range res.Scenarios {
		Walk(sc.Steps, func(s *Step) {
			k, ok := schema.Kinds[s.Kind]
			if !ok || s.raw == nil {
				return
			}
			for range 20 {
				raw := deepCopy(s.raw)
				mutate(r, &raw, leaves)
				cases++
				if checkConvert(t, fmt.Sprintf("%s.%s (mutated)", sc.Name, s.Path), raw, func() any { return k.New() }) {
					direct++
				}
			}
		})
	}
	t.Logf("%d mutated parameter sets, %d taken by the direct path", cases, direct)
	if direct == 0 || direct == cases {
		t.Errorf("the mutations should exercise both paths: %d of %d direct", direct, cases)
	}
}

// mutate changes one place of *x: a leaf replaced, a key renamed or added.
func mutate(r *rand.Rand, x *any, leaves []any) {
	switch v := (*x).(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		switch n := r.IntN(10); {
		case len(keys) == 0 || n == 0:
			v[fmt.Sprintf("k%d", r.IntN(3))] = leaves[r.IntN(len(leaves))]
		case n == 1:
			k := keys[r.IntN(len(keys))]
			v[k+"X"] = v[k]
			delete(v, k)
		default:
			k := keys[r.IntN(len(keys))]
			e := v[k]
			mutate(r, &e, leaves)
			v[k] = e
		}
	case []any:
		if len(v) == 0 || r.IntN(4) == 0 {
			*x = leaves[r.IntN(len(leaves))]
			return
		}
		i := r.IntN(len(v))
		mutate(r, &v[i], leaves)
	default:
		*x = leaves[r.IntN(len(leaves))]
	}
}

// TestStringOf: string(x) inside an expression spells a number as ${x} does (NumberText),
// and anything else as expr's string does: expr wrote 1000000 as "1e+06".
func TestStringOf(t *testing.T) {
	for _, c := range []struct {
		in   any
		want string
	}{
		{1000000.0, "1000000"}, {1e21, "1e+21"}, {0.000001, "0.000001"}, {1.5, "1.5"}, {3, "3"},
		{int64(7), "7"}, {float32(0.1), "0.1"}, {"a", "a"}, {true, "true"}, {nil, "<nil>"},
		{[]any{1.0, "x"}, "[1 x]"},
	} {
		if got := StringOf(c.in); got != c.want {
			t.Errorf("StringOf(%#v) = %q, want %q", c.in, got, c.want)
		}
	}
}
