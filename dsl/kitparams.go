package dsl

import (
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/token"
)

// checkKitHiddenParams reports a hidden field given to a definition of the package (a kit's
// template: #Load & {_name: "fortio", _reqests: 50}) that the definition does not declare
// and that nothing in the package reads. CUE checks no hidden field against a closed
// definition, so such a field is a value of its own that nothing reads, and the template
// keeps its own: with _requests: *10 | int the load sent 10 requests, vet accepted it and the
// run passed. Definitions whose hidden fields cannot all be read from their source (an
// embedding, a comprehension, a definition of that name written twice in other shapes are
// merged) are left alone, as are definitions of other packages, whose hidden fields are
// other fields anyway. A regular field the definition does not declare is refused as well
// where only a field of the result is read ((#Load & {nmae: "x"}).step): CUE refuses it
// where the whole value is used, and there it said only that the template's name was
// missing, at the template.
func (l *loader) checkKitHiddenParams(files []*ast.File) {
	declared := map[string]*defFields{} // definition name → its fields; nil: unknown
	spans := map[string][]Pos{}         // definition name → where each of its fields starts and ends
	inDef := map[*ast.BinaryExpr]bool{} // the & written inside a definition (a template of templates)
	selected := map[*ast.BinaryExpr]bool{}
	for _, f := range files {
		ast.Walk(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.Field:
				name, _, err := ast.LabelName(x.Label)
				if err != nil || !strings.HasPrefix(name, "#") {
					return true
				}
				spans[name] = append(spans[name], l.pos(x.Pos()), l.pos(x.End()))
				ast.Walk(x.Value, func(n ast.Node) bool {
					if b, ok := n.(*ast.BinaryExpr); ok {
						inDef[b] = true
					}
					return true
				}, nil)
				df := fieldsOf(x.Value)
				prev, seen := declared[name]
				switch {
				case df == nil || (seen && prev == nil):
					declared[name] = nil
				case seen:
					for h := range df.names {
						prev.names[h] = true
					}
					for h := range df.required {
						prev.required[h] = true
					}
					prev.open = prev.open || df.open
				default:
					declared[name] = df
				}
			case *ast.SelectorExpr:
				e := x.X
				for {
					p, ok := e.(*ast.ParenExpr)
					if !ok {
						break
					}
					e = p.X
				}
				if b, ok := e.(*ast.BinaryExpr); ok {
					selected[b] = true
				}
			}
			return true
		}, nil)
	}
	read := hiddenReads(files) // hidden names read anywhere (a reference, an alias)
	checked := map[*ast.StructLit]bool{}
	for _, f := range files {
		imported := map[string]bool{} // the names the file's imports go by
		for spec := range f.ImportSpecs() {
			name := ""
			if spec.Name != nil {
				name = spec.Name.Name
			} else if path, err := strconv.Unquote(spec.Path.Value); err == nil {
				name = path[strings.LastIndex(path, "/")+1:]
				if i := strings.IndexAny(name, "@:"); i >= 0 {
					name = name[:i]
				}
			}
			imported[name] = true
		}
		ast.Walk(f, func(n ast.Node) bool {
			b, ok := n.(*ast.BinaryExpr)
			if !ok || b.Op.String() != "&" {
				return true
			}
			var defs []string
			var lits []*ast.StructLit
			for _, o := range conjuncts(b) {
				switch x := o.(type) {
				case *ast.Ident:
					if strings.HasPrefix(x.Name, "#") {
						defs = append(defs, x.Name)
					}
				case *ast.SelectorExpr:
					if id, ok := x.Sel.(*ast.Ident); ok && strings.HasPrefix(id.Name, "#") {
						if pkg, isIdent := x.X.(*ast.Ident); isIdent && imported[pkg.Name] {
							defs = append(defs, "") // another package's definition: not one of these
						} else {
							defs = append(defs, id.Name)
						}
					}
				case *ast.StructLit:
					lits = append(lits, x)
				}
			}
			if len(defs) != 1 || len(lits) == 0 {
				return true
			}
			def := defs[0]
			df := declared[def] // nil for "" (another package's)
			if df == nil {
				return true
			}
			var hiddenNames, regular []string
			for h := range df.names {
				if strings.HasPrefix(h, "_") {
					hiddenNames = append(hiddenNames, h)
				} else {
					regular = append(regular, h)
				}
			}
			sort.Strings(hiddenNames)
			sort.Strings(regular)
			given := map[string]bool{}     // the fields the call's braces set
			suggested := map[string]bool{} // the fields a misspelt one was taken for (said there)
			for _, s := range lits {
				for _, d := range s.Elts {
					if fl, ok := d.(*ast.Field); ok {
						if name, _, err := ast.LabelName(fl.Label); err == nil {
							given[name] = true
							if !df.names[name] {
								for _, h := range append(append([]string{}, hiddenNames...), regular...) {
									if didYouMean(name, []string{h}) != "" {
										suggested[h] = true
									}
								}
							}
						}
					}
				}
			}
			if !inDef[b] && len(conjuncts(b)) == 1+len(lits) {
				// The call is all there is of the value: a required field its braces leave out
				// is missing there (CUE says so inside the template, kitRequiredAtCall moves it).
				for h := range df.required {
					if !given[h] {
						l.kitMissing = append(l.kitMissing, kitMissing{def: def, field: h, call: l.pos(b.Pos()), spans: spans[def], said: suggested[h]})
					}
				}
			}
			for _, s := range lits {
				if checked[s] {
					continue
				}
				checked[s] = true
				for _, d := range s.Elts {
					fl, ok := d.(*ast.Field)
					if !ok {
						continue
					}
					name, _, err := ast.LabelName(fl.Label)
					if err != nil || strings.HasPrefix(name, "#") || strings.HasPrefix(name, "_#") || df.names[name] {
						continue
					}
					if !strings.HasPrefix(name, "_") {
						// A regular field: CUE refuses it where the whole value is used, not
						// where only a field of it is read ((#Load & {nmae: "x"}).step).
						if selected[b] && !df.open {
							l.errs.add(l.pos(fl.Label.Pos()), "", "field %s: %s declares no such field%s: the template is read through a selector ((%s & {...}).field), and CUE checks the fields given to a definition only where the whole value is used, so this one is dropped; expected one of %s's fields: %s", name, def, didYouMean(name, regular), def, def, strings.Join(regular, ", "))
						}
						continue
					}
					if read[name] {
						continue
					}
					want := "expected none: " + def + " declares no hidden field"
					if len(hiddenNames) > 0 {
						want = "expected one of " + def + "'s hidden fields: " + strings.Join(hiddenNames, ", ")
					}
					l.errs.add(l.pos(fl.Label.Pos()), "", "hidden field %s: %s declares no such hidden field%s and nothing reads it: CUE does not check hidden fields against the definition they are given to, so the value is dropped and %s keeps its own; %s", name, def, didYouMean(name, hiddenNames), def, want)
				}
			}
			return true
		}, nil)
	}
}

