package kube

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"labrun.dev/labrun/envoy"
	"labrun.dev/labrun/schema"
)

func TestRolloutStatus(t *testing.T) {
	three := int32(3)
	dep := func(gen, observed int64, st appsv1.DeploymentStatus, conds ...appsv1.DeploymentCondition) *appsv1.Deployment {
		st.ObservedGeneration = observed
		st.Conditions = conds
		return &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "backend", Generation: gen},
			Spec:       appsv1.DeploymentSpec{Replicas: &three},
			Status:     st,
		}
	}
	tests := []struct {
		name    string
		d       *appsv1.Deployment
		done    bool
		waiting string
		err     bool
	}{
		{"spec not observed", dep(2, 1, appsv1.DeploymentStatus{Replicas: 3, UpdatedReplicas: 3, AvailableReplicas: 3}),
			false, "not observed the latest spec", false},
		{"progress deadline", dep(2, 2, appsv1.DeploymentStatus{}, appsv1.DeploymentCondition{
			Type: appsv1.DeploymentProgressing, Reason: "ProgressDeadlineExceeded", Message: "ReplicaSet has timed out"}),
			false, "", true},
		{"not all updated", dep(2, 2, appsv1.DeploymentStatus{Replicas: 3, UpdatedReplicas: 1, AvailableReplicas: 3}),
			false, "1 out of 3 new replicas have been updated", false},
		{"old replicas terminating", dep(2, 2, appsv1.DeploymentStatus{Replicas: 4, UpdatedReplicas: 3, AvailableReplicas: 3}),
			false, "1 old replicas are pending termination", false},
		{"not available", dep(2, 2, appsv1.DeploymentStatus{Replicas: 3, UpdatedReplicas: 3, AvailableReplicas: 2}),
			false, "2 of 3 updated replicas are available", false},
		{"done", dep(2, 2, appsv1.DeploymentStatus{Replicas: 3, UpdatedReplicas: 3, AvailableReplicas: 3}),
			true, "", false},
		{"done although observed is ahead", dep(2, 3, appsv1.DeploymentStatus{Replicas: 3, UpdatedReplicas: 3, AvailableReplicas: 3}),
			true, "", false},
		{"progressing but fine", dep(1, 1, appsv1.DeploymentStatus{Replicas: 3, UpdatedReplicas: 3, AvailableReplicas: 3},
			appsv1.DeploymentCondition{Type: appsv1.DeploymentProgressing, Reason: "NewReplicaSetAvailable"}),
			true, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			done, waiting, err := rolloutStatus(tt.d)
			if done != tt.done || (err != nil) != tt.err || !strings.Contains(waiting, tt.waiting) {
				t.Errorf("rolloutStatus = %v, %q, %v; want %v, %q, error %v", done, waiting, err, tt.done, tt.waiting, tt.err)
			}
			if tt.err && !errors.Is(err, errProgressDeadline) {
				t.Errorf("error %v does not wrap errProgressDeadline", err)
			}
		})
	}
	t.Run("scaled to zero", func(t *testing.T) {
		zero := int32(0)
		d := dep(3, 3, appsv1.DeploymentStatus{})
		d.Spec.Replicas = &zero
		if done, waiting, err := rolloutStatus(d); !done || err != nil {
			t.Errorf("rolloutStatus = %v, %q, %v; want done", done, waiting, err)
		}
	})
}

func TestCorefileDomain(t *testing.T) {
	tests := []struct {
		corefile string
		want     string
		ok       bool
	}{
		{`.:53 {
    errors
    health { lameduck 5s }
    kubernetes cluster.local in-addr.arpa ip6.arpa {
       pods insecure
       fallthrough in-addr.arpa ip6.arpa
    }
    forward . /etc/resolv.conf
}`, "cluster.local", true},
		{"kubernetes in-addr.arpa ip6.arpa corp.example. {\n}", "corp.example", true},
		{"  kubernetes lab.internal{\n}", "lab.internal", true},
		{"# kubernetes commented.out {\n.:53 {\n  forward . 8.8.8.8\n}", "", false},
		{"kubernetes {\n}", "", false},
		{"", "", false},
	}
	for _, tt := range tests {
		got, ok := corefileDomain(tt.corefile)
		if got != tt.want || ok != tt.ok {
			t.Errorf("corefileDomain(%q) = %q, %v; want %q, %v", tt.corefile, got, ok, tt.want, tt.ok)
		}
	}
}

