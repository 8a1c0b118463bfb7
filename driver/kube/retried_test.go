package kube

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"labrun.dev/labrun/schema"
)

// TestRetriedAnswersAreTold: client-go retries an API server's 429 Too Many Requests (after
// its Retry-After) without returning it, and a step whose time ran out meanwhile returned the
// timeout alone: "get timed out after 3s", as if the object were slow to come, not that the
// server refused every read. The step is told of each such answer, which it shows as a
// warning. The API server is a loopback stand-in that answers 429 to every read of the
// ConfigMap.
func TestRetriedAnswersAreTold(t *testing.T) {
	d, _ := standInDriver(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "1")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"stand-in: too many requests","reason":"TooManyRequests","code":429}`)
	})
	var mu sync.Mutex
	var notes []string
	ctx := schema.WithRetriedAnswers(context.Background(), func(msg string) {
		mu.Lock()
		defer mu.Unlock()
		notes = append(notes, msg)
	})
	ctx, cancel := context.WithTimeout(ctx, 1500*time.Millisecond)
	defer cancel()
	_, err := d.Get(ctx, schema.Get{Kind: "ConfigMap", Name: "cm", Path: "data"})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err %v, want the deadline", err)
	}
	mu.Lock()
	defer mu.Unlock()
	const want = "the API server answered 429 Too Many Requests to GET /api/v1/namespaces/lab/configmaps/cm, asking to retry after 1s (the client retries it)"
	if len(notes) == 0 || notes[0] != want {
		t.Errorf("notes %q, want %q", notes, want)
	}
}

// standInDriver is a driver whose kubeconfig names a loopback stand-in API server: it answers
// discovery as newFakeDiscovery does, and every request for the ConfigMaps of namespace lab
// (an object's, the list's) with configmaps.
func standInDriver(t *testing.T, configmaps http.HandlerFunc) (*driver, *httptest.Server) {
	t.Helper()
	disco := newFakeDiscovery()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/api/v1/namespaces/lab/configmaps") {
			configmaps(w, r)
			return
		}
		disco.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kc, fmt.Appendf(nil, `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: %q}}]
users: [{name: u, user: {}}]
contexts: [{name: x, context: {cluster: c, user: u, namespace: lab}}]
current-context: x
`, srv.URL), 0o600); err != nil {
		t.Fatal(err)
	}
	d, _, err := newDriver(Options{Kubeconfig: kc})
	if err != nil {
		t.Fatal(err)
	}
	return d, srv
}
