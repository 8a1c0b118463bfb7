package kube

// End-to-end tests of config's until, names and durations, and of a load from several pods (see
// kube_e2e_test.go for the sandbox). The config reads are the real istiod's answers through the
// Envoy admin stand-in's config_dump; the loads are replays of recorded fortio runs by the exec
// stand-in (driver/fortio/testdata), one per pod: no data plane is involved.

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"labrun.dev/labrun/sandbox"
	"labrun.dev/labrun/schema"
)

// configRuntime is what a config step's Run sees in these tests: the kube target, the recorded
// value, and an until judged by a Go predicate over it (the expression engine is not under test
// here; the polling against istiod is).
type configRuntime struct {
	schema.Runtime // nil: the methods Run does not call panic
	tgt            *schema.Target
	holds          func(v any) bool
	mu             sync.Mutex
	value          any
	judged         int
	warned         int
	artifacts      []string
}

func (r *configRuntime) Target() *schema.Target     { return r.tgt }
func (r *configRuntime) Namespace(ns string) string { return ns }
func (r *configRuntime) Record(v any)               { r.mu.Lock(); r.value = v; r.mu.Unlock() }
func (r *configRuntime) Warn(string)                { r.mu.Lock(); r.warned++; r.mu.Unlock() }
func (r *configRuntime) Artifact(name string, _ []byte) {
	r.artifacts = append(r.artifacts, name)
}

func (r *configRuntime) Sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-time.After(d):
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

func (r *configRuntime) Judge() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.judged++
	if r.holds(r.value) {
		return nil
	}
	return errors.New("until is false")
}

// countingStats counts a driver's config reads and keeps their errors.
type countingStats struct {
	schema.StatsReader
	mu    sync.Mutex
	reads int
	errs  []string
}

func (c *countingStats) Config(ctx context.Context, req schema.Config) (schema.ConfigResult, error) {
	res, err := c.StatsReader.Config(ctx, req)
	c.mu.Lock()
	c.reads++
	if err != nil {
		c.errs = append(c.errs, err.Error())
	}
	c.mu.Unlock()
	return res, err
}

// A config step's until reads the dump again until istiod has pushed a cluster for a Service
// applied while it polls; the reads before say which cluster is missing and the closest names.
func TestE2EConfigUntilIstiodPush(t *testing.T) {
	l := newLab(t, "e2e-cfg-until")
	l.apply([]schema.Object{deployment("client", 1, "app", "istio-proxy")}, "client")
	domain := l.tgt.Values["clusterDomain"].(string)
	late := "outbound|80||late." + l.ns + ".svc." + domain
	envoyRef := &schema.PodRef{Selector: "app=client", Namespace: l.ns}

	// Names, before the Service exists: the cluster is absent, as a Sidecar-scope check asks.
	names, err := l.tgt.Stats.Config(l.ctx, schema.Config{Envoy: envoyRef, Names: "clusters"})
	if err != nil {
		t.Fatal(err)
	}
	list, _ := names.Value.([]any)
	if len(list) == 0 || slices.Contains(list, any(late)) || !slices.Contains(list, any("BlackHoleCluster")) {
		t.Errorf("cluster names before the Service: %v", list)
	}

	stats := &countingStats{StatsReader: l.tgt.Stats}
	tgt := *l.tgt
	tgt.Stats = stats
	rt := &configRuntime{tgt: &tgt, holds: func(v any) bool { return v == 10.0 }}
	step := &schema.Config{Envoy: envoyRef, Cluster: late, Path: "connect_timeout", Durations: schema.DurationsSeconds,
		Until: "late == 10", Interval: schema.Duration(500 * time.Millisecond)}
	svc := schema.Object{"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"name": "late"},
		"spec": map[string]any{"selector": map[string]any{"app": "late"},
			"ports": []any{map[string]any{"name": "http", "port": 80, "targetPort": 8080}}}}
	applied := make(chan error, 1)
	time.AfterFunc(2*time.Second, func() {
		_, err := l.tgt.Cluster.Apply(l.ctx, []schema.Object{svc}, nil, l.ns)
		applied <- err
	})
	ctx, cancel := context.WithTimeout(l.ctx, 90*time.Second)
	defer cancel()
	if err := step.Run(ctx, rt); err != nil {
		t.Fatalf("config until: %v (reads %d, errors %q)", err, stats.reads, stats.errs)
	}
	if err := <-applied; err != nil {
		t.Fatal(err)
	}
	if rt.value != 10.0 {
		t.Errorf("recorded %#v, want connect_timeout 10 (seconds)", rt.value)
	}
	if stats.reads < 2 || len(stats.errs) == 0 {
		t.Fatalf("%d reads, errors %q: the first read should have come before istiod's push", stats.reads, stats.errs)
	}
	t.Logf("%d reads before istiod pushed %s; the first said: %s", stats.reads, late, stats.errs[0])
	if first := stats.errs[0]; !strings.Contains(first, `no cluster "`+late+`" in the config dump (`) || !strings.Contains(first, "did you mean") {
		t.Errorf("missing cluster: %s", first)
	}
	if len(rt.artifacts) == 0 {
		t.Error("no config_dump artifact of the last read")
	}

	// The same until bounded by a short timeout: the error says how often it read and why.
	rt = &configRuntime{tgt: l.tgt, holds: func(any) bool { return false }}
	ctx, cancel = context.WithTimeout(l.ctx, 3*time.Second)
	defer cancel()
	err = step.Run(ctx, rt)
	if err == nil || !strings.Contains(err.Error(), "config until late == 10: context deadline exceeded after") || !strings.Contains(err.Error(), "last: until is false") {
		t.Errorf("until that never holds: %v", err)
	}

	// Without durations: seconds, Envoy's text.
	res, err := l.tgt.Stats.Config(l.ctx, schema.Config{Envoy: envoyRef, Cluster: late, Path: "connect_timeout"})
	if err != nil || res.Value != "10s" {
		t.Errorf("connect_timeout as text: %#v, %v", res.Value, err)
	}
	// A listener that is not there is named with the listeners that are.
	_, err = l.tgt.Stats.Config(l.ctx, schema.Config{Envoy: envoyRef, Listener: "0.0.0.0_81"})
	if err == nil || !strings.Contains(err.Error(), `no listener "0.0.0.0_81" in the config dump (`) || !strings.Contains(err.Error(), "listeners; did you mean") {
		t.Errorf("missing listener: %v", err)
	}
}

