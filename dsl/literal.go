package dsl

import (
	"regexp"
	"strconv"
	"strings"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/literal"
	"cuelang.org/go/cue/token"
)

// literalValue is what cue.Value.Decode into an any gives for x, when x is plain data: struct
// literals of regular fields with distinct literal labels, list literals, strings without
// interpolation, decimal numbers, booleans and null. ok is false for anything else (a
// reference, an expression, a comprehension, an optional or hidden field, an ellipsis...):
// then only CUE's evaluation says what the value is.
//
// A field's value whose only conjunct is such a literal is that literal (nothing else reaches
// into it), so decoding it from the syntax skips listing each struct's fields through CUE,
// which sorts them, for the same result.
func literalValue(x ast.Expr) (v any, ok bool) {
	switch x := x.(type) {
	case *ast.StructLit:
		m := make(map[string]any, len(x.Elts))
		for _, d := range x.Elts {
			f, ok := d.(*ast.Field)
			if !ok || f.Constraint != token.ILLEGAL || f.Value == nil {
				return nil, false
			}
			name, ok := literalLabel(f.Label)
			if !ok {
				return nil, false
			}
			if _, dup := m[name]; dup {
				return nil, false // unified by CUE
			}
			fv, ok := literalValue(f.Value)
			if !ok {
				return nil, false
			}
			m[name] = fv
		}
		return m, true
	case *ast.ListLit:
		a := make([]any, 0, len(x.Elts))
		for _, e := range x.Elts {
			ev, ok := literalValue(e)
			if !ok {
				return nil, false
			}
			a = append(a, ev)
		}
		return a, true
	case *ast.BasicLit:
		switch x.Kind {
		case token.NULL:
			return nil, true
		case token.TRUE:
			return true, true
		case token.FALSE:
			return false, true
		case token.INT:
			if !decimalInt.MatchString(x.Value) {
				return nil, false
			}
			n, err := strconv.ParseInt(x.Value, 10, 64)
			return n, err == nil
		case token.FLOAT:
			if !decimalFloat.MatchString(x.Value) {
				return nil, false
			}
			f, err := strconv.ParseFloat(x.Value, 64)
			return f, err == nil
		case token.STRING:
			if !doubleQuoted(x.Value) {
				return nil, false // bytes
			}
			s, err := literal.Unquote(x.Value)
			return s, err == nil
		}
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
