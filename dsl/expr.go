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
	"unicode"
	"unicode/utf8"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/builtin"
	"github.com/expr-lang/expr/checker"
	"github.com/expr-lang/expr/checker/nature"
	"github.com/expr-lang/expr/compiler"
	"github.com/expr-lang/expr/conf"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/optimizer"
	"github.com/expr-lang/expr/parser"
	"github.com/expr-lang/expr/vm"

	"labrun.dev/labrun/envoy/xdstype"
	"labrun.dev/labrun/internal/kubeshape"
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
	// Reads are the values of named steps the expression reads, where it reads them: what
	// vet checks against the timeline (each must exist when the expression is evaluated).
	Reads []Read
	// Type is the expression's static type (nil when not known before the run).
	Type *schema.Type
	// Now says the expression calls now(): its value changes with time.
	Now bool
	// Captures are the groups of exec captures it reads (<step>.captured.<group>): a group
	// of a capture that matched nothing has no value, which the judge says instead of
	// reading it as "".
	Captures []CaptureRead
	// ErrorReads are the steps whose error.<step>, started.<step> or ended.<step> it reads: a
	// step that did not run has no error to read (not the "" of one that passed) and no times
	// (not 0), which the judge says instead of reading them so.
	ErrorReads []ErrorRead
	// ObjectReads are the chains of names it reads below get steps' values: a custom
	// resource's are checked against its CRD when the step runs.
	ObjectReads []ObjectRead
	// deltaRead says it reads the plain delta (delta.<stat>), first at deltaCol.
	deltaRead bool
	deltaCol  int
	// vars are the vars it reads by name, allVars that it reads vars as a whole (see
	// Names.readVar).
	vars    []string
	allVars bool
	// allOutcomes says it reads outcome or error as a whole.
	allOutcomes bool
	// keyTests are the steps whose name it looks up in started, ended, outcome or error
	// (has(ended, "bg"), "bg" in ended), with the map as Via; stepMapsWhole says it reads one
	// of those maps otherwise (len(ended)): any step's.
	keyTests      []Read
	stepMapsWhole bool
	// outcomeKeyed says it reads outcome only by looking up a step's name written out
	// (has(outcome, "x"), "x" in outcome), which holds from the start: every named step has
	// an outcome (pending, skipped until it runs).
	outcomeKeyed bool
	// warnings are what the check found that may be right (a stat Envoy does not document).
	warnings []exprProblem
	// vacuous are its comparisons that cannot go either way (exprChecker.vacuous).
	vacuous []exprProblem
}

// ReadsAllOutcomes says the expression reads outcome or error as a whole (any step's), not
// only those of Outcomes.
func (e *Expr) ReadsAllOutcomes() bool { return e.allOutcomes }

// Warned is what the check warned of in the expression under a lint code: the messages, in
// order (a refusal of the expression can say the reason one of them gives).
func (e *Expr) Warned(code string) []string {
	var msgs []string
	for _, w := range e.warnings {
		if w.code == code {
			msgs = append(msgs, w.msg)
		}
	}
	return msgs
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
	// RefSource reads a stat of a source where the expression names no snapshot: through a
	// series' samples (g.samples[0].x, all(g.samples, .x == 0)), a let, an index. Steps are
	// the snapshot and series steps of that source: the stat must be in at least one of
	// their snapshots or samples, as a stat read by name must be in its snapshot.
	RefSource
)

// StepNames are a RefSource's steps.
func (r Ref) StepNames() []string {
	if r.Steps == "" {
		return nil
	}
	return strings.Split(r.Steps, ",")
}

// CaptureRead is one named group of an exec step's capture that an expression reads.
type CaptureRead struct {
	// Group is "" for the capture read as a whole (compared with == or !=).
	Step, Group string
	// Guarded says it is read only where has() found it.
	Guarded bool
}

// ErrorRead is one error.<step>, started.<step> or ended.<step> an expression reads: what a
// step has only if it ran.
type ErrorRead struct {
	Step string
	// Via is "error", "started" or "ended".
	Via string
	// Guarded says it is read only where the step ran: where has(error, "<step>") holds, or
	// where outcome.<step> is compared equal to another outcome than "skipped"
	// (outcome.<step> == 'passed' && error.<step> == '') or unequal to "skipped".
	Guarded bool
}

// Ref is one stat an expression reads.
type Ref struct {
	Kind RefKind
	// Name is the snapshot or series name (for RefSnapshot, RefSeries).
	Name string
	// From and To are the snapshots of a RefDeltaPair.
	From, To string
	Stat     string
	// Steps are a RefSource's steps, joined by commas (a Ref is a map key; step names are
	// identifiers); StepNames splits them.
	Steps string
	// Guarded says the expression reads the stat only where has() found it (has(mid, "x") ?
	// mid.x : 0, has(mid, "x") && mid.x > 0): its absence is not an error.
	Guarded bool
}

// Explain is a node of an expression's explanation tree.
type Explain struct {
	// Op is the operator joining Left and Right ("==", "&&", "not", ...); empty for a leaf.
	// "let" binds Name to Left's value in Right (let i = findIndex(…); i >= 0 && …).
	Op          string
	Left, Right *Explain
	// Name is the name a "let" binds.
	Name string
	// Src is the leaf's source text; Value() evaluates it (nil for a literal).
	Src string
	// Call is the function a leaf calls (approx, len, all, ...), Args its arguments, so that a
	// failure shows their values too; a predicate argument ({# > 0}) is a leaf without a Value.
	Call string
	// Infix is the arithmetic operator of a leaf a + b (Args are a and b); "[]" a computed
	// index (Args are the object and the index); "?:" a conditional c ? a : b (Args are c, a
	// and b, each explained as a whole expression is).
	Infix string
	Args  []*Explain
	// Grouped says the leaf is an operation shown by its value alone (a ?? b): it
	// is written in parentheses, so that its value does not read as its last operand's.
	Grouped bool
	// Fields are the fields a predicate argument reads of each item (.rq_active,
	// .http.downstream_rq_active: "rq_active", "http.downstream_rq_active"), in the order
	// written, so that a list of samples can be shown by the values the predicate read.
	Fields []string

	// The leaf's program is compiled when a judge first asks for it: vet and plan never do,
	// and compiling every leaf of every expression was a third of decoding's time.
	names *Names
	// lets are the bindings in force where the node is (let i = findIndex(…)): those it
	// reads are written before its source when it is compiled (see withLets).
	lets []letBinding
	once sync.Once
	prog *vm.Program
	// whole is the source of a node with an Op (a comparison, a negation, a conjunction),
	// for Holds; its program is compiled at the first ask, as a leaf's.
	whole     string
	wholeOnce sync.Once
	wholeProg *vm.Program
}

