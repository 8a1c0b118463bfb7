package dsl

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"
)

// TestTopFieldsKeepFieldsOrder: a package's scenarios are decoded in the order CUE's Fields
// gives its top level, whether the build that found the package clean handed its fields on
// (vet's by-kind build, a run's step-by-step build, the full build) or not. The package mixes
// what orders a top level: several files, a scenario referring to one declared after it,
// kits, hidden fields, definitions, quoted and optional labels, a let.
func TestTopFieldsKeepFieldsOrder(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"b.cue": `package lab

import "labrun.dev/schema"

zeta: schema.#Scenario & {steps: [{name: "z", sleep: "1ms"}]}
"with-dash": schema.#Scenario & {steps: alpha.steps}
_port: 8080
#Kit: {sleep: "1ms"}
opt?: int
let x = 1
kit: [{name: "k", sleep: "\(x)ms"}]
`,
		"a.cue": `package lab

import "labrun.dev/schema"

alpha: schema.#Scenario & {steps: [{name: "a", #Kit}]}
mid: schema.#Scenario & {steps: kit}
`,
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// What CUE's Fields gives (files in name order, declarations in order), as every build
	// decoded them before the fields were handed on.
	want := []string{"alpha", "mid", "zeta", "with-dash"}
	for _, o := range []Options{{}, {ForRun: true}, {fullCheck: true}} {
		res, err := Load([]string{dir}, o)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, sc := range res.Scenarios {
			got = append(got, sc.Name)
		}
		if !slices.Equal(got, want) {
			t.Errorf("ForRun %v, fullCheck %v: scenarios in the order %v, want %v (Fields')", o.ForRun, o.fullCheck, got, want)
		}
	}
}

// TestTopFieldsFallBack: fields handed on that the build does not have are not trusted: the
// build's own Fields are used.
func TestTopFieldsFallBack(t *testing.T) {
	v := cuecontext.New().CompileString(`b: 1, a: 2, _h: 3, #d: 4`)
	for _, top := range [][]cue.Selector{nil, {cue.Str("a"), cue.Str("nosuch")}} {
		fs, err := topFields(v, top)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range fs {
			got = append(got, f.sel.String())
		}
		if want := []string{"b", "a"}; !slices.Equal(got, want) {
			t.Errorf("topFields(%v) = %v, want %v", top, got, want)
		}
	}
	fs, _ := topFields(v, []cue.Selector{cue.Str("a")})
	if len(fs) != 1 || fs[0].sel.String() != "a" {
		t.Errorf("topFields([a]) = %v, want the one field named", fs)
	}
}
