package dsl

import (
	"fmt"
	"slices"
	"strings"

	"github.com/expr-lang/expr/ast"

	"labrun.dev/labrun/envoy/xdstype"
	"labrun.dev/labrun/schema"
)

// envoyReadType is the type of a read below an Envoy Any whose message only its "@type" says
// (schema.EnvoyAnyType): any at vet, typed by xdstype at run time (readAny).
var envoyReadType = &schema.Type{Kind: schema.TAny, Doc: "a field below an Envoy Any, typed by its \"@type\" at run time"}

// envoyCmp is a comparison one side of which is a read below an Envoy Any: the side as
// written, the operator as the comparison holds (!= for a negated ==, not in for a negated
// in), the comparison as written with it, and the other side when it is a string literal.
type envoyCmp struct {
	written, op, cmp string
	lit              string
	isLit            bool
}

// envoyCompared records each side of n, a comparison, that is a read below an Envoy Any
// (envoyReadType, typed only at run time): its rewrite (readAny) reads it through
// EnvoyCompared, which holds it to what vet holds a typed field to (unsetWrapper,
// durationStringCompare, enumLiteral) once the field's type is known. A side compared with
// nil is the claim that the field is unset, or set, and is left alone.
func (c *exprChecker) envoyCompared(n *ast.BinaryNode, written [2]string, l, r *schema.Type) {
	sides := [2]ast.Node{n.Left, n.Right}
	op := n.Operator
	if c.negated[n] {
		switch op {
		case "==":
			op = "!="
		case "in":
			op = "not in"
		}
	}
	for i, t := range [2]*schema.Type{l, r} {
		if t != envoyReadType {
			continue
		}
		if _, isNil := sides[1-i].(*ast.NilNode); isNil {
			continue
		}
		cmp := envoyCmp{written: written[i], op: op, cmp: written[0] + " " + op + " " + written[1]}
		if lit, ok := sides[1-i].(*ast.StringNode); ok {
			cmp.lit, cmp.isLit = lit.Value, true
		}
		if c.envoyCmps == nil {
			c.envoyCmps = map[ast.Node]envoyCmp{}
		}
		c.envoyCmps[sides[i]] = cmp
	}
}

// EnvoyCompared is xdstype.ReadAny for a side of a comparison (what envoyCompared recorded of
// it): the value at names inside v, an Envoy Any, or an error where, by the type of the field
// read, the comparison would hold or fail whatever Envoy does. An unset wrapper or Duration
// (Envoy applies a default the dump does not give) has no value for !=, not in or an order
// (schema.ReadSet); a Duration read as text is not ordered (byte by byte, "10s" < "2s"), nor
// compared with a literal Envoy never writes ("0.5s": it writes "0.500s"); an enum is not
// compared with a value it does not have. Before, each of them held:
// max_requests_per_connection != 100 over an unset one, idle_timeout ("300s") < "5s".
func EnvoyCompared(v any, written, op, cmp, lit string, isLit bool, names ...string) (any, error) {
	got, t, err := xdstype.ReadAnyTyped(v, names...)
	if err != nil || t == nil {
		return got, err
	}
	wrapper := t.Wrapper
	if t.Kind == xdstype.Duration {
		wrapper = "Duration"
	}
	if got == nil && wrapper != "" {
		switch op {
		case "!=", "not in", "<", "<=", ">", ">=":
			return schema.ReadSet(nil, written, wrapper, op, cmp)
		}
		return nil, nil
	}
	s, isString := got.(string)
	switch {
	case t.Kind == xdstype.Duration && isString:
		switch op {
		case "<", "<=", ">", ">=":
			return nil, fmt.Errorf("%s orders strings, byte by byte (\"10s\" < \"2s\"): %s is a protobuf Duration written as text (%q); compare times with duration() on both sides (or read it as seconds with the config step's durations: \"seconds\")",
				cmp, written, s)
		case "==", "!=":
			if isLit && !schema.FormDuration.Holds(lit) {
				return nil, fmt.Errorf("%s is always %v: %s is a protobuf Duration, which Envoy writes in seconds (\"10s\", \"0.500s\"), never %q; compare times: duration(%s) %s duration(%q)",
					cmp, op == "!=", written, lit, written, op, lit)
			}
		}
	case t.Kind == xdstype.Enum && t.Enum != nil && isLit && (op == "==" || op == "!="):
		if !slices.Contains(t.Enum.Values, lit) {
			return nil, fmt.Errorf("%s: %s is one of %s; %q never matches", cmp, written, strings.Join(t.Enum.Values, ", "), lit)
		}
	}
	return got, nil
}
