package dsl

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestSweptVarsRead: a sweep of two values or more of a var that nothing in the scenario
// reads is refused at the sweep's label (its runs would be the same experiment under
// different names); every way a var can be read counts.
func TestSweptVarsRead(t *testing.T) {
	const unread = "sweep.n: nothing in the scenario reads vars.n"
	for _, c := range []struct {
		name  string
		body  string
		files map[string]string // written beside x.cue
		want  string            // a substring of the one error; "" for none
	}{
		{name: "read by nothing", want: unread, body: `
s: schema.#Scenario & {
	vars: {n: 1, m: 2}
	sweep: n: [1, 2]
	local: backends: a: {}
	steps: [{name: "f", load: {url: "${backends.a.url}/", requests: vars.m}}]
	expect: ["f.requests == vars.m"]
}`},
		{name: "one value is no sweep of runs", body: `
s: schema.#Scenario & {
	vars: {n: 1}
	sweep: n: [1]
	local: backends: a: {}
	steps: [{name: "f", load: {url: "${backends.a.url}/", requests: 3}}]
	expect: ["f.requests == 3"]
}`},
		{name: "a field computed from it", body: `
s: schema.#Scenario & {
	vars: {n: 1}
	sweep: n: [1, 2]
	local: backends: a: {}
	steps: [{name: "f", load: {url: "${backends.a.url}/", requests: vars.n}}]
	expect: ["f.requests > 0"]
}`},
		{name: "a CUE interpolation", body: `
s: schema.#Scenario & {
	vars: {n: 1}
	sweep: n: [1, 2]
	local: backends: a: {}
	steps: [{name: "f", load: {url: "${backends.a.url}/n=\(vars.n)", requests: 3}}]
	expect: ["f.requests > 0"]
}`},
		{name: "a ${} in a step's string", body: `
s: schema.#Scenario & {
	vars: {n: 1}
	sweep: n: [1, 2]
	local: backends: a: {}
	steps: [{name: "f", load: {url: "${backends.a.url}/?delay=${vars.n}ms", requests: 3}}]
	expect: ["f.requests > 0"]
}`},
		{name: "an expectation", body: `
s: schema.#Scenario & {
	vars: {n: 1}
	sweep: n: [1, 2]
	local: backends: a: {}
	steps: [{name: "f", load: {url: "${backends.a.url}/", requests: 3}}]
	expect: ["f.requests > vars.n"]
}`},
		{name: "an expectation reading vars as a whole", body: `
s: schema.#Scenario & {
	vars: {n: 1, k: "n"}
	sweep: n: [1, 2]
	local: backends: a: {}
	steps: [{name: "f", load: {url: "${backends.a.url}/", requests: 3}}]
	expect: ["f.requests > vars[vars.k]"]
}`},
		{name: "a wait's condition", body: `
s: schema.#Scenario & {
	vars: {n: 1}
	sweep: n: [1, 2]
	local: backends: a: {}
	steps: [
		{name: "soak", background: true, load: {url: "${backends.a.url}/echo?delay=100ms", duration: "2s"}},
		{name: "g", every: "100ms", while: "soak", snapshot: backend: "a"},
		{name: "busy", timeout: "5s", wait: {until: "g.count >= vars.n", interval: "100ms"}},
		{await: "soak"},
	]
	expect: ["g.max.rq_active >= 1"]
}`},
		{name: "a kit the scenario embeds", body: `
_kit: {
	vars: {n: int | *1}
	local: backends: a: {}
	steps: [{name: "f", load: {url: "${backends.a.url}/", requests: vars.n}}]
}
s: schema.#Scenario & _kit & {
	sweep: n: [1, 2]
	expect: ["f.requests > 0"]
}`},
		{name: "a kit's kit", body: `
_base: {
	vars: {n: int | *1}
	local: backends: a: {}
	steps: [{name: "f", load: {url: "${backends.a.url}/", requests: vars.n}}]
}
_kit: _base & {doc: "a kit"}
s: schema.#Scenario & _kit & {
	sweep: n: [1, 2]
	expect: ["f.requests > 0"]
}`},
		{name: "an aliased kit", body: `
K=_kit: {
	vars: {n: int | *1}
	steps: [{name: "f", load: {url: "${backends.a.url}/", requests: vars.n}}]
}
s: schema.#Scenario & K & {
	sweep: n: [1, 2]
	local: backends: a: {}
	expect: ["f.requests > 0"]
}`},
		{name: "vars handed whole to a kit", body: `
#Load: {v: {...}, load: {url: "http://127.0.0.2:18490/", requests: v["n"]}}
s: schema.#Scenario & {
	vars: {n: 1}
	sweep: n: [1, 2]
	local: backends: a: address: "127.0.0.2:18490"
	steps: [{name: "f", load: (#Load & {v: vars}).load}]
	expect: ["f.requests > 0"]
}`},
		{name: "vars selected whole from the scenario", body: `
#Load: {v: {...}, load: {url: "http://127.0.0.2:18490/", requests: v["n"]}}
S=s: schema.#Scenario & {
	vars: {n: 1}
	sweep: n: [1, 2]
	local: backends: a: address: "127.0.0.2:18490"
	steps: [{name: "f", load: (#Load & {v: S.vars}).load}]
	expect: ["f.requests > 0"]
}`},
		{name: "a var selected from the scenario", body: `
S=s: schema.#Scenario & {
	vars: {n: 1}
	sweep: n: [1, 2]
	local: backends: a: {}
	steps: [{name: "f", load: {url: "${backends.a.url}/", requests: S.vars.n}}]
	expect: ["f.requests > 0"]
}`},
		{name: "another var selected from the scenario", want: unread, body: `
S=s: schema.#Scenario & {
	vars: {n: 1, m: 2}
	sweep: n: [1, 2]
	local: backends: a: {}
	steps: [{name: "f", load: {url: "${backends.a.url}/", requests: S.vars.m}}]
	expect: ["f.requests > 0"]
}`},
		{name: "vars selected whole by a quoted label", body: `
#Load: {v: {...}, load: {url: "http://127.0.0.2:18490/", requests: v["n"]}}
S=s: schema.#Scenario & {
	vars: {n: 1}
	sweep: n: [1, 2]
	local: backends: a: address: "127.0.0.2:18490"
	steps: [{name: "f", load: (#Load & {v: S."vars"}).load}]
	expect: ["f.requests > 0"]
}`},
		{name: "another scenario's read is not this one's", want: unread, body: `
s: schema.#Scenario & {
	vars: {n: 1}
	sweep: n: [1, 2]
	local: backends: a: {}
	steps: [{name: "f", load: {url: "${backends.a.url}/", requests: 3}}]
	expect: ["f.requests > 0"]
}
t: schema.#Scenario & {
	vars: {n: 1}
	local: backends: a: {}
	steps: [{name: "f", load: {url: "${backends.a.url}/", requests: vars.n}}]
	expect: ["f.requests > 0"]
}`},
		{name: "a file a step reads", files: map[string]string{"m.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {n: \"${vars.n}\"}\n"}, body: `
s: schema.#Scenario & {
	target: "kube"
	vars: {n: 1}
	sweep: n: [1, 2]
	steps: [{name: "c", apply: files: ["m.yaml"]}]
	expect: ["outcome.c == 'passed'"]
}`},
		{name: "a file a step reads, without the var", want: unread, files: map[string]string{"m.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {n: \"${ns.x}\"}\n"}, body: `
s: schema.#Scenario & {
	target: "kube"
	ephemeralNamespaces: ["x"]
	vars: {n: 1}
	sweep: n: [1, 2]
	steps: [{name: "c", apply: files: ["m.yaml"]}]
	expect: ["outcome.c == 'passed'"]
}`},
		{name: "a file written during the run may read it", body: `
s: schema.#Scenario & {
	target: "kube"
	vars: {n: 1}
	sweep: n: [1, 2]
	steps: [
		{exec: argv: ["sh", "-c", "echo > m.yaml"]},
		{name: "c", apply: files: ["m.yaml"]},
	]
	expect: ["outcome.c == 'passed'"]
}`},
		{name: "the scenario's doc only", want: unread, body: `
s: schema.#Scenario & {
	doc: "the backend serves every request with n=\(vars.n)"
	vars: {n: 1}
	sweep: n: [1, 2]
	local: backends: a: {}
	steps: [{name: "f", load: {url: "${backends.a.url}/", requests: 3}}]
	expect: ["f.requests > 0"]
}`},
		{name: "tags only", want: unread, body: `
s: schema.#Scenario & {
	tags: ["n\(vars.n)"]
	vars: {n: 1}
	sweep: n: [1, 2]
	local: backends: a: {}
	steps: [{name: "f", load: {url: "${backends.a.url}/", requests: 3}}]
	expect: ["f.requests > 0"]
}`},
		{name: "steps' doc only, in blocks too", want: unread, body: `
s: schema.#Scenario & {
	vars: {n: 1}
	sweep: n: [1, 2]
	local: backends: a: {}
	setup: [{doc: "n=\(vars.n)", sleep: "1ms"}]
	steps: [
		{name: "f", doc: "n=\(vars.n)", load: {url: "${backends.a.url}/", requests: 3}},
		{parallel: [{doc: "n=\(vars.n)", sleep: "1ms"}]},
		{sequence: [{doc: "n=${vars.n}", sleep: "1ms"}]} & {doc: "n=\(vars.n)"},
		{repeat: {steps: [{doc: "n=\(vars.n)", name: "p", exec: argv: ["true"]}], until: "p.exit == 0", max: 2}},
	]
	cleanup: [{doc: "n=\(vars.n)", sleep: "1ms"}]
	expect: ["f.requests > 0"]
}`},
		{name: "lint and survivors reasons only", want: unread, body: `
s: schema.#Scenario & {
	vars: {n: 1}
	sweep: n: [1, 2]
	lint: ignore: {"port-level-shadow": "n=\(vars.n)"}
	survivors: {"x": "n=\(vars.n)"}
	local: backends: a: {}
	steps: [{name: "f", load: {url: "${backends.a.url}/", requests: 3}}]
	expect: ["f.requests > 0"]
} & {vars: n: 1, doc: "n=\(vars.n)"}`},
		{name: "the doc read by a field", body: `
s: schema.#Scenario & {
	doc: "n=\(vars.n)"
	vars: {n: 1}
	sweep: n: [1, 2]
	local: backends: a: {}
	steps: [{name: "f", load: {url: "${backends.a.url}/", requests: len(doc)}}]
	expect: ["f.requests > 0"]
}`},
		{name: "the doc read through the scenario's name", body: `
_d: {for k, v in s if k == "doc" {x: v}}
s: schema.#Scenario & {
	doc: "n=\(vars.n)"
	vars: {n: 1}
	sweep: n: [1, 2]
	local: backends: a: {}
	steps: [{name: "f", load: {url: "${backends.a.url}/d=\(_d.x)", requests: 3}}]
	expect: ["f.requests > 0"]
}`},
		{name: "the doc read through the scenario's alias", body: `
_d: {for k, v in S if k == "doc" {x: v}}
S=s: schema.#Scenario & {
	doc: "n=\(vars.n)"
	vars: {n: 1}
	sweep: n: [1, 2]
	local: backends: a: {}
	steps: [{name: "f", load: {url: "${backends.a.url}/d=\(_d.x)", requests: 3}}]
	expect: ["f.requests > 0"]
}`},
		{name: "the tags read by the scenario's own step", body: `
s: schema.#Scenario & {
	tags: ["n\(vars.n)"]
	vars: {n: 1}
	sweep: n: [1, 2]
	local: backends: a: {}
	steps: [{name: "f", load: {url: "${backends.a.url}/t=\(s.tags[0])", requests: 3}}]
	expect: ["f.requests > 0"]
}`},
		{name: "a step's doc read by its load", body: `
s: schema.#Scenario & {
	vars: {n: 1}
	sweep: n: [1, 2]
	local: backends: a: {}
	steps: [{name: "f", doc: "n=\(vars.n)", load: {url: "${backends.a.url}/", requests: len(doc)}}]
	expect: ["f.requests > 0"]
}`},
		{name: "the steps as a whole", body: `
import "encoding/json"

s: schema.#Scenario & {
	vars: {n: 1}
	sweep: n: [1, 2]
	local: backends: a: {}
	setup: [{doc: "n=\(vars.n)", sleep: "1ms"}]
	steps: [{name: "f", load: {url: "${backends.a.url}/", headers: {x: json.Marshal(setup)}, requests: 3}}]
	expect: ["f.requests > 0"]
}`},
		{name: "a field called doc that is no doc", body: `
s: schema.#Scenario & {
	vars: {n: 1}
	sweep: n: [1, 2]
	local: backends: a: {}
	steps: [{name: "f", load: {url: "${backends.a.url}/", headers: {doc: "n=\(vars.n)"}, requests: 3}}]
	expect: ["f.requests > 0"]
}`},
		{name: "a kit's doc, not told from its other fields", body: `
_kit: {doc: "n=\(vars.n)", vars: n: int | *1}
s: schema.#Scenario & _kit & {
	sweep: n: [1, 2]
	local: backends: a: {}
	steps: [{name: "f", load: {url: "${backends.a.url}/", requests: 3}}]
	expect: ["f.requests > 0"]
}`},
		{name: "a value given twice", want: "sweep.n: sweep of vars.n: 2 is given twice, first at column 16", body: `
s: schema.#Scenario & {
	vars: {n: 1}
	sweep: n: [1, 2, 2]
	local: backends: a: {}
	steps: [{name: "f", load: {url: "${backends.a.url}/", requests: vars.n}}]
	expect: ["f.requests > 0"]
}`},
		{name: "a number written twice", want: "sweep of vars.r: 1 is given twice, first at column 13", body: `
s: schema.#Scenario & {
	vars: {r: 0.5}
	sweep: r: [1, 1.0]
	local: backends: a: {}
	steps: [{name: "f", load: {url: "${backends.a.url}/r=${vars.r}", requests: 3}}]
	expect: ["f.requests > 0"]
}`},
		{name: "a duration written twice", want: `sweep of vars.d: "60s" is given twice (as "1m"), first at line 9`, body: `
s: schema.#Scenario & {
	vars: {d: "1s"}
	sweep: d: [
		"1m",
		"60s",
	]
	local: backends: a: {}
	steps: [{name: "f", load: {url: "${backends.a.url}/?delay=${vars.d}", requests: 3}}]
	expect: ["f.requests > 0"]
}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, path := writeLab(t, c.body)
			for name, data := range c.files {
				if err := os.WriteFile(filepath.Join(filepath.Dir(path), name), []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, err := Load([]string{path}, Options{})
			var errs Errors
			if err != nil && !errors.As(err, &errs) {
				t.Fatal(err)
			}
			if c.want == "" {
				if err != nil {
					t.Fatalf("refused:\n%v", err)
				}
				return
			}
			if len(errs) != 1 || !strings.Contains(errs[0].Error(), c.want) {
				t.Fatalf("errors:\n%v\nwant one holding %q", err, c.want)
			}
		})
	}
}

// TestSweepOnlyJudged: a sweep of a var that only the expectations (or a catch step, which
// runs once the run has failed) read runs the same setup and steps at every value: it is
// warned of (sweep-only-judged) at the sweep's label, said once; any read that may change
// the run (a field computed from it, a ${...} or a condition of a setup, steps or cleanup
// step, a file a step reads) makes it a sweep of runs.
func TestSweepOnlyJudged(t *testing.T) {
	const judged = "vars.n is read only by the expectations: no field is computed from it"
	for _, c := range []struct {
		name  string
		body  string
		files map[string]string // written beside x.cue
		want  string            // a substring of the one warning; "" for none
		at    string            // its position, line:col
	}{
		{name: "a bound of an expectation", want: judged, at: "8:9", body: `
s: schema.#Scenario & {
	vars: {n: 1}
	sweep: n: [1, 2]
	local: backends: a: {}
	steps: [{name: "f", load: {url: "${backends.a.url}/", requests: 3, connections: 1}}]
	expect: ["f.qps <= vars.n * 500"]
}`},
		{name: "vars read whole by an expectation", want: judged, at: "8:9", body: `
s: schema.#Scenario & {
	vars: {n: 1, k: "n"}
	sweep: n: [1, 2]
	local: backends: a: {}
	steps: [{name: "f", load: {url: "${backends.a.url}/", requests: 3}}]
	expect: ["f.requests > vars[vars.k]"]
}`},
		{name: "a catch step's echo", want: "vars.n is read only by a catch step (which runs only once the run has failed): no field", at: "8:9", body: `
s: schema.#Scenario & {
	vars: {n: 1}
	sweep: n: [1, 2]
	local: backends: a: {}
	steps: [{name: "f", load: {url: "${backends.a.url}/", requests: 3}}]
	catch: [{exec: argv: ["echo", "n=${vars.n}"]}]
	expect: ["f.requests == 3"]
}`},
		{name: "the expectations and a catch step", want: "vars.n is read only by the expectations and a catch step", at: "8:9", body: `
