package dsl

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/build"
	"cuelang.org/go/cue/token"
)

// A swept var that nothing reads runs the same experiment once per value, under as many
// names: the summary would show a sweep that changed nothing. A var is read by the run when
// an expression or a ${...} names it (Names.readVar), or when the CUE computes a field from
// it. The CUE side is judged on the syntax, over-approximated: the scenario's own top-level
// declarations, those of every top-level field or let they name (transitively, so a kit's
// fields count), and every imported package but the schema; there, any identifier or
// selector of the var's name outside a field's label counts as a read of it, and vars used as
// a whole (vars[k], a comprehension over vars, vars handed to a kit) as a read of every var.
// A file whose top level the syntax cannot split into named declarations (an embedding, a
// comprehension) makes every scenario of the package read what the whole package names. The
// scenario's descriptive text (its doc and tags, its steps' doc, the reasons under lint.ignore
// and survivors) is left out where the syntax shows it is that text and nothing could take it
// elsewhere (see scenarioValue). So a var said unread is one that no text the scenario can
// reach reads, but for text that only describes the run; the converse is not claimed.

// cueVarReads is what some CUE syntax could read of a scenario's vars.
type cueVarReads struct {
	names map[string]bool // every identifier and selector outside labels
	whole bool            // vars appears other than as the root of vars.<name>
}

// reads reports whether the CUE could read vars.<name>.
func (r *cueVarReads) reads(name string) bool {
	return r == nil || r.whole || r.names[name]
}

func (r *cueVarReads) add(o *cueVarReads) {
	r.whole = r.whole || o.whole
	for n := range o.names {
		r.names[n] = true
	}
}

// pkgVarReads is what each top-level declaration of the package being built reads.
type pkgVarReads struct {
	decls   map[string][]*cueVarReads // by top-level field or let name
	imports *cueVarReads              // every imported package but the schema, whole
	all     *cueVarReads              // the whole package
	split   bool                      // every file's top level is named declarations
	// values are the values of each top-level field, by name, for reading one as a scenario's
	// (scenarioValue); refs every name the package's values mention (labels of top-level
	// fields and their aliases left out), to tell whether any could reach its descriptive text.
	values map[string][]ast.Expr
	refs   *cueVarReads
}

// pkgVarReads scans the package being built (once per build, on first use).
func (l *loader) pkgVarReads() *pkgVarReads {
	if l.varReads != nil || l.varReadsInst == nil {
		return l.varReads
	}
	p := &pkgVarReads{decls: map[string][]*cueVarReads{}, split: true,
		imports: newVarReads(), all: newVarReads(),
		values: map[string][]ast.Expr{}, refs: newVarReads()}
	for _, f := range l.varReadsInst.Files {
		if l.schemaFiles[f.Filename] {
			continue
		}
		for _, d := range f.Decls {
			r := newVarReads()
			switch x := d.(type) {
			case *ast.Package, *ast.ImportDecl, *ast.CommentGroup, *ast.Attribute:
				continue
			case *ast.Field:
				r.node(x)
				if name, ok := staticLabel(x.Label); ok {
					p.decls[name] = append(p.decls[name], r)
					p.values[name] = append(p.values[name], x.Value)
					ref := r
					if _, ok := x.Label.(*ast.Alias); ok {
						ref = newVarReads()
						ref.node(x.Value)
					}
					p.refs.add(ref)
				} else {
					p.split = false
					p.refs.add(r)
				}
				if a, ok := x.Label.(*ast.Alias); ok && a.Ident != nil {
					p.decls[a.Ident.Name] = append(p.decls[a.Ident.Name], r) // X=name: what X names
				}
			case *ast.LetClause:
				r.node(x.Expr)
				p.decls[x.Ident.Name] = append(p.decls[x.Ident.Name], r)
				p.refs.add(r)
			default:
				r.node(x)
				p.split = false
				p.refs.add(r)
			}
			p.all.add(r)
		}
	}
	seen := map[*build.Instance]bool{}
	var scan func(inst *build.Instance)
	scan = func(inst *build.Instance) {
		if inst == nil || seen[inst] {
			return
		}
		seen[inst] = true
		for _, f := range inst.Files {
			if !l.schemaFiles[f.Filename] {
				p.imports.node(f)
			}
		}
		for _, imp := range inst.Imports {
			scan(imp)
		}
	}
	for _, imp := range l.varReadsInst.Imports {
		scan(imp)
	}
	p.all.add(p.imports)
	p.refs.add(p.imports)
	l.varReads = p
	if l.comboReads != nil {
		l.comboReads.reads = p
	}
	return p
}

