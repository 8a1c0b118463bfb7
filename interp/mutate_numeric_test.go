package interp_test

import (
	"fmt"
	"maps"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/schema"
)

// numeric matches the names of the numeric mutants.
var numeric = regexp.MustCompile(`( ×0\.5| ×2| [+-] 1| halved| doubled)( |$)`)

// TestNumericMutants: every number an expectation reads is scaled (×0.5, ×2) and, when it is a
// count, shifted (±1); a bound as wide as "> 0" lets the scaled and shifted deltas survive,
// a relation to the load kills them, but not the load's own (see "a relation").
func TestNumericMutants(t *testing.T) {
	rec := func() *interp.Record {
		r := judgeRecord(
			interp.SnapshotRecord{Counters: schema.Stats{"upstream_rq_pending_overflow": 3}},
			interp.SnapshotRecord{Counters: schema.Stats{"upstream_rq_pending_overflow": 18}},
		)
		r.Loads()["fortio"].Avg = 200.5
		r.Loads()["fortio"].Recount() // fortio's sums of its codes
		r.Put("loop", "exec", false, schema.ExecResult{Captured: map[string]string{"total": "149", "time": "40.05"}})
		r.Put("log", "logs", false, schema.LogResult{Count: 15, Codes: map[string]float64{"503": 15}, Flags: map[string]float64{"UO": 15}})
		r.Outcome = interp.Passed // mutation needs a run that passed
		return r
	}
	const steps = `steps: [
		{name: "before", snapshot: {admin: "http://127.0.0.1:15000", cluster: "c"}},
		{name: "fortio", load: {url: "http://127.0.0.1:1", requests: 30}},
		{name: "loop", exec: {argv: ["true"], capture: "(?P<total>\\d+) (?P<time>[0-9.]+)"}},
		{name: "log", logs: {file: "/dev/null"}},
		{name: "after", snapshot: {admin: "http://127.0.0.1:15000", cluster: "c"}},
	]`
	for _, c := range []struct {
		name, expect string
		survive      []string // every other numeric mutant is killed
	}{{
		name:   "a bound",
		expect: `"delta.upstream_rq_pending_overflow > 0"`,
		survive: []string{
			"delta.upstream_rq_pending_overflow doubled (before → after)",
			"delta.upstream_rq_pending_overflow + 1 (before → after)",
			"delta.upstream_rq_pending_overflow halved (before → after)",
			"delta.upstream_rq_pending_overflow - 1 (before → after)",
		},
	}, {
		name:   "a relation",
		expect: `"delta.upstream_rq_pending_overflow == fortio.code503", "fortio.code503 == log.codes[\"503\"]", "log.flags[\"UO\"] == log.count"`,
		// fortio's 503s are compared only with two other records of them (Envoy's overflows,
		// the log's 503 lines), each read by no other expectation: a run where all three read
		// the mutant's count passes, so its mutants survive (they were "killed" by the
		// contradiction alone). A delta or a log count changed is held to fortio's count, which
		// the other relation reads too: killed.
		survive: []string{"fortio.code503 ×0.5", "fortio.code503 ×2", "fortio.code503 + 1", "fortio.code503 - 1"},
	}, {
		// fortio's own sums hold of every load it records: the expectation proves nothing,
		// and every mutant of what it reads — each a load fortio could record — survives it.
		name:   "fortio's own sums",
		expect: `"fortio.ok + fortio.errors == fortio.requests", "fortio.code200 + fortio.code503 == fortio.requests", "fortio.min <= fortio.p99"`,
		survive: []string{
			"fortio.ok ×0.5", "fortio.ok ×2", "fortio.ok + 1", "fortio.ok - 1",
			"fortio.errors ×0.5", "fortio.errors ×2", "fortio.errors + 1", "fortio.errors - 1",
			"fortio.code200 ×0.5", "fortio.code200 ×2", "fortio.code200 + 1", "fortio.code200 - 1",
			"fortio.code503 ×0.5", "fortio.code503 ×2", "fortio.code503 + 1", "fortio.code503 - 1",
			"fortio.min ×0.5", "fortio.min ×2", "fortio.p99 ×0.5", "fortio.p99 ×2",
		},
	}, {
		// A log's own sums: every access line is counted under a code and is a line.
		name:   "a log's own sums",
		expect: `"log.codes[\"503\"] <= log.count", "log.flags[\"UO\"] <= log.count"`,
		survive: []string{
			`log.codes["503"] ×0.5`, `log.codes["503"] ×2`, `log.codes["503"] + 1`, `log.codes["503"] - 1`,
			`log.flags["UO"] ×0.5`, `log.flags["UO"] ×2`, `log.flags["UO"] + 1`, `log.flags["UO"] - 1`,
			"log.count ×0.5", "log.count ×2", "log.count + 1", "log.count - 1",
		},
	}, {
		name:   "latency and captures",
		expect: `"approx(fortio.avg, 200, 0.1)", "int(loop.captured.total) == 149", "approx(float(loop.captured.time), 40, 0.1)"`,
	}} {
		t.Run(c.name, func(t *testing.T) {
			sc := loadScenario(t, "s: schema.#Scenario & {\n"+steps+"\nexpect: ["+c.expect+"]\n}")
			rep, err := interp.Mutate(rec(), sc)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]bool{}
			for _, n := range c.survive {
				want[n] = true
			}
			names := map[string]bool{}
			for _, m := range rep.Mutants {
				names[m.Name] = true
				if !numeric.MatchString(m.Name) || strings.Contains(m.Name, ": latencies") {
					continue
				}
				if !m.Killed != want[m.Name] {
					t.Errorf("%s: killed %v, want %v", m.Name, m.Killed, !want[m.Name])
				}
			}
			for n := range want {
				if !names[n] {
					t.Errorf("no mutant %q among %v", n, names)
				}
			}
		})
	}
	// The numeric mutants of what the relations read are there.
	sc := loadScenario(t, "s: schema.#Scenario & {\n"+steps+"\nexpect: [\"fortio.code503 == log.codes[\\\"503\\\"]\", \"int(loop.captured.total) > 0\", \"fortio.avg > 0\"]\n}")
	rep, err := interp.Mutate(rec(), sc)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, m := range rep.Mutants {
		got[m.Name] = true
	}
	for _, n := range []string{
		"fortio.code503 ×0.5", "fortio.code503 ×2", "fortio.code503 + 1", "fortio.code503 - 1",
		`log.codes["503"] ×0.5`, `log.codes["503"] - 1`,
		"loop.captured.total ×0.5", "loop.captured.total + 1",
		"fortio.avg ×0.5", "fortio.avg ×2",
	} {
		if !got[n] {
			t.Errorf("no mutant %q", n)
		}
	}
	if got["fortio.avg + 1"] {
		t.Errorf("a latency is not a count: it is scaled, not shifted")
	}
}

