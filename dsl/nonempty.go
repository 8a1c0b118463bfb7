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
// (schema.LogResult.NoValue), such a claim has none where its collection is empty: the
// judgement errs, saying so, instead of passing.
//
// The rule: a builtin whose value over an empty collection is the same whatever it asks of the
// items (its predicate, its mapping) — or, for an aggregate, whatever the items would have
// been — reads nothing of the run there, and so has no value. These are (emptyValue) all() and
// none() (true), any() and one() (false: !any(x, p) is none(x, p)), count() (0: count(x, p) ==
// 0 is none(x, p)), filter() and map() ([]: len(filter(x, p)) == 0 is none(x, p)), find() and
// findLast() (nil), findIndex() and findLastIndex() (-1), sum() (0: sum(map(x, .n)) == 0),
// mean() and median() of one list (0), max() and min() of one list (nil), reduce() (its
// initial value) and groupBy() ({}); first() and last() (nil) where ?. or ?? makes that nil a
// value ((first(x)?.priority ?? 0) == 0, first(x)?.priority != 1: nilRead). sortBy() is not
// one: it is its collection reordered, read as the collection itself is; nor are len(), keys(),
// first(x) == nil… which read the collection itself, not its items through a claim.
//
// The claim stays the user's to make where an empty collection is what they claim: an
// expression that reads the collection itself in another operand of &&, || or ?: (or in a
// let's value) — len(log.entries) == 0 || …, len(log.entries) > 0 && … — has said what an
// empty one means, and is judged as written. A read beside the builtin in the same comparison
// says nothing of it: count(x, p) == len(x) and len(filter(x, p)) == len(x) are all(x, p), 0
// == 0 over an empty x, and have no value there.
//
// Only a collection that reads what the run recorded is judged (a step's result, delta,
// outcome…; not vars, a literal, the target's values), and only one that does not read the
// item of an enclosing all(), filter()… (all(pods.items, all(.spec.containers, …)) reads
// each pod's own list: an empty one is a fact about that pod).
//
// A wait's or a repeat's until (a get's, a config's) is held to the same rule: it ends the
// wait as satisfied, and an until that holds only because its collection is empty would end
// it having read nothing. all(pods.items, .status.phase == 'Running') over no pod held at once
// (a wait for pods to be ready ended before any pod existed), and so did
// none(pods.items, .status.phase == 'Pending'), count(…) == 0, !any(…), and
// (first(pods.items)?.status.phase ?? 'Running') == 'Running'. So an until of such a builtin
// over an empty collection does not hold: it errs, saying the collection is empty, and is
// judged again at the next poll or round; the step's timeout or max says so. Where an empty
// collection is the state awaited (things gone), the until says so as a claim does:
// len(pods.items) == 0 || none(pods.items, .metadata.name == 'old') is judged as written.

// nonEmptyFunc is the environment name of the function that the collections of the builtins
// of emptyValue are handed through (NonEmpty).
const nonEmptyFunc = "__nonEmpty"

// NonEmptyFunc is the environment name the interpreter must bind to NonEmpty.
const NonEmptyFunc = nonEmptyFunc

// EmptyCollection is the error of a builtin of emptyValue over an empty collection the run
// produced.
type EmptyCollection struct {
	// Call is the builtin as written, its arguments after the collection elided
	// (all(log.entries, …)); Src its collection; Claim the comparison it is in (the operand of
	// &&, || or ?: that holds it), as written.
	Call, Src, Claim string
	// Until says it is in an until, which waits while the collection is empty.
	Until bool
}

func (e *EmptyCollection) Error() string {
	fn, _, _ := strings.Cut(e.Call, "(")
	if e.Until {
		what := emptyValue[fn]
		if fn == "all" || fn == "none" {
			what = "it holds of nothing, and would hold before any item exists"
		}
		return fmt.Sprintf("%s has no value yet: %s is empty, so %s; an until does not hold over an empty collection, and waits for one with items (where an empty one is what it waits for, say so: len(%s) == 0 || %s)",
			e.Call, e.Src, what, e.Src, e.Claim)
	}
	return fmt.Sprintf("%s has no value: %s is empty, so %s; claim that there is something (len(%s) > 0 && %s), or, where an empty one is the claim, say so (len(%s) == 0 || %s)",
		e.Call, e.Src, emptyValue[fn], e.Src, e.Claim, e.Src, e.Claim)
}

