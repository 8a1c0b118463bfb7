package kube

// End-to-end tests against the sandbox (labrun.dev/labrun/sandbox): a real kube-apiserver,
// controller-manager and scheduler v1.37.2, kwok v0.8.0 as the kubelet (exec runs a local command,
// container logs are local files), Istio's real CRDs (istio.io/api v1.30.8) and a real istiod
// (istio.io/istio master of 2026-08-27, 1.31 development). There is no Envoy: `pilot-agent request`
// in a pod is the sandbox's stand-in, whose config_dump is istiod's real answer for that pod and
// whose stats and clusters are fixtures written by the test.
//
// The tests share one sandbox (TestMain); each uses its own namespace. They skip under -short and
// LABRUN_SANDBOX=off.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"fortio.org/fortio/fhttp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"labrun.dev/labrun/envoy"
	"labrun.dev/labrun/sandbox"
	"labrun.dev/labrun/schema"
)

func TestMain(m *testing.M) { sandbox.Main(m) }

// lab is one e2e test's world: the sandbox, a kube target allowed in ns, and a plain client for
// checking what the target did.
type lab struct {
	t   *testing.T
	sb  *sandbox.Sandbox
	tgt *schema.Target
	d   *driver
	ns  string
	cs  kubernetes.Interface
	ctx context.Context
}

// newLab starts (or joins) the sandbox and creates namespace ns through the target; the namespace
// is deleted when the test ends.
func newLab(t *testing.T, ns string, opts ...func(*Options)) *lab {
	t.Helper()
	sb := sandbox.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	t.Cleanup(cancel)
	// Marked as a run's, so that the lab's namespace, which it creates, may be deleted.
	o := Options{Kubeconfig: sb.Kubeconfig, AllowedNamespaces: []string{ns}, ClusterScoped: true, Logf: t.Logf,
		Getenv: func(string) string { return "" }, Run: Run{ID: "e2e-" + ns, Scenario: ns, Host: "e2e", PID: 1}}
	for _, f := range opts {
		f(&o)
	}
	tgt, err := New(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(sb.RESTConfig)
	if err != nil {
		t.Fatal(err)
	}
	l := &lab{t: t, sb: sb, tgt: tgt, d: tgt.Cluster.(*driver), ns: ns, cs: cs, ctx: ctx}
	if _, err := tgt.Cluster.Apply(ctx, []schema.Object{namespace(ns)}, nil, ""); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = l.d.Delete(ctx, []schema.ObjectRef{{APIVersion: "v1", Kind: "Namespace", Name: ns}}, false)
	})
	return l
}

func namespace(name string) schema.Object {
	return schema.Object{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}}
}

// deployment is a Deployment whose pods (label app=name) run the given containers (image "fake":
// kwok runs nothing).
func deployment(name string, replicas int, containers ...string) schema.Object {
	var cs []any
	for _, c := range containers {
		cs = append(cs, map[string]any{"name": c, "image": "fake"})
	}
	return schema.Object{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": name},
		"spec": map[string]any{
			"replicas": replicas,
			"selector": map[string]any{"matchLabels": map[string]any{"app": name}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": name}},
				"spec":     map[string]any{"containers": cs, "terminationGracePeriodSeconds": 0},
			},
		},
	}
}

// apply applies objects in the lab's namespace and waits for the named Deployments.
func (l *lab) apply(objs []schema.Object, rollouts ...string) schema.ApplyResult {
	l.t.Helper()
	res, err := l.tgt.Cluster.Apply(l.ctx, objs, nil, l.ns)
	if err != nil {
		l.t.Fatal(err)
	}
	for _, r := range rollouts {
		if err := l.tgt.Cluster.WaitRollout(l.ctx, l.ns, r); err != nil {
			l.t.Fatal(err)
		}
	}
	return res
}

// readyPods lists the names of the ready pods with label app=app.
func (l *lab) readyPods(app string) []string {
	l.t.Helper()
	pods, err := l.cs.CoreV1().Pods(l.ns).List(l.ctx, metav1.ListOptions{LabelSelector: "app=" + app})
	if err != nil {
		l.t.Fatal(err)
	}
	var names []string
	for i := range pods.Items {
		if podReady(&pods.Items[i]) {
			names = append(names, pods.Items[i].Name)
		}
	}
	slices.Sort(names)
	return names
}

// onePod returns the name of the one ready pod of app.
func (l *lab) onePod(app string) string {
	l.t.Helper()
	names := l.readyPods(app)
	if len(names) != 1 {
		l.t.Fatalf("want 1 ready pod of %s, have %v", app, names)
	}
	return names[0]
}

func refNames(refs []schema.ObjectRef) []string {
	var out []string
	for _, r := range refs {
		out = append(out, kindName(r.Kind, r.Namespace, r.Name))
	}
	return out
}

