package kube

// End-to-end tests of wait match/absent and of the apply modes against the sandbox's real
// kube-apiserver (see kube_e2e_test.go for the sandbox and TestMain).

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"labrun.dev/labrun/schema"
)

func configMap(name string, labels map[string]any, data map[string]any) schema.Object {
	md := map[string]any{"name": name}
	if labels != nil {
		md["labels"] = labels
	}
	return schema.Object{"apiVersion": "v1", "kind": "ConfigMap", "metadata": md, "data": data}
}

// shortCtx is the lab's context cut to d, for waits that must time out.
func (l *lab) shortCtx(d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(l.ctx, d)
	l.t.Cleanup(cancel)
	return ctx
}

// TestE2EWaitMatch: a partial object matched by name, by labels and by kind only; lists in
// order and in any order; on timeout the closest object's differing fields.
func TestE2EWaitMatch(t *testing.T) {
	l := newLab(t, "e2e-match")
	l.apply([]schema.Object{deployment("backend", 2, "app", "sidecar"),
		configMap("settings", map[string]any{"tier": "lab"}, map[string]any{"mode": "lab"})})
	match := func(ctx context.Context, want schema.Object, anyOrder bool) error {
		return l.tgt.Cluster.WaitObjects(ctx, l.ns, schema.ObjectWait{Want: want, AnyOrder: anyOrder}, 100*time.Millisecond)
	}
	dep := func(spec, status map[string]any) schema.Object {
		o := schema.Object{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "backend"}}
		if spec != nil {
			o["spec"] = spec
		}
		if status != nil {
			o["status"] = status
		}
		return o
	}
	containers := func(names ...string) map[string]any {
		var cs []any
		for _, n := range names {
			cs = append(cs, map[string]any{"name": n})
		}
		return map[string]any{"template": map[string]any{"spec": map[string]any{"containers": cs}}}
	}
	// Polled until the rollout is done: readyReplicas is not there at first.
	if err := match(l.ctx, dep(map[string]any{"replicas": 2}, map[string]any{"readyReplicas": 2}), false); err != nil {
		t.Error(err)
	}
	if err := match(l.ctx, dep(containers("app", "sidecar"), nil), false); err != nil {
		t.Error(err)
	}
	if err := match(l.ctx, dep(containers("sidecar", "app"), nil), true); err != nil {
		t.Errorf("any order: %v", err)
	}
	byLabels := schema.Object{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"labels": map[string]any{"tier": "lab"}}, "data": map[string]any{"mode": "lab"}}
	if err := match(l.ctx, byLabels, false); err != nil {
		t.Errorf("by labels: %v", err)
	}
	anyCM := schema.Object{"apiVersion": "v1", "kind": "ConfigMap", "data": map[string]any{"mode": "lab"}}
	if err := match(l.ctx, anyCM, false); err != nil {
		t.Errorf("any object of the kind: %v", err)
	}

	// Timeouts show the differing fields, wanted against got.
	err := match(l.shortCtx(time.Second), dep(map[string]any{"replicas": 3}, nil), false)
	if err == nil || !strings.Contains(err.Error(), "wait match Deployment e2e-match/backend: it differs: spec.replicas: want 3, got 2") {
		t.Errorf("timeout: %v", err)
	}
	t.Logf("match timeout: %v", err)
	err = match(l.shortCtx(time.Second), dep(containers("sidecar", "app"), nil), false)
	if err == nil || !strings.Contains(err.Error(), `spec.template.spec.containers[0].name: want "sidecar", got "app"`) {
		t.Errorf("order: %v", err)
	}
	anyCM["data"] = map[string]any{"mode": "prod"}
	err = match(l.shortCtx(time.Second), anyCM, false)
	if err == nil || !strings.Contains(err.Error(), `the closest, settings, differs: data.mode: want "prod", got "lab"`) {
		t.Errorf("no name: %v", err)
	}
	err = match(l.shortCtx(time.Second), schema.Object{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "nope"}}, false)
	if err == nil || !strings.Contains(err.Error(), "ConfigMap e2e-match/nope: it does not exist") {
		t.Errorf("missing: %v", err)
	}
}