// Holds evaluates a node with an Op as a boolean in env: held is its value, ok is false when
// it cannot say (a node that does not compile on its own, an error, not a boolean). The
// explanation of a && b shows b as not evaluated where a is false, as the judge did not
// evaluate it either.
func (x *Explain) Holds(env map[string]any) (held, ok bool) {
	if x == nil {
		return false, false
	}
	if x.Op == "" {
		p := x.Value()
		if p == nil {
			return false, false
		}
		v, err := expr.Run(p, env)
		b, isBool := v.(bool)
		return b, err == nil && isBool
	}
	if x.names == nil || x.whole == "" {
		return false, false
	}
	x.wholeOnce.Do(func() {
		prog, _, err := compileProgram(withLets(x.lets, x.whole), &exprChecker{names: x.names, part: true}, x.names.envOption())
		if err == nil {
			x.wholeProg = prog
		}
	})
	if x.wholeProg == nil {
		return false, false
	}
	v, err := expr.Run(x.wholeProg, env)
	b, isBool := v.(bool)
	return b, err == nil && isBool
}

// Source is the node's source text: a leaf's as written, a node with an Op as the parser
// prints it.
func (x *Explain) Source() string {
	if x.Op == "" {
		return x.Src
	}
	return x.whole
}

// Derived is a leaf of src, an expression over what x reads, compiled against the names x
// compiles against (nil when x has none): a value an explanation adds, such as the first
// item that decided an all().
func (x *Explain) Derived(src string) *Explain {
	if x == nil || x.names == nil {
		return nil
	}
	return &Explain{Src: src, names: x.names, lets: x.lets}
}

// WithLets is the leaf's source with the lets it reads written before it ("let r =
// fortio.requests; r"): what types it, and gives it a unit, as vet types it.
func (x *Explain) WithLets() string { return withLets(x.lets, x.Src) }

// Value is the program that evaluates the leaf, or nil for a literal or a leaf that does not
// compile on its own (a predicate argument, a closure variable).
func (x *Explain) Value() *vm.Program {
	if x.names == nil || x.Op != "" {
		return nil
	}
	x.once.Do(func() {
		prog, _, err := compileProgram(withLets(x.lets, x.Src), &exprChecker{names: x.names, part: true}, x.names.envOption())
		if err == nil {
			x.prog = prog
		}
	})
	return x.prog
}

// deltaFunc and hostsFunc are the environment names that delta("a","b") and <snapshot>.hosts
// are rewritten to; envoyFunc the one a read below an Envoy Any of unknown message is (its
// fields are typed, and left-out ones defaulted, by the "@type" at run time).
const (
	deltaFunc    = "__delta"
	hostsFunc    = "__hosts"
	envoyFunc    = "__envoy"
	envoyCmpFunc = "__envoyCmp"
	// envoyJSONFunc is the one a read below free-form JSON (a Struct) is: a key it lacks
	// errs unless read with ?. (xdstype.ReadJSON).
	envoyJSONFunc = "__envoyJSON"
)

// DeltaFunc, HostsFunc, EnvoyFunc and EnvoyCmpFunc are the environment names the
// interpreter must bind (EnvoyFunc to xdstype.ReadAny, EnvoyCmpFunc to EnvoyCompared).
const (
	DeltaFunc    = deltaFunc
	HostsFunc    = hostsFunc
	EnvoyFunc    = envoyFunc
	EnvoyCmpFunc = envoyCmpFunc
	// EnvoyJSONFunc is bound to xdstype.ReadJSON.
	EnvoyJSONFunc = envoyJSONFunc
)

// Names is what the expressions of one scenario can refer to, typed as the step kinds
// declare (schema.Recorder): vet checks every expression against them, editors complete with
// them.
type Names struct {
	// Results are the named steps that record a result, by name.
	Results map[string]*StepResult
	Vars    map[string]any
	// Namespaces are the keys of the scenario's ephemeral namespaces (ns.<key>).
	Namespaces map[string]bool
	// Backends and Blackholes are the local target's endpoints.
	Backends   map[string]bool
	Blackholes map[string]bool
	// DeltaErr, when set, says why a plain delta cannot be used (e.g. two sources).
	DeltaErr string
	// Steps are every named step: started.<name> and ended.<name> read their times.
	Steps map[string]bool
	// AllowReset are the counters the scenario's allowReset lists: only their deltas may be
	// negative when judged (any other counter that went down fails as a reset).
	AllowReset map[string]bool
	// DeltaFrom and DeltaTo are the snapshots a plain delta compares.
	DeltaFrom, DeltaTo string
	// Target is the target the scenario runs on ("local", "kube"; "": not known): what
	// target.<name> holds.
	Target string
	// Clusters are the names of the scenario's clusters (clusters:): target.clusters' keys.
	Clusters []string
	// vars is the type of vars, from their values (see varsType).
	vars *schema.Type
	// env is compileEnv made once, when every name is known (see freeze): a scenario's
	// expressions are compiled against the same names. Nil: made for each compile.
	env map[string]any
	// envOpt gives expr env's types, worked out once by freeze: expr.Env would reflect over
	// every name again for each expression.
	envOpt expr.Option
	// compiled are the expressions compiled against the frozen names, by source: a kit's
	// expression or template written once is met again at each use (a third of a scenario's).
	compiled map[compiledKey]*Expr
	// varsRead are the vars the expressions compiled against these names read ("" for vars
	// as a whole): with what the CUE reads, whether a swept var can change a run.
	varsRead map[string]bool
	// outcomesRead are the steps whose outcome.<step> or error.<step> they read.
	outcomesRead map[string]bool
	// shadowed are the steps whose names hide a builtin an expression calls (shadowedCall),
	// with where it is first called.
	shadowed map[string]Pos
}

