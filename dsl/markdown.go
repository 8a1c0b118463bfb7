package dsl

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
)

// Fence is one fenced code block of a Markdown document.
type Fence struct {
	// Info is the fence's info string, e.g. "cue labrun".
	Info string
	// Line is the 1-based line of the opening fence; the content starts on Line+1.
	Line int
	// EndLine is the line of the closing fence (0 when the fence is never closed).
	EndLine int
	// Content is the text between the fences.
	Content string
	// Indent is the indentation of the opening fence, removed from content lines.
	Indent int
	// Marker is the opening fence itself, e.g. "```".
	Marker string
}

// Lang is the first word of the info string.
func (f Fence) Lang() string {
	if i := strings.IndexAny(f.Info, " \t{"); i >= 0 {
		return f.Info[:i]
	}
	return f.Info
}

// HasWord reports whether the info string holds word as a separate word (also inside {...}).
func (f Fence) HasWord(word string) bool {
	for _, w := range strings.FieldsFunc(f.Info, func(r rune) bool {
		return r == ' ' || r == '\t' || r == '{' || r == '}' || r == ',' || r == '.'
	}) {
		if w == word {
			return true
		}
	}
	return false
}

// IsSpec reports whether the fence is a labrun spec: language cue and the word labrun.
func (f Fence) IsSpec() bool { return f.Lang() == "cue" && f.HasWord("labrun") }

// expectWord marks an expected-output block in a fence's info string.
const expectWord = "labrun-expect"

// NearMiss says why a fence whose info string names labrun is neither a spec (```cue labrun)
// nor an expected-output block (labrun-expect), "" for any other fence. labrun matches both
// exactly, letter case included, and reads any other block as plain text: a spec spelled
// ```cue Labrun would never run, an expected block spelled Labrun-expect never be compared.
func (f Fence) NearMiss() string {
	if f.IsSpec() || f.HasWord(expectWord) {
		return ""
	}
	lower := Fence{Info: strings.ToLower(f.Info)}
	switch {
	case lower.IsSpec():
		return "a spec is spelled ```cue labrun, in lower case"
	case lower.HasWord(expectWord):
		return "an expected-output block is spelled " + expectWord + ", in lower case"
	}
	for _, w := range strings.Fields(f.Info) {
		if strings.Contains(strings.ToLower(w), "labrun") {
			return fmt.Sprintf("%q is neither a spec (```cue labrun) nor an expected-output block (%s)", w, expectWord)
		}
	}
	// A word one or two letters off (```cue labrn, ```cue lab-run, ```text labrn-expect):
	// before, a document with other specs read such a block as plain text in silence, and
	// its scenario, which failed, never ran.
	for _, w := range strings.FieldsFunc(f.Info, func(r rune) bool {
		return r == ' ' || r == '\t' || r == '{' || r == '}' || r == ','
	}) {
		lw := strings.ToLower(w)
		for _, want := range []string{"labrun", expectWord} {
			if len(lw) >= 4 && EditDistance(lw, want) <= 2 {
				return fmt.Sprintf("%q is neither a spec (```cue labrun) nor an expected-output block (%s): it looks like %s misspelt", w, expectWord, want)
			}
		}
	}
	return ""
}

