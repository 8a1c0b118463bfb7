package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeAPIServer answers the two reads a reference makes, in namespace lab: Service backend-b
// (its ClusterIP) and the pods labelled app=backend-b (one, with podIP).
func fakeAPIServer(t *testing.T, clusterIP, podIP string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/api/v1/namespaces/lab/services/backend-b":
			fmt.Fprintf(w, `{"kind":"Service","apiVersion":"v1","metadata":{"name":"backend-b","namespace":"lab"},"spec":{"clusterIP":%q}}`, clusterIP)
		case "/api/v1/namespaces/lab/pods":
			if r.URL.Query().Get("labelSelector") != "app=backend-b" {
				http.Error(w, "unexpected selector "+r.URL.Query().Get("labelSelector"), http.StatusBadRequest)
				return
			}
			fmt.Fprintf(w, `{"kind":"PodList","apiVersion":"v1","items":[{"metadata":{"name":"backend-b-1","namespace":"lab","creationTimestamp":"2026-12-02T21:00:00Z"},"status":{"podIP":%q}}]}`, podIP)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestExpandRefsInAnotherCluster: a reference with @CLUSTER reads that cluster (a context of the
// mesh kubeconfig), one without reads the pod's own; an unknown cluster, or a sandbox of one
// cluster, is an error that says so.
func TestExpandRefsInAnotherCluster(t *testing.T) {
	own := fakeAPIServer(t, "10.96.0.10", "10.1.0.5")
	other := fakeAPIServer(t, "10.96.0.20", "10.2.0.7")
	dir := t.TempDir()
	ownConfig := filepath.Join(dir, "own")
	if err := os.WriteFile(ownConfig, fmt.Appendf(nil, `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: %s}}]
contexts: [{name: c, context: {cluster: c}}]
current-context: c
`, own.URL), 0o600); err != nil {
		t.Fatal(err)
	}
	mesh := filepath.Join(dir, "mesh")
	if err := os.WriteFile(mesh, fmt.Appendf(nil, `apiVersion: v1
kind: Config
clusters: [{name: cluster1, cluster: {server: %s}}, {name: cluster2, cluster: {server: %s}}]
contexts: [{name: cluster1, context: {cluster: cluster1}}, {name: cluster2, context: {cluster: cluster2}}]
current-context: cluster1
`, own.URL, other.URL), 0o600); err != nil {
		t.Fatal(err)
	}
	env := environment{PodNamespace: "lab", Kubeconfig: ownConfig, Mesh: mesh}
	got, err := expandRefs(env, "{{clusterIP backend-b}} {{clusterIP backend-b @cluster2}} {{podIP app=backend-b}} {{ podIP app=backend-b @cluster2 }}", "")
	if want := "10.96.0.10 10.96.0.20 10.1.0.5 10.2.0.7"; err != nil || got != want {
		t.Errorf("expandRefs = %q, %v; want %q", got, err, want)
	}
	// Remembered by the reference as written: the other cluster's answer is kept apart.
	memo := filepath.Join(dir, ".refs.json")
	if _, err := expandRefs(env, "{{podIP app=backend-b @cluster2}}", memo); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(memo); !strings.Contains(string(b), `"{{podIP app=backend-b @cluster2}}":"10.2.0.7"`) {
		t.Errorf("memo: %s", b)
	}

	if _, err := expandRefs(env, "{{podIP app=backend-b @cluster9}}", ""); err == nil || !strings.Contains(err.Error(), "cluster9") {
		t.Errorf("an unknown cluster: %v", err)
	}
	env.Mesh = ""
	if _, err := expandRefs(env, "{{podIP app=backend-b @cluster2}}", ""); err == nil || !strings.Contains(err.Error(), "LABRUN_MESH_KUBECONFIG") {
		t.Errorf("a cluster asked for in a sandbox of one: %v", err)
	}
}