// TestLoadMutantsFortioCouldRecord: every mutant of a load is a result fortio could record —
// each request counted under one code, ok the 2xx and 418, errors the rest, latencies in
// order — so an expectation that restates those sums kills none of them.
func TestLoadMutantsFortioCouldRecord(t *testing.T) {
	sc := loadScenario(t, `s: schema.#Scenario & {
		steps: [{name: "fortio", load: {url: "http://127.0.0.1:1", qps: 10, duration: "4s"}}]
		expect: ["fortio.requests == 40", "fortio.code503 == 10", "fortio.code_1 == 2", "fortio.ok == 28", "fortio.errors == 12",
			"fortio.avg < 30", "fortio.min > 0", "fortio.p50 > 0", "fortio.p90 > 0", "fortio.p99 > 0", "fortio.p999 > 0", "fortio.max > 0"]
	}`)
	rec := &interp.Record{Outcome: interp.Passed}
	rec.Put("fortio", "load", false, &interp.LoadRecord{LoadResult: schema.LoadResult{
		Requests: 40, OK: 28, Errors: 12, Codes: map[string]float64{"200": 20, "418": 8, "503": 10, "-1": 2},
		Min: 1, P50: 4, P90: 9, P99: 20, P999: 25, Max: 26, Avg: 6,
	}})
	ms := interp.Mutants(rec, sc)
	// mutated is the recorded load as mutant m makes it (on a copy).
	mutated := func(m interp.Mutant) *interp.LoadRecord {
		r := &interp.Record{}
		l := *rec.Loads()["fortio"]
		l.Codes = maps.Clone(l.Codes)
		r.Put("fortio", "load", false, &l)
		m.Apply(r)
		return r.Loads()["fortio"]
	}
	seen := 0
	for _, m := range ms {
		if !strings.HasPrefix(m.Name, "fortio") {
			continue
		}
		got := mutated(m)
		var sum, ok float64
		for k, v := range got.Codes {
			if v < 0 || v != math.Trunc(v) {
				t.Errorf("%s: codes[%s] = %v, not a count", m.Name, k, v)
			}
			sum += v
			if schema.IsOK(k) {
				ok += v
			}
		}
		if sum != got.Requests || ok != got.OK || got.Requests-got.OK != got.Errors {
			t.Errorf("%s: requests %v, ok %v, errors %v of codes %v: not fortio's sums", m.Name, got.Requests, got.OK, got.Errors, got.Codes)
		}
		if !(got.Min <= got.P50 && got.P50 <= got.P90 && got.P90 <= got.P99 && got.P99 <= got.P999 && got.P999 <= got.Max && got.Min <= got.Avg && got.Avg <= got.Max) {
			t.Errorf("%s: latencies out of order: %+v", m.Name, got.LoadResult)
		}
		seen++
	}
	if seen < 39 { // 5 counts × 4, 7 latencies × 2, 5 of the kind
		t.Errorf("%d load mutants, want one per field and change read", seen)
	}
	// The changes are the ones named: 10 503s halved are 5, the other 5 answered as the most
	// common success.
	for _, c := range []struct {
		name  string
		codes map[string]float64
	}{
		{"fortio.code503 ×0.5", map[string]float64{"200": 25, "418": 8, "503": 5, "-1": 2}},
		{"fortio.code503 ×2", map[string]float64{"200": 10, "418": 8, "503": 20, "-1": 2}},
		{"fortio.code503 + 1", map[string]float64{"200": 19, "418": 8, "503": 11, "-1": 2}},
		{"fortio.ok - 1", map[string]float64{"200": 19, "418": 8, "503": 11, "-1": 2}},
		{"fortio.errors - 1", map[string]float64{"200": 21, "418": 8, "503": 9, "-1": 2}},
		{"fortio.requests ×2", map[string]float64{"200": 40, "418": 16, "503": 20, "-1": 4}},
		{"fortio.requests + 1", map[string]float64{"200": 21, "418": 8, "503": 10, "-1": 2}},
	} {
		found := false
		for _, m := range ms {
			if m.Name != c.name {
				continue
			}
			found = true
			if got := mutated(m).Codes; !maps.Equal(got, c.codes) {
				t.Errorf("%s: codes %v, want %v", c.name, got, c.codes)
			}
		}
		if !found {
			t.Errorf("no mutant %q", c.name)
		}
	}
}

