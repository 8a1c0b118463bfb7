package report_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/report"
	"labrun.dev/labrun/schema"
)

// longRecord is the record of testdata/long.cue on the local target, built in memory: a
// parallel block of n snapshots of backend a planned 10 ms apart (skews of 0–2 ms), each with
// the backend's 22 stats, as `labrun run` records them.
func longRecord(n int) *interp.Record {
	t0 := time.Date(2026, 12, 2, 14, 30, 57, 0, time.UTC)
	pos := dsl.Pos{File: "testdata/long.cue", Line: 20, Col: 3}
	rec := &interp.Record{Version: interp.RecordVersion, Scenario: "long", File: pos.File, Pos: pos,
		Doc: "long timelines", Target: "local", Where: "backend a 127.0.0.1:40000",
		Start: t0, StepsStart: t0, End: t0.Add(time.Duration(n) * 10 * time.Millisecond), Outcome: interp.Passed,
		Results: map[string]*interp.Result{}}
	rec.Steps = append(rec.Steps, &interp.StepRecord{Path: "steps.0", Kind: "parallel", Phase: dsl.PhaseSteps, Pos: pos,
		Summary: fmt.Sprintf("%d steps", n), End: rec.End.Sub(t0), Outcome: interp.Passed})
	for i := range n {
		name := fmt.Sprintf("s%d", i)
		planned := time.Duration(i) * 10 * time.Millisecond
		skew := time.Duration(i*7919%2000) * time.Microsecond
		rec.Steps = append(rec.Steps, &interp.StepRecord{Path: fmt.Sprintf("steps.0.parallel.%d", i), Name: name,
			Kind: "snapshot", Phase: dsl.PhaseSteps, Pos: pos, Summary: "backend a", Planned: planned,
			Start: planned + skew, End: planned + skew + 100*time.Microsecond, Skew: skew, Timed: true, Outcome: interp.Passed})
		c, g := schema.Stats{}, schema.Stats{}
		for _, s := range []string{"rq_total", "cx_total", "cx_rx_bytes_total", "cx_tx_bytes_total", "rq_1xx", "rq_2xx", "rq_3xx", "rq_4xx", "rq_5xx"} {
			c[s] = float64(i * len(s))
			c["http.downstream_"+s] = float64(i * len(s))
		}
		for class := 1; class <= 5; class++ { // the local backend's rq_Nxx is the sum of its codes
			c[fmt.Sprintf("rq_%d00", class)] = c[fmt.Sprintf("rq_%dxx", class)]
		}
		for _, s := range []string{"cx_active", "rq_active"} {
			g[s] = float64(i % 3)
			g["http.downstream_"+s] = float64(i % 3)
		}
		rec.Put(name, "snapshot", false, &interp.SnapshotRecord{Name: name, Source: "backend a", At: t0.Add(planned + skew), Counters: c, Gauges: g})
	}
	rec.Expectations = []*interp.Judgement{{Src: "s9999.rq_total == 0", Outcome: interp.Passed, Explanation: "s9999.rq_total (0) == 0"}}
	return rec
}

// BenchmarkWriteLong writes the report of a run of 10,000 timed snapshots (testdata/long.cue,
// whose real run is 100 s): the time from the end of the run to the report on disk, the
// bytes written, and the heap the writing adds (what a run's RSS grows by after its steps).
//
//	go test -run '^$' -bench WriteLong -benchtime 3x ./report/
func BenchmarkWriteLong(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("steps=%d", n), func(b *testing.B) {
			rec := longRecord(n)
			dir := b.TempDir()
			var size int64
			var peak uint64
			for b.Loop() {
				for _, a := range rec.Artifacts {
					a.File = ""
				}
				var before runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				if _, err := report.WriteAs(dir, "long", rec); err != nil {
					b.Fatal(err)
				}
				var after runtime.MemStats
				runtime.ReadMemStats(&after)
				peak = max(peak, after.TotalAlloc-before.TotalAlloc)
			}
			_ = filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
				if err == nil && !fi.IsDir() {
					size += fi.Size()
				}
				return nil
			})
			b.ReportMetric(float64(size)/1e6, "MB-written")
			b.ReportMetric(float64(peak)/1e6, "MB-allocated")
		})
	}
}

