package dsl

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/parser"
	"cuelang.org/go/cue/token"
)

// hint adds to CUE's message (already explained: text) what a newcomer to CUE needs to fix
// the mistake: CUE reports where its grammar or scope broke, which is often one token after
// a habit from YAML, JSON or Go (a # comment, a "- " list item, an unescaped quote, an
// expression written bare, the schema not imported). p is the error's position, path its
// field path and msg CUE's own message.
func (l *loader) hint(p token.Pos, path []string, msg, text string) string {
	if m := refNotFoundRE.FindStringSubmatch(msg); m != nil {
		switch name := m[1]; {
		case name == "schema":
			return text + `: add import "labrun.dev/schema" below the package clause`
		case name == "#Scenario":
			return text + `: write schema.#Scenario (with import "labrun.dev/schema")`
		case name == "vars":
			return text + ": declare the var in the scenario, e.g. vars: {requests: 10} (a reference sees the fields written, not the schema's)"
		case len(path) >= 2 && (path[1] == "expect" || path[len(path)-1] == "assert" || path[len(path)-1] == "until"):
			return text + `: an expression is a string: write it in quotes, e.g. "fortio.code200 == 10"`
		case len(path) >= 3 && path[1] == "vars":
			// total: m * 2 with no var m: CUE's "did you mean s?" named the scenario.
			if vars, ok := l.varsAt(p); ok {
				declared := "the scenario declares no other var"
				if len(vars) > 0 {
					declared = "the vars declared: " + strings.Join(vars, ", ")
				}
				return fmt.Sprintf("%s: vars.%s reads %s, which is not a var (%s)%s; a var reads another by its name, as vars: {total: n * 2, n: 5} does", text, path[2], name, declared, didYouMean(name, vars))
			}
		}
		if other := l.otherPackageDecl(p, m[1]); other != "" {
			return text + other
		}
		return text + didYouMean(m[1], declaredNames(l.buildFiles, m[1]))
	}
	if m := undefinedFieldRE.FindStringSubmatch(msg); m != nil && strings.EqualFold(strings.TrimPrefix(m[1], "#"), "Scenario") {
		return text + ": did you mean schema.#Scenario?"
	}
	if m := undefinedFieldRE.FindStringSubmatch(msg); m != nil {
		// requests: vars.req with vars: {reqs: 10}: CUE named the field alone, not that it is
		// a var, nor the vars there are.
		if line, c := l.sourceLine(p), p.Column(); c > len("vars.") && c-1 <= len(line) && strings.HasSuffix(line[:c-1], "vars.") {
			if vars := l.varsOfFile(p.Filename()); len(vars) > 0 {
				return fmt.Sprintf("%s: no var named %s%s; expected one of the vars declared: %s", text, m[1], didYouMean(m[1], vars), strings.Join(vars, ", "))
			}
			return fmt.Sprintf("%s: no var named %s: the scenario declares no vars; declare it, e.g. vars: {%s: 10}", text, m[1], m[1])
		}
	}
	line := l.sourceLine(p)
	if imp := importRE.FindStringSubmatch(line); imp != nil && (strings.HasSuffix(msg, "import failed") || strings.HasPrefix(msg, "builtin package")) {
		return fmt.Sprintf(`cannot import %q: labrun's schema is import "labrun.dev/schema"`, imp[1])
	}
	if len(path) > 0 || line == "" {
		return text
	}
	// Syntax errors.
	if msg == "illegal character NUL" {
		return text + ": a NUL byte (0x00), which no text holds (a paste of binary data): expected text; delete it"
	}
	// Characters a paste from a web page or a word processor brings, invisible in an editor.
	switch msg {
	case "illegal byte order mark":
		return text + " (U+FEFF, invisible): one is allowed only at the start of a file (two files joined with cat?): expected text; delete it"
	case "illegal character U+00A0":
		return text + ": a no-break space (pasted from a web page or a word processor): expected a space or a tab; replace it"
	}
	trimmed := strings.TrimLeft(line, " \t")
	switch {
	case trimmed == "#" || strings.HasPrefix(trimmed, "# ") || strings.HasPrefix(trimmed, "#!") || strings.HasPrefix(trimmed, "##"):
		return text + ": CUE comments start with //, not #"
	case trimmed == "-" || strings.HasPrefix(trimmed, "- "):
		return text + `: CUE has no YAML "- " items: write a list in brackets, e.g. steps: [{name: "a", sleep: "1s"}, {sleep: "2s"}]`
	}
	// A field written as a list's element (`steps: [before: {...}]`): CUE stops at its colon.
	if c := p.Column(); strings.HasPrefix(msg, "missing ',' in list literal") && c >= 1 && c <= len(line) && line[c-1] == ':' {
		// Unless the field starts its line as far in as the line that opened the list: then
		// the list's ] is missing above it, and the field is the struct's next one.
		if ol, oc, ok := openedList(l.source(p.Filename()), p.Offset()); ok && ol != p.Line() && indentOf(l.lineOf(p.Filename(), ol)) == indentOf(line) {
			return fmt.Sprintf("%s: the list opened at line %d, column %d %s before this field", text, ol, oc, neverClosedList)
		}
		return text + `: a list holds values, not label: value fields; put the fields of an element in braces, e.g. steps: [{name: "before", sleep: "1s"}]`
	}
	// A string that ends where the user meant a quote inside it: the next token touches it.
	if c := p.Column(); c >= 2 && c <= len(line) && line[c-2] == '"' && !strings.ContainsRune(" \t,]})", rune(line[c-1])) {
		return text + `: a " inside a string ends it; escape it as \" (inside an expression, quote with single quotes: 'passed')`
	}
	return text
}

