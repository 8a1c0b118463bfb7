package report_test

import (
	"regexp"
	"strings"
	"testing"

	"labrun.dev/labrun/report"
)

// TestTablesScrollNotPage: seen in headless Chromium at 480 pixels (a failing local load's
// report): the Load table (load, requests, codes, connections, by backend, qps, p50, p99…)
// and the steps table ran past the page's right edge, the whole page scrolling sideways and
// its last columns (qps, outcome) off the screen. Every table is now in a box of its own that
// scrolls sideways when the table is wider than the page; the run's table (two columns, long
// file names) wraps its values instead.
func TestTablesScrollNotPage(t *testing.T) {
	page := report.HTML(hostileRecord(), report.Files{})
	checkTablesScroll(t, "report", page)
}

var tableOpen = regexp.MustCompile(`<table[ >]`)

func checkTablesScroll(t *testing.T, name, page string) {
	t.Helper()
	locs := tableOpen.FindAllStringIndex(page, -1)
	if len(locs) == 0 {
		t.Fatalf("%s: no table", name)
	}
	for _, l := range locs {
		if !strings.HasSuffix(page[:l[0]], `<div class="scroll">`) {
			end := min(len(page), l[0]+60)
			t.Errorf("%s: %s… is not in a box that scrolls: at 480 px it runs off the page", name, page[l[0]:end])
		}
	}
	if !strings.Contains(page, ".scroll{overflow-x:auto;max-width:100%}") {
		t.Errorf("%s: the CSS does not let a wide table scroll in its box", name)
	}
}