// TestFixedRequestsNotMutated: a load told to make N requests (requests: N) makes N — fortio
// counts each under some code — so its count gets no mutants; a load of a duration does.
func TestFixedRequestsNotMutated(t *testing.T) {
	for _, c := range []struct {
		load string
		want bool
	}{
		{`{url: "http://127.0.0.1:1", requests: 20}`, false},
		{`{url: "http://127.0.0.1:1", qps: 5, duration: "4s"}`, true},
	} {
		sc := loadScenario(t, `s: schema.#Scenario & {
			steps: [{name: "f", load: `+c.load+`}]
			expect: ["f.requests == 20", "f.code200 == 20"]
		}`)
		rec := &interp.Record{Outcome: interp.Passed}
		rec.Put("f", "load", false, &interp.LoadRecord{LoadResult: schema.LoadResult{Requests: 20, OK: 20, Codes: map[string]float64{"200": 20}}})
		got := false
		for _, m := range interp.Mutants(rec, sc) {
			if strings.HasPrefix(m.Name, "f.requests") {
				got = true
			}
		}
		if got != c.want {
			t.Errorf("%s: requests mutants %v, want %v", c.load, got, c.want)
		}
	}
}

// TestLogMutantsALogCouldHave: every numeric mutant of a logs step's result is a result some
// log could give — each access line counted under one code, its flags and its details, count
// the lines, the entries the lines — so an expectation that restates those sums kills none,
// and a key no line has can still be given one (a "no 503" claim is tested).
func TestLogMutantsALogCouldHave(t *testing.T) {
	sc := loadScenario(t, `s: schema.#Scenario & {
		steps: [{name: "log", logs: {file: "/dev/null"}}]
		expect: ["log.count == 7", "log.codes[\"200\"] == 4", "log.codes[\"503\"] == 2", "log.codes[\"404\"] == 0",
			"log.flags[\"UF\"] == 2", "log.flags[\"-\"] == 4", "log.flags[\"UO\"] == 0",
			"log.details[\"via_upstream\"] == 4", "log.details[\"upstream_reset\"] == 2"]
	}`)
	ok := schema.LogEntry{Access: true, Line: "GET 200", Code: 200, Flags: []string{"-"}, Details: "via_upstream"}
	bad := schema.LogEntry{Access: true, Line: "GET 503", Code: 503, Flags: []string{"URX", "UF"}, Details: "upstream_reset"}
	plain := schema.LogEntry{Line: "warming up"}
	entries := []schema.LogEntry{plain, ok, bad, ok, ok, bad, ok}
	lines := make([]string, len(entries))
	for i, e := range entries {
		lines[i] = e.Line
	}
	rec := &interp.Record{Outcome: interp.Passed}
	rec.Put("log", "logs", false, schema.LogResult{Count: 7, Lines: lines, Entries: entries,
		Codes:   map[string]float64{"200": 4, "503": 2},
		Flags:   map[string]float64{"-": 4, "URX": 2, "UF": 2},
		Details: map[string]float64{"via_upstream": 4, "upstream_reset": 2}})
	mutated := func(m interp.Mutant) schema.LogResult {
		r := &interp.Record{}
		l := rec.Results["log"].Value.(schema.LogResult)
		r.Put("log", "logs", false, l)
		m.Apply(r)
		return r.Results["log"].Value.(schema.LogResult)
	}
	got := map[string]schema.LogResult{}
	for _, m := range interp.Mutants(rec, sc) {
		if !strings.HasPrefix(m.Name, "log.") {
			continue
		}
		l := mutated(m)
		got[m.Name] = l
		// The counts are those of the entries, which are the lines.
		codes, flags, details := map[string]float64{}, map[string]float64{}, map[string]float64{}
		for _, e := range l.Entries {
			if !e.Access {
				continue
			}
			codes[fmt.Sprint(int(e.Code))]++
			for _, f := range e.Flags {
				flags[f]++
			}
			if e.Details != "" {
				details[e.Details]++
			}
		}
		if l.Cut {
			t.Errorf("%s: entries cut, want every line kept", m.Name)
		}
		if float64(len(l.Entries)) != l.Count || len(l.Lines) != len(l.Entries) {
			t.Errorf("%s: count %v, %d entries, %d lines", m.Name, l.Count, len(l.Entries), len(l.Lines))
		}
		for what, pair := range map[string][2]map[string]float64{"codes": {codes, l.Codes}, "flags": {flags, l.Flags}, "details": {details, l.Details}} {
			if !maps.Equal(pair[0], pair[1]) {
				t.Errorf("%s: %s %v, the entries' %v", m.Name, what, pair[1], pair[0])
			}
		}
	}
	// Every count and key read has its mutants (a key no line has: + 1 only).
	for _, c := range []struct {
		name  string
		codes map[string]float64
		flags map[string]float64
		count float64
	}{
		// A line answered otherwise keeps its flags and details.
		{`log.codes["503"] + 1`, map[string]float64{"200": 3, "503": 3}, map[string]float64{"-": 4, "URX": 2, "UF": 2}, 7},
		{`log.codes["503"] ×2`, map[string]float64{"200": 2, "503": 4}, map[string]float64{"-": 4, "URX": 2, "UF": 2}, 7},
		{`log.codes["503"] - 1`, map[string]float64{"200": 5, "503": 1}, map[string]float64{"-": 4, "URX": 2, "UF": 2}, 7},
		{`log.codes["404"] + 1`, map[string]float64{"200": 3, "503": 2, "404": 1}, map[string]float64{"-": 4, "URX": 2, "UF": 2}, 7},
		// Every other line answered 200, and two lines more like the 200s.
		{`log.codes["200"] ×2`, map[string]float64{"200": 8, "503": 0}, map[string]float64{"-": 6, "URX": 2, "UF": 2}, 9},
		{`log.flags["UO"] + 1`, map[string]float64{"200": 4, "503": 2}, map[string]float64{"-": 3, "UO": 1, "URX": 2, "UF": 2}, 7},
		{`log.flags["UF"] ×2`, map[string]float64{"200": 4, "503": 2}, map[string]float64{"-": 2, "URX": 2, "UF": 4}, 7},
		{`log.count ×2`, map[string]float64{"200": 8, "503": 4}, map[string]float64{"-": 8, "URX": 4, "UF": 4}, 14},
		{`log.count - 1`, map[string]float64{"200": 3, "503": 2}, map[string]float64{"-": 3, "URX": 2, "UF": 2}, 6},
	} {
		l, ok := got[c.name]
		if !ok {
			t.Errorf("no mutant %q", c.name)
			continue
		}
		for k, v := range c.codes {
			if l.Codes[k] != v {
				t.Errorf("%s: codes %v, want %v", c.name, l.Codes, c.codes)
				break
			}
		}
		if !maps.Equal(l.Flags, c.flags) || l.Count != c.count {
			t.Errorf("%s: flags %v count %v, want %v and %v", c.name, l.Flags, l.Count, c.flags, c.count)
		}
	}
	for _, n := range []string{`log.codes["404"] ×2`, `log.codes["404"] - 1`} {
		if _, ok := got[n]; ok && !reflect.DeepEqual(got[n], rec.Results["log"].Value) {
			t.Errorf("%s changed the log: a count of 0 has no half, double or one less", n)
		}
	}
}

