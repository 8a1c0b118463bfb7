package interp_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"labrun.dev/labrun/driver/fakes"
	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/schema"
)

// A read below an Envoy Any whose message only its "@type" says (a transport socket's or a
// filter's typed_config) is typed at run time. A field that message does not have read nil,
// so a misspelled field held == nil and != anything: snii == nil passed over an
// UpstreamTlsContext whose field is sni. It has no value now, and the reason names the
// message's field. A field left out of a message labrun does not know (an Istio filter's
// config) cannot be told from a field it does not have: it has no value either, while one
// that is there reads as Envoy wrote it.
func TestConfigAnyFieldsChecked(t *testing.T) {
	expect := []claim{
		{`cl.transport_socket.typed_config.sni == "api.lab.internal"`, "passed", ""},
		{`cl.transport_socket.typed_config.common_tls_context.alpn_protocols == []`, "passed", ""},
		{`cl.transport_socket.typed_config.snii == nil`, "error", `UpstreamTlsContext has no field "snii" (did you mean "sni"?)`},
		{`cl.transport_socket.typed_config.sni_name != "x"`, "error", `has no field "sni_name"`},
		{`cl.transport_socket.typed_config.common_tls_context.alpn_protocol == nil`, "error", `common_tls_context (CommonTlsContext) has no field "alpn_protocol" (did you mean "alpn_protocols"?)`},
		{`cl.filters[0].typed_config.disable_host_header_fallback == true`, "passed", ""},
		{`cl.filters[0].typed_config.disable_host_header_fallbak != true`, "error", `PluginConfig has no field "disable_host_header_fallbak"`},
		{`len(cl.filters[1].typed_config.upstream_discovery) == 1`, "passed", ""},
		{`cl.filters[1].typed_config.shared_with_upstream != true`, "error", `"@type" type.googleapis.com/io.istio.http.peer_metadata.Config names a message labrun does not know`},
		// A TypedStruct's value is typed by the message its type_url names: a misspelt key
		// read nil (enable_discovry == nil held).
		{`cl.filters[2].typed_config.value.protocol == "istio-peer-exchange"`, "passed", ""},
		{`cl.filters[2].typed_config.value.enable_discovery == false`, "passed", ""},
		{`cl.filters[2].typed_config.value.enable_discovry == nil`, "error", `in a TypedStruct's value of type_url type.googleapis.com/envoy.tcp.metadataexchange.config.MetadataExchange: value (MetadataExchange) has no field "enable_discovry" (did you mean "enable_discovery"?)`},
		{`cl.filters[2].typed_config.value.protocl != "x"`, "error", `has no field "protocl" (did you mean "protocol"?)`},
		{`cl.filters[3].typed_config.value.upstream_discovery != nil`, "passed", ""},
		{`cl.filters[3].typed_config.value.upstream_discovry == nil`, "error", `TypedStruct's type_url type.googleapis.com/io.istio.http.peer_metadata.Config names a message labrun does not know`},
		{`cl.filters[3].typed_config.value?.upstream_discovry == nil`, "passed", ""}, // ?.: nil, as the user asks
	}
	judgeConfig(t, expect, map[string]any{"name": "c", "type": "EDS",
		"transport_socket": map[string]any{
			"name": "envoy.transport_sockets.tls",
			"typed_config": map[string]any{
				"@type":              "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext",
				"common_tls_context": map[string]any{},
				"sni":                "api.lab.internal",
			},
		},
		"filters": []any{map[string]any{
			"name": "istio.stats",
			"typed_config": map[string]any{
				"@type":                        "type.googleapis.com/stats.PluginConfig",
				"disable_host_header_fallback": true,
			},
		}, map[string]any{
			"name": "istio.peer_metadata",
			"typed_config": map[string]any{
				"@type":              "type.googleapis.com/io.istio.http.peer_metadata.Config",
				"upstream_discovery": []any{map[string]any{"istio_headers": map[string]any{}}},
			},
		}, map[string]any{
			"name": "istio.metadata_exchange",
			"typed_config": map[string]any{
				"@type":    "type.googleapis.com/udpa.type.v1.TypedStruct",
				"type_url": "type.googleapis.com/envoy.tcp.metadataexchange.config.MetadataExchange",
				"value":    map[string]any{"protocol": "istio-peer-exchange"},
			},
		}, map[string]any{
			"name": "istio.peer_metadata",
			"typed_config": map[string]any{
				"@type":    "type.googleapis.com/xds.type.v3.TypedStruct",
				"type_url": "type.googleapis.com/io.istio.http.peer_metadata.Config",
				"value":    map[string]any{"upstream_discovery": []any{map[string]any{"istio_headers": map[string]any{}}}},
			},
		}},
	})
}

// A comparison of a field read below an Envoy Any is held at run time, by the field's type,
// to what vet holds one of a typed field to: an unset wrapper or Duration (Envoy applies a
// default the dump does not give) has no value for !=, not in or an order; a Duration read as
// text is not ordered byte by byte, nor compared with a literal Envoy never writes; an enum
// is not compared with a value it does not have; a field below an unset message has no
// value (?. reads it as nil). Before, each of them read nil or compared strings, and held.
func TestConfigAnyComparisons(t *testing.T) {
	const hpo = `cl.typed_extension_protocol_options["envoy.extensions.upstreams.http.v3.HttpProtocolOptions"].common_http_protocol_options`
	const tls = `cl.transport_socket.typed_config.common_tls_context`
	const tlsSet = `cl.transport_socket_matches[0].transport_socket.typed_config.common_tls_context`
	expect := []claim{
		{hpo + `.max_requests_per_connection != 100`, "error", "has no value: it is unset (Envoy left this UInt32Value out of its config dump)"},
		{hpo + `.max_requests_per_connection == nil`, "passed", ""},
		{hpo + `.idle_timeout == "300s"`, "passed", ""},
		{hpo + `.idle_timeout < "5s"`, "error", `orders strings, byte by byte`},
		{hpo + `.idle_timeout != "0.5s"`, "error", `is always true`},
		{`cl.filters[0].typed_config.tcp_reporting_duration != "5s"`, "error", "has no value: it is unset (Envoy left this Duration out of its config dump)"},
		{`cl.filters[0].typed_config.tcp_reporting_duration == nil`, "passed", ""},
		{tls + `.tls_params == nil`, "passed", ""},
		{tls + `.tls_params.tls_minimum_protocol_version != "TLSv1_3"`, "error", "tls_params is unset"},
		{tls + `.tls_params?.tls_minimum_protocol_version == nil`, "passed", ""},
		{tlsSet + `.tls_params.tls_minimum_protocol_version == "TLSv1_2"`, "passed", ""},
		{tlsSet + `.tls_params.tls_minimum_protocol_version != "TLS1_3"`, "error", `"TLS1_3" never matches`},
	}
	tlsContext := func(common map[string]any) map[string]any {
		return map[string]any{
			"name": "envoy.transport_sockets.tls",
			"typed_config": map[string]any{
				"@type":              "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext",
				"common_tls_context": common,
			},
		}
	}
	judgeConfig(t, expect, map[string]any{"name": "c", "type": "EDS",
		"typed_extension_protocol_options": map[string]any{
			"envoy.extensions.upstreams.http.v3.HttpProtocolOptions": map[string]any{
				"@type":                        "type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions",
				"common_http_protocol_options": map[string]any{"idle_timeout": "300s"},
			},
		},
		"filters": []any{map[string]any{
			"name":         "istio.stats",
			"typed_config": map[string]any{"@type": "type.googleapis.com/stats.PluginConfig", "disable_host_header_fallback": true},
		}},
		"transport_socket": tlsContext(map[string]any{}),
		"transport_socket_matches": []any{map[string]any{
			"name":             "tlsMode-istio",
			"transport_socket": tlsContext(map[string]any{"tls_params": map[string]any{"tls_minimum_protocol_version": "TLSv1_2"}}),
		}},
	})
}

