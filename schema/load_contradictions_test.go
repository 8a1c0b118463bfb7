package schema

import (
	"strings"
	"testing"
)

// TestLoadContradictions: a load result that fortio could have recorded keeps its sums
// (socket errors, 418, a load that sent nothing, a percentile fortio gave none of, a load
// from several pods); one changed so that it breaks one is told, naming the fields and values.
func TestLoadContradictions(t *testing.T) {
	good := func() LoadResult {
		return LoadResult{Requests: 20, Codes: map[string]float64{"200": 15, "418": 1, "503": 2, "-1": 2}, OK: 16, Errors: 4,
			Avg: 0.5, Min: 0.1, P50: 0.4, P90: 0.8, P99: 1.2, P999: 1.3, Max: 1.3,
			QPS: 20 / 0.9458, DurationS: 0.9458, Sockets: 20, Connections: 2, IPs: map[string]float64{"127.0.0.2:80": 21}}
	}
	pods := func() LoadResult {
		a := LoadResult{Pod: "a", Requests: 3, Codes: map[string]float64{"200": 3}, OK: 3, Min: 1, P50: 1, P90: 2, P99: 2, P999: 2, Max: 2, Avg: 1.5, QPS: 3, DurationS: 1, Connections: 1}
		b := LoadResult{Pod: "b", Requests: 2, Codes: map[string]float64{"200": 1, "503": 1}, OK: 1, Errors: 1, Min: 1, P50: 1, P90: 1, P99: 1, P999: 1, Max: 1, Avg: 1, QPS: 2, DurationS: 1, Connections: 1}
		return LoadResult{Requests: 5, Codes: map[string]float64{"200": 4, "503": 1}, OK: 4, Errors: 1, Min: 1, P50: 1, P90: 2, P99: 2, P999: 2, Max: 2, Avg: 1.4, QPS: 5, DurationS: 1, Connections: 2, Pods: []LoadResult{a, b}}
	}
	for _, c := range []struct {
		name string
		edit func(r *LoadResult)
		want string // "" for none
	}{
		{"as recorded", func(*LoadResult) {}, ""},
		{"nothing sent", func(r *LoadResult) { *r = LoadResult{Codes: map[string]float64{}} }, ""},
		{"no codes at all", func(r *LoadResult) { *r = LoadResult{} }, ""},
		{"a percentile fortio gave none of", func(r *LoadResult) { r.P99 = 0 }, ""},
		{"equal latencies", func(r *LoadResult) {
			r.Min, r.P50, r.P90, r.P99, r.P999, r.Max, r.Avg = 2, 2, 2, 2, 2, 2, 2.0000000000000004
		}, ""},
		{"codes made 503, ok left", func(r *LoadResult) { r.Codes = map[string]float64{"503": 20} },
			"ok is 16, but the 2xx and 418 codes (503×20) add up to 0"},
		{"a code added", func(r *LoadResult) { r.Codes["200"]++ },
			"requests is 20, but the codes (-1×2, 200×16, 418×1, 503×2) add up to 21; ok is 16, but the 2xx and 418 codes (-1×2, 200×16, 418×1, 503×2) add up to 17"},
		{"errors changed", func(r *LoadResult) { r.Errors = 0 }, "errors is 0, but requests − ok is 20 − 16 = 4"},
		{"socket errors counted as ok", func(r *LoadResult) { r.OK, r.Errors = 18, 2 }, "ok is 18, but the 2xx and 418 codes"},
		{"p50 above p90", func(r *LoadResult) { r.P50 = 0.9 }, "p90 is 0.8 ms, below p50 0.9 ms"},
		{"min above p50", func(r *LoadResult) { r.Min = 0.45 }, "p50 is 0.4 ms, below min 0.45 ms"},
		{"max below p999", func(r *LoadResult) { r.Max = 1 }, "max is 1 ms, below p999 1.3 ms"},
		{"avg above max", func(r *LoadResult) { r.Avg = 2 }, "avg is 2 ms, outside min 0.1 ms … max 1.3 ms"},
		{"qps edited", func(r *LoadResult) { r.QPS = 250 }, "qps is 250/s, but requests / duration is 20 / 0.9458 s = 21.15/s"},
		{"duration edited", func(r *LoadResult) { r.DurationS = 10 }, "qps is 21.15/s, but requests / duration is 20 / 10 s = 2/s"},
		{"an address added", func(r *LoadResult) { r.IPs["127.0.0.3:80"] = 5 },
			"ips add up to 26, but fortio opened 20 sockets over 2 connection(s): it counts at most one address per socket and one more per connection (22)"},
		{"no sockets recorded: ips not bounded", func(r *LoadResult) { r.Sockets = 0 }, ""},
		// A load's duration zeroed (or deleted) while its qps and requests stay skipped the
		// qps check, and replay passed an expectation on the duration.
		{"duration zeroed", func(r *LoadResult) { r.DurationS = 0 }, "duration is 0 s, but it made 20 requests (fortio measures the time of its run, which a request takes)"},
		// Every latency zeroed (or deleted) kept their order.
		{"latencies zeroed", func(r *LoadResult) { r.Min, r.P50, r.P90, r.P99, r.P999, r.Max, r.Avg = 0, 0, 0, 0, 0, 0, 0 },
			"max is 0 ms, but it made 20 requests (fortio times every call, and no call takes 0 ms); avg is 0 ms, but it made 20 requests"},
		{"max longer than the load", func(r *LoadResult) { r.Max = 2000 }, "max is 2000 ms, longer than the load's duration 0.9458 s (every call fortio times is made within it)"},
		{"max within the load", func(r *LoadResult) { r.Max = 940 }, ""},
		{"calls longer than the connections can make", func(r *LoadResult) { r.Max, r.Avg = 900, 100 },
			"avg × requests is 100 ms × 20 = 2 s of calls, more than its 2 connection(s) can make in its duration of 0.9458 s (1.892 s: each connection makes one call at a time)"},
		{"calls that kept the connections busy", func(r *LoadResult) { r.Max, r.Avg = 900, 94 }, ""},
		// fortio's average of 20 calls has all its digits: the reader is given 4 (it read
		// "avg × requests is 604.1043919166666 ms × 24").
		{"an average of many digits", func(r *LoadResult) { r.Max, r.Avg = 900, 100.47316068421053 },
			"avg × requests is 100.5 ms × 20 = 2.009 s of calls"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := good()
			c.edit(&r)
			got := strings.Join(r.Contradictions(), "; ")
			if c.want == "" && got != "" || !strings.Contains(got, c.want) {
				t.Errorf("contradictions %q, want %q", got, c.want)
			}
		})
	}
	for _, c := range []struct {
		name string
		edit func(r *LoadResult)
		want string
	}{
		{"as recorded", func(*LoadResult) {}, ""},
		{"a pod's codes changed", func(r *LoadResult) { r.Pods[1].Codes = map[string]float64{"200": 2} },
			`pods[1] (b): ok is 1, but the 2xx and 418 codes (200×2) add up to 2; codes["200"] is 4, but its pods' add up to 5; codes["503"] is 1, but no pod has that code`},
		{"the merged codes changed", func(r *LoadResult) { r.Codes = map[string]float64{"200": 5}; r.Recount() },
			`codes["200"] is 5, but its pods' add up to 4; codes["503"] is 0, but its pods' add up to 1`},
		{"a pod's latencies zeroed", func(r *LoadResult) {
			p := &r.Pods[0]
			p.Min, p.P50, p.P90, p.P99, p.P999, p.Max, p.Avg = 0, 0, 0, 0, 0, 0, 0
		},
			"pods[0] (a): max is 0 ms, but it made 3 requests"},
		{"a pod's latencies out of order", func(r *LoadResult) { r.Pods[0].P90 = 0.5 }, "pods[0] (a): p90 is 0.5 ms, below p50 1 ms"},
		{"summed qps over the longest duration", func(r *LoadResult) {
			r.Pods[0].QPS, r.Pods[0].DurationS, r.Pods[1].QPS, r.Pods[1].DurationS = 3, 1, 1, 2
			r.QPS, r.DurationS = 4, 2
		}, ""},
		{"a pod's qps edited", func(r *LoadResult) { r.Pods[1].QPS, r.Pods[1].DurationS = 7, 2 }, "pods[1] (b): qps is 7/s, but requests / duration is 2 / 2 s = 1/s"},
	} {
		t.Run("pods/"+c.name, func(t *testing.T) {
			r := pods()
			c.edit(&r)
			got := strings.Join(r.Contradictions(), "; ")
			if c.want == "" && got != "" || !strings.Contains(got, c.want) {
				t.Errorf("contradictions %q, want %q", got, c.want)
			}
		})
	}
}
