package dsl

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestLintHosts: how the lints resolve the hosts of rules and cluster names to the Services a
// scenario applies (short names relative to the rule's namespace, FQDNs with any cluster domain,
// written out or as ${target.clusterDomain}), and which HTTP uses of a TCP port they warn about.
// The CLI goldens (cmd/labrun/testdata/script/lint_*.txtar) show the messages.
func TestLintHosts(t *testing.T) {
	svc := func(ns, port string) string {
		return `{apiVersion: "v1", kind: "Service", metadata: {name: "backend", namespace: "` + ns + `"}, spec: {selector: app: "b", ports: [` + port + `]}}`
	}
	dr := func(ns, host, policy string) string {
		return `{apiVersion: "networking.istio.io/v1", kind: "DestinationRule", metadata: {name: "d", namespace: "` + ns + `"}, spec: {host: "` + host + `", trafficPolicy: ` + policy + `}}`
	}
	// subsetDR is a rule of host with the named subsets; subsetVS a VirtualService whose
	// kind ("http", "tcp") route goes to host's subset.
	subsetDR := func(ns, host string, subsets ...string) string {
		var ss []string
		for _, s := range subsets {
			ss = append(ss, `{name: "`+s+`", labels: version: "`+s+`"}`)
		}
		return `{apiVersion: "networking.istio.io/v1", kind: "DestinationRule", metadata: {name: "d", namespace: "` + ns + `"}, spec: {host: "` + host + `", subsets: [` + strings.Join(ss, ", ") + `]}}`
	}
	subsetVS := func(ns, kind, host, subset string) string {
		return `{apiVersion: "networking.istio.io/v1", kind: "VirtualService", metadata: {name: "v", namespace: "` + ns + `"}, spec: {hosts: ["backend"], ` + kind + `: [{route: [{destination: {host: "` + host + `", subset: "` + subset + `"}}]}]}}`
	}
	// subsetPolicy is a rule of backend with the top-level policy and a subset whose own
	// policy fails over from us-east to eu.
	subsetPolicy := func(policy string) string {
		return `{apiVersion: "networking.istio.io/v1", kind: "DestinationRule", metadata: {name: "d", namespace: "lab"}, spec: {host: "backend", trafficPolicy: ` + policy + `, subsets: [{name: "all", labels: {}, trafficPolicy: loadBalancer: localityLbSetting: failover: [{from: "us-east", to: "eu"}]}]}}`
	}
	// unplaced: the object names no namespace, and lands in the scenario's default one.
	unplaced := func(obj string) string {
		return strings.Replace(strings.Replace(obj, `metadata: {name: "backend", namespace: ""}`, `metadata: name: "backend"`, 1), `metadata: {name: "d", namespace: ""}`, `metadata: name: "d"`, 1)
	}
	const (
		tcp     = `{name: "tcp", port: 8080}`
		http    = `{name: "http", port: 8080}`
		httpPol = `{connectionPool: http: http1MaxPendingRequests: 1}`
		cluster = `outbound|8080||backend.lab.svc.${target.clusterDomain}`
		// ephemeral makes ${ns.t} the default namespace.
		ephemeral = `ephemeralNamespaces: ["t"]
	steps: [{exec: {pod: "client-0", argv: ["true"]}}]`
	)
	snaps := func(stat string) string {
		return `steps: [
		{name: "s0", snapshot: {envoy: pod: "client-0", cluster: "` + cluster + `"}},
		{name: "s1", snapshot: {envoy: pod: "client-0", cluster: "` + cluster + `"}},
	]
	expect: ["delta.` + stat + ` > 0"]`
	}
	for _, tc := range []struct {
		name    string
		objects []string
		rest    string
		want    []string // warning codes, in order
	}{
		// Objects that name no namespace land in the default one (the first ephemeral, else
		// lab), an ephemeral one's "${ns.t}" before the run as a fixed one's name: the rule's
		// short host is the Service's.
		{"short host, both in the ephemeral default namespace", []string{unplaced(svc("", http)), unplaced(dr("", "backend", httpPol))}, ephemeral, nil},
		{"short host, both in the fixed default namespace", []string{unplaced(svc("", http)), unplaced(dr("", "backend", httpPol))}, "", nil},
		{"short host in the ephemeral default namespace, TCP port", []string{unplaced(svc("", tcp)), unplaced(dr("", "backend", httpPol))}, ephemeral, []string{LintTCPPort}},
		{"short host of the ephemeral default namespace, rule in a fixed one", []string{unplaced(svc("", http)), dr("other", "backend", httpPol)}, ephemeral, []string{LintUnknownHost}},
		{"short host in the rule's namespace", []string{svc("lab", http), dr("lab", "backend", httpPol)}, "", nil},
		{"short host in another namespace", []string{svc("lab", http), dr("other", "backend", httpPol)}, "", []string{LintUnknownHost}},
		{"FQDN with the discovered domain, TCP port", []string{svc("lab", tcp), dr("other", "backend.lab.svc.${target.clusterDomain}", httpPol)}, "", []string{LintTCPPort}},
		{"FQDN with a written-out domain, TCP port", []string{svc("lab", tcp), dr("lab", "backend.lab.svc.homelab.local", httpPol)}, "", []string{LintTCPPort}},
		{"unnamed port without appProtocol", []string{svc("lab", `{port: 8080}`), dr("lab", "backend", httpPol)}, "", []string{LintTCPPort}},
		{"unnamed port with appProtocol http", []string{svc("lab", `{port: 8080, appProtocol: "http"}`), dr("lab", "backend", httpPol)}, "", nil},
		{"tcp settings only on a TCP port", []string{svc("lab", tcp), dr("lab", "backend", `{connectionPool: tcp: maxConnections: 1}`)}, "", nil},
		{"ServiceEntry host", []string{svc("lab", http), `{apiVersion: "networking.istio.io/v1", kind: "ServiceEntry", metadata: {name: "e", namespace: "lab"}, spec: {hosts: ["api.example.com"], ports: [{number: 443, name: "tls", protocol: "TLS"}]}}`, dr("lab", "api.example.com", `{tls: mode: "SIMPLE"}`)}, "", nil},
		{"request stats of a TCP cluster, once per cluster", []string{svc("lab", tcp)}, snaps("upstream_rq_total"), []string{LintTCPPort}},
		{"connection stats of a TCP cluster", []string{svc("lab", tcp)}, snaps("upstream_cx_total"), nil},
		{"request stats of an HTTP cluster", []string{svc("lab", http)}, snaps("upstream_rq_total"), nil},
		{"circuit breaker request gauge of a TCP cluster", []string{svc("lab", tcp)}, `steps: [{name: "s0", snapshot: {envoy: pod: "client-0", cluster: "` + cluster + `"}}]
	expect: ["s0.circuit_breakers.default.rq_pending_open == 0"]`, []string{LintTCPPort}},
		{"http route to the TCP one of two ports", []string{svc("lab", tcp+`, {name: "http-admin", port: 9090}`), `{apiVersion: "networking.istio.io/v1", kind: "VirtualService", metadata: {name: "v", namespace: "lab"}, spec: {hosts: ["backend"], http: [{route: [{destination: {host: "backend", port: number: 9090}}, {destination: {host: "backend", port: number: 8080}}]}]}}`}, "", []string{LintTCPPort}},
		{"tcp route to a TCP port", []string{svc("lab", tcp), `{apiVersion: "networking.istio.io/v1", kind: "VirtualService", metadata: {name: "v", namespace: "lab"}, spec: {hosts: ["backend"], tcp: [{route: [{destination: {host: "backend", port: number: 8080}}]}]}}`}, "", nil},
		{"a literal cluster.local", []string{svc("lab", http)}, `steps: [{name: "s0", snapshot: {envoy: pod: "client-0", cluster: "outbound|8080||backend.lab.svc.cluster.local"}}]
	lint: ignore: "nothing-judged": "the case is the cluster's name"`, []string{LintClusterDomain}},
		// A ${...} in the name leaves the domain written around it hard-coded all the same.
		{"a literal cluster.local around a ${...}", []string{svc("lab", http)}, `steps: [{name: "s0", snapshot: {envoy: pod: "client-0", cluster: "outbound|8080||backend.${vars.ns}.svc.cluster.local"}}]
	vars: ns: "lab"
	lint: ignore: "nothing-judged": "the case is the cluster's name"`, []string{LintClusterDomain}},
		{"a config's endpoints with a literal cluster.local", []string{svc("lab", http)}, `steps: [{name: "c0", config: {envoy: pod: "client-0", endpoints: "outbound|8080||backend.lab.svc.cluster.local"}}]
	lint: ignore: "nothing-judged": "the case is the cluster's name"`, []string{LintClusterDomain}},
		{"a config's endpoints with a literal cluster.local around a ${...}", []string{svc("lab", http)}, `steps: [{name: "c0", config: {envoy: pod: "client-0", endpoints: "outbound|8080||backend.${vars.ns}.svc.cluster.local"}}]
	vars: ns: "lab"
	lint: ignore: "nothing-judged": "the case is the cluster's name"`, []string{LintClusterDomain}},
		// A VirtualService's destination subset that no DestinationRule of the scenario for
		// that host defines: istiod still routes to the subset's cluster name, which does not
		// exist (seen in the sandbox: the route's cluster reads outbound|8080|v2|backend…).
		{"route to a subset the host's rule defines", []string{svc("lab", http), subsetDR("lab", "backend", "v1", "v2"), subsetVS("lab", "http", "backend", "v2")}, "", nil},
		{"route to a subset the host's rule lacks", []string{svc("lab", http), subsetDR("lab", "backend", "v1"), subsetVS("lab", "http", "backend", "v2")}, "", []string{LintUnknownSubset}},
		{"route by FQDN to a subset the rule by short name lacks", []string{svc("lab", http), subsetDR("lab", "backend", "v1"), subsetVS("lab", "http", "backend.lab.svc.${target.clusterDomain}", "v2")}, "", []string{LintUnknownSubset}},
		{"subsets of two rules of one host", []string{svc("lab", http), subsetDR("lab", "backend", "v1"), strings.Replace(subsetDR("lab", "backend.lab.svc.cluster.local", "v2"), `name: "d"`, `name: "d2"`, 1), subsetVS("lab", "http", "backend", "v2")}, "", nil},
		{"tcp route to a subset the rule lacks", []string{svc("lab", tcp), subsetDR("lab", "backend", "v1"), subsetVS("lab", "tcp", "backend", "v2")}, "", []string{LintUnknownSubset}},
		{"mirror to a subset the rule lacks", []string{svc("lab", http), subsetDR("lab", "backend", "v1"), `{apiVersion: "networking.istio.io/v1", kind: "VirtualService", metadata: {name: "v", namespace: "lab"}, spec: {hosts: ["backend"], http: [{route: [{destination: {host: "backend", subset: "v1"}}], mirror: {host: "backend", subset: "v3"}}]}}`}, "", []string{LintUnknownSubset}},
		{"route to a subset of a host no rule of the scenario has", []string{svc("lab", http), subsetVS("lab", "http", "backend", "v2")}, "", nil},
		{"route to a subset of a rule in another namespace", []string{svc("lab", http), subsetDR("other", "backend.lab.svc.cluster.local", "v1"), subsetVS("lab", "http", "backend", "v2")}, "", []string{LintUnknownSubset}},
		// Locality failover that istiod applies only with outlier detection (seen in the
		// sandbox: without it every locality has priority 0; distribute applies without it).
		{"failover without outlier detection", []string{svc("lab", http), dr("lab", "backend", `{loadBalancer: localityLbSetting: {enabled: true, failover: [{from: "us-east", to: "eu"}]}}`)}, "", []string{LintLocalityOutlier}},
		{"failoverPriority without outlier detection", []string{svc("lab", http), dr("lab", "backend", `{loadBalancer: localityLbSetting: failoverPriority: ["topology.kubernetes.io/region"]}`)}, "", []string{LintLocalityOutlier}},
		{"failover with outlier detection", []string{svc("lab", http), dr("lab", "backend", `{loadBalancer: localityLbSetting: failover: [{from: "us-east", to: "eu"}], outlierDetection: consecutive5xxErrors: 1}`)}, "", nil},
		{"failover turned off", []string{svc("lab", http), dr("lab", "backend", `{loadBalancer: localityLbSetting: {enabled: false, failover: [{from: "us-east", to: "eu"}]}}`)}, "", nil},
		{"distribute without outlier detection", []string{svc("lab", http), dr("lab", "backend", `{loadBalancer: localityLbSetting: distribute: [{from: "us-east/*", to: {"us-east/*": 70, "eu/*": 30}}]}`)}, "", nil},
		{"a subset's failover, outlier detection at the top", []string{svc("lab", http), subsetPolicy(`{outlierDetection: consecutive5xxErrors: 1}`)}, "", nil},
		{"a subset's failover, no outlier detection", []string{svc("lab", http), subsetPolicy(`{loadBalancer: simple: "ROUND_ROBIN"}`)}, "", []string{LintLocalityOutlier}},
		// A deprecated field the CRD accepts and istiod does not read (seen in the sandbox:
		// consecutiveErrors: 3 gave the cluster no consecutive_5xx).
		{"consecutiveErrors in the rule's outlier detection", []string{svc("lab", http), dr("lab", "backend", `{outlierDetection: {consecutiveErrors: 3, interval: "5s"}}`)}, "", []string{LintIgnoredField}},
		{"consecutiveErrors in a port's outlier detection", []string{svc("lab", http), dr("lab", "backend", `{portLevelSettings: [{port: number: 8080, outlierDetection: consecutiveErrors: 3}]}`)}, "", []string{LintIgnoredField}},
		{"consecutive5xxErrors", []string{svc("lab", http), dr("lab", "backend", `{outlierDetection: {consecutive5xxErrors: 3, interval: "5s"}}`)}, "", nil},
		{"a config's endpoints with the discovered domain", []string{svc("lab", http)}, `steps: [{name: "c0", config: {envoy: pod: "client-0", endpoints: "outbound|8080||backend.${vars.ns}.svc.${target.clusterDomain}"}}]
	vars: ns: "lab"
	lint: ignore: "nothing-judged": "the case is the cluster's name"`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rest := tc.rest
			if rest == "" {
				rest = `steps: [{exec: {pod: "client-0", argv: ["true"]}}]`
			}
			src := "package lab\n\nimport \"labrun.dev/schema\"\n\ns: schema.#Scenario & {\n\ttarget: \"kube\"\n\tnamespaces: [\"lab\", \"other\"]\n" +
				"\tsetup: [{apply: objects: [" + strings.Join(tc.objects, ", ") + "]}]\n\t" + rest + "\n}\n"
			path := filepath.Join(t.TempDir(), "x.cue")
			if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			res, err := Load([]string{path}, Options{})
			if err != nil {
				t.Fatalf("Load:\n%v\n%s", err, src)
			}
			var got []string
			for _, w := range res.Warnings {
				got = append(got, w.Code)
				if !w.Pos.IsValid() {
					t.Errorf("no position: %s", w)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("warnings %v, want %v", got, tc.want)
				for _, w := range res.Warnings {
					t.Log(w)
				}
			}
		})
	}
}

