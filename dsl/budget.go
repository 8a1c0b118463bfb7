package dsl

import (
	"fmt"
	"strings"
	"time"
)

// Budget bounds the evaluation of a Load. CUE cannot be interrupted, so a Load over budget
// returns at once with an Errors naming what was being evaluated, and leaves the evaluation
// running in a goroutine of its own: the caller is expected to exit (the CLI does, with code 2).
// A zero field is no bound.
type Budget struct {
	// Time is the wall time the whole Load may take.
	Time time.Duration
	// Memory is how many bytes the heap may grow by during the Load (sampled every 10 ms).
	Memory uint64
}

// DefaultBudget is what the CLI allows unless told otherwise (--eval-timeout, --eval-memory):
// about three times what one package of a thousand scenario files needs on a slow 2-core
// machine (3.5 s, 400 MB).
var DefaultBudget = Budget{Time: 10 * time.Second, Memory: 1 << 30}

// stage is what the loader is evaluating, for the message of a Load over budget.
type stage struct {
	pos  Pos
	what string
}

// setStage records what the loader starts evaluating.
func (l *loader) setStage(pos Pos, format string, args ...any) {
	l.stage.Store(&stage{pos: pos, what: fmt.Sprintf(format, args...)})
}

// stagePos is the position of the current stage (the file or directory being built).
func (l *loader) stagePos() Pos {
	if st := l.stage.Load(); st != nil {
		return st.pos
	}
	return Pos{}
}

// loadWithin runs l over paths within budget b; over budget it returns the problem.
func (l *loader) loadWithin(paths []string, b Budget) *Error {
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, p := range paths {
			l.loadPath(p)
		}
	}()
	var timeout <-chan time.Time
	if b.Time > 0 {
		t := time.NewTimer(b.Time)
		defer t.Stop()
		timeout = t.C
	}
	var tick <-chan time.Time
	heap := func() uint64 {
		n, _ := heapObjects() // unknown: 0, never over budget
		return n
	}
	base := heap()
	if b.Memory > 0 {
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-done:
			return nil
		case <-timeout:
			return l.overBudget(fmt.Sprintf("its time budget of %v (--eval-timeout)", b.Time))
		case <-tick:
			if h := heap(); h > base && h-base > b.Memory {
				return l.overBudget(fmt.Sprintf("its memory budget of %s (--eval-memory)", FormatBytes(b.Memory)))
			}
		}
	}
}

func (l *loader) overBudget(limit string) *Error {
	st := l.stage.Load()
	if st == nil {
		st = &stage{what: "starting"}
	}
	return &Error{Pos: st.pos, Msg: fmt.Sprintf("evaluation exceeded %s while %s", limit, st.what)}
}

// FormatBytes prints n in the largest binary unit that divides it (1GiB, 512MiB, 100KiB).
func FormatBytes(n uint64) string {
	for _, u := range []struct {
		name string
		size uint64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.size && n%u.size == 0 {
			return fmt.Sprintf("%d%s", n/u.size, u.name)
		}
	}
	return fmt.Sprintf("%dB", n)
}

// ParseBytes reads a size such as 2GiB, 512MiB, 1G or 1000000 (bytes).
func ParseBytes(s string) (uint64, error) {
	units := []struct {
		suffix string
		size   uint64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30},
		{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"B", 1}}
	mult := uint64(1)
	num := strings.TrimSpace(s)
	for _, u := range units {
		if strings.HasSuffix(num, u.suffix) {
			num, mult = strings.TrimSuffix(num, u.suffix), u.size
			break
		}
	}
	var n uint64
	if _, err := fmt.Sscanf(num, "%d", &n); err != nil || fmt.Sprint(n) != num {
		return 0, fmt.Errorf("expected a size such as 2GiB or 512MiB, got %q", s)
	}
	return n * mult, nil
}
