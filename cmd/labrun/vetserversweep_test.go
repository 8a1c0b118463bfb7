package main

import (
	"bytes"
	"context"
	"fmt"
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
	writeFile(t, filepath.Join(dir, "x.cue"), sc)
	vet := func(args ...string) (int, string) {
		return vetServerOn(dir, func(c schema.Cluster) schema.Cluster { return refusingCluster{c} }, args...)
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

// vetServerOn runs vet --server args in dir against the stand-in cluster (driver/fakes) that
// wrap makes of the fake world's, and says its exit code and output.
func vetServerOn(dir string, wrap func(schema.Cluster) schema.Cluster, args ...string) (int, string) {
	p := testProcess()
	p.Targets["kube"] = func(ctx context.Context, sc *dsl.Scenario) (*schema.Target, error) {
		tg := fakeWorld().Target()
		tg.Cluster = wrap(tg.Cluster)
		return tg, nil
	}
	var out, errOut bytes.Buffer
	p.Args, p.Stdout, p.Stderr, p.Cwd = append([]string{"vet", "--server"}, args...), &out, &errOut, dir
	code := Main(p)
	return code, out.String() + errOut.String()
}

// countingCluster is a stand-in cluster (driver/fakes) that counts its dry runs.
type countingCluster struct {
	schema.Cluster
	n *int
}

func (c countingCluster) DryRun(ctx context.Context, objs []schema.Object, files []string, ns string) error {
	*c.n++
	return c.Cluster.DryRun(ctx, objs, files, ns)
}

// TestVetServerAsksOncePerObjectsStandInCluster: vet --server dry-ran every combination of a
// sweep, also those whose vars change nothing it sends (a command's argument, a claim): a
// sweep of 3 × 4 asked the cluster 12 times the same. It asks once per distinct objects;
// a var an object reads (CUE's \(vars.t) or ${vars.t}) still makes each combination asked.
// The cluster is a stand-in (driver/fakes) that counts its dry runs.
func TestVetServerAsksOncePerObjectsStandInCluster(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	const sc = `package lab

import "labrun.dev/schema"

s: schema.#Scenario & {
	target: "kube"
	namespaces: ["lab"]
	vars: {t: "3s", n: 1, m: 1, w: "5s"}
	lint: ignore: "unknown-host": "the Service exists already"
	steps: [
		{apply: objects: [{
			apiVersion: "networking.istio.io/v1", kind: "VirtualService", metadata: {name: "details", namespace: "lab"}
			spec: {hosts: ["details"], http: [{route: [{destination: host: "details"}], timeout: "${vars.t}"}]}
		}]},
		{apply: objects: [{apiVersion: "v1", kind: "ConfigMap", metadata: {name: "w", namespace: "lab"}, data: w: "\(vars.w)"}]},
		{name: "p", exec: argv: ["echo", "${vars.n}", "${vars.m}"]},
	]
	expect: ["p.exit == 0"]
}
`
	writeFile(t, filepath.Join(dir, "x.cue"), sc)
	for _, c := range []struct {
		sweep []string
		asked int // dry runs: 2 apply steps per distinct combination
	}{
		{[]string{"n=1,2,3", "m=1,2,3,4"}, 2},
		{[]string{"t=1s,2s,3s"}, 6},
		{[]string{"w=1s,2s", "n=1,2"}, 4},
	} {
		asked := 0
		var args []string
		for _, s := range c.sweep {
			args = append(args, "--sweep", s)
		}
		if code, out := vetServerOn(dir, func(cl schema.Cluster) schema.Cluster { return countingCluster{cl, &asked} }, append(args, "x.cue")...); code != exitOK {
			t.Fatalf("vet --server %s: exit %d\n%s", strings.Join(args, " "), code, out)
		}
		if asked != c.asked {
			t.Errorf("%s: the cluster was asked %d dry runs, want %d", strings.Join(args, " "), asked, c.asked)
		}
	}
}

// TestVetServerSaysEachWarningOnceStandInCluster: vet --server loads the scenarios twice (the
// second time with the cluster's DestinationRules, for unknown-subset), and printed every
// warning of both loads: each twice (seen on the sandbox with an AuthorizationPolicy whose
// selector matched no pod). Each is said once. The cluster is a stand-in (driver/fakes).
func TestVetServerSaysEachWarningOnceStandInCluster(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	const sc = `package lab

import "labrun.dev/schema"

s: schema.#Scenario & {
	target: "kube"
	namespaces: ["lab"]
	steps: [
		{apply: objects: [{
			apiVersion: "networking.istio.io/v1", kind: "DestinationRule", metadata: {name: "details", namespace: "lab"}
			spec: {host: "detials"}
		}, {apiVersion: "v1", kind: "Service", metadata: {name: "details", namespace: "lab"}, spec: ports: [{name: "http", port: 80}]}]},
	]
}
`
	writeFile(t, filepath.Join(dir, "x.cue"), sc)
	code, out := vetServerOn(dir, func(c schema.Cluster) schema.Cluster { return c }, "x.cue")
	if code != exitOK || strings.Count(out, "warning[unknown-host]") != 1 {
		t.Errorf("vet --server exited %d and said the warning %d times, want 0 and once:\n%s", code, strings.Count(out, "warning[unknown-host]"), out)
	}
}
