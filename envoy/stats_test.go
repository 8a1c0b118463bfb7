package envoy

import (
	"bytes"
	"maps"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const (
	connLab  = "outbound|8080||backend.conn-lab.svc.cluster.local"
	serviceA = "outbound|8080||backend.service-a.svc.cluster.local"
	httpbin  = "outbound|8000||httpbin.default.svc.cluster.local"
)

func readFixtureBytes(name string) ([]byte, error) { return os.ReadFile("testdata/" + name) }

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fixtureStats is an independent, slow reading of a fixture: the numeric lines whose name
// starts with prefix, keyed by what follows it.
func fixtureStats(text []byte, prefix string) map[string]float64 {
	out := map[string]float64{}
	for line := range strings.Lines(string(text)) {
		name, val, ok := strings.Cut(strings.TrimSpace(line), ": ")
		if !ok || !strings.HasPrefix(name, prefix) {
			continue
		}
		if val[0] < '0' || val[0] > '9' {
			continue
		}
		var v float64
		for _, c := range val {
			v = v*10 + float64(c-'0')
		}
		out[strings.TrimPrefix(name, prefix)] = v
	}
	return out
}

func TestClusterStats(t *testing.T) {
	istio := readFixture(t, "stats_istio.txt")
	legacy := readFixture(t, "stats_legacy.txt")
	tests := []struct {
		name    string
		text    []byte
		cluster string
		want    map[string]float64 // must hold exactly these pairs
		exact   bool               // and nothing else
		absent  []string
		count   int // number of stats, if not 0
	}{
		{
			name: "istio ;. form", text: istio, cluster: connLab,
			want: map[string]float64{
				"upstream_rq_pending_overflow":               12,
				"upstream_cx_overflow":                       37,
				"upstream_cx_total":                          3,
				"upstream_rq_total":                          40,
				"circuit_breakers.default.cx_open":           1,
				"circuit_breakers.default.rq_pending_open":   1,
				"circuit_breakers.default.remaining_retries": 4294967295,
				"circuit_breakers.default.remaining_rq":      4294967294,
				"circuit_breakers.high.rq_open":              0,
				"outlier_detection.ejections_active":         0,
				"membership_healthy":                         2,
				"ssl.versions.TLSv1.3":                       3,
				"ssl.ciphers.TLS_AES_128_GCM_SHA256":         3,
				"tlsMode-istio.total_match_count":            3,
				"default.total_match_count":                  0,
				"external.upstream_rq_503":                   12,
				"version":                                    0,
			},
			absent: []string{"upstream_rq_time", "upstream_cx_connect_ms", "upstream_cx_length_ms"},
			count:  len(fixtureStats(istio, "cluster."+connLab+";.")),
		},
		{
			name: "another namespace's backend does not leak", text: istio, cluster: serviceA,
			want: map[string]float64{"upstream_rq_pending_overflow": 99, "upstream_rq_total": 1000, "membership_total": 1},
		},
		{
			name: "xds-grpc", text: istio, cluster: "xds-grpc",
			want:  map[string]float64{"upstream_cx_total": 1, "upstream_rq_total": 212, "internal.upstream_rq_200": 211},
			count: 9,
		},
		{name: "a prefix of real names is no cluster", text: istio, cluster: "outbound|8080||backend", exact: true, want: map[string]float64{}},
		{name: "a substring is no cluster", text: istio, cluster: "backend", exact: true, want: map[string]float64{}},
		{name: "absent cluster", text: istio, cluster: "outbound|8080||nothing.conn-lab.svc.cluster.local", exact: true, want: map[string]float64{}},
		{
			name: "dotted form", text: legacy, cluster: httpbin, exact: true,
			want: map[string]float64{
				"circuit_breakers.default.rq_pending_open":   0,
				"default.total_match_count":                  0,
				"http1.dropped_headers_with_underscores":     0,
				"internal.upstream_rq_200":                   7,
				"ssl.handshake":                              4,
				"ssl.versions.TLSv1.3":                       4,
				"tlsMode-istio.total_match_count":            4,
				"upstream_cx_active":                         1,
				"upstream_rq_pending_overflow":               21,
				"version":                                    0,
				"zone.us-east1-b.us-east1-c.upstream_rq_2xx": 3,
			},
		},
		{name: "dotted: staging namespace", text: legacy, cluster: "outbound|8000||httpbin.staging.svc.cluster.local", exact: true,
			want: map[string]float64{"upstream_rq_pending_overflow": 5}},
		{name: "dotted: namespace named internal", text: legacy, cluster: "outbound|8000||httpbin.internal.svc.cluster.local", exact: true,
			want: map[string]float64{"upstream_rq_total": 77}},
		{name: "dotted: namespace named zone", text: legacy, cluster: "outbound|8000||httpbin.zone.svc.cluster.local", exact: true,
			want: map[string]float64{"upstream_rq_2xx": 6}},
		{name: "dotted: subset cluster", text: legacy, cluster: "outbound|8000|v1|httpbin.default.svc.cluster.local", exact: true,
			want: map[string]float64{"upstream_rq_pending_overflow": 2}},
		{name: "dotted: prefix of longer names", text: legacy, cluster: "outbound|8000||httpbin", exact: true, want: map[string]float64{}},
		{name: "dotted: plain envoy cluster", text: legacy, cluster: "backend", exact: true,
			want: map[string]float64{"upstream_cx_active": 2, "upstream_rq_total": 3}},
		{name: "dotted: cluster with a dot", text: legacy, cluster: "backend.v2", exact: true,
			want: map[string]float64{"upstream_cx_active": 0, "upstream_rq_total": 8}},
		{name: "dotted: underscore sibling", text: legacy, cluster: "backend_v2", exact: true,
			want: map[string]float64{"upstream_rq_total": 9}},
		{name: "empty input", text: nil, cluster: connLab, exact: true, want: map[string]float64{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ClusterStats(tt.text, tt.cluster)
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range tt.want {
				if g, ok := got[k]; !ok || g != v {
					t.Errorf("%s = %v (present %v), want %v", k, g, ok, v)
				}
			}
			if tt.exact && !maps.Equal(got, tt.want) {
				t.Errorf("got %v, want exactly %v", got, tt.want)
			}
			for _, k := range tt.absent {
				if _, ok := got[k]; ok {
					t.Errorf("%s present, want absent", k)
				}
			}
			if tt.count != 0 && len(got) != tt.count {
				t.Errorf("got %d stats, want %d", len(got), tt.count)
			}
		})
	}
}

func TestClusterStatsAll(t *testing.T) {
	istio := readFixture(t, "stats_istio.txt")
	got, err := ClusterStats(istio, "")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{
		"cluster." + connLab + ".upstream_rq_pending_overflow":             12,
		"cluster." + serviceA + ".upstream_rq_pending_overflow":            99,
		"cluster." + connLab + ".circuit_breakers.default.rq_pending_open": 1,
		"cluster.xds-grpc.upstream_cx_total":                               1,
		"cluster_manager.active_clusters":                                  14,
		"server.live":                                                      1,
		"listener.0.0.0.0_15006.downstream_cx_active":                      1,
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	for k := range got {
		if strings.Contains(k, ";.") {
			t.Errorf("%s not normalised", k)
		}
	}
	if _, ok := got["control_plane.identifier"]; ok {
		t.Error("text readout kept")
	}
	if _, ok := got["cluster."+connLab+".upstream_rq_time"]; ok {
		t.Error("histogram kept")
	}
	// Every cluster's scoped stats are in the full map under cluster.<name>.<stat>.
	for _, c := range StatClusters(istio) {
		scoped, err := ClusterStats(istio, c)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range scoped {
			if got["cluster."+c+"."+k] != v {
				t.Errorf("%s: %s = %v scoped, %v in full", c, k, v, got["cluster."+c+"."+k])
			}
		}
	}
}

// TestClusterStatsTolerance checks that CRLF, blank lines, and spaces around lines and values
// do not change what is read.
func TestClusterStatsTolerance(t *testing.T) {
	istio := readFixture(t, "stats_istio.txt")
	legacy := readFixture(t, "stats_legacy.txt")
	variants := map[string]func([]byte) []byte{
		"crlf":           func(b []byte) []byte { return bytes.ReplaceAll(b, []byte("\n"), []byte("\r\n")) },
		"blank lines":    func(b []byte) []byte { return bytes.ReplaceAll(b, []byte("\n"), []byte("\n\n \n\t\n")) },
		"trailing space": func(b []byte) []byte { return bytes.ReplaceAll(b, []byte("\n"), []byte("  \t\n")) },
		"leading space": func(b []byte) []byte {
			return append([]byte("  "), bytes.ReplaceAll(b, []byte("\n"), []byte("\n  "))...)
		},
		"no final newline": func(b []byte) []byte { return bytes.TrimRight(b, "\n") },
		"crlf, spaces":     func(b []byte) []byte { return bytes.ReplaceAll(b, []byte("\n"), []byte(" \r\n\r\n")) },
	}
	for name, f := range variants {
		for _, tc := range []struct {
			text    []byte
			cluster string
		}{{istio, connLab}, {istio, "xds-grpc"}, {istio, ""}, {legacy, httpbin}, {legacy, "backend"}} {
			want, err := ClusterStats(tc.text, tc.cluster)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ClusterStats(f(bytes.Clone(tc.text)), tc.cluster)
			if err != nil {
				t.Fatalf("%s %q: %v", name, tc.cluster, err)
			}
			if !maps.Equal(got, want) {
				t.Errorf("%s %q: got %d stats, want %d", name, tc.cluster, len(got), len(want))
			}
			wantH, _ := ClusterHistograms(tc.text, tc.cluster)
			gotH, err := ClusterHistograms(f(bytes.Clone(tc.text)), tc.cluster)
			if err != nil || !maps.Equal(gotH, wantH) {
				t.Errorf("%s %q histograms: err %v, got %d, want %d", name, tc.cluster, err, len(gotH), len(wantH))
			}
		}
	}
}

func TestClusterStatsValues(t *testing.T) {
	tests := []struct {
		text string
		want map[string]float64
	}{
		{"cluster.c;.a: 18446744073709551615\n", map[string]float64{"a": 18446744073709551615}},
		{"cluster.c;.a: 007\n", map[string]float64{"a": 7}},
		{"cluster.c;.a: 1.5\n", map[string]float64{"a": 1.5}},
		{"cluster.c;.a:3\n", map[string]float64{"a": 3}},
		{"cluster.c;.a: 1\ncluster.c;.a: 2\n", map[string]float64{"a": 2}},
		{"cluster.c;.a: \"text readout\"\n", map[string]float64{}},
		{"cluster.c;.a: No recorded values\n", map[string]float64{}},
		{"cluster.c;.a: B0.5(0,0) B1(0,0)\n", map[string]float64{}},
		{"x cluster.c;.a: 1\n", map[string]float64{}}, // not at a line start
		{"cluster.cluster.c;.a: 1\n", map[string]float64{}},
		{"cluster.c.a: 1\n", map[string]float64{}}, // "a" reads as a label of a longer name
		{"cluster.c.a_b: 1\n", map[string]float64{"a_b": 1}},
	}
	for _, tt := range tests {
		got, err := ClusterStats([]byte(tt.text), "c")
		if err != nil {
			t.Errorf("%q: %v", tt.text, err)
			continue
		}
		if !maps.Equal(got, tt.want) {
			t.Errorf("%q: got %v, want %v", tt.text, got, tt.want)
		}
	}
}

func TestClusterStatsErrors(t *testing.T) {
	tests := []struct {
		text, cluster, wantErr string
	}{
		{`{"stats":[]}`, "c", "JSON"},
		{"<html><body>404</body></html>", "c", "HTML"},
		{"# TYPE x counter\nx 1\n", "", "Prometheus"},
		{"cluster.c;.a: 1\ncluster.c;.b: lots\n", "c", "line 2"},
		{"cluster.c;.a: 1\ncluster.c;.b\n", "c", "line 2"},
		{"server.live: 1\ngarbage\n", "", "line 2"},
		{"cluster.c;.a: P0(nan,1) P25(x)\n", "c", "histogram"}, // ClusterHistograms only
	}
	for _, tt := range tests {
		_, err1 := ClusterStats([]byte(tt.text), tt.cluster)
		_, err2 := ClusterHistograms([]byte(tt.text), tt.cluster)
		err := err1
		if tt.wantErr == "histogram" {
			err = err2
		}
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("%q: err %v, want it to mention %q", tt.text, err, tt.wantErr)
		}
	}
	// A malformed line of another cluster is none of our business.
	if _, err := ClusterStats([]byte("cluster.other;.a: lots\ncluster.c;.a: 1\n"), "c"); err != nil {
		t.Errorf("bad line elsewhere: %v", err)
	}
}

func TestClusterHistograms(t *testing.T) {
	istio := readFixture(t, "stats_istio.txt")
	legacy := readFixture(t, "stats_legacy.txt")
	tests := []struct {
		name    string
		text    []byte
		cluster string
		want    map[string]float64
		absent  []string
		count   int
	}{
		{
			name: "istio", text: istio, cluster: connLab,
			want: map[string]float64{
				"upstream_rq_time.p0": 1, "upstream_rq_time.p50": 3.05, "upstream_rq_time.p90": 6.2,
				"upstream_rq_time.p99": 11.2, "upstream_rq_time.p995": 12, "upstream_rq_time.p999": 13,
				"upstream_rq_time.p100": 13, "external.upstream_rq_time.p99": 11.2,
				"upstream_cx_connect_ms.p50": 1.05,
			},
			absent: []string{"upstream_cx_length_ms.p50", "upstream_rq_total"},
			count:  30,
		},
		{name: "other namespace", text: istio, cluster: serviceA, want: map[string]float64{"upstream_rq_time.p50": 30.5}},
		{name: "xds-grpc", text: istio, cluster: "xds-grpc", want: map[string]float64{"upstream_cx_connect_ms.p100": 5.1}, count: 10},
		{name: "all", text: istio, cluster: "", want: map[string]float64{
			"cluster." + connLab + ".upstream_rq_time.p50":  3.05,
			"cluster." + serviceA + ".upstream_rq_time.p50": 30.5,
			"server.initialization_time_ms.p100":            86,
		}, count: 10 * 8},
		{name: "dotted", text: legacy, cluster: httpbin, want: map[string]float64{"upstream_rq_time.p99": 3.096}, count: 10},
		{name: "dotted prefix", text: legacy, cluster: "outbound|8000||httpbin", count: -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ClusterHistograms(tt.text, tt.cluster)
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range tt.want {
				if g, ok := got[k]; !ok || g != v {
					t.Errorf("%s = %v (present %v), want %v", k, g, ok, v)
				}
			}
			for _, k := range tt.absent {
				if _, ok := got[k]; ok {
					t.Errorf("%s present", k)
				}
			}
			switch {
			case tt.count > 0 && len(got) != tt.count, tt.count < 0 && len(got) != 0:
				t.Errorf("got %d: %v", len(got), slices.Sorted(maps.Keys(got)))
			}
		})
	}
}

