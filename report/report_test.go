package report_test

import (
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/report"
	"labrun.dev/labrun/schema"
)

func sampleRecord() *interp.Record {
	t0 := time.Date(2026, 7, 5, 10, 0, 0, 0, time.UTC)
	snap := func(name string, at time.Duration, overflow, active float64) *interp.SnapshotRecord {
		return &interp.SnapshotRecord{Name: name, Source: "envoy client cluster c", At: t0.Add(at),
			Counters: schema.Stats{"upstream_rq_pending_overflow": overflow, "upstream_rq_total": 10 + overflow},
			Gauges:   schema.Stats{"circuit_breakers.default.rq_pending_open": active}}
	}
	return &interp.Record{
		Version: interp.RecordVersion, Scenario: "s2", File: "/lab/s2.cue", Pos: dsl.Pos{File: "/lab/s2.cue", Line: 5, Col: 1},
		Doc: "pending overflow equals 503s", Target: "kube", Where: "context lab",
		Start: t0, StepsStart: t0, End: t0.Add(3 * time.Second), Outcome: interp.Failed,
		Steps: []*interp.StepRecord{
			{Path: "steps.0", Name: "before", Kind: "snapshot", Outcome: interp.Passed, End: 10 * time.Millisecond},
			{Path: "steps.1.parallel.0", Name: "fortio", Kind: "load", Planned: 10 * time.Millisecond, Start: 10 * time.Millisecond, End: 2 * time.Second, Outcome: interp.Passed},
			{Path: "steps.1.parallel.1", Name: "mid", Kind: "snapshot", Planned: time.Second, Start: time.Second + 300*time.Microsecond, Skew: 300 * time.Microsecond, Timed: true, End: time.Second + 20*time.Millisecond, Outcome: interp.Passed},
			{Path: "steps.2", Name: "after", Kind: "snapshot", Planned: 2 * time.Second, Start: 2 * time.Second, End: 2*time.Second + 10*time.Millisecond, Outcome: interp.Passed},
		},
		Results: map[string]*interp.Result{
			"before": {Kind: "snapshot", Value: snap("before", 0, 0, 0)},
			"mid":    {Kind: "snapshot", Value: snap("mid", time.Second, 5, 1)},
			"after":  {Kind: "snapshot", Value: snap("after", 2*time.Second, 12, 0)},
			"g": {Kind: "snapshot", Sampled: true, Value: &interp.SeriesRecord{Name: "g", Source: "envoy client cluster c", Every: 500 * time.Millisecond,
				Samples: []*interp.SnapshotRecord{snap("g", 0, 0, 0), snap("g", 500*time.Millisecond, 3, 1), snap("g", time.Second, 6, 1)}}},
			"fortio": {Kind: "load", Value: &interp.LoadRecord{LoadResult: schema.LoadResult{Requests: 30, Codes: map[string]float64{"200": 15, "503": 15}, OK: 15, Errors: 15,
				QPS: 30 / 1.9, DurationS: 1.9, Connections: 2, Min: 50, P50: 90, P90: 150, P99: 200, P999: 210, Max: 210, Avg: 100}}},
		},
		Expectations: []*interp.Judgement{
			{Src: "delta.upstream_rq_pending_overflow == fortio.code503", Outcome: interp.Failed, Explanation: "delta.upstream_rq_pending_overflow (12) == fortio.code503 (15)"},
			{Src: "mid.circuit_breakers.default.rq_pending_open == 1", Outcome: interp.Passed},
		},
		// A load on kube keeps fortio's result (fortio.json): a record that lists none is refused.
		Artifacts: []*interp.ArtifactRecord{{Step: "before", Name: "stats-counters.txt", Data: []byte("cluster.c;.upstream_rq_total: 10\n")}, {Step: "fortio", Name: "fortio.json", Data: []byte(`{"RunType":"HTTP"}`)}},
	}
}

