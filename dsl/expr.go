package dsl

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/checker"
	"github.com/expr-lang/expr/checker/nature"
	"github.com/expr-lang/expr/compiler"
	"github.com/expr-lang/expr/conf"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/optimizer"
	"github.com/expr-lang/expr/parser"
	"github.com/expr-lang/expr/vm"

	"labrun.dev/labrun/schema"
)

// Expr is a compiled expression: an assertion, an expectation, a wait or repeat condition, or
// one ${...} of a template.
type Expr struct {
	Src string
	Pos Pos
	// Program evaluates the expression against an environment built by the interpreter with
	// the names of Names.
	Program *vm.Program
	// Refs are the stats the expression reads, for the checks that must precede evaluation
	// (a stat that no snapshot holds, a counter that reset).
	Refs []Ref
	// Explain splits a boolean expression into the parts whose values a failure shows.
	Explain *Explain
	// Names are the identifiers the expression reads (step names among them).
	Names []string
	// Outcomes are the steps whose outcome.<step> or error.<step> the expression reads.
	Outcomes []string
}

// RefKind says what a stat reference reads.
type RefKind int

// The kinds of stat reference.
const (
	// RefSnapshot reads one snapshot: <name>.<stat>.
	RefSnapshot RefKind = iota
	// RefDelta reads the default delta (first to last snapshot): delta.<stat>.
	RefDelta
	// RefDeltaPair reads delta("a", "b").<stat>.
	RefDeltaPair
	// RefSeries reads an aggregate of a sampled series: <name>.max.<stat>.
	RefSeries
)

// Ref is one stat an expression reads.
type Ref struct {
	Kind RefKind
	// Name is the snapshot or series name (for RefSnapshot, RefSeries).
	Name string
	// From and To are the snapshots of a RefDeltaPair.
	From, To string
	Stat     string
}

// Explain is a node of an expression's explanation tree.
type Explain struct {
	// Op is the operator joining Left and Right ("==", "&&", "not", ...); empty for a leaf.
	Op          string
	Left, Right *Explain
	// Src is the leaf's source text; Value() evaluates it (nil for a literal).
	Src string
	// Call is the function a leaf calls (approx, len, all, ...), Args its arguments, so that a
	// failure shows their values too; a predicate argument ({# > 0}) is a leaf without a Value.
	Call string
	// Infix is the arithmetic operator of a leaf a + b (Args are a and b).
	Infix string
	Args  []*Explain

	// The leaf's program is compiled when a judge first asks for it: vet and plan never do,
	// and compiling every leaf of every expression was a third of decoding's time.
	names *Names
	once  sync.Once
	prog  *vm.Program
}

// Value is the program that evaluates the leaf, or nil for a literal or a leaf that does not
// compile on its own (a predicate argument, a closure variable).
func (x *Explain) Value() *vm.Program {
	if x.names == nil {
		return nil
	}
	x.once.Do(func() {
		p := &patcher{names: x.names}
		prog, err := compileProgram(x.Src, x.names.envOption(), expr.Patch(p))
		if err == nil && p.err == "" {
			x.prog = prog
		}
	})
	return x.prog
}

// deltaFunc and hostsFunc are the environment names that delta("a","b") and <snapshot>.hosts
// are rewritten to.
const (
	deltaFunc = "__delta"
	hostsFunc = "__hosts"
)

// DeltaFunc and HostsFunc are the environment names the interpreter must bind.
const (
	DeltaFunc = deltaFunc
	HostsFunc = hostsFunc
)

