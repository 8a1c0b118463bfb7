package dsl

import (
	"slices"

	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/parser"
)

// What an expectation reads, for the summaries of repeated and swept runs: the operands of its
// comparisons (what a failure shows), then every value it reads anywhere — inside function
// calls (within(fortio.p50, 0, 1000)), arithmetic, conditions, closures' captured names and
// let bindings (the bound value too, when it can be evaluated on its own). A read is the
// longest member chain rooted at a name of the environment (fortio.p50, delta.rq_total,
// delta("a", "b").rq_total, perconn.ips[backends.a.address]); names bound by let and the
// closure's # are not reads.

// ReadsOf lists the values e reads, each once, as leaves whose Value evaluates it alone
// against the judge's environment.
func ReadsOf(e *Expr) []*Explain {
	if e == nil {
		return nil
	}
	names := explainNames(e.Explain)
	var out, bound []*Explain
	seen := map[string]bool{}
	add := func(src string) {
		if !seen[src] {
			seen[src] = true
			out = append(out, &Explain{Src: src, names: names})
		}
	}
	// The operands of comparisons; a leaf joined by &&, || or not is a verdict, not a value.
	var operands func(x *Explain)
	operands = func(x *Explain) {
		switch {
		case x == nil || x.Op == "":
		case comparisons[x.Op]:
			for _, o := range []*Explain{x.Left, x.Right} {
				if o == nil || o.names == nil {
					continue
				}
				if withLets(o.lets, o.Src) == o.Src {
					add(o.Src)
				} else {
					bound = append(bound, o)
				}
			}
		default:
			operands(x.Left)
			operands(x.Right)
		}
	}
	operands(e.Explain)
	tree, err := parser.Parse(e.Src)
	if err != nil {
		return out
	}
	r := &readWalk{add: add}
	r.walk(tree.Node, nil)
	// An operand that reads a let's name (i, busy.samples[i].at - started.fortio) is
	// evaluated with the bindings it reads, as the explanation shows it: the reports' lists of
	// values showed of let i = findIndex(…); busy.samples[i].at - started.fortio < duration('1s')
	// started.fortio alone. A bare name whose value the walk added already (let r = a / b;
	// r > 0.9) is not listed twice.
	for _, o := range bound {
		if seen[o.Src] || slices.ContainsFunc(o.lets, func(l letBinding) bool { return l.name == o.Src && seen[NormalizeRead(l.value)] }) {
			continue
		}
		seen[o.Src] = true
		out = append(out, o.Derived(o.Src))
	}
	return out
}

// ReadSources is the source of every value the expressions read, in order, each once.
func ReadSources(exprs []*Expr) []string {
	var out []string
	seen := map[string]bool{}
	for _, e := range exprs {
		for _, r := range ReadsOf(e) {
			if !seen[r.Src] {
				seen[r.Src] = true
				out = append(out, r.Src)
			}
		}
	}
	return out
}

// NormalizeRead writes src as ReadsOf names it (expr's own formatting), or "" when it does not
// parse.
func NormalizeRead(src string) string {
	tree, err := parser.Parse(src)
	if err != nil {
		return ""
	}
	return tree.Node.String()
}

// explainNames finds the names a leaf of the tree compiles against (nil: no leaf reads any).
func explainNames(x *Explain) *Names {
	if x == nil {
		return nil
	}
	if x.names != nil {
		return x.names
	}
	for _, c := range append([]*Explain{x.Left, x.Right}, x.Args...) {
		if n := explainNames(c); n != nil {
			return n
		}
	}
	return nil
}

type readWalk struct {
	add func(src string)
}

// bound is the chain of names let has bound around a node.
type bound struct {
	name string
	up   *bound
}

func (b *bound) has(name string) bool {
	for ; b != nil; b = b.up {
		if b.name == name {
			return true
		}
	}
	return false
}

// calls are the functions of the environment: their names are not values.
var calls = map[string]bool{"approx": true, "within": true, "has": true, "quantity": true, "delta": true, deltaFunc: true, hostsFunc: true}

