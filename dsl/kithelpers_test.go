package dsl

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAKitsOwnHelperWalksNoScenario: a hidden helper named as a schema field that is a field
// of a kit's own struct (scenarios.cue's kitB: {_backend: ...}) reaches a scenario only
// where the kit is read whole: a package that reads only the kit's fields (kit.first,
// kit.tmpl) is not walked for hidden fields (it was: all 30 scenarios of scenarios/). A helper
// deeper in the kit, or a kit read whole or under an alias, is still found.
func TestAKitsOwnHelperWalksNoScenario(t *testing.T) {
	const head = "package lab\n\nimport \"labrun.dev/schema\"\n\n"
	const step = "{name: \"a\", sleep: \"1ms\"}"
	for _, c := range []struct {
		name, src string
		walked    bool     // the scenario's fields are iterated
		want      []string // hidden-field errors
	}{
		{"its fields read", head + "kit: {\n\t_timeout: {x: \"5s\"}\n\tfirst: " + step + "\n\ttmpl: {sleep: \"1ms\"}\n}\ns: schema.#Scenario & {\n\tsteps: [kit.first, kit.tmpl & {name: \"b\"}]\n\texpect: [\"outcome.a == 'passed'\"]\n}\n", false, nil},
		{"read whole", head + "kit: {_timeout: \"5s\"}\ns: schema.#Scenario & kit & {\n\tsteps: [" + step + "]\n\texpect: [\"outcome.a == 'passed'\"]\n}\n", true, []string{"s._timeout"}},
		{"read whole in a comprehension", head + "kit: {_timeout: \"5s\"}\ns: schema.#Scenario & {\n\tfor k, v in kit {}\n\tsteps: [" + step + "]\n\texpect: [\"outcome.a == 'passed'\"]\n}\n", true, nil},
		{"under an alias", head + "K=kit: {_timeout: \"5s\"}\ns: schema.#Scenario & K & {\n\tsteps: [" + step + "]\n\texpect: [\"outcome.a == 'passed'\"]\n}\n", true, []string{"s._timeout"}},
		{"deeper in the kit", head + "kit: {tmpl: {_timeout: \"1s\", sleep: \"1ms\"}}\ns: schema.#Scenario & {\n\tsteps: [kit.tmpl & {name: \"a\"}]\n\texpect: [\"outcome.a == 'passed'\"]\n}\n", true, []string{"s.steps.0._timeout"}},
		{"in a comprehension of the kit", head + "kit: {if true {_timeout: \"1s\"}, tmpl: {sleep: \"1ms\"}}\ns: schema.#Scenario & {\n\tsteps: [kit.tmpl & {name: \"a\"}]\n\texpect: [\"outcome.a == 'passed'\"]\n}\n", true, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.cue")
			if err := os.WriteFile(path, []byte(c.src), 0o644); err != nil {
				t.Fatal(err)
			}
			walked := false
			fieldsWalked = func(p []string) { walked = walked || len(p) == 1 && p[0] == "s" }
			defer func() { fieldsWalked = nil }()
			got, err := loadErrorPaths(t, path)
			if strings.Join(got, " ") != strings.Join(c.want, " ") {
				t.Errorf("errors at %q, want %q (%v)", got, c.want, err)
			}
			if walked != c.walked {
				t.Errorf("scenario walked: %v, want %v", walked, c.walked)
			}
		})
	}
}

// TestAnImportedKitsHelperIsFound: a step template of an imported package with _timeout
// (meant as timeout) was never read, and vet said ok, where the importing package wrote no
// hidden label of its own named as a schema field: only the package's own files were looked
// at to decide whether its scenarios are walked. A helper anywhere in a package it imports
// (directly or through another) makes them walked; an import without one does not.
func TestAnImportedKitsHelperIsFound(t *testing.T) {
	for _, c := range []struct {
		name, kit string
		want      []string
	}{
		{"a template's helper", "package kit\n\nslow: {_timeout: \"1s\", sleep: \"1ms\"}\n", []string{"s.steps.0._timeout"}},
		{"no helper", "package kit\n\nslow: {timeout: \"1s\", sleep: \"1ms\"}\n", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			files := map[string]string{
				"cue.mod/module.cue": "module: \"example.com/lab@v0\"\nlanguage: version: \"v0.17.0\"\n",
				"kit/kit.cue":        c.kit,
				"lab.cue":            "package lab\n\nimport (\n\t\"labrun.dev/schema\"\n\t\"example.com/lab/kit\"\n)\n\ns: schema.#Scenario & {\n\tsteps: [kit.slow & {name: \"a\"}]\n\texpect: [\"ended.a - started.a < duration('1s')\"]\n}\n",
			}
			for name, src := range files {
				p := filepath.Join(dir, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := loadErrorPaths(t, dir)
			if strings.Join(got, " ") != strings.Join(c.want, " ") {
				t.Errorf("errors at %q, want %q (%v)", got, c.want, err)
			}
		})
	}
}

// loadErrorPaths loads path (a file or a folder) and returns the schema paths of the
// problems it was refused with, in order, and the error itself; any other error fails t.
func loadErrorPaths(t *testing.T, path string) ([]string, error) {
	t.Helper()
	_, err := Load([]string{path}, Options{})
	var got []string
	var errs Errors
	if errors.As(err, &errs) {
		for _, e := range errs {
			got = append(got, e.Path)
		}
	} else if err != nil {
		t.Fatal(err)
	}
	return got, err
}