// TestPortGets: what the port-level-shadow warning says a port with its own entry gets in place
// of each top-level field, as istiod builds its cluster (measured in the sandbox, istiod of
// 2026-08-27: lb_policy LEAST_REQUEST, every circuit breaker 4294967295, no outlier_detection,
// the tlsMode-istio/tlsMode-disabled transport socket matches).
func TestPortGets(t *testing.T) {
	for _, tt := range []struct {
		field string
		v     any
		want  string
	}{
		{"loadBalancer", map[string]any{"simple": "ROUND_ROBIN"}, "LEAST_REQUEST, Istio's default, not ROUND_ROBIN"},
		{"loadBalancer", map[string]any{"consistentHash": map[string]any{"httpHeaderName": "x-user"}}, "LEAST_REQUEST, Istio's default, not consistentHash.httpHeaderName x-user"},
		{"connectionPool", map[string]any{"tcp": map[string]any{"maxConnections": 1.0}}, "no connection limits (4294967295 for every circuit breaker, as without a rule), not tcp.maxConnections 1"},
		{"outlierDetection", map[string]any{"consecutive5xxErrors": 1.0, "interval": "1s"}, "no outlier detection, not consecutive5xxErrors 1, interval 1s"},
		{"tls", map[string]any{"mode": "SIMPLE"}, "Istio's automatic mutual TLS to workloads with a sidecar and plain text to others, not mode SIMPLE"},
	} {
		if got := portGets(tt.field, tt.v); got != tt.want {
			t.Errorf("portGets(%s, %v) = %q, want %q", tt.field, tt.v, got, tt.want)
		}
	}
}

