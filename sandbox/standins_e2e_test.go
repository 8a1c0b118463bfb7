package sandbox_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"labrun.dev/labrun/sandbox"
)

const standInManifests = `
apiVersion: v1
kind: Namespace
metadata: {name: standin-lab, labels: {istio-injection: enabled}}
---
apiVersion: v1
kind: Service
metadata: {name: backend, namespace: standin-lab}
spec:
  selector: {app: backend}
  ports: [{name: http, port: 8080}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: client, namespace: standin-lab}
spec:
  replicas: 2
  selector: {matchLabels: {app: client}}
  template:
    metadata: {labels: {app: client}}
    spec:
      containers: [{name: fortio, image: fortio/fortio}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: backend, namespace: standin-lab}
spec:
  selector: {matchLabels: {app: backend}}
  template:
    metadata: {labels: {app: backend}, annotations: {sidecar.istio.io/inject: "false"}}
    spec:
      containers: [{name: nginx, image: nginx}]
---
apiVersion: v1
kind: Namespace
metadata: {name: standin-plain}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: app, namespace: standin-plain}
spec:
  selector: {matchLabels: {app: app}}
  template:
    metadata: {labels: {app: app}}
    spec:
      containers: [{name: app, image: app}]
`

// TestStandIns covers the sandbox's stand-ins against the real API server and kwok: the sidecar
// injection stand-in (Istio's selection rules), the exec stand-in (a recorded fortio result and a
// recorded bash run replayed per pod, the real program otherwise), fixture sets handed out per
// pod, and {{clusterIP NAME}} in a fixture.
func TestStandIns(t *testing.T) {
	sb := sandbox.Start(t)
	ctx := t.Context()
	cs := kubernetes.NewForConfigOrDie(sb.RESTConfig)
	if err := sb.Apply(ctx, []byte(standInManifests)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteNamespace(t, cs, "standin-lab"); deleteNamespace(t, cs, "standin-plain") })
	waitRollout(t, cs, "standin-lab", "client", 90*time.Second)
	waitRollout(t, cs, "standin-lab", "backend", 90*time.Second)
	waitRollout(t, cs, "standin-plain", "app", 90*time.Second)

	containers := func(ns, app string) (names []string, labels, annotations map[string]string, pods []string) {
		t.Helper()
		list, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=" + app})
		if err != nil || len(list.Items) == 0 {
			t.Fatalf("pods of %s/%s: %v", ns, app, err)
		}
		p := list.Items[0]
		for _, c := range p.Spec.Containers {
			names = append(names, c.Name)
		}
		for _, q := range list.Items {
			pods = append(pods, q.Name)
		}
		slices.Sort(pods)
		return names, p.Labels, p.Annotations, pods
	}

	t.Run("injection", func(t *testing.T) {
		names, labels, ann, _ := containers("standin-lab", "client")
		if !slices.Equal(names, []string{"fortio", "istio-proxy"}) {
			t.Errorf("client containers %v, want fortio and the injected istio-proxy", names)
		}
		if labels["security.istio.io/tlsMode"] != "istio" || labels["service.istio.io/canonical-name"] != "client" {
			t.Errorf("client labels %v: want Istio's injected labels", labels)
		}
		if ann["kubectl.kubernetes.io/default-container"] != "fortio" {
			t.Errorf("client annotations %v: want default-container fortio", ann)
		}
		if names, _, _, _ := containers("standin-lab", "backend"); slices.Contains(names, "istio-proxy") {
			t.Errorf("backend opted out (sidecar.istio.io/inject: \"false\") but has %v", names)
		}
		if names, _, _, _ := containers("standin-plain", "app"); slices.Contains(names, "istio-proxy") {
			t.Errorf("a pod of a namespace without istio-injection got %v", names)
		}
	})

	_, _, _, clients := containers("standin-lab", "client")
	if len(clients) != 2 {
		t.Fatalf("client pods %v, want 2", clients)
	}
	exec := func(pod, container string, cmd ...string) (string, error) {
		out, stderr, err := podExec(ctx, sb.RESTConfig, cs, "standin-lab", pod, container, cmd...)
		if err != nil {
			return out, fmt.Errorf("%v (stderr %q)", err, stderr)
		}
		return out, nil
	}

	t.Run("exec replay", func(t *testing.T) {
		result := []byte(`{"RunType":"HTTP","ActualDuration":200000000,"RetCodes":{"200":3}}` + "\n")
		fortio, err := sandbox.FortioReplay(result, map[string][]string{"istio-proxy": {"access log line of the load"}})
		if err != nil {
			t.Fatal(err)
		}
		sb.EnvoyStandIn(t, "standin-lab", clients[0], fortio.Fixture(),
			sandbox.ExecReplay{Command: "bash", Stdout: "who=backend-a\n"}.Fixture())
		start := time.Now()
		out, err := exec(clients[0], "fortio", "fortio", "load", "-json", "-", "http://backend:8080/")
		if err != nil || out != string(result) {
			t.Fatalf("replayed fortio: %q, %v", out, err)
		}
		if d := time.Since(start); d < 200*time.Millisecond {
			t.Errorf("the replay took %s, less than the recorded run's 200ms", d)
		}
		log, err := os.ReadFile(sb.ContainerLogPath("standin-lab", clients[0], "istio-proxy"))
		if err != nil || !strings.HasSuffix(string(log), " stdout F access log line of the load\n") {
			t.Errorf("istio-proxy log after the replay: %q, %v", log, err)
		}
		if out, err := exec(clients[0], "fortio", "bash", "-c", "echo real"); err != nil || out != "who=backend-a\n" {
			t.Errorf("replayed bash: %q, %v", out, err)
		}
		// The other pod has no replay: the real programs run.
		if out, err := exec(clients[1], "fortio", "bash", "-c", "echo real bash"); err != nil || out != "real bash\n" {
			t.Errorf("bash in a pod without replays: %q, %v", out, err)
		}
		if out, err := exec(clients[1], "fortio", "fortio", "version"); err != nil || !strings.HasPrefix(strings.TrimSpace(out), "1.66.5") {
			t.Errorf("fortio in a pod without replays: %q, %v; want the real fortio CLI's version", out, err)
		}
	})

	t.Run("fixture sets per pod and run addresses", func(t *testing.T) {
		svc, err := cs.CoreV1().Services("standin-lab").Get(ctx, "backend", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		sb.EnvoyStandInPerPod(t, "standin-lab", "client",
			[]sandbox.Fixture{sandbox.ClustersJSONFixture(`{"set":1,"address":"{{clusterIP backend}}"}`)},
			[]sandbox.Fixture{sandbox.ClustersJSONFixture(`{"set":2}`)})
		get := func(pod string) string {
			out, err := exec(pod, "istio-proxy", "pilot-agent", "request", "GET", "clusters?format=json")
			if err != nil {
				t.Fatalf("%s: %v", pod, err)
			}
			return strings.TrimSpace(out)
		}
		// clients[1] asks first: it gets set 1.
		if got, want := get(clients[1]), `{"set":1,"address":"`+svc.Spec.ClusterIP+`"}`; got != want {
			t.Errorf("first pod to ask: %s, want %s", got, want)
		}
		if got := get(clients[0]); got != `{"set":2}` {
			t.Errorf("second pod to ask: %s, want set 2", got)
		}
		if got := get(clients[1]); !strings.Contains(got, `"set":1`) {
			t.Errorf("the first pod again: %s, want its set 1", got)
		}
	})
}