s: schema.#Scenario & {
	vars: {n: 1}
	sweep: n: [1, 2]
	local: backends: a: {}
	steps: [{name: "f", load: {url: "${backends.a.url}/", requests: 3}}]
	catch: [{exec: argv: ["echo", "n=${vars.n}"]}]
	expect: ["f.requests >= vars.n"]
}`},
		{name: "one value is no sweep of runs", body: `
s: schema.#Scenario & {
	vars: {n: 1}
	sweep: n: [1]
	local: backends: a: {}
	steps: [{name: "f", load: {url: "${backends.a.url}/", requests: 3}}]
	expect: ["f.requests >= vars.n"]
}`},
		{name: "silenced with a reason", body: `
s: schema.#Scenario & {
	vars: {n: 1}
	sweep: n: [1, 2]
	lint: ignore: "sweep-only-judged": "each bound is judged on a run of its own"
	local: backends: a: {}
	steps: [{name: "f", load: {url: "${backends.a.url}/", requests: 3}}]
	expect: ["f.requests >= vars.n"]
}`},
		{name: "a field computed from it", body: `
s: schema.#Scenario & {
	vars: {n: 1}
	sweep: n: [1, 2]
	local: backends: a: {}
	steps: [{name: "f", load: {url: "${backends.a.url}/", requests: 3, connections: vars.n}}]
	expect: ["f.qps <= vars.n * 500"]
}`},
		{name: "a ${} in a step's string", body: `