func TestGuard(t *testing.T) {
	g := newGuard([]string{"conn-lab", "dns-lab", "conn-lab"}, false)
	tests := []struct {
		name                        string
		kind, group, namespace, obj string
		namespaced                  bool
		ok                          bool
	}{
		{"namespaced in allowed", "DestinationRule", "networking.istio.io", "conn-lab", "backend", true, true},
		{"namespaced elsewhere", "DestinationRule", "networking.istio.io", "istio-system", "backend", true, false},
		{"namespaced without namespace", "Pod", "", "", "p", true, false},
		{"allowed Namespace object", "Namespace", "", "", "dns-lab", false, true},
		{"other Namespace object", "Namespace", "", "", "kube-system", false, false},
		{"cluster-scoped without clusterScoped", "CustomResourceDefinition", "apiextensions.k8s.io", "", "x.lab.io", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := g.object("apply", tt.kind, tt.group, tt.namespace, tt.obj, tt.namespaced)
			if (err == nil) != tt.ok {
				t.Fatalf("guard.object = %v, want ok=%v", err, tt.ok)
			}
			if err != nil && !errors.Is(err, ErrRefused) {
				t.Errorf("error %v does not wrap ErrRefused", err)
			}
			var nt schema.NotTested
			if err != nil && !errors.As(err, &nt) {
				t.Errorf("error %v is no schema.NotTested", err)
			}
		})
	}
	cs := newGuard([]string{"lab"}, true)
	if err := cs.object("apply", "ClusterRole", "rbac.authorization.k8s.io", "", "r", false); err != nil {
		t.Errorf("clusterScoped: %v", err)
	}
	if err := cs.object("delete", "Namespace", "", "", "kube-system", false); err == nil {
		t.Error("clusterScoped must not allow deleting an unlisted Namespace")
	}
	err := newGuard(nil, false).namespace("scale deployment x/y", "x")
	if err == nil || !strings.Contains(err.Error(), "none: the scenario lists no namespaces") {
		t.Errorf("empty guard: %v", err)
	}
}

// The driver refuses before it calls the API: its clients are nil here, so any call would panic.
func TestDriverRefusesOutsideAllowedNamespaces(t *testing.T) {
	d := &driver{namespace: "default", guard: newGuard([]string{"lab"}, false), logf: t.Logf,
		opts: Options{WaitTimeout: time.Second, RequestTimeout: time.Second}}
	ctx := context.Background()
	checks := map[string]error{
		"scale":                          d.Scale(ctx, "prod", "web", 0, true),
		"scale in the default namespace": d.Scale(ctx, "", "web", 0, true),
		"restart":                        d.Restart(ctx, "prod", "web", true),
		"dns": d.SetRecords(ctx, schema.DNS{Host: "a.lab", Addresses: []string{"1.1.1.1"},
			Server: &schema.HostsFile{PodRef: schema.PodRef{Pod: "dns", Namespace: "prod"}}}),
	}
	_, checks["kill"] = d.KillPods(ctx, schema.Kill{Selector: "app=web", Namespace: "prod"})
	for name, err := range checks {
		if !errors.Is(err, ErrRefused) {
			t.Errorf("%s: got %v, want a refusal", name, err)
		}
		// The step did nothing: expectFail must not take the refusal for its failure.
		var nt schema.NotTested
		if !errors.As(err, &nt) {
			t.Errorf("%s: the refusal %v is no schema.NotTested", name, err)
		}
	}
}

