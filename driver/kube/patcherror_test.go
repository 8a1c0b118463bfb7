package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

	"labrun.dev/labrun/schema"
)

// strictPatchRefusal is the API server's refusal of a strict merge patch with an unknown field,
// built as its patch handler builds it: the whole patched object quoted as the invalid value.
func strictPatchRefusal(t *testing.T, patched map[string]any, unknown ...string) error {
	js, err := json.Marshal(patched)
	if err != nil {
		t.Fatal(err)
	}
	var errs []error
	for _, f := range unknown {
		errs = append(errs, errors.New(`unknown field "`+f+`"`))
	}
	return apierrors.NewInvalid(k8sschema.GroupKind{}, "", field.ErrorList{
		field.Invalid(field.NewPath("patch"), string(js), runtime.NewStrictDecodingError(errs).Error()),
	})
}

// TestPatchUnknownFieldError: a merge patch with a misspelled field is refused by the API server
// with ~1.5 KB dumping the patched object as escaped JSON (managedFields, labrun's annotations)
// and the unknown field at its very end (probe p8 #13). The step's error says the field, where
// it is, and what was meant; the server's text is kept as the error's Detail.
func TestPatchUnknownFieldError(t *testing.T) {
	live := map[string]any{"apiVersion": "networking.istio.io/v1", "kind": "DestinationRule",
		"metadata": map[string]any{"name": "backend", "namespace": "lab", "generation": int64(1),
			"annotations":   map[string]any{"labrun.dev/owner": strings.Repeat("x", 200)},
			"managedFields": []any{map[string]any{"manager": "labrun", "fieldsV1": map[string]any{"f:spec": strings.Repeat("y", 600)}}}},
		"spec": map[string]any{"host": "backend", "trafficPolicy": map[string]any{"connectionPool": map[string]any{
			"tcp": map[string]any{"maxConnections": int64(1), "maxConection": int64(5)}}}}}
	d := fakeDriver(live)
	d.dyn.(*dynamicfake.FakeDynamicClient).PrependReactor("patch", "destinationrules", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, strictPatchRefusal(t, live, "spec.trafficPolicy.connectionPool.tcp.maxConection")
	})
	patch := schema.Object{"apiVersion": "networking.istio.io/v1", "kind": "DestinationRule", "metadata": map[string]any{"name": "backend"},
		"spec": map[string]any{"trafficPolicy": map[string]any{"connectionPool": map[string]any{"tcp": map[string]any{"maxConection": 5}}}}}
	_, err := d.ApplyWith(context.Background(), []schema.Object{patch}, nil, "lab", schema.ApplyOptions{Mode: "patch"})
	want := "patch DestinationRule lab/backend (objects[0]): unknown field spec.trafficPolicy.connectionPool.tcp.maxConection: " +
		"the cluster's DestinationRule has no such field (did you mean maxConnections?)"
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant %s", err, want)
	}
	if full := schema.Details(err); !strings.HasPrefix(full, `"" is invalid: patch: Invalid value: "{`) || !strings.Contains(full, "managedFields") {
		t.Errorf("Details = %q, want the server's full text", full)
	}
	if !apierrors.IsInvalid(err) {
		t.Errorf("%v no longer wraps the server's Invalid", err)
	}

	// Two fields, no near sibling; other refusals are left as they are.
	e2 := shortPatchError(strictPatchRefusal(t, live, "spec.a", "spec.trafficPolicy.zzz"), "DestinationRule")
	if want := "unknown field spec.a: the cluster's DestinationRule has no such field; unknown field spec.trafficPolicy.zzz: the cluster's DestinationRule has no such field"; e2.Error() != want {
		t.Errorf("two fields: %v\nwant %s", e2, want)
	}
	other := apierrors.NewInvalid(k8sschema.GroupKind{Group: "networking.istio.io", Kind: "DestinationRule"}, "backend",
		field.ErrorList{field.Invalid(field.NewPath("spec", "host"), "", "must be set")})
	if got := shortPatchError(other, "DestinationRule"); got != error(other) {
		t.Errorf("another refusal became %v", got)
	}
}

// TestDryRunPatch: vet --server's dry run of a merge patch sends it with dryRun=All and strict
// field validation, returns the unknown field of an object that exists, and the objects that
// do not exist as missing; other refusals depend on the object as it is now and are left out.
func TestDryRunPatch(t *testing.T) {
	live := map[string]any{"apiVersion": "networking.istio.io/v1", "kind": "DestinationRule",
		"metadata": map[string]any{"name": "backend", "namespace": "lab"},
		"spec":     map[string]any{"trafficPolicy": map[string]any{"connectionPool": map[string]any{"tcp": map[string]any{"maxConnections": int64(1)}}}}}
	other := map[string]any{"apiVersion": "networking.istio.io/v1", "kind": "DestinationRule",
		"metadata": map[string]any{"name": "other", "namespace": "lab"}}
	d := fakeDriver(live, other)
	var sent []string
	d.dyn.(*dynamicfake.FakeDynamicClient).PrependReactor("patch", "destinationrules", func(a k8stesting.Action) (bool, runtime.Object, error) {
		pa := a.(k8stesting.PatchAction)
		po := a.(k8stesting.PatchActionImpl).GetPatchOptions()
		sent = append(sent, fmt.Sprintf("%s %s dryRun=%v validation=%s", pa.GetName(), pa.GetPatchType(), po.DryRun, po.FieldValidation))
		switch pa.GetName() {
		case "backend":
			return true, nil, strictPatchRefusal(t, live, "spec.trafficPolicy.connectionPool.tcp.maxConection")
		case "other":
			return true, nil, apierrors.NewInvalid(k8sschema.GroupKind{Kind: "DestinationRule"}, "other",
				field.ErrorList{field.Required(field.NewPath("spec", "host"), "")})
		}
		return false, nil, nil
	})
	patch := func(name string) schema.Object {
		return schema.Object{"apiVersion": "networking.istio.io/v1", "kind": "DestinationRule", "metadata": map[string]any{"name": name},
			"spec": map[string]any{"trafficPolicy": map[string]any{"connectionPool": map[string]any{"tcp": map[string]any{"maxConection": 5}}}}}
	}
	missing, err := d.DryRunPatch(context.Background(), []schema.Object{patch("backend"), patch("other"), patch("later")}, nil, "lab")
	want := "DestinationRule lab/backend (objects[0]): unknown field spec.trafficPolicy.connectionPool.tcp.maxConection: the cluster's DestinationRule has no such field (did you mean maxConnections?)"
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
	if len(missing) != 1 || missing[0].Name != "later" {
		t.Errorf("missing = %v, want later", missing)
	}
	if len(sent) < 2 || sent[0] != "backend application/merge-patch+json dryRun=[All] validation=Strict" {
		t.Errorf("sent %q", sent)
	}
}