// TestWrite checks every file of a report: the Markdown has the verdict with values, the
// timeline with skew, the snapshot table with deltas; the JSON reads back; artifacts and
// pictures are where the Markdown links them.
func TestWrite(t *testing.T) {
	dir := t.TempDir()
	rec := sampleRecord()
	files, err := report.Write(dir, rec)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "20260705T100000Z_s2.md"); files.Markdown != want {
		t.Errorf("markdown at %s, want %s", files.Markdown, want)
	}
	md, _ := os.ReadFile(files.Markdown)
	for _, want := range []string{
		"# s2 — FAILED",
		"delta.upstream_rq_pending_overflow (12) == fortio.code503 (15)",
		"| mid | snapshot | 1.000 s | 1.000 s | 1.020 s | 0.3 ms |",
		"| upstream_rq_pending_overflow | counter | 0 | 5 | 12 | +12 |",
		"| circuit_breakers.default.rq_pending_open | gauge | 0 | 1 | 0 | |",
		"![timeline](20260705T100000Z_s2/timeline.svg)",
		"[the HTML report](20260705T100000Z_s2.html)",
		"before stats-counters.txt: [stats-counters.txt.jsonl line 1](20260705T100000Z_s2/stats-counters.txt.jsonl)",
	} {
		if !strings.Contains(string(md), want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
	for _, p := range []string{files.Timeline, filepath.Join(files.Artifacts, "stats-counters.txt.jsonl")} {
		if _, err := os.Stat(p); err != nil {
			t.Error(err)
		}
	}
	lines, _ := os.ReadFile(filepath.Join(files.Artifacts, "stats-counters.txt.jsonl"))
	if want := `{"step":"before","name":"stats-counters.txt","text":"cluster.c;.upstream_rq_total: 10\n"}` + "\n"; string(lines) != want {
		t.Errorf("artifact file:\n%s\nwant\n%s", lines, want)
	}
	page, _ := os.ReadFile(files.HTML)
	for _, want := range []string{"<title>s2 — FAILED</title>", "upstream_rq_pending_overflow</text>", "per second", "<path", "delta.upstream_rq_pending_overflow (12) == fortio.code503 (15)", `id="snapshot-chart-upstream_rq_pending_overflow"`, "2.000 s: 12"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
	back, err := report.Read(files.JSON)
	if err != nil {
		t.Fatal(err)
	}
	if back.Scenario != "s2" || back.Snapshot("after").Counters["upstream_rq_pending_overflow"] != 12 || back.Loads()["fortio"].Codes["503"] != 15 {
		t.Errorf("record does not read back: %+v", back)
	}
}

func TestReadRefusesOtherVersions(t *testing.T) {
	p := filepath.Join(t.TempDir(), "r.json")
	os.WriteFile(p, []byte(`{"version": 99}`), 0o644)
	if _, err := report.Read(p); err == nil || !strings.Contains(err.Error(), "version 99") {
		t.Errorf("want a version error, got %v", err)
	}
	os.WriteFile(p, []byte(`not json`), 0o644)
	if _, err := report.Read(p); err == nil || !strings.Contains(err.Error(), "not a labrun run record") {
		t.Errorf("want a format error, got %v", err)
	}
}

func TestJUnit(t *testing.T) {
	p := filepath.Join(t.TempDir(), "junit.xml")
	if err := report.JUnit(p, []*interp.Record{sampleRecord()}, nil); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	var suites struct {
		Suites []struct {
			Name     string `xml:"name,attr"`
			Tests    int    `xml:"tests,attr"`
			Failures int    `xml:"failures,attr"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b, &suites); err != nil {
		t.Fatalf("invalid XML: %v\n%s", err, b)
	}
	if len(suites.Suites) != 1 || suites.Suites[0].Tests != 6 || suites.Suites[0].Failures != 1 {
		t.Errorf("suites %+v, want one suite of 4 steps + 2 expectations with 1 failure", suites.Suites)
	}
}

func TestTolerance(t *testing.T) {
	for _, tc := range []struct {
		line string
		ok   bool
		want report.Tolerance
	}{
		{"~ fortio.avg 3000 ±10%", true, report.Tolerance{Expr: "fortio.avg", Value: 3000, Pct: 10, Off: 2}},
		{"~ perconn.ips[backends.b.address] 15 ± 50%", true, report.Tolerance{Expr: "perconn.ips[backends.b.address]", Value: 15, Pct: 50, Off: 2}},
		{"expect x: passed", false, report.Tolerance{}},
		{"~ fortio.avg ±10%", false, report.Tolerance{}},
	} {
		got, ok := report.ParseTolerance(tc.line)
		if ok != tc.ok || got != tc.want {
			t.Errorf("%q: got %+v %v, want %+v %v", tc.line, got, ok, tc.want, tc.ok)
		}
	}
}

// A streamed artifact (a file the run wrote as the output came) is moved into the artifacts
// folder as a file of its own, linked from the reports; nothing is left under a temporary name.
func TestWriteMovesStreamedArtifacts(t *testing.T) {
	dir := t.TempDir()
	spool := filepath.Join(dir, ".spool")
	if err := os.Mkdir(spool, 0o755); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(spool, "artifact-1")
	if err := os.WriteFile(big, []byte("lots of output\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rec := sampleRecord()
	rec.Artifacts = append(rec.Artifacts, &interp.ArtifactRecord{Step: "big", Name: "stdout.txt", Path: big})
	f, err := report.Write(dir, rec)
	if err != nil {
		t.Fatal(err)
	}
	moved := filepath.Join(f.Artifacts, "big-stdout.txt")
	if b, err := os.ReadFile(moved); err != nil || string(b) != "lots of output\n" {
		t.Fatalf("%s: %q, %v", moved, b, err)
	}
	if _, err := os.Stat(big); !os.IsNotExist(err) {
		t.Errorf("the spool file is still there: %v", err)
	}
	md, _ := os.ReadFile(f.Markdown)
	if !strings.Contains(string(md), "- big stdout.txt: [big-stdout.txt]("+filepath.Base(f.Artifacts)+"/big-stdout.txt)") {
		t.Errorf("the Markdown does not link it:\n%s", md)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

// WriteWith leaves the old file, or nothing, when the write fails: never a part of the new one.
func TestWriteWithIsAtomic(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "r.json")
	if err := report.WriteFile(p, []byte("old\n")); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("disk full")
	err := report.WriteWith(p, func(w io.Writer) error {
		_, _ = w.Write([]byte("half of the new"))
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err %v", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "old\n" {
		t.Errorf("after a failed write: %q, want the old file", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("files left: %v", ents)
	}
}

// TestWriteAsLeavesNoPartOfAReport: a report whose record cannot be written (a full or
// read-only report directory; here a folder in the JSON's place) leaves no artifacts folder
// behind: a full tmpfs kept a folder holding the first 200 KiB of a command's stdout beside
// no record, while reports are "never a part of one".
func TestWriteAsLeavesNoPartOfAReport(t *testing.T) {
	dir := t.TempDir()
	rec := sampleRecord()
	rec.Artifacts = append(rec.Artifacts, &interp.ArtifactRecord{Step: "x", Name: "stdout.txt", Data: []byte("hello\n")})
	if err := os.Mkdir(filepath.Join(dir, "r.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	files, err := report.WriteAs(dir, "r", rec)
	if err == nil {
		t.Fatal("the record was written over a folder")
	}
	if _, serr := os.Stat(files.Artifacts); serr == nil {
		entries, _ := os.ReadDir(files.Artifacts)
		t.Errorf("the write failed (%v) and left the artifacts folder %s with %d files", err, files.Artifacts, len(entries))
	}
}
