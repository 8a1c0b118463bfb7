package dsl

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/expr-lang/expr/ast"

	"labrun.dev/labrun/internal/kubeshape"
	"labrun.dev/labrun/schema"
)

// ObjectRead is a chain of names an expression reads below a get step's value
// (dr.spec.trafficPolicy.outlierDetection, has(dr.spec, 'host'), 'host' in dr.spec): each must
// be a name the object's kind has, or the read gives nil (absent) whatever the object holds,
// and a claim passes over the wrong thing. A built-in kind's names are checked at vet; a
// custom resource's, known to the cluster by its CRD, when the step runs (CheckObjectReads).
// An index is a name too (pods[0].status.phase: "0"), and an index or key computed when the
// expression runs is "*", any element (what follows it is checked against the element's kind).
type ObjectRead struct {
	Step string
	// Path are the names read below the step's value, in order.
	Path []string
	// Col is where each name is written in the expression (0-based).
	Col []int
}

// ObjectReadString is the read as an expression writes it: dr.spec.subsets[].name.
func ObjectReadString(r ObjectRead) string {
	return elements(r.Step + "." + strings.Join(r.Path, "."))
}

// objectShape is what vet knows of a get step's value: the shape of a built-in kind's object
// (at the step's path; a list of them by selector); nil for a custom resource (checked at run
// time), a templated kind or path.
func objectShape(p *schema.Get, templated func(string) bool) (shape *kubeshape.Shape, kind string, base []string) {
	if templated("kind") || templated("apiVersion") || templated("path") || HasInterpolation(p.Kind) {
		return nil, "", nil
	}
	shape, kind = kubeshape.Known(p.APIVersion, p.Kind) // an Istio kind's by its apiVersion
	if shape == nil {
		return nil, "", nil
	}
	shape, base = ObjectShapeAt(shape, p)
	return shape, kind, base
}

// ObjectShapeAt is the shape of what get step p records, given its kind's object's: the part
// at p's path (nil when the path is not the kind's, or quotes a key), a list by selector.
func ObjectShapeAt(shape *kubeshape.Shape, p *schema.Get) (*kubeshape.Shape, []string) {
	var base []string
	if p.Path != "" {
		if strings.ContainsAny(p.Path, `"'[]`) {
			return nil, nil
		}
		base = strings.Split(p.Path, ".")
		if shape = shape.At(base); shape == nil {
			return nil, nil // the path is refused when the step runs
		}
	}
	if p.Name == "" {
		shape = kubeshape.ListOf(shape)
	}
	return shape, base
}

// objectChain is the get step and the names of a chain of .name (or ["name"]) reads rooted at
// the step's name; ok false when n is no such chain.
func (c *exprChecker) objectChain(n ast.Node) (step string, names []string, cols []int, ok bool) {
	for {
		switch x := n.(type) {
		case *ast.ChainNode:
			n = x.Node
			continue
		case *ast.MemberNode:
			if x.Method {
				return "", nil, nil, false
			}
			names = append([]string{memberName(x.Property)}, names...)
			cols = append([]int{col(x)}, cols...)
			n = x.Node
			continue
		case *ast.PointerNode:
			// .name in a closure over a list below a get's value: its element's name.
			if x.Name != "" || len(c.objScopes) == 0 || c.objScopes[len(c.objScopes)-1] == nil {
				return "", nil, nil, false
			}
			sc := c.objScopes[len(c.objScopes)-1]
			pre := make([]int, len(sc.path))
			for i := range pre {
				pre[i] = -1 // written where the closure's list is
			}
			return sc.step, append(append([]string{}, sc.path...), names...), append(pre, cols...), true
		case *ast.IdentifierNode:
			if _, shadowed := c.lets[x.Value]; shadowed || c.names == nil {
				return "", nil, nil, false
			}
			if r := c.names.Results[x.Value]; r != nil && r.Kind == "get" {
				return x.Value, names, cols, true
			}
		}
		return "", nil, nil, false
	}
}

// memberName is the name a member read gives: a key's or an index's literal, "*" (any element)
// for one computed when the expression runs (pods[len(pods)-1], a negative index).
func memberName(p ast.Node) string {
	switch x := p.(type) {
	case *ast.StringNode:
		return x.Value
	case *ast.IntegerNode:
		if x.Value >= 0 {
			return strconv.Itoa(x.Value)
		}
	}
	return "*"
}

// objectScope is a closure's element below a get's value: the step, the names to its list,
// then "*" (any element).
type objectScope struct {
	step string
	path []string
}

// objectRead notes the names read below a get step's value and, where vet knows the object's
// shape (a built-in kind), refuses a name it does not have.
func (c *exprChecker) objectRead(step string, names []string, cols []int) {
	if len(names) == 0 {
		return
	}
	c.objectReads = append(c.objectReads, ObjectRead{Step: step, Path: names, Col: cols})
	r := c.names.Results[step]
	if r.Object == nil {
		return
	}
	if m := r.Object.Walk(names); m != nil {
		at := cols[m.At]
		if at < 0 {
			at = cols[len(cols)-1]
		}
		c.fail(at, "%s", ObjectMiss(step, r.Object, r.ObjectKind, r.ObjectFrom, r.ObjectBase, names, m))
	}
}

