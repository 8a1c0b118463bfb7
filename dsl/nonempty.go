package dsl

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/expr-lang/expr/ast"
)

// An expectation or an assert that says every item of a collection the run produced holds
// something, or none does — all(log.entries, .code != 503), none(pods.items, .status.phase ==
// 'Failed'), count(log.entries, .code == 503) == 0 — holds of an empty collection whatever it
// says: it passes having read nothing (a log nothing wrote, a get that found no pod, a filter
// that kept no row). As a logs step's codes have no value where no line matched
// (schema.LogResult.NoValue), such an all(), none() or count() has none where its collection
// is empty: the judgement errs, saying so, instead of passing. The claim stays the user's to make where an empty collection is what they claim:
// an expression that reads the collection itself elsewhere (len(log.entries) == 0 || …, or
// len(log.entries) > 0 && …) has said what an empty one means, and is judged as written.
//
// Only a collection that reads what the run recorded is judged (a step's result, delta,
// outcome…; not vars, a literal, the target's values), and only one that does not read the
// item of an enclosing all(), filter()… (all(pods.items, all(.spec.containers, …)) reads
// each pod's own list: an empty one is a fact about that pod). A wait's or a repeat's until
// is not judged so: none(pods.items, …) over no pod may be the state it waits for.

// nonEmptyFunc is the environment name of the function that all()'s, none()'s and count()'s
// collections are handed through (NonEmpty).
const nonEmptyFunc = "__nonEmpty"

// NonEmptyFunc is the environment name the interpreter must bind to NonEmpty.
const NonEmptyFunc = nonEmptyFunc

// EmptyCollection is the error of a quantifier over an empty collection the run produced.
type EmptyCollection struct {
	// Call is the quantifier as written (all(log.entries, .code != 503)), Src its collection.
	Call, Src string
}

func (e *EmptyCollection) Error() string {
	fn, _, _ := strings.Cut(e.Call, "(")
	holds := "it holds of nothing and would pass having read nothing"
	if fn == "count" {
		holds = "it counts nothing, and its 0 would read as none found"
	}
	return fmt.Sprintf("%s(%s, …) has no value: %s is empty, so %s; claim that there is something (len(%s) > 0 && %s), or, where an empty one is the claim, say so (len(%s) == 0 || %s)",
		fn, e.Src, e.Src, holds, e.Src, e.Call, e.Src, e.Call)
}

// NonEmpty gives c back, or an EmptyCollection error when it is an empty list or map (or
// nil): call is the all(), none() or count() that goes through it, src c's source.
func NonEmpty(call, src string, c any) (any, error) {
	if c == nil {
		return nil, &EmptyCollection{Call: call, Src: src}
	}
	switch v := reflect.ValueOf(c); v.Kind() {
	case reflect.Slice, reflect.Array, reflect.Map:
		if v.Len() == 0 {
			return nil, &EmptyCollection{Call: call, Src: src}
		}
	}
	return c, nil
}

// quantifiers are the builtins whose value over an empty collection is the same whatever their
// predicate: all() and none() hold, count() is 0 (count(log.entries, .code == 503) == 0 is
// log.codes['503'] == 0).
var quantifiers = map[string]bool{"all": true, "none": true, "count": true}

// quantified is an all(), none() or count() whose collection is handed through __nonEmpty.
type quantified struct {
	b         *ast.BuiltinNode
	call, src string // as parsed: the quantifier and its collection
}

