package dsl

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/build"
	cueerrors "cuelang.org/go/cue/errors"
	"cuelang.org/go/cue/parser"
	"cuelang.org/go/cue/token"

	"labrun.dev/labrun/internal/didyoumean"
	"labrun.dev/labrun/schema"
)

// pos converts a CUE position into a user position, or the zero Pos for a schema position.
func (l *loader) pos(p token.Pos) Pos {
	if !p.IsValid() || l.schemaFiles[p.Filename()] {
		return Pos{}
	}
	return Pos{File: l.userFile(p.Filename()), Line: p.Line(), Col: p.Column()}
}

// withinLine is pos, on line, moved back to the line's end when it is past it: CUE's parser
// puts a missing comma or brace one past the newline of the line it ends ("missing ','" at
// 15:3 on the line "}"), a column the line has not, which an editor shows at the line's end.
func withinLine(pos Pos, line string) Pos {
	pos.Col = min(pos.Col, len(line)+1)
	return pos
}

// valuePos finds where the user wrote v: its own position when that is in a user file, else
// the first user position among the conjuncts it was unified from.
func (l *loader) valuePos(v cue.Value) Pos {
	return l.valuePosDepth(v, 0)
}

func (l *loader) valuePosDepth(v cue.Value, depth int) Pos {
	if p := l.pos(v.Pos()); p.IsValid() {
		return p
	}
	if depth > 6 {
		return Pos{}
	}
	_, args := v.Expr()
	for _, a := range args {
		if p := l.valuePosDepth(a, depth+1); p.IsValid() {
			return p
		}
	}
	return Pos{}
}

// litPos finds where the user wrote v's value: for a field, the position of the value after
// the colon (an expression's text starts there), else valuePos.
func (l *loader) litPos(v cue.Value) Pos {
	src := v.Source()
	if lit := referencedMultiline(v, src); lit != nil {
		// expect: [_claim], _claim a """ string: its parts are placed where they are
		// written, not at the reference (a run-time error of its second line said
		// x.cue:12:11, where _claim is written).
		if p := l.pos(lit.Pos()); p.IsValid() {
			return withLiteral(p, lit)
		}
	}
	if f, ok := src.(*ast.Field); ok && f.Value != nil {
		src = f.Value
		if p := l.pos(f.Value.Pos()); p.IsValid() {
			return withLiteral(p, src)
		}
	}
	return withLiteral(l.valuePos(v), src)
}

// referencedMultiline is the multi-line string literal (""" or ”') that v, written as src,
// refers to (a reference, _claim or kit.claim, to a field whose value is that literal), or
// nil: a string written in place, or a reference to anything else.
func referencedMultiline(v cue.Value, src ast.Node) *ast.BasicLit {
	switch src.(type) {
	case *ast.Ident, *ast.SelectorExpr:
	default:
		return nil
	}
	for range 4 { // a reference to a reference
		root, path := v.ReferencePath()
		if !root.Exists() || len(path.Selectors()) == 0 {
			return nil
		}
		v = root.LookupPath(path)
		s := v.Source()
		if f, ok := s.(*ast.Field); ok {
			s = f.Value
		}
		switch x := s.(type) {
		case *ast.BasicLit:
			if x.Kind == token.STRING && (strings.HasPrefix(x.Value, `"""`) || strings.HasPrefix(x.Value, "'''") || strings.HasPrefix(x.Value, `#"""`)) {
				return x
			}
			return nil
		case *ast.Ident, *ast.SelectorExpr:
			continue
		}
		return nil
	}
	return nil
}

