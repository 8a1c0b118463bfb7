package envoy

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestDumpCluster(t *testing.T) {
	dump := readFixture(t, "config_dump.json")
	c, err := DumpCluster(dump, connLab)
	if err != nil {
		t.Fatal(err)
	}
	const hpo = `typed_extension_protocol_options."envoy.extensions.upstreams.http.v3.HttpProtocolOptions"`
	tests := []struct {
		path string
		want any
	}{
		{"name", connLab},
		{"type", "EDS"},
		{"connect_timeout", "10s"},
		{"circuit_breakers.thresholds.0.max_connections", 1.0},
		{"circuit_breakers.thresholds[0].max_pending_requests", 1.0},
		{"circuit_breakers.thresholds.0.max_requests", 4294967295.0},
		{"circuit_breakers.thresholds[0].max_retries", 4294967295.0},
		{"circuit_breakers.thresholds.0.track_remaining", true},
		{hpo + ".common_http_protocol_options.idle_timeout", "3600s"},
		{hpo + ".common_http_protocol_options.max_requests_per_connection", 1.0},
		{hpo + `["@type"]`, "type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions"},
		// Quotes are optional: dotted keys are joined back.
		{"typed_extension_protocol_options.envoy.extensions.upstreams.http.v3.HttpProtocolOptions.common_http_protocol_options.idle_timeout", "3600s"},
		{"outlier_detection.consecutive_5xx", 5.0},
		{"upstream_connection_options.tcp_keepalive.keepalive_time", 300.0},
		{"transport_socket_matches.1.name", "tlsMode-disabled"},
		{"common_lb_config", map[string]any{}},
	}
	for _, tt := range tests {
		got, err := Query(c, tt.path)
		if err != nil {
			t.Errorf("%s: %v", tt.path, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s = %#v, want %#v", tt.path, got, tt.want)
		}
	}

	// (the warming one is not found: TestDumpClusterWarming)
	for _, name := range []string{"xds-grpc", "prometheus_stats", "BlackHoleCluster"} {
		c, err := DumpCluster(dump, name)
		if err != nil || c["name"] != name {
			t.Errorf("%s: %v %v", name, c["name"], err)
		}
	}
	c, err = DumpCluster(readFixture(t, "config_dump_resource.json"), connLab)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := Query(c, "circuit_breakers.thresholds.0.max_connections"); err != nil || v != 1.0 {
		t.Errorf("resource form: %v %v", v, err)
	}
}

func TestDumpNotFound(t *testing.T) {
	dump := readFixture(t, "config_dump.json")
	_, err := DumpCluster(dump, "outbound|8080||backend")
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("err %v", err)
	}
	msg := err.Error()
	if !strings.Contains(msg, `no cluster "outbound|8080||backend" in the config dump (6 clusters; did you mean "`+connLab+`", "`+serviceA+`"`) {
		t.Errorf("message: %s", msg)
	}
	if _, err := DumpListener(dump, "0.0.0.0_8081"); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), `"0.0.0.0_8080"`) {
		t.Errorf("listener: %v", err)
	}
	if _, err := DumpRoute(dump, "9090"); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), `"8080"`) {
		t.Errorf("route: %v", err)
	}
	if _, err := DumpEndpoints(dump, serviceA); !errors.Is(err, ErrNotFound) {
		t.Errorf("endpoints: %v", err)
	}
	for _, bad := range []string{`{`, `[]`, `{"configs":{}}`, `{"stats":[]}`} {
		if _, err := DumpCluster([]byte(bad), "x"); err == nil || errors.Is(err, ErrNotFound) {
			t.Errorf("%s: %v", bad, err)
		}
	}
	if _, err := DumpCluster([]byte(`{"configs":[]}`), "x"); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "no clusters") {
		t.Errorf("empty dump: %v", err)
	}
}

func TestDumpListenerRouteEndpoints(t *testing.T) {
	dump := readFixture(t, "config_dump.json")
	tests := []struct {
		find       func([]byte, string) (map[string]any, error)
		name, path string
		want       any
	}{
		{DumpListener, "0.0.0.0_8080", "address.socket_address.port_value", 8080.0},
		{DumpListener, "0.0.0.0_8080", "filter_chains.0.filters.0.typed_config.rds.route_config_name", "8080"},
		{DumpListener, "virtualOutbound", "use_original_dst", true},
		{DumpRoute, "8080", "virtual_hosts.0.routes.0.route.cluster", connLab},
		{DumpRoute, "8080", "virtual_hosts.0.routes.0.route.retry_policy.num_retries", 2.0},
		{DumpRoute, "InboundPassthroughCluster", "name", "InboundPassthroughCluster"},
		{DumpEndpoints, connLab, "endpoints.0.lb_endpoints.1.endpoint.address.socket_address.address", "10.244.1.12"},
	}
	for _, tt := range tests {
		r, err := tt.find(dump, tt.name)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		got, err := Query(r, tt.path)
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s %s = %#v, %v; want %#v", tt.name, tt.path, got, err, tt.want)
		}
	}
}

