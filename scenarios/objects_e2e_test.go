package scenarios_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"labrun.dev/labrun/sandbox"
)

// crdLaterScenario is a scenario whose second step applies an object of the kind the first
// step's CRD defines, then waits for its fields, merge-patches it, deletes it and waits for it
// to be gone. crLine is the CR's spec, a line of its own (so that an error can be placed).
func crdLaterScenario(ns, crLine string) string {
	return fmt.Sprintf(`package lab

import "labrun.dev/schema"

s: schema.#Scenario & {
	doc:           "a CR whose CRD an earlier step applies"
	target:        "kube"
	namespaces:    [%[1]q]
	clusterScoped: true
	steps: [
		{apply: objects: [{apiVersion: "v1", kind: "Namespace", metadata: name: %[1]q}, {
			apiVersion: "apiextensions.k8s.io/v1"
			kind:       "CustomResourceDefinition"
			metadata: name: "sprockets.%[1]s.labrun.dev"
			spec: {
				group: "%[1]s.labrun.dev"
				scope: "Namespaced"
				names: {kind: "Sprocket", plural: "sprockets"}
				versions: [{name: "v1", served: true, storage: true, schema: openAPIV3Schema: {
					type: "object"
					properties: spec: {type: "object", properties: teeth: type: "integer"}
				}}]
			}
		}]},
		{apply: objects: [{apiVersion: "%[1]s.labrun.dev/v1", kind: "Sprocket", metadata: name: "s1",
			%[2]s
		}]},
		{wait: match: {apiVersion: "%[1]s.labrun.dev/v1", kind: "Sprocket", metadata: name: "s1", spec: teeth: 12}},
		{apply: {mode: "patch", objects: [{apiVersion: "%[1]s.labrun.dev/v1", kind: "Sprocket", metadata: name: "s1", spec: teeth: 14}]}},
		{wait: match: {apiVersion: "%[1]s.labrun.dev/v1", kind: "Sprocket", spec: teeth: 14}},
		{delete: objects: [{apiVersion: "%[1]s.labrun.dev/v1", kind: "Sprocket", metadata: name: "s1"}]},
		{wait: absent: {kind: "Sprocket", metadata: name: "s1"}},
	]
}
`, ns, crLine)
}

func writeScenario(t *testing.T, src string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "x.cue"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestE2ECRDAppliedByAnEarlierStep: `labrun run` and `vet --server` against the sandbox accept
// an object whose kind the cluster does not serve before the run because an earlier step
// applies its CRD; the object is checked when its step runs, and what the cluster rejects then
// is placed at the field written. A kind that no CRD of the scenario defines is still refused
// before the run.
func TestE2ECRDAppliedByAnEarlierStep(t *testing.T) {
	sb := sandbox.Start(t)
	t.Run("runs", func(t *testing.T) {
		dir := writeScenario(t, crdLaterScenario("e2e-crdlater", "spec: teeth: 12"))
		code, stdout, stderr := labrun(t, sb, dir, "vet", "--server", "--kubeconfig", sb.Kubeconfig, "x.cue")
		if code != 0 || !strings.Contains(stderr, "x.cue:25:3: steps.1 (checked when the step runs: the cluster does not serve kind Sprocket (its CRD is applied by the step at x.cue:11:3) before the run)") {
			t.Errorf("vet --server: exit %d, want 0 and a note that the Sprocket is checked when its step runs\n%s%s", code, stdout, stderr)
		}
		code, stdout, stderr = labrun(t, sb, dir, "run", "--kubeconfig", sb.Kubeconfig, "--report-dir", filepath.Join(dir, "reports"), "x.cue")
		if code != 0 {
			t.Errorf("run: exit %d, want 0\n%s%s", code, stdout, stderr)
		}
	})
	t.Run("rejected field placed", func(t *testing.T) {
		dir := writeScenario(t, crdLaterScenario("e2e-crdlater-bad", "spec: teeeth: 12"))
		code, stdout, stderr := labrun(t, sb, dir, "run", "--kubeconfig", sb.Kubeconfig, "--report-dir", filepath.Join(dir, "reports"), "x.cue")
		if out := stdout + stderr; code != 3 || !strings.Contains(out, "x.cue:26:10: rejected by the cluster: ") || !strings.Contains(out, ".spec.teeeth: field not declared in schema") {
			t.Errorf("run: exit %d, want 3 with the rejection of spec.teeeth at x.cue:26:10\n%s%s", code, stdout, stderr)
		}
		t.Logf("run of a misspelled CR field: exit %d\n%s", code, stderr)
	})
	t.Run("undefined kind refused", func(t *testing.T) {
		src := strings.Replace(crdLaterScenario("e2e-crdlater-none", "spec: teeth: 12"), `kind: "Sprocket", metadata: name: "s1",`, `kind: "Gear", metadata: name: "s1",`, 1)
		dir := writeScenario(t, src)
		code, stdout, stderr := labrun(t, sb, dir, "run", "--kubeconfig", sb.Kubeconfig, "--report-dir", filepath.Join(dir, "reports"), "x.cue")
		if code != 2 || !strings.Contains(stdout+stderr, "x.cue:25:3: objects[0]: Gear s1: the API server serves no kind Gear") {
			t.Errorf("run: exit %d, want 2 (refused before the run)\n%s%s", code, stdout, stderr)
		}
	})
}