// TestE2EWaitAbsent: absent passes once no object matches: a named object deleted while
// waiting, labels no object carries; it times out naming the objects still there.
func TestE2EWaitAbsent(t *testing.T) {
	l := newLab(t, "e2e-absent")
	l.apply([]schema.Object{configMap("doomed", map[string]any{"fate": "doomed"}, nil), configMap("kept", nil, map[string]any{"k": "v"})})
	absent := func(ctx context.Context, want schema.Object) error {
		return l.tgt.Cluster.WaitObjects(ctx, l.ns, schema.ObjectWait{Want: want, Absent: true}, 100*time.Millisecond)
	}
	doomed := schema.Object{"kind": "ConfigMap", "metadata": map[string]any{"name": "doomed"}}
	err := absent(l.shortCtx(time.Second), doomed)
	if err == nil || !strings.Contains(err.Error(), "wait absent ConfigMap e2e-absent/doomed: still there: doomed") {
		t.Errorf("present: %v", err)
	}
	go func() {
		time.Sleep(500 * time.Millisecond)
		_ = l.cs.CoreV1().ConfigMaps(l.ns).Delete(context.Background(), "doomed", metav1.DeleteOptions{})
	}()
	start := time.Now()
	if err := absent(l.ctx, doomed); err != nil {
		t.Error(err)
	}
	if time.Since(start) < 400*time.Millisecond {
		t.Errorf("absent passed before the object was deleted")
	}
	if err := absent(l.ctx, schema.Object{"kind": "ConfigMap", "metadata": map[string]any{"labels": map[string]any{"fate": "doomed"}}}); err != nil {
		t.Errorf("by labels: %v", err)
	}
	// A partial object: kept exists, but not with these fields.
	if err := absent(l.ctx, schema.Object{"kind": "ConfigMap", "metadata": map[string]any{"name": "kept"}, "data": map[string]any{"k": "other"}}); err != nil {
		t.Errorf("partial: %v", err)
	}
}

