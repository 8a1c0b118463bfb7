package envoy

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestDumpNames(t *testing.T) {
	dump := readFixture(t, "config_dump.json")
	tests := []struct {
		kind string
		want []string
	}{
		{"clusters", []string{"prometheus_stats", "xds-grpc", connLab, serviceA, "BlackHoleCluster", "outbound|9999||blackhole.conn-lab.svc.cluster.local"}},
		{"routes", []string{"InboundPassthroughCluster", "8080"}},
	}
	for _, tt := range tests {
		got, err := DumpNames(dump, tt.kind)
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: %q, %v; want %q", tt.kind, got, err, tt.want)
		}
	}
	ls, err := DumpNames(dump, "listeners")
	if err != nil || len(ls) != 3 || ls[0] != "0.0.0.0_8080" || ls[1] != "virtualOutbound" {
		t.Errorf("listeners: %q %v", ls, err)
	}
	// The ?resource= form and the empty dump Envoy prints when a filter matches nothing.
	if got, err := DumpNames(readFixture(t, "config_dump_resource.json"), "clusters"); err != nil || !reflect.DeepEqual(got, []string{connLab}) {
		t.Errorf("resource form: %q %v", got, err)
	}
	// A proxy that holds nothing from xDS has not been configured: its list says nothing of
	// what istiod sends, and a claim that a name is absent from it would hold whatever istiod
	// did. The names are kept (the step records them), with the error.
	for _, c := range []struct{ name, dump, want string }{
		{"empty dump", "{}\n", "no resource from xDS (no cluster at all)"},
		{"static only", `{"configs":[{"@type":"type.googleapis.com/envoy.admin.v3.ClustersConfigDump","static_clusters":[{"cluster":{"name":"prometheus_stats"}}],"dynamic_active_clusters":[]}]}`, "no resource from xDS (1 cluster, static)"},
	} {
		got, err := DumpNames([]byte(c.dump), "clusters")
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "istiod has not pushed") || got == nil {
			t.Errorf("%s: %#v %v", c.name, got, err)
		}
	}
	// One dynamic resource of another kind is enough: the proxy has been configured, and has
	// no dynamic cluster (a Sidecar may leave it none).
	dyn := `{"configs":[{"@type":"type.googleapis.com/envoy.admin.v3.ClustersConfigDump","static_clusters":[{"cluster":{"name":"prometheus_stats"}}]},{"@type":"type.googleapis.com/envoy.admin.v3.ListenersConfigDump","dynamic_listeners":[{"name":"virtualOutbound"}]}]}`
	if got, err := DumpNames([]byte(dyn), "clusters"); err != nil || !reflect.DeepEqual(got, []string{"prometheus_stats"}) {
		t.Errorf("configured proxy without dynamic clusters: %q %v", got, err)
	}
	if _, err := DumpNames(dump, "secrets"); err == nil || !strings.Contains(err.Error(), "clusters, listeners or routes") {
		t.Errorf("unknown kind: %v", err)
	}
	if _, err := DumpNames([]byte(`{"stats":[]}`), "clusters"); err == nil || !strings.Contains(err.Error(), "/config_dump") {
		t.Errorf("not a dump: %v", err)
	}
}

// A proxy that istiod has not pushed yet: the error says so instead of listing static names.
func TestDumpNotPushed(t *testing.T) {
	staticOnly := []byte(`{"configs":[{"@type":"type.googleapis.com/envoy.admin.v3.ClustersConfigDump",
		"static_clusters":[{"cluster":{"name":"prometheus_stats"}},{"cluster":{"name":"xds-grpc"}}]}]}`)
	tests := []struct {
		name string
		dump []byte
		want string
	}{
		{"empty object", []byte(`{}`), `no cluster "outbound|80||x" in the config dump: it holds no clusters at all (has istiod pushed this proxy its config yet?)`},
		{"empty configs", []byte(`{"configs":[]}`), `it holds no clusters at all`},
		{"static only", staticOnly, `no cluster "outbound|80||x" in the config dump (2 clusters, all static: istiod has not pushed this proxy its config yet)`},
	}
	for _, tt := range tests {
		_, err := DumpCluster(tt.dump, "outbound|80||x")
		if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
	_, err := DumpListener([]byte(`{}`), "0.0.0.0_80")
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), `no listener "0.0.0.0_80" in the config dump: it holds no listeners`) {
		t.Errorf("listener: %v", err)
	}
	_, err = DumpRoute(readFixture(t, "config_dump.json"), "9090")
	if !strings.Contains(err.Error(), `no route config "9090" in the config dump (2 route configs; did you mean "8080"`) {
		t.Errorf("route: %v", err)
	}
}

func TestDurationsAsSeconds(t *testing.T) {
	in := map[string]any{
		"connect_timeout": "0.500s",
		"idle":            "3600s",
		"neg":             "-1.5s",
		"nanos":           "0.000000001s",
		"name":            "outbound|80||x",
		"not_proto":       "500ms",
		"ten_decimals":    "0.0000000001s",
		"bare_s":          "s",
		"n":               3.0,
		"list":            []any{"1s", map[string]any{"t": "2.250s"}},
	}
	want := map[string]any{
		"connect_timeout": 0.5,
		"idle":            3600.0,
		"neg":             -1.5,
		"nanos":           1e-9,
		"name":            "outbound|80||x",
		"not_proto":       "500ms",
		"ten_decimals":    "0.0000000001s",
		"bare_s":          "s",
		"n":               3.0,
		"list":            []any{1.0, map[string]any{"t": 2.25}},
	}
	if got := DurationsAsSeconds(in); !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v\nwant %#v", got, want)
	}
	if in["connect_timeout"] != "0.500s" {
		t.Error("the input was changed")
	}
	if got := DurationsAsSeconds("0.500s"); got != 0.5 {
		t.Errorf("scalar: %v", got)
	}
}