// Names is what the expressions of one scenario can refer to.
type Names struct {
	Snapshots map[string]bool
	Series    map[string]bool
	Loads     map[string]bool
	Execs     map[string]bool
	Logs      map[string]bool
	// Values are names whose type is decided at run time (get, config, process).
	Values map[string]bool
	Vars   map[string]any
	// Backends and Blackholes are the local target's endpoints.
	Backends   map[string]bool
	Blackholes map[string]bool
	// DeltaErr, when set, says why a plain delta cannot be used (e.g. two sources).
	DeltaErr string
	// Steps are every named step: started.<name> and ended.<name> read their times.
	Steps map[string]bool
	// Hosts are the snapshots that record /clusters hosts (hosts: true).
	Hosts map[string]bool
	// Groups are the named groups of each exec's and logs step's capture pattern (absent: not
	// known before the run).
	Groups map[string][]string
	// Gauge reports whether stat is a gauge in the snapshot named (a delta of a gauge is
	// meaningless); nil when nothing is known.
	Gauge func(snapshot, stat string) bool
	// DeltaFrom and DeltaTo are the snapshots a plain delta compares (for messages).
	DeltaFrom, DeltaTo string
	// env is compileEnv made once, when every name is known (see freeze): a scenario's
	// expressions are compiled against the same names. Nil: made for each compile.
	env map[string]any
	// envOpt gives expr env's types, worked out once by freeze: expr.Env would reflect over
	// every name again for each expression.
	envOpt expr.Option
	// compiled are the expressions compiled against the frozen names, by source: a kit's
	// expression or template written once is met again at each use (a third of a scenario's).
	compiled map[compiledKey]*Expr
}

// compiledKey is what an expression compiled against frozen names depends on.
type compiledKey struct {
	src  string
	opts compileOpts
}

// freeze makes the compile environment of names once for every expression compiled against
// them; the names must not change after.
func (n *Names) freeze() {
	n.env = n.compileEnv()
	env := n.env
	var cache nature.Cache
	nt := conf.EnvWithCache(&cache, env)
	// What expr.Env does (conf.Config.WithEnv), with the types computed above.
	n.envOpt = func(c *conf.Config) {
		c.EnvObject = env
		c.Env = nt
		c.Strict = nt.Strict
	}
}

// envOption is the expr option that declares names' environment.
func (n *Names) envOption() expr.Option {
	if n.envOpt != nil {
		return n.envOpt
	}
	return expr.Env(n.compileEnv())
}

// Env returns an environment with zero values of the right types, for compiling. The
// interpreter builds the same shape with real values.
func (n *Names) Env() map[string]any {
	env := map[string]any{
		"delta":      schema.Stats{},
		deltaFunc:    func(string, string) schema.Stats { return nil },
		hostsFunc:    func(string) []schema.Host { return nil },
		"vars":       map[string]any{},
		"approx":     Approx,
		"within":     Within,
		"has":        Has,
		"backends":   map[string]schema.Endpoint{},
		"blackholes": map[string]schema.Endpoint{},
		"target":     map[string]any{},
		"started":    map[string]float64{},
		"ended":      map[string]float64{},
		"outcome":    map[string]string{},
		"error":      map[string]string{},
	}
	vars := map[string]any{}
	for k, v := range n.Vars {
		vars[k] = v
	}
	env["vars"] = vars
	for k := range n.Snapshots {
		env[k] = schema.Stats{}
	}
	for k := range n.Series {
		env[k] = schema.Series{}
	}
	for k := range n.Loads {
		env[k] = schema.LoadResult{}
	}
	for k := range n.Execs {
		env[k] = schema.ExecResult{}
	}
	for k := range n.Logs {
		env[k] = schema.LogResult{}
	}
	for k := range n.Values {
		env[k] = anyValue
	}
	return env
}

// anyValue is a value of static type any (the type of get and config results).
var anyValue any = map[string]any{}

// compileEnv is Env without the names of Values: the patcher reads those through $env, typed
// any (see patcher.Visit).
func (n *Names) compileEnv() map[string]any {
	if n.env != nil {
		return n.env
	}
	env := n.Env()
	for k := range n.Values {
		delete(env, k)
	}
	return env
}

// Reserved names cannot be step names.
var Reserved = map[string]bool{
	"delta": true, "vars": true, "approx": true, "within": true, "has": true, "backends": true,
	"blackholes": true, "target": true, deltaFunc: true, hostsFunc: true,
	"started": true, "ended": true, "outcome": true, "error": true,
}