// scenario is what the CUE the scenario named top can reach could read.
func (p *pkgVarReads) scenario(top string) *cueVarReads {
	if p == nil {
		return nil
	}
	if !p.split || len(p.decls[top]) == 0 {
		return p.all
	}
	r := newVarReads()
	r.add(p.imports)
	seen := map[string]bool{top: true}
	queue := []string{top}
	for len(queue) > 0 {
		name := queue[0]
		queue = queue[1:]
		decls := p.decls[name]
		if name == top && len(p.values[top]) == len(decls) && p.descriptiveUnreached(top) {
			decls = nil
			for _, v := range p.values[top] {
				run := newVarReads()
				run.scenarioValue(v)
				decls = append(decls, run)
			}
		}
		for _, d := range decls {
			r.add(d)
			for n := range d.names {
				if !seen[n] && len(p.decls[n]) > 0 {
					seen[n] = true
					queue = append(queue, n)
				}
			}
		}
	}
	return r
}

func newVarReads() *cueVarReads { return &cueVarReads{names: map[string]bool{}} }

// A var mentioned only in descriptive text changes nothing a run does: the scenario's doc and
// tags, a step's doc, the reasons of lint.ignore and of survivors. That text is left out of
// what the scenario reads only where the syntax shows it is that text (runReads), and only
// when nothing in the package could take it elsewhere (descriptiveUnreached): CUE moves a
// value only by a reference, to the field or to a struct or list holding it, so no identifier
// or selector may name one of them.

// descriptiveAncestors are the fields that hold descriptive text, or hold what holds it.
var descriptiveAncestors = []string{"doc", "tags", "lint", "ignore", "survivors",
	"setup", "steps", "catch", "cleanup", "parallel", "sequence", "repeat"}

// descriptiveUnreached reports whether no name in the package could reach the descriptive
// text of the scenario top: neither top nor a field on the way to it is mentioned anywhere
// but as a label. (An alias X=top is a declaration of its own, read whole where the scenario
// names it.)
func (p *pkgVarReads) descriptiveUnreached(top string) bool {
	if p.refs.names[top] {
		return false
	}
	for _, n := range descriptiveAncestors {
		if p.refs.names[n] {
			return false
		}
	}
	return true
}

// scenarioValue records what a top-level field's value reads, as a scenario's, but for its
// descriptive text: through conjunctions and parentheses, a struct literal's doc and tags are
// left out, its step lists are read as steps and lint and survivors as reasons; anything else
// is read whole.
func (r *cueVarReads) scenarioValue(e ast.Expr) {
	r.structOf(e, func(name string, v ast.Expr) bool {
		switch name {
		case "doc", "tags":
		case "setup", "steps", "catch", "cleanup":
			r.stepList(v)
		case "lint":
			r.structOf(v, func(name string, v ast.Expr) bool {
				if name != "ignore" {
					return false
				}
				r.reasons(v)
				return true
			})
		case "survivors":
			r.reasons(v)
		default:
			return false
		}
		return true
	})
}

