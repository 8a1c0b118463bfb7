package dsl

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/expr-lang/expr/ast"
)

// A number read from text has no value where the text is no finite number: expr's float()
// reads "NaN", "Inf", "+Inf", "-Inf" and "infinity" (any case) as numbers, so a claim over a
// command's output that printed NaN (a tool's ratio of nothing, a figure it could not
// measure) held or failed having measured nothing: !(float(trim(p.stdout)) > 100) passed of
// "NaN", float(trim(p.stdout)) > 0 of "inf", and the summary tabulated them as figures. As a
// division by zero (divisor.go), the argument of each float() is handed through __finiteText,
// which errs where it is text that reads a non-finite number, saying so at the call, in the
// expression's words as written. A number given to float() is left alone.

// finiteFunc is the environment name of the function that float()'s argument is handed
// through (FiniteText).
const finiteFunc = "__finiteText"

// FiniteFunc is the environment name the interpreter must bind to FiniteText.
const FiniteFunc = finiteFunc

// NonFiniteText is the error of float() of a text that reads NaN or an infinity.
type NonFiniteText struct {
	// Call and Arg are, as written, the call (float(trim(p.stdout))) and its argument;
	// Text is what the argument held.
	Call, Arg, Text string
	// Unread says float cannot read the text at all (expr's own error said only "invalid
	// operation: float(x)", nothing of what it reads).
	Unread bool
}

func (e *NonFiniteText) Error() string {
	if e.Unread {
		hint := ""
		if t := strings.TrimSpace(e.Text); t != e.Text {
			if _, err := strconv.ParseFloat(t, 64); err == nil {
				hint = fmt.Sprintf("; the number has spaces or a newline around it: float(trim(%s))", e.Arg)
			}
		}
		return fmt.Sprintf("%s: %s is %s, which float cannot read: it reads a number written as text, such as \"0.5\", nothing around it%s", e.Call, e.Arg, clipText(e.Text), hint)
	}
	return fmt.Sprintf("%s has no value: %s is %q, which float reads as %s, not a number measured (a comparison holds or fails of it having measured nothing); expected text that is a finite number, such as \"0.5\"",
		e.Call, e.Arg, e.Text, nonFiniteWord(e.Text))
}

func nonFiniteWord(text string) string {
	f, _ := strconv.ParseFloat(strings.TrimSpace(text), 64)
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, -1):
		return "-Inf"
	}
	return "+Inf"
}

// NonFiniteNumberText says whether s is text that strconv.ParseFloat (as float() does) reads
// as NaN or an infinity.
func NonFiniteNumberText(s string) bool {
	f, err := strconv.ParseFloat(s, 64)
	return err == nil && (math.IsNaN(f) || math.IsInf(f, 0))
}

// FiniteText gives v back, or a NonFiniteText error where it is a string that float() would
// read as NaN or an infinity; call and arg are as written.
// Text float() cannot read at all (not a number, or out of range) errs too, saying what it
// reads, where expr said "invalid operation: float(x)".
func FiniteText(call, arg string, v any) (any, error) {
	if s, ok := v.(string); ok {
		if _, err := strconv.ParseFloat(s, 64); err != nil {
			return nil, &NonFiniteText{Call: call, Arg: arg, Text: s, Unread: true}
		}
		if NonFiniteNumberText(s) {
			return nil, &NonFiniteText{Call: call, Arg: arg, Text: s}
		}
	}
	return v, nil
}

// clipText is s quoted, at most 80 bytes of it, with its length where it is longer.
func clipText(s string) string {
	if len(s) <= 80 {
		return strconv.Quote(s)
	}
	cut := 80
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes)", strconv.Quote(s[:cut]), len(s))
}

// floatCalls are the float() calls of the tree as parsed (before the checker's rewrites, so
// that what they say is as written), each with the call and its argument as written.
func floatCalls(node ast.Node) map[*ast.BuiltinNode][2]string {
	var out map[*ast.BuiltinNode][2]string
	var walk func(n ast.Node)
	walk = func(n ast.Node) {
		if n == nil {
			return
		}
		if b, ok := n.(*ast.BuiltinNode); ok && b.Name == "float" && len(b.Arguments) == 1 {
			if out == nil {
				out = map[*ast.BuiltinNode][2]string{}
			}
			out[b] = [2]string{b.String(), b.Arguments[0].String()}
		}
		for _, c := range children(n) {
			walk(c)
		}
	}
	walk(node)
	return out
}

// wrapFloats hands the argument of each of calls still in the tree at node (after the
// checker's rewrites) through __finiteText(call, arg, <the argument as rewritten>), placed
// where the call is. It says whether it wrapped any.
func wrapFloats(node *ast.Node, calls map[*ast.BuiltinNode][2]string) bool {
	w := &floatWrapper{want: calls}
	ast.Walk(node, w)
	return w.wrapped
}

type floatWrapper struct {
	want    map[*ast.BuiltinNode][2]string
	wrapped bool
}

func (w *floatWrapper) Visit(n *ast.Node) {
	b, ok := (*n).(*ast.BuiltinNode)
	if !ok {
		return
	}
	s, ok := w.want[b]
	if !ok {
		return
	}
	delete(w.want, b) // once: a node the rewrites share is wrapped one time
	call := &ast.CallNode{
		Callee:    &ast.IdentifierNode{Value: finiteFunc},
		Arguments: []ast.Node{&ast.StringNode{Value: s[0]}, &ast.StringNode{Value: s[1]}, b.Arguments[0]},
	}
	call.SetLocation(b.Location())
	b.Arguments[0] = call
	w.wrapped = true
}
