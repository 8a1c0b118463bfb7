package scenarios_test

import (
	"strings"
	"testing"
)

// configScenariosKitB and configScenariosKitA are the scenarios whose claims are about Envoy config only: where Istio puts a
// DestinationRule / ServiceEntry / VirtualService field in the sidecar's config. They need no data
// plane, so in the sandbox they are proven for real. Kit B's (namespace dns-lab) and Kit A's
// (conn-lab) are two tests, so that each runs beside the other kit's replays.
var configScenariosKitB = []string{
	"cfg_resolution_strict", "cfg_resolution_logical", // seed 002 §3
	"cfg_portlevel",   // seed 002 §11
	"cfg_retry",       // seed 002 §11, seed 000 §6.2
	"cfg_passthrough", // seed 002 §14-1
}

var configScenariosKitA = []string{"s7_full", "s7c", "s7b", "s7_nodr", "s7_lbonly"} // seed 000 §4.2–4.8, §5.1; C4's baseline

// TestE2EConfigClaimsKitB and TestE2EConfigClaimsKitA run every config-only scenario, unchanged,
// on the sandbox and want every expectation to hold. Nothing here is replayed: the DRs,
// ServiceEntries and VirtualServices go through the real API server (Istio's CRD schemas), and every config step
// reads what the real istiod — istio.io/istio v0.0.0-20260827124520-eed52ebb66ad (master of
// 2026-08-27, 1.31 development) — sends a sidecar of the client pod, through the Envoy admin
// stand-in's config_dump. No stats fixture is written, so a stats read would fail the run: the
// verdicts come from istiod's output alone. What this proves, against Istio's own code:
//
//   - s7_full: tcpKeepalive → upstream_connection_options.tcp_keepalive {probes 3, time 300,
//     interval 30}; maxRetries 2 → circuit_breakers.thresholds[0].max_retries 2 with the other three
//     limits written as 4294967295; maxConcurrentStreams 64 → http2_protocol_options.
//   - s7c: h2UpgradePolicy UPGRADE alone → empty http2_protocol_options, all four limits 4294967295,
//     the same as the cluster's before the DR.
//   - s7_nodr, s7_lbonly: without a DR, and with a DR holding only a loadBalancer, all four
//     limits are 4294967295 too (seed 000's C4 expects Envoy's 1024/1024/1024/3).
//   - s7b: useClientProtocol → use_downstream_protocol_config, no explicit_http_config.
//   - cfg_resolution_*: resolution DNS → STRICT_DNS, DNS_ROUND_ROBIN → LOGICAL_DNS (HTTP and TLS
//     passthrough entries).
//   - cfg_portlevel: top-level outlierDetection / connectionPool are not inherited by a port with
//     a portLevelSettings entry; inside the entry they land.
//   - cfg_retry: a VirtualService without retries gets Istio's default route retry policy
//     (connect-failure,refused-stream,unavailable,cancelled,retriable-status-codes, 2 retries,
//     previous_hosts).
//   - cfg_passthrough: a TLS ServiceEntry without VirtualService is an SNI filter chain of
//     listener 0.0.0.0_443 with tcp_proxy to its cluster and no HTTP connection manager.
//
// Kit B's setup runs as written (lab DNS, backends, dns records through the writer container)
// with one --var: hostsFile=addn (see sandboxVars).
func TestE2EConfigClaimsKitB(t *testing.T) {
	t.Parallel()
	configClaims(t, configScenariosKitB)
}

// TestE2EConfigClaimsKitA: see TestE2EConfigClaimsKitB.
func TestE2EConfigClaimsKitA(t *testing.T) {
	t.Parallel()
	configClaims(t, configScenariosKitA)
}

func configClaims(t *testing.T, scenarios []string) {
	for _, name := range scenarios {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			sb := holdLab(t, nil, scenarioWithVars(t, name, sandboxVars).Namespaces...)
			rec := kubeRun(t, sb, name, sandboxVars)
			requirePassed(t, rec)
			wrongOutcomesOf(t, rec, "") // istiod's real answer edited into wrong_test.go's outcomes fails replay
			if want := len(scenarioWithVars(t, name, sandboxVars).Expect); len(rec.Expectations) != want {
				t.Errorf("%d expectations judged, want %d", len(rec.Expectations), want)
			}
			for _, s := range rec.Steps {
				if s.Kind == "snapshot" || s.Kind == "load" {
					t.Errorf("%s: a %s step in a config-only scenario: it would need replayed data", s.Path, s.Kind)
				}
			}
			configs := 0
			for _, a := range rec.Artifacts {
				if strings.HasPrefix(a.Name, "config_dump") {
					configs++
				}
			}
			if configs == 0 {
				t.Errorf("no config_dump was read")
			}
		})
	}
}
