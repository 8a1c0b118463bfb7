package dsl

import (
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/build"
	"cuelang.org/go/cue/cuecontext"
	cueerrors "cuelang.org/go/cue/errors"
	"cuelang.org/go/cue/format"
	"cuelang.org/go/cue/parser"
	"cuelang.org/go/cue/token"

	"labrun.dev/labrun/schema"
)

// The check of a package by step kind (cleanByKind).
//
// #Step holds one optional field per kind (22 of them) beside the common ones, and CUE
// evaluates every step against all of them: at 1,000 quickstarts most of vet's build was
// steps against kinds they do not have (cue vet of that tree with 4 kinds left in #Step took
// 18 % less CPU). cleanByKind builds the package once with every step the user wrote as a
// struct literal with exactly one kind checked against that kind's definition alone:
// #labrunStep_<kind>, #Step's common fields and the one kind field, closed like #Step, marked
// with a hidden field that holds the kind. The schema's step lists are left open ([...], as in cleanShallow) and
// the step literals are wrapped in the files for this build only (the user's are put back
// changed once it is built): `steps: [{name: "a", snapshot: ...}]` is built as
// `steps: [schema.#labrunStep_snapshot & {name: "a", snapshot: ...}]`.
//
// Why its "clean" is the full build's: #labrunStep_K is #Step without the other kinds'
// optional fields, so it is at least as specific as #Step (a value with no error and
// concrete under it is so under #Step), and after the build every element of every step
// list, at every depth, must carry a mark: the kind's, having been unified with some
// #labrunStep_K, or #Step's own (a step the user typed schema.#Step, as kits do, is checked
// against every kind as before). A step that was neither (built by a reference to an untyped
// value, a comprehension, an embedding; a literal with two kinds or none, which is not
// wrapped) has no mark, and the package is then built against the full schema as before, as
// is any package in which the check finds anything: messages are the full build's.
// Wrapping is syntax-driven (a list literal under a step list's label anywhere, lists joined
// with & or +) and decides only whether the check is tried: what decides the verdict is the
// marks. TestByKindLoadsAsFull
// holds it to the full build on every malformed case, example and scenario;
// TestByKindNeverPassesWhatTheSchemaRefuses on steps it cannot see or sees wrong.
//
// What it saves is #Step's other kinds' optional fields, per step, not the check of a step's
// own block, which it must do too; it pays where steps are many and small (1,000 quickstarts,
// a sweep's combinations). A package whose steps come from kit templates or list.Concat, as
// scenarios/, is not tried: narrowing its templates' `schema.#Step & {...}` to their kinds and
// wrapping list.Concat's lists was sound (the marks decide; vet's output unchanged), but its
// by-kind build cost more than the full build (234 against 202 ms per vet of scenarios/, which
// spends its CUE time in the steps' own blocks, apply's objects first; issue 35).
//
// Nor is vet's build of it made with apply's and delete's objects untyped ([...], not
// [...#Object], the cost named above) and what #Object asks checked apart (p80, not kept):
// untyped alone, vet of scenarios/ took 0.915x the CPU, but not soundly. Checked by a Go walk
// of the whole value (every struct, hidden fields and definitions too, for the #Apply values
// a kit may hold), it took 1.48x; by a hidden field of #Apply and #Delete reading each
// element's fields (presence with `for k, _ in o`, types with `o.kind & string`; stricter
// than #Object, sound on a table of #Object's constraints and byte-identical on the
// repository and the malformed corpus), 1.027x (21 alternated rounds): the presence checks
// cost what the untyped elements save.

// stepMarker is the hidden field that every #labrunStep_K sets, to its kind; fullMarker the
// one that #Step itself sets in that build (a step the user typed as schema.#Step, in a kit's
// list, is checked against all kinds, as in the full build).
var (
	stepMarker = cue.MakePath(cue.Hid("_labrunStepChecked", schema.ImportPath))
	fullMarker = cue.MakePath(cue.Hid("_labrunStepFull", schema.ImportPath))
)

// stepListLabels are the labels under which steps are listed, in a scenario and in a step
// (scenarioStepLists, and the last part of stepStepLists).
var stepListLabels = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, f := range scenarioStepLists {
		m[f] = true
	}
	for _, f := range stepStepLists {
		m[f[strings.LastIndex(f, ".")+1:]] = true
	}
	return m
})

