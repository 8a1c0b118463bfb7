package local

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/envoy"
	"labrun.dev/labrun/schema"
)

// statsReader reads a local backend's counters, a Prometheus endpoint, or an Envoy admin
// endpoint (a proxy the user runs on this machine).
type statsReader struct{ w *world }

// Snapshot reads one source. Exactly one of backend, prometheus, admin must be set:
//
//   - backend: the backend's counters and gauges, read from its process (no HTTP, so the read
//     does not count itself);
//   - prometheus: GET the URL, split counters and gauges by the # TYPE lines;
//   - admin: GET <admin>/stats?filter=<cluster>&type=Counters and &type=Gauges (and
//     Histograms), keep only the exact cluster's stats; hosts reads /clusters?format=json.
func (s *statsReader) Snapshot(ctx context.Context, req schema.Snapshot) (schema.StatsSnapshot, error) {
	snap := schema.StatsSnapshot{Source: req.Source()}
	switch {
	case req.Envoy != nil:
		return snap, errors.New("snapshot: envoy reads a pod's sidecar (kube target); on the local target use admin: <Envoy admin URL>")
	case req.Backend != "":
		if req.Cluster != "" || req.Hosts || req.Histograms {
			return snap, errors.New("snapshot: cluster, hosts and histograms apply to admin, not to a backend")
		}
		b, ok := s.w.backends[req.Backend]
		if !ok {
			return snap, fmt.Errorf("snapshot: no backend %q (backends: %s)", req.Backend, knownNames(s.w.backends))
		}
		c, g, err := b.read()
		if err != nil {
			return snap, fmt.Errorf("snapshot: backend %s: %w", req.Backend, err)
		}
		// No artifact: the stats are read as they are, not parsed from a text, and the record
		// holds them; their Prometheus text would be a second copy of each (a long run's
		// report kept 10,000 of them).
		snap.Counters, snap.Gauges = c, g
		return snap, nil
	case req.Prometheus != "":
		if req.Cluster != "" || req.Hosts || req.Histograms {
			return snap, errors.New("snapshot: cluster, hosts and histograms apply to admin, not to prometheus")
		}
		body, err := s.w.http.get(ctx, req.Prometheus, req.Prometheus)
		snap.Artifacts = keep(snap.Artifacts, "prometheus.txt", body)
		if err != nil {
			return snap, fmt.Errorf("snapshot: %w", err)
		}
		counters, gauges, err := prometheusStats(body)
		if err != nil {
			return snap, fmt.Errorf("snapshot: %s: %w", req.Prometheus, err)
		}
		snap.Counters, snap.Gauges = counters, gauges
		return snap, nil
	case req.Admin != "":
		return s.adminSnapshot(ctx, req, snap)
	}
	return snap, errors.New("snapshot: needs one of backend, prometheus, admin")
}

func (s *statsReader) adminSnapshot(ctx context.Context, req schema.Snapshot, snap schema.StatsSnapshot) (schema.StatsSnapshot, error) {
	if req.Cluster == "" {
		return snap, errors.New("snapshot: admin needs cluster (the exact Envoy cluster name)")
	}
	filter := statsFilter(req.Cluster)
	read := func(kind, artifact string, parse func([]byte, string) (map[string]float64, error)) (schema.Stats, error) {
		u, err := adminURL(req.Admin, "stats", url.Values{"filter": {filter}, "type": {kind}})
		if err != nil {
			return nil, err
		}
		shown := fmt.Sprintf("%s (cluster %s's stats)", envoy.ShownPath(u), req.Cluster)
		body, err := s.w.http.get(ctx, u, shown)
		snap.Artifacts = keep(snap.Artifacts, artifact, body)
		if err != nil {
			return nil, err
		}
		stats, err := parse(body, req.Cluster)
		if err != nil {
			return nil, fmt.Errorf("GET %s: %w", shown, err)
		}
		return stats, nil
	}
	var err error
	if snap.Counters, err = read("Counters", "stats-counters.txt", clusterStats); err != nil {
		return snap, fmt.Errorf("snapshot: %w", err)
	}
	if snap.Gauges, err = read("Gauges", "stats-gauges.txt", clusterStats); err != nil {
		return snap, fmt.Errorf("snapshot: %w", err)
	}
	if req.Histograms {
		if snap.Histograms, err = read("Histograms", "stats-histograms.txt", clusterHistograms); err != nil {
			return snap, fmt.Errorf("snapshot: %w", err)
		}
	}
	if req.Hosts {
		u, err := adminURL(req.Admin, "clusters", url.Values{"format": {"json"}})
		if err != nil {
			return snap, fmt.Errorf("snapshot: %w", err)
		}
		body, err := s.w.http.get(ctx, u, u)
		snap.Artifacts = keep(snap.Artifacts, "clusters.json", body)
		if err != nil {
			return snap, fmt.Errorf("snapshot: %w", err)
		}
		if snap.Hosts, err = clusterHosts(body, req.Cluster); err != nil {
			return snap, fmt.Errorf("snapshot: %s: %w", u, err)
		}
	}
	return snap, nil
}