// NonEmpty gives c back, or an EmptyCollection error when it is an empty list or map (or
// nil): call is the builtin that goes through it, src c's source, claim the comparison the
// call is in, until whether it is an until's.
func NonEmpty(call, src, claim string, until bool, c any) (any, error) {
	if c == nil {
		return nil, &EmptyCollection{Call: call, Src: src, Claim: claim, Until: until}
	}
	switch v := reflect.ValueOf(c); v.Kind() {
	case reflect.Slice, reflect.Array, reflect.Map:
		if v.Len() == 0 {
			return nil, &EmptyCollection{Call: call, Src: src, Claim: claim, Until: until}
		}
	}
	return c, nil
}

// emptyValue are the builtins whose value over an empty collection is the same whatever they
// ask of its items, and what that value is.
var emptyValue = map[string]string{
	"all":           "it holds of nothing and would pass having read nothing",
	"none":          "it holds of nothing and would pass having read nothing",
	"any":           "it is false whatever it asks, having read nothing (and !any(…) would pass)",
	"one":           "it is false whatever it asks, having read nothing (and !one(…) would pass)",
	"count":         "it counts nothing, and its 0 would read as none found",
	"filter":        "it keeps nothing whatever it asks, and its [] would read as none found",
	"map":           "it maps nothing, and its [] reads no item",
	"find":          "it finds nothing whatever it asks, and its nil would read as none found",
	"findLast":      "it finds nothing whatever it asks, and its nil would read as none found",
	"findIndex":     "it finds nothing whatever it asks, and its -1 would read as none found",
	"findLastIndex": "it finds nothing whatever it asks, and its -1 would read as none found",
	"sum":           "it adds nothing, and its 0 would read as a total",
	"mean":          "it averages nothing, and its 0 would read as an average",
	"median":        "it averages nothing, and its 0 would read as a median",
	"max":           "it has no item to pick, and its nil reads nothing",
	"min":           "it has no item to pick, and its nil reads nothing",
	"reduce":        "it reduces nothing, and its value is its initial one whatever it computes",
	"groupBy":       "it groups nothing, and its {} would read as no group",
	"first":         "it has no item to take, and ?. or ?? would read its nil as an item's value (a field's default)",
	"last":          "it has no item to take, and ?. or ?? would read its nil as an item's value (a field's default)",
}

// nilRead are the builtins of emptyValue that read the collection itself, and go through
// __nonEmpty only where their nil is made a value: read through ?. (first(x)?.priority) or
// given a default by ?? (first(x) ?? {}). first(x) == nil claims x is empty, and first(x).f
// errs over an empty x: both are judged as written. (x[0] and x[-1] err over an empty x,
// with ?. and ?? too.)
var nilRead = map[string]bool{"first": true, "last": true}

// nilMadeValue are the calls of nilRead under n whose nil ?. or ?? makes a value: the object
// of an optional member (first(x)?.f, first(x)?.[0]) or the left of ??.
func nilMadeValue(n ast.Node) map[*ast.BuiltinNode]bool {
	out := map[*ast.BuiltinNode]bool{}
	mark := func(n ast.Node) {
		if b, ok := n.(*ast.BuiltinNode); ok && nilRead[b.Name] {
			out[b] = true
		}
	}
	var walk func(n ast.Node)
	walk = func(n ast.Node) {
		switch x := n.(type) {
		case nil:
			return
		case *ast.MemberNode:
			if x.Optional {
				mark(x.Node)
			}
		case *ast.BinaryNode:
			if x.Operator == "??" {
				mark(x.Left)
			}
		}
		for _, c := range children(n) {
			walk(c)
		}
	}
	walk(n)
	return out
}

// emptyArgs is how many arguments a builtin of emptyValue has when its first is the
// collection it goes through: 0, any; mean(), median(), max() and min() of more than one are
// of numbers.
var emptyArgs = map[string]int{"mean": 1, "median": 1, "max": 1, "min": 1}