// A CUE struct and a multi-document YAML file holding a CRD and an object of its kind, in one
// batch: the CRD goes first and is waited for; created and updated objects are told apart.
func TestE2EApply(t *testing.T) {
	l := newLab(t, "e2e-apply")
	file := filepath.Join(t.TempDir(), "widgets.yaml")
	yaml := `# a CRD and an object of its kind, before the CRD exists
apiVersion: e2e.labrun.dev/v1
kind: Widget
metadata: {name: blue}
spec: {size: 3}
---
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.e2e.labrun.dev}
spec:
  group: e2e.labrun.dev
  scope: Namespaced
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties: {size: {type: integer}}
`
	if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = l.d.Delete(context.Background(), []schema.ObjectRef{{APIVersion: "apiextensions.k8s.io/v1",
			Kind: "CustomResourceDefinition", Name: "widgets.e2e.labrun.dev"}}, false)
	})
	cm := schema.Object{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "settings"},
		"data": map[string]any{"mode": "lab"}}

	refs, err := l.tgt.Cluster.Objects(l.ctx, []schema.Object{cm}, []string{file}, l.ns)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"ConfigMap e2e-apply/settings", "Widget e2e-apply/blue", "CustomResourceDefinition widgets.e2e.labrun.dev"}
	if got := refNames(refs); !slices.Equal(got, want) {
		t.Errorf("Objects = %v, want %v", got, want)
	}

	res, err := l.tgt.Cluster.Apply(l.ctx, []schema.Object{cm}, []string{file}, l.ns)
	if err != nil {
		t.Fatal(err)
	}
	wantApplied := []string{"CustomResourceDefinition widgets.e2e.labrun.dev", "ConfigMap e2e-apply/settings", "Widget e2e-apply/blue"}
	if got := refNames(res.Applied); !slices.Equal(got, wantApplied) {
		t.Errorf("Applied = %v, want %v", got, wantApplied)
	}
	if got := refNames(res.Created); !slices.Equal(got, wantApplied) {
		t.Errorf("Created = %v, want %v", got, wantApplied)
	}
	size, err := l.tgt.Cluster.Get(l.ctx, schema.Get{Kind: "Widget", Name: "blue", Namespace: l.ns, Path: "spec.size"})
	if err != nil || size != float64(3) {
		t.Errorf("Widget blue spec.size = %v, %v", size, err)
	}

	// Again, changed: everything is updated, nothing created.
	cm["data"] = map[string]any{"mode": "changed"}
	res, err = l.tgt.Cluster.Apply(l.ctx, []schema.Object{cm}, []string{file}, l.ns)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Created) != 0 || len(res.Applied) != 3 {
		t.Errorf("second apply: applied %v, created %v", refNames(res.Applied), refNames(res.Created))
	}
	mode, err := l.tgt.Cluster.Get(l.ctx, schema.Get{Kind: "ConfigMap", Name: "settings", Namespace: l.ns, Path: "data.mode"})
	if err != nil || mode != "changed" {
		t.Errorf("data.mode = %v, %v", mode, err)
	}

	// An unknown kind with no CRD in the batch is an error before anything is applied.
	_, err = l.tgt.Cluster.Apply(l.ctx, []schema.Object{{"apiVersion": "e2e.labrun.dev/v1", "kind": "Gadget",
		"metadata": map[string]any{"name": "x"}}}, nil, l.ns)
	if err == nil || !strings.Contains(err.Error(), "serves no kind Gadget") {
		t.Errorf("unknown kind: %v", err)
	}
}

func TestE2EDelete(t *testing.T) {
	l := newLab(t, "e2e-delete")
	l.apply([]schema.Object{
		{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "a"}},
		deployment("web", 1, "app"),
	}, "web")
	refs := []schema.ObjectRef{
		{APIVersion: "v1", Kind: "ConfigMap", Namespace: l.ns, Name: "a"},
		{APIVersion: "apps/v1", Kind: "Deployment", Namespace: l.ns, Name: "web"},
		{APIVersion: "v1", Kind: "ConfigMap", Namespace: l.ns, Name: "never-existed"},
		{APIVersion: "gone.labrun.dev/v1", Kind: "Thing", Namespace: l.ns, Name: "x"}, // kind not served
	}
	// The absent object and the kind not served are named (a delete step fails on them, as
	// kubectl does); the others are deleted all the same.
	err := l.tgt.Cluster.Delete(l.ctx, refs, true)
	var ae *schema.AbsentError
	if !errors.As(err, &ae) || !errors.Is(err, schema.ErrAlreadyGone) || ae.All ||
		!reflect.DeepEqual(ae.Absent, refs[2:3]) || !reflect.DeepEqual(ae.Unserved, refs[3:]) {
		t.Fatalf("delete: %v (%+v), want the ConfigMap never-existed absent and the Thing unserved", err, ae)
	}
	if _, err := l.cs.CoreV1().ConfigMaps(l.ns).Get(l.ctx, "a", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("ConfigMap a: %v, want not found", err)
	}
	if _, err := l.cs.AppsV1().Deployments(l.ns).Get(l.ctx, "web", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("Deployment web: %v, want not found", err)
	}

	// A namespace takes the namespace controller a while: wait covers it.
	ns2 := "e2e-delete-ns"
	l2 := newLab(t, ns2)
	l2.apply([]schema.Object{{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "b"}}})
	start := time.Now()
	if err := l2.tgt.Cluster.Delete(l.ctx, []schema.ObjectRef{{APIVersion: "v1", Kind: "Namespace", Name: ns2}}, true); err != nil {
		t.Fatal(err)
	}
	if _, err := l.cs.CoreV1().Namespaces().Get(l.ctx, ns2, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("namespace %s: %v, want not found", ns2, err)
	}
	t.Logf("namespace deletion took %v", time.Since(start).Round(time.Millisecond))
	// ... and applying it again right away works.
	if _, err := l2.tgt.Cluster.Apply(l.ctx, []schema.Object{namespace(ns2)}, nil, ""); err != nil {
		t.Fatal(err)
	}
}

