package envoy

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// benchStats is a ~50 MB text /stats dump of a large mesh: thousands of clusters, half named
// the Istio ≥ 1.25 way ("cluster.<name>;.<stat>"), half the old way ("cluster.<name>.<stat>"),
// counters and gauges first, histograms last, as Envoy prints them.
var benchStats = sync.OnceValue(func() []byte { return genStats(50 << 20) })

// genStats generates a dump of about target bytes, with connLab, httpbin and serviceA in
// the middle.
func genStats(target int) []byte {
	counters := []string{
		"assignment_stale", "assignment_timeout_received", "bind_errors", "default.total_match_count",
		"lb_healthy_panic", "lb_local_cluster_not_ok", "lb_recalculate_zone_structures", "lb_subsets_created",
		"lb_subsets_fallback", "lb_subsets_removed", "lb_subsets_selected", "lb_zone_cluster_too_small",
		"lb_zone_no_capacity_left", "lb_zone_number_differs", "lb_zone_routing_all_directly",
		"lb_zone_routing_cross_zone", "lb_zone_routing_sampled", "membership_change",
		"original_dst_host_invalid", "outlier_detection.ejections_consecutive_5xx",
		"outlier_detection.ejections_detected_consecutive_5xx", "outlier_detection.ejections_enforced_total",
		"outlier_detection.ejections_overflow", "outlier_detection.ejections_total", "retry_or_shadow_abandoned",
		"ssl.connection_error", "ssl.handshake", "ssl.no_certificate", "ssl.session_reused",
		"ssl.ciphers.TLS_AES_128_GCM_SHA256", "ssl.curves.X25519", "ssl.versions.TLSv1.3",
		"tlsMode-disabled.total_match_count", "tlsMode-istio.total_match_count", "update_attempt",
		"update_empty", "update_failure", "update_no_rebuild", "update_success", "upstream_cx_close_notify",
		"upstream_cx_connect_attempts_exceeded", "upstream_cx_connect_fail", "upstream_cx_connect_timeout",
		"upstream_cx_destroy", "upstream_cx_destroy_local", "upstream_cx_destroy_local_with_active_rq",
		"upstream_cx_destroy_remote", "upstream_cx_destroy_remote_with_active_rq",
		"upstream_cx_destroy_with_active_rq", "upstream_cx_http1_total", "upstream_cx_http2_total",
		"upstream_cx_idle_timeout", "upstream_cx_max_duration_reached", "upstream_cx_max_requests",
		"upstream_cx_none_healthy", "upstream_cx_overflow", "upstream_cx_pool_overflow",
		"upstream_cx_protocol_error", "upstream_cx_rx_bytes_total", "upstream_cx_total",
		"upstream_cx_tx_bytes_total", "upstream_flow_control_backed_up_total",
		"upstream_flow_control_drained_total", "upstream_flow_control_paused_reading_total",
		"upstream_flow_control_resumed_reading_total", "upstream_internal_redirect_failed_total",
		"upstream_internal_redirect_succeeded_total", "upstream_rq_200", "upstream_rq_2xx", "upstream_rq_503",
		"upstream_rq_5xx", "upstream_rq_cancelled", "upstream_rq_completed", "upstream_rq_maintenance_mode",
		"upstream_rq_max_duration_reached", "upstream_rq_pending_failure_eject", "upstream_rq_pending_overflow",
		"upstream_rq_pending_total", "upstream_rq_per_try_idle_timeout", "upstream_rq_per_try_timeout",
		"upstream_rq_retry", "upstream_rq_retry_backoff_exponential", "upstream_rq_retry_backoff_ratelimited",
		"upstream_rq_retry_limit_exceeded", "upstream_rq_retry_overflow", "upstream_rq_retry_success",
		"upstream_rq_rx_reset", "upstream_rq_timeout", "upstream_rq_total", "upstream_rq_tx_reset",
		"external.upstream_rq_200", "external.upstream_rq_2xx", "external.upstream_rq_completed",
		"circuit_breakers.default.cx_open", "circuit_breakers.default.cx_pool_open",
		"circuit_breakers.default.remaining_cx", "circuit_breakers.default.remaining_pending",
		"circuit_breakers.default.remaining_retries", "circuit_breakers.default.remaining_rq",
		"circuit_breakers.default.rq_open", "circuit_breakers.default.rq_pending_open",
		"circuit_breakers.default.rq_retry_open", "circuit_breakers.high.cx_open",
		"circuit_breakers.high.cx_pool_open", "circuit_breakers.high.rq_open",
		"circuit_breakers.high.rq_pending_open", "circuit_breakers.high.rq_retry_open",
		"lb_subsets_active", "max_host_weight", "membership_degraded", "membership_excluded",
		"membership_healthy", "membership_total", "outlier_detection.ejections_active", "upstream_cx_active",
		"upstream_cx_rx_bytes_buffered", "upstream_cx_tx_bytes_buffered", "upstream_rq_active",
		"upstream_rq_pending_active", "version",
	}
	hists := []string{"upstream_cx_connect_ms", "upstream_cx_length_ms", "upstream_rq_time"}
	const quantiles = "P0(nan,1) P25(nan,2.05) P50(nan,3.05) P75(nan,4.1) P90(nan,6.2) P95(nan,7.1) P99(nan,11.2) P99.5(nan,12) P99.9(nan,13) P100(nan,13)"
	services := []string{"backend", "frontend", "payments", "orders", "catalog", "reviews", "ratings", "details", "auth", "search", "cart", "shipping"}
	ports := []int{80, 443, 8080, 9090, 15010}

	var buf, hbuf bytes.Buffer
	buf.Grow(target + 1<<20)
	placed := 0
	for i := 0; buf.Len()+hbuf.Len() < target; i++ {
		name := fmt.Sprintf("outbound|%d||%s-%d.ns-%03d.svc.cluster.local", ports[i%len(ports)], services[i%len(services)], i/len(services), i%173)
		if placed < 3 && buf.Len() >= target/2 { // the clusters the benchmarks look for, mid-dump
			name = []string{connLab, httpbin, serviceA}[placed]
			placed++
		}
		sep := ";."
		if i%2 == 1 {
			sep = "."
		}
		for j, s := range counters {
			fmt.Fprintf(&buf, "cluster.%s%s%s: %d\n", name, sep, s, (i*31+j*7)%5000)
		}
		for _, h := range hists {
			fmt.Fprintf(&hbuf, "cluster.%s%s%s: %s\n", name, sep, h, quantiles)
		}
	}
	buf.Write(hbuf.Bytes())
	return buf.Bytes()
}

