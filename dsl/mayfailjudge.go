package dsl

import (
	"fmt"
	"strings"

	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/parser"
)

// outcomeJudgements says, for each step whose outcome.<step> or error.<step> the expression e
// reads, whether it judges it: whether the expression can tell a step that passed from one
// that failed by it. A read of outcome.<step> only in comparisons with string literals that
// hold (or fail) alike for "passed" and "failed" — outcome.check != 'skipped', outcome.check
// == 'error', outcome.check in ['passed', 'failed'] — does not; shown holds such a
// comparison, written as in e. Any other read (error.<step>, outcome.<step> handed to a
// function, compared with something else) is counted as a judgement.
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
			holds := func(v string) bool {
				in := false
				for _, l := range lits {
					in = in || l == v
				}
				if x.Operator == "!=" || x.Operator == "not in" {
					return !in
				}
				return in
			}
			step, _ := outcomeRead(m)
			compared[m] = cmp{apart: holds("passed") != holds("failed"), src: fmt.Sprintf("outcome.%s %s %s", step, x.Operator, literals(x, lits))}
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
