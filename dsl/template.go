package dsl

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/file"

	"labrun.dev/labrun/schema"
)

// Template is a string with ${expr} interpolations, compiled once. "$${" writes a literal "${".
type Template struct {
	Src   string
	Pos   Pos
	parts []templatePart
}

type templatePart struct {
	lit  string
	expr *Expr
}

// HasInterpolation reports whether s holds a ${...} to evaluate.
func HasInterpolation(s string) bool {
	// Most strings hold no "${" at all (and so no escaped "$${"): answered without a copy.
	return strings.Contains(s, "${") && strings.Contains(strings.ReplaceAll(s, "$${", ""), "${")
}

// almostTemplateRE is a name of the run written as a template of another language: {vars.n}
// (the $ left out), $(vars.n) (a shell's), {{ .vars.n }} or {{vars.n}} (Go's, Helm's).
var almostTemplateRE = regexp.MustCompile(`(\$\(|\{\{\s*\.?|\{)\s*((?:vars|backends|blackholes|ns)\.[A-Za-z_][A-Za-z0-9_.]*)\s*(\)|\}\}|\})`)

// mayBeAlmostTemplate is almostTemplate's cheap test: most strings hold no brace or $(.
func mayBeAlmostTemplate(s string) bool {
	return (strings.IndexByte(s, '{') >= 0 || strings.Contains(s, "$(")) && almostTemplateRE.MatchString(s)
}

// almostTemplate finds in s a name of the run written as another language's template, which
// labrun sends as written (echo {vars.n} prints "{vars.n}"): where it starts (-1 when s has
// none), its text and the ${...} meant. A ${...} (and a $${...}, written as ${...}) is not one.
func almostTemplate(s string) (at int, text, meant string) {
	if !mayBeAlmostTemplate(s) {
		return -1, "", ""
	}
	for _, m := range almostTemplateRE.FindAllStringSubmatchIndex(s, -1) {
		open, close := s[m[2]:m[3]], s[m[6]:m[7]]
		if open == "{" && m[0] > 0 && s[m[0]-1] == '$' {
			continue // ${vars.n}
		}
		if (open == "$(") != (close == ")") || (strings.HasPrefix(open, "{{") != (close == "}}")) {
			continue
		}
		return m[0], s[m[0]:m[1]], "${" + s[m[4]:m[5]] + "}"
	}
	return -1, "", ""
}

// parseTemplate splits s into literal text and expressions. Column offsets of errors assume a
// single-line string written at pos.
func parseTemplate(s string, pos Pos, names *Names) (*Template, *Error) {
	t := &Template{Src: s, Pos: pos}
	segs, open := templateSegments(s)
	if open >= 0 {
		p := pos.shift(open).inString()
		return nil, &Error{Pos: p, Msg: fmt.Sprintf("in %q: ${ is never closed: expected } after the expression", s)}
	}
	for _, seg := range segs {
		if !seg.expr {
			t.parts = append(t.parts, templatePart{lit: seg.text})
			continue
		}
		src, i := seg.text, seg.at
		if strings.TrimSpace(src) == "" {
			p := pos.shift(i).inString()
			return nil, &Error{Pos: p, Msg: fmt.Sprintf("in %q: empty ${}: expected an expression such as ${vars.host}", s)}
		}
		epos := pos.shift(2 + i) // the expression starts after `${`; compile places it in the string
		e, err := compile(src, epos, names, compileOpts{})
		if err != nil {
			return nil, err
		}
		if msg := unprintable(e); msg != "" {
			return nil, &Error{Pos: exprPos(epos, src, 0), Msg: fmt.Sprintf("in %q: ${%s} %s", s, src, msg)}
		}
		t.parts = append(t.parts, templatePart{expr: e})
	}
	return t, nil
}

// templateSegment is a piece of a string with ${...}: literal text (a "$${" read as "${"), or
// the source of one ${...}, written at byte at of the string (its "$").
type templateSegment struct {
	text string
	expr bool
	at   int
}

