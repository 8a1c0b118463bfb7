package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// fakeAPIServer is a stand-in for a Kubernetes API server on loopback that refuses every
// request with the given status (401: a wrong bearer token; 403: a user without rights).
func fakeAPIServer(t *testing.T, code int) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		reason := map[int]string{401: "Unauthorized", 403: "Forbidden"}[code]
		fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"%s","reason":"%s","code":%d}`,
			strings.ToLower(reason), reason, code)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func writeKubeconfig(t *testing.T, dir, server string) string {
	t.Helper()
	p := filepath.Join(dir, "kubeconfig")
	writeFile(t, p, fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: %q}}]
users: [{name: u, user: {token: not-the-token}}]
contexts: [{name: x, context: {cluster: c, user: u, namespace: lab}}]
current-context: x
`, server))
	return p
}

// klogLine matches klog's header: "E1201 12:00:00.000000   123 file.go:1] ...".
var klogLine = regexp.MustCompile(`(?m)^[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ `)

// TestKubeAuthFailure: a wrong bearer token (401) ends the run with exit 3 and its verdict
// line saying the credentials were refused; no klog line.
func TestKubeAuthFailure(t *testing.T) {
	bin := buildFakeBinary(t)
	dir := t.TempDir()
	kc := writeKubeconfig(t, dir, fakeAPIServer(t, http.StatusUnauthorized))
	writeFile(t, filepath.Join(dir, "s.cue"), `package s

import "labrun.dev/schema"

s: schema.#Scenario & {
	target: "kube"
	namespaces: ["lab"]
	steps: [{apply: objects: [{apiVersion: "v1", kind: "ConfigMap", metadata: name: "cm"}]}]
}
`)
	cmd := exec.Command(bin, "run", "--report-dir", "reports", "--kubeconfig", kc, "s.cue")
	cmd.Dir = dir
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if code := exitCodeOf(err); code != exitInfra {
		t.Fatalf("exit %d, want 3; stdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	// The target could not be created: its run's verdict line says why, as any run's error
	// (stdout), and nothing else is printed about it.
	var said []string
	for _, l := range strings.Split(stdout.String(), "\n") {
		if strings.Contains(l, "401") {
			said = append(said, l)
		}
	}
	if len(said) != 1 || !strings.HasPrefix(said[0], "ERROR s in ") || !strings.Contains(said[0], "credentials") || stderr.Len() != 0 {
		t.Errorf("want one verdict line about refused credentials and nothing on stderr; stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	}
	if klogLine.MatchString(stderr.String()) || klogLine.MatchString(stdout.String()) {
		t.Errorf("a klog line was printed:\n%s%s", stdout.String(), stderr.String())
	}
	if strings.Contains(stderr.String()+stdout.String(), "not-the-token") {
		t.Errorf("the token was printed:\n%s%s", stdout.String(), stderr.String())
	}
	if rec := readFaultRecord(t, filepath.Join(dir, "reports")); rec.Outcome != "error" {
		t.Errorf("report outcome %q, want error", rec.Outcome)
	}
}

// TestKubeForbiddenNoKlog: a user without rights (403 on everything, discovery included) gets
// exit 3 and labrun's own one-line message: no klog line.
func TestKubeForbiddenNoKlog(t *testing.T) {
	bin := buildFakeBinary(t)
	dir := t.TempDir()
	kc := writeKubeconfig(t, dir, fakeAPIServer(t, http.StatusForbidden))
	writeFile(t, filepath.Join(dir, "s.cue"), `package s

import "labrun.dev/schema"

s: schema.#Scenario & {
	target: "kube"
	namespaces: ["lab"]
	steps: [{apply: objects: [{apiVersion: "v1", kind: "ConfigMap", metadata: name: "cm"}]}]
}
`)
	cmd := exec.Command(bin, "run", "--report-dir", "", "--kubeconfig", kc, "s.cue")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if code := exitCodeOf(err); code != exitInfra || !strings.Contains(string(out), "403 Forbidden") {
		t.Fatalf("exit %d, want 3 with a message about 403 Forbidden:\n%s", code, out)
	}
	if klogLine.Match(out) {
		t.Errorf("a klog line was printed:\n%s", out)
	}
	t.Logf("exit %d:\n%s", exitCodeOf(err), out)
}
