package main

import (
	"slices"
	"testing"
)

// The editor completes a config step's path against the type of the resource the step reads
// (its sibling field names it).
func TestCompleteConfigPath(t *testing.T) {
	for _, tt := range []struct {
		siblings []string
		written  string
		want     string
	}{
		{[]string{"envoy", "cluster"}, "outlier_det", "outlier_detection"},
		{[]string{"envoy", "route"}, "virtual_hosts", "virtual_hosts[name="},
		{[]string{"envoy", "endpoints"}, "endpoints[0].lb_e", "endpoints[0].lb_endpoints"},
		{[]string{"envoy", "listener"}, "filter_chains[0].filters[name=envoy.filters.network.http_connection_manager].typed_config.http_f", "filter_chains[0].filters[name=envoy.filters.network.http_connection_manager].typed_config.http_filters"},
	} {
		siblings := map[string]bool{}
		for _, s := range tt.siblings {
			siblings[s] = true
		}
		if got := completeValue("config", "path", tt.written, siblings); !slices.Contains(got, tt.want) {
			t.Errorf("%v %q: %v, want %q among them", tt.siblings, tt.written, got, tt.want)
		}
	}
	if got := completeValue("config", "path", "x", map[string]bool{"names": true}); got != nil {
		t.Errorf("a names query has no path, got %v", got)
	}
	if got := completeValue("get", "path", "status.", nil); got != nil {
		t.Errorf("a get's path is not typed, got %v", got)
	}
}
