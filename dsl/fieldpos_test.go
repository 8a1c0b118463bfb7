package dsl

import (
	"fmt"
	"testing"
)

// TestFieldPosOfAValidPackage: a step's FieldPos (what a dry run's problems point at, at run
// time) names a field where the user wrote its label, not its value (under the schema a field's
// position found through its conjuncts is the value's: decoding must keep reading the open
// copy); a path of which nothing is written gives the closest written parent, and nothing at
// all the kind itself.
func TestFieldPosOfAValidPackage(t *testing.T) {
	// Lines count from the package clause loadOne adds (4 lines before src); tabs are one column.
	sc := loadOne(t, `s: schema.#Scenario & {
	target: "kube"
	namespaces: ["lab"]
	steps: [{
		apply: {
			namespace: "lab"
			objects: [{
				apiVersion: "v1"
				kind:       "ConfigMap"
				metadata: name: "c"
				data: a: "1"
			}]
		}
	}]
}
`)
	s := sc.Steps[0]
	for _, c := range []struct{ path, want string }{
		{"namespace", "10:4"},
		{"objects", "11:4"},
		{"objects.0.data", "15:5"},
		{"objects.0.data.a", "15:11"},
		{"objects.0.metadata.name", "14:15"},
		{"objects.0.spec.nothing", "11:14"}, // the closest written parent: the element
		{"nosuch", "9:3"},                   // the kind itself
	} {
		p := s.FieldPos(c.path)
		if got := fmt.Sprintf("%d:%d", p.Line, p.Col); got != c.want {
			t.Errorf("FieldPos(%q) = %s, want %s", c.path, got, c.want)
		}
	}
}
