package report

import (
	"fmt"
	"html"
	"strings"

	"labrun.dev/labrun/interp"
)

// Markdown renders the report for people.
func Markdown(rec *interp.Record, f Files) string { return markdownPage(buildPage(rec, f), f) }

// HTML renders the report as one self-contained page: inline CSS and SVG, no script, nothing
// fetched from the network. It shows what the Markdown shows, with the charts drawn and each
// value an expectation read linked to the chart or table that holds it.
func HTML(rec *interp.Record, f Files) string { return htmlPage(buildPage(rec, f)) }

var (
	mdMarks   = map[string]string{"passed": "✅", "failed": "❌", "error": "⚠️", "skipped": "⏭️"}
	htmlMarks = map[string]string{"passed": "✓", "failed": "✗", "error": "!", "skipped": "–"}
)

func markdownPage(p *page, f Files) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("# %s — %s", mdText(p.title), strings.ToUpper(p.outcome))
	if p.leftBehind {
		w(", LEFT OBJECTS BEHIND")
	}
	if p.mayFailed != "" {
		w(" — %s", mdText(p.mayFailed))
	}
	if p.warned != "" {
		w(" — %s", mdText(p.warned))
	}
	w("\n\n")
	if p.doc != "" {
		w("> %s\n\n", mdText(p.doc))
	}
	w("| | |\n|---|---|\n")
	for _, m := range p.meta {
		w("| %s | %s |\n", mdEscape(oneLine(m.label), false), mdInline(m.value, true))
	}
	if f.HTML != "" {
		w("| pictures | [the HTML report](%s) (charts per stat, latency histograms, codes over time) |\n", mdURL(relTo(f.Markdown, f.HTML)))
	}
	w("\n## Expectations\n\n")
	if len(p.expectations) == 0 {
		w("(none)\n")
	}
	for _, e := range p.expectations {
		w("- %s %s — %s", mdMarks[e.outcome], mdCode(or(e.shown, e.src), false), e.outcome)
		if e.reason != "" {
			w(": %s", mdText(e.reason))
		}
		w("\n")
	}
	if len(p.notes) > 0 {
		w("\nNotes:\n")
		for _, n := range p.notes {
			w("- %s\n", mdText(n))
		}
	}
	if len(p.warnings) > 0 {
		w("\nWarnings (the lints' findings in the scenario, which the run printed):\n")
		for _, n := range p.warnings {
			w("- ⚠ %s\n", mdText(n))
		}
	}
	for _, s := range p.sections {
		w("\n## %s\n", mdText(s.title))
		for _, bl := range s.blocks {
			if bl.htmlOnly {
				continue
			}
			switch {
			case bl.heading != "":
				w("\n### %s\n", mdText(bl.heading))
			case bl.file != "":
				w("\n![%s](%s)\n", mdText(strings.ToLower(s.title)), mdURL(bl.file))
			case bl.table != nil:
				b.WriteString("\n")
				mdTable(&b, bl.table)
			case bl.list != nil:
				b.WriteString("\n")
				for _, it := range bl.list {
					w("- %s\n", mdInline(it, false))
				}
			case bl.charts != nil:
				if bl.mdNote != nil {
					w("\n%s\n", mdInline(bl.mdNote, false))
				}
			case bl.text != nil:
				w("\n%s\n", mdInline(bl.text, false))
			}
		}
	}
	return EscapeControls(b.String())
}

func mdTable(b *strings.Builder, t *table) {
	b.WriteString("|")
	for _, h := range t.head {
		b.WriteString(" " + mdEscape(oneLine(h), false) + " |")
	}
	b.WriteString("\n|" + strings.Repeat("---|", len(t.head)) + "\n")
	for _, r := range t.rows {
		b.WriteString("|")
		for _, c := range r.cells {
			if s := mdInline(c, true); s != "" {
				b.WriteString(" " + s + " |")
			} else {
				b.WriteString(" |")
			}
		}
		b.WriteString("\n")
	}
}

// mdInline writes pieces of one line: in a table cell (inTable), or at the start of a
// paragraph or list item.
func mdInline(in inline, inTable bool) string {
	var b strings.Builder
	for i, s := range in {
		switch {
		case s.link != "" && !strings.HasPrefix(s.link, "#"):
			fmt.Fprintf(&b, "[%s](%s)", mdEscape(oneLine(s.text), false), mdURL(s.link))
		case s.code:
			b.WriteString(mdCode(s.text, inTable))
		default:
			b.WriteString(mdEscape(oneLineKeep(s.text), i == 0 && !inTable))
		}
	}
	return strings.TrimSpace(b.String())
}

