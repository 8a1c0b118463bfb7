package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"labrun.dev/labrun/driver/fortio"
)

// editArtifact rewrites the text of the artifact file (one JSON line: step, name, text) in
// folder dir with edit.
func editArtifact(t *testing.T, dir, file string, edit func(text string) string) {
	t.Helper()
	var entry map[string]any
	if err := json.Unmarshal([]byte(readFileString(t, filepath.Join(dir, file))), &entry); err != nil {
		t.Fatal(err)
	}
	entry["text"] = edit(entry["text"].(string))
	b, _ := json.Marshal(entry)
	writeIn(t, filepath.Join(dir, file), string(b)+"\n")
}

// oneFailedToOK edits fortio's JSON result text: one call of code from moved to code to (a
// success), its histogram of failed calls one call lighter (its last call taken out of its
// last bucket that holds one), so that fortio's sums still hold.
func oneFailedToOK(t *testing.T, text, from, to string) string {
	t.Helper()
	var fj map[string]any
	if err := json.Unmarshal([]byte(text), &fj); err != nil {
		t.Fatal(err)
	}
	codes := fj["RetCodes"].(map[string]any)
	codes[from] = codes[from].(float64) - 1
	if codes[from].(float64) == 0 {
		delete(codes, from)
	}
	n, _ := codes[to].(float64)
	codes[to] = n + 1
	h := fj["ErrorsDurationHistogram"].(map[string]any)
	count := h["Count"].(float64) - 1
	data := h["Data"].([]any)
	for i := len(data) - 1; i >= 0; i-- {
		if b := data[i].(map[string]any); b["Count"].(float64) > 0 {
			b["Count"] = b["Count"].(float64) - 1
			if b["Count"].(float64) == 0 {
				data = append(data[:i], data[i+1:]...)
			}
			break
		}
	}
	var in float64
	for _, b := range data {
		in += b.(map[string]any)["Count"].(float64)
		b.(map[string]any)["Percent"] = 100 * in / count
	}
	h["Count"], h["Data"] = count, data
	b, _ := json.Marshal(fj)
	return string(b)
}

