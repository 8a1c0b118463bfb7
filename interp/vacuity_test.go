package interp_test

import (
	"strings"
	"testing"

	"labrun.dev/labrun/interp"
)

// TestHoldsOfEveryLoad: an expectation that reads only loads and holds of every load fortio
// could record (a restatement of its sums and orders, a tautology dsl's forms do not see) is
// refused; one that a load fortio could record breaks is not.
func TestHoldsOfEveryLoad(t *testing.T) {
	const steps = `vars: {n: 20, w: 123457, word: "x"}
		steps: [
			{name: "f", load: {url: "http://127.0.0.1:1", requests: 20}},
			{name: "g", load: {url: "http://127.0.0.1:1", requests: 20}},
			{name: "h", load: {url: "http://127.0.0.1:1", duration: "1s"}},
			{name: "before", snapshot: {admin: "http://127.0.0.1:15000", cluster: "c"}},
			{name: "after", snapshot: {admin: "http://127.0.0.1:15000", cluster: "c"}},
			{name: "log", logs: {file: "/dev/null"}},
			{name: "probe", mayFail: true, exec: argv: ["true"]},
			{name: "probe2", mayFail: true, exec: argv: ["true"]},
			{name: "xf", expectFail: true, exec: argv: ["false"]},
		]
		setup: [{name: "prep", exec: argv: ["true"]}]`
	for _, c := range []struct {
		expect  string
		refused bool
		allow   bool // allowReset lists upstream_rq_total: its delta may be negative
	}{
		{"f.ok + f.errors == f.requests", true, false},
		{"f.requests == f.ok + f.errors", true, false},
		{"f.errors == f.requests - f.ok", true, false},
		{"f.min <= f.max", true, false},
		{"f.p50 <= f.p99 && f.avg <= f.max", true, false},
		{"f.code503 <= f.requests", true, false},
		{"f.ok <= f.requests", true, false},
		{"f.code503 == 0 || f.code503 > 0", true, false},
		{"f.code503 == 0 || 1 == 1", true, false},
		{"abs(f.code503) >= 0", true, false},
		{"max(f.code503, 0) >= 0", true, false},
		{"f.code503 * 0 == 0", true, false},
		{"not (f.code503 > 0 and false)", true, false},
		{"f.ok + f.errors == f.requests && g.min <= g.max", true, false},
		{"len(f.codes) >= 0 || f.ok == f.requests", true, false},

		{"f.code503 == 0", false, false},
		{"f.code200 == f.requests", false, false},
		{"f.code200 + f.code503 == f.requests", false, false},
		{"h.requests == 20", false, false},
		{"f.requests == vars.n", true, false},           // f fixes 20 requests, and n is 20: a restatement
		{"f.code503 == 0 || vars.n == 20", true, false}, // holds with n = 20, the value the scenario runs with (declared; --var n=5 would be another load)
		{"f.code503 >= vars.n - 20", true, false},       // a var of 20: a bound of 0 on a count
		{"f.code503 == 0 || vars.n != 20", false, false},
		{"f.code503 <= vars.n", true, false}, // f fixes 20 requests
		{"f.code503 < vars.n", false, false}, // all 20 answered 503
		{"f.code503 != vars.n * 1000", true, false},
		{"h.code503 != vars.w", false, false}, // w = 123457: a count the samples must draw, though the expression writes no number
		{"vars.word != 'x' || f.code503 == 0", false, false},
		{"vars.word == 'x' || f.code503 >= 0", true, false},
		{"h.requests != 13", false, false},
		{"f.p99 < 60000", false, false},
		// A p50 above most of the numbers drawn: every third load has one latency throughout.
		{"f.p50 <= 1000", false, false},
		{"within(f.p50, 0, 1000)", false, false},
		{"h.p50 <= 5e7", false, false},
		{"f.qps < 1000000", false, false},
		{"f.code429 < 7", false, false},
		{"f.requests == h.requests", false, false},
		{"h.errors > 0 || h.ok > 0", false, false},

		// A load of requests: 20 records 20 requests (fortio makes exactly that many), also
		// when the expectation reads its requests: a restatement of the step's requests:
		// 20 cannot fail.
		{"f.requests == 20", true, false},
		{"f.requests != 13", true, false},
		{"f.requests == g.requests", true, false},
		{"f.requests == 20 && f.code503 == 0", false, false},
		{"f.errors > 0 || f.ok > 0", true, false},
		{"f.code503 < 50", true, false},
		{"f.code503 <= 20", true, false},
		{"f.code503 + f.code200 <= 20", true, false},
		{"f.code503 < 20", false, false},
		{"f.code503 < 19", false, false},
		{"f.code200 >= 1", false, false},
		{"f.code503 <= 10", false, false},
		{"f.code503 + f.code200 == 20", false, false},
		{"f.code503 + f.code_1 < 20", false, false},
		{"f.connections == 4", false, false}, // fortio may run fewer connections than asked
		{"f.code503 <= g.code503", false, false},
		{`f.ips["127.0.0.5:80"] > 0`, false, false},
		{`f.codes["-1"] == 0`, false, false},
		{"f.ok + f.errors == f.requests && before.upstream_rq_total > 0", false, false},

		// Stats, drawn apart from one another: only what holds whatever they are is refused.
		{"delta.upstream_rq_total == 0 || delta.upstream_rq_total > 0", true, false},
		{"abs(delta.upstream_rq_total) >= 0", true, false},
		{`delta("before", "after").upstream_cx_total * 0 == 0`, true, false},
		{"max(before.upstream_rq_total, after.upstream_rq_total) >= min(before.upstream_rq_total, after.upstream_rq_total)", true, false},
		{"delta.upstream_rq_total == 0 || f.code503 >= 0 || f.code503 < 0", true, false},
		{"delta.upstream_rq_total == 0 || delta.upstream_rq_total > 0", true, true}, // a reset counts from 0: never negative either
		{"delta.upstream_rq_total == 0", false, false},
		{"delta.upstream_rq_total > 0", false, false},
		{"delta.upstream_rq_total == f.code503", false, false},
		{"before.upstream_rq_total < after.upstream_rq_total", false, false},
		{`delta("before", "after").upstream_cx_total == delta.upstream_rq_total`, false, false},
		{"delta.upstream_rq_total <= 1000000000", false, false},

		// A log's counts: each access line counted under one code, its flags and its details,
		// count counting every line.
		{`log.codes["503"] <= log.count`, true, false},
		{`log.codes["200"] + log.codes["503"] <= log.count`, true, false},
		{"log.count == 0 || log.count != 0", true, false},
		{`log.flags["UF"] <= log.count`, true, false},
		{`log.details["x"] + log.details["y"] <= log.count`, true, false},
		{`log.codes["503"] <= f.code503 || log.codes["503"] > f.code503`, true, false},
		{`log.codes["503"] == log.count`, false, false},
		{`log.flags["UF"] == log.codes["503"]`, false, false},
		{`log.flags["-"] == log.count`, false, false},
		{`log.flags["UF"] + log.flags["URX"] <= log.count`, false, false}, // a line may have both
		{"log.count > 0", false, false},
		{`log.codes["503"] == 0`, false, false},
		{"log.count < 1000000000", false, false},
		{`log.codes["503"] == f.code503`, false, false},
		{"len(log.lines) == log.count", false, false},                            // its lines are not drawn: not judged
		{`log.codes["503"] <= log.count || len(log.entries) == 0`, false, false}, // its entries are not drawn: not judged

		// A command's exit code and output, a step's outcome and error, a step's times.
		{"probe.exit == 0 || probe.exit != 0", true, false},
		{"probe.exit - probe.exit == 0", true, false},
		{"abs(probe.exit) >= 0", true, false},
		{"within(probe.exit, -1000, 1000)", true, false},
		{"probe.stdout == probe.stdout + ''", true, false},
		{"outcome.probe == 'passed' || outcome.probe != 'passed'", true, false},
		{"error.probe == '' || error.probe != ''", true, false},
		{"started.f <= ended.f", true, false},
		{"ended.f - started.f >= 0", true, false},
		{"started.f >= 0", true, false},
		{"probe.exit == 0", false, false},
		{"probe.exit == 3 || probe.exit == 0", false, false},
		{"probe.exit < 128", false, false},
		{`probe.stdout contains "ok"`, false, false},
		{`probe.stderr == ""`, false, false},
		// Outputs of every length and line count the expression writes, and a long one.
		{"len(probe.stdout) < 10", false, false},
		{"len(probe.stdout) <= 3", false, false},
		{`len(split(trim(probe.stdout), "\n")) == 1`, false, false},
		{`len(split(probe.stdout, "\n")) < 7`, false, false},
		{"len(probe.stderr) < 100", false, false},
		{"len(probe.stdout) < 5000", false, false}, // past the lengths drawn: not judged
		{"len(probe.stdout) < 100000", false, false},
		{"len(error.probe) < 60", false, false},
		{`len(split(probe.stdout, "\n")) >= 1`, true, false},
		{"len(probe.stdout) >= 0 || probe.exit > 0", true, false},
		// An escape in a literal is the character it writes: a command can print "2\n".
		{`probe.stdout != "2\n"`, false, false},
		{`probe.stdout != '2\n'`, false, false},
		{`probe.stdout != "tab\there"`, false, false},
		{`probe.stdout != "say \"hi\""`, false, false},
		{`probe.stdout != "a\\b"`, false, false},
		{`probe.stdout != 'it\'s "x"\n'`, false, false},
		{"outcome.probe == 'passed'", false, false},
		{"outcome.probe in ['passed', 'failed']", false, false}, // an error, a skip break it
		{"outcome.probe != 'skipped'", false, false},
		{`error.probe contains "Forbidden"`, false, false},
		{`error.probe == ""`, false, false},
		{"outcome.probe == outcome.probe2", false, false},
		// Two commands record the same output, exit or stderr in some runs: a claim that they
		// differ fails there (each was drawn apart from the other only).
		{"probe.stdout != probe2.stdout", false, false},
		{"probe.exit != probe2.exit", false, false},
		{"probe.stderr != probe2.stderr", false, false},
		{"probe.exit == probe2.exit", false, false},
		{"probe.stdout == probe2.stdout", false, false},
		{"probe.stdout == probe2.stdout || probe.stdout != probe2.stdout", true, false},
		// The expectations are judged only when the steps all passed: a step whose failure
		// fails the run (no mayFail, under no block that may fail) passed, with no error.
		{"outcome.f == 'passed'", true, false},
		{"error.f == ''", true, false},
		{"outcome.prep == 'passed'", true, false},
		{"outcome.f == outcome.g", true, false},
		{"outcome.xf == 'passed'", false, false}, // expectFail: drawn as any (a bound left out is safe)
		{"outcome.f == 'passed' && f.code503 == 0", false, false},
		{"outcome.f == 'passed' && outcome.probe == 'passed'", false, false},
		{"error.xf == ''", false, false}, // the error it expected
		{"outcome.f == 'failed'", false, false},
		{"started.prep >= 0", false, false}, // a setup step starts before the steps
		{"ended.f - started.f < 5", false, false},
		{"ended.f < 60", false, false},
		{"probe.exit == 0 || f.code503 > 0", false, false},
		{"probe.exit == 0 || probe.exit != 0 || f.code503 > 0", true, false},

		// What the plan guarantees: a delta is its snapshots' difference, a later step in a
		// sequence starts at or after the earlier one ended.
		{"delta.upstream_rq_total == after.upstream_rq_total - before.upstream_rq_total", true, false},
		{"after.upstream_rq_total - before.upstream_rq_total == delta.upstream_rq_total", true, false},
		{"delta.upstream_rq_total + before.upstream_rq_total == after.upstream_rq_total", true, false},
		{`delta("before", "after").upstream_rq_total == after.upstream_rq_total - before.upstream_rq_total`, true, false},
		{`delta("before", "after").upstream_rq_total == delta.upstream_rq_total`, true, false},
		{"delta.upstream_rq_total <= after.upstream_rq_total", true, false},
		{"delta.upstream_rq_total == after.upstream_rq_total - before.upstream_rq_total", false, true}, // a reset: the delta is after's
		{"delta.upstream_rq_total == after.upstream_rq_total", false, false},
		{"after.upstream_rq_total > before.upstream_rq_total", false, false},
		{"after.upstream_rq_total >= before.upstream_rq_total", false, false}, // a reset breaks it (the judge only refuses it in a delta)
		{"delta.upstream_rq_total == after.upstream_rq_total - before.upstream_rq_total + f.code503", false, false},
		{"delta.upstream_rq_total > 0 && after.upstream_rq_total > before.upstream_rq_total", false, false},
		{"started.g >= ended.f", true, false},
		{"started.before >= ended.f", true, false},
		{"ended.prep <= started.f", true, false}, // setup ends before the steps start
		{"ended.prep <= 0", true, false},
		{"started.g > ended.f", false, false},     // at the same instant
		{"started.g - ended.f < 2", false, false}, // a gap
		{"started.f >= ended.g", false, false},    // the other way
		{"ended.g >= started.f + 1", false, false},
	} {
		t.Run(c.expect, func(t *testing.T) {
			src := "s: schema.#Scenario & {\n" + steps + "\nexpect: [" + quote(c.expect) + "]\n}"
			if c.allow {
				src = strings.Replace(src, "vars:", `allowReset: ["upstream_rq_total"]
		vars:`, 1)
			}
			checkRefused(t, src, c.refused)
		})
	}
}

