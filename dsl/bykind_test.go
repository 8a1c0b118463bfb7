package dsl

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestByKindLoadsAsFull: vet's load with each step checked against its kind only
// (cleanByKind) finds exactly what the build against the full schema finds, on every
// malformed case, example, seed scenario and document of the repository, and decodes the
// same scenarios; and the clean packages were found clean by kind (else the test compared the
// full build with itself).
func TestByKindLoadsAsFull(t *testing.T) {
	if testing.Short() {
		t.Skip("loads every file of the repository twice; skipped with -short")
	}
	paths := repositorySpecs(t)
	byKind, byKindErrors := 0, 0
	for _, p := range paths {
		got, gotErr := Load([]string{p}, Options{})
		want, wantErr := Load([]string{p}, Options{fullCheck: true})
		if got != nil {
			byKind += got.byKindClean
			byKindErrors += got.byKindErrors
		}
		if errText(gotErr) != errText(wantErr) {
			t.Errorf("%s:\nchecked by kind:\n%s\nagainst the full schema:\n%s", p, errText(gotErr), errText(wantErr))
			continue
		}
		if g, w := scenarioSteps(got), scenarioSteps(want); !slices.Equal(g, w) {
			t.Errorf("%s: checked by kind, decoded\n%v\nagainst the full schema\n%v", p, g, w)
		}
	}
	if byKind < 30 {
		t.Errorf("%d packages found clean by kind; the examples and documents alone have more", byKind)
	}
	t.Logf("%d packages clean by kind, %d with their errors from the by-kind build", byKind, byKindErrors)
}

// TestByKindNeverPassesWhatTheSchemaRefuses: packages whose steps the by-kind check cannot
// see all of, or sees wrong, are refused as the full schema refuses them; a clean package of
// plain step literals is found clean by kind.
func TestByKindNeverPassesWhatTheSchemaRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       string // in the error; "" for a clean package
		byKind     bool   // found clean by kind
	}{
		{"plain literals", `steps: [{name: "a", sleep: "1ms"}, {parallel: [{sleep: "1ms"}, {sequence: [{sleep: "2ms"}]}]}, {repeat: {max: 2, until: "true", steps: [{sleep: "1ms"}]}}]`, "", true},
		{"a step by reference, with a field #Step does not have", `steps: [_bad]
	_bad: {sleep: "1ms", nosuch: 1}`, "nosuch", false},
		{"a nested step by reference, with a field #Step does not have", `steps: [{parallel: [{sleep: "1ms"}, _bad]}]
	_bad: {sleep: "1ms", nosuch: 1}`, "nosuch", false},
		{"a step of a repeat by reference", `steps: [{repeat: {max: 2, until: "true", steps: [_bad]}}]
	_bad: {sleep: "1ms", nosuch: 1}`, "nosuch", false},
		{"a step from a comprehension", `steps: [for d in ["1ms"] {sleep: d, nosuch: 1}]`, "nosuch", false},
		{"two kinds from two lists unified", `steps: [{sleep: "1ms"}]
	steps: [{assert: "true"}]`, "kinds", false},
		{"an embedded step", `steps: [{_base, name: "a"}]
	_base: {sleep: "1ms", nosuch: 1}`, "nosuch", false},
		{"a literal step with a field #Step does not have", `steps: [{sleep: "1ms", nosuch: 1}]`, "nosuch", false},
		{"a nested literal step with a field #Step does not have", `steps: [{parallel: [{sleep: "1ms", nosuch: 1}]}]`, "nosuch", false},
		{"a literal step with a field of another kind", `steps: [{name: "a", sleep: "1ms", parallel: []}]`, "kinds", false},
		{"a hidden #Scenario with a step by reference under a quoted label", `steps: [{sleep: "1ms"}]
	}
	_base: schema.#Scenario & {"steps": [_bad]}
	_bad: {sleep: "1ms", nosuch: 1}
	_x: {`, "nosuch", false},
		{"a hidden #Scenario with a step by reference under a computed label", `steps: [{sleep: "1ms"}]
	}
	_base: schema.#Scenario & {("st" + "eps"): [_bad]}
	_bad: {sleep: "1ms", nosuch: 1}
	_x: {`, "nosuch", false},
		{"a hidden #Scenario whose steps come from a comprehension", `steps: [{sleep: "1ms"}]
	}
	_base: schema.#Scenario & {for x in [1] {steps: [_bad]}}
	_bad: {sleep: "1ms", nosuch: 1}
	_x: {`, "nosuch", false},
		{"a kind's field wrong in a literal", `steps: [{sleep: 5}]`, "sleep", false},
		{"a common field wrong in a literal", `steps: [{sleep: "1ms", mayFail: "yes"}]`, "mayFail", false},
		{"a step list given whole by reference", `steps: _list
	_list: [{sleep: "1ms", nosuch: 1}]`, "nosuch", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, path := writeLab(t, "s: schema.#Scenario & {\n\t"+tc.body+"\n}\n")
			res, err := Load([]string{path}, Options{})
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Load:\n%v\n%s", err, src)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("Load: %v; want an error naming %q\n%s", err, tc.want, src)
			}
			if got := res != nil && res.byKindClean > 0; got != tc.byKind {
				t.Errorf("found clean by kind: %v, want %v", got, tc.byKind)
			}
		})
	}
}

