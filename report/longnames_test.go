package report

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/schema"
)

// svgTexts are the text elements of an SVG: their x, anchor, and text (a tooltip left out).
var svgText = regexp.MustCompile(`<text x="([0-9.]+)" y="([0-9.]+)"([^>]*)>(?:<title>[^<]*</title>)?([^<]*)</text>`)

// TestChartsLongNames: seen in the HTML report of a scenario with long step and backend names
// (headless Chromium, 1280 pixels): the timeline's labels, right-aligned, ran off the
// picture's left edge, and the two snapshots snapshot_before_…_descriptive_name and
// snapshot_after_…_descriptive_name both read "…rather_long_descriptive_name (snapshot)"; the
// connections chart lost the backend's name the same way; the responses-by-code title ran
// under its legend, and the legend's swatches overlapped the codes ("200" under 503's
// square). Labels are now cut in the middle to the room they have (whole in a tooltip), and
// titles end before the legend and the unit.
func TestChartsLongNames(t *testing.T) {
	before, after := "snapshot_before_the_load_with_a_rather_long_descriptive_name", "snapshot_after_the_load_with_a_rather_long_descriptive_name"
	load := "the_load_step_whose_name_goes_on_and_on_and_on_for_a_while"
	rec := &interp.Record{Scenario: "s", Outcome: interp.Passed, End: time.Unix(0, 0).Add(100 * time.Millisecond), Start: time.Unix(0, 0),
		Steps: []*interp.StepRecord{
			{Path: "steps.0", Name: before, Kind: "snapshot", Outcome: interp.Passed},
			{Path: "steps.1", Name: load, Kind: "load", End: 90 * time.Millisecond, Outcome: interp.Passed},
			{Path: "steps.2", Name: after, Kind: "snapshot", Start: 90 * time.Millisecond, End: 90 * time.Millisecond, Outcome: interp.Passed},
		}}
	// The timeline's labels: each within the picture, and the two snapshots told apart.
	var labels []string
	for _, m := range svgText.FindAllStringSubmatch(TimelineSVG(rec), -1) {
		if !strings.Contains(m[3], `text-anchor="end"`) {
			continue
		}
		x, _ := strconv.ParseFloat(m[1], 64)
		if w := textWidth(m[4], 12); w > x {
			t.Errorf("timeline label %q (%.0f px) right-aligned at x=%.0f runs off the picture", m[4], w, x)
		}
		labels = append(labels, m[4])
	}
	if len(labels) != 3 || labels[0] == labels[2] {
		t.Errorf("timeline labels %q: want 3, the snapshots' apart", labels)
	}
	// The connections chart's label: within the chart, the backend's name still there.
	addr := "127.0.0.1:41753"
	for _, m := range svgText.FindAllStringSubmatch(backendsChart(load, map[string]float64{addr: 9}, map[string]string{addr: "a_backend_with_a_long_name_too"}), -1) {
		if !strings.Contains(m[3], `text-anchor="end"`) {
			continue
		}
		x, _ := strconv.ParseFloat(m[1], 64)
		if w := textWidth(m[4], 11); w > x || !strings.HasPrefix(m[4], "a_bac") || !strings.HasSuffix(m[4], addr) {
			t.Errorf("backend label %q (%.0f px) at x=%.0f: want it within the chart, name and address kept", m[4], w, x)
		}
	}
	// The codes chart: the title ends before the legend, the legend's entries do not overlap,
	// and no bar goes on after the load ended.
	buckets, _ := json.Marshal([]schema.CodesOverTime{{AtNs: 0, Codes: map[string]int{"200": 40, "503": 10}}})
	svg := codesChart(rec, rec.Steps[1], buckets)
	var titleEnd float64
	var legend []float64
	for _, m := range svgText.FindAllStringSubmatch(svg, -1) {
		x, _ := strconv.ParseFloat(m[1], 64)
		switch {
		case m[2] == "14" && strings.Contains(m[3], "bold"):
			titleEnd = x + textWidth(m[4], 11)
		case m[2] == "14" && (m[4] == "200" || m[4] == "503"):
			legend = append(legend, x-12, x+textWidth(m[4], 11))
		}
	}
	if len(legend) != 4 || titleEnd > legend[0] || legend[1] > legend[2] {
		t.Errorf("codes chart: title ends at %.0f, legend entries at %.0f: want the title before the legend, entries apart\n%s", titleEnd, legend, svg)
	}
	c := newTimeChart("", "", rec.End.Sub(rec.Start), 0, 1, nil)
	loadEnd := c.x(rec.Steps[1].End)
	for _, m := range regexp.MustCompile(`<rect x="([0-9.]+)" y="[0-9.]+" width="([0-9.]+)" height="[0-9.]+" fill="#(?:2e7d32|c62828)"`).FindAllStringSubmatch(svg, -1) {
		x, _ := strconv.ParseFloat(m[1], 64)
		w, _ := strconv.ParseFloat(m[2], 64)
		if x+w > loadEnd+1 {
			t.Errorf("codes chart: a bar from x=%.0f to %.0f, past the load's end at %.0f: responses drawn where there were none", x, x+w, loadEnd)
		}
	}
}

// TestChartsShrinkToPage: at 480 pixels (headless Chromium) the report's charts kept their
// 560 pixels and the timeline its 900, past the page's right edge, and the latency
// histogram's p99 marker with them: off the screen. Every picture has a viewBox (without one
// a narrowed SVG is cut, not scaled) and the page's CSS lets the charts shrink.
func TestChartsShrinkToPage(t *testing.T) {
	rec := &interp.Record{Scenario: "s", Outcome: interp.Passed, Start: time.Unix(0, 0), End: time.Unix(0, 0).Add(time.Second),
		Steps: []*interp.StepRecord{{Path: "steps.0", Name: "fortio", Kind: "load", End: time.Second, Outcome: interp.Passed}}}
	buckets, _ := json.Marshal([]schema.CodesOverTime{{AtNs: 0, Codes: map[string]int{"200": 40}}})
	for name, svg := range map[string]string{
		"timeline": TimelineSVG(rec),
		"codes":    codesChart(rec, rec.Steps[0], buckets),
		"backends": backendsChart("fortio", map[string]float64{"127.0.0.1:1": 2}, nil),
	} {
		open := svg[:strings.Index(svg, ">")]
		if !strings.Contains(open, "viewBox=") {
			t.Errorf("%s: %s has no viewBox: narrowed, it is cut instead of scaled", name, open)
		}
	}
	if !strings.Contains(htmlCSS, "svg.chart{max-width:100%;height:auto}") {
		t.Errorf("the report's CSS does not let the charts shrink with the page")
	}
}

// TestReasonFontSize: the reason under an expectation (why it was skipped, why it erred) was
// in the page's 16 px while the expression it explains is in 12.5 px and the values it read in
// 12 px (seen in headless Chromium on an interrupted quickstart: eight "the run was
// interrupted" lines louder than the claims). It is in the size of the values.
func TestReasonFontSize(t *testing.T) {
	if !strings.Contains(htmlCSS, ".why{color:#555;font-size:12px;margin-left:1.2em}") {
		t.Errorf("the reason under an expectation is not in the values' size")
	}
}