// noteShadowed records that an expression calls, at pos, the builtin the step name hides.
func (n *Names) noteShadowed(name string, pos Pos) {
	if n.shadowed == nil {
		n.shadowed = map[string]Pos{}
	}
	if _, ok := n.shadowed[name]; !ok {
		n.shadowed[name] = pos
	}
}

// noteVars records the vars e reads, and the steps whose outcome it reads.
func (n *Names) noteVars(e *Expr) {
	if n == nil {
		return
	}
	if len(e.Outcomes) > 0 || e.allOutcomes {
		if n.outcomesRead == nil {
			n.outcomesRead = map[string]bool{}
		}
		for _, o := range e.Outcomes {
			n.outcomesRead[o] = true
		}
		if e.allOutcomes {
			n.outcomesRead[""] = true
		}
	}
	if len(e.vars) == 0 && !e.allVars {
		return
	}
	if n.varsRead == nil {
		n.varsRead = map[string]bool{}
	}
	for _, v := range e.vars {
		n.varsRead[v] = true
	}
	if e.allVars {
		n.varsRead[""] = true
	}
}

// readVar reports whether an expression compiled against n reads vars.<name>, or may (it
// reads vars as a whole).
func (n *Names) readVar(name string) bool {
	return n != nil && (n.varsRead[name] || n.varsRead[""])
}

// StepResult is what one named step records, as its kind declares it for the step's parameters.
type StepResult struct {
	Step string
	Kind string
	// Sampled says the step samples (every/while).
	Sampled bool
	Type    *schema.Type
	// Object, for a get step of a built-in kind, is the shape of what it records (ObjectKind
	// the kind, ObjectBase the step's path, ObjectFrom where vet knows it from: an Istio
	// release's CRDs, kubeshape.From): vet checks the names expressions read below it.
	Object     *kubeshape.Shape
	ObjectKind string
	ObjectBase []string
	ObjectFrom string
}

// compiledKey is what an expression compiled against frozen names depends on.
type compiledKey struct {
	src  string
	opts compileOpts
}

// freeze makes the compile environment of names once for every expression compiled against
// them; the names must not change after.
func (n *Names) freeze() {
	n.varsType() // typed once here: judges of parallel steps read frozen names (TypeOf) at once
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
		"delta":           schema.Stats{},
		deltaFunc:         func(string, string) schema.Stats { return nil },
		hostsFunc:         func(string) []schema.Host { return nil },
		envoyFunc:         xdstype.ReadAny,
		envoyCmpFunc:      EnvoyCompared,
		envoyJSONFunc:     xdstype.ReadJSON,
		nonEmptyFunc:      NonEmpty,
		divisorFunc:       Divisor,
		finiteFunc:        FiniteText,
		keyFunc:           Key,
		optKeyFunc:        OptKey,
		stringFunc:        StringOf,
		schema.OnlyIfFunc: schema.ReadOnlyIf,
		schema.SetFunc:    schema.ReadSet,
		schema.GroupFunc:  schema.ReadGroup,
		schema.CodeFunc:   schema.ReadCode,
		schema.CodeInFunc: schema.HasCode,
		"vars":            map[string]any{},
		"approx":          Approx,
		"within":          Within,
		"quantity":        Quantity,
		"has":             Has,
		"backends":        map[string]schema.Endpoint{},
		"blackholes":      map[string]schema.Endpoint{},
		"target":          map[string]any{},
		"started":         map[string]float64{},
		"ended":           map[string]float64{},
		"outcome":         map[string]string{},
		"error":           map[string]string{},
	}
	env[schema.CodeGetFunc] = schema.GetCode
	env[schema.LatencyFunc] = schema.ReadLatency
	if len(n.Namespaces) > 0 {
		ns := map[string]string{}
		for k := range n.Namespaces {
			ns[k] = ""
		}
		env["ns"] = ns
	}
	vars := map[string]any{}
	for k, v := range n.Vars {
		vars[k] = v
	}
	env["vars"] = vars
	for k, r := range n.Results {
		if r.Type.Kind == schema.TAny {
			env[k] = anyValue
			continue
		}
		env[k] = r.Type.Zero()
	}
	return env
}

// anyValue is a value of static type any (the type of get and config results).
var anyValue any = map[string]any{}

// compileEnv is Env without the names of results typed any: the checker reads those through
// $env, typed any (see exprChecker.ident).
func (n *Names) compileEnv() map[string]any {
	if n.env != nil {
		return n.env
	}
	env := n.Env()
	for k, r := range n.Results {
		if r.Type.Kind == schema.TAny {
			delete(env, k)
		}
	}
	return env
}

// Reserved names cannot be step names: every name an expression has besides the steps' (the
// names of Env without steps, vars or namespaces, and labrun's Functions, some of which the
// checker rewrites before expr sees them: deltaAcross). A step named
// like one of expr's builtins is refused only where an expression calls that builtin
// (shadowedCall): elsewhere the name is the step's, and nothing is hidden.
var Reserved = func() map[string]bool {
	m := map[string]bool{}
	for k := range (&Names{}).Env() {
		m[k] = true
	}
	for k := range Functions {
		m[k] = true
	}
	return m
}()

// shadowedCall reports a call in src of one of expr's builtins whose name is also a name of
// the compile env (a step's: count, now, len): expr takes the call for one of the step's
// result, which is no function, and says so obscurely ("unexpected token Operator("#")",
// "ExecResult is not callable"). The name and its column; "" when there is none.
func shadowedCall(src string, names *Names) (string, int) {
	if names == nil {
		return "", 0
	}
	tree, err := parser.Parse(src) // without the env: every builtin is one
	if err != nil {
		return "", 0
	}
	env := names.compileEnv()
	v := &builtinCalls{env: env}
	ast.Walk(&tree.Node, v)
	return v.name, v.col
}

// builtinCalls finds the first call of a builtin whose name env has.
type builtinCalls struct {
	env  map[string]any
	name string
	col  int
}

