package dsl

import (
	"sort"
	"strconv"
	"strings"

	"cuelang.org/go/cue/ast"
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
	selected := map[*ast.BinaryExpr]bool{}
	for _, f := range files {
		ast.Walk(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.Field:
				name, _, err := ast.LabelName(x.Label)
				if err != nil || !strings.HasPrefix(name, "#") {
					return true
				}
				df := fieldsOf(x.Value)
				prev, seen := declared[name]
				switch {
				case df == nil || (seen && prev == nil):
					declared[name] = nil
				case seen:
					for h := range df.names {
						prev.names[h] = true
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
	names map[string]bool
	open  bool
}

// fieldsOf is the fields a definition's value declares at its top level; nil when they cannot
// all be read from its source (not a struct literal, or one with an embedding or a
// comprehension, which may add fields).
func fieldsOf(v ast.Expr) *defFields {
	s, ok := v.(*ast.StructLit)
	if !ok {
		return nil
	}
	df := &defFields{names: map[string]bool{}}
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