// The values of outcome.<step>: what became of the step's latest execution, from the
// record's step outcomes (see interp.ExprOutcome).
const (
	OutcomePassed      = "passed"      // it passed (a step with expectFail: it failed as expected)
	OutcomeFailed      = "failed"      // an assertion or expectation of the step was false
	OutcomeError       = "error"       // the world failed it (an error, its timeout)
	OutcomeSkipped     = "skipped"     // it has not run (the run stopped before it)
	OutcomeInterrupted = "interrupted" // it was cancelled: an interrupt, the scenario's timeout, a failed sibling
	OutcomeRunning     = "running"     // it has started and not ended (a wait polling a background step sees this)
)

// Approx reports whether got is within rel (a fraction, e.g. 0.1 for 10%) of want.
func Approx(got, want, rel float64) bool {
	return math.Abs(got-want) <= math.Abs(rel*want)
}

// Has reports whether a map (a snapshot's stats, a delta, a capture, a load's codes, a JSON
// object) holds key: has(mid, "upstream_rq_pending_overflow"). A stat absent from every
// snapshot is an error when read; has() is how to ask.
func Has(m any, key string) bool {
	switch x := m.(type) {
	case schema.Stats:
		_, ok := x[key]
		return ok
	case map[string]float64:
		_, ok := x[key]
		return ok
	case map[string]string:
		_, ok := x[key]
		return ok
	case map[string]any:
		_, ok := x[key]
		return ok
	}
	return false
}

// Within reports whether lo <= x <= hi.
func Within(x, lo, hi float64) bool { return lo <= x && x <= hi }

// compileOpts says how an expression is compiled.
type compileOpts struct {
	asBool bool
}

// compile compiles src (written at pos, the position of the CUE string literal) against names.
// Errors are positioned inside the string.
func compile(src string, pos Pos, names *Names, opts compileOpts) (*Expr, *Error) {
	e := &Expr{Src: src, Pos: pos}
	if i := strings.Index(src, "${"); i >= 0 && HasInterpolation(src) {
		// An expression reads names directly; ${...} there would stay a literal string.
		inner := src[i+2:]
		if j := strings.Index(inner, "}"); j >= 0 {
			inner = inner[:j]
		}
		p := pos
		if p.IsValid() && !strings.Contains(src, "\n") {
			p.Col += 1 + i
		}
		return nil, &Error{Pos: p, Msg: fmt.Sprintf("in expression %q: ${...} is not interpolated inside an expression (it would stay a literal string): write %s itself, e.g. %s == 'a' instead of '${%s}' == 'a'", src, inner, inner, inner)}
	}
	key := compiledKey{src, opts}
	if names != nil && names.env != nil {
		if c, ok := names.compiled[key]; ok {
			e := *c // the same program, refs and explanation; its own position
			e.Pos = pos
			return &e, nil
		}
	}
	p := &patcher{names: names}
	options := []expr.Option{names.envOption(), expr.Patch(p)}
	if opts.asBool {
		options = append(options, expr.AsBool())
	}
	prog, err := compileProgram(src, options...)
	if p.err != "" {
		// The patcher's error is the cause; expr's own (e.g. "Stats is not callable" for
		// delta("a", "typo")) only describes the node left unpatched.
		err = errors.New(p.err)
	}
	if err != nil {
		return nil, exprError(err, src, pos, names)
	}
	e.Program = prog
	e.Refs = p.refs
	e.Names = p.idents
	e.Outcomes = p.outcomes
	if opts.asBool {
		e.Explain = explain(src, names)
	}
	if names != nil && names.env != nil {
		if names.compiled == nil {
			names.compiled = map[compiledKey]*Expr{}
		}
		c := *e
		names.compiled[key] = &c
	}
	return e, nil
}

// baseConfig is expr's default configuration, made once: conf.CreateNew fills a map of every
// builtin, and a scenario compiles hundreds of expressions. Compiles copy it and never write
// to its maps (no option given to them adds a function or disables a builtin).
var baseConfig = sync.OnceValue(conf.CreateNew)

