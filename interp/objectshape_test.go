package interp_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"labrun.dev/labrun/driver/fakes"
	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/interp"
)

// crdReads reads a custom resource (the fake cluster's get records its kind and name), once
// with a misspelled name below it and once with names its CRD has.
const crdReads = `
s: schema.#Scenario & {
	target: "kube"
	steps: [
		{name: "dr", get: {kind: "DestinationRule", name: "backend"}},
		{name: "tp", get: {kind: "DestinationRule", name: "backend", path: "spec.trafficPolicy"}},
	]
	expect: [
		"dr.spec.trafficPolicy.outlierDetecton == nil",
		"!has(dr.spec.trafficPolicy, 'outlierDetecton')",
		"(tp?.connectionPool?.tcp?.maxConnection ?? 0) == 0",
		"dr.kind == 'DestinationRule' && dr.spec?.trafficPolicy?.outlierDetection == nil && dr.metadata?.labels?.app == nil",
	]
}
`

// TestCRDReadsChecked: a name read below a custom resource's object that its CRD's schema does
// not have errs, with did-you-mean, instead of reading nil and passing (probe #11); names the
// schema has are judged as before.
func TestCRDReadsChecked(t *testing.T) {
	sc := loadScenario(t, crdReads).ForRun("r1")
	obj := func(props map[string]any) map[string]any {
		return map[string]any{"type": "object", "properties": props}
	}
	w := &fakes.World{CRDSchemas: map[string]map[string]any{"DestinationRule": obj(map[string]any{
		"spec": obj(map[string]any{"host": map[string]any{"type": "string"}, "trafficPolicy": obj(map[string]any{
			"connectionPool":   obj(map[string]any{"tcp": obj(map[string]any{"maxConnections": map[string]any{"type": "integer"}})}),
			"outlierDetection": obj(map[string]any{"consecutive5xxErrors": map[string]any{"type": "integer"}}),
		})}),
	})}}
	rec := interp.New(w.Target()).Run(context.Background(), context.Background(), sc)
	want := []struct {
		outcome interp.Outcome
		reason  string
	}{
		{interp.Errored, "dr.spec.trafficPolicy.outlierDetecton: DestinationRule spec.trafficPolicy has no field outlierDetecton (did you mean outlierDetection?)"},
		{interp.Errored, "dr.spec.trafficPolicy.outlierDetecton: DestinationRule spec.trafficPolicy has no field outlierDetecton (did you mean outlierDetection?)"},
		{interp.Errored, "tp.connectionPool.tcp.maxConnection: DestinationRule spec.trafficPolicy.connectionPool.tcp has no field maxConnection (did you mean maxConnections?)"},
		{interp.Passed, ""},
	}
	if len(rec.Expectations) != len(want) {
		t.Fatalf("%d expectations, want %d: %s", len(rec.Expectations), len(want), rec.Error)
	}
	for i, w := range want {
		j := rec.Expectations[i]
		if j.Outcome != w.outcome || !strings.Contains(j.Reason, w.reason) {
			t.Errorf("%s: %s %q, want %s %q", j.Src, j.Outcome, j.Reason, w.outcome, w.reason)
		}
	}
	// The record keeps what the CRD has not: replay, which has no cluster, judges the same.
	back := throughJSON(t, rec)
	for i, j := range interp.Rejudge(back, sc) {
		if w := want[i]; j.Outcome != w.outcome || !strings.Contains(j.Reason, w.reason) {
			t.Errorf("replayed %s: %s %q, want %s %q", j.Src, j.Outcome, j.Reason, w.outcome, w.reason)
		}
	}
}

// crdWait waits for a misspelled field of a custom resource to be absent (null). Its group is
// one vet does not know (an Istio group's kind vet checks before the run, against Istio's CRDs).
const crdWait = `
s: schema.#Scenario & {
	target: "kube"
	steps: [
		{wait: match: {apiVersion: "mesh.example.com/v1", kind: "DestinationRule", metadata: name: "backend", spec: trafficPolicy: outlierDetecton: null}},
	]
}
`

