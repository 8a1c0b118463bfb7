package interp

import (
	"context"
	"sync/atomic"
	"time"
)

// LoadMeter counts a running load's requests as they end, for live progress. A load generator
// that can count (fortio in-process) finds the meter in its context with LoadMeterFrom and
// calls Done for each request; one that cannot (fortio exec'd in a pod) leaves it at zero.
type LoadMeter struct {
	// Planned is the number of requests the step asks for (0: a duration or no limit);
	// PlannedDuration the duration it asks for (0: a request count).
	Planned         int64
	PlannedDuration time.Duration
	Start           time.Time
	done, errors    atomic.Int64
	// counting is set when a generator counts, so that progress can tell "0 so far" from
	// "this generator does not say".
	counting atomic.Bool
}

// Counting records that a generator reports requests to m.
func (m *LoadMeter) Counting() { m.counting.Store(true) }

// Done records one finished request; ok is false for an error (a non-2xx code, a socket error).
func (m *LoadMeter) Done(ok bool) {
	m.done.Add(1)
	if !ok {
		m.errors.Add(1)
	}
}

// Read returns the requests done and the errors among them so far, and whether a generator
// counts at all.
func (m *LoadMeter) Read() (done, errors int64, counting bool) {
	return m.done.Load(), m.errors.Load(), m.counting.Load()
}

type loadMeterKey struct{}

// WithLoadMeter returns ctx carrying m.
func WithLoadMeter(ctx context.Context, m *LoadMeter) context.Context {
	return context.WithValue(ctx, loadMeterKey{}, m)
}

// LoadMeterFrom returns the meter of ctx, or nil.
func LoadMeterFrom(ctx context.Context) *LoadMeter {
	m, _ := ctx.Value(loadMeterKey{}).(*LoadMeter)
	return m
}