// byKindSource is the schema file of the by-kind definitions, generated from the schema's
// #Step (its fields, in every file that declares it), with its step lists left open.
var byKindSource = sync.OnceValues(func() (string, bool) {
	var common []string
	kinds := map[string]string{}
	var order []string
	entries, _ := schema.Files.ReadDir(".")
	for _, e := range entries {
		src, _ := schema.Files.ReadFile(e.Name())
		f, err := parser.ParseFile(e.Name(), shallowSchemaSource(src))
		if err != nil {
			return "", false
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.Field)
			if !ok {
				continue
			}
			if id, ok := fd.Label.(*ast.Ident); !ok || id.Name != "#Step" {
				continue
			}
			st, ok := fd.Value.(*ast.StructLit)
			if !ok {
				return "", false
			}
			for _, sd := range st.Elts {
				sf, ok := sd.(*ast.Field)
				if !ok {
					return "", false // an embedding in #Step: not a shape this knows
				}
				name, ok := regularLabel(sf.Label)
				if !ok {
					return "", false
				}
				b, err := format.Node(sf)
				if err != nil {
					return "", false
				}
				if _, kind := schema.Kinds[name]; kind {
					kinds[name] = string(b)
					order = append(order, name)
				} else {
					common = append(common, string(b))
				}
			}
		}
	}
	if len(kinds) != len(schema.Kinds) {
		return "", false
	}
	var b strings.Builder
	b.WriteString("package schema\n\n#Step: _labrunStepFull: true\n")
	for _, k := range order {
		b.WriteString("\n#labrunStep_" + k + ": {\n")
		for _, c := range common {
			b.WriteString(c + "\n")
		}
		b.WriteString(kinds[k] + "\n_labrunStepChecked: " + strconv.Quote(k) + "\n}\n")
	}
	return b.String(), true
})

// byKindSchemaFiles are the schema package si's files with its step lists left open, and the
// by-kind definitions as one file more; false when they cannot be made.
func (l *loader) byKindSchemaFiles(si *build.Instance) ([]*ast.File, bool) {
	files, ok := l.shallowSchemaFiles(si)
	if !ok {
		return nil, false
	}
	name := filepath.Join(filepath.Dir(si.Files[0].Filename), "labrun_steps_by_kind.cue")
	if l.byKindFile == nil || l.byKindFile.Filename != name {
		src, ok := byKindSource()
		if !ok {
			return nil, false
		}
		f, err := parser.ParseFile(name, src)
		if err != nil {
			return nil, false
		}
		l.byKindFile = f
	}
	return append(files[:len(files):len(files)], l.byKindFile), true
}

// byKindVerdict is what the by-kind build of a package (cleanByKind) found.
type byKindVerdict int

const (
	// byKindUnknown: it could not tell (a step it could not wrap or find marked, or an error
	// a step may be part of); the package is built against the full schema.
	byKindUnknown byKindVerdict = iota
	// byKindClean: no error at all, as the full build would find.
	byKindClean
	// byKindErrors: errors, none of them in a step, and every step checked against its kind:
	// the full build would find these errors and no other, so the by-kind build stands for it.
	byKindErrors
)

// cleanByKind builds the package inst with each step checked against its kind only and says
// what it found (byKindVerdict); with byKindErrors it also returns the build, whose errors are
// the package's.
func (l *loader) cleanByKind(inst *build.Instance) (cue.Value, []cue.Selector, byKindVerdict) {
	r := &byKindRewriter{}
	defer func() {
		for _, u := range r.undo {
			u()
		}
	}()
	for _, f := range inst.Files {
		r.spec = schemaImport(f)
		r.decls(f.Decls)
		if r.partial {
			return cue.Value{}, nil, byKindUnknown // steps it cannot wrap: the full build, without trying
		}
	}
	if r.wrapped == 0 {
		return cue.Value{}, nil, byKindUnknown // nothing to gain over the full build
	}
	clones, ctx := map[*build.Instance]*build.Instance{}, (*cue.Context)(nil)
	if l.combos != nil {
		// A combination's: the by-kind schema's copy and build are every combination's.
		clones, ctx = l.combos.byKind, l.combos.ctx
	}
	c, ok := withSchema(inst, clones, func(s *build.Instance) bool {
		files, ok := l.byKindSchemaFiles(s)
		s.Files = files
		return ok
	})
	if !ok {
		if l.combos != nil {
			l.combos.byKind = map[*build.Instance]*build.Instance{} // no copy kept that could not be made
		}
		return cue.Value{}, nil, byKindUnknown
	}
	if l.opts.DiscardedBuild != nil {
		defer l.opts.DiscardedBuild()()
	}
	if ctx == nil {
		ctx = cuecontext.New()
	}
	v := ctx.BuildInstance(c)
	// Every step at every depth was checked against a by-kind definition (its kind's, or
	// #Step's own for a step the user typed schema.#Step: any kind's blocks may be there).
	marked := func(sv cue.Value) bool {
		return everyStep(sv, func(e cue.Value) (string, bool) {
			if kind, err := e.LookupPath(stepMarker).String(); err == nil {
				return kind, true
			}
			return "", e.LookupPath(fullMarker).Exists()
		})
	}
	// A hidden field or a definition that is a #Scenario is no scenario of the load, but the
	// full build checks its steps too: they must carry the marks as well.
	if top, ok := l.cleanTop(v, marked, marked); ok {
		return cue.Value{}, top, byKindClean
	}
	if l.errorsOutsideSteps(v, marked) && l.hiddenMarked(v, marked) {
		return v, nil, byKindErrors
	}
	return cue.Value{}, nil, byKindUnknown
}

