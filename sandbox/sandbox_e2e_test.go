package sandbox_test

// End-to-end smoke test of the sandbox: the real Kubernetes control plane (v1.37.2), kwok v0.8.0, the
// real Istio CRDs (istio.io/api v1.30.8) and the real istiod, pilot-discovery built from
// istio.io/istio v0.0.0-20260827124520-eed52ebb66ad (Istio master of August 2026, 1.31 development).
// The circuit-breaker thresholds asserted below are what that istiod computes for the
// DestinationRule; the stats checked at the end are fixtures replayed by the Envoy admin stand-in,
// so they prove the fixture mechanics, not Envoy.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/streaming/pkg/httpstream"
	"sigs.k8s.io/yaml"

	"labrun.dev/labrun/sandbox"
)

func TestMain(m *testing.M) { sandbox.Main(m) }

const labNamespace = "conn-lab"

const labManifests = `
apiVersion: v1
kind: Namespace
metadata: {name: conn-lab}
---
apiVersion: v1
kind: Service
metadata: {name: backend, namespace: conn-lab}
spec:
  selector: {app: backend}
  ports: [{name: http, port: 8080, targetPort: 8080}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: backend, namespace: conn-lab}
spec:
  replicas: 2
  selector: {matchLabels: {app: backend}}
  template:
    metadata: {labels: {app: backend}}
    spec:
      containers:
      - {name: app, image: fortio/fortio, ports: [{containerPort: 8080}]}
      - {name: istio-proxy, image: istio/proxyv2}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: client, namespace: conn-lab}
spec:
  replicas: 1
  selector: {matchLabels: {app: client}}
  template:
    metadata: {labels: {app: client}}
    spec:
      containers:
      - {name: app, image: fortio/fortio}
      - {name: istio-proxy, image: istio/proxyv2}
`

const goodDR = `
apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: backend, namespace: conn-lab}
spec:
  host: backend
  trafficPolicy:
    connectionPool:
      tcp: {maxConnections: 1}
      http: {http1MaxPendingRequests: 1}
`

var drResource = schema.GroupVersionResource{Group: "networking.istio.io", Version: "v1", Resource: "destinationrules"}