// stepList records what a list of steps reads but for the steps' doc.
func (r *cueVarReads) stepList(e ast.Expr) {
	switch x := e.(type) {
	case *ast.ParenExpr:
		r.stepList(x.X)
	case *ast.BinaryExpr:
		if x.Op != token.AND {
			r.node(x)
			return
		}
		r.stepList(x.X)
		r.stepList(x.Y)
	case *ast.ListLit:
		for _, el := range x.Elts {
			if s, ok := el.(ast.Expr); ok {
				r.step(s)
			} else {
				r.node(el)
			}
		}
	default:
		r.node(e)
	}
}

// step records what a step reads but for its doc, and its blocks' steps' doc.
func (r *cueVarReads) step(e ast.Expr) {
	r.structOf(e, func(name string, v ast.Expr) bool {
		switch name {
		case "doc":
		case "parallel", "sequence":
			r.stepList(v)
		case "repeat":
			r.structOf(v, func(name string, v ast.Expr) bool {
				if name != "steps" {
					return false
				}
				r.stepList(v)
				return true
			})
		default:
			return false
		}
		return true
	})
}

// reasons records what a struct of reasons (lint.ignore, survivors) reads but for the reasons:
// its labels, when computed, are read.
func (r *cueVarReads) reasons(e ast.Expr) {
	r.structOf(e, func(string, ast.Expr) bool { return true })
}

// structOf records what e reads where e is struct literals joined by &, handing each field of
// a plain label (an identifier or a string, no alias) to field, which says whether it recorded
// it; every other part (an embedding, a comprehension, a let, any other expression) is read
// whole.
func (r *cueVarReads) structOf(e ast.Expr, field func(name string, v ast.Expr) bool) {
	switch x := e.(type) {
	case *ast.ParenExpr:
		r.structOf(x.X, field)
	case *ast.BinaryExpr:
		if x.Op != token.AND {
			r.node(x)
			return
		}
		r.structOf(x.X, field)
		r.structOf(x.Y, field)
	case *ast.StructLit:
		for _, el := range x.Elts {
			if f, ok := el.(*ast.Field); ok && f.Value != nil && plainLabel(f) {
				name, _ := staticLabel(f.Label)
				if field(name, f.Value) {
					continue
				}
			}
			r.node(el)
		}
	default:
		r.node(e)
	}
}

// plainLabel reports whether f's label is an identifier or a string literal, and f a regular
// field (f: v, f?: v or f!: v).
func plainLabel(f *ast.Field) bool {
	switch l := f.Label.(type) {
	case *ast.Ident:
		return true
	case *ast.BasicLit:
		_, ok := staticLabel(l)
		return ok
	}
	return false
}

// node records what the syntax under n reads.
func (r *cueVarReads) node(n ast.Node) {
	// asRoot are the nodes some selector selects from: vars there is read by name only.
	asRoot := map[ast.Node]bool{}
	var visit func(n ast.Node) bool
	walk := func(n ast.Node) {
		if n != nil {
			ast.Walk(n, visit, nil)
		}
	}
	visit = func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.Field:
			// A plain label declares a field; any other (a dynamic or pattern label, an
			// alias) may compute with a var.
			switch x.Label.(type) {
			case *ast.Ident, *ast.BasicLit:
			default:
				walk(x.Label)
			}
			walk(x.Value)
			return false
		case *ast.SelectorExpr:
			asRoot[x.X] = true
			if asRoot[x] {
				asRoot[x.Sel] = true // S.vars.n: S.vars is read by name
			}
			if _, ok := x.Sel.(*ast.Ident); !ok { // an identifier is visited below
				if name, _, err := ast.LabelName(x.Sel); err != nil || name == "vars" && !asRoot[x] {
					r.whole = true
				} else {
					r.names[name] = true
				}
			}
		case *ast.Ident:
			r.names[x.Name] = true
			if x.Name == "vars" && !asRoot[x] {
				r.whole = true
			}
		}
		return true
	}
	walk(n)
}

