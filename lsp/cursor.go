package lsp

import (
	"strconv"
	"strings"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/parser"
	"cuelang.org/go/cue/token"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/schema"
)

// place is where the cursor is in a document's CUE: the labels and list indexes from the
// top-level field down, and the string literal or struct it is in.
type place struct {
	// path is the labels and indexes down to the innermost value at the cursor.
	path []string
	// lit is the string literal the cursor is inside (after its opening quote), if any;
	// litStart is the offset of its first content byte.
	lit      *ast.BasicLit
	litStart int
	// inStruct says the cursor is among a struct's fields (not in a value), present are the
	// fields that struct already has.
	inStruct bool
	present  map[string]bool
	// structs are the struct literals the cursor is in, outermost first, each with the
	// length of path at it (the Kubernetes object around the cursor: objectAt).
	structs []structAt
}

// structAt is a struct literal around the cursor and the length of place.path at it.
type structAt struct {
	depth int
	lit   *ast.StructLit
}

// cueSource is the CUE of a document: a .cue file's text, or a Markdown document's spec
// blocks at their offsets, every other line's bytes turned into spaces.
func cueSource(path, src string) string {
	if strings.HasSuffix(path, ".cue") {
		return src
	}
	spec := strings.Split(string(dsl.SpecSource([]byte(src))), "\n")
	lines := strings.Split(src, "\n")
	for i, l := range lines {
		if i >= len(spec) || spec[i] != strings.TrimSuffix(l, "\r") {
			lines[i] = strings.Repeat(" ", len(l))
		}
	}
	return strings.Join(lines, "\n")
}

// locate finds the place of the byte offset off in the CUE src. A text being typed often
// does not parse (an unclosed string): the line is then tried cut at the cursor and closed in
// a few ways.
func locate(src string, off int) *place {
	if pl := locateIn(src, off); pl != nil {
		return pl
	}
	end := strings.IndexByte(src[off:], '\n')
	if end < 0 {
		end = len(src) - off
	}
	for _, closing := range []string{`"`, `",`, `"]`, `"}`, `}`, `]`, `""`, ``} {
		if pl := locateIn(src[:off]+closing+src[off+end:], off); pl != nil {
			return pl
		}
	}
	return nil
}

// locateIn is locate on src as it is (nil when it does not parse).
func locateIn(src string, off int) *place {
	f, err := parser.ParseFile("doc.cue", src, parser.ParseComments)
	if err != nil {
		return nil
	}
	pl := &place{}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.Field)
		if !ok || !within(fd, off) {
			continue
		}
		name, _, err := ast.LabelName(fd.Label)
		if err != nil {
			return pl
		}
		pl.path = []string{name}
		pl.value(fd.Value, off)
		return pl
	}
	return pl
}

// within reports whether off is inside n (its end included: the cursor after a name).
func within(n ast.Node, off int) bool {
	return offset(n.Pos()) <= off && off <= offset(n.End())
}

func offset(p token.Pos) int {
	if !p.IsValid() {
		return -1
	}
	return p.Offset()
}

// value descends into x, at pl.path, toward off.
func (pl *place) value(x ast.Expr, off int) {
	switch x := x.(type) {
	case *ast.StructLit:
		if off <= offset(x.Lbrace) || x.Rbrace.IsValid() && off > offset(x.Rbrace) {
			return
		}
		pl.inStruct = true
		pl.present = map[string]bool{}
		pl.structs = append(pl.structs, structAt{len(pl.path), x})
		for _, el := range x.Elts {
			if fd, ok := el.(*ast.Field); ok {
				if name, _, err := ast.LabelName(fd.Label); err == nil {
					pl.present[name] = true
				}
			}
		}
		for _, el := range x.Elts {
			switch el := el.(type) {
			case *ast.Field:
				if !within(el, off) {
					continue
				}
				if within(el.Label, off) {
					return // on a label being written: the struct's fields
				}
				pl.inStruct = false
				name, _, err := ast.LabelName(el.Label)
				if err != nil || el.Value == nil || off < offset(el.Value.Pos()) {
					return // between a label and its value
				}
				pl.path = append(pl.path, name)
				pl.value(el.Value, off)
				return
			case *ast.EmbedDecl:
				if within(el, off) {
					if _, ok := el.Expr.(*ast.Ident); ok {
						return // a name being written among the fields
					}
					pl.inStruct = false
					pl.value(el.Expr, off)
					return
				}
			}
		}
	case *ast.ListLit:
		for i, el := range x.Elts {
			if within(el, off) {
				pl.path = append(pl.path, strconv.Itoa(i))
				pl.value(el, off)
				return
			}
		}
	case *ast.BinaryExpr:
		if within(x.X, off) {
			pl.value(x.X, off)
		} else if within(x.Y, off) {
			pl.value(x.Y, off)
		}
	case *ast.ParenExpr:
		pl.value(x.X, off)
	case *ast.BasicLit:
		if x.Kind != token.STRING {
			return
		}
		start := offset(x.ValuePos)
		open := len(x.Value) - len(strings.TrimLeft(x.Value, "#"))
		quotes := 1
		if strings.HasPrefix(x.Value[open:], `"""`) || strings.HasPrefix(x.Value[open:], `'''`) {
			quotes = 3
		}
		first := start + open + quotes
		if off >= first && off <= offset(x.End())-quotes-open {
			pl.lit, pl.litStart = x, first
		}
	}
}

