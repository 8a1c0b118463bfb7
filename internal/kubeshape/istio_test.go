package kubeshape

import (
	"bytes"
	"compress/gzip"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// istioDocObjects are valid Istio objects as Istio's documentation writes them (its reference
// pages' examples, trimmed): vet must pass every one.
var istioDocObjects = []string{`
apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata:
  name: bookinfo-ratings
spec:
  host: ratings.prod.svc.cluster.local
  trafficPolicy:
    loadBalancer:
      simple: LEAST_REQUEST
    connectionPool:
      tcp:
        maxConnections: 100
        connectTimeout: 30ms
        tcpKeepalive:
          time: 7200s
          interval: 75s
      http:
        http2MaxRequests: 1000
        http1MaxPendingRequests: 1
        maxRequestsPerConnection: 10
    outlierDetection:
      consecutive5xxErrors: 7
      interval: 5m
      baseEjectionTime: 15m
      maxEjectionPercent: 100
    tls:
      mode: ISTIO_MUTUAL
  subsets:
  - name: testversion
    labels:
      version: v3
    trafficPolicy:
      loadBalancer:
        consistentHash:
          httpCookie:
            name: user
            ttl: 0s
      portLevelSettings:
      - port:
          number: 80
        loadBalancer:
          simple: ROUND_ROBIN
`, `
apiVersion: networking.istio.io/v1beta1
kind: DestinationRule
metadata:
  name: locality
spec:
  host: myservice.default.svc.cluster.local
  trafficPolicy:
    loadBalancer:
      localityLbSetting:
        enabled: true
        failover:
        - from: us-east
          to: eu-west
    outlierDetection:
      consecutive5xxErrors: 1
      interval: 1s
      baseEjectionTime: 1m
`, `
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata:
  name: reviews-route
spec:
  hosts:
  - reviews.prod.svc.cluster.local
  gateways:
  - mesh
  http:
  - name: "reviews-v2-routes"
    match:
    - uri:
        prefix: "/wpcatalog"
      headers:
        end-user:
          exact: jason
      queryParams:
        v:
          regex: "^2"
    rewrite:
      uri: "/newcatalog"
    route:
    - destination:
        host: reviews.prod.svc.cluster.local
        subset: v2
        port:
          number: 9080
      weight: 80
      headers:
        request:
          set:
            x-canary: "true"
    - destination:
        host: reviews.prod.svc.cluster.local
        subset: v1
      weight: 20
    fault:
      delay:
        percentage:
          value: 0.1
        fixedDelay: 5s
      abort:
        percentage:
          value: 0.1
        httpStatus: 400
    retries:
      attempts: 3
      perTryTimeout: 2s
      retryOn: gateway-error,connect-failure,refused-stream
    timeout: 10s
    mirror:
      host: reviews-mirror
    mirrorPercentage:
      value: 50.0
    corsPolicy:
      allowOrigins:
      - exact: https://example.com
      allowMethods:
      - POST
      maxAge: "24h"
  tcp:
  - match:
    - port: 27017
    route:
    - destination:
        host: mongo.backup.svc.cluster.local
        port:
          number: 5555
`, `
apiVersion: networking.istio.io/v1
kind: Gateway
metadata:
  name: my-gateway
spec:
  selector:
    app: my-gateway-controller
  servers:
  - port:
      number: 80
      name: http
      protocol: HTTP
    hosts:
    - uk.bookinfo.com
    tls:
      httpsRedirect: true
  - port:
      number: 443
      name: https-443
      protocol: HTTPS
    hosts:
    - "*"
    tls:
      mode: SIMPLE
      credentialName: bookinfo-secret
`, `
apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata:
  name: external-svc-https
spec:
  hosts:
  - api.dropboxapi.com
  location: MESH_EXTERNAL
  ports:
  - number: 443
    name: https
    protocol: TLS
  resolution: DNS
  endpoints:
  - address: 10.1.1.1
    ports:
      https: 8443
    labels:
      app: x
`, `
apiVersion: networking.istio.io/v1
kind: Sidecar
metadata:
  name: default
spec:
  workloadSelector:
    labels:
      app: ratings
  outboundTrafficPolicy:
    mode: REGISTRY_ONLY
  ingress:
  - port:
      number: 9080
      protocol: HTTP
      name: somename
    defaultEndpoint: unix:///var/run/someuds.sock
  egress:
  - hosts:
    - "./*"
    - "istio-system/*"
`, `
apiVersion: security.istio.io/v1
kind: PeerAuthentication
metadata:
  name: default
spec:
  selector:
    matchLabels:
      app: finance
  mtls:
    mode: STRICT
  portLevelMtls:
    8080:
      mode: DISABLE
`, `
apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata:
  name: httpbin
spec:
  selector:
    matchLabels:
      app: httpbin
  action: ALLOW
  rules:
  - from:
    - source:
        principals: ["cluster.local/ns/default/sa/sleep"]
    - source:
        namespaces: ["test"]
    to:
    - operation:
        methods: ["GET"]
        paths: ["/info*"]
    when:
    - key: request.auth.claims[iss]
      values: ["https://accounts.google.com"]
`, `
apiVersion: networking.istio.io/v1alpha3
kind: EnvoyFilter
metadata:
  name: custom-protocol
spec:
  workloadSelector:
    labels:
      app: reviews
  configPatches:
  - applyTo: NETWORK_FILTER
    match:
      context: SIDECAR_OUTBOUND
      listener:
        portNumber: 9307
        filterChain:
          filter:
            name: "envoy.filters.network.tcp_proxy"
    patch:
      operation: INSERT_BEFORE
      value:
        name: "envoy.extensions.filters.network.mongo_proxy"
        typed_config:
          "@type": "type.googleapis.com/envoy.extensions.filters.network.mongo_proxy.v3.MongoProxy"
          stat_prefix: mongo
          anything: [1, "two", {three: 3}]
`, `
apiVersion: telemetry.istio.io/v1
kind: Telemetry
metadata:
  name: mesh-default
spec:
  accessLogging:
  - providers:
    - name: envoy
    filter:
      expression: response.code >= 400
  tracing:
  - randomSamplingPercentage: 10.00
    customTags:
      my_new_foo_tag:
        literal:
          value: "foo"
  metrics:
  - providers:
    - name: prometheus
    overrides:
    - match:
        metric: REQUEST_COUNT
        mode: CLIENT_AND_SERVER
      tagOverrides:
        request_host:
          operation: REMOVE
`}

func decodeYAML(t *testing.T, doc string) map[string]any {
	t.Helper()
	var o map[string]any
	if err := yaml.Unmarshal([]byte(doc), &o); err != nil {
		t.Fatal(err)
	}
	return o
}

// TestIstioDocObjectsPass: the valid objects of Istio's documentation have no field Istio's
// CRDs (istio.json.gz) refuse; their free-form parts (an EnvoyFilter's patch.value) hold any.
func TestIstioDocObjectsPass(t *testing.T) {
	for _, doc := range istioDocObjects {
		o := decodeYAML(t, doc)
		apiVersion, _ := o["apiVersion"].(string)
		kind, _ := o["kind"].(string)
		if field, msg := IstioServes(apiVersion, kind); msg != "" {
			t.Errorf("%s %s: %s: %s", apiVersion, kind, field, msg)
		}
		sh, name := Known(apiVersion, kind)
		if sh == nil || name != kind {
			t.Errorf("Known(%q, %q) = %v, %q", apiVersion, kind, sh, name)
			continue
		}
		sh.CheckObject(o, func(path []string, m *Miss) {
			t.Errorf("%s: %s: %s", kind, strings.Join(path, "."), m.Msg)
		})
	}
}

// TestIstioObjectMistakes: a newcomer's Istio mistakes are each found, at their field, saying
// what was expected.
func TestIstioObjectMistakes(t *testing.T) {
	for _, tc := range []struct {
		doc, path, msg string
	}{
		{"apiVersion: networking.istio.io/v1\nkind: DestinationRule\nspec: {trafficPolicy: {connectionPool: {http: {http1MaxPendingRequest: 1}}}}",
			"spec.trafficPolicy.connectionPool.http.http1MaxPendingRequest", "has no field http1MaxPendingRequest (did you mean http1MaxPendingRequests?)"},
		{"apiVersion: networking.istio.io/v1\nkind: DestinationRule\nspec: {trafficPolicy: {connectionPool: {tcp: {maxConnections: \"1\"}}}}",
			"spec.trafficPolicy.connectionPool.tcp.maxConnections", `is an integer, not "1" (a string): the API server refuses it`},
		{"apiVersion: networking.istio.io/v1\nkind: DestinationRule\nspec: {trafficPolicy: {outlierDetection: {consecutive5xxErrors: \"3\"}}}",
			"spec.trafficPolicy.outlierDetection.consecutive5xxErrors", `is an integer, not "3"`},
		// An integer field given a number that is none: the CRD's type: integer, its format
		// int32, its minimum and maximum.
		{"apiVersion: networking.istio.io/v1\nkind: DestinationRule\nspec: {trafficPolicy: {connectionPool: {tcp: {maxConnections: 1.5}}}}",
			"spec.trafficPolicy.connectionPool.tcp.maxConnections", `is an integer: 1.5 is not a whole number: the API server refuses it`},
		{"apiVersion: networking.istio.io/v1\nkind: DestinationRule\nspec: {trafficPolicy: {connectionPool: {tcp: {maxConnections: 3000000000}}}}",
			"spec.trafficPolicy.connectionPool.tcp.maxConnections", `is an integer of format int32 (-2147483648 to 2147483647): 3000000000 is out of its range: the API server keeps it`},
		{"apiVersion: networking.istio.io/v1\nkind: DestinationRule\nspec: {trafficPolicy: {connectionPool: {tcp: {tcpKeepalive: {probes: -1}}}}}",
			"spec.trafficPolicy.connectionPool.tcp.tcpKeepalive.probes", `is an integer from 0 to 4294967295: -1 is out of that range: the API server refuses it`},
		{"apiVersion: networking.istio.io/v1\nkind: DestinationRule\nspec: {trafficPolicy: {loadBalancer: {simple: ROUNDROBIN}}}",
			"spec.trafficPolicy.loadBalancer.simple", `is one of UNSPECIFIED, LEAST_CONN, RANDOM, PASSTHROUGH, ROUND_ROBIN, LEAST_REQUEST; "ROUNDROBIN" is none of them (did you mean ROUND_ROBIN?)`},
		{"apiVersion: networking.istio.io/v1\nkind: VirtualService\nspec: {http: [{route: [{destination: {host: a, subnet: v1}}]}]}",
			"spec.http.0.route.0.destination.subnet", "has no field subnet (did you mean subset?)"},
		{"apiVersion: networking.istio.io/v1\nkind: VirtualService\nspec: {hosts: a}",
			"spec.hosts", `is a list: "a" (a string) is none`},
		{"apiVersion: networking.istio.io/v1\nkind: VirtualService\nspec: {http: {route: []}}",
			"spec.http", "is a list, not an object"},
		{"apiVersion: security.istio.io/v1\nkind: PeerAuthentication\nspec: {mtls: {mode: strict}}",
			"spec.mtls.mode", `"strict" is none of them (did you mean STRICT?)`},
		{"apiVersion: networking.istio.io/v1alpha3\nkind: EnvoyFilter\nspec: {configPatches: [{patch: {operaton: MERGE, value: {anything: 1}}}]}",
			"spec.configPatches.0.patch.operaton", "did you mean operation?"},
	} {
		o := decodeYAML(t, tc.doc)
		sh, _ := Known(o["apiVersion"].(string), o["kind"].(string))
		if sh == nil {
			t.Errorf("%s: no shape", tc.doc)
			continue
		}
		var got []string
		sh.CheckObject(o, func(path []string, m *Miss) {
			got = append(got, strings.Join(path, ".")+": "+m.Msg)
		})
		if len(got) != 1 || !strings.HasPrefix(got[0], tc.path+": ") || !strings.Contains(got[0], tc.msg) {
			t.Errorf("%s:\ngot  %q\nwant one at %s: ...%s...", tc.doc, got, tc.path, tc.msg)
		}
	}
}

// TestIstioServes: an Istio group's kind in the wrong case or a version Istio does not serve
// is named, with what Istio serves; a kind of another group (the Gateway API's Gateway) is not
// taken for Istio's.
func TestIstioServes(t *testing.T) {
	for _, tc := range []struct {
		apiVersion, kind, field, msg string
	}{
		{"networking.istio.io/v1", "DestinationRule", "", ""},
		{"networking.istio.io/v1alpha3", "EnvoyFilter", "", ""},
		{"telemetry.istio.io/v1alpha1", "Telemetry", "", ""},
		{"networking.istio.io/v1", "destinationrule", "", ""}, // served; Known names it DestinationRule
		{"networking.istio.io/v2", "DestinationRule", "apiVersion", `Istio serves DestinationRule as networking.istio.io/v1, networking.istio.io/v1alpha3, networking.istio.io/v1beta1 (Istio 1.30.8's CRDs), not networking.istio.io/v2: expected apiVersion "networking.istio.io/v1"`},
		{"networking.istio.io/v1", "EnvoyFilter", "apiVersion", `expected apiVersion "networking.istio.io/v1alpha3"`},
		{"security.istio.io/v1", "DestinationRule", "kind", "security.istio.io has no kind DestinationRule"},
		{"networking.istio.io/v1", "DestinationRules", "", ""}, // a plural: Known names it
		{"networking.istio.io/v1", "DestinatonRule", "kind", "did you mean DestinationRule?"},
		{"gateway.networking.k8s.io/v1", "Gateway", "", ""},
	} {
		field, msg := IstioServes(tc.apiVersion, tc.kind)
		if field != tc.field || !strings.Contains(msg, tc.msg) || (tc.msg == "" && msg != "") {
			t.Errorf("IstioServes(%q, %q) = %q, %q; want %q, %q", tc.apiVersion, tc.kind, field, msg, tc.field, tc.msg)
		}
	}
	if sh, name := Known("networking.istio.io/v1", "destinationrule"); sh == nil || name != "DestinationRule" {
		t.Errorf("Known(destinationrule) = %v, %q", sh, name)
	}
	for _, k := range [][2]string{{"", "Gateway"}, {"gateway.networking.k8s.io/v1", "Gateway"}, {"", "DestinationRule"}} {
		if sh, _ := Known(k[0], k[1]); sh != nil {
			t.Errorf("Known(%q, %q) took it for Istio's", k[0], k[1])
		}
	}
}

// TestIstioShapesDecode: every kind istio_gen.go lists has an object's shape in istio.json.gz,
// with metadata and spec.
func TestIstioShapesDecode(t *testing.T) {
	if _, err := decodeShapes(istioData); err != nil {
		t.Fatal(err)
	}
	for _, gk := range istioKinds {
		sh, name := Istio(gk.apiVersion, gk.kind)
		if sh == nil || name != gk.kind || sh.Kind != Object || sh.Fields["spec"] == nil || sh.Fields["metadata"] == nil {
			t.Errorf("Istio(%q, %q) = %v, %q", gk.apiVersion, gk.kind, sh, name)
		}
	}
}

// TestEnumRoundTrips: an enum scalar is written and read back by EncodeShapes/decodeShapes.
func TestEnumRoundTrips(t *testing.T) {
	sh := FromCRD(map[string]any{"type": "object", "properties": map[string]any{
		"mode": map[string]any{"type": "string", "enum": []any{"A", "B"}},
	}})
	sh.Fields["metadata"] = opaque // not the point here
	data, at, err := EncodeShapes([]*Shape{sh})
	if err != nil {
		t.Fatal(err)
	}
	shapes, err := decodeShapes(gzipped(t, data))
	if err != nil {
		t.Fatal(err)
	}
	got := shapes[at[0]].Fields["mode"]
	if got == nil || got.Kind != Scalar || got.Scalar != StringScalar || strings.Join(got.Enum, ",") != "A,B" {
		t.Fatalf("mode decoded as %+v", got)
	}
}

func gzipped(t *testing.T, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
