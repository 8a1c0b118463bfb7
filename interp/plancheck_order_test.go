package interp

import (
	"testing"
	"time"

	"labrun.dev/labrun/dsl"
)

// TestOrderContradictionBackgroundSlack: a sampler takes its start in its own goroutine once
// its while step has started, which its sequence does not wait for: it may start after the next
// step (1.8 ms after it on a loaded machine), and a genuine record is not refused for that, while
// a next step that started well before it (an edit) still is. A background step the sequence
// waits for (de95c36) is held to its order within a millisecond, as a step in sequence is.
func TestOrderContradictionBackgroundSlack(t *testing.T) {
	ms := func(n float64) time.Duration { return time.Duration(n * float64(time.Millisecond)) }
	for _, tc := range []struct {
		name        string
		background  bool
		every       time.Duration
		prev, next  time.Duration // starts
		prevEnd     time.Duration
		contradicts bool
	}{
		{"sampler started 1.8ms after the next", true, ms(100), ms(1.8), ms(0.064), ms(1500), false},
		{"sampler started 200ms after the next", true, ms(100), ms(200), ms(0.064), ms(1500), true},
		{"background started 1.8ms after the next", true, 0, ms(1.8), ms(0.064), ms(1500), true},
		{"background started 0.5ms after the next", true, 0, ms(0.5), ms(0.064), ms(1500), false},
		{"in sequence, next before the end", false, 0, ms(0), ms(5), ms(10), true},
		{"in sequence, next after the end", false, 0, ms(0), ms(10.5), ms(10), false},
	} {
		prev := &dsl.Step{Path: "steps.0", Background: tc.background, Every: tc.every}
		prevs := []*StepRecord{{Path: "steps.0", Name: "job", Start: tc.prev, End: tc.prevEnd, Outcome: Passed}}
		nexts := []*StepRecord{{Path: "steps.1", Name: "ready", Start: tc.next, End: tc.next + ms(1), Outcome: Passed}}
		got := orderContradiction(prev, nil, prevs, nexts, "")
		if (got != "") != tc.contradicts {
			t.Errorf("%s: contradiction %q, want one: %v", tc.name, got, tc.contradicts)
		}
	}
}