func TestE2EScale(t *testing.T) {
	l := newLab(t, "e2e-scale")
	l.apply([]schema.Object{deployment("backend", 1, "app")}, "backend")
	if err := l.tgt.Cluster.Scale(l.ctx, l.ns, "backend", 3, true); err != nil {
		t.Fatal(err)
	}
	if got := l.readyPods("backend"); len(got) != 3 {
		t.Errorf("after scale to 3: ready pods %v", got)
	}
	if err := l.tgt.Cluster.Scale(l.ctx, l.ns, "backend", 0, true); err != nil {
		t.Fatal(err)
	}
	if got := l.readyPods("backend"); len(got) != 0 {
		t.Errorf("after scale to 0: ready pods %v", got)
	}
	if err := l.tgt.Cluster.Scale(l.ctx, l.ns, "absent", 1, true); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("scale of an absent deployment: %v", err)
	}
}

func TestE2ERestart(t *testing.T) {
	l := newLab(t, "e2e-restart")
	l.apply([]schema.Object{deployment("backend", 2, "app")}, "backend")
	before := l.readyPods("backend")
	if err := l.tgt.Cluster.Restart(l.ctx, l.ns, "backend", true); err != nil {
		t.Fatal(err)
	}
	after := l.readyPods("backend")
	if len(after) != 2 {
		t.Fatalf("after restart: ready pods %v", after)
	}
	for _, p := range after {
		if slices.Contains(before, p) {
			t.Errorf("pod %s survived the restart (before %v, after %v)", p, before, after)
		}
	}
}

func TestE2EKill(t *testing.T) {
	l := newLab(t, "e2e-kill")
	l.apply([]schema.Object{deployment("backend", 2, "app")}, "backend")
	before := l.readyPods("backend")
	grace := schema.Duration(0)
	killed, err := l.tgt.Cluster.KillPods(l.ctx, schema.Kill{Selector: "app=backend", Namespace: l.ns, GracePeriod: &grace})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(killed, before) {
		t.Errorf("killed %v, want %v", killed, before)
	}
	// A rollout wait right after a kill may pass before the controller notices the kill; waiting
	// for the selector's pods to be Ready skips the killed ones (being deleted) and waits for new ones.
	err = l.tgt.Cluster.WaitCondition(l.ctx, l.ns, schema.Condition{Kind: "Pod", Selector: "app=backend", Type: "Ready"}, 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	var after []string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if after = l.readyPods("backend"); len(after) == 2 {
			break
		}
	}
	if len(after) != 2 || slices.ContainsFunc(after, func(p string) bool { return slices.Contains(before, p) }) {
		t.Errorf("after kill: before %v, after %v", before, after)
	}
	// By name.
	killed, err = l.tgt.Cluster.KillPods(l.ctx, schema.Kill{Pod: after[0], Namespace: l.ns})
	if err != nil || !slices.Equal(killed, after[:1]) {
		t.Errorf("kill by name: %v, %v", killed, err)
	}
	if _, err := l.tgt.Cluster.KillPods(l.ctx, schema.Kill{Selector: "app=nothing", Namespace: l.ns}); err == nil {
		t.Error("a selector that matches nothing killed nothing without an error")
	}
}