// TestHoldsOfEveryLoadFixedRequests: the requests a load step fixes before the run bound what
// it records, and only those: a count a var may change (--var, a sweep), a load of a
// duration or of one request at a fixed qps (fortio makes two) are any count. The samples of
// one expression are kept across scenarios: each load is judged on its own count, whatever
// was judged before it.
func TestHoldsOfEveryLoadFixedRequests(t *testing.T) {
	scenario := func(load, vars string) string {
		return `s: schema.#Scenario & {
			` + vars + `
			steps: [{name: "f", load: {url: "http://127.0.0.1:1", ` + load + `}}]
			expect: ["f.code503 < 50 && f.ok + f.errors >= 10"]
		}`
	}
	for _, c := range []struct {
		load, vars string
		refused    bool
	}{
		{"requests: 40", "", true},
		{"requests: 60", "", false},
		{"requests: 40", "", true},
		{"requests: 49", "", true},
		{"requests: 50", "", false},
		{"requests: 40, qps: 10", "", true},
		{"requests: 9", "", false},
		{"duration: \"1s\"", "", false},
		{"requests: 40", "vars: n: 40", true},      // a var the CUE does not read
		{"requests: vars.n", "vars: n: 40", false}, // --var n=60 breaks it
		{"requests: 60", "", false},
	} {
		checkRefused(t, scenario(c.load, c.vars), c.refused)
	}
	// One request at a fixed qps is two requests.
	checkRefused(t, `s: schema.#Scenario & {
		steps: [{name: "f", load: {url: "http://127.0.0.1:1", requests: 1, qps: 5}}]
		expect: ["f.code200 + f.code503 <= 1"]
	}`, false)
	checkRefused(t, `s: schema.#Scenario & {
		steps: [{name: "f", load: {url: "http://127.0.0.1:1", requests: 1}}]
		expect: ["f.code200 + f.code503 <= 1"]
	}`, true)
}

