package docs_test

import (
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"labrun.dev/labrun/schema"
)

// kindTable is docs/language.md's table of step kinds, generated from the registry.
func kindTable() string {
	var b strings.Builder
	b.WriteString("| kind | what it does | fields | what expressions see by its name |\n|---|---|---|---|\n")
	for _, k := range schema.KindNames() {
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", k, schema.Kinds[k].Usage, fields(schema.Kinds[k].New()), schema.Kinds[k].Result.Describe())
	}
	return b.String()
}

// TestKindTable keeps docs/language.md's generated table equal to the registry, and its
// hand-written table naming exactly the registry's kinds.
func TestKindTable(t *testing.T) {
	const begin, end = "<!-- BEGIN step kinds", "<!-- END step kinds -->"
	b, err := os.ReadFile("language.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("language.md has no %q … %q block", begin, end)
	}
	i += strings.Index(doc[i:], "\n") + 1
	if got, want := doc[i:j], kindTable(); got != want {
		if os.Getenv("LABRUN_UPDATE") != "" {
			if err := os.WriteFile("language.md", []byte(doc[:i]+want+doc[j:]), 0o644); err != nil {
				t.Fatal(err)
			}
		} else {
			t.Errorf("language.md's table of step kinds is not the registry's (LABRUN_UPDATE=1 go test ./docs rewrites it):\n got:\n%s\nwant:\n%s", got, want)
		}
	}
}

// fields lists a kind's parameters by their CUE names (the JSON names of its Go type).
func fields(p schema.Params) string {
	t := reflect.TypeOf(p).Elem()
	var out []string
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			switch {
			case f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct:
				walk(f.Type)
			case name != "" && name != "-":
				out = append(out, "`"+name+"`")
			}
		}
	}
	walk(t)
	if pa, ok := p.(schema.Parent); ok && pa.ChildField() != "" {
		out = append([]string{"`" + pa.ChildField() + "`"}, out...)
	}
	if len(out) == 0 {
		return "(its value: " + valueOf(p) + ")"
	}
	return strings.Join(out, ", ")
}

// valueOf says what a kind without fields is written as.
func valueOf(p schema.Params) string {
	switch p.(type) {
	case *schema.Sleep:
		return "a duration"
	case *schema.Assert:
		return "an expression"
	case *schema.Await:
		return "a step name or a list of them"
	}
	return "a list of steps"
}