// A load from three pods: each pod's fortio replays its own recorded run (exec stand-in), and
// the driver merges them.
func TestE2ELoadFromPodsFortioReplays(t *testing.T) {
	l := newLab(t, "e2e-load-pods")
	l.apply([]schema.Object{deployment("client", 3, "istio-proxy", "fortio")}, "client")
	pods := l.readyPods("client")
	if len(pods) != 3 {
		t.Fatalf("ready pods %v", pods)
	}
	recorded := []string{"mixed-503.json", "duration-qps.json", "lowered-connections.json"} // 31×200 + 9×503, 40×200, 10×200
	for i, pod := range pods {
		b, err := os.ReadFile(filepath.Join("..", "fortio", "testdata", recorded[i]))
		if err != nil {
			t.Fatal(err)
		}
		replay, err := sandbox.FortioReplay(b, nil)
		if err != nil {
			t.Fatal(err)
		}
		l.sb.EnvoyStandIn(t, l.ns, pod, replay.Fixture())
	}
	from := &schema.LoadFrom{PodRef: schema.PodRef{Selector: "app=client", Namespace: l.ns}, Pods: 3}
	req := schema.Load{URL: "http://127.0.0.1:9/echo", From: from, Connections: 2, Requests: 40}.WithDefaults()
	res, err := l.tgt.Load.Load(l.ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 90 || res.Codes["200"] != 81 || res.Codes["503"] != 9 || res.Errors != 9 {
		t.Errorf("merged: requests %v codes %v errors %v", res.Requests, res.Codes, res.Errors)
	}
	if len(res.Pods) != 3 || res.Pods[0].Pod != pods[0] || res.Pods[0].Codes["503"] != 9 || res.Pods[1].Requests != 40 || res.Pods[2].Requests != 10 {
		t.Errorf("per pod: %+v", res.Pods)
	}
	if res.Min != min(res.Pods[0].Min, res.Pods[1].Min, res.Pods[2].Min) || res.Max != res.Pods[0].Max || res.P50 >= res.Pods[0].P50 {
		t.Errorf("latencies: merged min %v max %v p50 %v, pods %+v", res.Min, res.Max, res.P50, res.Pods)
	}
	if len(res.Artifacts) != 3 || res.Artifacts[0].Name != "fortio-"+pods[0]+".json" || !strings.Contains(string(res.Raw), `"RunType"`) {
		t.Errorf("artifacts %d (%v), raw %.80s", len(res.Artifacts), res.Artifacts, res.Raw)
	}

	// More pods than are ready: refused before any fortio runs.
	from.Pods = 4
	_, err = l.tgt.Load.Load(l.ctx, req)
	if err == nil || !strings.Contains(err.Error(), `from.pods is 4, and 3 of the 3 pods in e2e-load-pods matching "app=client" are ready`) {
		t.Errorf("4 of 3 pods: %v", err)
	}
}