// withLiteral keeps in p the string literal written there when it holds escapes, or is a
// #"raw", single-quoted or multi-line one, so that a position inside its value lands where it
// is written (Pos.inString).
func withLiteral(p Pos, src ast.Node) Pos {
	if lit, ok := src.(*ast.BasicLit); ok && p.IsValid() && lit.Kind == token.STRING && (strings.Contains(lit.Value, `\`) || !strings.HasPrefix(lit.Value, `"`) || strings.HasPrefix(lit.Value, `"""`)) && lit.Pos().Line() == p.Line && lit.Pos().Column() == p.Col {
		p.lit = lit.Value
	}
	return p
}

// addCUEError records every error in err at the user's position, with a message that says what
// was expected.
func (l *loader) addCUEError(err error) {
	l.addCUEErrorIn(err, cue.Value{}, "")
}

// addCUEErrorIn is addCUEError for errors of a scenario value: root is the scenario and prefix
// its name, so that paths are shown relative to the scenario and positions can be looked up.
func (l *loader) addCUEErrorIn(err error, root cue.Value, prefix string) {
	type item struct {
		pos      Pos
		path     []string
		msg      string
		conflict string
		also     []Pos
	}
	var items []item
	var unclosedIn map[string]bool // files with a list said never closed (cuehint.go)
	for _, e := range cueerrors.Errors(err) {
		path := e.Path()
		format, args := e.Msg()
		msg := fmt.Sprintf(format, args...)
		if msg == "field not allowed" && root.Exists() {
			continue // checkFields reports unknown fields of scenarios, all of them
		}
		var pos Pos
		var tpos token.Pos // pos as CUE gives it, when it came from the error
		// The most specific user position: the last one the error names (CUE lists the
		// enclosing field first and the offending value last), else the value at the error's
		// path as the user wrote it.
		for _, p := range cueerrors.Positions(e) {
			if up := l.pos(p); up.IsValid() {
				pos, tpos = up, p
			}
		}
		if !pos.IsValid() && root.Exists() && len(path) > 0 && path[0] == prefix {
			if v := root.LookupPath(cue.ParsePath(quotePath(path[1:]))); v.Exists() {
				pos = l.litPos(v)
			}
			// A missing field has no value: name the nearest enclosing value the user wrote.
			for n := len(path) - 1; !pos.IsValid() && n > 1; n-- {
				if v := root.LookupPath(cue.ParsePath(quotePath(path[1:n]))); v.Exists() {
					pos = l.valuePos(v)
				}
			}
		}
		if !pos.IsValid() && root.Exists() {
			// Nothing in a user file: name the scenario, never the schema.
			pos = l.valuePos(root)
		}
		if !pos.IsValid() {
			// CUE names no position for some errors (a structural cycle: `x: {a: x}`): the
			// field at the error's path, as the user's files of the package write it.
			pos = l.pos(fieldAtPath(l.buildFiles, path))
		}
		if !pos.IsValid() {
			// Still nothing (an error of loading itself): name the file or directory built.
			pos = l.stagePos()
		}
		if msg == "" {
			msg = "cannot load: " + strings.TrimSpace(e.Error())
		}
		if strings.HasPrefix(msg, callFailed) {
			msg = callCause(msg, e.Error())
		}
		if strings.HasPrefix(msg, "reference ") {
			// A reference error is found when CUE compiles the file: its path has no list
			// indices (s.steps.load.url). The syntax has them.
			if full := l.astPath(e.Position()); full != nil && samePathWithoutIndices(full, path) {
				path = full
			}
		}
		it := item{pos: pos, path: path, msg: l.hint(e.Position(), path, msg, l.explain(path, msg, root, prefix))}
		if len(path) == 0 && unclosedIn[pos.File] {
			// A syntax error after a list said never closed: the parser's recovery from the
			// missing ] (expected operand, found '}' at the struct's end), not a mistake of its own.
			continue
		}
		if len(path) == 0 && strings.Contains(it.msg, neverClosedList) {
			if unclosedIn == nil {
				unclosedIn = map[string]bool{}
			}
			unclosedIn[pos.File] = true
		}
		if strings.HasPrefix(it.msg, "cannot import ") {
			it.path = nil // the importing package's own import path, not a field
		}
		if m := conflictRE.FindStringSubmatch(msg); m != nil && !mismatchRE.MatchString(msg) && !looksLikeType(m[1]) && !looksLikeType(m[2]) {
			// Two concrete values: unless a disjunction explains them (merged below), they
			// were written in two places (a kit and a scenario, or two files), and neither is
			// "expected": name both places.
			it.conflict = fmt.Sprintf("conflicting values %s and %s: the field is set twice", m[1], m[2])
			if n := len(path); n >= 2 && stepLists[path[n-2]] {
				// steps: {{name: "a", ...}, {name: "b", ...}}: braces make one struct of the
				// steps, whose fields then conflict.
				it.conflict += fmt.Sprintf("; %s is a list of steps: write it in brackets, %s: [{name: \"a\", ...}, {name: \"b\", ...}], not braces", path[n-2], path[n-2])
			}
			for _, p := range cueerrors.Positions(e) {
				if up := l.pos(p); up.IsValid() && up != pos {
					it.also = append(it.also, up)
				}
			}
		}
		line := l.sourceLine(tpos)
		if !tpos.IsValid() && pos.IsValid() {
			line = l.lineOf(pos.File, pos.Line) // the user's own position (a .md's line for a spec)
		}
		if tpos.IsValid() && tpos.Line() == pos.Line {
			it.pos = withinLine(it.pos, line)
		}
		if n := len(path); n > 0 && pos.IsValid() && selfReference(line, pos.Col, path[n-1]) {
			// `cluster: cluster` under a scenario: CUE says "non-concrete value _" at its label
			// and "missing value" at its value; say what it is, once.
			it.msg = selfRefMessage(path[n-1])
			key := pos.File + "\x00" + strings.Join(path, ".")
			if l.selfRefSaid[key] {
				continue
			}
			if l.selfRefSaid == nil {
				l.selfRefSaid = map[string]bool{}
			}
			l.selfRefSaid[key] = true
		}
		items = append(items, it)

	}
	// A disjunction fails with a header and one conflict per alternative: merge them into
	// "expected one of A, B, got X".
	byPath := map[string][]int{}
	for i, it := range items {
		k := strings.Join(it.path, ".")
		byPath[k] = append(byPath[k], i)
	}
	drop := map[int]bool{}
	for _, idx := range byPath {
		header := -1
		for _, i := range idx {
			if strings.HasPrefix(items[i].msg, disjHeader) {
				header = i
			}
		}
		if header < 0 {
			continue
		}
		var pairs [][2]string
		for _, i := range idx {
			if i == header {
				continue
			}
			if m := expectedGotRE.FindStringSubmatch(items[i].msg); m != nil {
				pairs = append(pairs, [2]string{m[1], m[2]})
				drop[i] = true
			}
		}
		// The user's value is the one every conflict shares; the others are the alternatives.
		got := ""
		var alts []string
		if len(pairs) > 0 {
			for _, cand := range pairs[0] {
				shared := true
				for _, p := range pairs {
					if p[0] != cand && p[1] != cand {
						shared = false
					}
				}
				if shared {
					got = cand
					break
				}
			}
			for _, p := range pairs {
				if p[0] == got {
					alts = append(alts, p[1])
				} else {
					alts = append(alts, p[0])
				}
			}
		}
		if got != "" {
			items[header].msg = fmt.Sprintf("expected %s, got %s", alternatives(alts), got)
		} else if bound := boundViolation(pairs); bound != "" {
			// A value that reaches the field through a reference to a disjunction (vars.x, whose
			// declared type is string | number | bool): every other alternative is a type the
			// field does not take; the one that says what is wrong is the bound.
			items[header].msg = bound
		}
	}
	// CUE repeats a field's error on the enclosing struct: keep the most specific.
	for i, it := range items {
		for j, other := range items {
			if i != j && !drop[j] && other.msg == it.msg && len(other.path) > len(it.path) &&
				strings.HasPrefix(strings.Join(other.path, "."), strings.Join(it.path, ".")+".") {
				drop[i] = true
			}
		}
	}
	for i, it := range items {
		if drop[i] {
			continue
		}
		if it.conflict != "" {
			l.errs.addAlso(it.pos, strings.Join(it.path, "."), it.also, "%s", it.conflict)
			continue
		}
		l.errs.add(it.pos, strings.Join(it.path, "."), "%s", it.msg)
	}
}

const disjHeader = "expected one of the allowed values"

// boundViolation picks, among a disjunction's conflicts, the one alternative whose value is
// concrete (e.g. "an integer >0" against 0) when every other one is only a mismatch of types
// ("a string" against int); "" when there is no such single one.
func boundViolation(pairs [][2]string) string {
	found := ""
	for _, p := range pairs {
		if looksLikeType(p[1]) {
			continue // "expected a string, got int": another branch's type
		}
		if msg := fmt.Sprintf("expected %s, got %s", p[0], p[1]); found == "" || found == msg {
			found = msg
		} else {
			return ""
		}
	}
	return found
}

// alternatives lists what a disjunction allows: literals as "one of "a", "b"", kinds of value
// as "true or false, a number or a string".
func alternatives(alts []string) string {
	for _, a := range alts {
		if strings.HasPrefix(a, `"`) || a == "" || a[0] >= '0' && a[0] <= '9' || a[0] == '-' {
			return "one of " + strings.Join(alts, ", ")
		}
	}
	if len(alts) == 1 {
		return alts[0]
	}
	var kept []string // each once: two branches of one kind (two duration patterns) read alike
	for _, a := range alts {
		if a == "true or false" {
			a = "true, false" // not "true or false or a string"
		}
		if !slices.Contains(kept, a) {
			kept = append(kept, a)
		}
	}
	alts = kept
	if len(alts) == 1 {
		return alts[0]
	}
	return strings.Join(alts[:len(alts)-1], ", ") + " or " + alts[len(alts)-1]
}

