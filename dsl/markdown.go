package dsl

import (
	"bytes"
	"fmt"
	"strings"
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
	return ""
}

// Fences splits a Markdown document into its fenced code blocks, following CommonMark's rules
// for backtick and tilde fences (opening fence indented at most three spaces; the closing fence
// uses the same character, is at least as long and has no info string).
func Fences(doc []byte) []Fence {
	var out []Fence
	lines := bytes.Split(doc, []byte("\n"))
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
