package dsl

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestObjectsFieldsAreNotIterated: the walk for unknown and hidden fields (here run because
// the package has a top-level helper named as a schema field, _timeout) does not iterate the
// fields of an object, of its metadata or of its spec, where no definition can find anything
// (checkOpen): half of the structs it visited in scenarios/. The step and its apply are.
// The object is a custom resource: vet checks no field of it (a ConfigMap has no spec).
func TestObjectsFieldsAreNotIterated(t *testing.T) {
	var spec strings.Builder
	for i := range 50 {
		fmt.Fprintf(&spec, "\t\t\t\tf%d: {a: %d, b: [1, 2]}\n", i, i)
	}
	src := "package lab\n\nimport \"labrun.dev/schema\"\n\n_timeout: \"5s\"\n\ns: schema.#Scenario & {\n\ttarget: \"kube\"\n\tnamespaces: [\"ci\"]\n\tsteps: [{name: \"a\", apply: objects: [{\n\t\t\tapiVersion: \"example.com/v1\"\n\t\t\tkind: \"Widget\"\n\t\t\tmetadata: {name: \"x\", labels: app: \"x\"}\n\t\t\tspec: {\n" + spec.String() + "\t\t\t}\n\t\t}]}]\n\texpect: [\"outcome.a == 'passed'\"]\n}\n"
	path := filepath.Join(t.TempDir(), "s.cue")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	var walked []string
	fieldsWalked = func(p []string) { walked = append(walked, strings.Join(p, ".")) }
	defer func() { fieldsWalked = nil }()
	if _, err := Load([]string{path}, Options{}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"s", "s.steps.0", "s.steps.0.apply"}; !slices.Equal(walked, want) {
		t.Errorf("fields iterated in %q, want %q", walked, want)
	}
}

// TestCheckOpenFindsWhatEveryFieldFinds: the walk by name (checkOpen) reports exactly what
// iterating every field reports, on the repository's packages and on packages with
// problems below objects, metadata and steps.
func TestCheckOpenFindsWhatEveryFieldFinds(t *testing.T) {
	const head = "package lab\n\nimport \"labrun.dev/schema\"\n\n_timeout: \"5s\"\n\n"
	dir := t.TempDir()
	files := map[string]string{
		"unknown.cue": head + "s: schema.#Scenario & {\n\ttarget: \"kube\"\n\tnamespaces: [\"ci\"]\n\tsteps: [{name: \"a\", apply: objects: [{apiVersion: \"v1\", kind: \"ConfigMap\", metadata: {name: \"x\", steps: [{x: 1}]}, steps: [{y: 1}], spec: sequence: [{z: 1}]}]}, {parallel: [{name: \"b\", sleep: \"1ms\", tmeout: \"1s\"}]}]\n\texpect: [\"outcome.a == 'passed'\"]\n}\n",
		"hidden.cue":  head + "t: schema.#Scenario & {\n\tsteps: [{name: \"c\", sleep: \"1ms\", _timeout: \"1s\"}, {name: \"d\", sleep: \"1ms\", _name: \"e\"}]\n\texpect: [\"outcome.c == 'passed'\"]\n}\n",
	}
	var paths []string
	for name, src := range files {
		p := filepath.Join(dir, strings.TrimSuffix(name, ".cue"), name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	paths = append(paths, "../examples/", "../scenarios/", "../examples/istio-tasks/", "../examples/multicluster/")
	for _, p := range paths {
		load := func(every bool) string {
			walkEveryField = every
			defer func() { walkEveryField = false }()
			_, err := Load([]string{p}, Options{})
			var errs Errors
			if err != nil && !errors.As(err, &errs) {
				t.Fatal(err)
			}
			var b strings.Builder
			for _, e := range errs {
				fmt.Fprintf(&b, "%s %s: %s\n", e.Pos, e.Path, e.Msg)
			}
			return b.String()
		}
		if every, byName := load(true), load(false); every != byName {
			t.Errorf("%s: every field found\n%s\nby name\n%s", p, every, byName)
		} else if strings.HasPrefix(p, dir) && every == "" {
			t.Errorf("%s: nothing found, want its problems", p)
		}
	}
}