// TestLateStepMutantKeepsTheTimeline: "step a starts 1s late" moves a, what waits for a to
// end (the next step of its sequence) and the end of a block a is the last to end in; a step
// that ran beside a stays, and a block that ends with a sibling that ends later still ends
// then (with what follows it). A step moved alone would end after its successor began: no
// run does that, and an expectation restating the order (started.b >= ended.a) would kill it.
func TestLateStepMutantKeepsTheTimeline(t *testing.T) {
	sc := loadScenario(t, `s: schema.#Scenario & {
		steps: [
			{name: "blk", parallel: [{name: "a", exec: argv: ["true"]}, {name: "side", exec: argv: ["true"]}]},
			{name: "b", exec: argv: ["true"]},
		]
		expect: ["ended.a < 60", "started.b >= ended.a"]
	}`)
	s := func(d float64) time.Duration { return time.Duration(d * float64(time.Second)) }
	for _, c := range []struct {
		name string
		aEnd float64
		want map[string][2]time.Duration
	}{
		// a ends at 2.5 s, after side: the block, and b after it, end 1 s later.
		{"a last", 2.5, map[string][2]time.Duration{"blk": {s(0), s(3.5)}, "a": {s(1), s(3.5)}, "side": {s(0), s(3)}, "b": {s(3.5), s(4.5)}}},
		// a ends at 1 s, late at 2 s, before side's 3 s: the block still ends at 3 s, b stays.
		{"side last", 1, map[string][2]time.Duration{"blk": {s(0), s(3)}, "a": {s(1), s(2)}, "side": {s(0), s(3)}, "b": {s(3), s(4)}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			end := max(s(c.aEnd), s(3))
			rec := &interp.Record{Outcome: interp.Passed, Results: map[string]*interp.Result{}}
			rec.Steps = []*interp.StepRecord{
				{Name: "blk", Path: "steps.0", Kind: "parallel", Start: s(0), End: end, Outcome: interp.Passed},
				{Name: "a", Path: "steps.0.parallel.0", Kind: "exec", Start: s(0), End: s(c.aEnd), Outcome: interp.Passed},
				{Name: "side", Path: "steps.0.parallel.1", Kind: "exec", Start: s(0), End: s(3), Outcome: interp.Passed},
				{Name: "b", Path: "steps.1", Kind: "exec", Start: end, End: end + s(1), Outcome: interp.Passed},
			}
			r := applied(t, rec, sc, "step a starts 1s late")
			wantSpans(t, r, c.want)
		})
	}
}

