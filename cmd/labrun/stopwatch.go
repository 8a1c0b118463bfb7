package main

import (
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/interp"
)

// A process stopped (SIGSTOP, Ctrl-Z's SIGTSTP) and continued later kept none of its
// timeline: a step planned at 2s ran 10s late, a sleep lasted the stop more, a load's
// latencies held it. Before, the run's record and verdict said nothing of it, and claims
// that read no time passed as if the experiment had run as planned. The stop watch sees
// each stop: a tick every stopTick on the monotonic clock, which runs on while the process
// is stopped, and SIGCONT, which the kernel delivers when it is continued. (A machine
// suspended is not seen: the monotonic clock stops with it.)

// stopTick is how often the stop watch looks at the clock: a stop is measured to it, and
// begins at most a tick after the tick before it (a stop within a tick after the steps' end
// is taken as one before it: said, not let pass).
const stopTick = 50 * time.Millisecond

// minStop is the shortest stop said: a process continued that was not stopped (a SIGCONT that
// GNU timeout sends after its signal, kill -CONT) finds the gap since its last tick, which a
// machine too busy to run labrun makes a few hundred milliseconds long.
const minStop = time.Second

// stopSpan is a time the process was stopped, on the monotonic clock.
type stopSpan struct{ from, to time.Time }

// stopWatch records when the process was stopped.
type stopWatch struct {
	mu    sync.Mutex
	spans []stopSpan
	done  chan struct{}
	// last is the last tick.
	last time.Time
	// lastGap is the last tick that came late (from the tick before it to it): a SIGCONT
	// handled after the first tick past the stop finds the stop there.
	lastGap stopSpan
}

// startStopWatch starts watching; stop ends it.
func startStopWatch() *stopWatch {
	w := &stopWatch{done: make(chan struct{}), last: time.Now()}
	cont := make(chan os.Signal, 1)
	signal.Notify(cont, syscall.SIGCONT)
	go func() {
		defer signal.Stop(cont)
		t := time.NewTicker(stopTick)
		defer t.Stop()
		last := time.Now()
		for {
			select {
			case <-w.done:
				return
			case <-t.C:
				now := time.Now()
				w.mu.Lock()
				if now.Sub(last) >= minStop {
					w.lastGap = stopSpan{last, now}
				}
				w.last = now
				w.mu.Unlock()
				last = now
			case <-cont:
				now := time.Now()
				span := stopSpan{last, now}
				w.mu.Lock()
				if g := w.lastGap; now.Sub(g.to) < minStop && g.to.Sub(g.from) > span.to.Sub(span.from) {
					span = g
				}
				// A SIGCONT sent to a process that was not stopped finds no gap.
				if span.to.Sub(span.from) >= minStop {
					w.spans = append(w.spans, span)
				}
				w.lastGap = stopSpan{}
				w.mu.Unlock()
				last = now
			}
		}
	}()
	return w
}

func (w *stopWatch) stop() {
	if w != nil {
		close(w.done)
	}
}

// during returns the stops that overlap from..to.
func (w *stopWatch) during(from, to time.Time) []stopSpan {
	if w == nil {
		return nil
	}
	w.settle()
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []stopSpan
	for _, s := range w.spans {
		if s.to.After(from) && s.from.Before(to) {
			out = append(out, s)
		}
	}
	return out
}

// settle waits (half a second at most) while a stop may have ended that the watch has not
// seen whole yet: no tick for two, or a late tick that no SIGCONT has followed yet. A run
// whose last step a stop held returns as soon as the process is continued, before the watch's
// goroutine has run.
func (w *stopWatch) settle() {
	deadline := time.Now().Add(500 * time.Millisecond)
	for time.Now().Before(deadline) {
		w.mu.Lock()
		now := time.Now()
		pending := now.Sub(w.last) > 2*stopTick || !w.lastGap.to.IsZero() && now.Sub(w.lastGap.to) < minStop
		w.mu.Unlock()
		if !pending {
			return
		}
		time.Sleep(stopTick / 5)
	}
}

// describeStops says the stops of a run that started at start: "stopped for 10.2s, 1.3s into
// the run" (several: joined by "; ").
func describeStops(spans []stopSpan, start time.Time) string {
	s := ""
	for i, sp := range spans {
		if i > 0 {
			s += "; "
		}
		at := sp.from.Sub(start)
		if at < 0 {
			at = 0
		}
		s += fmt.Sprintf("for %s, %s into the run", sp.to.Sub(sp.from).Round(100*time.Millisecond), at.Round(100*time.Millisecond))
	}
	return s
}

// judgeStops says in rec the stops of its run (from start to end): a note for each, and, when
// one came before the last of its steps ended (setup or steps: the cleanup keeps no timeline
// an expectation reads), a run that passed or failed is an error: what its expectations
// judged is not what its plan laid out. Its expectations keep what they found.
func (p *process) judgeStops(rec *interp.Record, start, end time.Time) {
	if p.phases == nil {
		return
	}
	spans := p.phases.stops.during(start, end)
	if len(spans) == 0 {
		return
	}
	// Where the timeline draws each: a step's times count from the steps' start.
	from := rec.StepsStart
	if from.IsZero() {
		from = start
	}
	for _, sp := range spans {
		rec.Stops = append(rec.Stops, interp.StopRecord{At: sp.from.Sub(from), For: sp.to.Sub(sp.from)})
	}
	stepsEnd := time.Duration(-1)
	for _, s := range rec.Steps {
		if s.Phase != dsl.PhaseCleanup && s.End > stepsEnd {
			stepsEnd = s.End
		}
	}
	var spoiling []stopSpan
	for _, sp := range spans {
		if stepsEnd < 0 || sp.from.Before(start.Add(stepsEnd)) {
			spoiling = append(spoiling, sp)
		}
	}
	if len(spoiling) == 0 {
		rec.Notes = append(rec.Notes, fmt.Sprintf("labrun was stopped (SIGSTOP or Ctrl-Z, then continued) %s, during its cleanup, after its steps had ended: their timeline was kept", describeStops(spans, start)))
		return
	}
	what := fmt.Sprintf("labrun was stopped (SIGSTOP or Ctrl-Z, then continued) %s: its steps did not keep the timeline its plan laid out, and every time measured across a stop holds it", describeStops(spoiling, start))
	rec.Notes = append(rec.Notes, what)
	if rec.Outcome == interp.Passed || rec.Outcome == interp.Failed {
		rec.Outcome = interp.Errored
		rec.Error = what + "; what its expectations judged is not the experiment it plans: run it again"
	}
}