// stepLists are the fields that hold a list of steps.
var stepLists = map[string]bool{"steps": true, "setup": true, "cleanup": true, "parallel": true, "sequence": true, "catch": true}

var expectedGotRE = regexp.MustCompile(`^expected (.+), got (.+)$`)

// astPath is the path of labels and list indices from the top of p's file down to the
// innermost field whose value holds p, read from the file's syntax; nil when it cannot be told.
func (l *loader) astPath(p token.Pos) []string {
	if !p.IsValid() || l.schemaFiles[p.Filename()] {
		return nil
	}
	src, ok := l.virtualSrc[p.Filename()]
	if !ok {
		var err error
		if src, err = l.read(p.Filename()); err != nil {
			return nil
		}
	}
	f, err := parser.ParseFile(p.Filename(), src)
	if err != nil {
		return nil
	}
	off := p.Offset()
	var walk func(n ast.Node, path []string) []string
	walk = func(n ast.Node, path []string) []string {
		if n == nil || !(n.Pos().Offset() <= off && off < n.End().Offset()) {
			return nil
		}
		switch x := n.(type) {
		case *ast.Field:
			name, _, err := ast.LabelName(x.Label)
			if err != nil {
				return nil
			}
			inner := append(append([]string{}, path...), name)
			if deeper := walk(x.Value, inner); deeper != nil {
				return deeper
			}
			return inner
		case *ast.StructLit:
			for _, d := range x.Elts {
				if r := walk(d, path); r != nil {
					return r
				}
			}
		case *ast.ListLit:
			for i, e := range x.Elts {
				if r := walk(e, append(append([]string{}, path...), fmt.Sprint(i))); r != nil {
					return r
				}
			}
		case *ast.BinaryExpr:
			if r := walk(x.X, path); r != nil {
				return r
			}
			return walk(x.Y, path)
		case *ast.ParenExpr:
			return walk(x.X, path)
		case *ast.EmbedDecl:
			return walk(x.Expr, path)
		}
		return nil
	}
	for _, d := range f.Decls {
		if r := walk(d, nil); r != nil {
			return r
		}
	}
	return nil
}

// fieldAtPath is the position of the label of the deepest field of files on path (labels and
// list indices from a file's top), or the zero position when the files declare none of it.
func fieldAtPath(files []*ast.File, path []string) token.Pos {
	var best token.Pos
	if len(path) == 0 {
		// An error of the package's value itself: a value embedded at a file's top (`_`).
		for _, f := range files {
			for _, d := range f.Decls {
				if e, ok := d.(*ast.EmbedDecl); ok {
					return e.Pos()
				}
			}
		}
		return best
	}
	depth := 0
	var walk func(n ast.Node, i int)
	walk = func(n ast.Node, i int) {
		if i >= len(path) {
			return
		}
		switch x := n.(type) {
		case *ast.StructLit:
			walkDecls(x.Elts, path, i, &best, &depth, walk)
		case *ast.ListLit:
			if k, err := strconv.Atoi(path[i]); err == nil && k >= 0 && k < len(x.Elts) {
				if i+1 > depth {
					best, depth = x.Elts[k].Pos(), i+1
				}
				walk(x.Elts[k], i+1)
			}
		case *ast.BinaryExpr:
			walk(x.X, i)
			walk(x.Y, i)
		case *ast.ParenExpr:
			walk(x.X, i)
		}
	}
	for _, f := range files {
		walkDecls(f.Decls, path, 0, &best, &depth, walk)
	}
	return best
}

// walkDecls is fieldAtPath's step through the declarations of a struct or a file: the field
// labelled path[i], and the structs embedded there.
func walkDecls(decls []ast.Decl, path []string, i int, best *token.Pos, depth *int, walk func(ast.Node, int)) {
	for _, d := range decls {
		switch x := d.(type) {
		case *ast.Field:
			name, _, err := ast.LabelName(x.Label)
			if err != nil || name != path[i] {
				continue
			}
			if i+1 > *depth {
				*best, *depth = x.Label.Pos(), i+1
			}
			walk(x.Value, i+1)
		case *ast.EmbedDecl:
			walk(x.Expr, i)
		}
	}
}

// samePathWithoutIndices reports whether full, with its list indices dropped, is short (CUE's
// path of a compile error).
func samePathWithoutIndices(full, short []string) bool {
	var labels []string
	for _, e := range full {
		if !isIndex(e) {
			labels = append(labels, e)
		}
	}
	return len(labels) > 0 && slices.Equal(labels, short)
}

// quotePath turns CUE error path elements into a path string that ParsePath accepts.
func quotePath(elems []string) string {
	var b strings.Builder
	for i, e := range elems {
		if i > 0 && !isIndex(e) {
			b.WriteByte('.')
		}
		if isIndex(e) {
			b.WriteString("[" + e + "]")
			continue
		}
		if identRE.MatchString(e) || strings.HasPrefix(e, "#") {
			b.WriteString(e)
		} else {
			b.WriteString(fmt.Sprintf("%q", e))
		}
	}
	return b.String()
}