// TestFullSpeedLoadLatencyMutantStretches: "latencies ×2" of a load of N requests as fast as
// possible (no qps) is the run where every call took twice as long, so the load ran twice as
// long: its duration doubles, its qps halves, its step and what followed it end later. Before,
// the mutant kept the duration, a record that breaks fortio's own sums (avg × requests more
// than its connections can make in that time), and mutate listed it impossible: no
// expectation was asked whether it would see a load twice as slow. "step f starts 1s late"
// moves the load's own start and end with its step (before, a load that ran outside its step:
// impossible too). A load at a fixed qps waits between its calls: its time stays.
func TestFullSpeedLoadLatencyMutantStretches(t *testing.T) {
	sc := loadScenario(t, `s: schema.#Scenario & {
		steps: [
			{name: "f", load: {url: "http://127.0.0.1:1", requests: 24, connections: 4}},
			{name: "q", load: {url: "http://127.0.0.1:1", requests: 10, qps: 5}},
			{name: "b", exec: argv: ["true"]},
		]
		expect: ["f.max < 500", "f.duration < 3", "q.max < 1.5", "q.duration < 3", "started.b >= ended.f"]
	}`)
	s := func(d float64) time.Duration { return time.Duration(d * float64(time.Second)) }
	t0 := time.Date(2026, 12, 6, 3, 0, 0, 0, time.UTC)
	rec := &interp.Record{Outcome: interp.Passed, Start: t0, End: t0.Add(s(4.1))}
	// 24 calls of 300 ms over 4 connections: 1.8 s, as fast as they go.
	rec.Put("f", "load", false, &interp.LoadRecord{Start: t0.Add(s(0.01)), End: t0.Add(s(1.82)), LoadResult: schema.LoadResult{
		Requests: 24, OK: 24, Codes: map[string]float64{"200": 24}, DurationS: 1.8, QPS: 24 / 1.8,
		Min: 300, P50: 300, P90: 300, P99: 300, P999: 300, Max: 300, Avg: 300, Connections: 4, Sockets: 4,
	}})
	// 10 calls of 1 ms at 5 qps: 2 s, waiting between calls.
	rec.Put("q", "load", false, &interp.LoadRecord{Start: t0.Add(s(1.84)), End: t0.Add(s(3.85)), LoadResult: schema.LoadResult{
		Requests: 10, OK: 10, Codes: map[string]float64{"200": 10}, DurationS: 2, QPS: 5,
		Min: 1, P50: 1, P90: 1, P99: 1, P999: 1, Max: 1, Avg: 1, Connections: 1, Sockets: 1,
	}})
	rec.Steps = []*interp.StepRecord{
		{Name: "f", Path: "steps.0", Kind: "load", Start: s(0), End: s(1.83), Outcome: interp.Passed},
		{Name: "q", Path: "steps.1", Kind: "load", Planned: s(1.83), Start: s(1.83), End: s(3.86), Outcome: interp.Passed},
		{Name: "b", Path: "steps.2", Kind: "exec", Planned: s(3.86), Start: s(3.86), End: s(4), Outcome: interp.Passed},
	}
	_, byName := mutantsByName(t, rec, sc)
	for n, killers := range map[string][]string{
		"f: latencies ×2":       {"f.max < 500", "f.duration < 3"},
		"q: latencies ×2":       {"q.max < 1.5"},
		"step f starts 1s late": nil,
		"f: latencies ×0.5":     nil,
	} {
		m, ok := byName[n]
		switch {
		case !ok:
			t.Errorf("no mutant %q", n)
		case len(m.Impossible) > 0:
			t.Errorf("%s: impossible (%q), want a mutant a run records", n, m.Impossible)
		case !slices.Equal(m.KilledBy, killers):
			t.Errorf("%s: killed by %q, want %q", n, m.KilledBy, killers)
		}
	}
	r := applied(t, rec, sc, "f: latencies ×2")
	l := r.Results["f"].Value.(*interp.LoadRecord)
	if l.DurationS != 3.6 || l.QPS != 24/3.6 || !l.End.Equal(t0.Add(s(3.62))) {
		t.Errorf("f: duration %g s, qps %g, end %s; want 3.6 s, %g, %s", l.DurationS, l.QPS, l.End.Sub(t0), 24/3.6, s(3.62))
	}
	wantSpans(t, r, map[string][2]time.Duration{"f": {s(0), s(3.63)}, "q": {s(3.63), s(5.66)}, "b": {s(5.66), s(5.8)}})
}

