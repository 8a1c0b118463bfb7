package interp_test

import (
	"context"
	"slices"
	"testing"
	"testing/synctest"

	"labrun.dev/labrun/driver/fakes"
	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/schema"
)

// throttledCluster is a stand-in for the kube driver under an API server that answers 429
// Too Many Requests to every read: its client retries, telling the step, until the step's
// time runs out.
type throttledCluster struct{ *fakes.World }

const throttled = "the API server answered 429 Too Many Requests to GET /api/v1/namespaces/lab/configmaps/cm, asking to retry after 1s (the client retries it)"

func (c throttledCluster) Get(ctx context.Context, req schema.Get) (any, error) {
	schema.NoteRetriedAnswer(ctx, throttled)
	schema.NoteRetriedAnswer(ctx, throttled)
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestRetriedAnswersWarn: a get whose client kept retrying a 429 until the step's timeout
// said "get timed out after 2s" alone; it warns of the answer (once), which says why.
func TestRetriedAnswersWarn(t *testing.T) {
	sc := loadScenario(t, `
s: schema.#Scenario & {
	steps: [{name: "g", timeout: "2s", get: {kind: "ConfigMap", name: "cm", path: "data"}}]
}`)
	synctest.Test(t, func(t *testing.T) {
		w := &fakes.World{}
		target := w.Target()
		target.Cluster = throttledCluster{w}
		rec := interp.New(target).Run(context.Background(), context.Background(), sc)
		g := stepRecord(t, rec, "g")
		if g.Outcome != interp.TimedOut || !slices.Equal(g.Warnings, []string{throttled}) {
			t.Errorf("step g: %s %q, warnings %q; want a timeout, warning once of the 429", g.Outcome, g.Error, g.Warnings)
		}
	})
}