// checkSweptVarsRead reports each var of the scenario's sweep, of two values or more, that
// nothing reads; called once every expression is compiled and nothing else is wrong.
func (d *decoder) checkSweptVarsRead(names *Names) {
	sc := d.sc
	for _, name := range sortedKeys(sc.Sweep) {
		if _, ok := sc.Vars[name]; !ok || len(sc.Sweep[name]) < 2 || d.readsVar(names, name) {
			continue
		}
		d.err(d.rootFieldPos("sweep."+name), "sweep."+name, "%s", unreadSweptVar(name, len(sc.Sweep[name])))
	}
	sc.unreadVars = map[string]bool{}
	sc.judgedOnlyVars = map[string]string{}
	for name := range sc.Vars {
		if !d.readsVar(names, name) {
			sc.unreadVars[name] = true
		} else if by := d.onlyJudgedBy(names, name); by != "" {
			sc.judgedOnlyVars[name] = by
		}
	}
	// A --var of a var nothing reads changes nothing: the run is the one without it, while
	// the report shows the value given (a run "at requests = 50" that sent 5).
	for _, name := range sortedKeys(d.l.opts.GivenVars) {
		if _, declared := sc.Vars[name]; declared && sc.unreadVars[name] && !d.l.varsFailed[name] {
			d.err(sc.Declared[name], "", "--var %s=%s: %s", name, d.l.opts.Vars[name], unreadGivenVar(name))
		}
	}
	d.knowCUEVars()
	for _, name := range sortedKeys(sc.Sweep) {
		if by := sc.judgedOnlyVars[name]; by != "" && len(sc.Sweep[name]) >= 2 {
			d.warn(d.rootFieldPos("sweep."+name), LintSweepOnlyJudged, "%s", judgedOnlySweptVar(name, len(sc.Sweep[name]), by))
		}
	}
}

// onlyJudgedBy says what reads vars.<name> when only the expectations and catch steps do,
// "" when anything else may: then every combination of a sweep of it runs the same setup and
// steps, and only the claims judged of them differ (fortio.qps <= vars.connections * 500 with
// the load's connections written as 1). A catch step runs only once the run has failed, after
// everything it measured. Any read not known to be one of these (the CUE's, a file's ${...}
// that cannot be read before the run, a setup, steps or cleanup step's expression or ${...})
// counts as one that changes the run.
func (d *decoder) onlyJudgedBy(names *Names, name string) string {
	if d.filesUnknown || d.cueReadsVar(name) {
		return ""
	}
	reads := func(e *Expr) bool { return e != nil && (e.allVars || slices.Contains(e.vars, name)) }
	stepReads := func(s *Step) bool {
		if reads(s.Expr) || slices.ContainsFunc(d.fileExprs[s], reads) {
			return true
		}
		for _, t := range s.templates {
			if slices.ContainsFunc(t.Exprs(), reads) {
				return true
			}
		}
		return false
	}
	var by []string
	if slices.ContainsFunc(d.sc.Expect, reads) {
		by = append(by, "the expectations")
	}
	run, catch := false, false
	for _, ph := range [][]*Step{d.sc.Setup, d.sc.Steps, d.sc.Cleanup} {
		Walk(ph, func(s *Step) { run = run || stepReads(s) })
	}
	Walk(d.sc.Catch, func(s *Step) { catch = catch || stepReads(s) })
	if catch {
		by = append(by, "a catch step (which runs only once the run has failed)")
	}
	if run || len(by) == 0 {
		// Read where the run changes, or by something not told apart here: counted as
		// changing the run.
		return ""
	}
	return strings.Join(by, " and ")
}

// judgedOnlySweptVar says why a sweep of a var that only the claims read is warned of.
func judgedOnlySweptVar(name string, values int, by string) string {
	return fmt.Sprintf("vars.%s is read only by %s: no field is computed from it, and no setup, steps or cleanup step reads it in a ${...} or a condition, so its %d values would run the same experiment %d times, and only what is judged of it would differ, while the summary reads as a run at each value; read it where the run should change (a field such as requests: vars.%s, or ${vars.%s} in a step's string), or judge the values in one run's expectations", name, by, values, values, name, name)
}