func TestSandboxE2E(t *testing.T) {
	sb := sandbox.Start(t)
	ctx := t.Context()
	cs := kubernetes.NewForConfigOrDie(sb.RESTConfig)
	dyn := dynamic.NewForConfigOrDie(sb.RESTConfig)

	if err := sb.Apply(ctx, []byte(labManifests)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteNamespace(t, cs, labNamespace) })

	for _, name := range []string{"backend", "client"} {
		waitRollout(t, cs, labNamespace, name, 90*time.Second)
	}
	pods, err := cs.CoreV1().Pods(labNamespace).List(ctx, metav1.ListOptions{LabelSelector: "app=client"})
	if err != nil || len(pods.Items) != 1 {
		t.Fatalf("client pods: %v, %d", err, len(pods.Items))
	}
	client := pods.Items[0]
	if client.Status.PodIP == "" {
		t.Fatalf("client pod %s has no IP", client.Name)
	}
	t.Logf("client pod %s, IP %s", client.Name, client.Status.PodIP)

	t.Run("exec", func(t *testing.T) {
		out, stderr, err := podExec(ctx, sb.RESTConfig, cs, labNamespace, client.Name, "app",
			"sh", "-c", `echo "hello from $POD_NAMESPACE/$POD_NAME in $LABRUN_CONTAINER"; command -v pilot-agent; command -v fortio`)
		if err != nil {
			t.Fatalf("exec: %v (stderr %q)", err, stderr)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		want := fmt.Sprintf("hello from %s/%s in app", labNamespace, client.Name)
		if len(lines) != 3 || lines[0] != want {
			t.Fatalf("exec output %q, want first line %q and two paths", out, want)
		}
		if !strings.HasSuffix(lines[1], "/pilot-agent") || !strings.HasSuffix(lines[2], "/fortio") {
			t.Errorf("PATH does not lead to the stand-in and fortio: %q", lines[1:])
		}
	})

	t.Run("logs", func(t *testing.T) {
		line := `[2026-07-05T10:00:00.000Z] "GET / HTTP/1.1" 503 UO upstream_reset_before_response_started{overflow} - "-" 0 81 0 - "-" "fortio.org/fortio-1.66.5" "-" "backend:8080" "-" outbound|8080||backend.conn-lab.svc.cluster.local - 10.96.0.10:8080 10.0.0.5:40000 - default`
		sb.WriteContainerLog(t, labNamespace, client.Name, "istio-proxy", line)
		raw, err := cs.CoreV1().Pods(labNamespace).GetLogs(client.Name, &corev1.PodLogOptions{Container: "istio-proxy"}).DoRaw(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if strings.TrimSpace(string(raw)) != line {
			t.Fatalf("logs = %q, want %q", raw, line)
		}
	})

	t.Run("misspelled DestinationRule is rejected by Istio's CRD schema", func(t *testing.T) {
		bad := strings.Replace(goodDR, "http1MaxPendingRequests", "http1MaxPendingReqs", 1)
		err := sb.Apply(ctx, []byte(bad))
		if err == nil || !strings.Contains(err.Error(), "http1MaxPendingReqs") {
			t.Fatalf("server-side apply of a misspelled DR: err = %v, want a rejection naming http1MaxPendingReqs", err)
		}
		// kubectl's create/apply path: strict field validation.
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(bad), &obj); err != nil {
			t.Fatal(err)
		}
		_, err = dyn.Resource(drResource).Namespace(labNamespace).Create(ctx, &unstructured.Unstructured{Object: obj},
			metav1.CreateOptions{FieldValidation: "Strict"})
		want := `strict decoding error: unknown field "spec.trafficPolicy.connectionPool.http.http1MaxPendingReqs"`
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("strict create of a misspelled DR: err = %v, want %q", err, want)
		}
	})

	t.Run("config_dump shows istiod's thresholds", func(t *testing.T) {
		if err := sb.Apply(ctx, []byte(goodDR)); err != nil {
			t.Fatal(err)
		}
		const clusterName = "outbound|8080||backend.conn-lab.svc.cluster.local"
		path := "config_dump?resource=dynamic_active_clusters&name_regex=" + url.QueryEscape(regexp.QuoteMeta(clusterName))
		var cluster map[string]any
		deadline := time.Now().Add(60 * time.Second)
		for {
			out, stderr, err := podExec(ctx, sb.RESTConfig, cs, labNamespace, client.Name, "istio-proxy",
				"pilot-agent", "request", "GET", path)
			if err != nil {
				t.Fatalf("pilot-agent request GET %s: %v (stderr %q)", path, err, stderr)
			}
			cluster = findCluster(t, out, clusterName)
			if cluster != nil && nested(cluster, "circuit_breakers", "thresholds") != nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no circuit breakers on %s after 60s; last config_dump:\n%s", clusterName, out)
			}
			time.Sleep(time.Second)
		}
		th := nested(cluster, "circuit_breakers", "thresholds").([]any)[0].(map[string]any)
		for field, want := range map[string]float64{"max_connections": 1, "max_pending_requests": 1, "max_requests": 4294967295, "max_retries": 4294967295} {
			if got, _ := th[field].(float64); got != want {
				t.Errorf("thresholds[0].%s = %v, want %v (thresholds %v)", field, th[field], want, th)
			}
		}
		if got := cluster["alt_stat_name"]; got != clusterName+";" {
			t.Errorf("alt_stat_name = %v, want %q", got, clusterName+";")
		}

		// Routes come too: Istio's default retry policy on the route to backend.
		out, stderr, err := podExec(ctx, sb.RESTConfig, cs, labNamespace, client.Name, "istio-proxy",
			"pilot-agent", "request", "GET", "config_dump?resource=dynamic_route_configs&name_regex=8080")
		if err != nil {
			t.Fatalf("route config_dump: %v (stderr %q)", err, stderr)
		}
		if retry := findRetryPolicy(t, out, "backend.conn-lab.svc.cluster.local:8080"); retry == nil {
			t.Errorf("no retry_policy on the route to backend:\n%s", out)
		} else if retry["num_retries"] != float64(2) || !strings.Contains(fmt.Sprint(retry["retry_on"]), "connect-failure") {
			t.Errorf("retry_policy = %v, want num_retries 2 and retry_on with connect-failure", retry)
		}

		// The full dump has Envoy's shape.
		out, stderr, err = podExec(ctx, sb.RESTConfig, cs, labNamespace, client.Name, "istio-proxy",
			"pilot-agent", "request", "GET", "config_dump")
		if err != nil {
			t.Fatalf("config_dump: %v (stderr %q)", err, stderr)
		}
		var dump struct {
			Configs []map[string]any `json:"configs"`
		}
		if err := json.Unmarshal([]byte(out), &dump); err != nil {
			t.Fatalf("config_dump is not JSON: %v", err)
		}
		var types []string
		for _, c := range dump.Configs {
			types = append(types, fmt.Sprint(c["@type"]))
		}
		wantTypes := []string{
			"type.googleapis.com/envoy.admin.v3.ClustersConfigDump",
			"type.googleapis.com/envoy.admin.v3.ListenersConfigDump",
			"type.googleapis.com/envoy.admin.v3.RoutesConfigDump",
		}
		if strings.Join(types, ",") != strings.Join(wantTypes, ",") {
			t.Errorf("config_dump @types = %v, want %v", types, wantTypes)
		}
	})

	t.Run("stats fixtures replay in call order", func(t *testing.T) {
		// Fixtures, not Envoy: this checks the stand-in's replay and filtering only.
		const stat = "cluster.outbound|8080||backend.conn-lab.svc.cluster.local;.upstream_rq_pending_overflow"
		sb.EnvoyStandIn(t, labNamespace, "client",
			sandbox.StatsFixture("# counters\n"+stat+": 0\ncluster.other.upstream_rq_total: 5\n# gauges\ncluster.x.upstream_rq_active: 1\n"),
			sandbox.StatsFixture("# counters\n"+stat+": 21\ncluster.other.upstream_rq_total: 9\n# gauges\ncluster.x.upstream_rq_active: 0\n"))
		path := "stats?type=Counters&filter=" + url.QueryEscape(regexp.QuoteMeta(stat))
		for i, want := range []string{stat + ": 0", stat + ": 21", stat + ": 21"} {
			out, stderr, err := podExec(ctx, sb.RESTConfig, cs, labNamespace, client.Name, "istio-proxy",
				"pilot-agent", "request", "GET", path)
			if err != nil {
				t.Fatalf("call %d: %v (stderr %q)", i+1, err, stderr)
			}
			if strings.TrimSpace(out) != want {
				t.Errorf("call %d: %q, want %q", i+1, out, want)
			}
		}
		if _, _, err := podExec(ctx, sb.RESTConfig, cs, labNamespace, client.Name, "istio-proxy",
			"pilot-agent", "request", "GET", "no_such_path"); err == nil {
			t.Errorf("an unknown path succeeded")
		}
	})
}

