package xdstype

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
)

// dump is a real config_dump: what istiod (istio.io/istio v0.0.0-20260827124520-eed52ebb66ad)
// sent the sidecar of pod client in namespace cfg-lab (pod label istio-locality:
// region1.zone1) of the labrun sandbox, taken with `pilot-agent request GET
// 'config_dump?include_eds'` from the Envoy admin stand-in. The namespace holds a Service
// backend (port http 8080), a STATIC ServiceEntry static.lab.internal with one endpoint in each
// of region1/zone1, region1/zone2, region2/zone3 and region3/zone4, a DestinationRule for it
// (ROUND_ROBIN, locality failover region1→region2, outlier detection), and a VirtualService for
// backend with retries {attempts 3, perTryTimeout 2s} and a 50 % mirror.
func dump(t *testing.T) map[string]any {
	t.Helper()
	b, err := os.ReadFile("../testdata/istiod_sidecar_config_dump.json")
	if err != nil {
		t.Fatal(err)
	}
	var d map[string]any
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// resource finds the resource called name in the dump's section whose list is list.
func resource(t *testing.T, d map[string]any, list, wrapper, key, name string) map[string]any {
	t.Helper()
	for _, c := range d["configs"].([]any) {
		for _, w := range asList(c.(map[string]any)[list]) {
			r := w.(map[string]any)[wrapper].(map[string]any)
			if r[key] == name {
				return r
			}
		}
	}
	t.Fatalf("no %s %q in the dump", wrapper, name)
	return nil
}

func asList(v any) []any { l, _ := v.([]any); return l }

func TestTypesLoad(t *testing.T) {
	if err := Err(); err != nil {
		t.Fatal(err)
	}
	c := Resource("cluster")
	if c == nil || c.Msg.Name != "envoy.config.cluster.v3.Cluster" {
		t.Fatalf("Resource(cluster) = %v", c)
	}
	lb := c.Msg.Field("lb_policy")
	if lb == nil || lb.Type.Kind != Enum || lb.Type.Enum.Values[0] != "ROUND_ROBIN" || lb.Default() != "ROUND_ROBIN" {
		t.Errorf("lb_policy: %+v", lb)
	}
	if f := c.Msg.Field("connect_timeout"); f == nil || f.Type.Kind != Duration || f.HasDefault() {
		t.Errorf("connect_timeout: %+v", f)
	}
	if f := c.Msg.Field("per_connection_buffer_limit_bytes"); f == nil || f.Type.Wrapper != "UInt32Value" || f.HasDefault() {
		t.Errorf("per_connection_buffer_limit_bytes is a wrapper without a default: %+v", f)
	}
	if f := c.Msg.Field("typed_extension_protocol_options"); f == nil || f.Type.Kind != Map || f.Type.Elem.Kind != Any {
		t.Errorf("typed_extension_protocol_options: %+v", f)
	}
	for _, name := range []string{
		"envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager",
		"envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext",
		"envoy.extensions.filters.http.rbac.v3.RBAC",
		"udpa.type.v1.TypedStruct",
		"istio.envoy.config.filter.http.alpn.v2alpha1.FilterConfig",
	} {
		if Lookup(name) == nil {
			t.Errorf("%s is not known", name)
		}
	}
	if Lookup("validate.FieldRules") != nil {
		t.Error("the options-only files are in the descriptors")
	}
}

// Normalize keeps what Envoy wrote (a left-out field stays out: presence is what Envoy printed)
// with its 64-bit integers as numbers; Select reads a left-out field as its default, and an
// unset message as nil.
func TestNormalize(t *testing.T) {
	d := dump(t)
	ct := Resource("cluster")
	raw := resource(t, d, "dynamic_active_clusters", "cluster", "name", "outbound|80||static.lab.internal")
	if _, ok := raw["lb_policy"]; ok {
		t.Fatal("the fixture's cluster writes lb_policy: the test wants it left out")
	}
	c := Normalize(raw, ct).(map[string]any)
	if _, ok := c["lb_policy"]; ok {
		t.Error("Normalize wrote lb_policy, which Envoy left out")
	}
	read := func(v any, typ *Type, path string) any {
		t.Helper()
		got, err := Select(v, typ, path)
		if err != nil {
			t.Errorf("Select(%s): %v", path, err)
		}
		return got
	}
	for _, tt := range []struct {
		path string
		want any
	}{
		{"lb_policy", "ROUND_ROBIN"}, // the enum's zero value, which Envoy omits
		{"respect_dns_ttl", false},
		{"alt_stat_name", "outbound|80||static.lab.internal;"},
		{"health_checks", []any{}},
		{"transport_socket", nil}, // a message, unset
		{"typed_extension_protocol_options.envoy.extensions.upstreams.http.v3.HttpProtocolOptions.common_http_protocol_options.headers_with_underscores_action", "ALLOW"},
	} {
		if got := read(c, ct, tt.path); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s reads %#v, want %#v", tt.path, got, tt.want)
		}
	}
	if _, ok := raw["lb_policy"]; ok {
		t.Error("Normalize changed its input")
	}

	et := Resource("endpoints")
	eds := Normalize(resource(t, d, "dynamic_endpoint_configs", "endpoint_config", "cluster_name", "outbound|80||static.lab.internal"), et)
	var prios []any
	for i := range 4 {
		prios = append(prios, read(eds, et, fmt.Sprintf("endpoints[%d].priority", i)))
	}
	if !reflect.DeepEqual(prios, []any{0.0, 1.0, 2.0, 3.0}) {
		t.Errorf("priorities %v, want 0 (omitted by Envoy) 1 2 3", prios)
	}
	if got := read(eds, et, "endpoints[0].lb_endpoints[0].health_status"); got != "UNKNOWN" {
		t.Errorf("health_status = %v, want UNKNOWN (HealthStatus 0)", got)
	}

	rt := Resource("route")
	route := Normalize(resource(t, d, "dynamic_route_configs", "route_config", "name", "8080"), rt)
	n := read(route, rt, `virtual_hosts["backend.cfg-lab.svc.cluster.local:8080"].routes[0].route.retry_policy`).(map[string]any)["host_selection_retry_max_attempts"]
	if n != 5.0 {
		t.Errorf("an int64 (\"5\" in proto JSON) is recorded as %#v; want the number 5", n)
	}
}