// Fences splits a Markdown document into its fenced code blocks, following CommonMark's rules
// for backtick and tilde fences (opening fence indented at most three spaces; the closing fence
// uses the same character, is at least as long and has no info string).
func Fences(doc []byte) []Fence {
	doc = withoutBOM(doc)
	var out []Fence
	lines := bytes.Split(doc, []byte("\n"))
	html := HTMLBlocks(doc)
	var open *Fence
	var marker byte
	var markerLen int
	var content strings.Builder
	for i, raw := range lines {
		line := strings.TrimRight(string(raw), "\r")
		indent := len(line) - len(strings.TrimLeft(line, " "))
		trimmed := strings.TrimLeft(line, " ")
		if open == nil {
			if indent > 3 || len(trimmed) < 3 || (trimmed[0] != '`' && trimmed[0] != '~') {
				continue
			}
			if inHTML(html, i+1) != nil {
				continue // HTML to a Markdown reader (a comment, <details> with no blank line after it)
			}
			c := trimmed[0]
			n := 0
			for n < len(trimmed) && trimmed[n] == c {
				n++
			}
			info := strings.TrimSpace(trimmed[n:])
			if n < 3 || (c == '`' && strings.Contains(info, "`")) {
				continue
			}
			open = &Fence{Info: info, Line: i + 1, Indent: indent, Marker: trimmed[:n]}
			marker, markerLen = c, n
			content.Reset()
			continue
		}
		if indent <= 3 && len(trimmed) >= markerLen && trimmed[0] == marker {
			n := 0
			for n < len(trimmed) && trimmed[n] == marker {
				n++
			}
			if n >= markerLen && strings.TrimSpace(trimmed[n:]) == "" {
				open.EndLine = i + 1
				open.Content = content.String()
				out = append(out, *open)
				open = nil
				continue
			}
		}
		// Content lines lose up to Indent spaces of indentation, as CommonMark says.
		strip := min(open.Indent, indent)
		content.WriteString(line[strip:])
		content.WriteByte('\n')
	}
	if open != nil {
		open.Content = content.String()
		out = append(out, *open)
	}
	return out
}

// SwallowedSpec is the line of the document inside the fence that opens a spec (```cue
// labrun) with a marker that could have closed this fence but for its info string, and that
// line's text; 0 when there is none. A fence left open above a spec (```sh never closed) is
// closed by the spec's own closing line: the spec is read as the fence's text. A longer fence
// around a spec (````md) is how a document shows one, and is not such a mistake.
func (f Fence) SwallowedSpec() (int, string) {
	if f.IsSpec() {
		return 0, ""
	}
	for i, line := range strings.Split(f.Content, "\n") {
		trimmed := strings.TrimLeft(line, " ")
		if len(line)-len(trimmed) > 3 || len(trimmed) < len(f.Marker) || trimmed[0] != f.Marker[0] {
			continue
		}
		n := 0
		for n < len(trimmed) && trimmed[n] == f.Marker[0] {
			n++
		}
		if n >= len(f.Marker) && (Fence{Info: strings.TrimSpace(trimmed[n:])}).IsSpec() {
			return f.Line + 1 + i, trimmed
		}
	}
	return 0, ""
}

// withoutBOM is doc without the byte order mark some editors write at its start (on Windows):
// before it, the first line's fence or HTML would not start the line, and a fence opened
// there would be read as closing nothing, its closing fence as opening one. Lines keep their
// numbers; only the first line's columns move.
func withoutBOM(doc []byte) []byte { return bytes.TrimPrefix(doc, []byte("\ufeff")) }

// HTMLBlock is the lines of an HTML block of a Markdown document, as CommonMark reads it: a
// fence there is HTML text, not a code block (inside a comment, not shown at all).
type HTMLBlock struct {
	Line, EndLine int // 1-based, both included
	Comment       bool
	Tag           string // its first line, trimmed
}

// HTMLBlocks are doc's HTML blocks, in document order; nil (without parsing) when no line
// begins with < as an HTML block's first line must.
func HTMLBlocks(doc []byte) []HTMLBlock {
	doc = withoutBOM(doc)
	maybe := false
	for line := range bytes.SplitSeq(doc, []byte("\n")) {
		t := bytes.TrimLeft(line, " ")
		if len(line)-len(t) <= 3 && len(t) > 0 && t[0] == '<' {
			maybe = true
			break
		}
	}
	if !maybe {
		return nil
	}
	lineOf := func(off int) int { return 1 + bytes.Count(doc[:off], []byte("\n")) }
	var out []HTMLBlock
	root := goldmark.DefaultParser().Parse(text.NewReader(doc))
	_ = ast.Walk(root, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		h, ok := n.(*ast.HTMLBlock)
		if !entering || !ok {
			return ast.WalkContinue, nil
		}
		segs := h.Lines()
		if segs.Len() == 0 {
			return ast.WalkSkipChildren, nil
		}
		first := segs.At(0)
		b := HTMLBlock{Line: lineOf(first.Start), Comment: h.HTMLBlockType == ast.HTMLBlockType2,
			Tag: strings.TrimSpace(string(first.Value(doc)))}
		last := segs.At(segs.Len() - 1)
		b.EndLine = lineOf(max(last.Start, last.Stop-1))
		if h.HasClosure() {
			b.EndLine = lineOf(max(h.ClosureLine.Start, h.ClosureLine.Stop-1))
		}
		out = append(out, b)
		return ast.WalkSkipChildren, nil
	})
	return out
}