// TestByKindErrorsAreTheFullBuilds: a package the by-kind build finds errors in is reported
// from that build only when no error is in a step, and then with the full build's messages,
// word for word; an error in a step (or one the by-kind build cannot place) is reported from
// the full build.
func TestByKindErrorsAreTheFullBuilds(t *testing.T) {
	const steps = `steps: [{name: "a", sleep: "1ms"}, {parallel: [{sleep: "1ms"}]}]`
	for _, tc := range []struct {
		name, src  string
		fromByKind bool // reported from the by-kind build
	}{
		{"an unknown field of a scenario", `s: schema.#Scenario & {
	timout: "5s"
	` + steps + `
}
`, true},
		{"a scenario field of the wrong type", `s: schema.#Scenario & {
	timeout: 5
	` + steps + `
}
`, true},
		{"a conflict in a scenario's vars", `s: schema.#Scenario & {
	vars: {n: 1}
	vars: {n: 2}
	` + steps + `
}
`, true},
		{"a bad scenario beside a good one", `s: schema.#Scenario & {
	timout: "5s"
	` + steps + `
}
t: schema.#Scenario & {
	` + steps + `
}
`, true},
		{"an error outside every scenario", `x: 1 & 2
s: schema.#Scenario & {
	` + steps + `
}
`, true},
		{"an unknown field of a step", `s: schema.#Scenario & {
	steps: [{sleep: "1ms", nosuch: 1}]
}
`, false},
		{"an unknown field of a nested step, and of the scenario", `s: schema.#Scenario & {
	timout: "5s"
	steps: [{parallel: [{sleep: "1ms", nosuch: 1}]}]
}
`, false},
		{"a step field of the wrong type", `s: schema.#Scenario & {
	steps: [{sleep: 5}]
}
`, false},
		{"a step field left incomplete", `s: schema.#Scenario & {
	steps: [{name: "a", sleep: string}]
}
`, false},
		{"a nested step field left incomplete", `s: schema.#Scenario & {
	steps: [{parallel: [{sleep: "1ms"}, {sleep: string}]}]
}
`, false},
		{"two kinds in a step", `s: schema.#Scenario & {
	steps: [{sleep: "1ms", assert: "true"}]
}
`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, path := writeLab(t, tc.src)
			got, gotErr := Load([]string{path}, Options{})
			_, wantErr := Load([]string{path}, Options{fullCheck: true})
			if wantErr == nil {
				t.Fatalf("the full build finds no error in\n%s", src)
			}
			if errText(gotErr) != errText(wantErr) {
				t.Errorf("checked by kind:\n%s\nagainst the full schema:\n%s", errText(gotErr), errText(wantErr))
			}
			if from := got != nil && got.byKindErrors > 0; from != tc.fromByKind {
				t.Errorf("reported from the by-kind build: %v, want %v", from, tc.fromByKind)
			}
		})
	}
}

