package dsl

import (
	"errors"
	"strings"
	"testing"
)

// TestKitHiddenParams: a hidden field given to a definition of the package that the
// definition does not declare and nothing reads is refused at the call site, as is a regular
// field it does not declare where only a field of the result is read; a declared one, a
// helper the call site reads, a definition whose fields its source does not show all (an
// embedding) and one that takes any field are not.
func TestKitHiddenParams(t *testing.T) {
	const kit = `#Load: {
	N=_name!: string
	R=_requests: *10 | int
	name: N
	load: {url: "${backends.a.url}/echo", requests: R}
}
`
	for _, c := range []struct {
		name, src, want string
	}{
		{"declared", kit + `s: schema.#Scenario & {local: backends: a: {}, steps: [#Load & {_name: "f", _requests: 5}], expect: ["f.code200 == 5"]}`, ""},
		{"misspelt", kit + `s: schema.#Scenario & {local: backends: a: {}, steps: [#Load & {_name: "f", _reqests: 5}], expect: ["f.code200 == 5"]}`,
			"hidden field _reqests: #Load declares no such hidden field (did you mean _requests?)"},
		{"misspelt, the literal first", kit + `s: schema.#Scenario & {local: backends: a: {}, steps: [{_name: "f", _reqests: 5} & #Load], expect: ["f.code200 == 5"]}`,
			"did you mean _requests?"},
		{"a helper the call site reads", kit + `s: schema.#Scenario & {local: backends: a: {}, steps: [#Load & {_name: "f", _n: 5, _requests: _n}], expect: ["f.code200 == 5"]}`, ""},
		{"a definition with an embedding", `#Base: {N=_name!: string, name: N}
#Load: {
	#Base
	load: {url: "${backends.a.url}/echo", requests: 10}
}
s: schema.#Scenario & {local: backends: a: {}, steps: [#Load & {_name: "f", _other: 5}], expect: ["f.code200 == 10"]}`, ""},
		{"a regular field misspelt, the template's step selected", `#Load: {
	N=name: schema.#Ident
	step: {name: N, load: {url: "${backends.a.url}/echo", requests: 10}}
}
s: schema.#Scenario & {local: backends: a: {}, steps: [(#Load & {nmae: "f"}).step], expect: ["f.code200 == 10"]}`,
			"field nmae: #Load declares no such field (did you mean name?)"},
		{"a regular field of a template that takes any", `#Load: {
	N=name: schema.#Ident
	[string]: _
	step: {name: N, load: {url: "${backends.a.url}/echo", requests: 10}}
}
s: schema.#Scenario & {local: backends: a: {}, steps: [(#Load & {name: "f", extra: 1}).step], expect: ["f.code200 == 10"]}`, ""},
		{"another package's definition of the same name", `#Step: {name: string, sleep: "1ms"}
s: schema.#Scenario & {local: backends: a: {}, steps: [{name: (schema.#Step & {name: "f", timeout: "5s", sleep: "1ms"}).name, sleep: "1ms"}], expect: ["outcome.f == 'passed'"]}`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, path := writeLab(t, c.src)
			_, err := Load([]string{path}, Options{})
			var errs Errors
			errors.As(err, &errs)
			var got []string
			for _, e := range errs {
				if strings.Contains(e.Msg, "declares no such") {
					got = append(got, e.Error())
				}
			}
			switch {
			case c.want == "" && len(got) > 0:
				t.Errorf("want no problem with hidden fields, got\n%s", strings.Join(got, "\n"))
			case c.want != "" && (len(got) != 1 || !strings.Contains(got[0], c.want) || !strings.Contains(got[0], "expected one of #Load's")):
				t.Errorf("want one problem holding %q, got\n%s\n(all: %v)", c.want, strings.Join(got, "\n"), err)
			}
		})
	}
}
