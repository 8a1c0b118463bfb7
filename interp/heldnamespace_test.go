package interp_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"

	"labrun.dev/labrun/driver/fakes"
	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/schema"
)

// heldCluster is an in-memory cluster (a stand-in for the API server) whose Namespaces, once
// deleted, stay Terminating with the finalizers fins, as a namespace does whose
// metadata.finalizers nothing removes.
type heldCluster struct {
	schema.Cluster
	fins []any
}

func (c heldCluster) Delete(ctx context.Context, refs []schema.ObjectRef, wait bool) error {
	return nil
}

func (c heldCluster) Get(ctx context.Context, req schema.Get) (any, error) {
	if req.Kind != "Namespace" {
		return c.Cluster.Get(ctx, req)
	}
	md := map[string]any{"name": req.Name, "deletionTimestamp": "2026-12-07T11:00:00Z"}
	if c.fins != nil {
		md["finalizers"] = c.fins
	}
	return md, nil
}

// TestEphemeralNamespaceHeldStandIn: an ephemeral namespace, deleted without waiting, that its
// finalizers hold Terminating is what the cleanup left (the record's leftovers, a run that
// exits 4), not "removed": before, the run passed clean while the namespace stayed. One whose
// deletion goes on (no finalizer of its own) is removed, after one read.
func TestEphemeralNamespaceHeldStandIn(t *testing.T) {
	sc := loadScenario(t, `
s: schema.#Scenario & {
	ephemeralNamespaces: ["test"]
	steps: [{name: "c", apply: objects: [{apiVersion: "v1", kind: "ConfigMap", metadata: {name: "c", namespace: "${ns.test}"}}]}]
}`).ForRun("r1")
	for _, tc := range []struct {
		name string
		fins []any
		left bool
	}{
		{"held by its finalizer", []any{"example.com/hold"}, true},
		{"deletion goes on", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &fakes.World{}
			tg := w.Target()
			tg.Cluster = heldCluster{tg.Cluster, tc.fins}
			// The held namespace is tried again for DefaultCleanupRetry: in a synctest
			// bubble, whose clock those 30 s pass on at once.
			var rec *interp.Record
			synctest.Test(t, func(t *testing.T) {
				rec = interp.New(tg).Run(context.Background(), context.Background(), sc)
			})
			if rec.Outcome != interp.Passed {
				t.Fatalf("outcome %s: %s", rec.Outcome, rec.Error)
			}
			cleanup := strings.Join(rec.Cleanup, "\n")
			if !tc.left {
				if len(rec.Leftovers) != 0 || !strings.Contains(cleanup, "removed ephemeral Namespace test-r1") {
					t.Errorf("leftovers %q, cleanup:\n%s", rec.Leftovers, cleanup)
				}
				return
			}
			if len(rec.Leftovers) != 1 || !strings.Contains(cleanup, "failed to remove ephemeral Namespace test-r1") ||
				!strings.Contains(cleanup, "it stays Terminating: its finalizers (example.com/hold) hold it") ||
				!strings.Contains(rec.LeftBehind(), "left 1 object behind") {
				t.Errorf("leftovers %q, left behind %q, cleanup:\n%s", rec.Leftovers, rec.LeftBehind(), cleanup)
			}
			// labrun clean only deletes it again: the verdict says what removes a finalizer.
			lb := rec.LeftBehind()
			if strings.Contains(lb, "deletes the objects") || !strings.Contains(lb, "finalizers hold Namespace test-r1 (example.com/hold): no delete removes them, `labrun clean` neither") ||
				!strings.Contains(lb, "`kubectl patch namespace test-r1 --type=merge -p '{\"metadata\":{\"finalizers\":null}}'`") {
				t.Errorf("left behind %q", lb)
			}
		})
	}
}