// TestRestatedRequestsCannotFail: fortio makes exactly the requests a load step fixes, so
// an expectation or assertion that restates them (fortio.requests == N for requests: N, or
// a sum of the codes equal to N whatever the codes are) holds of every run and is refused,
// as any other tautology is; the judge once drew any count for an expression that mentions
// requests, and so accepted it. A load whose count is not fixed before the run (it runs for a
// duration, at a qps or not; its requests read a var, which --var or a sweep may change; one
// request at a fixed qps, which fortio makes two) may record another count: the same claim
// of it can fail, and stays.
func TestRestatedRequestsCannotFail(t *testing.T) {
	scenario := func(vars, load, expect string) string {
		return `s: schema.#Scenario & {
			` + vars + `
			steps: [{name: "fortio", load: {url: "http://127.0.0.1:1", ` + load + `}}]
			expect: [` + quote(expect) + `]
		}`
	}
	for _, c := range []struct {
		vars, load, expect string
		refused            bool
	}{
		{"", "requests: 40", "fortio.requests == 40", true},
		{"", "requests: 40, connections: 4", "fortio.requests == 40", true},
		{"", "requests: 40, qps: 10", "fortio.requests == 40", true},
		{"", "requests: 40", "fortio.requests >= 40 && fortio.requests <= 40", true},
		{"", "requests: 40", "40 == fortio.requests", true},
		{"", "requests: 40", "fortio.ok + fortio.errors == 40", true},
		{"", "requests: 40", "fortio.requests > 0", true},
		{"", "requests: 1", "fortio.requests == 1", true},

		// Claims a run can break, of the same load.
		{"", "requests: 40", "fortio.code200 == fortio.requests", false},
		{"", "requests: 40", "fortio.code200 + fortio.code503 == 40", false}, // a 404 breaks it
		{"", "requests: 40", "fortio.requests == 40 && fortio.code503 == 0", false},

		// The count is not fixed before the run: the same claim can fail.
		{"", `duration: "10s"`, "fortio.requests == 40", false},
		{"", `duration: "10s", qps: 4`, "fortio.requests == 40", false},
		{"vars: n: 40", "requests: vars.n", "fortio.requests == 40", false}, // --var n=60 breaks it
		{"", "requests: 1, qps: 5", "fortio.requests == 1", false},          // fortio makes two
	} {
		t.Run(c.load+": "+c.expect, func(t *testing.T) {
			checkRefused(t, scenario(c.vars, c.load, c.expect), c.refused)
		})
	}
	// An assert step is judged the same way.
	res, err := loadScenarioErr(t, `s: schema.#Scenario & {
		steps: [
			{name: "fortio", load: {url: "http://127.0.0.1:1", requests: 40}},
			{assert: "fortio.requests == 40"},
		]
		expect: ["fortio.code200 == fortio.requests"]
	}`)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	errs := interp.CheckCannotFail(res.Scenarios[0])
	if len(errs) != 1 || !strings.HasSuffix(errs[0].Path, ".assert") || !strings.Contains(errs[0].Msg, "assertion \"fortio.requests == 40\"") {
		t.Fatalf("want the assertion refused, and only it: %v", errs)
	}
	if !strings.Contains(errs[0].Msg, "adding up to the requests the step fixes (fortio's 40)") {
		t.Errorf("the refusal does not say the step fixes 40 requests: %s", errs[0].Msg)
	}
}

