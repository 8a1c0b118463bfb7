package lsp_test

import (
	"strings"
	"testing"
)

// TestCompletionOfAnObjectsFields: inside a Kubernetes object (an apply's, a kit's manifest)
// completion offers the fields its kind has where the cursor is, by the shapes vet checks
// objects with (an Istio CRD's, a built-in kind's), and an enum's values inside its string;
// before, it offered nothing there. A get step's struct names a kind but is no object.
func TestCompletionOfAnObjectsFields(t *testing.T) {
	const src = `package lab

import "labrun.dev/schema"

_dr: {
	apiVersion: "networking.istio.io/v1", kind: "DestinationRule", metadata: name: "web"
	spec: {host: "web", trafficPolicy: {tls: mode: "ISTIO_MUTUAL", }}
}

s: schema.#Scenario & {
	target: "kube"
	steps: [
		{apply: objects: [_dr, {
			apiVersion: "networking.istio.io/v1", kind: "DestinationRule", metadata: name: "web2"
			spec: {host: "web", trafficPolicy: loadBalancer: simple: "ROUND"}
		}, {apiVersion: "apps/v1", kind: "Deployment", metadata: name: "web", spec: {rep}}]},
		{name: "g", get: {apiVersion: "networking.istio.io/v1", kind: "DestinationRule", name: "web", }},
	]
}
`
	c, dir := session(t, map[string]string{"x.cue": src}, "x.cue")
	uri := "file://" + dir + "/x.cue"
	tests := []struct {
		where, mark string
		delta       int
		want, not   []string
	}{
		{"a kit's DestinationRule trafficPolicy", `"ISTIO_MUTUAL", `, len(`"ISTIO_MUTUAL", `), []string{"connectionPool", "loadBalancer", "outlierDetection"}, []string{"tls", "host", "steps"}},
		{"an enum's values", `"ROUND"`, len(`"ROUND`), []string{"ROUND_ROBIN"}, []string{"LEAST_CONN"}},
		{"a Deployment's spec", `{rep}`, len(`{rep`), []string{"replicas", "selector", "template"}, []string{"metadata"}},
		{"a get step", `name: "web", }`, len(`name: "web", `), nil, []string{"spec", "metadata"}},
	}
	for _, tt := range tests {
		line, col := at(t, src, tt.mark, tt.delta)
		got := labels(c.Completion(uri, line, col))
		if tt.want != nil && len(got) == 0 {
			t.Errorf("%s: nothing offered", tt.where)
			continue
		}
		wantLabels(t, tt.where, got, tt.want, tt.not)
		t.Logf("%s: %s", tt.where, strings.Join(got, " "))
	}
}