func htmlPage(p *page) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	e := html.EscapeString
	outcome := strings.ToUpper(p.outcome)
	w("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n")
	w("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
	w("<title>%s — %s", e(p.title), outcome)
	if p.leftBehind {
		w(", LEFT OBJECTS BEHIND")
	}
	if p.mayFailed != "" {
		w(" — %s", e(p.mayFailed))
	}
	if p.warned != "" {
		w(" — %s", e(p.warned))
	}
	w("</title>\n<style>%s</style></head><body>\n", htmlCSS)
	left := ""
	if p.leftBehind {
		left = ` <span class="badge leftover">LEFT OBJECTS BEHIND</span>`
	}
	if p.mayFailed != "" {
		left += ` <span class="mayfailed warn">` + e(p.mayFailed) + `</span>`
	}
	if p.warned != "" {
		left += ` <a class="warned warn" href="#warnings">` + e(p.warned) + `</a>`
	}
	w("<h1>%s <span class=\"badge %s\">%s</span>%s</h1>\n", e(p.title), e(p.outcome), outcome, left)
	if p.doc != "" {
		w("<p class=\"doc\">%s</p>\n", e(p.doc))
	}
	w("<h2 id=\"expectations\">Expectations</h2>\n<ul class=\"expect\">\n")
	if len(p.expectations) == 0 {
		w("<li>(none)</li>\n")
	}
	for _, x := range p.expectations {
		w("<li class=\"%s\"><span class=\"mark\">%s</span> <code>%s</code> <span class=\"verdict\">%s</span>", e(x.outcome), htmlMarks[x.outcome], e(or(x.shown, x.src)), e(x.outcome))
		if x.reason != "" {
			w("<br><span class=\"why\">%s</span>", e(x.reason))
		}
		if len(x.parts) > 0 {
			w("<br><span class=\"parts\">")
			for i, pt := range x.parts {
				if i > 0 {
					w(" · ")
				}
				if pt.Anchor != "" {
					w("<a href=\"#%s\" title=\"in %s\"><code>%s</code> = %s</a>", e(pt.Anchor), e(pt.Where), e(pt.Read), e(pt.Shown))
				} else {
					w("<code>%s</code> = %s", e(pt.Read), e(pt.Shown))
				}
			}
			w("</span>")
		}
		w("</li>\n")
	}
	w("</ul>\n")
	for _, n := range p.notes {
		w("<p class=\"note\">note: %s</p>\n", e(n))
	}
	if len(p.warnings) > 0 {
		w("<p class=\"warn\" id=\"warnings\">Warnings (the lints' findings in the scenario, which the run printed):</p>\n<ul class=\"warn\">\n")
		for _, n := range p.warnings {
			w("<li>⚠ %s</li>\n", e(n))
		}
		w("</ul>\n")
	}
	w("<div class=\"scroll\"><table class=\"meta\" id=\"run\">")
	for _, m := range p.meta {
		w("<tr><th>%s</th><td", e(m.label))
		if m.class != "" {
			w(" class=\"%s\"", m.class)
		}
		w(">%s</td></tr>", htmlInline(m.value))
	}
	w("</table></div>\n")
	for _, s := range p.sections {
		w("<h2 id=\"%s\">%s</h2>\n", e(s.id), e(s.title))
		for _, bl := range s.blocks {
			if bl.mdOnly {
				continue
			}
			switch {
			case bl.heading != "":
				w("<h3")
				if bl.id != "" {
					w(" id=\"%s\"", e(bl.id))
				}
				w(">%s", e(bl.heading))
				if bl.text != nil {
					w(" <span class=\"hint\">%s</span>", htmlInline(bl.text))
				}
				w("</h3>\n")
			case bl.svg != "":
				w("<div class=\"wide\">%s</div>\n", bl.svg)
			case bl.table != nil:
				htmlTable(&b, bl.table)
			case bl.list != nil:
				w("<ul>")
				for _, it := range bl.list {
					w("<li>%s</li>", htmlInline(it))
				}
				w("</ul>\n")
			case bl.charts != nil:
				w("<div class=\"charts\">")
				for _, c := range bl.charts {
					w("<div class=\"chartbox\" id=\"%s\">%s</div>", e(c.id), c.svg)
				}
				w("</div>\n")
			case bl.text != nil:
				class := ""
				if bl.hint {
					class = " class=\"hint\""
				}
				w("<p%s>%s</p>\n", class, htmlInline(bl.text))
			}
		}
	}
	w("<p class=\"hint\">Written by labrun. The complete record: <code>%s</code>.</p>\n</body></html>\n", e(p.jsonFile))
	return EscapeControls(b.String())
}

func htmlTable(b *strings.Builder, t *table) {
	e := html.EscapeString
	b.WriteString("<div class=\"scroll\"><table")
	if t.id != "" {
		fmt.Fprintf(b, " id=\"%s\"", e(t.id))
	}
	b.WriteString("><tr>")
	for _, h := range t.head {
		fmt.Fprintf(b, "<th>%s</th>", e(h))
	}
	b.WriteString("</tr>\n")
	for _, r := range t.rows {
		b.WriteString("<tr")
		if r.id != "" {
			fmt.Fprintf(b, " id=\"%s\"", e(r.id))
		}
		if r.class != "" {
			fmt.Fprintf(b, " class=\"%s\"", e(r.class))
		}
		b.WriteString(">")
		for i, c := range r.cells {
			if i < len(t.num) && t.num[i] {
				b.WriteString("<td class=\"num\">")
			} else {
				b.WriteString("<td>")
			}
			b.WriteString(htmlInline(c))
			b.WriteString("</td>")
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</table></div>\n")
}

func htmlInline(in inline) string {
	e := html.EscapeString
	var b strings.Builder
	for _, s := range in {
		t := e(s.text)
		if s.code {
			t = "<code>" + t + "</code>"
		}
		if s.class != "" {
			t = "<span class=\"" + e(s.class) + "\">" + t + "</span>"
		}
		if s.link != "" {
			t = "<a href=\"" + e(s.link) + "\">" + t + "</a>"
		}
		b.WriteString(t)
	}
	return b.String()
}
