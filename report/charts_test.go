package report

import (
	"encoding/json"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"labrun.dev/labrun/interp"
)

// TestLabelRows: labels that would overlap go on rows below; those that fit stay on the first.
func TestLabelRows(t *testing.T) {
	// p50, p90, p99 and p99.9 of a fast load: four labels within 30 pixels.
	xs := []float64{100, 110, 118, 122, 300}
	ws := []float64{20, 20, 20, 30, 20}
	rows := labelRows(xs, ws, true)
	want := []int{0, 1, 2, 3, 0}
	for i := range want {
		if rows[i] != want[i] {
			t.Fatalf("rows %v, want %v", rows, want)
		}
	}
}

// TestLatencyBins: fortio's buckets are re-binned to one round width fitted to the data,
// never finer than fortio's finest bucket; the counts add up; the percentile labels of a
// tight distribution do not share a row.
func TestLatencyBins(t *testing.T) {
	var h fortioHistogram
	d := &h.DurationHistogram
	d.Count = 30
	// 0.1 ms buckets from 0.02 to 0.79 ms (fortio at 0.1 ms resolution), as the quickstart's
	// keepalive load records them.
	for i, c := range []int64{3, 6, 7, 5, 4, 2, 2, 1} {
		d.Data = append(d.Data, struct {
			Start, End float64
			Count      int64
		}{Start: max(0.00002, float64(i)*0.0001), End: min(0.00079, float64(i+1)*0.0001), Count: c})
	}
	for _, p := range [][2]float64{{50, 0.00039}, {90, 0.00061}, {99, 0.00077}, {99.9, 0.000785}} {
		d.Percentiles = append(d.Percentiles, struct{ Percentile, Value float64 }{p[0], p[1]})
	}
	raw, _ := json.Marshal(h)
	svg := latencyChart("keepalive", ": latency histogram", raw)
	if !strings.Contains(svg, "requests per 0.1 ms") {
		t.Errorf("bins not 0.1 ms wide: %s", svg)
	}
	bars := regexp.MustCompile(`<title>([0-9.]+)–([0-9.]+) ms: ([0-9.]+)</title>`).FindAllStringSubmatch(svg, -1)
	if len(bars) != 8 {
		t.Errorf("%d bars, want 8", len(bars))
	}
	type label struct{ x, w float64 }
	rows := map[string][]label{}
	for _, m := range regexp.MustCompile(`<text x="([0-9.]+)" y="([0-9]+)" fill="#c62828"[^>]*>([^<]+)</text>`).FindAllStringSubmatch(svg, -1) {
		x, _ := strconv.ParseFloat(m[1], 64)
		l := label{x, textWidth(m[3], 11)}
		for _, o := range rows[m[2]] {
			if math.Abs(o.x-l.x) < (o.w+l.w)/2 {
				t.Errorf("percentile labels overlap on the row y=%s: %s at x=%g", m[2], m[3], x)
			}
		}
		rows[m[2]] = append(rows[m[2]], l)
	}
	if len(rows) < 2 {
		t.Errorf("four percentiles within 0.4 ms all on one row")
	}
	// The labels are drawn over every percentile's line: one drawn before a neighbour's line
	// was struck through by it (p99's label by p99.9's line, seen in headless Chromium).
	if lastLine, firstLabel := strings.LastIndex(svg, `stroke-dasharray="3,2"`), strings.Index(svg, `fill="#c62828" text-anchor`); firstLabel < lastLine {
		t.Errorf("a percentile's label is drawn before another's line, which crosses it")
	}
	// One wide bucket (1 ms resolution): a single bar of its own width, not invented detail.
	h.DurationHistogram.Data = h.DurationHistogram.Data[:1]
	h.DurationHistogram.Data[0].Start, h.DurationHistogram.Data[0].End, h.DurationHistogram.Data[0].Count = 0.00002, 0.001, 30
	raw, _ = json.Marshal(h)
	if n := strings.Count(latencyChart("keepalive", ": latency histogram", raw), " ms: "); n != 1 {
		t.Errorf("one bucket drawn as %d bars", n)
	}
}