func TestDecodeObjects(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "lab.yaml")
	yaml := `---
# only a comment: an empty document
---
apiVersion: v1
kind: Namespace
metadata: {name: lab}
---
---
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: one}
  data: {a: "1"}
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: two, namespace: other}
`
	if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	jsonFile := filepath.Join(dir, "dep.json")
	if err := os.WriteFile(jsonFile, []byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"replicas":2}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cue := []schema.Object{{
		"apiVersion": "networking.istio.io/v1", "kind": "DestinationRule",
		"metadata": map[string]any{"name": "backend"},
		"spec":     map[string]any{"host": "backend", "trafficPolicy": map[string]any{"connectionPool": map[string]any{"tcp": map[string]any{"maxConnections": 1}}}},
	}}
	objs, err := decodeObjects(cue, []string{file, jsonFile})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range objs {
		got = append(got, o.u.GetKind()+" "+o.u.GetNamespace()+"/"+o.u.GetName()+" @ "+strings.TrimPrefix(o.source, dir+"/"))
	}
	want := []string{
		"DestinationRule /backend @ objects[0]",
		"Namespace /lab @ lab.yaml, line 4",
		"ConfigMap /one @ lab.yaml, line 9, item 1",
		"ConfigMap other/two @ lab.yaml, line 9, item 2",
		"Deployment /web @ dep.json, document 1",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("decoded\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// CUE's ints become the int64 unstructured content must hold (DeepCopy panics on int).
	mc := objs[0].u.DeepCopy().Object["spec"].(map[string]any)["trafficPolicy"].(map[string]any)["connectionPool"].(map[string]any)["tcp"].(map[string]any)["maxConnections"]
	if mc != int64(1) {
		t.Errorf("maxConnections = %#v, want int64(1)", mc)
	}

	_, err = decodeObjects([]schema.Object{{"kind": "Pod", "metadata": map[string]any{}}}, nil)
	if err == nil || !strings.Contains(err.Error(), "objects[0]: missing apiVersion, metadata.name") {
		t.Errorf("missing fields: %v", err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n---\n- just\n- a list\n"), 0o644)
	if _, err := decodeObjects(nil, []string{bad}); err == nil || !strings.Contains(err.Error(), "bad.yaml: line 5: not an object") {
		t.Errorf("bad document: %v", err)
	}
	// A file of no object (its object commented out, only --- lines, an empty List): an apply
	// or a delete of it did nothing, and said nothing.
	for name, text := range map[string]string{
		"commented.yaml": "# apiVersion: v1\n# kind: ConfigMap\n",
		"dashes.yaml":    "---\n---\n",
		"emptylist.yaml": "apiVersion: v1\nkind: List\nitems: []\n",
	} {
		f := filepath.Join(dir, name)
		os.WriteFile(f, []byte(text), 0o644)
		if _, err := decodeObjects(nil, []string{file, f}); err == nil || !strings.Contains(err.Error(), name+" holds no object") {
			t.Errorf("%s: %v, want it to hold no object", name, err)
		}
	}
}

func TestBatchCRDs(t *testing.T) {
	objs, err := decodeObjects([]schema.Object{{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "widgets.lab.example"},
		"spec": map[string]any{
			"group": "lab.example", "scope": "Cluster",
			"names":    map[string]any{"kind": "Widget", "plural": "widgets"},
			"versions": []any{map[string]any{"name": "v1"}, map[string]any{"name": "v2"}},
		},
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := batchCRDs(objs)
	want := crdInfo{name: "widgets.lab.example", plural: "widgets", namespaced: false, versions: []string{"v1", "v2"}}
	for gk, info := range got {
		if gk.Group != "lab.example" || gk.Kind != "Widget" || !reflect.DeepEqual(info, want) {
			t.Errorf("batchCRDs = %v: %+v", gk, info)
		}
	}
	if len(got) != 1 {
		t.Errorf("batchCRDs found %d CRDs", len(got))
	}
}

func TestFieldAt(t *testing.T) {
	pod := map[string]any{
		"metadata": map[string]any{"name": "p", "annotations": map[string]any{"kubectl.kubernetes.io/restartedAt": "now"}},
		"spec":     map[string]any{"containers": []any{map[string]any{"name": "app", "ports": []any{map[string]any{"containerPort": int64(8080)}}}}},
		"status":   map[string]any{"podIP": "10.0.0.7"},
	}
	tests := []struct {
		path string
		want any
	}{
		{"status.podIP", "10.0.0.7"},
		{"spec.containers.0.name", "app"},
		{"spec.containers[0].ports.0.containerPort", float64(8080)},
		{`metadata.annotations."kubectl.kubernetes.io/restartedAt"`, "now"},
		{`metadata.annotations.kubectl.kubernetes.io/restartedAt`, "now"},
	}
	for _, tt := range tests {
		got, err := fieldAt(pod, tt.path)
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("fieldAt(%q) = %#v, %v; want %#v", tt.path, got, err, tt.want)
		}
	}
	whole, err := fieldAt(pod, "")
	if err != nil || whole.(map[string]any)["status"].(map[string]any)["podIP"] != "10.0.0.7" {
		t.Errorf("fieldAt(\"\") = %v, %v", whole, err)
	}
	_, err = fieldAt(pod, "status.hostIP")
	if !errors.Is(err, envoy.ErrNotFound) || !strings.Contains(err.Error(), "podIP") {
		t.Errorf("missing field: %v (want ErrNotFound naming the fields there)", err)
	}
	if err := checkPath("status..podIP"); err == nil {
		t.Error("checkPath accepted an empty segment")
	}
	if err := checkPath("status.podIP"); err != nil {
		t.Errorf("checkPath: %v", err)
	}
}

func TestParseLogs(t *testing.T) {
	mark := time.Date(2026, 7, 5, 10, 0, 0, 500_000_000, time.UTC)
	since := schema.LogSince{Time: mark}
	in := "2026-07-05T10:00:00.100000000Z before the mark\n" +
		"2026-07-05T10:00:00.4Z before the mark, its tenth too\n" +
		"2026-07-05T10:00:00.500000000Z at the mark\n" +
		"2026-07-05T10:00:01.000000001Z [2026-07-05T10:00:01.000Z] \"GET /echo HTTP/1.1\" 503 UO\r\n" +
		"2026-07-05T10:00:02Z \n" +
		"2026-07-05T10:00:03.000000000Z no newline at the end"
	var got []schema.LogLine
	if err := parseLogs(context.Background(), strings.NewReader(in), since, func(l schema.LogLine) { got = append(got, l) }); err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, l := range got {
		texts = append(texts, l.Text)
	}
	want := []string{"at the mark", `[2026-07-05T10:00:01.000Z] "GET /echo HTTP/1.1" 503 UO`, "", "no newline at the end"}
	if !reflect.DeepEqual(texts, want) {
		t.Errorf("parseLogs = %q, want %q", texts, want)
	}
	if !got[0].Time.Equal(mark) {
		t.Errorf("time = %v, want %v", got[0].Time, mark)
	}
	// A time is as precise as it is written: "10:00:00Z" may be after a mark at 10:00:00.5.
	got = nil
	if err := parseLogs(context.Background(), strings.NewReader("2026-07-05T10:00:00Z ERROR\n"), since, func(l schema.LogLine) { got = append(got, l) }); err != nil || len(got) != 1 {
		t.Errorf("a whole-second line in the mark's second: %q %v, want it read", got, err)
	}
	// A line longer than maxLogLine comes in pieces of at most that.
	long := "2026-07-05T10:00:04Z " + strings.Repeat("x", 3*schema.MaxLine) + "\n2026-07-05T10:00:05Z after\n"
	got = nil
	if err := parseLogs(context.Background(), strings.NewReader(long), since, func(l schema.LogLine) { got = append(got, l) }); err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, l := range got[:len(got)-1] {
		if len(l.Text) > schema.MaxLine {
			t.Errorf("a piece of %d bytes", len(l.Text))
		}
		total += len(l.Text)
	}
	if last := got[len(got)-1]; last.Text != "after" || total < 3*schema.MaxLine {
		t.Errorf("pieces of %d bytes, then %q", total, last.Text)
	}
}

func TestPodChoice(t *testing.T) {
	ready := func(name string, ok bool) corev1.Pod {
		st := corev1.ConditionFalse
		if ok {
			st = corev1.ConditionTrue
		}
		return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.PodStatus{
			Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: st}}}}
	}
	terminating := ready("client-a", true)
	terminating.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	pods := []corev1.Pod{ready("client-z", true), terminating, ready("client-b", false), ready("client-c", true)}
	if p := firstReady(pods); p == nil || p.Name != "client-c" {
		t.Errorf("firstReady = %v, want client-c", p)
	}
	if p := firstReady(pods[1:3]); p != nil {
		t.Errorf("firstReady = %s, want none", p.Name)
	}
	if s := notReadyPods(pods, 5); !strings.Contains(s, "client-a Terminating") || !strings.Contains(s, "client-b Running") {
		t.Errorf("notReadyPods = %q", s)
	}

	pod := func(annotation string, names ...string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{}}}
		if annotation != "" {
			p.Annotations["kubectl.kubernetes.io/default-container"] = annotation
		}
		for _, n := range names {
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: n})
		}
		return p
	}
	for _, tt := range []struct {
		p    *corev1.Pod
		want string
	}{
		{pod("", "istio-proxy", "fortio"), "fortio"},
		{pod("", "fortio", "istio-proxy"), "fortio"},
		{pod("app", "istio-proxy", "sidecar", "app"), "app"},
		{pod("gone", "istio-proxy", "sidecar"), "sidecar"},
		{pod("", "istio-proxy"), "istio-proxy"},
	} {
		if got := defaultContainer(tt.p); got != tt.want {
			t.Errorf("defaultContainer(%v) = %q, want %q", tt.p.Spec.Containers, got, tt.want)
		}
	}
}