func TestSelect(t *testing.T) {
	d := dump(t)
	rt := Resource("route")
	route := Normalize(resource(t, d, "dynamic_route_configs", "route_config", "name", "8080"), rt)
	et := Resource("endpoints")
	eds := Normalize(resource(t, d, "dynamic_endpoint_configs", "endpoint_config", "cluster_name", "outbound|80||static.lab.internal"), et)
	ct := Resource("cluster")
	cluster := Normalize(resource(t, d, "dynamic_active_clusters", "cluster", "name", "outbound|80||static.lab.internal"), ct)
	vh := `virtual_hosts["backend.cfg-lab.svc.cluster.local:8080"]`
	for _, tt := range []struct {
		v    any
		t    *Type
		path string
		want any
	}{
		{route, rt, vh + ".routes[0].route.retry_policy.num_retries", 3.0},
		{route, rt, vh + ".routes[0].route.retry_policy.per_try_timeout", "2s"},
		{route, rt, "virtual_hosts[name=allow_any].routes[0].route.cluster", "PassthroughCluster"},
		{route, rt, vh + ".routes[-1].match.prefix", "/"},
		{route, rt, vh + ".routes[0].route.request_mirror_policies[0].runtime_fraction.default_value.denominator", "MILLION"},
		{eds, et, "endpoints[locality.zone=zone2].priority", 1.0},
		{eds, et, "endpoints[priority=0].locality.zone", "zone1"}, // priority 0 is omitted by Envoy
		{eds, et, `endpoints[locality.region=region1, priority=1].lb_endpoints[0].endpoint.address.socket_address.address`, "198.51.100.2"},
		{cluster, ct, "outlier_detection.consecutive_5xx", 1.0},
		{cluster, ct, "typed_extension_protocol_options.envoy.extensions.upstreams.http.v3.HttpProtocolOptions.common_http_protocol_options.max_requests_per_connection", 1.0},
		{cluster, ct, "metadata.filter_metadata.istio.config", "/apis/networking.istio.io/v1/namespaces/cfg-lab/destination-rule/ext-static"},
		{cluster, ct, "upstream_connection_options.tcp_keepalive.keepalive_time", nil}, // unset along the way
		{cluster, ct, "lb_policy", "ROUND_ROBIN"},
	} {
		got, err := Select(tt.v, tt.t, tt.path)
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Select(%s) = %#v, %v; want %#v", tt.path, got, err, tt.want)
		}
	}
	for _, tt := range []struct {
		v    any
		t    *Type
		path string
		want []string
		at   string // the path from the offset of the error
	}{
		{cluster, ct, "outlier_detection.consecutive5xx", []string{`outlier_detection (OutlierDetection) has no field "consecutive5xx"`, `did you mean "consecutive_5xx"?`}, "consecutive5xx"},
		{cluster, ct, "circuit_breakers.thresholds[0].maxConnections", []string{`did you mean "max_connections"?`, "snake_case"}, "maxConnections"},
		{eds, et, "endpoints[locality.zone=zone9]", []string{`no item of 4 has locality.zone = "zone9"`, `their locality.zone: "zone1", "zone2", "zone3", "zone4"`}, "[locality.zone=zone9]"},
		{eds, et, "endpoints[locality.region=region1]", []string{`2 items have locality.region = "region1" (indexes 0, 1)`}, "[locality.region=region1]"},
		{route, rt, `virtual_hosts["backend:8080"]`, []string{`no item of 2 has name = "backend:8080"`, `"backend.cfg-lab.svc.cluster.local:8080", "allow_any"`}, `["backend:8080"]`},
		{route, rt, "virtual_hosts.routes", []string{"virtual_hosts is a list of 2"}, "routes"},
		{route, rt, "virtual_hosts[7]", []string{"virtual_hosts has 2 items, no index [7]"}, "[7]"},
	} {
		_, err := Select(tt.v, tt.t, tt.path)
		var pe *PathError
		if !errors.As(err, &pe) {
			t.Errorf("Select(%s): %v, want a *PathError", tt.path, err)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(pe.Msg, w) {
				t.Errorf("Select(%s): %s\nwant it to contain %s", tt.path, pe.Msg, w)
			}
		}
		if got := tt.path[pe.Offset:]; !strings.HasPrefix(got, tt.at) || !pe.Missing {
			t.Errorf("Select(%s): error at %q (missing %v), want at %q", tt.path, got, pe.Missing, tt.at)
		}
	}
}