const waypointManifests = `
apiVersion: v1
kind: Namespace
metadata: {name: standin-ambient, labels: {istio.io/dataplane-mode: ambient, istio.io/use-waypoint: waypoint}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: waypoint, namespace: standin-ambient, labels: {istio.io/waypoint-for: service}}
spec:
  gatewayClassName: istio-waypoint
  listeners: [{name: mesh, port: 15008, protocol: HBONE}]
---
apiVersion: v1
kind: Service
metadata: {name: app, namespace: standin-ambient}
spec:
  selector: {app: app}
  ports: [{name: http, port: 8080}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: app, namespace: standin-ambient}
spec:
  selector: {matchLabels: {app: app}}
  template:
    metadata: {labels: {app: app}}
    spec:
      containers: [{name: app, image: app}]
`

// TestWaypointStandIn covers ambient in the sandbox: istiod (PILOT_ENABLE_AMBIENT) serves the
// istio-waypoint class; the waypoint deployment stand-in creates the waypoint's Deployment and
// Service for a Gateway of that class, and istiod marks the Gateway Programmed and binds the
// namespace's Service to it; the Envoy admin stand-in in the waypoint pod asks istiod as a
// waypoint (the app's inbound-vip cluster is in its config) and serves POST logging as Envoy does.
func TestWaypointStandIn(t *testing.T) {
	sb := sandbox.Start(t)
	ctx := t.Context()
	cs := kubernetes.NewForConfigOrDie(sb.RESTConfig)
	dyn := dynamic.NewForConfigOrDie(sb.RESTConfig)
	const ns = "standin-ambient"
	if err := sb.Apply(ctx, []byte(waypointManifests)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteNamespace(t, cs, ns) })
	waitRollout(t, cs, ns, "waypoint", 90*time.Second)
	waitRollout(t, cs, ns, "app", 90*time.Second)

	dep, err := cs.AppsV1().Deployments(ns).Get(ctx, "waypoint", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if dep.Annotations["labrun.dev/waypoint-stand-in"] == "" || len(dep.OwnerReferences) != 1 || dep.OwnerReferences[0].Kind != "Gateway" {
		t.Errorf("Deployment waypoint: annotations %v, owners %v; want the stand-in's, owned by the Gateway", dep.Annotations, dep.OwnerReferences)
	}
	svc, err := cs.CoreV1().Services(ns).Get(ctx, "waypoint", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var ports []string
	for _, p := range svc.Spec.Ports {
		ports = append(ports, fmt.Sprintf("%s/%d/%s", p.Name, p.Port, *p.AppProtocol))
	}
	if !slices.Equal(ports, []string{"status-port/15021/tcp", "mesh/15008/hbone"}) {
		t.Errorf("Service waypoint ports %v", ports)
	}

	// istiod's status: the Gateway Programmed, the app's Service bound to the waypoint.
	status := func(gvr schema.GroupVersionResource, name, typ string) map[string]any {
		deadline := time.Now().Add(30 * time.Second)
		for {
			u, err := dyn.Resource(gvr).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
			if err == nil {
				conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
				for _, c := range conds {
					if m, _ := c.(map[string]any); m["type"] == typ && m["status"] == "True" {
						return m
					}
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s %s: no condition %s=True after 30s (%v)", gvr.Resource, name, typ, err)
			}
			time.Sleep(250 * time.Millisecond)
		}
	}
	gw := status(schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "gateways"}, "waypoint", "Programmed")
	bound := status(schema.GroupVersionResource{Version: "v1", Resource: "services"}, "app", "istio.io/WaypointBound")
	t.Logf("Gateway: %s; Service app: %s", gw["message"], bound["message"])

	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "gateway.networking.k8s.io/gateway-name=waypoint"})
	if err != nil || len(pods.Items) != 1 {
		t.Fatalf("waypoint pods: %v (%d)", err, len(pods.Items))
	}
	pod := pods.Items[0].Name
	out, stderr, err := podExec(ctx, sb.RESTConfig, cs, ns, pod, "istio-proxy", "pilot-agent", "request", "GET", "config_dump?resource=dynamic_active_clusters")
	if err != nil {
		t.Fatalf("config_dump of the waypoint: %v (%s)", err, stderr)
	}
	for _, c := range []string{"connect_originate", "inbound-vip|8080|http|app." + ns + ".svc.cluster.local"} {
		if findCluster(t, out, c) == nil {
			t.Errorf("the waypoint's config from istiod has no cluster %s", c)
		}
	}

	// POST logging: one parameter as Envoy; two are a 400, which pilot-agent reports as an error.
	if _, _, err := podExec(ctx, sb.RESTConfig, cs, ns, pod, "istio-proxy", "pilot-agent", "request", "POST", "logging?connection=debug&pool=debug"); err == nil {
		t.Errorf("POST logging with two parameters succeeded; Envoy answers 400")
	}
	out, stderr, err = podExec(ctx, sb.RESTConfig, cs, ns, pod, "istio-proxy", "pilot-agent", "request", "POST", "logging?paths=connection:debug,pool:debug")
	if err != nil || !strings.HasPrefix(out, "active loggers:\n") || !strings.Contains(out, "  pool: debug\n") || !strings.Contains(out, "  router: warning\n") {
		t.Errorf("POST logging?paths=…: %q, %v (%s)", out, err, stderr)
	}

	// istiod with ambient on is still ready, and has logged no panic.
	resp, err := http.Get("http://" + sb.IstiodHTTP + "/ready")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("istiod /ready: %v %v", resp, err)
	}
	if resp != nil {
		resp.Body.Close()
	}
	if log, err := os.ReadFile(filepath.Join(sb.Dir, "istiod.log")); err != nil || strings.Contains(string(log), "panic") {
		t.Errorf("istiod.log: a panic, or unreadable (%v)", err)
	}
}