// defFields is what a definition's value declares at its top level: the names of its fields
// (hidden ones too), and whether it takes others (a pattern constraint, ..., a label computed).
type defFields struct {
	names    map[string]bool
	required map[string]bool // the fields written name!: ...
	open     bool
}

// fieldsOf is the fields a definition's value declares at its top level; nil when they cannot
// all be read from its source (not a struct literal, or one with an embedding or a
// comprehension, which may add fields).
func fieldsOf(v ast.Expr) *defFields {
	s, ok := v.(*ast.StructLit)
	if !ok {
		return nil
	}
	df := &defFields{names: map[string]bool{}, required: map[string]bool{}}
	for _, d := range s.Elts {
		switch x := d.(type) {
		case *ast.Field:
			label := x.Label
			if a, ok := label.(*ast.Alias); ok {
				if id, ok := a.Expr.(*ast.Ident); ok {
					label = id
				}
			}
			name, _, err := ast.LabelName(label)
			if err != nil {
				df.open = true // a pattern constraint or a computed label
				continue
			}
			df.names[name] = true
			if x.Constraint == token.NOT {
				df.required[name] = true
			}
		case *ast.Ellipsis:
			df.open = true
		case *ast.LetClause, *ast.CommentGroup, *ast.Attribute:
		default:
			return nil // an embedding or a comprehension
		}
	}
	return df
}

