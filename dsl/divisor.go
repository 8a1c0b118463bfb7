package dsl

import (
	"fmt"
	"reflect"
	"strconv"

	"github.com/expr-lang/expr/ast"
)

// A division (or a remainder) by zero has no value, as all() over an empty collection has
// none (nonempty.go): expr's / gives +Inf of 1 / 0 and NaN of 0 / 0, and a claim over either
// held having measured nothing: 1 / p.exit > 0 passed of an exit 0, !(x / n < 1) of a NaN,
// fortio.code503 / fortio.code200 > 0.1 of a load no request of which was answered 200. So
// the divisor of each / and % whose divisor is not a number written in the expression (x /
// 100 needs no check) is handed through __divisor, which errs where it is 0, saying so at the
// operator, in the expression's words as written. A claim that says what a zero means is
// judged as written: && , || and ?: do not evaluate their other side (p.exit != 0 && 1 /
// p.exit > 0, p.exit == 0 || …, n == 0 ? 0 : x / n).

// divisorFunc is the environment name of the function that the divisor of a / or a % is
// handed through (Divisor).
const divisorFunc = "__divisor"

// DivisorFunc is the environment name the interpreter must bind to Divisor.
const DivisorFunc = divisorFunc

// ZeroDivisor is the error of a / or a % whose divisor is 0.
type ZeroDivisor struct {
	// Divisor, Div and Claim are, as written, the divisor, the division (1 / p.exit) and
	// the comparison it is in (the operand of &&, || or ?: that holds it, or a predicate's).
	Divisor, Div, Claim string
	// Op is the operator, / or %; Value says the expression is a value (a ${…}), not a
	// claim.
	Op    string
	Value bool
}

// why says why the division has no value.
func (e *ZeroDivisor) why() string {
	switch {
	case e.Op == "%":
		return "a remainder by 0 is no number"
	case e.Value:
		return "as a number it would be +Inf or NaN, a value that measured nothing"
	}
	return "as a number it would be +Inf or NaN, which a comparison holds or fails of having measured nothing"
}

func (e *ZeroDivisor) Error() string {
	why := e.why()
	if f, err := strconv.ParseFloat(e.Divisor, 64); err == nil && f == 0 {
		return fmt.Sprintf("%s has no value: its divisor is 0 as written (%s); expected a divisor that is not 0", e.Div, why)
	}
	if e.Value {
		return fmt.Sprintf("%s is 0: %s has no value (%s); say what zero means: %s == 0 ? <the value then> : %s",
			e.Divisor, e.Div, why, e.Divisor, e.Claim)
	}
	return fmt.Sprintf("%s is 0: %s has no value (%s); claim it: %s != 0 && %s, or say what zero means (%s == 0 || %s)",
		e.Divisor, e.Div, why, e.Divisor, e.Claim, e.Divisor, e.Claim)
}

// Divisor gives v back, or a ZeroDivisor error where it is a number that is 0 (of any Go
// numeric kind): divisor, div and claim are as written, op the operator, value whether the
// expression is a value (ZeroDivisor). Anything else is given back for expr to judge.
func Divisor(divisor, div, claim, op string, value bool, v any) (any, error) {
	if v != nil && isZeroNumber(reflect.ValueOf(v)) {
		return nil, &ZeroDivisor{Divisor: divisor, Div: div, Claim: claim, Op: op, Value: value}
	}
	return v, nil
}

func isZeroNumber(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int() == 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return v.Uint() == 0
	case reflect.Float32, reflect.Float64:
		return v.Float() == 0
	}
	return false
}

// division is a / or a % of the tree as parsed whose divisor is handed through __divisor,
// with its parts as written.
type division struct {
	b                   *ast.BinaryNode
	divisor, div, claim string
}

// divisionsOf finds, in the tree as parsed (before the checker's rewrites, so that what they
// say is as written), each / and % whose divisor is not a non-zero number literal, and is not
// read in another operand of &&, || or ?: (or a let's value) than the division's: such an
// expression has said what a zero divisor means (vars.n / vars.d <= 1 || vars.d == 0), and is
// judged as written, as all() is beside a read of its collection (nonempty.go).
func divisionsOf(node ast.Node) []division {
	type found struct {
		division
		right, atom ast.Node
	}
	var divs []found
	var uses map[string]map[ast.Node]int // a source, and the atoms it is read in
	var walk func(n, atom ast.Node)
	walk = func(n, atom ast.Node) {
		if n == nil {
			return
		}
		if uses != nil {
			k := n.String()
			if uses[k] == nil {
				uses[k] = map[ast.Node]int{}
			}
			uses[k][atom]++
		}
		switch x := n.(type) {
		case *ast.VariableDeclaratorNode:
			walk(x.Value, x.Value)
			walk(x.Expr, x.Expr)
			return
		case *ast.ConditionalNode:
			walk(x.Cond, x.Cond)
			walk(x.Exp1, x.Exp1)
			walk(x.Exp2, x.Exp2)
			return
		case *ast.PredicateNode:
			walk(x.Node, x.Node) // its item's claim: the guard goes inside it
			return
		case *ast.BinaryNode:
			switch x.Operator {
			case "&&", "||", "and", "or":
				walk(x.Left, x.Left)
				walk(x.Right, x.Right)
				return
			case "/", "%":
				if uses == nil && !nonZeroLiteral(x.Right) {
					d := x.Right.String()
					switch r := x.Right.(type) {
					case *ast.ConditionalNode:
						d = "(" + d + ")"
					case *ast.BinaryNode:
						if r.Operator != "+" && r.Operator != "-" && r.Operator != "*" && r.Operator != "/" && r.Operator != "%" && r.Operator != "**" && r.Operator != "^" {
							d = "(" + d + ")"
						}
					}
					divs = append(divs, found{division{b: x, divisor: d, div: x.String(), claim: atom.String()}, x.Right, atom})
				}
			}
		}
		for _, c := range children(n) {
			walk(c, atom)
		}
	}
	walk(node, node)
	if len(divs) == 0 {
		return nil
	}
	uses = map[string]map[ast.Node]int{}
	walk(node, node)
	var out []division
	for _, d := range divs {
		elsewhere := false
		for a, n := range uses[d.right.String()] {
			elsewhere = elsewhere || a != d.atom && n > 0
		}
		if !elsewhere {
			out = append(out, d.division)
		}
	}
	return out
}

