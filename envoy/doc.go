// Package envoy parses what an Envoy admin endpoint returns: /stats in text, JSON and
// Prometheus form, /clusters in text and JSON form, /config_dump, and access-log lines in
// Istio's default text format or its JSON format. Every function is pure, takes the raw bytes
// the admin endpoint (or `pilot-agent request GET …`) printed, never panics, and does no I/O.
//
// # Cluster scoping
//
// A stat belongs to a cluster when its name is "cluster.<name>;.<stat>" (Istio ≥ 1.25 sets
// alt_stat_name = name + ";") or "cluster.<name>.<stat>" (older proxies, plain Envoy). The
// second form is ambiguous: "cluster.outbound|8080||backend.x.svc.cluster.local.upstream_rq_total"
// starts with "cluster.outbound|8080||backend." although it is a stat of another cluster. The
// parsers resolve it the way Envoy's names are built: the dotted remainder is a stat of <name>
// only if its first segment cannot be a DNS label (it has a '_' or an upper-case letter, as
// nearly every Envoy stat does) or it is one of the few cluster stats whose first segment is a
// plain word: version, <match>.total_match_count, {internal,external,canary,retry}.upstream_*,
// zone.<from>.<to>.upstream_*, ssl.<stat> and ssl.{ciphers,curves,sigalgs,versions}.*,
// http1/2/3.<stat>, and grpc.<Service>.<Method>.* (gRPC names have capitals).
// A namespace, service or domain label never contains '_' or upper case, so another cluster
// whose name extends <name> with ".<label>…" is never taken for <name>. [ClusterStat] is the
// rule; [StatsFilter] is the same rule as an RE2 for Envoy's server-side /stats?filter=.
//
// Stat names returned for a cluster have the "cluster.<name>;." or "cluster.<name>." prefix
// removed; full names (cluster "") have every ";." replaced by ".", so both proxy generations
// yield the same names.
//
// # Counters and gauges
//
// Neither the text nor the JSON form says whether a stat is a counter or a gauge. Callers that
// need to know fetch type=Counters and type=Gauges separately, read the Prometheus form (its
// # TYPE lines), or fall back on [IsGauge], which knows Envoy's naming.
package envoy