// hiddenReads is the hidden names the files read: a reference (_x, a._x) in a value, or a
// field whose label is aliased (R=_requests), which is read through its alias.
func hiddenReads(files []*ast.File) map[string]bool {
	read := map[string]bool{}
	var visit func(n ast.Node)
	visit = func(n ast.Node) {
		ast.Walk(n, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.Field:
				if a, ok := x.Label.(*ast.Alias); ok {
					if id, ok := a.Expr.(*ast.Ident); ok {
						read[id.Name] = true
					}
				}
				if x.Value != nil {
					visit(x.Value)
				}
				return false // not the label: a label names a field, it does not read one
			case *ast.Ident:
				if strings.HasPrefix(x.Name, "_") {
					read[x.Name] = true
				}
			}
			return true
		}, nil)
	}
	for _, f := range files {
		visit(f)
	}
	return read
}

// conjuncts flattens a chain of & into its operands (parentheses removed).
func conjuncts(e ast.Expr) []ast.Expr {
	switch x := e.(type) {
	case *ast.BinaryExpr:
		if x.Op.String() == "&" {
			return append(conjuncts(x.X), conjuncts(x.Y)...)
		}
	case *ast.ParenExpr:
		return conjuncts(x.X)
	}
	return []ast.Expr{e}
}

// kitMissing is a call of a kit's template (#Load & {_name: "fortio"}) whose braces leave out
// a field the template requires (_requests!: int), said was it misspelt at the call instead.
type kitMissing struct {
	def, field string
	call       Pos
	spans      []Pos // the template's definitions, start and end of each
	said       bool  // a misspelt field of the call was taken for it: said there
}

// requiredMissingRE is how CUE says (explain rewrites) that a required field has no value, and
// a value read from it cannot be made concrete.
var requiredMissingRE = regexp.MustCompile(`^(?:missing required field "(\w+)"|required field missing: (\w+)|cannot convert non-concrete value (\w+))$`)

// kitRequiredAtCall moves CUE's errors of a template's required field to the call that leaves it
// out. CUE says them inside the template (missing required field "_requests", at the
// template's _requests!), two or three of them, and none at the call, which is where the
// mistake is and where it is fixed: said once there, what the template declares named.
// It says whether it changed the errors.
func (l *loader) kitRequiredAtCall() bool {
	if len(l.kitMissing) == 0 {
		return false
	}
	within := func(p Pos, spans []Pos) bool {
		for i := 0; i+1 < len(spans); i += 2 {
			a, b := spans[i], spans[i+1]
			if p.File == a.File && !p.Less(a) && !b.Less(p) {
				return true
			}
		}
		return false
	}
	out := l.errs.errs[:0:0]
	var add []kitMissing
	for _, e := range l.errs.errs {
		m := requiredMissingRE.FindStringSubmatch(e.Msg)
		if m == nil {
			out = append(out, e)
			continue
		}
		field := m[1] + m[2] + m[3]
		moved := false
		for _, k := range l.kitMissing {
			if k.field == field && within(e.Pos, k.spans) {
				moved = true
				if !k.said {
					add = append(add, k)
				}
			}
		}
		if !moved {
			out = append(out, e)
		}
	}
	if len(out) == len(l.errs.errs) {
		return false
	}
	l.errs.errs = out
	for _, k := range add {
		at := fmt.Sprintf("%d:%d", k.spans[0].Line, k.spans[0].Col)
		if k.spans[0].File != k.call.File {
			at = filepath.Base(k.spans[0].File) + ":" + at
		}
		l.errs.add(k.call, "", "%s requires %s (its %s!, the template at %s) and this call gives it no value: expected %s: <value> in the call's braces, e.g. %s & {%s: ...}", k.def, k.field, k.field, at, k.field, k.def, k.field)
	}
	return true
}