func TestCaptureGroups(t *testing.T) {
	re := regexp.MustCompile(`inet (?P<ip>[0-9.]+)/(?P<bits>\d+)`)
	got := captureGroups(re, "lo\n  inet 127.0.0.1/8\neth0\n  inet 10.0.0.4/24\n")
	if !reflect.DeepEqual(got, map[string]string{"ip": "127.0.0.1", "bits": "8"}) {
		t.Errorf("captureGroups = %v", got)
	}
	if got := captureGroups(re, "nothing"); got != nil {
		t.Errorf("no match: %v", got)
	}
}

func TestSafeURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://127.0.0.1:6443":                    "https://127.0.0.1:6443",
		"https://user:secret@api.lab:6443/?token=x": "https://api.lab:6443/",
		"::not a url":                               "(server address not printable)",
	} {
		if got := safeURL(in); got != want {
			t.Errorf("safeURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestOptions(t *testing.T) {
	dir := t.TempDir()
	kc := filepath.Join(dir, "kubeconfig")
	os.WriteFile(kc, []byte(`apiVersion: v1
kind: Config
clusters:
- name: lab
  cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}
users:
- name: admin
  user: {token: very-secret-token}
contexts:
- name: lab
  context: {cluster: lab, user: admin, namespace: conn-lab}
- name: other
  context: {cluster: lab, user: admin}
current-context: lab
`), 0o600)
	env := func(string) string { return "" }
	d, describe, err := newDriver(Options{Kubeconfig: kc, Getenv: env})
	if err != nil {
		t.Fatal(err)
	}
	if describe != "context lab server https://127.0.0.1:1" || d.namespace != "conn-lab" {
		t.Errorf("describe %q, namespace %q", describe, d.namespace)
	}
	if d.cfg.QPS != 50 || d.cfg.Burst != 100 || d.cfg.Timeout != 30*time.Second || d.streamCfg.Timeout != 0 {
		t.Errorf("QPS %v burst %v timeout %v stream timeout %v", d.cfg.QPS, d.cfg.Burst, d.cfg.Timeout, d.streamCfg.Timeout)
	}
	d, describe, err = newDriver(Options{Kubeconfig: kc, Context: "other", Namespace: "x", Getenv: env})
	if err != nil || describe != "context other server https://127.0.0.1:1" || d.namespace != "x" {
		t.Errorf("other context: %q %q %v", describe, d.namespace, err)
	}
	if _, _, err := newDriver(Options{Kubeconfig: kc, EnvoyVia: "ssh", Getenv: env}); err == nil {
		t.Error("bad EnvoyVia accepted")
	}
	// Unreachable server: New fails, and neither the error nor the description has the token.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = New(ctx, Options{Kubeconfig: kc, Getenv: env, RequestTimeout: 2 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "cluster unreachable") {
		t.Errorf("New against a closed port: %v", err)
	}
	if err != nil && strings.Contains(err.Error(), "very-secret-token") {
		t.Errorf("error leaks the token: %v", err)
	}
}

// TestTidyMessage: a server-side apply rejection names the value written, not a Go literal.
func TestTidyMessage(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`failed to create typed patch object (lab/bad; /v1, Kind=ConfigMap): .data.foo: expected string, got &value.valueUnstructured{Value:true}`,
			`failed to create typed patch object (lab/bad; /v1, Kind=ConfigMap): .data.foo: expected string, got true`},
		{`.spec.replicas: expected numeric (int or float), got &value.valueUnstructured{Value:"two"}`,
			`.spec.replicas: expected numeric (int or float), got "two"`},
		{`no Go literal here`, `no Go literal here`},
	} {
		if got := tidyMessage(tc.in); got != tc.want {
			t.Errorf("tidyMessage(%q)\n = %q\nwant %q", tc.in, got, tc.want)
		}
	}
	err := fmt.Errorf("apply: %w", tidyError{errors.New("got &value.valueUnstructured{Value:1}")})
	if err.Error() != "apply: got 1" {
		t.Errorf("tidyError: %q", err)
	}
}

