package lsp_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	protocol "github.com/tliron/glsp/protocol_3_16"

	"labrun.dev/labrun/lsp/lsptest"
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
		}, {apiVersion: "apps/v1", kind: "Deployment", metadata: name: "web", spec: {rep}},
			{apiVersion: "apps/v1", kind: "StatefulSet", metadata: name: "db", st}]},
		{name: "g", get: {apiVersion: "networking.istio.io/v1", kind: "DestinationRule", name: "web", }},
		{apply: {subresource: "status", objects: [{apiVersion: "apps/v1", kind: "Deployment", metadata: name: "web", sta}]}},
		{wait: match: {apiVersion: "apps/v1", kind: "Deployment", metadata: name: "web", stat}},
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
		// An apply of the object itself drops its status (vet's lint status-dropped).
		{"an apply's StatefulSet", `"db", st}`, len(`"db", st`), []string{"spec"}, []string{"status", "metadata"}},
		{"an apply of the status subresource", `sta}`, len(`sta`), []string{"status"}, []string{"metadata"}},
		{"a wait's match", `stat}`, len(`stat`), []string{"status", "spec"}, []string{"metadata"}},
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

// TestAFilesProblemIsSaidAtTheStep: vet places a problem of an object in an apply's YAML at
// its key in the YAML file, and the editor publishes it there; the .cue that applies the
// file said nothing, so the spec being edited looked fine while vet refused it. It now says
// it at the file's name in the step too, naming the place in the YAML.
func TestAFilesProblemIsSaidAtTheStep(t *testing.T) {
	const src = `package lab

import "labrun.dev/schema"

s: schema.#Scenario & {
	target: "kube"
	ephemeralNamespaces: ["test"]
	steps: [
		{apply: files: ["istio.yaml"]},
	]
}
`
	const yaml = "apiVersion: security.istio.io/v1\nkind: PeerAuthentication\nmetadata:\n  name: default\nspec:\n  mtls:\n    mode: strict\n"
	c, dir := session(t, map[string]string{"x.cue": src, "istio.yaml": yaml})
	uri, yuri := "file://"+dir+"/x.cue", "file://"+dir+"/istio.yaml"
	n := c.Count()
	c.Open(uri, src)
	pub := waitChecked(t, c, uri, n)
	ypub, ok := c.Diagnostics(yuri, n, 5*time.Second, nil)
	if !ok || len(ypub.Diagnostics) != 1 {
		t.Fatalf("the YAML's diagnostics: %v", ypub.Diagnostics)
	}
	yd := ypub.Diagnostics[0]
	if yd.Range.Start.Line != 6 || yd.Range.Start.Character != 4 || !strings.Contains(yd.Message, `"strict" is none of them (did you mean STRICT?)`) {
		t.Errorf("in the YAML: %d:%d %s; want 6:4 (vet's istio.yaml:7:5), the enum's message", yd.Range.Start.Line, yd.Range.Start.Character, yd.Message)
	}
	if len(pub.Diagnostics) != 1 {
		t.Fatalf("the .cue's diagnostics: %v; want one at the file's name", pub.Diagnostics)
	}
	d := pub.Diagnostics[0]
	line, col := at(t, src, `"istio.yaml"`, 0)
	if d.Range.Start.Line != uint32(line) || d.Range.Start.Character != uint32(col) || d.Message != "istio.yaml:7:5: "+yd.Message {
		t.Errorf("in the .cue: %d:%d %q; want %d:%d %q", d.Range.Start.Line, d.Range.Start.Character, d.Message, line, col, "istio.yaml:7:5: "+yd.Message)
	}
	if len(d.RelatedInformation) != 1 || d.RelatedInformation[0].Location.URI != yuri || d.RelatedInformation[0].Location.Range.Start.Line != 6 {
		t.Errorf("related: %+v; want the YAML's key", d.RelatedInformation)
	}
}

// TestSavingAFileAStepReadsRechecks: once the YAML an apply reads is fixed and saved, its
// problem goes from the .cue and the YAML; a save of a file the server does not check was
// ignored, and the problem stayed until the .cue was edited.
func TestSavingAFileAStepReadsRechecks(t *testing.T) {
	const src = "package lab\n\nimport \"labrun.dev/schema\"\n\ns: schema.#Scenario & {\n\ttarget: \"kube\"\n\tephemeralNamespaces: [\"test\"]\n\tsteps: [{apply: files: [\"istio.yaml\"]}]\n}\n"
	const bad = "apiVersion: security.istio.io/v1\nkind: PeerAuthentication\nmetadata:\n  name: default\nspec:\n  mtls:\n    mode: strict\n"
	c, dir := session(t, map[string]string{"x.cue": src, "istio.yaml": bad})
	uri, yuri := "file://"+dir+"/x.cue", "file://"+dir+"/istio.yaml"
	n := c.Count()
	c.Open(uri, src)
	if pub := waitChecked(t, c, uri, n); len(pub.Diagnostics) != 1 {
		t.Fatalf("before the fix: %v, want the YAML's problem", pub.Diagnostics)
	}
	if err := os.WriteFile(filepath.Join(dir, "istio.yaml"), []byte(strings.Replace(bad, "strict", "STRICT", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	n = c.Count()
	c.Save(yuri)
	for _, u := range []string{uri, yuri} {
		pub, ok := c.Diagnostics(u, n, 5*time.Second, func(p lsptest.Published) bool { return len(p.Diagnostics) == 0 })
		if !ok {
			t.Errorf("%s: not checked again after the fix was saved (last published: %v)", u, pub.Diagnostics)
		}
	}
}

// TestHoverOfAnObjectsField: a hover on a field's name in a Kubernetes object says what its
// kind has there (an object's fields, an enum's values), as vet's shapes have it; before, a
// hover outside expressions said nothing.
func TestHoverOfAnObjectsField(t *testing.T) {
	const src = `package lab

import "labrun.dev/schema"

s: schema.#Scenario & {
	target: "kube"
	steps: [{apply: objects: [{
		apiVersion: "networking.istio.io/v1", kind: "DestinationRule", metadata: name: "web"
		spec: {host: "web", trafficPolicy: loadBalancer: simple: "ROUND_ROBIN"}
	}]}]
}
`
	c, dir := session(t, map[string]string{"x.cue": src}, "x.cue")
	uri := "file://" + dir + "/x.cue"
	for _, tt := range []struct{ mark, want string }{
		{"simple:", "`DestinationRule spec.trafficPolicy.loadBalancer.simple`: one of UNSPECIFIED, LEAST_CONN, RANDOM, PASSTHROUGH, ROUND_ROBIN, LEAST_REQUEST"},
		{"trafficPolicy:", "`DestinationRule spec.trafficPolicy`: object; its fields: connectionPool, loadBalancer, outlierDetection"},
	} {
		line, col := at(t, src, tt.mark, 2)
		h := c.Hover(uri, line, col)
		if h == nil {
			t.Errorf("%s: no hover", tt.mark)
			continue
		}
		got := h.Contents.(protocol.MarkupContent).Value
		if !strings.HasPrefix(got, tt.want) {
			t.Errorf("%s: hover %q, want it to start %q", tt.mark, got, tt.want)
		}
	}
}
