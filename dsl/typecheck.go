package dsl

import (
	"fmt"
	"math"
	"regexp"
	"regexp/syntax"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/builtin"
	"github.com/expr-lang/expr/parser"

	"labrun.dev/labrun/schema"
)

// exprChecker types an expression's syntax with the types the scenario's steps declare
// (schema.Type) before expr checks it against Go types. It reports what expr cannot see (the
// shape of a var, a stat name, a stat read inside a closure over samples, a capture's group,
// a comparison with a value typed any), records every step value read (for the timeline) and
// every stat read (for the judge), and rewrites what plain expr cannot evaluate:
//   - <stats>.a.b.c becomes <stats>["a.b.c"] (Envoy's stat names hold dots);
//   - delta("x", "y") and deltaAcross("x", "y") become __delta("x", "y");
//   - <snapshot>.hosts becomes __hosts("<snapshot>");
//   - an alias (<load>.code503) becomes its field and key (<load>.codes["503"]);
//   - a result typed any (a get, a config) becomes get($env, "<name>"), which expr types any.
type exprChecker struct {
	names *Names
	err   *exprProblem
	warns []exprProblem
	// vacuous are comparisons that cannot fail or cannot hold whatever the run records: an
	// expectation's are errors once the scenario has no other problem (a newcomer's x >= 0 is
	// most often a read at the wrong moment, which is said first).
	vacuous  []exprProblem
	refs     []Ref
	reads    []Read
	idents   []string
	outcomes []string
	// deltaRead says the expression reads the plain delta (delta.<stat>), first at deltaCol.
	deltaRead bool
	deltaCol  int
	// vars are the vars the expression reads by name; allVars that it reads vars as a whole
	// (vars[k], keys(vars)), which may be any of them.
	vars    []string
	allVars bool
	// allOutcomes says it reads outcome or error as a whole: any step's.
	allOutcomes bool
	// stepMaps are the started, ended, outcome and error maps it reads as a whole; keyTests
	// the look-ups of a step's name written out in one of them (has(ended, "bg"), "bg" in
	// ended), and keyed the maps read only so: what a wait's until can watch change.
	stepMaps []*ast.IdentifierNode
	keyTests []Read
	keyed    map[*ast.IdentifierNode]bool
	// captures are the groups of exec steps' captures it reads.
	captures []CaptureRead
	// negated are the comparisons (== and in) under a ! or not: x not in [1, 2] is
	// not (x in [1, 2]), and holds, as x != 1 does, of an unset wrapper (unsetWrapper).
	negated map[*ast.BinaryNode]bool
	// errorReads are the steps whose error.<step> it reads.
	errorReads []ErrorRead
	// objectReads are the chains of names it reads below get steps' values; objScopes, beside
	// scopes, the chains whose elements the closures go through (nil where a closure's list is
	// no list below a get's value).
	objectReads []ObjectRead
	objScopes   []*objectScope
	// scopes are the element types of the closures the walk is in, innermost last.
	scopes []*schema.Type
	// lets are the variables of let declarations in scope; letKeys those of them whose value
	// vars fix (varKey).
	lets    map[string]*schema.Type
	letKeys map[string]fixedKey
	// letReads are the lets in scope whose value is a step's result or a part of it named
	// out (let c = f.codes): a read through the name is a read of the step (aliasRead).
	letReads map[string]Read
	// now says the expression calls now(): its value changes while a wait polls.
	now bool
	// deltaCalls are the rewritten delta calls, with the pair they read.
	deltaCalls map[ast.Node]Ref
	// guards are the keys has() has found on the way to what is being typed (the condition
	// of a ?: or the left of an &&): a stat of that name is read only where it exists.
	guards []string
	// getting says the walk types the key of a get(x, "key") (getKey): a stat it reads may be
	// absent, which get gives as nil.
	getting int
	// rewrites are made once the whole expression is typed (apply), so that messages quote
	// what the user wrote: a config value's default reads, reads below an Envoy Any.
	rewrites []func()
	// groupReads counts the capture groups read through __group (readGroup): a get(m, "g")
	// whose read added one is rewritten to it too (groupGets).
	groupReads int
	groupGets  map[*ast.BuiltinNode]string
	// groupStep is the step whose captures the latest __group read reads ("" unknown).
	groupStep string
	// typeSteps maps the struct and map types of the steps' results to the step whose result
	// they are part of (stepOfType), built at its first use.
	typeSteps map[*schema.Type]string
	// keyReadAt is the node of the latest chain whose last link was rewritten to a function
	// (keyRead: a load's code or latency), and keyGet that function's get: a get(x, "key")
	// whose read x.key is that node is handed through it (keyGets).
	keyReadAt *ast.Node
	keyGet    string
	keyGets   map[*ast.BuiltinNode]string
	// envoyCmps are the comparisons' sides that read below an Envoy Any (envoyCompared), by
	// the side's node as written.
	envoyCmps map[ast.Node]envoyCmp
	// empty says which builtins of emptyValue are handed their collections through
	// __nonEmpty (nonempty.go): a claim's, an until's, or none.
	empty emptyRule
	// part says the expression is a part of an explanation (the value shown beside it, or a
	// value read for the record): a division in it is not handed through __divisor, the whole
	// expression's judgement said whether it has a value (a part 1 / n of the guarded n == 0 ||
	// 1 / n > 0 is shown as measured, +Inf).
	part bool
	// keyHas are the look-ups (key in m) of a map whose keys can have no value
	// (schema.Type.KeyHas), by the function they are handed through.
	keyHas map[*ast.BinaryNode]string
}

// apply makes the rewrites the typing left for the end.
func (c *exprChecker) apply() {
	for _, r := range c.rewrites {
		r()
	}
	c.rewrites = nil
}

// exprProblem is an error or a warning at a column of the expression (0-based).
type exprProblem struct {
	col int
	msg string
	// code is a warning's lint code ("": LintUnknownStat).
	code string
}

// Read is a value of a named step that an expression reads: its result (Field, the first
// field read; "" for the whole result), or its start, end or outcome (Via).
type Read struct {
	Step  string
	Field string
	// Via is "started", "ended", "outcome" or "error" for those maps; "" for the result.
	Via string
	// Key is the name read below Field (codes["503"], codes.x: "503", "x"), "" where the read
	// goes no deeper.
	Key string
	// Col is where the read is written in the expression (0-based).
	Col int
	// Ran says it is read only where the step ran: where has(ended, "<step>") (or started,
	// error) holds, or outcome.<step> is compared equal to another outcome than "skipped" or
	// unequal to it (as ErrorRead.Guarded).
	Ran bool
}

// addRead records r, read where the guards hold.
func (c *exprChecker) addRead(r Read) {
	r.Ran = slices.Contains(c.guards, ranGuard(r.Step))
	c.reads = append(c.reads, r)
}

// Functions are the functions labrun adds to expr's, with their signatures: what editors
// offer inside an expression (expr's own builtins are documented at expr-lang.org).
var Functions = map[string]string{
	"approx":      "approx(got, want, rel): |got − want| ≤ |rel × want|, e.g. approx(fortio.qps, 100, 0.1)",
	"within":      "within(x, lo, hi): lo ≤ x ≤ hi",
	"quantity":    `quantity(q): a Kubernetes resource quantity ("500m", "1Gi", 2) as a number, cpu in cores (0.5), memory in bytes (1073741824), e.g. quantity(pod.spec.containers[0].resources.limits.cpu) == 0.5`,
	"has":         "has(map, key): the map (a snapshot, a delta, a capture, a load's codes, an object) holds key",
	"delta":       `delta("a", "b"): the counters of snapshot b minus those of a, two snapshots of one source`,
	"deltaAcross": `deltaAcross("a", "b"): delta of two snapshots of different sources, written on purpose`,
}

func (c *exprChecker) fail(col int, format string, args ...any) {
	if c.err == nil {
		c.err = &exprProblem{col: col, msg: fmt.Sprintf(format, args...)}
	}
}

func (c *exprChecker) warn(col int, format string, args ...any) {
	c.warns = append(c.warns, exprProblem{col: col, msg: fmt.Sprintf(format, args...)})
}

func col(n ast.Node) int { return n.Location().From }

// nilType is the type of nil: it compares with anything.
var nilType = &schema.Type{Kind: schema.TAny}

// typeOf types *node, rewriting it where needed; nil when the type is not known (expr then
// types it, or reports it).
func (c *exprChecker) typeOf(node *ast.Node) *schema.Type {
	switch n := (*node).(type) {
	case *ast.NilNode:
		return nilType
	case *ast.IntegerNode, *ast.FloatNode:
		return schema.NumberType
	case *ast.StringNode:
		return schema.StringType
	case *ast.BoolNode:
		return schema.BoolType
	case *ast.IdentifierNode:
		return c.ident(node, n, true)
	case *ast.PointerNode:
		return c.pointer(n)
	case *ast.MemberNode:
		return c.member(node)
	case *ast.ChainNode:
		return c.typeOf(&n.Node)
	case *ast.SliceNode:
		t := c.typeOf(&n.Node)
		c.typeOf(&n.From)
		c.typeOf(&n.To)
		return t
	case *ast.UnaryNode:
		if b, ok := n.Node.(*ast.BinaryNode); ok && (n.Operator == "!" || n.Operator == "not") && (b.Operator == "==" || b.Operator == "in") {
			if c.negated == nil {
				c.negated = map[*ast.BinaryNode]bool{}
			}
			c.negated[b] = true
		}
		t := c.typeOf(&n.Node)
		switch n.Operator {
		case "!", "not":
			// expr negates a bool only: !vars.strict of a string var errs when judged
			// ("interface conversion"), after the run, instead of at vet.
			c.operand(n, "the operand of "+n.Operator, t, n.Node, schema.TBool)
			return schema.BoolType
		case "-", "+":
			c.operand(n, "a number", t, n.Node, schema.TNumber)
			if t != nil && t.Kind == schema.TNumber {
				return t
			}
			return schema.NumberType
		}
	case *ast.BinaryNode:
		written := n.String()
		t := c.binary(n)
		if fn := c.keyHas[n]; fn != "" {
			// key in <codes>: whether a code counted any response, of a load that got none.
			c.rewrites = append(c.rewrites, func() {
				call := ast.Node(&ast.CallNode{Callee: &ast.IdentifierNode{Value: fn}, Arguments: []ast.Node{n.Right, n.Left, &ast.StringNode{Value: written}}})
				if n.Operator == "not in" {
					call = &ast.UnaryNode{Operator: "!", Node: call}
				}
				ast.Patch(node, call)
			})
		}
		return t
	case *ast.CallNode:
		return c.call(node, n)
	case *ast.BuiltinNode:
		written := n.String()
		t := c.builtin(n)
		if fn := c.keyGets[n]; fn != "" {
			// get(<a load's codes>, k) ?? 0, get(f, "p99") ?? 0: a code or a latency of a
			// load that got no answer is no nil that ?? makes a 0.
			c.rewrites = append(c.rewrites, func() {
				ast.Patch(node, &ast.CallNode{Callee: &ast.IdentifierNode{Value: fn}, Arguments: []ast.Node{n.Arguments[0], n.Arguments[1], &ast.StringNode{Value: written}}})
			})
		}
		if n.Name == "string" && len(n.Arguments) == 1 {
			// One spelling of a number: string(x) as ${x} writes it (StringOf).
			c.rewrites = append(c.rewrites, func() {
				ast.Patch(node, &ast.CallNode{Callee: &ast.IdentifierNode{Value: stringFunc}, Arguments: []ast.Node{n.Arguments[0]}})
			})
		}
		if step, ok := c.groupGets[n]; ok {
			// get(.captures, "cid") of an entry whose line did not match gives nil, and
			// nil != '8' held: it reads the group as __group does.
			c.rewrites = append(c.rewrites, func() {
				ast.Patch(node, &ast.CallNode{Callee: &ast.IdentifierNode{Value: schema.GroupFunc}, Arguments: []ast.Node{n.Arguments[0], n.Arguments[1], &ast.StringNode{Value: step}}})
			})
		}
		return t
	case *ast.PredicateNode:
		return c.typeOf(&n.Node)
	case *ast.ConditionalNode:
		c.typeOf(&n.Cond)
		restore := c.guard(n.Cond, false)
		a := c.typeOf(&n.Exp1)
		restore()
		restore = c.guard(n.Cond, true) // the else branch reads where cond is false
		b := c.typeOf(&n.Exp2)
		restore()
		// A time in one branch and a bare number in the other (x ? f.p50 : 40): the number
		// is read as the time's unit; duration('40ms') there is that time in it.
		for i, e := range []*ast.Node{&n.Exp1, &n.Exp2} {
			t, other := b, a
			if i == 1 {
				t, other = a, b
			}
			if d := c.durationIn(e, t); d != nil {
				if i == 0 {
					a = d
				} else {
					b = d
				}
				continue
			}
			if isTime(t) && !isTime(other) {
				c.bareWarn(col(*e), n.String(), []ast.Node{n.Exp2, n.Exp1}[i].String(), t, *e)
			}
		}
		switch {
		case !known(a) || !known(b):
		case a.Kind == b.Kind:
			return a
		default:
			c.fail(col(n), "%s: its branches have different types, %s (%s) and %s (%s): a comparison or a function of it cannot hold for both; give both branches one type", n, n.Exp1, describe(a), n.Exp2, describe(b))
		}
	case *ast.VariableDeclaratorNode:
		if ast.Find(n.Expr, func(x ast.Node) bool { id, ok := x.(*ast.IdentifierNode); return ok && id.Value == n.Name }) == nil {
			// Nothing reads it: its value decides nothing, a false claim in it included
			// (`let a = x == 0; y == 5` is y == 5).
			c.fail(col(n), "let %s = %s: nothing after it reads %s, so it decides nothing (the value is %s's alone); expected a let whose name the expression reads: write a claim of its own as an expectation, or join claims with &&", n.Name, n.Value, n.Name, n.Expr)
		}
		fk, fixed := c.varKey(n.Value)
		alias, aliased := c.stepPath(n.Value) // as written: typing rewrites it
		t := c.typeOf(&n.Value)
		prev, had := c.lets[n.Name]
		prevKey, hadKey := c.letKeys[n.Name]
		prevRead, hadRead := c.letReads[n.Name]
		if c.lets == nil {
			c.lets, c.letKeys, c.letReads = map[string]*schema.Type{}, map[string]fixedKey{}, map[string]Read{}
		}
		c.lets[n.Name] = t
		if fixed {
			c.letKeys[n.Name] = fk
		} else {
			delete(c.letKeys, n.Name)
		}
		if aliased {
			c.letReads[n.Name] = alias
		} else {
			delete(c.letReads, n.Name)
		}
		out := c.typeOf(&n.Expr)
		if hadRead {
			c.letReads[n.Name] = prevRead
		} else {
			delete(c.letReads, n.Name)
		}
		if had {
			c.lets[n.Name] = prev
		} else {
			delete(c.lets, n.Name)
		}
		if hadKey {
			c.letKeys[n.Name] = prevKey
		} else {
			delete(c.letKeys, n.Name)
		}
		return out
	case *ast.SequenceNode:
		if len(n.Nodes) > 1 {
			// a; b is b: expr computes a and drops it, a false claim included.
			last := n.Nodes[len(n.Nodes)-1]
			c.fail(col(n.Nodes[0]), "%s; …: only the last part of a sequence (a; b) decides, here %s; the parts before it are computed and dropped: expected one claim, so write each as an expectation of its own, or join them with &&", n.Nodes[0], last)
		}
		var t *schema.Type
		for i := range n.Nodes {
			t = c.typeOf(&n.Nodes[i])
		}
		return t
	case *ast.ArrayNode:
		var elem *schema.Type
		for i := range n.Nodes {
			if t := c.typeOf(&n.Nodes[i]); i == 0 {
				elem = t
			}
		}
		if elem == nil {
			elem = schema.AnyType
		}
		return &schema.Type{Kind: schema.TList, Elem: elem}
	case *ast.MapNode:
		for i := range n.Pairs {
			c.typeOf(&n.Pairs[i])
		}
		return &schema.Type{Kind: schema.TMap, Key: schema.StringType, Elem: schema.AnyType}
	case *ast.PairNode:
		c.typeOf(&n.Key)
		c.typeOf(&n.Value)
	}
	return nil
}

// ident types a name; read says the name is read as a whole (not as the root of a member
// chain, which records its own read).
func (c *exprChecker) ident(node *ast.Node, n *ast.IdentifierNode, read bool) *schema.Type {
	if t, ok := c.lets[n.Value]; ok {
		if a, ok := c.letReads[n.Value]; ok && read {
			a.Col = col(n)
			c.addRead(a)
		}
		return t
	}
	c.idents = append(c.idents, n.Value)
	names := c.names
	switch n.Value {
	case "delta":
		if !c.deltaRead {
			c.deltaRead, c.deltaCol = true, col(n)
		}
		return names.deltaType()
	case "vars":
		if read {
			c.allVars = true
		}
		return names.varsType()
	case "started", "ended":
		if read {
			c.stepMaps = append(c.stepMaps, n)
		}
		return names.stepMap(n.Value, schema.Num(schema.Seconds))
	case "outcome":
		c.allOutcomes = c.allOutcomes || read
		if read {
			c.stepMaps = append(c.stepMaps, n)
		}
		return names.stepMap(n.Value, outcomeType)
	case "error":
		c.allOutcomes = c.allOutcomes || read
		if read {
			c.stepMaps = append(c.stepMaps, n)
		}
		return names.stepMap(n.Value, schema.StringType)
	case "backends":
		return names.endpointMap(names.Backends, endpointType)
	case "blackholes":
		return names.endpointMap(names.Blackholes, blackholeType)
	case "target":
		return names.targetType()
	case "ns":
		if len(names.Namespaces) > 0 {
			return names.nsType()
		}
	case "$env":
		return schema.AnyType
	}
	r := names.Results[n.Value]
	if r == nil {
		return nil
	}
	if read {
		c.addRead(Read{Step: n.Value, Col: col(n)})
	}
	if r.Type.Kind == schema.TAny {
		// A get or config result has no static type (a list, a string, an object): read it as
		// get($env, "name"), which expr types any when the name is absent from the compile
		// environment (see compileEnv). Typed as a map, old[0] would not compile.
		ast.Patch(node, &ast.BuiltinNode{Name: "get", Arguments: []ast.Node{
			&ast.IdentifierNode{Value: "$env"}, &ast.StringNode{Value: n.Value}}})
	}
	return r.Type
}

// stepPath is the read that n, a let's value as written, makes of a step's result where n is
// the result or a part of it named out (f, f.codes, f.codes["503"], or such a part of another
// let of that kind); ok is false elsewhere (a computed value, an index, a ?:).
func (c *exprChecker) stepPath(n ast.Node) (r Read, ok bool) {
	var names []string
	for {
		m, isMember := n.(*ast.MemberNode)
		if !isMember {
			break
		}
		s, isName := m.Property.(*ast.StringNode)
		if !isName || m.Method {
			return Read{}, false
		}
		names = append(names, s.Value)
		n = m.Node
	}
	id, isIdent := n.(*ast.IdentifierNode)
	if !isIdent {
		return Read{}, false
	}
	slices.Reverse(names)
	if a, isAlias := c.letReads[id.Value]; isAlias {
		return a.below(names, col(id)), true
	}
	if _, shadowed := c.lets[id.Value]; shadowed || c.names == nil || c.names.Results[id.Value] == nil {
		return Read{}, false
	}
	return Read{Step: id.Value, Col: col(id)}.below(names, col(id)), true
}

