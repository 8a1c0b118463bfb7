package dsl

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/vm/runtime"

	"labrun.dev/labrun/schema"
)

// A key written in the expression (b.upstream_rq_retry, b["upstream_rq_retry"], a config's
// field) is checked before the expression is evaluated: absent, the judgement errs. A key
// computed when it runs (b[k], delta[vars.stat], all(names, b[#] == 0), perconn.ips[addr]) was
// not: expr reads an absent key of a map as the zero value of its items, so a stat nobody
// recorded read 0 (b[k] != 3 and !(b[k] > 3) passed) and an absent value nil. Such a read
// is handed through __key, which errs where the map lacks the key; the claim that the key may
// be absent is the user's to make: k in b ? b[k] : …, has(b, k), get(b, k) ?? 0, b?.[k] ?? 0
// (b?.[k] is nil where the key is absent: OptKey).

// keyFunc is the environment name of the function that a map read by a computed key is
// handed through (Key).
const keyFunc = "__key"

// KeyFunc is the environment name the interpreter must bind to Key.
const KeyFunc = keyFunc

// optKeyFunc is the environment name of the function that a map read by a computed key with
// ?. is handed through (OptKey).
const optKeyFunc = "__optkey"

// OptKeyFunc is the environment name the interpreter must bind to OptKey.
const OptKeyFunc = optKeyFunc

// AbsentKey is the error of a read by a computed key that the map does not hold.
type AbsentKey struct {
	// Src is the read as written (b[k]); Map the map's part of it (b); Key the key it computed.
	Src, Map string
	Key      any
}

func (e *AbsentKey) Error() string {
	return fmt.Sprintf("%s has no value: %s holds no key %s (the key is computed when the expression runs, and a map read by a key it lacks gives 0 or nil, which a claim would hold or fail of); where the key may be absent, say so: %s in %s ? %s : …, has(%s, %s), or get(%s, %s) ?? 0",
		e.Src, e.Map, FormatValue(e.Key), e.keySrc(), e.Map, e.Src, e.Map, e.keySrc(), e.Map, e.keySrc())
}

// keySrc is the key as an expression writes it.
func (e *AbsentKey) keySrc() string {
	if s, ok := e.Key.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	return FormatValue(e.Key)
}

// Key is m[k] as expr reads it, but an error where m is a map that has no key k. src and
// mapSrc are the read and its map as written.
func Key(src, mapSrc string, m, k any) (any, error) {
	v := reflect.ValueOf(m)
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		v = v.Elem()
	}
	if v.Kind() == reflect.Map && k != nil {
		kv := reflect.ValueOf(k)
		if kv.Type().AssignableTo(v.Type().Key()) && !v.MapIndex(kv).IsValid() {
			return nil, &AbsentKey{Src: src, Map: mapSrc, Key: k}
		}
	}
	return runtime.Fetch(m, k), nil
}

// OptKey is m?.[k] as an expression means it: nil where m is nil or a map that has no key k.
// expr reads an absent key as the zero value of the map's items, so over a map of numbers
// (a snapshot's stats, a load's codes) b?.[k] read 0 for a stat nobody recorded, and
// b?.[k] == 0 held of a misspelled one; nil fails such a claim, and ?? says what to use. src
// is the read as written: the interpreter's OptKey errs, naming it, where the key has no value
// (a load's code where no request was answered); this one never errs.
func OptKey(src string, m, k any) (any, error) {
	if m == nil {
		return nil, nil
	}
	v := reflect.ValueOf(m)
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return nil, nil
		}
		v = v.Elem()
	}
	if v.Kind() == reflect.Map {
		if k == nil {
			return nil, nil
		}
		kv := reflect.ValueOf(k)
		if !kv.Type().AssignableTo(v.Type().Key()) {
			return nil, nil
		}
		if e := v.MapIndex(kv); e.IsValid() {
			return e.Interface(), nil
		}
		return nil, nil
	}
	return runtime.Fetch(m, k), nil
}

// wrapComputedKeys hands each read of node by a computed key (not a literal, not ?.[…])
// through __key(src, mapSrc, map, key), the read and its map as expr prints them. It says
// whether it wrapped any.
func wrapComputedKeys(node *ast.Node, written map[*ast.MemberNode][2]string) bool {
	w := &keyWrapper{written: written}
	ast.Walk(node, w)
	return w.wrapped
}

type keyWrapper struct {
	wrapped bool
	written map[*ast.MemberNode][2]string
}