// hiddenMarked reports whether every hidden field or definition of v that is a #Scenario has
// every step marked.
func (l *loader) hiddenMarked(v cue.Value, marked func(cue.Value) bool) bool {
	it, err := v.Fields(cue.Hidden(true), cue.Definitions(true))
	if err != nil {
		return false
	}
	for it.Next() {
		if it.Selector().LabelType() == cue.StringLabel {
			continue // a regular field: the scenarios' check sees it
		}
		if sv := it.Value(); sv.LookupPath(scenarioMarker).Exists() && !marked(sv) {
			return false
		}
	}
	return true
}

// errorsOutsideSteps reports whether v, a by-kind build with errors, stands for the full
// build: each of its scenarios has every step marked (checked against its kind, which is at
// least as strict as #Step), and no error of the package or of a scenario is in a step or
// names the by-kind definitions. Whatever is not a step is built the same way in both, so
// both find the same errors outside steps; the marks and the by-kind definitions' being at
// least as strict mean that the full build finds none in steps.
func (l *loader) errorsOutsideSteps(v cue.Value, marked func(cue.Value) bool) bool {
	errs := []error{v.Err(), v.Validate()}
	it, err := v.Fields()
	if err != nil {
		return false
	}
	for it.Next() {
		sv := it.Value()
		if !sv.LookupPath(scenarioMarker).Exists() {
			continue
		}
		if !marked(sv) {
			return false
		}
		errs = append(errs, sv.Validate(cue.Concrete(true)))
	}
	for _, err := range errs {
		for _, e := range cueerrors.Errors(err) {
			path := e.Path()
			if len(path) == 0 {
				return false // it cannot say where: maybe a step
			}
			for _, s := range path {
				if _, kind := schema.Kinds[s]; kind || stepListLabels()[s] {
					return false
				}
			}
			for _, p := range cueerrors.Positions(e) {
				if l.byKindFile != nil && p.Filename() == l.byKindFile.Filename {
					return false
				}
			}
		}
	}
	return true
}

// schemaImport is f's import of the schema package, or nil.
func schemaImport(f *ast.File) *ast.ImportSpec {
	for spec := range f.ImportSpecs() {
		if p, err := strconv.Unquote(spec.Path.Value); err == nil && p == schema.ImportPath {
			return spec
		}
	}
	return nil
}

// byKindRewriter wraps the step literals of a file's syntax in their kinds' definitions, in
// place: only the element slices of lists of steps change, so that every other node (the
// fields that references resolve to) stays the one the parser made. undo puts them back.
type byKindRewriter struct {
	spec    *ast.ImportSpec // the file's import of the schema, nil if it has none
	wrapped int
	partial bool // a list of steps it could not see all of (steps)
	undo    []func()
}

// definition is `schema.#labrunStep_<kind>`, resolved to the file's import of the schema
// whatever the file calls it.
func (r *byKindRewriter) definition(kind string) ast.Expr {
	name := "schema"
	if r.spec.Name != nil {
		name = r.spec.Name.Name
	}
	return &ast.SelectorExpr{X: &ast.Ident{Name: name, Node: r.spec}, Sel: ast.NewIdent("#labrunStep_" + kind)}
}