// TestCRDMatchChecked: a wait's match of a custom resource that names a field its CRD has not
// errs before it polls: asked null, the misspelled field held at once (probe #11).
func TestCRDMatchChecked(t *testing.T) {
	sc := loadScenario(t, crdWait).ForRun("r1")
	obj := func(props map[string]any) map[string]any {
		return map[string]any{"type": "object", "properties": props}
	}
	w := &fakes.World{CRDSchemas: map[string]map[string]any{"DestinationRule": obj(map[string]any{
		"spec": obj(map[string]any{"trafficPolicy": obj(map[string]any{
			"outlierDetection": obj(map[string]any{"interval": map[string]any{"type": "string"}}),
		})}),
	})}}
	rec := interp.New(w.Target()).Run(context.Background(), context.Background(), sc)
	want := "match.spec.trafficPolicy.outlierDetecton: DestinationRule spec.trafficPolicy has no field outlierDetecton (did you mean outlierDetection?)"
	if rec.Outcome == interp.Passed || len(rec.Steps) == 0 || !strings.Contains(rec.Steps[0].Error, want) {
		t.Fatalf("outcome %s, steps %+v; want the wait to err with %q", rec.Outcome, rec.Steps, want)
	}
}

// TestDryRunChecksCRDReads: vet --server (DryRun) reports what the run would refuse of a custom
// resource's reads and matches, at the expression's column and the match's field.
func TestDryRunChecksCRDReads(t *testing.T) {
	sc := loadScenario(t, crdReads)
	obj := func(props map[string]any) map[string]any {
		return map[string]any{"type": "object", "properties": props}
	}
	w := &fakes.World{CRDSchemas: map[string]map[string]any{"DestinationRule": obj(map[string]any{
		"spec": obj(map[string]any{"trafficPolicy": obj(map[string]any{
			"connectionPool":   obj(map[string]any{"tcp": obj(map[string]any{"maxConnections": map[string]any{"type": "integer"}})}),
			"outlierDetection": obj(map[string]any{"interval": map[string]any{"type": "string"}}),
		})}),
	})}}
	var got []string
	for _, s := range []*dsl.Scenario{sc, loadScenario(t, strings.ReplaceAll(crdWait, "s: schema", "w: schema"))} {
		problems, _, err := interp.DryRun(context.Background(), w.Target(), s)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range problems {
			if !p.Schema {
				t.Errorf("%s: not marked a schema problem", p.Msg)
			}
			got = append(got, fmt.Sprintf("%d:%d %s", p.Pos.Line, p.Pos.Col, p.Msg))
		}
	}
	want := []string{
		"outlierDetecton: DestinationRule spec.trafficPolicy has no field outlierDetecton (did you mean outlierDetection?)",
		"tp.connectionPool.tcp.maxConnection: DestinationRule spec.trafficPolicy.connectionPool.tcp has no field maxConnection (did you mean maxConnections?)",
		"match.spec.trafficPolicy.outlierDetecton: DestinationRule spec.trafficPolicy has no field outlierDetecton (did you mean outlierDetection?)",
	}
	all := strings.Join(got, "\n")
	t.Log(all)
	for _, w := range want {
		if !strings.Contains(all, w) {
			t.Errorf("no %q in:\n%s", w, all)
		}
	}
	if len(got) != 4 {
		t.Errorf("%d problems, want 4 (two expectations read outlierDetecton):\n%s", len(got), all)
	}
}