func TestE2EWait(t *testing.T) {
	l := newLab(t, "e2e-wait")
	l.apply([]schema.Object{deployment("backend", 2, "app")})
	if err := l.tgt.Cluster.WaitRollout(l.ctx, l.ns, "backend"); err != nil {
		t.Fatal(err)
	}
	if err := l.tgt.Cluster.WaitCondition(l.ctx, l.ns, schema.Condition{Kind: "Deployment", Name: "backend", Type: "Available"}, 0); err != nil {
		t.Error(err)
	}
	if err := l.tgt.Cluster.WaitCondition(l.ctx, l.ns, schema.Condition{Kind: "Pod", Selector: "app=backend", Type: "Ready"}, 100*time.Millisecond); err != nil {
		t.Error(err)
	}

	// Timeouts say what is missing.
	ctx, cancel := context.WithTimeout(l.ctx, 1500*time.Millisecond)
	defer cancel()
	err := l.tgt.Cluster.WaitCondition(ctx, l.ns, schema.Condition{Kind: "Pod", Selector: "app=backend", Type: "Ready", Status: "False"}, 0)
	if err == nil || !strings.Contains(err.Error(), "Ready=False") || !strings.Contains(err.Error(), ": True") {
		t.Errorf("condition timeout: %v", err)
	}
	// A Deployment whose pods cannot be scheduled: the error names the pods and why.
	stuck := deployment("stuck", 1, "app")
	stuck["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["nodeSelector"] = map[string]any{"no-such": "node"}
	l.apply([]schema.Object{stuck})
	ctx, cancel = context.WithTimeout(l.ctx, 3*time.Second)
	defer cancel()
	err = l.tgt.Cluster.WaitRollout(ctx, l.ns, "stuck")
	if err == nil || !strings.Contains(err.Error(), "0 of 1 updated replicas are available") || !strings.Contains(err.Error(), "Pending") {
		t.Errorf("rollout timeout: %v", err)
	}
	t.Logf("rollout timeout error: %v", err)
}

func TestE2EGet(t *testing.T) {
	l := newLab(t, "e2e-get")
	l.apply([]schema.Object{deployment("backend", 2, "app")}, "backend")
	ips, err := l.tgt.Cluster.Get(l.ctx, schema.Get{Kind: "Pod", Selector: "app=backend", Namespace: l.ns, Path: "status.podIP"})
	if err != nil {
		t.Fatal(err)
	}
	list, ok := ips.([]any)
	if !ok || len(list) != 2 {
		t.Fatalf("pod IPs = %#v", ips)
	}
	for _, ip := range list {
		if s, _ := ip.(string); !strings.Contains(s, ".") {
			t.Errorf("pod IP %#v", ip)
		}
	}
	pods := l.readyPods("backend")
	ip, err := l.tgt.Cluster.Get(l.ctx, schema.Get{Kind: "Pod", Name: pods[0], Namespace: l.ns, Path: "status.podIP"})
	if err != nil || !slices.Contains(list, ip) {
		t.Errorf("pod %s IP = %v, %v (list %v)", pods[0], ip, err, list)
	}
	replicas, err := l.tgt.Cluster.Get(l.ctx, schema.Get{Kind: "Deployment", APIVersion: "apps/v1", Name: "backend", Namespace: l.ns, Path: "spec.replicas"})
	if err != nil || replicas != float64(2) {
		t.Errorf("spec.replicas = %#v, %v", replicas, err)
	}
	obj, err := l.tgt.Cluster.Get(l.ctx, schema.Get{Kind: "Deployment", Name: "backend", Namespace: l.ns})
	if m, ok := obj.(map[string]any); err != nil || !ok || m["kind"] != "Deployment" {
		t.Errorf("whole object: %T, %v", obj, err)
	}
	_, err = l.tgt.Cluster.Get(l.ctx, schema.Get{Kind: "Pod", Name: pods[0], Namespace: l.ns, Path: "status.podIp"})
	if err == nil || !strings.Contains(err.Error(), "podIP") {
		t.Errorf("misspelled path: %v (want the fields that exist)", err)
	}
}

func TestE2EExec(t *testing.T) {
	l := newLab(t, "e2e-exec")
	l.apply([]schema.Object{deployment("client", 1, "istio-proxy", "app")}, "client")
	res, err := l.tgt.Exec.Exec(l.ctx, schema.Exec{
		Argv:      []string{"sh", "-c", `echo "inet 10.1.2.3/24"; echo oops >&2; exit 3`},
		Selector:  "app=client",
		Namespace: l.ns,
		Capture:   `inet (?P<ip>[0-9.]+)/(?P<bits>[0-9]+)`,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stdout != "inet 10.1.2.3/24\n" || res.Stderr != "oops\n" || res.Exit != 3 ||
		res.Captured["ip"] != "10.1.2.3" || res.Captured["bits"] != "24" {
		t.Errorf("exec result %+v", res)
	}
	// argv is not a shell command line; stdin reaches the command; the default container is the
	// first that is not istio-proxy (the sandbox tells it in LABRUN_CONTAINER). The command reads
	// one line, not up to the end of stdin: kwok v0.8.0 never closes a command's stdin.
	res, err = l.tgt.Exec.Exec(l.ctx, schema.Exec{
		Argv: []string{"sh", "-c", `head -n 1; echo "$0 $LABRUN_CONTAINER"`, "$(not expanded)"},
		Pod:  l.onePod("client"), Namespace: l.ns, Stdin: "from stdin\n",
	})
	if err != nil || res.Stdout != "from stdin\n$(not expanded) app\n" || res.Exit != 0 {
		t.Errorf("exec with stdin: %+v, %v", res, err)
	}
	res, err = l.tgt.Exec.Exec(l.ctx, schema.Exec{Argv: []string{"sh", "-c", `echo $LABRUN_CONTAINER`}, Selector: "app=client",
		Namespace: l.ns, Container: "istio-proxy"})
	if err != nil || res.Stdout != "istio-proxy\n" {
		t.Errorf("exec in istio-proxy: %+v, %v", res, err)
	}
	if _, err := l.tgt.Exec.Exec(l.ctx, schema.Exec{Argv: []string{"true"}, Selector: "app=nothing", Namespace: l.ns}); err == nil ||
		!strings.Contains(err.Error(), "no pod") {
		t.Errorf("exec without a pod: %v", err)
	}
}

// The real fortio CLI (v1.66.5, run by kwok as the client pod's command) loads a real fortio echo
// server on 127.0.0.1.
func TestE2ELoad(t *testing.T) {
	l := newLab(t, "e2e-load")
	l.apply([]schema.Object{deployment("client", 1, "istio-proxy", "fortio")}, "client")
	echo := httptest.NewServer(http.HandlerFunc(fhttp.EchoHandler))
	defer echo.Close()

	from := &schema.LoadFrom{PodRef: schema.PodRef{Selector: "app=client", Namespace: l.ns}}
	res, err := l.tgt.Load.Load(l.ctx, schema.Load{URL: echo.URL + "/echo?status=503:30", From: from, Connections: 2, Requests: 40})
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 40 || res.Codes["200"]+res.Codes["503"] != 40 || res.Codes["503"] == 0 || res.Connections != 2 {
		t.Errorf("load result: requests %v codes %v connections %v", res.Requests, res.Codes, res.Connections)
	}
	if !strings.Contains(string(res.Raw), `"RunType": "HTTP"`) && !strings.Contains(string(res.Raw), `"RunType":"HTTP"`) {
		t.Errorf("Raw is not fortio's JSON: %.200s", res.Raw)
	}
	// At a fixed qps fortio lowers connections to requests/2: the warning says so.
	res, err = l.tgt.Load.Load(l.ctx, schema.Load{URL: echo.URL + "/echo", From: from, Connections: 10, Requests: 10, QPS: 200})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Warnings) == 0 || res.Connections != 5 {
		t.Errorf("lowered connections: connections %v warnings %q", res.Connections, res.Warnings)
	}

	// Cancelling stops the load at once.
	ctx, cancel := context.WithCancel(l.ctx)
	time.AfterFunc(1500*time.Millisecond, cancel)
	start := time.Now()
	_, err = l.tgt.Load.Load(ctx, schema.Load{URL: echo.URL + "/echo", From: from, Duration: schema.Duration(30 * time.Second), QPS: 20})
	if !errors.Is(err, context.Canceled) || time.Since(start) > 10*time.Second {
		t.Errorf("cancelled load: %v after %v", err, time.Since(start))
	}
}

// statsFixture is the stats of the backend cluster and of clusters a substring filter would also
// match (another namespace's backend, another port), as a sidecar prints them (Istio >= 1.25
// names, ";." after the cluster name). FIXTURE: not Envoy's output.
func statsFixture(ns string, overflow int) string {
	c := "cluster.outbound|8080||backend." + ns + ".svc.cluster.local;."
	return fmt.Sprintf(`# counters
%[1]supstream_rq_total: 30
%[1]supstream_rq_pending_overflow: %[2]d
cluster.outbound|8080||backend.other-%[3]s.svc.cluster.local;.upstream_rq_pending_overflow: 999
cluster.outbound|80||backend.%[3]s.svc.cluster.local;.upstream_rq_pending_overflow: 998
# gauges
%[1]scircuit_breakers.default.rq_pending_open: 1
%[1]supstream_cx_active: 1
# histograms
%[1]supstream_rq_time: P0(nan,1) P25(nan,2) P50(nan,5) P75(nan,8) P90(nan,10) P95(nan,11) P99(nan,12) P99.5(nan,12) P99.9(nan,12) P100(nan,12)
`, c, overflow, ns)
}

// Snapshot through the sandbox's Envoy admin stand-in: the stats and clusters are FIXTURES (this
// proves labrun's exec, scoping and parsing, not Envoy's counters).
func TestE2ESnapshotStandInFixtures(t *testing.T) {
	for _, via := range []string{EnvoyViaExec} {
		t.Run(via, func(t *testing.T) {
			l := newLab(t, "e2e-snapshot-"+via, func(o *Options) { o.EnvoyVia = via })
			l.apply([]schema.Object{deployment("client", 1, "app", "istio-proxy")}, "client")
			cluster := "outbound|8080||backend." + l.ns + ".svc.cluster.local"
			l.sb.EnvoyStandIn(t, l.ns, "client",
				sandbox.StatsFixture(statsFixture(l.ns, 0)), sandbox.StatsFixture(statsFixture(l.ns, 12)),
				sandbox.Fixture{Path: "clusters?format=json", Body: `{"cluster_statuses":[{"name":"` + cluster + `","host_statuses":[
					{"address":{"socket_address":{"address":"10.0.0.7","port_value":8080}},
					 "stats":[{"name":"cx_active","type":"GAUGE","value":"1"},{"name":"rq_total","value":"30"}],
					 "health_status":{"eds_health_status":"HEALTHY"}}]}]}`})
			req := schema.Snapshot{Envoy: &schema.PodRef{Selector: "app=client", Namespace: l.ns}, Cluster: cluster, Hosts: true, Histograms: true}
			before, err := l.tgt.Stats.Snapshot(l.ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			after, err := l.tgt.Stats.Snapshot(l.ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if before.Source != req.Source() {
				t.Errorf("source %q", before.Source)
			}
			if before.Counters["upstream_rq_pending_overflow"] != 0 || after.Counters["upstream_rq_pending_overflow"] != 12 || len(after.Counters) != 2 {
				t.Errorf("counters before %v after %v (the other clusters' 999 and 998 must not leak in)", before.Counters, after.Counters)
			}
			if _, ok := after.Counters["circuit_breakers.default.rq_pending_open"]; ok {
				t.Errorf("a gauge among the counters: %v", after.Counters)
			}
			if after.Gauges["circuit_breakers.default.rq_pending_open"] != 1 || len(after.Gauges) != 2 {
				t.Errorf("gauges %v", after.Gauges)
			}
			if after.Histograms["upstream_rq_time.p99"] != 12 {
				t.Errorf("histograms %v", after.Histograms)
			}
			if len(after.Hosts) != 1 || after.Hosts[0].CxActive != 1 || after.Hosts[0].RqTotal != 30 {
				t.Errorf("hosts %+v", after.Hosts)
			}
			var names []string
			for _, a := range after.Artifacts {
				names = append(names, a.Name)
			}
			if !slices.Equal(names, []string{"stats-counters.txt", "stats-gauges.txt", "stats-histograms.txt", "clusters.json"}) {
				t.Errorf("artifacts %v", names)
			}
		})
	}
}

// Envoy admin through a port-forward to the pod's port 15000, which kwok forwards to a test HTTP
// server on 127.0.0.1 answering with FIXTURE stats (not Envoy's).
func TestE2ESnapshotPortForwardFixtures(t *testing.T) {
	l := newLab(t, "e2e-snapshot-pf", func(o *Options) { o.EnvoyVia = EnvoyViaPortForward })
	l.apply([]schema.Object{deployment("client", 1, "app", "istio-proxy")}, "client")
	pod := l.onePod("client")
	fixture := statsFixture(l.ns, 7)
	section := func(name string) string {
		_, rest, _ := strings.Cut(fixture, "# "+name+"\n")
		body, _, _ := strings.Cut(rest, "# ")
		return body
	}
	var paths []string
	admin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths = append(paths, r.URL.RequestURI())
		if r.URL.Path != "/stats" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, section(strings.ToLower(r.URL.Query().Get("type"))))
	}))
	defer admin.Close()
	port := admin.Listener.Addr().(*net.TCPAddr).Port
	l.apply([]schema.Object{{"apiVersion": "kwok.x-k8s.io/v1alpha1", "kind": "PortForward", "metadata": map[string]any{"name": pod},
		"spec": map[string]any{"forwards": []any{map[string]any{"ports": []any{adminPort},
			"target": map[string]any{"address": "127.0.0.1", "port": port}}}}}})
	cluster := "outbound|8080||backend." + l.ns + ".svc.cluster.local"
	var snap schema.StatsSnapshot
	var err error
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		// kwok picks the PortForward up a moment after it is applied.
		snap, err = l.tgt.Stats.Snapshot(l.ctx, schema.Snapshot{Envoy: &schema.PodRef{Pod: pod, Namespace: l.ns}, Cluster: cluster})
		if err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	if snap.Counters["upstream_rq_pending_overflow"] != 7 || snap.Gauges["circuit_breakers.default.rq_pending_open"] != 1 ||
		len(snap.Counters) != 2 || len(snap.Gauges) != 2 {
		t.Errorf("counters %v gauges %v", snap.Counters, snap.Gauges)
	}
	want := "/stats?filter=" + url.QueryEscape(envoy.StatsFilter(cluster))
	for _, p := range paths {
		if !strings.HasPrefix(p, want) {
			t.Errorf("admin path %q, want prefix %q", p, want)
		}
	}
}