// podExec runs a command in a pod's container through the API server and kwok, as kubectl exec does:
// WebSocket first, SPDY when the upgrade fails.
func podExec(ctx context.Context, cfg *rest.Config, cs kubernetes.Interface, ns, pod, container string, cmd ...string) (string, string, error) {
	req := cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(ns).Name(pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: container, Command: cmd, Stdout: true, Stderr: true}, scheme.ParameterCodec)
	ws, err := remotecommand.NewWebSocketExecutor(cfg, "GET", req.URL().String())
	if err != nil {
		return "", "", err
	}
	spdy, err := remotecommand.NewSPDYExecutor(cfg, "POST", req.URL())
	if err != nil {
		return "", "", err
	}
	exec, err := remotecommand.NewFallbackExecutor(ws, spdy, func(err error) bool {
		return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
	})
	if err != nil {
		return "", "", err
	}
	var stdout, stderr bytes.Buffer
	err = exec.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: &stdout, Stderr: &stderr})
	return stdout.String(), stderr.String(), err
}

// waitRollout waits like `kubectl rollout status`.
func waitRollout(t *testing.T, cs kubernetes.Interface, ns, name string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var d *appsv1.Deployment
	for {
		var err error
		d, err = cs.AppsV1().Deployments(ns).Get(t.Context(), name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			// A controller (the waypoint stand-in, for one) may not have created it yet.
			if time.Now().After(deadline) {
				t.Fatalf("deployment %s/%s not created after %s: %v", ns, name, timeout, err)
			}
			time.Sleep(200 * time.Millisecond)
			continue
		case err != nil:
			t.Fatal(err)
		}
		if rolledOut(d) {
			return
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	pods, _ := cs.CoreV1().Pods(ns).List(t.Context(), metav1.ListOptions{})
	var states []string
	for _, p := range pods.Items {
		states = append(states, fmt.Sprintf("%s=%s", p.Name, p.Status.Phase))
	}
	t.Fatalf("deployment %s/%s not rolled out after %s: status %+v; pods %v", ns, name, timeout, d.Status, states)
}

func rolledOut(d *appsv1.Deployment) bool {
	if d.Generation > d.Status.ObservedGeneration {
		return false
	}
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	s := d.Status
	return s.UpdatedReplicas >= want && s.Replicas <= s.UpdatedReplicas && s.AvailableReplicas >= s.UpdatedReplicas
}

// deleteNamespace deletes ns and waits until it is gone.
func deleteNamespace(t *testing.T, cs kubernetes.Interface, ns string) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if err := cs.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("deleting namespace %s: %v", ns, err)
		return
	}
	for {
		_, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return
		}
		select {
		case <-ctx.Done():
			t.Errorf("namespace %s still there after 90s (err %v)", ns, err)
			return
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// findCluster returns the cluster called name from a config_dump?resource=dynamic_active_clusters answer.
func findCluster(t *testing.T, dump, name string) map[string]any {
	t.Helper()
	var d struct {
		Configs []struct {
			Type    string         `json:"@type"`
			Cluster map[string]any `json:"cluster"`
		} `json:"configs"`
	}
	if err := json.Unmarshal([]byte(dump), &d); err != nil {
		t.Fatalf("config_dump is not JSON: %v\n%s", err, dump)
	}
	for _, c := range d.Configs {
		if c.Type != "type.googleapis.com/envoy.admin.v3.ClustersConfigDump.DynamicCluster" {
			t.Fatalf("config entry of @type %s, want ClustersConfigDump.DynamicCluster", c.Type)
		}
		if c.Cluster["name"] == name {
			return c.Cluster
		}
	}
	return nil
}

// findRetryPolicy returns the retry policy of the first route of the named virtual host in a
// config_dump?resource=dynamic_route_configs answer.
func findRetryPolicy(t *testing.T, dump, vhost string) map[string]any {
	t.Helper()
	var d struct {
		Configs []struct {
			RouteConfig struct {
				VirtualHosts []struct {
					Name   string `json:"name"`
					Routes []struct {
						Route struct {
							RetryPolicy map[string]any `json:"retry_policy"`
						} `json:"route"`
					} `json:"routes"`
				} `json:"virtual_hosts"`
			} `json:"route_config"`
		} `json:"configs"`
	}
	if err := json.Unmarshal([]byte(dump), &d); err != nil {
		t.Fatalf("config_dump is not JSON: %v\n%s", err, dump)
	}
	for _, c := range d.Configs {
		for _, vh := range c.RouteConfig.VirtualHosts {
			if vh.Name == vhost && len(vh.Routes) > 0 {
				return vh.Routes[0].Route.RetryPolicy
			}
		}
	}
	return nil
}

// nested walks maps by keys.
func nested(m map[string]any, keys ...string) any {
	var v any = m
	for _, k := range keys {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[k]
	}
	return v
}
