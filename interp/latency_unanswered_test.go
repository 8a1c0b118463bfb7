package interp_test

import (
	"strings"
	"testing"

	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/schema"
)

// TestLatencyOfALoadNobodyAnswered: fortio times every request, a socket error too, so the
// latencies of a load no request of which got an HTTP response are the times its errors
// took, and f.p99 < duration('100ms') passed over a load against a closed port (probe p63,
// left then for examples/local_connect_timeout.cue). A latency of such a load has no value,
// however the claim reaches it, and says to read errorLatency, the latencies of the failed
// requests, which has a value where every request failed (ok == 0), or where the record keeps
// them apart (version 9 on), and none elsewhere. A load some of whose requests failed at the
// socket and others were answered has no latency either: the errors' times are mixed with the
// answers' (pp.p99 < 100 passed). A load that made no request has no latency either (fortio's
// empty histogram reads 0).
func TestLatencyOfALoadNobodyAnswered(t *testing.T) {
	sc := loadScenario(t, `s: schema.#Scenario & {
	steps: [
		{name: "f", load: {url: "http://127.0.0.1:1/", requests: 3, connections: 1}},
		{name: "g", load: {url: "http://127.0.0.1:2/", requests: 4, connections: 1}},
		{name: "h", load: {url: "http://127.0.0.1:3/", requests: 4, connections: 1}},
		{name: "h9", load: {url: "http://127.0.0.1:3/", requests: 4, connections: 1}},
		{name: "all503", load: {url: "http://127.0.0.1:4/", requests: 2, connections: 1}},
		{name: "none", load: {url: "http://127.0.0.1:5/", duration: "1s", connections: 1}},
		{name: "pp", load: {from: {selector: "app=client", namespace: "lab", pods: 2}, url: "http://backend:8080/", requests: 4, connections: 1}},
	]
	expect: [
		"f.p99 < duration('100ms')",
		"f.avg < 100",
		"let r = f; r.max < duration('100ms')",
		"(get(f, 'p99') ?? 0) < 100",
		"all(pp.pods, .p99 < 100)",
		"pp.pods[1].p50 < 100",
		"g.errorLatency.p99 < 100",
		"h.errorLatency.p99 < 100",
		"none.p99 < 100",
		"pp.p99 < 100",
		// These have values.
		"f.errorLatency.p99 < duration('100ms') && f.errorLatency.avg == 0.5",
		"let e = f.errorLatency; e.max == 2",
		"g.p99 < 100 && h.p99 < 100 && pp.pods[0].p99 < 100",
		"h9.errorLatency.p99 == 7 && h9.errorLatency.min == 3",
		"all503.errorLatency.p99 == all503.p99",
		"pp.pods[1].errorLatency.p99 < 100",
	]
}`)
	lat := func(r schema.LoadResult) schema.LoadResult {
		r.Min, r.P50, r.P90, r.P99, r.P999, r.Max, r.Avg, r.DurationS = 0.1, 0.2, 1, 2, 2, 2, 0.5, 1
		return r
	}
	unanswered := lat(schema.LoadResult{Pod: "client-b", Requests: 2, Errors: 2, Codes: map[string]float64{"-1": 2}})
	rec := &interp.Record{}
	rec.Put("f", "load", false, &interp.LoadRecord{LoadResult: lat(schema.LoadResult{Requests: 3, Errors: 3, Codes: map[string]float64{"-1": 3}})})
	rec.Put("g", "load", false, &interp.LoadRecord{LoadResult: lat(schema.LoadResult{Requests: 4, OK: 4, Codes: map[string]float64{"200": 4}})})
	rec.Put("h", "load", false, &interp.LoadRecord{LoadResult: lat(schema.LoadResult{Requests: 4, OK: 2, Errors: 2, Codes: map[string]float64{"200": 2, "503": 2}})})
	rec.Put("h9", "load", false, &interp.LoadRecord{LoadResult: lat(schema.LoadResult{Requests: 4, OK: 2, Errors: 2, Codes: map[string]float64{"200": 2, "503": 2},
		ErrorLatency: &schema.LoadLatency{Min: 3, P50: 4, P90: 6, P99: 7, P999: 7, Max: 7, Avg: 5}})})
	rec.Put("all503", "load", false, &interp.LoadRecord{LoadResult: lat(schema.LoadResult{Requests: 2, Errors: 2, Codes: map[string]float64{"503": 2}})})
	rec.Put("none", "load", false, &interp.LoadRecord{LoadResult: schema.LoadResult{Codes: map[string]float64{}, IPs: map[string]float64{}, DurationS: 1}})
	rec.Put("pp", "load", false, &interp.LoadRecord{LoadResult: lat(schema.LoadResult{Requests: 4, OK: 2, Errors: 2, Codes: map[string]float64{"200": 2, "-1": 2},
		Pods: []schema.LoadResult{
			lat(schema.LoadResult{Pod: "client-a", Requests: 2, OK: 2, Codes: map[string]float64{"200": 2}}),
			unanswered,
		}})})
	want := []string{
		`f.p99 has no value: no request of load f got an HTTP response (all 3 failed at the socket, code -1: refused, reset, or timed out before an answer), so its latencies are the times its socket errors took (a refused connect takes microseconds, a connect timeout its timeout), not those of any response: a claim about p99 would hold of requests no server answered; to claim the time the errors took, read f.errorLatency.p99`,
		`f.avg has no value: no request of load f got an HTTP response`,
		`r.max (f.max) has no value: no request of load f got an HTTP response`,
		`get(f, "p99") (f.p99) has no value: no request of load f got`,
		`.p99 (pp.pods[1].p99) has no value: no request of load pp from client pod client-b got an HTTP response (all 2 failed at the socket`,
		`pp.pods[1].p50 has no value: no request of load pp from client pod client-b got an HTTP response`,
		`g.errorLatency has no value: no request of load g failed (errors is 0); claim the latencies of every request (g.p99)`,
		`h.errorLatency has no value: 2 of the 4 requests of load h succeeded and 2 failed, and its result holds no latencies of the failed ones apart: it was recorded by a labrun before record version 9`,
		`none.p99 has no value: load none made no request, so it timed none; to claim that, write none.requests == 0`,
		`pp.p99 has no value: 2 of the 4 requests of load pp failed at the socket (code -1: refused, reset, or timed out before an answer), and fortio times those errors with the answers, in one histogram`,
	}
	for i, jd := range interp.Rejudge(rec, sc) {
		if i >= len(want) {
			if jd.Outcome != interp.Passed {
				t.Errorf("%s: %s (%s), want passed", jd.Src, jd.Outcome, jd.Reason)
			}
			continue
		}
		if jd.Outcome != interp.Errored || !strings.HasPrefix(jd.Reason, want[i]) {
			t.Errorf("%s: %s (%s%s)\nwant an error starting %s", jd.Src, jd.Outcome, jd.Reason, jd.Explanation, want[i])
		}
	}
}
