package dsl

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"labrun.dev/labrun/schema"
)

// TestStepListsAreTheSchemas: cleanShallow checks the steps of exactly the lists the schema
// types [...#Step]; a new list of steps in the schema that it did not know would go
// unchecked in a run's load.
func TestStepListsAreTheSchemas(t *testing.T) {
	entries, err := schema.Files.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	field := regexp.MustCompile(`(?m)^\t(\w+)[?!]?: \[\.\.\.#Step\]`)
	var got []string
	for _, e := range entries {
		src, _ := schema.Files.ReadFile(e.Name())
		inStep := strings.Contains(string(src), "\n#Step: {")
		for _, m := range field.FindAllStringSubmatch(string(src), -1) {
			switch {
			case e.Name() == "scenario.cue":
				got = append(got, "scenario."+m[1])
			case e.Name() == "repeat.cue":
				got = append(got, "step.repeat."+m[1])
			case inStep:
				got = append(got, "step."+m[1])
			default:
				t.Errorf("%s: %s holds steps in a definition cleanShallow does not know", e.Name(), m[1])
			}
		}
		if n := strings.Count(string(src), "#Step"); strings.Count(shallowSchemaSource(src), "#Step") != n-strings.Count(string(src), "[...#Step]") {
			t.Errorf("%s: shallowSchemaSource left a list of steps typed", e.Name())
		}
	}
	var want []string
	for _, f := range scenarioStepLists {
		want = append(want, "scenario."+f)
	}
	for _, f := range stepStepLists {
		want = append(want, "step."+f)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("the schema's lists of steps are %v; cleanShallow checks %v", got, want)
	}
}

// TestForRunLoadsAsVet: a run's load (ForRun: steps checked one at a time, positions kept as
// tables) finds exactly what vet's finds, on every malformed case, example, seed scenario
// and document of the repository; and where both are clean, the same scenarios with the
// same steps.
func TestForRunLoadsAsVet(t *testing.T) {
	if testing.Short() {
		t.Skip("loads every file of the repository twice; skipped with -short")
	}
	paths := repositorySpecs(t)
	shallow := 0
	for _, p := range paths {
		vet, vetErr := Load([]string{p}, Options{})
		run, runErr := Load([]string{p}, Options{ForRun: true})
		if run != nil {
			shallow += run.shallowClean
		}
		if errText(vetErr) != errText(runErr) {
			// What vet finds wrong in an Istio kind's object by the release it knows, a run's
			// load leaves to the cluster's CRD (IstioByCluster, as vet --server's does): kept
			// in the scenario's IstioChecks, which interp judges before anything is applied.
			byCluster, byClusterErr := Load([]string{p}, Options{IstioByCluster: true})
			if errText(byClusterErr) != errText(runErr) || !leftToCluster(errText(vetErr), errText(byClusterErr), run) {
				t.Errorf("%s:\nvet's load:\n%s\na run's load:\n%s", p, errText(vetErr), errText(runErr))
				continue
			}
			vet = byCluster
		}
		if got, want := scenarioSteps(run), scenarioSteps(vet); !slices.Equal(got, want) {
			t.Errorf("%s: a run's load decoded\n%v\nvet's\n%v", p, got, want)
		}
		for i, sc := range run.Scenarios {
			vs := vet.Scenarios[i]
			var vsteps, rsteps []*Step
			Walk(append(append([]*Step{}, vs.Setup...), vs.Steps...), func(s *Step) { vsteps = append(vsteps, s) })
			Walk(append(append([]*Step{}, sc.Setup...), sc.Steps...), func(s *Step) { rsteps = append(rsteps, s) })
			for j, s := range rsteps {
				// A run keeps the decoded parameters of the steps with ${...} only (Resolve).
				if len(s.templates) != len(vsteps[j].templates) || len(s.templates) > 0 && !reflect.DeepEqual(s.raw, vsteps[j].raw) || len(s.templates) == 0 && s.raw != nil {
					t.Errorf("%s: %s: %d templates, parameters kept %v in a run's load (vet's %v)", p, s.Path, len(s.templates), s.raw, vsteps[j].raw)
				}
				for _, f := range []string{"", "url", "objects.0.spec", "objects.0.metadata.name", "envoy.selector", "argv.1", "nothing.here"} {
					if got, want := s.FieldPos(f), vsteps[j].FieldPos(f); got != want {
						t.Errorf("%s: %s: FieldPos(%q) = %v in a run's load, %v in vet's", p, s.Path, f, got, want)
					}
				}
			}
		}
	}
	// The clean packages must have been found clean step by step, or the test compared the
	// full build with itself.
	if shallow < 40 {
		t.Errorf("a run's load found %d packages clean step by step; the examples alone have more", shallow)
	}
}