// checkRefused loads src and checks that vet refuses its expectation as one that cannot fail,
// or not (a scenario dsl refuses first counts as refused).
func checkRefused(t *testing.T, src string, refused bool) {
	t.Helper()
	res, err := loadScenarioErr(t, src)
	if err != nil {
		if refused {
			t.Logf("dsl refuses it first: %v", err)
			return
		}
		t.Fatalf("load: %v", err)
	}
	errs := interp.CheckCannotFail(res.Scenarios[0])
	if got := len(errs) > 0; got != refused {
		t.Fatalf("refused %v, want %v: %v", got, refused, errs)
	}
	if refused && !strings.Contains(errs[0].Msg, "it cannot fail, so it proves nothing") {
		t.Errorf("message: %s", errs[0].Msg)
	}
}

// quote writes s as a CUE string whose value is s.
func quote(s string) string {
	return `"` + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), `"`, `\"`) + `"`
}

// TestHoldsOfEveryLoadAssert: an assert step whose expression holds of every load passes the
// step whatever the run did: refused as an expectation is.
func TestHoldsOfEveryLoadAssert(t *testing.T) {
	for _, c := range []struct {
		assert  string
		refused bool
	}{
		{"f.ok + f.errors == f.requests", true},
		{"f.code503 == 0", false},
	} {
		res, err := loadScenarioErr(t, `s: schema.#Scenario & {
			steps: [
				{name: "f", load: {url: "http://127.0.0.1:1", requests: 20}},
				{assert: "`+c.assert+`"},
			]
			expect: ["f.code200 > 0"]
		}`)
		if err != nil {
			t.Fatalf("load: %v", err)
		}
		errs := interp.CheckCannotFail(res.Scenarios[0])
		if got := len(errs) > 0; got != c.refused {
			t.Fatalf("%s: refused %v, want %v: %v", c.assert, got, c.refused, errs)
		}
		if c.refused && (!strings.Contains(errs[0].Msg, "assertion") || !strings.HasSuffix(errs[0].Path, ".assert")) {
			t.Errorf("%s: %s: %s", c.assert, errs[0].Path, errs[0].Msg)
		}
	}
}

