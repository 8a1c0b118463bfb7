package report_test

import (
	"bytes"
	"html"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/report"
	"labrun.dev/labrun/schema"
)

// hostile are strings a run can put in a report that Markdown would otherwise read as markup.
var hostile = []string{
	"stat upstream_rq_<code> is in no snapshot",
	"a | b || c",
	"`back`ticks`` and ``` runs",
	"*not bold* and _not em_ and __neither__",
	"<script>alert(1)</script> & &amp; &#60;",
	"[not a link](http://127.0.0.1/) ![nor an image](x.png)",
	"~~not struck~~ \\backslash\\",
	"# not a heading",
	"1. not a list",
	"- not a bullet",
	"line one\nline two",
	"<http://127.0.0.1:1/autolink>",
}

func hostileRecord() *interp.Record {
	rec := sampleRecord()
	h := func(i int) string { return hostile[i%len(hostile)] }
	rec.Scenario = "s2 " + h(1)
	rec.Doc = h(7) + " " + h(3)
	rec.Where = h(4)
	rec.Error = h(2)
	rec.Vars = map[string]any{"v": h(1)}
	rec.Notes = []string{h(8), h(9), h(0), h(10), h(11)}
	rec.Cleanup = []string{h(5), h(6)}
	for i, s := range rec.Steps {
		s.Summary = h(i + 3)
		s.Warnings = []string{h(i)}
		s.Error = h(i + 1)
	}
	rec.Steps[0].Name = h(1)
	// A step that may fail and failed: the title names it (mayFailed); the lints' warnings
	// are listed under the expectations.
	rec.Steps[0].Outcome = interp.Failed
	rec.Steps[0].Warnings = append(rec.Steps[0].Warnings, interp.MayFailWarning)
	rec.Warnings = []*dsl.Warning{{Pos: dsl.Pos{File: "/lab/" + h(6) + ".cue", Line: 3, Col: 4}, Code: h(3), Msg: h(5) + " " + h(11)}}
	rec.Expectations = append(rec.Expectations,
		&interp.Judgement{Src: "delta.rq_x | 1 == `x`", Outcome: interp.Errored, Reason: h(0)},
		&interp.Judgement{Src: "a < b && c > d", Outcome: interp.Failed, Explanation: "a (1) < b (`0`) && c > d | 2"},
	)
	rec.Snapshot("before").Counters["weird|stat<x>"] = 1
	rec.Snapshot("before").Hosts = []schema.Host{{Address: "10.0.0.1:80", Health: h(1)}}
	rec.Loads()["fortio"].Warnings = []string{h(4)}
	rec.Put("ex", "exec", false, schema.ExecResult{Stdout: h(2) + "\n" + h(4)})
	rec.Put("val", "get", false, h(1)+h(2))
	return rec
}

// TestMarkdownRendersAsWritten renders the report of a run full of hostile strings with a real
// CommonMark (GFM) renderer and checks that no raw HTML, emphasis, strike-through, heading or
// list appears that the report did not write, that every table row has as many cells as its
// header, and that each hostile string reads back verbatim in the rendered text.
func TestMarkdownRendersAsWritten(t *testing.T) {
	dir := t.TempDir()
	files, err := report.Write(dir, hostileRecord())
	if err != nil {
		t.Fatal(err)
	}
	src, _ := os.ReadFile(files.Markdown)
	md := goldmark.New(goldmark.WithExtensions(extension.GFM))
	doc := md.Parser().Parse(text.NewReader(src))

	headings := 0
	var cols int
	ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n.Kind() {
		case ast.KindRawHTML, ast.KindHTMLBlock:
			t.Errorf("raw HTML in the report: %q", n.Text(src))
		case ast.KindEmphasis, east.KindStrikethrough, ast.KindAutoLink:
			t.Errorf("markup the report did not write (%s): %q", n.Kind(), n.Text(src))
		case ast.KindHeading:
			headings++
		case east.KindTable:
			cols = -1
		case east.KindTableHeader, east.KindTableRow:
			if c := n.ChildCount(); cols == -1 {
				cols = c
			} else if c != cols {
				t.Errorf("table row with %d cells, header has %d: %q", c, cols, n.Text(src))
			}
		case ast.KindLink, ast.KindImage:
			var dest string
			if l, ok := n.(*ast.Link); ok {
				dest = string(l.Destination)
			} else {
				dest = string(n.(*ast.Image).Destination)
			}
			if strings.Contains(dest, "127.0.0.1") {
				t.Errorf("a hostile string became a link to %s", dest)
			}
		}
		return ast.WalkContinue, nil
	})
	// The report's own headings: title, Expectations, Load, Timeline, Snapshots over time,
	// Sampled series, Snapshots, one source, Captures, Cleanup, Artifacts.
	if headings != 11 {
		t.Errorf("%d headings, want 11 (a hostile string made or hid one)", headings)
	}
	// The rendered text: HTML from the renderer with its tags removed (the walk above found no
	// raw HTML, so every tag is the renderer's) and its entities decoded.
	var out bytes.Buffer
	if err := md.Renderer().Render(&out, src, doc); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "raw HTML omitted") {
		t.Errorf("the renderer omitted raw HTML")
	}
	plain := html.UnescapeString(regexp.MustCompile(`<[^>]*>`).ReplaceAllString(out.String(), " "))
	got := strings.Join(strings.Fields(plain), " ")
	for _, h := range hostile {
		want := strings.Join(strings.Fields(h), " ")
		if !strings.Contains(got, want) {
			t.Errorf("rendered report does not read %q", want)
		}
	}
	for _, want := range []string{"delta.rq_x | 1 == `x`", "a (1) < b (`0`) && c > d | 2", "weird|stat<x>"} {
		if !strings.Contains(got, want) {
			t.Errorf("rendered report does not read %q", want)
		}
	}
	if t.Failed() {
		t.Logf("markdown:\n%s\nrendered text:\n%s", src, plain)
	}
}