// leftToCluster says whether each problem vet's load says (vetText) and vet --server's does
// not (byClusterText) is one that the run's load kept for the cluster to judge, at its
// position; and that there is at least one.
func leftToCluster(vetText, byClusterText string, run *Result) bool {
	if run == nil {
		return false
	}
	kept := map[string]bool{}
	for _, sc := range run.Scenarios {
		for _, c := range sc.IstioChecks {
			kept[c.Pos.String()] = true
		}
	}
	said := map[string]bool{}
	for _, l := range strings.Split(byClusterText, "\n") {
		said[l] = true
	}
	n := 0
	for _, l := range strings.Split(vetText, "\n") {
		if said[l] {
			continue
		}
		n++
		pos, _, ok := strings.Cut(l, ": ")
		if !ok || !kept[pos] {
			return false
		}
	}
	return n > 0
}

// repositorySpecs are every malformed case, example, seed scenario and document of the
// repository, for the tests that hold two ways of loading to each other.
func repositorySpecs(t *testing.T) []string {
	t.Helper()
	paths := malformedSpecs(t, "*.cue", "*.md")
	for _, glob := range []string{"../examples/*.cue", "../examples/*/*.cue", "../scenarios/*.cue", "../docs/*.md"} {
		m, _ := filepath.Glob(glob)
		paths = append(paths, m...)
	}
	if len(paths) < 300 {
		t.Fatalf("found %d files; the globs are stale", len(paths))
	}
	return paths
}

// malformedSpecs are the malformed cases whose names match the globs, each copied alone into
// its own directory, as TestMalformed (cmd/labrun) and a user hold one: one file per case. In
// place, every case of the corpus is a file of one package (lab) with hundreds of others, each
// declaring its own s: a load of one would build them all, conflicting, 600 times over.
func malformedSpecs(t *testing.T, globs ...string) []string {
	t.Helper()
	root := t.TempDir()
	var paths []string
	for _, glob := range globs {
		m, _ := filepath.Glob(filepath.Join("../cmd/labrun/testdata/malformed", glob))
		for _, p := range m {
			src, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(root, strings.TrimSuffix(filepath.Base(p), filepath.Ext(p)))
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			dst := filepath.Join(dir, filepath.Base(p))
			if err := os.WriteFile(dst, src, 0o644); err != nil {
				t.Fatal(err)
			}
			paths = append(paths, dst)
		}
	}
	if len(paths) < 500 {
		t.Fatalf("found %d malformed cases; the globs are stale", len(paths))
	}
	return paths
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// scenarioSteps lists each scenario's name and its steps' paths, kinds and positions.
func scenarioSteps(r *Result) []string {
	if r == nil {
		return nil
	}
	var out []string
	for _, sc := range r.Scenarios {
		out = append(out, sc.Name)
		Walk(append(append(append(append([]*Step{}, sc.Setup...), sc.Steps...), sc.Catch...), sc.Cleanup...), func(s *Step) {
			out = append(out, s.Path+" "+s.Kind+" "+s.Pos.String())
		})
	}
	return out
}
