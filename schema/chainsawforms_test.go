package schema

import (
	"strings"
	"testing"
)

// TestChainsawForms: the keys and values Chainsaw (kyverno-json) reads as expressions are
// found wherever they are, maps and lists included; a plain key, and text in parentheses that
// reads no binding, are not.
func TestChainsawForms(t *testing.T) {
	o := Object{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{
			"name":        "flags",
			"namespace":   "($namespace)", // NamespaceTemplate's
			"labels":      map[string]any{"app.kubernetes.io/name": "web", "(app)": "x"},
			"annotations": map[string]any{"note": "(cd /tmp && ls)", "owner": "($owner.name)"},
		},
		"data": map[string]any{"~.(keys(@))": "x", `\(literal)\`: "y", "size -> s": "1", "mode": "(cel;object.data.mode)"},
		"spec": []any{map[string]any{"(length(@))": 2.0}, "(jp;foo)"},
	}
	var got []string
	ChainsawForms(o, func(path []string, msg string) {
		got = append(got, strings.Join(path, ".")+": "+msg[:strings.Index(msg, ":")])
	})
	want := []string{
		`data.\(literal)\: key "\\(literal)\\" is a Chainsaw escaped key (\…\); write the field's name as it is`,
		`data.mode: value "(cel;object.data.mode)" is a Chainsaw expression (it reads a binding $…, or names a compiler)`,
		`data.size -> s: key "size -> s" is a Chainsaw binding key (… -> name)`,
		`data.~.(keys(@)): key "~.(keys(@))" is a Chainsaw iteration key (~…), which judges each element of the list it projects`,
		`metadata.annotations.owner: value "($owner.name)" is a Chainsaw expression (it reads a binding $…, or names a compiler)`,
		`metadata.labels.(app): key "(app)" is a Chainsaw expression key ((…), a JMESPath or CEL projection)`,
		`spec.0.(length(@)): key "(length(@))" is a Chainsaw expression key ((…), a JMESPath or CEL projection)`,
		`spec.1: value "(jp;foo)" is a Chainsaw expression (it reads a binding $…, or names a compiler)`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