// Config reads istiod's REAL translation of a DestinationRule (through the stand-in, which asks
// istiod over xDS as the pod; istio.io/istio master 2026-08-27).
func TestE2EConfigRealIstiod(t *testing.T) {
	l := newLab(t, "e2e-config")
	svc := schema.Object{"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"name": "backend"},
		"spec": map[string]any{"selector": map[string]any{"app": "backend"},
			"ports": []any{map[string]any{"name": "http", "port": 8080, "targetPort": 8080}}}}
	dr := schema.Object{"apiVersion": "networking.istio.io/v1", "kind": "DestinationRule", "metadata": map[string]any{"name": "backend"},
		"spec": map[string]any{"host": "backend", "trafficPolicy": map[string]any{"connectionPool": map[string]any{
			"tcp": map[string]any{"maxConnections": 1}, "http": map[string]any{"http1MaxPendingRequests": 1}}}}}
	l.apply([]schema.Object{svc, deployment("backend", 1, "app", "istio-proxy"), deployment("client", 1, "app", "istio-proxy"), dr}, "backend", "client")
	cluster := "outbound|8080||backend." + l.ns + ".svc." + l.tgt.Values["clusterDomain"].(string)
	req := schema.Config{Envoy: &schema.PodRef{Selector: "app=client", Namespace: l.ns}, Cluster: cluster, Path: "circuit_breakers.thresholds.0"}
	var res schema.ConfigResult
	var err error
	deadline := time.Now().Add(60 * time.Second)
	for {
		res, err = l.tgt.Stats.Config(l.ctx, req)
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Second) // istiod pushes the DR a little after it is applied
	}
	if err != nil {
		t.Fatal(err)
	}
	th, _ := res.Value.(map[string]any)
	if th["max_connections"] != float64(1) || th["max_pending_requests"] != float64(1) || th["max_requests"] != float64(4294967295) {
		t.Errorf("circuit breaker thresholds %v", res.Value)
	}
	if len(res.Artifacts) == 0 {
		t.Error("no config_dump artifact")
	}
	req.Path = "connect_timeout"
	if res, err := l.tgt.Stats.Config(l.ctx, req); err != nil || res.Value != "10s" {
		t.Errorf("connect_timeout = %v, %v", res.Value, err)
	}
}

