package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/schema"
)

// newerIstioScenario applies a DestinationRule with FIELD below its connection pool's tcp and
// reads it back by a get's path. maxConnectionsPerEndpoint is no field of Istio 1.30.8's
// DestinationRule (the release vet knows): it stands for a field a newer Istio serves.
const newerIstioScenario = `package lab

import "labrun.dev/schema"

s: schema.#Scenario & {
	target: "kube"
	namespaces: ["lab"]
	steps: [
		{apply: objects: [{
			apiVersion: "networking.istio.io/v1", kind: "DestinationRule", metadata: {name: "web", namespace: "lab"}
			spec: {host: "web", trafficPolicy: connectionPool: tcp: {maxConnections: 1, FIELD: 2}}
		}]},
		{name: "n", get: {apiVersion: "networking.istio.io/v1", kind: "DestinationRule", name: "web", namespace: "lab", path: "spec.trafficPolicy.connectionPool.tcp.FIELD"}},
	]
}
`

// newerIstioProcess is testProcess whose kube target is a stand-in cluster (driver/fakes)
// serving a newer Istio's DestinationRule CRD: 1.30.8's fields the scenario writes, and
// maxConnectionsPerEndpoint.
func newerIstioProcess(dir string, args ...string) (*process, *bytes.Buffer, *bytes.Buffer) {
	p := testProcess()
	obj := func(props map[string]any) map[string]any {
		return map[string]any{"type": "object", "properties": props}
	}
	integer := map[string]any{"type": "integer"}
	p.Targets["kube"] = func(ctx context.Context, sc *dsl.Scenario) (*schema.Target, error) {
		w := fakeWorld()
		w.CRDSchemas = map[string]map[string]any{"DestinationRule": obj(map[string]any{"spec": obj(map[string]any{
			"host": map[string]any{"type": "string"},
			"trafficPolicy": obj(map[string]any{"connectionPool": obj(map[string]any{"tcp": obj(map[string]any{
				"maxConnections": integer, "maxConnectionsPerEndpoint": integer,
			})})}),
		})})}
		return w.Target(), nil
	}
	var out, errOut bytes.Buffer
	p.Args, p.Stdout, p.Stderr, p.Cwd = args, &out, &errOut, dir
	return p, &out, &errOut
}

