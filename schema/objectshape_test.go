package schema

import (
	"strings"
	"testing"
)

// TestObjectProblems: an object an apply writes is checked against its built-in or Istio kind,
// each problem at its field; a kind vet does not know (another group's custom resource), a
// templated kind, and a valid object pass.
func TestObjectProblems(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Object
		want []string // "path: part of the message"
	}{
		{"deployment replica", Object{"apiVersion": "apps/v1", "kind": "Deployment", "spec": map[string]any{"replica": 2.0}},
			[]string{"spec.replica: Deployment spec has no field replica (did you mean replicas?)"}},
		{"deployment replicas string", Object{"apiVersion": "apps/v1", "kind": "Deployment", "spec": map[string]any{"replicas": "2"}},
			[]string{`spec.replicas: Deployment spec.replicas is an integer, not "2" (a string): the API server refuses it`}},
		{"configmap kind case", Object{"apiVersion": "v1", "kind": "configmap", "data": map[string]any{"a": "1"}},
			[]string{`kind: kind "configmap": expected "ConfigMap"`}},
		{"removed version", Object{"apiVersion": "extensions/v1beta1", "kind": "Ingress", "spec": map[string]any{"backend": map[string]any{}}},
			[]string{"apiVersion: apiVersion extensions/v1beta1 of Ingress was removed in Kubernetes 1.22"}},
		{"istio kind case", Object{"apiVersion": "networking.istio.io/v1", "kind": "destinationrule", "spec": map[string]any{"host": "a"}},
			[]string{`kind: kind "destinationrule": expected "DestinationRule"`}},
		{"istio version", Object{"apiVersion": "networking.istio.io/v2", "kind": "DestinationRule", "spec": map[string]any{"hots": "a"}},
			[]string{`apiVersion: Istio serves DestinationRule as networking.istio.io/v1, networking.istio.io/v1alpha3, networking.istio.io/v1beta1`}},
		{"istio no such kind", Object{"apiVersion": "security.istio.io/v1", "kind": "DestinationRule"},
			[]string{"kind: security.istio.io has no kind DestinationRule"}},
		{"istio fields", Object{"apiVersion": "networking.istio.io/v1", "kind": "DestinationRule", "spec": map[string]any{
			"host": "a", "trafficPolicy": map[string]any{
				"loadBalancer":     map[string]any{"simple": "ROUNDROBIN"},
				"outlierDetection": map[string]any{"consecutive5xxErrors": "3"},
			}}},
			[]string{
				`spec.trafficPolicy.loadBalancer.simple: DestinationRule spec.trafficPolicy.loadBalancer.simple (Istio 1.30.8's CRDs) is one of `,
				`spec.trafficPolicy.outlierDetection.consecutive5xxErrors: DestinationRule spec.trafficPolicy.outlierDetection.consecutive5xxErrors (Istio 1.30.8's CRDs) is an integer, not "3"`,
			}},
		{"istio valid, templated value", Object{"apiVersion": "networking.istio.io/v1", "kind": "DestinationRule", "spec": map[string]any{
			"host": "a", "trafficPolicy": map[string]any{"connectionPool": map[string]any{"tcp": map[string]any{"maxConnections": "${vars.max}"}}}}}, nil},
		{"templated kind", Object{"apiVersion": "networking.istio.io/v1", "kind": "${vars.kind}", "spec": map[string]any{"x": 1.0}}, nil},
		{"other group's custom resource", Object{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "gateway", "spec": map[string]any{"x": 1.0}}, nil},
	} {
		var got []string
		ObjectProblems(tc.o, false, func(path []string, msg string, _ bool, _ *IstioCheck) {
			got = append(got, strings.Join(path, ".")+": "+msg)
		})
		ok := len(got) == len(tc.want)
		for i := 0; ok && i < len(got); i++ {
			ok = strings.HasPrefix(got[i], tc.want[i])
		}
		if !ok {
			t.Errorf("%s:\ngot  %q\nwant %q", tc.name, got, tc.want)
		}
	}
}
