package interp_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"labrun.dev/labrun/driver/fakes"
	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/schema"
)

// TestComputedKeyAbsent: a map read by a key computed when the expression runs (b[k],
// delta[vars.stat], b[#]) gave the zero value where the map lacks the key, so a stat nobody
// recorded read 0 and b[k] != 3, !(b[k] > 3) passed; a key written in the expression
// (b.upstream_rq_retry) already erred. The read errs, naming the key, unless the expression
// says the key may be absent (in, ?.[…], get); ?.[…] reads nil there, not 0. The fake target stands in for Envoy's admin.
func TestComputedKeyAbsent(t *testing.T) {
	const absent = `b[k] has no value: b holds no key "upstream_rq_retry"`
	expect := []claim{
		{`let k = "upstream_rq_" + "retry"; b[k] != 3`, "error", absent},
		{`let k = "upstream_rq_" + "retry"; !(b[k] > 3)`, "error", absent},
		{`b["upstream_rq_" + "retry"] != 3`, "error", `holds no key "upstream_rq_retry"`},
		{`let k = "upstream_rq_" + "retry"; delta[k] != 3`, "error", `delta[k] has no value: delta holds no key`},
		{`all(["a", "zz"], b[#] != 7)`, "error", `b[#] has no value: b holds no key "zz"`},
		{`b[vars.k] != 3`, "error", `b[vars.k] has no value: b holds no key "zz"`},
		{`let k = "zz"; (b[k] ?? 0) == 0`, "error", `holds no key "zz"`}, // as b.zz ?? 0 does
		{`let k = "a"; b[k] == 1 && delta[k] == 1`, "passed", ""},
		{`let k = "zz"; k in b ? b[k] == 1 : true`, "passed", ""},
		{`let k = "zz"; !has(b, k) && get(b, k) == nil`, "passed", ""},
		{`let k = "zz"; (b?.[k] ?? 0) == 0`, "passed", ""},
		// ?.[k] is nil where the key is absent, not the items' 0: b?.[k] == 0 held of a
		// misspelled stat.
		{`b?.[vars.k] == 0`, "failed", ""},
		{`b?.[vars.k] == nil && (b?.["a"] ?? 0) == 1`, "passed", ""},
		{`let k = "a"; b?.[k] == 1`, "passed", ""},
		{`let i = 1; [1, b.a][i] == 1`, "passed", ""},
	}
	var srcs []string
	for _, e := range expect {
		srcs = append(srcs, fmt.Sprintf("%q", e.src))
	}
	sc := loadScenario(t, `
s: schema.#Scenario & {
	vars: k: "zz"
	steps: [
		{name: "a0", snapshot: {admin: "http://127.0.0.1:9", cluster: "c"}},
		{name: "b", snapshot: {admin: "http://127.0.0.1:9", cluster: "c"}},
	]
	expect: [`+strings.Join(srcs, ", ")+`]
}`)
	w := &fakes.World{Stats: func(_ string, n int) schema.StatsSnapshot {
		return schema.StatsSnapshot{Counters: schema.Stats{"a": float64(n)}, Gauges: schema.Stats{}}
	}}
	checkClaims(t, interp.New(w.Target()).Run(context.Background(), context.Background(), sc), expect)
}
