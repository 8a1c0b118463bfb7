package report

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Markdown escaping. Everything a run supplies (names, messages, reasons, stat names, values)
// goes through mdText or mdCode before it reaches the report, so that a reason mentioning
// rq_<code> never opens an HTML element and a | in a message never splits a table cell.

// mdText escapes s as inline CommonMark text: characters that could start emphasis, code,
// links, HTML, entities, or a table cell boundary are backslash-escaped; line breaks become
// spaces (a report line is one paragraph or one table row).
func mdText(s string) string { return mdEscape(oneLine(s), true) }

// mdEscape escapes s as mdText does; blockStart says s begins a paragraph or list item, where
// a #, -, +, =, ! or "1." would start a block (a table cell holds inline text only).
func mdEscape(s string, blockStart bool) string {
	var b strings.Builder
	b.Grow(len(s) + 8)
	prev := rune(' ')
	for i, r := range s {
		switch r {
		case '\\', '`', '*', '[', ']', '<', '>', '|', '~', '&':
			b.WriteByte('\\')
		case '_':
			// Inside a word (upstream_rq_total) an underscore never opens emphasis; escaping it
			// there would only make the raw Markdown harder to read.
			next, _ := utf8.DecodeRuneInString(s[i+1:])
			if !isWord(prev) || !isWord(next) {
				b.WriteByte('\\')
			}
		case '#', '-', '+', '=', '!':
			if i == 0 && blockStart {
				b.WriteByte('\\')
			}
		case '.', ')':
			if blockStart && isOrderedMarker(s[:i]) {
				b.WriteByte('\\')
			}
		}
		b.WriteRune(r)
		prev = r
	}
	return b.String()
}

// mdCell is mdText for a table cell.
func mdCell(s string) string { return mdText(s) }

// mdCode writes s as an inline code span, with a fence longer than any run of backticks in s.
// In a table cell a | must still be escaped (GFM splits cells before it parses code spans).
func mdCode(s string, inTable bool) string {
	s = oneLine(s)
	if s == "" {
		return ""
	}
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") || strings.HasPrefix(s, " ") && strings.HasSuffix(s, " ") {
		s = " " + s + " "
	}
	if inTable {
		s = strings.ReplaceAll(s, "|", `\|`)
	}
	return fence + s + fence
}

func oneLine(s string) string { return strings.TrimSpace(oneLineKeep(s)) }

// oneLineKeep is s on one line, its leading and trailing spaces kept (a piece of a line).
func oneLineKeep(s string) string {
	if !utf8.ValidString(s) {
		s = string([]rune(s))
	}
	if !strings.ContainsAny(s, "\r\n\t") {
		return s
	}
	return oneLineReplacer.Replace(s)
}

// oneLineReplacer is built once: building a Replacer costs more than most of its uses.
var oneLineReplacer = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ", "\t", " ")

func isWord(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// isOrderedMarker: s so far is 1-9 digits, so the next '.' or ')' would make an ordered list item.
func isOrderedMarker(s string) bool {
	if s == "" || len(s) > 9 {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// mdURL writes a relative link target: in angle brackets when it holds a space or parentheses.
func mdURL(u string) string {
	if strings.ContainsAny(u, " ()<>") {
		return "<" + strings.NewReplacer("<", "%3C", ">", "%3E").Replace(u) + ">"
	}
	return u
}

// EscapeControls is s with its control characters but newlines and tabs written as escapes
// (\r, \x1b, \u0085). What a command, a backend or a cluster wrote reaches the console and
// the reports in errors, values and notes: written raw, a carriage return and an escape
// sequence in a command's stderr drew "PASSED" over the verdict line of a run that erred, in
// a terminal and in one that showed the report (cat report.md, a CI log).
func EscapeControls(s string) string {
	if !strings.ContainsFunc(s, isControl) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for _, r := range s {
		if !isControl(r) {
			b.WriteRune(r)
			continue
		}
		q := strconv.QuoteRune(r) // '\r', '\x1b', '\u0085'
		b.WriteString(q[1 : len(q)-1])
	}
	return b.String()
}

func isControl(r rune) bool { return unicode.IsControl(r) && r != '\n' && r != '\t' }
