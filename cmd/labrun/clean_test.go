package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"labrun.dev/labrun/driver/kube"
)

// A run is alive only while its pid runs on this host with the start time it recorded; a
// pid that ended, or was recycled (another start time), is a dead run; another host's run is
// neither.
func TestOwnerState(t *testing.T) {
	host, _ := os.Hostname()
	self := os.Getpid()
	start, ok := procStart(self)
	if !ok {
		t.Fatal("procStart of this process failed")
	}
	ended := exec.Command("true")
	if err := ended.Run(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		l    kube.Leftover
		want runState
	}{
		{"this process", kube.Leftover{Host: host, PID: self, PIDStart: start}, runAlive},
		{"start unknown", kube.Leftover{Host: host, PID: self}, runAlive},
		{"recycled pid", kube.Leftover{Host: host, PID: self, PIDStart: start + 1}, runDead},
		{"ended", kube.Leftover{Host: host, PID: ended.Process.Pid, PIDStart: 1}, runDead},
		{"other host", kube.Leftover{Host: host + "-elsewhere", PID: self, PIDStart: start}, runOtherHost},
		{"no owner", kube.Leftover{}, runDead},
	} {
		if got := ownerState(tc.l); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestGroupRuns(t *testing.T) {
	host, _ := os.Hostname()
	items := []kube.Leftover{
		{RunID: "b", Scenario: "s", Host: host, PID: os.Getpid()},
		{RunID: "a", Scenario: "s"},
		{RunID: "b", Scenario: "s", Host: host, PID: os.Getpid()},
	}
	runs := groupRuns(items)
	if len(runs) != 2 || runs[0].id != "a" || runs[1].id != "b" || len(runs[1].items) != 2 {
		t.Fatalf("groups: %+v", runs)
	}
	if runs[0].state != runDead || runs[1].state != runAlive {
		t.Errorf("states: %v %v", runs[0].state, runs[1].state)
	}
}

// TestCleanExitsInfraWhenAKindCannotBeListed runs labrun clean against a loopback stand-in
// for the API server (discovery, and lists that find nothing), where one kind cannot be listed
// (403 Forbidden) or one API group cannot be read (503): what dead runs left there was not
// looked for, so clean exits 3 and says why; it exited 0 after a warning, and a CI read the
// cluster as clean. With every kind listed, it exits 0.
func TestCleanExitsInfraWhenAKindCannotBeListed(t *testing.T) {
	const notClean = `labrun: clean: context x server http://127\.0\.0\.1:\d+: 1 kind\(s\) or API group\(s\) could not be listed \(the warning\(s\) above\): what dead runs left there was not looked for, and the cluster may not be clean\n`
	const forbidden = `labrun: clean: warning: kube: listing secrets: secrets is forbidden: User "u" cannot list resource "secrets" in API group "" at the cluster scope\n` + notClean
	for _, tc := range []struct {
		name             string
		forbid, badGroup bool
		yes              bool
		want             int
		wantErr          string
	}{
		{name: "every kind listed", want: exitOK},
		{name: "secrets forbidden", forbid: true, want: exitInfra, wantErr: forbidden},
		{name: "secrets forbidden, --yes", forbid: true, yes: true, want: exitInfra, wantErr: forbidden},
		{name: "a group unreadable", badGroup: true, want: exitInfra, wantErr: `labrun: clean: warning: kube: some API groups could not be read: unable to retrieve the complete list of server APIs: metrics\.k8s\.io/v1beta1: the server is currently unable to handle the request\n` + notClean},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kc := cleanStandIn(t, tc.forbid, tc.badGroup)
			var stdout, stderr strings.Builder
			p := testProcess()
			p.Args = []string{"clean", "--kubeconfig", kc, "--timeout", "30s"}
			if tc.yes {
				p.Args = append(p.Args, "--yes")
			}
			p.Stdout, p.Stderr = &stdout, &stderr
			sigs := make(chan os.Signal)
			p.Signals = func() (<-chan os.Signal, func()) { return sigs, func() {} }
			if code := Main(p); code != tc.want {
				t.Errorf("exit %d, want %d; stdout:\n%s\nstderr:\n%s", code, tc.want, stdout.String(), stderr.String())
			}
			if !strings.Contains(stdout.String(), ": 0 object(s) of 0 run(s)") {
				t.Errorf("stdout does not list what was found:\n%s", stdout.String())
			}
			if !regexp.MustCompile("^" + tc.wantErr + "$").MatchString(stderr.String()) {
				t.Errorf("stderr %q, want it to match %q", stderr.String(), tc.wantErr)
			}
		})
	}
}

// cleanStandIn serves, on loopback, the discovery of the core group (configmaps, secrets,
// namespaces) and of a group "metrics.k8s.io" (whose discovery answers 503 when badGroup is
// set), and lists that find nothing (secrets' answers 403 when forbid is set); it returns the
// path of a kubeconfig naming it.
func cleanStandIn(t *testing.T, forbid, badGroup bool) string {
	t.Helper()
	resource := func(name, kind string, namespaced bool) metav1.APIResource {
		return metav1.APIResource{Name: name, Kind: kind, Namespaced: namespaced, Verbs: []string{"get", "list", "delete", "create"}}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		write := func(code int, v any) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(code)
			_ = json.NewEncoder(w).Encode(v)
		}
		switch r.URL.Path {
		case "/api":
			write(http.StatusOK, metav1.APIVersions{Versions: []string{"v1"}})
		case "/apis":
			gv := metav1.GroupVersionForDiscovery{GroupVersion: "metrics.k8s.io/v1beta1", Version: "v1beta1"}
			write(http.StatusOK, metav1.APIGroupList{Groups: []metav1.APIGroup{{Name: "metrics.k8s.io", Versions: []metav1.GroupVersionForDiscovery{gv}, PreferredVersion: gv}}})
		case "/api/v1":
			write(http.StatusOK, metav1.APIResourceList{GroupVersion: "v1", APIResources: []metav1.APIResource{
				resource("configmaps", "ConfigMap", true), resource("secrets", "Secret", true), resource("namespaces", "Namespace", false)}})
		case "/apis/metrics.k8s.io/v1beta1":
			if badGroup {
				write(http.StatusServiceUnavailable, metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: "Failure", Code: 503, Reason: metav1.StatusReasonServiceUnavailable, Message: "the server is currently unable to handle the request"})
				return
			}
			write(http.StatusOK, metav1.APIResourceList{GroupVersion: "metrics.k8s.io/v1beta1"})
		case "/api/v1/secrets":
			if forbid {
				write(http.StatusForbidden, metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: "Failure", Code: 403, Reason: metav1.StatusReasonForbidden,
					Message: `secrets is forbidden: User "u" cannot list resource "secrets" in API group "" at the cluster scope`})
				return
			}
			write(http.StatusOK, map[string]any{"kind": "SecretList", "apiVersion": "v1", "metadata": map[string]any{}, "items": []any{}})
		case "/api/v1/configmaps", "/api/v1/namespaces":
			write(http.StatusOK, map[string]any{"kind": "List", "apiVersion": "v1", "metadata": map[string]any{}, "items": []any{}})
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return writeKubeconfig(t, t.TempDir(), srv.URL) // its token and namespace: the stand-in reads neither
}
