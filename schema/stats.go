package schema

import (
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Stat catalogues: the names a source of stats can have, each a counter, a gauge or a
// histogram. A local backend's are a closed set (labrun makes them: any other name is an
// error); Envoy's are open (extensions and versions add some) but their families are known,
// from Envoy's documentation (configuration/upstream/cluster_manager/cluster_stats,
// http/http_conn_man/stats, listeners/stats, observability/statistics), so another name is a
// warning with the nearest known one. vet reads expressions' stat names against them; a delta
// of a gauge or of a histogram is refused before the run.

// StatKind says how a stat counts.
type StatKind uint8

// The kinds of stat.
const (
	// Counter only goes up (until its Envoy cluster is rebuilt): deltas compare two of them.
	Counter StatKind = iota
	// Gauge is a level (active connections, an open circuit breaker): it has no delta.
	Gauge
	// Histogram is read as its quantiles, <name>.p50 … <name>.p100.
	Histogram
)

func (k StatKind) String() string {
	switch k {
	case Gauge:
		return "gauge"
	case Histogram:
		return "histogram"
	}
	return "counter"
}

// Stat is one stat of a catalogue.
type Stat struct {
	Name string
	Kind StatKind
	Unit Unit
	// Doc is one sentence: what it counts.
	Doc string
}

// Catalogue is the stats a source can have.
type Catalogue struct {
	// What names the source in messages ("a local backend", "an Envoy cluster").
	What string
	// Closed says no other name can appear.
	Closed bool
	// Always says a snapshot of the source has every stat named in the catalogue (not those
	// of a pattern: rq_<code>) from its first on, whatever the run did.
	Always bool
	stats  map[string]Stat
	// patterns are the families with a variable part (rq_<code>,
	// circuit_breakers.<priority>.rq_open), each with an example name.
	patterns []statPattern
	// elsewhere are stats of the same program that a snapshot of this source never holds:
	// where they live, by name.
	elsewhere map[string]string
	// summary lists the catalogue in a few words, for messages.
	summary string
}

// Summary lists the catalogue in a few words, for messages.
func (c *Catalogue) Summary() string { return c.summary }

// AlwaysHas reports whether every snapshot of the source has stat name (Always).
func (c *Catalogue) AlwaysHas(name string) bool {
	_, ok := c.stats[name]
	return c.Always && ok
}

// AlwaysLen is the number of stats every snapshot of the source has (0 unless Always).
func (c *Catalogue) AlwaysLen() int {
	if !c.Always {
		return 0
	}
	return len(c.stats)
}

// AlwaysHasCounter reports whether every delta of two snapshots of the source has stat name:
// a delta holds the later snapshot's counters, and every snapshot has this one (Always).
func (c *Catalogue) AlwaysHasCounter(name string) bool {
	s, ok := c.stats[name]
	return c.Always && ok && s.Kind == Counter
}

// AlwaysCounters is the number of counters every delta of two snapshots of the source has (0
// unless Always).
func (c *Catalogue) AlwaysCounters() int {
	if !c.Always {
		return 0
	}
	n := 0
	for _, s := range c.stats {
		if s.Kind == Counter {
			n++
		}
	}
	return n
}

type statPattern struct {
	re      *regexp.Regexp
	example string
	stat    Stat
}

// quantileRE is a histogram quantile's suffix: .p50, .p99, .p999 (P99.9), .p100.
var quantileRE = regexp.MustCompile(`^(.+)\.p[0-9]+$`)

// Quantiles are the quantiles Envoy's stats dump writes of every histogram (text: P0(…) …
// P100(…); JSON: supported_quantiles), as labrun names them: the quantile without its dot
// (P99.5 is p995). Envoy's list is fixed (its stats configuration sets buckets, not these), so
// another (.p42) is never in a snapshot.
var Quantiles = []string{"p0", "p25", "p50", "p75", "p90", "p95", "p99", "p995", "p999", "p100"}

// IsQuantile says name ends in one of Quantiles (upstream_rq_time.p995).
func IsQuantile(name string) bool {
	_, q, ok := QuantileOf(name)
	return ok && slices.Contains(Quantiles, q)
}

// QuantileOf splits name, a histogram's quantile as read (upstream_rq_time.p99), into the
// histogram and the quantile's suffix; ok is false where name has no quantile-like suffix.
func QuantileOf(name string) (histogram, quantile string, ok bool) {
	i := strings.LastIndexByte(name, '.')
	if i <= 0 {
		return "", "", false
	}
	return name[:i], name[i+1:], true
}

// Lookup returns the stat called name (a histogram's quantile is the histogram's, with
// Kind Histogram).
func (c *Catalogue) Lookup(name string) (Stat, bool) {
	if s, ok := c.stats[name]; ok {
		return s, true
	}
	if m := quantileRE.FindStringSubmatch(name); m != nil {
		if s, ok := c.Lookup(m[1]); ok && s.Kind == Histogram {
			s.Name = name
			return s, true
		}
	}
	for _, p := range c.patterns {
		if p.re.MatchString(name) {
			s := p.stat
			s.Name = name
			return s, true
		}
	}
	return Stat{}, false
}

// IsHistogram reports whether name is a histogram itself, read only through its quantiles.
func (c *Catalogue) IsHistogram(name string) bool {
	s, ok := c.stats[name]
	return ok && s.Kind == Histogram
}

// Elsewhere says where a stat that a snapshot of this source never holds lives ("" when the
// name is not such a stat).
func (c *Catalogue) Elsewhere(name string) string { return c.elsewhere[name] }

// Names lists the catalogue's names, a family by its example (rq_503), sorted: the
// candidates of a did-you-mean and of an editor's completion.
func (c *Catalogue) Names() []string {
	out := make([]string, 0, len(c.stats)+len(c.patterns))
	for n, s := range c.stats {
		if s.Kind == Histogram {
			n += ".p99"
		}
		out = append(out, n)
	}
	for _, p := range c.patterns {
		out = append(out, p.example)
	}
	sort.Strings(out)
	return out
}

// Stats lists the catalogue's stats of fixed names, sorted by name.
func (c *Catalogue) Stats() []Stat {
	out := make([]Stat, 0, len(c.stats))
	for _, s := range c.stats {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// catalogue builds a catalogue from lines "name kind unit doc" (kind: c, g or h; unit: - for
// none), so that the lists below read as Envoy's documentation tables do.
func catalogue(what string, closed bool, table string) *Catalogue {
	c := &Catalogue{What: what, Closed: closed, stats: map[string]Stat{}, elsewhere: map[string]string{}}
	for _, line := range strings.Split(table, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		f := strings.SplitN(line, " ", 4)
		s := Stat{Name: f[0], Kind: map[string]StatKind{"c": Counter, "g": Gauge, "h": Histogram}[f[1]]}
		if f[2] != "-" {
			s.Unit = Unit(f[2])
		}
		if len(f) > 3 {
			s.Doc = f[3]
		}
		c.stats[s.Name] = s
	}
	return c
}

// pattern adds a family: names matching re (anchored here), shown as example.
func (c *Catalogue) pattern(re, example string, kind StatKind, unit Unit, doc string) *Catalogue {
	c.patterns = append(c.patterns, statPattern{regexp.MustCompile("^(?:" + re + ")$"), example, Stat{Kind: kind, Unit: unit, Doc: doc}})
	return c
}

// livesElsewhere marks the names of table (first word of each line) as stats of where.
func (c *Catalogue) livesElsewhere(where, table string) *Catalogue {
	for _, line := range strings.Split(table, "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			if _, ok := c.stats[f[0]]; !ok {
				c.elsewhere[f[0]] = strings.ReplaceAll(where, "NAME", f[0])
			}
		}
	}
	return c
}

// BackendStats is the local backend's catalogue (driver/local makes exactly these; its tests
// check each name it records against this list). Each stat but rq_<code> also has the dotted
// name Envoy's HTTP connection manager gives the same count (http.downstream_rq_total), so
// that a local scenario reads a name as one on kube does.
var BackendStats = func() *Catalogue {
	c := catalogue("a local backend", true, backendTable)
	for _, s := range c.Stats() {
		s.Name = BackendHTTPAliases[s.Name]
		c.stats[s.Name] = s
	}
	c.summary = "rq_total, rq_<code> (e.g. rq_503), rq_1xx … rq_5xx, cx_total, cx_rx_bytes_total, cx_tx_bytes_total, cx_active, rq_active; each but rq_<code> also as http.downstream_<name>"
	c.Always = true // driver/local's stats() sets each of them (its tests hold it to the table)
	return c.pattern(`rq_[1-5][0-9][0-9]`, "rq_503", Counter, Count,
		"responses with that status code (the stat exists once one such response was sent)")
}()

// BackendHTTPAliases maps each stat of the local backend's table (all but rq_<code>) to the
// name Envoy's HTTP connection manager gives the same count, without the listener's stat
// prefix: one count under two names, which driver/local records alike and a record's check
// holds to.
var BackendHTTPAliases = func() map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(backendTable), "\n") {
		name := strings.Fields(line)[0]
		m[name] = "http.downstream_" + name
	}
	return m
}()