// inHTML is the one of blocks that holds line, or nil.
func inHTML(blocks []HTMLBlock, line int) *HTMLBlock {
	for i := range blocks {
		if blocks[i].Line <= line && line <= blocks[i].EndLine {
			return &blocks[i]
		}
	}
	return nil
}

// HTMLFence is a fence that Fences leaves out because it is inside an HTML block: Info, Line,
// Indent and Marker, no content.
type HTMLFence struct {
	Fence
	Block HTMLBlock
}

// HTMLFences are the fences inside doc's HTML blocks (HTMLBlocks), in document order.
func HTMLFences(doc []byte) []HTMLFence {
	doc = withoutBOM(doc)
	html := HTMLBlocks(doc)
	if html == nil {
		return nil
	}
	var out []HTMLFence
	for i, raw := range bytes.Split(doc, []byte("\n")) {
		line := strings.TrimRight(string(raw), "\r")
		trimmed := strings.TrimLeft(line, " ")
		indent := len(line) - len(trimmed)
		if indent > 3 || !(strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~")) {
			continue
		}
		b := inHTML(html, i+1)
		if b == nil {
			continue
		}
		n := 0
		for n < len(trimmed) && trimmed[n] == trimmed[0] {
			n++
		}
		out = append(out, HTMLFence{Fence{Info: strings.TrimSpace(trimmed[n:]), Line: i + 1, Indent: indent, Marker: trimmed[:n]}, *b})
	}
	return out
}

// UnreadFence is a fenced code block that a CommonMark reader (GitHub, an editor's preview)
// shows as such but that Fences does not return: one inside a list item or a blockquote, e.g.
//
//  1. The run shows:
//
//     ```text labrun-expect
//
// labrun reads fences at the left margin only (indented at most three spaces).
type UnreadFence struct {
	Fence // Info, Line, Indent (the column of the fence, less one) and Marker; no content
	// Container is where the fence is: "list item", "blockquote", or "" when Fences and
	// CommonMark disagree on it for another reason.
	Container string
}

// UnreadFences returns the fenced code blocks with an info string that CommonMark sees in doc
// and Fences (read) does not, in document order. Indented code blocks (four spaces, outside any
// list) are not fences, whatever they hold, and neither is a fence's content.
func UnreadFences(doc []byte, read []Fence) []UnreadFence {
	doc = withoutBOM(doc)
	opened := map[int]bool{}
	for _, f := range read {
		opened[f.Line] = true
	}
	// CommonMark's reading is needed only when a line that no read fence opens holds a fence
	// marker and names labrun: most documents have none.
	suspect := false
	for i, line := range bytes.Split(doc, []byte("\n")) {
		if !opened[i+1] && (bytes.Contains(line, []byte("```")) || bytes.Contains(line, []byte("~~~"))) &&
			bytes.Contains(bytes.ToLower(line), []byte("labrun")) {
			suspect = true
			break
		}
	}
	if !suspect {
		return nil
	}
	var out []UnreadFence
	root := goldmark.DefaultParser().Parse(text.NewReader(doc))
	_ = ast.Walk(root, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		fc, ok := n.(*ast.FencedCodeBlock)
		if !entering || !ok || fc.Info == nil {
			return ast.WalkContinue, nil
		}
		start := fc.Info.Segment.Start
		lineStart := bytes.LastIndexByte(doc[:start], '\n') + 1
		line := 1 + bytes.Count(doc[:lineStart], []byte("\n"))
		if opened[line] {
			return ast.WalkSkipChildren, nil
		}
		// The fence's marker is the run of ` or ~ before the info string.
		end := start
		for end > lineStart && (doc[end-1] == ' ' || doc[end-1] == '\t') {
			end--
		}
		begin := end
		for begin > lineStart && (doc[begin-1] == '`' || doc[begin-1] == '~') && (begin == end || doc[begin-1] == doc[end-1]) {
			begin--
		}
		f := UnreadFence{Fence: Fence{
			Info:   strings.TrimSpace(string(fc.Info.Segment.Value(doc))),
			Line:   line,
			Indent: begin - lineStart,
			Marker: string(doc[begin:end]),
		}}
		for p := n.Parent(); p != nil; p = p.Parent() {
			switch p.(type) {
			case *ast.ListItem:
				f.Container = "list item"
			case *ast.Blockquote:
				f.Container = "blockquote"
			}
		}
		out = append(out, f)
		return ast.WalkSkipChildren, nil
	})
	return out
}

