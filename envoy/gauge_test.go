package envoy

import (
	"strings"
	"testing"

	"labrun.dev/labrun/schema"
)

// TestIsGaugeAgreesWithTheCatalogue: the naming rule the stats readers fall back on and the
// catalogue vet checks deltas against say the same of every stat Envoy documents.
func TestIsGaugeAgreesWithTheCatalogue(t *testing.T) {
	for _, s := range schema.EnvoyClusterStats.Stats() {
		if s.Kind == schema.Histogram {
			continue
		}
		if got := IsGauge(s.Name); got != (s.Kind == schema.Gauge) {
			t.Errorf("%s: IsGauge %v, the catalogue says a %s", s.Name, got, s.Kind)
		}
	}
}

func TestIsGauge(t *testing.T) {
	gauges := []string{
		"circuit_breakers.default.cx_open", "circuit_breakers.default.cx_pool_open",
		"circuit_breakers.default.rq_pending_open", "circuit_breakers.high.rq_open",
		"circuit_breakers.default.rq_retry_open", "circuit_breakers.default.remaining_cx",
		"circuit_breakers.default.remaining_pending", "circuit_breakers.default.remaining_rq",
		"circuit_breakers.default.remaining_retries", "circuit_breakers.default.remaining_cx_pools",
		"upstream_cx_active", "upstream_rq_active", "upstream_rq_pending_active",
		"membership_healthy", "membership_total", "membership_degraded", "membership_excluded",
		"outlier_detection.ejections_active", "max_host_weight", "lb_subsets_active", "version",
		"upstream_cx_rx_bytes_buffered", "upstream_cx_tx_bytes_buffered", "http2.streams_active",
		"http2.pending_send_bytes", "health_check.healthy", "health_check.degraded",
		"cluster." + connLab + ";.upstream_cx_active", "cluster.xds-grpc.membership_total",
		"cluster_manager.active_clusters", "cluster_manager.warming_clusters", "server.live",
		"server.uptime", "server.memory_allocated", "listener_manager.total_listeners_active",
		"listener.0.0.0.0_15006.downstream_cx_active", "http.inbound_0.0.0.0_8080.downstream_rq_active",
	}
	counters := []string{
		"upstream_cx_total", "upstream_cx_overflow", "upstream_rq_pending_overflow",
		"upstream_rq_retry_overflow", "upstream_cx_connect_fail", "upstream_cx_connect_timeout",
		"upstream_cx_max_requests", "upstream_cx_idle_timeout", "upstream_cx_max_duration_reached",
		"upstream_cx_destroy", "upstream_cx_destroy_local", "upstream_cx_destroy_remote",
		"upstream_cx_destroy_with_active_rq", "upstream_cx_destroy_local_with_active_rq",
		"membership_change", "upstream_rq_total", "upstream_rq_retry", "upstream_rq_retry_success",
		"outlier_detection.ejections_enforced_total", "outlier_detection.ejections_detected_consecutive_5xx",
		"health_check.attempt", "health_check.failure", "healthy", "internal.upstream_rq_200",
		"ssl.handshake", "ssl.versions.TLSv1.3", "default.total_match_count", "update_success",
		"cluster." + connLab + ";.upstream_rq_pending_overflow", "server.initialization_time_ms",
		"bind_errors", "",
	}
	for _, s := range gauges {
		if !IsGauge(s) {
			t.Errorf("IsGauge(%q) = false, want true", s)
		}
	}
	for _, s := range counters {
		if IsGauge(s) {
			t.Errorf("IsGauge(%q) = true, want false", s)
		}
	}
	// Every stat the fixture holds for the conn-lab cluster is classified as the generator meant.
	stats, err := ClusterStats(readFixture(t, "stats_istio.txt"), connLab)
	if err != nil {
		t.Fatal(err)
	}
	for s := range stats {
		want := strings.HasPrefix(s, "circuit_breakers.") || strings.HasPrefix(s, "membership_") && s != "membership_change" ||
			strings.HasSuffix(s, "_active") || strings.HasSuffix(s, "_buffered") || s == "max_host_weight" || s == "version"
		if IsGauge(s) != want {
			t.Errorf("IsGauge(%q) = %v", s, !want)
		}
	}
}