// neverClosedList is what a list whose ] is missing is said to be: the syntax errors after it
// in its file are the parser's recovery from it, and are not said (cueerr.go).
const neverClosedList = "is never closed: expected ]"

var (
	refNotFoundRE    = regexp.MustCompile(`^reference "([^"]+)" not found`)
	undefinedFieldRE = regexp.MustCompile(`^undefined field: (#?\w+)`)
	importRE         = regexp.MustCompile(`^\s*(?:import\s+)?(?:\w+\s+)?"([^"]*)"\s*\)?\s*$`)
)

// sourceLine is the line of the user's source at p (of the CUE a Markdown document turned
// into, for a virtual file), without its line ending; "" when it cannot be read.
func (l *loader) sourceLine(p token.Pos) string {
	if !p.IsValid() {
		return ""
	}
	return l.lineOf(p.Filename(), p.Line())
}

// source is a user's file (the CUE of a Markdown document for its virtual file), nil for the
// schema's or one it cannot read.
func (l *loader) source(file string) []byte {
	if l.schemaFiles[file] {
		return nil
	}
	src, ok := l.virtualSrc[file]
	if !ok {
		var err error
		if src, err = l.read(file); err != nil {
			return nil
		}
	}
	return src
}

// lineOf is line n (1-based) of a user's file, "" for the schema's or one it cannot read.
func (l *loader) lineOf(file string, n int) string {
	src := l.source(file)
	if src == nil {
		return ""
	}
	lines := bytes.Split(src, []byte("\n"))
	if n < 1 || n > len(lines) {
		return ""
	}
	return strings.TrimRight(string(lines[n-1]), "\r")
}

// selfRefMessage says what is wrong with field name written `name: name`.
func selfRefMessage(name string) string {
	return fmt.Sprintf("written %s: %s, the value refers to this field itself and has none: CUE resolves a name to the nearest field of that name, which is this one, not the %s written outside; give the outer value another name (_%s: ...) and write %s: _%s", name, name, name, name, name, name)
}

// selfReference reports whether line holds `name: name` (a field whose value is a reference
// to its own label, not followed by a selector, call or index) around column col (1-based).
func selfReference(line string, col int, name string) bool {
	re := regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `\s*:\s*` + regexp.QuoteMeta(name) + `\b`)
	for _, m := range re.FindAllStringIndex(line, -1) {
		if m[0] > 0 && (line[m[0]-1] == '.' || line[m[0]-1] == '#') {
			continue
		}
		if m[1] < len(line) && strings.ContainsRune(".([", rune(line[m[1]])) {
			continue
		}
		if m[0] <= col-1 && col-1 < m[1]+1 {
			return true
		}
	}
	return false
}

// declaredNames are the names the files declare (fields' labels, lets, aliases) that a
// reference to name could have meant: hidden ones for a hidden name (_requests), the others
// for another.
func declaredNames(files []*ast.File, name string) []string {
	hidden := strings.HasPrefix(name, "_")
	seen := map[string]bool{}
	var out []string
	add := func(n string) {
		if n != "" && n != name && strings.HasPrefix(n, "_") == hidden && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	for _, f := range files {
		ast.Walk(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.Field:
				if id, ok := n.Label.(*ast.Ident); ok {
					add(id.Name)
				}
			case *ast.LetClause:
				add(n.Ident.Name)
			case *ast.Alias:
				add(n.Ident.Name)
			}
			return true
		}, nil)
	}
	return out
}

