package docs_test

import (
	"strings"
	"testing"

	"labrun.dev/labrun/sandbox"
)

// cookbookDoc is the config cookbook; cookbookScenarios its recipes, in document order.
const cookbookDoc = "config-cookbook.md"

var cookbookScenarios = []string{"pool", "outlier", "locality", "tls", "retries", "mirror", "egress", "mtls", "waypoint_authz"}

// TestConfigCookbookVet is `labrun doc --vet docs/config-cookbook.md`: every recipe loads, its
// paths check against Envoy's types, its reflects name objects istiod marks.
func TestConfigCookbookVet(t *testing.T) {
	code, out, errOut := doc(t, ".", "--vet", cookbookDoc)
	if code != 0 {
		t.Fatalf("labrun doc --vet %s: exit %d\n%s%s", cookbookDoc, code, out, errOut)
	}
	if want := "ok: 9 scenarios in 1 file"; !strings.Contains(out, want) {
		t.Errorf("labrun doc --vet %s printed %q, want %q", cookbookDoc, out, want)
	}
}

// TestConfigCookbookInSandbox runs every recipe of the cookbook for real against the sandbox:
// the Kubernetes API server (v1.37.2), kwok as the kubelet, Istio's CRDs and istiod
// (istio.io/istio v0.0.0-20260827124520-eed52ebb66ad, master of 2026-08-27). Every config step
// reads what istiod sends the pod's proxy — a sidecar, or the waypoint of the ambient recipe —
// through the Envoy admin stand-in, which replays nothing here: no fixture is installed. Each
// expected block must match the run (LABRUN_UPDATE=1 rewrites them).
func TestConfigCookbookInSandbox(t *testing.T) {
	sb := sandbox.Start(t) // this test's own sandbox, stopped when it ends
	out, _, _ := docInSandbox(t, sb, cookbookDoc)
	for _, name := range cookbookScenarios {
		if !strings.Contains(out, "PASSED "+name+" ") {
			t.Errorf("no PASSED line for %s", name)
		}
	}
}