// TestNewerIstioFieldStandInCluster: a field a newer Istio serves, which plain vet refuses by
// Istio 1.30.8's CRDs (saying how to check it against the cluster), is accepted by vet
// --server and by a run whose cluster's CRD (a stand-in's) serves it; a misspelling of it is
// refused by both, once, at its line and column, naming the cluster's CRD. The run's record
// replays (without a cluster: the run's judged the field).
func TestNewerIstioFieldStandInCluster(t *testing.T) {
	for _, c := range []struct {
		field string
		ok    bool
	}{{"maxConnectionsPerEndpoint", true}, {"maxConnectionsPerEndpont", false}} {
		t.Run(c.field, func(t *testing.T) {
			dir := t.TempDir()
			t.Chdir(dir)
			if err := os.WriteFile(filepath.Join(dir, "x.cue"), []byte(strings.ReplaceAll(newerIstioScenario, "FIELD", c.field)), 0o644); err != nil {
				t.Fatal(err)
			}
			// Offline: refused, saying how to check it against a newer cluster.
			p, _, errOut := newerIstioProcess(dir, "vet", "x.cue")
			if code := Main(p); code != exitInvalid || !strings.Contains(errOut.String(), "x.cue:11:80: ") ||
				!strings.Contains(errOut.String(), "(Istio 1.30.8's CRDs) has no field "+c.field) ||
				!strings.Contains(errOut.String(), "labrun vet --server checks it against the cluster's CRD") {
				t.Errorf("vet: exit %d\n%s", code, errOut)
			}
			// plan: refused offline alike, saying that plan --server plans by the cluster's CRD;
			// plan --server: the cluster's CRD judges, and the timeline is printed.
			p, _, errOut = newerIstioProcess(dir, "plan", "x.cue")
			if code := Main(p); code != exitInvalid || !strings.Contains(errOut.String(), "x.cue:11:80: ") ||
				!strings.Contains(errOut.String(), "(and plan --server plans by it)") {
				t.Errorf("plan: exit %d\n%s", code, errOut)
			}
			p, out, errOut := newerIstioProcess(dir, "plan", "--server", "x.cue")
			code := Main(p)
			if c.ok && (code != exitOK || !strings.Contains(out.String(), "get")) {
				t.Errorf("plan --server: exit %d\n%s%s", code, out, errOut)
			}
			if !c.ok && (code != exitInvalid || !strings.Contains(errOut.String(), "x.cue:11:80: s: DestinationRule spec.trafficPolicy.connectionPool.tcp (the cluster's CRD of DestinationRule) has no field maxConnectionsPerEndpont")) {
				t.Errorf("plan --server: exit %d, want 2 and the cluster CRD's refusal\n%s%s", code, out, errOut)
			}
			// vet --server: the cluster's CRD judges.
			p, out, errOut = newerIstioProcess(dir, "vet", "--server", "x.cue")
			code = Main(p)
			if c.ok && (code != exitOK || !strings.HasPrefix(out.String(), "ok")) {
				t.Errorf("vet --server: exit %d\n%s%s", code, out, errOut)
			}
			if !c.ok {
				lines := regexp.MustCompile(`(?m)^x\.cue:\d+:\d+: .*$`).FindAllString(errOut.String(), -1)
				want := []string{
					"x.cue:11:80: s: DestinationRule spec.trafficPolicy.connectionPool.tcp (the cluster's CRD of DestinationRule) has no field maxConnectionsPerEndpont (did you mean maxConnectionsPerEndpoint?)",
					`x.cue:13:115: s: by the cluster's CRD: path "spec.trafficPolicy.connectionPool.tcp.maxConnectionsPerEndpont": DestinationRule spec.trafficPolicy.connectionPool.tcp has no field maxConnectionsPerEndpont (did you mean maxConnectionsPerEndpoint?)`,
				}
				if code != exitInvalid || strings.Join(lines, "\n") != strings.Join(want, "\n") {
					t.Errorf("vet --server: exit %d, lines\n%s\nwant\n%s\nall:\n%s", code, strings.Join(lines, "\n"), strings.Join(want, "\n"), errOut)
				}
			}
			// A run on that cluster: its preflight judges the same.
			p, out, errOut = newerIstioProcess(dir, "run", "--report-dir", "", "x.cue")
			code = Main(p)
			all := out.String() + errOut.String()
			if c.ok && code != exitOK {
				t.Errorf("run: exit %d\n%s", code, all)
			}
			if c.ok {
				// Its record replays: the run's cluster judged the field.
				p, out, errOut = newerIstioProcess(dir, "run", "--report-dir", "reports", "x.cue")
				if code := Main(p); code != exitOK {
					t.Fatalf("run: exit %d\n%s%s", code, out, errOut)
				}
				recs, _ := filepath.Glob(filepath.Join(dir, "reports", "*.json"))
				if len(recs) != 1 {
					t.Fatalf("records %v", recs)
				}
				p, out, errOut = newerIstioProcess(dir, "replay", recs[0])
				if code := Main(p); code != exitOK {
					t.Errorf("replay: exit %d\n%s%s", code, out, errOut)
				}
			}
			if !c.ok && (code != exitInvalid || strings.Count(all, "x.cue:11:80: DestinationRule spec.trafficPolicy.connectionPool.tcp (the cluster's CRD of DestinationRule) has no field maxConnectionsPerEndpont") != 1) {
				t.Errorf("run: exit %d, want 2 and the problem once:\n%s", code, all)
			}
		})
	}
}
