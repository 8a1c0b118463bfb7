package kube

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"labrun.dev/labrun/schema"
)

// TestWaitAbsentOfAnAbsentFieldFakeAPIServer (client-go's fake dynamic client stands in for
// the API server): a wait: absent that asks a field null below a struct the object has not
// (annotations: {"sidecar.istio.io/inject": null}: "no web lacks the annotation"), or an empty
// list the API server leaves out (finalizers: []), is about an object that has what it asks:
// the absence must not hold while that object lives. It held at its first poll, as Chainsaw's
// and KUTTL's "field not found" would have it. The match of the same holds at once.
func TestWaitAbsentOfAnAbsentFieldFakeAPIServer(t *testing.T) {
	for name, fields := range map[string]map[string]any{
		"null below a struct it has not": {"metadata": map[string]any{"name": "web",
			"annotations": map[string]any{"sidecar.istio.io/inject": nil}}},
		"an empty list it leaves out": {"metadata": map[string]any{"name": "web", "finalizers": []any{}}},
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				want := schema.Object{"apiVersion": "apps/v1", "kind": "Deployment"}
				for k, v := range fields {
					want[k] = v
				}
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				err := fakeDriver(webDeployment(nil)).WaitObjects(ctx, "lab", schema.ObjectWait{Want: want, Absent: true}, time.Second)
				var unmet *schema.Unmet
				if !errors.As(err, &unmet) || !strings.Contains(err.Error(), "still there: web") {
					t.Errorf("wait absent = %v; want it unmet, web still there", err)
				}
				if err := fakeDriver(webDeployment(nil)).WaitObjects(context.Background(), "lab", schema.ObjectWait{Want: want}, time.Second); err != nil {
					t.Errorf("wait match = %v", err)
				}
			})
		})
	}
}

// TestWaitObjectsOnceFakeAPIServer (client-go's fake dynamic client as the API server): with
// Once a wait judges once: nil when it holds, an *Unmet saying what it saw when not, at once
// (no time passes: a wait's matchFiles asks so whether its objects hold together).
func TestWaitObjectsOnceFakeAPIServer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := fakeDriver(webDeployment(nil))
		start := time.Now()
		two := schema.Object{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "web"}, "spec": map[string]any{"replicas": 2}}
		if err := d.WaitObjects(context.Background(), "lab", schema.ObjectWait{Want: two, Once: true}, time.Second); err != nil {
			t.Errorf("once, holds: %v", err)
		}
		three := schema.Object{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "web"}, "spec": map[string]any{"replicas": 3}}
		err := d.WaitObjects(context.Background(), "lab", schema.ObjectWait{Want: three, Once: true}, time.Second)
		var unmet *schema.Unmet
		if !errors.As(err, &unmet) || !strings.Contains(err.Error(), "spec.replicas: want 3, got 2") {
			t.Errorf("once, differs: %v; want unmet with the difference", err)
		}
		if err := d.WaitObjects(context.Background(), "lab", schema.ObjectWait{Want: two, Absent: true, Once: true}, time.Second); !errors.As(err, &unmet) {
			t.Errorf("once, absent of what is there: %v; want unmet", err)
		}
		if since := time.Since(start); since != 0 {
			t.Errorf("once took %v", since)
		}
	})
}