s: schema.#Scenario & {
	vars: {n: 1}
	sweep: n: [1, 2]
	local: backends: a: {}
	steps: [{name: "f", load: {url: "${backends.a.url}/?delay=${vars.n}ms", requests: 3}}]
	expect: ["f.requests >= vars.n"]
}`},
		{name: "a ${} in a setup step in a block", body: `
s: schema.#Scenario & {
	vars: {n: 1}
	sweep: n: [1, 2]
	local: backends: a: {}
	setup: [{sequence: [{exec: argv: ["sh", "-c", "echo ${vars.n} > n.txt"]}]}]
	steps: [{name: "f", load: {url: "${backends.a.url}/", requests: 3}}]
	expect: ["f.requests >= vars.n"]
}`},
		{name: "a cleanup step's ${}", body: `
s: schema.#Scenario & {
	vars: {n: 1}
	sweep: n: [1, 2]
	local: backends: a: {}
	steps: [{name: "f", load: {url: "${backends.a.url}/", requests: 3}}]
	cleanup: [{exec: argv: ["echo", "n=${vars.n}"]}]
	expect: ["f.requests >= vars.n"]
}`},
		{name: "an assert's condition", body: `
s: schema.#Scenario & {
	vars: {n: 1}
	sweep: n: [1, 2]
	local: backends: a: {}
	steps: [
		{name: "f", load: {url: "${backends.a.url}/", requests: 3}},
		{assert: "f.requests >= vars.n"},
	]
	expect: ["f.requests >= vars.n"]
}`},
		{name: "a file a step reads", files: map[string]string{"m.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {n: \"${vars.n}\"}\n"}, body: `
