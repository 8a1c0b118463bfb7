package interp

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// envoyStatGroups are groups of an Envoy cluster's stats that Envoy makes together, each as
// one struct (envoy/upstream/upstream.h: ALL_CLUSTER_TRAFFIC_STATS, ALL_CLUSTER_ENDPOINT_STATS):
// when the cluster is made, or, with deferred creation, the whole group at its first use. A
// stats matcher (Istio's inclusion list) keeps the same names of it in every dump of one
// proxy. So two snapshots of one cluster of one proxy that both hold a stat of a group hold
// the same counters of it: a counter of the group in one and not in the other was taken out
// or put in after the run. Counters Envoy makes as they first count (upstream_rq_503,
// upstream_rq_2xx) are in no group.
var envoyStatGroups = []struct {
	name     string
	counters []string
	gauges   []string
}{
	{"traffic", []string{
		"bind_errors", "original_dst_host_invalid", "retry_or_shadow_abandoned",
		"upstream_cx_close_notify", "upstream_cx_connect_attempts_exceeded", "upstream_cx_connect_fail",
		"upstream_cx_connect_timeout", "upstream_cx_connect_with_0_rtt", "upstream_cx_destroy",
		"upstream_cx_destroy_local", "upstream_cx_destroy_local_with_active_rq", "upstream_cx_destroy_remote",
		"upstream_cx_destroy_remote_with_active_rq", "upstream_cx_destroy_with_active_rq",
		"upstream_cx_http1_total", "upstream_cx_http2_total", "upstream_cx_http3_total",
		"upstream_cx_idle_timeout", "upstream_cx_max_duration_reached", "upstream_cx_max_requests",
		"upstream_cx_none_healthy", "upstream_cx_overflow", "upstream_cx_pool_overflow",
		"upstream_cx_protocol_error", "upstream_cx_rx_bytes_total", "upstream_cx_total",
		"upstream_cx_tx_bytes_total", "upstream_flow_control_backed_up_total",
		"upstream_flow_control_drained_total", "upstream_flow_control_paused_reading_total",
		"upstream_flow_control_resumed_reading_total", "upstream_internal_redirect_failed_total",
		"upstream_internal_redirect_succeeded_total", "upstream_rq_cancelled", "upstream_rq_completed",
		"upstream_rq_maintenance_mode", "upstream_rq_max_duration_reached",
		"upstream_rq_pending_failure_eject", "upstream_rq_pending_overflow", "upstream_rq_pending_total",
		"upstream_rq_0rtt", "upstream_rq_per_try_timeout", "upstream_rq_per_try_idle_timeout",
		"upstream_rq_retry", "upstream_rq_retry_backoff_exponential", "upstream_rq_retry_backoff_ratelimited",
		"upstream_rq_retry_limit_exceeded", "upstream_rq_retry_overflow", "upstream_rq_retry_success",
		"upstream_rq_rx_reset", "upstream_rq_timeout", "upstream_rq_total", "upstream_rq_tx_reset",
		"upstream_http3_broken",
	}, []string{"upstream_cx_active", "upstream_cx_rx_bytes_buffered", "upstream_cx_tx_bytes_buffered", "upstream_rq_active", "upstream_rq_pending_active"}},
	{"endpoint", []string{"membership_change"},
		[]string{"max_host_weight", "membership_degraded", "membership_excluded", "membership_healthy", "membership_total"}},
}

// envoyGroupAbsences are the snapshots of an Envoy cluster (not a local backend's) that hold
// a counter of one of envoyStatGroups which another snapshot of the same source and pod, holding
// stats of that group too, lacks. A delta counts a counter absent from its first snapshot from
// 0: before, a failed run whose membership_change went 2 → 4 (delta 2, the claim == 1) edited
// to hold none in the first snapshot and 1 in the second (the seal computed again) replayed
// PASSED, delta 1.
func (r *Record) envoyGroupAbsences() []string {
	type read struct {
		what string
		sn   *SnapshotRecord
	}
	bySource := map[string][]read{}
	for _, name := range sortedResultNames(r) {
		res := r.Results[name]
		if res == nil {
			continue
		}
		switch v := res.Value.(type) {
		case *SnapshotRecord:
			if v != nil && !res.Sampled {
				bySource[v.Source] = append(bySource[v.Source], read{name, v})
			}
		case *SeriesRecord:
			if v != nil {
				for i, sn := range v.Samples {
					if sn != nil {
						bySource[sn.Source] = append(bySource[sn.Source], read{fmt.Sprintf("%s (sample %d)", name, i+1), sn})
					}
				}
			}
		}
	}
	var msgs []string
sources:
	for _, src := range slices.Sorted(maps.Keys(bySource)) {
		if src == "" || strings.HasPrefix(src, "backend ") {
			// No source said (which cluster is unknown), or labrun's local backend (its own
			// sums: localBackendContradictions).
			continue
		}
		reads := bySource[src]
		for i, a := range reads {
			for _, b := range reads[i+1:] {
				if !a.sn.SamePod(b.sn) {
					continue
				}
				for _, g := range envoyStatGroups {
					if !holdsAnyOf(a.sn, g.counters, g.gauges) || !holdsAnyOf(b.sn, g.counters, g.gauges) {
						continue
					}
					for _, c := range g.counters {
						_, inA := a.sn.Counters[c]
						_, inB := b.sn.Counters[c]
						if inA == inB {
							continue
						}
						has, lacks := a, b
						if inB {
							has, lacks = b, a
						}
						msgs = append(msgs, fmt.Sprintf("step %s: its snapshot of %s lacks counter %s, which step %s's holds, though both hold stats Envoy makes with it (its cluster's %s stats, made together, and kept alike by the proxy's stats matcher)", lacks.what, src, c, has.what, g.name))
						continue sources // one a source
					}
				}
			}
		}
	}
	return msgs
}

// holdsAnyOf says whether sn holds one of counters or gauges.
func holdsAnyOf(sn *SnapshotRecord, counters, gauges []string) bool {
	for _, c := range counters {
		if _, ok := sn.Counters[c]; ok {
			return true
		}
	}
	for _, g := range gauges {
		if _, ok := sn.Gauges[g]; ok {
			return true
		}
	}
	return false
}
