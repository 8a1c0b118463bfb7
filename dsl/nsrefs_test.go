package dsl

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestRawStringsAreStepStrings: the namespaces and selectors that the kube checks read from a
// step's decoded form (rawStrings, what vet's loads walk) are those its CUE value holds
// (stepStrings), at the same fields, for every step of examples/, scenarios/, docs/, the
// malformed specs and steps with objects, nested blocks, lists and non-concrete values.
func TestRawStringsAreStepStrings(t *testing.T) {
	labels := []string{"namespace", "selector"}
	steps, found := 0, 0
	checkerHook = func(c *stepChecker) {
		if c.s.raw == nil {
			return
		}
		steps++
		got, want := rawStrings(c.s.raw, labels...), stepStrings(c.kv, labels...)
		for _, l := range labels {
			g, w := slices.Clone(got[l]), slices.Clone(want[l])
			byField := func(a, b stringField) int { return strings.Compare(a.field+"\x00"+a.value, b.field+"\x00"+b.value) }
			slices.SortFunc(g, byField)
			slices.SortFunc(w, byField)
			found += len(w)
			if !slices.Equal(g, w) {
				t.Errorf("%s: %s strings from the decoded form %v, the CUE value has %v", c.kpath, l, g, w)
			}
		}
	}
	defer func() { checkerHook = nil }()
	edge := filepath.Join(t.TempDir(), "edge.cue")
	if err := os.WriteFile(edge, []byte(rawStringsCases), 0o644); err != nil {
		t.Fatal(err)
	}
	paths := []string{edge, "../examples", "../examples/istio-tasks", "../examples/multicluster", "../scenarios", "../docs"}
	malformed := malformedSpecs(t, "*.cue")
	for _, p := range append(paths, malformed...) {
		_, _ = Load([]string{p}, Options{})
	}
	t.Logf("%d steps, %d strings", steps, found)
	if steps < 500 || found < 100 {
		t.Fatalf("%d steps, %d strings: too few to say anything", steps, found)
	}
}

const rawStringsCases = `package lab

import "labrun.dev/schema"

_ns: "lab-a"
_sel: {selector: "app=web", container: "c"}

s: schema.#Scenario & {
	target: "kube"
	namespaces: ["lab-a", "lab-b"]
	steps: [
		{name: "a", apply: objects: [
			{apiVersion: "v1", kind: "ConfigMap", metadata: {name: "x", namespace: _ns}, data: {namespace: "not-a-ref", selector: "no"}},
			{apiVersion: "v1", kind: "ConfigMap", metadata: {name: "y", namespace: "lab-b"}},
		]},
		{name: "g", get: {resource: "pods", selector: "app in (web, api)", namespace: "lab-b"}},
		{name: "e", exec: {pod: _sel, namespace: "lab-a", command: ["true"]}},
		{name: "w", wait: {absent: [{apiVersion: "v1", kind: "Pod", metadata: {name: "p", namespace: "lab-a"}}]}},
		{parallel: [
			{name: "l", logs: {selector: "app=api", namespace: "lab-b"}},
			{name: "k", kill: {selector: "app=web", namespace: "lab-a"}},
		]},
	]
}
`