// below is the read of the names below what r reads (r.Field, then r.Key), at col.
func (r Read) below(names []string, col int) Read {
	r.Col = col
	for _, n := range names {
		switch {
		case r.Field == "":
			r.Field = n
		case r.Key == "":
			r.Key = n
		default:
			return r
		}
	}
	return r
}

// pointer types # (the closure's element), #index and #acc.
func (c *exprChecker) pointer(n *ast.PointerNode) *schema.Type {
	switch n.Name {
	case "":
		if len(c.scopes) > 0 {
			return c.scopes[len(c.scopes)-1]
		}
	case "index":
		return schema.NumberType
	}
	return nil
}

// chainLink is one .name of a member chain.
type chainLink struct {
	m    *ast.MemberNode
	name string
	def  any // the field's default, when it has one
}

// member types a chain of .name accesses (a["b"] is the same as a.b) from its root outward:
// at a stats map the rest of the chain is one stat name.
func (c *exprChecker) member(node *ast.Node) *schema.Type {
	var chain []chainLink
	cur := *node
	for {
		m, ok := cur.(*ast.MemberNode)
		if !ok || m.Method {
			break
		}
		s, ok := m.Property.(*ast.StringNode)
		if !ok {
			break
		}
		chain = append(chain, chainLink{m: m, name: s.Value})
		cur = m.Node
	}
	slices.Reverse(chain)
	if len(chain) == 0 {
		// a[i], a[x]: a computed index.
		m := (*node).(*ast.MemberNode)
		written, mapWritten := m.String(), m.Node.String() // typing rewrites them
		fk, fixed := c.varKey(m.Property)
		t := c.typeOf(&m.Node)
		k := c.typeOf(&m.Property)
		if msg := fk.neverHeld(t, mapWritten); fixed && msg != "" {
			c.fail(fk.at(), "%s: %s", written, msg)
			return nil
		}
		return c.index(m, t, k)
	}
	if step, names, cols, ok := c.objectChain(*node); ok {
		c.objectRead(step, names, cols)
	}
	rootPtr := &chain[0].m.Node
	var t *schema.Type
	path := (*rootPtr).String()
	aliasGroup := -1 // the link that reads a step's capture group through a let (judged by noValue)
	switch (*rootPtr).(type) {
	case *ast.ConditionalNode, *ast.BinaryNode, *ast.UnaryNode:
		path = "(" + path + ")" // as written: (ok ? f.codes : g.codes)["503"]
	}
	rootName := ""
	if id, ok := (*rootPtr).(*ast.IdentifierNode); ok {
		rootName = id.Value
		if rootName == "vars" {
			c.vars = append(c.vars, chain[0].name)
		}
		if a, ok := c.letReads[id.Value]; ok {
			// let c = f.codes; c["503"] reads f.codes["503"], and has no value where that has
			// none (a partial load, a logs step's codes over no access line), as written out.
			names := make([]string, len(chain))
			for i, l := range chain {
				names[i] = l.name
			}
			read := a.below(names, col(id))
			c.addRead(read)
			if r := c.names.Results[read.Step]; r != nil && read.Key != "" && (r.Kind == "exec" && read.Field == "captured" || r.Kind == "logs" && read.Field == "capture") {
				// let cap = x.captured; cap.v: the step's capture group, judged as
				// x.captured.v is (noValue names the step), not as a logs entry's.
				c.captures = append(c.captures, CaptureRead{Step: read.Step, Group: read.Key, Guarded: slices.Contains(c.guards, read.Key)})
				if a.Key == "" {
					aliasGroup = 0 // let cap = x.captured; cap.v
					if a.Field == "" {
						aliasGroup = 1 // let r = x; r.captured.v
					}
				}
			}
		}
		if r := c.names.Results[id.Value]; r != nil {
			if _, shadowed := c.lets[id.Value]; !shadowed {
				read := Read{Step: id.Value, Field: chain[0].name, Col: col(id)}
				if len(chain) > 1 {
					read.Key = chain[1].name
				}
				c.addRead(read)
				if (r.Kind == "exec" && chain[0].name == "captured" || r.Kind == "logs" && chain[0].name == "capture") && len(chain) > 1 {
					c.captures = append(c.captures, CaptureRead{Step: id.Value, Group: chain[1].name, Guarded: slices.Contains(c.guards, chain[1].name)})
				}
			}
		}
		t = c.ident(rootPtr, id, false)
		if r := c.names.Results[id.Value]; r != nil {
			path = id.Value
		}
	} else {
		t = c.typeOf(rootPtr)
	}
	var ref *Ref
	if dr, ok := c.deltaCalls[*rootPtr]; ok {
		ref = &dr
	}
	var defaulted []int // links whose field reads as its default where the value leaves it out
	// keyReads rewrite the reads of keys (readJSON), after the defaults: a map Envoy left out
	// is read as its default (empty) map, whose key then has no value.
	var keyReads []func()
	defer func() {
		if len(defaulted) > 0 {
			c.rewrites = append(c.rewrites, func() { readDefaults(node, chain, defaulted) })
		}
		c.rewrites = append(c.rewrites, keyReads...)
	}()
	for i := 0; i < len(chain); i++ {
		link := chain[i]
		at := col(link.m)
		if t == schema.EnvoyAnyType {
			side := *node // a comparison's side, which envoyCompared may record
			// After a map key's read (typed_extension_protocol_options["…"]).
			keyReads = append(keyReads, func() {
				cmp, compared := c.envoyCmps[side]
				readAny(node, chain, i, cmp, compared)
			})
			return envoyReadType
		}
		if t == schema.EnvoyJSONType {
			at := path
			keyReads = append(keyReads, func() { readJSON(node, chain, i, at, len(chain)) })
			return schema.EnvoyJSONType
		}
		if t == nil || t.Kind == schema.TAny {
			return t
		}
		switch {
		case i == 0 && rootName == "vars":
			f := t.Field(link.name)
			if f == nil {
				c.fail(at, "no var named %q (declare it under vars); declared: %s", link.name, keys(c.names.Vars))
				return nil
			}
			t = f.Type
		case i == 0 && (rootName == "started" || rootName == "ended" || rootName == "outcome" || rootName == "error"):
			if !c.names.Steps[link.name] {
				c.fail(at, "%s.%s: no step named %q%s; named steps: %s", rootName, link.name, link.name, didYouMean(link.name, sortedKeys(c.names.Steps)), keys(c.names.Steps))
				return nil
			}
			c.addRead(Read{Step: link.name, Via: rootName, Col: at})
			if rootName == "outcome" || rootName == "error" {
				c.outcomes = append(c.outcomes, link.name)
			}
			if rootName == "error" || rootName == "started" || rootName == "ended" {
				c.errorReads = append(c.errorReads, ErrorRead{Step: link.name, Via: rootName, Guarded: slices.Contains(c.guards, ranGuard(link.name))})
			}
			t = t.Elem
		case i == 0 && (rootName == "backends" || rootName == "blackholes"):
			set := c.names.Backends
			if rootName == "blackholes" {
				set = c.names.Blackholes
			}
			if !set[link.name] {
				c.fail(at, "no local %s named %q%s; declared: %s", strings.TrimSuffix(rootName, "s"), link.name, didYouMean(link.name, sortedKeys(set)), keys(set))
				return nil
			}
			t = t.Elem
		case t.Kind == schema.TStats:
			if f := t.Field(link.name); f != nil && (link.name != "hosts" || i == 0) {
				if f.Absent != "" {
					c.fail(at, "%s.%s: %s", path, link.name, strings.ReplaceAll(f.Absent, "the snapshot", fmt.Sprintf("snapshot %q", path)))
					return nil
				}
				if link.name == "hosts" {
					if rootName == "" || c.names.Results[rootName] == nil {
						c.fail(at, "%s.hosts: hosts are read from a snapshot by its name: <snapshot>.hosts", path)
						return nil
					}
					ast.Patch(&link.m.Node, &ast.CallNode{
						Callee:    &ast.IdentifierNode{Value: hostsFunc},
						Arguments: []ast.Node{&ast.StringNode{Value: rootName}},
					})
					// Rewrite the chain up to here as the call; what follows reads the hosts.
					if i == len(chain)-1 {
						ast.Patch(node, link.m.Node)
						return f.Type
					}
					chain[i+1].m.Node = link.m.Node
					path += "." + link.name
					t = f.Type
					continue
				}
				path += "." + link.name
				t = f.Type
				continue
			}
			// The rest of the chain is one stat name.
			names := make([]string, 0, len(chain)-i)
			for _, l := range chain[i:] {
				names = append(names, l.name)
			}
			stat := strings.Join(names, ".")
			base := link.m.Node
			st := c.stat(t, stat, path, at, ref, rootName, i)
			ast.Patch(node, &ast.MemberNode{Node: base, Property: &ast.StringNode{Value: stat}, Optional: link.m.Optional})
			return st
		case t.Kind == schema.TStruct:
			f := t.Field(link.name)
			if f == nil && t.Alias != nil {
				if field, key, ok := t.Alias(link.name); ok {
					link.m.Node = &ast.MemberNode{Node: link.m.Node, Property: &ast.StringNode{Value: field}}
					link.m.Property = &ast.StringNode{Value: key}
					if m := t.Field(field).Type; m.KeyRead != "" {
						c.rewrites = append(c.rewrites, keyRead(node, chain, i, m.KeyRead, key, path+"."+link.name))
						c.readThrough(node, chain, i, m.KeyGet)
					}
					path += "." + link.name
					t = t.Field(field).Type.Elem
					continue
				}
			}
			if f == nil {
				mean := didYouMean(link.name, t.FieldNames())
				if t.Alias != nil {
					if plain := strings.ReplaceAll(link.name, "_", ""); plain != link.name {
						if _, _, ok := t.Alias(plain); ok {
							mean = fmt.Sprintf(" (did you mean %s?)", plain)
						}
					}
				}
				fields := strings.Join(t.FieldNames(), ", ")
				if t.Alias != nil {
					if _, _, ok := t.Alias("code503"); ok {
						// A load's code503 is an alias, not a field: named, and meant where a
						// name is one slip from it (cod503, Code503, code-503 read as code).
						fields += `, and code<NNN> for codes["<NNN>"] (code503)`
						if mean == "" {
							mean = codeAliasMeant(link.name)
						}
					}
				}
				c.fail(at, "%s.%s: %s has no field %q%s; its fields: %s", path, link.name, c.subject(path, rootName, i), link.name,
					mean, fields)
				return nil
			}
			if f.Absent != "" {
				c.fail(at, "%s.%s: %s", path, link.name, f.Absent)
				return nil
			}
			if f.Default != nil {
				chain[i].def = f.Default
				defaulted = append(defaulted, i)
			}
			if f.OnlyIf != "" {
				step := c.stepOfType(t)
				c.rewrites = append(c.rewrites, func() { readOnlyIf(node, chain, i, f.OnlyIf, f.OnlyIfWhy, step) })
			}
			if f.Read != "" {
				// A load's latency, however its result was reached: get(f, "p99") too.
				c.rewrites = append(c.rewrites, keyRead(node, chain, i, f.Read, link.name, path+"."+link.name))
				c.readThrough(node, chain, i, f.Read)
			}
			t = f.Type
		case t.Kind == schema.TMap:
			if t.Keys != nil && !slices.Contains(t.Keys, link.name) {
				c.fail(at, "%s.%s: %s", path, link.name, missingKey(t, path, link.name))
				return nil
			}
			if msg := keyOfNoForm(t, path, link.name); msg != "" {
				c.fail(at, "%s[%q]: %s", path, link.name, msg)
				return nil
			}
			c.knownKey(at, t, path, link.name)
			if t.KeyChecked {
				// A key of a map of an Envoy config: one it lacks errs unless read with ?.
				// (filter_metadata.isito == nil held).
				at := path
				keyReads = append(keyReads, func() { readJSON(node, chain, i, at, i+1) })
			}
			if t.KeyRead != "" {
				c.rewrites = append(c.rewrites, keyRead(node, chain, i, t.KeyRead, link.name, fmt.Sprintf("%s[%q]", path, link.name)))
				c.readThrough(node, chain, i, t.KeyGet)
			}
			if t.IsCapture() && !(i == 1 && rootName != "" && c.names.Results[rootName] != nil) && i != aliasGroup {
				// A group of a capture map read other than as <step>.capture.<group> (which
				// noValue judges, naming the step): a logs entry's captures, empty where its
				// line did not match, would read the group as "".
				step := c.stepOfType(t)
				c.rewrites = append(c.rewrites, func() { readGroup(node, chain, i, step) })
				c.groupReads++
				c.groupStep = step
			}
			t = t.Elem
			if i == 0 && rootName == "target" && link.name == "clusters" && c.names.Target == "kube" {
				t = c.names.clustersType()
			}
		case t.Kind == schema.TList:
			c.fail(at, "%s.%s: %s is %s: it has no field %q; index it (%s[0].%s) or go through it with all, any, filter, map", path, link.name, path, t.Word(), link.name, path, link.name)
			return nil
		default:
			c.fail(at, "%s.%s: %s is %s: it has no field %q", path, link.name, path, describe(t), link.name)
			return nil
		}
		path += "." + link.name
		if t != nil && t.Kind == schema.TStats && i == 0 && rootName != "" {
			if r := c.names.Results[rootName]; r != nil && r.Type.Kind == schema.TStruct {
				// A series aggregate: <series>.max is a map of stats.
				ref = &Ref{Kind: RefSeries, Name: rootName + "." + link.name}
			}
		}
	}
	return t
}

// readDefaults rewrites each link of chain whose field has a default (a config value's
// scalar, enum or list, which Envoy's JSON leaves out at its default) as `link ?? default`, so
// that reading it gives the default where the value leaves it out; node is the chain's outer
// end.
func readDefaults(node *ast.Node, chain []chainLink, links []int) {
	for _, i := range links {
		f := chain[i]
		lit := literalNode(defaultOf(f))
		if lit == nil {
			continue
		}
		or := &ast.BinaryNode{Operator: "??", Left: f.m, Right: lit}
		if i == len(chain)-1 {
			ast.Patch(node, or)
		} else {
			chain[i+1].m.Node = or
		}
	}
}

// readOnlyIf rewrites chain[i], a read of a field that has a value only where the struct's
// field cond is true, as __onlyIf(<the struct>, cond, name, why): schema.ReadOnlyIf errs
// (saying why) where cond is false instead of giving the zero value.
func readOnlyIf(node *ast.Node, chain []chainLink, i int, cond, why, step string) {
	call := &ast.CallNode{Callee: &ast.IdentifierNode{Value: schema.OnlyIfFunc}, Arguments: []ast.Node{
		chain[i].m.Node, &ast.StringNode{Value: cond}, &ast.StringNode{Value: chain[i].name}, &ast.StringNode{Value: why}, &ast.StringNode{Value: step}}}
	if i == len(chain)-1 {
		ast.Patch(node, call)
	} else {
		chain[i+1].m.Node = call
	}
}

// readGroup rewrites chain[i], a read of a capture group from a map that may lack it, as
// __group(<the map>, group): schema.ReadGroup errs where the map has no such group instead
// of giving "". step is the logs step whose captures they are, for the message.
func readGroup(node *ast.Node, chain []chainLink, i int, step string) {
	call := &ast.CallNode{Callee: &ast.IdentifierNode{Value: schema.GroupFunc}, Arguments: []ast.Node{
		chain[i].m.Node, &ast.StringNode{Value: chain[i].name}, &ast.StringNode{Value: step}}}
	if i == len(chain)-1 {
		ast.Patch(node, call)
	} else {
		chain[i+1].m.Node = call
	}
}

// stepOfType is the step whose result t (a struct or a map) is part of, or "": a logs
// step's entries and their captures, reached by any path (a closure's item, a let, a
// filter), are types of that step's result only (each step's Result builds its own). A type
// two steps' results share names neither.
func (c *exprChecker) stepOfType(t *schema.Type) string {
	if c.typeSteps == nil {
		c.typeSteps = map[*schema.Type]string{}
		shared := map[*schema.Type]bool{}
		for _, r := range c.names.Results {
			seen := map[*schema.Type]bool{}
			var walk func(t *schema.Type)
			walk = func(t *schema.Type) {
				if t == nil || seen[t] {
					return
				}
				seen[t] = true
				if t.Kind == schema.TStruct || t.Kind == schema.TMap {
					if s, ok := c.typeSteps[t]; ok && s != r.Step {
						shared[t] = true
					}
					c.typeSteps[t] = r.Step
				}
				walk(t.Elem)
				for _, f := range t.Fields {
					walk(f.Type)
				}
			}
			walk(r.Type)
		}
		for t := range shared {
			c.typeSteps[t] = ""
		}
	}
	return c.typeSteps[t]
}

// keyRead is the rewrite of chain[i], a read of key from a map whose keys can have no value
// (schema.Type.KeyRead, a load's codes), as fn(<the map>, key, written): the read errs where
// the key has no value however the map was reached (a let, a ?:, a pod of pods, a
// closure's item), not only where the judge sees the step's name written before it.
func keyRead(node *ast.Node, chain []chainLink, i int, fn, key, written string) func() {
	if w, ok := strings.CutPrefix(written, "#."); ok {
		written = "." + w // a closure's item, as written: all(f.pods, .code503 == 0)
	}
	return func() {
		call := &ast.CallNode{Callee: &ast.IdentifierNode{Value: fn}, Arguments: []ast.Node{
			chain[i].m.Node, &ast.StringNode{Value: key}, &ast.StringNode{Value: written}}}
		if i == len(chain)-1 {
			ast.Patch(node, call)
		} else {
			chain[i+1].m.Node = call
		}
	}
}

// readAny rewrites chain[i:], a read below an Envoy Any whose message only its "@type" says,
// as __envoy(<the Any>, "name", ...): xdstype.ReadAny types it at run time, giving a field the
// value leaves out its default; a name read with ?. is written "?name". A side of a
// comparison (compared) is read through __envoyCmp(<the Any>, written, op, cmp, lit, isLit,
// "name", ...) instead (EnvoyCompared).
func readAny(node *ast.Node, chain []chainLink, i int, cmp envoyCmp, compared bool) {
	args := []ast.Node{chain[i].m.Node}
	callee := envoyFunc
	if compared {
		callee = envoyCmpFunc
		args = append(args, &ast.StringNode{Value: cmp.written}, &ast.StringNode{Value: cmp.op}, &ast.StringNode{Value: cmp.cmp},
			&ast.StringNode{Value: cmp.lit}, &ast.BoolNode{Value: cmp.isLit})
	}
	for _, l := range chain[i:] {
		name := l.name
		if l.m.Optional {
			name = "?" + name
		}
		args = append(args, &ast.StringNode{Value: name})
	}
	ast.Patch(node, &ast.CallNode{Callee: &ast.IdentifierNode{Value: callee}, Arguments: args})
}

