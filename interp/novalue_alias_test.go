package interp_test

import (
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
		// These have values.
		"let c = f.codes; c['-1'] == f.requests",
		"'-1' in f.codes && has(f.codes, '-1')",
		"let c = g.codes; c['503'] == 0 && c['200'] == 4 && !('503' in c)",
		"pp.pods[0].code503 == 0 && pp.pods[0].code200 == 2",
		"pp.code200 == 2 && pp.codes['-1'] == 2",
	]
}`)
	unanswered := map[string]float64{"-1": 2}
	rec := &interp.Record{}
	rec.Put("f", "load", false, &interp.LoadRecord{LoadResult: schema.LoadResult{Requests: 3, Errors: 3, Codes: map[string]float64{"-1": 3}}})
	rec.Put("g", "load", false, &interp.LoadRecord{LoadResult: schema.LoadResult{Requests: 4, OK: 4, Codes: map[string]float64{"200": 4}}})
	rec.Put("pp", "load", false, &interp.LoadRecord{LoadResult: schema.LoadResult{Requests: 4, OK: 2, Errors: 2, Codes: map[string]float64{"200": 2, "-1": 2},
		Pods: []schema.LoadResult{
			{Pod: "client-a", Requests: 2, OK: 2, Codes: map[string]float64{"200": 2}},
			{Pod: "client-b", Requests: 2, Errors: 2, Codes: unanswered},
		}}})
	rec.Put("stopped", "load", false, &interp.LoadRecord{LoadResult: schema.LoadResult{Requests: 30, OK: 30, Codes: map[string]float64{"200": 30}}, Partial: "interrupted"})
	rec.Put("log", "logs", false, schema.LogResult{Count: 1, Lines: []string{"GET /x 503"}, Entries: []schema.LogEntry{{Line: "GET /x 503"}},
		Codes: map[string]float64{}, Flags: map[string]float64{}, Details: map[string]float64{}})
	got := interp.Rejudge(rec, sc)
	const answered = 18 // the expectations before this one have no value
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
