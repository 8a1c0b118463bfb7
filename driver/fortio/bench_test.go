//go:build unix

package fortio

import (
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"labrun.dev/labrun/schema"
)

// BenchmarkLoadVsCLI compares labrun's in-process load with the fortio CLI (v1.66.5) at max
// qps: the same step (8 connections, keepalive, 5 s; LABRUN_BENCH_DURATION changes it) against
// the same backend, one after the other, in LABRUN_BENCH_ROUNDS rounds (default 4) that
// alternate which goes first. It reports the median achieved qps of each and their ratio
// (labrun/CLI; the bar is 0.95).
//
// The backend is the CLI's own `fortio server` in a process of its own, so that neither load
// generator shares its process (scheduler, GC, GOMAXPROCS) with the server: with an in-process
// httptest server, labrun's load would compete with the server inside one Go runtime while the
// CLI's would not. (LABRUN_BENCH_BACKEND=inproc runs that unfair variant, to see the effect.)
//
//	nice go test -run '^$' -bench LoadVsCLI -benchtime 1x ./driver/fortio/
func BenchmarkLoadVsCLI(b *testing.B) {
	cli := fortioCLI(b)
	if v, err := exec.Command(cli, "version").Output(); err == nil {
		b.Logf("fortio CLI %s: %s", cli, strings.TrimSpace(string(v)))
	}
	var backend string
	switch os.Getenv("LABRUN_BENCH_BACKEND") {
	case "", "cli":
		backend = startCLIServer(b, cli)
	case "inproc":
		// For comparison only: the server shares the benchmark's process with labrun's load.
		backend = newEchoServer(b).URL
	default:
		b.Fatal("LABRUN_BENCH_BACKEND is cli (default) or inproc")
	}
	duration := 5 * time.Second
	if s := os.Getenv("LABRUN_BENCH_DURATION"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			b.Fatal(err)
		}
		duration = d
	}
	rounds := 4
	if s := os.Getenv("LABRUN_BENCH_ROUNDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			b.Fatalf("LABRUN_BENCH_ROUNDS=%q", s)
		}
		rounds = n
	}
	req := schema.Load{URL: backend + "/echo", Connections: 8, Duration: schema.Duration(duration)}

	// CPU per request of the load generator alone is a second measure: less disturbed than the
	// achieved rate when other processes compete for the cores.
	var libQPS, cliQPS, libCPU, cliCPU []float64
	runLib := func() {
		before := processCPU()
		res, err := New().Load(b.Context(), req)
		cpu := processCPU() - before
		if err != nil {
			b.Fatal(err)
		}
		if res.Errors != 0 || res.Requests == 0 {
			b.Fatalf("in-process load: %+v", res.LoadResult)
		}
		libQPS = append(libQPS, res.QPS)
		libCPU = append(libCPU, float64(cpu.Microseconds())/res.Requests)
	}
	runCLIOnce := func() {
		out, _, cpu := runCLICPU(b, cli, req)
		res, err := DecodeJSON(out)
		if err != nil {
			b.Fatal(err)
		}
		if res.Errors != 0 || res.Requests == 0 {
			b.Fatalf("CLI load: %+v", res.LoadResult)
		}
		cliQPS = append(cliQPS, res.QPS)
		cliCPU = append(cliCPU, float64(cpu.Microseconds())/res.Requests)
	}
	for range b.N {
		for round := range rounds {
			if round%2 == 0 {
				runCLIOnce()
				runLib()
			} else {
				runLib()
				runCLIOnce()
			}
			i := len(libQPS) - 1
			b.Logf("round %d: labrun %.0f qps %.1f cpu-us/req, CLI %.0f qps %.1f cpu-us/req, ratio %.3f",
				round, libQPS[i], libCPU[i], cliQPS[i], cliCPU[i], libQPS[i]/cliQPS[i])
		}
	}
	lib, cliMedian := median(libQPS), median(cliQPS)
	b.ReportMetric(lib, "qps-labrun")
	b.ReportMetric(cliMedian, "qps-cli")
	b.ReportMetric(lib/cliMedian, "ratio")
	b.ReportMetric(median(libCPU), "cpu-us/req-labrun")
	b.ReportMetric(median(cliCPU), "cpu-us/req-cli")
}

// processCPU is the CPU time (user + system) this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