// openedList is the line and column (1-based) of the innermost [ that is still open at offset
// off of src, skipping strings and comments; ok is false when there is none.
func openedList(src []byte, off int) (line, col int, ok bool) {
	if off > len(src) {
		return 0, 0, false
	}
	var open []int // offsets of the brackets and braces still open
	for i := 0; i < off; i++ {
		switch c := src[i]; c {
		case '"', '\'':
			// A string ends at its unescaped quote or, unless multi-line, at the line's end.
			for i++; i < off && src[i] != c && src[i] != '\n'; i++ {
				if src[i] == '\\' {
					i++
				}
			}
		case '/':
			if i+1 < off && src[i+1] == '/' {
				for i < off && src[i] != '\n' {
					i++
				}
			}
		case '[', '{', '(':
			open = append(open, i)
		case ']', '}', ')':
			if len(open) > 0 {
				open = open[:len(open)-1]
			}
		}
	}
	if len(open) == 0 || src[open[len(open)-1]] != '[' {
		return 0, 0, false
	}
	at := open[len(open)-1]
	start := bytes.LastIndexByte(src[:at], '\n') + 1
	return 1 + bytes.Count(src[:start], []byte("\n")), at - start + 1, true
}

// indentOf is the run of spaces and tabs that starts line.
func indentOf(line string) string { return line[:len(line)-len(strings.TrimLeft(line, " \t"))] }

// varsAt are the names of the vars struct whose field's value holds p, sorted, but for that
// field's own; ok is false when p is in none.
func (l *loader) varsAt(p token.Pos) (names []string, ok bool) {
	for _, f := range l.buildFiles {
		if f.Filename != p.Filename() {
			continue
		}
		for _, st := range varsStructs(f) {
			for _, d := range st.Elts {
				vf, isField := d.(*ast.Field)
				if !isField || vf.Value == nil || p.Offset() < vf.Value.Pos().Offset() || p.Offset() > vf.Value.End().Offset() {
					continue
				}
				for _, e := range st.Elts {
					if other, isField := e.(*ast.Field); isField && other != vf {
						if n, _, err := ast.LabelName(other.Label); err == nil {
							names = append(names, n)
						}
					}
				}
				sort.Strings(names)
				return names, true
			}
		}
	}
	return nil, false
}

// varsOfFile is the names of every vars struct of the named file, sorted.
func (l *loader) varsOfFile(file string) []string {
	seen := map[string]bool{}
	var names []string
	for _, f := range l.buildFiles {
		if f.Filename != file {
			continue
		}
		for _, st := range varsStructs(f) {
			for _, d := range st.Elts {
				if fl, ok := d.(*ast.Field); ok {
					if n, _, err := ast.LabelName(fl.Label); err == nil && !seen[n] {
						seen[n] = true
						names = append(names, n)
					}
				}
			}
		}
	}
	sort.Strings(names)
	return names
}

// otherPackageDecl says, for a reference to name that CUE did not find in the file at p,
// where a sibling file of the same directory declares name at its top level under another
// package clause: files of a directory see each other's fields only when their package
// clauses agree, and a file copied from another lab (package other beside package lab) said
// only that the reference was not found. "" when no sibling does.
func (l *loader) otherPackageDecl(p token.Pos, name string) string {
	file := p.Filename()
	if !p.IsValid() || l.schemaFiles[file] || l.virtualSrc[file] != nil {
		return ""
	}
	src := l.source(file)
	own, err := parser.ParseFile(file, src, parser.PackageClauseOnly)
	if src == nil || err != nil || own.PackageName() == "" {
		return ""
	}
	dir := filepath.Dir(file)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	for _, e := range entries {
		sib := filepath.Join(dir, e.Name())
		if sib == file || e.IsDir() || !strings.HasSuffix(e.Name(), ".cue") {
			continue
		}
		b, err := l.read(sib)
		if err != nil {
			continue
		}
		f, err := parser.ParseFile(sib, withoutBOM(b))
		if err != nil || f.PackageName() == "" || f.PackageName() == own.PackageName() {
			continue
		}
		for _, d := range f.Decls {
			fl, ok := d.(*ast.Field)
			if !ok {
				continue
			}
			if label, _, err := ast.LabelName(fl.Label); err == nil && label == name {
				at := fl.Label.Pos()
				return fmt.Sprintf(": %s is declared in %s:%d:%d, a file of package %s, and this file is package %s: the files of a directory see each other's fields only when their package clauses agree; expected package %s here",
					name, e.Name(), at.Line(), at.Column(), f.PackageName(), own.PackageName(), f.PackageName())
			}
		}
	}
	return ""
}
