package kubeshape

import (
	_ "embed"
	"encoding/json"
	"strings"
	"testing"
)

//go:embed testdata/destinationrule.json
var destinationRule []byte

func TestWalk(t *testing.T) {
	var crd map[string]any
	if err := json.Unmarshal(destinationRule, &crd); err != nil {
		t.Fatal(err)
	}
	dr := FromCRD(crd)
	deploy, name := Builtin("", "Deployment")
	if deploy == nil || name != "Deployment" {
		t.Fatalf("Builtin(Deployment) = %v, %q", deploy, name)
	}
	pod, _ := Builtin("v1", "pods")
	svc, _ := Builtin("", "service")
	cm, _ := Builtin("", "ConfigMap")
	for _, tc := range []struct {
		shape *Shape
		path  string
		at    int    // -1: every name is there
		msg   string // part of the message
	}{
		{deploy, "spec.replicas", -1, ""},
		{deploy, "spec.replica", 1, "has no field replica (did you mean replicas?)"},
		{deploy, "apiVersion", -1, ""}, // TypeMeta is inline
		{deploy, "metadata.labels.anything", -1, ""},
		{deploy, "metadata.annotations.x", -1, ""},
		{deploy, "metadata.creationTimestamp", -1, ""},
		{deploy, "metadata.creationTimestamp.seconds", 2, "is a scalar"},
		{deploy, "spec.template.spec.containers.0.image", -1, ""},
		{deploy, "spec.template.spec.containers.image", 4, "is a list"},
		{deploy, "spec.strategy.rollingUpdate.maxSurge", -1, ""}, // IntOrString
		{deploy, "status.readyReplicas", -1, ""},
		{deploy, "status.readyReplica", 1, "did you mean readyReplicas?"},
		{pod, "status.podIP", -1, ""},
		{pod, "status.podIp", 1, "did you mean podIP?"},
		{pod, "spec.containers.0.resources.limits.cpu", -1, ""}, // Quantity map
		{svc, "spec.ports.0.targetPort", -1, ""},
		{svc, "spec.clusterIP", -1, ""},
		{cm, "data.anything", -1, ""},
		{cm, "binaryData.x", -1, ""},
		{dr, "spec.trafficPolicy.outlierDetection.consecutive5xxErrors", -1, ""},
		{dr, "spec.trafficPolicy.outlierDetecton", 2, "has no field outlierDetecton (did you mean outlierDetection?)"},
		{dr, "spec.trafficPolicy.connectionPool.tcp.maxConnection", 4, "did you mean maxConnections?"},
		{dr, "spec.subsets.0.labels.version", -1, ""},
		{dr, "status.anything.at.all", -1, ""},
		{dr, "metadata.name", -1, ""},
		{dr, "metadata.nam", 1, "did you mean name?"},
		{dr, "kind", -1, ""},
	} {
		m := tc.shape.Walk(strings.Split(tc.path, "."))
		switch {
		case tc.at < 0 && m != nil:
			t.Errorf("%s: %d %s, want every name there", tc.path, m.At, m.Msg)
		case tc.at >= 0 && m == nil:
			t.Errorf("%s: every name there, want a miss at %d", tc.path, tc.at)
		case tc.at >= 0 && (m.At != tc.at || !strings.Contains(m.Msg, tc.msg)):
			t.Errorf("%s: %d %q, want %d %q", tc.path, m.At, m.Msg, tc.at, tc.msg)
		}
	}
	if s, _ := Builtin("", "DestinationRule"); s != nil {
		t.Error("Builtin(DestinationRule) is not nil")
	}
	if s, _ := Builtin("networking.istio.io/v1", "Service"); s != nil {
		t.Error("Builtin(networking.istio.io/v1 Service) is not nil")
	}
}
