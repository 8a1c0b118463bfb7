package report_test

import (
	"regexp"
	"strings"
	"testing"
	"unicode"

	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/report"
)

// TestTablesScrollNotPage: seen in headless Chromium at 480 pixels (a failing local load's
// report): the Load table (load, requests, codes, connections, connects by backend, qps, p50, p99…)
// and the steps table ran past the page's right edge, the whole page scrolling sideways and
// its last columns (qps, outcome) off the screen. Every table is now in a box of its own that
// scrolls sideways when the table is wider than the page; the run's table (two columns, long
// file names) wraps its values instead.
func TestTablesScrollNotPage(t *testing.T) {
	page := report.HTML(hostileRecord(), report.Files{})
	checkTablesScroll(t, "report", page)
}

// TestTimelineReadableWhenNarrow: seen in headless Chromium at 480 pixels (the quickstart's
// report): the timeline picture, 900 pixels wide, was shrunk to the page's width, its 12-pixel
// labels drawn at 6 (step names and the time axis unreadable). It shrinks no further than 720
// pixels (labels at 9.6) and its box scrolls sideways below that.
func TestTimelineReadableWhenNarrow(t *testing.T) {
	rec := sampleRecord()
	page := report.HTML(rec, report.Files{})
	svg := report.TimelineSVG(rec)
	if !strings.Contains(page, `<div class="wide">`+svg) {
		t.Fatalf("the timeline is not in its own box")
	}
	for _, rule := range []string{".wide{overflow-x:auto;max-width:100%}", ".wide svg{max-width:100%;min-width:720px;height:auto}"} {
		if !strings.Contains(page, rule) {
			t.Errorf("the CSS lacks %s: a narrow page shrinks the timeline's labels past reading", rule)
		}
	}
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
	// An expectation over long step names, its values and a lint's warning of it are words
	// longer than a 480-pixel line (delta("snapshot_before_the_load_with_a_rather_long_…"):
	// they ran off the page's right edge; they break anywhere instead.
	for _, rule := range []string{"ul.expect{list-style:none;padding-left:0;overflow-wrap:anywhere}", "ul.warn,p.note,p.warn{overflow-wrap:anywhere}"} {
		if !strings.Contains(page, rule) {
			t.Errorf("%s: the CSS lacks %s: a long expectation runs off a narrow page", name, rule)
		}
	}
}

// TestReportsEscapeControlCharacters: a command's stderr of "boom\r\x1b[32mPASSED esc…" (an
// exec step's error) reached the Markdown report with its escape sequences raw (the carriage
// return made a space): `cat report.md`, or a CI log it is appended to, drew a green "PASSED
// esc" in the report of a run that erred. Every view writes them as escapes (\x1b).
func TestReportsEscapeControlCharacters(t *testing.T) {
	rec := sampleRecord()
	rec.Outcome = interp.Errored
	rec.Error = "ex (exec): exited with code 3, expected 0; stderr: boom\r\x1b[32mPASSED esc\x1b[0m\x1b[K"
	rec.Steps[0].Error = rec.Error
	rec.Notes = append(rec.Notes, "a stat named rq\x1b[2Jx")
	for name, page := range map[string]string{"markdown": report.Markdown(rec, report.Files{}), "html": report.HTML(rec, report.Files{})} {
		if i := strings.IndexFunc(page, func(r rune) bool { return unicode.IsControl(r) && r != '\n' && r != '\t' }); i >= 0 {
			t.Errorf("%s: a control character %q at %d: …%s…", name, page[i], i, page[max(0, i-40):min(len(page), i+20)])
		}
		if !strings.Contains(page, `x1b[32mPASSED esc`) && !strings.Contains(page, `x1b\[32mPASSED esc`) {
			t.Errorf("%s: the escape is not shown as \\x1b", name)
		}
	}
}
