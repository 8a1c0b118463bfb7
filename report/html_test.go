package report_test

import (
	"fmt"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/report"
	"labrun.dev/labrun/schema"
)

// TestHTMLSelfContained: the HTML report fetches nothing (no script, no external URL: the
// only URL is SVG's namespace) and escapes what a run supplies.
func TestHTMLSelfContained(t *testing.T) {
	files, err := report.Write(t.TempDir(), hostileRecord())
	if err != nil {
		t.Fatal(err)
	}
	page, _ := os.ReadFile(files.HTML)
	s := string(page)
	if strings.Contains(s, "<script") {
		t.Errorf("the HTML report holds a script")
	}
	for _, u := range regexp.MustCompile(`(?:src|href|xmlns|action)="[^"]*"|url\([^)]*\)|@import`).FindAllString(s, -1) {
		if u == `xmlns="http://www.w3.org/2000/svg"` || strings.HasPrefix(u, `href="20`) && !strings.Contains(u, "://") {
			continue // SVG's namespace, links to the report's own artifacts
		}
		t.Errorf("the HTML report refers to %s", u)
	}
}

// TestHTMLLoadCharts: a load with fortio's JSON and its codes over time gets a latency
// histogram, a codes-over-time chart and a connections-by-backend chart.
func TestHTMLLoadCharts(t *testing.T) {
	rec := sampleRecord()
	rec.Loads()["fortio"].IPs = map[string]float64{"127.0.0.2:80": 3, "127.0.0.3:80": 1}
	rec.TargetValues = map[string]any{"backends": map[string]any{"a": map[string]any{"address": "127.0.0.2:80"}}}
	fortioJSON := `{"DurationHistogram":{"Count":30,"Data":[{"Start":0.001,"End":0.002,"Count":10},{"Start":0.002,"End":0.005,"Count":20}],"Percentiles":[{"Percentile":50,"Value":0.0025},{"Percentile":99,"Value":0.0049}]}}`
	codes := `[{"atNs":0,"codes":{"200":5}},{"atNs":250000000,"codes":{"200":5,"503":5}}]`
	rec.Artifacts = append(rec.Artifacts[:1], // the sample's own fortio.json replaced
		&interp.ArtifactRecord{Step: "fortio", Name: "fortio.json", Data: []byte(fortioJSON)},
		&interp.ArtifactRecord{Step: "fortio", Name: "codes-over-time.json", Data: []byte(codes)})
	files, err := report.Write(t.TempDir(), rec)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := os.ReadFile(files.HTML)
	for _, want := range []string{"fortio: latency histogram", ">p99<", "1–2 ms: 10", "fortio: responses by code", "503 at 0.010 s: 10/s", "fortio: connects by backend", "a 127.0.0.2:80"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
}

// TestArtifactFilesBounded: a run of 10,000 samples, each with its raw stats, writes at most
// 11 files (its seal one of them), not a folder and a file per snapshot.
func TestArtifactFilesBounded(t *testing.T) {
	rec := sampleRecord()
	t0 := rec.Start
	ser := &interp.SeriesRecord{Name: "g", Source: "envoy client cluster c", Every: 10 * time.Millisecond}
	rec.Put("g", "snapshot", true, ser)
	for i := 1; i <= 10000; i++ {
		at := time.Duration(i) * 10 * time.Millisecond
		rec.Steps = append(rec.Steps, &interp.StepRecord{Path: "steps.3", Name: "g", Kind: "snapshot", Sample: i, Planned: at, Start: at, End: at, Timed: true, Outcome: interp.Passed})
		ser.Samples = append(ser.Samples, &interp.SnapshotRecord{Name: "g", At: t0.Add(at), Counters: schema.Stats{"rq_total": float64(i)}})
		for _, kind := range []string{"stats-counters.txt", "stats-gauges.txt", "a.txt", "b.txt", "c.txt", "d.txt", "e.txt", "f.txt"} {
			rec.Artifacts = append(rec.Artifacts, &interp.ArtifactRecord{Step: "g", Name: fmt.Sprintf("%04d-%s", i, kind), Data: []byte("x\n")})
		}
	}
	rec.End = t0.Add(101 * time.Second)
	dir := t.TempDir()
	if _, err := report.Write(dir, rec); err != nil {
		t.Fatal(err)
	}
	n := 0
	filepath.Walk(dir, func(_ string, info os.FileInfo, _ error) error {
		if !info.IsDir() {
			n++
		}
		return nil
	})
	if n > 11 {
		t.Errorf("a 10,000-sample run wrote %d report files, want at most 11", n)
	}
}

// TestSeriesChartAcrossPods: a series whose selector picked another pod between two samples
// (client-a's Envoy, then client-b's, which counts from its own start) is drawn with the
// change marked, no rate between the two pods' counters, and both reports say it.
func TestSeriesChartAcrossPods(t *testing.T) {
	rec := sampleRecord()
	t0 := rec.Start
	ser := &interp.SeriesRecord{Name: "g", Source: "envoy lab/{app=client} cluster c", Every: 100 * time.Millisecond}
	for i, c := range []float64{10, 20, 30, 1000, 1010, 1020} {
		pod, uid := "lab/client-a", "u-a"
		if i >= 3 {
			pod, uid = "lab/client-b", "u-b"
		}
		ser.Samples = append(ser.Samples, &interp.SnapshotRecord{Name: "g", Source: ser.Source, Pod: pod, PodUID: uid,
			At: t0.Add(time.Duration(i+1) * 100 * time.Millisecond), Counters: schema.Stats{"upstream_rq_total": c}})
	}
	rec.Results["g"] = &interp.Result{Kind: "snapshot", Sampled: true, Value: ser}
	files, err := report.Write(t.TempDir(), rec)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := os.ReadFile(files.HTML)
	md, _ := os.ReadFile(files.Markdown)
	for _, want := range []string{"→ pod lab/client-b", "the samples read pod lab/client-b"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
	// (1000-30)/0.1 s: the difference of two Envoys' counters, read as a rate.
	if strings.Contains(string(page), ": 9700<") {
		t.Errorf("HTML draws a rate of 9700/s between two pods' counters")
	}
	why := `series "g" read pod lab/client-a (samples 1-3), then pod lab/client-b (samples 4-6)`
	if !strings.Contains(html.UnescapeString(string(page)), why) || !strings.Contains(string(md), why) {
		t.Logf("%s", md)
		t.Errorf("HTML and Markdown should both say %q", why)
	}
}

// TestHTMLNumbersKeepTheirUnit: a number cell's figure and unit stay on one line. In a
// browser 480 pixels wide, the timeline's "ended" column of a two-step run read "0.015" over
// "s", the unit alone on the next line.
func TestHTMLNumbersKeepTheirUnit(t *testing.T) {
	page := report.HTML(sampleRecord(), report.Files{})
	rule := regexp.MustCompile(`td\.num\{[^}]*\}`).FindString(page)
	if !strings.Contains(rule, "white-space:nowrap") {
		t.Errorf("the HTML report's number cells wrap: %q", rule)
	}
	if !strings.Contains(page, `<td class="num">`) {
		t.Errorf("the HTML report has no number cell: the rule above tests nothing")
	}
}
