package interp

import "testing"

// TestServerFieldPath: an API server's rejection of an object is mapped to the field the
// scenario wrote (the messages are the shapes the sandbox's kube-apiserver gives).
func TestServerFieldPath(t *testing.T) {
	for _, tt := range []struct{ msg, want string }{
		{`Gateway vet-gw/waypoint (objects[0]): failed to create typed patch object (vet-gw/waypoint; gateway.networking.k8s.io/v1, Kind=Gateway): .spec.listeners[0].protocl: field not declared in schema`, "objects.0.spec.listeners.0.protocl"},
		{`DestinationRule lab/backend (objects[2]): DestinationRule.networking.istio.io "backend" is invalid: spec.trafficPolicy.connectionPool.tcp.maxConnections: Invalid value: "string": must be integer`, "objects.2.spec.trafficPolicy.connectionPool.tcp.maxConnections"},
		{`ConfigMap lab/c (objects[1]): something without a field`, "objects.1"},
		{`Deployment lab/d (dr.yaml, item 0): spec.replicas: Invalid value`, ""},
	} {
		if got := serverFieldPath(tt.msg); got != tt.want {
			t.Errorf("serverFieldPath(%q) = %q, want %q", tt.msg, got, tt.want)
		}
	}
}