// templateSegments splits s into its literal text and its ${...}, in order (no two literals
// in a row, none empty); open is where a ${ that is never closed starts, or -1.
func templateSegments(s string) (segs []templateSegment, open int) {
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			segs = append(segs, templateSegment{text: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(s); {
		switch {
		case strings.HasPrefix(s[i:], "$${"):
			lit.WriteString("${")
			i += 3
		case strings.HasPrefix(s[i:], "${"):
			end := matchBrace(s, i+2)
			if end < 0 {
				lit.WriteString(s[i:])
				flush()
				return segs, i
			}
			flush()
			segs = append(segs, templateSegment{text: s[i+2 : end], expr: true, at: i})
			i = end + 1
		default:
			lit.WriteByte(s[i])
			i++
		}
	}
	flush()
	return segs, -1
}

// unprintable says why the value of a ${...} cannot be written into a string ("" when it
// can): a map, a list or a struct would be written as JSON, which no URL, header or name
// expects.
func unprintable(e *Expr) string {
	t := e.Type
	if t == nil {
		return ""
	}
	switch t.Kind {
	case schema.TList:
		return fmt.Sprintf("is a list (%s): it would be written into the string as JSON; pick one element (${%s[0]}) or join them (${join(%s, \",\")})", t, e.Src, e.Src)
	case schema.TMap, schema.TStruct, schema.TStats:
		return fmt.Sprintf("is %s (%s): it would be written into the string as JSON; pick one of its values (${%s.<key>})", t.Word(), t, e.Src)
	}
	return ""
}

// matchBrace returns the index of the } closing an expression that starts at i, skipping
// nested braces and quoted strings; -1 if there is none.
func matchBrace(s string, i int) int {
	depth := 0
	for ; i < len(s); i++ {
		switch c := s[i]; c {
		case '{':
			depth++
		case '}':
			if depth == 0 {
				return i
			}
			depth--
		case '"', '\'', '`':
			for i++; i < len(s) && s[i] != c; i++ {
				if s[i] == '\\' && c != '`' {
					i++
				}
			}
		}
	}
	return -1
}

// Static is the template with each ${...} that known gives a value for replaced by it, and
// every other left as written (so that the result still holds a ${...} where the value is
// not known before the run). known is given each expression's source, trimmed.
func (t *Template) Static(known func(src string) (string, bool)) string {
	var b strings.Builder
	for _, p := range t.parts {
		switch {
		case p.expr == nil:
			b.WriteString(p.lit)
		default:
			if v, ok := known(strings.TrimSpace(p.expr.Src)); ok {
				b.WriteString(v)
			} else {
				b.WriteString("${" + p.expr.Src + "}")
			}
		}
	}
	return b.String()
}

// Exprs returns the template's expressions.
func (t *Template) Exprs() []*Expr {
	var out []*Expr
	for _, p := range t.parts {
		if p.expr != nil {
			out = append(out, p.expr)
		}
	}
	return out
}

// Eval evaluates the template in env.
func (t *Template) Eval(env map[string]any) (string, error) {
	var b strings.Builder
	for _, p := range t.parts {
		if p.expr == nil {
			b.WriteString(p.lit)
			continue
		}
		v, err := expr.Run(p.expr.Program, env)
		if err != nil {
			return "", &EvalError{Expr: p.expr, Err: err}
		}
		text, err := filled(p.expr.Pos, p.expr.Src, v)
		if err != nil {
			return "", err
		}
		b.WriteString(text)
	}
	return b.String(), nil
}

// filled is v as a ${...} writes it, or why it writes nothing: nil (noValue), or a number that
// is none (NaN, ±Inf), which a command or an object would take as a word.
func filled(pos Pos, src string, v any) (string, error) {
	if v == nil {
		return "", noValue(pos, src)
	}
	if f, ok := v.(float64); ok && (math.IsNaN(f) || math.IsInf(f, 0)) {
		return "", fmt.Errorf("%s: ${%s} is %s, no number: the step would run on the word %q; check what it divides by, or say what to write then (${vars.d == 0 ? 0 : vars.n / vars.d})", pos, src, NumberText(f), NumberText(f))
	}
	return Stringify(v), nil
}

// EvalError is the error of a ${...} whose evaluation failed: expr's own (a field read from
// nil), which the run says in the scenario's terms where it knows why (interp's judge).
type EvalError struct {
	Expr *Expr
	Err  error
}

// Error says the ${...} and why it erred; where expr says which part of it erred
// (int(p.stdout) of a stdout that is no number), at that part's place in the file, with
// expr's message alone. Before, expr's "(1:10)\n | p.exit + int(p.stdout)\n | .........^":
// a place in the expression's own coordinates, a value's newline breaking the line, and a
// caret at the terminal's first column under a copy of the expression.
func (e *EvalError) Error() string {
	var fe *file.Error
	if errors.As(e.Err, &fe) && fe.Line > 0 && fe.From >= 0 && fe.From < utf8.RuneCountInString(e.Expr.Src) && e.Expr.Pos.IsValid() {
		msg := strings.ReplaceAll(strings.TrimRight(fe.Message, "\n"), "\n", `\n`)
		return fmt.Sprintf("%s: ${%s}: %s", e.Expr.PosAt(fe.From), e.Expr.Src, msg)
	}
	return fmt.Sprintf("%s: ${%s}: %v", e.Expr.Pos, e.Expr.Src, e.Err)
}

func (e *EvalError) Unwrap() error { return e.Err }

// noValue is the error of a ${...} whose value is nil at run time (a key its map does not
// have, a field a JSON document lacks): written as the empty string, a command or an object
// would run on a value that was never there, and the step could pass on it.
func noValue(pos Pos, src string) error {
	return fmt.Errorf("%s: ${%s} has no value (nil: a key or field that is not there); write what to use then, e.g. ${%s ?? ''}, or read it only where it is", pos, src, src)
}

// evalStrict is Eval where a nil value is an error: the value is not known yet.
func (t *Template) evalStrict(env map[string]any) (string, error) {
	for _, p := range t.parts {
		if p.expr == nil {
			continue
		}
		v, err := expr.Run(p.expr.Program, env)
		if err != nil {
			return "", fmt.Errorf("${%s}: %w", p.expr.Src, err)
		}
		if v == nil {
			return "", fmt.Errorf("${%s} has no value before the run", p.expr.Src)
		}
	}
	return t.Eval(env)
}

// Stringify writes a value into a string: strings as they are, numbers as NumberText writes
// them, lists and maps as JSON.
func Stringify(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case nil:
		return ""
	case float64:
		return NumberText(x)
	case float32:
		// Its own shortest digits: float64(float32(0.1)) is 0.100000001490116 at 15 digits.
		f, _ := strconv.ParseFloat(strconv.FormatFloat(float64(x), 'g', -1, 32), 64)
		return NumberText(f)
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case bool:
		return fmt.Sprint(x)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// NumberText writes a number into a command, an object, a file or a run's id: at most 15
// significant digits, which a float64 holds exactly of every decimal, so that a number the
// scenario writes is written as it writes it, and arithmetic's last bit is not (vars.qps *
// 1.1 is 110.00000000000001: written 110); without an exponent from 1e-6 up to 1e21, as
// JSON's writers do. Before, 6 digits and an exponent: a var of 1234567.5 ran as
// 1.23457e+06, and a sweep of 0.1234567 ran 0.123457.
func NumberText(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	r, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 15, 64), 64)
	switch a := math.Abs(r); {
	case a == 0:
		return "0" // -0 too
	case a >= 1e-6 && a < 1e21:
		return strconv.FormatFloat(r, 'f', -1, 64)
	}
	return strconv.FormatFloat(r, 'g', -1, 64)
}
