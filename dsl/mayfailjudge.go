package dsl

import (
	"fmt"
	"slices"
	"strings"

	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/parser"
)

// outcomeJudgements says, for each step whose outcome.<step> or error.<step> the expression e
// reads, whether it judges it: whether a step that failed makes the expression false (and so
// the run fail) by it. A read of outcome.<step> only in comparisons with string literals that
// hold alike for "passed" and "failed" — outcome.check != 'skipped', outcome.check in
// ['passed', 'failed'], !(outcome.check == 'error') — does not; shown holds such a
// comparison, written as in e. A comparison that fails alike for both where the expression
// needs it to hold (outcome.tail == 'error' as a claim, or beside others joined by && or ||,
// under no !) does judge: a failed check makes it false, and the run fails; before, it was
// taken as judging nothing, and a mayFail block read so was refused as read by nothing. Any
// other read (error.<step>, outcome.<step> handed to a function, compared with something
// else) is counted as a judgement.
func outcomeJudgements(e *Expr) (judged map[string]bool, shown map[string]string) {
	judged, shown = map[string]bool{}, map[string]string{}
	tree, err := parser.Parse(e.Src)
	if err != nil {
		for _, o := range e.Outcomes {
			judged[o] = true
		}
		return judged, shown
	}
	// The reads of outcome.<step> in a comparison with literals, and whether that comparison
	// gives passed and failed apart.
	type cmp struct {
		apart bool
		src   string
	}
	compared := map[*ast.MemberNode]cmp{}
	// polarity of each comparison in e: 1 where e needs it to hold (under &&, || and no !),
	// -1 where it needs it to fail (under one !), 0 elsewhere (a ?:'s condition, a function's
	// argument).
	polarity := map[*ast.BinaryNode]int{}
	var polar func(n ast.Node, p int)
	polar = func(n ast.Node, p int) {
		switch x := n.(type) {
		case *ast.UnaryNode:
			if x.Operator == "!" || x.Operator == "not" {
				polar(x.Node, -p)
				return
			}
		case *ast.BinaryNode:
			switch x.Operator {
			case "&&", "||", "and", "or":
				polar(x.Left, p)
				polar(x.Right, p)
				return
			}
			polarity[x] = p
		case *ast.ConditionalNode:
			polar(x.Cond, 0)
			polar(x.Exp1, p)
			polar(x.Exp2, p)
			return
		}
		for _, c := range children(n) {
			polar(c, 0)
		}
	}
	polar(tree.Node, 1)
	var reads []*ast.MemberNode
	ast.Walk(&tree.Node, visitor(func(n *ast.Node) {
		switch x := (*n).(type) {
		case *ast.MemberNode:
			if _, ok := outcomeRead(x); ok {
				reads = append(reads, x)
			}
		case *ast.BinaryNode:
			m, lits, ok := literalComparison(x)
			if !ok {
				return
			}
			holds := holdsFor(x.Operator, lits)
			step, _ := outcomeRead(m)
			apart := holds("passed") != holds("failed") || polarity[x] == 1 && !holds("failed") || polarity[x] == -1 && holds("failed")
			compared[m] = cmp{apart: apart, src: fmt.Sprintf("outcome.%s %s %s", step, x.Operator, literals(x, lits))}
		}
	}))
	outcomeOnly := map[string]bool{}
	for _, m := range reads {
		step, _ := outcomeRead(m)
		outcomeOnly[step] = true
		c, ok := compared[m]
		if !ok || c.apart {
			judged[step] = true
		} else if shown[step] == "" {
			shown[step] = c.src
		}
	}
	for _, o := range e.Outcomes {
		if !outcomeOnly[o] {
			judged[o] = true // error.<step>, or a form this walk does not know
		}
	}
	for o := range judged {
		delete(shown, o)
	}
	return judged, shown
}

// wholeOutcomeJudgement says whether e, which reads outcome or error as a whole
// (e.allOutcomes), judges by that read how any step ended: whether a step that failed instead
// of passing can change its value. Reads that cannot are those of which steps there are —
// keys(outcome), len(error), has(outcome, 'x'), 'x' in outcome: a step that failed is there
// as one that passed is — and a quantifier over values(outcome) whose predicate compares #
// with string literals alike for "passed" and "failed" (all(values(outcome), # !=
// 'skipped')). Any other whole read (values(error), outcome[k], a predicate of another form)
// counts as a judgement. shown is the first read that does not judge, with why, for the
// message of a check nothing judges.
func wholeOutcomeJudgement(e *Expr) (judged bool, shown string) {
	if !e.allOutcomes {
		return false, ""
	}
	tree, err := parser.Parse(e.Src)
	if err != nil {
		return true, ""
	}
	// parents of each node, to tell how a whole read is used.
	parent := map[ast.Node]ast.Node{}
	var wholes []*ast.IdentifierNode
	var walk func(n, up ast.Node)
	walk = func(n, up ast.Node) {
		if n == nil {
			return
		}
		parent[n] = up
		if id, ok := n.(*ast.IdentifierNode); ok && (id.Value == "outcome" || id.Value == "error") {
			if m, ok := up.(*ast.MemberNode); !ok || m.Node != n {
				wholes = append(wholes, id)
			} else if _, lit := m.Property.(*ast.StringNode); !lit {
				wholes = append(wholes, id) // outcome[k]: any step's
			}
		}
		for _, c := range children(n) {
			walk(c, n)
		}
	}
	walk(tree.Node, nil)
	for _, id := range wholes {
		why, ok := wholeReadNotJudging(id, parent)
		if !ok {
			return true, ""
		}
		if shown == "" {
			shown = why
		}
	}
	return false, shown
}