// TestLatencyTitleSaysWhose: the latency chart of a load nobody answered is titled as the
// times of its socket errors, one with socket errors among answers as both together; it read
// "latency histogram" as if a server had answered in microseconds.
func TestLatencyTitleSaysWhose(t *testing.T) {
	for _, tc := range []struct {
		codes []Count
		want  string
	}{
		{[]Count{{"200", 4}}, ": latency histogram"},
		{[]Count{{"-1", 4}}, ": socket errors' times (no answer)"},
		{[]Count{{"-1", 1}, {"503", 3}}, ": latency, answers and socket errors"},
	} {
		if got := latencyTitle(LoadSummary{Requests: 4, Codes: tc.codes}); got != tc.want {
			t.Errorf("codes %v: %q, want %q", tc.codes, got, tc.want)
		}
	}
}

// TestStepMarksLabelsOverLines: a time chart's step labels are drawn after every step's line:
// a later step's dashed line crossed an earlier step's label, which runs to its line's right.
func TestStepMarksLabelsOverLines(t *testing.T) {
	c := newTimeChart("t", "", 3*time.Second, 0, 1, nil)
	c.stepMarks([]*interp.StepRecord{
		{Name: "flip", Kind: "dns", Timed: true, Start: time.Second, Planned: time.Second},
		{Name: "kill", Kind: "kill", Timed: true, Start: time.Second + 20*time.Millisecond, Planned: time.Second},
	})
	svg := c.b.String()
	if lastLine, firstLabel := strings.LastIndex(svg, `stroke-dasharray="4,3"`), strings.Index(svg, `fill="#6a1b9a" font-size="10"`); firstLabel < 0 || firstLabel < lastLine {
		t.Errorf("a step's label is drawn before another step's line, which crosses it:\n%s", svg)
	}
}

// TestPercentileLabelWithinPlot: a percentile at the axis's start (p50 of a fast load) has its
// label kept right of the y axis: centred on its line, it covered the axis's top number.
func TestPercentileLabelWithinPlot(t *testing.T) {
	var h fortioHistogram
	d := &h.DurationHistogram
	d.Count = 40
	d.Data = append(d.Data, struct {
		Start, End float64
		Count      int64
	}{Start: 0, End: 0.002, Count: 40})
	d.Percentiles = append(d.Percentiles, struct{ Percentile, Value float64 }{50, 0})
	raw, _ := json.Marshal(h)
	svg := latencyChart("f", ": latency histogram", raw)
	m := regexp.MustCompile(`<text x="([0-9.]+)" y="[0-9]+" fill="#c62828"[^>]*>p50</text>`).FindStringSubmatch(svg)
	if m == nil {
		t.Fatalf("no p50 label:\n%s", svg)
	}
	if x, _ := strconv.ParseFloat(m[1], 64); x-textWidth("p50", 11)/2 < padL {
		t.Errorf("p50's label, centred at x=%g, runs left of the plot (x=%d) over the y axis's numbers", x, padL)
	}
}

// TestFmtNumAxisTicks: the ticks of an axis from 200 to 202 (a latency histogram of 200 ms
// answers) read as themselves; 200.5 and 201.5 were written "200" and "202", so the axis read
// "200, 200, 201, 202, 202".
func TestFmtNumAxisTicks(t *testing.T) {
	var got []string
	for _, v := range niceTicks(200, 202, 6) {
		got = append(got, fmtNum(v))
	}
	if want := "200 200.5 201 201.5 202"; strings.Join(got, " ") != want {
		t.Errorf("ticks %q, want %q", strings.Join(got, " "), want)
	}
	for v, want := range map[float64]string{1234.5: "1235", 12345: "12.3k", 150: "150", 2.345: "2.35"} {
		if got := fmtNum(v); got != want {
			t.Errorf("fmtNum(%g) = %q, want %q", v, got, want)
		}
	}
}