var identRE = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*$`)

func isIndex(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

var (
	mismatchRE     = regexp.MustCompile(`^conflicting values (.+) and (.+) \(mismatched types (\S+) and (\S+)\)$`)
	conflictRE     = regexp.MustCompile(`^conflicting values (.+) and (.+)$`)
	boundRE        = regexp.MustCompile(`^invalid value (.+) \(out of bound (.+)\)$`)
	incomplRE      = regexp.MustCompile(`^incomplete value (.+)$`)
	pkgQualifierRE = regexp.MustCompile(`\([\w.-]+(?:/[\w.-]+)*@v\d+:\w+\)`)
	// choiceRE is an incomplete value, or one Decode could not make concrete, that is a
	// disjunction (its alternatives are checked to be values, not types).
	choiceRE  = regexp.MustCompile(`^(?:incomplete value|cannot convert non-concrete value) (.+ \| .+)$`)
	disjRE    = regexp.MustCompile(`^(\d+) errors in empty disjunction:?`)
	listLenRE = regexp.MustCompile(`^incompatible list lengths \((\d+) and (\d+)\)$`)
	identPat  = `=~"^[A-Za-z_][A-Za-z0-9_]*$"`
)

// hasSibling reports whether the struct that holds path's last field, in root (the value of
// path's first element, as the positions above read it), has a field named name.
func hasSibling(root cue.Value, path []string, name string) bool {
	if len(path) < 2 {
		return false
	}
	p := append(slices.Clone(path[1:len(path)-1]), name)
	return root.LookupPath(cue.ParsePath(quotePath(p))).Exists()
}

// explain rewrites CUE's message into one that says what was expected.
func (l *loader) explain(path []string, msg string, root cue.Value, prefix string) string {
	last := ""
	if len(path) > 0 {
		last = path[len(path)-1]
	}
	// CUE qualifies a hidden field with its package (_m(labrun.local@v0:lab)): a name the
	// user never wrote.
	msg = pkgQualifierRE.ReplaceAllString(msg, "")
	switch {
	case msg == "field not allowed":
		return l.notAllowed(path, root, prefix)
	case strings.HasPrefix(msg, "field is required but not present"):
		if last == "name" && len(path) > 1 && path[len(path)-2] == "metadata" && hasSibling(root, path, "generateName") {
			return fmt.Sprintf("missing required field %q: %s", last, schema.GenerateNameHint)
		}
		return fmt.Sprintf("missing required field %q", last)
	case len(path) == 0 && strings.HasPrefix(msg, "non-concrete value "):
		return msg + " at the top of the file, where labrun expects fields: expected fields such as s: schema.#Scenario & {...}, not a value"
	case strings.HasPrefix(msg, "cycle with field"):
		return msg + ": the fields are defined by each other and none has a value; expected one of them written as a value"
	case msg == "structural cycle":
		return "structural cycle: the value holds itself (such as x: {a: x}), which has no end; expected a value that refers to no struct or list it is part of"
	}
	if m := boundRE.FindStringSubmatch(msg); m != nil {
		what := "a number"
		if l.schemaKindAt(path, prefix) == cue.IntKind {
			what = "an integer"
		}
		return describeBound(m[2], m[1], what)
	}
	if m := mismatchRE.FindStringSubmatch(msg); m != nil {
		user, want := m[1], m[2]
		if looksLikeType(user) && !looksLikeType(want) {
			user, want = want, user
		}
		msg := fmt.Sprintf("expected %s, got %s", describeType(want), user)
		if inner, ok := strings.CutPrefix(user, `"${vars.`); ok && strings.HasSuffix(inner, `}"`) && strings.Count(user, "${") == 1 {
			if d := describeType(want); strings.Contains(d, "integer") || strings.Contains(d, "number") {
				// requests: "${vars.n}": a number field written as a string's interpolation (a vars
				// reference is CUE's; ${backends…} and the like are known only at run time).
				msg += fmt.Sprintf(": ${...} is interpolated into strings only, and this field takes %s; write the var itself, %s: vars.%s", d, last, strings.TrimSuffix(inner, `}"`))
			}
		}
		if last == "clusters" && len(path) == 2 && strings.HasPrefix(user, "[") {
			// clusters: ["kind-east", "kind-west"], the contexts as kubectl lists them: the
			// scenario names each cluster, and steps and claims use the names.
			msg += `: clusters names each cluster and gives its kubeconfig context, e.g. clusters: {east: "kind-east", west: "kind-west"}; a step then runs on one by its name, cluster: "west"`
		}
		return msg
	}
	if m := choiceRE.FindStringSubmatch(msg); m != nil {
		if alts := strings.Split(m[1], " | "); !slices.ContainsFunc(alts, looksLikeType) {
			// 10 | 20 written where one value goes: CUE picks none without a default.
			return fmt.Sprintf("%s is a choice of values with no default: expected one value; write the one meant, or mark the default with * (*%s)", m[1], m[1])
		}
	}
	if m := incomplRE.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("missing value: expected %s", describeType(m[1]))
	}
	if m := conflictRE.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("expected %s, got %s", m[2], m[1])
	}
	if disjRE.MatchString(msg) {
		return disjHeader
	}
	if m := listLenRE.FindStringSubmatch(msg); m != nil {
		if n, ok := l.schemaListMin(path, prefix); ok && strconv.Itoa(n) == m[2] {
			if m[1] == "0" {
				return fmt.Sprintf("expected a non-empty list (at least %s element), got an empty list", m[2])
			}
			return fmt.Sprintf("expected a list of at least %s elements, got %s", m[2], m[1])
		}
		// Two lists the user wrote (a kit's and the scenario's): CUE unifies lists element by
		// element, so neither is "at least" the other.
		elements := func(n string) string {
			if n == "1" {
				return "1 element"
			}
			return n + " elements"
		}
		return fmt.Sprintf("a list of %s meets a list of %s written for the same field elsewhere (a struct embedded with &, such as a kit's common fields, or another file): lists unify only where their lengths agree, so one cannot add elements to the other; write the field in one place, joining the lists with list.Concat([a, b]) where both are wanted", elements(m[1]), elements(m[2]))
	}
	return msg
}

func looksLikeType(s string) bool {
	switch s {
	case "string", "int", "number", "bool", "float", "bytes", "struct", "list", "null", "_":
		return true
	}
	return strings.HasPrefix(s, "=~") || strings.HasPrefix(s, ">") || strings.HasPrefix(s, "<") ||
		strings.HasPrefix(s, "!=") || strings.HasPrefix(s, "{") || strings.HasPrefix(s, "[")
}