// backendTable is the local backend's stats, as catalogue reads them.
const backendTable = `
rq_total c count requests answered
rq_1xx c count responses with a 1xx status
rq_2xx c count responses with a 2xx status
rq_3xx c count responses with a 3xx status
rq_4xx c count responses with a 4xx status
rq_5xx c count responses with a 5xx status
cx_total c count connections accepted
cx_rx_bytes_total c bytes bytes received
cx_tx_bytes_total c bytes bytes sent
cx_active g count connections open now
rq_active g count requests in progress now`

// EnvoyClusterStats is the catalogue of an Envoy cluster's stats, named as a snapshot records
// them: without the cluster.<name>. prefix.
var EnvoyClusterStats = func() *Catalogue {
	c := catalogue("an Envoy cluster", false, envoyClusterTable)
	c.summary = "Envoy's cluster statistics (upstream_*, membership_*, circuit_breakers.<priority>.*, outlier_detection.*, health_check.*, lb_*)"
	code := `(?:[1-5][0-9][0-9]|[1-5]xx)`
	c.pattern(`upstream_rq_`+code, "upstream_rq_503", Counter, Count, "final responses with that status code or class")
	c.pattern(`(?:canary|internal|external|retry)\.upstream_rq_(?:`+code[3:len(code)-1]+`|completed)`, "retry.upstream_rq_503", Counter, Count,
		"responses of that origin (canary, internal, external) or that triggered a retry (retry.), by status code or class")
	c.pattern(`(?:canary|internal|external)\.upstream_rq_time`, "internal.upstream_rq_time.p99", Histogram, Millis, "request time of that origin")
	c.pattern(`zone\.[^.]+\.[^.]+\.upstream_rq_`+code, "zone.a.b.upstream_rq_2xx", Counter, Count, "responses from one zone to another")
	c.pattern(onOffGauges, "circuit_breakers.default.rq_pending_open", Gauge, Plain,
		"1 while that circuit breaker is at its limit and admits nothing, else 0 (per priority: default, high)")
	c.pattern(`circuit_breakers\.[a-z_]+\.remaining_(?:cx|pending|rq|retries|cx_pools)`, "circuit_breakers.default.remaining_pending", Gauge, Count,
		"what remains until that circuit breaker opens (only with track_remaining)")
	c.pattern(`(?:ssl|tcp_stats)\.[A-Za-z0-9_.-]+`, "ssl.handshake", Counter, Count, "TLS and TCP statistics of the cluster's connections")
	c.pattern(`http[123]\.(?:streams_active|pending_send_bytes|deferred_stream_close)`, "http2.streams_active", Gauge, Count, "the upstream codec's active streams and buffered bytes")
	c.pattern(`http[123]\.[a-z0-9_]+`, "http2.rx_reset", Counter, Count, "the upstream codec's protocol events")
	c.livesElsewhere("Envoy's HTTP connection manager (http.<stat_prefix>.NAME), not of a cluster", envoyHCMTable)
	c.livesElsewhere("an Envoy listener (listener.<address>.NAME), not of a cluster", "no_filter_chain_match")
	c.livesElsewhere("the Envoy server (server.NAME), not of a cluster", envoyServerTable)
	c.livesElsewhere("Envoy's cluster manager (cluster_manager.NAME), not of one cluster", "cluster_added\ncluster_modified\ncluster_removed\ncluster_updated\nactive_clusters\nwarming_clusters")
	c.livesElsewhere("Envoy's listener manager (listener_manager.NAME), not of a cluster", "listener_added\nlistener_modified\nlistener_removed\ntotal_listeners_active\ntotal_listeners_warming\ntotal_listeners_draining")
	return c
}()

