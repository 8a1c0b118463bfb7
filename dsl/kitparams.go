package dsl

import (
	"sort"
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
// other fields anyway.
func (l *loader) checkKitHiddenParams(files []*ast.File) {
	declared := map[string]map[string]bool{} // definition name → its hidden fields; nil: unknown
	for _, f := range files {
		ast.Walk(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.Field:
				name, _, err := ast.LabelName(x.Label)
				if err != nil || !strings.HasPrefix(name, "#") {
					return true
				}
				hidden, known := hiddenFieldsOf(x.Value)
				prev, seen := declared[name]
				switch {
				case !known || (seen && prev == nil):
					declared[name] = nil
				case seen:
					for h := range hidden {
						prev[h] = true
					}
				default:
					declared[name] = hidden
				}
			}
			return true
		}, nil)
	}
	read := hiddenReads(files) // hidden names read anywhere (a reference, an alias)
	for _, f := range files {
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
						defs = append(defs, id.Name)
					}
				case *ast.StructLit:
					lits = append(lits, x)
				}
			}
			if len(defs) != 1 || len(lits) == 0 {
				return true
			}
			hidden, ok := declared[defs[0]]
			if !ok || hidden == nil {
				return true
			}
			var names []string
			for h := range hidden {
				names = append(names, h)
			}
			sort.Strings(names)
			for _, s := range lits {
				for _, d := range s.Elts {
					fl, ok := d.(*ast.Field)
					if !ok {
						continue
					}
					name, _, err := ast.LabelName(fl.Label)
					if err != nil || !strings.HasPrefix(name, "_") || strings.HasPrefix(name, "_#") || hidden[name] || read[name] {
						continue
					}
					want := "expected none: " + defs[0] + " declares no hidden field"
					if len(names) > 0 {
						want = "expected one of " + defs[0] + "'s hidden fields: " + strings.Join(names, ", ")
					}
					l.errs.add(l.pos(fl.Label.Pos()), "", "hidden field %s: %s declares no such hidden field%s and nothing reads it: CUE does not check hidden fields against the definition they are given to, so the value is dropped and %s keeps its own; %s", name, defs[0], didYouMean(name, names), defs[0], want)
				}
			}
			return true
		}, nil)
	}
}

// hiddenFieldsOf is the hidden fields a definition's value declares at its top level; known
// is false when they cannot all be read from its source (not a struct literal, or one with an
// embedding or a comprehension, which may add fields).
func hiddenFieldsOf(v ast.Expr) (hidden map[string]bool, known bool) {
	s, ok := v.(*ast.StructLit)
	if !ok {
		return nil, false
	}
	hidden = map[string]bool{}
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
				return nil, false
			}
			if strings.HasPrefix(name, "_") {
				hidden[name] = true
			}
		case *ast.LetClause, *ast.CommentGroup, *ast.Attribute:
		default:
			return nil, false // an embedding or a comprehension
		}
	}
	return hidden, true
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
