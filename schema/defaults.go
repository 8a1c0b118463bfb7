package schema

import "time"

// The default bounds of steps that set no timeout of their own (by their TimeoutClass) and of
// the cleanup phase. The runner applies them; vet checks a scenario's timeline against them.
const (
	DefaultStepTimeout    = 5 * time.Minute
	DefaultWaitTimeout    = 5 * time.Minute
	DefaultAssertTimeout  = 30 * time.Second
	DefaultCleanupTimeout = 2 * time.Minute
)

// Poller is a kind that reads again every interval until something holds (a wait, a config
// step's until): an interval at or beyond its timeout reads once.
type Poller interface {
	// PollInterval is the pause between reads, and the field it is written in ("" when
	// the step does not poll).
	PollInterval() (time.Duration, string)
}
