package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/schema"
)

// clusterSubsetsScenario routes to subsets of two hosts it applies no DestinationRule for:
// backend's v2 (a rule the cluster holds defines it) and v3 (none does), and web's v1 (the
// cluster holds no rule for web).
const clusterSubsetsScenario = `package lab

import "labrun.dev/schema"

s: schema.#Scenario & {
	target: "kube"
	namespaces: ["lab"]
	lint: ignore: "unknown-host": "the Services exist already"
	steps: [
		{apply: objects: [{
			apiVersion: "networking.istio.io/v1", kind: "VirtualService", metadata: {name: "backend", namespace: "lab"}
			spec: {hosts: ["backend"], http: [{route: [{destination: {host: "backend", subset: "v2"}}]}, {route: [{destination: {host: "backend.lab.svc.cluster.local", subset: "v3"}}]}]}
		}, {
			apiVersion: "networking.istio.io/v1", kind: "VirtualService", metadata: {name: "web", namespace: "lab"}
			spec: {hosts: ["web"], http: [{route: [{destination: {host: "web", subset: "v1"}}]}]}
		}]},
	]
}
`

// TestUnknownSubsetClusterRulesStandInCluster: unknown-subset judged only the rules a
// scenario applies, so a route to a subset of a host whose rule the cluster holds already
// (or a host with no rule anywhere) passed vet --server unnoticed: every request routed
// there is a 503 NC. vet --server reads the cluster's DestinationRules (a stand-in cluster,
// driver/fakes, holding backend's rule with subsets v1 and v2) and judges those routes: v2
// is defined there, v3 and web's v1 are not. Plain vet, which reads no cluster, says nothing.
func TestUnknownSubsetClusterRulesStandInCluster(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.WriteFile(filepath.Join(dir, "x.cue"), []byte(clusterSubsetsScenario), 0o644); err != nil {
		t.Fatal(err)
	}
	proc := func(args ...string) (*process, *bytes.Buffer, *bytes.Buffer) {
		p := testProcess()
		p.Targets["kube"] = func(ctx context.Context, sc *dsl.Scenario) (*schema.Target, error) {
			w := fakeWorld()
			w.Listed = map[string][]any{"DestinationRule lab": {map[string]any{
				"apiVersion": "networking.istio.io/v1", "kind": "DestinationRule",
				"metadata": map[string]any{"name": "backend-versions", "namespace": "lab"},
				"spec": map[string]any{"host": "backend.lab.svc.cluster.local", "subsets": []any{
					map[string]any{"name": "v1", "labels": map[string]any{"version": "v1"}},
					map[string]any{"name": "v2", "labels": map[string]any{"version": "v2"}},
				}},
			}}}
			return w.Target(), nil
		}
		var out, errOut bytes.Buffer
		p.Args, p.Stdout, p.Stderr, p.Cwd = args, &out, &errOut, dir
		return p, &out, &errOut
	}
	p, out, errOut := proc("vet", "x.cue")
	if code := Main(p); code != exitOK || strings.Contains(errOut.String(), "unknown-subset") {
		t.Errorf("vet: exit %d, want 0 and no unknown-subset\n%s%s", code, out, errOut)
	}
	p, out, errOut = proc("vet", "--server", "x.cue")
	code := Main(p)
	got := errOut.String()
	for _, want := range []string{
		`x.cue:12:160: warning[unknown-subset]: VirtualService routes to subset "v3" of host "backend.lab.svc.cluster.local", which no DestinationRule this scenario applies or the cluster holds (read by vet --server) for that host defines (its subsets: v1, v2)`,
		`x.cue:15:71: warning[unknown-subset]: VirtualService routes to subset "v1" of host "web", which no DestinationRule this scenario applies or the cluster holds (read by vet --server) for that host defines (there is no rule for the host)`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("vet --server: missing\n%s\nin (exit %d)\n%s%s", want, code, out, got)
		}
	}
	if strings.Contains(got, `subset "v2"`) || strings.Count(got, "unknown-subset") != 2 {
		t.Errorf("vet --server: want exactly the two warnings (v2 is the cluster rule's), got\n%s", got)
	}
}
