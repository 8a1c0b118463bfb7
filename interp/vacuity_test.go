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
	const steps = `vars: n: 20
		steps: [
			{name: "f", load: {url: "http://127.0.0.1:1", requests: 20}},
			{name: "g", load: {url: "http://127.0.0.1:1", requests: 20}},
			{name: "before", snapshot: {admin: "http://127.0.0.1:15000", cluster: "c"}},
			{name: "after", snapshot: {admin: "http://127.0.0.1:15000", cluster: "c"}},
			{name: "log", logs: {file: "/dev/null"}},
			{name: "probe", mayFail: true, exec: argv: ["true"]},
			{name: "probe2", mayFail: true, exec: argv: ["true"]},
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
		{"f.requests == 20", false, false},
		{"f.requests == vars.n", false, false},
		{"f.code503 == 0 || vars.n == 20", false, false}, // holds with n = 20, not with --var n=5
		{"f.requests != 13", false, false},
		{"f.p99 < 60000", false, false},
		{"f.qps < 1000000", false, false},
		{"f.code429 < 7", false, false},
		{"f.requests == g.requests", false, false},
		{"f.errors > 0 || f.ok > 0", false, false},
		{`f.ips["127.0.0.5:80"] > 0`, false, false},
		{`f.codes["-1"] == 0`, false, false},
		{"f.ok + f.errors == f.requests && before.upstream_rq_total > 0", false, false},

		// Stats, drawn apart from one another: only what holds whatever they are is refused.
		{"delta.upstream_rq_total == 0 || delta.upstream_rq_total > 0", true, false},
		{"abs(delta.upstream_rq_total) >= 0", true, false},
		{`delta("before", "after").upstream_cx_total * 0 == 0`, true, false},
		{"max(before.upstream_rq_total, after.upstream_rq_total) >= min(before.upstream_rq_total, after.upstream_rq_total)", true, false},
		{"delta.upstream_rq_total == 0 || f.code503 >= 0 || f.code503 < 0", true, false},
		{"delta.upstream_rq_total == 0 || delta.upstream_rq_total > 0", false, true}, // a reset makes it negative
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
		{"outcome.probe == 'passed'", false, false},
		{"outcome.probe in ['passed', 'failed']", false, false}, // an error, a skip break it
		{"outcome.probe != 'skipped'", false, false},
		{`error.probe contains "Forbidden"`, false, false},
		{`error.probe == ""`, false, false},
		{"outcome.probe == outcome.probe2", false, false},
		{"started.prep >= 0", false, false}, // a setup step starts before the steps
		{"ended.f - started.f < 5", false, false},
		{"started.g >= ended.f", false, false}, // the plan orders them; the samples do not
		{"ended.f < 60", false, false},
		{"probe.exit == 0 || f.code503 > 0", false, false},
		{"probe.exit == 0 || probe.exit != 0 || f.code503 > 0", true, false},
	} {
		t.Run(c.expect, func(t *testing.T) {
			src := "s: schema.#Scenario & {\n" + steps + "\nexpect: [" + quote(c.expect) + "]\n}"
			if c.allow {
				src = strings.Replace(src, "vars:", `allowReset: ["upstream_rq_total"]
		vars:`, 1)
			}
			res, err := loadScenarioErr(t, src)
			if err != nil {
				if c.refused {
					t.Logf("dsl refuses it first: %v", err)
					return
				}
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

func quote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }

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