// knowCUEVars finds the vars the scenario's CUE could read (ParamsMayReadVars): of its
// syntax only, so known in a scenario with problems too.
func (d *decoder) knowCUEVars() {
	sc := d.sc
	sc.cueVars = map[string]bool{}
	for name := range sc.Vars {
		if d.cueReadsVar(name) {
			sc.cueVars[name] = true
		}
	}
	sc.cueVarsKnown = true
}

// ParamsMayReadVars reports whether a var could change what the scenario's CUE computes
// (its steps' parameters: requests: vars.n), as the syntax over-approximates it; true when
// that is not known. A step's parameters are fixed before the run, whatever --var or a
// sweep gives, when it is false.
func (sc *Scenario) ParamsMayReadVars() bool {
	return !sc.cueVarsKnown || len(sc.cueVars) > 0
}

func (d *decoder) readsVar(names *Names, name string) bool {
	if d.filesUnknown || names.readVar(name) {
		return true
	}
	return d.cueReadsVar(name)
}

// cueReadsVar reports whether the scenario's CUE could read vars.<name>.
func (d *decoder) cueReadsVar(name string) bool {
	if d.cueReads == nil {
		top := d.sc.Name
		if u, err := strconv.Unquote(top); err == nil {
			top = u
		}
		d.cueReads = d.l.pkgVarReads().scenario(top)
	}
	return d.cueReads.reads(name)
}

// unreadSweptVar says why sweeping a var nothing reads is refused.
func unreadSweptVar(name string, values int) string {
	return fmt.Sprintf("nothing in the scenario reads vars.%s (no field computed from it, no ${vars.%s}, no expression; a doc, tags or a reason only describe the run): its %d values would run the same experiment %d times under different names; read it where the run should change (a field such as requests: vars.%s, or ${vars.%s} in a step's string), or repeat a run with --count", name, name, values, values, name, name)
}

// unreadGivenVar says why a --var of a var nothing reads is refused.
func unreadGivenVar(name string) string {
	return fmt.Sprintf("nothing in the scenario reads vars.%s (no field computed from it, no ${vars.%s}, no expression; a doc, tags or a reason only describe the run): the run would be the one without this --var, while its report shows the value given; read it where the run should change (a field such as requests: vars.%s, or ${vars.%s} in a step's string), or drop the --var", name, name, name, name)
}

// sweptValue is a var's value as it is compared with the var's other values: two values
// that are the same value (5 and 5.0 of a number, "1m" and "60s" of a duration) would make
// the same run.
func sweptValue(kind, raw string) string {
	switch kind {
	case "int":
		if n, err := strconv.ParseInt(raw, 10, 64); err == nil {
			return strconv.FormatInt(n, 10)
		}
	case "number":
		// As the scenario's own sweep writes a number (NumberText): before, the shortest
		// form with an exponent, so --sweep x=1000000 ran s[x=1e+06]#1 where the same value
		// in the file's sweep ran s[x=1000000]#1, two ids for one combination.
		if f, err := strconv.ParseFloat(raw, 64); err == nil {
			return NumberText(f)
		}
	case "bool":
		if b, err := strconv.ParseBool(raw); err == nil {
			return strconv.FormatBool(b)
		}
	case "duration":
		if dur, err := time.ParseDuration(raw); err == nil {
			return dur.String()
		}
	}
	// Spaces around a value are invisible where a combination is shown (s=a and s=a  read
	// alike in a VARS column): "a " repeats "a".
	return strings.TrimSpace(raw)
}

// showSwept writes a swept value for a message: as written, quoted where its kind is a string
// or a duration, or where spaces surround it (which would not show).
func showSwept(kind, raw string) string {
	if kind == "string" || kind == "duration" || strings.TrimSpace(raw) != raw {
		return strconv.Quote(raw)
	}
	return raw
}

