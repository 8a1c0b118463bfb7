package envoy

import (
	"maps"
	"math"
	"strings"
	"testing"
)

func TestPrometheusFixture(t *testing.T) {
	counters, gauges, err := Prometheus(readFixture(t, "prometheus.txt"))
	if err != nil {
		t.Fatal(err)
	}
	wantCounters := map[string]float64{
		`envoy_cluster_upstream_cx_overflow{cluster_name="` + connLab + `"}`:          37,
		`envoy_cluster_upstream_cx_overflow{cluster_name="` + serviceA + `"}`:         5,
		`envoy_cluster_upstream_rq_pending_overflow{cluster_name="` + connLab + `"}`:  12,
		`envoy_cluster_upstream_rq_pending_overflow{cluster_name="` + serviceA + `"}`: 99,
		`envoy_cluster_upstream_cx_total{cluster_name="xds-grpc"}`:                    1,
		`envoy_cluster_upstream_rq_time_sum{cluster_name="` + connLab + `"}`:          161.5,
		`envoy_cluster_upstream_rq_time_count{cluster_name="` + connLab + `"}`:        40,
		`go_gc_duration_seconds_sum`:                                                  0.002103,
		`go_gc_duration_seconds_count`:                                                31,
		`istio_requests_total{connection_security_policy="unknown",destination_service="backend.conn-lab.svc.cluster.local",destination_service_name="backend",reporter="source",response_code="503",response_flags="UO",source_workload="fortio",source_workload_namespace="conn-lab"}`: 12,
		`istio_requests_total{connection_security_policy="unknown",destination_service="backend.conn-lab.svc.cluster.local",destination_service_name="backend",reporter="source",response_code="200",response_flags="-",source_workload="fortio",source_workload_namespace="conn-lab"}`:  40,
	}
	if !maps.Equal(counters, wantCounters) {
		for k, v := range counters {
			if wantCounters[k] != v {
				t.Errorf("counter %s = %v, want %v", k, v, wantCounters[k])
			}
		}
		for k := range wantCounters {
			if _, ok := counters[k]; !ok {
				t.Errorf("counter %s missing", k)
			}
		}
	}
	nan := gauges["untyped_thing"]
	delete(gauges, "untyped_thing")
	if !math.IsNaN(nan) {
		t.Errorf("untyped_thing = %v, want NaN", nan)
	}
	wantGauges := map[string]float64{
		`envoy_cluster_circuit_breakers_default_cx_open{cluster_name="` + connLab + `"}`: 1,
		`envoy_cluster_upstream_cx_active{cluster_name="` + connLab + `"}`:               1,
		`envoy_cluster_upstream_cx_active{cluster_name="xds-grpc"}`:                      1,
		`envoy_server_live`:                           1,
		`go_gc_duration_seconds{quantile="0"}`:        2.6e-05,
		`go_gc_duration_seconds{quantile="0.5"}`:      6.1e-05,
		`go_gc_duration_seconds{quantile="1"}`:        0.000187,
		`pilot_agent_note{a="x",msg="say \"hi\"\\n"}`: 3,
	}
	if !maps.Equal(gauges, wantGauges) {
		t.Errorf("gauges:\n%v\nwant\n%v", gauges, wantGauges)
	}
}

func TestPrometheus(t *testing.T) {
	tests := []struct {
		name             string
		data             string
		counters, gauges map[string]float64
		wantErr          string
	}{
		{name: "crlf and blanks", data: "# TYPE a counter\r\n\r\na 1\r\n  b{x=\"1\"} 2  \r\n",
			counters: map[string]float64{"a": 1}, gauges: map[string]float64{`b{x="1"}`: 2}},
		{name: "labels sorted, spaces, trailing comma", data: `m{ z = "1" , a="2", } 3`,
			gauges: map[string]float64{`m{a="2",z="1"}`: 3}},
		{name: "label value with comma and brace", data: `m{a="x,}y"} 1`,
			gauges: map[string]float64{`m{a="x,}y"}`: 1}},
		{name: "timestamp ignored", data: "m 1 1700000000000\n", gauges: map[string]float64{"m": 1}},
		{name: "inf", data: "# TYPE h histogram\nh_bucket{le=\"+Inf\"} 5\nh_count 5\nm +Inf\n",
			counters: map[string]float64{"h_count": 5}, gauges: map[string]float64{"m": math.Inf(1)}},
		{name: "openmetrics counter", data: "# TYPE r counter\nr_total 4\nr_created 1.7e9\n# EOF\n",
			counters: map[string]float64{"r_total": 4}},
		{name: "count of an untyped family is a gauge", data: "x_count 2\n", gauges: map[string]float64{"x_count": 2}},
		{name: "last wins", data: "m 1\nm 2\n", gauges: map[string]float64{"m": 2}},
		{name: "empty", data: ""},
		{name: "no value", data: "m\n", wantErr: "line 1"},
		{name: "bad value", data: "ok 1\nm{a=\"b\"} x\n", wantErr: "line 2"},
		{name: "unterminated label", data: `m{a="b} 1`, wantErr: "unterminated"},
		{name: "unquoted label", data: `m{a=b} 1`, wantErr: "not quoted"},
		{name: "no metric name", data: `{a="b"} 1`, wantErr: "no metric name"},
		{name: "missing comma", data: `m{a="b" c="d"} 1`, wantErr: "expected ','"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, g, err := Prometheus([]byte(tt.data))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.counters == nil {
				tt.counters = map[string]float64{}
			}
			if tt.gauges == nil {
				tt.gauges = map[string]float64{}
			}
			if !maps.Equal(c, tt.counters) || !maps.Equal(g, tt.gauges) {
				t.Errorf("got %v %v, want %v %v", c, g, tt.counters, tt.gauges)
			}
		})
	}
}
