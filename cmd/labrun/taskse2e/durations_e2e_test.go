package taskse2e

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"labrun.dev/labrun/cmd/labrun/internal/e2ebin"
	"labrun.dev/labrun/sandbox"
)

// sweptTimeout is a newcomer's VirtualService whose timeout is a swept duration: labrun keeps a
// --sweep duration as Go writes it ("1m30s", "500µs" for 0.5ms) and writes it so into the object.
const sweptTimeout = `package lab

import "labrun.dev/schema"

timeout: schema.#Scenario & {
	target: "kube"
	namespaces: ["swept-timeout"]
	vars: t: "3s"
	lint: ignore: "unknown-host": "only the object's fields are judged here"
	steps: [
		{apply: objects: [{
			apiVersion: "networking.istio.io/v1", kind: "VirtualService"
			metadata: {name: "details", namespace: "swept-timeout"}
			spec: {hosts: ["details"], http: [{route: [{destination: host: "details"}], timeout: "${vars.t}"}]}
		}]},
	]
}
`

// TestE2EVetServerSweptDurations: the sandbox's API server (Istio's CRDs) accepts a duration
// as Go writes it ("1m30s", "1h0m0s"; istiod applies them as "90s", "3600s", seen by hand), and
// refuses one under 1 ms ("0s", "500µs") by the CRD's rule. vet --server dry-runs every
// combination of the sweep and names the ones refused; before, it dry-ran the default's only
// and said ok, and the run of t=0s erred at its apply.
func TestE2EVetServerSweptDurations(t *testing.T) {
	sb := sandbox.Start(t)
	bin := e2ebin.Build(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "x.cue"), []byte(sweptTimeout), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "vet", "--server", "--kubeconfig", sb.Kubeconfig, "--sweep", "t=1m30s,0s,0.5ms,1h", "x.cue")
	cmd.Dir = dir
	cmd.Env = e2ebin.Env(t, sb.BinDir)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 {
		t.Fatalf("labrun vet --server --sweep: %v, want exit 2\n%s", err, out)
	}
	for _, want := range []string{
		`x.cue:14:80: timeout: rejected by the cluster: VirtualService swept-timeout/details (objects[0]): VirtualService.networking.istio.io "details" is invalid: spec.http[0].timeout: Invalid value: "0s": must be a valid duration greater than 1ms (with t=0s)`,
		`Invalid value: "500µs": must be a valid duration greater than 1ms (with t=500µs)`,
		"labrun: 2 problems",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("vet --server --sweep: missing\n%s\nin\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "1m30s") || strings.Contains(string(out), "1h0m0s") {
		t.Errorf("vet --server refused a duration as Go writes it:\n%s", out)
	}
}
