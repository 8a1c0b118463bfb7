package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/schema"
)

// refusingCluster is a stand-in cluster (driver/fakes) whose dry run refuses a
// VirtualService route's timeout under 1 ms, as the API server's CRD for Istio does
// ("spec.http[0].timeout: Invalid value: \"0s\": must be a valid duration greater than 1ms").
type refusingCluster struct{ schema.Cluster }

func (c refusingCluster) DryRun(ctx context.Context, objs []schema.Object, files []string, ns string) error {
	for _, o := range objs {
		spec, _ := o["spec"].(map[string]any)
		http, _ := spec["http"].([]any)
		for i, r := range http {
			route, _ := r.(map[string]any)
			if d, ok := route["timeout"].(string); ok && (d == "0s" || strings.HasSuffix(d, "µs")) {
				return fmt.Errorf("VirtualService.networking.istio.io %q is invalid: spec.http[%d].timeout: Invalid value: %q: must be a valid duration greater than 1ms", "details", i, d)
			}
		}
	}
	return c.Cluster.DryRun(ctx, objs, files, ns)
}

// TestVetServerEachCombinationStandInCluster: vet --server dry-ran the objects of a
// scenario's default combination only, so vet --server --sweep t=1m30s,0s said ok of a
// VirtualService whose timeout the API server refuses at 0s (seen on the sandbox; the run's
// apply of t=0s then erred). Each combination is dry-run, and a problem of some names them.
// The cluster is a stand-in (driver/fakes) that refuses a timeout under 1 ms as the CRD does.
func TestVetServerEachCombinationStandInCluster(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	const sc = `package lab

import "labrun.dev/schema"

s: schema.#Scenario & {
	target: "kube"
	namespaces: ["lab"]
	vars: t: "3s"
	lint: ignore: "unknown-host": "the Service exists already"
	steps: [
		{apply: objects: [{
			apiVersion: "networking.istio.io/v1", kind: "VirtualService", metadata: {name: "details", namespace: "lab"}
			spec: {hosts: ["details"], http: [{route: [{destination: host: "details"}], timeout: "${vars.t}"}]}
		}]},
	]
}
`
	if err := os.WriteFile(filepath.Join(dir, "x.cue"), []byte(sc), 0o644); err != nil {
		t.Fatal(err)
	}
	vet := func(args ...string) (int, string) {
		p := testProcess()
		p.Targets["kube"] = func(ctx context.Context, sc *dsl.Scenario) (*schema.Target, error) {
			tg := fakeWorld().Target()
			tg.Cluster = refusingCluster{tg.Cluster}
			return tg, nil
		}
		var out, errOut bytes.Buffer
		p.Args, p.Stdout, p.Stderr, p.Cwd = append([]string{"vet", "--server"}, args...), &out, &errOut, dir
		code := Main(p)
		return code, out.String() + errOut.String()
	}
	const refused = `x.cue:11:4: s: rejected by the cluster: VirtualService.networking.istio.io "details" is invalid: spec.http[0].timeout: Invalid value: "0s": must be a valid duration greater than 1ms`
	for _, c := range []struct {
		args []string
		code int
		want []string
	}{
		{[]string{"x.cue"}, exitOK, []string{"ok: 1 scenario"}},
		{[]string{"--var", "t=0s", "x.cue"}, exitInvalid, []string{refused + "\n"}},
		{[]string{"--sweep", "t=1m30s,0s", "x.cue"}, exitInvalid, []string{refused + " (with t=0s)\n"}},
		{[]string{"--sweep", "t=0s,0.5ms,2s", "x.cue"}, exitInvalid, []string{refused + " (with t=0s)\n", `"500µs": must be a valid duration greater than 1ms (with t=500µs)`}},
	} {
		code, got := vet(c.args...)
		if code != c.code {
			t.Errorf("vet --server %s: exit %d, want %d\n%s", strings.Join(c.args, " "), code, c.code, got)
		}
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("vet --server %s: missing\n%s\nin\n%s", strings.Join(c.args, " "), w, got)
			}
		}
	}
}