// Config reads <admin>/config_dump (with ?include_eds for endpoints) and selects one cluster,
// listener, route configuration or cluster's endpoints (or the whole dump), read through
// Envoy's types, then the value at path.
func (s *statsReader) Config(ctx context.Context, req schema.Config) (schema.ConfigResult, error) {
	var res schema.ConfigResult
	if req.Envoy != nil {
		return res, errors.New("config: envoy reads a pod's sidecar (kube target); on the local target use admin: <Envoy admin URL>")
	}
	if req.Admin == "" {
		return res, errors.New("config: needs admin (an Envoy admin URL)")
	}
	set := 0
	for _, s := range []string{req.Cluster, req.Listener, req.Route, req.Endpoints} {
		if s != "" {
			set++
		}
	}
	if set > 1 {
		return res, errors.New("config: at most one of cluster, listener, route, endpoints")
	}
	var q url.Values
	if req.Endpoints != "" {
		q = url.Values{"include_eds": {""}}
	}
	u, err := adminURL(req.Admin, "config_dump", q)
	if err != nil {
		return res, fmt.Errorf("config: %w", err)
	}
	dump, err := s.w.http.get(ctx, u, u)
	res.Artifacts = keep(nil, "config_dump.json", dump)
	if err != nil {
		return res, fmt.Errorf("config: %w", err)
	}
	var v any
	switch {
	case req.Cluster != "":
		v, err = dumpCluster(dump, req.Cluster)
	case req.Listener != "":
		v, err = dumpListener(dump, req.Listener)
	case req.Route != "":
		v, err = dumpRoute(dump, req.Route)
	case req.Endpoints != "":
		v, err = envoy.DumpClusterEndpoints(dump, req.Endpoints)
	case req.Names != "":
		var names []string
		names, err = envoy.DumpNames(dump, req.Names)
		list := make([]any, len(names))
		for i, n := range names {
			list[i] = n
		}
		res.Value, res.Resource = list, list
		return res, err
	default:
		err = json.Unmarshal(dump, &v)
	}
	if err != nil {
		return res, fmt.Errorf("config: %w", err)
	}
	value, normalized, err := envoy.ReadConfig(v, req.ResourceKind(), req.Path, req.Durations == schema.DurationsSeconds)
	res.Resource = normalized
	if err != nil {
		return res, fmt.Errorf("config: path %q: %w", req.Path, err)
	}
	res.Value = value
	return res, nil
}

// keep adds a raw body to the artifacts, when a body came back (also with an error status).
func keep(list []schema.Artifact, name string, body []byte) []schema.Artifact {
	if body == nil {
		return list
	}
	return append(list, schema.Artifact{Name: name, Data: body})
}

// adminURL joins an admin base URL ("http://127.0.0.1:15000" or with a trailing path) and an
// endpoint, with its query encoded (cluster names hold '|' and '+').
func adminURL(base, endpoint string, q url.Values) (string, error) {
	u, err := url.Parse(base)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return "", fmt.Errorf("admin %q is not an http(s) base URL", base)
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + "/" + endpoint
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// maxBody bounds what one admin or metrics read keeps (config dumps of big meshes are large).
const maxBody = 256 << 20

// adminClient is the HTTP client of stats and config reads: its own transport (no proxy:
// admin endpoints are local), a timeout per request, and the step's context.
type adminClient struct {
	client *http.Client
}

func newAdminClient() *adminClient {
	tr := &http.Transport{
		Proxy:                 nil,
		MaxIdleConnsPerHost:   2,
		IdleConnTimeout:       30 * time.Second,
		ResponseHeaderTimeout: 30 * time.Second,
	}
	return &adminClient{client: &http.Client{Transport: tr, Timeout: 30 * time.Second}}
}

// get returns the body of a 2xx answer; otherwise an error naming the read (shown: the URL,
// or what stands for it) and the status, with whatever body came (also returned, for the
// artifact).
func (a *adminClient) get(ctx context.Context, u, shown string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := a.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // without the URL, which shown stands for
		}
		return nil, fmt.Errorf("GET %s: %w", shown, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return body, fmt.Errorf("GET %s: %w", shown, err)
	}
	if len(body) > maxBody {
		return body[:maxBody], fmt.Errorf("GET %s: body larger than %d MiB", shown, maxBody>>20)
	}
	if resp.StatusCode/100 != 2 {
		return body, fmt.Errorf("GET %s: %s: %s", shown, resp.Status, firstLine(body))
	}
	return body, nil
}

func (a *adminClient) close() { a.client.CloseIdleConnections() }

func firstLine(b []byte) string {
	s, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	return dsl.Truncate(s, 201)
}
