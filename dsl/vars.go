package dsl

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/build"
	"cuelang.org/go/cue/format"
	"cuelang.org/go/cue/token"
)

// --var name=value is an input of the CUE evaluation, not only of expressions: before an
// instance is built, the value a user file declares for vars.<name> is replaced by the command
// line's, parsed as the declared type. So every field computed from the var changes with it
// (requests: vars.requests, a manifest's replicas, a DR's maxConnections), exactly as if the
// file had said so. The declared value is the default.

// applyVars rewrites the vars of inst's user files with the command line's values. It reports
// a value that does not parse as its declared type (report is false for the second, open copy
// of an instance, so that each problem is reported once).
func (l *loader) applyVars(inst *build.Instance, report bool) {
	l.rewriteVars(inst, report)
}

// rewriteVars is applyVars; it returns what puts the declared values back (a combination's
// load rewrites syntax that the next combination reuses) and the files it rewrote, or
// would have rewritten but for a value that does not parse.
func (l *loader) rewriteVars(inst *build.Instance, report bool) (undo func(), touched map[*ast.File]bool) {
	return l.rewriteVarsIn(inst.Files, nil, report)
}

// varsStructs are the struct values of the fields labelled vars in f, in syntax order.
func varsStructs(f *ast.File) []*ast.StructLit {
	var out []*ast.StructLit
	ast.Walk(f, func(n ast.Node) bool {
		field, ok := n.(*ast.Field)
		if !ok {
			return true
		}
		if name, _, _ := ast.LabelName(field.Label); name != "vars" {
			return true
		}
		if st, ok := field.Value.(*ast.StructLit); ok {
			out = append(out, st)
		}
		return true
	}, nil)
	return out
}

// rewriteVarsIn is rewriteVars of files; structs, when not nil, are varsStructs of each file
// (found once by a combination's package).
func (l *loader) rewriteVarsIn(files []*ast.File, structs [][]*ast.StructLit, report bool) (undo func(), touched map[*ast.File]bool) {
	var undos []func()
	undo = func() {
		for i := len(undos) - 1; i >= 0; i-- {
			undos[i]()
		}
	}
	if len(l.opts.Vars) == 0 {
		return undo, nil
	}
	for i, f := range files {
		if l.schemaFiles[f.Filename] {
			continue
		}
		var sts []*ast.StructLit
		if structs != nil {
			sts = structs[i]
		} else {
			sts = varsStructs(f)
		}
		for _, st := range sts {
			for _, d := range st.Elts {
				vf, ok := d.(*ast.Field)
				if !ok {
					continue
				}
				name, _, err := ast.LabelName(vf.Label)
				if err != nil {
					continue
				}
				raw, ok := l.opts.Vars[name]
				if !ok {
					continue
				}
				if touched == nil {
					touched = map[*ast.File]bool{}
				}
				touched[f] = true
				if from := varsReadBy(vf.Value, st); len(from) > 0 {
					// total: n * 2 with --var total=3 ran with 3 and n still 5: the
					// formula the scenario states no longer held, and nothing said so.
					if l.varsFailed == nil {
						l.varsFailed = map[string]bool{}
					}
					l.varsFailed[name] = true
					if report {
						instead := "give " + joinFlags(from)
						if _, swept := l.opts.Sweeps[name]; swept {
							instead = "sweep " + joinVars(from, "or")
						}
						l.errs.add(l.posOf(vf.Value.Pos()), "", "%s: vars.%s is computed from %s (%s: %s): a value given for it would replace that formula, and the run would not be the scenario's; %s instead",
							l.varGiven(name, raw), name, joinVars(from, "and"), name, exprText(vf.Value), instead)
					}
					continue
				}
				lit, typ, perr := overrideLit(vf.Value, raw)
				if perr != nil {
					if l.varsFailed == nil {
						l.varsFailed = map[string]bool{}
					}
					l.varsFailed[name] = true
					if report {
						l.errs.add(l.posOf(vf.Value.Pos()), "", "%s: expected %s, as vars.%s is declared here", l.varGiven(name, raw), typ, name)
					}
					continue
				}
				ast.SetPos(lit, vf.Value.Pos())
				declared := vf.Value
				// A declaration that constrains its var (n: *5 | int & >0) keeps its
				// constraint: the value replaces the default only. Replaced whole, n=-1
				// passed vet and ran with a value the scenario forbids.
				value := lit
				if c := varConstraint(declared); c != nil {
					if l.outsideConstraint(lit, c) {
						if l.varsFailed == nil {
							l.varsFailed = map[string]bool{}
						}
						l.varsFailed[name] = true
						if report {
							l.errs.add(l.posOf(vf.Value.Pos()), "", "%s: expected %s, as vars.%s is declared here", l.varGiven(name, raw), exprText(c.(*ast.ParenExpr).X), name)
						}
						continue
					}
					value = &ast.BinaryExpr{X: lit, Op: token.AND, OpPos: vf.Value.Pos(), Y: c}
				}
				undos = append(undos, func() { vf.Value = declared })
				vf.Value = value
				if l.varsSet == nil {
					l.varsSet = map[string]bool{}
				}
				l.varsSet[name] = true
			}
		}
	}
	return undo, touched
}