func (v *builtinCalls) Visit(node *ast.Node) {
	b, ok := (*node).(*ast.BuiltinNode)
	if !ok || v.name != "" {
		return
	}
	if _, builtin := builtin.Index[b.Name]; !builtin {
		return
	}
	if _, shadowed := v.env[b.Name]; shadowed {
		v.name, v.col = b.Name, col(b)
	}
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
	OutcomePending     = "pending"     // during the run: it has not started and still may (an at not yet come, a later step)
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

// Quantity is a Kubernetes resource quantity (a string, "500m", "1Gi", or a number) as a
// number: cpu in cores, memory in bytes.
func Quantity(v any) (float64, error) {
	q, ok := kubeshape.Quantity(v)
	if !ok {
		return 0, fmt.Errorf("%s is no Kubernetes resource quantity (e.g. \"500m\", \"1Gi\", 2)", FormatValue(v))
	}
	return q.AsApproximateFloat64(), nil
}

// Within reports whether lo <= x <= hi.
func Within(x, lo, hi float64) bool { return lo <= x && x <= hi }

// compileOpts says how an expression is compiled.
type compileOpts struct {
	asBool bool
	// empty says which of the expression's builtins over an empty collection the run produced
	// have no value (nonempty.go): a claim's (an expectation, an assert), an until's, or none.
	empty emptyRule
}

// compile compiles src (written at pos, the position of the CUE string literal) against names.
// Errors are positioned inside the string.
func compile(src string, pos Pos, names *Names, opts compileOpts) (*Expr, *Error) {
	e := &Expr{Src: src, Pos: pos}
	if i := strings.Index(src, "${"); i >= 0 && HasInterpolation(src) {
		// An expression reads names directly; ${...} there would stay a literal string.
		inner := src[i+2:]
		j := strings.Index(inner, "}")
		if j >= 0 {
			inner = strings.TrimSpace(inner[:j])
		}
		p := pos
		if p.IsValid() && (!strings.Contains(src, "\n") || p.lit != "") {
			p = p.shift(i).inString()
		}
		if j < 0 || inner == "" {
			// Nothing to quote back: "${vars.x" never closed, "${}" empty.
			return nil, &Error{Pos: p, Msg: fmt.Sprintf("in expression %q: ${ is not interpolated inside an expression (it would stay a literal string): expected the name itself, e.g. vars.x == 'a' instead of '${vars.x}' == 'a'", src)}
		}
		return nil, &Error{Pos: p, Msg: fmt.Sprintf("in expression %q: ${...} is not interpolated inside an expression (it would stay a literal string): write %s itself, e.g. %s == 'a' instead of '${%s}' == 'a'", src, inner, inner, inner)}
	}
	key := compiledKey{src, opts}
	if names != nil && names.env != nil {
		if c, ok := names.compiled[key]; ok {
			e := *c // the same program, refs and explanation; its own position
			e.Pos = pos
			names.noteVars(&e)
			return &e, nil
		}
	}
	c := &exprChecker{names: names, empty: opts.empty}
	options := []expr.Option{names.envOption()}
	if opts.asBool {
		options = append(options, expr.AsBool())
	}
	prog, typ, err := compileProgram(src, c, options...)
	if c.err != nil || err != nil {
		if name, at := shadowedCall(src, names); name != "" {
			names.noteShadowed(name, exprPos(pos, src, at))
			return nil, &Error{Pos: exprPos(pos, src, at), Msg: fmt.Sprintf("in expression %q: %s(…) calls the step %q, not expr's builtin %s: the step's name shadows it in every expression of the scenario (a step's result is no function); rename the step", src, name, name, name)}
		}
	}
	if c.err != nil || err != nil {
		if name, at := wordStepRead(src, names); name != "" {
			return nil, &Error{Pos: exprPos(pos, src, at), Msg: fmt.Sprintf("in expression %q: %s is a word of the expression language (expr reads it as itself wherever it is written), so the step %q cannot be read by its name: expected the step renamed to read its result (its outcome alone reads as outcome.%s)", src, name, name, name)}
		}
	}
	if c.err != nil {
		// The checker's error is the cause; expr's own (e.g. "Stats is not callable" for
		// delta("a", "typo")) only describes the node left unrewritten.
		return nil, &Error{Pos: exprPos(pos, src, c.err.col), Msg: fmt.Sprintf("in expression %q: %s", src, c.err.msg)}
	}
	if err != nil {
		return nil, exprError(err, src, pos, names)
	}
	e.Program = prog
	e.Refs = c.refs
	e.Names = c.idents
	e.deltaRead, e.deltaCol = c.deltaRead, c.deltaCol
	e.Outcomes = c.outcomes
	e.Reads = c.reads
	e.Type = typ
	e.Now = c.now
	e.Captures = c.captures
	e.ErrorReads = c.errorReads
	e.ObjectReads = c.objectReads
	e.vars, e.allVars, e.allOutcomes = c.vars, c.allVars, c.allOutcomes
	e.keyTests, e.stepMapsWhole = c.keyTests, c.readsStepMapsWhole()
	e.outcomeKeyed = len(e.Outcomes) == 0 && c.readsOutcomeKeyedOnly()
	names.noteVars(e)
	e.warnings = c.warns
	e.vacuous = c.vacuous
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

// exprWords are the words expr reads as operators (in, not, matches, let, if, …) or as literals
// (true, false, nil) wherever they are written: a step may have such a name (outcome.in reads
// it), but in.exit does not parse as a read of it.
var exprWords = map[string]bool{
	"in": true, "not": true, "or": true, "and": true, "matches": true, "contains": true,
	"startsWith": true, "endsWith": true, "let": true, "if": true, "else": true,
	"true": true, "false": true, "nil": true,
}

// wordStepRead finds, in an expression that did not compile, a read of a step named by one of
// exprWords as a name (in.exit): the step's name and its column (in runes); "" when none.
// Quoted text and field names after a dot (outcome.in) are not reads of it.
func wordStepRead(src string, names *Names) (string, int) {
	if names == nil {
		return "", -1
	}
	rs := []rune(src)
	var quote rune
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case quote != 0:
			if r == '\\' {
				i++
			} else if r == quote {
				quote = 0
			}
			continue
		case r == '\'' || r == '"' || r == '`':
			quote = r
			continue
		case !isIdentRune(r) || i > 0 && (isIdentRune(rs[i-1]) || rs[i-1] == '.'):
			continue
		}
		j := i
		for j < len(rs) && isIdentRune(rs[j]) {
			j++
		}
		word := string(rs[i:j])
		k := j
		for k < len(rs) && (rs[k] == ' ' || rs[k] == '\t') {
			k++
		}
		if exprWords[word] && names.Steps[word] && k < len(rs) && (rs[k] == '.' || rs[k] == '[') {
			return word, i
		}
		i = j - 1
	}
	return "", -1
}

