package interp_test

import (
	"strings"
	"testing"

	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/schema"
)

// TestImpossibleMutantsNotKilled: a mutant whose record no run writes (a load of requests: 30
// that made none; fortio's qps not its requests over its duration) is reported impossible,
// neither killed nor survived, and the score counts it nowhere. Before, "fortio: no request
// made" of a load of requests: 30 counted as killed by every expectation that reads the load:
// a score no possible outcome earned.
func TestImpossibleMutantsNotKilled(t *testing.T) {
	sc := loadScenario(t, `s: schema.#Scenario & {
		steps: [
			{name: "fixed", load: {url: "http://127.0.0.1:1", requests: 30}},
			{name: "timed", load: {url: "http://127.0.0.1:1", qps: 10, duration: "3s"}},
		]
		expect: ["fixed.code200 > 0", "timed.qps > 0", "timed.requests > 0", "timed.duration > 0"]
	}`)
	rec := &interp.Record{Outcome: interp.Passed}
	rec.Put("fixed", "load", false, &interp.LoadRecord{LoadResult: schema.LoadResult{
		Requests: 30, OK: 30, Codes: map[string]float64{"200": 30}, DurationS: 3, QPS: 10,
		Min: 1, P50: 2, P90: 3, P99: 4, P999: 4, Max: 4, Avg: 2, Connections: 1, Sockets: 1,
	}})
	rec.Put("timed", "load", false, &interp.LoadRecord{LoadResult: schema.LoadResult{
		Requests: 30, OK: 30, Codes: map[string]float64{"200": 30}, DurationS: 3, QPS: 10,
		Min: 1, P50: 2, P90: 3, P99: 4, P999: 4, Max: 4, Avg: 2, Connections: 1, Sockets: 1,
	}})
	rep, byName := mutantsByName(t, rec, sc)
	none, ok := byName["fixed: no request made"]
	if !ok {
		t.Fatalf("no mutant \"fixed: no request made\" among %v", byName)
	}
	if none.Killed || len(none.Impossible) == 0 || !strings.Contains(strings.Join(none.Impossible, "; "), "fixes 30") {
		t.Errorf("fixed: no request made: killed %v, impossible %q; want impossible (the step fixes 30 requests), not killed", none.Killed, none.Impossible)
	}
	// A load of a set duration making more requests makes them at a higher qps: a run
	// records that (its qps is its requests over its duration), so the mutant is judged. So
	// does one at another qps: its requests in the time that rate takes. Before, qps ×2 and
	// ×0.5 changed the qps alone, impossible: a claim on fortio.qps met no mutant at all.
	for _, n := range []string{"timed.requests ×2", "timed.requests - 1", "timed.duration ×2", "timed.qps ×2", "timed.qps ×0.5"} {
		m, ok := byName[n]
		if !ok {
			t.Errorf("no mutant %q", n)
			continue
		}
		if len(m.Impossible) > 0 {
			t.Errorf("%s: impossible (%q), want a mutant a run records", n, m.Impossible)
		}
	}
	impossible := 0
	for _, m := range rep.Mutants {
		if len(m.Impossible) > 0 {
			impossible++
			if m.Killed || m.Survives != "" {
				t.Errorf("%s: impossible and killed %v / survives %q", m.Name, m.Killed, m.Survives)
			}
		}
	}
	if rep.Impossible != impossible || rep.Killed+rep.Allowed+rep.Unexplained+rep.Impossible != len(rep.Mutants) {
		t.Errorf("counts: killed %d, allowed %d, unexplained %d, impossible %d (%d listed) of %d mutants", rep.Killed, rep.Allowed, rep.Unexplained, rep.Impossible, impossible, len(rep.Mutants))
	}
}