// A static path is checked against the types, each problem at its offset.
func TestAt(t *testing.T) {
	for _, tt := range []struct {
		res, path string
		want      string // the type, or "" for unchecked (inside an Any of unknown type)
	}{
		{"cluster", "circuit_breakers.thresholds[0].max_connections", "number (UInt32Value, unset when absent)"},
		{"cluster", "circuit_breakers.thresholds.0", "Thresholds"},
		{"cluster", "lb_policy", "enum LbPolicy"},
		{"cluster", `typed_extension_protocol_options."envoy.extensions.upstreams.http.v3.HttpProtocolOptions".explicit_http_config.http2_protocol_options.max_concurrent_streams`, "number (UInt32Value, unset when absent)"},
		{"cluster", `typed_extension_protocol_options.envoy.extensions.upstreams.http.v3.HttpProtocolOptions.common_http_protocol_options`, "HttpProtocolOptions"},
		{"cluster", "transport_socket.typed_config.sni", ""},
		{"cluster", "transport_socket.typed_config.@type", "string"},
		{"cluster", "metadata.filter_metadata.istio.config", "free-form JSON (google.protobuf.Struct)"},
		{"route", `virtual_hosts["x:80"].routes[0].route.retry_policy.per_try_timeout`, `duration ("0.500s")`},
		{"endpoints", "endpoints[locality.zone=z, priority=1].lb_endpoints[0].health_status", "enum HealthStatus"},
		{"listener", "filter_chains[filter_chain_match.destination_port=8080].filters[name=envoy.filters.network.http_connection_manager].typed_config", "HttpConnectionManager (in an Any)"},
		{"listener", "filter_chains[0].filters[0].typed_config", "Any (its \"@type\" says what it holds)"},
		{"listener", "filter_chains[0].filters[name=envoy.filters.network.http_connection_manager].typed_config.http_filters[name=envoy.filters.http.rbac].typed_config.rules.action", "enum Action"},
	} {
		got, err := Resource(tt.res).At(tt.path)
		if err != nil {
			t.Errorf("%s %s: %v", tt.res, tt.path, err)
			continue
		}
		if s := ""; got != nil {
			s = got.String()
			if s != tt.want {
				t.Errorf("%s %s: %s, want %s", tt.res, tt.path, s, tt.want)
			}
		} else if tt.want != "" {
			t.Errorf("%s %s: unchecked, want %s", tt.res, tt.path, tt.want)
		}
	}
	for _, tt := range []struct {
		res, path string
		want      string
		at        string
	}{
		{"cluster", "circuit_breakers.thresholds[0].max_conections", `circuit_breakers.thresholds[0] (Thresholds) has no field "max_conections" (did you mean "max_connections"?)`, "max_conections"},
		{"cluster", "outlierDetection.consecutive_5xx", `did you mean "outlier_detection"? (config_dump writes Envoy's snake_case names`, "outlierDetection"},
		{"cluster", "circuit_breakers.thresholds.max_connections", "circuit_breakers.thresholds is a list of Thresholds: select one item with [n]", "max_connections"},
		{"cluster", "connect_timeout.seconds", `connect_timeout is a duration ("0.500s"): it has nothing to select with seconds`, "seconds"},
		{"route", `virtual_hosts[nam=x]`, `VirtualHost has no field "nam" (did you mean "name"?)`, "nam=x"},
		{"endpoints", "endpoints[0].lb_endpoints[health_status=HEALTY]", `health_status is an enum HealthStatus: no value "HEALTY" (did you mean "HEALTHY"?)`, "HEALTY"},
		{"endpoints", "endpoints[priority=one]", `priority is a number: "one" is not a number`, "one"},
		{"endpoints", `endpoints["zone1"]`, "endpoints is a list of LocalityLbEndpoints, which have no name", `["zone1"]`},
		{"cluster", "circuit_breakers[0]", "circuit_breakers is one CircuitBreakers, not a list", "[0]"},
		{"cluster", "a..b", "bad path: empty segment", ".b"},
	} {
		_, err := Resource(tt.res).At(tt.path)
		var pe *PathError
		if !errors.As(err, &pe) {
			t.Errorf("%s %s: %v, want a *PathError", tt.res, tt.path, err)
			continue
		}
		if !strings.Contains(pe.Msg, tt.want) {
			t.Errorf("%s %s: %s\nwant it to contain %s", tt.res, tt.path, pe.Msg, tt.want)
		}
		if got := tt.path[pe.Offset:]; !strings.HasPrefix(got, tt.at) {
			t.Errorf("%s %s: error at %q, want at %q", tt.res, tt.path, got, tt.at)
		}
	}
}