// TestLongRunReportElides: a 1,000-step run's report shows the first and last rows of its
// timeline and snapshot columns, says how many it left out, still shows the most skewed
// steps, and its files are far smaller than the record.
func TestLongRunReportElides(t *testing.T) {
	rec := longRecord(1000)
	// Make one step in the middle fail and one the most skewed: both must be shown.
	rec.Steps[500].Outcome, rec.Steps[500].Error = interp.Failed, "backend a: connection refused"
	rec.Steps[600].Skew, rec.Steps[600].Start, rec.Steps[600].End = 9*time.Millisecond, rec.Steps[600].Planned+9*time.Millisecond, rec.Steps[600].Planned+10*time.Millisecond
	dir := t.TempDir()
	files, err := report.WriteAs(dir, "long", rec)
	if err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(files.Markdown)
	if err != nil {
		t.Fatal(err)
	}
	s := string(md)
	for _, want := range []string{
		"| … 921 more rows (921 snapshot steps): every one in the JSON record |",
		"| s499 | snapshot |", // the failed one (steps[0] is the parallel block)
		"backend a: connection refused",
		"| s599 (among the most skewed) | snapshot |",
		"| s999 | snapshot |",
		"| … 988 more (JSON record) |",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("the Markdown lacks %q", want)
		}
	}
	if n := strings.Count(s, "| snapshot |"); n > 100 {
		t.Errorf("the timeline table has %d snapshot rows, want at most 100", n)
	}
	svg, err := os.ReadFile(files.Timeline)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(svg), "… 920 more steps") || len(svg) > 200<<10 {
		t.Errorf("timeline.svg: %d bytes, want one row for the middle and at most 200 KiB", len(svg))
	}
}

// TestLocalLatencySaid: on the local target, the load table is followed by what its latencies
// measure; on kube it is not.
func TestLocalLatencySaid(t *testing.T) {
	for _, target := range []string{"local", "kube"} {
		rec := longRecord(2)
		rec.Target = target
		rec.Put("fortio", "load", false, &interp.LoadRecord{LoadResult: schema.LoadResult{Requests: 30, P99: 1.5, Codes: map[string]float64{"200": 30}}})
		files, err := report.WriteAs(t.TempDir(), "l", rec)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{files.Markdown, files.HTML} {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			said := strings.Contains(string(b), "these latencies are round trips on this machine (loopback)")
			if said != (target == "local") {
				t.Errorf("%s target, %s: says what local latencies are: %v", target, filepath.Ext(f), said)
			}
		}
	}
}

// TestRecordStreamedAsMarshalled: the record file is what json.MarshalIndent makes of the
// record, though written one step and one result at a time; and Read reads it back.
func TestRecordStreamedAsMarshalled(t *testing.T) {
	// Every record keeps its run's clock (Read refuses one without: interp.Record.ClockAbsences).
	t0 := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	for _, rec := range []*interp.Record{longRecord(3), {Version: interp.RecordVersion, Scenario: "empty", Start: t0, StepsStart: t0, End: t0}, {Version: interp.RecordVersion, Scenario: "none", Steps: []*interp.StepRecord{}, Results: map[string]*interp.Result{}, Start: t0, StepsStart: t0, End: t0}} {
		files, err := report.WriteAs(t.TempDir(), "r", rec)
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(files.JSON)
		if err != nil {
			t.Fatal(err)
		}
		want, err := json.MarshalIndent(rec, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want)+"\n" {
			t.Errorf("%s: the record file differs from json.MarshalIndent:\n%s\nwant:\n%s", rec.Scenario, got, want)
		}
		if _, err := report.Read(files.JSON); err != nil {
			t.Errorf("%s: %v", rec.Scenario, err)
		}
	}
}