// nonZeroLiteral says n is a number written in the expression, and not 0: 100, 1.5, -2.
func nonZeroLiteral(n ast.Node) bool {
	if u, ok := n.(*ast.UnaryNode); ok && (u.Operator == "-" || u.Operator == "+") {
		n = u.Node
	}
	switch x := n.(type) {
	case *ast.IntegerNode:
		return x.Value != 0
	case *ast.FloatNode:
		return x.Value != 0
	}
	return false
}

// wrapDivisors hands the divisor of each of divs that is still in the tree at node (after the
// checker's rewrites) through __divisor(divisor, division, claim, op, value, <the divisor as
// rewritten>), the call placed where the operator is: a zero errs there. value says the
// expression is a value (a ${…}), not a claim. It says whether it wrapped any.
func wrapDivisors(node *ast.Node, divs []division, value bool) bool {
	want := make(map[*ast.BinaryNode]division, len(divs))
	for _, d := range divs {
		want[d.b] = d
	}
	w := &divisorWrapper{want: want, value: value}
	ast.Walk(node, w)
	return w.wrapped
}

type divisorWrapper struct {
	want    map[*ast.BinaryNode]division
	value   bool
	wrapped bool
}

func (w *divisorWrapper) Visit(n *ast.Node) {
	b, ok := (*n).(*ast.BinaryNode)
	if !ok {
		return
	}
	d, ok := w.want[b]
	if !ok {
		return
	}
	delete(w.want, b) // once: a node the rewrites share is wrapped one time
	call := &ast.CallNode{
		Callee: &ast.IdentifierNode{Value: divisorFunc},
		Arguments: []ast.Node{&ast.StringNode{Value: d.divisor}, &ast.StringNode{Value: d.div}, &ast.StringNode{Value: d.claim},
			&ast.StringNode{Value: b.Operator}, &ast.BoolNode{Value: w.value}, b.Right},
	}
	call.SetLocation(b.Location())
	b.Right = call
	w.wrapped = true
}

// zeroDivisors refuses each of divs whose divisor is 0 where the scenario loads: a 0 written
// as such (x / 0), or vars alone that make 0 (x / vars.n of n: 0, in the combination of a
// sweep that is checked): the run would err at the operator whatever it records. vet said
// instead that such a claim "holds of every load … cannot fail" (its sampler's words for an
// expression that never judges), and let a ${…} by, which erred when the step began.
func (c *exprChecker) zeroDivisors(divs []division) {
	for _, d := range divs {
		if v, ok, byVars := c.fixedNumber(d.b.Right); ok && v == 0 {
			e := &ZeroDivisor{Divisor: d.divisor, Div: d.div, Claim: d.claim, Op: d.b.Operator, Value: c.empty == noEmptyRule}
			if !byVars {
				e.Divisor = "0" // as written: Error says so
				c.fail(col(d.b), "%s", e.Error())
				return
			}
			why, zero := e.why(), fmt.Sprintf("(%s == 0 || %s)", d.divisor, d.claim)
			if e.Value {
				zero = fmt.Sprintf("(%s == 0 ? <the value then> : %s)", d.divisor, d.claim)
			}
			c.fail(col(d.b), "%s is 0 with the vars this scenario runs with: %s has no value (%s), whatever the run records; expected a divisor that is not 0: give the var another value, or say what zero means %s",
				d.divisor, d.div, why, zero)
			return
		}
	}
}

// fixedNumber is the number n makes where the scenario loads: a number written, a var that
// holds a number (varNumber), and +, -, * or / of such; false for anything else. byVars says
// a var is read.
func (c *exprChecker) fixedNumber(n ast.Node) (v float64, ok, byVars bool) {
	if v, ok := constNumber(n); ok {
		return v, true, false
	}
	if v, ok := c.varNumber(n); ok {
		return v, true, true
	}
	switch x := n.(type) {
	case *ast.UnaryNode:
		if v, ok, byVars := c.fixedNumber(x.Node); ok && x.Operator == "-" {
			return -v, true, byVars
		}
	case *ast.BinaryNode:
		l, lok, lv := c.fixedNumber(x.Left)
		r, rok, rv := c.fixedNumber(x.Right)
		if !lok || !rok {
			return 0, false, false
		}
		switch x.Operator {
		case "+":
			return l + r, true, lv || rv
		case "-":
			return l - r, true, lv || rv
		case "*":
			return l * r, true, lv || rv
		case "/":
			if r != 0 {
				return l / r, true, lv || rv
			}
		}
	}
	return 0, false, false
}
