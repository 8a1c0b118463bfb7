package report_test

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/report"
	"labrun.dev/labrun/schema"
)

// TestExpectationValuesLinked: in the HTML each value an expectation read, passing or
// failing, is shown with its unit and links to the chart or table that holds it, and that
// element exists.
func TestExpectationValuesLinked(t *testing.T) {
	rec := sampleRecord()
	rec.Loads()["fortio"].IPs = map[string]float64{"127.0.0.2:80": 14, "127.0.0.3:80": 16}
	rec.Loads()["fortio"].P99 = 1.66046
	rec.TargetValues = map[string]any{"backends": map[string]any{"b": map[string]any{"address": "127.0.0.3:80"}}}
	rec.Expectations = append(rec.Expectations,
		&interp.Judgement{Src: "fortio.ips[backends.b.address] > 0", Outcome: interp.Passed, Explanation: `fortio.ips[backends.b.address ("127.0.0.3:80")] (16) > 0`,
			Values: map[string]any{"fortio.ips[backends.b.address]": 16.0, "backends.b.address": "127.0.0.3:80"}},
		&interp.Judgement{Src: "fortio.p99 < 1", Outcome: interp.Failed, Explanation: "fortio.p99 (1.66 ms) < 1", Values: map[string]any{"fortio.p99": 1.66046}},
		&interp.Judgement{Src: "delta.upstream_rq_pending_overflow > 0", Outcome: interp.Passed, Values: map[string]any{"delta.upstream_rq_pending_overflow": 12.0}},
	)
	files, err := report.Write(t.TempDir(), rec)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := os.ReadFile(files.HTML)
	s := string(page)
	for _, want := range []string{
		`<a href="#load-fortio-backends" title="in fortio: connects by backend"><code>fortio.ips[backends.b.address]</code> = 16</a>`,
		`<a href="#load-fortio" title="in load fortio"><code>fortio.p99</code> = 1.66 ms</a>`,
		`<a href="#snapshot-chart-upstream_rq_pending_overflow" title="in upstream_rq_pending_overflow at each snapshot"><code>delta.upstream_rq_pending_overflow</code> = 12</a>`,
		`<a href="#run" title="in the run"><code>backends.b.address</code> = &#34;127.0.0.3:80&#34;</a>`,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("HTML lacks %s", want)
		}
	}
	for _, m := range regexp.MustCompile(`href="#([^"]+)"`).FindAllStringSubmatch(s, -1) {
		if !strings.Contains(s, `id="`+m[1]+`"`) {
			t.Errorf("a value links to #%s, which the page does not have", m[1])
		}
	}
	md, _ := os.ReadFile(files.Markdown)
	if !strings.Contains(string(md), "- ✅ `fortio.ips[backends.b.address (\"127.0.0.3:80\")] (16) > 0` — passed") {
		t.Errorf("the Markdown does not show the passing expectation's values:\n%s", md)
	}
}

// TestSnapshotChartsStep: between two snapshots a chart holds the first value and steps at the
// second (horizontal and vertical moves only): it never draws a slope that would invent
// traffic between them.
func TestSnapshotChartsStep(t *testing.T) {
	files, err := report.Write(t.TempDir(), sampleRecord())
	if err != nil {
		t.Fatal(err)
	}
	page, _ := os.ReadFile(files.HTML)
	box := regexp.MustCompile(`id="snapshot-chart-upstream_rq_pending_overflow">(.*?)</svg>`).FindString(string(page))
	if box == "" {
		t.Fatal("no chart of upstream_rq_pending_overflow")
	}
	paths := regexp.MustCompile(`<path [^>]* d="([^"]*)"`).FindAllStringSubmatch(box, -1)
	if len(paths) == 0 {
		t.Fatal("the chart has no line")
	}
	for _, p := range paths {
		if regexp.MustCompile(`[LlCcQq]`).MatchString(p[1]) {
			t.Errorf("a slope between snapshots: %s", p[1])
		}
	}
}

