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
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", k, schema.Kinds[k].Usage, fields(schema.Kinds[k].New()), sees(k))
	}
	return b.String()
}

// sees says in a few words what expressions see by the name of a step of kind k, from the
// type its kind declares.
func sees(k string) string {
	if k == "config" {
		return "`<name>`: what it reads, typed by Envoy's API (the resource, or its part at `path`): `<name>.circuit_breakers.thresholds[0].max_connections`, `<name>.endpoints[0].priority`, …; a list of strings for `names`"
	}
	t := schema.ResultOf(schema.Kinds[k].New(), schema.PlainContext)
	switch {
	case t == nil:
		return "—"
	case t.Kind == schema.TAny:
		return "`<name>`: the value, as JSON-like data (its shape is known at run time)"
	case t.Kind == schema.TStats:
		return "`<name>.<stat>`, typed by the source's catalogue; a series (`.samples`, `.max`, `.last`, …) when sampled with `every`"
	}
	root := "`<name>."
	if t.Kind == schema.TList && t.Elem != nil {
		t, root = t.Elem, "`<name>[i]." // a list of records (events)
	}
	var out []string
	for i, f := range t.Fields {
		if i == 0 {
			out = append(out, root+f.Name+"`")
		} else {
			out = append(out, "`."+f.Name+"`")
		}
	}
	return strings.Join(out, ", ")
}

// resultTables is docs/language.md's reference of what each kind records: every field with
// its type, unit, moment and doc, from the declarations in schema/<kind>.go.
func resultTables() string {
	var b strings.Builder
	for _, k := range schema.KindNames() {
		p := schema.Kinds[k].New()
		if k == "snapshot" {
			p = &schema.Snapshot{Envoy: &schema.PodRef{Pod: "client"}, Cluster: "<cluster>", Hosts: true}
		}
		if k == "config" {
			p = &schema.Config{Envoy: &schema.PodRef{Pod: "client"}, Cluster: "<cluster>", Path: "circuit_breakers.thresholds[0]"}
			b.WriteString("\n**`config`**: what it reads, in Envoy's API types (go-control-plane's protos): " +
				"a Cluster, Listener, RouteConfiguration or ClusterLoadAssignment, or the part of it at `path`, " +
				"each message a struct of its fields, an enum a string of its values; a list of strings for `names`. " +
				"For `cluster: \"<cluster>\", path: \"circuit_breakers.thresholds[0]\"`:\n")
			b.WriteString("\n| field | type | exists | what |\n|---|---|---|---|\n")
			rows(&b, "", schema.ResultOf(p, schema.PlainContext))
			continue
		}
		t := schema.ResultOf(p, schema.PlainContext)
		if t == nil {
			continue
		}
		fmt.Fprintf(&b, "\n**`%s`**", k)
		switch t.Kind {
		case schema.TAny:
			b.WriteString(": the value, as JSON-like data; its shape is known only at run time.\n")
			continue
		case schema.TStats:
			b.WriteString(": `<name>.<stat>`, a number, for every stat of the source (its catalogue below); and:\n")
		case schema.TList:
			b.WriteString(": a list (`len(<name>)`, `<name>[0]`, `all(<name>, …)`); each element:\n")
		default:
			b.WriteString(":\n")
		}
		b.WriteString("\n| field | type | exists | what |\n|---|---|---|---|\n")
		if t.Kind == schema.TList && t.Elem != nil {
			rows(&b, "[i].", t.Elem)
		} else {
			rows(&b, "", t)
		}
		if k == "snapshot" {
			sampled := schema.ResultOf(p, sampledContext{})
			b.WriteString("\nSampled with `every`/`while`, a series:\n\n| field | type | exists | what |\n|---|---|---|---|\n")
			rows(&b, "", sampled)
		}
	}
	for _, c := range []*schema.Catalogue{schema.BackendStats, schema.EnvoyClusterStats} {
		closed := "open: a name outside it is a warning (`unknown-stat`; `--strict`: an error)"
		if c.Closed {
			closed = "closed: any other name is an error"
		}
		fmt.Fprintf(&b, "\nThe stats of %s (%s): %s.\n", c.What, closed, c.Summary())
	}
	return b.String()
}

func rows(b *strings.Builder, prefix string, t *schema.Type) {
	for _, f := range t.Fields {
		when := "after the step ends"
		switch f.When {
		case schema.Live:
			when = "while it runs"
		case schema.PerSample:
			when = "after each sample"
		}
		doc := f.Doc
		if f.Absent != "" {
			doc += " (" + f.Absent + ")"
		}
		if cut, ok := strings.CutPrefix(f.OnlyIf, "!"); ok {
			when += ", where `" + cut + "` is false (elsewhere reading it is an error)"
		} else if f.OnlyIf != "" {
			when += ", where `" + f.OnlyIf + "` is true (elsewhere reading it is an error)"
		}
		fmt.Fprintf(b, "| `%s%s` | %s | %s | %s |\n", prefix, f.Name, f.Type, when, strings.ReplaceAll(doc, "<", "&lt;"))
		if f.Type.Kind == schema.TList && f.Type.Elem.Kind == schema.TStruct && prefix == "" && !sameFields(f.Type.Elem, t) {
			rows(b, f.Name+"[i].", f.Type.Elem)
		}
	}
}

// sameFields reports whether every field of elem is one of t's (a load's pods are loads).
func sameFields(elem, t *schema.Type) bool {
	for _, f := range elem.Fields {
		if t.Field(f.Name) == nil {
			return false
		}
	}
	return true
}

type sampledContext struct{}

func (sampledContext) Sampled() bool         { return true }
func (sampledContext) ExpectsFailure() bool  { return false }
func (sampledContext) Templated(string) bool { return false }

// TestResultTables keeps docs/language.md's typed results equal to the kinds' declarations.
func TestResultTables(t *testing.T) {
	generated(t, "<!-- BEGIN typed results", "<!-- END typed results -->", resultTables())
}

// TestKindTable keeps docs/language.md's generated table equal to the registry, and its
// hand-written table naming exactly the registry's kinds.
func TestKindTable(t *testing.T) {
	generated(t, "<!-- BEGIN step kinds", "<!-- END step kinds -->", kindTable())
}

// generated keeps the block of language.md between begin and end equal to want.
func generated(t *testing.T, begin, end, want string) {
	t.Helper()
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
	if got := doc[i:j]; got != want {
		if os.Getenv("LABRUN_UPDATE") != "" {
			if err := os.WriteFile("language.md", []byte(doc[:i]+want+doc[j:]), 0o644); err != nil {
				t.Fatal(err)
			}
		} else {
			t.Errorf("language.md's generated block %s is not the registry's (LABRUN_UPDATE=1 go test ./docs rewrites it):\n got:\n%s\nwant:\n%s", begin, got, want)
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