// compileProgram is expr.Compile(src, options...) on a copy of baseConfig.
func compileProgram(src string, options ...expr.Option) (*vm.Program, error) {
	config := *baseConfig()
	for _, op := range options {
		op(&config)
	}
	if len(config.Disabled) > 0 || len(config.Functions) > 0 || len(config.ConstFns) > 0 {
		return nil, errors.New("labrun: an expr option changed the shared configuration") // a bug of labrun's
	}
	config.Check()
	tree, err := checker.ParseCheck(src, &config)
	if err != nil {
		return nil, err
	}
	if config.Optimize {
		if err := optimizer.Optimize(&tree.Node, &config); err != nil {
			var fileError *file.Error
			if errors.As(err, &fileError) {
				return nil, fileError.Bind(tree.Source)
			}
			return nil, err
		}
	}
	return compiler.Compile(tree, &config)
}

// exprError turns an expr compile error into an Error at the position inside the CUE string.
func exprError(err error, src string, pos Pos, names *Names) *Error {
	msg := err.Error()
	col := 0
	var fe *file.Error
	if errors.As(err, &fe) {
		msg = fe.Message
		if fe.Line <= 1 {
			col = fe.Column
		}
	}
	if strings.Contains(msg, `unexpected token Operator("=")`) {
		msg += " (to compare, write ==)"
	}
	if m := notBoolRE.FindStringSubmatch(msg); m != nil {
		kind := map[string]string{"float64": "number", "int": "number", "string": "string", "schema.Stats": "map of stats"}[m[1]]
		if kind == "" {
			kind = m[1]
		}
		msg = fmt.Sprintf("expected an expression that is true or false (a comparison such as x == y), got one whose value is a %s", kind)
	}
	if m := unknownNameRE.FindStringSubmatch(msg); m != nil {
		msg = fmt.Sprintf("unknown name %s", m[1])
		known := names.known()
		if s := closest(m[1], known); s != "" {
			msg += fmt.Sprintf(" (did you mean %s?)", s)
		}
		msg += "; known names: " + strings.Join(known, ", ")
	}
	p := pos
	if p.IsValid() && !strings.Contains(src, "\n") {
		p.Col += 1 + col
	}
	return &Error{Pos: p, Msg: fmt.Sprintf("in expression %q: %s", src, msg)}
}

var (
	unknownNameRE = regexp.MustCompile(`^unknown name (\S+)`)
	notBoolRE     = regexp.MustCompile(`^expected bool, but got (\S+)`)
)

// known lists the names an expression can use, sorted.
func (n *Names) known() []string {
	var out []string
	for _, m := range []map[string]bool{n.Snapshots, n.Series, n.Loads, n.Execs, n.Logs, n.Values} {
		for k := range m {
			out = append(out, k)
		}
	}
	out = append(out, "delta", "vars")
	if len(n.Backends) > 0 {
		out = append(out, "backends")
	}
	if len(n.Blackholes) > 0 {
		out = append(out, "blackholes")
	}
	sort.Strings(out)
	return out
}

// patcher rewrites the parts of an expression that plain expr cannot type:
//   - <stats>.a.b.c (a snapshot, delta, delta("x","y"), or a series aggregate) becomes
//     <stats>["a.b.c"], because Envoy stat names hold dots;
//   - delta("x","y") becomes __delta("x","y");
//   - <snapshot>.hosts becomes __hosts("<snapshot>");
//   - <load>.code503 becomes <load>.codes["503"];
//
// and records every stat read, checking names it can check now.
type patcher struct {
	names    *Names
	refs     []Ref
	idents   []string
	outcomes []string
	err      string
	// stats marks nodes that evaluate to Stats, with the ref they start.
	stats map[ast.Node]*Ref
}

// statsType is the type of a map of stats, as the checker types it.
var statsType = reflect.TypeOf(schema.Stats{})

// loadResultType is the type of a load's result (and of each of its pods').
var loadResultType = reflect.TypeOf(schema.LoadResult{})

var codeRE = regexp.MustCompile(`^code(\d{3}|_1)$`)

func (p *patcher) fail(format string, args ...any) {
	if p.err == "" {
		p.err = fmt.Sprintf(format, args...)
	}
}