// TestLateStepMutantKeepsAtPlans: "step a starts 1s late" leaves m, planned at 2s into the
// block beside a, where it ran: a step of a block starts at the block's start plus its at,
// whenever its siblings end, so a run where a started late records m at 2s still. (Moving m
// with a, as mutate did, kept every relation between them: `started.m >= ended.a + 0.5`
// survived the run where a ended after m began.) The mutant is one a run records.
func TestLateStepMutantKeepsAtPlans(t *testing.T) {
	sc := loadScenario(t, `s: schema.#Scenario & {
		steps: [
			{name: "blk", parallel: [{name: "a", exec: argv: ["true"]}, {name: "m", at: "2s", exec: argv: ["true"]}]},
		]
		expect: ["started.m - started.a < 5", "started.m >= ended.a + 0.5"]
	}`)
	s := func(d float64) time.Duration { return time.Duration(d * float64(time.Second)) }
	t0 := time.Date(2026, 12, 6, 3, 0, 0, 0, time.UTC)
	rec := &interp.Record{Outcome: interp.Passed, Start: t0, End: t0.Add(s(3)), Results: map[string]*interp.Result{}}
	rec.Steps = []*interp.StepRecord{
		{Name: "blk", Path: "steps.0", Kind: "parallel", Start: s(0), End: s(2.1), Outcome: interp.Passed},
		{Name: "a", Path: "steps.0.parallel.0", Kind: "exec", Start: s(0), End: s(1), Outcome: interp.Passed, Timed: true},
		{Name: "m", Path: "steps.0.parallel.1", Kind: "exec", Planned: s(2), Start: s(2), End: s(2.1), Outcome: interp.Passed, Timed: true},
	}
	_, byName := mutantsByName(t, rec, sc)
	m, ok := byName["step a starts 1s late"]
	if !ok || len(m.Impossible) > 0 {
		t.Fatalf("step a starts 1s late: listed %v, impossible (%q); want a mutant a run records", ok, m.Impossible)
	}
	if want := []string{"started.m >= ended.a + 0.5"}; !slices.Equal(m.KilledBy, want) {
		t.Errorf("step a starts 1s late: killed by %q, want %q", m.KilledBy, want)
	}
	wantSpans(t, applied(t, rec, sc, "step a starts 1s late"), map[string][2]time.Duration{"blk": {s(0), s(2.1)}, "a": {s(1), s(2)}, "m": {s(2), s(2.1)}})
}