// TestKubeconfigErrors: a missing kubeconfig is named in the user's terms (KUBECONFIG,
// --kubeconfig), never as client-go's KUBERNETES_MASTER; a misspelled context gets the
// closest one.
func TestKubeconfigErrors(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("KUBECONFIG", "")
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	_, _, _, err := loadConfig(Options{Getenv: os.Getenv})
	if err == nil || !strings.Contains(err.Error(), "KUBECONFIG") || !strings.Contains(err.Error(), "--kubeconfig") || strings.Contains(err.Error(), "KUBERNETES_MASTER") {
		t.Errorf("no kubeconfig: %v", err)
	}
	kc := filepath.Join(home, "kc")
	os.WriteFile(kc, []byte("apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: \"https://127.0.0.1:1\"}}]\ncontexts: [{name: lab-one, context: {cluster: c, user: u}}]\nusers: [{name: u, user: {token: x}}]\ncurrent-context: lab-one\n"), 0o600)
	_, _, _, err = loadConfig(Options{Getenv: os.Getenv, Kubeconfig: kc, Context: "lab-onr"})
	if err == nil || !strings.Contains(err.Error(), `no context "lab-onr" (did you mean "lab-one"?)`) {
		t.Errorf("misspelled context: %v", err)
	}
	_, _, _, err = loadConfig(Options{Getenv: os.Getenv, Kubeconfig: filepath.Join(home, "none")})
	if err == nil || !strings.Contains(err.Error(), "--kubeconfig "+filepath.Join(home, "none")+": no such file") {
		t.Errorf("missing --kubeconfig file: %v", err)
	}
}
