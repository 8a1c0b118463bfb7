package dsl

import (
	"path/filepath"
	"testing"
)

// TestScenariosShareCompiledExpressions: copies of one scenario in a package compile each
// expression once (the second copy's programs are the first's), and each copy comes out as it
// does when it is the only scenario decoded (field by field, positions its own); a scenario
// whose names differ (another step name) shares nothing.
func TestScenariosShareCompiledExpressions(t *testing.T) {
	dir := t.TempDir()
	if err := writeGrowthTree(dir, 3, false); err != nil {
		t.Fatal(err)
	}
	res, err := Load([]string{dir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Scenarios) != 3 || len(res.Scenarios[0].Expect) == 0 {
		t.Fatalf("scenarios %v", res.Scenarios)
	}
	a, b := res.Scenarios[0], res.Scenarios[1]
	for i := range a.Expect {
		if a.Expect[i].Program != b.Expect[i].Program {
			t.Errorf("expect.%d compiled twice", i)
		}
		if a.Expect[i].Pos == b.Expect[i].Pos {
			t.Errorf("expect.%d: both at %v", i, a.Expect[i].Pos)
		}
	}
	alone, err := Load([]string{filepath.Join(dir, "s0001.cue")}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The caches themselves hold each program as first compiled (at the first copy's
	// position); every use gets its own.
	for _, sc := range append(res.Scenarios, alone.Scenarios...) {
		sc.ExprNames.compiled = nil
		sc.exprNames.compiled = nil
	}
	if d1, d2 := dump(b), dump(alone.Scenarios[0]); d1 != d2 {
		t.Fatalf("the second copy differs from the copy decoded alone:\n%s", firstDiff(d2, d1))
	}

	ka, _ := namesKey(a.ExprNames)
	if kb, ok := namesKey(b.ExprNames); !ok || ka != kb {
		t.Fatalf("copies' keys differ (ok %v)", ok)
	}
	other := *a.ExprNames
	other.Steps = map[string]bool{"x": true}
	if ko, _ := namesKey(&other); ko == ka {
		t.Fatal("names with other steps have the same key")
	}
}

// TestDecodeValueBySyntax: a scenario's local world and survivors read from the syntax are
// what CUE's Decode gives, for every scenario of examples/, scenarios/ and docs/.
func TestDecodeValueBySyntax(t *testing.T) {
	load := func() []*Scenario {
		var out []*Scenario
		for _, dir := range []string{"../examples", "../examples/istio-tasks", "../scenarios", "../docs"} {
			res, err := Load([]string{dir}, Options{})
			if err != nil {
				t.Fatalf("%s: %v", dir, err)
			}
			out = append(out, res.Scenarios...)
		}
		return out
	}
	bySyntax := load()
	decodeBySyntax = false
	defer func() { decodeBySyntax = true }()
	byDecode := load()
	if len(bySyntax) != len(byDecode) || len(bySyntax) < 50 {
		t.Fatalf("%d and %d scenarios", len(bySyntax), len(byDecode))
	}
	locals := 0
	for i, a := range bySyntax {
		b := byDecode[i]
		if a.Local != nil {
			locals++
		}
		if da, db := dump(a.Local), dump(b.Local); da != db {
			t.Errorf("%s: local differs:\n%s", a.Name, firstDiff(db, da))
		}
		if da, db := dump(a.Survivors), dump(b.Survivors); da != db {
			t.Errorf("%s: survivors differ:\n%s", a.Name, firstDiff(db, da))
		}
	}
	if locals < 10 {
		t.Fatalf("%d scenarios with a local world", locals)
	}
}
