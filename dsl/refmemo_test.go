package dsl

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/ast/astutil"
	"cuelang.org/go/cue/parser"
	"cuelang.org/go/cue/token"
)

// TestRefMemoPath: which references refMemo may decode once per build (a regular field of the
// package reached through regular fields, through lets at most) and which it must decode at
// each use, because their value can differ between uses.
func TestRefMemoPath(t *testing.T) {
	const src = `package p

import "strings"

kit: {
	ns: "lab"
	let O = objects
	objects: cm: {kind: "ConfigMap", metadata: namespace: ns}
	viaLet: O.cm
	#Def: {n: string, objects: cm: {kind: "ConfigMap"}, let D = objects, inDef: D.cm}
	"quoted-label": {a: 1}
	opt?: {a: 1}
}
alias: X={a: 1}
list: [{a: 1}]
uses: {
	topLevel:   kit.objects.cm
	throughLet: kit.viaLet
	paren:      (kit.objects).cm
	aliased:    alias
	otherFile:  elsewhere.x
	def:        kit.#Def
	inDef:      kit.#Def.objects.cm
	optional:   kit.opt
	hidden:     kit._h
	index:      list[0]
	imported:   strings.ToUpper
	predeclared: int
	comprehension: [for k, v in kit.objects {v}]
	local: {let L = {a: 1}, x: L}
}
`
	f, err := parser.ParseFile("p.cue", src)
	if err != nil {
		t.Fatal(err)
	}
	astutil.Resolve(f, func(pos token.Pos, msg string, args ...any) {})
	m := newRefMemo([]*ast.File{f})
	m.top["elsewhere"] = true // a top-level field of another file of the package
	want := map[string]string{
		"topLevel":   "kit.objects.cm",
		"throughLet": "kit.viaLet",
		"paren":      "kit.objects.cm",
		"aliased":    "alias",
		"otherFile":  "elsewhere.x",
		// After a package-level base, selectors are lookups in the package's value: the same
		// path has the same value, whatever kind of field it ends in.
		"optional": "kit.opt",
	}
	var uses *ast.StructLit
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.Field); ok {
			if name, _, _ := ast.LabelName(fd.Label); name == "uses" {
				uses = fd.Value.(*ast.StructLit)
			}
		}
	}
	seen := 0
	for _, d := range uses.Elts {
		fd := d.(*ast.Field)
		name, _, _ := ast.LabelName(fd.Label)
		x := fd.Value
		switch name {
		case "comprehension":
			// v, a comprehension's variable
			x = x.(*ast.ListLit).Elts[0].(*ast.Comprehension).Value.(*ast.StructLit).Elts[0].(*ast.EmbedDecl).Expr
		case "local":
			x = x.(*ast.StructLit).Elts[1].(*ast.Field).Value
		}
		seen++
		got, ok := m.path(x)
		if w, memo := want[name]; ok != memo || got != w {
			t.Errorf("%s: path %q, %v; want %q, %v", name, got, ok, w, memo)
		}
	}
	if seen != 14 {
		t.Fatalf("%d cases seen", seen)
	}
	// Inside kit.#Def, D.cm names a field of the definition: each use of #Def has its own.
	if p, ok := m.path(findField(t, f, "inDef")); ok {
		t.Errorf("a reference inside a definition is memoised as %q", p)
	}
	if p, ok := m.path(findField(t, f, "viaLet")); !ok || p != "kit.objects.cm" {
		t.Errorf("viaLet: path %q, %v; want kit.objects.cm", p, ok)
	}
}

// findField is the value of the first field with that label anywhere in f.
func findField(t *testing.T, f *ast.File, label string) ast.Expr {
	t.Helper()
	var found ast.Expr
	ast.Walk(f, func(n ast.Node) bool {
		if fd, ok := n.(*ast.Field); ok && found == nil {
			if name, _, _ := ast.LabelName(fd.Label); name == label {
				found = fd.Value
			}
		}
		return found == nil
	}, nil)
	if found == nil {
		t.Fatalf("no field %s", label)
	}
	return found
}

// TestRefMemoKeepsUsesApart: two scenarios use one definition with different parameters, and
// one kit value: the definition's objects decode per use, the kit's once, and each step gets
// its own copy (no two steps share a map).
func TestRefMemoKeepsUsesApart(t *testing.T) {
	dir := t.TempDir()
	src := `package lab

import "labrun.dev/schema"

kit: {
	let O = objects
	objects: cm: {apiVersion: "v1", kind: "ConfigMap", metadata: {name: "k", namespace: "a"}, data: x: "1"}
	#Setup: {
		n: string
		let P = own
		own: cm: {apiVersion: "v1", kind: "ConfigMap", metadata: {name: "p", namespace: n}}
		steps: [{apply: objects: [O.cm, P.cm]}]
	}
}
s1: schema.#Scenario & {target: "kube", namespaces: ["a", "x"], steps: (kit.#Setup & {n: "x"}).steps}
s2: schema.#Scenario & {target: "kube", namespaces: ["a", "y"], steps: (kit.#Setup & {n: "y"}).steps}
`
	if err := os.WriteFile(filepath.Join(dir, "x.cue"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Load([]string{dir}, Options{})
	if err != nil {
		t.Fatalf("Load:\n%v", err)
	}
	if len(res.Scenarios) != 2 {
		t.Fatalf("%d scenarios", len(res.Scenarios))
	}
	var kitObjs []map[string]any
	for _, sc := range res.Scenarios {
		objs := sc.Steps[0].raw.(map[string]any)["objects"].([]any)
		kitObj, own := objs[0].(map[string]any), objs[1].(map[string]any)
		ns := own["metadata"].(map[string]any)["namespace"]
		if want := strings.TrimPrefix(sc.Name, "s"); (sc.Name == "s1" && ns != "x") || (sc.Name == "s2" && ns != "y") {
			t.Errorf("%s: the definition's object has namespace %v (want the scenario's own, %s)", sc.Name, ns, want)
		}
		if kitObj["metadata"].(map[string]any)["namespace"] != "a" {
			t.Errorf("%s: the kit's object is %v", sc.Name, kitObj)
		}
		kitObjs = append(kitObjs, kitObj)
	}
	kitObjs[0]["data"].(map[string]any)["x"] = "changed"
	if kitObjs[1]["data"].(map[string]any)["x"] != "1" {
		t.Errorf("two steps share the kit object's decoded map")
	}
}