s: schema.#Scenario & {
	target: "kube"
	vars: {n: 1}
	sweep: n: [1, 2]
	steps: [{name: "c", apply: files: ["m.yaml"]}]
	expect: ["outcome.c == 'passed' && vars.n > 0"]
}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, path := writeLab(t, c.body)
			for name, data := range c.files {
				if err := os.WriteFile(filepath.Join(filepath.Dir(path), name), []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			res, err := Load([]string{path}, Options{})
			if err != nil {
				t.Fatalf("refused:\n%v", err)
			}
			var got []*Warning
			for _, w := range res.Warnings {
				if w.Code == LintSweepOnlyJudged {
					got = append(got, w)
				}
			}
			switch {
			case c.want == "" && len(got) > 0:
				t.Errorf("warned: %s", got[0])
			case c.want != "" && len(got) != 1:
				t.Errorf("%d warnings %v, want one holding %q", len(got), got, c.want)
			case c.want != "" && (!strings.Contains(got[0].Msg, c.want) || !strings.HasSuffix(got[0].Pos.String(), "x.cue:"+c.at)):
				t.Errorf("warning %s, want one at %s holding %q", got[0], c.at, c.want)
			}
		})
	}
}

// TestSweepFlagOnlyJudged: a --sweep flag of two values or more of a var that only the claims
// read is warned of at the var's declaration, naming the flag; lint.ignore silences it.
func TestSweepFlagOnlyJudged(t *testing.T) {
	sc := &Scenario{Name: "s", Declared: map[string]Pos{"n": {File: "x.cue", Line: 6, Col: 10}},
		judgedOnlyVars: map[string]string{"n": "the expectations"}}
	got := SweepWarnings(sc, []SweepVar{{Name: "n", Values: []string{"1"}}, {Name: "n", Values: []string{"1", "2"}}, {Name: "m", Values: []string{"1", "2"}}})
	if len(got) != 1 || got[0].String() != "x.cue:6:10: warning[sweep-only-judged]: --sweep n=1,2: "+judgedOnlySweptVar("n", 2, "the expectations") {
		t.Errorf("warnings %v", got)
	}
	sc.LintIgnore = map[string]string{LintSweepOnlyJudged: "why"}
	if got := SweepWarnings(sc, []SweepVar{{Name: "n", Values: []string{"1", "2"}}}); len(got) != 0 {
		t.Errorf("silenced, yet %v", got)
	}
}