// TestLateBackgroundStepMutant: "step bg starts 1s late" of a background step moves none of
// the steps after it in its sequence, which did not wait for it, but an await that joined it
// ends when it does, and what follows the await starts then.
func TestLateBackgroundStepMutant(t *testing.T) {
	sc := loadScenario(t, `s: schema.#Scenario & {
		steps: [
			{name: "bg", background: true, exec: argv: ["true"]},
			{name: "n", exec: argv: ["true"]},
			{name: "w", await: ["bg"]},
			{name: "after", exec: argv: ["true"]},
		]
		expect: ["ended.bg < 60"]
	}`)
	s := func(d float64) time.Duration { return time.Duration(d * float64(time.Second)) }
	rec := &interp.Record{Outcome: interp.Passed, Results: map[string]*interp.Result{}}
	rec.Steps = []*interp.StepRecord{
		{Name: "bg", Path: "steps.0", Kind: "exec", Background: true, Start: s(0), End: s(3), Outcome: interp.Passed},
		{Name: "n", Path: "steps.1", Kind: "exec", Start: s(0), End: s(1), Outcome: interp.Passed},
		{Name: "w", Path: "steps.2", Kind: "await", Start: s(1), End: s(3), Outcome: interp.Passed},
		{Name: "after", Path: "steps.3", Kind: "exec", Start: s(3), End: s(4), Outcome: interp.Passed},
	}
	wantSpans(t, applied(t, rec, sc, "step bg starts 1s late"), map[string][2]time.Duration{
		"bg": {s(1), s(4)}, "n": {s(0), s(1)}, "w": {s(1), s(4)}, "after": {s(4), s(5)}})
	// Without the await, after starts once n has ended, whenever bg ends: nothing else moves.
	sc = loadScenario(t, `s: schema.#Scenario & {
		steps: [
			{name: "bg", background: true, exec: argv: ["true"]},
			{name: "n", exec: argv: ["true"]},
			{name: "after", exec: argv: ["true"]},
		]
		expect: ["ended.bg < 60"]
	}`)
	rec.Steps = []*interp.StepRecord{
		{Name: "bg", Path: "steps.0", Kind: "exec", Background: true, Start: s(0), End: s(3), Outcome: interp.Passed},
		{Name: "n", Path: "steps.1", Kind: "exec", Start: s(0), End: s(3.5), Outcome: interp.Passed},
		{Name: "after", Path: "steps.2", Kind: "exec", Start: s(3.5), End: s(5), Outcome: interp.Passed},
	}
	wantSpans(t, applied(t, rec, sc, "step bg starts 1s late"), map[string][2]time.Duration{
		"bg": {s(1), s(4)}, "n": {s(0), s(3.5)}, "after": {s(3.5), s(5)}})
}

// mutantsByName judges rec's mutants under sc: the report, and its mutants by name.
func mutantsByName(t *testing.T, rec *interp.Record, sc *dsl.Scenario) (*interp.MutationReport, map[string]interp.MutantResult) {
	t.Helper()
	rep, err := interp.Mutate(rec, sc)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]interp.MutantResult{}
	for _, m := range rep.Mutants {
		byName[m.Name] = m
	}
	return rep, byName
}

// applied is a copy of rec changed by its mutant name.
func applied(t *testing.T, rec *interp.Record, sc *dsl.Scenario, name string) *interp.Record {
	t.Helper()
	var mu *interp.Mutant
	for _, m := range interp.Mutants(rec, sc) {
		if m.Name == name {
			mu = &m
		}
	}
	if mu == nil {
		t.Fatalf("no mutant %q", name)
	}
	r, err := interp.CloneRecord(rec)
	if err != nil {
		t.Fatal(err)
	}
	mu.Apply(r)
	return r
}

// wantSpans checks each step's start and end in r.
func wantSpans(t *testing.T, r *interp.Record, want map[string][2]time.Duration) {
	t.Helper()
	for _, x := range r.Steps {
		if got := [2]time.Duration{x.Start, x.End}; got != want[x.Name] {
			t.Errorf("%s: %v–%v, want %v–%v", x.Name, got[0], got[1], want[x.Name][0], want[x.Name][1])
		}
	}
}

// TestFullSpeedLoadLatencyMutantStretchesItsLastRound: of a load repeated in rounds, the
// record keeps the last round's result, and "latencies ×2" stretches that round alone: an
// earlier round that ended later would overlap the next one, which no run does.
func TestFullSpeedLoadLatencyMutantStretchesItsLastRound(t *testing.T) {
	sc := loadScenario(t, `s: schema.#Scenario & {
		steps: [{name: "f", load: {url: "http://127.0.0.1:1", requests: 4}}]
		expect: ["f.max < 500"]
	}`)
	s := func(d float64) time.Duration { return time.Duration(d * float64(time.Second)) }
	t0 := time.Date(2026, 12, 6, 3, 0, 0, 0, time.UTC)
	rec := &interp.Record{Outcome: interp.Passed, Start: t0, End: t0.Add(s(2.5))}
	rec.Put("f", "load", false, &interp.LoadRecord{Start: t0.Add(s(1.21)), End: t0.Add(s(2.22)), LoadResult: schema.LoadResult{
		Requests: 4, OK: 4, Codes: map[string]float64{"200": 4}, DurationS: 1, QPS: 4,
		Min: 250, P50: 250, P90: 250, P99: 250, P999: 250, Max: 250, Avg: 250, Connections: 1, Sockets: 1,
	}})
	rec.Steps = []*interp.StepRecord{
		{Name: "f", Path: "steps.0", Kind: "load", Round: 1, Start: s(0), End: s(1.2), Outcome: interp.Passed},
		{Name: "f", Path: "steps.0", Kind: "load", Round: 2, Start: s(1.2), End: s(2.25), Outcome: interp.Passed},
	}
	r := applied(t, rec, sc, "f: latencies ×2")
	var got [][2]time.Duration
	for _, x := range r.Steps {
		got = append(got, [2]time.Duration{x.Start, x.End})
	}
	if want := [][2]time.Duration{{s(0), s(1.2)}, {s(1.2), s(3.25)}}; !slices.Equal(got, want) {
		t.Errorf("rounds %v, want %v", got, want)
	}
}

