package kube

import (
	"context"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
)

var crdGVR = k8sschema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// ObjectSchema implements schema.ObjectSchemas: the CRD of the kind's resource
// (<resource>.<group>), its openAPIV3Schema at the version the kind is served in. A kind of
// no CRD (a built-in group's, an aggregated API's) has none; a built-in group of no dot (apps,
// batch) is not asked. A CRD that cannot be read (forbidden) is an error: the run says the
// kind's names go unchecked.
func (d *driver) ObjectSchema(ctx context.Context, kind, apiVersion string) (string, map[string]any, error) {
	m, err := d.mappingFor(ctx, kind, apiVersion)
	if err != nil {
		return "", nil, err
	}
	if !strings.Contains(m.gvr.Group, ".") {
		return m.kind, nil, nil // a CRD's group has a dot: core, apps, batch are built in
	}
	u, err := d.resourceFor(crdGVR, false, "").Get(ctx, m.gvr.Resource+"."+m.gvr.Group, getOpts)
	if apierrors.IsNotFound(err) {
		return m.kind, nil, nil
	}
	if err != nil {
		return m.kind, nil, err
	}
	versions, _, _ := unstructured.NestedSlice(u.Object, "spec", "versions")
	for _, v := range versions {
		vm, _ := v.(map[string]any)
		if name, _ := vm["name"].(string); name != m.gvr.Version {
			continue
		}
		s, _, _ := unstructured.NestedMap(vm, "schema", "openAPIV3Schema")
		return m.kind, s, nil
	}
	return m.kind, nil, nil
}

// CRDSource implements schema.CRDSources: the name of the kind's CRD, and the Istio release
// its labels name: Istio's base chart templates its CRDs with app.kubernetes.io/version (the
// chart's appVersion) and helm.sh/chart ("base-1.31.0"); a CRD applied from
// crd-all.gen.yaml as is has neither. "", "" when the kind's mapping cannot be found.
func (d *driver) CRDSource(ctx context.Context, kind, apiVersion string) (crd, release string) {
	m, err := d.mappingFor(ctx, kind, apiVersion)
	if err != nil || !strings.Contains(m.gvr.Group, ".") {
		return "", ""
	}
	name := m.gvr.Resource + "." + m.gvr.Group
	u, err := d.resourceFor(crdGVR, false, "").Get(ctx, name, getOpts)
	if err != nil {
		return name, ""
	}
	labels := u.GetLabels()
	if v := labels["app.kubernetes.io/version"]; v != "" {
		return name, v
	}
	if chart, ok := strings.CutPrefix(labels["helm.sh/chart"], "base-"); ok && chart != "" {
		return name, chart
	}
	return name, ""
}