// heldObjectCluster is an in-memory cluster (a stand-in for the API server) whose ConfigMap
// lab/held, once deleted, stays with its finalizer: a deletion waited for fails as the kube
// driver's wait says it (its state: deletion started, its finalizers).
type heldObjectCluster struct{ schema.Cluster }

func (c heldObjectCluster) Delete(ctx context.Context, refs []schema.ObjectRef, wait bool) error {
	for _, r := range refs {
		if r.Name == "held" {
			return errors.New("waiting for deletion: still present: ConfigMap lab/held (deletion started 2026-12-07T11:00:00Z, finalizers example.com/hold,example.com/two): context deadline exceeded")
		}
	}
	return c.Cluster.Delete(ctx, refs, wait)
}

// TestAppliedObjectHeldStandIn: an object the run applied that a finalizer holds is left
// behind (exit 4), and the verdict does not send the user to labrun clean for it (which only
// deletes it again, and fails the same way) but says what holds it and what removes that; an
// object that is not held, left beside it, is still labrun clean's.
func TestAppliedObjectHeldStandIn(t *testing.T) {
	sc := loadScenario(t, `
s: schema.#Scenario & {
	namespaces: ["lab"]
	steps: [{name: "c", apply: objects: [{apiVersion: "v1", kind: "ConfigMap", metadata: {name: "held", namespace: "lab"}}]}]
}`)
	w := &fakes.World{}
	tg := w.Target()
	tg.Cluster = heldObjectCluster{tg.Cluster}
	var rec *interp.Record
	synctest.Test(t, func(t *testing.T) {
		rec = interp.New(tg).Run(context.Background(), context.Background(), sc)
	})
	if rec.Outcome != interp.Passed || len(rec.Leftovers) != 1 {
		t.Fatalf("outcome %s, leftovers %q", rec.Outcome, rec.Leftovers)
	}
	want := "left 1 object behind (ConfigMap lab/held); finalizers hold ConfigMap lab/held (example.com/hold,example.com/two): no delete removes them, `labrun clean` neither; what added them removes them when it runs, or by hand `kubectl patch configmap held -n lab --type=merge -p '{\"metadata\":{\"finalizers\":null}}'`"
	if got := rec.LeftBehind(); got != want {
		t.Errorf("LeftBehind() = %q\nwant          %q", got, want)
	}
	// One held, one not: labrun clean deletes the other.
	rec.Leftovers = append(rec.Leftovers, "ConfigMap lab/other")
	rec.Cleanup = append(rec.Cleanup, "failed to remove ConfigMap lab/other: dial tcp 127.0.0.1:6443: connect: connection refused")
	if got := rec.LeftBehind(); !strings.Contains(got, "; `labrun clean --yes --scenario s` deletes the objects that no finalizer holds; finalizers hold ConfigMap lab/held") {
		t.Errorf("LeftBehind() = %q", got)
	}
	// A Namespace the scenario applied, held by the namespace controller's own finalizer
	// while an object in it is held: no patch of the Namespace helps; its conditions name
	// what holds it. The ConfigMap's patch is still given.
	rec.Leftovers = append(rec.Leftovers[:1], "Namespace lab")
	rec.Cleanup = append(rec.Cleanup, "failed to remove Namespace lab (2 attempts): waiting for deletion: still present: Namespace lab (deletion started 2026-12-07T11:00:00Z, finalizers kubernetes, phase Terminating): context deadline exceeded")
	got := rec.LeftBehind()
	if !strings.Contains(got, "finalizers hold ConfigMap lab/held (example.com/hold,example.com/two), Namespace lab (kubernetes)") ||
		!strings.Contains(got, "`kubectl patch configmap held -n lab --type=merge") || strings.Contains(got, "likewise") ||
		!strings.HasSuffix(got, "; find what in Namespace lab holds it with `kubectl get namespace lab -o jsonpath='{.status.conditions}'` and remove that object's finalizers") {
		t.Errorf("LeftBehind() = %q", got)
	}
}
