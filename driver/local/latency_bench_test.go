package local

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

	"labrun.dev/labrun/driver/fortio"
	"labrun.dev/labrun/schema"
)

// BenchmarkBackendLatency: the latency a local backend adds under load, as labrun's load
// (driver/fortio, in this process, like `labrun run`) measures it, for the three places an
// echo backend can run: "host" (the backend host, a process of its own: what labrun runs),
// "inproc" (in the load generator's process, as labrun ran them before) and "fortio" (the
// fortio CLI's `fortio server`, the reference). Each round loads each of them once, in an
// order that turns; reported: the median of each one's p99 and p50 (ms), and the p99 ratios
// to fortio server's. Every server listens on loopback only.
//
//	FORTIO_CLI=/path/to/fortio go test -run '^$' -bench BackendLatency -benchtime 1x ./driver/local/
//	# knobs: LABRUN_BENCH_QPS=0 (max: the load the issue measured) LABRUN_BENCH_DURATION=4s
//	#        LABRUN_BENCH_ROUNDS=4 (defaults); 8 connections
func BenchmarkBackendLatency(b *testing.B) {
	cli := fortioCLI(b)
	qps, duration, rounds := 0.0, 4*time.Second, 4
	if s := os.Getenv("LABRUN_BENCH_QPS"); s != "" {
		qps, _ = strconv.ParseFloat(s, 64)
	}
	if s := os.Getenv("LABRUN_BENCH_DURATION"); s != "" {
		duration, _ = time.ParseDuration(s)
	}
	if s := os.Getenv("LABRUN_BENCH_ROUNDS"); s != "" {
		rounds, _ = strconv.Atoi(s)
	}
	urls := map[string]string{"fortio": startFortioServer(b, cli)}
	spec := map[string]schema.Backend{"a": {}}
	inproc, err := startBackend("a", spec["a"], b.Logf)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = inproc.close(context.Background()) })
	urls["inproc"] = "http://" + inproc.addr.String()
	launch := newLauncher()
	b.Cleanup(func() { _ = launch.close(context.Background()) })
	h, addrs, err := startHost(b.Context(), hostCmd(), spec, launch, b.Logf)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = h.close(context.Background()) })
	urls["host"] = "http://" + addrs["a"].String()

	names := []string{"host", "inproc", "fortio"}
	p99, p50 := map[string][]float64{}, map[string][]float64{}
	gen := fortio.New()
	for range b.N {
		for round := range rounds {
			order := slices.Clone(names)
			for range round % len(order) {
				order = append(order[1:], order[0])
			}
			for _, n := range order {
				res, err := gen.Load(b.Context(), schema.Load{URL: urls[n] + "/echo", QPS: qps, Connections: 8, Duration: schema.Duration(duration)})
				if err != nil {
					b.Fatal(err)
				}
				if res.Errors != 0 || res.Requests == 0 {
					b.Fatalf("%s: %+v", n, res.LoadResult)
				}
				p99[n] = append(p99[n], res.P99)
				p50[n] = append(p50[n], res.P50)
				b.Logf("round %d %s: %.0f qps, p50 %.3f ms, p99 %.3f ms", round, n, res.QPS, res.P50, res.P99)
			}
		}
	}
	for _, n := range names {
		b.ReportMetric(median(p99[n]), "p99-ms-"+n)
		b.ReportMetric(median(p50[n]), "p50-ms-"+n)
	}
	b.ReportMetric(median(p99["host"])/median(p99["fortio"]), "p99-ratio-host/fortio")
	b.ReportMetric(median(p99["inproc"])/median(p99["fortio"]), "p99-ratio-inproc/fortio")
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// fortioCLI finds the fortio CLI: $FORTIO_CLI, the sandbox's, or fortio on $PATH.
func fortioCLI(tb testing.TB) string {
	tb.Helper()
	if p := os.Getenv("FORTIO_CLI"); p != "" {
		return p
	}
	if home, err := os.UserHomeDir(); err == nil {
		if m, _ := filepath.Glob(filepath.Join(home, ".cache/labrun/sandbox/*/bin/fortio")); len(m) > 0 {
			return m[len(m)-1]
		}
	}
	if p, err := exec.LookPath("fortio"); err == nil {
		return p
	}
	tb.Skip("fortio CLI not found: set FORTIO_CLI=/path/to/fortio (GOBIN=/tmp/fortio-cli go install fortio.org/fortio@v1.66.5)")
	return ""
}

var fortioListening = regexp.MustCompile(`http-echo server listening on tcp (127\.0\.0\.1:\d+)`)

// startFortioServer runs `fortio server` with its HTTP echo server only, on loopback, and
// returns its base URL.
func startFortioServer(tb testing.TB, cli string) string {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, cli, "server", "-http-port", "127.0.0.1:0",
		"-grpc-port", "disabled", "-redirect-port", "disabled", "-tcp-port", "disabled", "-udp-port", "disabled",
		"-ui-path", "", "-echo-debug-path", "")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		tb.Fatal(err)
	}
	cmd.Stdout = io.Discard
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cancel(); _ = cmd.Wait() })
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := fortioListening.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
				break
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
	}()
	select {
	case a := <-found:
		return fmt.Sprintf("http://%s", a)
	case <-time.After(10 * time.Second):
		tb.Fatal("fortio server did not say where it listens")
		return ""
	}
}
