package dsl

import (
	"maps"
	"os"
	"path/filepath"
	"slices"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/parser"

	"labrun.dev/labrun/internal/secretmask"
)

// hideSyntaxSecrets hides, in every problem of a load that found some, the values its files
// (.cue files, and the specs of Markdown documents) write for secret vars: the decoder hides a scenario's secrets in what it finds
// (hideSecrets), but a problem CUE finds before any scenario decodes (two values of a swept
// secret that conflict, a secret var set twice) quoted them as written. The files' syntax
// says which vars are secret (a `secrets` list of names written out) and what values they
// are given (in a `vars` struct, a `sweep` list, or --var). Only a load with problems pays
// for it: the files are parsed again.
func (l *loader) hideSyntaxSecrets() {
	if len(l.errs.errs) == 0 {
		return
	}
	secret := map[string]bool{}
	sweep := map[string][]string{}
	// plain are the values written for a var outside a sweep (in vars, or --var): one var
	// may be given several (set twice, a conflict), each hidden as "[secret NAME]".
	plain := map[string][]string{}
	var files []*ast.File
	// The files loaded, those the problems are in, and the .cue files beside them (a
	// package's secrets may be declared in one file and set in another).
	dirs := map[string]bool{}
	for _, name := range l.res.Files {
		dirs[filepath.Dir(name)] = true
	}
	for _, e := range l.errs.errs {
		if e.Pos.File != "" {
			dirs[filepath.Dir(e.Pos.File)] = true
		}
	}
	var paths []string
	for dir := range dirs {
		m, _ := filepath.Glob(filepath.Join(dir, "*.cue"))
		paths = append(paths, m...)
	}
	slices.Sort(paths)
	// The specs of the Markdown documents loaded are CUE files of their own, on no disk: their
	// source is the one the loader built (the document's lines, its prose blank).
	virtual := slices.Sorted(maps.Keys(l.virtualSrc))
	for _, name := range append(paths, virtual...) {
		src, ok := l.virtualSrc[name]
		if !ok {
			if fi, err := os.Stat(name); err != nil || !fi.Mode().IsRegular() || fi.Size() > maxSecretScan {
				continue // a named pipe would block the read forever (load skips it too)
			}
			var err error
			if src, err = os.ReadFile(name); err != nil {
				continue
			}
		}
		f, err := parser.ParseFile(name, src)
		if f == nil || err != nil && len(f.Decls) == 0 {
			continue
		}
		files = append(files, f)
		ast.Walk(f, func(n ast.Node) bool {
			if fd, ok := n.(*ast.Field); ok && fieldName(fd) == "secrets" {
				if list, ok := fd.Value.(*ast.ListLit); ok {
					for _, e := range list.Elts {
						if s, ok := stringLit(e); ok {
							secret[s] = true
						}
					}
				}
			}
			return true
		}, nil)
	}
	if len(secret) == 0 {
		return
	}
	for _, f := range files {
		ast.Walk(f, func(n ast.Node) bool {
			fd, ok := n.(*ast.Field)
			if !ok {
				return true
			}
			which := fieldName(fd)
			if which != "vars" && which != "sweep" {
				return true
			}
			st, ok := fd.Value.(*ast.StructLit)
			if !ok {
				return true
			}
			for _, d := range st.Elts {
				v, ok := d.(*ast.Field)
				if !ok || !secret[fieldName(v)] {
					continue
				}
				name := fieldName(v)
				if which == "vars" {
					if s, ok := stringLit(v.Value); ok {
						plain[name] = append(plain[name], s)
					}
					continue
				}
				if list, ok := v.Value.(*ast.ListLit); ok {
					for _, e := range list.Elts {
						if s, ok := stringLit(e); ok && !slices.Contains(sweep[name], s) {
							sweep[name] = append(sweep[name], s)
						}
					}
				}
			}
			return true
		}, nil)
	}
	var names []string
	for name := range secret {
		names = append(names, name)
		if v, ok := l.opts.Vars[name]; ok {
			plain[name] = append(plain[name], v)
		}
	}
	slices.Sort(names)
	masks := secretmask.Masks(names, nil, sweep)
	for _, name := range names {
		for _, v := range plain[name] {
			if !slices.ContainsFunc(masks, func(m [2]string) bool { return m[0] == v }) {
				masks = append(masks, secretmask.Masks([]string{name}, map[string]any{name: v}, nil)...)
			}
		}
	}
	r := secretmask.Replacer(masks)
	if r == nil {
		return
	}
	for _, e := range l.errs.errs {
		e.Msg = r.Replace(e.Msg)
	}
	for _, w := range l.warnings {
		w.Msg = r.Replace(w.Msg)
	}
}

// maxSecretScan is the largest file hideSyntaxSecrets reads for secrets.
const maxSecretScan = 8 << 20

// fieldName is a field's label written out (literalLabel), or "".
func fieldName(f *ast.Field) string {
	name, _ := literalLabel(f.Label)
	return name
}

// stringLit is the value of a plain string literal (literalScalar).
func stringLit(e ast.Expr) (string, bool) {
	v, ok := literalScalar(e)
	s, isString := v.(string)
	return s, ok && isString
}
