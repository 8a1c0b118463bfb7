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
		]`
	for _, c := range []struct {
		expect  string
		refused bool
	}{
		{"f.ok + f.errors == f.requests", true},
		{"f.requests == f.ok + f.errors", true},
		{"f.errors == f.requests - f.ok", true},
		{"f.min <= f.max", true},
		{"f.p50 <= f.p99 && f.avg <= f.max", true},
		{"f.code503 <= f.requests", true},
		{"f.ok <= f.requests", true},
		{"f.code503 == 0 || f.code503 > 0", true},
		{"f.code503 == 0 || 1 == 1", true},
		{"abs(f.code503) >= 0", true},
		{"max(f.code503, 0) >= 0", true},
		{"f.code503 * 0 == 0", true},
		{"not (f.code503 > 0 and false)", true},
		{"f.ok + f.errors == f.requests && g.min <= g.max", true},
		{"len(f.codes) >= 0 || f.ok == f.requests", true},

		{"f.code503 == 0", false},
		{"f.code200 == f.requests", false},
		{"f.code200 + f.code503 == f.requests", false},
		{"f.requests == 20", false},
		{"f.requests == vars.n", false},
		{"f.requests != 13", false},
		{"f.p99 < 60000", false},
		{"f.qps < 1000000", false},
		{"f.code429 < 7", false},
		{"f.requests == g.requests", false},
		{"f.errors > 0 || f.ok > 0", false},
		{`f.ips["127.0.0.5:80"] > 0`, false},
		{`f.codes["-1"] == 0`, false},
		{"f.ok + f.errors == f.requests && before.upstream_rq_total > 0", false}, // reads a snapshot: not judged here
	} {
		t.Run(c.expect, func(t *testing.T) {
			src := "s: schema.#Scenario & {\n" + steps + "\nexpect: [" + quote(c.expect) + "]\n}"
			res, err := loadScenarioErr(t, src)
			if err != nil {
				if c.refused {
					t.Logf("dsl refuses it first: %v", err)
					return
				}
				t.Fatalf("load: %v", err)
			}
			errs := interp.CheckHoldsOfEveryLoad(res.Scenarios[0])
			if got := len(errs) > 0; got != c.refused {
				t.Fatalf("refused %v, want %v: %v", got, c.refused, errs)
			}
			if c.refused && !strings.Contains(errs[0].Msg, "holds of every load fortio could record") {
				t.Errorf("message: %s", errs[0].Msg)
			}
		})
	}
}

func quote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }
