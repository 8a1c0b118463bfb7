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
	expect := []struct {
		src, outcome, reason string
	}{
		{`cl.transport_socket.typed_config.sni == "api.lab.internal"`, "passed", ""},
		{`cl.transport_socket.typed_config.common_tls_context.alpn_protocols == []`, "passed", ""},
		{`cl.transport_socket.typed_config.snii == nil`, "error", `UpstreamTlsContext has no field "snii" (did you mean "sni"?)`},
		{`cl.transport_socket.typed_config.sni_name != "x"`, "error", `has no field "sni_name"`},
		{`cl.transport_socket.typed_config.common_tls_context.alpn_protocol == nil`, "error", `common_tls_context (CommonTlsContext) has no field "alpn_protocol" (did you mean "alpn_protocols"?)`},
		{`cl.filters[0].typed_config.disable_host_header_fallback == true`, "passed", ""},
		{`cl.filters[0].typed_config.disable_host_header_fallbak != true`, "error", `PluginConfig has no field "disable_host_header_fallbak"`},
		{`len(cl.filters[1].typed_config.upstream_discovery) == 1`, "passed", ""},
		{`cl.filters[1].typed_config.shared_with_upstream != true`, "error", `"@type" type.googleapis.com/io.istio.http.peer_metadata.Config names a message labrun does not know`},
	}
	var srcs []string
	for _, e := range expect {
		srcs = append(srcs, fmt.Sprintf("%q", e.src))
	}
	sc := loadScenario(t, `
s: schema.#Scenario & {
	steps: [{name: "cl", config: {admin: "http://127.0.0.1:15000", cluster: "c"}}]
	expect: [`+strings.Join(srcs, ", ")+`]
}`)
	w := &fakes.World{ConfigValue: func(req schema.Config, n int) (any, error) {
		return map[string]any{"name": "c", "type": "EDS",
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
			}},
		}, nil
	}}
	rec := interp.New(w.Target()).Run(context.Background(), context.Background(), sc)
	if len(rec.Expectations) != len(expect) {
		t.Fatalf("%d judgements, want %d (%s)", len(rec.Expectations), len(expect), rec.Error)
	}
	for i, e := range expect {
		got := rec.Expectations[i]
		if string(got.Outcome) != e.outcome || !strings.Contains(got.Reason, e.reason) {
			t.Errorf("%s: %s (%s; reason %q), want %s with a reason containing %q", e.src, got.Outcome, got.Explanation, got.Reason, e.outcome, e.reason)
		}
	}
}
