package envoy

import "strings"

// IsGauge reports whether an Envoy stat is a gauge by Envoy's naming, for sources that do not
// say (the text and JSON /stats). It is a fallback: when the source can tell (Prometheus
// # TYPE lines, or separate type=Counters and type=Gauges fetches) believe the source. It takes
// a cluster stat ("upstream_cx_active", "circuit_breakers.default.rq_pending_open") or a full
// name (only the last two segments are looked at). Everything it does not know is a counter,
// which is Envoy's common case.
//
// Gauges: circuit_breakers.<priority>.{cx_open,cx_pool_open,rq_pending_open,rq_open,
// rq_retry_open} and remaining_*; every *_active (upstream_cx_active, upstream_rq_active,
// upstream_rq_pending_active, outlier_detection.ejections_active, lb_subsets_active,
// http2.streams_active, downstream_cx_active, …); *_buffered and *_open; membership_* but
// membership_change; health_check.{healthy,degraded}; max_host_weight; version; warming_state;
// ring_hash_lb.* and maglev_lb.*; and a few
// server-, listener- and cluster-manager-level gauges (server.uptime, server.live, …,
// cluster_manager.active_clusters, listener_manager.total_listeners_active, …).
func IsGauge(stat string) bool {
	last, parent := stat, ""
	if i := strings.LastIndexByte(stat, '.'); i >= 0 {
		last = stat[i+1:]
		p := stat[:i]
		if j := strings.LastIndexByte(p, '.'); j >= 0 {
			p = p[j+1:]
		}
		parent = strings.TrimSuffix(p, ";")
	}
	switch {
	case strings.HasSuffix(last, "_active"),
		strings.HasSuffix(last, "_open"),
		strings.HasSuffix(last, "_buffered"),
		strings.HasPrefix(last, "remaining_"),
		strings.HasPrefix(last, "membership_") && last != "membership_change":
		return true
	}
	switch last {
	case "max_host_weight", "version", "lb_subsets_active", "warming_state",
		"lb_subsets_single_host_per_subset_duplicate", "pending_send_bytes", "deferred_stream_close":
		return true
	case "healthy", "degraded":
		return parent == "health_check"
	case "size", "min_hashes_per_host", "max_hashes_per_host":
		return parent == "ring_hash_lb"
	case "min_entries_per_host", "max_entries_per_host":
		return parent == "maglev_lb"
	}
	switch parent + "." + last {
	case "cluster_manager.active_clusters", "cluster_manager.warming_clusters",
		"server.live", "server.state", "server.uptime", "server.concurrency",
		"server.memory_allocated", "server.memory_heap_size", "server.memory_physical_size",
		"server.total_connections", "server.parent_connections", "server.hot_restart_epoch",
		"server.days_until_first_cert_expiring", "server.seconds_until_first_ocsp_response_expiring",
		"server.stats_recent_lookups", "server.hot_restart_generation",
		"listener_manager.total_filter_chains_draining", "listener_manager.workers_started":
		return true
	}
	return false
}