// repeatedValue is the first value of values that repeats an earlier one, with the index of
// the earlier one; -1 when none does.
func repeatedValue(kind string, values []string) (at, first int) {
	seen := map[string]int{}
	for i, v := range values {
		k := sweptValue(kind, v)
		if j, ok := seen[k]; ok {
			return i, j
		}
		seen[k] = i
	}
	return -1, -1
}

// repeatedSweepValue says why a value given twice is refused.
func repeatedSweepValue(name, value, first string, firstAt Pos, here Pos) string {
	where := ""
	if firstAt.IsValid() {
		if firstAt.File == here.File {
			where = fmt.Sprintf(", first at column %d", firstAt.Col)
			if firstAt.Line != here.Line {
				where = fmt.Sprintf(", first at line %d", firstAt.Line)
			}
		} else {
			where = fmt.Sprintf(", first at %s:%d", filepath.Base(firstAt.File), firstAt.Line)
		}
	}
	same := ""
	if value != first {
		same = " (as " + first + ")"
	}
	return fmt.Sprintf("sweep of vars.%s: %s is given twice%s%s: two combinations would be the same run under one id; give each value once, and repeat runs with --count", name, value, same, where)
}

// sweepFlagProblems are the problems of one --sweep flag beyond its values' types: a value
// given twice, a var nothing reads.
func sweepFlagProblems(sc *Scenario, f SweepVar) []string {
	var out []string
	flag := fmt.Sprintf("--sweep %s=%s", f.Name, strings.Join(f.Values, ","))
	if at, first := repeatedValue(sc.VarKinds[f.Name], f.Values); at >= 0 {
		show := func(v string) string { return v }
		if strings.TrimSpace(f.Values[at]) != f.Values[at] || strings.TrimSpace(f.Values[first]) != f.Values[first] {
			show = strconv.Quote
		}
		same := ""
		if f.Values[at] != f.Values[first] {
			same = " (as " + show(f.Values[first]) + ")"
		}
		out = append(out, fmt.Sprintf("%s: %s is given twice%s: two combinations would be the same run under one id; give each value once, and repeat runs with --count", flag, show(f.Values[at]), same))
	}
	if sc.unreadVars[f.Name] && len(f.Values) >= 2 {
		out = append(out, flag+": "+unreadSweptVar(f.Name, len(f.Values)))
	}
	return out
}

// SweepWarnings are the lints' findings of --sweep flags, at the var's declaration: a var
// that only the claims read (LintSweepOnlyJudged), unless the scenario's lint.ignore silences
// the code.
func SweepWarnings(sc *Scenario, flags []SweepVar) []*Warning {
	if _, ok := sc.LintIgnore[LintSweepOnlyJudged]; ok {
		return nil
	}
	var out []*Warning
	for _, f := range flags {
		if by := sc.judgedOnlyVars[f.Name]; by != "" && len(f.Values) >= 2 {
			out = append(out, &Warning{Pos: sc.Declared[f.Name], Code: LintSweepOnlyJudged, Scenario: sc.Name,
				Msg: fmt.Sprintf("--sweep %s=%s: %s", f.Name, strings.Join(f.Values, ","), judgedOnlySweptVar(f.Name, len(f.Values), by))})
		}
	}
	return out
}

