package envoy

import (
	"reflect"
	"strings"
	"testing"

	"labrun.dev/labrun/schema"
)

// envoyLacks are the fields Envoy's default format does not give.
var envoyLacks = []string{"details", "termination", "failure", "cluster"}

func TestAccessLog(t *testing.T) {
	tests := []struct {
		name string
		line string
		want schema.LogEntry // Line and Access are filled in by the test
	}{
		{
			name: "200",
			line: `[2026-03-02T09:16:11.402Z] "GET /echo?delay=200ms HTTP/1.1" 200 - via_upstream - "-" 0 2 203 202 "-" "fortio.org/fortio-1.75.3" "0d3f0f3e-6a3b-9c0e-a2d4-7c1b8d1e4f21" "backend.conn-lab:8080" "10.244.1.5:8080" outbound|8080||backend.conn-lab.svc.cluster.local 10.244.1.9:60422 10.96.44.12:8080 10.244.1.9:51234 - default`,
			want: schema.LogEntry{Time: "2026-03-02T09:16:11.402Z", Method: "GET", Path: "/echo?delay=200ms", Protocol: "HTTP/1.1",
				Code: 200, Details: "via_upstream", DurationMS: 203, UpstreamHost: "10.244.1.5:8080", Cluster: connLab,
				Format: "istio"},
		},
		{
			name: "503 UO: circuit breaker overflow",
			line: `[2026-03-02T09:16:11.405Z] "GET /echo?delay=200ms HTTP/1.1" 503 UO upstream_reset_before_response_started{overflow} - "-" 0 81 0 - "-" "fortio.org/fortio-1.75.3" "4c299e03-e57f-9613-8817-6682e9deb675" "backend.conn-lab:8080" "-" outbound|8080||backend.conn-lab.svc.cluster.local - 10.96.44.12:8080 10.244.1.9:51236 - default`,
			want: schema.LogEntry{Time: "2026-03-02T09:16:11.405Z", Method: "GET", Path: "/echo?delay=200ms", Protocol: "HTTP/1.1",
				Code: 503, Flags: []string{"UO"}, Details: "upstream_reset_before_response_started{overflow}", Cluster: connLab,
				Format: "istio"},
		},
		{
			name: "503 URX,UF: connect timeout after retries",
			line: `[2026-03-02T09:17:03.991Z] "GET / HTTP/1.1" 503 URX,UF upstream_reset_before_response_started{connection_timeout} - "-" 0 91 3003 - "-" "fortio.org/fortio-1.75.3" "b0a7e0a4-3f5e-9d7c-8e1f-5a6b7c8d9e0f" "blackhole.conn-lab:9999" "10.244.3.3:9999" outbound|9999||blackhole.conn-lab.svc.cluster.local - 10.96.50.1:9999 10.244.1.9:40112 - default`,
			want: schema.LogEntry{Time: "2026-03-02T09:17:03.991Z", Method: "GET", Path: "/", Protocol: "HTTP/1.1",
				Code: 503, Flags: []string{"URX", "UF"}, Details: "upstream_reset_before_response_started{connection_timeout}",
				DurationMS: 3003, UpstreamHost: "10.244.3.3:9999", Cluster: "outbound|9999||blackhole.conn-lab.svc.cluster.local",
				Format: "istio"},
		},
		{
			name: "503 URX,UF: connection refused, with transport failure reason",
			line: `[2026-03-02T09:17:05.120Z] "GET /status/200 HTTP/1.1" 503 URX,UF upstream_reset_before_response_started{remote_connection_failure|delayed_connect_error:_Connection_refused} - "delayed_connect_error:_Connection_refused" 0 190 63 - "-" "curl/8.14.1" "5e4f3a2b-1c0d-9e8f-7a6b-5c4d3e2f1a0b" "backend:8080" "10.244.1.12:8080" outbound|8080||backend.conn-lab.svc.cluster.local - 10.96.44.12:8080 10.244.1.9:40110 - default`,
			want: schema.LogEntry{Time: "2026-03-02T09:17:05.120Z", Method: "GET", Path: "/status/200", Protocol: "HTTP/1.1",
				Code: 503, Flags: []string{"URX", "UF"},
				Details: "upstream_reset_before_response_started{remote_connection_failure|delayed_connect_error:_Connection_refused}",
				Failure: "delayed_connect_error:_Connection_refused", DurationMS: 63, UpstreamHost: "10.244.1.12:8080", Cluster: connLab,
				Format: "istio"},
		},
		{
			name: "504 UT",
			line: `[2026-03-02T09:17:09.001Z] "GET /echo?delay=5s HTTP/1.1" 504 UT response_timeout - "-" 0 24 1001 - "-" "fortio.org/fortio-1.75.3" "7d6c5b4a" "backend.conn-lab:8080" "10.244.1.5:8080" outbound|8080||backend.conn-lab.svc.cluster.local 10.244.1.9:60430 10.96.44.12:8080 10.244.1.9:51300 - default`,
			want: schema.LogEntry{Time: "2026-03-02T09:17:09.001Z", Method: "GET", Path: "/echo?delay=5s", Protocol: "HTTP/1.1",
				Code: 504, Flags: []string{"UT"}, Details: "response_timeout", DurationMS: 1001, UpstreamHost: "10.244.1.5:8080", Cluster: connLab,
				Format: "istio"},
		},
		{
			name: "404 NR: no cluster, no upstream",
			line: `[2026-03-02T09:17:10.500Z] "GET /nope HTTP/1.1" 404 NR route_not_found - "-" 0 0 0 - "-" "curl/8.14.1" "1a2b" "unknown.example:80" "-" - - 10.96.0.99:80 10.244.1.9:51400 - -`,
			want: schema.LogEntry{Time: "2026-03-02T09:17:10.500Z", Method: "GET", Path: "/nope", Protocol: "HTTP/1.1",
				Code: 404, Flags: []string{"NR"}, Details: "route_not_found",
				Format: "istio"},
		},
		{
			name: "Envoy's default format: 503 UF",
			line: `[2026-03-02T09:17:14.000Z] "GET /x HTTP/1.1" 503 UF 0 91 4 - "10.0.35.28" "curl/8.0" "cc21d9b0-cf5c-432b-8c7e-98aeb7988cd2" "httpbin:8000" "10.44.1.27:80"`,
			want: schema.LogEntry{Time: "2026-03-02T09:17:14.000Z", Method: "GET", Path: "/x", Protocol: "HTTP/1.1",
				Code: 503, Flags: []string{"UF"}, DurationMS: 4, UpstreamHost: "10.44.1.27:80",
				Format: "envoy", Lacks: envoyLacks},
		},
		{
			name: "Envoy's default format: 200, a quote in the user agent",
			line: `[2026-03-02T09:17:14.001Z] "GET /y HTTP/2" 200 - 0 12 7 6 "-" "a" b" "id" "httpbin:8000" "10.44.1.27:80"`,
			want: schema.LogEntry{Time: "2026-03-02T09:17:14.001Z", Method: "GET", Path: "/y", Protocol: "HTTP/2",
				Code: 200, DurationMS: 7, UpstreamHost: "10.44.1.27:80",
				Format: "envoy", Lacks: envoyLacks},
		},
		{
			name: "Envoy's default format: tcp, no upstream",
			line: `[2026-03-02T09:17:14.002Z] "- - -" 0 UH 0 0 0 - "-" "-" "-" "-" "-"`,
			want: schema.LogEntry{Time: "2026-03-02T09:17:14.002Z", Flags: []string{"UH"},
				Format: "envoy", Lacks: envoyLacks},
		},
		{
			name: "tcp: code 0",
			line: `[2026-03-02T09:17:12.000Z] "- - -" 0 UF,URX - - "-" 0 0 1001 - "-" "-" "-" "-" "10.244.3.3:9000" outbound|9000||tcp-echo.conn-lab.svc.cluster.local - 10.96.7.7:9000 10.244.1.9:52100 - -`,
			want: schema.LogEntry{Time: "2026-03-02T09:17:12.000Z", Code: 0, Flags: []string{"UF", "URX"}, DurationMS: 1001,
				UpstreamHost: "10.244.3.3:9000", Cluster: "outbound|9000||tcp-echo.conn-lab.svc.cluster.local",
				Format: "istio"},
		},
		{
			name: `a user agent holding '" ' does not shift the right-hand fields`,
			line: `[2026-03-02T09:17:13.250Z] "POST /upload HTTP/2" 0 DC downstream_remote_disconnect - "-" 1048576 0 250 - "-" "Mozilla/5.0 "quoted" (X11; Linux)" "9a8b" "backend.conn-lab:8080" "10.244.1.5:8080" outbound|8080||backend.conn-lab.svc.cluster.local 10.244.1.9:60440 10.96.44.12:8080 10.244.1.9:51500 backend.conn-lab.svc.cluster.local default`,
			want: schema.LogEntry{Time: "2026-03-02T09:17:13.250Z", Method: "POST", Path: "/upload", Protocol: "HTTP/2",
				Flags: []string{"DC"}, Details: "downstream_remote_disconnect", DurationMS: 250, UpstreamHost: "10.244.1.5:8080", Cluster: connLab,
				Format: "istio"},
		},
		{
			name: "termination details, kubectl --prefix, CRLF",
			line: "[pod/fortio-client-6d5f8b7c9-x2x7q/istio-proxy] [2026-03-02T09:17:14.000Z] \"GET /admin HTTP/1.1\" 403 - rbac_access_denied_matched_policy[none] - \"-\" 0 19 0 - \"-\" \"curl/8.14.1\" \"aa\" \"backend:8080\" \"-\" inbound|8080|| - 10.244.1.5:8080 10.244.1.9:51600 outbound_.8080_._.backend.conn-lab.svc.cluster.local -\r\n",
			want: schema.LogEntry{Time: "2026-03-02T09:17:14.000Z", Method: "GET", Path: "/admin", Protocol: "HTTP/1.1",
				Code: 403, Details: "rbac_access_denied_matched_policy[none]", Cluster: "inbound|8080||",
				Format: "istio"},
		},
		{
			name: "connection termination details",
			line: `[2026-03-02T09:17:15.000Z] "- - -" 0 - - rbac_access_denied_matched_policy[ns[conn-lab]-policy[deny-all]-rule[0]] "-" 0 0 0 - "-" "-" "-" "-" "-" inbound|9000|| - 10.244.1.5:9000 10.244.1.9:51700 - -`,
			want: schema.LogEntry{Time: "2026-03-02T09:17:15.000Z", Termination: "rbac_access_denied_matched_policy[ns[conn-lab]-policy[deny-all]-rule[0]]", Cluster: "inbound|9000||",
				Format: "istio"},
		},
		{
			name: "truncated after the duration: the left is kept",
			line: `[2026-03-02T09:17:16.000Z] "GET / HTTP/1.1" 503 UH no_healthy_upstream - "-" 0 19 0`,
			want: schema.LogEntry{Time: "2026-03-02T09:17:16.000Z", Method: "GET", Path: "/", Protocol: "HTTP/1.1",
				Code: 503, Flags: []string{"UH"}, Details: "no_healthy_upstream",
				Format: "istio", Lacks: []string{"upstream_host", "cluster"}},
		},
		{
			name: "json, typed values",
			line: `{"start_time":"2026-03-02T09:18:00.100Z","method":"GET","path":"/echo","protocol":"HTTP/1.1","response_code":503,"response_flags":"UO","response_code_details":"upstream_reset_before_response_started{overflow}","connection_termination_details":null,"upstream_transport_failure_reason":null,"bytes_received":0,"bytes_sent":81,"duration":0,"upstream_host":null,"upstream_cluster":"outbound|8080||backend.conn-lab.svc.cluster.local","route_name":"default"}`,
			want: schema.LogEntry{Time: "2026-03-02T09:18:00.100Z", Method: "GET", Path: "/echo", Protocol: "HTTP/1.1",
				Code: 503, Flags: []string{"UO"}, Details: "upstream_reset_before_response_started{overflow}", Cluster: connLab,
				Format: "json"},
		},
		{
			name: "json, every value a string",
			line: `{"start_time": "2025-12-22T17:09:54.276Z", "method": "GET", "path": "/status/200", "protocol": "HTTP/1.1", "response_code": "503", "response_flags": "URX,UF", "response_code_details": "upstream_reset_before_response_started{remote_connection_failure|delayed_connect_error:_Connection_refused}", "connection_termination_details": "-", "upstream_transport_failure_reason": "delayed_connect_error:_Connection_refused", "duration": "63", "upstream_host": "10.244.1.12:8080", "upstream_cluster": "-"}`,
			want: schema.LogEntry{Time: "2025-12-22T17:09:54.276Z", Method: "GET", Path: "/status/200", Protocol: "HTTP/1.1",
				Code: 503, Flags: []string{"URX", "UF"},
				Details: "upstream_reset_before_response_started{remote_connection_failure|delayed_connect_error:_Connection_refused}",
				Failure: "delayed_connect_error:_Connection_refused", DurationMS: 63, UpstreamHost: "10.244.1.12:8080",
				Format: "json"},
		},
		{
			// A custom format (Telemetry, meshConfig.accessLogFormat) with a field appended:
			// the right-hand fields cannot be told apart. Before, upstream_host and cluster
			// read "", and none(entries, .upstream_host == "10.0.0.5:8080") held.
			name: "Istio's format and one field more at the end: no upstream host nor cluster",
			line: `[2026-03-02T09:17:16.000Z] "GET /b HTTP/1.1" 503 UO upstream_reset_before_response_started{overflow} - "-" 0 81 0 - "-" "curl" "2" "b:8080" "10.0.0.5:8080" outbound|8080||b.ns.svc.cluster.local 10.0.0.1:1 10.0.0.2:8080 10.0.0.3:4 - default "trace-1"`,
			want: schema.LogEntry{Time: "2026-03-02T09:17:16.000Z", Method: "GET", Path: "/b", Protocol: "HTTP/1.1",
				Code: 503, Flags: []string{"UO"}, Details: "upstream_reset_before_response_started{overflow}",
				Format: "istio", Lacks: []string{"upstream_host", "cluster"}},
		},
		{
			name: "Istio's format and an unquoted field more: no upstream host nor cluster",
			line: `[2026-03-02T09:17:16.000Z] "GET /b HTTP/1.1" 200 - via_upstream - "-" 0 81 3 - "-" "curl" "2" "b:8080" "10.0.0.5:8080" outbound|8080||b.ns.svc.cluster.local 10.0.0.1:1 10.0.0.2:8080 10.0.0.3:4 - default abc`,
			want: schema.LogEntry{Time: "2026-03-02T09:17:16.000Z", Method: "GET", Path: "/b", Protocol: "HTTP/1.1",
				Code: 200, Details: "via_upstream", DurationMS: 3, Format: "istio", Lacks: []string{"upstream_host", "cluster"}},
		},
		{
			// One field fewer at the end (no %ROUTE_NAME%): before, the authority was read as
			// the upstream host ("b:8080") and the quoted host as the cluster.
			name: "Istio's format and one field fewer at the end: no upstream host nor cluster",
			line: `[2026-03-02T09:17:16.000Z] "GET /b HTTP/1.1" 200 - via_upstream - "-" 0 81 3 - "-" "curl" "2" "b:8080" "10.0.0.5:8080" outbound|8080||b.ns.svc.cluster.local 10.0.0.2:8080 10.0.0.3:4 - default`,
			want: schema.LogEntry{Time: "2026-03-02T09:17:16.000Z", Method: "GET", Path: "/b", Protocol: "HTTP/1.1",
				Code: 200, Details: "via_upstream", DurationMS: 3, Format: "istio", Lacks: []string{"upstream_host", "cluster"}},
		},
		{
			// A quoted field appended to Envoy's default format: before, the trace id was read
			// as the upstream host.
			name: "Envoy's default format and a quoted field more: no upstream host",
			line: `[2026-03-02T09:17:14.000Z] "GET /x HTTP/1.1" 503 UF 0 91 4 - "10.0.35.28" "curl/8.0" "cc21" "httpbin:8000" "10.44.1.27:80" "trace-1"`,
			want: schema.LogEntry{Time: "2026-03-02T09:17:14.000Z", Method: "GET", Path: "/x", Protocol: "HTTP/1.1",
				Code: 503, Flags: []string{"UF"}, DurationMS: 4, Format: "envoy", Lacks: append(envoyLacks[:4:4], "upstream_host")},
		},
		{
			name: "Istio's format, an internal upstream address (ambient)",
			line: `[2026-03-02T09:17:16.000Z] "GET /b HTTP/1.1" 200 - via_upstream - "-" 0 81 3 - "-" "curl" "2" "b:8080" "envoy://connect_originate/10.0.0.5:8080" inbound-vip|8080|http|b.ns.svc.cluster.local envoy://internal_client_address/ 10.96.0.5:8080 10.0.0.9:4 - default`,
			want: schema.LogEntry{Time: "2026-03-02T09:17:16.000Z", Method: "GET", Path: "/b", Protocol: "HTTP/1.1",
				Code: 200, Details: "via_upstream", DurationMS: 3, UpstreamHost: "envoy://connect_originate/10.0.0.5:8080",
				Cluster: "inbound-vip|8080|http|b.ns.svc.cluster.local", Format: "istio"},
		},
		{
			name: "json without upstream_cluster nor details: they are lacking, not \"\"",
			line: `{"response_code":503,"response_flags":"UO","upstream_host":"10.0.0.5:8080","method":"GET","path":"/","protocol":"HTTP/1.1","duration":1,"connection_termination_details":null,"upstream_transport_failure_reason":null}`,
			want: schema.LogEntry{Method: "GET", Path: "/", Protocol: "HTTP/1.1", Code: 503, Flags: []string{"UO"}, DurationMS: 1,
				UpstreamHost: "10.0.0.5:8080", Format: "json", Lacks: []string{"details", "cluster"}},
		},
		// A numeric field Envoy wrote "-" or null for has no value (Unset): before, it read 0,
		// a duration Envoy did not write (all(entries, .duration < 5) held of it).
		{
			name: "Istio's format, duration \"-\": unset, not 0",
			line: `[2026-03-02T09:17:16.000Z] "GET /b HTTP/1.1" 0 DC downstream_remote_disconnect - "-" 0 0 - - "-" "curl" "2" "b:8080" "-" outbound|8080||b.ns.svc.cluster.local - 10.96.0.5:8080 10.0.0.9:4 - default`,
			want: schema.LogEntry{Time: "2026-03-02T09:17:16.000Z", Method: "GET", Path: "/b", Protocol: "HTTP/1.1",
				Flags: []string{"DC"}, Details: "downstream_remote_disconnect", Cluster: "outbound|8080||b.ns.svc.cluster.local",
				Format: "istio", Unset: []string{"duration"}},
		},
		{
			name: "Envoy's default format, duration \"-\": unset, not 0",
			line: `[2026-03-02T09:17:14.000Z] "GET /x HTTP/1.1" 503 UF 0 91 - - "10.0.35.28" "curl/8.0" "cc21" "httpbin:8000" "10.44.1.27:80"`,
			want: schema.LogEntry{Time: "2026-03-02T09:17:14.000Z", Method: "GET", Path: "/x", Protocol: "HTTP/1.1",
				Code: 503, Flags: []string{"UF"}, UpstreamHost: "10.44.1.27:80", Format: "envoy", Lacks: envoyLacks, Unset: []string{"duration"}},
		},
		{
			name: "json, duration and response_code null or \"-\": unset, not 0",
			line: `{"response_code":null,"response_flags":"DC","upstream_host":"10.0.0.5:8080","upstream_cluster":"c","response_code_details":null,"method":"GET","path":"/","protocol":"HTTP/1.1","duration":"-","connection_termination_details":null,"upstream_transport_failure_reason":null}`,
			want: schema.LogEntry{Method: "GET", Path: "/", Protocol: "HTTP/1.1", Flags: []string{"DC"},
				UpstreamHost: "10.0.0.5:8080", Cluster: "c", Format: "json", Unset: []string{"code", "duration"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := AccessLog(tt.line)
			if !ok {
				t.Fatalf("not an access-log line: %s", tt.line)
			}
			tt.want.Line = strings.TrimRight(tt.line, "\r\n")
			tt.want.Access = true
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestAccessLogNot(t *testing.T) {
	for _, line := range []string{
		"",
		"2026-03-02T09:14:11.301862Z\tinfo\tEnvoy proxy is ready",
		"2026-03-02T09:17:20.551294Z\twarning\tenvoy config external/envoy/source/extensions/config_subscription/grpc/grpc_stream.h:191\tStreamAggregatedResources gRPC config stream to xds-grpc closed since 3600s ago: 13, \tthread=15",
		"2025-04-29T18:08:47.016271Z\tdebug\tenvoy http external/envoy/source/common/http/filter_manager.cc:1084\t[Tags: \"ConnectionId\":\"446\"] Sending local reply with details upstream_reset_before_response_started{remote_connection_failure}\tthread=29",
		`{"level":"info","time":"2026-03-02T09:18:01.000000Z","msg":"not an access log"}`,
		`[2026-03-02T09:17:16.000Z] "GET / HTTP/1.1" abc UH`,
		`[2026-03-02T09:17:16.000Z] "GET / HTTP/1.1" 503`,
		`[2026-03-02T09:17:16.000Z] "GET / HTTP/1.1 503 UH x - "-" 0 0 0`,
		`[2026-03-02T09:17:16.000Z] "GET / HTTP/1.1" 503 UH x - "-" a b c`,
		`[2026-03-02T09:17:16.000Z] "GET / HTTP/1.1" 503 UF 0 91 4 -`,
		`[2026-03-02T09:17:16.000Z] "GET / HTTP/1.1" 503 UF 0 91 x - "-"`,
		`[2026-03-02T09:17:16.000Z] "GET / HTTP/1.1" 503 UF 0 91 4`,
		`[2026-03-02T09:17:16.000Z`,
		`{"response_code": 503`,
	} {
		got, ok := AccessLog(line)
		if ok || !reflect.DeepEqual(got, schema.LogEntry{Line: line}) {
			t.Errorf("%q: ok %v, %+v", line, ok, got)
		}
	}
}

// TestAccessLogFixture reads a whole istio-proxy log as a logs step would.
func TestAccessLogFixture(t *testing.T) {
	codes := map[float64]int{}
	flags := map[string]int{}
	n := 0
	for line := range strings.Lines(string(readFixture(t, "istio-proxy.log"))) {
		e, ok := AccessLog(line)
		if !ok {
			continue
		}
		n++
		codes[e.Code]++
		for _, f := range e.Flags {
			flags[f]++
		}
	}
	if n != 10 {
		t.Errorf("%d access-log lines, want 10", n)
	}
	wantCodes := map[float64]int{200: 1, 503: 5, 504: 1, 404: 1, 0: 2}
	wantFlags := map[string]int{"UO": 3, "URX": 3, "UF": 3, "UT": 1, "NR": 1, "DC": 1}
	if !reflect.DeepEqual(codes, wantCodes) || !reflect.DeepEqual(flags, wantFlags) {
		t.Errorf("codes %v flags %v", codes, flags)
	}
}