// TestHoldsOfEveryOutcomeAssert: an assert step sees the outcomes of the steps before it: a
// step whose failure would have stopped the run before the assert passed; one that runs
// beside it (in the background, a branch of a parallel) may not have, or may still run.
func TestHoldsOfEveryOutcomeAssert(t *testing.T) {
	for _, c := range []struct {
		steps   string
		refused bool
	}{
		{`{name: "f", exec: argv: ["true"]}, {assert: "outcome.f == 'passed'"}`, true},
		{`{name: "f", exec: argv: ["true"]}, {assert: "error.f == ''"}`, true},
		{`{name: "f", mayFail: true, exec: argv: ["true"]}, {assert: "outcome.f == 'passed'"}`, false},
		{`{name: "f", background: true, exec: argv: ["true"]}, {await: "f"}, {assert: "outcome.f == 'passed'"}`, false},         // not judged as sure: a bound left out is safe
		{`{name: "s", mayFail: true, sequence: [{name: "f", exec: argv: ["true"]}, {assert: "outcome.f == 'passed'"}]}`, false}, // not judged as sure: a bound left out is safe
	} {
		res, err := loadScenarioErr(t, `s: schema.#Scenario & {
			steps: [
				`+c.steps+`
			]
			expect: ["f.exit == 0"`+map[bool]string{true: `, "outcome.s == 'passed'"`}[strings.Contains(c.steps, `"s"`)]+`]
		}`)
		if err != nil {
			if c.refused {
				continue
			}
			t.Fatalf("%s: load: %v", c.steps, err)
		}
		errs := interp.CheckCannotFail(res.Scenarios[0])
		if got := len(errs) > 0; got != c.refused {
			t.Fatalf("%s: refused %v, want %v: %v", c.steps, got, c.refused, errs)
		}
	}
	// A catch step's outcome is judged as any: the catch runs when the run failed.
	res, err := loadScenarioErr(t, `s: schema.#Scenario & {
		steps: [{name: "f", exec: argv: ["true"]}]
		catch: [{name: "g", exec: argv: ["true"]}, {assert: "outcome.f == 'passed'"}]
		expect: ["f.exit == 0"]
	}`)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if errs := interp.CheckCannotFail(res.Scenarios[0]); len(errs) > 0 {
		t.Fatalf("refused: %v", errs)
	}
}

// TestHoldsByThePlan: the times and deltas an expectation reads are drawn as the plan orders
// them and in no other order: what holds only by the plan's order is refused, what a run may
// record otherwise (parallel branches, background steps, repeat rounds, steps a mayFail block
// may skip, snapshots that may not be taken) is kept.
func TestHoldsByThePlan(t *testing.T) {
	const scenario = `s: schema.#Scenario & {
		steps: [
			{name: "a", exec: argv: ["true"]},
			{name: "par", parallel: [
				{name: "p1", exec: argv: ["true"]},
				{name: "p2", at: "1s", exec: argv: ["true"]},
				{name: "pbg", background: true, exec: argv: ["true"]},
				{name: "pseq", sequence: [{name: "q1", exec: argv: ["true"]}, {name: "q2", exec: argv: ["true"]}]},
			]},
			{name: "b", exec: argv: ["true"]},
			{name: "bg", background: true, exec: argv: ["true"]},
			{name: "c", exec: argv: ["true"]},
			{name: "rep", repeat: {max: 3, until: "r2.exit == 0", steps: [
				{name: "r1", exec: argv: ["true"]},
				{name: "r2", exec: argv: ["true"]},
			]}},
			{name: "mf", mayFail: true, sequence: [{name: "m1", exec: argv: ["true"]}, {name: "m2", exec: argv: ["true"]}]},
			{name: "ok", sequence: [{name: "o1", exec: argv: ["true"]}, {name: "o2", exec: argv: ["true"]}]},
			{await: "bg"},
			{name: "d", exec: argv: ["true"]},
			{name: "before", snapshot: {admin: "http://127.0.0.1:15000", cluster: "c"}},
			{name: "mid", mayFail: true, snapshot: {admin: "http://127.0.0.1:15000", cluster: "c"}},
			{name: "after", snapshot: {admin: "http://127.0.0.1:15000", cluster: "c"}},
			{parallel: [
				{name: "x1", snapshot: {admin: "http://127.0.0.1:15000", cluster: "c"}},
				{name: "x2", snapshot: {admin: "http://127.0.0.1:15000", cluster: "c"}},
			]},
			{name: "last", snapshot: {admin: "http://127.0.0.1:15000", cluster: "c"}},
		]
		setup: [{name: "prep", exec: argv: ["true"]}, {name: "prepbg", background: true, exec: argv: ["true"]}]
		cleanup: [{name: "tidy", exec: argv: ["true"]}]
		expect: [EXPECT]
	}`
	for _, c := range []struct {
		expect  string
		refused bool
	}{
		// Orders the plan guarantees.
		{"started.b >= ended.a", true},
		{"started.d >= ended.a", true},
		{"started.b >= ended.par", true},
		{"started.b >= ended.p1", true},  // a parallel ends when its children have
		{"started.b >= ended.q2", true},  // and a sequence in it when its own have
		{"started.q2 >= ended.q1", true}, // a sequence in a parallel
		{"started.p2 >= started.par", true},
		{"ended.p2 <= ended.par", true},
		{"started.c >= ended.b", true},  // a background step between them
		{"started.bg >= ended.b", true}, // a background step starts after the step before it
		{"started.o2 >= ended.o1", true},
		{"started.r1 >= started.rep && ended.r2 <= ended.rep", true},
		{"started.d >= ended.rep", true},
		{"ended.prepbg <= started.a", true},
		{"ended.prep <= 0 && started.prep <= 0", true},
		{"started.a >= 0", true},
		{"started.tidy >= 0", true}, // after the steps, or 0 when it did not run
		// Orders it does not.
		{"started.p2 >= ended.p1", false}, // two branches of a parallel
		{"started.p1 >= ended.p2", false},
		{"started.q1 >= ended.p1", false},
		{"started.p2 >= started.par + 1", false}, // at: is not drawn (a bound left out is safe)
		{"ended.pbg <= ended.par", false},        // a background branch outlives its block
		{"started.b >= ended.pbg", false},
		{"started.c >= ended.bg", false}, // not joined yet
		{"started.d >= ended.bg", false}, // joined by await (not drawn: a bound left out is safe)
		{"started.bg >= started.c", false},
		{"started.r2 >= ended.r1", false}, // the rounds interleave: r1's last round ends after r2's first starts
		{"started.b > ended.a", false},    // at the same instant
		{"started.b - ended.a < 2", false},
		{"(started.m2 ?? 0) >= ended.a", false}, // m2 may not run: mf may fail before it
		{"started.m2 >= ended.a", false},        // an error when m2 did not run
		{"(started.o2 ?? 0) >= ended.a", true},  // o2 ran in every passing run
		{"started.m2 >= ended.m1", false},       // m2 may not run: reads 0
		{"ended.d <= started.tidy", false},      // cleanup may not have run when judged

		// Outcomes: a step whose failure fails the run passed when the expectations are judged.
		{"outcome.o2 == 'passed'", true},
		{"outcome.q1 == 'passed' && outcome.p2 == 'passed'", true},
		{"outcome.rep == 'passed' && outcome.r1 == 'passed'", true},
		{"outcome.bg == 'passed' && outcome.pbg == 'passed'", true}, // joined by their phase
		{"outcome.prepbg == 'passed'", true},
		{"outcome.m1 == 'passed'", false}, // mf may fail: m1 failed, or m2 was skipped
		{"outcome.m2 == 'passed'", false},
		{"outcome.mf == 'passed'", false},
		{"outcome.mid == 'passed'", false},
		{"outcome.tidy == 'passed'", false}, // cleanup: judged before it ended, or it failed

		// The plain delta compares the first and the last snapshot, before and last here...
		{"delta.upstream_rq_total == last.upstream_rq_total - before.upstream_rq_total", true},
		{`delta.upstream_rq_total == delta("before", "last").upstream_rq_total`, true},
		{`delta("before", "after").upstream_rq_total + delta("after", "last").upstream_rq_total == delta.upstream_rq_total`, true},
		{"delta.upstream_rq_total == after.upstream_rq_total - before.upstream_rq_total", false},
		{"delta.upstream_rq_total == x2.upstream_rq_total - before.upstream_rq_total", false},
		// ...mid may not be taken: reading it fails the expectation.
		{`delta("before", "mid").upstream_rq_total == mid.upstream_rq_total - before.upstream_rq_total`, false},
		{`delta("x1", "x2").upstream_rq_total == x2.upstream_rq_total - x1.upstream_rq_total`, true},
	} {
		t.Run(c.expect, func(t *testing.T) {
			src := strings.Replace(scenario, "EXPECT", quote(c.expect), 1)
			res, err := loadScenarioErr(t, src)
			if err != nil {
				t.Fatalf("load: %v", err)
			}
			errs := interp.CheckCannotFail(res.Scenarios[0])
			if got := len(errs) > 0; got != c.refused {
				t.Fatalf("refused %v, want %v: %v", got, c.refused, errs)
			}
			if c.refused && !strings.Contains(errs[0].Msg, "it cannot fail, so it proves nothing") {
				t.Errorf("message: %s", errs[0].Msg)
			}
		})
	}
}

