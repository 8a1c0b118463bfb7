package interp_test

import (
	"slices"
	"testing"

	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/schema"
)

// TestCounterpartJudgesTheWholeRun: a mutant that fails a claim only by changing one of two
// records of one fact (the backend's overflows tied to fortio's 503s) stands for the run where
// both changed alike; whether it survives is judged on that run with every claim, not by
// whether another claim's text names the other side. Overflows doubled to 30 of fortio's 30
// requests leave it no 200s, which the bound on the 200s (a claim that never names 503s)
// refuses: killed. One more overflow is one 200 fewer, within the bound: it survives. Before,
// every mutant of the tie survived (approx names fortio.code200, not fortio.code503).
func TestCounterpartJudgesTheWholeRun(t *testing.T) {
	for _, tie := range []string{"fortio.code503", `fortio.codes[\"503\"]`} {
		t.Run(tie, func(t *testing.T) { counterpartCase(t, tie) })
	}
}

func counterpartCase(t *testing.T, tie string) {
	rec := judgeRecord(
		interp.SnapshotRecord{Counters: schema.Stats{"upstream_rq_pending_overflow": 3}},
		interp.SnapshotRecord{Counters: schema.Stats{"upstream_rq_pending_overflow": 18}},
	)
	passedLoad(rec, map[string]float64{"200": 15, "503": 15}, 1, 30, 1, 16)
	sc := loadScenario(t, `s: schema.#Scenario & {
	steps: [
		{name: "before", snapshot: {admin: "http://127.0.0.1:15000", cluster: "c"}},
		{name: "fortio", load: {url: "http://127.0.0.1:1", requests: 30}},
		{name: "after", snapshot: {admin: "http://127.0.0.1:15000", cluster: "c"}},
	]
	expect: ["delta.upstream_rq_pending_overflow == `+tie+`", "approx(fortio.code200, 15, 0.3)"]
}`)
	rep, err := interp.Mutate(rec, sc)
	if err != nil {
		t.Fatal(err)
	}
	survive := []string{
		"delta.upstream_rq_pending_overflow + 1 (before → after)",
		"delta.upstream_rq_pending_overflow - 1 (before → after)",
		"fortio.code503 + 1", "fortio.code503 - 1", "fortio.code200 + 1", "fortio.code200 - 1",
	}
	killed := map[string]string{ // by what, on the counterpart
		"delta.upstream_rq_pending_overflow doubled (before → after)": "approx(fortio.code200, 15, 0.3)",
		"delta.upstream_rq_pending_overflow halved (before → after)":  "approx(fortio.code200, 15, 0.3)",
		"delta.upstream_rq_pending_overflow = 0 (before → after)":     "approx(fortio.code200, 15, 0.3)",
	}
	seen := map[string]bool{}
	for _, m := range rep.Mutants {
		seen[m.Name] = true
		if m.Impossible != nil {
			continue
		}
		if by, ok := killed[m.Name]; ok {
			if !m.Killed || !slices.Contains(m.KilledBy, by) || m.Counterpart == "" {
				t.Errorf("%s: killed %v by %q (%s), want killed by %q on the run where fortio's 503s changed alike", m.Name, m.Killed, m.KilledBy, m.Counterpart, by)
			}
		}
		if slices.Contains(survive, m.Name) && (m.Killed || m.Counterpart == "") {
			t.Errorf("%s: killed %v by %q (%s), want survived: every claim holds on the run where both records changed alike", m.Name, m.Killed, m.KilledBy, m.Counterpart)
		}
	}
	for _, n := range append(survive, "delta.upstream_rq_pending_overflow doubled (before → after)") {
		if !seen[n] {
			t.Errorf("no mutant %q", n)
		}
	}
}

// TestCounterpartOfASum: the tie of a duration load, whose server counts its requests plus
// one warm-up per connection (delta.upstream_rq_total == fortio.requests + fortio.connections,
// the claim docs/language.md gives for it), has a sum on one side. The run where the server's
// count doubled is the one where fortio's requests grew to match, which the bound on the
// requests refuses: killed. The server's count one higher is fortio's requests one higher,
// within the bound: it survives. Before, no run was built for a sum, and every mutant of
// the server's count survived, the count 0 among them.
func TestCounterpartOfASum(t *testing.T) {
	rec := judgeRecord(
		interp.SnapshotRecord{Counters: schema.Stats{"upstream_rq_total": 10}},
		interp.SnapshotRecord{Counters: schema.Stats{"upstream_rq_total": 112}},
	)
	passedLoad(rec, map[string]float64{"200": 100}, 2, 50, 2, 2)
	sc := loadScenario(t, `s: schema.#Scenario & {
	steps: [
		{name: "before", snapshot: {admin: "http://127.0.0.1:15000", cluster: "c"}},
		{name: "fortio", load: {url: "http://127.0.0.1:1", qps: 50, duration: "2s", connections: 2}},
		{name: "after", snapshot: {admin: "http://127.0.0.1:15000", cluster: "c"}},
	]
	expect: ["delta.upstream_rq_total == fortio.requests + fortio.connections", "approx(fortio.requests, 100, 0.1)"]
}`)
	rep, err := interp.Mutate(rec, sc)
	if err != nil {
		t.Fatal(err)
	}
	survive := []string{"delta.upstream_rq_total + 1 (before → after)", "delta.upstream_rq_total - 1 (before → after)"}
	killed := []string{
		"delta.upstream_rq_total doubled (before → after)",
		"delta.upstream_rq_total halved (before → after)",
		"delta.upstream_rq_total = 0 (before → after)",
	}
	seen := map[string]bool{}
	for _, m := range rep.Mutants {
		seen[m.Name] = true
		if m.Impossible != nil {
			continue
		}
		if slices.Contains(killed, m.Name) && (!m.Killed || !slices.Contains(m.KilledBy, "approx(fortio.requests, 100, 0.1)") || m.Counterpart == "") {
			t.Errorf("%s: killed %v by %q (%s), want killed by the bound on the requests on the run where fortio's requests changed alike", m.Name, m.Killed, m.KilledBy, m.Counterpart)
		}
		if slices.Contains(survive, m.Name) && (m.Killed || m.Counterpart == "") {
			t.Errorf("%s: killed %v by %q (%s), want survived: every claim holds on the run where fortio's requests changed alike", m.Name, m.Killed, m.KilledBy, m.Counterpart)
		}
	}
	for _, n := range append(survive, killed...) {
		if !seen[n] {
			t.Errorf("no mutant %q", n)
		}
	}
}

// passedLoad makes judgeRecord's load one fortio could record, with these codes, duration (s),
// qps, connections and sockets, and the run passed.
func passedLoad(rec *interp.Record, codes map[string]float64, durationS, qps, connections, sockets float64) {
	l := rec.Loads()["fortio"]
	l.Codes = codes
	l.DurationS, l.QPS, l.Connections, l.Sockets = durationS, qps, connections, sockets
	l.Min, l.P50, l.P90, l.P99, l.P999, l.Max, l.Avg = 1, 2, 3, 4, 4, 5, 2 // ms
	l.Recount()
	rec.Outcome = interp.Passed
}
