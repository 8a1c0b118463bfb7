package interp_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"labrun.dev/labrun/driver/fakes"
	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/schema"
)

// TestStepPastItsTimeoutIsNotPassed: a driver that returns success after the step's timeout,
// not having seen it (a stand-in exec that sleeps through its context), does not make the step
// passed: it ended past its timeout, which a passed record may not say (replay refuses it).
func TestStepPastItsTimeoutIsNotPassed(t *testing.T) {
	sc := loadScenario(t, `
s: schema.#Scenario & {
	steps: [{name: "x", timeout: "1s", exec: argv: ["slow"]}]
}`)
	synctest.Test(t, func(t *testing.T) {
		w := &fakes.World{
			ExecResult: func(schema.Exec) schema.ExecResult {
				time.Sleep(2 * time.Second) // deaf to the step's context
				return schema.ExecResult{Stdout: "done"}
			},
		}
		rec := interp.New(w.Target()).Run(context.Background(), context.Background(), sc)
		x := stepRecord(t, rec, "x")
		if x.Outcome != interp.TimedOut || rec.Outcome != interp.TimedOut {
			t.Errorf("step x %s (%s), run %s: want timeout", x.Outcome, x.Error, rec.Outcome)
		}
		if err := interp.OutcomeContradictions(rec, sc); err != nil {
			t.Errorf("replay would refuse the run's own record: %v", err)
		}
	})
}

// TestBlockedStepIsAbandonedAtItsTimeout: a step blocked where its context does not reach (a
// stand-in exec that sleeps an hour through it) ends its timeout plus StopGrace after its
// start, as a timeout that says it was abandoned; the steps after it do not run, the cleanup
// does, the run ends, and what the driver records when it returns at last is dropped.
func TestBlockedStepIsAbandonedAtItsTimeout(t *testing.T) {
	sc := loadScenario(t, `
s: schema.#Scenario & {
	steps: [
		{name: "x", timeout: "1s", exec: argv: ["deaf"]},
		{name: "y", exec: argv: ["next"]},
	]
	cleanup: [{name: "c", exec: argv: ["tidy"]}]
}`)
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var ran []string
		w := &fakes.World{
			ExecResult: func(e schema.Exec) schema.ExecResult {
				mu.Lock()
				ran = append(ran, e.Argv[0])
				mu.Unlock()
				if e.Argv[0] == "deaf" {
					time.Sleep(time.Hour) // deaf to the step's context
				}
				return schema.ExecResult{Stdout: "done"}
			},
		}
		start := time.Now()
		rec := interp.New(w.Target()).Run(context.Background(), context.Background(), sc)
		if took, want := time.Since(start), time.Second+interp.StopGrace; took > want {
			t.Errorf("the run took %s: the blocked step held it past its timeout and grace (%s)", took, want)
		}
		x := stepRecord(t, rec, "x")
		if x.Outcome != interp.TimedOut || rec.Outcome != interp.TimedOut || !strings.Contains(x.Error, "abandoned") {
			t.Errorf("step x %s (%s), run %s: want a timeout that says the step was abandoned", x.Outcome, x.Error, rec.Outcome)
		}
		time.Sleep(2 * time.Hour) // the deaf driver returns
		if r := rec.Results["x"]; r != nil {
			t.Errorf("the abandoned step's late result was recorded: %+v", r.Value)
		}
		mu.Lock()
		defer mu.Unlock()
		if strings.Join(ran, ",") != "deaf,tidy" {
			t.Errorf("ran %q, want the deaf step then the cleanup", ran)
		}
	})
}

