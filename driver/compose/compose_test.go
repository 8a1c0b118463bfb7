package compose_test

import (
	"context"
	"maps"
	"testing"
	"time"

	"labrun.dev/labrun/driver/compose"
	"labrun.dev/labrun/driver/fakes"
	"labrun.dev/labrun/schema"
)

// side answers every driver call with its own name, so a test sees where a request went.
type side struct {
	name string
	got  *[]string
}

func (s side) Exec(context.Context, schema.Exec) (schema.ExecResult, error) {
	*s.got = append(*s.got, s.name)
	return schema.ExecResult{}, nil
}

func (s side) Load(context.Context, schema.Load) (schema.LoadResponse, error) {
	*s.got = append(*s.got, s.name)
	return schema.LoadResponse{}, nil
}

func (s side) Snapshot(context.Context, schema.Snapshot) (schema.StatsSnapshot, error) {
	*s.got = append(*s.got, s.name)
	return schema.StatsSnapshot{}, nil
}

func (s side) Config(context.Context, schema.Config) (schema.ConfigResult, error) {
	*s.got = append(*s.got, s.name)
	return schema.ConfigResult{}, nil
}

func (s side) Logs(context.Context, schema.Logs, schema.LogSince, func(schema.LogLine)) error {
	*s.got = append(*s.got, s.name)
	return nil
}

// TestWithHostDispatch: requests that name a pod or a sidecar go to the cluster, the others to
// this machine; the capabilities are the cluster's plus host and processes; Close closes
// this machine's side first.
func TestWithHostDispatch(t *testing.T) {
	var got []string
	k, h := side{"kube", &got}, side{"host", &got}
	cluster := &schema.Target{Name: "kube", Caps: schema.Caps{schema.CapCluster: true, schema.CapPods: true},
		Exec: k, Load: k, Stats: k, Logs: k, Close: func(context.Context) error { got = append(got, "close kube"); return nil }}
	host := &schema.Target{Name: "local", Exec: h, Load: h, Stats: h, Logs: h,
		Close: func(context.Context) error { got = append(got, "close host"); return nil }}
	tg := compose.WithHost(cluster, host)
	ctx := context.Background()
	_, _ = tg.Exec.Exec(ctx, schema.Exec{Argv: []string{"kubectl"}})
	_, _ = tg.Exec.Exec(ctx, schema.Exec{Argv: []string{"curl"}, Pod: "client"})
	_, _ = tg.Exec.Exec(ctx, schema.Exec{Argv: []string{"curl"}, Selector: "app=client"})
	_, _ = tg.Load.Load(ctx, schema.Load{URL: "http://127.0.0.1:1"})
	_, _ = tg.Load.Load(ctx, schema.Load{URL: "http://backend", From: &schema.LoadFrom{PodRef: schema.PodRef{Pod: "client"}}})
	_, _ = tg.Stats.Snapshot(ctx, schema.Snapshot{Admin: "http://127.0.0.1:15000"})
	_, _ = tg.Stats.Snapshot(ctx, schema.Snapshot{Envoy: &schema.PodRef{Pod: "client"}})
	_, _ = tg.Stats.Config(ctx, schema.Config{Admin: "http://127.0.0.1:15000"})
	_, _ = tg.Stats.Config(ctx, schema.Config{Envoy: &schema.PodRef{Pod: "client"}})
	_, _ = schema.ReadLogs(ctx, tg.Logs, schema.Logs{Process: "p"}, time.Time{})
	_, _ = schema.ReadLogs(ctx, tg.Logs, schema.Logs{File: "f.log"}, time.Time{})
	_, _ = schema.ReadLogs(ctx, tg.Logs, schema.Logs{PodRef: schema.PodRef{Pod: "client"}}, time.Time{})
	_ = tg.Close(ctx)
	want := []string{"host", "kube", "kube", "host", "kube", "host", "kube", "host", "kube", "host", "host", "kube", "close host", "close kube"}
	if len(got) != len(want) {
		t.Fatalf("calls %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("calls %v, want %v", got, want)
		}
	}
	for _, c := range []schema.Capability{schema.CapCluster, schema.CapPods, schema.CapHost, schema.CapProcesses} {
		if !tg.Caps[c] {
			t.Errorf("composed target lacks %s", c)
		}
	}
	if tg.Caps[schema.CapBackends] || cluster.Caps[schema.CapHost] {
		t.Errorf("caps leaked: composed %v, cluster %v", tg.Caps, cluster.Caps)
	}
	if tg.Name != "kube" {
		t.Errorf("name %q", tg.Name)
	}
}

// TestWithHostIsTheKubeTarget: the kube target as cmd/labrun builds it (the cluster's drivers,
// as driver/kube gives them, beside this machine's, as driver/local gives them) has exactly the
// capabilities and drivers the schema declares of it, which vet checks scenarios against.
func TestWithHostIsTheKubeTarget(t *testing.T) {
	w := &fakes.World{}
	want, _ := schema.BuiltinTarget("kube", nil)
	clusterCaps := maps.Clone(want.Caps)
	delete(clusterCaps, schema.CapHost)
	delete(clusterCaps, schema.CapProcesses)
	cluster := &schema.Target{Name: "kube", Caps: clusterCaps, Cluster: w, Exec: w, Load: w, Stats: w, Logs: w, DNS: w}
	host := &schema.Target{Name: "local", Exec: w, Load: w, Stats: w, Logs: w, Processes: w}
	tg := compose.WithHost(cluster, host)
	if !maps.Equal(tg.Drivers(), want.Drivers) || !maps.Equal(tg.Caps, want.Caps) {
		t.Errorf("composed: drivers %v caps %v, the schema declares drivers %v caps %v", tg.Drivers(), tg.Caps, want.Drivers, want.Caps)
	}
}