// isIdentRune is a rune of an expr identifier.
func isIdentRune(r rune) bool {
	return r == '_' || r == '$' || unicode.IsLetter(r) || unicode.IsDigit(r)
}

// exprPos is the position of column col (0-based, in runes, as expr counts) of an expression
// written as a CUE string at pos: inside the string when it is on one line or its literal is
// known (a multi-line one's line and column), else the string's.
// Positions count bytes, as CUE's do: a column after non-ASCII text is its byte offset.
func exprPos(pos Pos, src string, col int) Pos {
	if pos.IsValid() && (!strings.Contains(src, "\n") || pos.lit != "") {
		off := len(src)
		for i := range src {
			if col == 0 {
				off = i
				break
			}
			col--
		}
		pos = pos.shift(off).inString()
	}
	return pos
}

// baseConfig is expr's default configuration, made once: conf.CreateNew fills a map of every
// builtin, and a scenario compiles hundreds of expressions. Compiles copy it and never write
// to its maps (no option given to them adds a function or disables a builtin).
var baseConfig = sync.OnceValue(conf.CreateNew)

// compileProgram is expr.Compile(src, options...) on a copy of baseConfig, with the checker c
// typing (and rewriting) the syntax before expr checks it; it returns the program and the
// checker's type of the expression. A checker's error leaves the program nil (c.err says why).
func compileProgram(src string, c *exprChecker, options ...expr.Option) (*vm.Program, *schema.Type, error) {
	config := *baseConfig()
	for _, op := range options {
		op(&config)
	}
	if len(config.Disabled) > 0 || len(config.Functions) > 0 || len(config.ConstFns) > 0 || len(config.Visitors) > 0 {
		return nil, nil, errors.New("labrun: an expr option changed the shared configuration") // a bug of labrun's
	}
	config.Check()
	tree, err := parser.ParseWithConfig(src, &config)
	if err != nil {
		return nil, nil, err
	}
	var quants []quantified
	if c.empty != noEmptyRule {
		quants = quantifiedOf(tree.Node)
	}
	var divs []division
	if !c.part && strings.ContainsAny(src, "/%") {
		divs = divisionsOf(tree.Node)
	}
	var floats map[*ast.BuiltinNode][2]string
	if !c.part && strings.Contains(src, "float") {
		floats = floatCalls(tree.Node)
	}
	var keys map[*ast.MemberNode][2]string
	if strings.Contains(src, "[") {
		keys = computedKeysOf(tree.Node) // as written: the rewrites below change what they print
	}
	c.zeroDivisors(divs)
	if c.err != nil {
		return nil, nil, nil
	}
	t := c.typeOf(&tree.Node)
	if c.err != nil {
		return nil, t, nil
	}
	c.apply()
	if _, err := checker.Check(tree, &config); err != nil {
		return nil, t, err
	}
	if len(quants) > 0 {
		// Checked as written first: __nonEmpty gives its collection back typed any, so that
		// expr would no longer see, say, a predicate that is a number (count(x, .requests)).
		wrapQuantifiers(quants, c.empty)
		if _, err := checker.Check(tree, &config); err != nil {
			return nil, t, err
		}
	}
	if wrapComputedKeys(&tree.Node, keys) {
		// Checked as written first, as above: __key gives its value back typed any.
		if _, err := checker.Check(tree, &config); err != nil {
			return nil, t, err
		}
	}
	if len(divs) > 0 && wrapDivisors(&tree.Node, divs, c.empty == noEmptyRule) {
		// Checked as written first, as above: __divisor gives its value back typed any.
		if _, err := checker.Check(tree, &config); err != nil {
			return nil, t, err
		}
	}
	if len(floats) > 0 && wrapFloats(&tree.Node, floats) {
		// Checked as written first, as above: __finiteText gives its value back typed any.
		if _, err := checker.Check(tree, &config); err != nil {
			return nil, t, err
		}
	}
	if config.Optimize {
		if err := optimizer.Optimize(&tree.Node, &config); err != nil {
			var fileError *file.Error
			if errors.As(err, &fileError) {
				return nil, t, fileError.Bind(tree.Source)
			}
			return nil, t, err
		}
	}
	prog, err := compiler.Compile(tree, &config)
	return prog, t, err
}

// methodCallRE is a builtin called as a method: f.codes.len().
var methodCallRE = regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_.]*)\.([A-Za-z]+)\(\s*\)`)

// unrecognizedRE is expr's error for a character outside its syntax.
var unrecognizedRE = regexp.MustCompile(`unrecognized character: U\+[0-9A-F]+ '(.)'`)

// asciiFor is what expressions write for a character a document (or a word processor's
// autocorrect) puts where an operator or a quote was meant.
var asciiFor = map[rune]string{
	'≥': ">=", '≤': "<=", '≠': "!=", '−': "-", '×': "*", '÷': "/",
	'“': `a straight quote, ' or "`, '”': `a straight quote, ' or "`,
	'‘': `a straight quote, ' or "`, '’': `a straight quote, ' or "`,
}