// TestLintUnknownAddressTemplated: the unknown-address lint judges a load URL written with
// ${...} on what is known before the run: a backend's or blackhole's host (127.0.0.1 unless
// declared), its port, address and url when its declaration fixes the port, and a var's value
// (per --var); localhost is loopback. An address only known at run time (a backend's chosen
// port, a capture, a secret var) is left alone.
func TestLintUnknownAddressTemplated(t *testing.T) {
	for _, tc := range []struct {
		name, local, url string
		vars             map[string]string // --var
		want             string            // the address warned of; "" for none
	}{
		{"literal, mistyped port", `backends: a: {}`, `http://127.0.0.1:1/echo`, nil, "127.0.0.1:1"},
		{"backend's host, mistyped port", `backends: a: {}`, `http://${backends.a.host}:1/echo`, nil, "127.0.0.1:1"},
		{"backend's declared host with a chosen port, its port", `backends: a: address: "127.0.0.3:0"`, `http://${backends.a.host}:${backends.a.port}/echo`, nil, ""},
		{"backend's declared host, mistyped port", `backends: a: address: "127.0.0.3:0"`, `http://${backends.a.host}:1/echo`, nil, "127.0.0.3:1"},
		{"backend's url", `backends: a: {}`, `${backends.a.url}/echo`, nil, ""},
		{"backend's host and chosen port", `backends: a: {}`, `http://${backends.a.host}:${backends.a.port}/echo`, nil, ""},
		{"fixed backend's host and port", `backends: a: address: "127.0.0.4:18483"`, `http://${backends.a.host}:${backends.a.port}/echo`, nil, ""},
		{"fixed backend's url", `backends: a: address: "127.0.0.4:18483"`, `${backends.a.url}/echo`, nil, ""},
		{"fixed backend's address", `backends: a: address: "127.0.0.4:18483"`, `http://${backends.a.address}/echo`, nil, ""},
		{"fixed backend's host, another port", `backends: a: address: "127.0.0.4:18483"`, `http://${backends.a.host}:18438/echo`, nil, "127.0.0.4:18438"},
		{"blackhole's address", `backends: a: {}, blackholes: h: address: "127.0.0.5:9999"`, `http://${blackholes.h.address}/`, nil, ""},
		{"var port", `backends: a: {}`, `http://127.0.0.1:${vars.port}/echo`, nil, "127.0.0.1:1"},
		{"var port given on the command line", `backends: a: address: "127.0.0.4:18483"`, `http://${backends.a.host}:${vars.port}/echo`, map[string]string{"port": "18483"}, ""},
		{"var port given another", `backends: a: address: "127.0.0.4:18483"`, `http://${backends.a.host}:${vars.port}/echo`, map[string]string{"port": "18438"}, "127.0.0.4:18438"},
		// A secret's value is not judged (nor shown: vet writes [secret host] for it wherever it
		// appears, so it is not one the other cases write).
		{"secret var host", `backends: a: {}`, `http://${vars.host}:1/echo`, nil, ""},
		{"var host", `backends: a: {}`, `http://${vars.lhost}:1/echo`, nil, "127.0.0.1:1"},
		{"not loopback", `backends: a: {}`, `http://${vars.remote}:1/echo`, nil, ""},
		{"an expression", `backends: a: {}`, `http://127.0.0.1:${vars.port + 1}/echo`, nil, ""},
		{"an expression in the query", `backends: a: {}`, `http://127.0.0.1:1/echo?n=${vars.port + 1}`, nil, "127.0.0.1:1"},
		{"localhost", `backends: a: {}`, `http://localhost:1/echo`, nil, "localhost:1"},
		{"localhost, a fixed backend's port", `backends: a: address: "127.0.0.1:18483"`, `http://localhost:18483/echo`, nil, ""},
		{"localhost, a fixed IPv6 backend's port", `backends: a: address: "[::1]:18483"`, `http://localhost:18483/echo`, nil, ""},
		// A name of the lab DNS zone is judged on the addresses its record gives it.
		{"lab DNS name, mistyped port", `backends: a: address: "127.0.0.2:18481", dns: {zone: "lab.internal", records: svc: ["127.0.0.2"]}`, `http://svc.lab.internal:18418/echo`, nil, "svc.lab.internal:18418"},
		{"lab DNS name, the backend's port", `backends: a: address: "127.0.0.2:18481", dns: {zone: "lab.internal", records: svc: ["127.0.0.2"]}`, `http://svc.lab.internal:18481/echo`, nil, ""},
		{"lab DNS name, a var port", `backends: a: address: "127.0.0.2:18481", dns: {zone: "lab.internal", records: "svc.lab.internal": ["127.0.0.2"]}`, `http://svc.lab.internal:${vars.port}/echo`, nil, "svc.lab.internal:1"},
		{"lab DNS name of an address off this machine", `backends: a: {}, dns: {zone: "lab.internal", records: svc: ["10.0.0.1"]}`, `http://svc.lab.internal:1/echo`, nil, ""},
		{"a name out of the zone", `backends: a: {}, dns: {zone: "lab.internal", records: svc: ["127.0.0.2"]}`, `http://svc.lab.other:1/echo`, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "package lab\n\nimport \"labrun.dev/schema\"\n\ns: schema.#Scenario & {\n" +
				"\tvars: {port: 1, host: \"127.0.0.9\", lhost: \"127.0.0.1\", remote: \"10.0.0.1\"}\n\tsecrets: [\"host\"]\n" +
				"\tlocal: {" + tc.local + "}\n" +
				"\tsteps: [{name: \"f\", load: {url: \"" + tc.url + "\", requests: 2}}]\n" +
				"\texpect: [\"f.code503 == 0\"]\n}\n"
			path := filepath.Join(t.TempDir(), "x.cue")
			if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			res, err := Load([]string{path}, Options{Vars: tc.vars})
			if err != nil {
				t.Fatalf("Load:\n%v\n%s", err, src)
			}
			got := ""
			for _, w := range res.Warnings {
				if w.Code != LintUnknownAddress {
					continue
				}
				if got != "" {
					t.Errorf("a second warning: %s", w)
				}
				got = w.Msg
			}
			switch {
			case tc.want == "" && got != "":
				t.Errorf("warned: %s", got)
			case tc.want != "" && !strings.HasPrefix(got, "the load's URL names "+tc.want+" ") && !strings.HasPrefix(got, "the load's URL names "+tc.want+","):
				t.Errorf("warning %q, want one naming %s", got, tc.want)
			}
		})
	}
}

