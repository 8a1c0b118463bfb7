package dsl

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAnObjectsStepsAreNoSteps: a Kubernetes object's own list named as a list of steps (a
// Tekton Pipeline's steps) is the object's, not labrun's: the walk for unknown and hidden
// fields does not check it against #Step, whether it runs because the package has a hidden
// helper named as a schema field (_timeout) or because the package has another problem. A
// list of steps the schema declares is still checked (a parallel's).
func TestAnObjectsStepsAreNoSteps(t *testing.T) {
	const head = "package lab\n\nimport \"labrun.dev/schema\"\n\n"
	const pipeline = `{apply: objects: [{
			apiVersion: "tekton.dev/v1"
			kind:       "Pipeline"
			metadata: {name: "build", sequence: [{script: "a"}]}
			steps: [{image: "busybox", script: "echo hi"}]
			spec: steps: [{image: "busybox"}]
		}]}`
	for _, c := range []struct {
		name, src string
		want      []string // paths of errors
	}{
		{"walked for a hidden helper", head + "_timeout: \"5s\"\n\ns: schema.#Scenario & {\n\ttarget: \"kube\"\n\tnamespaces: [\"ci\"]\n\tsteps: [" + pipeline + ", {name: \"w\", sleep: \"1ms\"}]\n\texpect: [\"outcome.w == 'passed'\"]\n}\n", nil},
		{"walked for another problem", head + "s: schema.#Scenario & {\n\ttarget: \"kube\"\n\tnamespaces: [\"ci\"]\n\tsteps: [" + pipeline + ", {name: \"w\", sleep: \"1ms\", tmeout: \"1s\"}]\n\texpect: [\"outcome.w == 'passed'\"]\n}\n", []string{"s.steps.1.tmeout"}},
		{"a parallel's steps", head + "_timeout: \"5s\"\n\ns: schema.#Scenario & {\n\tsteps: [{parallel: [{name: \"w\", sleep: \"1ms\", tmeout: \"1s\"}]}]\n\texpect: [\"outcome.w == 'passed'\"]\n}\n", []string{"s.steps.0.parallel.0.tmeout"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.cue")
			if err := os.WriteFile(path, []byte(c.src), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := loadErrorPaths(t, path)
			if strings.Join(got, " ") != strings.Join(c.want, " ") {
				t.Errorf("errors at %q, want %q (%v)", got, c.want, err)
			}
		})
	}
}