func TestStatClusters(t *testing.T) {
	got := StatClusters(readFixture(t, "stats_legacy.txt"))
	want := []string{
		"backend", "backend-canary", "backend.v2", "backend_v2",
		httpbin,
		"outbound|8000||httpbin.internal.svc.cluster.local",
		"outbound|8000||httpbin.staging.svc.cluster.local",
		"outbound|8000||httpbin.zone.svc.cluster.local",
		"outbound|8000|v1|httpbin.default.svc.cluster.local",
		"xds-grpc",
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
	got = StatClusters(readFixture(t, "stats_istio.txt"))
	want = []string{connLab, serviceA, "outbound|9999||blackhole.conn-lab.svc.cluster.local", "xds-grpc"}
	if !slices.Equal(got, want) {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
}

// TestStatsFilter checks that the server-side filter selects exactly the names ClusterStat
// accepts, over every name in the fixtures and a set of awkward ones.
func TestStatsFilter(t *testing.T) {
	var names []string
	for _, f := range []string{"stats_istio.txt", "stats_legacy.txt"} {
		for line := range strings.Lines(string(readFixture(t, f))) {
			if n, _, ok := strings.Cut(line, ": "); ok {
				names = append(names, n)
			}
		}
	}
	clusters := []string{connLab, serviceA, httpbin, "xds-grpc", "backend", "backend.v2", "outbound|8080||backend",
		"outbound|8000||httpbin", "outbound|8000||httpbin.zone.svc.cluster.local", "c", "a.b"}
	for _, c := range clusters {
		for _, rest := range []string{
			";.upstream_rq_total", ".upstream_rq_total", ".version", ".versions", ".default.total_match_count",
			".default.svc.cluster.local.upstream_rq_total", ".internal.upstream_rq_200", ".internal.upstream_rq_200.x",
			".internal.svc.cluster.local.upstream_rq_total", ".zone.a.b.upstream_rq_2xx", ".zone.a.upstream_rq_2xx",
			".zone.a.b.c.upstream_rq_2xx", ".ssl.handshake", ".ssl.versions.TLSv1.3", ".ssl.svc.cluster.local.x_y",
			".http2.streams_active", ".http2.svc.cluster.local.upstream_rq_total", ".http4.x", ".x.y_z", ".X.y", "",
			".", ";", ";.", "..x_y", ".tlsMode-istio.total_match_count", ".canary.upstream_rq_2xx", ".ssl.", ".ssl.ciphers.",
			".ssl.ciphers.X", ".zone..b.upstream_x", ".\xff", ".é.x", ".mtls.total_match_count", ".a.b.total_match_count", ".tlsmode-disabled.total_match_count",
			".total_match_count", "..total_match_count", ".retry.upstream_rq_503", ".retry.svc.cluster.local.upstream_rq_total",
			".grpc.envoy.service.discovery.v3.AggregatedDiscoveryService.StreamAggregatedResources.success",
			".grpc.svc.cluster.local.upstream_rq_total", ".grpc", ".grpc.", ".grpc.A",
		} {
			names = append(names, "cluster."+c+rest)
		}
	}
	for _, c := range clusters {
		re := regexp.MustCompile(StatsFilter(c))
		for _, n := range names {
			_, ok := ClusterStat(n, c)
			if m := re.MatchString(n); m != ok {
				t.Errorf("cluster %q, name %q: filter matches %v, ClusterStat %v", c, n, m, ok)
			}
		}
	}
	if f := StatsFilter(connLab); f != `^cluster\.outbound\|8080\|\|backend\.conn-lab\.svc\.cluster\.local(?:;\.|\.`+dottedStatRE+`)` {
		t.Errorf("filter %s", f)
	}
}

func TestClusterStat(t *testing.T) {
	tests := []struct {
		name, cluster, stat string
		ok                  bool
	}{
		{"cluster." + connLab + ";.upstream_rq_pending_overflow", connLab, "upstream_rq_pending_overflow", true},
		{"cluster." + connLab + ".upstream_rq_pending_overflow", connLab, "upstream_rq_pending_overflow", true},
		{"cluster." + connLab + ";.upstream_rq_pending_overflow", "outbound|8080||backend", "", false},
		{"cluster." + connLab + ".upstream_rq_pending_overflow", "outbound|8080||backend", "", false},
		{"cluster.xds-grpc;.upstream_cx_total", "xds-grpc", "upstream_cx_total", true},
		{"cluster.xds-grpc;.upstream_cx_total", "xds", "", false},
		{"cluster.xds-grpc", "xds-grpc", "", false},
		{"cluster_manager.active_clusters", "", "", false},
		{"listener.cluster.c.x_y", "c", "", false},
		{"cluster.xds-grpc.grpc.envoy.service.discovery.v3.AggregatedDiscoveryService.StreamAggregatedResources.success", "xds-grpc",
			"grpc.envoy.service.discovery.v3.AggregatedDiscoveryService.StreamAggregatedResources.success", true},
		{"cluster.c.grpc.svc.cluster.local.upstream_rq_total", "c", "", false},
		{"cluster.c.retry.upstream_rq_503", "c", "retry.upstream_rq_503", true},
		{"cluster.c.mtls.total_match_count", "c", "mtls.total_match_count", true},
		{"cluster.c.ns.svc.cluster.local.mtls.total_match_count", "c", "", false},
	}
	for _, tt := range tests {
		stat, ok := ClusterStat(tt.name, tt.cluster)
		if stat != tt.stat || ok != tt.ok {
			t.Errorf("ClusterStat(%q, %q) = %q, %v; want %q, %v", tt.name, tt.cluster, stat, ok, tt.stat, tt.ok)
		}
	}
}

// TestLongerClusterCurrentStyle: a longer cluster name in the current style
// (cluster.<name>.<more>;.<stat>) never lends its stats to <name>, with or without the
// server-side filter.
func TestLongerClusterCurrentStyle(t *testing.T) {
	name := "cluster.outbound|8080||backend.other;.upstream_rq_total"
	if st, ok := ClusterStat(name, "outbound|8080||backend"); ok {
		t.Errorf("ClusterStat took %q as stat %q of the shorter cluster", name, st)
	}
	if regexp.MustCompile(StatsFilter("outbound|8080||backend")).MatchString(name) {
		t.Errorf("StatsFilter matches %q", name)
	}
}

// TestShownPath: what an error shows of an admin read leaves the stats filter out and keeps
// the rest of the URL or path as written.
func TestShownPath(t *testing.T) {
	filter := "filter=" + url.QueryEscape(StatsFilter("outbound|8080||b.lab.svc.cluster.local"))
	for in, want := range map[string]string{
		"stats?" + filter + "&type=Counters":                      "stats?type=Counters",
		"http://127.0.0.1:15000/stats?" + filter + "&type=Gauges": "http://127.0.0.1:15000/stats?type=Gauges",
		"http://127.0.0.1:15000/stats?type=Histograms&" + filter:  "http://127.0.0.1:15000/stats?type=Histograms",
		"stats?" + filter:               "stats",
		"clusters?format=json":          "clusters?format=json",
		"config_dump?include_eds":       "config_dump?include_eds",
		"http://127.0.0.1:9090/metrics": "http://127.0.0.1:9090/metrics",
	} {
		if got := ShownPath(in); got != want {
			t.Errorf("ShownPath(%.60q…) = %q, want %q", in, got, want)
		}
	}
}
