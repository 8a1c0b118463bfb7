package main

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/interp"
)

// progress prints steps as they end. On a terminal it also keeps a status line of the steps
// running now, redrawn in place; otherwise (CI logs) it prints plain lines only.
type progress struct {
	p       *process
	quiet   bool
	mu      sync.Mutex
	running map[*interp.StepRecord]bool
	status  bool // a status line is on screen
}

func newProgress(p *process, quiet bool) *progress {
	return &progress{p: p, quiet: quiet, running: map[*interp.StepRecord]bool{}}
}

func (g *progress) event(e interp.Event) {
	if g.quiet {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	s := e.Step
	if s.Kind == "parallel" || s.Kind == "sequence" {
		return
	}
	g.clearStatus()
	if !e.Ended {
		g.running[s] = true
		if !g.p.IsTerminal && s.Sample <= 1 {
			fmt.Fprintf(g.p.Stdout, "  %9s ▸ %s\n", fmtOffset(s.Start), label(s))
		}
	} else {
		delete(g.running, s)
		if s.Sample == 0 || s.Outcome != interp.Passed {
			mark := map[interp.Outcome]string{interp.Passed: "✓", interp.Failed: "✗", interp.Errored: "!", interp.TimedOut: "⏱", interp.Cancelled: "-"}[s.Outcome]
			line := fmt.Sprintf("  %9s %s %s %s", fmtOffset(s.End), mark, label(s), (s.End - s.Start).Round(time.Millisecond))
			if s.Timed {
				line += fmt.Sprintf(" (skew %s)", s.Skew.Round(10*time.Microsecond))
			}
			if s.Error != "" {
				line += ": " + relError(g.p.Cwd, s.Error)
			}
			for _, w := range s.Warnings {
				line += " ⚠ " + w
			}
			fmt.Fprintln(g.p.Stdout, line)
		}
	}
	g.drawStatus()
}

func label(s *interp.StepRecord) string {
	l := s.Path
	if s.Name != "" {
		l = s.Name
	}
	l += " (" + s.Kind
	if s.Summary != "" {
		l += ": " + dsl.Truncate(s.Summary, 70)
	}
	l += ")"
	if s.Sample > 0 {
		l += fmt.Sprintf(" #%d", s.Sample)
	}
	return l
}

func fmtOffset(d time.Duration) string {
	return fmt.Sprintf("+%.3fs", d.Seconds())
}

func (g *progress) clearStatus() {
	if g.status {
		fmt.Fprint(g.p.Stdout, "\r\033[K")
		g.status = false
	}
}

func (g *progress) drawStatus() {
	if !g.p.IsTerminal || len(g.running) == 0 {
		return
	}
	var names []string
	for s := range g.running {
		n := s.Path
		if s.Name != "" {
			n = s.Name
		}
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Fprintf(g.p.Stdout, "  … running: %s", strings.Join(names, ", "))
	g.status = true
}

func (g *progress) done() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.clearStatus()
}