// TestBlockedChildAbandonedNotItsBlock: a deaf step in a parallel block, interrupted, is
// abandoned StopGrace after the interrupt; the block ends after it, never before (abandoned
// itself at the same moment, the block would leave its child's record to be finished after the
// run's end), whichever of the two the scheduler wakes first.
func TestBlockedChildAbandonedNotItsBlock(t *testing.T) {
	sc := loadScenario(t, `
s: schema.#Scenario & {
	steps: [{name: "p", parallel: [
		{name: "deaf", exec: argv: ["deaf"]},
		{name: "ok", exec: argv: ["ok"]},
	]}]
}`)
	synctest.Test(t, func(t *testing.T) {
		w := &fakes.World{
			ExecResult: func(e schema.Exec) schema.ExecResult {
				if e.Argv[0] == "deaf" {
					time.Sleep(time.Hour)
				}
				return schema.ExecResult{}
			},
		}
		ctx, cancel := context.WithCancelCause(context.Background())
		time.AfterFunc(time.Second, func() { cancel(interp.ErrInterrupted) })
		rec := interp.New(w.Target()).Run(ctx, context.Background(), sc)
		deaf, p := stepRecord(t, rec, "deaf"), stepRecord(t, rec, "p")
		if deaf.Outcome != interp.Cancelled || !strings.Contains(deaf.Error, "abandoned") {
			t.Errorf("deaf: %s (%s), want interrupted, abandoned", deaf.Outcome, deaf.Error)
		}
		if strings.Contains(p.Error, "abandoned") || p.End < deaf.End {
			t.Errorf("block p ended at %s (%s), its child deaf at %s: the block was abandoned before its child", p.End, p.Error, deaf.End)
		}
		time.Sleep(2 * time.Hour) // the deaf driver returns
	})
}

// deafApply is a fake cluster whose apply does not see its context: it takes lag, then
// creates its objects all the same (an API server that answers late, a driver blocked in a
// syscall).
type deafApply struct {
	*fakes.World
	lag time.Duration
}

func (d deafApply) ApplyWith(_ context.Context, objs []schema.Object, files []string, ns string, opts schema.ApplyOptions) (schema.ApplyResult, error) {
	time.Sleep(d.lag)
	return d.World.ApplyWith(context.Background(), objs, files, ns, opts)
}

// TestAbandonedApplyCreatesAfterTheCleanup: an apply abandoned at its timeout that creates its
// object after the automatic cleanup's first pass still has it deleted (the cleanup waits a
// StopGrace for abandoned steps, then removes what they created late); one that has not
// returned by then is named in what the run left behind (it may create after labrun ends).
func TestAbandonedApplyCreatesAfterTheCleanup(t *testing.T) {
	sc := loadScenario(t, `
s: schema.#Scenario & {
	namespaces: ["lab"]
	steps: [{name: "x", timeout: "1s", apply: objects: [{apiVersion: "v1", kind: "ConfigMap", metadata: {name: "late", namespace: "lab"}}]}]
}`)
	for _, tc := range []struct {
		name      string
		lag       time.Duration
		deleted   bool
		leftovers string
	}{
		// abandoned at 1s+StopGrace=6s, the cleanup's first pass then, the object created at 8s
		{"returns late", 8 * time.Second, true, ""},
		{"never returns", time.Hour, false, "step x (abandoned)"},
		{"never returns, --keep", time.Hour, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := &fakes.World{}
				tg := w.Target()
				tg.Cluster = deafApply{w, tc.lag}
				rec := interp.New(tg, interp.WithKeep(strings.HasSuffix(tc.name, "--keep"))).Run(context.Background(), context.Background(), sc)
				x := stepRecord(t, rec, "x")
				if x.Outcome != interp.TimedOut || !strings.Contains(x.Error, "abandoned") {
					t.Fatalf("step x %s (%s): want a timeout, abandoned", x.Outcome, x.Error)
				}
				calls := strings.Join(w.Calls(), "\n")
				if got := strings.Contains(calls, "delete ConfigMap lab/late"); got != tc.deleted {
					t.Errorf("deleted the late object: %v, want %v; calls:\n%s\ncleanup: %q", got, tc.deleted, calls, rec.Cleanup)
				}
				if got := strings.Join(rec.Leftovers, ", "); !strings.Contains(got, tc.leftovers) || (tc.leftovers == "") != (got == "") {
					t.Errorf("leftovers %q, want %q; cleanup: %q", got, tc.leftovers, rec.Cleanup)
				}
				time.Sleep(2 * time.Hour) // the deaf driver returns
			})
		})
	}
}