func (r *byKindRewriter) expr(x ast.Expr) {
	switch x := x.(type) {
	case *ast.StructLit:
		r.decls(x.Elts)
	case *ast.BinaryExpr:
		if x.Op == token.AND {
			r.expr(x.X)
			r.expr(x.Y)
		}
	case *ast.ParenExpr:
		r.expr(x.X)
	case *ast.Comprehension:
		r.expr(x.Value)
	}
}

// decls rewrites the fields among ds: a list of steps under a step list's label, any other
// value as an expression; the values of comprehensions, embeddings and lets too. A label it
// cannot read (an interpolation, an expression) makes the rewrite partial: it might be a
// step list's.
func (r *byKindRewriter) decls(ds []ast.Decl) {
	for _, d := range ds {
		switch d := d.(type) {
		case *ast.Comprehension:
			r.expr(d.Value)
		case *ast.EmbedDecl:
			r.expr(d.Expr)
		case *ast.LetClause:
			r.expr(d.Expr)
		case *ast.Field:
			name, ok := labelName(d.Label)
			if !ok {
				r.partial = true
				return
			}
			if stepListLabels()[name] {
				if r.spec == nil {
					r.partial = true // a file that does not import the schema cannot name its definitions
					return
				}
				r.steps(d.Value)
				continue
			}
			r.expr(d.Value)
		}
		if r.partial {
			return
		}
	}
}

// labelName is the name a field's label gives when it can be read from the syntax (an
// identifier, a plain string, a pattern's "", an alias's label); false for one computed
// (an interpolation, an expression).
func labelName(l ast.Label) (string, bool) {
	switch l := l.(type) {
	case *ast.Ident:
		return l.Name, true
	case *ast.BasicLit:
		if l.Kind != token.STRING {
			return "", true
		}
		name, err := strconv.Unquote(l.Value)
		return name, err == nil
	case *ast.ListLit:
		return "", true // a pattern constraint: its value is walked as any other
	case *ast.Alias:
		if x, ok := l.Expr.(ast.Label); ok {
			return labelName(x)
		}
	}
	return "", false
}

// steps rewrites x, the value of a list of steps: a list literal, or list literals joined
// with & or +. Any other value (a reference, a call such as list.Concat, a comprehension)
// makes the rewrite partial: its steps would carry no mark, and the package is built in full
// without trying (the marks still decide, for a rewrite that thinks itself complete).
func (r *byKindRewriter) steps(x ast.Expr) {
	switch x := x.(type) {
	case *ast.ListLit:
		r.list(x)
	case *ast.BinaryExpr:
		if x.Op != token.AND && x.Op != token.ADD {
			r.partial = true
			return
		}
		r.steps(x.X)
		r.steps(x.Y)
	case *ast.ParenExpr:
		r.steps(x.X)
	default:
		r.partial = true
	}
}

// list wraps each step literal of a list of steps with one kind in that kind's definition.
func (r *byKindRewriter) list(list *ast.ListLit) {
	var out []ast.Expr
	for i, e := range list.Elts {
		if _, ok := e.(*ast.Ellipsis); ok {
			continue // [...schema.#Step]: the type of the elements, not a step
		}
		s, ok := e.(*ast.StructLit)
		if !ok {
			r.partial = true // a reference, a comprehension, schema.#Step & {...}
			return
		}
		r.expr(s) // its blocks' steps
		kind := oneKind(s)
		if kind == "" {
			r.partial = true
			return
		}
		if out == nil {
			out = append([]ast.Expr(nil), list.Elts...)
		}
		out[i] = &ast.BinaryExpr{X: r.definition(kind), Op: token.AND, Y: s}
		r.wrapped++
	}
	if out != nil {
		old := list.Elts
		list.Elts = out
		r.undo = append(r.undo, func() { list.Elts = old })
	}
}

// oneKind is the kind of a step literal made of fields only, exactly one of them a kind's;
// "" for any other literal.
func oneKind(s *ast.StructLit) string {
	kind := ""
	for _, d := range s.Elts {
		switch d := d.(type) {
		case *ast.Field:
			name, ok := regularLabel(d.Label)
			if !ok {
				if _, str := d.Label.(*ast.BasicLit); str {
					return "" // a quoted label: not worth telling apart
				}
				continue // a hidden field or a definition: not a kind
			}
			if _, ok := schema.Kinds[name]; ok {
				if kind != "" {
					return ""
				}
				kind = name
			}
		case *ast.CommentGroup, *ast.Attribute:
		default:
			return "" // an embedding, a comprehension, a let: its fields are not all in view
		}
	}
	return kind
}
