package sandbox

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The sidecar injection stand-in. On a cluster, Istio's injector (a mutating webhook served by
// istiod, driven by the istio-sidecar-injector ConfigMap of the Helm chart) adds the istio-proxy
// container to every pod of a namespace labelled istio-injection=enabled (or a pod labelled
// sidecar.istio.io/inject=true), unless the pod opts out. The sandbox has no Helm chart and no
// proxy image, so a webhook of its own does the part that matters here, with Istio's selection
// rules: it adds a container named istio-proxy (image StandInProxyImage: kwok runs nothing, and an
// exec of `pilot-agent request …` in it reaches the Envoy admin stand-in), and the labels Istio's
// injector sets that istiod reads (security.istio.io/tlsMode, service.istio.io/canonical-*). It
// does not add istio-init, volumes or the proxy's arguments: nothing in the sandbox would run them.
// The real API server calls it like any admission webhook.

// StandInProxyImage is the image of the istio-proxy container the sidecar injection stand-in adds.
const StandInProxyImage = "labrun.dev/sandbox/istio-proxy-stand-in"

// injectorWebhookName names the MutatingWebhookConfiguration of the stand-in.
const injectorWebhookName = "labrun-sandbox-sidecar-injector"

// startInjector serves the injection stand-in on a free loopback port and registers it with the API
// server, with Istio's default namespace and object selectors.
func (s *Sandbox) startInjector(ctx context.Context) error {
	certFile, keyFile := filepath.Join(s.Dir, "injector.crt"), filepath.Join(s.Dir, "injector.key")
	if err := writeServingCert(certFile, keyFile, "labrun-sandbox-injector"); err != nil {
		return err
	}
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return err
	}
	caBundle, err := os.ReadFile(certFile)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/inject", serveInjection)
	srv := &http.Server{Handler: mux, TLSConfig: &tls.Config{Certificates: []tls.Certificate{pair}}, ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: log.New(io.Discard, "", 0)}
	go func() { _ = srv.ServeTLS(ln, "", "") }()
	s.injector = srv

	url := fmt.Sprintf("https://%s/inject", ln.Addr().String())
	none := admissionregistrationv1.SideEffectClassNone
	fail := admissionregistrationv1.Fail
	timeout := int32(10)
	webhook := func(name string, ns, obj *metav1.LabelSelector) admissionregistrationv1.MutatingWebhook {
		return admissionregistrationv1.MutatingWebhook{
			Name:                    name,
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: caBundle},
			Rules:                   []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create}, Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}}}},
			NamespaceSelector:       ns,
			ObjectSelector:          obj,
			SideEffects:             &none,
			FailurePolicy:           &fail,
			TimeoutSeconds:          &timeout,
			AdmissionReviewVersions: []string{"v1"},
		}
	}
	cfg := &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: injectorWebhookName},
		Webhooks: []admissionregistrationv1.MutatingWebhook{
			// Istio's "namespace.sidecar-injector.istio.io": the namespace opts in.
			webhook("namespace.sidecar-injector.labrun.dev",
				&metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "istio-injection", Operator: metav1.LabelSelectorOpIn, Values: []string{"enabled"}}}},
				&metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "sidecar.istio.io/inject", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"false"}}}}),
			// Istio's "object.sidecar-injector.istio.io": the pod opts in, its namespace says nothing.
			webhook("object.sidecar-injector.labrun.dev",
				&metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "istio-injection", Operator: metav1.LabelSelectorOpDoesNotExist}, {Key: "istio.io/rev", Operator: metav1.LabelSelectorOpDoesNotExist}}},
				&metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "sidecar.istio.io/inject", Operator: metav1.LabelSelectorOpIn, Values: []string{"true"}}}}),
		},
	}
	_, err = s.client.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, cfg, metav1.CreateOptions{FieldManager: fieldManager})
	if apierrors.IsAlreadyExists(err) {
		err = nil
	}
	return err
}

// stopInjector stops serving the stand-in (the API server goes with the sandbox).
func (s *Sandbox) stopInjector() {
	if s.injector != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = s.injector.Shutdown(ctx)
	}
}