func describeType(t string) string {
	switch {
	case strings.Contains(t, "(ns|us|µs|ms|s|m|h)"):
		return `a duration such as "500ms" or "5s"`
	case t == identPat:
		return "a name of letters, digits and underscores"
	case t == "string":
		return "a string"
	case t == "int":
		return "an integer"
	case t == "number" || t == "float":
		return "a number"
	case t == "bool":
		return "true or false"
	case strings.HasPrefix(t, "{"):
		return "a struct"
	case strings.HasPrefix(t, "["):
		return "a list"
	}
	return t
}

// durationMeant is the duration a string that is none was probably meant to be ("5 s",
// "5 seconds", "1m30" as a clock writes a minute and a half), or "".
func durationMeant(got string) string {
	s, err := strconv.Unquote(got)
	if err != nil {
		return ""
	}
	s = strings.ReplaceAll(strings.TrimSpace(s), " ", "")
	for _, w := range [][2]string{{"milliseconds", "ms"}, {"millisecond", "ms"}, {"seconds", "s"}, {"second", "s"}, {"secs", "s"}, {"sec", "s"}, {"minutes", "m"}, {"minute", "m"}, {"mins", "m"}, {"min", "m"}, {"hours", "h"}, {"hour", "h"}} {
		if strings.HasSuffix(s, w[0]) {
			s = strings.TrimSuffix(s, w[0]) + w[1]
			break
		}
	}
	if s != "" && s[len(s)-1] >= '0' && s[len(s)-1] <= '9' && strings.ContainsAny(s, "hm") {
		s += map[bool]string{true: "m", false: "s"}[strings.HasSuffix(strings.TrimRight(s, "0123456789"), "h")] // 1m30: the next unit down
	}
	if _, err := time.ParseDuration(s); err != nil || s == strings.Trim(got, `"`) {
		return ""
	}
	return s
}

// varInDurationRE is a duration written as one var's ${...}.
var varInDurationRE = regexp.MustCompile(`^"\$\{vars\.(\w+)\}"$`)

// describeBound says what a bound wants; what is the kind of value the field takes ("an
// integer", "a number").
func describeBound(bound, got, what string) string {
	switch {
	case strings.Contains(bound, "(ns|us|µs|ms|s|m|h)"):
		msg := fmt.Sprintf(`expected a duration such as "500ms" or "5s", got %s`, got)
		if meant := durationMeant(got); meant != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", meant)
		}
		if m := varInDurationRE.FindStringSubmatch(got); m != nil {
			// duration: "${vars.d}": ${...} is a step string's, and a duration is no string
			// labrun interpolates; a var is read in CUE.
			msg += fmt.Sprintf(": a duration takes no ${...}; read the var in CUE, without quotes: vars.%s", m[1])
		} else if strings.Contains(got, "${") {
			msg += ": a duration takes no ${...}: it is planned before the run; write it, or a var read in CUE (vars.d)"
		}
		return msg
	case bound == identPat:
		return fmt.Sprintf("expected a name of letters, digits and underscores, not starting with a digit, got %s", got)
	case bound == `!=""`:
		return "expected a non-empty string"
	case strings.HasPrefix(bound, ">=") || strings.HasPrefix(bound, ">") || strings.HasPrefix(bound, "<"):
		return fmt.Sprintf("expected %s %s, got %s", what, bound, got)
	}
	return fmt.Sprintf("expected a value matching %s, got %s", bound, got)
}

// stepFields are the fields a step may hold besides its kind.
var stepFields = []string{"name", "doc", "cluster", "at", "timeout", "background", "every", "while", "mayFail", "expectFail"}

// notAllowed explains a "field not allowed" error outside a scenario (in a kit).
func (l *loader) notAllowed(path []string, root cue.Value, prefix string) string {
	if len(path) == 0 {
		return "field not allowed"
	}
	return fmt.Sprintf("unknown field %q: the definition it is unified with does not allow it", path[len(path)-1])
}

// checkFields reports every field the user wrote that the schema does not allow, walking the
// user's value v beside the schema definition def. CUE itself reports at most the first
// problem of a struct, and loses unknown fields next to a wrong value; this finds them all.
func (l *loader) checkFields(v, def cue.Value, path []string) {
	if !def.Exists() {
		return
	}
	kind := v.IncompleteKind()
	if kind != cue.StructKind && kind != cue.ListKind {
		return // nothing to check in a scalar
	}
	facts := l.defFacts(def)
	if (facts.top || (facts.open && kind == cue.StructKind)) && !walkEveryField {
		l.checkOpen(v, def, facts, path)
		return
	}
	switch kind {
	case cue.StructKind:
		it, err := v.Fields()
		if err != nil {
			return
		}
		if fieldsWalked != nil {
			fieldsWalked(path)
		}
		closed, allowed, isStep := facts.closed, facts.allowed, facts.isStep
		for it.Next() {
			sel := it.Selector()
			if sel.IsDefinition() || sel.PkgPath() != "" {
				continue
			}
			name := sel.Unquoted()
			fpath := append(append([]string{}, path...), name)
			if closed && !slicesContains(allowed, name) {
				msg := unknownField(name, allowed, isStep)
				if len(path) > 0 && !isStep && schema.Kinds[path[len(path)-1]].New != nil && slicesContains(stepFields, name) && closest(name, allowed) == "" {
					kind := path[len(path)-1]
					// wait: {until: "…", timeout: "1s"}: a field of every step, written
					// inside its kind's parameters.
					head := fmt.Sprintf("unknown field %q", name)
					msg = strings.Replace(msg, head, fmt.Sprintf("%s: %s is a field of the step, written beside %s: {%s: …, %s: {…}}", head, name, kind, name, kind), 1)
				}
				l.errs.add(l.valuePos(it.Value()), strings.Join(fpath, "."), "%s", msg)
				continue
			}
			child := l.childDef(def, name, closed)
			l.checkFields(it.Value(), child, fpath)
		}
		if closed {
			l.checkHiddenFields(v, allowed, path)
		}
	case cue.ListKind:
		it, err := v.List()
		if err != nil {
			return
		}
		elem := def.LookupPath(cue.MakePath(cue.AnyIndex))
		if len(path) > 0 && isStepList(path[len(path)-1]) && def.IncompleteKind() == cue.ListKind {
			// Steps nest: a recursive definition cannot be walked through the list's element
			// type, so take #Step itself. Only a list the schema declares (steps:
			// [...#Step]) holds steps: an object's own steps (a Tekton Pipeline's), whose
			// definition is the object's ..., are no steps of labrun's.
			elem = l.schema().LookupPath(cue.ParsePath("#Step"))
		}
		for i := 0; it.Next(); i++ {
			l.checkFields(it.Value(), elem, append(append([]string{}, path...), fmt.Sprint(i)))
		}
	}
}

