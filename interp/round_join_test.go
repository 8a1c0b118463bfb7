package interp_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"labrun.dev/labrun/driver/fakes"
	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/schema"
)

// TestLaterRoundSamplerIsJoined: a sampler in a repeat whose first round's run was still
// taking its last sample when the second round started shares its state with the second
// round's run; the phase's end joined that state, ended by the first, and judged the
// expectations while the second still sampled: its last sample came into the record after
// them (seen on local: "the record says it read g.count = 5; its data read 6", replay refusing
// the run's own record). The phase now waits for every background run it started.
func TestLaterRoundSamplerIsJoined(t *testing.T) {
	sc := loadScenario(t, `
s: schema.#Scenario & {
	local: backends: a: {}
	steps: [
		{name: "r", repeat: {max: 2, until: "g.count >= 4", steps: [
			{name: "l", background: true, load: {url: "${backends.a.url}/echo", duration: "150ms", qps: 20, connections: 1}},
			{name: "g", every: "100ms", while: "l", snapshot: backend: "a"},
			{await: "l"},
		]}},
	]
	expect: ["g.count >= 4"]
}`)
	synctest.Test(t, func(t *testing.T) {
		w := &fakes.World{StepTime: 30 * time.Millisecond} // a sample takes a while
		rec := interp.New(w.Target()).Run(context.Background(), context.Background(), sc)
		if rec.Outcome != interp.Passed {
			t.Fatalf("run %s (%s)", rec.Outcome, rec.Error)
		}
		judged := rec.Expectations[0].Values["g.count"]
		series, ok := rec.Results["g"].Value.(*schema.SeriesRecord)
		if !ok {
			t.Fatalf("g recorded %T", rec.Results["g"].Value)
		}
		if n := len(series.Samples); judged != float64(n) && judged != n {
			t.Errorf("the expectation read g.count = %v, the record holds %d samples", judged, n)
		}
	})
}
