package interp_test

import (
	"encoding/json"
	"strings"
	"testing"

	"labrun.dev/labrun/interp"
)

// TestFieldTheRecordLacks: a record read back without a field its kind always records (one
// written before labrun recorded it, or edited out) has no value there: replayed against an
// expectation that reads it, the field read 0 and f.sockets <= f.connections passed of a
// count nobody recorded. It errs now, naming the field; the fields the record holds read as
// recorded, and a field left out because it is empty (omitempty: a load's pods) reads as
// before.
func TestFieldTheRecordLacks(t *testing.T) {
	sc := loadScenario(t, `s: schema.#Scenario & {
	steps: [
		{name: "f", load: {url: "http://127.0.0.1:1/", requests: 4, connections: 2}},
		{name: "x", exec: argv: ["true"]},
	]
	expect: [
		"f.sockets <= f.connections",
		"let r = f; r.sockets <= 2",
		"x.exit == 0",
		"f.ok == 4 && f.code200 == 4",
		"len(f.ips) == 0 || f.ips['127.0.0.1:1'] > 0",
	]
}`)
	const record = `{"results": {
		"f": {"kind": "load", "value": {"requests": 4, "codes": {"200": 4}, "ok": 4, "errors": 0, "connections": 2,
			"qps": 100, "duration": 0.04, "avg": 1, "min": 1, "max": 1, "p50": 1, "p90": 1, "p99": 1, "p999": 1, "ips": {"127.0.0.1:1": 2},
			"start": "2026-12-06T10:00:00Z", "end": "2026-12-06T10:00:01Z"}},
		"x": {"kind": "exec", "value": {"stdout": "", "stderr": ""}}
	}}`
	var rec interp.Record
	if err := json.Unmarshal([]byte(record), &rec); err != nil {
		t.Fatal(err)
	}
	want := []interp.Outcome{interp.Errored, interp.Errored, interp.Errored, interp.Passed, interp.Passed}
	reason := []string{
		`f.sockets has no value: the record holds no sockets for step "f"`,
		`f.sockets has no value: the record holds no sockets for step "f"`,
		`x.exit has no value: the record holds no exit for step "x"`,
	}
	for i, jd := range interp.Rejudge(&rec, sc) {
		if jd.Outcome != want[i] {
			t.Errorf("%s: %s (%s%s), want %s", jd.Src, jd.Outcome, jd.Reason, jd.Explanation, want[i])
			continue
		}
		if i < len(reason) && !strings.Contains(jd.Reason, reason[i]) {
			t.Errorf("%s: reason %q, want %q", jd.Src, jd.Reason, reason[i])
		}
	}
}

// TestFieldAPodRecordLacks: the same below the top level. A load from several pods records
// each pod's result under pods; an element of pods read back without a field every run
// records (sockets edited out of pods[1]) read 0, and all(f.pods, .sockets <= 2) passed of
// a count nobody recorded. A read of pods errs now, naming the element and the field; the
// load's own fields, all recorded, read as before.
func TestFieldAPodRecordLacks(t *testing.T) {
	sc := loadScenario(t, `s: schema.#Scenario & {
	target: "kube"
	namespaces: ["lab"]
	steps: [
		{name: "f", load: {url: "http://backend:8080/", from: {namespace: "lab", selector: "app=client", pods: 2}, requests: 4, connections: 2}},
	]
	expect: [
		"all(f.pods, .sockets <= 2)",
		"f.pods[1].sockets == 1",
		"f.sockets <= f.connections",
	]
}`)
	pod := func(name string, sockets bool) string {
		s := `{"requests": 2, "codes": {"200": 2}, "ok": 2, "errors": 0, "connections": 1,
			"qps": 100, "duration": 0.02, "avg": 1, "min": 1, "max": 1, "p50": 1, "p90": 1, "p99": 1, "p999": 1, "ips": {"10.0.0.1:8080": 1}, "pod": "` + name + `"`
		if sockets {
			s += `, "sockets": 1`
		}
		return s + "}"
	}
	record := `{"results": {
		"f": {"kind": "load", "value": {"requests": 4, "codes": {"200": 4}, "ok": 4, "errors": 0, "sockets": 2, "connections": 2,
			"qps": 100, "duration": 0.04, "avg": 1, "min": 1, "max": 1, "p50": 1, "p90": 1, "p99": 1, "p999": 1, "ips": {"10.0.0.1:8080": 2},
			"pods": [` + pod("client-a", true) + `, ` + pod("client-b", false) + `]}}
	}}`
	var rec interp.Record
	if err := json.Unmarshal([]byte(record), &rec); err != nil {
		t.Fatal(err)
	}
	want := []interp.Outcome{interp.Errored, interp.Errored, interp.Passed}
	const reason = `f.pods has no value: the record's pods[1] holds no sockets for step "f"`
	for i, jd := range interp.Rejudge(&rec, sc) {
		if jd.Outcome != want[i] {
			t.Errorf("%s: %s (%s%s), want %s", jd.Src, jd.Outcome, jd.Reason, jd.Explanation, want[i])
			continue
		}
		if want[i] == interp.Errored && !strings.Contains(jd.Reason, reason) {
			t.Errorf("%s: reason %q, want %q", jd.Src, jd.Reason, reason)
		}
	}
}
