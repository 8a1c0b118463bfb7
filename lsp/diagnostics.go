package lsp

import (
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf8"

	protocol "github.com/tliron/glsp/protocol_3_16"

	"labrun.dev/labrun/dsl"
)

// source names labrun as the diagnostics' source.
var source = "labrun"

// diagnostics turns a check's report into diagnostics by file. The checked file always has
// an entry (empty when it has no problem), so that its earlier problems are cleared.
func (s *Server) diagnostics(path string, texts map[string]*text, rep *Report) map[string][]protocol.Diagnostic {
	out := map[string][]protocol.Diagnostic{path: {}}
	textOf := func(file string) *text {
		if t, ok := texts[file]; ok {
			return t
		}
		t := newText("")
		if s.opts.ReadFile != nil {
			if b, err := s.opts.ReadFile(file); err == nil {
				t = newText(string(b))
			}
		}
		texts[file] = t
		return t
	}
	add := func(pos dsl.Pos, sev protocol.DiagnosticSeverity, code, msg string, also []dsl.Pos) {
		file := pos.File
		if !pos.IsValid() {
			file = path
		}
		dg := protocol.Diagnostic{Range: problemRange(textOf(file), pos, msg), Severity: &sev, Source: &source, Message: msg}
		if code != "" {
			dg.Code = &protocol.IntegerOrString{Value: code}
		}
		for _, a := range also {
			if !a.IsValid() {
				continue
			}
			dg.RelatedInformation = append(dg.RelatedInformation, protocol.DiagnosticRelatedInformation{
				Location: protocol.Location{URI: uriOf(a.File), Range: rangeAt(textOf(a.File), a)},
				Message:  "also here",
			})
		}
		out[file] = append(out[file], dg)
	}
	for _, e := range rep.Problems {
		add(e.Pos, protocol.DiagnosticSeverityError, "", e.Msg, e.Also)
		if at := readerOf(rep.Scenarios, e); at.IsValid() {
			// A problem in a file a step reads (an apply's YAML), where vet says it: the
			// step's own file says it too, at the file's name, so that the spec being
			// edited does not look fine while vet refuses it.
			dg := protocol.Diagnostic{
				Range: rangeAt(textOf(at.File), at), Severity: ptr(protocol.DiagnosticSeverityError), Source: &source,
				Message: fmt.Sprintf("%s:%d:%d: %s", relTo(at.File, e.Pos.File), e.Pos.Line, e.Pos.Col, e.Msg),
				RelatedInformation: []protocol.DiagnosticRelatedInformation{{
					Location: protocol.Location{URI: uriOf(e.Pos.File), Range: rangeAt(textOf(e.Pos.File), e.Pos)},
					Message:  "the problem is here",
				}},
			}
			out[at.File] = append(out[at.File], dg)
		}
	}
	for _, w := range rep.Warnings {
		add(w.Pos, protocol.DiagnosticSeverityWarning, w.Code, w.Msg, nil)
	}
	for _, w := range rep.Skipped {
		add(w.Pos, protocol.DiagnosticSeverityWarning, "skipped", w.Msg, nil)
	}
	if rep.Failed != nil {
		add(dsl.Pos{File: path}, protocol.DiagnosticSeverityError, "", rep.Failed.Error(), nil)
	}
	return out
}

func ptr[T any](v T) *T { return &v }

// relTo names file as from's directory sees it (istio.yaml, manifests/dr.yaml).
func relTo(from, file string) string {
	if r, err := filepath.Rel(filepath.Dir(from), file); err == nil {
		return r
	}
	return file
}

// readerOf is where a step names the file a problem is in, when that file is no spec (an
// apply's YAML: the problem's path is the step's field that names it, s.steps.1.apply.files.0);
// an invalid Pos otherwise.
func readerOf(scenarios []*dsl.Scenario, e *dsl.Error) dsl.Pos {
	if !e.Pos.IsValid() || checkable(e.Pos.File) || e.Path == "" {
		return dsl.Pos{}
	}
	for _, sc := range scenarios {
		rest, ok := strings.CutPrefix(e.Path, sc.Name+".")
		if !ok {
			continue
		}
		var at dsl.Pos
		for _, ph := range sc.Phases() {
			dsl.Walk(ph.Steps, func(st *dsl.Step) {
				if field, ok := strings.CutPrefix(rest, st.Path+"."+st.Kind+"."); ok && !at.IsValid() {
					if p := st.FieldPos(field); p.IsValid() && checkable(p.File) {
						at = p
					}
				}
			})
		}
		if at.IsValid() {
			return at
		}
	}
	return dsl.Pos{}
}

// rangeAt is the range of the token a problem's position points at: a name, a string, or
// one character; the start of the file for a position without a line.
func rangeAt(t *text, pos dsl.Pos) protocol.Range {
	if pos.Line == 0 {
		return protocol.Range{}
	}
	start := t.at(pos)
	return protocol.Range{Start: t.position(start), End: t.position(tokenEnd(t.src, start))}
}

// problemRange is rangeAt's range, widened over a dotted name the message names: a problem
// with the stat http.downstream_rq_totl is reported at http, and underlining http alone
// points at a name that is fine.
func problemRange(t *text, pos dsl.Pos, msg string) protocol.Range {
	r := rangeAt(t, pos)
	if pos.Line == 0 {
		return r
	}
	start := t.at(pos)
	end := tokenEnd(t.src, start)
	if end == start || !isWordByte(t.src[start]) {
		return r
	}
	for end+1 < len(t.src) && t.src[end] == '.' && isWordByte(t.src[end+1]) {
		next := end + 1
		for next < len(t.src) && isWordByte(t.src[next]) {
			next++
		}
		if !mentions(msg, t.src[start:next]) {
			break
		}
		end = next
	}
	r.End = t.position(end)
	return r
}

// mentions reports whether msg holds name as a whole (not part of a longer name).
func mentions(msg, name string) bool {
	for i := 0; ; {
		j := strings.Index(msg[i:], name)
		if j < 0 {
			return false
		}
		j += i
		k := j + len(name)
		if (j == 0 || !isWordByte(msg[j-1])) && (k == len(msg) || !isWordByte(msg[k])) {
			return true
		}
		i = j + 1
	}
}

// tokenEnd is the end of the token at off: a name, a quoted string on one line, or one
// character (nothing at the end of a line).
func tokenEnd(src string, off int) int {
	if off >= len(src) || src[off] == '\n' {
		return off
	}
	if src[off] == '"' || src[off] == '\'' {
		q := src[off]
		for i := off + 1; i < len(src) && src[i] != '\n'; i++ {
			switch src[i] {
			case '\\':
				i++
			case q:
				return i + 1
			}
		}
		return off + 1
	}
	end := off
	for end < len(src) && isWordByte(src[end]) {
		end++
	}
	if end == off {
		_, n := utf8.DecodeRuneInString(src[off:])
		end += n
	}
	return end
}