// checkMayFailChecks refuses an assert with mayFail: true whose outcome nothing reads (no
// outcome.<step> or error.<step> in an expression): a check that may fail without failing the
// run, and that nothing looks at, can never fail anything, so it proves nothing. A wait is
// warned of (code mayfail-unread): one may wait for a while and go on either way, but then
// the run goes on whether or not its condition held.
//
// A block (sequence, parallel, repeat) with mayFail: true is judged the same way by the checks
// its failure would swallow (mayFailClaims): an assert or a repeat's until under it (the
// repeat's own until included) makes it refused, a wait warned of, when nothing reads the
// outcome of the check or of a block between the check and this one.
//
// A read counts only from outside the block: an expression of a step inside it runs only
// while the block goes on, so after a failed check it is skipped or cancelled with it (the
// block stops), and it sees the check only when it passed; the block's mayFail swallows what
// that step finds anyway.
func (d *decoder) checkMayFailChecks(names *Names) {
	if !slices.ContainsFunc(d.order, func(s *Step) bool { return s.MayFail }) {
		return // what follows judges the steps with mayFail: true alone
	}
	if names == nil {
		names = &Names{}
	}
	// Where the outcomes are read: by each step's own expressions (its condition, its
	// ${...}), by the expectations. A read that none of these makes (a file's ${...}) is
	// counted wherever the block is.
	//
	// A read judges the outcome only where a failed check would make the run fail: in an
	// expectation, or in the condition of a step (an assert, an until) that has no mayFail of
	// its own and is in no block with one. A ${outcome.check} in a step's strings (an echo in
	// cleanup) shows the outcome and judges nothing, and so does a comparison that holds or
	// fails alike whether the check passed or failed (outcome.check != 'skipped': a top-level
	// step of a run judged by its expectations always ran); shown keeps the first such read of
	// each step, for the message.
	byStep := map[*Step]map[string]bool{}
	expects := map[string]bool{}
	shown := map[string]string{}
	shownWhole := "" // a read of every step's outcome that judges none, with why
	note := func(e *Expr, into map[string]bool) {
		judged, sh := outcomeJudgements(e)
		for o := range judged {
			into[o] = true
		}
		for o, src := range sh {
			if shown[o] == "" {
				shown[o] = fmt.Sprintf("%q holds or fails alike whether %s passed or failed", src, o)
			}
		}
		if whole, why := wholeOutcomeJudgement(e); whole {
			into[""] = true
		} else if why != "" && shownWhole == "" {
			shownWhole = why
		}
	}
	for _, e := range d.sc.Expect {
		note(e, expects)
	}
	swallowed := map[*Step]bool{}
	var under func(s *Step, in bool)
	under = func(s *Step, in bool) {
		in = in || s.MayFail
		swallowed[s] = in
		for _, c := range s.Children {
			under(c, in)
		}
	}
	for _, s := range d.order {
		if _, seen := swallowed[s]; !seen {
			under(s, false)
		}
	}
	for _, s := range d.order {
		m := map[string]bool{}
		if s.Expr != nil && !swallowed[s] {
			note(s.Expr, m)
		} else if s.Expr != nil {
			for _, o := range s.Expr.Outcomes {
				if shown[o] == "" && o != s.Name {
					shown[o] = fmt.Sprintf("the %s %s reads it, and a mayFail lets it fail without failing the run", s.Kind, s.Shown)
				}
			}
		}
		for _, t := range s.templates {
			for _, e := range t.Exprs() {
				for _, o := range e.Outcomes {
					if shown[o] == "" {
						shown[o] = fmt.Sprintf("a ${...} of step %s shows it and judges nothing", s.Shown)
					}
				}
			}
		}
		byStep[s] = m
	}
	readOutside := func(b *Step) func(s *Step) bool {
		outside := map[string]bool{}
		for o := range expects {
			outside[o] = true
		}
		inside := map[*Step]bool{}
		var mark func(s *Step)
		mark = func(s *Step) {
			inside[s] = true
			for _, c := range s.Children {
				mark(c)
			}
		}
		mark(b)
		for _, s := range d.order {
			if !inside[s] {
				for o := range byStep[s] {
					outside[o] = true
				}
			}
		}
		return func(s *Step) bool {
			return outside[""] || s.Name != "" && outside[s.Name]
		}
	}
	for _, s := range d.order {
		if !s.MayFail {
			continue
		}
		read := readOutside(s)
		if read(s) {
			continue
		}
		pos := s.Pos
		if v := d.stepValue[s].LookupPath(cue.MakePath(cue.Str("mayFail"))); v.Exists() {
			if p := d.l.valuePos(v); p.IsValid() {
				pos = p
			}
		}
		name := s.Name
		if name == "" {
			name = "<name>"
		}
		warn := func(msg string) {
			if _, ok := d.sc.LintIgnore[LintMayFailUnread]; !ok {
				d.warnings = append(d.warnings, &Warning{Pos: pos, Code: LintMayFailUnread, Scenario: d.sc.Name, Msg: msg})
			}
		}
		also := ""
		if why := shown[s.Name]; s.Name != "" && why != "" {
			also = " (" + why + ")"
		} else if shownWhole != "" {
			also = " (" + shownWhole + ")"
		}
		switch s.Kind {
		case "assert":
			what := "nothing reads"
			if also != "" {
				what = "nothing judges" // it is read, by what cannot tell a failure from a pass
			}
			d.err(pos, s.Path+".mayFail", "an assert with mayFail: true whose outcome %s can never fail the run: it proves nothing%s; drop mayFail, or name the step and judge outcome.%s in expect (outcome.%s == 'passed')", what, also, name, name)
		case "wait":
			warn(fmt.Sprintf("a wait with mayFail: true whose outcome nothing reads: the run goes on whether or not its condition held, and nothing says which; read outcome.%s in expect if the condition is part of the claim", name))
		case "sequence", "parallel", "repeat":
			claims, waits := mayFailClaims(s, read)
			// Read by what cannot tell a failure from a pass (outcome.tail != 'skipped'): it
			// is read, and judges nothing; the message says which read, not "nothing reads".
			reads, either := "nothing reads", "nothing reads the outcome of either"
			if also != "" {
				reads, either = "nothing judges"+also, "nothing judges the outcome of either"+also
			}
			switch {
			case len(claims) > 0 && claims[0] == s:
				d.err(pos, s.Path+".mayFail", "a repeat with mayFail: true whose outcome %s can never fail the run: when its until never holds, the run goes on; it proves nothing; drop mayFail, or name the step and read outcome.%s in expect", reads, name)
			case len(claims) > 0:
				d.err(pos, s.Path+".mayFail", "a %s with mayFail: true swallows the failure of %s, and %s: the %s can never fail the run, it proves nothing; drop mayFail, or name the block and read outcome.%s in expect", s.Kind, d.claimWhere(s, claims[0]), either, claims[0].Kind, name)
			case len(waits) > 0:
				warn(fmt.Sprintf("a %s with mayFail: true swallows the failure of %s, and %s: the run goes on whether or not its condition held, and nothing says which; name the block and read outcome.%s in expect if the condition is part of the claim", s.Kind, d.claimWhere(s, waits[0]), either, name))
			}
		}
	}
}

