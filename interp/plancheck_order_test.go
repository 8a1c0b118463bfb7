package interp

import (
	"testing"
	"time"

	"labrun.dev/labrun/dsl"
)

// TestOrderContradictionBackgroundSlack: a step in the background takes its start in its own
// goroutine, which may run after the next step of its sequence started (1.8 ms after it on a
// loaded machine): a genuine record is not refused for that, while a next step that started
// well before it (an edit) still is.
func TestOrderContradictionBackgroundSlack(t *testing.T) {
	ms := func(n float64) time.Duration { return time.Duration(n * float64(time.Millisecond)) }
	for _, tc := range []struct {
		name        string
		background  bool
		prev, next  time.Duration // starts
		prevEnd     time.Duration
		contradicts bool
	}{
		{"background started 1.8ms after the next", true, ms(1.8), ms(0.064), ms(1500), false},
		{"background started 200ms after the next", true, ms(200), ms(0.064), ms(1500), true},
		{"in sequence, next before the end", false, ms(0), ms(5), ms(10), true},
		{"in sequence, next after the end", false, ms(0), ms(10.5), ms(10), false},
	} {
		prev := &dsl.Step{Path: "steps.0", Background: tc.background}
		prevs := []*StepRecord{{Path: "steps.0", Name: "job", Start: tc.prev, End: tc.prevEnd, Outcome: Passed}}
		nexts := []*StepRecord{{Path: "steps.1", Name: "ready", Start: tc.next, End: tc.next + ms(1), Outcome: Passed}}
		got := orderContradiction(prev, prevs, nexts, "")
		if (got != "") != tc.contradicts {
			t.Errorf("%s: contradiction %q, want one: %v", tc.name, got, tc.contradicts)
		}
	}
}
