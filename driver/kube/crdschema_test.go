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
	d := crdStandInDriver(t, srv.URL)
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

// TestCRDSourceStandIn: a stand-in API server's DestinationRule CRD, labelled as Istio's base
// chart labels it (app.kubernetes.io/version, helm.sh/chart), names its release; one with the
// chart's label only names the chart's version; one with neither (applied from
// crd-all.gen.yaml as is) names none.
func TestCRDSourceStandIn(t *testing.T) {
	for _, c := range []struct {
		labels map[string]any
		want   string
	}{
		{map[string]any{"app.kubernetes.io/version": "1.31.0", "helm.sh/chart": "base-1.31.0", "app.kubernetes.io/part-of": "istio"}, "1.31.0"},
		{map[string]any{"helm.sh/chart": "base-1.32.1"}, "1.32.1"},
		{map[string]any{"app": "istio-pilot"}, ""},
	} {
		f := newFakeDiscovery()
		crdPath := "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/destinationrules.networking.istio.io"
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != crdPath {
				f.ServeHTTP(w, r)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]any{
				"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
				"metadata": map[string]any{"name": "destinationrules.networking.istio.io", "labels": c.labels},
			})
		}))
		d := crdStandInDriver(t, srv.URL)
		crd, release := d.CRDSource(context.Background(), "DestinationRule", "networking.istio.io/v1")
		if crd != "destinationrules.networking.istio.io" || release != c.want {
			t.Errorf("labels %v: %q %q, want destinationrules.networking.istio.io %q", c.labels, crd, release, c.want)
		}
		srv.Close()
	}
}

// crdStandInDriver is a driver whose discovery and dynamic clients talk to the stand-in API
// server at url.
func crdStandInDriver(t *testing.T, url string) *driver {
	t.Helper()
	cfg := &rest.Config{Host: url, QPS: -1}
	rc, err := newDiscoveryClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &driver{mapper: newRESTMapper(rc), dyn: dyn}
}