// exprError turns an expr compile error into an Error at the position inside the CUE string.
func exprError(err error, src string, pos Pos, names *Names) *Error {
	msg := err.Error()
	col := 0
	var fe *file.Error
	if errors.As(err, &fe) {
		msg = fe.Message
		col = fe.From // in runes from the expression's start, over its lines (Column is the line's)
	}
	if strings.Contains(msg, `unexpected token Operator("=")`) {
		switch {
		case strings.Contains(src, "=>"):
			msg += " (to compare, write >= for at least, == for equal)"
		case strings.Contains(src, "=<"):
			msg += " (to compare, write <= for at most, == for equal)"
		default:
			msg += " (to compare, write ==)"
		}
	}
	if strings.HasSuffix(msg, " is not callable") {
		// f.codes.len(): a method call of another language, where expr calls its builtins
		// with the value as their argument.
		if m := methodCallRE.FindStringSubmatch(src); m != nil {
			if _, ok := builtin.Index[m[2]]; ok {
				msg = fmt.Sprintf("%s.%s() calls %s as a method: %s is a value, not a function; expected %s(%s)", m[1], m[2], m[2], m[1]+"."+m[2], m[2], m[1])
			}
		}
	}
	if m := unrecognizedRE.FindStringSubmatch(msg); m != nil {
		// A character pasted from a document: say which one expressions write instead.
		if ascii, ok := asciiFor[[]rune(m[1])[0]]; ok {
			msg += fmt.Sprintf(": expected %s instead", ascii)
		}
	}
	if strings.HasSuffix(msg, "expression exceeds maximum allowed nodes") {
		// A claim generated or pasted to tens of thousands of characters: expr stops counting
		// somewhere inside it, which is not where anything is wrong; the whole is too long.
		msg, col = fmt.Sprintf("the expression is too long: expr compiles at most %d nodes (names, operators, literals) in one; expected a shorter one: write its claims as several expectations, or read a collection with all(), any() or len()", conf.DefaultMaxNodes), 0
	}
	if msg == "unexpected token EOF" {
		// expr says where the text ran out, not what it lacked.
		if at, open, want := unclosedBracket(src); at >= 0 {
			msg, col = fmt.Sprintf("%c is never closed: expected %c before the end of the expression", open, want), at
		} else if f := strings.Fields(src); len(f) > 0 {
			msg = fmt.Sprintf("the expression ends after %q: expected an operand (a name, number or string)", f[len(f)-1])
		}
	}
	if m := noIndexingRE.FindStringSubmatch(msg); m != nil {
		if x, key, ok := getCallAt(src, col); ok {
			// get(f, 'codes') of a step's result: expr's "type schema.LoadResult does not
			// support indexing" said neither what get reads nor how to read the field.
			msg = fmt.Sprintf("get(%s, %s): %s is a step's result (%s), whose fields are read by name: write %s.%s; get reads a key of a map (a snapshot's stats, a load's codes, a get step's object) or an item of a list, and gives nil where it is absent",
				x, key, x, strings.TrimPrefix(m[1], "schema."), x, strings.Trim(key, `'"`+"`"))
		}
	}
	if m := remainderTypesRE.FindStringSubmatch(msg); m != nil && (m[1] != "int" || m[2] != "int") {
		// f.requests % 2: expr's % takes whole numbers, and what expressions read of a run
		// (a count, a stat, a time) is a float64, a var's number typed when it is read; expr
		// said only "mismatched types float64 and int".
		words := func(t string) string {
			switch t {
			case "int":
				return "a whole number"
			case "float64":
				return "a number that may have a fraction (float64: a count, a stat or a time as expressions read it)"
			case "interface {}":
				return "a value typed when the run reads it (a var's number is a float64)"
			}
			return t
		}
		msg = fmt.Sprintf("%% is the remainder of two whole numbers, and its left side is %s, its right side %s: expected int() around each side that is not a whole number, e.g. int(f.requests) %% 2 == 0, int(f.requests) %% int(vars.k)", words(m[1]), words(m[2]))
	}
	if m := notBoolRE.FindStringSubmatch(msg); m != nil {
		kind := map[string]string{"float64": "number", "int": "number", "string": "string", "schema.Stats": "map of stats"}[m[1]]
		if kind == "" {
			kind = m[1]
		}
		msg = fmt.Sprintf("expected an expression that is true or false (a comparison such as x == y), got one whose value is a %s", kind)
	}
	if m := unknownNameRE.FindStringSubmatch(msg); m != nil {
		if called := regexp.MustCompile(`\b` + regexp.QuoteMeta(m[1]) + `\s*\(`); called.MatchString(src) {
			msg = unknownFunction(m[1])
		} else {
			msg = fmt.Sprintf("unknown name %s", m[1])
			known := names.known()
			if _, isVar := names.Vars[m[1]]; isVar {
				// ${path} for the var path: vars are read through vars.
				msg += fmt.Sprintf(" (did you mean vars.%s? a var is read as vars.<name>)", m[1])
			} else if s := closest(m[1], known); s != "" {
				msg += fmt.Sprintf(" (did you mean %s?)", s)
			}
			msg += "; known names: " + strings.Join(known, ", ")
		}
	}
	if m := redeclareRE.FindStringSubmatch(msg); m != nil && slices.Contains(names.known(), m[1]) {
		msg += fmt.Sprintf(": %s is a name of the run's (known names: %s); give the let another name", m[1], strings.Join(names.known(), ", "))
	}
	if m := durationLiteralRE.FindStringSubmatch(src); m != nil && strings.Contains(msg, "bad number syntax") {
		msg += fmt.Sprintf(`: %s is a duration, which expressions write as a number in the value's unit (a load's latencies are milliseconds: %s; started and ended are seconds) or as duration(%q)`, m[0], m[1], m[0])
	}
	return &Error{Pos: exprPos(pos, src, col), Msg: fmt.Sprintf("in expression %q: %s", src, msg)}
}

// remainderTypesRE is expr's refusal of a % of other than two ints.
var remainderTypesRE = regexp.MustCompile(`^invalid operation: % \(mismatched types (.+) and (.+)\)$`)

// redeclareRE is expr's refusal of a let named as a name of the environment.
var redeclareRE = regexp.MustCompile(`^cannot redeclare (\w+)$`)

// unclosedBracket is the rune index in src of the first (, [ or { that is never closed, with
// it and the bracket that closes it; -1 when every one is. Quoted text is skipped.
func unclosedBracket(src string) (int, rune, rune) {
	b := PairBrackets(src)
	if len(b.Unclosed) == 0 {
		return -1, 0, 0
	}
	at := b.Unclosed[0]
	open := rune(src[at])
	return utf8.RuneCountInString(src[:at]), open, map[rune]rune{'(': ')', '[': ']', '{': '}'}[open]
}