// walkEveryField, when a test sets it, makes checkFields iterate every struct's fields, as it
// did before checkOpen; fieldsWalked, when set, is called with the path of each struct whose
// fields checkFields iterates.
var (
	walkEveryField bool
	fieldsWalked   func(path []string)
)

// checkOpen is checkFields for a struct or list v whose definition def names the only fields
// that can hold anything to check (f.top, f.open). An object's spec (_), an #Object and its
// metadata (open, no patterns) were half of the structs checkFields visited in scenarios/,
// each of their fields iterated (Fields sorts them) for nothing: ~4 % of vet's CPU there. A
// field def does not name has the ellipsis' _ for definition, under which checkFields finds
// nothing: _ is not closed, no field has a definition under it (childDefOf), and a list under
// it is not one of steps (the schema's steps: [...#Step] is a list).
func (l *loader) checkOpen(v, def cue.Value, f *defFacts, path []string) {
	if f.top {
		return
	}
	v, _ = v.Default() // as Fields does
	for i, name := range f.named {
		// LookupPath finds a regular field only, as Fields iterates; a required one that is
		// not there is an error, in which checkFields checks nothing, nor in a scalar.
		cv := v.LookupPath(f.namedPaths[i])
		if k := cv.IncompleteKind(); k == cue.StructKind || k == cue.ListKind {
			l.checkFields(cv, l.childDef(def, name, false), append(append([]string{}, path...), name))
		}
	}
}

// openShape says whether def, a definition that is not closed, is _ (top) or an open struct
// without pattern constraints whose ellipsis gives _ (open, naming the fields named): the
// shapes checkOpen walks by name.
func (l *loader) openShape(def cue.Value) (top, open bool, named []string) {
	it, err := def.Fields(cue.Optional(true), cue.Patterns(true))
	if err != nil {
		return false, false, nil
	}
	switch def.IncompleteKind() {
	case cue.TopKind:
		if it.Next() {
			return false, false, nil
		}
		// No field of any name has a definition below _: what childDefOf says of one that
		// names nothing. (Nor has a list's element: below _, no list is one of steps.)
		return !l.childDefOf(def, openShapeProbe, false).Exists(), false, nil
	case cue.StructKind:
	default:
		return false, false, nil
	}
	for it.Next() {
		sel := it.Selector()
		if sel.ConstraintType() == cue.PatternConstraint {
			return false, false, nil // a field's definition depends on its name
		}
		name := strings.TrimRight(sel.String(), "?!")
		if strings.HasPrefix(name, `"`) {
			return false, false, nil // quoted: not looked up by this name
		}
		named = append(named, name)
	}
	if slicesContains(named, openShapeProbe) {
		return false, false, nil
	}
	// A field the definition does not name gets the ellipsis' value: _ for each of them.
	if !l.defFacts(l.childDefOf(def, openShapeProbe, false)).top {
		return false, false, nil
	}
	return false, true, named
}

// openShapeProbe is a field name no definition of the schema declares.
const openShapeProbe = "zzz_labrun_probe"

// checkHiddenFields reports a hidden field of v (a struct of a closed definition that allows
// the fields named allowed) written where the field it names was meant: _timeout or _name
// beside no timeout or name. A name that starts with _ is hidden from labrun, so the value
// would be dropped and the scenario run with the field's default. A helper named as a field
// that is set beside it (_steps with steps: _steps) is left alone.
func (l *loader) checkHiddenFields(v cue.Value, allowed []string, path []string) {
	it, err := v.Fields(cue.Hidden(true))
	if err != nil {
		return
	}
	for it.Next() {
		sel := it.Selector()
		if sel.LabelType() != cue.HiddenLabel {
			continue
		}
		hidden := sel.String()
		name := strings.TrimLeft(hidden, "_")
		if !slicesContains(allowed, name) || v.LookupPath(cue.MakePath(cue.Str(name))).Exists() {
			continue
		}
		fpath := append(append([]string{}, path...), hidden)
		l.errs.add(l.valuePos(it.Value()), strings.Join(fpath, "."), "hidden field %q: labrun reads no field whose name starts with _ (the scenario would run as if it were not written); write %s, or define the helper outside the scenario", hidden, name)
	}
}

// hiddenSchemaFields says which scenarios checkHiddenFields must walk in a package of files:
// a hidden field named as a field of the schema (_timeout, _requests) is its only finding, so
// a package without one is not walked (all false, in nil). One written inside a top-level
// field's value marks that field (in[label]): a scenario so written is walked, the others
// not (cfg_retry's _route made all 86 scenarios of scenarios/ walked, 9 % of vet's CPU on the
// repository). One written elsewhere (a top-level hidden field, a kit's template a scenario
// embeds) may reach any scenario: all.
func hiddenSchemaFields(files []*ast.File) (all bool, in map[string]bool) {
	names := schemaLabels()
	hides := func(n ast.Node) bool { return hidesSchemaField(names, n) }
	var wholes map[string]bool // the top-level fields read whole (wholeReads), once needed
	for _, f := range files {
		for _, d := range f.Decls {
			// A top-level field declared as a scenario in this declaration: another one (a kit
			// scenarios embed, kitB.common) may reach any scenario.
			label, top := "", false
			if fl, ok := d.(*ast.Field); ok && declaresScenario(fl.Value) {
				name, _, err := ast.LabelName(fl.Label)
				label, top = name, err == nil && !strings.HasPrefix(name, "_") && !strings.HasPrefix(name, "#")
			}
			found := false
			ast.Walk(d, func(n ast.Node) bool {
				found = found || hides(n)
				return !found
			}, nil)
			if found && !top {
				// A helper of a kit's own struct (scenarios.cue's kitB: {_backend: ...}) is a
				// field of that struct only: it reaches a scenario only where the kit is read
				// whole (s: #Scenario & kitB), not where one of its fields is (kitB._a,
				// kitB.#SlowOK). Only such helpers, of a kit never read whole, are left out.
				if name, ok := ownHelpersOnly(d, hides); ok {
					if wholes == nil {
						wholes = wholeReads(files)
					}
					found = wholes[name]
				}
			}
			switch {
			case !found:
			case top:
				if in == nil {
					in = map[string]bool{}
				}
				in[label] = true
			default:
				return true, nil
			}
		}
	}
	return false, in
}