func TestParsePath(t *testing.T) {
	p, err := ParsePath(`a."b.c"[0].d["x:80"][k.l=v, m="a,]b"][-1]`)
	if err != nil {
		t.Fatal(err)
	}
	want := []Seg{
		{Kind: SegKey, Text: "a", Pos: 0, End: 1},
		{Kind: SegKey, Text: "b.c", Quoted: true, Pos: 2, End: 7},
		{Kind: SegIndex, Index: 0, Text: "0", Pos: 7, End: 10},
		{Kind: SegKey, Text: "d", Pos: 11, End: 12},
		{Kind: SegName, Text: "x:80", Quoted: true, Pos: 12, End: 20},
		{Kind: SegWhere, Conds: []Cond{{Field: []string{"k", "l"}, Value: "v", Pos: 21, ValuePos: 25}, {Field: []string{"m"}, Value: "a,]b", Pos: 28, ValuePos: 30}}, Pos: 20, End: 37},
		{Kind: SegIndex, Index: -1, Text: "-1", Pos: 37, End: 41},
	}
	if !reflect.DeepEqual(p.Segs, want) {
		t.Errorf("got  %+v\nwant %+v", p.Segs, want)
	}
	if s := p.String(); s != `a."b.c"[0].d["x:80"][k.l=v,m="a,]b"][-1]` {
		t.Errorf("String() = %s", s)
	}
	for _, bad := range []string{`a[`, `a]`, `a."b`, `a.`, `[]`, `a[=x]`, `a[x=1,y]`, `a[k="v"w]`} {
		if _, err := ParsePath(bad); err == nil {
			t.Errorf("ParsePath(%s): no error", bad)
		}
	}
	// An index too large for an int was read as a name, and a config path
	// thresholds[99999999999999999999] was refused as a name of items that have none.
	if _, err := ParsePath(`a[99999999999999999999]`); err == nil || !strings.Contains(err.Error(), "index 99999999999999999999 is out of range") {
		t.Errorf("ParsePath(a[99999999999999999999]): %v, want an index out of range", err)
	}
}