func (r *readWalk) walk(n ast.Node, b *bound) {
	switch n := n.(type) {
	case *ast.IdentifierNode:
		if !b.has(n.Value) && !calls[n.Value] && n.Value != "$env" {
			r.add(n.String())
		}
	case *ast.MemberNode:
		if r.rooted(n, b) {
			r.add(n.String())
		}
		// The computed indexes of the chain are values of their own.
		var cur ast.Node = n
		for {
			m, ok := cur.(*ast.MemberNode)
			if !ok {
				break
			}
			switch m.Property.(type) {
			case *ast.StringNode, *ast.IntegerNode:
			default:
				r.walk(m.Property, b)
			}
			cur = m.Node
		}
		if c, ok := cur.(*ast.CallNode); ok && !isDelta(c) {
			r.walk(c, b)
		}
	case *ast.ChainNode:
		r.walk(n.Node, b)
	case *ast.CallNode:
		if isDelta(n) {
			return // delta("a", "b") alone is a map of stats; its members are the reads
		}
		if _, ok := n.Callee.(*ast.IdentifierNode); !ok {
			r.walk(n.Callee, b)
		}
		for _, a := range n.Arguments {
			r.walk(a, b)
		}
	case *ast.BuiltinNode:
		for _, a := range n.Arguments {
			r.walk(a, b)
		}
	case *ast.PredicateNode:
		r.walk(n.Node, b)
	case *ast.UnaryNode:
		r.walk(n.Node, b)
	case *ast.BinaryNode:
		r.walk(n.Left, b)
		r.walk(n.Right, b)
	case *ast.ConditionalNode:
		r.walk(n.Cond, b)
		r.walk(n.Exp1, b)
		r.walk(n.Exp2, b)
	case *ast.VariableDeclaratorNode:
		r.walk(n.Value, b)
		if _, leaf := n.Value.(*ast.MemberNode); !leaf && r.free(n.Value, b) && !isLiteralNode(n.Value) {
			r.add(n.Value.String()) // the bound value itself: let ratio = a / b
		}
		r.walk(n.Expr, &bound{n.Name, b})
	case *ast.SequenceNode:
		for _, x := range n.Nodes {
			r.walk(x, b)
		}
	case *ast.SliceNode:
		r.walk(n.Node, b)
		if n.From != nil {
			r.walk(n.From, b)
		}
		if n.To != nil {
			r.walk(n.To, b)
		}
	case *ast.ArrayNode:
		for _, x := range n.Nodes {
			r.walk(x, b)
		}
	case *ast.MapNode:
		for _, x := range n.Pairs {
			r.walk(x, b)
		}
	case *ast.PairNode:
		r.walk(n.Value, b)
	}
}

// rooted reports whether a member chain starts at a name of the environment (or at
// delta("a", "b")), not at a let-bound name or the closure's #.
func (r *readWalk) rooted(n *ast.MemberNode, b *bound) bool {
	var cur ast.Node = n
	for {
		switch x := cur.(type) {
		case *ast.MemberNode:
			cur = x.Node
		case *ast.ChainNode:
			cur = x.Node
		case *ast.IdentifierNode:
			return !b.has(x.Value) && r.free(n, b)
		case *ast.CallNode:
			return isDelta(x) && r.free(n, b)
		default:
			return false
		}
	}
}

// free reports whether n reads neither a let-bound name nor a closure's #: it can be
// evaluated on its own.
func (r *readWalk) free(n ast.Node, b *bound) bool {
	v := &freeVisitor{b: b, ok: true}
	ast.Walk(&n, v)
	return v.ok
}

type freeVisitor struct {
	b  *bound
	ok bool
}

func (v *freeVisitor) Visit(node *ast.Node) {
	switch n := (*node).(type) {
	case *ast.PointerNode:
		v.ok = false
	case *ast.IdentifierNode:
		if v.b.has(n.Value) {
			v.ok = false
		}
	case *ast.VariableDeclaratorNode:
		v.ok = false // a let inside: its name is bound in its body
	}
}

func isDelta(c *ast.CallNode) bool {
	id, ok := c.Callee.(*ast.IdentifierNode)
	return ok && id.Value == "delta"
}

func isLiteralNode(n ast.Node) bool {
	switch n.(type) {
	case *ast.IntegerNode, *ast.FloatNode, *ast.StringNode, *ast.BoolNode, *ast.NilNode:
		return true
	}
	return false
}