// TestHoldsByThePlanAssert: an assert step judges what has been recorded before it: a delta
// is its snapshots' difference only when both were taken by then.
func TestHoldsByThePlanAssert(t *testing.T) {
	for _, c := range []struct {
		steps   string
		refused bool
	}{
		{`{name: "before", snapshot: {admin: "http://127.0.0.1:15000", cluster: "c"}},
			{name: "after", snapshot: {admin: "http://127.0.0.1:15000", cluster: "c"}},
			{assert: "delta(\"before\", \"after\").upstream_rq_total == after.upstream_rq_total - before.upstream_rq_total"},`, true},
		{`{name: "before", snapshot: {admin: "http://127.0.0.1:15000", cluster: "c"}},
			{name: "after", snapshot: {admin: "http://127.0.0.1:15000", cluster: "c"}},
			{assert: "delta.upstream_rq_total == after.upstream_rq_total - before.upstream_rq_total"},`, true},
		// A snapshot that may not be taken fails the assert.
		{`{name: "before", mayFail: true, snapshot: {admin: "http://127.0.0.1:15000", cluster: "c"}},
			{name: "after", snapshot: {admin: "http://127.0.0.1:15000", cluster: "c"}},
			{assert: "delta(\"before\", \"after\").upstream_rq_total == after.upstream_rq_total - before.upstream_rq_total"},`, false},
		// The plain delta at the assert compares the snapshots taken by then (before and
		// after), not the first and last of the plan: left drawn apart, so kept.
		{`{name: "before", snapshot: {admin: "http://127.0.0.1:15000", cluster: "c"}},
			{name: "after", snapshot: {admin: "http://127.0.0.1:15000", cluster: "c"}},
			{assert: "delta.upstream_rq_total == after.upstream_rq_total - before.upstream_rq_total"},
			{name: "last", snapshot: {admin: "http://127.0.0.1:15000", cluster: "c"}},`, false},
	} {
		res, err := loadScenarioErr(t, `s: schema.#Scenario & {
			steps: [
				`+c.steps+`
			]
			expect: ["delta.upstream_rq_total > 0"]
		}`)
		if err != nil {
			t.Fatalf("load: %v", err)
		}
		errs := interp.CheckCannotFail(res.Scenarios[0])
		if got := len(errs) > 0; got != c.refused {
			t.Fatalf("%s: refused %v, want %v: %v", c.steps, got, c.refused, errs)
		}
		if c.refused && (!strings.Contains(errs[0].Msg, "assertion") || !strings.HasSuffix(errs[0].Path, ".assert")) {
			t.Errorf("%s: %s: %s", c.steps, errs[0].Path, errs[0].Msg)
		}
	}
}

