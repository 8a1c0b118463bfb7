package docs_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"labrun.dev/labrun/sandbox"
)

// cookbookDoc is the config cookbook; cookbookScenarios its recipes, in document order.
const cookbookDoc = "config-cookbook.md"

var cookbookScenarios = []string{"pool", "outlier", "gateway_errors", "locality", "locality_no_outlier", "tls", "retries", "mirror", "egress", "mtls", "waypoint_authz", "fault", "shift", "missing_subset", "hash", "deny", "scope", "order", "timeouts", "tcp"}

// TestConfigCookbookVet is `labrun doc --vet docs/config-cookbook.md`: every recipe loads, its
// paths check against Envoy's types, its reflects name objects istiod marks.
func TestConfigCookbookVet(t *testing.T) {
	code, out, errOut := doc(t, ".", "--vet", cookbookDoc)
	if code != 0 {
		t.Fatalf("labrun doc --vet %s: exit %d\n%s%s", cookbookDoc, code, out, errOut)
	}
	if want := "ok: 20 scenarios in 1 file"; !strings.Contains(out, want) {
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

// cookbookWrong edits, per recipe, the object the recipe applies into a wrong value: the
// recipe's claims are about istiod's outcome of the object as written, so the run of the
// edited recipe must fail, never pass.
var cookbookWrong = map[string][2]string{
	"locality_no_outlier": {`trafficPolicy: loadBalancer: localityLbSetting: {enabled: true, failover: [{from: "region1", to: "region2"}]}`, `trafficPolicy: {outlierDetection: consecutive5xxErrors: 1, loadBalancer: localityLbSetting: {enabled: true, failover: [{from: "region1", to: "region2"}]}}`},
	"missing_subset":      {`spec: {host: "backend", subsets: [{name: "v1", labels: version: "v1"}]}`, `spec: {host: "backend", subsets: [{name: "v1", labels: version: "v1"}, {name: "v2", labels: version: "v2"}]}`},
	"gateway_errors":      {"consecutiveGatewayErrors: 2,", "consecutiveGatewayErrors: 3,"},
	"fault":               {"abort: {httpStatus: 503, percentage: value: 25}", "abort: {httpStatus: 503, percentage: value: 30}"},
	"shift":               {`{destination: {host: "backend", subset: "v2"}, weight: 20}`, `{destination: {host: "backend", subset: "v2"}, weight: 30}`},
	"hash":                {`httpHeaderName: "x-user"`, `httpHeaderName: "x-usr"`},
	"deny":                {`rules: [{to: [{operation: methods: ["DELETE"]}]}]`, `rules: [{to: [{operation: methods: ["GET"]}]}]`},
	"scope":               {`spec: egress: [{hosts: ["./*", "istio-system/*"]}]`, `spec: egress: [{hosts: ["istio-system/*"]}]`},
	// The port named as HTTP: no listener on the cluster IP. The read errs at once, naming
	// the listeners there (0.0.0.0_5432 among them); it waited out its until's 5 minutes.
	"tcp": {`ports: [{name: "tcp-pg", port: 5432}]`, `ports: [{name: "http-pg", port: 5432}]`},
	// The catch-all written first: istiod drops the header route after it.
	"order": {`{match: [{headers: "end-user": exact: "jason"}], route: [{destination: host: "backend"}], timeout: "3s"},
			{route: [{destination: host: "backend"}], timeout: "7s"},`, `{route: [{destination: host: "backend"}], timeout: "7s"},
			{match: [{headers: "end-user": exact: "jason"}], route: [{destination: host: "backend"}], timeout: "3s"},`},
	// Retries without attempts: no retry policy at all.
	"timeouts": {`retries: {attempts: 3, perTryTimeout: "2s"}`, `retries: {perTryTimeout: "2s"}`},
}

// cookbookWrongErrs are the recipes of cookbookWrong whose wrong object makes a step err (a
// resource the claim reads is not there), not an expectation fail.
var cookbookWrongErrs = map[string]bool{"tcp": true}

// TestConfigCookbookWrongObjectsInSandbox runs the recipes of cookbookWrong, each with its
// object edited into a wrong value, against the sandbox (as TestConfigCookbookInSandbox does):
// every one fails (an expectation or an until of the recipe) or, for cookbookWrongErrs, errs
// at the read of what is not there; none passes.
func TestConfigCookbookWrongObjectsInSandbox(t *testing.T) {
	b, err := os.ReadFile(cookbookDoc)
	if err != nil {
		t.Fatal(err)
	}
	md := string(b)
	args := []string{"run", "--target", "kube", "--quiet"}
	for name, edit := range cookbookWrong {
		if strings.Count(md, edit[0]) != 1 {
			t.Fatalf("%s: %q is not once in %s", name, edit[0], cookbookDoc)
		}
		md = strings.Replace(md, edit[0], edit[1], 1)
		args = append(args, "--scenario", name)
	}
	wrong := filepath.Join(t.TempDir(), "wrong-cookbook.md")
	if err := os.WriteFile(wrong, []byte(md), 0o644); err != nil {
		t.Fatal(err)
	}
	sb := sandbox.Start(t)
	cmd := exec.Command(labrun, append(args, "--kubeconfig", sb.Kubeconfig, "--report-dir", t.TempDir(), wrong)...)
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err = sandbox.StartTied(cmd) // dies with this test binary, as its sandbox does
	if err == nil {
		err = cmd.Wait()
	}
	out := buf.Bytes()
	t.Logf("labrun %s:\n%s", strings.Join(args, " "), out)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Errorf("labrun run: %v, want exit 3 (failed, and %d erred)", err, len(cookbookWrongErrs))
	}
	for name := range cookbookWrong {
		verdict := "FAILED "
		if cookbookWrongErrs[name] {
			verdict = "ERROR "
		}
		if !strings.Contains(string(out), verdict+name+" ") {
			t.Errorf("no %sline for %s, whose object is wrong", verdict, name)
		}
	}
}