// SpecSource is the CUE that labrun reads of a Markdown document: its spec blocks at their
// lines and columns, every other line blank (editors locate a position in it).
func SpecSource(doc []byte) []byte { return specSource(doc, Fences(doc)) }

// specSource turns a Markdown document into CUE source with the same line structure: the lines
// of labrun spec fences are kept (their indentation stripped and replaced by spaces so columns
// stay true), every other line is blanked. CUE positions in the result are positions in the
// document.
func specSource(doc []byte, fences []Fence) []byte {
	lines := bytes.Split(doc, []byte("\n"))
	keep := make([]bool, len(lines))
	for _, f := range fences {
		if !f.IsSpec() {
			continue
		}
		end := f.EndLine - 1
		if f.EndLine == 0 {
			end = len(lines)
		}
		for l := f.Line; l < end && l < len(lines); l++ { // f.Line is 1-based: index f.Line is the first content line
			keep[l] = true
		}
	}
	var b bytes.Buffer
	for i, l := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		if keep[i] {
			b.Write(bytes.TrimRight(l, "\r"))
		}
	}
	return b.Bytes()
}

// indentedSpecLines are the lines of doc, outside fences, that would open a spec but for their
// indentation: a tab or four spaces make them an indented code block, which a Markdown reader
// shows with its ```cue labrun as text.
func indentedSpecLines(doc []byte, fences []Fence) []int {
	inFence := map[int]bool{}
	lines := bytes.Split(doc, []byte("\n"))
	for _, f := range fences {
		end := f.EndLine
		if end == 0 {
			end = len(lines)
		}
		for l := f.Line; l <= end; l++ {
			inFence[l] = true
		}
	}
	var out []int
	for i, raw := range lines {
		line := strings.TrimRight(string(raw), "\r")
		if inFence[i+1] || !(strings.HasPrefix(line, "\t") || strings.HasPrefix(line, "    ")) {
			continue
		}
		t := strings.TrimLeft(line, " \t")
		for _, c := range []string{"`", "~"} {
			if info := strings.TrimLeft(t, c); len(t)-len(info) >= 3 && (Fence{Info: strings.TrimSpace(info)}).IsSpec() {
				out = append(out, i+1)
				break
			}
		}
	}
	return out
}

// unreadableText says why labrun cannot read src as the UTF-8 text with LF or CRLF line
// endings that CUE's parser and its Markdown reader take, or "" when it can. Before, a file
// saved in UTF-16 was refused with a CUE error per byte (a Markdown document as holding no
// spec), and one whose lines end in a carriage return alone was one line long: "expected
// ',', found 'IDENT' import" at column 19 of it, or no spec in a document.
func unreadableText(src []byte) string {
	switch {
	case bytes.HasPrefix(src, []byte{0xff, 0xfe}), bytes.HasPrefix(src, []byte{0xfe, 0xff}):
		return "the file is in UTF-16 (it begins with UTF-16's byte order mark): labrun reads UTF-8; save it as UTF-8 (iconv -f UTF-16 -t UTF-8)"
	case len(src) >= 4 && (src[0] == 0) != (src[1] == 0) && (src[2] == 0) != (src[3] == 0) && (src[0] == 0) == (src[2] == 0):
		return "the file looks like UTF-16 (every other byte is zero): labrun reads UTF-8; save it as UTF-8 (iconv -f UTF-16LE -t UTF-8, or UTF-16BE)"
	case bytes.IndexByte(src, '\n') < 0 && bytes.Count(src, []byte{'\r'}) > 1:
		return "the file's lines end with a carriage return alone (CR, as classic Mac OS wrote them), so it reads as one line: labrun reads lines ending in LF or CRLF; save it with LF line endings (tr '\\r' '\\n')"
	}
	return ""
}
