package xdstype

import (
	"strings"
	"testing"
)

// A Sidecar's mark that never came (an egress-only Sidecar, or a listener without its ingress
// chains) says where istiod puts it and how to wait instead: the step read until its timeout,
// and "carries no Sidecar" alone did not say why. Other kinds say what the resource carries.
func TestReflectsSidecarSaysWhere(t *testing.T) {
	listener := map[string]any{"name": "virtualOutbound", "filter_chains": []any{map[string]any{"name": "virtualOutbound-catchall-tcp"}}}
	ok, msg := Reflects(listener, ObjectRef{Kind: "Sidecar", Namespace: "lab", Name: "default"})
	if ok {
		t.Fatal("a listener without a mark reflects the Sidecar")
	}
	if want := "istiod marks a Sidecar only in the inbound filter chains of its ingress listeners"; !strings.Contains(msg, want) {
		t.Errorf("message %q, want it to contain %q", msg, want)
	}
	if _, msg := Reflects(listener, ObjectRef{Kind: "VirtualService", Namespace: "lab", Name: "backend"}); msg != "carries no VirtualService" {
		t.Errorf("message %q, want %q", msg, "carries no VirtualService")
	}
	for _, c := range []struct {
		kind string
		spec any
		want bool
	}{
		{"Sidecar", map[string]any{"egress": []any{map[string]any{"hosts": []any{"./*"}}}}, false},
		{"Sidecar", map[string]any{"ingress": []any{map[string]any{"defaultEndpoint": "127.0.0.1:8080"}}}, true},
		{"DestinationRule", map[string]any{"host": "backend"}, true},
		{"PeerAuthentication", map[string]any{}, false},
	} {
		if got := MarksObject(c.kind, c.spec); got != c.want {
			t.Errorf("MarksObject(%s, %v) = %v, want %v", c.kind, c.spec, got, c.want)
		}
	}
}

// Every default istiod writes (IstioDefaults) names a field of Envoy's types, and a config
// step's path finds it.
func TestIstioDefaults(t *testing.T) {
	for key := range IstioDefaults {
		i := strings.LastIndexByte(key, '.')
		m := Lookup(key[:i])
		if m == nil || m.Field(key[i+1:]) == nil {
			t.Errorf("%s: no such message field", key)
		}
	}
	for _, c := range []struct{ kind, path, field string }{
		{"cluster", "connect_timeout", "connect_timeout"},
		{"cluster", "circuit_breakers.thresholds[0].max_requests", "max_requests"},
		{"cluster", "circuit_breakers.thresholds.0.max_retries", "max_retries"},
		{"route", `virtual_hosts["b:8080"].routes[0].route.retry_policy.num_retries`, "num_retries"},
		{"route", `virtual_hosts["${…}"].routes[0].route.timeout`, "timeout"},
		{"cluster", "${…}.connect_timeout", ""},
		{"cluster", "outlier_detection.interval", ""},
		{"cluster", "circuit_breakers", ""},
	} {
		_, field, ok := Resource(c.kind).IstioDefaultAt(c.path)
		if field != c.field && (ok || c.field != "") {
			t.Errorf("%s %s: field %q, %v; want %q", c.kind, c.path, field, ok, c.field)
		}
	}
}