// overrideLit parses raw as the type of the declared value v and returns it as a literal.
// A declared value that is not a literal (a reference, an expression) takes raw as a number or
// a boolean when it reads as one, else as a string.
func overrideLit(v ast.Expr, raw string) (ast.Expr, string, error) {
	kind, lit := declaredKind(v)
	switch kind {
	case "int":
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil {
			return nil, "an integer", err
		}
		return ast.NewLit(token.INT, strconv.FormatInt(n, 10)), "", nil
	case "number":
		f, err := strconv.ParseFloat(raw, 64)
		if err != nil {
			return nil, "a number", err
		}
		return floatLit(f), "", nil
	case "bool":
		b, err := strconv.ParseBool(raw)
		if err != nil {
			return nil, "true or false", err
		}
		return ast.NewBool(b), "", nil
	case "string":
		if lit == nil {
			return ast.NewString(raw), "", nil
		}
		if declared, err := strconv.Unquote(lit.Value); err == nil && isDuration(declared) {
			if !isDuration(raw) {
				return nil, durationWanted, fmt.Errorf("not a duration")
			}
			// As a sweep's value of it is kept (sweptValue), as an integer's and a number's
			// are above: --var d=0ms ran with "0ms" where the sweep's "0ms" ran with "0s", and
			// one line said "fixed by --var: d=0ms (the scenario sweeps 0s, 20ms)".
			return ast.NewString(sweptValue("duration", raw)), "", nil
		}
		return ast.NewString(raw), "", nil
	}
	if n, err := strconv.ParseInt(raw, 10, 64); err == nil {
		return ast.NewLit(token.INT, strconv.FormatInt(n, 10)), "", nil
	}
	if f, err := strconv.ParseFloat(raw, 64); err == nil {
		return floatLit(f), "", nil
	}
	if b, err := strconv.ParseBool(raw); err == nil {
		return ast.NewBool(b), "", nil
	}
	return ast.NewString(raw), "", nil
}

// floatLit is f as a CUE literal that CUE reads as a number, not an integer: 2 is written
// 2.0. Before, a number var given a whole value (--sweep x=2, a sweep's 2.0) held an integer,
// and its other values were refused: "expected an integer, as vars.x is declared; got the
// number 2.5 (with x=2)".
func floatLit(f float64) *ast.BasicLit {
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.ContainsAny(s, ".eEnN") { // neither a fraction nor NaN nor Inf
		s += ".0"
	}
	return ast.NewLit(token.FLOAT, s)
}

// declaredKind is the kind of a var's declared value v: a literal's, or in a disjunction or
// conjunction (n: *5 | int, n: int & >0) its default's, else a type's it names; "" when v says
// none (a reference). lit is the literal it was read from, nil for a type.
func declaredKind(v ast.Expr) (kind string, lit *ast.BasicLit) {
	switch x := v.(type) {
	case *ast.BasicLit:
		switch x.Kind {
		case token.INT:
			return "int", x
		case token.FLOAT:
			return "number", x
		case token.STRING:
			return "string", x
		case token.TRUE, token.FALSE:
			return "bool", x
		}
	case *ast.Ident:
		switch x.Name {
		case "true", "false", "bool":
			return "bool", nil
		case "int":
			return "int", nil
		case "float", "number":
			return "number", nil
		case "string":
			return "string", nil
		}
	case *ast.ParenExpr:
		return declaredKind(x.X)
	case *ast.UnaryExpr:
		if x.Op == token.MUL { // a default
			return declaredKind(x.X)
		}
	case *ast.BinaryExpr:
		if x.Op == token.OR || x.Op == token.AND {
			// The default first: it is what the var holds without --var.
			for _, side := range []ast.Expr{x.X, x.Y} {
				if u, ok := side.(*ast.UnaryExpr); ok && u.Op == token.MUL {
					return declaredKind(u)
				}
			}
			if k, l := declaredKind(x.X); k != "" {
				return k, l
			}
			return declaredKind(x.Y)
		}
	}
	return "", nil
}

