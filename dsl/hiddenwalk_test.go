package dsl

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHiddenFieldsOfACleanPackage: in a package CUE finds no error in, a hidden field named
// as a scenario's or a step's field (_timeout) is found wherever it is written: inside the
// scenario, in a template a scenario embeds, in a package whose other scenario has a hidden
// helper named as a schema field (cfg_retry's _route) that is not one of its own fields.
// Only the scenarios whose values write such a label are walked when it is inside them.
func TestHiddenFieldsOfACleanPackage(t *testing.T) {
	const head = "package lab\n\nimport \"labrun.dev/schema\"\n\n"
	for _, c := range []struct {
		name, src string
		want      []string // scenarios with a hidden-field error
	}{
		{"inside the scenario", head + "s: schema.#Scenario & {\n\t_timeout: \"5s\"\n\tsteps: [{name: \"a\", sleep: \"1ms\"}]\n}\n", []string{"s._timeout"}},
		{"in a template it embeds", head + "_base: {_timeout: \"5s\"}\ns: schema.#Scenario & _base & {\n\tsteps: [{name: \"a\", sleep: \"1ms\"}]\n}\n", []string{"s._timeout"}},
		{"in one of two", head + "s: schema.#Scenario & {\n\tsteps: [{name: \"a\", sleep: \"1ms\", _timeout: \"1s\"}]\n}\nt: schema.#Scenario & {\n\t_route: \"x\"\n\tsteps: [{name: \"b\", sleep: \"1ms\"}]\n}\n", []string{"s.steps.0._timeout"}},
		{"in a kit it embeds", head + "kit: {_timeout: \"5s\"}\ns: schema.#Scenario & kit & {\n\tsteps: [{name: \"a\", sleep: \"1ms\"}]\n}\n", []string{"s._timeout"}},
		{"a helper beside its field", head + "s: schema.#Scenario & {\n\t_steps: [{name: \"a\", sleep: \"1ms\"}]\n\tsteps: _steps\n}\n", nil},
		{"a helper named as no field of its struct", head + "t: schema.#Scenario & {\n\t_route: \"x\"\n\tsteps: [{name: \"b\", sleep: \"1ms\"}]\n}\n", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.cue")
			if err := os.WriteFile(path, []byte(c.src), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Load([]string{path}, Options{})
			var got []string
			var errs Errors
			if errors.As(err, &errs) {
				for _, e := range errs {
					if strings.Contains(e.Msg, "hidden field") {
						got = append(got, e.Path)
					}
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if strings.Join(got, " ") != strings.Join(c.want, " ") {
				t.Errorf("hidden-field errors at %q, want %q (%v)", got, c.want, err)
			}
		})
	}
}
