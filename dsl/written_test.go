package dsl

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
)

// TestWrittenIsLookup: what a step's checker answers from the syntax (written: Has,
// Templated, ExactlyOne's fields; stepHas, a step's own fields) is what CUE's lookup answers, for every field a check may
// ask of every step of examples/, scenarios/, docs/ and the malformed specs: each field the
// step writes at any depth, each index one past a list's end, a name beside each written
// field that no step writes, and every parameter of the step's kind.
func TestWrittenIsLookup(t *testing.T) {
	asked, fromSyntax := 0, 0
	checkerHook = func(c *stepChecker) {
		// A step's own fields, as checkStructure asks them.
		for _, f := range []string{"every", "while", "name", "at", "zzzNotWritten", c.s.Kind} {
			asked++
			if got, want := c.d.stepHas(c.s, f), c.d.stepValue[c.s].LookupPath(cue.MakePath(cue.Str(f))).Exists(); got != want {
				t.Errorf("%s: stepHas(%q) = %v, lookup says %v", c.s.Path, f, got, want)
			}
		}
		for _, f := range candidateFields(c) {
			asked++
			if _, _, known := c.written(f); known {
				fromSyntax++
			}
			if got, want := c.has(f), c.lookup(f).Exists(); got != want {
				t.Errorf("%s: has(%q) = %v, lookup says %v", c.kpath, f, got, want)
			}
			s, err := c.lookup(f).String()
			if got, want := c.Templated(f), err == nil && HasInterpolation(s); got != want {
				t.Errorf("%s: Templated(%q) = %v, lookup says %v", c.kpath, f, got, want)
			}
			if !strings.Contains(f, ".") {
				// exactlyOneNamed's lookup of one label.
				if got, want := c.hasLabel(f), c.kv.LookupPath(cue.MakePath(cue.Str(f))).Exists(); got != want {
					t.Errorf("%s: hasLabel(%q) = %v, lookup says %v", c.kpath, f, got, want)
				}
			}
		}
	}
	defer func() { checkerHook = nil }()
	// Fields the syntax cannot answer, or answers with a literal beside them: a reference to
	// nothing, an interpolation, a non-concrete value, null, a required field, a kit's step.
	edge := filepath.Join(t.TempDir(), "edge.cue")
	if err := os.WriteFile(edge, []byte(writtenEdgeCases), 0o644); err != nil {
		t.Fatal(err)
	}
	paths := []string{edge, "../examples", "../examples/istio-tasks", "../scenarios", "../docs"}
	malformed := malformedSpecs(t, "*.cue")
	for _, p := range append(paths, malformed...) {
		_, _ = Load([]string{p}, Options{}) // the malformed ones are refused: their steps are checked first
	}
	t.Logf("%d fields asked, %d answered from the syntax", asked, fromSyntax)
	if asked < 1000 || fromSyntax < asked/4 {
		t.Fatalf("%d fields asked, %d answered from the syntax", asked, fromSyntax)
	}
}

// candidateFields are the fields TestWrittenIsLookup asks of c's step.
func candidateFields(c *stepChecker) []string {
	var out []string
	if c.s.Params != nil {
		rt := reflect.TypeOf(c.s.Params)
		for rt.Kind() == reflect.Pointer {
			rt = rt.Elem()
		}
		if rt.Kind() == reflect.Struct {
			for i := range rt.NumField() {
				if name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ","); name != "" && name != "-" {
					out = append(out, name)
				}
			}
		}
	}
	var walk func(x ast.Expr, prefix string)
	walk = func(x ast.Expr, prefix string) {
		join := func(p string) string {
			if prefix == "" {
				return p
			}
			return prefix + "." + p
		}
		switch x := x.(type) {
		case *ast.StructLit:
			out = append(out, join("zzzNotWritten"))
			for _, d := range x.Elts {
				f, ok := d.(*ast.Field)
				if !ok {
					continue
				}
				if name, ok := literalLabel(f.Label); ok {
					out = append(out, join(name))
					walk(f.Value, join(name))
				}
			}
		case *ast.ListLit:
			for i, e := range x.Elts {
				out = append(out, join(strconv.Itoa(i)))
				walk(e, join(strconv.Itoa(i)))
			}
			out = append(out, join(strconv.Itoa(len(x.Elts))))
		}
	}
	if f, ok := c.kv.Source().(*ast.Field); ok {
		walk(f.Value, "")
	}
	return out
}

const writtenEdgeCases = `package lab

import "labrun.dev/schema"

_port: 18480
_kit: {snapshot: backend: "a"}

edge: schema.#Scenario & {
	local: backends: {
		a: address: "127.0.0.2:\(_port)"
		b: address: "127.0.0.3:\(_port)"
	}
	steps: [
		{name: "s0", snapshot: backend: _kit.nothing},
		{name: "s1", snapshot: {backend: "b", admin: null}},
		{name: "s2", snapshot: {backend: string}},
		{name: "s3", snapshot: {backend!: "a"}},
		{name: "s4", _kit},
		{name: "s5", snapshot: {backend: "\(_port)"}},
		{name: "s6", snapshot: {backend: "a"} & {backend: "a"}},
		{name: "l0", load: {url: "http://127.0.0.2:\(_port)/", requests: 10, duration: "0s", timeout: "${x}", from: pods: 0}},
		{name: "d0", dns: {host: "h.lab.internal", addresses: ["127.0.0.9", "\(_port)", "x"]}},
	]
}
`