// varGiven names where the value raw of var name comes from: --var name=raw, or a sweep's
// value (--sweep or the scenario's own sweep:).
func (l *loader) varGiven(name, raw string) string {
	vals, ok := l.opts.Sweeps[name]
	if !ok {
		return fmt.Sprintf("--var %s=%s", name, raw)
	}
	if l.opts.SweepFrom[name] == "--sweep" {
		return fmt.Sprintf("--sweep %s=%s: its value %s", name, strings.Join(vals, ","), raw)
	}
	return fmt.Sprintf("sweep.%s: its value %s", name, raw)
}

// nameVarFlags names the flag behind each problem since errsFrom that points at a reference
// to a var the command line gave (requests: vars.requests with --var requests=-1): the
// position is the reference, where the file's own value would be fine, so the message says
// which flag and value made it wrong. A var the command line did not give, declared as a
// disjunction of several kinds with a marked default (n: *"ten" | 10), is named with its
// default: CUE takes the marked term, not the one that fits the reference, which the message
// at the reference did not say. Secrets are masked after it (hideSecrets).
func (l *loader) nameVarFlags(errsFrom int, root cue.Value) {
	for _, e := range l.errs.errs[min(errsFrom, len(l.errs.errs)):] {
		line := l.lineOf(e.Pos.File, e.Pos.Line)
		if e.Pos.Col < 1 || e.Pos.Col > len(line) || strings.Contains(e.Msg, "--var ") {
			continue
		}
		m := varRefRE.FindStringSubmatch(line[e.Pos.Col-1:])
		if m == nil {
			continue
		}
		// A swept var's combination is named after the message already: (with name=value).
		if _, swept := l.opts.Sweeps[m[1]]; swept {
			continue
		}
		if raw, ok := l.opts.Vars[m[1]]; ok {
			e.Msg += fmt.Sprintf(" (vars.%s is %s)", m[1], l.varGiven(m[1], raw))
		} else if d := l.mixedDefault(root, m[1]); d != "" {
			e.Msg += " (" + d + ")"
		}
	}
}

// mixedDefault describes var name's marked default where its declaration is a disjunction
// of terms of different kinds (*"ten" | 10), or is "".
func (l *loader) mixedDefault(root cue.Value, name string) string {
	v := root.LookupPath(cue.MakePath(cue.Str("vars"), cue.Str(name)))
	d, ok := v.Default()
	if !ok {
		return ""
	}
	op, terms := v.Expr()
	if op != cue.OrOp {
		return ""
	}
	mixed := false
	for _, t := range terms {
		mixed = mixed || t.IncompleteKind() != d.IncompleteKind()
	}
	if !mixed {
		return ""
	}
	at := ""
	if p := l.valuePos(v); p.IsValid() {
		at = fmt.Sprintf(" at line %d", p.Line)
	}
	return fmt.Sprintf("vars.%s is %s, the default its declaration%s marks with *: CUE takes the marked term, not the one that fits here; write the value alone", name, Truncate(fmt.Sprint(d), 40), at)
}

// varRefRE matches a reference to a var at the start of a text.
var varRefRE = regexp.MustCompile(`^vars\.([A-Za-z_][A-Za-z0-9_]*)\b`)

// varConstraint is what a var's declaration v allows, its default unmarked (*5 | int & >0
// allows 5 | int & >0), or nil where v is no disjunction or conjunction: a plain value
// (n: 5) is the default a --var value replaces.
func varConstraint(v ast.Expr) ast.Expr {
	for p, ok := v.(*ast.ParenExpr); ok; p, ok = v.(*ast.ParenExpr) {
		v = p.X
	}
	b, ok := v.(*ast.BinaryExpr)
	if !ok || b.Op != token.OR && b.Op != token.AND {
		return nil
	}
	return &ast.ParenExpr{Lparen: b.Pos(), X: unmarkDefaults(b)}
}