// A field read below a message Envoy left out of its config dump (unset: a message has no
// default) errs in the claim's terms: which message is unset, and how to claim it. Before,
// expr's bare "cannot fetch interval from <nil>" named neither. ?. reads nil, as asked.
func TestConfigUnsetMessageRead(t *testing.T) {
	expect := []claim{
		{`cl.outlier_detection.interval != "10s"`, "error", `cl.outlier_detection.interval has no value: cl.outlier_detection is unset (Envoy left it out of its config dump: a message, which has no default, or a map's key it did not write), so it has no interval; claim that it is unset (cl.outlier_detection == nil), or that it is set and what it holds (cl.outlier_detection != nil && …); cl.outlier_detection?.interval reads nil where it is unset`},
		{`cl.outlier_detection?.interval == nil`, "passed", ""},
		{`cl.circuit_breakers.thresholds[0].max_connections == 1`, "error", `cl.circuit_breakers.thresholds has no value: cl.circuit_breakers is unset`},
		{`cl.upstream_connection_options.tcp_keepalive.keepalive_time == 1`, "error", `cl.upstream_connection_options.tcp_keepalive is unset`},
		{`cl.upstream_connection_options?.tcp_keepalive.keepalive_time == 1`, "error", `cl.upstream_connection_options?.tcp_keepalive is unset`},
	}
	judgeConfig(t, expect, map[string]any{"name": "c", "type": "EDS", "upstream_connection_options": map[string]any{}})
}

// TestConfigStructKeysChecked: free-form JSON (google.protobuf.Struct, a cluster's
// metadata.filter_metadata.istio) read a misspelt key as nil, so
// `….istio.defualt_original_port == nil` PASSED over a cluster that has the key. A key the
// Struct lacks now errs, naming the keys it has (did-you-mean), unless the read says it may be
// absent (?.) or tests for it (in).
func TestConfigStructKeysChecked(t *testing.T) {
	expect := []claim{
		{`cl.metadata.filter_metadata.istio.default_original_port == 8080`, "passed", ""},
		{`cl.metadata.filter_metadata.istio.config endsWith "/destination-rule/x"`, "passed", ""},
		{`cl.metadata.filter_metadata.istio.defualt_original_port == nil`, "error", `has no key "defualt_original_port" (did you mean "default_original_port"?)`},
		{`cl.metadata.filter_metadata.istio.confg != "x"`, "error", `its keys: config, default_original_port, services`},
		{`cl.metadata.filter_metadata.istio?.defualt_original_port == nil`, "passed", ""}, // ?.: absent, as the user claims
		{`!("alpn_override" in cl.metadata.filter_metadata.istio)`, "passed", ""},
		{`cl.metadata.filter_metadata.istio.services[0].host == "x.ns.svc.cluster.local"`, "passed", ""},
		{`cl.metadata.filter_metadata.istio.services[0].hots == nil`, "error", `has no key "hots" (did you mean "host"?)`},
		{`cl.metadata.filter_metadata.istio["confg"] == nil`, "error", `has no key "confg"`},
		{`none(cl.metadata.filter_metadata.istio.services, .hots == "x")`, "error", `# has no key "hots" (did you mean "host"?)`},
		{`all(cl.metadata.filter_metadata.istio.services, .host endsWith ".svc.cluster.local")`, "passed", ""},
		// A key of a map of the config (filter_metadata: map<string, Struct>) is checked alike:
		// filter_metadata.isito == nil held.
		{`cl.metadata.filter_metadata.isito == nil`, "error", `cl.metadata.filter_metadata has no key "isito" (did you mean "istio"?); its keys: istio`},
		{`cl.metadata.filter_metadata["isito"] == nil`, "error", `has no key "isito"`},
		{`cl.metadata.filter_metadata?.isito == nil`, "passed", ""},
		{`!("isito" in cl.metadata.filter_metadata)`, "passed", ""},
		{`cl.metadata.filter_metadata.istio.config != ""`, "passed", ""},
		// A map of Anys: the key is checked, then the Any read by its "@type".
		{`cl.typed_extension_protocol_options["envoy.extensions.upstreams.http.v3.HttpProtocolOptions"].common_http_protocol_options.idle_timeout == "1s"`, "passed", ""},
		{`cl.typed_extension_protocol_options["envoy.extensions.upstreams.http.v3.HttpProtocolOption"].common_http_protocol_options == nil`, "error", `has no key "envoy.extensions.upstreams.http.v3.HttpProtocolOption" (did you mean "envoy.extensions.upstreams.http.v3.HttpProtocolOptions"?)`},
		{`cl.typed_extension_protocol_options?.["envoy.extensions.upstreams.http.v3.HttpProtocolOption"] == nil`, "passed", ""},
	}
	judgeConfig(t, expect, map[string]any{"name": "c", "type": "EDS",
		"typed_extension_protocol_options": map[string]any{"envoy.extensions.upstreams.http.v3.HttpProtocolOptions": map[string]any{
			"@type":                        "type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions",
			"common_http_protocol_options": map[string]any{"idle_timeout": "1s"},
		}},
		"metadata": map[string]any{"filter_metadata": map[string]any{"istio": map[string]any{
			"config":                "/apis/networking.istio.io/v1/namespaces/ns/destination-rule/x",
			"default_original_port": 8080.0,
			"services":              []any{map[string]any{"host": "x.ns.svc.cluster.local", "name": "x", "namespace": "ns"}},
		}}},
	})
}