// stepDepth is how many elements of path (after the scenario's name) name the innermost
// step around it: [steps 2 parallel 1 assert] → 4 (steps.2.parallel.1); 0 outside steps
// (of setup, steps, catch or cleanup).
func stepDepth(path []string) int {
	isIndex := func(i int) bool {
		if i >= len(path) {
			return false
		}
		_, err := strconv.Atoi(path[i])
		return err == nil
	}
	if len(path) < 3 || !(path[1] == "setup" || path[1] == "steps" || path[1] == "catch" || path[1] == "cleanup") || !isIndex(2) {
		return 0
	}
	n := 3
	for {
		switch {
		case n+1 < len(path) && (path[n] == "parallel" || path[n] == "sequence") && isIndex(n+1):
			n += 2
		case n+2 < len(path) && path[n] == "repeat" && path[n+1] == "steps" && isIndex(n+2):
			n += 3
		default:
			return n - 1
		}
	}
}

// site is an expression at the cursor: what the scenario's step (nil: the expectations,
// judged at the end) evaluates, its text before the cursor, and the offset of that text's
// start in the document.
type site struct {
	sc   *dsl.Scenario
	step *dsl.Step
	// src is the expression up to the cursor, as expr reads it (unquoted).
	src string
	// start is the document offset where src starts.
	start int
	// rest is the expression after the cursor, to the end of its literal or ${...}.
	rest string
}

// expressionAt is the expression the cursor at off of the CUE src is in (nil when it is in
// none): an expectation, an assert's or until's expression, or a ${...} of a step's string.
func expressionAt(src string, off int, scenarios []*dsl.Scenario) *site {
	pl := locate(src, off)
	if pl == nil || pl.lit == nil || len(pl.path) < 2 {
		return nil
	}
	sc := scenarioNamed(scenarios, pl.path[0])
	if sc == nil {
		return nil
	}
	litEnd := offset(pl.lit.End()) - 1
	if pl.litStart > litEnd {
		litEnd = pl.litStart
	}
	if off > len(src) || litEnd > len(src) {
		return nil
	}
	n := stepDepth(pl.path)
	var step *dsl.Step
	if n > 0 {
		step = stepAt(sc, strings.Join(pl.path[1:n+1], "."))
	}
	whole := false
	switch rest := pl.path[n+1:]; {
	case n == 0 && len(pl.path) == 3 && pl.path[1] == "expect":
		whole = true
	case n > 0 && len(rest) >= 1 && len(rest) <= 2:
		if k, ok := schema.Kinds[rest[0]]; ok {
			if c, ok := k.New().(schema.Conditional); ok {
				field, _ := c.ExprField()
				whole = len(rest) == 1 && field == "" || len(rest) == 2 && field == rest[1]
			}
		}
	}
	before := src[pl.litStart:off]
	if whole {
		return &site{sc: sc, step: step, src: unescape(before), start: pl.litStart, rest: unescape(src[off:max(off, litEnd)])}
	}
	// A ${...} of a step's string: the cursor after its ${ and before its }. Only a kind's
	// parameters interpolate (not the step's doc, every or while, where ${ is plain text).
	i := strings.LastIndex(before, "${")
	if n == 0 || i < 0 || strings.Contains(before[i:], "}") || i > 0 && before[i-1] == '$' {
		return nil
	}
	if len(pl.path) < n+2 {
		return nil
	}
	if _, kind := schema.Kinds[pl.path[n+1]]; !kind {
		return nil
	}
	after := src[off:max(off, litEnd)]
	if j := strings.IndexByte(after, '}'); j >= 0 {
		after = after[:j]
	}
	return &site{sc: sc, step: step, src: unescape(before[i+2:]), start: pl.litStart + i + 2, rest: unescape(after)}
}

// unescape is a CUE string's text as its value: \" is ", \\ is \ (the escapes expressions
// hold).
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			switch s[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			default:
				b.WriteByte(s[i])
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// scenarioNamed is the scenario called name.
func scenarioNamed(scenarios []*dsl.Scenario, name string) *dsl.Scenario {
	for _, sc := range scenarios {
		if sc.Name == name {
			return sc
		}
	}
	return nil
}

// stepAt is the scenario's step at path ("steps.2.parallel.1"), or nil.
func stepAt(sc *dsl.Scenario, path string) *dsl.Step {
	var found *dsl.Step
	for _, ph := range sc.Phases() {
		dsl.Walk(ph.Steps, func(s *dsl.Step) {
			if s.Path == path {
				found = s
			}
		})
	}
	return found
}
