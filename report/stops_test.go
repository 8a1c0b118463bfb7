package report_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/report"
)

// TestTimelineDrawsStops: a time labrun was stopped (SIGSTOP, Ctrl-Z, then continued) is
// drawn on the timeline where it happened, labelled with its length. Before, the record's
// note said it, and the picture drew the sleep it held as a step that ran 2.6 s too long.
func TestTimelineDrawsStops(t *testing.T) {
	rec := &interp.Record{Scenario: "s", Outcome: interp.Errored,
		Steps: []*interp.StepRecord{
			{Path: "steps.0", Name: "p", Kind: "exec", Outcome: interp.Passed, End: 30 * time.Millisecond},
			{Path: "steps.1", Name: "nap", Kind: "sleep", Outcome: interp.Passed, Start: 30 * time.Millisecond, End: 4 * time.Second},
		},
		Stops: []interp.StopRecord{{At: time.Second, For: 2600 * time.Millisecond}, {At: -time.Second, For: 500 * time.Millisecond}},
	}
	svg := report.TimelineSVG(rec)
	if n := strings.Count(svg, `<g class="stop">`); n != 1 {
		t.Errorf("%d stops drawn, want 1 (the one before the steps is not on their axis):\n%s", n, svg)
	}
	if !strings.Contains(svg, ">stopped 2.6s</text>") {
		t.Errorf("no label \"stopped 2.6s\":\n%s", svg)
	}
	// Where: from 1 s to 3.6 s of a 4 s axis, as the steps' bars are placed.
	m := regexp.MustCompile(`<g class="stop"><rect x="([\d.]+)" y="28" width="([\d.]+)"`).FindStringSubmatch(svg)
	bar := regexp.MustCompile(`<rect x="([\d.]+)" y="\d+" width="([\d.]+)" height="14" fill="[^"]+" opacity="0.8"><title>nap`).FindStringSubmatch(svg)
	if m == nil || bar == nil {
		t.Fatalf("no stop band or nap bar:\n%s", svg)
	}
	var sx, sw, bx, bw float64
	for p, s := range map[*float64]string{&sx: m[1], &sw: m[2], &bx: bar[1], &bw: bar[2]} {
		if _, err := fmt.Sscan(s, p); err != nil {
			t.Fatal(err)
		}
	}
	perSec := bw / 3.97 // the nap's bar: 0.03 s to 4 s
	if want := bx + perSec*0.97; sx < want-1 || sx > want+1 {
		t.Errorf("the stop starts at x=%.1f, want %.1f (1 s)", sx, want)
	}
	if want := perSec * 2.6; sw < want-1 || sw > want+1 {
		t.Errorf("the stop is %.1f wide, want %.1f (2.6 s)", sw, want)
	}
}
