package sandbox

import (
	"context"
	"fmt"
	"maps"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
)

// The waypoint deployment stand-in. On a cluster, istiod's gateway deployment controller renders
// a Deployment, Service and ServiceAccount for every Gateway of class istio-waypoint from the Helm
// chart's "waypoint" template (ConfigMap istio-sidecar-injector); the Gateway becomes Programmed
// once its Service has the waypoint's endpoints. The sandbox has no Helm chart, so that controller
// stays off, and this stand-in creates the same three objects instead, with what istiod reads of
// them: the names (the Gateway's, or gateway.istio.io/name-override), the labels
// (gateway.networking.k8s.io/gateway-name, gateway-class-name, gateway.istio.io/managed, the
// Gateway's own labels such as istio.io/waypoint-for), the Service's ports (status-port 15021 and
// one per listener, appProtocol the listener's protocol: mesh 15008 hbone) and the owner reference
// to the Gateway. Its pod has one container, istio-proxy, started as `pilot-agent proxy waypoint`
// would be (image StandInProxyImage: kwok runs nothing; an exec of `pilot-agent request …` reaches
// the Envoy admin stand-in, which asks istiod for a waypoint's config). What stays real: istiod
// reads the Gateway, the Service and the pod as on a cluster, writes the Gateway's status
// (Accepted, Programmed) and computes the waypoint's config. Nothing else is rendered
// (no HorizontalPodAutoscaler, no PodDisruptionBudget, no proxy arguments beyond the type).

const (
	// waypointClass is the GatewayClass whose Gateways get a waypoint.
	waypointClass = "istio-waypoint"
	// waypointFieldManager owns what the stand-in applies.
	waypointFieldManager = "labrun-sandbox-waypoint-stand-in"
	// waypointStandInAnnotation marks the objects the waypoint deployment stand-in created.
	waypointStandInAnnotation = "labrun.dev/waypoint-stand-in"
	waypointStandInNote       = "created by the labrun sandbox's waypoint deployment stand-in in place of istiod's gateway deployment controller (no Envoy runs)"
)

var gatewayGVR = schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "gateways"}

// watchWaypoints starts the waypoint deployment stand-in: an informer on Gateways that applies a
// waypoint's objects for every Gateway of class istio-waypoint (again on every change of it). It
// returns once the informer has synced, and stops when ctx ends.
func (s *Sandbox) watchWaypoints(ctx context.Context) error {
	logFile, logf, err := s.componentLog("waypoint-stand-in.log")
	if err != nil {
		return err
	}
	factory := dynamicinformer.NewDynamicSharedInformerFactory(s.dyn, 0)
	inf := factory.ForResource(gatewayGVR).Informer()
	handle := func(obj any) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return
		}
		class, _, _ := unstructured.NestedString(u.Object, "spec", "gatewayClassName")
		if class != waypointClass || u.GetDeletionTimestamp() != nil {
			return
		}
		if err := s.applyWaypoint(ctx, u); err != nil {
			logf("gateway %s/%s: %v", u.GetNamespace(), u.GetName(), err)
		} else {
			logf("gateway %s/%s: waypoint ServiceAccount, Deployment and Service applied", u.GetNamespace(), u.GetName())
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    handle,
		UpdateFunc: func(old, obj any) { handle(obj) },
	}); err != nil {
		logFile.Close()
		return err
	}
	return s.runInformer(ctx, factory, inf, logFile, "waypoint deployment stand-in: the Gateway informer")
}