// mayFailClaims are the checks under the block b with mayFail: true whose failure the block
// would swallow unseen: an assert, a repeat with an until (b's own until too) — claims — and a
// wait, each unless an expression reads its outcome (read) or that of a block between it and
// b. A step with mayFail of its own is left out, with what is under it: it does not fail b,
// and is checked by itself.
func mayFailClaims(b *Step, read func(*Step) bool) (claims, waits []*Step) {
	var walk func(s *Step)
	walk = func(s *Step) {
		if s != b && (s.MayFail || read(s)) {
			return
		}
		switch {
		case s.Kind == "assert", s.Kind == "repeat" && s.Expr != nil:
			claims = append(claims, s)
		case s.Kind == "wait":
			waits = append(waits, s)
		}
		for _, c := range s.Children {
			walk(c)
		}
	}
	walk(b)
	return claims, waits
}

// claimWhere names a check inside the block b for a message: its kind, its name or place, and
// where it is written.
func (d *decoder) claimWhere(b, s *Step) string {
	what := "the " + s.Kind
	if s.Kind == "repeat" {
		what = "the until of the repeat"
	}
	at := s.Path
	if s.Name != "" {
		at = s.Name
	}
	if p := s.Pos; p.IsValid() {
		if p.File == b.Pos.File || b.Pos.File == "" {
			return fmt.Sprintf("%s %s (line %d)", what, at, p.Line)
		}
		return fmt.Sprintf("%s %s (%s)", what, at, p)
	}
	return what + " " + at
}