// TestHoldsOfEveryUntil: a wait's or a repeat's until that holds of every value it reads ends
// the wait at its first look, the repeat after one round, whatever the run did: refused as an
// assert is. One that a wrong outcome breaks is kept.
func TestHoldsOfEveryUntil(t *testing.T) {
	for _, c := range []struct {
		name, step, path string
		refused          bool
	}{
		{"r", `{name: "r", repeat: {max: 3, until: "probe.exit >= 0", steps: [{name: "probe", mayFail: true, exec: argv: ["false"]}]}}`, "steps.1.repeat.until", true},
		{"r", `{name: "r", repeat: {max: 3, until: "probe.exit == 0", steps: [{name: "probe", mayFail: true, exec: argv: ["false"]}]}}`, "", false},
		{"r", `{name: "r", repeat: {max: 3, until: "g.code200 >= 0", steps: [{name: "g", load: {url: "http://127.0.0.1:1", requests: 2}}]}}`, "steps.1.repeat.until", true},
		{"r", `{name: "r", repeat: {max: 3, until: "g.code200 == g.requests", steps: [{name: "g", load: {url: "http://127.0.0.1:1", requests: 2}}]}}`, "", false},
		{"w", `{name: "bg", background: true, exec: argv: ["sleep", "0.1"]}, {name: "w", wait: {until: "bg.exit >= 0 || bg.exit < 0", interval: "10ms"}}`, "steps.2.wait.until", true},
		{"w", `{name: "bg", background: true, exec: argv: ["sleep", "0.1"]}, {name: "w", wait: {until: "bg.exit == 0", interval: "10ms"}}`, "", false},
	} {
		res, err := loadScenarioErr(t, `s: schema.#Scenario & {
			steps: [
				{name: "f", load: {url: "http://127.0.0.1:1", requests: 20}},
				`+c.step+`,
			]
			expect: ["f.code200 > 0 && outcome.`+c.name+` == 'passed'"]
		}`)
		if err != nil {
			t.Fatalf("load: %v", err)
		}
		errs := interp.CheckCannotFail(res.Scenarios[0])
		if got := len(errs) > 0; got != c.refused {
			t.Fatalf("%s: refused %v, want %v: %v", c.step, got, c.refused, errs)
		}
		if c.refused && (!strings.Contains(errs[0].Msg, "the until of a") || !strings.HasSuffix(errs[0].Path, c.path)) {
			t.Errorf("%s: %s: %s", c.step, errs[0].Path, errs[0].Msg)
		}
	}
}

// TestHoldsOfEverySeries: an expectation over a sampled series (its aggregates, its samples,
// its count) that holds whatever the samples are is refused: max is never below min, first
// or last, count is the number of samples, a sample of the steps phase is taken at or after
// its start. One a sample could break is kept.
func TestHoldsOfEverySeries(t *testing.T) {
	const steps = `local: backends: a: {}
		setup: [{parallel: [
			{name: "w", load: {url: "${backends.a.url}/echo", requests: 5}},
			{name: "s", every: "50ms", while: "w", snapshot: backend: "a"},
		]}]
		steps: [{parallel: [
			{name: "f", load: {url: "${backends.a.url}/echo", requests: 20}},
			{name: "g", every: "50ms", while: "f", snapshot: backend: "a"},
		]}]`
	for _, c := range []struct {
		expect  string
		refused bool
	}{
		{"g.max.rq_active >= g.min.rq_active", true},
		{"g.max.rq_total >= g.last.rq_total", true},
		{"g.max.rq_total >= g.first.rq_total && g.min.rq_total <= g.last.rq_total", true},
		{"g.count == len(g.samples)", true},
		{"g.count >= 1", true},
		{"all(g.samples, .at >= 0)", true},
		{"g.max.rq_active < 0 || g.max.rq_active >= 0", true},

		{"g.max.rq_active <= 4", false},
		{"g.min.rq_active == 0", false},
		{"g.count >= 3", false},
		{"g.count <= 4", false},
		{"g.count <= 12", false},
		{"g.count < 100", false},
		{"len(g.samples) <= 30", false},
		{"g.count <= 5000", false}, // past the counts drawn: not judged
		{"g.count >= 1 || g.count > 50", true},
		{"g.last.rq_total >= g.first.rq_total", false}, // a counter reset between two ticks breaks it
		{"all(g.samples, .rq_active <= 4)", false},
		{"any(g.samples, .rq_active > 1)", false},
		{"all(s.samples, .at >= 0)", false}, // sampled in the setup phase: before the steps phase
		{"g.max.rq_total == f.requests", false},
		{"outcome.f == 'passed'", true},
		{"outcome.g == 'passed'", false}, // a sampler may take no sample: skipped
	} {
		t.Run(c.expect, func(t *testing.T) {
			src := "s1: schema.#Scenario & {\n" + steps + "\nexpect: [" + quote(c.expect) + "]\n}"
			checkRefused(t, src, c.refused)
		})
	}
}

