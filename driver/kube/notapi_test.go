package kube

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"labrun.dev/labrun/schema"
)

// TestAnHTMLAnswerIsNoAPIAnswer: a kubeconfig's server that answers the API's reads with an HTML
// page (a proxy's or a single sign-on's login page, a web server on the wrong port) failed the
// step with client-go's "serializer for text/html doesn't exist", which says nothing of the
// server. The step's error says the server answered a page, not the API, and how it begins.
// The API server is a loopback stand-in that answers discovery as one and the ConfigMap reads
// with a login page.
func TestAnHTMLAnswerIsNoAPIAnswer(t *testing.T) {
	d, srv := standInDriver(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<!DOCTYPE html>\n<html><head><title>Sign in</title></head><body>stand-in</body></html>")
	})
	for _, req := range []schema.Get{{Kind: "ConfigMap", Name: "cm", Path: "data"}, {Kind: "ConfigMap", Selector: "app=a"}} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := d.Get(ctx, req)
		cancel()
		want := "answered with an HTML page (200 OK), not the Kubernetes API's JSON: is " + srv.URL + " the cluster's API server, with no proxy or sign-in page before it? The page begins \"<!DOCTYPE html>\\n<html><head><title>Sign in</title>"
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("get %+v: %v, want it to say %s", req, err, want)
		}
	}
}