// soakRecord is a run of n samples every 100ms of a backend's counters and gauges, with a
// load over all of it.
func soakRecord(n int) *interp.Record {
	rec := sampleRecord()
	t0 := rec.Start
	ser := &interp.SeriesRecord{Name: "g", Source: "backend a", Every: 100 * time.Millisecond}
	rec.Put("g", "snapshot", true, ser)
	end := time.Duration(n+1) * 100 * time.Millisecond
	rec.Steps[1].End = end
	for i := 1; i <= n; i++ {
		at := time.Duration(i) * 100 * time.Millisecond
		rec.Steps = append(rec.Steps, &interp.StepRecord{Path: "steps.3", Name: "g", Kind: "snapshot", Sample: i, Planned: at, Start: at + time.Duration(i%7)*time.Millisecond, Skew: time.Duration(i%7) * time.Millisecond, End: at + 8*time.Millisecond, Timed: true, Outcome: interp.Passed})
		smp := &interp.SnapshotRecord{Name: "g", Source: "backend a", At: t0.Add(at), Counters: schema.Stats{}, Gauges: schema.Stats{}}
		for k, name := range []string{"rq_total", "cx_total", "rq_200", "cx_rx_bytes_total", "cx_tx_bytes_total"} {
			smp.Counters[name] = float64(i * (5 + k + i%3))
		}
		smp.Gauges["rq_active"], smp.Gauges["cx_active"] = float64(i%5), float64(4)
		ser.Samples = append(ser.Samples, smp)
	}
	rec.End = t0.Add(end)
	return rec
}

// TestReportSizeFollowsChartWidth: a run four times as long writes an HTML report about as
// big: charts are drawn per pixel column, the steps table lists the ends of a sampler and what
// did not pass. (The 5-minute soak of docs/reports.md, sampled every 100ms: 307 KB.)
func TestReportSizeFollowsChartWidth(t *testing.T) {
	size := func(n int) int {
		files, err := report.Write(t.TempDir(), soakRecord(n))
		if err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(files.HTML)
		if err != nil {
			t.Fatal(err)
		}
		return int(fi.Size())
	}
	short, long := size(3000), size(12000)
	t.Logf("HTML of 3,000 samples: %d bytes, of 12,000: %d bytes", short, long)
	if long > short*5/4 || long > 2<<20 {
		t.Errorf("HTML of 3,000 samples: %d bytes, of 12,000: %d bytes; want at most 25%% more and under 2 MB", short, long)
	}
}

// TestRepeatRoundsElided: a step repeated 2,000 times is listed by its first and last rounds,
// one row for those between and each round that did not pass; the timeline draws it as marks
// a few pixels apart, not 2,000 bars.
func TestRepeatRoundsElided(t *testing.T) {
	rec := sampleRecord()
	for i := 1; i <= 2000; i++ {
		at := 2*time.Second + time.Duration(i)*time.Millisecond
		out := interp.Passed
		if i == 1500 {
			out = interp.Failed
		}
		rec.Steps = append(rec.Steps, &interp.StepRecord{Path: "steps.3.repeat.steps.0", Name: "burst", Kind: "load", Round: i, Start: at, End: at + time.Millisecond/2, Outcome: out})
	}
	rec.End = rec.Start.Add(5 * time.Second)
	files, err := report.Write(t.TempDir(), rec)
	if err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(files.Markdown)
	rows := regexp.MustCompile(`(?m)^\| burst[^|]*\|`).FindAllString(string(md), -1)
	want := []string{"| burst round 1 |", "| burst round 2 |", "| burst round 3 |", "| burst rounds 4–1997 |", "| burst round 1500 |", "| burst round 1998 |", "| burst round 1999 |", "| burst round 2000 |"}
	if strings.Join(rows, "\n") != strings.Join(want, "\n") {
		t.Errorf("steps table rows of burst:\n%s\nwant\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"))
	}
	page, _ := os.ReadFile(files.HTML)
	svg := regexp.MustCompile(`(?s)<svg [^>]*width="900".*?</svg>`).FindString(string(page))
	if n := strings.Count(svg, "burst (load)"); n > 300 {
		t.Errorf("the timeline draws burst %d times", n)
	}
}

// TestLoadLineRequests: one request is "1 request", not "1 requests" (a Chaos Toolkit http
// probe is a load of one request).
func TestLoadLineRequests(t *testing.T) {
	for n, want := range map[float64]string{1: "1 request · ", 2: "2 requests · ", 0: "0 requests · "} {
		if got := (report.LoadSummary{Requests: n, Connections: 1}).Line(); !strings.HasPrefix(got, want) {
			t.Errorf("%g requests: %q, want it to begin %q", n, got, want)
		}
	}
}

// TestLoadLineConnections: the console's load line gives the connections the load was given,
// as fortio.connections reads them, and the sockets beside them where fortio opened another
// number (a server closing connections after its 500s: connections 1, sockets 2 read "2
// connections", which no expectation on fortio.connections saw).
func TestLoadLineConnections(t *testing.T) {
	for _, tc := range []struct {
		conns, sockets float64
		want           string
	}{
		{1, 1, " · 1 connection · "},
		{1, 2, " · 1 connection (2 sockets) · "},
		{4, 2, " · 4 connections (2 sockets) · "},
	} {
		l := report.LoadSummary{Requests: 2, Connections: tc.conns, Sockets: tc.sockets}
		if got := l.Line(); !strings.Contains(got, tc.want) {
			t.Errorf("connections %g, sockets %g: %q, want it to hold %q", tc.conns, tc.sockets, got, tc.want)
		}
	}
}