// applyWaypoint applies the waypoint objects of one Gateway (server-side, so a repeat is a no-op).
func (s *Sandbox) applyWaypoint(ctx context.Context, gw *unstructured.Unstructured) error {
	for _, obj := range waypointObjects(gw) {
		if err := s.applyAs(ctx, obj, waypointFieldManager); err != nil {
			return fmt.Errorf("%s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
	}
	return nil
}

// waypointObjects are the ServiceAccount, Deployment and Service Istio's "waypoint" template
// renders for gw, reduced to what istiod and kwok read.
func waypointObjects(gw *unstructured.Unstructured) []*unstructured.Unstructured {
	name, ns := gw.GetName(), gw.GetNamespace()
	deployment := name
	if o := gw.GetAnnotations()["gateway.istio.io/name-override"]; o != "" {
		deployment = o
	}
	serviceAccount := name
	if o := gw.GetAnnotations()["gateway.istio.io/service-account"]; o != "" {
		serviceAccount = o
	}
	// The Gateway's labels (Istio's InfrastructureLabels when spec.infrastructure has none),
	// without the gateway.networking.k8s.io/ ones.
	infra := map[string]string{}
	if l, found, _ := unstructured.NestedStringMap(gw.Object, "spec", "infrastructure", "labels"); found {
		maps.Copy(infra, l)
	} else {
		maps.Copy(infra, gw.GetLabels())
	}
	for k := range infra {
		if strings.HasPrefix(k, "gateway.networking.k8s.io/") {
			delete(infra, k)
		}
	}
	merge := func(ms ...map[string]string) map[string]any {
		out := map[string]any{}
		for _, m := range ms {
			for k, v := range m {
				out[k] = v
			}
		}
		return out
	}
	gwLabels := map[string]string{
		"gateway.networking.k8s.io/gateway-name":       name,
		"gateway.networking.k8s.io/gateway-class-name": waypointClass,
	}
	managed := map[string]string{"gateway.istio.io/managed": "istio.io-mesh-controller"}
	note := map[string]string{waypointStandInAnnotation: waypointStandInNote}
	owner := []any{map[string]any{
		"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway", "name": name, "uid": string(gw.GetUID()),
	}}
	meta := func(objName string, labels map[string]any, annotations map[string]any) map[string]any {
		return map[string]any{"name": objName, "namespace": ns, "labels": labels, "annotations": annotations, "ownerReferences": owner}
	}

	ports := []any{map[string]any{"name": "status-port", "port": int64(15021), "protocol": "TCP", "appProtocol": "tcp"}}
	seen := map[int64]bool{}
	listeners, _, _ := unstructured.NestedSlice(gw.Object, "spec", "listeners")
	for i, l := range listeners {
		lm, _ := l.(map[string]any)
		port, _ := lm["port"].(int64)
		if port == 0 || seen[port] {
			continue
		}
		seen[port] = true
		proto, _ := lm["protocol"].(string)
		pname, _ := lm["name"].(string)
		pname = strings.ReplaceAll(pname, ".", "-")
		if pname == "" {
			pname = fmt.Sprintf("%s-%d", strings.ToLower(proto), i)
		}
		ports = append(ports, map[string]any{"name": pname, "port": port, "protocol": "TCP", "appProtocol": strings.ToLower(proto)})
	}

	sa := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ServiceAccount",
		"metadata": meta(serviceAccount, merge(infra, gwLabels), merge(note)),
	}}
	podLabels := merge(map[string]string{
		"sidecar.istio.io/inject":             "false",
		"istio.io/dataplane-mode":             "none",
		"service.istio.io/canonical-name":     deployment,
		"service.istio.io/canonical-revision": "latest",
	}, infra, gwLabels, managed)
	dep := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": meta(deployment, merge(infra, gwLabels, managed), merge(note)),
		"spec": map[string]any{
			"selector": map[string]any{"matchLabels": map[string]any{"gateway.networking.k8s.io/gateway-name": name}},
			"template": map[string]any{
				"metadata": map[string]any{
					"labels":      podLabels,
					"annotations": merge(map[string]string{"istio.io/rev": "default"}, note),
				},
				"spec": map[string]any{
					"serviceAccountName": serviceAccount,
					"containers": []any{map[string]any{
						"name":  "istio-proxy",
						"image": StandInProxyImage,
						"args": []any{"proxy", "waypoint", "--domain", "$(POD_NAMESPACE).svc.cluster.local",
							"--serviceCluster", serviceAccount + ".$(POD_NAMESPACE)"},
						"ports": []any{
							map[string]any{"containerPort": int64(15020), "name": "metrics", "protocol": "TCP"},
							map[string]any{"containerPort": int64(15021), "name": "status-port", "protocol": "TCP"},
							map[string]any{"containerPort": int64(15090), "name": "http-envoy-prom", "protocol": "TCP"},
						},
					}},
				},
			},
		},
	}}
	svc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Service",
		"metadata": meta(deployment, merge(infra, gwLabels),
			merge(map[string]string{"networking.istio.io/traffic-distribution": "PreferClose"}, note)),
		"spec": map[string]any{
			"type":     "ClusterIP",
			"selector": map[string]any{"gateway.networking.k8s.io/gateway-name": name},
			"ports":    ports,
		},
	}}
	return []*unstructured.Unstructured{sa, dep, svc}
}

// applyAs server-side-applies one object as field manager.
func (s *Sandbox) applyAs(ctx context.Context, u *unstructured.Unstructured, manager string) error {
	mapping, err := s.apply.mapper.RESTMapping(u.GroupVersionKind().GroupKind(), u.GroupVersionKind().Version)
	if err != nil {
		return err
	}
	_, err = s.dyn.Resource(mapping.Resource).Namespace(u.GetNamespace()).
		Apply(ctx, u.GetName(), u, metav1.ApplyOptions{FieldManager: manager, Force: true})
	return err
}
