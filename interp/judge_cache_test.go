package interp

import (
	"fmt"
	"reflect"
	"testing"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/schema"
)

// TestEnvMergesEachSnapshotOnce: the environment of expressions gives each snapshot its stats
// in one map (Stats), merged once per judge however often the environment is built (each
// step with ${...} builds it), so that building it for a run of 1,000 snapshots allocates no
// map per snapshot.
func TestEnvMergesEachSnapshotOnce(t *testing.T) {
	rec := &Record{}
	for i := range 1000 {
		rec.Put(fmt.Sprintf("s%d", i), "snapshot", false, &SnapshotRecord{Name: fmt.Sprintf("s%d", i),
			Counters: schema.Stats{"rq_total": float64(i), "x": 1}, Gauges: schema.Stats{"x": 2, "cx_active": 3}})
	}
	j := NewJudge(rec, &dsl.Scenario{})
	first := j.Env()
	if got, want := first["s7"], rec.Snapshot("s7").Stats(); !reflect.DeepEqual(got, want) {
		t.Errorf("s7 = %v, want %v", got, want)
	}
	second := j.Env()
	if reflect.ValueOf(first["s7"]).UnsafePointer() != reflect.ValueOf(second["s7"]).UnsafePointer() {
		t.Error("the second environment merged s7's stats again")
	}
	if n := testing.AllocsPerRun(3, func() { j.Env() }); n > 500 {
		t.Errorf("building the environment of 1,000 snapshots allocates %.0f times, want under 500 (none per snapshot)", n)
	}
}