// unmarkDefaults is v with its default marks (*x) removed, the syntax it shares with v left
// as it is.
func unmarkDefaults(v ast.Expr) ast.Expr {
	switch x := v.(type) {
	case *ast.ParenExpr:
		return &ast.ParenExpr{Lparen: x.Lparen, X: unmarkDefaults(x.X), Rparen: x.Rparen}
	case *ast.UnaryExpr:
		if x.Op == token.MUL {
			return unmarkDefaults(x.X)
		}
	case *ast.BinaryExpr:
		return &ast.BinaryExpr{X: unmarkDefaults(x.X), OpPos: x.OpPos, Op: x.Op, Y: unmarkDefaults(x.Y)}
	}
	return v
}

// outsideConstraint says lit is not allowed by the constraint c; false when it is or when c
// cannot be judged alone (it reads other fields: the evaluation of the file judges it then).
func (l *loader) outsideConstraint(lit, c ast.Expr) bool {
	cv := l.ctx.BuildExpr(c)
	if cv.Err() != nil {
		return false
	}
	return cv.Unify(l.ctx.BuildExpr(lit)).Validate(cue.Concrete(true)) != nil
}

// exprText is v as CUE writes it.
func exprText(v ast.Expr) string {
	b, err := format.Node(v)
	if err != nil {
		return "the declared constraint"
	}
	return strings.Join(strings.Fields(string(b)), " ")
}

// posOf converts a CUE position to a Pos in the user's document.
func (l *loader) posOf(p token.Pos) Pos {
	if !p.IsValid() {
		return Pos{}
	}
	return Pos{File: l.userFile(p.Filename()), Line: p.Line(), Col: p.Column()}
}

// UndeclaredVars returns the names of opts.Vars that no loaded scenario declares, each with a
// message naming the declared vars and the closest one.
func UndeclaredVars(res *Result, vars map[string]string) []string {
	declared := map[string]bool{}
	for _, sc := range res.Scenarios {
		for k := range sc.Declared {
			declared[k] = true
		}
	}
	var names []string
	for k := range declared {
		names = append(names, k)
	}
	sort.Strings(names)
	var out []string
	var keys []string
	for k := range vars {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if declared[k] {
			continue
		}
		msg := fmt.Sprintf("--var %s=%s: no scenario declares a var named %q", k, vars[k], k)
		if s := closest(k, names); s != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", s)
		}
		if len(names) > 0 {
			msg += "; declared: " + strings.Join(names, ", ")
		} else {
			msg += "; the scenarios declare no vars"
		}
		out = append(out, msg)
	}
	return out
}

// varsReadBy names the vars of the struct st (the vars struct declaring v) that the value v
// reads, by their name (n * 2) or through vars (vars.n * 2), sorted; none for a literal, a
// type, a constraint or a reference to something else (a kit's constant, a default).
func varsReadBy(v ast.Expr, st *ast.StructLit) []string {
	siblings := map[string]bool{}
	for _, d := range st.Elts {
		if f, ok := d.(*ast.Field); ok {
			if n, _, err := ast.LabelName(f.Label); err == nil {
				siblings[n] = true
			}
		}
	}
	found := map[string]bool{}
	var visit func(ast.Node) bool
	visit = func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.SelectorExpr:
			if id, ok := x.X.(*ast.Ident); ok && id.Name == "vars" {
				if sel, _, err := ast.LabelName(x.Sel); err == nil && siblings[sel] {
					found[sel] = true
				}
				return false
			}
			// kit.n names kit's field n, not the var: only the root is a reference.
			ast.Walk(x.X, visit, nil)
			return false
		case *ast.Ident:
			if siblings[x.Name] {
				found[x.Name] = true
			}
		}
		return true
	}
	ast.Walk(v, visit, nil)
	out := make([]string, 0, len(found))
	for n := range found {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// joinVars is vars.a, vars.b and vars.c.
func joinVars(names []string, and string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = "vars." + n
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " " + and + " " + q[len(q)-1]
}

// joinFlags is --var a=… (or --var b=…) for the vars names.
func joinFlags(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = "--var " + n + "=…"
	}
	return strings.Join(q, " or ")
}