// quantified is a builtin of emptyValue whose collection is handed through __nonEmpty.
type quantified struct {
	b                *ast.BuiltinNode
	call, src, claim string // as parsed: the builtin (elided), its collection, its comparison
	atom             ast.Node
}

// emptyRule says which builtins of emptyValue an expression hands their collection through
// __nonEmpty: none (a ${…}, a value), a claim's (an expectation, an assert), an until's.
type emptyRule uint8

const (
	noEmptyRule emptyRule = iota
	claimRule
	untilRule
)

// quantifiedOf finds, in the tree as parsed (before the checker's rewrites), each builtin of
// emptyValue whose collection reads the run, reads no enclosing item, and is not read in
// another operand of &&, || or ?: (or a let's value); the same of a claim and of an until
// (the rule, which wrapQuantifiers is given, says only which message the error gives).
func quantifiedOf(node ast.Node) []quantified {
	var quants []quantified
	uses := map[string]map[ast.Node]int{} // a source, and the atoms it is read in
	lets := map[string]bool{}             // let names, and whether their value reads the run
	madeValue := nilMadeValue(node)
	// The uses are counted only when the first walk found a builtin to judge (record): each
	// is a node's text, and writing out every node of every expression, most of which have no
	// such builtin, was a quarter of compiling the repository's expressions.
	record := false
	var walk func(n, atom ast.Node, collection bool)
	walk = func(n, atom ast.Node, collection bool) {
		if n == nil {
			return
		}
		if record && !collection {
			k := n.String()
			if uses[k] == nil {
				uses[k] = map[ast.Node]int{}
			}
			uses[k][atom]++
		}
		switch x := n.(type) {
		case *ast.VariableDeclaratorNode:
			lets[x.Name] = readsRun(x.Value, lets)
			walk(x.Value, x.Value, false)
			walk(x.Expr, x.Expr, false)
			return
		case *ast.BinaryNode:
			switch x.Operator {
			case "&&", "||", "and", "or":
				walk(x.Left, x.Left, false)
				walk(x.Right, x.Right, false)
				return
			}
		case *ast.ConditionalNode:
			walk(x.Cond, x.Cond, false)
			walk(x.Exp1, x.Exp1, false)
			walk(x.Exp2, x.Exp2, false)
			return
		case *ast.BuiltinNode:
			if _, ok := emptyValue[x.Name]; ok && len(x.Arguments) > 0 && (emptyArgs[x.Name] == 0 || len(x.Arguments) == emptyArgs[x.Name]) && (!nilRead[x.Name] || madeValue[x]) {
				arg := x.Arguments[0]
				if !record && !readsItem(arg) && readsRun(arg, lets) {
					call := x.Name + "(" + arg.String() + ")"
					if len(x.Arguments) > 1 {
						call = x.Name + "(" + arg.String() + ", …)"
					}
					quants = append(quants, quantified{b: x, call: call, src: arg.String(), claim: atom.String(), atom: atom})
				}
				walk(arg, atom, true)
				for _, a := range x.Arguments[1:] {
					walk(a, atom, false)
				}
				return
			}
		}
		for _, c := range children(n) {
			walk(c, atom, false)
		}
	}
	walk(node, node, false)
	if len(quants) == 0 {
		return nil
	}
	record = true
	clear(lets)
	walk(node, node, false)
	out := quants[:0]
	for _, q := range quants {
		elsewhere := false
		for a, n := range uses[q.src] {
			elsewhere = elsewhere || a != q.atom && n > 0
		}
		if !elsewhere {
			out = append(out, q)
		}
	}
	return out
}

// wrapQuantifiers hands the collection of each of quants through __nonEmpty(call, src, claim,
// until, collection): run after the checker's rewrites, it wraps the collection as rewritten.
func wrapQuantifiers(quants []quantified, rule emptyRule) {
	for _, q := range quants {
		q.b.Arguments[0] = &ast.CallNode{
			Callee: &ast.IdentifierNode{Value: nonEmptyFunc},
			Arguments: []ast.Node{&ast.StringNode{Value: q.call}, &ast.StringNode{Value: q.src}, &ast.StringNode{Value: q.claim},
				&ast.BoolNode{Value: rule == untilRule}, q.b.Arguments[0]},
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
	"approx": true, "within": true, "has": true, "quantity": true, "$env": true}

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