func (p *patcher) Visit(node *ast.Node) {
	if p.stats == nil {
		p.stats = map[ast.Node]*Ref{}
	}
	switch n := (*node).(type) {
	case *ast.IdentifierNode:
		p.idents = append(p.idents, n.Value)
		switch {
		case n.Value == "delta":
			if p.names.DeltaErr != "" {
				// Reported when used as delta.<stat>; delta("a","b") is fine.
				p.stats[n] = &Ref{Kind: RefDelta}
				return
			}
			p.stats[n] = &Ref{Kind: RefDelta}
		case p.names.Snapshots[n.Value]:
			p.stats[n] = &Ref{Kind: RefSnapshot, Name: n.Value}
		case p.names.Values[n.Value]:
			// A get or config result has no static type (a list, a string, an object): read
			// it as get($env, "name"), which the checker types any when the name is absent from
			// the compile environment (see compileEnv). Typed as a map, old[0] would not compile.
			ast.Patch(node, &ast.BuiltinNode{Name: "get", Arguments: []ast.Node{
				&ast.IdentifierNode{Value: "$env"}, &ast.StringNode{Value: n.Value}}})
		}
	case *ast.CallNode:
		id, ok := n.Callee.(*ast.IdentifierNode)
		if !ok || id.Value != "delta" {
			return
		}
		if len(n.Arguments) != 2 {
			p.fail(`delta takes two snapshot names: delta("before", "after")`)
			return
		}
		var args [2]string
		for i, a := range n.Arguments {
			s, ok := a.(*ast.StringNode)
			if !ok {
				p.fail(`delta's arguments must be snapshot names in quotes: delta("before", "after")`)
				return
			}
			if !p.names.Snapshots[s.Value] {
				p.fail("delta(%s, %s): no snapshot named %q; snapshots: %s", n.Arguments[0].String(), n.Arguments[1].String(), s.Value, keys(p.names.Snapshots))
				return
			}
			args[i] = s.Value
		}
		call := &ast.CallNode{Callee: &ast.IdentifierNode{Value: deltaFunc}, Arguments: n.Arguments}
		ast.Patch(node, call)
		p.stats[*node] = &Ref{Kind: RefDeltaPair, From: args[0], To: args[1]}
	case *ast.MemberNode:
		prop, ok := n.Property.(*ast.StringNode)
		if !ok {
			return
		}
		// A series aggregate: <series>.max etc. is a Stats root.
		if id, ok := n.Node.(*ast.IdentifierNode); ok && p.names.Series[id.Value] {
			switch prop.Value {
			case "max", "min", "first", "last":
				p.stats[n] = &Ref{Kind: RefSeries, Name: id.Value + "." + prop.Value}
			}
			return
		}
		if id, ok := n.Node.(*ast.IdentifierNode); ok && p.names.Loads[id.Value] {
			if m := codeRE.FindStringSubmatch(prop.Value); m != nil {
				code := strings.Replace(m[1], "_", "-", 1)
				ast.Patch(node, &ast.MemberNode{
					Node:     &ast.MemberNode{Node: id, Property: &ast.StringNode{Value: "codes"}},
					Property: &ast.StringNode{Value: code},
				})
			}
			return
		}
		// One pod's result of a load from several pods: <load>.pods[0].code200.
		if n.Node.Type() == loadResultType {
			if m := codeRE.FindStringSubmatch(prop.Value); m != nil {
				ast.Patch(node, &ast.MemberNode{
					Node:     &ast.MemberNode{Node: n.Node, Property: &ast.StringNode{Value: "codes"}},
					Property: &ast.StringNode{Value: strings.Replace(m[1], "_", "-", 1)},
				})
				return
			}
		}
		if inner, ok := n.Node.(*ast.MemberNode); ok {
			if id, ok := inner.Node.(*ast.IdentifierNode); ok {
				if field, ok := inner.Property.(*ast.StringNode); ok && ((p.names.Execs[id.Value] && field.Value == "captured") || (p.names.Logs[id.Value] && field.Value == "capture")) {
					if groups, known := p.names.Groups[id.Value]; known && !slices.Contains(groups, prop.Value) {
						have := "it has no named groups"
						if len(groups) > 0 {
							have = "its groups: " + strings.Join(groups, ", ")
						}
						p.fail("%s.%s.%s: the capture pattern of %q has no group %q (%s); name one with (?P<%s>...)", id.Value, field.Value, prop.Value, id.Value, prop.Value, have, prop.Value)
						return
					}
				}
			}
		}
		if id, ok := n.Node.(*ast.IdentifierNode); ok && id.Value == "vars" {
			if _, ok := p.names.Vars[prop.Value]; !ok {
				p.fail("no var named %q (declare it under vars); declared: %s", prop.Value, keys(p.names.Vars))
			}
			return
		}
		if id, ok := n.Node.(*ast.IdentifierNode); ok && (id.Value == "started" || id.Value == "ended" || id.Value == "outcome" || id.Value == "error") {
			if !p.names.Steps[prop.Value] {
				p.fail("%s.%s: no step named %q; named steps: %s", id.Value, prop.Value, prop.Value, keys(p.names.Steps))
				return
			}
			if id.Value == "outcome" || id.Value == "error" {
				p.outcomes = append(p.outcomes, prop.Value)
			}
			return
		}
		if id, ok := n.Node.(*ast.IdentifierNode); ok && (id.Value == "backends" || id.Value == "blackholes") {
			set := p.names.Backends
			if id.Value == "blackholes" {
				set = p.names.Blackholes
			}
			if !set[prop.Value] {
				p.fail("no local %s named %q; declared: %s", strings.TrimSuffix(id.Value, "s"), prop.Value, keys(set))
			}
			return
		}
		root, ok := p.stats[n.Node]
		if !ok {
			// Inside a closure over stats (od.samples, a sample's stats): x.a.b, where x is
			// Stats, reads the stat "a.b" (Envoy's names hold dots), as outside closures.
			if inner, ok := n.Node.(*ast.MemberNode); ok {
				if ip, ok := inner.Property.(*ast.StringNode); ok && inner.Node.Type() == statsType {
					ast.Patch(node, &ast.MemberNode{Node: inner.Node, Property: &ast.StringNode{Value: ip.Value + "." + prop.Value}})
				}
			}
			return
		}
		if root.Kind == RefSnapshot && root.Stat == "" && prop.Value == "hosts" {
			if p.names.Hosts != nil && !p.names.Hosts[root.Name] {
				p.fail("%s.hosts: snapshot %q does not record hosts: add hosts: true to its snapshot step", root.Name, root.Name)
				return
			}
			ast.Patch(node, &ast.CallNode{
				Callee:    &ast.IdentifierNode{Value: hostsFunc},
				Arguments: []ast.Node{&ast.StringNode{Value: root.Name}},
			})
			return
		}
		if root.Kind == RefDelta && root.Stat == "" && p.names.DeltaErr != "" {
			p.fail("%s", p.names.DeltaErr)
			return
		}
		ref := *root
		base := n.Node
		if root.Stat != "" {
			// Extend a.b into a.b.c: the parent is already base["a.b"].
			ref.Stat = root.Stat + "." + prop.Value
			base = n.Node.(*ast.MemberNode).Node
		} else {
			ref.Stat = prop.Value
		}
		if g := p.names.Gauge; g != nil && (ref.Kind == RefDelta || ref.Kind == RefDeltaPair) {
			from, to := ref.From, ref.To
			if ref.Kind == RefDelta {
				from, to = p.names.DeltaFrom, p.names.DeltaTo
			}
			if g(from, ref.Stat) {
				p.fail("%s is a gauge (a level, not a count): it has no delta; compare the snapshots instead, e.g. %s.%s < %s.%s", ref.Stat, from, ref.Stat, to, ref.Stat)
				return
			}
		}
		mem := &ast.MemberNode{Node: base, Property: &ast.StringNode{Value: ref.Stat}}
		ast.Patch(node, mem)
		p.stats[*node] = &ref
		p.replaceRef(root, &ref)
	}
}

