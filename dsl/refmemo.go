package dsl

import (
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/token"
)

// refMemo decodes each package-level value that steps reference once per build. A kit's
// manifests (`apply: objects: [OBJ.backendA, …]`) are referenced by every scenario that uses
// the kit, and decoding a struct in CUE lists its fields, which sorts them: in the repository's
// scenarios that was a tenth of vet's time, for the same few objects decoded again and again.
//
// A reference is memoised only when its syntax alone shows that it names a regular field of
// the package reached through regular fields from a file's top level, through let clauses
// at most: such a field has one value in the package, whatever refers to it. Anything else (a
// definition, a field inside a definition, a scenario or a list, a comprehension's variable, an
// alias, an import, a field whose label is not a literal) is decoded at each use, as before.
type refMemo struct {
	// fields are the regular fields with literal labels whose parents, up to a file's top
	// level, are all such fields with struct literal values: their paths in the package, by
	// their values (an identifier's Node, as the parser resolves it, is the field's value).
	fields map[ast.Node]string
	// top are the package's top-level regular field names (a reference to one declared in
	// another file of the package is not resolved in the file's syntax).
	top map[string]bool
	// decoded are the values decoded so far, by path.
	decoded map[string]any
}

// newRefMemo indexes the fields of a package's files.
func newRefMemo(files []*ast.File) *refMemo {
	m := &refMemo{fields: map[ast.Node]string{}, top: map[string]bool{}, decoded: map[string]any{}}
	for _, f := range files {
		m.index(f.Decls, "")
	}
	return m
}

func (m *refMemo) index(decls []ast.Decl, prefix string) {
	for _, d := range decls {
		f, ok := d.(*ast.Field)
		if !ok || f.Constraint != token.ILLEGAL || f.Value == nil {
			continue
		}
		name, ok := regularLabel(f.Label)
		if !ok {
			continue
		}
		path := name
		if prefix != "" {
			path = prefix + "." + name
		} else {
			m.top[name] = true
		}
		v := f.Value
		if a, ok := v.(*ast.Alias); ok {
			v = a.Expr
		}
		m.fields[v] = path
		if st, ok := v.(*ast.StructLit); ok {
			m.index(st.Elts, path)
		}
	}
}

// regularLabel is the name of a regular field's literal label: not a definition, not hidden,
// and a CUE identifier, so that the path needs no quoting.
func regularLabel(l ast.Label) (string, bool) {
	id, ok := l.(*ast.Ident)
	if !ok || strings.HasPrefix(id.Name, "#") || strings.HasPrefix(id.Name, "_") {
		return "", false
	}
	return id.Name, true
}

// path resolves a reference written with identifiers and selectors to the package path of
// the field it names, if refMemo may memoise it.
func (m *refMemo) path(x ast.Expr) (string, bool) {
	return m.pathDepth(x, 0)
}

func (m *refMemo) pathDepth(x ast.Expr, depth int) (string, bool) {
	if depth > 32 {
		return "", false // a let naming a let naming … : not worth following
	}
	switch x := x.(type) {
	case *ast.ParenExpr:
		return m.pathDepth(x.X, depth+1)
	case *ast.SelectorExpr:
		base, ok := m.pathDepth(x.X, depth+1)
		if !ok {
			return "", false
		}
		name, ok := regularLabel(x.Sel)
		if !ok {
			return "", false
		}
		return base + "." + name, true
	case *ast.Ident:
		switch n := x.Node.(type) {
		case nil:
			// Not declared in its own file: a top-level field of another file of the package
			// (or a predeclared identifier such as int, which names no field).
			if x.Scope == nil && m.top[x.Name] {
				return x.Name, true
			}
		case *ast.LetClause:
			return m.pathDepth(n.Expr, depth+1)
		case *ast.ImportSpec, *ast.Alias, *ast.Field:
			// an import or an alias: no field of the package
		default:
			// A field's value; a comprehension's variable (its Node is the variable's own
			// identifier) is in no index, so it is decoded at each use.
			p, ok := m.fields[n]
			return p, ok
		}
	}
	return "", false
}

// decode is sub.Decode(&out) for sub the value of the reference x; a value decoded before for
// the same path is reused (copied, so that no two steps share a map or a list).
func (m *refMemo) decode(x ast.Expr, sub cue.Value) (any, bool) {
	p, memo := "", false
	if m != nil {
		p, memo = m.path(x)
	}
	if memo {
		if v, ok := m.decoded[p]; ok {
			return deepCopy(v), true
		}
	}
	var out any
	if err := sub.Decode(&out); err != nil {
		return nil, false
	}
	if memo {
		m.decoded[p] = deepCopy(out)
	}
	return out, true
}

// deepCopy copies the maps and lists of a decoded value.
func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = deepCopy(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = deepCopy(e)
		}
		return out
	}
	return v
}
