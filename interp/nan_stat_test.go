package interp_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"labrun.dev/labrun/driver/fakes"
	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/schema"
)

// TestNaNStatHasNoValue: a Prometheus endpoint writes NaN for a value it does not have (a
// summary's quantile with no observations, an exporter's gauge it could not read). Read as a
// number, NaN made !(p99 >= 1000) and p99 != 3 PASS over a latency nobody measured (probe
// s4: a python http.server serving `temp NaN`). A stat read that is NaN now has no value: the
// expectation errs, saying so.
func TestNaNStatHasNoValue(t *testing.T) {
	expect := []claim{
		{`!(b.p99 >= 1000)`, "error", `stat p99 is NaN in snapshot "b"`},
		{`b.p99 != 3`, "error", `stat p99 is NaN`},
		{`b.ok == 2`, "passed", ""},
		{`delta.c == 0`, "error", `stat c is NaN`},
		{`delta.n == 3`, "passed", ""},
		// Through a let (a read of the source, not of one snapshot by name).
		{`let s = b; !(s.p99 >= 1000)`, "error", `stat p99 is NaN`},
	}
	var srcs []string
	for _, e := range expect {
		srcs = append(srcs, fmt.Sprintf("%q", e.src))
	}
	sc := loadScenario(t, `
s: schema.#Scenario & {
	steps: [
		{name: "a", snapshot: prometheus: "http://127.0.0.1:9/metrics"},
		{name: "b", snapshot: prometheus: "http://127.0.0.1:9/metrics"},
	]
	expect: [`+strings.Join(srcs, ", ")+`]
}`)
	w := &fakes.World{Stats: func(_ string, n int) schema.StatsSnapshot {
		return schema.StatsSnapshot{
			Counters: schema.Stats{"c": math.NaN(), "n": float64(3 * n)},
			Gauges:   schema.Stats{"p99": math.NaN(), "ok": 2},
		}
	}}
	checkClaims(t, interp.New(w.Target()).Run(context.Background(), context.Background(), sc), expect)
}
