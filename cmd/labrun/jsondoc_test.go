package main

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/report"
	"labrun.dev/labrun/schema"
)

// jsonFields describes the JSON form of the types labrun prints or writes, type by type, as
// docs/json.md lists them: every field name with its JSON type.
func jsonFields(roots ...reflect.Type) string {
	var b strings.Builder
	seen := map[reflect.Type]bool{}
	var queue []reflect.Type
	queue = append(queue, roots...)
	for len(queue) > 0 {
		t := queue[0]
		queue = queue[1:]
		if seen[t] {
			continue
		}
		seen[t] = true
		fmt.Fprintf(&b, "\n#### %s\n\n| field | type |\n|---|---|\n", t.Name())
		var walk func(t reflect.Type)
		walk = func(t reflect.Type) {
			for i := 0; i < t.NumField(); i++ {
				f := t.Field(i)
				name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
				if f.Anonymous && name == "" {
					walk(f.Type)
					continue
				}
				if name == "-" || !f.IsExported() {
					continue
				}
				if name == "" {
					name = f.Name
				}
				typ, nested := jsonType(f.Type)
				if strings.Contains(opts, "omitempty") {
					typ += " (omitted when empty)"
				}
				fmt.Fprintf(&b, "| `%s` | %s |\n", name, typ)
				queue = append(queue, nested...)
			}
		}
		walk(t)
	}
	return b.String()
}

// jsonType names a Go type's JSON form and returns the struct types it holds.
func jsonType(t reflect.Type) (string, []reflect.Type) {
	switch {
	case t == reflect.TypeOf(time.Time{}):
		return "string (RFC 3339 time)", nil
	case t == reflect.TypeOf(time.Duration(0)):
		return "number (nanoseconds)", nil
	case t == reflect.TypeOf(json.RawMessage(nil)):
		return "any JSON value", nil
	}
	switch t.Kind() {
	case reflect.Pointer:
		return jsonType(t.Elem())
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return "string (base64)", nil
		}
		s, n := jsonType(t.Elem())
		return "list of " + s, n
	case reflect.Map:
		s, n := jsonType(t.Elem())
		return "object of " + s, n
	case reflect.Struct:
		return "object (" + t.Name() + ")", []reflect.Type{t}
	case reflect.String:
		return "string", nil
	case reflect.Bool:
		return "boolean", nil
	case reflect.Interface:
		return "any JSON value", nil
	}
	return "number", nil
}

// resultForms are the Go types of the results' values in a record, as the kinds declare them
// (their record form, else their result type's), in the registry's order.
func resultForms() []reflect.Type {
	var out []reflect.Type
	add := func(v any) {
		t := reflect.TypeOf(v)
		for t != nil && t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t != nil && t.Kind() == reflect.Struct && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	for _, k := range schema.KindNames() {
		p := schema.Kinds[k].New()
		if rf, ok := p.(schema.RecordForm); ok {
			add(rf.NewRecord(false))
			add(rf.NewRecord(true))
			continue
		}
		if t := schema.ResultOf(p, schema.PlainContext); t != nil && t.Go != nil {
			add(reflect.Zero(t.Go).Interface())
		}
	}
	return out
}

// jsonDocs are the formats docs/json.md documents, each between its markers.
var jsonDocs = map[string][]reflect.Type{
	"vet":          {reflect.TypeOf(vetJSON{})},
	"plan":         {reflect.TypeOf(dsl.Plan{})},
	"record":       {reflect.TypeOf(interp.Record{})},
	"results":      resultForms(),
	"summary":      {reflect.TypeOf(report.Summary{})},
	"mutate":       {reflect.TypeOf(interp.MutationReport{})},
	"diff":         {reflect.TypeOf(interp.RunDiff{})},
	"summary diff": {reflect.TypeOf(report.SummaryDiff{})},
}

// TestJSONDocs keeps docs/json.md's field lists equal to the types (LABRUN_UPDATE=1 rewrites).
func TestJSONDocs(t *testing.T) {
	const path = "../../docs/json.md"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for name, types := range jsonDocs {
		begin := "<!-- BEGIN fields of " + name + " -->\n"
		end := "<!-- END fields of " + name + " -->"
		i, j := strings.Index(doc, begin), strings.Index(doc, end)
		if i < 0 || j < i {
			t.Errorf("docs/json.md has no %q … %q block", begin, end)
			continue
		}
		i += len(begin)
		want := jsonFields(types...)
		if doc[i:j] != want {
			if os.Getenv("LABRUN_UPDATE") != "" {
				doc = doc[:i] + want + doc[j:]
				continue
			}
			t.Errorf("docs/json.md's fields of %s differ from the types (LABRUN_UPDATE=1 go test ./cmd/labrun -run TestJSONDocs rewrites them)", name)
		}
	}
	if os.Getenv("LABRUN_UPDATE") != "" {
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
