package xdstype

import (
	"strings"
	"testing"
)

// TestReadAnyOptionalInUnknownMessage: below an Any of a message labrun does not know, a
// field left out errs (it cannot be told from a typo), unless it is read with ?., which
// takes a field left out as nil (the seed scenario cfg_portlevel writes
// `?.max_requests_per_connection ?? 0`).
func TestReadAnyOptionalInUnknownMessage(t *testing.T) {
	v := map[string]any{"@type": "type.googleapis.com/example.v9.Unknown", "present": map[string]any{"a": 1.0}}
	if got, err := ReadAny(v, "?present", "?missing"); err != nil || got != nil {
		t.Errorf("?.present?.missing: %v, %v; want nil, no error", got, err)
	}
	if _, err := ReadAny(v, "present", "missing"); err == nil || !strings.Contains(err.Error(), "labrun does not know") {
		t.Errorf("present.missing: %v; want an error saying the message is unknown", err)
	}
}

// TestReadAnyMapKeyChecked: below an Any, a key a map field lacks (a route configuration's
// typed_per_filter_config) read nil, so ….typed_per_filter_config.envoy_filters_http_fualt
// == nil held over a route that configures the fault filter; as a map typed at vet, the key
// now has no value unless read with ?.
func TestReadAnyMapKeyChecked(t *testing.T) {
	v := map[string]any{
		"@type": "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager",
		"route_config": map[string]any{"typed_per_filter_config": map[string]any{
			"envoy.filters.http.fault": map[string]any{"@type": "type.googleapis.com/envoy.extensions.filters.http.fault.v3.HTTPFault"},
		}},
	}
	if got, err := ReadAny(v, "route_config", "typed_per_filter_config", "envoy.filters.http.fualt"); err == nil || !strings.Contains(err.Error(), `has no key "envoy.filters.http.fualt" (did you mean "envoy.filters.http.fault"?)`) {
		t.Errorf("a misspelt key: %v, %v; want an error with did-you-mean", got, err)
	}
	if got, err := ReadAny(v, "route_config", "typed_per_filter_config", "?envoy.filters.http.fualt"); err != nil || got != nil {
		t.Errorf("?.: %v, %v; want nil, no error", got, err)
	}
	if got, err := ReadAny(v, "route_config", "typed_per_filter_config", "envoy.filters.http.fault"); err != nil || got == nil {
		t.Errorf("the key there: %v, %v; want its value", got, err)
	}
}