// serveInjection answers one AdmissionReview of a pod creation.
func serveInjection(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 8<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(body, &review); err != nil || review.Request == nil {
		http.Error(w, "not an AdmissionReview", http.StatusBadRequest)
		return
	}
	resp := &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true}
	var pod corev1.Pod
	if err := json.Unmarshal(review.Request.Object.Raw, &pod); err != nil {
		resp.Result = &metav1.Status{Message: "sidecar injection stand-in: " + err.Error()}
	} else if patch, err := injectionPatch(&pod); err != nil {
		resp.Result = &metav1.Status{Message: "sidecar injection stand-in: " + err.Error()}
	} else if patch != nil {
		pt := admissionv1.PatchTypeJSONPatch
		resp.Patch, resp.PatchType = patch, &pt
	}
	review.Response = resp
	review.Request = nil
	out, _ := json.Marshal(review)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(out)
}

// injectionPatch is the JSON patch that injects pod, or nil when it must not be injected: it
// opts out with the sidecar.istio.io/inject annotation (Istio still honours it), or it already
// has an istio-proxy container.
func injectionPatch(pod *corev1.Pod) ([]byte, error) {
	if pod.Annotations["sidecar.istio.io/inject"] == "false" {
		return nil, nil
	}
	for _, c := range pod.Spec.Containers {
		if c.Name == "istio-proxy" {
			return nil, nil
		}
	}
	type op struct {
		Op    string `json:"op"`
		Path  string `json:"path"`
		Value any    `json:"value"`
	}
	container := corev1.Container{
		Name:  "istio-proxy",
		Image: StandInProxyImage,
		Args:  []string{"proxy", "sidecar"},
		Ports: []corev1.ContainerPort{{Name: "http-envoy-prom", ContainerPort: 15090, Protocol: corev1.ProtocolTCP}},
	}
	ops := []op{{Op: "add", Path: "/spec/containers/-", Value: container}}
	// The labels Istio's injector adds that istiod reads: the workload's mTLS mode (endpoints
	// labelled istio get the cluster's auto-mTLS transport socket) and its canonical service.
	labels := map[string]string{
		"security.istio.io/tlsMode":           "istio",
		"service.istio.io/canonical-name":     canonicalName(pod),
		"service.istio.io/canonical-revision": "latest",
	}
	if pod.Labels == nil {
		ops = append(ops, op{Op: "add", Path: "/metadata/labels", Value: map[string]string{}})
	}
	for k, v := range labels {
		if _, ok := pod.Labels[k]; ok {
			continue
		}
		ops = append(ops, op{Op: "add", Path: "/metadata/labels/" + jsonPointerEscape(k), Value: v})
	}
	if pod.Annotations == nil {
		ops = append(ops, op{Op: "add", Path: "/metadata/annotations", Value: map[string]string{}})
	}
	// As Istio's injector: kubectl (and labrun) exec and logs default to the app container.
	if _, ok := pod.Annotations["kubectl.kubernetes.io/default-container"]; !ok && len(pod.Spec.Containers) > 0 {
		ops = append(ops, op{Op: "add", Path: "/metadata/annotations/" + jsonPointerEscape("kubectl.kubernetes.io/default-container"),
			Value: pod.Spec.Containers[0].Name})
	}
	ops = append(ops, op{Op: "add", Path: "/metadata/annotations/" + jsonPointerEscape("labrun.dev/sidecar-stand-in"),
		Value: "istio-proxy added by the labrun sandbox's sidecar injection stand-in (no Envoy runs)"})
	return json.Marshal(ops)
}

// canonicalName is Istio's canonical service name of a pod: the app.kubernetes.io/name or app
// label, else the workload name (approximated by the pod's generateName without its hash).
func canonicalName(pod *corev1.Pod) string {
	for _, k := range []string{"service.istio.io/canonical-name", "app.kubernetes.io/name", "app"} {
		if v := pod.Labels[k]; v != "" {
			return v
		}
	}
	if pod.GenerateName != "" {
		return pod.GenerateName
	}
	return pod.Name
}

// jsonPointerEscape escapes a key for a JSON pointer (RFC 6901).
func jsonPointerEscape(s string) string {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '~':
			out = append(out, '~', '0')
		case '/':
			out = append(out, '~', '1')
		default:
			out = append(out, s[i])
		}
	}
	return string(out)
}
