package interp_test

import (
	"fmt"
	"strings"
	"testing"

	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/schema"
)

// TestNoValueWhateverThePath: a value the record says has none (a code of a load no request
// of which got an HTTP response; any field of a load stopped before its end; a logs step's
// codes over no access line) has none however the expression reaches it: through a let
// (let c = f.codes; c["503"] == 0 passed while f.codes["503"] == 0 erred), a ?:, ?., has()
// or in, a pod of a load from several pods (f.pods[1].code503, all(f.pods, .code503 == 0):
// one pod whose every request failed at the socket read 0), not only where the step's name
// is written before the field. What has a value reads as recorded: codes["-1"], a code of a
// load or of a pod that got answers.
func TestNoValueWhateverThePath(t *testing.T) {
	sc := loadScenario(t, `s: schema.#Scenario & {
	vars: k: "503"
	steps: [
		{name: "f", load: {url: "http://127.0.0.1:1/", requests: 3, connections: 1}},
		{name: "g", load: {url: "http://127.0.0.1:2/", requests: 4, connections: 1}},
		{name: "pp", load: {from: {selector: "app=client", namespace: "lab", pods: 2}, url: "http://backend:8080/", requests: 4, connections: 1}},
		{name: "stopped", load: {url: "http://127.0.0.1:3/", requests: 100, connections: 1}},
		{name: "log", logs: file: "a.log"},
	]
	expect: [
		"let c = f.codes; c['503'] == 0",
		"let r = f; r.code503 == 0",
		"let r = f; r.codes['503'] == 0",
		"let c = f.codes; let d = c; d['503'] == 0",
		"(f.errors > 0 ? f.codes : g.codes)['503'] == 0",
		"f?.codes?.['503'] == 0",
		"!('503' in f.codes)",
		"'503' not in f.codes",
		"!has(f.codes, '503')",
		"let c = f.codes; !has(c, '503')",
		"pp.pods[1].code503 == 0",
		"all(pp.pods, .code503 == 0)",
		"all(pp.pods, .codes['503'] == 0)",
		"none(pp.pods, '503' in .codes)",
		"let r = stopped; r.code200 == r.requests",
		"let n = stopped.requests; n == 100",
		"let c = log.codes; c['503'] == 0",
		"let l = log; l.codes['503'] == 0",
		// get() and a key computed when it runs (p68: these three passed).
		"(get(f.codes, '503') ?? 0) == 0",
		"let k = '503'; (get(f.codes, k) ?? 0) == 0",
		"let k = '503'; (f.codes?.[k] ?? 0) == 0",
		"f.codes?.[vars.k] == nil",
		"let k = '503'; f.codes[k] == 0",
		// These have values.
		"let c = f.codes; c['-1'] == f.requests",
		"'-1' in f.codes && has(f.codes, '-1')",
		"let c = g.codes; c['503'] == 0 && c['200'] == 4 && !('503' in c)",
		"pp.pods[0].code503 == 0 && pp.pods[0].code200 == 2",
		"pp.code200 == 2 && pp.codes['-1'] == 2",
		// A code read inside get's first argument leaves get as it is.
		"(get(g.code200 > 0 ? g.ips : pp.ips, '10.0.0.1:80') ?? 0) == 4",
	]
}`)
	unanswered := map[string]float64{"-1": 2}
	rec := &interp.Record{Vars: map[string]any{"k": "503"}}
	rec.Put("f", "load", false, &interp.LoadRecord{LoadResult: schema.LoadResult{Requests: 3, Errors: 3, Codes: map[string]float64{"-1": 3}}})
	rec.Put("g", "load", false, &interp.LoadRecord{LoadResult: schema.LoadResult{Requests: 4, OK: 4, Codes: map[string]float64{"200": 4}, IPs: map[string]float64{"10.0.0.1:80": 4}}})
	rec.Put("pp", "load", false, &interp.LoadRecord{LoadResult: schema.LoadResult{Requests: 4, OK: 2, Errors: 2, Codes: map[string]float64{"200": 2, "-1": 2},
		Pods: []schema.LoadResult{
			{Pod: "client-a", Requests: 2, OK: 2, Codes: map[string]float64{"200": 2}},
			{Pod: "client-b", Requests: 2, Errors: 2, Codes: unanswered},
		}}})
	rec.Put("stopped", "load", false, &interp.LoadRecord{LoadResult: schema.LoadResult{Requests: 30, OK: 30, Codes: map[string]float64{"200": 30}}, Partial: "interrupted"})
	rec.Put("log", "logs", false, schema.LogResult{Count: 1, Lines: []string{"GET /x 503"}, Entries: []schema.LogEntry{{Line: "GET /x 503"}},
		Codes: map[string]float64{}, Flags: map[string]float64{}, Details: map[string]float64{}})
	got := interp.Rejudge(rec, sc)
	const answered = 23 // the expectations before this one have no value
	for i, jd := range got {
		want := interp.Errored
		if i >= answered {
			want = interp.Passed
		}
		if jd.Outcome != want {
			t.Errorf("%s: %s (%s%s), want %s", jd.Src, jd.Outcome, jd.Reason, jd.Explanation, want)
			continue
		}
		if want == interp.Errored && !strings.Contains(jd.Reason, "has no value") {
			t.Errorf("%s: reason %q, want one saying it has no value", jd.Src, jd.Reason)
		}
		if strings.Contains(jd.Reason, "<step>") || strings.Contains(jd.Reason, "\n") {
			t.Errorf("%s: reason %q, want one naming the step, in one line", jd.Src, jd.Reason)
		}
	}
}