// functionSynonyms are the names other languages give functions expressions have: the one
// meant, or what to write instead.
var functionSynonyms = map[string]string{
	"average": "mean", "avg": "mean", "length": "len", "lenght": "len", "size": "len",
	"startswith": "hasPrefix", "endswith": "hasSuffix",
	"percentile": "a load's percentiles are its fields <load>.p50, .p90, .p99, .p999 (milliseconds)",
	"quantile":   "a load's percentiles are its fields <load>.p50, .p90, .p99, .p999 (milliseconds); an Envoy histogram's, <snapshot>.<histogram>.p99",
}

// unknownFunction says a called name is no function, with the one meant.
func unknownFunction(name string) string {
	msg := fmt.Sprintf("unknown function %s", name)
	var all []string
	for _, f := range builtin.Builtins {
		all = append(all, f.Name)
	}
	for f := range Functions {
		all = append(all, f)
	}
	sort.Strings(all)
	s, ok := functionSynonyms[strings.ToLower(name)]
	switch {
	case ok && slices.Contains(all, s):
		return msg + fmt.Sprintf(" (did you mean %s(…)?)", s)
	case ok:
		return msg + ": " + s
	}
	if s := closest(name, all); s != "" {
		return msg + fmt.Sprintf(" (did you mean %s(…)?)", s)
	}
	return msg + "; labrun's: approx, within, has, quantity, delta, deltaAcross; expr's: see expr-lang.org"
}

var (
	// durationLiteralRE is a Go duration written bare in an expression (200ms), and its number.
	durationLiteralRE = regexp.MustCompile(`\b([0-9]+(?:\.[0-9]+)?)(?:ms|us|µs|ns|s|m|h)\b`)
	unknownNameRE     = regexp.MustCompile(`^unknown name (\S+)`)
	notBoolRE         = regexp.MustCompile(`^expected bool, but got (\S+)`)
)

// known lists the names an expression can use, sorted.
func (n *Names) known() []string {
	var out []string
	for k := range n.Results {
		out = append(out, k)
	}
	out = append(out, "delta", "vars", "started", "ended", "outcome", "error")
	if len(n.Namespaces) > 0 {
		out = append(out, "ns")
	}
	if len(n.Backends) > 0 {
		out = append(out, "backends")
	}
	if len(n.Blackholes) > 0 {
		out = append(out, "blackholes")
	}
	sort.Strings(out)
	return out
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
	return explainNode(tree.Node, names, nil)
}

// letBinding is a let's name and the source of its value.
type letBinding struct{ name, value string }

// withLets writes before src the bindings of lets it reads, directly or through the value of
// another: let n = len(x); let m = n * 2; shows m as "let n = len(x); let m = n * 2; m". One it
// does not read is left out: vet refuses a let that nothing reads, and so would the compile.
func withLets(lets []letBinding, src string) string {
	if len(lets) == 0 {
		return src
	}
	needed := identifiers(src)
	var kept []letBinding
	for i := len(lets) - 1; i >= 0; i-- {
		if needed[lets[i].name] {
			kept = append(kept, lets[i])
			for id := range identifiers(lets[i].value) {
				needed[id] = true
			}
		}
	}
	var b strings.Builder
	for i := len(kept) - 1; i >= 0; i-- {
		fmt.Fprintf(&b, "let %s = %s; ", kept[i].name, kept[i].value)
	}
	return b.String() + src
}

// identifiers are the names src reads (every identifier, a field's name excluded).
func identifiers(src string) map[string]bool {
	out := map[string]bool{}
	tree, err := parser.Parse(src)
	if err != nil {
		return out
	}
	ast.Find(tree.Node, func(x ast.Node) bool {
		if id, ok := x.(*ast.IdentifierNode); ok {
			out[id.Value] = true
		}
		return false
	})
	return out
}

// explainNode explains n where the bindings lets are in force (see Explain.lets).
func explainNode(n ast.Node, names *Names, lets []letBinding) *Explain {
	switch n := n.(type) {
	case *ast.BinaryNode:
		switch {
		case n.Operator == "&&" || n.Operator == "and" || n.Operator == "||" || n.Operator == "or":
			return &Explain{Op: n.Operator, Left: explainNode(n.Left, names, lets), Right: explainNode(n.Right, names, lets), whole: n.String(), names: names, lets: lets}
		case comparisons[n.Operator]:
			return &Explain{Op: n.Operator, Left: leaf(n.Left, names, lets), Right: leaf(n.Right, names, lets), whole: n.String(), names: names, lets: lets}
		}
	case *ast.UnaryNode:
		if n.Operator == "!" || n.Operator == "not" {
			return &Explain{Op: n.Operator, Left: explainNode(n.Node, names, lets), whole: n.String(), names: names, lets: lets}
		}
	case *ast.VariableDeclaratorNode:
		// let i = findIndex(…); body: the value bound, then the body with the binding in
		// force, each part of it with its value as anywhere else.
		return &Explain{Op: "let", Name: n.Name, Left: leaf(n.Value, names, lets),
			Right: explainNode(n.Expr, names, append(slices.Clip(lets), letBinding{n.Name, n.Value.String()})),
			whole: n.String(), names: names, lets: lets}
	}
	return leaf(n, names, lets)
}

func leaf(n ast.Node, names *Names, lets []letBinding) *Explain {
	e := leafValue(n, names)
	if e.names != nil {
		e.lets = lets
	}
	switch n := n.(type) {
	case *ast.CallNode:
		if id, ok := n.Callee.(*ast.IdentifierNode); ok && id.Value != "delta" {
			e.Call = id.Value
			for _, a := range n.Arguments {
				e.Args = append(e.Args, leaf(a, names, lets))
			}
		}
	case *ast.BuiltinNode:
		e.Call = n.Name
		for _, a := range n.Arguments {
			if p, ok := a.(*ast.PredicateNode); ok {
				e.Args = append(e.Args, &Explain{Src: a.String(), Fields: itemFields(p.Node)})
			} else {
				e.Args = append(e.Args, leaf(a, names, lets))
			}
		}
	case *ast.BinaryNode:
		switch n.Operator {
		case "+", "-", "*", "/", "%", "**", "^":
			e.Infix = n.Operator
			e.Args = []*Explain{leaf(n.Left, names, lets), leaf(n.Right, names, lets)}
		default:
			e.Grouped = true
		}
	case *ast.ConditionalNode:
		// c ? a : b shows its condition with the values of its parts (f.qps (80 qps) > 100),
		// and the branch taken with its own: its value alone did not say why that branch.
		e.Infix = "?:"
		e.Args = []*Explain{explainNode(n.Cond, names, lets), explainNode(n.Exp1, names, lets), explainNode(n.Exp2, names, lets)}
	case *ast.MemberNode:
		// A computed index (perconn.ips[backends.a.address]) shows the index's value; the
		// object is shown as written (its value may be a big map).
		switch n.Property.(type) {
		case *ast.StringNode, *ast.IntegerNode:
		default:
			e.Infix = "[]"
			e.Args = []*Explain{{Src: n.Node.String()}, leaf(n.Property, names, lets)}
		}
	}
	return e
}