// wholeReadNotJudging says why the whole read id (of outcome or error) cannot tell a step
// that failed from one that passed, or false when it may.
func wholeReadNotJudging(id *ast.IdentifierNode, parent map[ast.Node]ast.Node) (string, bool) {
	up := parent[id]
	keysOnly := fmt.Sprintf("reads only which steps %s holds, not how they ended", id.Value)
	switch p := up.(type) {
	case *ast.BuiltinNode:
		switch p.Name {
		case "keys", "len":
			return fmt.Sprintf("%s %s", p.String(), keysOnly), true
		case "values":
			if id.Value != "outcome" {
				return "", false // an error's text: "" where the step passed
			}
			q, ok := parent[p].(*ast.BuiltinNode)
			if !ok || len(q.Arguments) != 2 || q.Arguments[0] != ast.Node(p) {
				return "", false
			}
			switch q.Name {
			case "all", "none", "any", "one", "count":
			default:
				return "", false
			}
			pred, ok := q.Arguments[1].(*ast.PredicateNode)
			if !ok {
				return "", false
			}
			holds, ok := itemComparison(pred.Node)
			if !ok || holds("passed") != holds("failed") {
				return "", false
			}
			return fmt.Sprintf("%s holds or fails alike whether a step passed or failed", q.String()), true
		}
	case *ast.CallNode:
		if callee, ok := p.Callee.(*ast.IdentifierNode); ok && callee.Value == "has" && len(p.Arguments) > 0 && p.Arguments[0] == ast.Node(id) {
			return fmt.Sprintf("%s %s", p.String(), keysOnly), true
		}
	case *ast.BinaryNode:
		if (p.Operator == "in" || p.Operator == "not in") && p.Right == ast.Node(id) {
			return fmt.Sprintf("%s %s", p.String(), keysOnly), true
		}
	}
	return "", false
}

// itemComparison is a predicate that compares the item (#) with string literals, as a
// function of the item's value: # == 'x', # != 'x', # in ['x', 'y'], # not in [...].
func itemComparison(n ast.Node) (func(string) bool, bool) {
	x, ok := n.(*ast.BinaryNode)
	if !ok {
		return nil, false
	}
	isItem := func(n ast.Node) bool {
		p, ok := n.(*ast.PointerNode)
		return ok && p.Name == ""
	}
	var lits []string
	switch x.Operator {
	case "==", "!=":
		other := x.Right
		if !isItem(x.Left) {
			if !isItem(x.Right) {
				return nil, false
			}
			other = x.Left
		}
		s, ok := other.(*ast.StringNode)
		if !ok {
			return nil, false
		}
		lits = []string{s.Value}
	case "in", "not in":
		arr, ok := x.Right.(*ast.ArrayNode)
		if !isItem(x.Left) || !ok {
			return nil, false
		}
		for _, n := range arr.Nodes {
			s, ok := n.(*ast.StringNode)
			if !ok {
				return nil, false
			}
			lits = append(lits, s.Value)
		}
	default:
		return nil, false
	}
	return holdsFor(x.Operator, lits), true
}

// holdsFor is whether a comparison of a string with lits by op (==, in, !=, not in) holds of
// the string v.
func holdsFor(op string, lits []string) func(v string) bool {
	return func(v string) bool {
		in := slices.Contains(lits, v)
		if op == "!=" || op == "not in" {
			return !in
		}
		return in
	}
}

type visitor func(n *ast.Node)

func (v visitor) Visit(n *ast.Node) { v(n) }

// outcomeRead is the step of outcome.<step> (or outcome["<step>"]).
func outcomeRead(m *ast.MemberNode) (string, bool) {
	id, ok := m.Node.(*ast.IdentifierNode)
	if !ok || id.Value != "outcome" {
		return "", false
	}
	s, ok := m.Property.(*ast.StringNode)
	if !ok {
		return "", false
	}
	return s.Value, true
}

// literalComparison is x when it compares outcome.<step> with string literals: ==, != with
// one, in, not in with an array of them.
func literalComparison(x *ast.BinaryNode) (*ast.MemberNode, []string, bool) {
	member := func(n ast.Node) *ast.MemberNode {
		if m, ok := n.(*ast.MemberNode); ok {
			if _, ok := outcomeRead(m); ok {
				return m
			}
		}
		return nil
	}
	switch x.Operator {
	case "==", "!=":
		m, other := member(x.Left), x.Right
		if m == nil {
			m, other = member(x.Right), x.Left
		}
		if s, ok := other.(*ast.StringNode); ok && m != nil {
			return m, []string{s.Value}, true
		}
	case "in", "not in":
		m := member(x.Left)
		arr, ok := x.Right.(*ast.ArrayNode)
		if m == nil || !ok {
			return nil, nil, false
		}
		var lits []string
		for _, n := range arr.Nodes {
			s, ok := n.(*ast.StringNode)
			if !ok {
				return nil, nil, false
			}
			lits = append(lits, s.Value)
		}
		return m, lits, true
	}
	return nil, nil, false
}

// literals writes the literal side of a comparison.
func literals(x *ast.BinaryNode, lits []string) string {
	var q []string
	for _, l := range lits {
		q = append(q, "'"+l+"'")
	}
	if x.Operator == "==" || x.Operator == "!=" {
		return q[0]
	}
	return "[" + strings.Join(q, ", ") + "]"
}
