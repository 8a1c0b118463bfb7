package interp_test

import (
	"testing"
	"time"

	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/schema"
)

// TestSeriesExpressions: dotted Envoy stat names work inside closures over samples, as they do
// outside; every sample has .at (seconds from the start of the steps); has() asks whether a
// stat is there; find(...).at says when a predicate first held.
func TestSeriesExpressions(t *testing.T) {
	sc := loadScenario(t, `s: schema.#Scenario & {
	steps: [{parallel: [
		{name: "n", sleep: "3s"},
		{name: "od", every: "1s", while: "n", snapshot: {admin: "http://127.0.0.1:15000", cluster: "c"}},
	]}]
	expect: [
		"findIndex(od.samples, .outlier_detection.ejections_active == 1) == 2",
		"find(od.samples, .outlier_detection.ejections_active == 1).at == 2",
		"od.samples[1].at == 1",
		"has(od.last, \"outlier_detection.ejections_active\") && !has(od.last, \"x\")",
		"od.max.outlier_detection.ejections_active == 1",
	]
}
`)
	start := time.Unix(1000, 0)
	rec := &interp.Record{StepsStart: start}
	od := &interp.SeriesRecord{Name: "od", Every: time.Second}
	rec.Put("od", "snapshot", true, od)
	for i, v := range []float64{0, 0, 1, 1} {
		od.Samples = append(od.Samples, &interp.SnapshotRecord{
			At: start.Add(time.Duration(i) * time.Second), Counters: schema.Stats{},
			Gauges: schema.Stats{"outlier_detection.ejections_active": v},
		})
	}
	for _, jd := range interp.Rejudge(rec, sc) {
		if jd.Outcome != interp.Passed {
			t.Errorf("%s: %s %s%s", jd.Src, jd.Outcome, jd.Explanation, jd.Reason)
		}
	}
}