// Container logs as kwok serves them (a local file in CRI format); lines are filtered by their
// timestamps below the API's one-second sinceTime.
func TestE2ELogs(t *testing.T) {
	l := newLab(t, "e2e-logs")
	l.apply([]schema.Object{deployment("client", 1, "app", "istio-proxy")}, "client")
	pod := l.onePod("client")
	l.sb.WriteContainerLog(t, l.ns, pod, "istio-proxy", `[2026-07-05T10:00:00.000Z] "GET /echo HTTP/1.1" 200 - via_upstream`)
	time.Sleep(20 * time.Millisecond)
	mark := time.Now()
	time.Sleep(20 * time.Millisecond)
	l.sb.WriteContainerLog(t, l.ns, pod, "istio-proxy",
		`[2026-07-05T10:00:01.000Z] "GET /echo HTTP/1.1" 503 UO upstream_reset_before_response_started{overflow}`,
		`second line`)
	lines, err := schema.ReadLogs(l.ctx, l.tgt.Logs, schema.Logs{PodRef: schema.PodRef{Selector: "app=client", Namespace: l.ns}}, mark)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, ln := range lines {
		texts = append(texts, ln.Text)
		if ln.Time.Before(mark) {
			t.Errorf("line from before the mark: %v %q", ln.Time, ln.Text)
		}
	}
	want := []string{`[2026-07-05T10:00:01.000Z] "GET /echo HTTP/1.1" 503 UO upstream_reset_before_response_started{overflow}`, "second line"}
	if !slices.Equal(texts, want) {
		t.Errorf("logs since the mark = %q, want %q", texts, want)
	}
	all, err := schema.ReadLogs(l.ctx, l.tgt.Logs, schema.Logs{PodRef: schema.PodRef{Pod: pod, Namespace: l.ns}}, time.Time{})
	if err != nil || len(all) != 3 {
		t.Errorf("all logs: %d lines, %v", len(all), err)
	}
}

