package schema

import (
	"context"
	"encoding/json"
	"sort"
	"sync"
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

	mu sync.Mutex
	// codes counts responses by code per CodesBucket since Start, for the report's chart.
	codes map[int64]map[string]int
}

// CodesBucket is the width of a bucket of the codes-over-time count.
const CodesBucket = 250 * time.Millisecond

// Code records the code of a request that ended at t ("-1" a socket error), for the report's
// codes-over-time chart.
func (m *LoadMeter) Code(code string, t time.Time) {
	i := int64(t.Sub(m.Start) / CodesBucket)
	if i < 0 {
		i = 0
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.codes == nil {
		m.codes = map[int64]map[string]int{}
	}
	if m.codes[i] == nil {
		m.codes[i] = map[string]int{}
	}
	m.codes[i][code]++
}

// CodesOverTime is one bucket of a load's codes over time; At is its start, from the load's.
type CodesOverTime struct {
	AtNs  time.Duration  `json:"atNs"`
	Codes map[string]int `json:"codes"`
}

// CodesJSON returns the codes over time as JSON (nil when no code was recorded).
func (m *LoadMeter) CodesJSON() []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.codes) == 0 {
		return nil
	}
	var out []CodesOverTime
	for i, c := range m.codes {
		out = append(out, CodesOverTime{AtNs: time.Duration(i) * CodesBucket, Codes: c})
	}
	sort.Slice(out, func(a, b int) bool { return out[a].AtNs < out[b].AtNs })
	b, _ := json.Marshal(out)
	return b
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