// TestFullSpeedDurationLoadLatencyMutantSaysWhy: a load of a duration as fast as possible
// whose calls take twice as long makes about half as many in its time, a run mutate does not
// build; "latencies ×2" alone overfills the load's time and is impossible, and mutate says
// which run it stands for and why it is not that run, before fortio's broken sums.
func TestFullSpeedDurationLoadLatencyMutantSaysWhy(t *testing.T) {
	sc := loadScenario(t, `s: schema.#Scenario & {
		steps: [{name: "d", load: {url: "http://127.0.0.1:1", duration: "1s", connections: 2}}]
		expect: ["d.max < 500"]
	}`)
	rec := &interp.Record{Outcome: interp.Passed}
	// 2 connections busy for 1 s with calls of 50 ms: 40 calls.
	rec.Put("d", "load", false, &interp.LoadRecord{LoadResult: schema.LoadResult{
		Requests: 40, OK: 40, Codes: map[string]float64{"200": 40}, DurationS: 1, QPS: 40,
		Min: 50, P50: 50, P90: 50, P99: 50, P999: 50, Max: 50, Avg: 50, Connections: 2, Sockets: 2,
	}})
	_, byName := mutantsByName(t, rec, sc)
	m := byName["d: latencies ×2"]
	if len(m.Impossible) < 2 || !strings.Contains(m.Impossible[0], "about half as many calls") || !strings.Contains(m.Impossible[1], "avg × requests") {
		t.Errorf("d: latencies ×2: impossible %q; want why mutate does not build the slower run, then fortio's sums", m.Impossible)
	}
}

// TestIPsMutants: a claim about where a load's connections went (the DNS flip's
// keys(ka.ips) == [a], pc.ips[b] > 0) gets mutants of its own — every connection to one of the
// addresses the run's loads reached, the flip missed or taken at once — as no mutant of codes
// or latencies moves an address. Without them mutate judged those claims by nothing: a claim
// that holds whatever the addresses (len(pc.ips) > 0) left no survivor to say so.
func TestIPsMutants(t *testing.T) {
	const a, b = "127.0.0.2:18610", "127.0.0.3:18610"
	rec := func() *interp.Record {
		r := &interp.Record{Outcome: interp.Passed}
		r.Put("ka", "load", false, &interp.LoadRecord{LoadResult: schema.LoadResult{Requests: 30, OK: 30, Codes: map[string]float64{"200": 30}, Sockets: 2, Connections: 2, IPs: map[string]float64{a: 2}}})
		r.Put("pc", "load", false, &interp.LoadRecord{LoadResult: schema.LoadResult{Requests: 30, OK: 30, Codes: map[string]float64{"200": 30}, Sockets: 30, Connections: 2, IPs: map[string]float64{a: 14, b: 16}}})
		return r
	}
	const steps = `steps: [{parallel: [
		{name: "ka", load: {url: "http://127.0.0.2:18610/", requests: 30, qps: 10, connections: 2}},
		{name: "pc", load: {url: "http://127.0.0.2:18610/", requests: 30, qps: 10, connections: 2, keepalive: false}},
	]}]`
	for _, c := range []struct {
		name, expect string
		killed       map[string]bool // the ips mutants there must be, killed or surviving
	}{{
		name:   "the flip's claims",
		expect: `"keys(ka.ips) == ['` + a + `']", "pc.ips['` + a + `'] > 0", "pc.ips['` + b + `'] > 0"`,
		killed: map[string]bool{
			"ka.ips: every connection to " + b: true,
			"pc.ips: every connection to " + a: true,
			"pc.ips: every connection to " + b: true,
		},
	}, {
		name:   "a claim that holds whatever the addresses",
		expect: `"len(ka.ips) > 0", "len(pc.ips) > 0"`,
		killed: map[string]bool{
			"ka.ips: every connection to " + b: false,
			"pc.ips: every connection to " + a: false,
			"pc.ips: every connection to " + b: false,
		},
	}} {
		t.Run(c.name, func(t *testing.T) {
			sc := loadScenario(t, "s: schema.#Scenario & {\n"+steps+"\nexpect: ["+c.expect+"]\n}")
			rep, err := interp.Mutate(rec(), sc)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]bool{}
			for _, m := range rep.Mutants {
				if strings.Contains(m.Name, ".ips: ") {
					got[m.Name] = m.Killed
				}
			}
			if !maps.Equal(got, c.killed) {
				t.Errorf("ips mutants (name → killed):\n got %v\nwant %v", got, c.killed)
			}
		})
	}
}