// importsHideSchemaField says whether a package inst imports (directly or through another,
// labrun's schema aside) writes a hidden label named as a schema field anywhere: its value may
// reach any scenario of inst that reads the package, so every one is walked.
func importsHideSchemaField(inst *build.Instance) bool {
	seen := map[*build.Instance]bool{}
	var visit func(*build.Instance) bool
	visit = func(in *build.Instance) bool {
		for _, imp := range in.Imports {
			if seen[imp] || imp.ImportPath == schemaImportPath {
				continue
			}
			seen[imp] = true
			if writesHiddenSchemaField(imp.Files) || visit(imp) {
				return true
			}
		}
		return false
	}
	return visit(inst)
}

// writesHiddenSchemaField says whether files write a hidden label named as a schema field
// anywhere. Of an imported package, a kit's own helper counts too (hiddenSchemaFields leaves
// it out where the kit is never read whole in its package; the importer reads it whole:
// kit.slow & {name: "a"}).
func writesHiddenSchemaField(files []*ast.File) bool {
	names := schemaLabels()
	found := false
	for _, f := range files {
		ast.Walk(f, func(n ast.Node) bool {
			found = found || hidesSchemaField(names, n)
			return !found
		}, nil)
		if found {
			return true
		}
	}
	return false
}

// hidesSchemaField says whether n is a field whose label is hidden and, without its
// underscores, one of names (the schema's labels): _timeout, __route.
func hidesSchemaField(names map[string]bool, n ast.Node) bool {
	fl, ok := n.(*ast.Field)
	if !ok {
		return false
	}
	id, ok := fl.Label.(*ast.Ident)
	return ok && strings.HasPrefix(id.Name, "_") && names[strings.TrimLeft(id.Name, "_")]
}

// ownHelpersOnly says whether d is a top-level field name: {…} (an identifier's label, no
// alias) whose hidden fields that hides finds are all fields of its own struct (of a struct
// literal its value is, or joins with &), none deeper: they are then in no value but the
// field's own, and what embeds it whole (an alias inside the struct names one of its fields
// or values, never the struct itself).
func ownHelpersOnly(d ast.Decl, hides func(ast.Node) bool) (string, bool) {
	fl, ok := d.(*ast.Field)
	if !ok {
		return "", false
	}
	id, ok := fl.Label.(*ast.Ident)
	if !ok || strings.HasPrefix(id.Name, "_") || strings.HasPrefix(id.Name, "#") {
		return "", false
	}
	var structs []*ast.StructLit
	var own func(x ast.Expr) bool
	own = func(x ast.Expr) bool {
		switch x := x.(type) {
		case *ast.StructLit:
			structs = append(structs, x)
			return true
		case *ast.BinaryExpr:
			return x.Op == token.AND && own(x.X) && own(x.Y)
		case *ast.ParenExpr:
			return own(x.X)
		case *ast.Ident, *ast.SelectorExpr:
			return true // a reference: its fields are declared elsewhere
		}
		return false
	}
	if !own(fl.Value) {
		return "", false
	}
	// No helper deeper: in a field's value, in a comprehension, in a helper's own value.
	ok = true
	for _, st := range structs {
		for _, e := range st.Elts {
			var n ast.Node = e
			if fe, field := e.(*ast.Field); field && hides(fe) {
				n = fe.Value
			}
			ast.Walk(n, func(n ast.Node) bool {
				ok = ok && !hides(n)
				return ok
			}, nil)
		}
	}
	return id.Name, ok
}

// wholeReads are the names read whole in files: an identifier that is not the start of a
// selection (kitB, not kitB._a) and not a label. The identifiers of nested scopes count
// too: a name read whole anywhere may be the top-level field's.
func wholeReads(files []*ast.File) map[string]bool {
	reads := map[string]bool{}
	var walk func(n ast.Node) bool
	walk = func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.Field:
			if _, plain := n.Label.(*ast.Ident); !plain {
				ast.Walk(n.Label, walk, nil) // an alias, an interpolation, a pattern
			}
			ast.Walk(n.Value, walk, nil)
			return false
		case *ast.SelectorExpr:
			if _, ok := n.X.(*ast.Ident); ok {
				return false // kitB._a: a field of kitB, not kitB
			}
			ast.Walk(n.X, walk, nil)
			return false
		case *ast.ImportSpec:
			return false
		case *ast.Ident:
			reads[n.Name] = true
		}
		return true
	}
	for _, f := range files {
		ast.Walk(f, walk, nil)
	}
	return reads
}

// declaresScenario says whether v, a top-level field's value, names #Scenario outside its
// structs (schema.#Scenario & kit & {…}).
func declaresScenario(v ast.Expr) bool {
	switch x := v.(type) {
	case *ast.BinaryExpr:
		return declaresScenario(x.X) || declaresScenario(x.Y)
	case *ast.SelectorExpr:
		name, _, err := ast.LabelName(x.Sel)
		return err == nil && name == "#Scenario"
	case *ast.Ident:
		return x.Name == "#Scenario"
	case *ast.ParenExpr:
		return declaresScenario(x.X)
	}
	return false
}

// schemaLabels are the names of the fields the schema's files declare.
var schemaLabels = sync.OnceValue(func() map[string]bool {
	names := map[string]bool{}
	entries, _ := schema.Files.ReadDir(".")
	for _, e := range entries {
		src, err := schema.Files.ReadFile(e.Name())
		if err != nil || !strings.HasSuffix(e.Name(), ".cue") {
			continue
		}
		f, err := parser.ParseFile(e.Name(), src)
		if err != nil {
			continue
		}
		ast.Walk(f, func(n ast.Node) bool {
			if fl, ok := n.(*ast.Field); ok {
				if name, _, err := ast.LabelName(fl.Label); err == nil {
					names[name] = true
				}
			}
			return true
		}, nil)
	}
	return names
})

// defFacts is what checkFields needs to know of a schema definition; it depends on the
// definition only, so it is computed once per definition and loader.
type defFacts struct {
	// closed: the definition rejects a field it does not name.
	closed bool
	// allowed are the fields a closed definition names.
	allowed []string
	// isStep: the definition is #Step (its unknown fields are step kinds).
	isStep bool
	// top: the definition is _ (an object's spec); open: it is an open struct without
	// pattern constraints whose other fields are _ (an #Object, its metadata), naming the
	// fields named (their paths: namedPaths). checkOpen walks them.
	top, open  bool
	named      []string
	namedPaths []cue.Path
}