// TestLoadLineSaysWhoseLatency: fortio times a socket error as it times an answer, in one
// histogram. A load nobody answered showed "p50 0.06 ms · p99 0.2 ms" as if a server had
// answered in microseconds, where no claim can read them as latencies; the line says whose
// times they are, and the table marks them (†) and says so below.
func TestLoadLineSaysWhoseLatency(t *testing.T) {
	for _, tc := range []struct {
		name  string
		codes []report.Count
		want  string
	}{
		{"answered", []report.Count{{Name: "200", N: 4}}, "1 connection · p50 1 ms · p99 2 ms"},
		{"none answered", []report.Count{{Name: "-1", N: 4}}, " · no answer: the socket errors took p50 1 ms · p99 2 ms"},
		{"mixed", []report.Count{{Name: "-1", N: 1}, {Name: "200", N: 3}}, " · p50 1 ms · p99 2 ms of answers and socket errors together"},
	} {
		l := report.LoadSummary{Name: "f", Requests: 4, Connections: 1, Codes: tc.codes, P50: 1, P99: 2}
		if got := l.Line(); !strings.HasSuffix(got, tc.want) {
			t.Errorf("%s: %q, want it to end %q", tc.name, got, tc.want)
		}
	}
	rec := sampleRecord()
	f := rec.Loads()["fortio"]
	f.Codes, f.OK, f.Errors, f.P50 = map[string]float64{"-1": 30}, 0, 30, 1
	md := report.Markdown(rec, report.Files{})
	for _, want := range []string{"| 1 ms † |", "† fortio got no HTTP response, so its latencies are the times its socket errors took (an expectation reads them as fortio.errorLatency, not as fortio.p99)."} {
		if !strings.Contains(md, want) {
			t.Errorf("the report lacks %q:\n%s", want, md)
		}
	}
}

// TestLoadSocketsMadeAndRefused: fortio counts every connect it tried in its sockets and its
// ips, a refused one too. A keepalive load of 2 connections whose backend was killed after 4
// answers tried 24 connects, 20 of them refused (20 socket errors): the console's line and the
// report's table read "2 (24 sockets)" and "127.0.0.1:18602 ×24" under "by backend", as 24
// connections made. They now say how many were made at least and refused at most.
func TestLoadSocketsMadeAndRefused(t *testing.T) {
	want := "24 sockets: ≥ 4 made, ≤ 20 failed to connect"
	l := report.LoadSummary{Name: "ka", Requests: 24, Connections: 2, Sockets: 24,
		Codes: []report.Count{{Name: "-1", N: 20}, {Name: "200", N: 4}}, Backends: []report.Count{{Name: "127.0.0.1:18602", N: 24}}, P50: 1, P99: 2}
	if got := l.Line(); !strings.Contains(got, " · 2 connections ("+want+"): 127.0.0.1:18602 ×24 · ") {
		t.Errorf("line %q, want it to hold %q", got, want)
	}
	// As many socket errors as sockets (a blackhole's): none need have been made, and the
	// line does not say "≥ 0 made".
	l.Codes = []report.Count{{Name: "-1", N: 24}}
	if got := l.Line(); !strings.Contains(got, " · 2 connections (24 sockets: ≤ 24 failed to connect): ") {
		t.Errorf("line of a blackhole's load %q", got)
	}
	// No socket error: every connect tried was made.
	l.Codes = []report.Count{{Name: "200", N: 24}}
	if got := l.Line(); !strings.Contains(got, " · 2 connections (24 sockets): ") {
		t.Errorf("line without socket errors %q", got)
	}
	rec := sampleRecord()
	f := rec.Loads()["fortio"]
	f.Codes, f.OK, f.Errors, f.Sockets, f.Connections = map[string]float64{"-1": 20, "200": 10}, 10, 20, 24, 2
	for name, page := range map[string]string{"md": report.Markdown(rec, report.Files{}), "html": report.HTML(rec, report.Files{})} {
		for _, w := range []string{"2 (" + want + ")", "connects by backend"} {
			if !strings.Contains(page, w) {
				t.Errorf("%s report lacks %q", name, w)
			}
		}
		if strings.Contains(page, "connections by backend") || strings.Contains(page, "| by backend |") {
			t.Errorf("%s report still says connections by backend", name)
		}
	}
}
