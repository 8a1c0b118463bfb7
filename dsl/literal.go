package dsl

import (
	"regexp"
	"slices"
	"strconv"
	"strings"

	"cuelang.org/go/cue"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/literal"
	"cuelang.org/go/cue/token"
)

// syntaxValue is what v.Decode into an any gives, for v the value of expression x when x is
// v's only conjunct: struct literals of regular fields with distinct literal labels, list
// literals and scalar literals are decoded from the syntax; anything else in them (a
// reference, an expression, an interpolation, a struct with a comprehension, an embedding,
// an optional or hidden field...) is decoded by CUE, at its path in v. ok is false when a
// part does not decode: then only v.Decode says why.
//
// A value whose only conjunct is a literal is that literal (nothing else reaches into it),
// so this gives what Decode gives while listing through CUE only the parts that are not
// plain data: listing a struct's fields in CUE sorts them, most of Decode's cost.
//
// refs, when not nil, decodes a reference to a package-level value once per build (refMemo).
func syntaxValue(x ast.Expr, v cue.Value, refs *refMemo) (any, bool) {
	var path []cue.Selector
	return syntaxValueAt(x, v, &path, refs)
}

func syntaxValueAt(x ast.Expr, v cue.Value, path *[]cue.Selector, refs *refMemo) (any, bool) {
	if lit, ok := literalScalar(x); ok {
		return lit, true
	}
	switch x := x.(type) {
	case *ast.StructLit:
		if plainStruct(x) {
			m := make(map[string]any, len(x.Elts))
			for _, d := range x.Elts {
				f := d.(*ast.Field)
				name, _ := literalLabel(f.Label)
				*path = append(*path, cue.Str(name))
				fv, ok := syntaxValueAt(f.Value, v, path, refs)
				*path = (*path)[:len(*path)-1]
				if !ok {
					return nil, false
				}
				m[name] = fv
			}
			return m, true
		}
	case *ast.ListLit:
		if plainList(x) {
			a := make([]any, 0, len(x.Elts))
			for i, e := range x.Elts {
				*path = append(*path, cue.Index(i))
				ev, ok := syntaxValueAt(e, v, path, refs)
				*path = (*path)[:len(*path)-1]
				if !ok {
					return nil, false
				}
				a = append(a, ev)
			}
			return a, true
		}
	}
	sub := v
	if len(*path) > 0 {
		sub = v.LookupPath(cue.MakePath(*path...))
	}
	// Decode leaves a value that is not concrete nil, with no error, where inside a larger
	// value it is an error: such a part is left to the Decode of the whole.
	if dv, _ := sub.Default(); !sub.Exists() || !dv.IsConcrete() {
		return nil, false
	}
	if _, ok := x.(*ast.Interpolation); ok {
		// An interpolation is a string or an error. Decode of a concrete string is its
		// String (Default, no error, then String), which reads an evaluated string without
		// an OpContext; Decode makes three.
		if s, err := sub.String(); err == nil {
			return s, true
		}
	}
	return refs.decode(x, sub)
}

// plainStruct reports whether a struct literal's fields are all regular fields with distinct
// literal labels, and nothing else: its fields are then exactly its declarations.
func plainStruct(x *ast.StructLit) bool {
	// A step's structs are small: their names are compared pairwise, without a map (each
	// struct of each step is asked, some more than once).
	var small [8]string
	names := small[:0]
	var seen map[string]bool
	if len(x.Elts) > len(small) {
		seen = make(map[string]bool, len(x.Elts))
	}
	for _, d := range x.Elts {
		f, ok := d.(*ast.Field)
		if !ok || f.Constraint != token.ILLEGAL || f.Value == nil {
			return false
		}
		name, ok := literalLabel(f.Label)
		if !ok {
			return false
		}
		if seen != nil {
			if seen[name] {
				return false // a duplicate is unified by CUE
			}
			seen[name] = true
			continue
		}
		if slices.Contains(names, name) {
			return false
		}
		names = append(names, name)
	}
	return true
}

// plainList reports whether a list literal has no ellipsis and no comprehension.
func plainList(x *ast.ListLit) bool {
	for _, e := range x.Elts {
		switch e.(type) {
		case *ast.Ellipsis, *ast.Comprehension:
			return false
		}
	}
	return true
}

// literalScalar is the value of a string (without interpolation), decimal number, boolean or
// null literal, as Decode gives it.
func literalScalar(x ast.Expr) (any, bool) {
	b, ok := x.(*ast.BasicLit)
	if !ok {
		return nil, false
	}
	switch b.Kind {
	case token.NULL:
		return nil, true
	case token.TRUE:
		return true, true
	case token.FALSE:
		return false, true
	case token.INT:
		if !decimalInt.MatchString(b.Value) {
			return nil, false
		}
		n, err := strconv.ParseInt(b.Value, 10, 64)
		return n, err == nil
	case token.FLOAT:
		if !decimalFloat.MatchString(b.Value) {
			return nil, false
		}
		f, err := strconv.ParseFloat(b.Value, 64)
		return f, err == nil
	case token.STRING:
		if !doubleQuoted(b.Value) {
			return nil, false // bytes
		}
		s, err := literal.Unquote(b.Value)
		return s, err == nil
	}
	return nil, false
}

// literalLabel is the name of a regular field's label written as an identifier or a string.
func literalLabel(l ast.Label) (string, bool) {
	switch l := l.(type) {
	case *ast.Ident:
		if l.Name == "" || l.Name[0] == '_' || l.Name[0] == '#' {
			return "", false // hidden, a definition, or not a plain name
		}
		return l.Name, true
	case *ast.BasicLit:
		if l.Kind != token.STRING || !doubleQuoted(l.Value) {
			return "", false
		}
		s, err := literal.Unquote(l.Value)
		return s, err == nil
	}
	return "", false
}

// doubleQuoted reports whether a string literal is a string ("...", #"..."#, """...""")
// rather than bytes ('...').
func doubleQuoted(lit string) bool {
	return strings.HasPrefix(strings.TrimLeft(lit, "#"), `"`)
}

var (
	decimalInt   = regexp.MustCompile(`^(0|[1-9][0-9]*)$`)
	decimalFloat = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$`)
)
