package suite

import (
	"os"
	"path/filepath"
	"testing"

	"labrun.dev/labrun/dsl"
)

// pairs are scenarios written two by two: each pair can change what the other measures, so
// that a run beside the other could pass (or fail) for the other's reasons.
const pairs = `package lab

import "labrun.dev/schema"

_vs: {apiVersion: "networking.istio.io/v1", kind: "VirtualService"}
_dr: {apiVersion: "networking.istio.io/v1", kind: "DestinationRule"}
_abort: [{fault: abort: {httpStatus: 503, percentage: value: 100}, route: [{destination: host: "x"}]}]

// Measures its own backend from an ephemeral namespace.
measure: schema.#Scenario & {
	target: "kube"
	ephemeralNamespaces: ["app"]
	steps: [{load: {url: "http://backend.${ns.app}.svc.cluster.local:8080/", requests: 10}}]
}

// probe p25 #01: a VirtualService for every Service of the cluster, in its own namespace but
// exported everywhere: every run's traffic gets its fault.
wildvs: schema.#Scenario & {
	target: "kube"
	ephemeralNamespaces: ["f"]
	steps: [{apply: objects: [_vs & {metadata: name: "all", spec: {hosts: ["*.svc.cluster.local"], http: _abort}}]}]
}
wildlocal: schema.#Scenario & {
	target: "kube"
	ephemeralNamespaces: ["f"]
	steps: [{apply: objects: [_vs & {metadata: name: "all", spec: {hosts: ["*.cluster.local"], http: _abort}}]}]
}
star: schema.#Scenario & {
	target: "kube"
	ephemeralNamespaces: ["f"]
	steps: [{apply: objects: [_vs & {metadata: name: "all", spec: {hosts: ["*"], http: _abort}}]}]
}

// probe p25 #02: istiod scaled to 0 in the root namespace: no run's configuration reaches
// its proxies meanwhile.
istiod: schema.#Scenario & {
	target: "kube"
	namespaces: ["istio-system"]
	systemNamespaces: ["istio-system"]
	steps: [{scale: {deployment: "istiod", replicas: 0, namespace: "istio-system"}}]
}

// probe p25 #02: CoreDNS scaled to 0: no run resolves a name meanwhile.
coredns: schema.#Scenario & {
	target: "kube"
	namespaces: ["kube-system"]
	systemNamespaces: ["kube-system"]
	steps: [{scale: {deployment: "coredns", replicas: 0, namespace: "kube-system"}}]
}

// probe p25 #03: a DestinationRule exported to another scenario's fixed namespace only.
toLab: schema.#Scenario & {
	target: "kube"
	namespaces: ["other"]
	steps: [{apply: objects: [_dr & {metadata: name: "b", spec: {host: "api.example.com", exportTo: ["lab"], trafficPolicy: connectionPool: tcp: maxConnections: 1}}]}]
}
inLab: schema.#Scenario & {
	target: "kube"
	namespaces: ["lab"]
	steps: [{sleep: "1s"}]
}

// probe p25 #04: a run that calls an external host beside one that configures it.
callext: schema.#Scenario & {
	target: "kube"
	ephemeralNamespaces: ["c"]
	steps: [{load: {url: "http://api.example.com/", requests: 10}}]
}
faultext: schema.#Scenario & {
	target: "kube"
	ephemeralNamespaces: ["e"]
	steps: [{apply: objects: [_vs & {metadata: name: "ext", spec: {hosts: ["api.example.com"], http: _abort}}]}]
}
// ... and one that calls a Service of another scenario's fixed namespace.
callLab: schema.#Scenario & {
	target: "kube"
	ephemeralNamespaces: ["c"]
	steps: [{load: {url: "http://backend.lab:8080/", requests: 10}}]
}

// probe p25 #05: an admission webhook (or policy) is called for every namespace's objects,
// and an Istio CRD replaced is every run's configuration.
hook: schema.#Scenario & {
	target: "kube"
	clusterScoped: true
	ephemeralNamespaces: ["h"]
	steps: [{apply: objects: [{apiVersion: "admissionregistration.k8s.io/v1", kind: "MutatingWebhookConfiguration", metadata: name: "h", webhooks: []}]}]
}
policy: schema.#Scenario & {
	target: "kube"
	clusterScoped: true
	ephemeralNamespaces: ["h"]
	steps: [{apply: objects: [{apiVersion: "admissionregistration.k8s.io/v1", kind: "ValidatingAdmissionPolicyBinding", metadata: name: "deny-all", spec: policyName: "deny"}]}]
}
crd: schema.#Scenario & {
	target: "kube"
	clusterScoped: true
	ephemeralNamespaces: ["h"]
	steps: [{apply: objects: [{apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition", metadata: name: "virtualservices.networking.istio.io", spec: {}}]}]
}
ownCRD: schema.#Scenario & {
	target: "kube"
	clusterScoped: true
	ephemeralNamespaces: ["h"]
	steps: [{apply: objects: [{apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition", metadata: name: "widgets.example.com", spec: {}}]}]
}

// probe p25 #06: the host and the file are vars, known before the run.
varhost: schema.#Scenario & {
	target: "kube"
	ephemeralNamespaces: ["e"]
	vars: h: "api.example.com"
	steps: [{apply: objects: [_vs & {metadata: name: "ext", spec: {hosts: ["${vars.h}"], http: _abort}}]}]
}
varfile: schema.#Scenario & {
	target: "kube"
	ephemeralNamespaces: ["e"]
	vars: f: "wild.yaml"
	steps: [{apply: files: ["${vars.f}"]}]
}
varload: schema.#Scenario & {
	target: "kube"
	ephemeralNamespaces: ["c"]
	vars: h: "api.example.com"
	steps: [{load: {url: "http://${vars.h}/", requests: 10}}]
}

// probe p25 #07: a load of a fixed local address that another run's backend serves gets
// that run's answers (it passes only beside it).
serves: schema.#Scenario & {
	local: backends: a: {address: "127.0.0.1:18080"}
	steps: [{sleep: "1s"}]
}
calls: schema.#Scenario & {
	steps: [{load: {url: "http://localhost:18080/echo", requests: 4}}]
}
callsOther: schema.#Scenario & {
	steps: [{load: {url: "http://127.0.0.1:18081/echo", requests: 4}}]
}

// probe p109: two loads of one fixed local address no run serves (an Envoy on fixed ports)
// measure its server under each other's requests; two snapshots of one Envoy's admin read
// counters each other's traffic moves.
callsOtherToo: schema.#Scenario & {
	steps: [{load: {url: "http://localhost:18081/other", requests: 4}}]
}
// probe p109: a logs step reading a local file since a mark beside a run whose command
// writes that file counts the other run's lines.
logsFile: schema.#Scenario & {
	steps: [{name: "m", sleep: "100ms"}, {name: "l", logs: {file: "app.log", since: "m"}}]
}
writesLog: schema.#Scenario & {
	steps: [{name: "w", exec: argv: ["sh", "-c", "echo GET 503 >> app.log"]}]
}
snapAdmin: schema.#Scenario & {
	steps: [{name: "s", snapshot: {admin: "http://127.0.0.1:15000", cluster: "web"}}]
}
snapAdminLocalhost: schema.#Scenario & {
	steps: [{name: "s", snapshot: {admin: "http://localhost:15000", cluster: "web"}}]
}
snapProm: schema.#Scenario & {
	steps: [{name: "s", snapshot: {prometheus: "http://127.0.0.1:15090/stats/prometheus"}}]
}

// probe p25 #08: two runs measure the shared ingress gateway (in istio-system, which neither
// declares: reading a pod changes nothing, for the guard) while loading through it; and one
// resets its counters by exec.
_gw: {selector: "app=istio-ingressgateway", namespace: "istio-system"}
gwA: schema.#Scenario & {
	target: "kube"
	ephemeralNamespaces: ["a"]
	steps: [
		{name: "before", snapshot: {envoy: _gw, cluster: "outbound|80||backend.shared.svc.cluster.local"}},
		{load: {url: "http://istio-ingressgateway.istio-system/a", requests: 10}},
		{name: "after", snapshot: {envoy: _gw, cluster: "outbound|80||backend.shared.svc.cluster.local"}},
	]
}
gwB: schema.#Scenario & {
	target: "kube"
	ephemeralNamespaces: ["b"]
	steps: [
		{name: "before", snapshot: {envoy: _gw, cluster: "outbound|80||backend.shared.svc.cluster.local"}},
		{load: {url: "http://istio-ingressgateway.istio-system/b", requests: 10}},
		{name: "after", snapshot: {envoy: _gw, cluster: "outbound|80||backend.shared.svc.cluster.local"}},
	]
}
gwReset: schema.#Scenario & {
	target: "kube"
	ephemeralNamespaces: ["r"]
	steps: [{exec: _gw & {argv: ["pilot-agent", "request", "POST", "reset_counters"]}}]
}
gwLogs: schema.#Scenario & {
	target: "kube"
	ephemeralNamespaces: ["r"]
	steps: [{logs: _gw}]
}

// probe p25 #09: two Gateways for the shared ingress gateway's pods (a Gateway's selector
// picks gateway pods of every namespace): port 80 for every host, each routing to its own
// run's Service; Istio keeps one of the conflicting servers.
_gateway: {apiVersion: "networking.istio.io/v1", kind: "Gateway", metadata: name: "gw",
	spec: {selector: istio: *"ingressgateway" | string, servers: [{port: {number: 80, name: "http", protocol: "HTTP"}, hosts: ["*"]}]}}
ingressA: schema.#Scenario & {
	target: "kube"
	ephemeralNamespaces: ["a"]
	steps: [{apply: objects: [_gateway]}]
}
ingressB: schema.#Scenario & {
	target: "kube"
	ephemeralNamespaces: ["b"]
	steps: [{apply: objects: [_gateway]}]
}
ownGateway: schema.#Scenario & {
	target: "kube"
	ephemeralNamespaces: ["b"]
	steps: [{apply: objects: [_gateway & {spec: selector: istio: "my-gateway"}]}]
}

// probe p25 #10: a delete is a change too: Istio's injector webhook deleted (no sidecar for
// the pods made meanwhile), a CRD deleted under a run that applies it.
unhook: schema.#Scenario & {
	target: "kube"
	clusterScoped: true
	ephemeralNamespaces: ["h"]
	steps: [{delete: objects: [{apiVersion: "admissionregistration.k8s.io/v1", kind: "MutatingWebhookConfiguration", metadata: name: "istio-sidecar-injector"}]}]
}
uncrd: schema.#Scenario & {
	target: "kube"
	clusterScoped: true
	ephemeralNamespaces: ["h"]
	steps: [{delete: objects: [{apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition", metadata: name: "widgets.example.com"}]}]
}

// probe p25 #11: curl in an exec, the Istio tasks' way (registry-only egress: httpbin.org is
// refused unless a ServiceEntry registers it), beside a run whose ServiceEntry registers it
// for every namespace.
curlExt: schema.#Scenario & {
	target: "kube"
	ephemeralNamespaces: ["c"]
	steps: [{exec: {selector: "app=curl", argv: ["sh", "-c", "curl -s -o /dev/null -w '%{http_code}' http://httpbin.org/headers"]}}]
}
registerExt: schema.#Scenario & {
	target: "kube"
	ephemeralNamespaces: ["e"]
	steps: [{apply: objects: [{apiVersion: "networking.istio.io/v1", kind: "ServiceEntry", metadata: name: "httpbin-ext",
		spec: {hosts: ["httpbin.org"], ports: [{number: 80, name: "http", protocol: "HTTP"}], resolution: "DNS"}}]}]
}
curlLocal: schema.#Scenario & {
	steps: [{exec: {argv: ["curl", "-s", "http://127.0.0.1:18080/echo"]}}]
}

// probe p25 #12: a file known only when the run starts (here named by a step's result) may
// hold anything, a VirtualService for every host included.
genFile: schema.#Scenario & {
	target: "kube"
	ephemeralNamespaces: ["g"]
	steps: [
		{name: "gen", exec: {argv: ["sh", "-c", "echo /tmp/generated.yaml"]}},
		{apply: files: ["${gen.stdout}"]},
	]
}

// probe p25 #13: a run that reads objects of a fixed namespace it does not declare (reading
// is no mutation for the guard) beside the run that changes them.
scaleWeb: schema.#Scenario & {
	target: "kube"
	namespaces: ["shared"]
	steps: [{scale: {deployment: "web", replicas: 0}}]
}
waitWeb: schema.#Scenario & {
	target: "kube"
	ephemeralNamespaces: ["w"]
	steps: [{wait: {rollout: "deployment/web", namespace: "shared"}}]
}
getWeb: schema.#Scenario & {
	target: "kube"
	ephemeralNamespaces: ["w"]
	steps: [{get: {kind: "Deployment", apiVersion: "apps/v1", name: "web", namespace: "shared", path: "status.readyReplicas"}}]
}
matchWeb: schema.#Scenario & {
	target: "kube"
	ephemeralNamespaces: ["w"]
	steps: [{wait: match: {apiVersion: "apps/v1", kind: "Deployment", metadata: {name: "web", namespace: "shared"}, status: readyReplicas: 1}}]
}

// probe p25 #14: a config step reading its client's whole route 80 (every host on port 80
// the client sees) beside a run exporting a host to every namespace: the other's virtual host
// is in the route it judges. One reading the cluster of one host depends on that host only.
_client: {selector: "app=curl"}
route80: schema.#Scenario & {
	target: "kube"
	ephemeralNamespaces: ["r"]
	steps: [{name: "r", config: {envoy: _client, route: "80"}}]
	expect: ["len(r.virtual_hosts) == 2"]
}
clusterExt: schema.#Scenario & {
	target: "kube"
	ephemeralNamespaces: ["r"]
	steps: [{name: "c", config: {envoy: _client, cluster: "outbound|80||httpbin.org"}}]
	expect: ["c.connect_timeout == \"10s\""]
}
clusterOwn: schema.#Scenario & {
	target: "kube"
	ephemeralNamespaces: ["r"]
	steps: [{name: "c", config: {envoy: _client, cluster: "outbound|80||backend.${ns.r}.svc.cluster.local"}}]
	expect: ["c.connect_timeout == \"10s\""]
}

// probe p30 #1: two people's route experiments, each with a backend Service of its own
// ephemeral namespace: route 80 of each client lists the other's Service too (no host is
// held for a Service of an ephemeral namespace), so len(r.virtual_hosts) depends on whether
// the other runs meanwhile.
_svc: {apiVersion: "v1", kind: "Service", metadata: name: "backend", spec: ports: [{port: 80}]}
routeOwn: schema.#Scenario & {
	target: "kube"
	ephemeralNamespaces: ["r"]
	steps: [
		{apply: objects: [_svc]},
		{name: "r", config: {envoy: _client, route: "80"}},
	]
	expect: ["len(r.virtual_hosts) == 2"]
}
svcOwn: schema.#Scenario & {
	target: "kube"
	ephemeralNamespaces: ["s"]
	steps: [{apply: objects: [_svc]}, {load: {url: "http://backend/", requests: 10}}]
}
svcOwnLocal: schema.#Scenario & {
	target: "kube"
	ephemeralNamespaces: ["s"]
	steps: [{apply: objects: [_svc & {metadata: annotations: "networking.istio.io/exportTo": "."}]}]
}
namesOwn: schema.#Scenario & {
	target: "kube"
	ephemeralNamespaces: ["r"]
	steps: [{name: "n", config: {envoy: _client, names: "clusters"}}]
	expect: ["len(n) == 3"]
}

// ... and a snapshot of the cluster of a Service of another run's fixed namespace, whose
// DestinationRule (maxConnections) is what the delta measures.
snapLab: schema.#Scenario & {
	target: "kube"
	ephemeralNamespaces: ["r"]
	steps: [{name: "s", snapshot: {envoy: _client, cluster: "outbound|8080||backend.lab.svc.cluster.local"}}]
	expect: ["s.upstream_rq_total > 0"]
}

// DNS names are case-insensitive: API.Example.com is api.example.com's host.
callUpper: schema.#Scenario & {
	target: "kube"
	ephemeralNamespaces: ["c"]
	steps: [{load: {url: "http://API.Example.com/", requests: 10}}]
}

// A delete by kind of every webhook (all: true, not only those the run made).
unhookAll: schema.#Scenario & {
	target: "kube"
	clusterScoped: true
	ephemeralNamespaces: ["h"]
	steps: [{delete: {kind: "MutatingWebhookConfiguration", apiVersion: "admissionregistration.k8s.io/v1", selector: "app=sidecar-injector", all: true}}]
}

// probe p25 #16: scenarios that declare no namespace run in the invocation's (-n, else the
// kubeconfig's): two of them loading from and snapshotting the same client there ran at once.
_curl: {selector: "app=curl"}
defaultA: schema.#Scenario & {
	target: "kube"
	steps: [
		{name: "before", snapshot: {envoy: _curl, cluster: "outbound|80||httpbin.org"}},
		{load: {from: _curl, url: "http://httpbin.org/a", requests: 10}},
		{name: "after", snapshot: {envoy: _curl, cluster: "outbound|80||httpbin.org"}},
	]
}
defaultB: schema.#Scenario & {
	target: "kube"
	steps: [{load: {from: _curl, url: "http://httpbin.org/b", requests: 10}}]
}

// probe p25 #17: a dns step flipping a host's records in a lab DNS server every pod resolves
// through, beside a run calling that host.
flip: schema.#Scenario & {
	target: "kube"
	namespaces: ["dns-lab"]
	steps: [{dns: {host: "gslb.lab.internal", addresses: ["10.0.0.9"], server: {selector: "app=lab-dns", file: "/etc/coredns/lab.hosts"}}}]
}
callFlip: schema.#Scenario & {
	target: "kube"
	ephemeralNamespaces: ["c"]
	steps: [{load: {url: "http://gslb.lab.internal:8080/", requests: 10}}]
}

// probe p25 #19: a command on this machine (an exec with no pod) changing the cluster with
// kubectl or istioctl, which no guard sees: istiod restarted, the mesh config reinstalled.
restartIstiod: schema.#Scenario & {
	target: "kube"
	ephemeralNamespaces: ["k"]
	steps: [{exec: argv: ["kubectl", "-n", "istio-system", "rollout", "restart", "deployment/istiod"]}]
}
istioctlInstall: schema.#Scenario & {
	target: "kube"
	ephemeralNamespaces: ["k"]
	steps: [{exec: argv: ["sh", "-c", "istioctl install -y --set meshConfig.outboundTrafficPolicy.mode=REGISTRY_ONLY"]}]
}
kubectlGet: schema.#Scenario & {
	target: "kube"
	ephemeralNamespaces: ["k"]
	steps: [{exec: argv: ["kubectl", "get", "pods", "-A"]}]
}

// probe p30 #3: a command on this machine that labrun does not know to only read may change
// anything in the cluster (it gets the run's kubeconfig), where no namespace guard sees it:
// it goes alone. One known to read (curl, jq, istioctl proxy-config) holds no more.
patchScript: schema.#Scenario & {
	target: "kube"
	ephemeralNamespaces: ["k"]
	steps: [{exec: argv: ["python3", "patch_mesh.py"]}]
}
kubectlRun: schema.#Scenario & {
	target: "kube"
	ephemeralNamespaces: ["k"]
	steps: [{exec: argv: ["sh", "-c", "kubectl -n istio-system run tmp --image=busybox && kubectl get pods"]}]
}
stdinScript: schema.#Scenario & {
	target: "kube"
	ephemeralNamespaces: ["k"]
	steps: [{exec: {argv: ["sh"], stdin: "kubectl -n istio-system delete pod -l app=istiod\n"}}]
}
localController: schema.#Scenario & {
	target: "kube"
	ephemeralNamespaces: ["k"]
	steps: [{name: "ctl", process: {argv: ["./my-controller", "--kubeconfig", "$KUBECONFIG"]}, background: true}, {sleep: "5s"}]
}
readsOnly: schema.#Scenario & {
	target: "kube"
	ephemeralNamespaces: ["k"]
	steps: [
		{exec: argv: ["sh", "-c", "istioctl proxy-config cluster deploy/curl -o json | jq '.[].name'"]},
		{name: "pf", process: {argv: ["kubectl", "port-forward", "svc/backend", "18080:80"]}, background: true},
	]
}

// probe p30 #2: a server binding a fixed port named in its arguments, without a ready check,
// beside the runs calling or serving that port; calls to an IP or a NodePort (any Service's
// or pod's); URLs in a script on stdin or in a script file.
procHTTP: schema.#Scenario & {
	steps: [{name: "srv", process: argv: ["python3", "-m", "http.server", "18080"], background: true}, {sleep: "5s"}]
}
procFortio: schema.#Scenario & {
	steps: [{name: "srv", process: argv: ["fortio", "server", "-http-port", "18080"], background: true}, {sleep: "5s"}]
}
procForward: schema.#Scenario & {
	steps: [{name: "pf", process: argv: ["kubectl", "port-forward", "svc/backend", "18081:80"], background: true}, {sleep: "5s"}]
}
procShell: schema.#Scenario & {
	steps: [{name: "srv", process: argv: ["sh", "-c", "exec nc -lk -p 18081 -e cat"], background: true}, {sleep: "5s"}]
}
// probe p30 (left): a process whose listening port is in the config file it reads (envoy -c
// envoy.yaml, a server's --config=srv.json) held no port: it ran beside a run serving there.
procEnvoyFile: schema.#Scenario & {
	steps: [{name: "envoy", process: argv: ["envoy", "-c", "envoy.yaml"], background: true}, {sleep: "5s"}]
}
procConfigFlag: schema.#Scenario & {
	steps: [{name: "srv", process: argv: ["./srv", "--config=srv.json"], background: true}, {sleep: "5s"}]
}
procSleep: schema.#Scenario & {
	steps: [{name: "s", process: argv: ["sleep", "30"], background: true}, {sleep: "5s"}]
}
callIP: schema.#Scenario & {
	target: "kube"
	ephemeralNamespaces: ["c"]
	steps: [{load: {url: "http://10.96.12.34:8080/", requests: 10}}]
}
callNodePort: schema.#Scenario & {
	target: "kube"
	ephemeralNamespaces: ["c"]
	steps: [{exec: argv: ["curl", "-s", "http://172.18.0.2:30080/"]}]
}
nodePortSvc: schema.#Scenario & {
	target: "kube"
	ephemeralNamespaces: ["n"]
	steps: [{apply: objects: [_svc & {spec: {type: "NodePort", ports: [{port: 80, nodePort: 30080}]}}]}]
}
stdinCurl: schema.#Scenario & {
	target: "kube"
	ephemeralNamespaces: ["c"]
	steps: [{exec: {selector: "app=curl", argv: ["sh"], stdin: "curl -s http://httpbin.org/headers\n"}}]
}
scriptCurl: schema.#Scenario & {
	target: "kube"
	ephemeralNamespaces: ["c"]
	steps: [{exec: argv: ["sh", "check.sh"]}]
}
scriptDelete: schema.#Scenario & {
	target: "kube"
	ephemeralNamespaces: ["c"]
	steps: [{exec: argv: ["bash", "-e", "reset.sh"]}]
}

// probe p30 fresh: two people's ingress experiments. A VirtualService bound to the shared
// Gateway of istio-system, or a Kubernetes Ingress (served by Istio's ingress gateway), beside
// a run measuring the gateway; a load or a curl through the gateway with a Host header beside
// a fault for that host; nc to a ServiceEntry's VIP beside the ServiceEntry.
vsOnGateway: schema.#Scenario & {
	target: "kube"
	ephemeralNamespaces: ["a"]
	steps: [{apply: objects: [_vs & {metadata: name: "bookinfo", spec: {hosts: ["bookinfo.example.com"], exportTo: ["."], gateways: ["istio-system/ingressgateway"], http: [{route: [{destination: host: "productpage"}]}]}}]}]
}
ingress: schema.#Scenario & {
	target: "kube"
	ephemeralNamespaces: ["a"]
	steps: [{apply: objects: [{apiVersion: "networking.k8s.io/v1", kind: "Ingress", metadata: name: "i",
		spec: {ingressClassName: "istio", rules: [{http: paths: [{path: "/", pathType: "Prefix", backend: service: {name: "httpbin", port: number: 8000}}]}]}}]}]
}
otherIngress: schema.#Scenario & {
	target: "kube"
	ephemeralNamespaces: ["a"]
	steps: [{apply: objects: [{apiVersion: "networking.k8s.io/v1", kind: "Ingress", metadata: name: "i",
		spec: {ingressClassName: "nginx", rules: [{http: paths: [{path: "/", pathType: "Prefix", backend: service: {name: "httpbin", port: number: 8000}}]}]}}]}]
}
faultBookinfo: schema.#Scenario & {
	target: "kube"
	ephemeralNamespaces: ["e"]
	steps: [{apply: objects: [_vs & {metadata: name: "f", spec: {hosts: ["bookinfo.example.com"], http: _abort}}]}]
}
hostHeader: schema.#Scenario & {
	target: "kube"
	ephemeralNamespaces: ["b"]
	steps: [{load: {from: _curl, url: "http://istio-ingressgateway.istio-system/productpage", headers: {Host: "bookinfo.example.com"}, requests: 20}}]
}
curlHostHeader: schema.#Scenario & {
	target: "kube"
	ephemeralNamespaces: ["b"]
	steps: [{exec: _curl & {argv: ["curl", "-s", "-H", "Host: bookinfo.example.com", "http://istio-ingressgateway.istio-system/"]}}]
}
seVIP: schema.#Scenario & {
	target: "kube"
	ephemeralNamespaces: ["a"]
	steps: [{apply: objects: [{apiVersion: "networking.istio.io/v1", kind: "ServiceEntry", metadata: name: "db",
		spec: {hosts: ["db.internal"], addresses: ["240.0.0.10"], ports: [{number: 5432, name: "tcp", protocol: "TCP"}], resolution: "STATIC", endpoints: [{address: "10.0.0.5"}]}}]}]
}
ncVIP: schema.#Scenario & {
	target: "kube"
	ephemeralNamespaces: ["b"]
	steps: [{exec: _curl & {argv: ["sh", "-c", "nc -z -w 2 240.0.0.10 5432"]}}]
}

// probe p30 fresh: fortio server with no port named listens on 8080 (its default), beside
// a load of 127.0.0.1:8080; on kube a port-forward of this machine's 8080 beside a load of
// localhost:8080.
fortioDefault: schema.#Scenario & {
	steps: [{name: "srv", process: argv: ["fortio", "server"], background: true}, {sleep: "5s"}]
}
call8080: schema.#Scenario & {
	steps: [{load: {url: "http://127.0.0.1:8080/echo", requests: 4}}]
}
forward8080: schema.#Scenario & {
	target: "kube"
	ephemeralNamespaces: ["k"]
	steps: [{name: "pf", process: argv: ["kubectl", "port-forward", "svc/backend", "8080:80"], background: true}, {sleep: "5s"}]
}
loadLocalhostKube: schema.#Scenario & {
	target: "kube"
	ephemeralNamespaces: ["c"]
	steps: [{load: {url: "http://localhost:8080/", requests: 10}}]
}

// probe p30 fresh: curl and wget with no scheme in the URL (curl httpbin.org/headers), in a
// pod on kube and on this machine on the local target.
curlNoScheme: schema.#Scenario & {
	target: "kube"
	ephemeralNamespaces: ["b"]
	steps: [{exec: _curl & {argv: ["curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", "httpbin.org/headers"]}}]
}
wgetNoScheme: schema.#Scenario & {
	target: "kube"
	ephemeralNamespaces: ["b"]
	steps: [{exec: _curl & {argv: ["sh", "-c", "wget -qO- httpbin.org/get | head -1"]}}]
}
curlLocalNoScheme: schema.#Scenario & {
	steps: [{exec: argv: ["curl", "-s", "127.0.0.1:18080/echo"]}]
}

// probe p30 fresh: kubectl run inside a pod (its service account may write anywhere) beside
// a run measuring; pilot-agent or curl in a pod change no cluster object.
podKubectl: schema.#Scenario & {
	target: "kube"
	ephemeralNamespaces: ["k"]
	steps: [{exec: {selector: "app=toolbox", argv: ["sh", "-c", "kubectl -n istio-system rollout restart deployment/istiod"]}}]
}
podCurl: schema.#Scenario & {
	target: "kube"
	ephemeralNamespaces: ["k"]
	steps: [{exec: {selector: "app=toolbox", argv: ["pilot-agent", "request", "GET", "stats"]}}]
}

// probe p25 #20: an HTTPRoute of an ephemeral namespace attached to the shared Gateway of
// istio-system (allowedRoutes from every namespace): the gateway's routes change under a run
// measuring the gateway, and under another route for the same listener.
_route: {apiVersion: "gateway.networking.k8s.io/v1", kind: "HTTPRoute", metadata: name: "r",
	spec: {parentRefs: *[{name: "ingress", namespace: "istio-system"}] | [...], rules: [{backendRefs: [{name: "backend", port: 8080}]}]}}
routeA: schema.#Scenario & {
	target: "kube"
	ephemeralNamespaces: ["a"]
	steps: [{apply: objects: [_route]}]
}
routeB: schema.#Scenario & {
	target: "kube"
	ephemeralNamespaces: ["b"]
	steps: [{apply: objects: [_route]}]
}
ownRoute: schema.#Scenario & {
	target: "kube"
	ephemeralNamespaces: ["b"]
	steps: [{apply: objects: [_route & {spec: parentRefs: [{name: "ingress", namespace: "${ns.b}"}]}]}]
}

// probe p25 #21: the cluster domain written as ${target.clusterDomain} in a URL (as vet
// asks): Go's URL parser refuses the "{" in a host, so the call held nothing.
callLabFQDN: schema.#Scenario & {
	target: "kube"
	ephemeralNamespaces: ["c"]
	steps: [{load: {url: "http://backend.lab.svc.${target.clusterDomain}:8080/", requests: 10}}]
}

// A process whose ready URL's port is a var: it listens where serves' backend does.
procVarPort: schema.#Scenario & {
	vars: port: 18080
	steps: [
		{name: "p", process: {argv: ["sleep", "5"], ready: http: "http://127.0.0.1:${vars.port}/ready"}, background: true},
		{sleep: "1s"},
	]
}

// Apart: its VirtualService is its own namespace's (exportTo "."), and its load its own
// Service's.
apart: schema.#Scenario & {
	target: "kube"
	ephemeralNamespaces: ["f"]
	steps: [
		{apply: objects: [_vs & {metadata: name: "all", spec: {hosts: ["*"], exportTo: ["."], http: _abort}}]},
		{load: {url: "http://backend:8080/", requests: 10}},
	]
}
`

