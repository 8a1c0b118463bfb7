package scenarios_test

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"labrun.dev/labrun/sandbox"
)

// labrunBin is the labrun CLI, built once per test binary into the sandbox's directory (removed
// with the sandbox).
var labrunBin struct {
	once sync.Once
	path string
	err  error
}

func buildLabrun(t *testing.T, sb *sandbox.Sandbox) string {
	t.Helper()
	labrunBin.once.Do(func() {
		labrunBin.path = filepath.Join(sb.Dir, "labrun-cli", "labrun")
		out, err := exec.Command("go", "build", "-o", labrunBin.path, "labrun.dev/labrun/cmd/labrun").CombinedOutput()
		if err != nil {
			labrunBin.err = errors.New("building labrun: " + err.Error() + "\n" + string(out))
		}
	})
	if labrunBin.err != nil {
		t.Fatal(labrunBin.err)
	}
	return labrunBin.path
}

// labrun runs the CLI in dir and returns its exit code, stdout and stderr.
func labrun(t *testing.T, sb *sandbox.Sandbox, dir string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(buildLabrun(t, sb), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return exit.ExitCode(), o.String(), e.String()
	case err != nil:
		t.Fatalf("labrun %s: %v", strings.Join(args, " "), err)
	}
	return 0, o.String(), e.String()
}

// TestE2EVetServer is `labrun vet --server scenarios/` against the sandbox: every object every
// scenario applies is dry-run on the real API server, whose Istio CRDs (istio.io/api v1.30.8) and
// Gateway API standard CRDs (sigs.k8s.io/gateway-api v1.6.0, the version istio.io/istio
// v0.0.0-20260827124520-eed52ebb66ad requires) check them with their schemas. It must exit 0 with
// no rejection. Objects whose ${...} need values captured during a run (Kit B's client, which
// resolves through the lab DNS Service's ClusterIP) cannot be validated before the run: vet says
// so on stderr, and this test counts them in its log. Kit C's waypoint Gateway must be among the
// validated objects: it is what failed before the Gateway API CRDs were installed.
//
// It does not call t.Parallel: it runs before the parallel e2e tests of this package start, so
// that none of the kits' namespaces is terminating while it dry-runs objects in them.
func TestE2EVetServer(t *testing.T) {
	sb := sandbox.Start(t)
	code, stdout, stderr := labrun(t, sb, ".", "vet", "--server", "--kubeconfig", sb.Kubeconfig, ".")
	if code != 0 {
		t.Fatalf("labrun vet --server scenarios/: exit %d, want 0\n%s%s", code, stdout, stderr)
	}
	if strings.Contains(stdout+stderr, "rejected by the cluster") {
		t.Errorf("a rejection:\n%s%s", stdout, stderr)
	}
	// Every scenario of the package, as the loader finds them (the seed labs and the config
	// claims grow; the count is not written out here).
	n := len(byName(t))
	if !regexp.MustCompile(fmt.Sprintf(`^ok: %d scenarios in \d+ files\n$`, n)).MatchString(stdout) {
		t.Errorf("stdout %q, want the one-line summary of %d scenarios", stdout, n)
	}
	skipped := map[string]int{}
	notValidated := regexp.MustCompile(`^labrun: vet --server: (\S+): not validated: (.*)$`)
	for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if line == "" {
			continue
		}
		m := notValidated.FindStringSubmatch(line)
		if m == nil {
			t.Errorf("unexpected stderr line: %s", line)
			continue
		}
		skipped[m[1]]++
		if !strings.Contains(m[2], "need values captured during the run") {
			t.Errorf("%s: skipped for another reason: %s", m[1], m[2])
		}
	}
	total := 0
	for _, sc := range slices.Sorted(maps.Keys(skipped)) {
		n := skipped[sc]
		total += n
		t.Logf("%s: %d apply step(s) not validated (run-time ${...})", sc, n)
	}
	t.Logf("%d apply steps in %d scenarios need run-time captures and were skipped; all others were dry-run on the sandbox", total, len(skipped))
	for _, sc := range []string{"c_stale", "c_retry", "s1", "s7_full"} {
		if skipped[sc] > 0 {
			t.Errorf("%s: has skipped objects; its objects (Kit C's Gateway, Kit A's DRs) must all be validated", sc)
		}
	}
}

// TestE2EVetServerRejectsAMisspelledGatewayField shows the Gateway API CRDs are there with their
// schemas: a Gateway with a misspelled field is rejected by the sandbox's API server.
func TestE2EVetServerRejectsAMisspelledGatewayField(t *testing.T) {
	sb := sandbox.Start(t)
	dir := t.TempDir()
	spec := `package lab

import "labrun.dev/schema"

gw: schema.#Scenario & {
	doc:    "a Gateway with a misspelled field"
	target: "kube"
	namespaces: ["vet-gw"]
	steps: [{apply: objects: [{
		apiVersion: "gateway.networking.k8s.io/v1"
		kind:       "Gateway"
		metadata: {name: "waypoint", namespace: "vet-gw"}
		spec: {gatewayClassName: "istio-waypoint", listeners: [{name: "mesh", port: 15008, protocl: "HBONE"}]}
	}]}]
}
`
	if err := os.WriteFile(filepath.Join(dir, "gw.cue"), []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := labrun(t, sb, dir, "vet", "--server", "--kubeconfig", sb.Kubeconfig, "gw.cue")
	if code != 2 || !strings.Contains(stderr, "rejected by the cluster") || !strings.Contains(stderr, "protocl") {
		t.Errorf("exit %d, want 2 with the cluster's rejection of spec.listeners[0].protocl\n%s%s", code, stdout, stderr)
	}
	// The rejection points at the field as written (line 13), not at the apply step.
	if !strings.Contains(stderr, "gw.cue:13:") {
		t.Errorf("the cluster's rejection is not positioned at the misspelled field (gw.cue:13)\n%s", stderr)
	}
	t.Logf("labrun vet --server gw.cue: exit %d\n%s", code, strings.TrimSpace(stderr))
}