// replaceRef records ref, dropping the shorter prefix recorded for the same chain.
func (p *patcher) replaceRef(prev, ref *Ref) {
	if prev.Stat != "" {
		for i := len(p.refs) - 1; i >= 0; i-- {
			if p.refs[i] == *prev {
				p.refs = append(p.refs[:i], p.refs[i+1:]...)
				break
			}
		}
	}
	p.refs = append(p.refs, *ref)
}

func keys[V any](m map[string]V) string {
	if len(m) == 0 {
		return "(none)"
	}
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

var comparisons = map[string]bool{"==": true, "!=": true, "<": true, ">": true, "<=": true, ">=": true, "in": true, "not in": true, "matches": true, "contains": true, "startsWith": true, "endsWith": true}

// explain builds the explanation tree of a boolean expression from its unpatched syntax.
func explain(src string, names *Names) *Explain {
	tree, err := parser.Parse(src)
	if err != nil {
		return nil
	}
	return explainNode(tree.Node, names)
}

func explainNode(n ast.Node, names *Names) *Explain {
	switch n := n.(type) {
	case *ast.BinaryNode:
		switch {
		case n.Operator == "&&" || n.Operator == "and" || n.Operator == "||" || n.Operator == "or":
			return &Explain{Op: n.Operator, Left: explainNode(n.Left, names), Right: explainNode(n.Right, names)}
		case comparisons[n.Operator]:
			return &Explain{Op: n.Operator, Left: leaf(n.Left, names), Right: leaf(n.Right, names)}
		}
	case *ast.UnaryNode:
		if n.Operator == "!" || n.Operator == "not" {
			return &Explain{Op: n.Operator, Left: explainNode(n.Node, names)}
		}
	}
	return leaf(n, names)
}

func leaf(n ast.Node, names *Names) *Explain {
	e := leafValue(n, names)
	switch n := n.(type) {
	case *ast.CallNode:
		if id, ok := n.Callee.(*ast.IdentifierNode); ok && id.Value != "delta" {
			e.Call = id.Value
			for _, a := range n.Arguments {
				e.Args = append(e.Args, leaf(a, names))
			}
		}
	case *ast.BuiltinNode:
		e.Call = n.Name
		for _, a := range n.Arguments {
			if _, ok := a.(*ast.PredicateNode); ok {
				e.Args = append(e.Args, &Explain{Src: a.String()})
			} else {
				e.Args = append(e.Args, leaf(a, names))
			}
		}
	case *ast.BinaryNode:
		switch n.Operator {
		case "+", "-", "*", "/", "%", "**", "^":
			e.Infix = n.Operator
			e.Args = []*Explain{leaf(n.Left, names), leaf(n.Right, names)}
		}
	case *ast.MemberNode:
		// A computed index (perconn.ips[backends.a.address]) shows the index's value; the
		// object is shown as written (its value may be a big map).
		switch n.Property.(type) {
		case *ast.StringNode, *ast.IntegerNode:
		default:
			e.Infix = "[]"
			e.Args = []*Explain{{Src: n.Node.String()}, leaf(n.Property, names)}
		}
	}
	return e
}

func leafValue(n ast.Node, names *Names) *Explain {
	src := n.String()
	switch n.(type) {
	case *ast.IntegerNode, *ast.FloatNode, *ast.StringNode, *ast.BoolNode, *ast.NilNode:
		return &Explain{Src: src}
	}
	return &Explain{Src: src, names: names}
}

// FormatValue prints a value the way a failure message shows it: integers without a fraction,
// strings quoted, nil as nil.
func FormatValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "nil"
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1e15 {
			return strconv.FormatInt(int64(x), 10)
		}
		return strconv.FormatFloat(x, 'g', 6, 64)
	case float32:
		return FormatValue(float64(x))
	case string:
		return strconv.Quote(x)
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Map && rv.Len() > 8 {
		return fmt.Sprintf("map with %d entries", rv.Len())
	}
	return fmt.Sprintf("%v", v)
}