// TestCheckSweepRepeatsAndUnread: a --sweep flag that gives a value twice (as written or as
// the same value of the var's type), or sweeps a var nothing reads, is refused at the var's
// declaration.
func TestCheckSweepRepeatsAndUnread(t *testing.T) {
	sc := &Scenario{Name: "s",
		VarKinds:   map[string]string{"requests": "int", "rate": "number", "d": "duration", "host": "string", "mode": "string"},
		Declared:   map[string]Pos{"requests": {File: "x.cue", Line: 6, Col: 19}},
		unreadVars: map[string]bool{"mode": true}}
	var got []string
	for _, e := range CheckSweep(sc, []SweepVar{
		{Name: "requests", Values: []string{"2", "4", "02"}},
		{Name: "rate", Values: []string{"0.5", "5e-1"}},
		{Name: "d", Values: []string{"1s", "1000ms"}},
		{Name: "host", Values: []string{"a", "b", "a"}},
		{Name: "host", Values: []string{"a", "A"}},
		{Name: "mode", Values: []string{"x"}},
		{Name: "mode", Values: []string{"x", "y"}},
	}) {
		got = append(got, e.Error())
	}
	const repeat = ": two combinations would be the same run under one id; give each value once, and repeat runs with --count"
	want := []string{
		"x.cue:6:19: --sweep requests=2,4,02: 02 is given twice (as 2)" + repeat,
		"-: --sweep rate=0.5,5e-1: 5e-1 is given twice (as 0.5)" + repeat,
		"-: --sweep d=1s,1000ms: 1000ms is given twice (as 1s)" + repeat,
		"-: --sweep host=a,b,a: a is given twice" + repeat,
		"-: --sweep mode=x,y: " + unreadSweptVar("mode", 2),
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("errors\n %s\nwant\n %s", strings.Join(got, "\n "), strings.Join(want, "\n "))
	}
}

