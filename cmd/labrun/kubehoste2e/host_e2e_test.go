// Package kubehoste2e runs the real labrun binary against the sandbox (a real kube-apiserver
// and kwok on loopback) with commands on this machine on the kube target: kubectl from the
// sandbox's bin dir reaches the cluster through the KUBECONFIG, LABRUN_CONTEXT and
// LABRUN_NAMESPACE labrun gives it, from an exec without a pod and from a process step, and
// expressions read the outcome of a step expected to fail. Its own package, so that only it
// starts a sandbox.
package kubehoste2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"labrun.dev/labrun/cmd/labrun/internal/e2ebin"

	"labrun.dev/labrun/sandbox"
)

func TestMain(m *testing.M) { sandbox.Main(m) }

// hostScenario needs the cluster for everything it checks: kubectl lists the namespace the
// scenario applied (and fails on one that does not exist, as expected).
const hostScenario = `package s

import "labrun.dev/schema"

hostkube: schema.#Scenario & {
	target: "kube"
	namespaces: ["host-lab"]
	setup: [{apply: objects: [{apiVersion: "v1", kind: "Namespace", metadata: name: "host-lab"}]}]
	steps: [
		{name: "ns", exec: {
			argv: ["sh", "-c", "kubectl --context \"$LABRUN_CONTEXT\" get ns -o name && echo ns=$LABRUN_NAMESPACE greeting=$GREETING ctx=$LABRUN_CONTEXT kc=$KUBECONFIG"]
			env: GREETING: "hi"
			capture: "ns=(?P<ns>\\S*) greeting=(?P<greeting>\\S*) ctx=(?P<ctx>\\S*) kc=(?P<kc>\\S*)"
		}},
		{name: "missing", expectFail: "NotFound", exec: argv: ["kubectl", "get", "ns", "nosuch-ns"]},
		{name: "proc", process: {
			argv: ["sh", "-c", "kubectl get ns \"$LABRUN_NAMESPACE\" -o name && echo ready; sleep 30"]
			ready: log: "ready"
		}},
		{name: "plog", logs: {process: "proc", match: "^namespace/"}},
		{assert: "outcome.missing == 'passed' && error.missing contains 'nosuch-ns'"},
	]
	expect: [
		"ns.stdout contains 'namespace/host-lab'",
		"ns.captured.ns == 'host-lab' && ns.captured.greeting == 'hi'",
		"ns.captured.ctx == 'sandbox' && ns.captured.kc == vars.kubeconfig",
		"plog.count == 1 && plog.lines[0] == 'namespace/host-lab'",
		"outcome.missing == 'passed' && outcome.ns == 'passed'",
	]
	vars: kubeconfig: string | *""
}
`

// TestE2EKubeHostCommands runs kubectl on this machine from an exec without a pod and a
// process step on the kube target. The command's environment holds no KUBECONFIG of its
// own: kubectl can only reach the sandbox through the one labrun exports.
func TestE2EKubeHostCommands(t *testing.T) {
	sb := sandbox.Start(t)
	bin := e2ebin.Build(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "s.cue"), []byte(hostScenario), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "run", "--report-dir", "", "--kubeconfig", sb.Kubeconfig, "--var", "kubeconfig="+sb.Kubeconfig, "s.cue")
	cmd.Dir = dir
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "KUBECONFIG=") && !strings.HasPrefix(kv, "PATH=") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, "PATH="+sb.BinDir+string(os.PathListSeparator)+os.Getenv("PATH"), "HOME="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("labrun run: %v\n%s", err, out)
	}
	for _, want := range []string{"✓ (ns.captured.ctx (\"sandbox\") == \"sandbox\")", "⚠ expectFail: failed as expected:", "PASSED hostkube"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