// TestDumpListenerNotInEffect: a listener that is only warming (Envoy waits for its routes or
// secrets) or only draining (istiod no longer sends it) is not the listener in effect: it is
// not found, the error saying which, as a warming cluster is. It was read as the listener's
// config, so "the listener has the filter" held before Envoy used it, or after it removed it.
// Where an update is under way (active and draining, or active and warming), the active one is
// read.
func TestDumpListenerNotInEffect(t *testing.T) {
	listener := func(states ...string) []byte {
		var parts []string
		for _, st := range states {
			port := map[string]int{"active_state": 1, "warming_state": 2, "draining_state": 3}[st]
			parts = append(parts, fmt.Sprintf(`%q: {"listener": {"name": "0.0.0.0_9999", "address": {"socket_address": {"port_value": %d}}}}`, st, port))
		}
		return []byte(`{"configs": [{"@type": "type.googleapis.com/envoy.admin.v3.ListenersConfigDump", "dynamic_listeners": [{"name": "0.0.0.0_9999", ` +
			strings.Join(parts, ", ") + `}]}]}`)
	}
	for _, c := range []struct {
		states  []string
		want    float64 // the port of the state read; 0: none
		wantErr string
	}{
		{[]string{"warming_state"}, 0, `listener "0.0.0.0_9999" is warming in the config dump (warming_state), not active`},
		{[]string{"draining_state"}, 0, `listener "0.0.0.0_9999" is draining in the config dump (draining_state), not active`},
		{[]string{"active_state", "warming_state"}, 1, ""},
		{[]string{"active_state", "draining_state"}, 1, ""},
		{[]string{"active_state"}, 1, ""},
	} {
		r, err := DumpListener(listener(c.states...), "0.0.0.0_9999")
		if c.wantErr != "" {
			if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%v: %v, %v; want not found with %q", c.states, r, err, c.wantErr)
			}
			continue
		}
		got, qerr := Query(r, "address.socket_address.port_value")
		if err != nil || qerr != nil || got != c.want {
			t.Errorf("%v: port %v (%v, %v), want %v", c.states, got, err, qerr, c.want)
		}
	}
}

func TestQuery(t *testing.T) {
	var v any
	if err := json.Unmarshal([]byte(`{
		"a": {"b.c": {"d": [10, {"e": "x"}]}, "b": {"z": 1}},
		"list": [1, 2],
		"s": "str",
		"0": "zero-key",
		"q\"k": 7
	}`), &v); err != nil {
		t.Fatal(err)
	}
	ok := []struct {
		path string
		want any
	}{
		{"", v},
		{`a."b.c".d.0`, 10.0},
		{`a."b.c".d[1].e`, "x"},
		{`a.b.c.d.1.e`, "x"}, // "b" leads nowhere, "b.c" does
		{`a.b.z`, 1.0},
		{`list[1]`, 2.0},
		{`list.0`, 1.0},
		{`0`, "zero-key"},
		{`"q\"k"`, 7.0},
		{`a["b.c"].d.0`, 10.0},
	}
	for _, tt := range ok {
		got, err := Query(v, tt.path)
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Query(%s) = %#v, %v; want %#v", tt.path, got, err, tt.want)
		}
	}
	bad := []struct {
		path    string
		wantErr []string
		missing bool
	}{
		{"a.x", []string{`a has no key "x"`, "keys: b, b.c"}, true},
		{"nope", []string{`the top level has no key "nope"`, "keys: 0, a, list, q\"k, s"}, true},
		{"list.2", []string{"list has 2 items, no index 2"}, true},
		{"list.x", []string{`list is a list of 2, "x" is not an index`}, true},
		{"s.x", []string{`s is the string "str", not a map or list`}, true},
		{"a..b", []string{"bad path", "empty segment"}, false},
		{"a.", []string{"bad path", "ends with '.'"}, false},
		{`a."b`, []string{"bad path", "unterminated quote"}, false},
		{`a[0`, []string{"bad path", "unterminated ["}, false},
		{`a"b"`, []string{"bad path"}, false},
	}
	for _, tt := range bad {
		_, err := Query(v, tt.path)
		if err == nil {
			t.Errorf("Query(%s): no error", tt.path)
			continue
		}
		for _, w := range tt.wantErr {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("Query(%s): %v; want it to contain %q", tt.path, err, w)
			}
		}
		if errors.Is(err, ErrNotFound) != tt.missing {
			t.Errorf("Query(%s): ErrNotFound %v, want %v", tt.path, errors.Is(err, ErrNotFound), tt.missing)
		}
	}
}

// TestDumpClusterWarming: a cluster only in dynamic_warming_clusters is one Envoy does not use
// yet (it waits for its endpoints or secrets); read as the cluster, its config said what was
// not in effect. It is not found, saying it is warming (a config step's until waits for it).
// The fixture is a stand-in written in Envoy's config dump shape.
func TestDumpClusterWarming(t *testing.T) {
	dump := readFixture(t, "config_dump.json")
	const warming = "outbound|9999||blackhole.conn-lab.svc.cluster.local"
	if _, err := DumpCluster(dump, warming); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "is warming in the config dump (dynamic_warming_clusters)") {
		t.Errorf("warming cluster: %v", err)
	}
	if _, err := ClusterEndpoints(dump, warming); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "is warming") {
		t.Errorf("warming cluster's endpoints: %v", err)
	}
	// Active and warming (a new version on its way): the active one is what Envoy uses.
	both := []byte(`{"configs":[{"@type":"type.googleapis.com/envoy.admin.v3.ClustersConfigDump",
		"dynamic_warming_clusters":[{"cluster":{"name":"c","connect_timeout":"2s"}}],
		"dynamic_active_clusters":[{"cluster":{"name":"c","connect_timeout":"1s"}}]}]}`)
	if c, err := DumpCluster(both, "c"); err != nil || c["connect_timeout"] != "1s" {
		t.Errorf("active and warming: %v, %v; want the active one", c, err)
	}
}