// TestLintUnknownAddressCommands: a command step of the scenario on this machine (a process,
// an exec without a pod) keeps a load's loopback address from being warned of only where it
// may be what listens there: it may be running, or have left a server running, while the load
// runs, and its command can listen. Before, any process or exec anywhere in the scenario kept
// every load from the lint, a process that only echoed "starting server on 18555" included.
func TestLintUnknownAddressCommands(t *testing.T) {
	const load = `{name: "f", load: {url: "http://127.0.0.1:18555/", requests: 2}}`
	for _, tc := range []struct {
		name, local, steps, cleanup string
		want                        string // a substring of the warning; "" for none
	}{
		{"a process that only echoes, no local world", "", `{name: "srv", process: argv: ["sh", "-c", "echo starting server on 18555"]}, ` + load, "",
			`and no step of it that may run by then starts a server (the process srv runs ["sh","-c","echo starting server on 18555"], which listens nowhere)`},
		{"a process that sleeps", `local: backends: a: {}`, `{name: "srv", process: argv: ["/bin/sleep", "30"]}, ` + load, "", "which listens nowhere"},
		{"an exec that echoes", `local: backends: a: {}`, `{exec: argv: ["echo", "up"]}, ` + load, "", "which listens nowhere"},
		{"a server before the load", `local: backends: a: {}`, `{name: "srv", process: argv: ["my-server"]}, ` + load, "", ""},
		{"a server with no local world", "", `{name: "srv", process: argv: ["my-server"]}, ` + load, "", ""},
		{"no command, no local world", "", load, "", ""},
		{"an exec that may start a server", `local: backends: a: {}`, `{exec: argv: ["python3", "-m", "http.server"]}, ` + load, "", ""},
		{"a server beside the load", `local: backends: a: {}`, `{parallel: [{name: "srv", process: argv: ["my-server"]}, ` + load + `]}`, "", ""},
		{"a server after the load", `local: backends: a: {}`, load + `, {name: "srv", process: argv: ["my-server"]}`, "", "and no step of it starts a server"},
		{"a server in the cleanup", `local: backends: a: {}`, load, `{name: "srv", process: argv: ["my-server"]}`, "and no step of it starts a server"},
		{"a server after the load in a repeat", `local: backends: a: {}`, `{repeat: {max: 2, until: "f.requests == 2", steps: [` + load + `, {name: "srv", process: argv: ["my-server"]}]}}`, "", ""},
		{"an echo with an environment", `local: backends: a: {}`, `{name: "srv", process: {argv: ["echo"], env: LD_PRELOAD: "x.so"}}, ` + load, "", ""},
		{"a shell script of two commands", `local: backends: a: {}`, `{name: "srv", process: argv: ["sh", "-c", "echo up; my-server"]}, ` + load, "", ""},
		{"an echo of a var", `local: backends: a: {}`, `{name: "srv", process: argv: ["echo", "${vars.port}"]}, ` + load, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "package lab\n\nimport \"labrun.dev/schema\"\n\ns: schema.#Scenario & {\n\tvars: port: 1\n\t" + tc.local + "\n" +
				"\tsteps: [" + tc.steps + "]\n"
			if tc.cleanup != "" {
				src += "\tcleanup: [" + tc.cleanup + "]\n"
			}
			src += "\texpect: [\"f.code503 == 0\"]\n}\n"
			path := filepath.Join(t.TempDir(), "x.cue")
			if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			res, err := Load([]string{path}, Options{})
			if err != nil {
				t.Fatalf("Load:\n%v\n%s", err, src)
			}
			got := ""
			for _, w := range res.Warnings {
				if w.Code == LintUnknownAddress {
					got = w.String()
				}
			}
			switch {
			case tc.want == "" && got != "":
				t.Errorf("warned: %s", got)
			case tc.want != "" && !strings.Contains(got, tc.want):
				t.Errorf("warning %q, want one holding %q", got, tc.want)
			case tc.want != "" && !strings.Contains(got, "x.cue:8:"):
				t.Errorf("warning %q, want one at the load's line 8", got)
			}
		})
	}
}