// TestTemplatedKindReadsChecked: a get whose kind ${...} makes a built-in one, which vet could
// not check, has what expressions read below it checked when it runs.
func TestTemplatedKindReadsChecked(t *testing.T) {
	sc := loadScenario(t, `
s: schema.#Scenario & {
	target: "kube"
	vars: kind: "ConfigMap"
	steps: [{name: "cm", get: {kind: "${vars.kind}", name: "c"}}]
	expect: ["cm.metdata.name == nil"]
}
`).ForRun("r1")
	rec := interp.New((&fakes.World{}).Target()).Run(context.Background(), context.Background(), sc)
	want := "cm.metdata: ConfigMap has no field metdata (did you mean metadata?)"
	if len(rec.Expectations) != 1 || rec.Expectations[0].Outcome != interp.Errored || !strings.Contains(rec.Expectations[0].Reason, want) {
		t.Fatalf("expectations %+v; want one errored with %q", rec.Expectations, want)
	}
}

// TestCRDUnreadWarned: when the cluster will not let a kind's CRD be read (forbidden), the
// names read below its objects and a wait's fields cannot be checked; the steps' records say
// so instead of judging in silence as if they had been.
func TestCRDUnreadWarned(t *testing.T) {
	forbidden := errors.New(`customresourcedefinitions.apiextensions.k8s.io "destinationrules.networking.istio.io" is forbidden`)
	for _, c := range []struct {
		name, src, want string
	}{
		{"get", crdReads, "the names read below dr's DestinationRule objects (dr.kind, dr.metadata.labels.app, dr.spec.trafficPolicy, dr.spec.trafficPolicy.outlierDetection, dr.spec.trafficPolicy.outlierDetecton) are not checked against its CRD"},
		{"wait", crdWait, "the fields of the wait's match are not checked against DestinationRule's CRD, which could not be read"},
	} {
		t.Run(c.name, func(t *testing.T) {
			sc := loadScenario(t, c.src).ForRun("r1")
			w := &fakes.World{CRDSchemaErrs: map[string]error{"DestinationRule": forbidden}}
			rec := interp.New(w.Target()).Run(context.Background(), context.Background(), sc)
			if len(rec.Steps) == 0 {
				t.Fatalf("no steps: %s", rec.Error)
			}
			got := strings.Join(rec.Steps[0].Warnings, "\n")
			if !strings.Contains(got, c.want) || !strings.Contains(got, "is forbidden") {
				t.Errorf("warnings %q, want %q and the cluster's error", got, c.want)
			}
		})
	}
}