// quantifiedOf finds, in the tree as parsed (before the checker's rewrites), each all() and
// none() whose collection reads the run, reads no enclosing item, and is not read elsewhere in
// the expression (the same source outside a quantifier's collection).
func quantifiedOf(node ast.Node) []quantified {
	var quants []quantified
	uses := map[string]int{}
	lets := map[string]bool{} // let names, and whether their value reads the run
	var walk func(n ast.Node, collection bool)
	walk = func(n ast.Node, collection bool) {
		if n == nil {
			return
		}
		if !collection {
			uses[n.String()]++
		}
		if v, ok := n.(*ast.VariableDeclaratorNode); ok {
			lets[v.Name] = readsRun(v.Value, lets)
		}
		b, ok := n.(*ast.BuiltinNode)
		if ok && quantifiers[b.Name] && len(b.Arguments) == 2 {
			arg := b.Arguments[0]
			if !readsItem(arg) && readsRun(arg, lets) {
				quants = append(quants, quantified{b: b, call: b.String(), src: arg.String()})
			}
			walk(arg, true)
			walk(b.Arguments[1], false)
			return
		}
		for _, c := range children(n) {
			walk(c, false)
		}
	}
	walk(node, false)
	out := quants[:0]
	for _, q := range quants {
		if uses[q.src] == 0 {
			out = append(out, q)
		}
	}
	return out
}

// wrapQuantifiers hands the collection of each of quants through __nonEmpty(call, src,
// collection): run after the checker's rewrites, it wraps the collection as rewritten.
func wrapQuantifiers(quants []quantified) {
	for _, q := range quants {
		q.b.Arguments[0] = &ast.CallNode{
			Callee:    &ast.IdentifierNode{Value: nonEmptyFunc},
			Arguments: []ast.Node{&ast.StringNode{Value: q.call}, &ast.StringNode{Value: q.src}, q.b.Arguments[0]},
		}
	}
}

// readsItem reports whether n reads the item of a closure around it (# or .field): a pointer
// outside the predicates n holds itself.
func readsItem(n ast.Node) bool {
	found := false
	var walk func(n ast.Node)
	walk = func(n ast.Node) {
		switch n.(type) {
		case nil:
			return
		case *ast.PointerNode:
			found = true
			return
		case *ast.PredicateNode:
			return // its pointers are its own items
		}
		for _, c := range children(n) {
			walk(c)
		}
	}
	walk(n)
	return found
}

// notRun are the names of the environment that hold no value the run records.
var notRun = map[string]bool{"vars": true, "target": true, "backends": true, "blackholes": true, "ns": true,
	"approx": true, "within": true, "has": true, "$env": true}

// readsRun reports whether n reads a value the run records: a name of the environment other
// than vars, the target's values and labrun's functions (a step's result, delta, outcome…), or
// a let bound to one (lets: each let name, and whether its value reads the run).
func readsRun(n ast.Node, lets map[string]bool) bool {
	found := false
	var walk func(n ast.Node)
	walk = func(n ast.Node) {
		if found || n == nil {
			return
		}
		if x, ok := n.(*ast.IdentifierNode); ok {
			if v, bound := lets[x.Value]; bound {
				found = v
			} else {
				found = !notRun[x.Value]
			}
			return
		}
		for _, c := range children(n) {
			walk(c)
		}
	}
	walk(n)
	return found
}

// children are the nodes directly under n.
func children(n ast.Node) []ast.Node {
	switch x := n.(type) {
	case *ast.MemberNode:
		return []ast.Node{x.Node, x.Property}
	case *ast.ChainNode:
		return []ast.Node{x.Node}
	case *ast.CallNode:
		return append([]ast.Node{x.Callee}, x.Arguments...)
	case *ast.BuiltinNode:
		return x.Arguments
	case *ast.PredicateNode:
		return []ast.Node{x.Node}
	case *ast.UnaryNode:
		return []ast.Node{x.Node}
	case *ast.BinaryNode:
		return []ast.Node{x.Left, x.Right}
	case *ast.ConditionalNode:
		return []ast.Node{x.Cond, x.Exp1, x.Exp2}
	case *ast.VariableDeclaratorNode:
		return []ast.Node{x.Value, x.Expr}
	case *ast.SequenceNode:
		return x.Nodes
	case *ast.SliceNode:
		return []ast.Node{x.Node, x.From, x.To}
	case *ast.ArrayNode:
		return x.Nodes
	case *ast.MapNode:
		return x.Pairs
	case *ast.PairNode:
		return []ast.Node{x.Key, x.Value}
	}
	return nil
}
