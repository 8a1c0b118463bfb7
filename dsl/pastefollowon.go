package dsl

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	"cuelang.org/go/cue/parser"
)

// pastedChars are the characters a paste brings that CUE's scanner refuses (illegal character
// U+00A0, illegal byte order mark, illegal character NUL), and what the user meant by each.
var pastedChars = [][2]string{{"\u00a0", " "}, {"\ufeff", ""}, {"\x00", " "}}

// dropPasteFollowOns drops, of a file where the scanner refused a pasted character (a no-break
// space in the indentation), the parser's errors that the refused character caused: the parser
// loses its place at the character and says "expected '}', found 'EOF'" at the file's end, a
// second error of one mistake. They are dropped only when the file, the characters replaced as
// meant (a space for a no-break space), parses: a syntax error of its own is kept.
func (l *loader) dropPasteFollowOns() {
	pasted := map[string]bool{}
	for _, e := range l.errs.errs {
		if e.Path == "" && strings.HasPrefix(e.Msg, "illegal ") && strings.HasSuffix(e.Pos.File, ".cue") {
			pasted[e.Pos.File] = true
		}
	}
	if len(pasted) == 0 {
		return
	}
	clean := map[string]bool{}
	for file := range pasted {
		src, err := os.ReadFile(file)
		if err != nil {
			continue
		}
		for _, r := range pastedChars {
			src = bytes.ReplaceAll(src, []byte(r[0]), []byte(r[1]))
		}
		if _, err := parser.ParseFile(file, src); err == nil {
			clean[file] = true
		}
	}
	// One line indented with two no-break spaces is one paste: said once, at the first.
	type lineMsg struct {
		file string
		line int
		msg  string
	}
	first := map[lineMsg]*Error{}
	more := map[*Error]int{}
	out := l.errs.errs[:0:0]
	for _, e := range l.errs.errs {
		if clean[e.Pos.File] && e.Path == "" && !strings.HasPrefix(e.Msg, "illegal ") {
			continue
		}
		if pasted[e.Pos.File] && e.Path == "" && strings.HasPrefix(e.Msg, "illegal ") {
			k := lineMsg{e.Pos.File, e.Pos.Line, e.Msg}
			if f := first[k]; f != nil {
				more[f]++
				continue
			}
			first[k] = e
		}
		out = append(out, e)
	}
	for e, n := range more {
		e.Msg += fmt.Sprintf(" (this line holds %d of them: replace each)", n+1)
	}
	l.errs.errs = out
}
