package interp_test

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"labrun.dev/labrun/driver/fakes"
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

// TestSamplerLastSampleAtTheEnd: a sampler takes a last sample when the step it samples during
// ends, so a step shorter than every is seen at its start and its end; sampled at those two
// alone, its max, min and samples have no value (they say nothing of what happened in
// between). A 150ms load sampled every 500ms had one sample, at its start, and
// busy.max.rq_active <= 1 passed over it.
func TestSamplerLastSampleAtTheEnd(t *testing.T) {
	for _, tc := range []struct {
		load    string
		samples int
		ends    bool
	}{
		{"150ms", 2, true},
		{"1200ms", 4, false}, // 0, 500ms, 1s, and 1.2s
	} {
		sc := loadScenario(t, `s: schema.#Scenario & {
	steps: [{parallel: [
		{name: "fortio", load: {url: "http://127.0.0.1:1", duration: "`+tc.load+`"}},
		{name: "busy", every: "500ms", while: "fortio", snapshot: {admin: "http://127.0.0.1:15000", cluster: "c"}},
	]}]
	expect: ["busy.max.upstream_rq_active <= 1", "busy.count >= 2"]
}
`)
		synctest.Test(t, func(t *testing.T) {
			w := &fakes.World{Stats: func(source string, n int) schema.StatsSnapshot {
				return schema.StatsSnapshot{Source: source, Counters: schema.Stats{}, Gauges: schema.Stats{"upstream_rq_active": 0}}
			}}
			rec := interp.New(w.Target()).Run(context.Background(), context.Background(), sc)
			ser := rec.SeriesOf("busy")
			if ser == nil || len(ser.Samples) != tc.samples || ser.Ends != tc.ends {
				t.Fatalf("load of %s: series %+v, want %d samples, ends %v", tc.load, ser, tc.samples, tc.ends)
			}
			if last := ser.Samples[len(ser.Samples)-1].At.Sub(rec.StepsStart); last != dur(tc.load) {
				t.Errorf("load of %s: last sample at %v, want at its end", tc.load, last)
			}
			for _, j := range rec.Expectations {
				want := interp.Passed
				if tc.ends && strings.Contains(j.Src, "max") {
					want = interp.Errored
				}
				if j.Outcome != want || want == interp.Errored && !strings.Contains(j.Reason+j.Explanation, "took no sample while") {
					t.Errorf("load of %s: %s: %s, want %s: %s%s", tc.load, j.Src, j.Outcome, want, j.Reason, j.Explanation)
				}
			}
		})
	}
}

func dur(s string) time.Duration { d, _ := time.ParseDuration(s); return d }

// TestSeriesEndsDroppedIsAContradiction: a series of two samples less than every apart is the
// first and the last sample with none in between; a record that does not say so (ends
// removed, which makes busy.max readable again) is refused.
func TestSeriesEndsDroppedIsAContradiction(t *testing.T) {
	start := time.Unix(1000, 0)
	rec := &interp.Record{StepsStart: start, Results: map[string]*interp.Result{}}
	ser := &interp.SeriesRecord{Name: "busy", Every: 500 * time.Millisecond, Ends: true}
	for _, at := range []time.Duration{0, 150 * time.Millisecond} {
		ser.Samples = append(ser.Samples, &interp.SnapshotRecord{At: start.Add(at), Counters: schema.Stats{}, Gauges: schema.Stats{"rq_active": 0}})
	}
	rec.Put("busy", "snapshot", true, ser)
	if err := rec.Contradictions(); err != nil {
		t.Fatalf("as recorded: %v", err)
	}
	ser.Ends = false
	if err := rec.Contradictions(); err == nil || !strings.Contains(err.Error(), "does not say so (ends)") {
		t.Errorf("ends removed: %v, want a contradiction", err)
	}
}
