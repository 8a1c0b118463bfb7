package interp_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"labrun.dev/labrun/driver/fakes"
	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/interp"
)

// BenchmarkTimedSteps runs 200 steps planned 10 ms apart (a parallel block with at offsets,
// each step a snapshot on the fakes) on a real clock and reports the skew — actual start minus
// planned start — at p50, p99 and max. Target: p99 < 2 ms. "precise" is the clock the CLI uses;
// "timer" is plain Go timers, for comparison.
//
// steps=1000 and steps=10000 are the same block, longer (10 s and 100 s per op):
//
//	go test -run '^$' -bench 'TimedSteps/precise/steps=1000$' -benchtime 1x ./interp/
func BenchmarkTimedSteps(b *testing.B) {
	for _, n := range []int{200, 1000, 10000} {
		b.Run(fmt.Sprintf("precise/steps=%d", n), func(b *testing.B) { benchTimedSteps(b, interp.PreciseClock{}, n) })
	}
	b.Run("timer/steps=200", func(b *testing.B) { benchTimedSteps(b, interp.RealClock{}, 200) })
}

func benchTimedSteps(b *testing.B, clock interp.Clock, n int) {
	var steps []string
	for i := range n {
		steps = append(steps, fmt.Sprintf(`{name: "s%d", at: "%dms", snapshot: {admin: "http://127.0.0.1:15000", cluster: "c"}}`, i, i*10))
	}
	src := "package s\n\nimport \"labrun.dev/schema\"\n\ns: schema.#Scenario & {steps: [{parallel: [\n" +
		strings.Join(steps, ",\n") + "]}]}\n"
	dir := b.TempDir()
	p := filepath.Join(dir, "s.cue")
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		b.Fatal(err)
	}
	res, err := dsl.Load([]string{p}, dsl.Options{Target: "fake"}) // the fakes can run every kind
	if err != nil {
		b.Fatal(err)
	}
	sc := res.Scenarios[0]
	var skews []time.Duration
	for b.Loop() {
		w := &fakes.World{}
		rec := interp.New(w.Target(), interp.WithClock(clock)).Run(context.Background(), context.Background(), sc)
		if rec.Outcome != interp.Passed {
			b.Fatalf("%s: %s", rec.Outcome, rec.Error)
		}
		for _, s := range rec.Steps {
			if s.Timed {
				skews = append(skews, s.Skew)
			}
		}
	}
	sort.Slice(skews, func(i, j int) bool { return skews[i] < skews[j] })
	q := func(f float64) float64 {
		return float64(skews[int(f*float64(len(skews)-1))]) / float64(time.Millisecond)
	}
	b.ReportMetric(q(0.5), "p50-skew-ms")
	b.ReportMetric(q(0.99), "p99-skew-ms")
	b.ReportMetric(q(1), "max-skew-ms")
	b.ReportMetric(float64(len(skews)), "steps")
}

// BenchmarkPreciseSleep is PreciseClock.Sleep alone: waits whose targets are 10 ms apart, as
// a timeline's timed steps are, reporting the skew (wake-up minus target) at p50 and p99 and
// the process's CPU per wait. "spin" is the clock spinning its whole early stretch (1.5 ms),
// as before it napped; "nap" is what labrun runs. Alternate them (-count) to compare:
//
//	go test -run '^$' -bench 'PreciseSleep' -benchtime 500x -count 4 ./interp/
func BenchmarkPreciseSleep(b *testing.B) {
	for _, mode := range []string{"spin", "nap"} {
		b.Run(mode, func(b *testing.B) {
			interp.SetSpinOnly(mode == "spin")
			defer interp.SetSpinOnly(false)
			var c interp.PreciseClock
			ctx := context.Background()
			skews := make([]time.Duration, 0, b.N)
			cpu0 := processCPU()
			next := time.Now().Add(10 * time.Millisecond)
			for b.Loop() {
				if err := c.Sleep(ctx, next, nil); err != nil {
					b.Fatal(err)
				}
				skews = append(skews, time.Since(next))
				next = next.Add(10 * time.Millisecond)
			}
			cpu := processCPU() - cpu0
			sort.Slice(skews, func(i, j int) bool { return skews[i] < skews[j] })
			q := func(f float64) float64 {
				return float64(skews[int(f*float64(len(skews)-1))]) / float64(time.Millisecond)
			}
			b.ReportMetric(q(0.5), "p50-skew-ms")
			b.ReportMetric(q(0.99), "p99-skew-ms")
			b.ReportMetric(float64(cpu)/float64(len(skews))/float64(time.Microsecond), "cpu-µs/wait")
		})
	}
}

// processCPU is this process's user and system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