// itemFields are the fields a predicate's body reads of its item (.a.b, #.a.b), each once, in
// the order written; a field whose path another one extends (.http of .http.x) is left out.
func itemFields(body ast.Node) []string {
	var out []string
	var walk func(n ast.Node)
	walk = func(n ast.Node) {
		if path, ok := itemPath(n); ok {
			if !slices.Contains(out, path) {
				out = append(out, path)
			}
			return
		}
		switch n := n.(type) {
		case *ast.BinaryNode:
			walk(n.Left)
			walk(n.Right)
		case *ast.UnaryNode:
			walk(n.Node)
		case *ast.ConditionalNode:
			walk(n.Cond)
			walk(n.Exp1)
			walk(n.Exp2)
		case *ast.CallNode:
			for _, a := range n.Arguments {
				walk(a)
			}
		case *ast.BuiltinNode:
			for _, a := range n.Arguments {
				walk(a)
			}
		case *ast.MemberNode:
			walk(n.Node)
			walk(n.Property)
		case *ast.SliceNode:
			walk(n.Node)
		case *ast.ArrayNode:
			for _, a := range n.Nodes {
				walk(a)
			}
		}
	}
	walk(body)
	return out
}

// itemPath is the path of a member chain on a predicate's item (.a.b: "a.b").
func itemPath(n ast.Node) (string, bool) {
	m, ok := n.(*ast.MemberNode)
	if !ok {
		return "", false
	}
	prop, ok := m.Property.(*ast.StringNode)
	if !ok {
		return "", false
	}
	if p, ok := m.Node.(*ast.PointerNode); ok && p.Name == "" {
		return prop.Value, true
	}
	head, ok := itemPath(m.Node)
	if !ok {
		return "", false
	}
	return head + "." + prop.Value, true
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
	if _, ok := v.(fmt.Stringer); ok {
		return fmt.Sprintf("%v", v)
	}
	if _, ok := v.(error); ok {
		return fmt.Sprintf("%v", v)
	}
	// Lists, maps and records as an expression writes them: [1, "a"], {cid: "7"}, not Go's
	// [1 a] and map[cid:7], which lost the quotes of strings.
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Interface:
		if rv.IsNil() {
			return "nil"
		}
		return FormatValue(rv.Elem().Interface())
	case reflect.Map:
		if rv.Len() > 8 {
			return fmt.Sprintf("map with %d entries", rv.Len())
		}
		type kv struct{ k, v string }
		var parts []kv
		for it := rv.MapRange(); it.Next(); {
			parts = append(parts, kv{fmt.Sprint(it.Key().Interface()), FormatValue(it.Value().Interface())})
		}
		sort.Slice(parts, func(i, j int) bool { return parts[i].k < parts[j].k })
		out := make([]string, len(parts))
		for i, p := range parts {
			out[i] = formatKey(p.k) + ": " + p.v
		}
		return "{" + strings.Join(out, ", ") + "}"
	case reflect.Slice, reflect.Array:
		out := make([]string, rv.Len())
		for i := range out {
			out[i] = FormatValue(rv.Index(i).Interface())
		}
		return "[" + strings.Join(out, ", ") + "]"
	case reflect.Struct:
		// A record's struct (a logs entry) by the names expressions read its fields by,
		// the fields it leaves empty left out (a boolean is always said).
		rt := rv.Type()
		var out []string
		tagged := false
		for i := range rt.NumField() {
			name, _, _ := strings.Cut(rt.Field(i).Tag.Get("expr"), ",")
			if name == "" || name == "-" || !rt.Field(i).IsExported() {
				continue
			}
			tagged = true
			if f := rv.Field(i); !f.IsZero() || f.Kind() == reflect.Bool {
				out = append(out, name+": "+FormatValue(f.Interface()))
			}
		}
		if !tagged {
			break // not a record's: Go's own form
		}
		return "{" + strings.Join(out, ", ") + "}"
	}
	return fmt.Sprintf("%v", v)
}

// identKey is a map key written bare in an expression's map literal.
var identKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// formatKey writes a map key as an expression's map literal does: bare where it is a name,
// quoted otherwise ("503").
func formatKey(k string) string {
	if identKey.MatchString(k) {
		return k
	}
	return strconv.Quote(k)
}

// noIndexingRE is expr's error of an index or a get over a Go struct.
var noIndexingRE = regexp.MustCompile(`^type ([\w.]+) does not support indexing$`)

// getCallAt reads a call get(x, key) whose first argument starts at column col (in runes)
// of src, where expr's error points: x and key as written; ok is false when no such call
// is there.
func getCallAt(src string, col int) (x, key string, ok bool) {
	r := []rune(src)
	if col < 0 || col > len(r) {
		return "", "", false
	}
	before := strings.TrimRight(string(r[:col]), " \t\n")
	if !strings.HasSuffix(before, "get(") {
		return "", "", false
	}
	rest := "get(" + string(r[col:])
	depth, start, comma := 0, len("get("), -1
	for i := start; i < len(rest); i++ {
		switch rest[i] {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			if depth == 0 {
				if comma < 0 {
					return "", "", false
				}
				return strings.TrimSpace(rest[start:comma]), strings.TrimSpace(rest[comma+1 : i]), true
			}
			depth--
		case ',':
			if depth == 0 && comma < 0 {
				comma = i
			}
		}
	}
	return "", "", false
}
