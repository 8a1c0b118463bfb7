package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"labrun.dev/labrun/cmd/labrun/internal/e2ebin"
	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/report"
)

// localSuite writes n scenarios of the local target into dir, each a load of d on its own echo
// backend; the backends of the first two listen on one fixed address (a port of 127.0.0.2 free
// when the suite is written), so that those two scenarios may never run at the same time. It
// returns that address.
func localSuite(t testing.TB, dir string, n int, d time.Duration) string {
	t.Helper()
	shared := freeAddr(t, "127.0.0.2")
	for i := 1; i <= n; i++ {
		addr := ""
		if i <= 2 {
			addr = fmt.Sprintf("address: %q", shared)
		}
		src := fmt.Sprintf(`package lab

import "labrun.dev/schema"

s%d: schema.#Scenario & {
	doc: "a load on its own echo backend: every request answered 200"
	local: backends: a: {%s}
	steps: [
		{name: "before", snapshot: backend: "a"},
		{name: "load", load: {url: "${backends.a.url}/echo", duration: %q, qps: 50, connections: 2}},
		{name: "after", snapshot: backend: "a"},
	]
	expect: ["load.code200 == load.requests", "delta.rq_total >= load.requests"]
}
`, i, addr, d.String())
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("s%d.cue", i)), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return shared
}

// freeAddr is host:port with a port the kernel gave a listener on host just now, so that a
// test's fixed address does not collide with another test's or another process's.
func freeAddr(t testing.TB, host string) string {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// span is a run's scenario, outcome and time span, from its JSON record.
type span struct {
	scenario   string
	outcome    interp.Outcome
	start, end time.Time
}

func readSpans(t testing.TB, dir string) []span {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	var out []span
	for _, f := range files {
		if strings.HasSuffix(f, ".summary.json") {
			continue
		}
		rec, err := report.Read(f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, span{rec.Scenario, rec.Outcome, rec.Start, rec.End})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].scenario < out[j].scenario })
	return out
}

// TestParallelSuite runs a suite of six local scenarios with --parallel 4: every one passes
// with its own report, as in a sequential run; the two whose backends share a fixed address
// never run at the same time, while others do (the runs are parallel).
func TestParallelSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("runs six 1 s loads")
	}
	bin := e2ebin.BuildTagged(t, ".", "")
	dir := t.TempDir()
	shared := localSuite(t, dir, 6, time.Second)
	cmd := exec.Command(bin, "run", "--parallel", "4", "--report-dir", "reports", ".")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("labrun run --parallel 4: %v\n%s", err, out)
	}
	spans := readSpans(t, filepath.Join(dir, "reports"))
	if len(spans) != 6 {
		t.Fatalf("%d reports, want 6:\n%s", len(spans), out)
	}
	overlap := func(a, b span) bool { return a.start.Before(b.end) && b.start.Before(a.end) }
	concurrent := 0
	for i, a := range spans {
		if a.outcome != interp.Passed {
			t.Errorf("%s: %s", a.scenario, a.outcome)
		}
		for _, b := range spans[i+1:] {
			if overlap(a, b) {
				concurrent++
			}
		}
	}
	if overlap(spans[0], spans[1]) {
		t.Errorf("s1 (%s–%s) and s2 (%s–%s) share %s and ran at the same time", spans[0].start, spans[0].end, spans[1].start, spans[1].end, shared)
	}
	if concurrent == 0 {
		t.Errorf("no two runs overlapped: the suite ran one at a time")
	}
	if !strings.Contains(string(out), "6 scenarios: 6 passed, 0 failed, 0 errors (6 runs)") {
		t.Errorf("no total line:\n%s", out)
	}
	// Each run's output is in one piece: its header, its steps and its verdict together.
	for i := 1; i <= 6; i++ {
		s := string(out)
		h := strings.Index(s, fmt.Sprintf("▶ s%d (", i))
		v := strings.Index(s, fmt.Sprintf("PASSED s%d in ", i))
		if h < 0 || v < h || strings.Contains(s[h+1:v], "▶ ") {
			t.Errorf("s%d's output is not in one piece:\n%s", i, s)
		}
	}
}

// BenchmarkSuiteParallel runs a suite of 8 local scenarios of 2 s each (two of which share a
// fixed address and so run one after the other) sequentially and with --parallel 4, in
// alternating rounds, and reports the parallel wall time as a fraction of the sequential one
// (the bar: under 0.6). Each round checks the verdicts are the same and every run has
// its report. LABRUN_BENCH_ROUNDS (default 2) sets the rounds.
func BenchmarkSuiteParallel(b *testing.B) {
	bin := e2ebin.BuildTagged(b, ".", "")
	dir := b.TempDir()
	localSuite(b, dir, 8, 2*time.Second)
	rounds := 2
	if n, err := fmt.Sscan(os.Getenv("LABRUN_BENCH_ROUNDS"), &rounds); n != 1 || err != nil {
		rounds = 2
	}
	run := func(round int, args ...string) (time.Duration, []span) {
		rep := filepath.Join(dir, fmt.Sprintf("r%d-%s", round, strings.Join(args, "")))
		cmd := exec.Command(bin, append([]string{"run", "-q", "--report-dir", rep}, append(args, ".")...)...)
		cmd.Dir = dir
		start := time.Now()
		out, err := cmd.CombinedOutput()
		d := time.Since(start)
		if err != nil {
			b.Fatalf("labrun run %v: %v\n%s", args, err, out)
		}
		return d, readSpans(b, rep)
	}
	var seq, par []time.Duration
	for range b.N {
		for r := range rounds {
			order := [][]string{nil, {"--parallel", "4"}}
			if r%2 == 1 {
				order[0], order[1] = order[1], order[0]
			}
			var spans [2][]span
			for _, args := range order {
				d, s := run(r, args...)
				if len(args) == 0 {
					seq, spans[0] = append(seq, d), s
				} else {
					par, spans[1] = append(par, d), s
				}
			}
			if len(spans[0]) != 8 || len(spans[1]) != 8 {
				b.Fatalf("reports: %d sequential, %d parallel; want 8 and 8", len(spans[0]), len(spans[1]))
			}
			for i := range spans[0] {
				if spans[0][i].scenario != spans[1][i].scenario || spans[0][i].outcome != spans[1][i].outcome {
					b.Fatalf("verdicts differ: %+v vs %+v", spans[0][i], spans[1][i])
				}
			}
		}
	}
	ms, mp := median(seq), median(par)
	b.ReportMetric(ms.Seconds(), "s-sequential")
	b.ReportMetric(mp.Seconds(), "s-parallel4")
	b.ReportMetric(mp.Seconds()/ms.Seconds(), "ratio")
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}