// defFacts returns the facts of def, from the cache when def was seen before. Definitions are
// keyed by their path in the schema, which names them uniquely (a pattern's field by its own
// name).
func (l *loader) defFacts(def cue.Value) *defFacts {
	key := def.Path().String()
	if f, ok := l.defs[key]; ok {
		return f
	}
	f := &defFacts{closed: def.Unify(l.probe).Validate() != nil}
	if !f.closed {
		f.top, f.open, f.named = l.openShape(def)
		for _, name := range f.named {
			f.namedPaths = append(f.namedPaths, cue.MakePath(cue.Str(name)))
		}
	}
	if f.closed {
		if dit, err := def.Fields(cue.Optional(true)); err == nil {
			for dit.Next() {
				f.allowed = append(f.allowed, strings.TrimRight(dit.Selector().String(), "?!"))
			}
		}
	}
	f.isStep = len(f.allowed) > 0 && slicesContains(f.allowed, "sleep") && slicesContains(f.allowed, "parallel")
	if l.defs == nil {
		l.defs = map[string]*defFacts{}
	}
	l.defs[key] = f
	return f
}

// schemaKindAt is the kind of value the schema gives the field at an error's path inside a
// scenario (path[0] is the scenario's name, prefix), or BottomKind when the path does not lead
// through the schema (a kit's field, a free-form object).
func (l *loader) schemaKindAt(path []string, prefix string) cue.Kind {
	def := l.schemaAt(path, prefix)
	if !def.Exists() {
		return cue.BottomKind
	}
	return def.IncompleteKind()
}

// schemaAt is the schema's definition of the field at an error's path inside a scenario; it
// does not exist where the path does not lead through the schema.
func (l *loader) schemaAt(path []string, prefix string) cue.Value {
	if prefix == "" || len(path) < 2 || path[0] != prefix {
		return cue.Value{}
	}
	def := l.schema().LookupPath(cue.ParsePath("#Scenario"))
	for i, name := range path[1:] {
		if !def.Exists() {
			return def
		}
		if isIndex(name) {
			if isStepList(path[i]) { // path[i] is the list's own name (path[1:] is shifted by one)
				def = l.schema().LookupPath(cue.ParsePath("#Step"))
			} else {
				def = def.LookupPath(cue.MakePath(cue.AnyIndex))
			}
			continue
		}
		def = l.childDef(def, name, false)
	}
	return def
}

// schemaListMin is how many elements the schema's list at the path asks for at least (the
// elements written before its "..."), and whether the schema has a list there.
func (l *loader) schemaListMin(path []string, prefix string) (int, bool) {
	def := l.schemaAt(path, prefix)
	if !def.Exists() || def.IncompleteKind() != cue.ListKind {
		return 0, false
	}
	n := 0
	for i := 0; def.LookupPath(cue.MakePath(cue.Index(i))).Exists(); i++ {
		n++
	}
	return n, true
}

// childDef finds the definition of field name inside def.
func (l *loader) childDef(def cue.Value, name string, closed bool) cue.Value {
	// The same definition and name give the same child in every scenario: a pattern's
	// FillPath, done for each backend of each scenario, was 4 % of vet's CPU.
	key := def.Path().String() + "\x00" + name
	if closed {
		key += "\x00closed"
	}
	if c, ok := l.children[key]; ok {
		return c
	}
	c := l.childDefOf(def, name, closed)
	if l.children == nil {
		l.children = map[string]cue.Value{}
	}
	l.children[key] = c
	return c
}

// childDefOf is childDef, uncached.
func (l *loader) childDefOf(def cue.Value, name string, closed bool) cue.Value {
	for _, sel := range []cue.Selector{cue.Str(name).Optional(), cue.Str(name).Required(), cue.Str(name)} {
		if c := def.LookupPath(cue.MakePath(sel)); c.Exists() {
			return c
		}
	}
	if closed {
		return cue.Value{}
	}
	// A pattern constraint ([#Ident]: #Backend) applies once the field exists.
	if !l.top.Exists() {
		l.top = l.ctx.CompileString("_")
	}
	filled := def.FillPath(cue.MakePath(cue.Str(name)), l.top)
	child := filled.LookupPath(cue.MakePath(cue.Str(name)))
	if child.IncompleteKind() == cue.TopKind {
		// No constraint: the field is free-form (an object's spec). Inside a definition a
		// filled-in _ would be closed and reject every field below it.
		return cue.Value{}
	}
	return child
}

func slicesContains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// unknownField says which fields are allowed instead, suggesting the closest.
func unknownField(field string, allowed []string, isStep bool) string {
	var b strings.Builder
	if isStep {
		fmt.Fprintf(&b, "unknown step kind or field %q", field)
	} else {
		fmt.Fprintf(&b, "unknown field %q", field)
	}
	if isStep && (field == "expect" || field == "expectations" || field == "assertions") {
		// Not a slip of exec: a claim written beside the step that it judges.
		b.WriteString(": a step holds no claims; write them in the scenario's expect list (beside steps), or as an assert step after this one: {assert: \"…\"}")
	} else if s := closest(field, allowed); s != "" {
		fmt.Fprintf(&b, " (did you mean %q?)", s)
	}
	if isStep {
		fmt.Fprintf(&b, "; expected a step kind (%s) or a step field (%s)",
			strings.Join(schema.KindNames(), ", "), strings.Join(stepFields, ", "))
	} else if len(allowed) > 0 {
		sorted := append([]string{}, allowed...)
		sort.Strings(sorted)
		fmt.Fprintf(&b, "; expected one of: %s", strings.Join(sorted, ", "))
	}
	return b.String()
}

func isStepList(s string) bool {
	switch s {
	case "setup", "steps", "cleanup", "parallel", "sequence":
		return true
	}
	return false
}

// closest returns the candidate nearest to s by edit distance, if it is near enough to be a typo.
func closest(s string, candidates []string) string { return didyoumean.Closest(s, candidates) }

// EditDistance is the edit distance between a and b (didyoumean.Distance: runes, an adjacent
// swap counts as one edit).
func EditDistance(a, b string) int { return didyoumean.Distance(a, b) }
