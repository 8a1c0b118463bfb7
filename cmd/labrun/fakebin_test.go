package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestFakeBinaryReadsReady: the binary built with -tags labrun_fakes sets its fake target up
// from the environment as the scripts' fake target does (fakes.FromEnv): LABRUN_FAKE_READY
// lists a selector's ready pods, and a step by that selector reads the first by name and warns
// of the others. Before, only the scripts' world read it (cmd/labrun's main_test.go), and the
// binary ran such a step as if the selector matched no pod.
func TestFakeBinaryReadsReady(t *testing.T) {
	bin := buildFakeBinary(t)
	dir := t.TempDir()
	src := `package s

import "labrun.dev/schema"

s: schema.#Scenario & {
	namespaces: ["lab"]
	steps: [{name: "probe", exec: {selector: "app=backend", argv: ["true"]}}]
	expect: ["probe.exit == 0"]
}
`
	if err := os.WriteFile(filepath.Join(dir, "s.cue"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "run", "--target", "fake", "--report-dir", "", "s.cue")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LABRUN_FAKE_READY=app=backend:backend-c,backend-a,backend-b")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("labrun run: %v\n%s", err, out)
	}
	for _, want := range []string{"read pod lab/backend-a", "selector app=backend matched 3 ready pods in lab (backend-a, backend-b, backend-c)"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the run does not say %q:\n%s", want, out)
		}
	}
}