// BenchmarkLoad is what the first config step or checked path of a process pays: reading the
// embedded descriptors and indexing every message.
func BenchmarkLoad(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := build(); err != nil {
			b.Fatal(err)
		}
	}
}

func TestComplete(t *testing.T) {
	for _, tt := range []struct {
		kind, written string
		want          []string // some of the candidates, in their order
		none          bool
	}{
		{"cluster", "circuit_", []string{"circuit_breakers"}, false},
		{"cluster", "circuit_breakers.thr", []string{"circuit_breakers.thresholds"}, false},
		{"cluster", "circuit_breakers.thresholds", []string{"circuit_breakers.thresholds[0]"}, false},
		{"cluster", "circuit_breakers.thresholds[0].max_c", []string{"circuit_breakers.thresholds[0].max_connections", "circuit_breakers.thresholds[0].max_connection_pools"}, false},
		{"route", "virtual_hosts", []string{"virtual_hosts[0]", "virtual_hosts[name="}, false},
		{"route", `virtual_hosts["x:80"].routes[0].route.retry_p`, []string{`virtual_hosts["x:80"].routes[0].route.retry_policy`}, false},
		{"endpoints", "endpoints[locality.zone=a].pri", []string{"endpoints[locality.zone=a].priority"}, false},
		{"cluster", "circuit_breakrs.", nil, true},
		{"cluster", "endpoints[", nil, true},
	} {
		got := Complete(tt.kind, tt.written)
		if tt.none {
			if len(got) != 0 {
				t.Errorf("Complete(%s, %q) = %v, want none", tt.kind, tt.written, got)
			}
			continue
		}
		for _, w := range tt.want {
			found := false
			for _, g := range got {
				found = found || g == w
			}
			if !found {
				t.Errorf("Complete(%s, %q) = %v, want %q among them", tt.kind, tt.written, got, w)
			}
		}
	}
}

// ReadAny of a field of a message without fields (a RawBuffer transport socket's config, an
// item of a list of Anys of several types) says it has none, not "its fields: " and nothing.
func TestReadAnyNoFields(t *testing.T) {
	raw := map[string]any{"@type": "type.googleapis.com/envoy.extensions.transport_sockets.raw_buffer.v3.RawBuffer"}
	_, err := ReadAny(raw, "sni")
	want := `in an Any of "@type" type.googleapis.com/envoy.extensions.transport_sockets.raw_buffer.v3.RawBuffer: RawBuffer has no field "sni": it has no fields`
	if err == nil || err.Error() != want {
		t.Errorf("ReadAny(RawBuffer, sni): %v, want %s", err, want)
	}
}

// A TypedStruct's value is typed by the message its type_url names: a field it leaves out
// reads its default (enable_discovery: false; it was "no key" before), a misspelt one errs
// with did-you-mean.
func TestSelectTypedStruct(t *testing.T) {
	ct := Resource("cluster")
	cluster := map[string]any{"name": "c", "filters": []any{map[string]any{
		"name": "istio.metadata_exchange",
		"typed_config": map[string]any{
			"@type":    "type.googleapis.com/udpa.type.v1.TypedStruct",
			"type_url": "type.googleapis.com/envoy.tcp.metadataexchange.config.MetadataExchange",
			"value":    map[string]any{"protocol": "istio-peer-exchange"},
		},
	}}}
	for path, want := range map[string]any{
		"filters[0].typed_config.value.protocol":         "istio-peer-exchange",
		"filters[0].typed_config.value.enable_discovery": false,
	} {
		if got, err := Select(cluster, ct, path); err != nil || got != want {
			t.Errorf("Select(%s) = %#v, %v; want %#v", path, got, err, want)
		}
	}
	_, err := Select(cluster, ct, "filters[0].typed_config.value.enable_discovry")
	if err == nil || !strings.Contains(err.Error(), `did you mean "enable_discovery"?`) {
		t.Errorf("a misspelt field of a TypedStruct's value: %v", err)
	}
}