// onOffGauges are a circuit breaker's open gauges, which Envoy sets to 1 while it is at its
// limit and to 0 otherwise: no other value.
const onOffGauges = `circuit_breakers\.[a-z_]+\.(?:cx_open|cx_pool_open|rq_pending_open|rq_open|rq_retry_open)`

var onOffGauge = regexp.MustCompile("^(?:" + onOffGauges + ")$")

// OnOff says whether stat, an Envoy cluster's stat as a snapshot records it, is only ever 0
// or 1 (circuit_breakers.default.rq_pending_open): a claim that holds of both proves nothing.
func OnOff(stat string) bool { return onOffGauge.MatchString(stat) }

// envoyClusterTable is Envoy's cluster statistics (cluster_stats.rst): general, health check,
// outlier detection, load balancer, subsets, ring hash, Maglev, timeout budgets and request
// and response sizes.
const envoyClusterTable = `
upstream_cx_total c count connections opened
upstream_cx_active g count connections open now
upstream_cx_http1_total c count HTTP/1.1 connections
upstream_cx_http2_total c count HTTP/2 connections
upstream_cx_http3_total c count HTTP/3 connections
upstream_cx_connect_fail c count connection failures
upstream_cx_connect_timeout c count connection timeouts
upstream_cx_connect_with_0_rtt c count connections able to send 0-RTT requests
upstream_cx_idle_timeout c count connections closed by the idle timeout
upstream_cx_max_duration_reached c count connections closed at their maximum duration
upstream_cx_connect_attempts_exceeded c count consecutive connection failures beyond the configured attempts
upstream_cx_overflow c count times the connection circuit breaker overflowed
upstream_cx_connect_ms h ms connection establishment time
upstream_cx_length_ms h ms connection length
upstream_cx_destroy c count connections destroyed
upstream_cx_destroy_local c count connections destroyed locally
upstream_cx_destroy_remote c count connections destroyed remotely
upstream_cx_destroy_with_active_rq c count connections destroyed with a request in flight
upstream_cx_destroy_local_with_active_rq c count connections destroyed locally with a request in flight
upstream_cx_destroy_remote_with_active_rq c count connections destroyed remotely with a request in flight
upstream_cx_close_notify c count connections closed by Connection: close or GOAWAY
upstream_cx_rx_bytes_total c bytes bytes received
upstream_cx_rx_bytes_buffered g bytes received bytes buffered now
upstream_cx_tx_bytes_total c bytes bytes sent
upstream_cx_tx_bytes_buffered g bytes sent bytes buffered now
upstream_cx_pool_overflow c count times the connection pool circuit breaker overflowed
upstream_cx_preconnect_blocked c count anticipatory connections the pool refused
upstream_cx_preconnect_skipped c count anticipatory connections skipped for an ineligible host
upstream_cx_preconnect_started c count anticipatory connections opened
upstream_cx_protocol_error c count connection protocol errors
upstream_cx_max_requests c count connections closed at their maximum requests
upstream_cx_none_healthy c count connections not opened for want of a healthy host
upstream_rq_total c count requests
upstream_rq_active g count requests in flight now
upstream_rq_pending_total c count requests that waited for a pool connection
upstream_rq_active_overflow c count requests refused by the max_requests circuit breaker on a ready connection
upstream_rq_pending_overflow c count requests that overflowed the pool or requests circuit breaker and failed
upstream_rq_pending_failure_eject c count requests failed by a pool connection failure
upstream_rq_pending_active g count requests waiting for a pool connection now
upstream_rq_per_cx h count requests per upstream connection
upstream_rq_cancelled c count requests cancelled before a pool connection
upstream_rq_maintenance_mode c count requests answered 503 by maintenance mode
upstream_rq_timeout c count requests that timed out waiting for a response
upstream_rq_max_duration_reached c count requests closed at their maximum duration
upstream_rq_per_try_timeout c count requests that hit the per-try timeout
upstream_rq_rx_reset c count requests reset by the upstream with an error
upstream_rq_rx_reset_no_error c count requests reset by the upstream without an error
upstream_rq_tx_reset c count requests reset locally
upstream_rq_retry c count retries
upstream_rq_retry_backoff_exponential c count retries with exponential backoff
upstream_rq_retry_backoff_ratelimited c count retries with rate-limited backoff
upstream_rq_retry_limit_exceeded c count requests not retried for the maximum retries
upstream_rq_retry_success c count successful retries
upstream_rq_retry_overflow c count requests not retried for the circuit breaker or retry budget
upstream_rq_completed c count upstream requests completed
upstream_rq_time h ms request time
upstream_flow_control_paused_reading_total c count times flow control paused reading from the upstream
upstream_flow_control_resumed_reading_total c count times flow control resumed reading from the upstream
upstream_flow_control_backed_up_total c count times the upstream connection backed up
upstream_flow_control_drained_total c count times the upstream connection drained
upstream_internal_redirect_failed_total c count failed internal redirects
upstream_internal_redirect_succeeded_total c count internal redirects that made a second request
membership_change c count membership changes
membership_healthy g count healthy members now (health checking and outlier detection)
membership_degraded g count degraded members now
membership_excluded g count excluded members now
membership_total g count members now
retry_or_shadow_abandoned c count retries or shadows abandoned for buffer limits
config_reload c count config reloads
update_attempt c count membership updates attempted
update_success c count membership updates that succeeded
update_failure c count membership updates that failed
update_duration h ms time spent updating configs
update_empty c count membership updates with an empty assignment
update_no_rebuild c count membership updates that rebuilt nothing
version g - hash of the last fetched config
warming_state g - the cluster's warming state
max_host_weight g - maximum weight of any host
bind_errors c count errors binding to the source address
assignment_timeout_received c count assignments received with a lease
assignment_stale c count assignments gone stale before a new one
health_check.attempt c count health checks
health_check.success c count successful health checks
health_check.failure c count failed health checks
health_check.passive_failure c count health check failures from passive events
health_check.network_failure c count health check failures from network errors
health_check.verify_cluster c count health checks that verified the cluster name
health_check.healthy g count healthy members (health checking)
health_check.degraded g count degraded members (health checking)
outlier_detection.ejections_enforced_total c count enforced ejections
outlier_detection.ejections_active g count hosts ejected now
outlier_detection.ejections_overflow c count ejections aborted by max_ejection_percent
outlier_detection.ejections_enforced_consecutive_5xx c count enforced consecutive-5xx ejections
outlier_detection.ejections_detected_consecutive_5xx c count detected consecutive-5xx ejections
outlier_detection.ejections_enforced_success_rate c count enforced success-rate ejections
outlier_detection.ejections_detected_success_rate c count detected success-rate ejections
outlier_detection.ejections_enforced_consecutive_gateway_failure c count enforced consecutive gateway failure ejections
outlier_detection.ejections_detected_consecutive_gateway_failure c count detected consecutive gateway failure ejections
outlier_detection.ejections_enforced_consecutive_local_origin_failure c count enforced consecutive local-origin failure ejections
outlier_detection.ejections_detected_consecutive_local_origin_failure c count detected consecutive local-origin failure ejections
outlier_detection.ejections_enforced_local_origin_success_rate c count enforced local-origin success-rate ejections
outlier_detection.ejections_detected_local_origin_success_rate c count detected local-origin success-rate ejections
outlier_detection.ejections_enforced_failure_percentage c count enforced failure-percentage ejections
outlier_detection.ejections_detected_failure_percentage c count detected failure-percentage ejections
outlier_detection.ejections_enforced_failure_percentage_local_origin c count enforced local-origin failure-percentage ejections
outlier_detection.ejections_detected_failure_percentage_local_origin c count detected local-origin failure-percentage ejections
outlier_detection.ejections_total c count ejections of any type, enforced or not (deprecated)
outlier_detection.ejections_consecutive_5xx c count consecutive-5xx ejections, enforced or not (deprecated)
lb_recalculate_zone_structures c count times locality-aware routing structures were rebuilt
lb_healthy_panic c count requests balanced in panic mode
lb_zone_cluster_too_small c count no zone-aware routing: the upstream cluster is too small
lb_zone_routing_all_directly c count requests sent to the same zone
lb_zone_routing_sampled c count requests sampled to the same zone
lb_zone_routing_cross_zone c count requests sent across zones in zone-aware mode
lb_local_cluster_not_ok c count local host set missing or in panic mode
lb_zone_no_capacity_left c count random zone choices after a rounding error
original_dst_host_invalid c count invalid hosts given to the original-destination balancer
lb_subsets_active g count subsets available now
lb_subsets_created c count subsets created
lb_subsets_removed c count subsets removed for want of hosts
lb_subsets_selected c count times a subset was selected
lb_subsets_fallback c count times the subset fallback policy was used
lb_subsets_fallback_panic c count times subset panic mode triggered
lb_subsets_single_host_per_subset_duplicate g count duplicate hosts with single_host_per_subset
ring_hash_lb.size g count host hashes on the ring
ring_hash_lb.min_hashes_per_host g count fewest hashes of one host
ring_hash_lb.max_hashes_per_host g count most hashes of one host
maglev_lb.min_entries_per_host g count fewest entries of one host
maglev_lb.max_entries_per_host g count most entries of one host
upstream_rq_timeout_budget_percent_used h - percentage of the global timeout used
upstream_rq_timeout_budget_per_try_percent_used h - percentage of the per-try timeout used
upstream_rq_headers_size h bytes request header size
upstream_rq_headers_count h count request header count
upstream_rq_body_size h bytes request body size
upstream_rs_headers_size h bytes response header size
upstream_rs_headers_count h count response header count
upstream_rs_body_size h bytes response body size`