// TestMayFailChecks: an assert with mayFail whose outcome no expression reads can never fail
// the run and is refused; a wait is warned of (mayfail-unread); reading outcome.<step> or
// error.<step>, or outcome as a whole, makes either a claim. A block with mayFail holding such
// a check (at any depth) is judged the same, unless the block's outcome, the check's or that of
// a block between them is read.
func TestMayFailChecks(t *testing.T) {
	const refused, warned = "an assert with mayFail: true whose outcome nothing reads", "warning[mayfail-unread]"
	// judgedNot: read, by what cannot tell a failure from a pass.
	const judgedNot = "an assert with mayFail: true whose outcome nothing judges"
	const (
		blockRefused  = "with mayFail: true swallows the failure of the "
		repeatRefused = "a repeat with mayFail: true whose outcome nothing reads can never fail the run: when its until never holds"
		blockWarned   = "warning[mayfail-unread]: a sequence with mayFail: true swallows the failure of the wait"
	)
	for _, c := range []struct {
		name, steps, expect, want string
	}{
		{"assert read by nothing", `{name: "check", mayFail: true, assert: "f.code503 == 0"}`, `"f.requests == 3"`, refused},
		{"unnamed assert", `{mayFail: true, assert: "f.code503 == 0"}`, `"f.requests == 3"`, refused},
		{"assert with expectFail too", `{name: "check", mayFail: true, expectFail: true, assert: "f.code503 == 0"}`, `"f.requests == 3"`, refused},
		{"outcome read in expect", `{name: "check", mayFail: true, assert: "f.code503 == 0"}`, `"outcome.check == 'failed'"`, ""},
		{"error read in expect", `{name: "check", mayFail: true, assert: "f.code503 == 0"}`, `"error.check == ''"`, ""},
		{"outcome read as a whole", `{name: "check", mayFail: true, assert: "f.code503 == 0"}`, `"all(values(outcome), # == 'passed') && f.requests == 3"`, ""},
		{"no outcome failed", `{name: "check", mayFail: true, assert: "f.code503 == 0"}`, `"none(values(outcome), # in ['failed', 'error'])"`, ""},
		{"a failure counted", `{name: "check", mayFail: true, assert: "f.code503 == 0"}`, `"count(values(outcome), # == 'failed') == 0"`, ""},
		{"errors read as a whole", `{name: "check", mayFail: true, assert: "f.code503 == 0"}`, `"all(values(error), # == '')"`, ""},
		{"outcome read by a computed key", `{name: "check", mayFail: true, assert: "f.code503 == 0"}`, `"all(keys(outcome), outcome[#] == 'passed')"`, ""},
		{"'failed' in the outcomes", `{name: "check", mayFail: true, assert: "f.code503 == 0"}`, `"!('failed' in values(outcome))"`, ""},
		// A whole read that cannot tell a failed step from a passed one judges none: before,
		// any read of outcome or error as a whole counted as judging every mayFail check.
		{"outcome read as a whole, alike for passed and failed", `{name: "check", mayFail: true, assert: "f.code503 == 0"}`, `"all(values(outcome), # != 'error') && f.requests == 3"`,
			judgedNot + ` can never fail the run: it proves nothing (all(values(outcome), # != "error") holds or fails alike whether a step passed or failed)`},
		{"the outcomes' keys", `{name: "check", mayFail: true, assert: "f.code503 == 0"}`, `"len(keys(outcome)) == 2 && f.requests == 3"`,
			judgedNot + ` can never fail the run: it proves nothing (keys(outcome) reads only which steps outcome holds, not how they ended)`},
		{"has an error", `{name: "check", mayFail: true, assert: "f.code503 == 0"}`, `"has(error, 'check') && f.requests == 3"`,
			judgedNot + ` can never fail the run: it proves nothing (has(error, "check") reads only which steps error holds, not how they ended)`},
		{"a step among the outcomes", `{name: "check", mayFail: true, assert: "f.code503 == 0"}`, `"'check' in outcome && f.requests == 3"`, judgedNot},
		{"outcome read by a later step", `{name: "check", mayFail: true, assert: "f.code503 == 0"}, {assert: "outcome.check == 'passed'"}`, `"f.requests == 3"`, ""},
		{"wait read by nothing", `{name: "soak", background: true, load: {url: "${backends.a.url}/echo?delay=100ms", duration: "1s"}}, {name: "g", every: "100ms", while: "soak", snapshot: backend: "a"}, {name: "w", mayFail: true, timeout: "2s", wait: {until: "g.count >= 3", interval: "100ms"}}, {await: "soak"}`, `"f.requests == 3"`, warned},
		{"wait read", `{name: "soak", background: true, load: {url: "${backends.a.url}/echo?delay=100ms", duration: "1s"}}, {name: "g", every: "100ms", while: "soak", snapshot: backend: "a"}, {name: "w", mayFail: true, timeout: "2s", wait: {until: "g.count >= 3", interval: "100ms"}}, {await: "soak"}`, `"outcome.w == 'failed' && f.requests == 3"`, ""},
		{"a step that is no check", `{name: "e", mayFail: true, exec: argv: ["false"]}`, `"f.requests == 3"`, ""},
		// A block with mayFail swallows the failure of the checks inside it: the same claim.
		{"sequence read by nothing", `{mayFail: true, sequence: [{assert: "f.code503 == 0"}]}`, `"f.requests == 3"`, blockRefused},
		{"parallel read by nothing", `{mayFail: true, parallel: [{assert: "f.code503 == 0"}, {exec: argv: ["true"]}]}`, `"f.requests == 3"`, blockRefused},
		{"assert deep in the block", `{mayFail: true, sequence: [{exec: argv: ["true"]}, {parallel: [{sequence: [{assert: "f.code503 == 0"}]}]}]}`, `"f.requests == 3"`, blockRefused},
		{"repeat whose until nothing reads", `{mayFail: true, repeat: {max: 2, until: "p.code503 == 0", steps: [{name: "p", load: {url: "${backends.a.url}/echo?status=503", requests: 1}}]}}`, `"f.requests == 3"`, repeatRefused},
		{"repeat with until in the block", `{mayFail: true, sequence: [{repeat: {max: 2, until: "p.code503 == 0", steps: [{name: "p", load: {url: "${backends.a.url}/echo?status=503", requests: 1}}]}}]}`, `"f.requests == 3"`, blockRefused},
		{"block read in expect", `{name: "blk", mayFail: true, sequence: [{assert: "f.code503 == 0"}]}`, `"outcome.blk == 'passed'"`, ""},
		{"block's error read", `{name: "blk", mayFail: true, parallel: [{assert: "f.code503 == 0"}]}`, `"error.blk == ''"`, ""},
		{"repeat read in expect", `{name: "r", mayFail: true, repeat: {max: 2, until: "p.code503 == 0", steps: [{name: "p", load: {url: "${backends.a.url}/echo?status=503", requests: 1}}]}}`, `"outcome.r == 'passed'"`, ""},
		{"the assert inside read", `{mayFail: true, sequence: [{name: "check", assert: "f.code503 == 0"}]}`, `"outcome.check == 'passed'"`, ""},
		{"a block between read", `{mayFail: true, sequence: [{name: "inner", sequence: [{assert: "f.code503 == 0"}]}]}`, `"outcome.inner == 'passed'"`, ""},
		{"one assert of two read", `{mayFail: true, sequence: [{name: "check", assert: "f.code503 == 0"}, {assert: "f.code200 == 3"}]}`, `"outcome.check == 'passed'"`, blockRefused},
		{"outcomes read as a whole", `{mayFail: true, sequence: [{assert: "f.code503 == 0"}]}`, `"all(values(outcome), # == 'passed') && f.requests == 3"`, ""},
		{"outcomes read as a whole, alike for passed and failed", `{mayFail: true, sequence: [{assert: "f.code503 == 0"}]}`, `"all(values(outcome), # != 'error') && f.requests == 3"`, blockRefused},
		{"an assert with mayFail of its own is its own check", `{mayFail: true, sequence: [{name: "check", mayFail: true, assert: "f.code503 == 0"}]}`, `"outcome.check == 'passed'"`, ""},
		{"a block with mayFail inside is said once, of itself", `{mayFail: true, sequence: [{exec: argv: ["true"]}, {mayFail: true, parallel: [{assert: "f.code503 == 0"}]}]}`, `"f.requests == 3"`, "a parallel with mayFail: true swallows"},
		{"block of steps that are no check", `{mayFail: true, sequence: [{exec: argv: ["false"]}]}`, `"f.requests == 3"`, ""},
		{"block with a wait read by nothing", `{name: "soak", background: true, load: {url: "${backends.a.url}/echo?delay=100ms", duration: "1s"}}, {name: "g", every: "100ms", while: "soak", snapshot: backend: "a"}, {mayFail: true, sequence: [{timeout: "2s", wait: {until: "g.count >= 3", interval: "100ms"}}]}, {await: "soak"}`, `"f.requests == 3"`, blockWarned},
		// A read from inside the block runs only while the block goes on: after a failed check
		// it is skipped, so it sees the check only when it passed.
		{"read by a later step in the block", `{mayFail: true, sequence: [{name: "check", assert: "f.code503 == 0"}, {exec: argv: ["echo", "${outcome.check}"]}]}`, `"f.requests == 3"`, blockRefused},
		{"read by the block's later assert", `{mayFail: true, sequence: [{name: "check", assert: "f.code503 == 0"}, {assert: "outcome.check == 'passed'"}]}`, `"f.requests == 3"`, blockRefused},
		{"read as a whole inside the block", `{mayFail: true, parallel: [{name: "check", assert: "f.code503 == 0"}, {assert: "all(values(outcome), # != 'failed')"}]}`, `"f.requests == 3"`, blockRefused},
		{"read inside and after the block", `{mayFail: true, sequence: [{name: "check", assert: "f.code503 == 0"}, {exec: argv: ["echo", "${outcome.check}"]}]}, {assert: "outcome.check == 'passed'"}`, `"f.requests == 3"`, ""},
		{"a mayFail assert read by a step after it", `{name: "check", mayFail: true, assert: "f.code503 == 0"}, {assert: "outcome.check != 'failed'"}`, `"f.requests == 3"`, ""},
		// A ${...} shows the outcome, and a comparison that holds alike for passed and failed
		// tells nothing of it: neither judges it, and the run passed where the check failed.
		{"a mayFail assert shown by a later step's ${...}", `{name: "check", mayFail: true, assert: "f.code503 == 0"}, {exec: argv: ["echo", "${outcome.check}"]}`, `"f.requests == 3"`, judgedNot + " can never fail the run: it proves nothing (a ${...} of step steps.2 shows it and judges nothing)"},
		{"shown in the block and after it", `{mayFail: true, sequence: [{name: "check", assert: "f.code503 == 0"}, {exec: argv: ["echo", "${outcome.check}"]}]}, {exec: argv: ["echo", "${outcome.check}"]}`, `"f.requests == 3"`, blockRefused},
		{"outcome != 'skipped'", `{name: "check", mayFail: true, assert: "f.code503 == 0"}`, `"outcome.check != 'skipped'"`, judgedNot + ` can never fail the run: it proves nothing ("outcome.check != 'skipped'" holds or fails alike whether check passed or failed)`},
		{"outcome == 'error'", `{name: "check", mayFail: true, assert: "f.code503 == 0"}`, `"f.requests == 3 && !(outcome.check == 'error')"`, judgedNot},
		{"outcome in passed, failed", `{name: "check", mayFail: true, assert: "f.code503 == 0"}`, `"outcome.check in ['passed', 'failed'] && f.requests == 3"`, judgedNot},
		{"outcome in passed, skipped", `{name: "check", mayFail: true, assert: "f.code503 == 0"}`, `"outcome.check in ['passed', 'skipped']"`, ""},
		{"read by an assert that may fail itself", `{name: "check", mayFail: true, assert: "f.code503 == 0"}, {name: "again", mayFail: true, assert: "outcome.check == 'passed'"}`, `"outcome.again == 'passed'"`, judgedNot + " can never fail the run: it proves nothing (the assert again reads it, and a mayFail lets it fail without failing the run)"},
		// outcome.x == 'error' as the claim: a failed check makes it false, and the run fails.
		// Before, taken as judging nothing, a block read so was refused as read by nothing.
		{"outcome == 'error' as the claim", `{name: "check", mayFail: true, assert: "f.code503 == 0"}`, `"outcome.check == 'error'"`, ""},
		{"block outcome == 'error' as the claim", `{name: "tail", mayFail: true, sequence: [{exec: argv: ["true"]}, {assert: "f.code503 == 0"}]}`, `"outcome.tail == 'error' && f.requests == 3"`, ""},
		{"block outcome == 'error' negated", `{name: "tail", mayFail: true, sequence: [{exec: argv: ["true"]}, {assert: "f.code503 == 0"}]}`, `"!(outcome.tail == 'error')"`, blockRefused},
		// A block read only by what holds alike for passed and failed: the message says which
		// read, not that nothing reads it.
		{"block outcome != 'skipped'", `{name: "tail", mayFail: true, sequence: [{exec: argv: ["true"]}, {assert: "f.code503 == 0"}]}`, `"outcome.tail != 'skipped'"`, `and nothing judges the outcome of either ("outcome.tail != 'skipped'" holds or fails alike whether tail passed or failed): the assert can never fail the run`},
		{"outcome != 'skipped' and == 'passed'", `{name: "check", mayFail: true, assert: "f.code503 == 0"}`, `"outcome.check != 'skipped' && outcome.check == 'passed'"`, ""},
		{"block with a wait read", `{name: "soak", background: true, load: {url: "${backends.a.url}/echo?delay=100ms", duration: "1s"}}, {name: "g", every: "100ms", while: "soak", snapshot: backend: "a"}, {name: "blk", mayFail: true, sequence: [{timeout: "2s", wait: {until: "g.count >= 3", interval: "100ms"}}]}, {await: "soak"}`, `"outcome.blk == 'passed' && f.requests == 3"`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, path := writeLab(t, `s: schema.#Scenario & {
	local: backends: a: {}
	steps: [{name: "f", load: {url: "${backends.a.url}/", requests: 3}}, `+c.steps+`]
	expect: [`+c.expect+`]
}`)
			res, err := Load([]string{path}, Options{})
			var errs Errors
			if err != nil && !errors.As(err, &errs) {
				t.Fatal(err)
			}
			var got []string
			for _, e := range errs {
				got = append(got, e.Error())
			}
			if res != nil {
				for _, w := range res.Warnings {
					got = append(got, w.String())
				}
			}
			switch {
			case c.want == "" && len(got) > 0:
				t.Fatalf("refused or warned:\n%s", strings.Join(got, "\n"))
			case c.want != "" && (len(got) != 1 || !strings.Contains(got[0], c.want)):
				t.Fatalf("got:\n%s\nwant one holding %q", strings.Join(got, "\n"), c.want)
			}
		})
	}
}