// TestHoldsOfEveryRanOrEnded: has(started, x) and has(ended, x), and an outcome compared with
// "running", are judged at their place in the plan: of a step that surely ran to its end
// where the claim is judged (a first step, one before an assert in a sequence, a repeat's
// own step at its until) they hold whatever the run did, and are refused; of a step that may
// still run or not have run there (background, later, in a block that may fail, in cleanup)
// they are kept.
func TestHoldsOfEveryRanOrEnded(t *testing.T) {
	const probe = `{name: "p", mayFail: true, exec: argv: ["false"]}`
	for _, c := range []struct {
		steps, expect string
		refused       bool
	}{
		{probe, "has(ended, 'p')", true},
		{probe, `has(started, "p")`, true},
		{probe, "has(started, 'p') || outcome.p == 'skipped'", true},
		{probe + `, {name: "a", assert: "outcome.p != 'running'"}`, "p.exit == 0", true},
		{probe + `, {name: "a", assert: "has(ended, 'p')"}`, "p.exit == 0", true},
		{`{repeat: {max: 5, until: "outcome.p != 'running'", steps: [` + probe + `]}}`, "p.exit == 0", true},
		{`{repeat: {max: 5, until: "has(ended, 'p')", steps: [` + probe + `]}}`, "p.exit == 0", true},

		{probe, "has(ended, 'p') && p.exit == 0", false},
		{probe, "outcome.p == 'passed'", false},
		{`{name: "bg", background: true, exec: argv: ["sleep", "1"]}, {name: "w", wait: {until: "has(ended, 'bg') || bg.exit == 0", interval: "10ms"}}`, "bg.exit == 0", false},
		{`{name: "bg", background: true, exec: argv: ["sleep", "1"]}, {name: "w", wait: {until: "outcome.bg != 'running'", interval: "10ms"}}`, "bg.exit == 0", false},
		{`{name: "a", assert: "has(started, 'p')"}, ` + probe, "p.exit == 0", false},
		{`{parallel: [` + probe + `, {name: "a", assert: "has(ended, 'p')"}]}`, "p.exit == 0", false},
		{`{repeat: {max: 5, until: "has(ended, 'p')", steps: [{name: "p", background: true, exec: argv: ["false"]}]}}`, "p.exit == 0", false},
		{`{name: "m", mayFail: true, sequence: [{name: "m1", exec: argv: ["false"]}, ` + probe + `]}`, "has(ended, 'p')", false},
		{`{name: "q", exec: argv: ["true"]}], cleanup: [` + probe + `, {name: "a", assert: "has(ended, 'q')"}`, "q.exit == 0", false},
		{`{name: "q", exec: argv: ["true"]}], cleanup: [` + probe + `, {name: "a", assert: "outcome.q != 'running'"}`, "q.exit == 0", false},
		{`{name: "q", exec: argv: ["true"]}], cleanup: [` + probe, "has(ended, 'p')", false},
	} {
		res, err := loadScenarioErr(t, `s: schema.#Scenario & {
			steps: [
				`+c.steps+`
			]
			expect: [`+quote(c.expect)+`]
		}`)
		if err != nil {
			t.Fatalf("%s / %s: load: %v", c.steps, c.expect, err)
		}
		errs := interp.CheckCannotFail(res.Scenarios[0])
		if got := len(errs) > 0; got != c.refused {
			t.Errorf("%s / %s: refused %v, want %v: %v", c.steps, c.expect, got, c.refused, errs)
		}
	}
}

// TestHoldsOfEveryOpenGauge: a circuit breaker's open gauge
// (circuit_breakers.<priority>.<x>_open) is only ever 0 or 1 (Envoy sets it to 1 while the
// breaker is at its limit), so a claim that holds of both, `mid.….rq_pending_open <= 1` or
// `== 1 || == 0`, holds whatever Envoy did: refused, in a snapshot and in a series. Before,
// it was drawn from 0 to 1e9 like any stat and accepted. A claim on which of the two it is
// stays. (The snapshots read an Envoy admin address that no test contacts: vet only.)
func TestHoldsOfEveryOpenGauge(t *testing.T) {
	const steps = `local: backends: a: {}
		steps: [
			{name: "before", snapshot: {admin: "http://127.0.0.1:15000", cluster: "backend"}},
			{parallel: [
				{name: "f", load: {url: "${backends.a.url}/echo", requests: 20}},
				{name: "mid", at: "100ms", snapshot: {admin: "http://127.0.0.1:15000", cluster: "backend"}},
				{name: "g", every: "50ms", while: "f", snapshot: {admin: "http://127.0.0.1:15000", cluster: "backend"}},
			]},
			{name: "after", snapshot: {admin: "http://127.0.0.1:15000", cluster: "backend"}},
		]`
	for _, c := range []struct {
		expect  string
		refused bool
	}{
		{"mid.circuit_breakers.default.rq_pending_open <= 1", true},
		{"mid.circuit_breakers.default.rq_pending_open < 2", true},
		{"mid.circuit_breakers.default.rq_pending_open == 1 || mid.circuit_breakers.default.rq_pending_open == 0", true},
		{"mid.circuit_breakers.high.cx_open + mid.circuit_breakers.default.rq_open <= 2", true},
		{"g.max.circuit_breakers.default.rq_pending_open <= 1", true},
		{"all(g.samples, .circuit_breakers.default.rq_pending_open <= 1)", true},

		{"mid.circuit_breakers.default.rq_pending_open == 1", false},
		{"mid.circuit_breakers.default.rq_pending_open > 0", false},
		{"mid.circuit_breakers.default.rq_pending_open == 0", false},
		{"g.max.circuit_breakers.default.rq_pending_open == 1", false},
		{"mid.upstream_rq_pending_active <= 1", false}, // a count, not an open gauge
	} {
		t.Run(c.expect, func(t *testing.T) {
			src := "s1: schema.#Scenario & {\n" + steps + "\nexpect: [" + quote(c.expect) + ", \"delta.upstream_rq_total == f.requests\"]\n}"
			checkRefused(t, src, c.refused)
		})
	}
}