// readJSON rewrites chain[i:end], a read below free-form JSON (a Struct) or of a key of a map
// of an Envoy config, written at, as __envoyJSON(<the value>, at, "name", ...):
// xdstype.ReadJSON errs on a key the value lacks, unless it is read with ?. (written
// "?name"). What follows end reads the call's value.
func readJSON(node *ast.Node, chain []chainLink, i int, at string, end int) {
	args := []ast.Node{chain[i].m.Node, &ast.StringNode{Value: at}}
	for _, l := range chain[i:end] {
		name := l.name
		if l.m.Optional {
			name = "?" + name
		}
		args = append(args, &ast.StringNode{Value: name})
	}
	call := &ast.CallNode{Callee: &ast.IdentifierNode{Value: envoyJSONFunc}, Arguments: args}
	if end == len(chain) {
		ast.Patch(node, call)
	} else {
		chain[end].m.Node = call
	}
}

// defaultOf is the default the checker found for link's field (set by member's loop).
func defaultOf(l chainLink) any { return l.def }

// literalNode is the expression that stands for a default value (nil for none it can write).
func literalNode(v any) ast.Node {
	switch x := v.(type) {
	case string:
		return &ast.StringNode{Value: x}
	case bool:
		return &ast.BoolNode{Value: x}
	case float64:
		return &ast.FloatNode{Value: x}
	case []any:
		if len(x) == 0 {
			return &ast.ArrayNode{}
		}
	case map[string]any:
		if len(x) == 0 {
			return &ast.MapNode{}
		}
	}
	return nil
}

// subject names what a chain's prefix is, for messages: a step's result by the step.
func (c *exprChecker) subject(path, root string, i int) string {
	if i == 0 {
		if r := c.names.Results[root]; r != nil {
			return fmt.Sprintf("the result of %q (%s step)", root, schema.A(r.Kind))
		}
	}
	return path
}

// keyOfNoForm says why key can never be a key of the map t, whose keys have a form (a load's
// codes: status codes; its ips: ip:port): read, it would give nothing whatever the run
// records. "" when it can be.
func keyOfNoForm(t *schema.Type, path, key string) string {
	if t == nil || t.Kind != schema.TMap || t.Key == nil || t.Key.Form == "" || t.Key.Form.Holds(key) {
		return ""
	}
	return fmt.Sprintf("%q is not %s (a key of %s is %s): it is never there, so this reads the same whatever the run records", key, article(string(t.Key.Form)), path, t.Key.Doc)
}

// keyNeverHeld says why key can never be a key of t, the map written m: not one of its known
// keys (a capture's named groups), not of the form of its keys (a load's codes), not a stat
// of its closed catalogue (a local backend's). "" when it can be. has(m, key) and key in m
// ask the same, and are checked alike.
func keyNeverHeld(t *schema.Type, m, key string) string {
	if t == nil {
		return ""
	}
	if t.Kind == schema.TMap && t.Keys != nil && !slices.Contains(t.Keys, key) {
		return missingKey(t, m, key)
	}
	if msg := keyOfNoForm(t, m, key); msg != "" {
		return msg
	}
	if t.Kind == schema.TStats && t.Stats != nil && t.Stats.Catalogue != nil && t.Stats.Catalogue.Closed {
		cat := t.Stats.Catalogue
		st, known := cat.Lookup(key)
		if !known {
			return fmt.Sprintf("%s has no stat %q%s; its stats: %s", cat.What, key, didYouMean(key, cat.Names()), cat.Summary())
		}
		if t.Stats.Deltas && cat.Always && st.Kind != schema.Counter {
			// A delta holds the later snapshot's counters (interp.Delta); such a catalogue's
			// gauges are recorded as gauges every time.
			return fmt.Sprintf("a delta holds counters only, and %q is a %s of %s (a level, not a count); compare the snapshots instead", key, st.Kind, cat.What)
		}
	}
	return ""
}

// keyAlwaysHeld says why map t (read as m) has key in every run, whatever the run did: a
// snapshot of a source whose catalogue says every snapshot has that stat (a local backend's
// rq_total), or a delta of two, which holds the later one's counters: each counter of such a
// catalogue. "" when it may lack it.
func keyAlwaysHeld(t *schema.Type, m, key string) string {
	if t == nil || t.Kind != schema.TStats || t.Stats == nil || t.Stats.Catalogue == nil {
		return ""
	}
	cat := t.Stats.Catalogue
	if t.Stats.Deltas {
		if !cat.AlwaysHasCounter(key) {
			return ""
		}
		return fmt.Sprintf("a delta of %s holds the later snapshot's counters, and every snapshot of it has %q from its first on, whatever the run did (a backend no request reached too): this reads the same whatever the run records, so it proves nothing; test its value, e.g. %s.%s > 0 (only rq_<code> appears once such a response was sent)", cat.What, key, m, key)
	}
	if !cat.AlwaysHas(key) {
		return ""
	}
	return fmt.Sprintf("every snapshot of %s has %q from its first on, whatever the run did (a backend no request reached too): this reads the same whatever the run records, so it proves nothing; test its value, e.g. %s.%s > 0 (only rq_<code> appears once such a response was sent)", cat.What, key, m, key)
}

// keyFormMismatch says why a key of type k can never be a key of the map t: its values have
// another form (a host, or a URL, where the keys are ip:port addresses). "" when it can be.
func keyFormMismatch(t, k *schema.Type, key string) string {
	if t == nil || k == nil || t.Kind != schema.TMap || t.Key == nil || t.Key.Form == "" || k.Form == "" || k.Form.Meets(t.Key.Form) {
		return ""
	}
	msg := fmt.Sprintf("%s is %s, and a key here is %s: it is never one, so this reads the same whatever the run records", key, article(string(k.Form)), t.Key.Doc)
	if t.Key.Form == schema.FormAddress && (strings.HasSuffix(key, ".host") || strings.HasSuffix(key, ".url")) {
		msg += fmt.Sprintf("; %s.address is one", key[:strings.LastIndexByte(key, '.')])
	}
	return msg
}

// article puts "a" or "an" before a noun.
func article(noun string) string {
	if noun != "" && strings.ContainsRune("aeiouAEIOU", rune(noun[0])) && !strings.HasPrefix(noun, "URL") || strings.HasPrefix(noun, "HTTP") {
		return "an " + noun
	}
	return "a " + noun
}

// missingKey says a map with known keys has no key.
func missingKey(t *schema.Type, path, key string) string {
	what := "one of its keys"
	if t.Key != nil && t.Key.Doc != "" {
		what = t.Key.Doc
	}
	have := "there is none"
	if len(t.Keys) > 0 {
		have = "those are: " + strings.Join(t.Keys, ", ")
	}
	msg := fmt.Sprintf("%q is not %s%s (%s)", key, what, didYouMean(key, t.Keys), have)
	if t.Key != nil && t.Key.Hint != "" {
		h := t.Key.Hint
		if strings.Contains(h, "%s") {
			h = fmt.Sprintf(h, key)
		}
		msg += "; " + h
	}
	return msg
}

// index types a[k].
func (c *exprChecker) index(m *ast.MemberNode, t, k *schema.Type) *schema.Type {
	if t == schema.EnvoyJSONType && k != nil && k.Kind == schema.TNumber {
		return schema.EnvoyJSONType // an item of a JSON list is free-form JSON again
	}
	if t == nil || t.Kind == schema.TAny {
		return nil
	}
	at := col(m.Property)
	switch t.Kind {
	case schema.TList:
		if k != nil && k.Kind != schema.TNumber && k.Kind != schema.TAny {
			c.fail(at, "%s[%s]: a list is indexed by a number, got %s", m.Node, m.Property, k.Word())
			return nil
		}
		return t.Elem
	case schema.TMap, schema.TStats, schema.TStruct:
		if k != nil && k.Kind != schema.TString && k.Kind != schema.TAny {
			c.fail(at, "%s[%s]: %s is indexed by a string, got %s", m.Node, m.Property, t.Word(), k.Word())
			return nil
		}
		if msg := keyFormMismatch(t, k, m.Property.String()); msg != "" {
			c.fail(at, "%s[%s]: %s", m.Node, m.Property, msg)
			return nil
		}
		switch t.Kind {
		case schema.TMap:
			return t.Elem
		case schema.TStats:
			return schema.NumberType
		}
		return nil
	case schema.TString:
		return schema.StringType
	}
	c.fail(at, "%s[%s]: %s is %s: it cannot be indexed", m.Node, m.Property, m.Node, t.Word())
	return nil
}

// stat checks one stat read from a stats map t, and records the reference the judge checks
// before evaluating. i is the chain position of the stat (0: right under the root).
func (c *exprChecker) stat(t *schema.Type, stat, path string, at int, ref *Ref, root string, i int) *schema.Type {
	src := t.Stats
	if ref == nil && i == 0 {
		switch {
		case root == "delta":
			ref = &Ref{Kind: RefDelta}
		case c.names.Results[root] != nil:
			ref = &Ref{Kind: RefSnapshot, Name: root}
		}
	}
	if ref == nil && src != nil && src.ID != "" {
		// No snapshot named: the stat of whichever snapshot, sample or delta of its
		// snapshots the value is (let d = delta; d.x). Read where none of them holds it, it
		// would be expr's 0 of a missing key, a misspelt stat passing == 0.
		ref = &Ref{Kind: RefSource, Name: src.ID, Steps: strings.Join(c.sourceSteps(src.ID), ",")}
	}
	if ref != nil && ref.Kind == RefDelta && c.names.DeltaErr != "" {
		c.fail(at, "%s", c.names.DeltaErr)
		return nil
	}
	var s schema.Stat
	known := false
	if src != nil && src.Catalogue != nil {
		s, known = src.Catalogue.Lookup(stat)
	}
	if ref != nil {
		r := *ref
		r.Stat = stat
		r.Guarded = slices.Contains(c.guards, stat)
		if c.getting > 0 {
			// get(<stats>, "name") gives nil where the snapshot lacks the stat, and ?? a
			// default: a stat the source is known to have may be absent (created on first
			// use); one it is not known to have must be in one of its snapshots, or it is
			// a misspelling that nothing records.
			switch {
			case known:
				r.Guarded = true
			case src != nil && src.ID != "":
				r = Ref{Kind: RefSource, Name: src.ID, Steps: strings.Join(c.sourceSteps(src.ID), ","), Stat: stat, Guarded: r.Guarded}
			}
		}
		c.refs = append(c.refs, r)
	}
	out := schema.NumberType
	if src == nil || src.Catalogue == nil {
		return out
	}
	cat := src.Catalogue
	switch {
	case known && cat.IsHistogram(stat):
		c.fail(at, "%s.%s: %s is a histogram: read one of its quantiles, e.g. %s.%s.p99 (the snapshot needs histograms: true)", path, stat, stat, path, stat)
		return nil
	case known && s.Kind == schema.Histogram && !src.Histograms && !src.Deltas:
		c.fail(at, "%s.%s: %s is a quantile of a histogram, and %s records none: add histograms: true to its snapshot step", path, stat, stat, path)
		return nil
	case known && src.Deltas && s.Kind == schema.Gauge:
		from, to := c.deltaPair(ref)
		c.fail(at, "%s is a gauge (a level, not a count): it has no delta; compare the snapshots instead, e.g. %s.%s < %s.%s", stat, from, stat, to, stat)
		return nil
	case known && s.Kind == schema.Histogram && !schema.IsQuantile(stat):
		hist, q, _ := schema.QuantileOf(stat)
		c.fail(at, "%s.%s: Envoy writes no quantile %q of histogram %s: its stats dump holds %s only (P99.5 is .p995, P99.9 .p999)", path, stat, q, hist, quantileList(path+"."+hist))
		return nil
	case known && src.Deltas && s.Kind == schema.Histogram:
		from, to := c.deltaPair(ref)
		c.fail(at, "%s is a histogram quantile: it has no delta; compare the snapshots instead, e.g. %s.%s < %s.%s", stat, from, stat, to, stat)
		return nil
	case known:
		return schema.Num(s.Unit)
	}
	if where := cat.Elsewhere(stat); where != "" {
		mean := ""
		if up := strings.Replace(stat, "downstream_", "upstream_", 1); up != stat {
			if _, ok := cat.Lookup(up); ok {
				mean = fmt.Sprintf(" (did you mean %s, the cluster's count?)", up)
			}
		}
		c.fail(at, "%s.%s: %s is a stat of %s: a snapshot of %s never holds it%s", path, stat, stat, where, src.What, mean)
		return nil
	}
	for i := strings.LastIndexByte(stat, '.'); i > 0; i = strings.LastIndexByte(stat[:i], '.') {
		if s, ok := cat.Lookup(stat[:i]); ok && s.Kind != schema.Histogram {
			c.fail(at, "%s.%s: %s.%s is a number (%s): it has no field %q", path, stat, path, stat[:i], s.Kind, stat[i+1:])
			return nil
		}
		if cat.IsHistogram(stat[:i]) {
			c.fail(at, "%s.%s: Envoy writes no quantile %q of histogram %s: its stats dump holds %s only (P99.5 is .p995, P99.9 .p999)", path, stat, stat[i+1:], stat[:i], quantileList(path+"."+stat[:i]))
			return nil
		}
	}
	mean := didYouMean(stat, cat.Names())
	if cat.Closed {
		c.fail(at, "%s.%s: %s has no stat %q%s; its stats: %s", path, stat, cat.What, stat, mean, cat.Summary())
		return nil
	}
	c.warn(at, "%s.%s: %q is not a stat Envoy documents for a cluster%s: a snapshot holds it only if an extension records it", path, stat, stat, mean)
	return out
}

// quantileList lists the quantiles Envoy writes of histogram h (as read: mid.upstream_rq_time):
// "mid.upstream_rq_time.p0, .p25, … .p100".
func quantileList(h string) string {
	return h + "." + strings.Join(schema.Quantiles, ", .")
}

