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

// tlsAtPort is a newcomer's egress TLS origination (Istio's task as it reads now: a
// ServiceEntry port 80 that targets 443, the DestinationRule originating TLS on port 80),
// with the rule's port written as %d: 80 is right, 443 (the targetPort) the mistake.
const tlsAtPort = `package lab

import "labrun.dev/schema"

tls: schema.#Scenario & {
	target: "kube"
	namespaces: ["tls-port"]
	setup: [
		{apply: objects: [{apiVersion: "v1", kind: "Namespace", metadata: {name: "tls-port", labels: "istio-injection": "enabled"}}, _curl, {
			apiVersion: "networking.istio.io/v1", kind: "ServiceEntry"
			metadata: {name: "api", namespace: "tls-port"}
			spec: {hosts: ["api.example.com"], resolution: "DNS", ports: [{number: 80, name: "http", protocol: "HTTP", targetPort: 443}]}
		}]},
		{wait: rollout: "curl"},
	]
	steps: [
		{apply: objects: [_dr]},
		{name: "c", timeout: "30s", config: {envoy: {selector: "app=curl", namespace: "tls-port"}, cluster: "outbound|80||api.example.com", reflects: _dr}},
	]
	expect: ["c.transport_socket != nil && c.transport_socket.name == 'envoy.transport_sockets.tls'"]
	cleanup: [{delete: objects: [{apiVersion: "v1", kind: "Namespace", metadata: name: "tls-port"}]}]
}

_dr: {
	apiVersion: "networking.istio.io/v1", kind: "DestinationRule"
	metadata: {name: "api", namespace: "tls-port"}
	spec: {host: "api.example.com", trafficPolicy: portLevelSettings: [{port: number: PORT, tls: {mode: "SIMPLE", sni: "api.example.com"}}]}
}

_curl: {
	apiVersion: "apps/v1", kind: "Deployment"
	metadata: {name: "curl", namespace: "tls-port"}
	spec: {
		selector: matchLabels: app: "curl"
		template: {
			metadata: labels: app: "curl"
			spec: containers: [{name: "fortio", image: "fortio/fortio:latest_release", args: ["server"]}]
		}
	}
}
`

// TestE2ETLSOriginationPort: the real istiod (master of 2026-08-27) applies a
// portLevelSettings entry to the cluster of the service port it names. The rule at port 80
// gives cluster outbound|80||api.example.com a TLS transport socket (the run passes); the
// same rule at 443, the ServiceEntry's targetPort, is accepted by the API server and istiod
// and gives that cluster none (the run fails), which vet warns of (unknown-port).
func TestE2ETLSOriginationPort(t *testing.T) {
	sb := sandbox.Start(t)
	bin := e2ebin.Build(t)
	for _, c := range []struct {
		port, verdict, vet string
	}{
		{"80", "PASSED tls", "ok: 1 scenario"},
		{"443", "FAILED tls", "warning[unknown-port]: portLevelSettings port 443 is none of the ports of host api.example.com's service (80; 443 is the targetPort of service port 80: write 80)"},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "x.cue"), []byte(strings.Replace(tlsAtPort, "PORT", c.port, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := labrun(t, sb, bin, dir, "vet", "x.cue")
		if err != nil || !strings.Contains(out, c.vet) {
			t.Errorf("port %s: labrun vet: %v, want %q\n%s", c.port, err, c.vet, out)
		}
		out, err = labrun(t, sb, bin, dir, "run", "--target", "kube", "--kubeconfig", sb.Kubeconfig, "--report-dir", t.TempDir(), "x.cue")
		var exit *exec.ExitError
		if c.port == "443" && (!errors.As(err, &exit) || exit.ExitCode() != 1) || c.port == "80" && err != nil || !strings.Contains(out, c.verdict) {
			t.Errorf("port %s: labrun run: %v, want %s\n%s", c.port, err, c.verdict, out)
		}
	}
}
