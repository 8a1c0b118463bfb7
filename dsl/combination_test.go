package dsl

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// TestCombinationsLoadAsAlone: a sweep's combination loaded with Options.Combinations (only the
// files it can change built, the schema built once for all) gives what a load of the file
// alone with the same vars gives: the same scenario, field by field (compiled expressions
// included), the same problems and warnings. Every combination of every scenario that
// sweeps in examples/ and scenarios/, then combinations that break the scenario, a kit or
// another file's vars, and a package whose files declare fields the syntax does not name.
// vet's combinations are checked by kind (the repository's all found clean so) and find what
// a load against the full schema finds.
func TestCombinationsLoadAsAlone(t *testing.T) {
	type load struct {
		file string
		vars map[string]string
	}
	var loads []load
	for _, dir := range []string{"../examples", "../scenarios"} {
		res, err := Load([]string{dir}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, sc := range res.Scenarios {
			if len(sc.Sweep) == 0 {
				continue
			}
			m := NewMatrix(sc, nil, nil, 1, 0)
			for _, c := range m.Combinations() {
				loads = append(loads, load{sc.Pos.File, c})
			}
		}
	}
	if len(loads) < 15 {
		t.Fatalf("%d combinations in the repository, want 15 or more", len(loads))
	}
	sharedByKind := 0 // vet's combinations found clean by kind
	compare := func(t *testing.T, files []string, vars []map[string]string) {
		t.Helper()
		// vet's loads, and a run's (alone, a run's load checks step by step; shared, against
		// the full schema).
		for _, forRun := range []bool{false, true} {
			combos := NewCombinations()
			if !forRun {
				// As vet does: the combinations reuse the syntax of a load of the same files,
				// when it found no problem.
				base, err := Load(files, Options{KeepSyntax: true})
				if err == nil && len(base.syntax) == 0 {
					t.Fatalf("%s: a load without problems kept no syntax", files)
				}
				combos.Reuse(base)
			}
			for _, file := range files {
				for _, v := range vars {
					alone, aerr := Load([]string{file}, Options{Vars: v, ForRun: forRun})
					shared, serr := Load([]string{file}, Options{Vars: v, ForRun: forRun, Combinations: combos})
					if a, s := fmt.Sprint(aerr), fmt.Sprint(serr); a != s {
						t.Fatalf("%s %v (for a run: %v): errors differ:\nalone:  %s\nshared: %s", file, v, forRun, a, s)
					}
					if !forRun {
						// vet's combinations are checked by kind: what the full schema finds.
						_, ferr := Load([]string{file}, Options{Vars: v, fullCheck: true})
						if f, s := fmt.Sprint(ferr), fmt.Sprint(serr); f != s {
							t.Fatalf("%s %v: errors differ:\nagainst the full schema: %s\nshared: %s", file, v, f, s)
						}
					}
					if shared != nil && !forRun {
						sharedByKind += shared.byKindClean
					}
					for _, r := range []*Result{alone, shared} {
						if r != nil {
							// How the load checked, not what it found.
							r.byKindClean, r.byKindErrors, r.shallowClean = 0, 0, 0
						}
					}
					if a, s := dump(alone), dump(shared); a != s {
						t.Fatalf("%s %v (for a run: %v): results differ:\n%s", file, v, forRun, firstDiff(a, s))
					}
				}
			}
		}
	}
	for _, l := range loads {
		abs, _ := filepath.Abs(l.file)
		compare(t, []string{abs}, []map[string]string{l.vars})
	}
	// vet's combinations are checked by kind, with the by-kind schema built once for all
	// (against the full schema, each took twice as long).
	if sharedByKind < len(loads) {
		t.Errorf("%d of vet's %d combinations of the repository found clean by kind", sharedByKind, len(loads))
	}

	dir := t.TempDir()
	write := func(name, src string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	kit := write("kit.cue", `package lab

kit: {requests: 10, vars: {requests: 3}, checked: vars.requests & <5}
_port: 18480
`)
	_ = kit
	a := write("a.cue", `package lab

import "labrun.dev/schema"

a: schema.#Scenario & {
	vars: {requests: 4, connections: 1}
	sweep: {requests: [2, 4], connections: [1, 2]}
	local: backends: a: address: "127.0.0.2:\(_port)"
	steps: [{name: "f", load: {url: "${backends.a.url}/echo", requests: vars.requests & <=kit.requests, connections: vars.connections}}]
	expect: ["f.requests == vars.requests"]
}
`)
	b := write("b.cue", `package lab

import "labrun.dev/schema"

b: schema.#Scenario & {
	vars: {requests: "many"}
	steps: [{sleep: "1ms"}]
	expect: ["started.x > 0"]
}
`)
	write("c.cue", `package lab

other: a.vars.requests & <3
`)
	write("e.cue", "package other\n\nbroken: {\n") // skipped, with a warning, by every load of a or b
	vars := []map[string]string{
		{"requests": "2", "connections": "1"},
		{"requests": "4", "connections": "2"},
		{"requests": "8", "connections": "1"},  // beyond kit.requests... and the kit's own check
		{"requests": "x", "connections": "1"},  // does not parse as the declared int
		{"requests": "1", "connections": "-1"}, // the schema refuses it
		{"requests": "1.5", "connections": "1"},
	}
	compare(t, []string{a, b}, vars)

	// Fields the syntax does not name: the package is built whole.
	write("d.cue", `package lab

for k, v in {x: 1} {"gen_\(k)": v}
`)
	compare(t, []string{a}, vars)
}

// dump prints v deeply (pointers followed, each time they are met, maps sorted, functions and
// channels left out), so that two loads can be compared field by field, whatever they share.
func dump(v any) string { return dumpValue(reflect.ValueOf(v)) }

func dumpValue(root reflect.Value) string {
	var b strings.Builder
	seen := map[uintptr]int{}
	var walk func(v reflect.Value, depth int)
	walk = func(v reflect.Value, depth int) {
		if depth > 60 {
			b.WriteString("…")
			return
		}
		switch v.Kind() {
		case reflect.Invalid:
			b.WriteString("nil")
		case reflect.Pointer:
			if v.IsNil() {
				b.WriteString("nil")
				return
			}
			if _, ok := seen[v.Pointer()]; ok {
				b.WriteString("cycle") // a pointer to a value being written: shared ones are written again
				return
			}
			seen[v.Pointer()] = depth
			b.WriteString("&")
			walk(v.Elem(), depth+1)
			delete(seen, v.Pointer())
		case reflect.Interface:
			if v.IsNil() {
				b.WriteString("nil")
				return
			}
			fmt.Fprintf(&b, "(%s)", v.Elem().Type())
			walk(v.Elem(), depth+1)
		case reflect.Struct:
			b.WriteString(v.Type().String() + "{")
			for i := range v.NumField() {
				f := v.Type().Field(i)
				if f.Type.PkgPath() == "sync" || strings.HasPrefix(f.Type.String(), "sync.") {
					continue
				}
				b.WriteString(f.Name + ":")
				walk(v.Field(i), depth+1)
				b.WriteString(" ")
			}
			b.WriteString("}")
		case reflect.Slice, reflect.Array:
			if v.Kind() == reflect.Slice && v.IsNil() {
				b.WriteString("nil")
				return
			}
			b.WriteString("[")
			for i := range v.Len() {
				walk(v.Index(i), depth+1)
				b.WriteString(",")
			}
			b.WriteString("]")
		case reflect.Map:
			if v.IsNil() {
				b.WriteString("nil")
				return
			}
			keys := v.MapKeys()
			repr := map[int]string{}
			for i, k := range keys {
				repr[i] = fmt.Sprint(k)
				if k.Kind() == reflect.Pointer {
					d := dumpValue(k)
					repr[i] = d[:min(len(d), 400)]
				}
			}
			idx := make([]int, len(keys))
			for i := range idx {
				idx[i] = i
			}
			sort.Slice(idx, func(i, j int) bool { return repr[idx[i]] < repr[idx[j]] })
			b.WriteString("map[")
			for _, i := range idx {
				k := keys[i]
				fmt.Fprintf(&b, "%s:", repr[i])
				walk(v.MapIndex(k), depth+1)
				b.WriteString(",")
			}
			b.WriteString("]")
		case reflect.Func, reflect.Chan, reflect.UnsafePointer, reflect.Uintptr:
			b.WriteString(v.Kind().String())
		case reflect.String:
			fmt.Fprintf(&b, "%q", v.String())
		case reflect.Bool:
			fmt.Fprint(&b, v.Bool())
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			fmt.Fprint(&b, v.Int())
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			fmt.Fprint(&b, v.Uint())
		case reflect.Float32, reflect.Float64:
			fmt.Fprint(&b, v.Float())
		default:
			b.WriteString(v.Kind().String())
		}
	}
	walk(root, 0)
	return b.String()
}

// firstDiff shows where two dumps part.
func firstDiff(a, b string) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	from := max(0, i-300)
	return fmt.Sprintf("alone:  …%s\nshared: …%s", a[from:min(len(a), i+200)], b[from:min(len(b), i+200)])
}