// TestInterference: the footprints of two runs that can change what the other measures
// overlap (so that they never run at once, and land in one shard); others do not.
func TestInterference(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "lab.cue"), []byte(pairs), 0o644); err != nil {
		t.Fatal(err)
	}
	wild := "apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: all}\nspec: {hosts: [\"*\"], http: [{route: [{destination: {host: x}}]}]}\n"
	if err := os.WriteFile(filepath.Join(dir, "wild.yaml"), []byte(wild), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{
		"check.sh":   "#!/bin/sh\ncurl -s -o /dev/null -w '%{http_code}' http://httpbin.org/get | grep -q 200\n",
		"reset.sh":   "kubectl -n istio-system rollout restart deployment/istiod\n",
		"envoy.yaml": "static_resources:\n  listeners:\n  - address:\n      socket_address: {address: 0.0.0.0, port_value: 18080}\n",
		"srv.json":   "{\"listen\": \"127.0.0.1:18080\"}\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res, err := dsl.Load([]string{filepath.Join(dir, "lab.cue")}, dsl.Options{AllowSystemNamespaces: true})
	if err != nil {
		t.Fatal(err)
	}
	scs := map[string]*dsl.Scenario{}
	for _, sc := range res.Scenarios {
		scs[sc.Name] = sc
	}
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"wildvs", "measure", true},
		{"wildlocal", "measure", true},
		{"star", "measure", true},
		{"istiod", "measure", true},
		{"coredns", "measure", true},
		{"toLab", "inLab", true},
		{"callext", "faultext", true},
		{"callLab", "inLab", true},
		{"hook", "measure", true},
		{"policy", "measure", true},
		{"crd", "measure", true},
		{"ownCRD", "measure", false},
		{"varhost", "callext", true},
		{"varfile", "measure", true},
		{"varload", "faultext", true},
		{"calls", "serves", true},
		{"callsOther", "serves", false},
		{"calls", "callsOther", false},
		{"callsOther", "callsOtherToo", true},
		{"callsOther", "callsOther", true},
		{"snapAdmin", "snapAdminLocalhost", true},
		{"snapAdmin", "snapProm", false},
		{"logsFile", "writesLog", true},
		{"logsFile", "logsFile", false},
		{"snapAdmin", "callsOther", false},
		{"gwA", "gwB", true},
		{"gwReset", "gwA", true},
		{"gwLogs", "gwReset", true},
		{"gwA", "measure", false},
		{"ingressA", "ingressB", true},
		{"ingressA", "ownGateway", false},
		{"ingressA", "gwA", true},
		{"unhook", "measure", true},
		{"uncrd", "ownCRD", true},
		{"curlExt", "registerExt", true},
		{"curlLocal", "serves", true},
		{"curlExt", "measure", false},
		{"genFile", "measure", true},
		{"waitWeb", "scaleWeb", true},
		{"getWeb", "scaleWeb", true},
		{"matchWeb", "scaleWeb", true},
		{"waitWeb", "getWeb", false},
		{"route80", "registerExt", true},
		{"clusterExt", "registerExt", true},
		{"clusterExt", "faultext", false},
		{"clusterOwn", "registerExt", false},
		{"route80", "measure", false},
		{"routeOwn", "svcOwn", true},
		{"routeOwn", "routeOwn", true},
		{"namesOwn", "svcOwn", true},
		{"svcOwn", "svcOwn", false},
		{"routeOwn", "svcOwnLocal", false},
		{"clusterOwn", "svcOwn", false},
		{"snapLab", "inLab", true},
		{"snapLab", "registerExt", false},
		{"callUpper", "faultext", true},
		{"unhookAll", "measure", true},
		{"defaultA", "defaultB", true},
		{"defaultA", "measure", false},
		{"flip", "callFlip", true},
		{"flip", "measure", false},
		{"restartIstiod", "measure", true},
		{"istioctlInstall", "measure", true},
		{"kubectlGet", "measure", false},
		{"podKubectl", "measure", true},
		{"podCurl", "measure", false},
		{"curlNoScheme", "registerExt", true},
		{"wgetNoScheme", "registerExt", true},
		{"curlLocalNoScheme", "serves", true},
		{"curlNoScheme", "measure", false},
		{"fortioDefault", "call8080", true},
		{"fortioDefault", "calls", false},
		{"forward8080", "loadLocalhostKube", true},
		{"forward8080", "measure", false},
		{"vsOnGateway", "gwA", true},
		{"ingress", "gwA", true},
		{"ingress", "hostHeader", true},
		{"otherIngress", "gwA", false},
		{"hostHeader", "faultBookinfo", true},
		{"curlHostHeader", "faultBookinfo", true},
		{"hostHeader", "faultext", false},
		{"ncVIP", "seVIP", true},
		{"ncVIP", "measure", false},
		{"procHTTP", "calls", true},
		{"procHTTP", "serves", true},
		{"procFortio", "calls", true},
		{"procForward", "callsOther", true},
		{"procShell", "callsOther", true},
		{"procHTTP", "callsOther", false},
		{"procSleep", "serves", false},
		{"procEnvoyFile", "serves", true},
		{"procEnvoyFile", "callsOther", false},
		{"procConfigFlag", "serves", true},
		{"callIP", "inLab", true},
		{"callIP", "faultext", true},
		{"callIP", "measure", false},
		{"callNodePort", "nodePortSvc", true},
		{"nodePortSvc", "nodePortSvc", true},
		{"stdinCurl", "registerExt", true},
		{"scriptCurl", "registerExt", true},
		{"scriptCurl", "measure", false},
		{"scriptDelete", "measure", true},
		{"patchScript", "measure", true},
		{"kubectlRun", "measure", true},
		{"stdinScript", "measure", true},
		{"localController", "measure", true},
		{"readsOnly", "measure", false},
		{"routeA", "routeB", true},
		{"routeA", "gwA", true},
		{"ownRoute", "routeA", false},
		{"callLabFQDN", "inLab", true},
		{"procVarPort", "serves", true},
		{"apart", "measure", false},
		{"apart", "callext", false},
		{"callext", "measure", false},
		{"faultext", "measure", false},
		{"inLab", "measure", false},
	} {
		for _, sc := range []string{c.a, c.b} {
			if scs[sc] == nil {
				t.Fatalf("no scenario %s", sc)
			}
		}
		a, _ := Footprint(scs[c.a], or(scs[c.a].Target, "local"))
		b, _ := Footprint(scs[c.b], or(scs[c.b].Target, "local"))
		o, got := Overlaps(a, b)
		if got != c.want {
			t.Errorf("%s beside %s: overlap %v (%v), want %v\n  %s: %s\n  %s: %s", c.a, c.b, got, o, c.want, c.a, keys(a), c.b, keys(b))
		}
		if s := Shards([]Job{{ID: c.a, Resources: a}, {ID: c.b, Resources: b}}, 2); c.want && (len(s[0]) != 2 && len(s[1]) != 2) {
			t.Errorf("%s beside %s: split into shards %v", c.a, c.b, s)
		}
	}
}
