package kube

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"labrun.dev/labrun/schema"
)

// TestRefusalUnsourcedStandIn (a loopback stand-in API server refuses every write of a
// ConfigMap, 422): each object's refusal names its file and line, and says itself without them
// (Unsourced) for an expectFail pattern, which is not matched against where the object was
// written.
func TestRefusalUnsourcedStandIn(t *testing.T) {
	d, _ := standInDriver(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnprocessableEntity)
		fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"stand-in: data.foo: Invalid value","reason":"Invalid","code":422}`)
	})
	f := filepath.Join(t.TempDir(), "bad-objects.yaml")
	if err := os.WriteFile(f, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bad}\ndata: {foo: x}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d.guard = newGuard([]string{"lab"}, false)
	_, err := d.ApplyWith(context.Background(), nil, []string{f}, "lab", schema.ApplyOptions{Mode: "apply", Force: true})
	var j interface{ Unwrap() []error }
	if !errors.As(err, &j) || len(j.Unwrap()) != 1 {
		t.Fatalf("err %v, want one refusal joined", err)
	}
	e := j.Unwrap()[0]
	u, ok := e.(interface{ Unsourced() string })
	if !ok {
		t.Fatalf("refusal %T %v has no Unsourced", e, e)
	}
	if !strings.Contains(e.Error(), "bad-objects.yaml") || !strings.Contains(e.Error(), "stand-in: data.foo: Invalid value") {
		t.Errorf("refusal %q, want its file and the server's message", e)
	}
	if got := u.Unsourced(); strings.Contains(got, "bad-objects") || !strings.HasPrefix(got, "apply ConfigMap lab/bad: ") || !strings.Contains(got, "stand-in: data.foo: Invalid value") {
		t.Errorf("Unsourced %q, want the object and the server's message, without the file", got)
	}
}