// TestE2EWaitMatchCustomResourceAsWritten: a custom resource's fields are kept as the API
// server was given them, quantities too (its CRD's int-or-string with the quantity pattern,
// or a plain string): a match wanting "1024Mi" of an object that holds "1Gi" times out with
// the difference, as Chainsaw's and KUTTL's asserts fail, and an absence of it holds.
func TestE2EWaitMatchCustomResourceAsWritten(t *testing.T) {
	l := newLab(t, "e2e-match-cr")
	quantity := map[string]any{"x-kubernetes-int-or-string": true, "pattern": `^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$`}
	crd := schema.Object{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "sprockets.e2e-match-cr.labrun.dev"},
		"spec": map[string]any{"group": "e2e-match-cr.labrun.dev", "scope": "Namespaced",
			"names": map[string]any{"kind": "Sprocket", "plural": "sprockets"},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "properties": map[string]any{
					"spec": map[string]any{"type": "object", "properties": map[string]any{"size": quantity, "label": map[string]any{"type": "string"}}},
				}}}}}}}
	t.Cleanup(func() {
		_ = l.d.Delete(context.Background(), []schema.ObjectRef{{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition", Name: "sprockets.e2e-match-cr.labrun.dev"}}, false)
	})
	sprocket := func(spec map[string]any) schema.Object {
		return schema.Object{"apiVersion": "e2e-match-cr.labrun.dev/v1", "kind": "Sprocket", "metadata": map[string]any{"name": "s"}, "spec": spec}
	}
	if _, err := l.tgt.Cluster.Apply(l.ctx, []schema.Object{crd}, nil, ""); err != nil {
		t.Fatal(err)
	}
	// The CRD's kind is served a moment after it is created.
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := l.tgt.Cluster.Apply(l.ctx, []schema.Object{sprocket(map[string]any{"size": "1Gi", "label": "2G"})}, nil, l.ns)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	wait := func(ctx context.Context, spec map[string]any, absent bool) error {
		return l.tgt.Cluster.WaitObjects(ctx, l.ns, schema.ObjectWait{Want: sprocket(spec), Absent: absent}, 100*time.Millisecond)
	}
	if err := wait(l.ctx, map[string]any{"size": "1Gi", "label": "2G"}, false); err != nil {
		t.Errorf("as written: %v", err)
	}
	for _, tc := range []struct {
		spec map[string]any
		diff string
	}{
		{map[string]any{"size": "1024Mi"}, `spec.size: want "1024Mi", got "1Gi"`},
		{map[string]any{"label": "2000M"}, `spec.label: want "2000M", got "2G"`},
	} {
		err := wait(l.shortCtx(time.Second), tc.spec, false)
		if err == nil || !strings.Contains(err.Error(), "wait match Sprocket e2e-match-cr/s: it differs: "+tc.diff) {
			t.Errorf("match %v: %v, want it to differ: %s", tc.spec, err, tc.diff)
		}
		if err := wait(l.ctx, tc.spec, true); err != nil {
			t.Errorf("absent %v: %v", tc.spec, err)
		}
	}
}

// TestE2EApplyModes: create, merge patch, replace, server-side apply without force, and the
// status subresource, on the real API server; what is created is marked and reported created.
func TestE2EApplyModes(t *testing.T) {
	l := newLab(t, "e2e-modes", func(o *Options) { o.Run = Run{ID: "e2e-modes-run", Scenario: "modes", Host: "h", PID: 1} })
	write := func(mode string, obj schema.Object, more ...func(*schema.ApplyOptions)) (schema.ApplyResult, error) {
		opts := schema.ApplyOptions{Mode: mode, Force: true}
		for _, f := range more {
			f(&opts)
		}
		return l.tgt.Cluster.ApplyWith(l.ctx, []schema.Object{obj}, nil, l.ns, opts)
	}
	data := func(name string) map[string]string {
		cm, err := l.cs.CoreV1().ConfigMaps(l.ns).Get(l.ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if cm.Labels[LabelRun] != "e2e-modes-run" {
			t.Errorf("%s: run label %q lost", name, cm.Labels[LabelRun])
		}
		return cm.Data
	}

	res, err := write("create", configMap("c", nil, map[string]any{"a": "1", "b": "2"}))
	if err != nil || len(res.Created) != 1 {
		t.Fatalf("create: %v, created %v", err, res.Created)
	}
	if _, err := write("create", configMap("c", nil, map[string]any{"a": "1"})); err == nil || !strings.Contains(err.Error(), "create ConfigMap e2e-modes/c (objects[0]): it exists already") {
		t.Errorf("create again: %v", err)
	}
	// A merge patch changes what it writes, keeps the rest, and null removes.
	res, err = write("patch", configMap("c", nil, map[string]any{"a": "changed", "b": nil}))
	if err != nil || len(res.Created) != 0 {
		t.Fatalf("patch: %v, created %v", err, res.Created)
	}
	if d := data("c"); d["a"] != "changed" || len(d) != 1 {
		t.Errorf("after patch: %v", d)
	}
	if _, err := write("patch", configMap("nope", nil, map[string]any{"a": "1"})); err == nil || !strings.Contains(err.Error(), "patch ConfigMap e2e-modes/nope (objects[0]): it does not exist") {
		t.Errorf("patch of a missing object: %v", err)
	}
	// A replace makes the object what is written; the run's marks stay.
	if _, err := write("replace", configMap("c", nil, map[string]any{"only": "this"})); err != nil {
		t.Fatal(err)
	}
	if d := data("c"); d["only"] != "this" || len(d) != 1 {
		t.Errorf("after replace: %v", d)
	}
	if _, err := write("replace", configMap("nope", nil, nil)); err == nil || !strings.Contains(err.Error(), "it does not exist") {
		t.Errorf("replace of a missing object: %v", err)
	}

	// Server-side apply: a field another manager owns conflicts unless forced.
	other := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"owned":"by-other"}}`
	if _, err := l.cs.CoreV1().ConfigMaps(l.ns).Patch(l.ctx, "c", types.ApplyPatchType, []byte(other), metav1.PatchOptions{FieldManager: "other", Force: new(true)}); err != nil {
		t.Fatal(err)
	}
	noForce := func(o *schema.ApplyOptions) { o.Force = false }
	_, err = write("apply", configMap("c", nil, map[string]any{"owned": "by-labrun"}), noForce)
	if err == nil || !strings.Contains(err.Error(), "conflict") {
		t.Errorf("apply without force: %v", err)
	}
	if _, err := write("apply", configMap("c", nil, map[string]any{"owned": "by-labrun"})); err != nil {
		t.Errorf("forced apply: %v", err)
	}
	if d := data("c"); d["owned"] != "by-labrun" {
		t.Errorf("after forced apply: %v", d)
	}

	// The status subresource of a CRD that has one: an apply of the object ignores status,
	// an apply, a merge patch or a replace of the subresource writes it.
	crd := schema.Object{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "gizmos.e2e-modes.labrun.dev"},
		"spec": map[string]any{"group": "e2e-modes.labrun.dev", "scope": "Namespaced",
			"names": map[string]any{"kind": "Gizmo", "plural": "gizmos"},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
				"subresources": map[string]any{"status": map[string]any{}},
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "properties": map[string]any{
					"spec":   map[string]any{"type": "object", "properties": map[string]any{"size": map[string]any{"type": "integer"}}},
					"status": map[string]any{"type": "object", "properties": map[string]any{"phase": map[string]any{"type": "string"}, "count": map[string]any{"type": "integer"}}},
				}}}}}}}
	t.Cleanup(func() {
		_ = l.d.Delete(context.Background(), []schema.ObjectRef{{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition", Name: "gizmos.e2e-modes.labrun.dev"}}, false)
	})
	gizmo := func(status map[string]any) schema.Object {
		o := schema.Object{"apiVersion": "e2e-modes.labrun.dev/v1", "kind": "Gizmo", "metadata": map[string]any{"name": "g"}, "spec": map[string]any{"size": 1}}
		if status != nil {
			o["status"] = status
		}
		return o
	}
	if _, err := l.tgt.Cluster.ApplyWith(l.ctx, []schema.Object{crd, gizmo(map[string]any{"phase": "Ignored"})}, nil, l.ns, schema.ApplyOptions{Mode: "apply", Force: true}); err != nil {
		t.Fatal(err)
	}
	phase := func() any {
		v, err := l.tgt.Cluster.Get(l.ctx, schema.Get{Kind: "Gizmo", APIVersion: "e2e-modes.labrun.dev/v1", Name: "g", Namespace: l.ns})
		if err != nil {
			return "error: " + err.Error()
		}
		st, _ := v.(map[string]any)["status"].(map[string]any)
		return st["phase"]
	}
	if p := phase(); p != nil {
		t.Errorf("status written without the subresource: phase %v", p)
	}
	status := func(o *schema.ApplyOptions) { o.Subresource = "status" }
	for _, mode := range []string{"apply", "patch", "replace"} {
		if _, err := write(mode, gizmo(map[string]any{"phase": "Ready-" + mode}), status); err != nil {
			t.Errorf("%s status: %v", mode, err)
		}
		if p := phase(); p != "Ready-"+mode {
			t.Errorf("%s status: phase %v", mode, p)
		}
	}
	missing := gizmo(map[string]any{"phase": "x"})
	missing["metadata"] = map[string]any{"name": "nope"}
	if _, err := write("patch", missing, status); err == nil || !strings.Contains(err.Error(), `patch status Gizmo e2e-modes/nope (objects[0]): it does not exist: subresource "status" is written only to an existing object`) {
		t.Errorf("status of a missing object: %v", err)
	}

	// Every mode is guarded.
	cm := configMap("x", nil, nil)
	cm["metadata"].(map[string]any)["namespace"] = "kube-system"
	for _, mode := range []string{"create", "patch", "replace"} {
		if _, err := write(mode, cm); !errors.Is(err, ErrRefused) {
			t.Errorf("%s in kube-system: %v, want a refusal", mode, err)
		}
	}
}
