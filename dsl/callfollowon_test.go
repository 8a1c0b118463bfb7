package dsl

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAKitsWrongFieldIsSaidOnce: one wrong field in a kit template is one problem, at the
// field. CUE also fails every list.Concat over the kit's lists ("error in call to
// list.Concat") and places it at the same field; those said nothing to fix and named
// unrelated expect lists. A failed call with no other problem at its position is kept, with
// its cause (before, "error in call to list.Concat" alone, which did not say why).
func TestAKitsWrongFieldIsSaidOnce(t *testing.T) {
	const head = "package lab\n\nimport (\n\t\"list\"\n\n\t\"labrun.dev/schema\"\n)\n\n"
	tests := []struct {
		name, body string
		want       []string // each problem, as Error() says it after the file's name
	}{
		{"kit template", `kit: {
	#Load: {
		N=name: schema.#Ident
		step: schema.#Step & {name: N, load: {url: "http://127.0.0.1:1/", connections: -1, qps: 10, duration: "1s"}}
	}
	#OK: {
		N=name: schema.#Ident
		expect: ["\(N).code200 > 0"]
	}
}

s: schema.#Scenario & {
	steps: [(kit.#Load & {name: "lz"}).step]
	expect: list.Concat([(kit.#OK & {name: "lz"}).expect, ["lz.requests > 0"]])
}
`, []string{":12:82: kit.#Load.step.load.connections: expected a number >0, got -1"}},
		{"a failed call alone", `s: schema.#Scenario & {
	steps: [{sleep: "1s"}]
	expect: list.Concat([1, ["true"]])
}
`, []string{`:11:23: s.expect: error in call to list.Concat: one of the lists it joins is an int, not a list: expected a list of lists, e.g. list.Concat([a.steps, [{sleep: "1s"}]]); put a single value in brackets, [x]`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.cue")
			if err := os.WriteFile(path, []byte(head+tt.body), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Load([]string{path}, Options{})
			var errs Errors
			if !errors.As(err, &errs) {
				t.Fatalf("Load: %v, want problems", err)
			}
			var got []string
			for _, e := range errs {
				got = append(got, strings.TrimPrefix(e.Error(), path))
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}
