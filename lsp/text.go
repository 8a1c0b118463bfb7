package lsp

import (
	"sort"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	protocol "github.com/tliron/glsp/protocol_3_16"

	"labrun.dev/labrun/dsl"
)

// text is a document's content with its line starts. LSP positions are 0-based lines and
// columns counted in UTF-16 code units; labrun's (dsl.Pos) are 1-based lines and columns
// counted in bytes, as CUE counts them.
type text struct {
	src   string
	lines []int // byte offset of each line's start
}

func newText(src string) *text {
	t := &text{src: src, lines: []int{0}}
	for i := 0; i < len(src); i++ {
		if src[i] == '\n' {
			t.lines = append(t.lines, i+1)
		}
	}
	return t
}

// line is the content of line i (0-based) without its newline.
func (t *text) line(i int) string {
	if i < 0 || i >= len(t.lines) {
		return ""
	}
	end := len(t.src)
	if i+1 < len(t.lines) {
		end = t.lines[i+1] - 1
	}
	return strings.TrimSuffix(t.src[t.lines[i]:end], "\r")
}

// offset is the byte offset of an LSP position, clamped to the text.
func (t *text) offset(p protocol.Position) int {
	l := int(p.Line)
	if l >= len(t.lines) {
		return len(t.src)
	}
	line := t.line(l)
	return t.lines[l] + utf16Offset(line, int(p.Character))
}

// position is the LSP position of a byte offset.
func (t *text) position(off int) protocol.Position {
	off = max(0, min(off, len(t.src)))
	l := sort.Search(len(t.lines), func(i int) bool { return t.lines[i] > off }) - 1
	line := t.line(l)
	col := min(off-t.lines[l], len(line))
	return protocol.Position{Line: protocol.UInteger(l), Character: protocol.UInteger(utf16Len(line[:col]))}
}

// at is the byte offset of a labrun position's line and column (1-based, bytes), clamped to
// its line.
func (t *text) at(p dsl.Pos) int {
	l := p.Line - 1
	if l < 0 {
		return 0
	}
	if l >= len(t.lines) {
		return len(t.src)
	}
	return t.lines[l] + min(max(p.Col-1, 0), len(t.line(l)))
}

// utf16Len is the length of s in UTF-16 code units.
func utf16Len(s string) int {
	n := 0
	for _, r := range s { // an invalid byte is U+FFFD here: one unit, as editors count it
		n += utf16.RuneLen(r)
	}
	return n
}

// utf16Offset is the byte offset in line of the UTF-16 column col (clamped to the line; a
// column inside a surrogate pair is the rune's start).
func utf16Offset(line string, col int) int {
	units := 0
	for i, r := range line {
		if units >= col {
			return i
		}
		units += utf16.RuneLen(r)
	}
	return len(line)
}

// apply is src with one change of an editor applied (an incremental change has a range;
// without one the change is the whole text).
func apply(src string, change any) string {
	switch c := change.(type) {
	case protocol.TextDocumentContentChangeEventWhole:
		return c.Text
	case protocol.TextDocumentContentChangeEvent:
		if c.Range == nil {
			return c.Text
		}
		t := newText(src)
		from, to := t.offset(c.Range.Start), t.offset(c.Range.End)
		if to < from {
			from, to = to, from
		}
		return src[:from] + c.Text + src[to:]
	}
	return src
}

// isWordByte reports whether b can be part of a name: a CUE label, an expression identifier.
func isWordByte(b byte) bool {
	return b == '_' || b == '$' || b == '#' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= utf8.RuneSelf
}
