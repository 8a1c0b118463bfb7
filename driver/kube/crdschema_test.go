package kube

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// TestObjectSchema: a custom resource's schema is its CRD's (<resource>.<group>) at the version
// the kind is served in; a built-in group's kind, and a CRD that is not there, have none.
func TestObjectSchema(t *testing.T) {
	f := newFakeDiscovery()
	crdPath := "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/destinationrules.networking.istio.io"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != crdPath {
			if r.URL.Path == "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/deployments.apps" {
				t.Errorf("a built-in group's kind read a CRD: %s", r.URL.Path)
			}
			f.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
			"metadata": map[string]any{"name": "destinationrules.networking.istio.io"},
			"spec": map[string]any{"versions": []any{
				map[string]any{"name": "v1alpha3", "schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "description": "old"}}},
				map[string]any{"name": "v1", "schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "description": "v1"}}},
			}},
		})
	}))
	defer srv.Close()
	cfg := &rest.Config{Host: srv.URL, QPS: -1}
	rc, err := newDiscoveryClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	d := &driver{mapper: newRESTMapper(rc), dyn: dyn}
	ctx := context.Background()
	kind, s, err := d.ObjectSchema(ctx, "DestinationRule", "networking.istio.io/v1")
	if err != nil || kind != "DestinationRule" || s["description"] != "v1" {
		t.Errorf("DestinationRule v1: %q %v %v, want the v1 schema", kind, s, err)
	}
	if _, s, err := d.ObjectSchema(ctx, "DestinationRule", "networking.istio.io/v1alpha3"); err != nil || s["description"] != "old" {
		t.Errorf("DestinationRule v1alpha3: %v %v, want the v1alpha3 schema", s, err)
	}
	if _, s, err := d.ObjectSchema(ctx, "Deployment", ""); err != nil || s != nil {
		t.Errorf("Deployment: %v %v, want none", s, err)
	}
	if _, s, err := d.ObjectSchema(ctx, "Sidecar", "networking.istio.io/v1beta1"); err != nil || s != nil {
		t.Errorf("Sidecar (no CRD served): %v %v, want none", s, err)
	}
}
