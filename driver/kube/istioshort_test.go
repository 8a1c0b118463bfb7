package kube

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"k8s.io/client-go/rest"
)

// TestMappingOfIstioShortNameStandIn: against a stand-in API server whose discovery serves
// DestinationRule with its CRD's short name dr (as Istio's CRD declares it), a get's kind
// "destinationrules" (the resource name) is looked up as kubectl does, and "dr" is not: the
// step errs when it runs. vet refuses dr naming DestinationRule (schema.checkLookupKind);
// this pins the run's side of what vet says.
func TestMappingOfIstioShortNameStandIn(t *testing.T) {
	fd := newFakeDiscovery()
	for i, g := range fd.groups {
		if g.name != "networking.istio.io" {
			continue
		}
		for j := range g.versions {
			for k := range g.versions[j].resources {
				if r := &fd.groups[i].versions[j].resources[k]; r.Kind == "DestinationRule" {
					r.ShortNames = []string{"dr"}
				}
			}
		}
	}
	srv := httptest.NewServer(fd)
	defer srv.Close()
	rc, err := newDiscoveryClient(&rest.Config{Host: srv.URL, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	d := &driver{mapper: newRESTMapper(rc)}
	ctx := context.Background()
	if m, err := d.mappingFor(ctx, "destinationrules", ""); err != nil || m.kind != "DestinationRule" {
		t.Errorf("mappingFor(destinationrules) = %q, %v; want DestinationRule", m.kind, err)
	}
	if _, err := d.mappingFor(ctx, "dr", ""); err == nil || !strings.Contains(err.Error(), `serves no kind "dr"`) {
		t.Errorf("mappingFor(dr): %v, want no such kind", err)
	}
}