// TestStepChecksSeeEveryStep: the two checks that build a package with the schema's step
// lists left open (vet's by kind, a run's step by step) must find each step wherever it sits,
// in the built value, not only where the syntax shows step lists: here steps the by-kind
// rewrite never wraps (those of a scenario given by an index into a list of structs) hold a
// field #Step does not have, or a value of the wrong type.
// Both loads must refuse them as the full build does.
func TestStepChecksSeeEveryStep(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"a scenario from a list of structs", `_all: [{steps: [{sleep: "1ms", nosuch: 1}]}]
s: schema.#Scenario & _all[0]
`, "nosuch"},
		{"a nested step of a scenario from a list of structs", `_all: [{steps: [{parallel: [{sleep: "1ms"}, {sleep: 5}]}]}]
s: schema.#Scenario & _all[0]
`, "sleep"},
		{"a setup step of a scenario from a list of structs", `_all: [{setup: [{sleep: "1ms", mayFail: "yes"}], steps: [{sleep: "1ms"}]}]
s: schema.#Scenario & _all[0]
`, "mayFail"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// t's literal step gives the by-kind rewrite something to wrap: without one it
			// would leave the package to the full build at once.
			src, path := writeLab(t, "t: schema.#Scenario & {steps: [{sleep: \"1ms\"}]}\n"+tc.src)
			for _, o := range []struct {
				name string
				opts Options
			}{{"vet's load", Options{}}, {"a run's load", Options{ForRun: true}}, {"the full build", Options{fullCheck: true}}} {
				if _, err := Load([]string{path}, o.opts); err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("%s: %v; want an error naming %q\n%s", o.name, err, tc.want, src)
				}
			}
		})
	}
}

// TestByKindErrorsMatchOnInjectedMistakes: each of the examples' scenarios, given one mistake
// outside its steps (or one outside every scenario), is reported by vet's load word for word
// as the full build reports it, and most of these are reported from the by-kind build alone
// (else this test would compare the full build with itself).
func TestByKindErrorsMatchOnInjectedMistakes(t *testing.T) {
	if testing.Short() {
		t.Skip("loads the examples' package a few hundred times; skipped with -short")
	}
	files, _ := filepath.Glob("../examples/*.cue")
	mistakes := []struct{ name, line string }{
		{"an unknown field", `timout: "5s"`},
		{"a timeout of the wrong type", `timeout: 5`},
		{"a doc of the wrong type", `doc: 5`},
		{"tags of the wrong type", `tags: "x"`},
		{"clusterScoped of the wrong type", `clusterScoped: "yes"`},
		{"a conflicting target", `target: "local" & "kube"`},
	}
	tried, fromByKind := 0, 0
	for _, file := range files {
		abs, err := filepath.Abs(file)
		if err != nil {
			t.Fatal(err)
		}
		src, err := os.ReadFile(abs)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.SplitAfter(string(src), "\n")
		at := slices.IndexFunc(lines, func(l string) bool { return strings.HasSuffix(l, ": schema.#Scenario & {\n") })
		if at < 0 {
			continue
		}
		variants := map[string]string{"a conflict outside every scenario": string(src) + "\nbad: 1 & 2\n"}
		for _, m := range mistakes {
			variants[m.name] = strings.Join(lines[:at+1], "") + "\t" + m.line + "\n" + strings.Join(lines[at+1:], "")
		}
		for name, v := range variants {
			overlay := map[string][]byte{abs: []byte(v)}
			got, gotErr := Load([]string{abs}, Options{Overlay: overlay})
			_, wantErr := Load([]string{abs}, Options{Overlay: overlay, fullCheck: true})
			tried++
			if wantErr == nil {
				t.Errorf("%s, %s: the full build finds nothing", file, name)
				continue
			}
			if errText(gotErr) != errText(wantErr) {
				t.Errorf("%s, %s:\nvet's load:\n%s\nthe full build:\n%s", file, name, errText(gotErr), errText(wantErr))
			}
			if got != nil && got.byKindErrors > 0 {
				fromByKind++
			}
		}
	}
	if tried < 100 || fromByKind < tried/2 {
		t.Errorf("%d of %d mistaken packages reported from the by-kind build; want at least half of 100 or more", fromByKind, tried)
	}
	t.Logf("%d of %d mistaken packages reported from the by-kind build", fromByKind, tried)
}

// writeLab writes body, after the package clause of package lab and the schema's import, to
// x.cue in a directory of the test's own; it returns the source and the file's path.
func writeLab(t *testing.T, body string) (src, path string) {
	t.Helper()
	src = "package lab\n\nimport \"labrun.dev/schema\"\n\n" + body
	path = filepath.Join(t.TempDir(), "x.cue")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return src, path
}
