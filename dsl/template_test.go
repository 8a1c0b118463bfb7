package dsl

import (
	"strings"
	"testing"
)

func TestHasInterpolation(t *testing.T) {
	tests := []struct {
		s    string
		want bool
	}{
		{"plain", false},
		{"${x}", true},
		{"a${x}b", true},
		{"$${x}", false},
		{"$${x}${y}", true},
		{"$x", false},
		{"${", true},
		{"$", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := HasInterpolation(tt.s); got != tt.want {
			t.Errorf("HasInterpolation(%q) = %v, want %v", tt.s, got, tt.want)
		}
	}
}

// TestTemplate checks template parsing (literal text, ${expr}, the $${ escape, braces and
// quotes inside an expression) and evaluation.
func TestTemplate(t *testing.T) {
	tests := []struct {
		src   string
		exprs int
		want  string
	}{
		{"plain", 0, "plain"},
		{"http://${vars.host}:8080/", 1, "http://127.0.0.1:8080/"},
		{"$${vars.host}", 0, "${vars.host}"},
		{"a$${b}${vars.n}c", 1, "a${b}10c"},
		{"${vars.n + 1}", 1, "11"},
		{"${vars.n / 4}", 1, "2.5"},
		{"${vars.n * 1.1}", 1, "11"},              // 11.000000000000002
		{"${vars.n * 123456.75}", 1, "1234567.5"}, // not 1.23457e+06
		{"${vars.n * 100000000000000}", 1, "1000000000000000"},
		{"${vars.strict}", 1, "true"},
		{"${backends.a.url}/echo?delay=${vars.n}ms", 2, "http://127.0.0.1:8080/echo?delay=10ms"},
		{`${ {"k": vars.host}.k }`, 1, "127.0.0.1"},             // nested braces
		{`${"}" + vars.host}`, 1, "}127.0.0.1"},                 // a brace inside a string
		{`${'{' + "\"}"}`, 1, `{"}`},                            // quotes and escapes
		{"${old}", 1, `["10.0.0.7"]`},                           // a list as JSON
		{"${old[0]}:${ip.captured.ip}", 2, "10.0.0.7:10.0.0.7"}, // captured values
		{"${target.clusterDomain}", 1, "cluster.local"},         // the target's values
		{"outbound|8080||b.${target.clusterDomain}", 1, "outbound|8080||b.cluster.local"},
	}
	names, env := testNames(), testEnv()
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			tpl, err := parseTemplate(tt.src, Pos{File: "x.cue", Line: 1, Col: 1}, names)
			if err != nil {
				t.Fatalf("parseTemplate: %v", err)
			}
			if n := len(tpl.Exprs()); n != tt.exprs {
				t.Errorf("%d expressions, want %d", n, tt.exprs)
			}
			got, rerr := tpl.Eval(env)
			if rerr != nil {
				t.Fatalf("Eval: %v", rerr)
			}
			if got != tt.want {
				t.Errorf("Eval = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestTemplateNoValue: a ${...} whose value is nil at run time errs, where it was written as
// the empty string (a key its map does not have); ?? gives the value to use instead. So does
// one whose value is no number (NaN, ±Inf): before, echo ${vars.n / 0} ran as echo +Inf. A
// division by zero errs before, at its / (dsl/divisor.go), saying what was 0: the non-finite
// values here come of an overflow.
func TestTemplateNoValue(t *testing.T) {
	names, env := testNames(), testEnv()
	for _, tt := range []struct{ src, want, err string }{
		{`a=${ {"k": vars.host}.nope }`, "", `${ {"k": vars.host}.nope } has no value`},
		{`a=${vars.n * 1e308}`, "", `${vars.n * 1e308} is +Inf, no number`},
		{`a=${-vars.n * 1e308}`, "", `${-vars.n * 1e308} is -Inf, no number`},
		{`a=${vars.n * 1e308 - vars.n * 1e308}`, "", `${vars.n * 1e308 - vars.n * 1e308} is NaN, no number`},
		{`a=${vars.n / (len(vars.host) - 9)}`, "", `len(vars.host) - 9 is 0: vars.n / (len(vars.host) - 9) has no value`},
		{`a=${ {"k": vars.host}.nope ?? 'x' }`, "a=x", ""},
		{`a=${ {"k": vars.host}.k }`, "a=127.0.0.1", ""},
	} {
		tpl, err := parseTemplate(tt.src, Pos{File: "x.cue", Line: 1, Col: 1}, names)
		if err != nil {
			t.Fatalf("%s: parseTemplate: %v", tt.src, err)
		}
		got, rerr := tpl.Eval(env)
		switch {
		case tt.err == "" && rerr != nil:
			t.Errorf("%s: %v", tt.src, rerr)
		case tt.err != "" && (rerr == nil || !strings.Contains(rerr.Error(), tt.err)):
			t.Errorf("%s: got %q, %v; want the error %q", tt.src, got, rerr, tt.err)
		case got != tt.want:
			t.Errorf("%s = %q, want %q", tt.src, got, tt.want)
		}
	}
}

// TestTemplateZeroDivisorKnownBeforeTheRun: a ${...} whose divisor is 0 before the run (written
// so, or made of vars alone) is refused where the scenario loads, at its /, not when the step
// begins (TestTemplateNoValue's other divisions are judged when the template is evaluated).
// ${vars.n / 0} was such a case of TestTemplateNoValue, erring at Eval with the same words.
func TestTemplateZeroDivisorKnownBeforeTheRun(t *testing.T) {
	names := testNames()
	for _, tt := range []struct{ src, err string }{
		{`a=${vars.n / 0}`, `x.cue:1:13: in expression "vars.n / 0": vars.n / 0 has no value: its divisor is 0 as written (as a number it would be +Inf or NaN, a value that measured nothing); expected a divisor that is not 0`},
		{`a=${vars.n % (2 - 2)}`, `x.cue:1:13: in expression "vars.n % (2 - 2)": vars.n % (2 - 2) has no value: its divisor is 0 as written (a remainder by 0 is no number); expected a divisor that is not 0`},
		// vars.n is 10 (testNames): this was TestTemplateNoValue's case of a divisor computed
		// to 0, erring at Eval with the same words as the run's.
		{`a=${(vars.n - 10) / (vars.n - 10)}`, `x.cue:1:20: in expression "(vars.n - 10) / (vars.n - 10)": vars.n - 10 is 0 with the vars this scenario runs with: (vars.n - 10) / (vars.n - 10) has no value (as a number it would be +Inf or NaN, a value that measured nothing), whatever the run records; expected a divisor that is not 0: give the var another value, or say what zero means (vars.n - 10 == 0 ? <the value then> : (vars.n - 10) / (vars.n - 10))`},
	} {
		_, err := parseTemplate(tt.src, Pos{File: "x.cue", Line: 1, Col: 1}, names)
		if err == nil || err.Error() != tt.err {
			t.Errorf("%s: parseTemplate: %v; want\n\t%s", tt.src, err, tt.err)
		}
	}
}

// TestTemplateErrors checks the errors of templates and their columns: the string's quote is
// at column 10, so its first character is at column 11.
func TestTemplateErrors(t *testing.T) {
	tests := []struct {
		src  string
		col  int
		want string
	}{
		{"x${vars.host", 12, `in "x${vars.host": ${ is never closed: expected } after the expression`},
		{"${vars.m['}']", 11, "is never closed"},
		{"ab${}", 13, `in "ab${}": empty ${}: expected an expression such as ${vars.host}`},
		{"${  }", 11, "empty ${}"},
		{"ab${vars.nope}", 20, `in expression "vars.nope": no var named "nope"`},
		{"${backend.a.url}/echo", 13, `unknown name backend (did you mean backends?)`},
		{"$${ok}${fortio.p95}", 26, `fortio.p95: the result of "fortio" (a load step) has no field "p95"`},
	}
	names := testNames()
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			_, err := parseTemplate(tt.src, Pos{File: "x.cue", Line: 4, Col: 10}, names)
			if err == nil {
				t.Fatal("parsed; want an error")
			}
			if !strings.Contains(err.Msg, tt.want) {
				t.Errorf("error %q\ndoes not hold %q", err.Msg, tt.want)
			}
			if err.Pos.Line != 4 || err.Pos.Col != tt.col {
				t.Errorf("position %s, want x.cue:4:%d", err.Pos, tt.col)
			}
		})
	}
}

func TestMatchBrace(t *testing.T) {
	tests := []struct {
		s    string
		i    int
		want int
	}{
		{"${a}", 2, 3},
		{"${ {a: 1}.a }x", 2, 12},
		{`${"}"}`, 2, 5},
		{`${'}'}`, 2, 5},
		{"${`}`}", 2, 5},
		{`${"\"}"}`, 2, 7},
		{"${a", 2, -1},
		{"${{a}", 2, -1},
	}
	for _, tt := range tests {
		if got := matchBrace(tt.s, tt.i); got != tt.want {
			t.Errorf("matchBrace(%q, %d) = %d, want %d", tt.s, tt.i, got, tt.want)
		}
	}
}

// TestExpandFileNoValue: a ${...} of a file a step reads whose value is nil when the step
// starts errs, as one in a step's own strings does (TestTemplateNoValue); ?? gives a default.
func TestExpandFileNoValue(t *testing.T) {
	sc := loadOne(t, `s: schema.#Scenario & {
	steps: [{exec: argv: ["true"]}]
}`)
	env := map[string]any{}
	if _, err := sc.ExpandFile("cm.yaml", []byte("data:\n  a: ${ {\"k\": 1}.nope }\n"), env); err == nil || !strings.Contains(err.Error(), `has no value`) {
		t.Errorf("a nil ${...} in a file: %v, want has no value", err)
	}
	got, err := sc.ExpandFile("cm.yaml", []byte("data:\n  a: ${ {\"k\": 1}.nope ?? 'x' }\n"), env)
	if err != nil || string(got) != "data:\n  a: x\n" {
		t.Errorf("with ??: %q, %v", got, err)
	}
}