// loadAsFortioGives sets the record's result of load step name to what fortio's JSON result
// text gives, converted as a load converts it (its codes, ok, errors, latencies).
func loadAsFortioGives(t *testing.T, rec map[string]any, name, text string) {
	t.Helper()
	res, err := fortio.DecodeJSON([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res.LoadResult)
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	l := rec["results"].(map[string]any)[name].(map[string]any)["value"].(map[string]any)
	for k, v := range got {
		l[k] = v
	}
	if _, ok := got["errorLatency"]; !ok {
		delete(l, "errorLatency")
	}
}

// TestLoadHeldToTheBackendsCodesExactly: a load of 4 requests all answered 503 by a local
// backend, between two snapshots of it, ONE of its 503s edited to a 200 in the record,
// fortio.json and codes-over-time.json together, the seal computed again, replayed and merged
// PASSED (exit 0): the rule that holds a load to its backend's counts allowed one code per
// connection the backend had not counted yet, which a backend that counted a code when its
// handler returned needed. A backend counts the code before the answer leaves it (762acb15),
// and a record of version 9 is held to the count exactly: the snapshot after counts no rq_200.
func TestLoadHeldToTheBackendsCodesExactly(t *testing.T) {
	dir, rec := recordedRun(t, `package lab

import "labrun.dev/schema"

ld: schema.#Scenario & {
	local: backends: a: {}
	steps: [
		{name: "before", snapshot: backend: "a"},
		{name: "fortio", load: {url: "${backends.a.url}/echo?status=503", requests: 4, connections: 1}},
		{name: "after", snapshot: backend: "a"},
	]
	expect: ["fortio.code503 < 4"]
}
`, 1)
	recs, _ := filepath.Glob(filepath.Join(dir, "r", "*[0-9a-f].json"))
	edited := filepath.Join(dir, "m", "edited")
	if err := os.CopyFS(edited, os.DirFS(strings.TrimSuffix(recs[0], ".json"))); err != nil {
		t.Fatal(err)
	}
	var fj string
	editArtifact(t, edited, "fortio.json.jsonl", func(text string) string {
		fj = oneFailedToOK(t, text, "503", "200")
		return fj
	})
	editArtifact(t, edited, "codes-over-time.json.jsonl", func(text string) string {
		return strings.ReplaceAll(text, `{"503":4}`, `{"200":1,"503":3}`)
	})
	loadAsFortioGives(t, rec, "fortio", fj)
	passedAs(rec, map[string]any{"fortio.code503": 3})
	writeJSON(t, filepath.Join(dir, "m", "edited.json"), rec)
	if err := resealRecord(filepath.Join(dir, "m", "edited.json")); err != nil {
		t.Fatal(err)
	}
	want := []string{"step fortio: its load sent every request to backend a (127.0.0.1:", ") and counts 1 answered 200, but step after's snapshot of it, taken after the load, counts 0 rq_200 since step before's read, which ended before the load started: the backend counts each code it answers before the answer leaves it (records of version 9 on), at least as many as the load got"}
	refused(t, dir, want, "replay", "m/edited.json")
	refused(t, dir, want, "merge", "-q", "--report-dir", "out", "m")
}

// editedSealed copies the folder of the run in dir/r to dir/m/edited, edits its artifacts
// (file → edit), writes rec as dir/m/edited.json and computes its seal again: an edit the seal
// does not tell from the run's.
func editedSealed(t *testing.T, dir string, rec map[string]any, edits map[string]func(string) string) {
	t.Helper()
	recs, _ := filepath.Glob(filepath.Join(dir, "r", "*[0-9a-f].json"))
	edited := filepath.Join(dir, "m", "edited")
	if err := os.CopyFS(edited, os.DirFS(strings.TrimSuffix(recs[0], ".json"))); err != nil {
		t.Fatal(err)
	}
	for file, edit := range edits {
		editArtifact(t, edited, file, edit)
	}
	writeJSON(t, filepath.Join(dir, "m", "edited.json"), rec)
	if err := resealRecord(filepath.Join(dir, "m", "edited.json")); err != nil {
		t.Fatal(err)
	}
}

// editJSON decodes text, edits it and encodes it again.
func editJSON(t *testing.T, edit func(m map[string]any)) func(string) string {
	return func(text string) string {
		var m map[string]any
		if err := json.Unmarshal([]byte(text), &m); err != nil {
			t.Fatal(err)
		}
		edit(m)
		b, _ := json.Marshal(m)
		return string(b)
	}
}

// TestLoadDurationShorterThanFortioRuns: a load of 50 qps for 1 s (about 50 requests) whose
// duration was edited to 0.5 s and its qps to 100, in the record and fortio.json together (the
// seal computed again), replayed and merged PASSED approx(fortio.qps, 100, 0.1): qps is
// requests over duration, and fortio's start and end still lay within the step's. fortio
// plans the last calls of a load of a duration at its duration (or its requests over its
// qps), so it lasts at least that long.
func TestLoadDurationShorterThanFortioRuns(t *testing.T) {
	dir, rec := recordedRun(t, `package lab

import "labrun.dev/schema"

q: schema.#Scenario & {
	local: backends: a: {}
	steps: [{name: "fortio", load: {url: "${backends.a.url}/echo", qps: 50, duration: "1s", connections: 2}}]
	expect: ["approx(fortio.qps, 100, 0.1)"]
}
`, 1)
	l := rec["results"].(map[string]any)["fortio"].(map[string]any)["value"].(map[string]any)
	l["qps"], l["duration"] = l["requests"].(float64)/0.5, 0.5
	passedAs(rec, map[string]any{"fortio.qps": l["qps"]})
	editedSealed(t, dir, rec, map[string]func(string) string{
		"fortio.json.jsonl": editJSON(t, func(m map[string]any) {
			m["ActualQPS"], m["ActualDuration"] = l["qps"], 500_000_000
		}),
	})
	// On a loaded machine the load may make fewer than its 50 requests, and the refusal then
	// names their time at 50 1/s rather than the duration: either says the edit.
	want := []string{"step fortio: its load records a duration of 0.5 s, but at 50 1/s, fortio plans ", ": the load's duration was changed after the run"}
	refused(t, dir, want, "replay", "m/edited.json")
	refused(t, dir, want, "merge", "-q", "--report-dir", "out", "m")
}

// TestSummaryDiffJudgesItsRecords: a summary of 2 runs that failed (their loads counted four
// 503s, the claim none), edited with its runs' records into 2 passed (outcomes, verdicts and
// values only, the records' seals computed again), showed under labrun diff as "2 of 2 runs
// passed" and "verdict changed: failed → passed", exit 1: the summary was held to what its
// records record, not to what they are, where replay and merge judge each again and refuse it.
func TestSummaryDiffJudgesItsRecords(t *testing.T) {
	dir, _ := recordedRun(t, `package lab

import "labrun.dev/schema"

cnt: schema.#Scenario & {
	local: backends: a: {}
	steps: [{name: "fortio", load: {url: "${backends.a.url}/echo?status=503", requests: 4, connections: 1}}]
	expect: ["fortio.code503 == 0"]
}
`, 1, "--count", "2")
	sums, _ := filepath.Glob(filepath.Join(dir, "r", "*.summary.json"))
	if len(sums) != 1 {
		t.Fatalf("summaries %v, want one", sums)
	}
	if err := os.CopyFS(filepath.Join(dir, "e"), os.DirFS(filepath.Join(dir, "r"))); err != nil {
		t.Fatal(err)
	}
	recs, _ := filepath.Glob(filepath.Join(dir, "e", "*[0-9a-f].json"))
	for _, p := range recs {
		rec := readJSON(t, p)
		passedAs(rec, map[string]any{"fortio.code503": 0})
		writeJSON(t, p, rec)
		if err := resealRecord(p); err != nil {
			t.Fatal(err)
		}
	}
	edited := filepath.Join(dir, "e", filepath.Base(sums[0]))
	s := readJSON(t, edited)
	s["passed"], s["verdict"] = 2, "passed"
	for _, r := range s["runs"].([]any) {
		m := r.(map[string]any)
		m["outcome"], m["expectations"], m["values"] = "passed", map[string]any{"fortio.code503 == 0": "passed"}, map[string]any{"fortio.code503": 0}
	}
	writeJSON(t, edited, s)
	refused(t, dir, []string{"a record of its runs does not hold: ", ": run cnt#1: the record says passed; its data says failed (\"fortio.code503 == 0\" failed: fortio.code503 (4) == 0)"},
		"diff", filepath.Join("r", filepath.Base(sums[0])), filepath.Join("e", filepath.Base(sums[0])))
}

// TestLoadSocketsHeldToTheBackendsConnections: a load of 4 requests on 1 connection kept
// alive, to one local backend between two snapshots of it, whose sockets were edited to 4
// in the record and fortio.json (SocketCount, Sockets, ips), the seal computed again,
// replayed and merged PASSED fortio.sockets == 4: the snapshots counted 1 connection
// (cx_total) between them, and the backend counts each it accepts.
func TestLoadSocketsHeldToTheBackendsConnections(t *testing.T) {
	dir, rec := recordedRun(t, `package lab

import "labrun.dev/schema"

sock: schema.#Scenario & {
	local: backends: a: {}
	steps: [
		{name: "before", snapshot: backend: "a"},
		{name: "fortio", load: {url: "${backends.a.url}/echo", requests: 4, connections: 1}},
		{name: "after", snapshot: backend: "a"},
	]
	expect: ["fortio.sockets == 4"]
}
`, 1)
	l := rec["results"].(map[string]any)["fortio"].(map[string]any)["value"].(map[string]any)
	l["sockets"] = 4
	for k := range l["ips"].(map[string]any) {
		l["ips"].(map[string]any)[k] = 4
	}
	passedAs(rec, map[string]any{"fortio.sockets": 4})
	editedSealed(t, dir, rec, map[string]func(string) string{
		"fortio.json.jsonl": editJSON(t, func(m map[string]any) {
			m["SocketCount"], m["Sockets"] = 4, []any{4}
			for k := range m["IPCountMap"].(map[string]any) {
				m["IPCountMap"].(map[string]any)[k] = 4
			}
		}),
	})
	want := []string{"step fortio: its load sent every request to backend a and opened 4 connections (sockets), but step after's snapshot of it, taken after the load, counts 1 cx_total since step before's read, which ended before the load started: the backend counts each connection it accepts"}
	refused(t, dir, want, "replay", "m/edited.json")
	refused(t, dir, want, "merge", "-q", "--report-dir", "out", "m")
}

// TestLoadCodesOverTimeAddUp: a load's codes-over-time.json (the report's chart of its codes)
// edited to show 503s its result never counted, the seal computed again, replayed PASSED, its
// report drawing them: nothing held the chart's counts to the load's. fortio's in-process
// runner reports each request it counts, once, with its code.
func TestLoadCodesOverTimeAddUp(t *testing.T) {
	dir, rec := recordedRun(t, `package lab

import "labrun.dev/schema"

ok: schema.#Scenario & {
	local: backends: a: {}
	steps: [{name: "fortio", load: {url: "${backends.a.url}/echo", requests: 4, connections: 1}}]
	expect: ["fortio.code200 == fortio.requests"]
}
`, 0)
	editedSealed(t, dir, rec, map[string]func(string) string{
		"codes-over-time.json.jsonl": func(string) string { return `[{"atNs":0,"codes":{"200":2,"503":2}}]` },
	})
	want := []string{"its artifact codes-over-time.json (in codes-over-time.json.jsonl) counts 2 responses of code 200 over time, but the record's result has 4"}
	refused(t, dir, want, "replay", "m/edited.json")
	refused(t, dir, want, "merge", "-q", "--report-dir", "out", "m")
}

// TestLoadWarmupHeldToTheBackendsRequests: a load of 50 qps for 1 s on 2 connections to one
// local backend, whose snapshot after it was edited from 52 requests (rq_total, rq_200,
// rq_2xx and their dotted names) to 50, the seal computed again, replayed and merged PASSED
// delta.rq_total == fortio.requests, the claim the warmup-uncounted lint says fails on a
// correct run: fortio first sends a warm-up request per connection, which the backend counts.
func TestLoadWarmupHeldToTheBackendsRequests(t *testing.T) {
	dir, rec := recordedRun(t, `package lab

import "labrun.dev/schema"

warm: schema.#Scenario & {
	local: backends: a: {}
	steps: [
		{name: "before", snapshot: backend: "a"},
		{name: "fortio", load: {url: "${backends.a.url}/echo", qps: 50, duration: "1s", connections: 2}},
		{name: "after", snapshot: backend: "a"},
	]
	expect: ["delta.rq_total == fortio.requests"]
}
`, 1)
	l := rec["results"].(map[string]any)["fortio"].(map[string]any)["value"].(map[string]any)
	c := rec["results"].(map[string]any)["after"].(map[string]any)["value"].(map[string]any)["counters"].(map[string]any)
	conns := l["connections"].(float64)
	for _, k := range []string{"rq_total", "rq_200", "rq_2xx", "http.downstream_rq_total", "http.downstream_rq_2xx"} {
		c[k] = c[k].(float64) - conns
	}
	passedAs(rec, map[string]any{"delta.rq_total": l["requests"], "fortio.requests": l["requests"]})
	editedSealed(t, dir, rec, nil)
	want := []string{"step fortio: its load of a duration sent every request to backend a, ", " of them and a warm-up request on each of its 2 connections, which fortio sends first and does not count, but step after's snapshot of it, taken after the load, counts "}
	refused(t, dir, want, "replay", "m/edited.json")
	refused(t, dir, want, "merge", "-q", "--report-dir", "out", "m")
}

// TestLoadAddressIsItsBackends: a load of 4 requests from ${backends.a.url} all answered
// 503, edited to 200s in the record, fortio.json and codes-over-time.json, its ips (and
// fortio.json's IPCountMap) moved to 127.0.0.1:1, the seal computed again, replayed and
// merged PASSED: the rule that holds a load to its backend's counts found the backend by the
// load's ips, and nothing held the ips to the URL.
func TestLoadAddressIsItsBackends(t *testing.T) {
	dir, rec := recordedRun(t, `package lab

import "labrun.dev/schema"

ip: schema.#Scenario & {
	local: backends: a: {}
	steps: [
		{name: "before", snapshot: backend: "a"},
		{name: "fortio", load: {url: "${backends.a.url}/echo?status=503", requests: 4, connections: 1}},
		{name: "after", snapshot: backend: "a"},
	]
	expect: ["fortio.code503 == 0"]
}
`, 1)
	l := rec["results"].(map[string]any)["fortio"].(map[string]any)["value"].(map[string]any)
	l["ips"] = map[string]any{"127.0.0.1:1": 4}
	passedAs(rec, map[string]any{"fortio.code503": 0})
	editedSealed(t, dir, rec, fourAnsweredAs200(t, rec, func(m map[string]any) {
		m["IPCountMap"] = map[string]any{"127.0.0.1:1": 4}
	}))
	want := []string{"step fortio: its load's URL is backend a's (${backends.a.url}/echo?status=503), but its ips name 127.0.0.1:1, not the backend's address 127.0.0.1:"}
	refused(t, dir, want, "replay", "m/edited.json")
	refused(t, dir, want, "merge", "-q", "--report-dir", "out", "m")
}

// TestLoadLatencyHeldToItsBackendsDelay: a load through ?delay=20ms whose latencies were
// edited to 2 to 2.5 ms in fortio.json (its one bucket, percentiles, min, max, sum and
// average together) and the record, the seal computed again, replayed and merged PASSED
// fortio.max < 10: the backend waits the delay before it answers each request.
func TestLoadLatencyHeldToItsBackendsDelay(t *testing.T) {
	dir, rec := recordedRun(t, `package lab

import "labrun.dev/schema"

lat: schema.#Scenario & {
	local: backends: a: {}
	steps: [{name: "fortio", load: {url: "${backends.a.url}/echo?delay=20ms", requests: 4, connections: 1}}]
	expect: ["fortio.max < 10"]
}
`, 1)
	var fj string
	edit := editJSON(t, func(m map[string]any) {
		const s, e = 0.002, 0.0025
		h := m["DurationHistogram"].(map[string]any)
		h["Data"] = []any{map[string]any{"Start": s, "End": e, "Percent": 100, "Count": 4}}
		h["Min"], h["Max"], h["Sum"], h["Avg"] = s, e, 0.009, 0.00225
		for _, p := range h["Percentiles"].([]any) {
			p := p.(map[string]any)
			p["Value"] = s + (e-s)*p["Percentile"].(float64)/100
		}
	})
	editedSealed(t, dir, rec, map[string]func(string) string{
		"fortio.json.jsonl": func(text string) string { fj = edit(text); return fj },
	})
	loadAsFortioGives(t, rec, "fortio", fj)
	passedAs(rec, map[string]any{"fortio.max": 2.5})
	writeJSON(t, filepath.Join(dir, "m", "edited.json"), rec)
	if err := resealRecord(filepath.Join(dir, "m", "edited.json")); err != nil {
		t.Fatal(err)
	}
	want := []string{"step fortio: its load's URL holds every request backend a answers for 20 ms (?delay=20ms), but its shortest latency (min) is 2 ms: the backend waits that long before it answers"}
	refused(t, dir, want, "replay", "m/edited.json")
	refused(t, dir, want, "merge", "-q", "--report-dir", "out", "m")
}

// TestLoadCodesHeldToItsBackendsStatus: a load through ?status=503 whose four 503s were
// edited to 200s in the record, fortio.json, codes-over-time.json and the backend's snapshot
// after it (rq_503 and rq_5xx moved to rq_200 and rq_2xx, with their dotted names), the seal
// computed again, replayed and merged PASSED fortio.code503 == 0: every count agreed, and
// nothing held them to the code the backend answers every request with.
func TestLoadCodesHeldToItsBackendsStatus(t *testing.T) {
	dir, rec := recordedRun(t, `package lab

import "labrun.dev/schema"

st: schema.#Scenario & {
	local: backends: a: {}
	steps: [
		{name: "before", snapshot: backend: "a"},
		{name: "fortio", load: {url: "${backends.a.url}/echo?status=503", requests: 4, connections: 1}},
		{name: "after", snapshot: backend: "a"},
	]
	expect: ["fortio.code503 == 0"]
}
`, 1)
	edits := fourAnsweredAs200(t, rec, nil)
	c := rec["results"].(map[string]any)["after"].(map[string]any)["value"].(map[string]any)["counters"].(map[string]any)
	c["rq_200"], c["rq_2xx"], c["http.downstream_rq_2xx"] = c["rq_503"], c["rq_5xx"], c["http.downstream_rq_5xx"]
	delete(c, "rq_503")
	c["rq_5xx"], c["http.downstream_rq_5xx"] = 0, 0
	passedAs(rec, map[string]any{"fortio.code503": 0})
	editedSealed(t, dir, rec, edits)
	want := []string{"step fortio: its load's URL has backend a answer every request 503 (?status=503), but the load counts 4 answered 200"}
	refused(t, dir, want, "replay", "m/edited.json")
	refused(t, dir, want, "merge", "-q", "--report-dir", "out", "m")
}

// fourAnsweredAs200 edits the four 503s of load fortio into 200s in rec (its failed requests'
// latencies gone with them) and returns the edits of its fortio.json (more edits it further)
// and codes-over-time.json that agree, for editedSealed.
func fourAnsweredAs200(t *testing.T, rec map[string]any, more func(m map[string]any)) map[string]func(string) string {
	l := rec["results"].(map[string]any)["fortio"].(map[string]any)["value"].(map[string]any)
	l["codes"], l["ok"], l["errors"] = map[string]any{"200": 4}, 4, 0
	delete(l, "errorLatency")
	return map[string]func(string) string{
		"fortio.json.jsonl": editJSON(t, func(m map[string]any) {
			m["RetCodes"] = map[string]any{"200": 4}
			h := m["ErrorsDurationHistogram"].(map[string]any)
			h["Count"], h["Data"], h["Min"], h["Max"], h["Sum"], h["Avg"], h["StdDev"] = 0, []any{}, 0, 0, 0, 0, 0
			if more != nil {
				more(m)
			}
		}),
		"codes-over-time.json.jsonl": func(text string) string { return strings.ReplaceAll(text, `"503"`, `"200"`) },
	}
}