// envoyHCMTable is the HTTP connection manager's statistics (http_conn_man/stats.rst) and a
// listener's.
const envoyHCMTable = `
downstream_cx_total
downstream_cx_ssl_total
downstream_cx_http1_total
downstream_cx_upgrades_total
downstream_cx_http2_total
downstream_cx_http3_total
downstream_cx_destroy
downstream_cx_destroy_remote
downstream_cx_destroy_local
downstream_cx_destroy_active_rq
downstream_cx_destroy_local_active_rq
downstream_cx_destroy_remote_active_rq
downstream_cx_active
downstream_cx_ssl_active
downstream_cx_http1_active
downstream_cx_upgrades_active
downstream_cx_http2_active
downstream_cx_http3_active
downstream_cx_protocol_error
downstream_cx_length_ms
downstream_cx_rx_bytes_total
downstream_cx_rx_bytes_buffered
downstream_cx_tx_bytes_total
downstream_cx_tx_bytes_buffered
downstream_cx_drain_close
downstream_cx_idle_timeout
downstream_cx_max_duration_reached
downstream_cx_max_requests_reached
downstream_cx_overload_disable_keepalive
downstream_flow_control_paused_reading_total
downstream_flow_control_resumed_reading_total
downstream_rq_total
downstream_rq_http1_total
downstream_rq_http2_total
downstream_rq_http3_total
downstream_rq_active
downstream_rq_rejected_via_ip_detection
downstream_rq_response_before_rq_complete
downstream_rq_rx_reset
downstream_rq_tx_reset
downstream_rq_non_relative_path
downstream_rq_too_large
downstream_rq_completed
downstream_rq_failed_path_normalization
downstream_rq_1xx
downstream_rq_2xx
downstream_rq_3xx
downstream_rq_4xx
downstream_rq_5xx
downstream_rq_ws_on_non_ws_route
downstream_rq_time
downstream_rq_idle_timeout
downstream_rq_max_duration_reached
downstream_rq_timeout
downstream_rq_overload_close
downstream_rq_redirected_with_normalized_path
rs_too_large`

// envoyServerTable is the server's statistics (observability/statistics.rst).
const envoyServerTable = `
uptime
concurrency
memory_allocated
memory_heap_size
memory_physical_size
live
state
parent_connections
total_connections
days_until_first_cert_expiring
seconds_until_first_ocsp_response_expiring
hot_restart_epoch
hot_restart_generation
initialization_time_ms
debug_assertion_failures
envoy_bug_failures
static_unknown_fields
dynamic_unknown_fields
wip_protos`