func BenchmarkClusterStats(b *testing.B) {
	dump := benchStats()
	for _, bc := range []struct{ name, cluster string }{
		{"one-cluster", connLab},        // ;. form
		{"one-cluster-dotted", httpbin}, // . form
		{"absent-cluster", "outbound|8080||nothing.conn-lab.svc.cluster.local"},
		{"all", ""},
	} {
		b.Run(bc.name, func(b *testing.B) {
			got, err := ClusterStats(dump, bc.cluster)
			if err != nil {
				b.Fatal(err)
			}
			if bc.cluster == connLab && len(got) < 100 {
				b.Fatalf("got %d stats", len(got))
			}
			b.SetBytes(int64(len(dump)))
			b.ReportAllocs()
			for b.Loop() {
				ClusterStats(dump, bc.cluster)
			}
		})
	}
}

func BenchmarkClusterHistograms(b *testing.B) {
	dump := benchStats()
	b.SetBytes(int64(len(dump)))
	b.ReportAllocs()
	for b.Loop() {
		ClusterHistograms(dump, connLab)
	}
}

// BenchmarkClusterStatsVsGrepAwk times, on the same file, what the bash harness did —
//
//	grep -F 'cluster.<name>' file | awk -F': ' '{print $1, $2}'
//
// — against streaming the file through ReadStats (stats and histograms), and reports the
// speedup. grep -F is
// also wrong (it keeps every cluster whose name starts with <name>); the comparison is only
// about speed.
func BenchmarkClusterStatsVsGrepAwk(b *testing.B) {
	grep, err1 := exec.LookPath("grep")
	awk, err2 := exec.LookPath("awk")
	if err1 != nil || err2 != nil {
		b.Skip("grep or awk not found")
	}
	dump := benchStats()
	file := filepath.Join(b.TempDir(), "stats.txt")
	if err := os.WriteFile(file, dump, 0o644); err != nil {
		b.Fatal(err)
	}
	harness := func() (int, error) {
		g := exec.Command(grep, "-F", "cluster."+connLab, file)
		a := exec.Command(awk, "-F", ": ", "{print $1, $2}")
		pipe, err := g.StdoutPipe()
		if err != nil {
			return 0, err
		}
		a.Stdin = pipe
		out, err := a.StdoutPipe()
		if err != nil {
			return 0, err
		}
		if err := g.Start(); err != nil {
			return 0, err
		}
		if err := a.Start(); err != nil {
			return 0, err
		}
		lines := 0
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines++
		}
		io.Copy(io.Discard, out)
		if err := g.Wait(); err != nil {
			return 0, err
		}
		return lines, a.Wait()
	}
	if n, err := harness(); err != nil || n == 0 {
		b.Fatalf("harness: %d lines, %v", n, err)
	}
	ours := func() error {
		f, err := os.Open(file)
		if err != nil {
			return err
		}
		defer f.Close()
		_, _, err = ReadStats(f, connLab)
		return err
	}
	var tOurs, tTheirs time.Duration
	n := 0
	for b.Loop() {
		t0 := time.Now()
		if err := ours(); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if _, err := harness(); err != nil {
			b.Fatal(err)
		}
		tTheirs += time.Since(t1)
		tOurs += t1.Sub(t0)
		n++
	}
	b.ReportMetric(float64(tOurs.Microseconds())/float64(n)/1000, "ReadStats-ms/op")
	b.ReportMetric(float64(tTheirs.Microseconds())/float64(n)/1000, "grep-awk-ms/op")
	b.ReportMetric(float64(tTheirs)/float64(tOurs), "speedup-x")
	b.ReportMetric(float64(len(dump))/(1<<20)/tOurs.Seconds()*float64(n), "ReadStats-MB/s")
}

// BenchmarkReadStats streams the dump from a file, as the reader of a `pilot-agent request`
// pipe would.
func BenchmarkReadStats(b *testing.B) {
	dump := benchStats()
	file := filepath.Join(b.TempDir(), "stats.txt")
	if err := os.WriteFile(file, dump, 0o644); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(dump)))
	b.ReportAllocs()
	for b.Loop() {
		f, err := os.Open(file)
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := ReadStats(f, connLab); err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
}
