package interp

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/expr-lang/expr"

	"labrun.dev/labrun/dsl"
)

// newlineDecided says why a claim that held rests on the newline that ends a command's output
// alone, "" when it does not: p.stdout != '3' of `echo 3` held, "3\n" not being "3", as
// !(p.stdout == '3') did, whatever the command printed before its newline. A comparison the
// evaluation makes (not a side of && or || the other decided, not the branch of ?: not
// chosen) of two strings that differ only by trailing newlines decides nothing the claim
// means to check: the claim has no value as written, as all() over nothing has none.
func newlineDecided(e *dsl.Expr, env map[string]any) string {
	var walk func(x *dsl.Explain) string
	walk = func(x *dsl.Explain) string {
		if x == nil {
			return ""
		}
		switch x.Op {
		case "&&", "and", "||", "or":
			if msg := walk(x.Left); msg != "" {
				return msg
			}
			if held, ok := x.Left.Holds(env); !ok || held == (x.Op == "||" || x.Op == "or") {
				return "" // the right side is not evaluated (or what decided is not known)
			}
			return walk(x.Right)
		case "==", "!=":
			return differByNewline(x, env)
		case "":
			if x.Infix == "?:" && len(x.Args) == 3 {
				held, ok := x.Args[0].Holds(env)
				if !ok {
					return ""
				}
				if msg := walk(x.Args[0]); msg != "" {
					return msg
				}
				if held {
					return walk(x.Args[1])
				}
				return walk(x.Args[2])
			}
			return ""
		case "let":
			return walk(x.Right)
		}
		if msg := walk(x.Left); msg != "" {
			return msg
		}
		return walk(x.Right)
	}
	return walk(e.Explain)
}

// differByNewline says so of the comparison x (== or !=) when its sides are strings that
// differ only by the newlines that end one of them.
func differByNewline(x *dsl.Explain, env map[string]any) string {
	a, okA := stringOf(x.Left, env)
	b, okB := stringOf(x.Right, env)
	if !okA || !okB || a == b {
		return ""
	}
	trim := func(s string) string { return strings.TrimRight(s, "\r\n") }
	if trim(a) != trim(b) {
		return ""
	}
	out, lit, outVal, litVal := x.Left, x.Right, a, b
	if !strings.HasSuffix(a, "\n") {
		out, lit, outVal, litVal = lit, out, b, a
	}
	return fmt.Sprintf("%s (%s) and %s differ only by the newline that ends %s: %s %s %s holds or fails by that newline alone, not by what was printed; compare trim(%s) %s %s, or write the newline: %s %s %s",
		out.Source(), clip(strconv.Quote(outVal)), lit.Source(), out.Source(), out.Source(), x.Op, lit.Source(), out.Source(), x.Op, lit.Source(), out.Source(), x.Op, clip(strconv.Quote(trim(litVal)+outVal[len(trim(outVal)):])))
}

// stringOf is the value of a side of a comparison that is a string: a name read in env, or a
// quoted literal.
func stringOf(x *dsl.Explain, env map[string]any) (string, bool) {
	if x == nil || x.Op != "" || x.Call != "" || x.Infix != "" {
		return "", false
	}
	var v any
	var err error
	if p := x.Value(); p != nil {
		v, err = expr.Run(p, env)
	} else if s := strings.TrimSpace(x.Src); len(s) >= 2 && (s[0] == '\'' || s[0] == '"') {
		v, err = expr.Eval(s, nil)
	} else {
		return "", false
	}
	s, ok := v.(string)
	return s, err == nil && ok
}