// sourceSteps are the steps whose results are snapshots, or series of snapshots, of the stat
// source id.
func (c *exprChecker) sourceSteps(id string) []string {
	var out []string
	for name, r := range c.names.Results {
		t := r.Type
		if t == nil {
			continue
		}
		if t.Kind == schema.TStruct {
			if f := t.Field("samples"); f != nil && f.Type.Kind == schema.TList {
				t = f.Type.Elem
			}
		}
		if t.Kind == schema.TStats && t.Stats != nil && t.Stats.ID == id {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// keyTest notes a look-up of key in m (has(m, key), key in m) where m is the started,
// ended, outcome or error map and key a step's name: a read of that step's start or end,
// which a wait's until watches change (checkWaitChanges), with Via the map that changes with
// it ("started", "ended"; "" for outcome, which holds every step's name from the start).
func (c *exprChecker) keyTest(m ast.Node, key *ast.StringNode) {
	id, ok := m.(*ast.IdentifierNode)
	if !ok || !slices.Contains(c.stepMaps, id) || c.names == nil || !c.names.Steps[key.Value] {
		return
	}
	if c.keyed == nil {
		c.keyed = map[*ast.IdentifierNode]bool{}
	}
	c.keyed[id] = true
	via := id.Value
	switch via {
	case "error":
		via = "started" // a step has an error (maybe "") from its start on
	case "outcome":
		// Every named step has an outcome (pending, skipped until it runs): the look-up holds
		// from the start.
		via = ""
	}
	c.keyTests = append(c.keyTests, Read{Step: key.Value, Via: via, Col: col(key)})
}

// readsStepMapsWhole reports whether the expression reads the started, ended, outcome or
// error map other than by looking up a step's name written out (len(ended), keys(outcome)):
// any step's start, end or outcome.
func (c *exprChecker) readsStepMapsWhole() bool {
	return slices.ContainsFunc(c.stepMaps, func(id *ast.IdentifierNode) bool { return !c.keyed[id] })
}

// readsOutcomeKeyedOnly reports whether the expression reads the outcome map, and only by
// looking up a step's name written out in it (has(outcome, "x"), "x" in outcome).
func (c *exprChecker) readsOutcomeKeyedOnly() bool {
	seen := false
	for _, id := range c.stepMaps {
		if id.Value == "outcome" {
			if !c.keyed[id] {
				return false
			}
			seen = true
		}
	}
	return seen
}

// ranGuard is the guard that says the step ran: error.<step> has a value where it holds.
func ranGuard(step string) string { return "ran:" + step }

// ranIf says which step's outcome x compares, when x holds (with neg: when it does not) only
// where the step ran: outcome.<step> == "<an outcome but skipped>", outcome.<step> !=
// "skipped" (either side).
func ranIf(x *ast.BinaryNode, neg bool) (string, bool) {
	eq := x.Operator == "=="
	if !eq && x.Operator != "!=" {
		return "", false
	}
	m, lit := x.Left, x.Right
	if _, ok := m.(*ast.StringNode); ok {
		m, lit = lit, m
	}
	mem, ok := m.(*ast.MemberNode)
	if !ok {
		return "", false
	}
	id, ok := mem.Node.(*ast.IdentifierNode)
	if !ok || id.Value != "outcome" {
		return "", false
	}
	step, ok := mem.Property.(*ast.StringNode)
	if !ok {
		return "", false
	}
	want, ok := lit.(*ast.StringNode)
	if !ok {
		return "", false
	}
	// Where it holds, == of another outcome and != of skipped say it ran; where it does
	// not, the other way round. Pending (a step not started yet) says nothing of it either way.
	if want.Value == OutcomePending || (want.Value == OutcomeSkipped) != (eq == neg) {
		return "", false
	}
	return step.Value, true
}

// guard adds the keys that has(x, "key") calls in cond look up to the guards, and returns
// the function that takes them away again.
//
// With negated, what follows is read where cond is false: the keys of !has(x, "key") calls
// joined by || count.
func (c *exprChecker) guard(cond ast.Node, negated bool) func() {
	n := len(c.guards)
	var walk func(x ast.Node, neg bool)
	walk = func(x ast.Node, neg bool) {
		switch x := x.(type) {
		case *ast.CallNode:
			if id, ok := x.Callee.(*ast.IdentifierNode); ok && id.Value == "has" && len(x.Arguments) == 2 && !neg {
				if k, ok := x.Arguments[1].(*ast.StringNode); ok {
					c.guards = append(c.guards, k.Value)
					if m, ok := x.Arguments[0].(*ast.IdentifierNode); ok && (m.Value == "error" || m.Value == "started" || m.Value == "ended") {
						c.guards = append(c.guards, ranGuard(k.Value))
					}
				}
			}
		case *ast.UnaryNode:
			if x.Operator == "!" || x.Operator == "not" {
				walk(x.Node, !neg)
			}
		case *ast.BinaryNode:
			if !neg && (x.Operator == "&&" || x.Operator == "and") || neg && (x.Operator == "||" || x.Operator == "or") {
				walk(x.Left, neg)
				walk(x.Right, neg)
			}
			if step, ok := ranIf(x, neg); ok {
				c.guards = append(c.guards, ranGuard(step))
			}
		}
	}
	walk(cond, negated)
	return func() { c.guards = c.guards[:n] }
}

// deltaPair names the two snapshots of a delta reference, for messages.
func (c *exprChecker) deltaPair(ref *Ref) (string, string) {
	if ref != nil && ref.Kind == RefDeltaPair {
		return ref.From, ref.To
	}
	return c.names.DeltaFrom, c.names.DeltaTo
}

// codeAliasMeant suggests a load's code<NNN> for a name that ends in three digits after a
// slip of "code" (cod503, cdoe503, Code503, codes503), "" otherwise.
func codeAliasMeant(name string) string {
	if len(name) < 4 {
		return ""
	}
	digits := name[len(name)-3:]
	if strings.Trim(digits, "0123456789") != "" {
		return ""
	}
	prefix := strings.TrimRight(name[:len(name)-3], "_-")
	if prefix == "" || EditDistance(strings.ToLower(prefix), "code") > 2 {
		return ""
	}
	return fmt.Sprintf(" (did you mean code%s?)", digits)
}

func didYouMean(s string, candidates []string) string {
	if m := closest(s, candidates); m != "" && m != s {
		return fmt.Sprintf(" (did you mean %s?)", m)
	}
	return ""
}

// call types a call of one of labrun's functions (approx, within, has, delta, deltaAcross)
// or of a function of the environment.
func (c *exprChecker) call(node *ast.Node, n *ast.CallNode) *schema.Type {
	id, ok := n.Callee.(*ast.IdentifierNode)
	if !ok {
		if m, isMember := n.Callee.(*ast.MemberNode); isMember {
			if name, isName := m.Property.(*ast.StringNode); isName {
				if t := c.typeOf(&m.Node); known(t) && (t.Kind == schema.TString || t.Kind == schema.TList || t.Kind == schema.TBool) {
					// e.stdout.startsWith('0'), as JavaScript or Python write it: vet said ok
					// and every run erred with expr's "invalid operation: int(string)".
					c.fail(col(n), "%s: %s is %s, which has no methods; %s", n, m.Node, describe(t), methodInstead(m.Node.String(), name.Value, n.Arguments))
					return nil
				}
			}
		}
		c.typeOf(&n.Callee)
		for i := range n.Arguments {
			c.typeOf(&n.Arguments[i])
		}
		return nil
	}
	if id.Value == "delta" || id.Value == "deltaAcross" {
		return c.deltaCall(node, n, id.Value)
	}
	// As written: typing rewrites delta("a", "b") to __delta, which messages do not show.
	written := make([]string, len(n.Arguments))
	for i, a := range n.Arguments {
		written[i] = a.String()
	}
	var fk fixedKey
	fixed := false
	if id.Value != "has" || len(n.Arguments) != 2 {
	} else if key, ok := n.Arguments[1].(*ast.StringNode); !ok {
		fk, fixed = c.varKey(n.Arguments[1])
	} else {
		// has(x.a, 'b') reads x.a.b; before typing, which rewrites x's read.
		if step, names, cols, ok := c.objectChain(n.Arguments[0]); ok {
			c.objectRead(step, append(names, key.Value), append(cols, col(key)))
		}
	}
	// approx's fraction as a var gives it (approx(x, 100, vars.tol) of tol: 10), read before
	// typing rewrites the var's read.
	relVar, relIsVar := 0.0, false
	if id.Value == "approx" && len(n.Arguments) == 3 {
		relVar, relIsVar = c.varNumber(n.Arguments[2])
	}
	args := make([]*schema.Type, len(n.Arguments))
	for i := range n.Arguments {
		args[i] = c.typeOf(&n.Arguments[i])
	}
	switch id.Value {
	case "quantity":
		if len(args) != 1 {
			c.fail(col(n), "quantity takes 1 argument, %s; got %d", Functions["quantity"], len(args))
			return schema.NumberType
		}
		if lit, ok := n.Arguments[0].(*ast.StringNode); ok {
			if _, err := Quantity(lit.Value); err != nil {
				c.fail(col(n.Arguments[0]), "%s: %v", n, err)
			}
		}
		return schema.NumberType
	case "approx", "within":
		if len(args) != 3 {
			c.fail(col(n), "%s takes 3 arguments, %s; got %d", id.Value, Functions[id.Value], len(args))
			return schema.BoolType
		}
		// The value and what it is compared with are of one unit (approx's 3rd argument is
		// a fraction): approx(fortio.avg, 3 * cl.connect_timeout, 0.1) set ms against s.
		against := []int{1}
		if id.Value == "within" {
			against = []int{1, 2}
		}
		// As in a comparison, duration('2s') there is the time's number in its unit. (A bare
		// number there is not warned of as bare-time: the repository's own claims write
		// within(started.b - ended.a, 5, 5.5) in 67 places.)
		for _, i := range against {
			if !isTime(args[0]) {
				break
			}
			if t := c.durationIn(&n.Arguments[i], args[0]); t != nil {
				args[i] = t
			}
		}
		for i, a := range args {
			c.operand(n.Arguments[i], fmt.Sprintf("%s's %s argument", id.Value, ordinal(i)), a, n.Arguments[i], schema.TNumber)
		}
		for _, i := range against {
			x, y := args[0], args[i]
			if msg := varNamedUnit(n, [2]string{written[0], written[i]}, n.Arguments[0], n.Arguments[i], x, y); msg != "" {
				c.fail(col(n.Arguments[i]), "%s", msg)
				return schema.BoolType
			}
			if x == nil || y == nil || x.Kind != schema.TNumber || y.Kind != schema.TNumber || x.Unit == y.Unit || x.Unit == schema.Plain || y.Unit == schema.Plain {
				continue
			}
			c.fail(col(n.Arguments[i]), "%s mixes units: %s is %s, %s is %s; convert one (e.g. seconds × 1000 = milliseconds)", n, n.Arguments[0], unitWords[x.Unit], n.Arguments[i], unitWords[y.Unit])
			return schema.BoolType
		}
		if id.Value == "approx" {
			rel, ok := constNumber(n.Arguments[2])
			relWritten := n.Arguments[2].String()
			if !ok && relIsVar {
				// approx(fortio.qps, 100, vars.tol) of tol: 10 held of any rate up to 1100,
				// where approx(fortio.qps, 100, 10) is refused.
				rel, ok = relVar, true
				relWritten = fmt.Sprintf("%s (%g)", written[2], relVar)
			}
			if ok && (rel < 0 || rel >= 1) {
				want := n.Arguments[1].String()
				if rel < 0 {
					c.fail(col(n.Arguments[2]), "approx(%s, %s, %s) never holds: the 3rd argument is a fraction of %s (0.1 accepts 10%% either way), and it is negative; write e.g. approx(%s, %s, 0.1)", n.Arguments[0], want, relWritten, want, n.Arguments[0], want)
					return schema.BoolType
				}
				accepts := fmt.Sprintf("every value from %s × (1 − %s) to %s × (1 + %s)", want, relWritten, want, relWritten)
				if w, ok := constNumber(n.Arguments[1]); ok {
					accepts = fmt.Sprintf("every value from %g to %g", w-rel*math.Abs(w), w+rel*math.Abs(w))
				}
				c.fail(col(n.Arguments[2]), "approx(%s, %s, %s): the 3rd argument is a fraction of %s (0.1 accepts 10%% either way), and %s accepts %s: a run where nothing happened (0) passes; write e.g. approx(%s, %s, 0.1), or within(%s, lo, hi) for bounds", n.Arguments[0], want, relWritten, want, relWritten, accepts, n.Arguments[0], want, n.Arguments[0])
			}
		} else if lo, ok := constNumber(n.Arguments[1]); ok {
			if hi, ok := constNumber(n.Arguments[2]); ok && lo > hi {
				c.fail(col(n.Arguments[1]), "within(%s, %s, %s) never holds: its bounds are lo, hi, and %s > %s; write within(%s, %s, %s)", n.Arguments[0], n.Arguments[1], n.Arguments[2], n.Arguments[1], n.Arguments[2], n.Arguments[0], n.Arguments[2], n.Arguments[1])
				return schema.BoolType
			}
		}
		if msg := c.shareRange(n, id.Value, written); msg != "" {
			c.vacuous = append(c.vacuous, exprProblem{col: col(n), msg: msg})
		}
		return schema.BoolType
	case "has":
		if len(args) != 2 {
			c.fail(col(n), "has takes a map and a key, e.g. has(mid, \"upstream_rq_pending_overflow\"); got %d argument(s)", len(args))
			return nil
		}
		m := args[0]
		if m != nil && m.Kind != schema.TAny && m.Kind != schema.TMap && m.Kind != schema.TStats && m.Kind != schema.TStruct {
			c.fail(col(n.Arguments[0]), "has(%s, …): has looks up a key in a map (a snapshot, a delta, a capture, a load's codes, an object), and %s is %s", n.Arguments[0], n.Arguments[0], describe(m))
			return nil
		}
		c.operand(n.Arguments[1], "has's key", args[1], n.Arguments[1], schema.TString)
		if m != nil && m.KeyHas != "" {
			// has(<codes>, k): whether a code counted any response, of a load that got none.
			src := fmt.Sprintf("has(%s, %s)", written[0], written[1])
			c.rewrites = append(c.rewrites, func() {
				ast.Patch(node, &ast.CallNode{Callee: &ast.IdentifierNode{Value: m.KeyHas}, Arguments: []ast.Node{n.Arguments[0], n.Arguments[1], &ast.StringNode{Value: src}}})
			})
		}
		if key, ok := n.Arguments[1].(*ast.StringNode); ok {
			c.keyTest(n.Arguments[0], key)
			c.knownKey(col(key), m, written[0], key.Value)
			if msg := keyNeverHeld(m, written[0], key.Value); msg != "" {
				c.fail(col(key), "has(%s, %q) is always false: %s", written[0], key.Value, msg)
			} else if msg := keyAlwaysHeld(m, written[0], key.Value); msg != "" {
				c.fail(col(key), "has(%s, %q) is always true: %s", written[0], key.Value, msg)
			}
		} else if msg := fk.neverHeld(m, written[0]); fixed && msg != "" {
			c.fail(fk.at(), "has(%s, %s) is always false: %s", written[0], written[1], msg)
		}
		return schema.BoolType
	}
	return nil
}

func ordinal(i int) string {
	return [...]string{"1st", "2nd", "3rd", "4th", "5th"}[min(i, 4)]
}

// deltaCall types delta("a", "b") (two snapshots of one source) or deltaAcross("a", "b") (of
// two sources, on purpose), and rewrites it to __delta.
func (c *exprChecker) deltaCall(node *ast.Node, n *ast.CallNode, fn string) *schema.Type {
	usage := fmt.Sprintf(`%s takes two snapshot names: %s("before", "after")`, fn, fn)
	if len(n.Arguments) != 2 {
		c.fail(col(n), "%s", usage)
		return nil
	}
	var args [2]string
	var types [2]*schema.Type
	for i, a := range n.Arguments {
		s, ok := a.(*ast.StringNode)
		if !ok {
			c.fail(col(a), "%s's arguments must be snapshot names in quotes: %s(\"before\", \"after\")", fn, fn)
			return nil
		}
		r := c.names.Results[s.Value]
		if r == nil || r.Type.Kind != schema.TStats {
			c.fail(col(n), "%s(%s, %s): no snapshot named %q%s; snapshots: %s", fn, n.Arguments[0], n.Arguments[1], s.Value, didYouMean(s.Value, c.names.snapshots()), strings.Join(c.names.snapshots(), ", "))
			return nil
		}
		args[i], types[i] = s.Value, r.Type
		c.addRead(Read{Step: s.Value, Col: col(s)})
	}
	if args[0] == args[1] {
		// One snapshot minus itself: every counter's delta is 0, whatever the run did, so
		// delta("after", "after").rq_5xx == 0 held of any run.
		c.fail(col(n.Arguments[1]), "%s(%q, %q) reads one snapshot twice: each of its counters minus itself is 0 whatever the run did; expected two snapshots, one taken before what is measured and one after it: %s(\"before\", \"after\")", fn, args[0], args[1], fn)
		return nil
	}
	a, b := types[0].Stats, types[1].Stats
	same := a != nil && b != nil && a.ID == b.ID
	switch {
	case fn == "delta" && !same:
		c.fail(col(n), "delta(%q, %q) compares snapshots of two sources (%s and %s): a counter of one minus a counter of the other means nothing unless you mean it; write deltaAcross(%q, %q) to say so", args[0], args[1], a.What, b.What, args[0], args[1])
		return nil
	case fn == "deltaAcross" && same:
		c.fail(col(n), "deltaAcross(%q, %q): both snapshots read %s: write delta(%q, %q)", args[0], args[1], a.What, args[0], args[1])
		return nil
	}
	call := &ast.CallNode{Callee: &ast.IdentifierNode{Value: deltaFunc}, Arguments: n.Arguments}
	ast.Patch(node, call)
	if c.deltaCalls == nil {
		c.deltaCalls = map[ast.Node]Ref{}
	}
	c.deltaCalls[*node] = Ref{Kind: RefDeltaPair, From: args[0], To: args[1]}
	src := *a
	src.Deltas = true
	if !same {
		src.What = a.What + " and " + b.What
	}
	return schema.StatsOf(&src)
}

// operand checks that an operand typed t (src) has the kind want; what names the place
// ("approx's 1st argument").
func (c *exprChecker) operand(at ast.Node, what string, t *schema.Type, src ast.Node, want schema.TypeKind) {
	if t == nil || t == nilType || t.Kind == schema.TAny || t.Kind == want {
		return
	}
	c.fail(col(at), "%s: expected %s, got %s, %s", what, (&schema.Type{Kind: want}).Word(), src, describe(t))
}

// comparableTypes reports whether values of a and b can be compared with op.
func comparableTypes(op string, a, b *schema.Type) bool {
	if a == nil || b == nil || a == nilType || b == nilType || a.Kind == schema.TAny || b.Kind == schema.TAny {
		return true
	}
	switch op {
	case "==", "!=":
		return a.Kind == b.Kind || (a.Kind == schema.TStats && b.Kind == schema.TMap) || (a.Kind == schema.TMap && b.Kind == schema.TStats)
	}
	return a.Kind == b.Kind && (a.Kind == schema.TNumber || a.Kind == schema.TString)
}

// unitWords names a unit in messages.
var unitWords = map[schema.Unit]string{
	schema.Count: "a count", schema.Millis: "milliseconds", schema.Seconds: "seconds",
	schema.PerSec: "a rate per second", schema.Bytes: "bytes",
}

// binary types a binary operation.
func (c *exprChecker) binary(n *ast.BinaryNode) *schema.Type {
	// As written: typing rewrites aliases and stat reads.
	written := [2]string{n.Left.String(), n.Right.String()}
	quantityMsg := ""
	switch n.Operator {
	case "==", "!=", "<", ">", "<=", ">=":
		quantityMsg = c.quantityCompared(n, written) // before typing rewrites the reads
	}
	if n.Operator == "==" || n.Operator == "!=" {
		// A whole capture compared (l1.capture == l2.capture) reads as {} where nothing
		// matched: two captures that matched nothing are equal. Read so, it has no value.
		for i, side := range []ast.Node{n.Left, n.Right} {
			if step, ok := c.wholeCapture(side); ok {
				c.captures = append(c.captures, CaptureRead{Step: step})
				// A capture is a map of strings; a map literal is another map type, and
				// expr never finds them equal: l.capture != {cid: '9'} held whatever
				// was captured, and l.capture == {cid: '8'} failed where it was 8.
				if lit, isMap := []ast.Node{n.Right, n.Left}[i].(*ast.MapNode); isMap {
					c.fail(col(n), "%s %s %s is always %v: a capture (a map of strings) is never equal to a map written in the expression; compare its groups one by one, e.g. %s.%s == '…'", written[0], n.Operator, written[1], n.Operator == "!=", written[i], firstKey(lit))
					return schema.BoolType
				}
			}
		}
	}
	if key, ok := n.Left.(*ast.StringNode); ok && (n.Operator == "in" || n.Operator == "not in") {
		// 'b' in x.a reads x.a.b; before typing, which rewrites x's read.
		if step, names, cols, ok := c.objectChain(n.Right); ok {
			c.objectRead(step, append(names, key.Value), append(cols, col(key)))
		}
	}
	fk, fixed := fixedKey{}, false
	if n.Operator == "in" || n.Operator == "not in" {
		fk, fixed = c.varKey(n.Left)
	}
	// A side that vars alone make (vars.t, a swept duration kept as Go writes it, "1m30s"),
	// read before typing rewrites it: durationStringCompare judges its value.
	var fixedSides [2]*fixedKey
	if n.Operator == "==" || n.Operator == "!=" {
		for i, side := range []ast.Node{n.Left, n.Right} {
			if _, lit := side.(*ast.StringNode); lit {
				continue
			}
			if fk, ok := c.varKey(side); ok {
				fixedSides[i] = &fk
			}
		}
	}
	l := c.typeOf(&n.Left)
	restore := func() {}
	switch n.Operator {
	case "&&", "and":
		restore = c.guard(n.Left, false)
	case "||", "or":
		restore = c.guard(n.Left, true) // !has(x, "k") || x.k > 0 reads k only where it is
	}
	r := c.typeOf(&n.Right)
	restore()
	if at, msg := clockMisused(n, written, l, r); msg != "" {
		c.fail(at, "%s", msg)
		return nil
	}
	switch n.Operator {
	case "==", "!=", "<", ">", "<=", ">=":
		c.bareTime(n, written, l, r)
		if t := c.durationIn(&n.Left, r); t != nil {
			l = t
		}
		if t := c.durationIn(&n.Right, l); t != nil {
			r = t
		}
		if msg := varNamedUnit(n, written, n.Left, n.Right, l, r); msg != "" {
			c.fail(col(n), "%s", msg)
			return schema.BoolType
		}
		c.knownLiteral(n, written, l, r)
		if quantityMsg != "" {
			c.fail(col(n), "%s", quantityMsg)
			return schema.BoolType
		}
		if lit, t, side := enumLiteral(n, l, r); t != nil && !slices.Contains(t.Enum, lit) {
			c.fail(col(n), "%s %s %s: %s is one of %s; %q never matches", n.Left, n.Operator, n.Right, side, strings.Join(t.Enum, ", "), lit)
			return schema.BoolType
		}
		if !comparableTypes(n.Operator, l, r) {
			want := "two values of one type"
			if n.Operator != "==" && n.Operator != "!=" {
				want = "two numbers or two strings"
			}
			c.fail(col(n), "%s %s %s compares %s, %s, with %s, %s: %s compares %s%s", n.Left, n.Operator, n.Right, n.Left, describe(l), n.Right, describe(r), n.Operator, want, durationTextBesideNumber(n, written, l, r))
			return schema.BoolType
		}
		if msg := numericStringOrder(n, written, l, r); msg != "" {
			c.fail(col(n), "%s", msg)
			return schema.BoolType
		}
		if msg := durationStringCompare(n, written, l, r, fixedSides); msg != "" {
			c.fail(col(n), "%s", msg)
			return schema.BoolType
		}
		if msg := formLiteralCompare(n, written, l, r); msg != "" {
			c.fail(col(n), "%s", msg)
			return schema.BoolType
		}
		if msg := durationBeside(n, written, l, r); msg != "" {
			c.fail(col(n), "%s", msg)
			return schema.BoolType
		}
		c.units(n, l, r)
		c.envoyCompared(n, written, l, r)
		switch n.Operator {
		case "!=", "<", "<=", ">", ">=":
			unsetWrapper(n, written, l, r)
		case "==":
			if c.negated[n] {
				unsetWrapper(n, written, l, r)
			}
		}
		if msg := c.vacuity(n, written, l, r); msg != "" {
			c.vacuous = append(c.vacuous, exprProblem{col: col(n), msg: msg})
		}
		return schema.BoolType
	case "&&", "||", "and", "or":
		// expr joins bools only: vars.mode && x of a string var errs when judged, after
		// the run, instead of at vet.
		c.operand(n.Left, "the left side of "+n.Operator, l, n.Left, schema.TBool)
		c.operand(n.Right, "the right side of "+n.Operator, r, n.Right, schema.TBool)
		if n.Operator == "||" || n.Operator == "or" {
			for _, side := range []ast.Node{n.Left, n.Right} {
				if b, ok := side.(*ast.BoolNode); ok && b.Value {
					c.vacuous = append(c.vacuous, exprProblem{col: col(n), msg: fmt.Sprintf("%s %s %s holds whatever the run records (one side is true): it cannot fail, so it proves nothing; drop the true", written[0], n.Operator, written[1]), code: ""})
				}
			}
		}
		return schema.BoolType
	case "in", "not in":
		if c.negated[n] {
			unsetWrapper(n, written, l, nil)
		}
		c.envoyCompared(n, written, l, nil)
		if r != nil && r != nilType {
			switch r.Kind {
			case schema.TList:
				if !comparableTypes("==", l, r.Elem) {
					c.fail(col(n), "%s %s %s looks for %s in a list of %s", n.Left, n.Operator, n.Right, l.Word(), r.Elem)
				} else if key, ok := n.Left.(*ast.StringNode); ok && r.Elem != nil && r.Elem.Form != "" && !r.Elem.Form.Holds(key.Value) {
					// 'uf' in .flags: an element of the list has a form ("UF"), which the value has not.
					c.fail(col(n), "%s %s %s is always %v: %q is not %s (an element of %s is %s): it is never there, so this reads the same whatever the run records", n.Left, n.Operator, n.Right, n.Operator != "in", key.Value, article(string(r.Elem.Form)), n.Right, r.Elem.Doc)
				}
			case schema.TMap, schema.TStats, schema.TStruct:
				c.operand(n.Left, fmt.Sprintf("the key of %s %s %s", n.Left, n.Operator, n.Right), l, n.Left, schema.TString)
				if r.KeyHas != "" {
					if c.keyHas == nil {
						c.keyHas = map[*ast.BinaryNode]string{}
					}
					c.keyHas[n] = r.KeyHas
				}
				msg := keyFormMismatch(r, l, n.Left.String())
				if key, ok := n.Left.(*ast.StringNode); ok {
					c.keyTest(n.Right, key)
					c.knownKey(col(key), r, written[1], key.Value)
				}
				if msg == "" && fixed {
					msg = fk.neverHeld(r, written[1])
				}
				if key, ok := n.Left.(*ast.StringNode); ok && msg == "" {
					// The key checks of has(map, key), which asks the same.
					msg = keyNeverHeld(r, written[1], key.Value)
					if msg == "" {
						if msg = keyAlwaysHeld(r, written[1], key.Value); msg != "" {
							c.fail(col(n), "%s %s %s is always %v: %s", n.Left, n.Operator, written[1], n.Operator == "in", msg)
							break
						}
					}
				}
				if msg != "" {
					c.fail(col(n), "%s %s %s is always %v: %s", n.Left, n.Operator, written[1], n.Operator != "in", msg)
				}
			case schema.TAny:
			default:
				c.fail(col(n), "%s %s %s: %s is %s: in looks in a list or a map", n.Left, n.Operator, n.Right, n.Right, r.Word())
			}
		}
		return schema.BoolType
	case "matches", "contains", "startsWith", "endsWith":
		c.operand(n.Left, fmt.Sprintf("the left of %s", n.Operator), l, n.Left, schema.TString)
		c.operand(n.Right, fmt.Sprintf("the right of %s", n.Operator), r, n.Right, schema.TString)
		if n.Operator == "matches" {
			c.outputAnchor(n, written)
		}
		if lit, ok := n.Right.(*ast.StringNode); ok && n.Operator == "contains" && l != nil && l.Kind == schema.TString && !l.Form.CanContain(lit.Value) {
			// none(after.hosts, .health contains 'failed_outlier_chek') held whatever the hosts were.
			c.vacuous = append(c.vacuous, exprProblem{col: col(n), msg: fmt.Sprintf("%s contains %s is always false: %s is %s (%s: %s), none of which holds %q, so this reads the same whatever the run records", written[0], written[1], written[0], article(string(l.Form)), l.Doc, strings.Join(schema.HealthFlagNames, ", "), lit.Value)})
		}
		return schema.BoolType
	case "+":
		l, r = c.bareArith(n, written, l, r)
		// + adds numbers, joins strings and lists: with one side not known, either may be meant.
		if !known(l) || !known(r) {
			return nil
		}
		switch {
		case l.Kind == schema.TString && r.Kind == schema.TString:
			return schema.StringType
		case l.Kind == schema.TList && r.Kind == schema.TList:
			return l
		case l.Kind != r.Kind:
			c.fail(col(n), "%s + %s adds %s, %s, and %s, %s: + adds two numbers, or joins two strings or two lists", n.Left, n.Right, n.Left, describe(l), n.Right, describe(r))
			return nil
		}
		fallthrough
	case "-":
		if n.Operator == "-" {
			l, r = c.bareArith(n, written, l, r)
		}
		c.arith(n, l, r)
		if u := c.units(n, l, r); u != "" {
			return schema.Num(u)
		}
		if u := offsetUnit(n, l, r); u != "" {
			return schema.Num(u)
		}
		return schema.NumberType
	case "*", "/":
		c.arith(n, l, r)
		if u := scaledUnit(n, l, r); u != "" {
			return schema.Num(u)
		}
		return schema.NumberType
	case "%", "**", "^":
		c.arith(n, l, r)
		return schema.NumberType
	case "??":
		if l != nil && l != nilType {
			return l
		}
		return r
	case "..":
		return schema.ListOf(schema.NumberType)
	}
	return nil
}

// vacuity says why comparison n cannot fail or cannot hold, whatever the run records: the
// same value on both sides, or a value that is never negative (a count, a latency, a rate, a
// size, a length, read as recorded: not a difference, not a delta, which a reset makes
// negative) against a bound at or below zero. "" when it can go either way.
func (ch *exprChecker) vacuity(n *ast.BinaryNode, written [2]string, l, r *schema.Type) string {
	always := map[string]bool{"==": true, "<=": true, ">=": true}
	cmp := written[0] + " " + n.Operator + " " + written[1]
	if _, lit := constNumber(n.Left); !lit && written[0] == written[1] {
		if always[n.Operator] {
			return fmt.Sprintf("%s compares %s with itself: it holds whatever the run records, so it proves nothing; compare it with what the claim says it should be", cmp, written[0])
		}
		return fmt.Sprintf("%s compares %s with itself: it never holds; compare it with what the claim says it should be", cmp, written[0])
	}
	if msg := ch.partOverWhole(n, written); msg != "" {
		return msg
	}
	op, x, bound, xs := n.Operator, n.Left, n.Right, written[0]
	t := l
	c, ok := constNumber(bound)
	if !ok {
		// 0 <= x is x >= 0.
		if c, ok = constNumber(n.Left); !ok {
			return ""
		}
		x, t, xs = n.Right, r, written[1]
		op = map[string]string{"<": ">", ">": "<", "<=": ">=", ">=": "<=", "==": "==", "!=": "!="}[op]
	}
	if b, ok := x.(*ast.BuiltinNode); ok && (b.Name == "findIndex" || b.Name == "findLastIndex") {
		// expr (1.17.8) gives nil, not -1, when no item matches: a comparison with a negative
		// bound never holds (it errs where nothing matches, and is false where something does).
		if op == "==" && c < 0 || op == "<" && c <= 0 || op == "<=" && c < 0 {
			return fmt.Sprintf("%s never holds: %s gives the index of an item that matches, or nil (not -1) when none does, and comparing nil errs; to claim that nothing matches write none() with the same list and predicate (e.g. none(xs, # contains 'ERROR')), to claim that something does, any()", cmp, b.Name)
		}
		return ""
	}
	if hi, whole, ok := ch.loadShare(x); ok {
		// fortio.code503 / fortio.requests is a share of the load's requests, 0 to 1 (× 100:
		// 0 to 100), whatever the run: a bound past it never holds (a percent written
		// against a fraction, >= 50 for half).
		var never, holds bool
		switch op {
		case ">=":
			never, holds = c > hi, c <= 0
		case ">":
			never, holds = c >= hi, c < 0
		case "==":
			never = c > hi || c < 0
		case "<=":
			never, holds = c < 0, c >= hi
		case "<":
			never, holds = c <= 0, c > hi
		case "!=":
			holds = c > hi || c < 0
		}
		switch {
		case never:
			return fmt.Sprintf("%s never holds (%s is a share of %s, from 0 to %g, whatever the run records); %s", cmp, xs, whole, hi, shareFix(xs, hi, c))
		case holds:
			return fmt.Sprintf("%s holds whatever the run records (%s is a share of %s, from 0 to %g): it cannot fail, so it proves nothing; %s", cmp, xs, whole, hi, shareFix(xs, hi, c))
		}
		return ""
	}
	if least, what := ch.alwaysLen(x); least > 0 {
		// len(keys(after)) of a snapshot that has least stats whatever the run did.
		var holds bool
		switch {
		case op == ">=" && c <= least, op == ">" && c < least, op == "!=" && c < least:
			holds = true
		case op == "<" && c <= least, op == "<=" && c < least, op == "==" && c < least:
			holds = false
		default:
			return ""
		}
		if holds {
			return fmt.Sprintf("%s holds whatever the run records (%s is at least %g: %s): it cannot fail, so it proves nothing; test a stat's value, e.g. after.rq_total > 0", cmp, xs, least, what)
		}
		return fmt.Sprintf("%s never holds (%s is at least %g: %s); expected a bound it can meet", cmp, xs, least, what)
	}
	what := ch.nonNegative(x, t)
	if what == "" {
		return ""
	}
	if load, _ := ch.loadField(x); load != "" && c != math.Trunc(c) && (op == "==" || op == "!=") {
		// fortio.code200 == 10.5: a load's count of requests is a whole number.
		if op == "==" {
			return fmt.Sprintf("%s never holds (%s is a count, a whole number, and %g is not one); expected a whole number", cmp, xs, c)
		}
		return fmt.Sprintf("%s holds whatever the run records (%s is a count, a whole number, and %g is not one): it cannot fail, so it proves nothing; expected a whole number", cmp, xs, c)
	}
	var holds bool
	switch {
	case op == ">=" && c <= 0, op == ">" && c < 0, op == "!=" && c < 0:
		holds = true
	case op == "<" && c <= 0, op == "<=" && c < 0, op == "==" && c < 0:
		holds = false
	default:
		return ""
	}
	if holds {
		return fmt.Sprintf("%s holds whatever the run records (%s is %s, never negative): it cannot fail, so it proves nothing; expected a bound a wrong outcome breaks, e.g. %s > 0, or == the value the claim says", cmp, xs, what, xs)
	}
	return fmt.Sprintf("%s never holds (%s is %s, never negative); expected a bound it can meet", cmp, xs, what)
}

// partOverWhole says why a comparison of a part of a load's requests (ok, errors, a code's
// count) with the same load's requests never holds: fortio counts each request under one
// code, so fortio.code200 > fortio.requests is false of every run (a claim written the wrong
// way round), and vet accepted it for the run to fail. "" for any other comparison (a part at
// most its requests, which cannot fail, is found by the judge's samples).
func (ch *exprChecker) partOverWhole(n *ast.BinaryNode, written [2]string) string {
	op, part, whole := n.Operator, 0, 1
	sides := [2]ast.Node{n.Left, n.Right}
	if op == "<" {
		op, part, whole = ">", 1, 0 // fortio.requests < fortio.code200
	}
	if op != ">" {
		return ""
	}
	pl, pReq := ch.loadField(sides[part])
	wl, wReq := ch.loadField(sides[whole])
	if pl == "" || pReq || !wReq || pl != wl {
		return ""
	}
	return fmt.Sprintf("%s %s %s never holds (%s counts some of %s's requests, never more than all of them, whatever the run records); expected a bound it can meet, e.g. %s == %s, or the other way round", written[0], n.Operator, written[1], written[part], pl, written[part], written[whole])
}

// shareRange says why within(x, lo, hi) or approx(x, want, rel) (fn) of a share of a load's
// requests (loadShare) with number literals never holds, or cannot fail, whatever the run
// records: within(fortio.code503 / fortio.requests, 40, 60) meant a percentage. "" when it
// can go either way.
// written are its arguments as written.
func (ch *exprChecker) shareRange(n *ast.CallNode, fn string, written []string) string {
	top, whole, ok := ch.loadShare(n.Arguments[0])
	if !ok {
		return ""
	}
	a, okA := constNumber(n.Arguments[1])
	b, okB := constNumber(n.Arguments[2])
	if !okA || !okB {
		return ""
	}
	lo, hi := a, b // what it accepts
	if fn == "approx" {
		lo, hi = a-math.Abs(b*a), a+math.Abs(b*a)
	}
	xs := written[0]
	call := fmt.Sprintf("%s(%s)", fn, strings.Join(written, ", "))
	switch {
	case lo > top || hi < 0:
		return fmt.Sprintf("%s never holds (%s is a share of %s, from 0 to %g, whatever the run records, and it accepts %g to %g); %s", call, xs, whole, top, lo, hi, shareFix(xs, top, lo))
	case lo <= 0 && hi >= top:
		return fmt.Sprintf("%s holds whatever the run records (%s is a share of %s, from 0 to %g, and it accepts %g to %g): it cannot fail, so it proves nothing; %s", call, xs, whole, top, lo, hi, shareFix(xs, top, hi))
	}
	return ""
}

// shareFix says what to write for a bound c a share (from 0 to hi) of whole's requests
// cannot meet: a percentage where a fraction is compared with one, else a bound in its range.
func shareFix(xs string, hi, c float64) string {
	if hi == 1 && c > 1 && c <= 100 {
		return fmt.Sprintf("%g%% is %g here; for a percentage write %s * 100", c, c/100, xs)
	}
	return fmt.Sprintf("expected a bound from 0 to %g that a wrong outcome breaks", hi)
}

// loadShare says whether x is a share of one load's requests: a count of its responses (ok,
// errors, a code's) divided by its requests, 0 to 1 whatever the run (fortio counts each
// request under one code), scaled by number literals (× 100: a percentage, 0 to 100). hi is
// its largest value, whole the load's requests as written.
func (ch *exprChecker) loadShare(x ast.Node) (hi float64, whole string, ok bool) {
	b, isBin := x.(*ast.BinaryNode)
	if !isBin {
		return 0, "", false
	}
	switch b.Operator {
	case "*":
		for _, side := range [][2]ast.Node{{b.Left, b.Right}, {b.Right, b.Left}} {
			if k, lit := constNumber(side[0]); lit && k > 0 {
				if h, w, ok := ch.loadShare(side[1]); ok {
					return h * k, w, true
				}
				// (fortio.code503 * 100) / fortio.requests: a part scaled, divided below.
			}
		}
	case "/":
		if k, lit := constNumber(b.Right); lit && k > 0 {
			if h, w, ok := ch.loadShare(b.Left); ok {
				return h / k, w, true
			}
			return 0, "", false
		}
		load, isReq := ch.loadField(b.Right)
		if !isReq || load == "" {
			return 0, "", false
		}
		part, k := b.Left, 1.0
		if m, ok := part.(*ast.BinaryNode); ok && m.Operator == "*" {
			if v, lit := constNumber(m.Left); lit && v > 0 {
				part, k = m.Right, v
			} else if v, lit := constNumber(m.Right); lit && v > 0 {
				part, k = m.Left, v
			}
		}
		if l, isReq := ch.loadField(part); !isReq && l == load {
			return k, load + "'s requests", true
		}
	}
	return 0, "", false
}

// loadField is the load a read of one of its counts is of: requests (isReq), or a part of
// them, ok, errors, code<NNN> or codes["<NNN>"]; "" for anything else.
func (ch *exprChecker) loadField(n ast.Node) (load string, isReq bool) {
	m, ok := n.(*ast.MemberNode)
	if !ok || m.Optional {
		return "", false
	}
	prop, ok := m.Property.(*ast.StringNode)
	if !ok {
		return "", false
	}
	root := m.Node
	field := prop.Value
	if inner, ok := root.(*ast.MemberNode); ok {
		// codes["503"]
		if p, ok := inner.Property.(*ast.StringNode); !ok || p.Value != "codes" {
			return "", false
		}
		root, field = inner.Node, "codes"
	}
	id, ok := root.(*ast.IdentifierNode)
	if !ok || ch.names == nil {
		return "", false
	}
	if _, let := ch.lets[id.Value]; let {
		return "", false
	}
	res := ch.names.Results[id.Value]
	if res == nil || res.Kind != "load" || res.Sampled {
		return "", false
	}
	switch {
	case field == "requests":
		return id.Value, true
	case field == "ok", field == "errors", field == "codes", loadCodeField.MatchString(field):
		return id.Value, false
	}
	return "", false
}

// loadCodeField is a load's alias of one code's count: code503, code_1 (socket errors).
var loadCodeField = regexp.MustCompile(`^code(\d{3}|_1)$`)

// constNumber is the value of a number literal (-1 included).
func constNumber(n ast.Node) (float64, bool) {
	switch v := n.(type) {
	case *ast.IntegerNode:
		return float64(v.Value), true
	case *ast.FloatNode:
		return v.Value, true
	case *ast.UnaryNode:
		if x, ok := constNumber(v.Node); ok {
			switch v.Operator {
			case "-":
				return -x, true
			case "+":
				return x, true
			}
		}
	}
	return 0, false
}

// alwaysLen is the least value of len(keys(s)) or len(s) (x), s a snapshot whose catalogue says
// every snapshot has its stats (schema.Catalogue.Always), and why; 0 for anything else.
func (ch *exprChecker) alwaysLen(x ast.Node) (float64, string) {
	b, ok := x.(*ast.BuiltinNode)
	if !ok || b.Name != "len" || len(b.Arguments) != 1 {
		return 0, ""
	}
	arg := b.Arguments[0]
	if k, ok := arg.(*ast.BuiltinNode); ok && (k.Name == "keys" || k.Name == "values") && len(k.Arguments) == 1 {
		arg = k.Arguments[0]
	}
	if ch.names == nil {
		return 0, ""
	}
	if ref, ok := ch.deltaCalls[arg]; ok && ref.Kind == RefDeltaPair {
		// delta("a", "b"), rewritten to __delta: the later snapshot's counters.
		if r := ch.names.Results[ref.To]; r != nil && r.Type != nil && r.Type.Stats != nil && r.Type.Stats.Catalogue != nil {
			return alwaysCounters(r.Type.Stats.Catalogue)
		}
		return 0, ""
	}
	id, ok := arg.(*ast.IdentifierNode)
	if !ok {
		return 0, ""
	}
	if _, let := ch.lets[id.Value]; let {
		return 0, ""
	}
	if id.Value == "delta" {
		if t := ch.names.deltaType(); t.Stats != nil && t.Stats.Catalogue != nil {
			return alwaysCounters(t.Stats.Catalogue)
		}
		return 0, ""
	}
	r := ch.names.Results[id.Value]
	if r == nil || r.Type == nil || r.Type.Kind != schema.TStats || r.Type.Stats == nil || r.Type.Stats.Deltas || r.Type.Stats.Catalogue == nil {
		return 0, ""
	}
	cat := r.Type.Stats.Catalogue
	if n := cat.AlwaysLen(); n > 0 {
		return float64(n), fmt.Sprintf("every snapshot of %s has the %d stats of its catalogue but rq_<code>, whatever the run did", cat.What, n)
	}
	return 0, ""
}

// alwaysCounters is the least number of stats of a delta of two snapshots of a source of
// catalogue cat, and why (0 when it may have none).
func alwaysCounters(cat *schema.Catalogue) (float64, string) {
	if n := cat.AlwaysCounters(); n > 0 {
		return float64(n), fmt.Sprintf("a delta of %s holds the later snapshot's counters, and every snapshot of it has the %d counters of its catalogue but rq_<code>, whatever the run did", cat.What, n)
	}
	return 0, ""
}

// nonNegative says what x is when it is never negative ("a count"), "" when it may be.
func (ch *exprChecker) nonNegative(x ast.Node, t *schema.Type) string {
	if b, ok := x.(*ast.BuiltinNode); ok && (b.Name == "len" || b.Name == "count") {
		// len and count are never negative (findIndex gives an index or nil: see vacuity).
		return "a length"
	}
	if t == nil || t.Kind != schema.TNumber {
		return ""
	}
	words := map[schema.Unit]string{schema.Count: "a count", schema.Millis: "a time in milliseconds", schema.PerSec: "a rate", schema.Bytes: "a size in bytes"}
	if words[t.Unit] == "" {
		return ""
	}
	if _, ok := deltaStat(x); ok && words[t.Unit] == "a count" {
		// The judge fails an expectation whose counter went down (a reset), and counts a
		// reset that allowReset allows from 0: a delta it judges is never negative.
		return "a counter's delta (a counter that went down fails the expectation as a reset, or, when allowReset lists it, counts what it counted since the reset)"
	}
	// Only a value as recorded: a member read whose root is a step, not a delta.
	for n := x; ; {
		switch v := n.(type) {
		case *ast.MemberNode:
			n = v.Node
			continue
		case *ast.ChainNode:
			n = v.Node
			continue
		case *ast.IdentifierNode:
			// A let variable may hold anything (findIndex's -1).
			if _, let := ch.lets[v.Value]; let || v.Value == "delta" || v.Value == "deltaAcross" {
				return ""
			}
			return words[t.Unit]
		}
		return ""
	}
}

// deltaStat is the stat of a delta read, delta.<stat> or delta("a", "b").<stat> (deltaAcross
// too), false for anything else.
func deltaStat(x ast.Node) (string, bool) {
	m, ok := x.(*ast.MemberNode)
	if !ok {
		return "", false
	}
	prop, ok := m.Property.(*ast.StringNode)
	if !ok {
		return "", false
	}
	switch root := m.Node.(type) {
	case *ast.IdentifierNode:
		return prop.Value, root.Value == "delta"
	case *ast.CallNode:
		if id, ok := root.Callee.(*ast.IdentifierNode); ok {
			switch id.Value {
			case "delta", "deltaAcross", DeltaFunc:
				return prop.Value, true
			}
		}
	}
	return "", false
}

// describe is a type for messages: "a string", "a number (count)".
func describe(t *schema.Type) string {
	word, s := t.Word(), t.String()
	article, noun, _ := strings.Cut(word, " ")
	switch {
	case s == noun:
		return word
	case strings.HasPrefix(s, noun+" "):
		return article + " " + s
	}
	return word + " (" + s + ")"
}

// decimal is a number as a string literal writes it: "5", "-0.5", "1e3".
var decimal = regexp.MustCompile(`^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$`)

// numericStringOrder says why an ordering (<, <=, >, >=) of a string with a string literal
// that is a number is almost surely a mistake ("" when it is not one): strings are ordered
// byte by byte, so "10" <= "5" holds, and a captured 10 passes a claim of at most 5.
func numericStringOrder(n *ast.BinaryNode, written [2]string, l, r *schema.Type) string {
	switch n.Operator {
	case "<", "<=", ">", ">=":
	default:
		return ""
	}
	stringy := func(t *schema.Type) bool {
		return t != nil && t != nilType && (t.Kind == schema.TString || t.Kind == schema.TAny)
	}
	sides := [2]ast.Node{n.Left, n.Right}
	types := [2]*schema.Type{l, r}
	for i := range sides {
		lit, ok := sides[i].(*ast.StringNode)
		o := 1 - i
		if !ok || !decimal.MatchString(lit.Value) || !stringy(types[o]) {
			continue
		}
		if _, isLit := sides[o].(*ast.StringNode); isLit {
			continue // two literals: read nothing, said elsewhere
		}
		var num [2]string
		num[i], num[o] = lit.Value, fmt.Sprintf("float(%s)", written[o])
		return fmt.Sprintf("%s %s %s orders strings, byte by byte (\"10\" < \"5\"): %s is a number written as a string, and %s is %s; compare numbers: %s %s %s (int() for whole numbers)",
			written[0], n.Operator, written[1], written[i], written[o], describe(types[o]), num[0], n.Operator, num[1])
	}
	return ""
}

// unsetWrapper hands each side of n, a comparison that holds where its sides differ (!=, a
// negated == or in) or an order (<, >=: expr errs over nil, saying nothing of why), that is a config value's wrapper field (UInt32Value, BoolValue, …)
// through schema.SetFunc: such a field Envoy's dump leaves out is unset, reads nil, and Envoy
// applies a default the dump does not give, so cb.max_retries != 3 held over nil where
// Envoy's default is 3. The read of an unset one errs instead (schema.ReadSet); a side
// compared with nil (cb.max_retries != nil) is the claim that it is set, and is left alone.
func unsetWrapper(n *ast.BinaryNode, written [2]string, l, r *schema.Type) {
	sides := [2]*ast.Node{&n.Left, &n.Right}
	types := [2]*schema.Type{l, r}
	for i, t := range types {
		if t == nil || t.Wrapper == "" {
			continue
		}
		if _, isNil := (*sides[1-i]).(*ast.NilNode); isNil {
			return
		}
		op := n.Operator // the claim as it holds: where the sides differ
		switch op {
		case "==":
			op = "!="
		case "in":
			op = "not in"
		}
		*sides[i] = &ast.CallNode{Callee: &ast.IdentifierNode{Value: schema.SetFunc}, Arguments: []ast.Node{
			*sides[i], &ast.StringNode{Value: written[i]}, &ast.StringNode{Value: t.Wrapper}, &ast.StringNode{Value: op},
			&ast.StringNode{Value: written[0] + " " + op + " " + written[1]}}}
	}
}

// durationTextBesideNumber says how to compare a protobuf Duration read as text (a config
// dump's "1s") with a number, where one side is that and the other a number: vet said only
// that a string and a number do not compare (cl.connect_timeout == 1), not that the field is
// a time, nor the two ways to read it as one. "" otherwise.
func durationTextBesideNumber(n *ast.BinaryNode, written [2]string, l, r *schema.Type) string {
	types := [2]*schema.Type{l, r}
	for i, t := range types {
		o := types[1-i]
		if t == nil || t.Kind != schema.TString || t.Form != schema.FormDuration || o == nil || o.Kind != schema.TNumber {
			continue
		}
		return fmt.Sprintf("; %s is a protobuf Duration, which Envoy writes as text in seconds (\"1s\", \"0.500s\"): read it as a number of seconds with the config step's durations: \"seconds\" (then %s %s %s), or compare times: duration(%s) %s duration(\"1s\")",
			written[i], written[0], n.Operator, written[1], written[i], n.Operator)
	}
	return ""
}

// durationStringCompare refuses a comparison of a protobuf Duration read as text (a config
// dump's "10s", "0.500s") that does not compare times: an order (<, >=, …) compares bytes,
// and "10s" < "2s" holds; an equality with a literal Envoy never writes ("500ms", "1.5s":
// it writes "0.500s", "1.500s") or with a duration() (a time, not text) never holds, and
// its != always does. "" when n is neither.
//
// fixed are the sides that vars alone make, with their values (vars.t of "1m30s", as a swept
// or --var duration is kept as Go writes it: Envoy writes "90s"), judged as a literal is.
func durationStringCompare(n *ast.BinaryNode, written [2]string, l, r *schema.Type, fixed [2]*fixedKey) string {
	isDuration := func(t *schema.Type) bool {
		return t != nil && t != nilType && t.Kind == schema.TString && t.Form == schema.FormDuration
	}
	sides := [2]ast.Node{n.Left, n.Right}
	types := [2]*schema.Type{l, r}
	d := -1
	for i := range types {
		if isDuration(types[i]) {
			d = i
			break
		}
	}
	if d < 0 {
		return ""
	}
	cmp := written[0] + " " + n.Operator + " " + written[1]
	asDuration := func(i int) string {
		if lit, ok := sides[i].(*ast.StringNode); ok {
			return fmt.Sprintf("duration(%q)", lit.Value)
		}
		return "duration(" + written[i] + ")"
	}
	switch n.Operator {
	case "<", "<=", ">", ">=":
		return fmt.Sprintf("%s orders strings, byte by byte (\"10s\" < \"2s\"): %s is a protobuf Duration written as text; compare times: %s %s %s (or read it as seconds with the config step's durations: \"seconds\")",
			cmp, written[d], asDuration(0), n.Operator, asDuration(1))
	case "==", "!=":
		if isDurationExpr(sides[1-d]) {
			// A time.Duration is never equal to text: od.interval == duration(vars.t) failed
			// where the interval was that long, and its != held whatever the config said.
			return fmt.Sprintf("%s is always %v: %s is a protobuf Duration written as text (\"10s\", \"0.500s\"), and %s is a time, which never equals text; compare times: duration(%s) %s %s",
				cmp, n.Operator == "!=", written[d], written[1-d], written[d], n.Operator, written[1-d])
		}
		if fk := fixed[1-d]; fk != nil {
			if schema.FormDuration.Holds(fk.key) {
				return ""
			}
			return fmt.Sprintf("%s is always %v: %s is a protobuf Duration, which Envoy writes in seconds (\"10s\", \"0.500s\"), never %q (%s); compare times: %s %s %s",
				cmp, n.Operator == "!=", written[d], fk.key, strings.Join(fk.from, ", "), asDuration(0), n.Operator, asDuration(1))
		}
		lit, ok := sides[1-d].(*ast.StringNode)
		if !ok || schema.FormDuration.Holds(lit.Value) {
			return ""
		}
		return fmt.Sprintf("%s is always %v: %s is a protobuf Duration, which Envoy writes in seconds (\"10s\", \"0.500s\"), never %q; compare times: %s %s %s",
			cmp, n.Operator == "!=", written[d], lit.Value, asDuration(0), n.Operator, asDuration(1))
	}
	return ""
}

// formLiteralCompare refuses an equality of a string of a form (a host's ip:port address,
// its health_flags) with a literal that is not of that form: == never holds, and != always
// does (all(after.hosts, .address != '10.244.1.5') over a host at 10.244.1.5:8080). "" when n
// is none. (Durations: durationStringCompare.)
func formLiteralCompare(n *ast.BinaryNode, written [2]string, l, r *schema.Type) string {
	if n.Operator != "==" && n.Operator != "!=" {
		return ""
	}
	sides := [2]ast.Node{n.Left, n.Right}
	types := [2]*schema.Type{l, r}
	for i, t := range types {
		if t == nil || t == nilType || t.Kind != schema.TString || t.Form == "" || t.Form == schema.FormDuration {
			continue
		}
		lit, ok := sides[1-i].(*ast.StringNode)
		if !ok || t.Form.Holds(lit.Value) {
			continue
		}
		return fmt.Sprintf("%s %s %s is always %v: %s is %s (%s), and %q is not one, so this reads the same whatever the run records",
			written[0], n.Operator, written[1], n.Operator == "!=", written[i], article(string(t.Form)), t.Doc, lit.Value)
	}
	return ""
}

// enumLiteral finds a comparison of a string of known values with a string literal: the
// literal, the type and the other side.
func enumLiteral(n *ast.BinaryNode, l, r *schema.Type) (string, *schema.Type, ast.Node) {
	if lit, ok := n.Right.(*ast.StringNode); ok && l != nil && l.Enum != nil {
		return lit.Value, l, n.Left
	}
	if lit, ok := n.Left.(*ast.StringNode); ok && r != nil && r.Enum != nil {
		return lit.Value, r, n.Right
	}
	return "", nil, nil
}

// knownLiteral warns of a string literal compared with a value whose usual values are known
// (schema.Type.Known: an event's reason) that is none of them but close to one: ev[0].reason
// == 'BackOf' read as no match, a claim that none happened (none(ev, .reason == 'BackOf'))
// held whatever happened.
func (c *exprChecker) knownLiteral(n *ast.BinaryNode, written [2]string, l, r *schema.Type) {
	for i, side := range []ast.Node{n.Left, n.Right} {
		t := r
		if i == 1 {
			t = l
		}
		lit, ok := side.(*ast.StringNode)
		if !ok || t == nil || len(t.Known) == 0 || slices.Contains(t.Known, lit.Value) {
			continue
		}
		if m := closest(lit.Value, t.Known); m != "" {
			c.warns = append(c.warns, exprProblem{col: col(side), msg: fmt.Sprintf("%s %s %s: %q is none of the reasons Kubernetes writes (did you mean %q?): a reason no event has matches nothing, and a claim that none happened holds whatever happened", written[0], n.Operator, written[1], lit.Value, m), code: LintUnknownReason})
		}
	}
}

// knownKey warns of a literal key of map t (read as m) whose keys are most often known names
// (t.Key.Known: of a typed_per_filter_config, the HTTP filters' names istiod gives) that is
// none of them but a letter or two off one: the map never has it, so a claim that it is absent
// ("envoy.filters.http.faults" not in r.typed_per_filter_config) held whatever the route held.
func (c *exprChecker) knownKey(at int, t *schema.Type, m, key string) {
	if t == nil || t.Kind != schema.TMap || t.Key == nil || len(t.Key.Known) == 0 || slices.Contains(t.Key.Known, key) {
		return
	}
	if near := closest(key, t.Key.Known); near != "" && EditDistance(key, near) <= 2 {
		c.warns = append(c.warns, exprProblem{col: at, msg: fmt.Sprintf("%s is keyed by %s, and %q is none of those Istio and Envoy give (did you mean %q?): it is never a key there, so a claim that it is absent holds whatever the config holds", m, t.Key.Doc, key, near), code: LintUnknownFilter})
	}
}

// known reports whether t is a type the checker knows (not nil, any or nil's).
func known(t *schema.Type) bool { return t != nil && t != nilType && t.Kind != schema.TAny }

// arith checks that both operands of arithmetic are numbers.
func (c *exprChecker) arith(n *ast.BinaryNode, l, r *schema.Type) {
	c.operand(n.Left, fmt.Sprintf("the left of %s", n.Operator), l, n.Left, schema.TNumber)
	c.operand(n.Right, fmt.Sprintf("the right of %s", n.Operator), r, n.Right, schema.TNumber)
}

// units refuses comparing or adding numbers of two different units (milliseconds with
// seconds), and returns the unit of a + or − of one unit.
func (c *exprChecker) units(n *ast.BinaryNode, l, r *schema.Type) schema.Unit {
	if l == nil || r == nil || l.Kind != schema.TNumber || r.Kind != schema.TNumber {
		return ""
	}
	switch {
	case l.Unit == r.Unit:
		return l.Unit
	case l.Unit == schema.Plain || r.Unit == schema.Plain:
		return ""
	}
	c.fail(col(n), "%s %s %s mixes units: %s is %s, %s is %s; convert one (e.g. seconds × 1000 = milliseconds)", n.Left, n.Operator, n.Right, n.Left, unitWords[l.Unit], n.Right, unitWords[r.Unit])
	return ""
}

// clockMisused says why n, a comparison or a sum or difference of a moment (now(), date(…))
// with what is no moment, is a mistake, and the column to say it at (that of the moment's
// call); "" when it is none. expr refused now() > 5 in its own words ("invalid operation: >
// (mismatched types time.Time and int)"), at the start of the expectation's string, saying
// neither what now() is nor how a time is compared.
func clockMisused(n *ast.BinaryNode, written [2]string, l, r *schema.Type) (int, string) {
	cmp := false
	switch n.Operator {
	case "==", "!=", "<", ">", "<=", ">=":
		cmp = true
	case "+", "-":
	default:
		return 0, ""
	}
	sides := [2]ast.Node{n.Left, n.Right}
	types := [2]*schema.Type{l, r}
	for i, side := range sides {
		moment, ok := side.(*ast.BuiltinNode)
		if !ok || (moment.Name != "now" && moment.Name != "date") {
			continue
		}
		if isMoment(sides[1-i]) {
			continue // two moments: compared, or subtracted into a duration
		}
		what := written[i] + " is a moment (a date and a time of day)"
		if moment.Name == "now" {
			what = "now() is the moment the claim is judged (a date and a time of day)"
		}
		other, ot := written[1-i], types[1-i]
		if call, ok := sides[1-i].(*ast.BuiltinNode); ok && call.Name == "duration" {
			if !cmp {
				return 0, "" // now() - duration('1m'): a moment, a minute before
			}
			return col(moment), fmt.Sprintf("%s %s %s: %s, and %s a length of time: a moment compares only with another moment (now() > date('2026-12-01T00:00:00Z')); compare the length of time between two moments with it (now() - date(trim(stamp.stdout)) < %s)",
				written[0], n.Operator, written[1], what, other, other)
		}
		if ot == nil || ot == nilType || ot.Kind == schema.TAny {
			continue // what it is is known when it runs
		}
		if cmp {
			return col(moment), fmt.Sprintf("%s %s %s: %s, and %s is %s: a moment compares only with another moment (now() > date('2026-12-01T00:00:00Z')); to bound how long something took, compare the length of time between two moments with a duration (now() - date(trim(stamp.stdout)) < duration('1m')), or read the run's own clock: started.<step> and ended.<step> are seconds from the start of the steps (ended.load - started.load < 2)",
				written[0], n.Operator, written[1], what, other, describe(ot))
		}
		return col(moment), fmt.Sprintf("%s %s %s: %s, not a number, and %s is %s: add or subtract a duration (now() - duration('1m')), or subtract two moments into the length of time between them (now() - date(trim(stamp.stdout))); the run's own times, started.<step> and ended.<step>, are seconds from the start of the steps, and subtract as numbers (ended.load - started.load)",
			written[0], n.Operator, written[1], what, other, describe(ot))
	}
	return 0, ""
}

// isMoment says n is a moment as written: now(), date(…), or one of them plus or minus a
// duration (now() - duration('1m')).
func isMoment(n ast.Node) bool {
	switch n := n.(type) {
	case *ast.BuiltinNode:
		return n.Name == "now" || n.Name == "date"
	case *ast.BinaryNode:
		if n.Operator != "+" && n.Operator != "-" {
			return false
		}
		d, ok := n.Right.(*ast.BuiltinNode)
		return isMoment(n.Left) && ok && d.Name == "duration"
	}
	return false
}

// isTime says whether t is a number of milliseconds or seconds.
func isTime(t *schema.Type) bool {
	return t != nil && t.Kind == schema.TNumber && (t.Unit == schema.Millis || t.Unit == schema.Seconds)
}

// durationIn rewrites *node, a duration('500ms') compared with other, a time in milliseconds
// or seconds, into that time as a number of other's unit (500, or 0.5), and types it so; nil
// when *node is no such call. expr's duration() is a time.Duration, which no number compares
// with: fortio.p99 < duration('500ms') was refused with expr's "mismatched types float64 and
// time.Duration", though it is how a time is written with its unit (and what the message
// about a bare 200ms advises).
func (c *exprChecker) durationIn(node *ast.Node, other *schema.Type) *schema.Type {
	if cond, ok := (*node).(*ast.ConditionalNode); ok && isTime(other) {
		// c ? duration('40ms') : duration('50ms') beside a time: each branch its number
		// (vet let it by, and the run refused it: "float64 > time.Duration").
		a, b := c.durationIn(&cond.Exp1, other), c.durationIn(&cond.Exp2, other)
		if a != nil {
			return a
		}
		return b
	}
	if bin, ok := (*node).(*ast.BinaryNode); ok && isTime(other) {
		// duration('10ms') + duration('50ms') beside a time, or duration('10ms') * 2: each
		// duration its number (vet let it by, and the run refused it: "float64 <
		// time.Duration").
		l, r := isDurationExpr(bin.Left), isDurationExpr(bin.Right)
		switch {
		case (bin.Operator == "+" || bin.Operator == "-") && l && r,
			(bin.Operator == "*" || bin.Operator == "/") && l && !r,
			bin.Operator == "*" && r && !l:
			if l {
				c.durationIn(&bin.Left, other)
			}
			if r {
				c.durationIn(&bin.Right, other)
			}
			return schema.Num(other.Unit)
		case (bin.Operator == "+" || bin.Operator == "-") && l != r:
			d, n := bin.Left, bin.Right
			if r {
				d, n = n, d
			}
			c.fail(col(bin), "%s %s a duration, %s, and %s, a number, which the run refuses (expr adds no number to a time.Duration); expected two durations: %s %s duration('…')", bin, map[string]string{"+": "adds", "-": "subtracts"}[bin.Operator], d, n, d, bin.Operator)
			return nil
		}
		return nil
	}
	call, ok := (*node).(*ast.BuiltinNode)
	if !ok || call.Name != "duration" || len(call.Arguments) != 1 || !isTime(other) {
		return nil
	}
	lit, ok := call.Arguments[0].(*ast.StringNode)
	if !ok {
		// duration(vars.limit): the var's value, as the load (each combination's) sets it.
		fk, fixed := c.varKey(call.Arguments[0])
		if !fixed {
			return nil
		}
		c.typeOf(&call.Arguments[0]) // the vars it reads
		lit = &ast.StringNode{Value: fk.key}
	}
	d, err := time.ParseDuration(lit.Value)
	if err != nil {
		c.fail(col(call), "duration(%q): %q is no duration: write a number and a unit, as in '500ms' or '2s'", lit.Value, lit.Value)
		return nil
	}
	v := d.Seconds()
	if other.Unit == schema.Millis {
		v = float64(d) / float64(time.Millisecond)
	}
	ast.Patch(node, &ast.FloatNode{Value: v})
	return schema.Num(other.Unit)
}

// isDurationExpr reports whether n is a duration: duration(…), a conditional whose branches
// are, or a sum, a difference or a scaling of them.
func isDurationExpr(n ast.Node) bool {
	switch n := n.(type) {
	case *ast.BuiltinNode:
		return n.Name == "duration" && len(n.Arguments) == 1
	case *ast.ConditionalNode:
		return isDurationExpr(n.Exp1) && isDurationExpr(n.Exp2)
	case *ast.BinaryNode:
		l, r := isDurationExpr(n.Left), isDurationExpr(n.Right)
		switch n.Operator {
		case "+", "-":
			return l && r
		case "*":
			return l != r
		case "/":
			return l && !r
		}
	}
	return false
}

// bareTime warns of a time in milliseconds or seconds compared with a number other than 0
// written bare: fortio.avg >= 2, meant as 2 s, holds of an average of 2 ms, and a load's
// duration < 3000, meant as 3000 ms, of 50 minutes: a factor of 1000 either way that the
// comparison cannot show. duration('2s') says the unit (vet --strict requires it).
func (c *exprChecker) bareTime(n *ast.BinaryNode, written [2]string, l, r *schema.Type) {
	for i, side := range []ast.Node{n.Left, n.Right} {
		t := r
		if i == 1 {
			t = l
		}
		c.bareWarn(col(n), written[0]+" "+n.Operator+" "+written[1], written[1-i], t, side)
		if cond, ok := side.(*ast.ConditionalNode); ok && isTime(t) {
			// s.p50 > (c ? 40 : 50): each bare branch, at its own column. (c ? 40 : f.p50)
			// was warned of as a ternary.
			_, ok1 := constNumber(cond.Exp1)
			_, ok2 := constNumber(cond.Exp2)
			if !ok1 || !ok2 {
				continue
			}
			w := written
			w[i] = "(" + w[i] + ")"
			for _, e := range []ast.Node{cond.Exp1, cond.Exp2} {
				c.bareWarn(col(e), w[0]+" "+n.Operator+" "+w[1], written[1-i], t, e)
			}
		}
	}
}

// bareWarn warns, at at, of lit, a number other than 0 written bare where whole sets it
// beside other, a time of type t; nothing where lit is no such number or t no time.
func (c *exprChecker) bareWarn(at int, whole, other string, t *schema.Type, lit ast.Node) {
	v, ok := constNumber(lit)
	if !ok || v == 0 || !isTime(t) {
		return
	}
	unit, alt := "ms", "s"
	if t.Unit == schema.Seconds {
		unit, alt = "s", "ms"
	}
	c.warns = append(c.warns, exprProblem{at, fmt.Sprintf("%s: %s is in %s, so %s means %g %s, not %g %s; say which: duration('%g%s') or duration('%g%s')", whole, other, unitWords[t.Unit], lit, v, unit, v, alt, v, unit, v, alt), LintBareTime})
}

// bareArith warns of a bare number other than 0 added to or taken from a time (f.p50 + 40,
// meant as 40 ms, reads as such, and as 40 s of a duration in seconds), and lets
// duration('40ms') be added instead, as the time's number in its unit (expr refused
// f.p50 + duration('40ms') when it ran: "invalid operation: float64 + time.Duration"). A
// time scaled by a bare number (3 * f.p50, f.p50 / 2) is not warned of: the number there is
// a count of times, not a time.
func (c *exprChecker) bareArith(n *ast.BinaryNode, written [2]string, l, r *schema.Type) (*schema.Type, *schema.Type) {
	c.bareTime(n, written, l, r)
	if t := c.durationIn(&n.Left, r); t != nil {
		l = t
	}
	if t := c.durationIn(&n.Right, l); t != nil {
		r = t
	}
	return l, r
}

// outputAnchor warns of a command's whole output (an exec's stdout or stderr) matched with a
// pattern whose $ is the end of the text: RE2 reads $ so without (?m), and a command's output
// most often ends with a newline, after which the pattern would have to end. So x.stdout
// matches 'bar$' is false of "bar\n", and !(x.stdout matches '^bar$'), meant as "no line is
// bar" (testscript's ! stdout '^bar$', which adds (?m)), holds of a line bar. \z says the very
// end on purpose and is left alone.
func (c *exprChecker) outputAnchor(n *ast.BinaryNode, written [2]string) {
	lit, ok := n.Right.(*ast.StringNode)
	if !ok || (!strings.HasSuffix(written[0], ".stdout") && !strings.HasSuffix(written[0], ".stderr")) || strings.Contains(lit.Value, `\z`) {
		return
	}
	re, err := syntax.Parse(lit.Value, syntax.Perl)
	if err != nil || !hasOp(re, syntax.OpEndText) {
		return
	}
	c.warns = append(c.warns, exprProblem{col(n), fmt.Sprintf("%s matches %q: $ is the end of the whole output, after its last newline, and a command's output most often ends with one (%q does not match %q); for the end of a line write (?m) first, %q, as testscript's stdout and stderr do, or \\z for the very end", written[0], lit.Value, "bar$", "bar\n", "(?m)"+lit.Value), LintOutputAnchor})
}

// hasOp says whether re or a part of it is an op.
func hasOp(re *syntax.Regexp, op syntax.Op) bool {
	if re.Op == op {
		return true
	}
	return slices.ContainsFunc(re.Sub, func(s *syntax.Regexp) bool { return hasOp(s, op) })
}

// bareMinMax warns of a bare number other than 0 among min's or max's arguments where one is
// a time (max(f.p50, 40): 40 ms, or 40 s of a duration in seconds), lets duration('40ms')
// stand there for the time's number in its unit, and returns the type of the first argument,
// that time's where the first is a bare number or a duration().
func (c *exprChecker) bareMinMax(n *ast.BuiltinNode, types []*schema.Type) *schema.Type {
	i := slices.IndexFunc(types, isTime)
	if i < 0 || len(n.Arguments) != len(types) {
		return types[0]
	}
	t := types[i]
	for j := range n.Arguments {
		if j == i || isTime(types[j]) {
			continue
		}
		if d := c.durationIn(&n.Arguments[j], t); d != nil {
			types[j] = d
			continue
		}
		c.bareWarn(col(n.Arguments[j]), n.String(), n.Arguments[i].String(), t, n.Arguments[j])
		if _, ok := constNumber(n.Arguments[j]); ok {
			types[j] = t
		}
	}
	return types[0]
}

// offsetUnit is the unit of a number of one unit plus or minus a literal (seconds + 1 is
// seconds); "" for anything else.
func offsetUnit(n *ast.BinaryNode, l, r *schema.Type) schema.Unit {
	if _, ok := constNumber(n.Right); ok && l != nil && l.Kind == schema.TNumber {
		return l.Unit
	}
	if _, ok := constNumber(n.Left); ok && r != nil && r.Kind == schema.TNumber {
		return r.Unit
	}
	return ""
}

// scaledUnit is the unit of a number of one unit multiplied or divided by a literal: the same
// unit (3 × seconds are seconds), but for the conversions of seconds and milliseconds into
// each other (seconds × 1000 are milliseconds, milliseconds / 1000 seconds), for a time scaled
// by 100 or more, or by 0.01 or less, which may hold one (3000 × seconds: three of them in
// milliseconds), and for a factor that looks like another conversion (60, 1024, 1e6, …:
// minutes, KiB, µs), whose unit labrun has no word for (""). A literal divided by a number,
// or two numbers, are "" too.
func scaledUnit(n *ast.BinaryNode, l, r *schema.Type) schema.Unit {
	var k float64
	var t *schema.Type
	if c, ok := constNumber(n.Right); ok {
		k, t = c, l
		if n.Operator == "/" {
			if c == 0 {
				return ""
			}
			k = 1 / c
		}
	} else if c, ok := constNumber(n.Left); ok && n.Operator == "*" {
		k, t = c, r
	}
	if t == nil || t.Kind != schema.TNumber || t.Unit == schema.Plain || k == 0 {
		return ""
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Abs(b) }
	switch {
	case t.Unit == schema.Seconds && near(k, 1000):
		return schema.Millis
	case t.Unit == schema.Millis && near(k, 0.001):
		return schema.Seconds
	case (t.Unit == schema.Seconds || t.Unit == schema.Millis) && (math.Abs(k) >= 100 || math.Abs(k) <= 0.01):
		// 3000 * connect_timeout is three timeouts in milliseconds: a factor this large or
		// small may hold a conversion, and its unit is not known.
		return ""
	}
	for _, f := range []float64{60, 3600, 1000, 1024, 1e6, 1 << 20, 1e9, 1 << 30} {
		if near(math.Abs(k), f) || near(math.Abs(k), 1/f) {
			return ""
		}
	}
	return t.Unit
}

// The builtins of expr that take a predicate over their first argument's elements.
var predicateBuiltins = map[string]bool{
	"all": true, "none": true, "any": true, "one": true, "filter": true, "map": true, "count": true,
	"sum": true, "find": true, "findIndex": true, "findLast": true, "findLastIndex": true,
	"groupBy": true, "sortBy": true, "reduce": true,
}

// builtin types a call of one of expr's builtins; a predicate's # is its first argument's
// element.
func (c *exprChecker) builtin(n *ast.BuiltinNode) *schema.Type {
	if n.Name == "now" {
		c.now = true
	}
	if (n.Name == "int" || n.Name == "float") && len(n.Arguments) == 1 {
		// int(vars.d) of a var that holds "100ms": the run erred after the steps
		// ("invalid operation: int(100ms)").
		if fk, fixed := c.varKey(n.Arguments[0]); fixed {
			if msg := numberText(n, fk.key); msg != "" {
				c.fail(col(n), "%s", msg)
				return nil
			}
		}
	}
	if n.Name == "get" && len(n.Arguments) == 2 {
		key, literal := n.Arguments[1].(*ast.StringNode)
		fk, fixed := c.varKey(n.Arguments[1])
		if literal {
			return c.getKey(n, key)
		}
		if fixed {
			return c.getVarKey(n, fk)
		}
	}
	var first *schema.Type
	var elemChain *objectScope // the element of a list below a get's value, for the closure
	if len(n.Arguments) > 0 {
		if step, names, _, ok := c.objectChain(n.Arguments[0]); ok && predicateBuiltins[n.Name] {
			elemChain = &objectScope{step: step, path: append(names, "*")}
		}
		first = c.typeOf(&n.Arguments[0])
		if n.Name == "get" && first != nil && first.KeyGet != "" {
			c.getThrough(n, first.KeyGet) // get(f.codes, k), a key computed when it runs
		}
	}
	elem := (*schema.Type)(nil)
	if first != nil {
		switch first.Kind {
		case schema.TList:
			elem = first.Elem
		case schema.TAny:
			elem = schema.AnyType
			if first == schema.EnvoyJSONType {
				elem = first // an item of a JSON list is free-form JSON again: its keys checked
			}
		}
	}
	if predicateBuiltins[n.Name] && first != nil && first != nilType && first.Kind != schema.TList && first.Kind != schema.TAny {
		c.fail(col(n.Arguments[0]), "%s(%s, …) goes through a list, and %s is %s%s", n.Name, n.Arguments[0], n.Arguments[0], describe(first), listHint(first))
		return nil
	}
	var rest []*schema.Type
	for i := 1; i < len(n.Arguments); i++ {
		if predicateBuiltins[n.Name] {
			c.scopes = append(c.scopes, elem)
			c.objScopes = append(c.objScopes, elemChain)
		}
		rest = append(rest, c.typeOf(&n.Arguments[i]))
		if predicateBuiltins[n.Name] {
			c.scopes = c.scopes[:len(c.scopes)-1]
			c.objScopes = c.objScopes[:len(c.objScopes)-1]
		}
	}
	switch n.Name {
	case "all", "none", "any", "one":
		return schema.BoolType
	case "filter":
		return first
	case "map":
		if len(rest) > 0 && rest[0] != nil {
			return schema.ListOf(rest[0])
		}
		return &schema.Type{Kind: schema.TList, Elem: schema.AnyType}
	case "count", "len", "findIndex", "findLastIndex":
		if n.Name == "len" && first != nil && first != nilType {
			switch first.Kind {
			case schema.TNumber, schema.TBool:
				c.fail(col(n.Arguments[0]), "len(%s): %s is %s: len counts the items of a list, a map or a string", n.Arguments[0], n.Arguments[0], describe(first))
				return nil
			}
		}
		return schema.Num(schema.Count)
	case "find", "findLast", "first", "last":
		return elem
	case "sum", "mean", "median", "min", "max":
		if n.Name == "sum" && len(rest) > 0 {
			return rest[0]
		}
		if elem != nil && elem.Kind == schema.TNumber {
			return elem
		}
		if n.Name == "min" || n.Name == "max" {
			first = c.bareMinMax(n, append([]*schema.Type{first}, rest...))
		}
		if (n.Name == "min" || n.Name == "max") && first != nil && first.Kind == schema.TNumber {
			// max(fortio.p50, ended.fortio) set milliseconds against seconds, and read as
			// the first's unit.
			for i, t := range rest {
				if t != nil && t.Kind == schema.TNumber && t.Unit != first.Unit && t.Unit != schema.Plain && first.Unit != schema.Plain {
					c.fail(col(n.Arguments[i+1]), "%s mixes units: %s is %s, %s is %s; convert one (e.g. seconds × 1000 = milliseconds)", n, n.Arguments[0], unitWords[first.Unit], n.Arguments[i+1], unitWords[t.Unit])
					return nil
				}
			}
			return first
		}
		return schema.NumberType
	case "abs", "ceil", "floor", "round":
		if first != nil && first.Kind == schema.TNumber {
			return first
		}
		return schema.NumberType
	case "int", "float":
		return schema.NumberType
	case "duration":
		if msg := durationArgument(n, first); msg != "" {
			c.fail(col(n), "%s", msg)
		}
		return nil
	case "string", "upper", "lower", "trim", "trimPrefix", "trimSuffix", "toJSON", "join", "type":
		return schema.StringType
	case "split":
		return schema.ListOf(schema.StringType)
	case "keys":
		return schema.ListOf(schema.StringType)
	case "values":
		if first != nil && first.Kind == schema.TMap {
			return schema.ListOf(first.Elem)
		}
		if first != nil && first.Kind == schema.TStats {
			return schema.ListOf(schema.NumberType)
		}
	case "get", "fromJSON":
		return schema.AnyType
	}
	return nil
}

// readThrough notes that chain[i], the read at node, was rewritten to a function whose get
// is fn, where it is the chain's last link (getKey asks).
func (c *exprChecker) readThrough(node *ast.Node, chain []chainLink, i int, fn string) {
	if i == len(chain)-1 {
		c.keyReadAt, c.keyGet = node, fn
	}
}

// getThrough hands get(m, k), m a map whose keys can have no value (schema.Type.KeyGet, a
// load's codes) or a load's result read by a latency's name, through fn: get's nil would be
// what ?? makes a passing 0.
func (c *exprChecker) getThrough(n *ast.BuiltinNode, fn string) {
	if c.keyGets == nil {
		c.keyGets = map[*ast.BuiltinNode]string{}
	}
	c.keyGets[n] = fn
}

// getKey types get(x, "key"), a read of a key written in the expression: expr's get gives nil
// where x has no such key, so a misspelt key would be a nil that ?? turns into a passing
// default. The key is checked as x.key checks it, by typing that read (its messages, its
// stat reference, the capture group or step value it reads), and the read's type is get's;
// what is evaluated stays get, whose nil is what the user wrote it for, of the value x.key
// reads (an alias's map: get(fortio, "code503") is get(fortio.codes, "503")).
func (c *exprChecker) getKey(n *ast.BuiltinNode, key *ast.StringNode) *schema.Type {
	m := &ast.MemberNode{Node: n.Arguments[0], Property: &ast.StringNode{Value: key.Value}}
	m.SetLocation(key.Location())
	m.Property.SetLocation(key.Location())
	var read ast.Node = m
	root := n.Arguments[0].String()
	before, warns := c.err, len(c.warns)
	c.getting++
	groups := c.groupReads
	t := c.member(&read)
	c.getting--
	if c.keyReadAt == &read && c.keyGet != "" {
		c.getThrough(n, c.keyGet) // get(f.codes, "503"), get(f, "code503"), get(f, "p99")
	}
	if c.groupReads > groups {
		if c.groupGets == nil {
			c.groupGets = map[*ast.BuiltinNode]string{}
		}
		c.groupGets[n] = c.groupStep
	}
	what := fmt.Sprintf("get(%s, %q)", root, key.Value)
	if c.err != before && c.err != nil {
		c.err.msg = what + ": " + c.err.msg
	}
	for i := warns; i < len(c.warns); i++ {
		c.warns[i].msg = what + ": " + c.warns[i].msg
	}
	if r, ok := read.(*ast.MemberNode); ok && !r.Method {
		if k, ok := r.Property.(*ast.StringNode); ok {
			n.Arguments[0] = r.Node
			if k.Value != key.Value {
				n.Arguments[1] = &ast.StringNode{Value: k.Value}
				n.Arguments[1].SetLocation(key.Location())
			}
			return t
		}
	}
	// What x.key reads is not a key of x (after.hosts reads the snapshot's hosts): get(x,
	// "key") is nil whatever the run records.
	n.Arguments[0] = m.Node
	if c.err == before {
		c.fail(col(key), "%s is always nil: %s is not a key of %s; read it as %s.%s", what, key.Value, root, root, key.Value)
	}
	return nil
}

// getVarKey types get(x, k) where vars fix the key k: as get(x, "<its value>") (getKey), so
// that a misspelt value is refused as the key written out would be, and a stat x's source is
// not known to have must be in one of its snapshots when the expression is judged, where
// get's nil would be what ?? turns into a passing default. What is evaluated stays k.
func (c *exprChecker) getVarKey(n *ast.BuiltinNode, fk fixedKey) *schema.Type {
	written := n.String()
	c.typeOf(&n.Arguments[1]) // the vars it reads
	key := &ast.StringNode{Value: fk.key}
	key.SetLocation(fk.first.Location())
	before, warns := c.err, len(c.warns)
	literal := fmt.Sprintf("get(%s, %q): ", n.Arguments[0], fk.key) // getKey's prefix
	t := c.getKey(n, key)
	said := fmt.Sprintf("%s: %s: ", written, fk.said())
	if c.err != before && c.err != nil {
		c.err.msg = said + strings.TrimPrefix(c.err.msg, literal)
	}
	for i := warns; i < len(c.warns); i++ {
		c.warns[i].msg = said + strings.TrimPrefix(c.warns[i].msg, literal)
	}
	return t
}

// listHint says how to go through a map's values.
func listHint(t *schema.Type) string {
	switch t.Kind {
	case schema.TMap, schema.TStats:
		return ": go through its keys or values with keys(…) or values(…)"
	}
	return ""
}

// TypeOf is the static type of the expression src over n (nil when it does not type), as vet
// computes it, without compiling it: what reports and editors show of a value (its unit).
func (n *Names) TypeOf(src string) *schema.Type {
	tree, err := parser.Parse(src)
	if err != nil {
		return nil
	}
	c := &exprChecker{names: n}
	t := c.typeOf(&tree.Node)
	if c.err != nil {
		return nil
	}
	return t
}

// deltaType is what delta reads: the counters between the first and the last snapshot.
func (n *Names) deltaType() *schema.Type {
	if n.DeltaFrom == "" {
		return schema.StatsOf(&schema.StatSource{Deltas: true})
	}
	src := *n.Results[n.DeltaFrom].Type.Stats
	src.Deltas = true
	return schema.StatsOf(&src)
}

// varsType is the vars, typed by their values.
func (n *Names) varsType() *schema.Type {
	if n.vars == nil {
		n.vars = schema.TypeOfValue(map[string]any(n.Vars))
	}
	return n.vars
}

// nsType is ns: the run's name of each ephemeral namespace, by key.
func (n *Names) nsType() *schema.Type {
	key := &schema.Type{Kind: schema.TString, Go: schema.StringType.Go, Doc: "an ephemeral namespace's key",
		Hint: "declare it under ephemeralNamespaces"}
	return schema.MapOf(key, schema.Str("the namespace's name in this run")).WithKeys(sortedKeys(n.Namespaces))
}

// stepMap is started, ended, outcome or error: a map by step name.
func (n *Names) stepMap(what string, elem *schema.Type) *schema.Type {
	t := schema.MapOf(schema.Str("a step's name"), elem)
	return t.WithKeys(sortedKeys(n.Steps))
}

// targetValues are the values each built-in target gives expressions under target.
var targetValues = map[string][]string{
	"kube":  {"clusterDomain", "clusters"},
	"local": {"backends", "blackholes", "dns"},
}

// targetType is target: the values the scenario's target gives (any, when it is not known).
func (n *Names) targetType() *schema.Type {
	key := &schema.Type{Kind: schema.TString, Go: schema.StringType.Go, Doc: fmt.Sprintf("a value the %s target gives", n.Target),
		Hint: "clusterDomain comes from the kube target (from the CoreDNS Corefile); a local scenario writes its own names"}
	t := schema.MapOf(key, schema.AnyType)
	if keys, ok := targetValues[n.Target]; ok {
		if n.Target == "kube" && len(n.Clusters) == 0 {
			// target.clusters is there when the scenario declares clusters (it read nil).
			keys = slices.DeleteFunc(slices.Clone(keys), func(k string) bool { return k == "clusters" })
			key.Hint += "; target.clusters is there when the scenario declares clusters: {name: \"<kubeconfig context>\", …}"
		}
		t = t.WithKeys(keys)
	}
	return t
}

// clustersType is target.clusters on the kube target: what each of the scenario's clusters
// gives, by name. It was any: ${target.clusters.wset.clusterDomain} (west misspelt) vetted ok.
func (n *Names) clustersType() *schema.Type {
	key := &schema.Type{Kind: schema.TString, Go: schema.StringType.Go, Doc: "a cluster of the scenario",
		Hint: "target.clusters' keys are the names under clusters:"}
	cluster := schema.StructOf(nil,
		schema.F("context", schema.Str(""), "the kubeconfig context the run reached the cluster by"),
		schema.F("clusterDomain", schema.Str(""), "the cluster's domain (from its CoreDNS Corefile)"))
	return schema.MapOf(key, cluster).WithKeys(n.Clusters)
}

// outcomeType is what outcome.<step> holds.
var outcomeType = &schema.Type{Kind: schema.TString, Go: schema.StringType.Go,
	Enum: []string{OutcomePassed, OutcomeFailed, OutcomeError, OutcomeSkipped, OutcomeInterrupted, OutcomeRunning, OutcomePending}}

var endpointType = schema.StructOf(nil,
	schema.F("address", schema.StrForm("ip:port", schema.FormAddress), "where it listens"),
	schema.F("host", schema.StrForm("", schema.FormHost), "its host"),
	schema.F("port", schema.NumberType, "its port"),
	schema.F("url", schema.StrForm("", schema.FormURL), "http://address"),
)

// blackholeType is a local blackhole: an address that never accepts, no HTTP server.
var blackholeType = endpointType.With(func(f *schema.Field) *schema.Field {
	if f.Name != "url" {
		return f
	}
	g := *f
	g.Absent = "a blackhole is no HTTP server (it never accepts a connection): it has no url; write its address, http://${blackholes.<name>.address}/"
	return &g
})

// endpointMap is backends or blackholes.
func (n *Names) endpointMap(set map[string]bool, t *schema.Type) *schema.Type {
	return schema.MapOf(schema.Str("a local endpoint's name"), t).WithKeys(sortedKeys(set))
}

// snapshots lists the names of the results that are stats maps, sorted.
func (n *Names) snapshots() []string {
	var out []string
	for name, r := range n.Results {
		if r.Type.Kind == schema.TStats {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// wholeCapture reports whether node reads a logs step's capture or an exec's captured as a
// whole (x.capture, x["capture"]), and which step's.
func (c *exprChecker) wholeCapture(node ast.Node) (string, bool) {
	m, ok := node.(*ast.MemberNode)
	if !ok {
		return "", false
	}
	id, ok := m.Node.(*ast.IdentifierNode)
	prop, ok2 := m.Property.(*ast.StringNode)
	if !ok || !ok2 {
		return "", false
	}
	if _, shadowed := c.lets[id.Value]; shadowed {
		return "", false
	}
	r := c.names.Results[id.Value]
	if r == nil || !(r.Kind == "logs" && prop.Value == "capture" || r.Kind == "exec" && prop.Value == "captured") {
		return "", false
	}
	return id.Value, true
}

// firstKey is the first key a map literal writes ("group" when it writes none that is a name).
func firstKey(m *ast.MapNode) string {
	for _, p := range m.Pairs {
		if pair, ok := p.(*ast.PairNode); ok {
			if k, ok := pair.Key.(*ast.StringNode); ok {
				return k.Value
			}
		}
	}
	return "group"
}

// methodInstead says what expressions write for x.name(args), a method call of another
// language on a value that has none: an operator (startsWith, endsWith, contains, matches)
// or a builtin with x as its first argument (lower(x), split(x, ",")).
func methodInstead(x, name string, args []ast.Node) string {
	written := make([]string, len(args))
	for i, a := range args {
		written[i] = a.String()
	}
	switch name {
	case "startsWith", "endsWith", "contains", "matches":
		if len(args) == 1 {
			return fmt.Sprintf("expected the operator: %s %s %s", x, name, written[0])
		}
	case "includes":
		if len(args) == 1 {
			return fmt.Sprintf("expected the operator: %s contains %s (of a string), or %s in %s (of a list)", x, written[0], written[0], x)
		}
	}
	if _, ok := builtin.Index[name]; ok {
		return fmt.Sprintf("expected the builtin with the value as its first argument: %s(%s)", name, strings.Join(append([]string{x}, written...), ", "))
	}
	return "expected an operator or a builtin over it (docs/language.md lists them)"
}

// durationArgument says why duration(x) of first, x's type, is a mistake ("" when it is
// none): duration reads a string with a unit ("100ms"). duration(vars.maxP99) of a var
// declared 0.1, or duration(fortio.p99), passed vet and erred only when judged, after the
// run, in Go's words ("interface conversion: interface {} is float64, not string").
func durationArgument(n *ast.BuiltinNode, first *schema.Type) string {
	if len(n.Arguments) != 1 || first == nil || first == nilType || first.Kind == schema.TAny || first.Kind == schema.TString {
		return ""
	}
	arg := n.Arguments[0]
	what := fmt.Sprintf("%s: duration reads a string with a unit, such as '100ms' or '2s', and %s is %s", n, arg, describe(first))
	if m, ok := arg.(*ast.MemberNode); ok {
		id, isID := m.Node.(*ast.IdentifierNode)
		name, isStr := m.Property.(*ast.StringNode)
		if isID && isStr && id.Value == "vars" && first.Kind == schema.TNumber {
			return what + fmt.Sprintf(", with no unit: declare it with its unit (%s: \"100ms\", or \"2s\") and keep duration(%s)", name.Value, arg)
		}
	}
	if isTime(first) {
		return what + fmt.Sprintf(", a time already: compare it as it is, %s < duration('100ms')", arg)
	}
	return what + ": expected a string"
}

// durationBeside says why n, a comparison of a duration (duration('1s'), or a sum or a
// scaling of them) with what is no time, is a mistake ("" when it is none): a duration
// compares with a time in milliseconds or seconds only (durationIn writes it in its unit).
// fortio.qps > duration('1s') was refused in expr's words ("mismatched types float64 and
// time.Duration"), naming neither side, and p.stdout < duration('1s') passed vet and erred
// when judged, after the run.
func durationBeside(n *ast.BinaryNode, written [2]string, l, r *schema.Type) string {
	sides := [2]ast.Node{n.Left, n.Right}
	types := [2]*schema.Type{l, r}
	for i := range sides {
		other := types[1-i]
		if !isDurationExpr(sides[i]) || !known(other) || other == nilType || isTime(other) || holdsClock(sides[1-i]) {
			continue
		}
		return fmt.Sprintf("%s %s %s compares %s, a duration, with %s, %s: a duration compares only with a time in milliseconds or seconds (a load's p50, p99 or duration, ended.<step> - started.<step>, a log entry's duration); expected a time there, or a bound that is %s",
			written[0], n.Operator, written[1], written[i], written[1-i], describe(other), other.Word())
	}
	return ""
}

// holdsClock says whether n calls duration, now or date anywhere: what it is when judged is
// then a time.Duration or a time.Time however it is typed here (now() - date(…) is a
// duration, max(duration('1s'), …) one too).
func holdsClock(n ast.Node) bool {
	return ast.Find(n, func(x ast.Node) bool {
		b, ok := x.(*ast.BuiltinNode)
		return ok && (b.Name == "duration" || b.Name == "now" || b.Name == "date")
	}) != nil
}

// VarNameUnit is the time unit vet reads a number var's name to give it beside a time
// (maxDurationMs: milliseconds), as nameUnit; "" for a name that gives none. Editors show it.
func VarNameUnit(name string) schema.Unit { return nameUnit(name) }

// nameUnit is the time unit a var's name gives its number, by its last word (timeoutMs,
// max_p99_ms, maxDurationSeconds, delay_s): milliseconds or seconds; "" for any other name.
func nameUnit(name string) schema.Unit {
	last := name
	if i := strings.LastIndexAny(name, "_-"); i >= 0 {
		last = name[i+1:]
	} else {
		upper := func(b byte) bool { return b >= 'A' && b <= 'Z' }
		i := len(name) - 1
		if upper(name[i]) {
			// a trailing acronym is one word: maxQPS is qps, not s; timeoutMS is ms
			for i > 0 && upper(name[i-1]) {
				i--
			}
		} else {
			for i > 0 && !upper(name[i]) {
				i--
			}
		}
		if i > 0 {
			last = name[i:]
		}
		if last == name {
			return "" // one word: "ms" alone names no quantity
		}
	}
	switch strings.ToLower(last) {
	case "ms", "msec", "msecs", "millis", "milliseconds":
		return schema.Millis
	case "s", "sec", "secs", "seconds":
		return schema.Seconds
	}
	return ""
}

// varNamedUnit says why comparing x with y (typed tx, ty), where one is a number var whose
// name gives it a time unit (vars.maxDurationMs) and the other a time of the other unit, is
// a mistake ("" when it is none). A var's number has no unit of its own, so
// fortio.duration < vars.maxDurationMs (2000, meant as 2 s) read 2000 seconds and held of
// any load shorter than half an hour, and vet, which knows the unit of fortio.duration,
// said nothing.
func varNamedUnit(n ast.Node, written [2]string, x, y ast.Node, tx, ty *schema.Type) string {
	sides := [2]ast.Node{x, y}
	types := [2]*schema.Type{tx, ty}
	for i, side := range sides {
		m, ok := side.(*ast.MemberNode)
		if !ok || types[i] == nil || types[i].Kind != schema.TNumber || !isTime(types[1-i]) {
			continue
		}
		id, ok := m.Node.(*ast.IdentifierNode)
		prop, isStr := m.Property.(*ast.StringNode)
		if !ok || id.Value != "vars" || !isStr || m.Method {
			continue
		}
		u := nameUnit(prop.Value)
		if u == "" || u == types[1-i].Unit {
			continue
		}
		fix := written[i] + " / 1000"
		if u == schema.Seconds {
			fix = written[i] + " * 1000"
		}
		return fmt.Sprintf("%s mixes units: %s is %s, and %s is %s by its name (a var's number has no unit of its own, so it is read as %s); convert it (%s), or declare the var as a duration (\"2s\") and write duration(%s)",
			n, written[1-i], unitWords[types[1-i].Unit], written[i], unitWords[u], unitWords[types[1-i].Unit], fix, written[i])
	}
	return ""
}

// numberText says why n, int(x) or float(x) of x whose text is known when the scenario loads
// (a literal, a var's value), fails when judged ("" when it does not): expr parses the text
// as Go does, a whole number for int ("42"), any for float ("0.5"), nothing around it.
func numberText(n *ast.BuiltinNode, text string) string {
	var err error
	if n.Name == "int" {
		_, err = strconv.Atoi(text)
	} else {
		_, err = strconv.ParseFloat(text, 64)
		if err == nil && NonFiniteNumberText(text) {
			// float("NaN") has no value (finite.go): known here, refused before the run.
			return fmt.Sprintf("%s: %s is %q, which float reads as %s, not a number measured; expected a finite number written as text, such as \"0.5\"", n, n.Arguments[0], text, nonFiniteWord(text))
		}
	}
	if err == nil {
		return ""
	}
	what := "a whole number written as text, such as \"42\""
	if n.Name == "float" {
		what = "a number written as text, such as \"0.5\""
	}
	hint := ""
	if _, derr := time.ParseDuration(text); derr == nil {
		hint = fmt.Sprintf("; %q is a duration: compare it with a time as duration(%s)", text, n.Arguments[0])
	}
	return fmt.Sprintf("%s: %s is %q, which %s cannot read: it reads %s%s", n, n.Arguments[0], text, n.Name, what, hint)
}

// varNumber is the number a var read as vars.name holds where the scenario loads (each
// combination's, in a sweep); false for anything else.
func (c *exprChecker) varNumber(x ast.Node) (float64, bool) {
	m, ok := x.(*ast.MemberNode)
	if !ok || m.Method || c.names == nil {
		return 0, false
	}
	id, ok := m.Node.(*ast.IdentifierNode)
	name, isStr := m.Property.(*ast.StringNode)
	if !ok || !isStr || id.Value != "vars" {
		return 0, false
	}
	if _, shadowed := c.lets[id.Value]; shadowed {
		return 0, false
	}
	switch v := c.names.Vars[name.Value].(type) {
	case int:
		return float64(v), true
	case int64:
		return float64(v), true
	case float64:
		return v, true
	}
	return 0, false
}
