package interp_test

import (
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
