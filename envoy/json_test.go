package envoy

import (
	"maps"
	"strings"
	"testing"
)

// stats.json is the same snapshot as stats_istio.txt in /stats?format=json form, so each
// cluster must read the same from both.
func TestJSONStatsMatchesText(t *testing.T) {
	text := readFixture(t, "stats_istio.txt")
	js := readFixture(t, "stats.json")
	for _, c := range append(StatClusters(text), "", "outbound|8080||backend", "absent") {
		want, err := ClusterStats(text, c)
		if err != nil {
			t.Fatal(err)
		}
		got, err := JSONStats(js, c)
		if err != nil {
			t.Fatal(err)
		}
		if !maps.Equal(got, want) {
			t.Errorf("%q: json has %d stats, text %d", c, len(got), len(want))
		}
		wantH, err := ClusterHistograms(text, c)
		if err != nil {
			t.Fatal(err)
		}
		gotH, err := JSONHistograms(js, c)
		if err != nil {
			t.Fatal(err)
		}
		if !maps.Equal(gotH, wantH) {
			t.Errorf("%q: json has %d quantiles, text %d\n%v\n%v", c, len(gotH), len(wantH), gotH, wantH)
		}
	}
}

func TestJSONStats(t *testing.T) {
	js := readFixture(t, "stats.json")
	got, err := JSONStats(js, connLab)
	if err != nil {
		t.Fatal(err)
	}
	if got["upstream_rq_pending_overflow"] != 12 || got["circuit_breakers.default.remaining_retries"] != 4294967295 {
		t.Errorf("got %v", got)
	}
	got, err = JSONStats(js, "xds-grpc")
	if err != nil || got["upstream_cx_total"] != 1 {
		t.Errorf("xds-grpc: %v %v", got, err)
	}

	tests := []struct {
		data, cluster string
		want          map[string]float64
		wantErr       string
	}{
		{`{"stats":[{"name":"cluster.c.a_b","value":1},{"name":"cluster.c;.x","value":2},{"name":"cluster.cc;.x","value":3}]}`, "c",
			map[string]float64{"a_b": 1, "x": 2}, ""},
		{`{"stats":[{"name":"t","value":"text"},{"name":"n","value":null},{"name":"big","value":18446744073709551615}]}`, "",
			map[string]float64{"big": 18446744073709551615}, ""},
		{`{"stats":[]}`, "c", map[string]float64{}, ""},
		{`{"stats":[{"name":"a","value":true}]}`, "", nil, "not a number"},
		{`{"other":[]}`, "", nil, `no "stats"`},
		{`server.live: 1`, "", nil, "stats json"},
		{``, "", nil, "stats json"},
	}
	for _, tt := range tests {
		got, err := JSONStats([]byte(tt.data), tt.cluster)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: err %v, want %q", tt.data, err, tt.wantErr)
			}
			continue
		}
		if err != nil || !maps.Equal(got, tt.want) {
			t.Errorf("%s: got %v, %v; want %v", tt.data, got, err, tt.want)
		}
	}
}

func TestJSONHistograms(t *testing.T) {
	data := `{"stats":[{"name":"a","value":1},{"histograms":{"supported_quantiles":[0,50,99.9,100],
	"computed_quantiles":[{"name":"cluster.c;.upstream_rq_time","values":[{"interval":null,"cumulative":1},
	{"interval":2,"cumulative":3},{"interval":null,"cumulative":null},{"cumulative":9}]},
	{"name":"cluster.d;.upstream_rq_time","values":[{"cumulative":100}]}]}}]}`
	got, err := JSONHistograms([]byte(data), "c")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"upstream_rq_time.p0": 1, "upstream_rq_time.p50": 3, "upstream_rq_time.p100": 9}
	if !maps.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}
