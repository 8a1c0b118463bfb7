package local

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"labrun.dev/labrun/envoy"
	"labrun.dev/labrun/schema"
)

const adminCluster = "outbound|8080||backend.conn-lab.svc.cluster.local"

// fakeAdmin is a stand-in for an Envoy admin endpoint, on loopback. Its bodies are fixtures
// written in Envoy's formats (no Envoy runs here); it checks the queries it is sent.
func fakeAdmin(t *testing.T) (*httptest.Server, *[]string) {
	t.Helper()
	var mu sync.Mutex
	var seen []string
	mux := http.NewServeMux()
	mux.HandleFunc("/stats", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.RawQuery)
		mu.Unlock()
		if got, want := r.URL.Query().Get("filter"), envoy.StatsFilter(adminCluster); got != want {
			http.Error(w, "unexpected filter "+got, http.StatusBadRequest)
			return
		}
		p := "cluster." + adminCluster + ";."
		switch r.URL.Query().Get("type") {
		case "Counters":
			w.Write([]byte(p + "upstream_rq_total: 40\n" + p + "upstream_rq_pending_overflow: 12\n" +
				"cluster." + adminCluster + "-canary;.upstream_rq_total: 999\n"))
		case "Gauges":
			w.Write([]byte(p + "circuit_breakers.default.rq_pending_open: 1\n" + p + "upstream_cx_active: 1\n"))
		case "Histograms":
			w.Write([]byte(p + "upstream_rq_time: P0(nan,1) P50(nan,2.05) P90(nan,9.1) P99(nan,12) P100(nan,13)\n"))
		default:
			http.Error(w, "no type", http.StatusBadRequest)
		}
	})
	mux.HandleFunc("/clusters", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("format") != "json" {
			http.Error(w, "text", http.StatusBadRequest)
			return
		}
		w.Write([]byte(`{"cluster_statuses":[{"name":"` + adminCluster + `","host_statuses":[
			{"address":{"socket_address":{"address":"127.0.0.2","port_value":8080}},
			 "stats":[{"name":"cx_total","value":"3"},{"name":"rq_total","value":"40"},{"type":"GAUGE","name":"cx_active","value":"1"}],
			 "health_status":{"eds_health_status":"HEALTHY"}}]}]}`))
	})
	mux.HandleFunc("/config_dump", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"configs":[{"@type":"type.googleapis.com/envoy.admin.v3.ClustersConfigDump",
			"dynamic_active_clusters":[{"cluster":{"@type":"type.googleapis.com/envoy.config.cluster.v3.Cluster",
			"name":"` + adminCluster + `","connect_timeout":"10s",
			"circuit_breakers":{"thresholds":[{"max_connections":1,"max_pending_requests":1}]}}}]}]}`))
	})
	srv := httptest.NewServer(mux) // 127.0.0.1
	t.Cleanup(srv.Close)
	return srv, &seen
}

func TestAdminSnapshot(t *testing.T) {
	admin, seen := fakeAdmin(t)
	tg := newTarget(t, nil, Options{})
	ctx, cancel := bg()
	defer cancel()
	req := schema.Snapshot{Admin: admin.URL + "/", Cluster: adminCluster, Hosts: true, Histograms: true}
	s, err := tg.Stats.Snapshot(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if s.Source != req.Source() {
		t.Errorf("source %q", s.Source)
	}
	if s.Counters["upstream_rq_total"] != 40 || s.Counters["upstream_rq_pending_overflow"] != 12 || len(s.Counters) != 2 {
		t.Errorf("counters %v (another cluster's stats must not leak in)", s.Counters)
	}
	if s.Gauges["circuit_breakers.default.rq_pending_open"] != 1 || s.Gauges["upstream_cx_active"] != 1 {
		t.Errorf("gauges %v", s.Gauges)
	}
	if s.Histograms["upstream_rq_time.p99"] != 12 {
		t.Errorf("histograms %v", s.Histograms)
	}
	if len(s.Hosts) != 1 || s.Hosts[0].RqTotal != 40 || s.Hosts[0].CxActive != 1 {
		t.Errorf("hosts %+v", s.Hosts)
	}
	var names []string
	for _, a := range s.Artifacts {
		names = append(names, a.Name)
		if len(a.Data) == 0 {
			t.Errorf("artifact %s is empty", a.Name)
		}
	}
	if got := strings.Join(names, " "); got != "stats-counters.txt stats-gauges.txt stats-histograms.txt clusters.json" {
		t.Errorf("artifacts %s", got)
	}
	for _, q := range *seen {
		if strings.Contains(q, "|") {
			t.Errorf("query not escaped: %s", q)
		}
	}
}

func TestConfig(t *testing.T) {
	admin, _ := fakeAdmin(t)
	tg := newTarget(t, nil, Options{})
	ctx, cancel := bg()
	defer cancel()
	for _, tc := range []struct {
		req  schema.Config
		want any
	}{
		{schema.Config{Admin: admin.URL, Cluster: adminCluster, Path: "circuit_breakers.thresholds.0.max_pending_requests"}, float64(1)},
		{schema.Config{Admin: admin.URL, Cluster: adminCluster, Path: "connect_timeout"}, "10s"},
		{schema.Config{Admin: admin.URL, Path: "configs.0.dynamic_active_clusters.0.cluster.name"}, adminCluster},
	} {
		res, err := tg.Stats.Config(ctx, tc.req)
		if err != nil {
			t.Errorf("%+v: %v", tc.req, err)
			continue
		}
		if res.Value != tc.want {
			t.Errorf("%+v: %#v, want %#v", tc.req, res.Value, tc.want)
		}
		if len(res.Artifacts) != 1 || res.Artifacts[0].Name != "config_dump.json" {
			t.Errorf("artifacts %+v", res.Artifacts)
		}
	}
	if _, err := tg.Stats.Config(ctx, schema.Config{Admin: admin.URL, Cluster: "nope"}); err == nil {
		t.Error("a missing cluster is not an error")
	}
}

func TestStatsErrors(t *testing.T) {
	admin, _ := fakeAdmin(t)
	tg := newTarget(t, &schema.Local{Backends: map[string]schema.Backend{"a": {}}}, Options{})
	ctx, cancel := bg()
	defer cancel()
	for _, tc := range []struct {
		req  schema.Snapshot
		want string
	}{
		{schema.Snapshot{}, "needs one of"},
		{schema.Snapshot{Envoy: &schema.PodRef{Pod: "p"}}, "kube target"},
		{schema.Snapshot{Backend: "zz"}, "no backend \"zz\" (backends: a)"},
		{schema.Snapshot{Backend: "a", Cluster: "x"}, "apply to admin"},
		{schema.Snapshot{Admin: admin.URL}, "needs cluster"},
		{schema.Snapshot{Admin: "127.0.0.1:15000", Cluster: "c"}, "not an http(s) base URL"},
		{schema.Snapshot{Prometheus: admin.URL + "/missing"}, "404"},
	} {
		_, err := tg.Stats.Snapshot(ctx, tc.req)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.req, err, tc.want)
		}
	}
	// A failed read still keeps what came back, for the report.
	s, _ := tg.Stats.Snapshot(ctx, schema.Snapshot{Prometheus: admin.URL + "/missing"})
	if len(s.Artifacts) != 1 || !strings.Contains(string(s.Artifacts[0].Data), "404") {
		t.Errorf("artifacts of a failed read: %+v", s.Artifacts)
	}
	var _ schema.StatsReader = tg.Stats
}

// TestAdminStatsErrorsShowNoFilter: a failed read of an Envoy admin's stats said its whole URL,
// a regular expression of ~1,500 URL-encoded characters that the cluster's name becomes
// (filter=%5Ecluster%5C.c%28%3F…), twice on the verdict line; the error names the read by
// its path, type and cluster instead. The admin endpoints are loopback stand-ins: one that
// answers a web page, one that answers 503, and a port nothing listens on.
func TestAdminStatsErrorsShowNoFilter(t *testing.T) {
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte("<!DOCTYPE html><html><body>not Envoy</body></html>\n"))
	}))
	defer page.Close()
	busy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "overloaded", http.StatusServiceUnavailable)
	}))
	defer busy.Close()
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	tg := newTarget(t, &schema.Local{}, Options{})
	ctx, cancel := bg()
	defer cancel()
	for _, tc := range []struct{ admin, want string }{
		{page.URL, "GET " + page.URL + "/stats?type=Counters (cluster c's stats): stats: input looks like HTML, not Envoy's text /stats"},
		{busy.URL, "GET " + busy.URL + "/stats?type=Counters (cluster c's stats): 503 Service Unavailable: overloaded"},
		{gone.URL, "GET " + gone.URL + "/stats?type=Counters (cluster c's stats): dial tcp "},
	} {
		_, err := tg.Stats.Snapshot(ctx, schema.Snapshot{Admin: tc.admin, Cluster: "c"})
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "filter") {
			t.Errorf("admin %s: %v, want %q and no filter", tc.admin, err, tc.want)
		}
	}
}
