package interp

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"time"
)

// Clock is the interpreter's time source. Tests run under testing/synctest with the real clock.
type Clock interface {
	Now() time.Time
	// Sleep blocks until t has come (nil), ctx has ended (its cause) or stop is closed
	// (errStopped; a nil stop never is). It runs in the caller's goroutine: a wait costs no
	// goroutine and no channel of its own.
	Sleep(ctx context.Context, t time.Time, stop <-chan struct{}) error
}

// errStopped is what Clock.Sleep returns when its stop channel was closed.
var errStopped = errors.New("wait stopped")

// RealClock is the Clock of the time package: one timer per wait. It is the one to use in
// testing/synctest bubbles, whose timers must not outlive the bubble.
type RealClock struct{}

// Now returns time.Now().
func (RealClock) Now() time.Time { return time.Now() }

// Sleep waits on a timer for t.
func (RealClock) Sleep(ctx context.Context, t time.Time, stop <-chan struct{}) error {
	d := time.Until(t)
	if d <= 0 {
		return nil
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	return waitTimer(ctx, tm, stop)
}

func waitTimer(ctx context.Context, tm *time.Timer, stop <-chan struct{}) error {
	select {
	case <-tm.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-stop:
		return errStopped
	}
}

// PreciseClock is the real clock with sub-millisecond wake-ups. Go's timers fire up to about a
// millisecond late on some machines (here: 0.6 ms at the median, 1.1 ms at p99, measured), so
// Sleep sets its timer early, then (on Linux) naps in nanosleep, whose high-resolution timer
// is tens of microseconds late, until spinLast before the target, and spins only that last
// stretch, yielding the processor as it goes. Spinning the whole early stretch was a quarter
// of a 10,000-step run's CPU; napping costs a third of that CPU (BENCHMARKS.md).
// Its timers are reused across waits (a pool), so a timed step allocates nothing to wait.
// The CLI uses it. Not for testing/synctest bubbles, where time stands still while a goroutine
// spins (and a pooled timer would cross bubbles).
type PreciseClock struct {
	// Early is how long before the target the timer fires (default 1.5 ms).
	Early time.Duration
}

// Now returns time.Now().
func (PreciseClock) Now() time.Time { return time.Now() }

// spinLast is how long before its target PreciseClock.Sleep stops napping and spins.
const spinLast = 100 * time.Microsecond

// spinOnly makes PreciseClock spin the whole early stretch, as it did before it napped (for
// the benchmark that compares the two).
var spinOnly bool

// timers are PreciseClock's reusable timers. Since Go 1.23 a stopped or fired timer can be
// Reset with no stale value left in its channel.
var timers = sync.Pool{New: func() any {
	tm := time.NewTimer(time.Hour)
	tm.Stop()
	return tm
}}

// Sleep waits until t, within microseconds.
func (c PreciseClock) Sleep(ctx context.Context, t time.Time, stop <-chan struct{}) error {
	early := c.Early
	if early == 0 {
		early = 1500 * time.Microsecond
	}
	if d := time.Until(t) - early; d > 0 {
		tm := timers.Get().(*time.Timer)
		tm.Reset(d)
		err := waitTimer(ctx, tm, stop)
		tm.Stop()
		timers.Put(tm)
		if err != nil {
			return err
		}
	}
	done := ctx.Done()
	if d := time.Until(t) - spinLast; d > 0 && !spinOnly {
		// Not cancellable, but shorter than Early: a stop or an end waits at most that long;
		// one that came before is seen first.
		select {
		case <-done:
			return context.Cause(ctx)
		case <-stop:
			return errStopped
		default:
		}
		nap(d)
	}
	for time.Now().Before(t) {
		select {
		case <-done:
			return context.Cause(ctx)
		case <-stop:
			return errStopped
		default:
			runtime.Gosched()
		}
	}
	return nil
}
