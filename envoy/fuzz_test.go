package envoy

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// Crashers found by these targets are kept under testdata/fuzz/<Target>/ and rerun by
// `go test` as regression cases.

func FuzzClusterStats(f *testing.F) {
	istio, _ := readFixtureBytes("stats_istio.txt")
	legacy, _ := readFixtureBytes("stats_legacy.txt")
	f.Add(istio[:4000], connLab)
	f.Add(legacy, httpbin)
	f.Add(legacy, "backend")
	f.Add([]byte("cluster.c;.a: 1\r\n\r\n  cluster.c.b_c: 2 \ncluster.c.d: P0(nan,1) P50(1,2)\n"), "c")
	f.Add([]byte("cluster.c.zone.a.b.upstream_rq_2xx: 3\ncluster.c.ssl.versions.TLSv1.3: 1\n"), "c")
	f.Add([]byte("cluster.c;.x: 18446744073709551616\ncluster.c;.y: \"t\"\n"), "c")
	f.Fuzz(func(t *testing.T, text []byte, cluster string) {
		scoped, errS := ClusterStats(text, cluster)
		ClusterHistograms(text, cluster)
		full, errF := ClusterStats(text, "")
		ClusterHistograms(text, "")
		StatClusters(text)
		if errS != nil || errF != nil || strings.ContainsAny(cluster, ": \t\r\n;") || cluster == "" {
			return
		}
		// What a cluster's scope keeps is in the full reading under its normalised name.
		for k := range scoped {
			name := strings.ReplaceAll("cluster."+cluster+"."+k, ";.", ".")
			if _, ok := full[name]; !ok {
				t.Errorf("scoped %q has %q; full reading has no %q", cluster, k, name)
			}
		}
		// The server-side filter and the client-side scope agree on every line's name.
		if !utf8.ValidString(cluster) {
			return
		}
		re, err := regexp.Compile(StatsFilter(cluster))
		if err != nil {
			t.Fatalf("StatsFilter(%q) = %s: %v", cluster, StatsFilter(cluster), err)
		}
		for line := range bytes.SplitSeq(text, []byte("\n")) {
			name, _, ok := splitStatLine(trimSpace(line))
			if !ok || !utf8.Valid(name) {
				continue
			}
			_, in := ClusterStat(string(name), cluster)
			if m := re.Match(name); m != in {
				t.Errorf("name %q, cluster %q: filter %v, ClusterStat %v", name, cluster, m, in)
			}
		}
	})
}

func FuzzAccessLog(f *testing.F) {
	log, _ := readFixtureBytes("istio-proxy.log")
	for line := range strings.Lines(string(log)) {
		f.Add(line)
	}
	f.Add(`[2026-03-02T09:17:12.000Z] "- - -" 0 UF,URX - - "-" 0 0 1001 - "-" "-" "-" "-" "10.244.3.3:9000" c - a b - -`)
	f.Add(`[1] "" 0 - - - "" 0 0 0`)
	f.Add(`x{"response_code":"0","response_flags":",,-"}`)
	f.Fuzz(func(t *testing.T, line string) {
		e, ok := AccessLog(line)
		if e.Line != strings.TrimRight(line, "\r\n") {
			t.Errorf("Line %q, want the input", e.Line)
		}
		if ok != e.Access {
			t.Errorf("ok %v, Access %v", ok, e.Access)
		}
		for _, f := range e.Flags {
			if f == "" || f == "-" || strings.Contains(f, ",") {
				t.Errorf("flag %q", f)
			}
		}
	})
}

func FuzzPrometheus(f *testing.F) {
	p, _ := readFixtureBytes("prometheus.txt")
	f.Add(p)
	f.Add([]byte("# TYPE a summary\na{quantile=\"0.5\"} 1\na_sum 2\na_count 3\nb{x=\"\\\\\\\"\"} NaN 1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		Prometheus(data)
	})
}

func FuzzClusters(f *testing.F) {
	txt, _ := readFixtureBytes("clusters.txt")
	js, _ := readFixtureBytes("clusters.json")
	f.Add(txt, connLab)
	f.Add(js, connLab)
	f.Add([]byte("c::[::1]:80::cx_active::1\nc::[::1::x::y\n"), "c")
	f.Fuzz(func(t *testing.T, data []byte, cluster string) {
		Clusters(data, cluster)
	})
}

func FuzzQuery(f *testing.F) {
	dump, _ := readFixtureBytes("config_dump.json")
	f.Add(dump, connLab, `circuit_breakers.thresholds[0].max_connections`)
	f.Add(dump, "0.0.0.0_8080", `a."b.c"[1].d`)
	f.Fuzz(func(t *testing.T, dump []byte, name, path string) {
		c, err := DumpCluster(dump, name)
		if err == nil {
			Query(c, path)
		}
		DumpListener(dump, name)
		DumpRoute(dump, name)
		Query(map[string]any{"a": map[string]any{"b.c": []any{1.0, map[string]any{"d": "x"}}}}, path)
	})
}

// TestPathological keeps inputs that once took super-linear time (found while fuzzing: every
// dot of a long name used to copy the rest of it) well under a generous bound.
func TestPathological(t *testing.T) {
	inputs := map[string]string{
		"dots":     "cluster." + strings.Repeat("a.", 200000) + ": 1\n",
		"grpc":     "cluster." + strings.Repeat("grpc.", 100000) + ": 1\n",
		"zone":     "cluster." + strings.Repeat("zone.", 100000) + ": 1\n",
		"ssl":      "cluster." + strings.Repeat("ssl.", 100000) + ": 1\n",
		"internal": "cluster." + strings.Repeat("internal.upstream_", 50000) + ": 1\n",
	}
	for name, in := range inputs {
		start := time.Now()
		StatClusters([]byte(in))
		ClusterStats([]byte(in), "a")
		ClusterStats([]byte(in), "")
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s: %v", name, d)
		}
	}
	// Both "a" and "a.a" at every level: reading "a.a.a…" has exponentially many ways.
	var nest func(int) any
	nest = func(d int) any {
		if d == 0 {
			return map[string]any{}
		}
		n := nest(d - 1)
		return map[string]any{"a": n, "a.a": n}
	}
	start := time.Now()
	if _, err := Query(nest(40), strings.Repeat("a.", 60)+"b"); err == nil {
		t.Error("no error")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("query: %v", d)
	}
}
