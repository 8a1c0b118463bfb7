package interp_test

import (
	"context"
	"sync/atomic"
	"testing"

	"labrun.dev/labrun/driver/fakes"
	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/schema"
)

// countingCluster counts the cluster's decodes of objects (Objects).
type countingCluster struct {
	*fakes.World
	objects atomic.Int32
}

func (c *countingCluster) Objects(ctx context.Context, objs []schema.Object, files []string, ns string) ([]schema.ObjectRef, error) {
	c.objects.Add(1)
	return c.World.Objects(ctx, objs, files, ns)
}

// TestStepTakesTheGuardsDecode: an apply's (a delete's) objects are decoded by the namespace
// guard before anything runs and again right before the step; the step takes that decode to
// note the objects it names rather than ask the cluster a third time (the apply's write
// decodes them once more, in the driver).
func TestStepTakesTheGuardsDecode(t *testing.T) {
	sc := loadScenario(t, `
s: schema.#Scenario & {
	namespaces: ["lab"]
	steps: [
		{apply: {objects: [{apiVersion: "v1", kind: "ConfigMap", metadata: name: "a"}]}},
		{delete: {objects: [{apiVersion: "v1", kind: "ConfigMap", metadata: name: "a"}]}},
		{wait: {absent: {apiVersion: "v1", kind: "ConfigMap", metadata: name: "a"}}},
	]
}`)
	c := &countingCluster{World: &fakes.World{}}
	tg := c.World.Target()
	tg.Cluster = c
	rec := interp.New(tg).Run(context.Background(), context.Background(), sc)
	if rec.Outcome != interp.Passed {
		t.Fatalf("run: %s %s", rec.Outcome, rec.Error)
	}
	if n := c.objects.Load(); n != 4 {
		t.Errorf("the cluster decoded the steps' objects %d times, want 4 (the guard before the run and before each step)", n)
	}
}
