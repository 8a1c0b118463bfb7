package interp_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/schema"
)

// TestNaNSampleHasNoValue: a sample of a series whose source wrote NaN for a stat (a
// Prometheus endpoint's summary quantile with no observations) has no value for it. Its
// aggregates took it as a number: a NaN first sample made max NaN (so !(p.max.p99 >= 1000)
// passed), a NaN later one was skipped by max and min. A read of the stat through an aggregate
// that takes such a sample errs, naming the series and the sample, as a read through .samples
// did; first and last take one sample each.
func TestNaNSampleHasNoValue(t *testing.T) {
	expect := []claim{
		{`!(p.max.q >= 1000)`, "error", `stat q is NaN in sample 1 of series "p"`},
		{`p.max.r < 10`, "error", `stat r is NaN in sample 2 of series "p"`},
		{`p.min.r > 0`, "error", `stat r is NaN in sample 2`},
		{`p.first.q != 3`, "error", `stat q is NaN`},
		{`p.first.r == 5 && p.last.r == 7`, "passed", ""}, // sample 2 is neither
		{`p.max.ok == 3 && p.min.ok == 1`, "passed", ""},
		{`p.count == 3`, "passed", ""},
		{`all(p.samples, .r < 10)`, "error", `stat r is NaN`},
		{`!(max(map(p.samples, .q)) >= 1000)`, "error", `stat q is NaN`},
		{`!(mean(map(p.samples, .r)) > 100)`, "error", `stat r is NaN`},
		{`let xs = p.samples; !(sum(map(xs, .r)) > 100)`, "error", `stat r is NaN`},
		{`p.samples[2].q == 4`, "error", `stat q is NaN`},
	}
	var srcs []string
	for _, e := range expect {
		srcs = append(srcs, `"`+e.src+`"`)
	}
	sc := loadScenario(t, `s: schema.#Scenario & {
	steps: [{parallel: [
		{name: "n", sleep: "3s"},
		{name: "p", every: "1s", while: "n", snapshot: prometheus: "http://127.0.0.1:9/metrics"},
	]}]
	expect: [`+strings.Join(srcs, ", ")+`]
}
`)
	start := time.Unix(1000, 0)
	rec := &interp.Record{StepsStart: start}
	p := &interp.SeriesRecord{Name: "p", Source: "prometheus http://127.0.0.1:9/metrics", Every: time.Second}
	rec.Put("p", "snapshot", true, p)
	for i, g := range []schema.Stats{
		{"q": math.NaN(), "r": 5, "ok": 1},
		{"q": 4, "r": math.NaN(), "ok": 2},
		{"q": 4, "r": 7, "ok": 3},
	} {
		p.Samples = append(p.Samples, &interp.SnapshotRecord{
			Name: "p", Source: p.Source, At: start.Add(time.Duration(i) * time.Second),
			Counters: schema.Stats{}, Gauges: g,
		})
	}
	judged := interp.Rejudge(rec, sc)
	checkClaims(t, &interp.Record{Expectations: judged}, expect)
}