// computedKeysOf are the reads by a computed key of the tree as parsed, each with itself and
// its map as written (b[k], b): the checker's rewrites make them print as the calls they are
// rewritten to (__onlyIf(p, "!stdoutCut", …)[…]), which the user never wrote.
func computedKeysOf(node ast.Node) map[*ast.MemberNode][2]string {
	var out map[*ast.MemberNode][2]string
	var walk func(n ast.Node)
	walk = func(n ast.Node) {
		if n == nil {
			return
		}
		if m, ok := n.(*ast.MemberNode); ok && !m.Method && computedKey(m.Property) {
			if out == nil {
				out = map[*ast.MemberNode][2]string{}
			}
			out[m] = [2]string{m.String(), m.Node.String()}
		}
		for _, c := range children(n) {
			walk(c)
		}
	}
	walk(node)
	return out
}

// computedKey says a member's property is a key computed when the expression runs, not one
// written in it (a string, an index, xs[-1]).
func computedKey(p ast.Node) bool {
	switch p := p.(type) {
	case *ast.StringNode, *ast.IntegerNode:
		return false
	case *ast.UnaryNode:
		if _, ok := p.Node.(*ast.IntegerNode); ok {
			return false
		}
	}
	return true
}

func (w *keyWrapper) Visit(n *ast.Node) {
	m, ok := (*n).(*ast.MemberNode)
	if !ok || m.Method {
		return
	}
	if !computedKey(m.Property) {
		return // written in the expression: checked before it runs
	}
	src, mapSrc := m.String(), m.Node.String()
	if s, ok := w.written[m]; ok {
		src, mapSrc = s[0], s[1]
	}
	if m.Optional {
		// b?.[k]: nil where the key is absent, not the items' zero value.
		ast.Patch(n, &ast.CallNode{Callee: &ast.IdentifierNode{Value: optKeyFunc}, Arguments: []ast.Node{&ast.StringNode{Value: src}, m.Node, m.Property}})
		w.wrapped = true
		return
	}
	call := &ast.CallNode{
		Callee:    &ast.IdentifierNode{Value: keyFunc},
		Arguments: []ast.Node{&ast.StringNode{Value: src}, &ast.StringNode{Value: mapSrc}, m.Node, m.Property},
	}
	ast.Patch(n, call)
	w.wrapped = true
}

// A key computed from the scenario's vars alone (delta[vars.stat], get(after, "rq_" +
// vars.code), has(b, vars.stat), "rq_" + vars.code in b) is known when vet checks the
// scenario, at each combination of a sweep: it is checked as the same key written out is.
// Read where it may be absent (get(…) ?? 0, b?.[k] ?? 0, has, in), a misspelled one was nil
// or false on every run, and the claim held of a stat nobody could record.

// fixedKey is a computed key that vars fix: its value, the vars it is made of as
// `vars.code = "5O3"`, and the first node of it as written (where it is said to be).
type fixedKey struct {
	key   string
	from  []string
	first ast.Node
}

// varKey is the value of the key k where it is made of string literals, string vars and
// lets of such values joined by +, at least one of them a var; ok is false elsewhere (a key the run computes,
// a predicate's #). It reads k as written: call it before typing k rewrites it.
func (c *exprChecker) varKey(k ast.Node) (fixedKey, bool) {
	var fk fixedKey
	var fold func(n ast.Node) bool
	fold = func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.StringNode:
			if fk.first == nil {
				fk.first = n
			}
			fk.key += n.Value
			return true
		case *ast.MemberNode:
			id, ok := n.Node.(*ast.IdentifierNode)
			name, isStr := n.Property.(*ast.StringNode)
			if !ok || id.Value != "vars" || !isStr || n.Method || c.names == nil {
				return false
			}
			if _, shadowed := c.lets[id.Value]; shadowed {
				return false
			}
			v, ok := c.names.Vars[name.Value].(string)
			if !ok {
				return false
			}
			if fk.first == nil {
				fk.first = id
			}
			fk.key += v
			fk.from = append(fk.from, fmt.Sprintf("vars.%s = %q", name.Value, v))
			return true
		case *ast.BinaryNode:
			return n.Operator == "+" && fold(n.Left) && fold(n.Right)
		case *ast.IdentifierNode:
			let, ok := c.letKeys[n.Value]
			if !ok {
				return false
			}
			if fk.first == nil {
				fk.first = n
			}
			fk.key += let.key
			fk.from = append(fk.from, let.from...)
			return true
		}
		return false
	}
	if !fold(k) || len(fk.from) == 0 {
		return fixedKey{}, false
	}
	return fk, true
}

// neverHeld says why the map t, written m, never holds the key (keyNeverHeld), naming the
// vars it was computed from; "" when it may.
func (fk fixedKey) neverHeld(t *schema.Type, m string) string {
	msg := keyNeverHeld(t, m, fk.key)
	if msg == "" {
		return ""
	}
	return fk.said() + ": " + msg
}

// said names the vars the key is computed from, and its value.
func (fk fixedKey) said() string {
	return fmt.Sprintf("with %s the key is %q", strings.Join(fk.from, ", "), fk.key)
}

// at is the column where the key is written.
func (fk fixedKey) at() int { return col(fk.first) }
