package interp

import (
	"context"
	"errors"
	"testing"
	"time"
)

// The wait before a timed step is the scheduler's hot path: between the timer and the step's
// start nothing may allocate, or every GC cycle that a 10,000-step run provokes lands on a
// step's start. PreciseClock reuses its timers and spins in the caller's goroutine.
func TestPreciseClockSleepAllocatesNothing(t *testing.T) {
	c := PreciseClock{}
	ctx := context.Background()
	for _, d := range []time.Duration{200 * time.Microsecond, 3 * time.Millisecond} {
		_ = c.Sleep(ctx, time.Now().Add(d), nil) // fill the pool
		if n := testing.AllocsPerRun(20, func() { _ = c.Sleep(ctx, time.Now().Add(d), nil) }); n != 0 {
			t.Errorf("Sleep(%v): %v allocations per wait, want 0", d, n)
		}
	}
}

func TestClockSleepEnds(t *testing.T) {
	for name, c := range map[string]Clock{"precise": PreciseClock{}, "real": RealClock{}} {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			if err := c.Sleep(context.Background(), start.Add(5*time.Millisecond), nil); err != nil {
				t.Fatalf("Sleep: %v", err)
			}
			if got := time.Since(start); got < 5*time.Millisecond {
				t.Errorf("woke after %v, before its time", got)
			}

			cause := errors.New("the run was interrupted")
			ctx, cancel := context.WithCancelCause(context.Background())
			cancel(cause)
			if err := c.Sleep(ctx, time.Now().Add(time.Hour), nil); !errors.Is(err, cause) {
				t.Errorf("Sleep with an ended context = %v, want its cause", err)
			}

			stop := make(chan struct{})
			close(stop)
			if err := c.Sleep(context.Background(), time.Now().Add(time.Hour), stop); !errors.Is(err, errStopped) {
				t.Errorf("Sleep with a closed stop = %v, want errStopped", err)
			}
			// Within the spin (under Early) too.
			if err := c.Sleep(context.Background(), time.Now().Add(time.Millisecond), stop); name == "precise" && !errors.Is(err, errStopped) {
				t.Errorf("spinning Sleep with a closed stop = %v, want errStopped", err)
			}
		})
	}
}