// TestConfigMapKeyOfDefault: a map of the config that Envoy left out reads as its default,
// the empty map, so a key read of it says the map has no key (and ?. reads nil), not that a
// message is unset and to claim == nil, which the default makes false.
func TestConfigMapKeyOfDefault(t *testing.T) {
	expect := []claim{
		{`cl.metadata.filter_metadata.istio.config == "x"`, "error", `cl.metadata.filter_metadata has no key "istio"; it has no keys`},
		{`cl.metadata.filter_metadata?.istio == nil`, "passed", ""},
		{`len(cl.metadata.filter_metadata) == 0`, "passed", ""},
	}
	judgeConfig(t, expect, map[string]any{"name": "c", "type": "EDS",
		"metadata": map[string]any{"typed_filter_metadata": map[string]any{}}})
}

// claim is an expectation's source and the outcome it must be judged, with a reason that
// contains reason.
type claim struct{ src, outcome, reason string }

// judgeConfig runs a scenario of one config step, cl, whose config dump the fake target
// answers with cluster, with claims as its expectations, and checks each one's outcome and
// reason.
func judgeConfig(t *testing.T, claims []claim, cluster map[string]any) {
	t.Helper()
	var srcs []string
	for _, c := range claims {
		srcs = append(srcs, fmt.Sprintf("%q", c.src))
	}
	sc := loadScenario(t, `
s: schema.#Scenario & {
	steps: [{name: "cl", config: {admin: "http://127.0.0.1:15000", cluster: "c"}}]
	expect: [`+strings.Join(srcs, ", ")+`]
}`)
	w := &fakes.World{ConfigValue: func(schema.Config, int) (any, error) { return cluster, nil }}
	rec := interp.New(w.Target()).Run(context.Background(), context.Background(), sc)
	checkClaims(t, rec, claims)
}

// checkClaims checks that rec judged each of claims, its expectations in order, as it says.
func checkClaims(t *testing.T, rec *interp.Record, claims []claim) {
	t.Helper()
	if len(rec.Expectations) != len(claims) {
		t.Fatalf("%d judgements, want %d (%s)", len(rec.Expectations), len(claims), rec.Error)
	}
	for i, c := range claims {
		got := rec.Expectations[i]
		if string(got.Outcome) != c.outcome || !strings.Contains(got.Reason, c.reason) {
			t.Errorf("%s: %s (%s; reason %q), want %s with a reason containing %q", c.src, got.Outcome, got.Explanation, got.Reason, c.outcome, c.reason)
		}
	}
}
