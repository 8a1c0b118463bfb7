package interp_test

import (
	"maps"
	"math"
	"regexp"
	"strings"
	"testing"

	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/schema"
)

// numeric matches the names of the numeric mutants.
var numeric = regexp.MustCompile(`( ×0\.5| ×2| [+-] 1| halved| doubled)( |$)`)

// TestNumericMutants: every number an expectation reads is scaled (×0.5, ×2) and, when it is a
// count, shifted (±1); a bound as wide as "> 0" lets the scaled and shifted deltas survive,
// a relation to the load kills them all.
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
