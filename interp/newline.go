package interp

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/expr-lang/expr"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/schema"
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
	if msg := walk(e.Explain); msg != "" {
		return msg
	}
	return newlineDecidesWhole(e, env)
}

// newlineWritten matches what in a claim's source says it is about line ends: a newline or
// carriage return written in a string (\n, \r, \x0a, \012), a pattern's \s or [[:space:]].
var newlineWritten = regexp.MustCompile(`\\[nrs]|\\x0[aAdD]|\\01[25]|\\u000[aAdD]|\[:space:\]|\[\[:space`)

// newlineDecidesWhole says why a claim that held rests on the newline that ends a command's
// output where no comparison of two strings shows it (newlineDecided's walk): a list, a
// suffix, a predicate over items or a length read the output. p.stdout not in ['3', '4'],
// not (p.stdout endsWith '3') and none(['3'], {# == p.stdout}) of `echo 3` held, as
// p.stdout != "" of a command that printed an empty line did. The claim is judged again with
// that newline taken from the outputs it reads: where it then no longer holds, it held by the
// newline alone. A claim that writes a newline (or a pattern's \s) is about line ends and
// is left as it is judged.
func newlineDecidesWhole(e *dsl.Expr, env map[string]any) string {
	if e == nil || e.Program == nil || newlineWritten.MatchString(e.Src) {
		return ""
	}
	var names []string
	for _, name := range e.Names { // the names it reads, not the whole environment: a run of many steps
		r, ok := env[name].(schema.ExecResult)
		if ok && (endsInNewline(r.Stdout) || endsInNewline(r.Stderr)) && !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return ""
	}
	slices.Sort(names)
	holdsWithout := func(trimmed []string) (bool, bool) {
		alt := maps.Clone(env)
		for _, name := range trimmed {
			r := env[name].(schema.ExecResult)
			r.Stdout, r.Stderr = strings.TrimRight(r.Stdout, "\r\n"), strings.TrimRight(r.Stderr, "\r\n")
			alt[name] = r
		}
		out, err := expr.Run(e.Program, alt)
		held, ok := out.(bool)
		return held, err == nil && ok
	}
	decided := names
	for _, name := range names {
		if held, ok := holdsWithout([]string{name}); ok && !held {
			decided = []string{name}
			break
		}
	}
	if held, ok := holdsWithout(decided); !ok || held {
		return ""
	}
	var outs, refs []string
	for _, name := range decided {
		r := env[name].(schema.ExecResult)
		for _, o := range []struct{ field, v string }{{"stdout", r.Stdout}, {"stderr", r.Stderr}} {
			if endsInNewline(o.v) && strings.Contains(e.Src, name+"."+o.field) {
				outs = append(outs, fmt.Sprintf("%s.%s (%s)", name, o.field, clip(strconv.Quote(o.v))))
				refs = append(refs, "trim("+name+"."+o.field+")")
			}
		}
	}
	if len(outs) == 0 {
		outs = append(outs, "the output of "+strings.Join(decided, ", "))
		refs = append(refs, "trim(…) of it")
	}
	return fmt.Sprintf("%q holds only by the newline that ends %s: without that newline the claim does not hold, so it holds by the newline alone, not by what was printed; read %s instead, or write the newline where the claim means it (\\n in a string)", e.Src, strings.Join(outs, " and "), strings.Join(refs, " and "))
}

func endsInNewline(s string) bool { return strings.HasSuffix(s, "\n") || strings.HasSuffix(s, "\r") }

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