// TestFileObjectsChecked: the objects of a wait's matchFiles and absentFiles are checked as a
// match's are, before the wait polls: a custom resource's against its CRD, and a built-in
// kind's of a file that holds ${...} (which vet leaves to the run). A misspelled field of an
// errors file matched no object, and the absence held at once (probe p14 #11); so did a
// Chainsaw expression key where the CRD (or a map) takes any name. dr.yaml's group is one vet
// does not know (it checks an Istio group's kind before the run).
func TestFileObjectsChecked(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"s.cue": `package s

import "labrun.dev/schema"

s: schema.#Scenario & {
	target: "kube"
	vars: n: 1
	steps: [
		{name: "crd", mayFail: true, wait: absentFiles: ["dr.yaml"]},
		{name: "builtin", mayFail: true, wait: absentFiles: ["dep.yaml"]},
		{name: "ok", wait: matchFiles: ["good.yaml"]},
		{name: "chainsaw", mayFail: true, wait: {absentFiles: ["cs.yaml"], mayNeverExist: true}},
	]
	expect: ["outcome.crd == 'passed'", "outcome.builtin == 'passed'"]
}
`,
		"dr.yaml":  "apiVersion: mesh.example.com/v1\nkind: DestinationRule\nmetadata:\n  name: backend\nspec:\n  trafficPolicy:\n    outlierDetecton: {}\n",
		"dep.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replica: ${vars.n}\n",
		// A Chainsaw expression key where any key goes (labels), in a file vet leaves to the run.
		"cs.yaml":   "apiVersion: networking.istio.io/v1\nkind: DestinationRule\nmetadata:\n  name: backend\n  labels:\n    (app): \"${vars.n}\"\n",
		"good.yaml": "apiVersion: networking.istio.io/v1\nkind: DestinationRule\nmetadata:\n  name: backend\nspec:\n  trafficPolicy:\n    outlierDetection: {}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: ${vars.n}\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res, err := dsl.Load([]string{filepath.Join(dir, "s.cue")}, dsl.Options{Target: "fake"})
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	sc := res.Scenarios[0].ForRun("r1")
	obj := func(props map[string]any) map[string]any {
		return map[string]any{"type": "object", "properties": props}
	}
	w := &fakes.World{CRDSchemas: map[string]map[string]any{"DestinationRule": obj(map[string]any{
		"spec": obj(map[string]any{"trafficPolicy": obj(map[string]any{
			"outlierDetection": obj(map[string]any{"interval": map[string]any{"type": "string"}}),
		})}),
	})}}
	rec := interp.New(w.Target()).Run(context.Background(), context.Background(), sc)
	want := map[string]string{
		"crd":      "dr.yaml, line 1: spec.trafficPolicy.outlierDetecton: DestinationRule spec.trafficPolicy has no field outlierDetecton (did you mean outlierDetection?)",
		"builtin":  "dep.yaml, line 1: spec.replica: Deployment spec has no field replica (did you mean replicas?)",
		"ok":       "",
		"chainsaw": `cs.yaml, line 1: metadata.labels.(app): key "(app)" is a Chainsaw expression key`,
	}
	seen := 0
	for _, s := range rec.Steps {
		w, ok := want[s.Name]
		if !ok {
			continue
		}
		seen++
		if w == "" && s.Error != "" || !strings.Contains(s.Error, w) || w != "" && s.Outcome == interp.Passed {
			t.Errorf("step %s: %s %q, want the error %q", s.Name, s.Outcome, s.Error, w)
		}
	}
	if seen != len(want) {
		t.Errorf("%d of the steps recorded, want %d: %+v", seen, len(want), rec.Steps)
	}
	if rec.Outcome == interp.Passed {
		t.Errorf("the run passed: %s", rec.Error)
	}
}

// TestIstioReadsCheckedAgainstClusterCRD: a read below an Istio kind named by its apiVersion
// is checked by vet against Istio's CRDs of kubeshape.IstioAPIVersion, and by the run against
// the cluster's own CRD (a stand-in's here, an older Istio's without trafficPolicy.proxyProtocol):
// a field the cluster's release has not reads nil whatever was applied, so the claim errs
// rather than pass; the run's preflight now asks the cluster's CRD before the first step, so
// the run is refused, and nothing runs.
func TestIstioReadsCheckedAgainstClusterCRD(t *testing.T) {
	sc := loadScenario(t, `
s: schema.#Scenario & {
	target: "kube"
	steps: [{name: "dr", get: {apiVersion: "networking.istio.io/v1", kind: "DestinationRule", name: "backend"}}]
	expect: ["dr.spec?.trafficPolicy?.proxyProtocol == nil"]
}
`).ForRun("r1")
	obj := func(props map[string]any) map[string]any {
		return map[string]any{"type": "object", "properties": props}
	}
	w := &fakes.World{CRDSchemas: map[string]map[string]any{"DestinationRule": obj(map[string]any{
		"spec": obj(map[string]any{"trafficPolicy": obj(map[string]any{
			"connectionPool": obj(map[string]any{"tcp": obj(map[string]any{"maxConnections": map[string]any{"type": "integer"}})}),
		})}),
	})}}
	rec := interp.New(w.Target()).Run(context.Background(), context.Background(), sc)
	if want := "by the cluster's CRD: in expression \"dr.spec?.trafficPolicy?.proxyProtocol == nil\": dr.spec.trafficPolicy.proxyProtocol: DestinationRule spec.trafficPolicy has no field proxyProtocol"; rec.Outcome != interp.Refused || !strings.Contains(rec.Error, want) || len(rec.Steps) > 0 {
		t.Errorf("%s %q (%d steps), want refused %q", rec.Outcome, rec.Error, len(rec.Steps), want)
	}
}