// TestE2ELogsOfAPodThatCameAndWent: against the sandbox's real API server, whose watch the
// mark starts from its list's resource version, a pod the selector matched only after the
// mark, which ran and was deleted before the read, makes the read err, naming it: read from
// the pods there at the read alone, "no 503 since the mark" passed over what it logged.
func TestE2ELogsOfAPodThatCameAndWent(t *testing.T) {
	l := newLab(t, "e2e-logs-went")
	pod := func(name string) *corev1.Pod {
		grace := int64(0)
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"tier": "logs"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "istio-proxy", Image: "fake"}}, TerminationGracePeriodSeconds: &grace}}
	}
	running := func(name string) {
		t.Helper()
		for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
			p, err := l.cs.CoreV1().Pods(l.ns).Get(l.ctx, name, metav1.GetOptions{})
			if err == nil && len(p.Status.ContainerStatuses) > 0 && p.Status.ContainerStatuses[0].State.Running != nil {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("pod %s not running in 60 s: %v", name, err)
			}
		}
	}
	if _, err := l.cs.CoreV1().Pods(l.ns).Create(l.ctx, pod("steady"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	running("steady")
	ref := schema.PodRef{Selector: "tier=logs", Namespace: l.ns}
	mark, err := l.d.MarkPods(l.ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	defer mark.Since.Stop()
	markTime := time.Now()
	if _, err := l.cs.CoreV1().Pods(l.ns).Create(l.ctx, pod("ghost"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	running("ghost")
	if err := l.cs.CoreV1().Pods(l.ns).Delete(l.ctx, "ghost", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if _, err := l.cs.CoreV1().Pods(l.ns).Get(l.ctx, "ghost", metav1.GetOptions{}); apierrors.IsNotFound(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("pod ghost not gone in 60 s")
		}
	}
	time.Sleep(time.Second) // the watch's events reach the mark a moment after the API server sends them
	err = l.d.Logs(l.ctx, schema.Logs{PodRef: ref}, schema.LogSince{Time: markTime, Pods: &mark}, func(schema.LogLine) {})
	if want := l.ns + "/ghost came after the mark and was deleted since"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("the read: %v, want an error with %q", err, want)
	}
	if lost := mark.Since.Lost(); lost != "" {
		t.Errorf("the watch was lost: %s", lost)
	}
}

// The writer container is kwok-exec'd locally against a temp hosts file: flipping one host name
// leaves the other's line byte for byte.
func TestE2EDNS(t *testing.T) {
	l := newLab(t, "e2e-dns")
	l.apply([]schema.Object{deployment("dns", 1, "coredns", "writer")}, "dns")
	hosts := filepath.Join(t.TempDir(), "addn")
	other := "10.9.9.9\tother.lab.internal   # untouched, tabs and all\n"
	if err := os.WriteFile(hosts, []byte("10.0.0.1 gslb.lab.internal\n"+other), 0o644); err != nil {
		t.Fatal(err)
	}
	server := &schema.HostsFile{PodRef: schema.PodRef{Selector: "app=dns", Container: "writer", Namespace: l.ns}, File: hosts}
	if err := l.tgt.DNS.SetRecords(l.ctx, schema.DNS{Host: "gslb.lab.internal", Addresses: []string{"10.0.0.2"}, Server: server}); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(hosts)
	if string(got) != "10.0.0.2 gslb.lab.internal\n"+other {
		t.Errorf("hosts file after the flip:\n%s", got)
	}
	entries, _ := os.ReadDir(filepath.Dir(hosts))
	if len(entries) != 1 {
		t.Errorf("temp files left behind: %v", entries)
	}
	// A file that does not exist yet is created.
	fresh := filepath.Join(t.TempDir(), "new-hosts")
	server.File = fresh
	if err := l.tgt.DNS.SetRecords(l.ctx, schema.DNS{Host: "a.lab", Addresses: []string{"10.0.0.3", "10.0.0.4"}, Server: server}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(fresh); string(got) != "10.0.0.3 a.lab\n10.0.0.4 a.lab\n" {
		t.Errorf("new hosts file:\n%s", got)
	}
	if err := l.tgt.DNS.SetRecords(l.ctx, schema.DNS{Host: "a.lab", Addresses: []string{"not-an-ip"}, Server: server}); err == nil {
		t.Error("a bad address was written")
	}
}

// The API server validates against Istio's real CRD schemas (istio.io/api v1.30.8).
func TestE2EDryRunRejectsMisspelledField(t *testing.T) {
	l := newLab(t, "e2e-dryrun")
	dr := func(name string, http map[string]any) schema.Object {
		return schema.Object{"apiVersion": "networking.istio.io/v1", "kind": "DestinationRule", "metadata": map[string]any{"name": name},
			"spec": map[string]any{"host": "backend", "trafficPolicy": map[string]any{"connectionPool": map[string]any{"http": http}}}}
	}
	good := dr("good", map[string]any{"http1MaxPendingRequests": 1})
	bad := dr("bad", map[string]any{"http1MaxPendingReqs": 1})
	if err := l.tgt.Cluster.DryRun(l.ctx, []schema.Object{good}, nil, l.ns); err != nil {
		t.Errorf("valid DestinationRule rejected: %v", err)
	}
	err := l.tgt.Cluster.DryRun(l.ctx, []schema.Object{good, bad, dr("bad2", map[string]any{"maxRetriez": 1})}, nil, l.ns)
	if err == nil {
		t.Fatal("misspelled fields accepted")
	}
	for _, want := range []string{"DestinationRule e2e-dryrun/bad ", "http1MaxPendingReqs", "DestinationRule e2e-dryrun/bad2 ", "maxRetriez"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("dry-run error lacks %q: %v", want, err)
		}
	}
	t.Logf("dry-run rejections: %v", err)
	// Nothing was persisted.
	if _, err := l.tgt.Cluster.Get(l.ctx, schema.Get{Kind: "DestinationRule", Name: "good", Namespace: l.ns}); !apierrors.IsNotFound(errors.Unwrap(err)) && !strings.Contains(fmt.Sprint(err), "not found") {
		t.Errorf("dry run persisted the object: %v", err)
	}
	// A namespace that does not exist yet: validated in "default".
	if err := l.tgt.Cluster.DryRun(l.ctx, []schema.Object{bad}, nil, "e2e-not-yet"); err == nil || !strings.Contains(err.Error(), "http1MaxPendingReqs") {
		t.Errorf("dry run in a namespace to be created: %v", err)
	}
}

// The driver refuses mutations outside the allowed namespaces even when called directly.
func TestE2EGuardRefusesOtherNamespaces(t *testing.T) {
	l := newLab(t, "e2e-guard", func(o *Options) { o.ClusterScoped = false })
	other := "e2e-guard-other"
	if _, err := l.cs.CoreV1().Namespaces().Get(l.ctx, other, metav1.GetOptions{}); err == nil {
		t.Fatalf("namespace %s exists", other)
	}
	cm := schema.Object{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "x", "namespace": other}}
	_, err := l.tgt.Cluster.Apply(l.ctx, []schema.Object{namespace(other), cm}, nil, l.ns)
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), `namespace "e2e-guard-other" is not one of the allowed namespaces (e2e-guard)`) {
		t.Errorf("apply in another namespace: %v", err)
	}
	if _, err := l.cs.CoreV1().Namespaces().Get(l.ctx, other, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("namespace %s was created: %v", other, err)
	}
	crd := schema.Object{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": map[string]any{"name": "x.y.z"}}
	if _, err := l.tgt.Cluster.Apply(l.ctx, []schema.Object{crd}, nil, l.ns); !errors.Is(err, ErrRefused) {
		t.Errorf("cluster-scoped apply without clusterScoped: %v", err)
	}
	checks := map[string]error{
		"delete kube-system":     l.tgt.Cluster.Delete(l.ctx, []schema.ObjectRef{{APIVersion: "v1", Kind: "Namespace", Name: "kube-system"}}, false),
		"delete in istio-system": l.tgt.Cluster.Delete(l.ctx, []schema.ObjectRef{{APIVersion: "v1", Kind: "ConfigMap", Namespace: "istio-system", Name: "istio"}}, false),
		"scale":                  l.tgt.Cluster.Scale(l.ctx, "kube-system", "coredns", 0, false),
		"restart":                l.tgt.Cluster.Restart(l.ctx, "default", "web", false),
	}
	_, checks["kill"] = l.tgt.Cluster.KillPods(l.ctx, schema.Kill{Selector: "app=x", Namespace: "default"})
	for name, err := range checks {
		if !errors.Is(err, ErrRefused) {
			t.Errorf("%s: %v, want a refusal", name, err)
		}
	}
	if _, err := l.cs.CoreV1().Namespaces().Get(l.ctx, "kube-system", metav1.GetOptions{}); err != nil {
		t.Errorf("kube-system: %v", err)
	}
}

// The cluster domain comes from the CoreDNS Corefile when there is one.
func TestE2EClusterDomain(t *testing.T) {
	l := newLab(t, "e2e-domain")
	if d := l.tgt.Values["clusterDomain"]; d != "cluster.local" {
		t.Errorf("clusterDomain without a coredns ConfigMap = %v", d)
	}
	if _, err := l.cs.CoreV1().ConfigMaps("kube-system").Get(l.ctx, "coredns", metav1.GetOptions{}); err == nil {
		t.Skip("the sandbox has a coredns ConfigMap of its own")
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "coredns", Namespace: "kube-system"},
		Data: map[string]string{"Corefile": ".:53 {\n  kubernetes lab.example in-addr.arpa ip6.arpa {\n  }\n}\n"}}
	if _, err := l.cs.CoreV1().ConfigMaps("kube-system").Create(l.ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = l.cs.CoreV1().ConfigMaps("kube-system").Delete(context.Background(), "coredns", metav1.DeleteOptions{})
	})
	tgt, err := New(l.ctx, Options{Kubeconfig: l.sb.Kubeconfig, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	if d := tgt.Values["clusterDomain"]; d != "lab.example" {
		t.Errorf("clusterDomain = %v, want lab.example", d)
	}
	if !strings.HasPrefix(tgt.Describe, "context ") || !strings.Contains(tgt.Describe, " server https://127.0.0.1:") {
		t.Errorf("Describe = %q", tgt.Describe)
	}
}