// TestCaptureThroughALet: a group of an exec's capture that matched nothing, read through a
// let (let c = x.captured; c.v), errs as x.captured.v does, naming the step; it said "this
// entry's line did not match", the words of a logs entry's captures.
func TestCaptureThroughALet(t *testing.T) {
	sc := loadScenario(t, `s: schema.#Scenario & {
	steps: [{name: "x", exec: {argv: ["echo", "nothing"], capture: "version=(?P<v>[0-9.]+)"}}]
	expect: ["let c = x.captured; c.v != '1.0'", "let r = x; r.captured.v != '1.0'", "let c = x.captured; has(c, 'v') ? c.v == '1.0' : true"]
}`)
	rec := &interp.Record{}
	rec.Put("x", "exec", false, schema.ExecResult{Stdout: "nothing\n", Captured: map[string]string{}})
	got := interp.Rejudge(rec, sc)
	for i, jd := range got[:2] {
		if jd.Outcome != interp.Errored || !strings.Contains(jd.Reason, `x.captured.v has no value: the capture of "x" matched nothing in its stdout`) {
			t.Errorf("%d %s: %s (%s)", i, jd.Src, jd.Outcome, jd.Reason)
		}
	}
	if got[2].Outcome != interp.Passed {
		t.Errorf("%s: %s (%s), want passed: has() guards the read", got[2].Src, got[2].Outcome, got[2].Reason)
	}
}

// TestNoValueNamesTheLoad: the error of a code of a load no request of which was answered
// names the load (or the pod of a load from several pods) whose codes the claim read,
// however it reached them, and says what to claim of that load; through a let it said
// "write <step>.codes["-1"] == <step>.requests", and a read the judge did not see written
// out ended with expr's snippet of the rewritten expression.
func TestNoValueNamesTheLoad(t *testing.T) {
	sc := loadScenario(t, `s: schema.#Scenario & {
	steps: [
		{name: "f", load: {url: "http://127.0.0.1:1/", requests: 3, connections: 1}},
		{name: "pp", load: {from: {selector: "app=client", namespace: "lab", pods: 2}, url: "http://backend:8080/", requests: 4, connections: 1}},
	]
	expect: [
		"f.code503 == 0",
		"let c = f.codes; c['503'] == 0",
		"pp.pods[1].code503 == 0",
		"all(pp.pods, .code503 == 0)",
		"let k = '503'; (get(pp.pods[1].codes, k) ?? 0) == 0",
	]
}`)
	rec := &interp.Record{}
	rec.Put("f", "load", false, &interp.LoadRecord{LoadResult: schema.LoadResult{Requests: 3, Errors: 3, Codes: map[string]float64{"-1": 3}}})
	rec.Put("pp", "load", false, &interp.LoadRecord{LoadResult: schema.LoadResult{Requests: 4, OK: 2, Errors: 2, Codes: map[string]float64{"200": 2, "-1": 2},
		Pods: []schema.LoadResult{
			{Pod: "client-a", Requests: 2, OK: 2, Codes: map[string]float64{"200": 2}},
			{Pod: "client-b", Requests: 2, Errors: 2, Codes: map[string]float64{"-1": 2}},
		}}})
	pod := `no request of load pp from client pod client-b got an HTTP response (all 2 failed at the socket, code -1: refused, reset, or timed out before an answer), so it counts none by code: a claim about %s would hold of requests no server answered; to claim that none was answered, write pp.pods[1].codes["-1"] == pp.pods[1].requests (or pp.pods[1].ok == 0)`
	want := []string{
		`f.code503 has no value: no request of load f got an HTTP response (all 3 failed at the socket, code -1: refused, reset, or timed out before an answer), so it counts none by code: a claim about code503 would hold of requests no server answered; to claim that none was answered, write f.codes["-1"] == f.requests (or f.ok == 0)`,
		`c["503"] (f.codes["503"]) has no value: no request of load f got an HTTP response (all 3 failed at the socket, code -1: refused, reset, or timed out before an answer), so it counts none by code: a claim about codes["503"] would hold of requests no server answered; to claim that none was answered, write f.codes["-1"] == f.requests (or f.ok == 0)`,
		`pp.pods[1].code503 has no value: ` + fmt.Sprintf(pod, "code503"),
		`.code503 (pp.pods[1].code503) has no value: ` + fmt.Sprintf(pod, "code503"),
		`get(pp.pods[1].codes, k) has no value: ` + fmt.Sprintf(pod, `codes["503"]`),
	}
	for i, jd := range interp.Rejudge(rec, sc) {
		if jd.Outcome != interp.Errored || jd.Reason != want[i] {
			t.Errorf("%s: %s\n got: %s\nwant: %s", jd.Src, jd.Outcome, jd.Reason, want[i])
		}
	}
}