// ObjectMiss is the message for a name below a get step's value that the object's kind does
// not have: "dr.spec.trafficPolicy.outlierDetecton: DestinationRule spec.trafficPolicy has no
// field outlierDetecton (did you mean outlierDetection?); its fields: ...". from follows the
// subject: where the kind's fields are known from (kubeshape.From), "" for a cluster's CRD.
func ObjectMiss(step string, shape *kubeshape.Shape, kind, from string, base, names []string, m *kubeshape.Miss) string {
	if shape.Kind == kubeshape.List && m.At == 0 {
		kind = "the list of " + kind + " objects"
	}
	read := names[:m.At]
	if shape.Kind == kubeshape.List && len(read) > 0 {
		read = read[1:] // an element of the list the get read by selector: one object
	}
	at := append(append([]string{}, base...), read...)
	subject := kind
	if len(at) > 0 {
		subject += " " + elements(strings.Join(at, "."))
	}
	msg := fmt.Sprintf("%s: %s%s %s", elements(step+"."+strings.Join(names[:m.At+1], ".")), strings.TrimSpace(subject), from, m.Msg)
	if from != "" && m.Release {
		msg += kubeshape.NewerHint()
	}
	return msg
}

// elements writes a path's list elements as expressions index them: "*" (any element) as [],
// an index as [0].
func elements(path string) string {
	var b strings.Builder
	for i, seg := range strings.Split(path, ".") {
		_, err := strconv.Atoi(seg)
		switch {
		case seg == "*":
			b.WriteString("[]")
		case err == nil:
			b.WriteString("[" + seg + "]")
		default:
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(seg)
		}
	}
	return b.String()
}

// PosAt is the position of column col (0-based) of the expression.
func (e *Expr) PosAt(col int) Pos { return exprPos(e.Pos, e.Src, col) }

// AllExprs are every compiled expression of the scenario: expectations, step expressions
// (until, assert, while) and the ${...} of templates.
func (sc *Scenario) AllExprs() []*Expr {
	out := append([]*Expr{}, sc.Expect...)
	for _, ph := range sc.Phases() {
		Walk(ph.Steps, func(s *Step) {
			if s.Expr != nil {
				out = append(out, s.Expr)
			}
			for _, t := range s.Templates() {
				out = append(out, t.Exprs()...)
			}
		})
	}
	return out
}

// quantityCompared says why comparison n of a resource quantity read below a built-in kind's
// object (limits.cpu, requests.memory) is wrong as written; "" when it is not. The API server
// writes a quantity in its canonical form ("500m" for 0.5, "1Gi" for 1024Mi): a string
// literal in another form never equals it (== never holds, != always does: a claim that
// passes whatever the pod has), a number is no string, and < and > order strings byte by byte.
func (c *exprChecker) quantityCompared(n *ast.BinaryNode, written [2]string) string {
	sides := [2]ast.Node{n.Left, n.Right}
	for i, side := range sides {
		step, names, _, ok := c.objectChain(side)
		if !ok || c.names == nil {
			continue
		}
		r := c.names.Results[step]
		if r == nil || r.Object == nil {
			continue
		}
		sh := r.Object.At(names)
		if sh == nil || sh.Kind != kubeshape.Scalar || sh.Scalar != kubeshape.QuantityScalar {
			continue
		}
		other := sides[1-i]
		fix := fmt.Sprintf("compare numbers: quantity(%s) %s %s", written[i], n.Operator, written[1-i])
		if lit, isLit := other.(*ast.StringNode); isLit {
			q, err := Quantity(lit.Value)
			if err != nil {
				return fmt.Sprintf("%s %s %s: %s is a resource quantity, and %s", written[0], n.Operator, written[1], written[i], err)
			}
			op := n.Operator
			if i == 1 { // the literal on the left: quantity(x) on the left of the fix
				op = map[string]string{"<": ">", ">": "<", "<=": ">=", ">=": "<="}[op]
				if op == "" {
					op = n.Operator
				}
			}
			fix = fmt.Sprintf("compare numbers: quantity(%s) %s %s", written[i], op, FormatValue(q))
			if n.Operator == "==" || n.Operator == "!=" {
				canon, _ := kubeshape.Quantity(lit.Value)
				if canon.String() == lit.Value {
					return "" // as the API server writes it
				}
				return fmt.Sprintf("%s %s %s: %s is a resource quantity, which the API server writes in its canonical form, %q for %q: compared as written, == never holds and != always does; write %q, or %s",
					written[0], n.Operator, written[1], written[i], canon.String(), lit.Value, canon.String(), fix)
			}
			return fmt.Sprintf("%s %s %s orders strings byte by byte (\"900m\" > \"1\"): %s is a resource quantity; %s",
				written[0], n.Operator, written[1], written[i], fix)
		}
		if _, isNum := other.(*ast.IntegerNode); isNum {
			return fmt.Sprintf("%s %s %s: %s is a resource quantity, read as the string the API server writes (\"500m\"), not a number; %s", written[0], n.Operator, written[1], written[i], fix)
		}
		if _, isNum := other.(*ast.FloatNode); isNum {
			return fmt.Sprintf("%s %s %s: %s is a resource quantity, read as the string the API server writes (\"500m\"), not a number; %s", written[0], n.Operator, written[1], written[i], fix)
		}
		if n.Operator != "==" && n.Operator != "!=" {
			return fmt.Sprintf("%s %s %s orders strings byte by byte (\"900m\" > \"1\"): %s is a resource quantity; compare numbers: quantity(%s) %s quantity(%s)",
				written[0], n.Operator, written[1], written[i], written[i], n.Operator, written[1-i])
		}
	}
	return ""
}
