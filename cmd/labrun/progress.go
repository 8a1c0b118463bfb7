package main

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/schema"
)

// progress prints steps as they end, each sample of an every step as it arrives, and the
// automatic cleanup as it removes things. On a terminal it also keeps a status block of the
// steps running now (elapsed/planned time, a load's requests done/total, its current QPS and
// errors), redrawn in place every redrawEvery; otherwise (CI logs) it prints plain lines only.
// Colours only on a terminal, and never when NO_COLOR is set.
type progress struct {
	p     *process
	quiet bool
	color bool
	width int

	mu      sync.Mutex
	running []*runningStep
	lines   int // status lines on screen
	// planned is each step's planned duration from the plan (sleep, a load with a duration).
	planned map[string]time.Duration
	// watch are the stats the expectations read: a sample line shows these.
	watch []string
	// cleanupNow is the automatic cleanup's current action, shown in the status block.
	cleanupNow string

	stop chan struct{}
	wg   sync.WaitGroup
	now  func() time.Time
}

// maxStatusLines bounds the status block: one taller than the screen cannot be redrawn.
const maxStatusLines = 12

// redrawEvery is how often the status block is redrawn on a terminal.
const redrawEvery = 200 * time.Millisecond

type runningStep struct {
	s     *interp.StepRecord
	began time.Time
	meter *schema.LoadMeter
	// lastDone and lastAt are the meter reading of the last rate update; qps the rate since.
	lastDone int64
	lastAt   time.Time
	qps      float64
}

func newProgress(p *process, quiet bool) *progress {
	g := &progress{p: p, quiet: quiet, planned: map[string]time.Duration{}, now: time.Now, width: 120}
	g.color = p.IsTerminal && p.Getenv("NO_COLOR") == ""
	if c, err := strconv.Atoi(p.Getenv("COLUMNS")); err == nil && c >= 20 {
		g.width = c
	}
	if p.IsTerminal && !quiet {
		g.stop = make(chan struct{})
		g.wg.Add(1)
		go g.tick()
	}
	return g
}

// forScenario reads what progress shows of sc: planned durations, and the stats its
// expectations read.
func (g *progress) forScenario(sc *dsl.Scenario) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, e := range dsl.PlanOf(sc).Entries {
		if e.Duration != nil {
			g.planned[e.Path] = *e.Duration
		}
	}
	seen := map[string]bool{}
	for _, e := range sc.Expect {
		for _, r := range e.Refs {
			if r.Stat != "" && !seen[r.Stat] {
				seen[r.Stat] = true
				g.watch = append(g.watch, r.Stat)
			}
		}
	}
}

func (g *progress) tick() {
	defer g.wg.Done()
	t := time.NewTicker(redrawEvery)
	defer t.Stop()
	for {
		select {
		case <-g.stop:
			return
		case <-t.C:
			g.mu.Lock()
			g.redraw()
			g.mu.Unlock()
		}
	}
}

func (g *progress) event(e interp.Event) {
	if g.quiet {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case e.Cleanup != "":
		if e.CleanupDone {
			mark := g.paint("32", "✓")
			if strings.HasPrefix(e.Cleanup, "failed") {
				mark = g.paint("31", "!")
			}
			g.println(fmt.Sprintf("  %9s %s cleanup: %s", "", mark, e.Cleanup))
			g.cleanupNow = ""
			g.redraw()
		} else {
			g.setCleanup(e.Cleanup)
		}
		return
	case e.Step == nil:
		return
	case e.Load != nil:
		for _, r := range g.running {
			if r.s == e.Step {
				r.meter, r.lastAt = e.Load, g.now()
			}
		}
		return
	case e.Sample != nil:
		g.println(fmt.Sprintf("  %9s %s %s #%d %s", fmtOffset(e.Step.Start), g.paint("36", "·"), stepName(e.Step), e.Step.Sample, g.sampleValues(e.Sample)))
		g.redraw()
		return
	}
	s := e.Step
	if s.Kind == "parallel" || s.Kind == "sequence" {
		return
	}
	g.setCleanup("")
	if !e.Ended {
		g.running = append(g.running, &runningStep{s: s, began: g.now()})
		if !g.p.IsTerminal && s.Sample <= 1 {
			g.println(fmt.Sprintf("  %9s ▸ %s", fmtOffset(s.Start), label(s)))
		}
		g.redraw()
		return
	}
	for i, r := range g.running {
		if r.s == s {
			g.running = append(g.running[:i], g.running[i+1:]...)
			break
		}
	}
	if s.Sample == 0 || s.Outcome != interp.Passed {
		mark := map[interp.Outcome]string{interp.Passed: g.paint("32", "✓"), interp.Failed: g.paint("31", "✗"), interp.Errored: g.paint("31", "!"), interp.TimedOut: g.paint("33", "⏱"), interp.Cancelled: g.paint("33", "-")}[s.Outcome]
		line := fmt.Sprintf("  %9s %s %s %s", fmtOffset(s.End), mark, label(s), (s.End - s.Start).Round(time.Millisecond))
		if s.Phase == dsl.PhaseCleanup {
			line = fmt.Sprintf("  %9s %s cleanup: %s %s", fmtOffset(s.End), mark, label(s), (s.End - s.Start).Round(time.Millisecond))
		}
		if s.Timed {
			line += fmt.Sprintf(" (skew %s)", s.Skew.Round(10*time.Microsecond))
		}
		if s.Error != "" {
			line += ": " + relError(g.p.Cwd, s.Error)
		}
		for _, w := range s.Warnings {
			line += " ⚠ " + w
		}
		g.println(line)
	}
	g.redraw()
}

func (g *progress) setCleanup(what string) {
	g.cleanupNow = what
	g.redraw()
}

// sampleValues is a compact view of a sample: the stats the expectations read (or, when they
// read none of its stats, its first few counters).
func (g *progress) sampleValues(smp *interp.SnapshotRecord) string {
	st := smp.Stats()
	var names []string
	for _, n := range g.watch {
		if _, ok := st[n]; ok {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		for n := range smp.Counters {
			names = append(names, n)
		}
		sort.Strings(names)
	}
	const most = 6
	var parts []string
	for i, n := range names {
		if i == most {
			parts = append(parts, fmt.Sprintf("(+%d more)", len(names)-most))
			break
		}
		parts = append(parts, n+"="+dsl.FormatValue(st[n]))
	}
	if len(parts) == 0 {
		return "(no stats)"
	}
	return strings.Join(parts, " ")
}

// println prints a line above the status block.
func (g *progress) println(line string) {
	g.clear()
	fmt.Fprintln(g.p.Stdout, line)
}

// clear removes the status block from the screen.
func (g *progress) clear() {
	if g.lines == 0 {
		return
	}
	// Up to the block's first line, then erase to the end of the screen.
	if g.lines > 1 {
		fmt.Fprintf(g.p.Stdout, "\033[%dA", g.lines-1)
	}
	fmt.Fprint(g.p.Stdout, "\r\033[J")
	g.lines = 0
}

// redraw draws the status block: one line per running step, and the cleanup's action.
func (g *progress) redraw() {
	if !g.p.IsTerminal || g.quiet {
		return
	}
	if g.p.TermWidth != nil {
		if w := g.p.TermWidth(); w >= 20 {
			g.width = w
		}
	}
	var lines []string
	now := g.now()
	for i, r := range g.running {
		if i == maxStatusLines {
			lines = append(lines, fmt.Sprintf("  … and %d more running", len(g.running)-maxStatusLines))
			break
		}
		lines = append(lines, g.statusLine(r, now))
	}
	if g.cleanupNow != "" {
		lines = append(lines, "  "+g.paint("33", "…")+" cleanup: "+g.cleanupNow)
	}
	g.clear()
	if len(lines) == 0 {
		return
	}
	for i, l := range lines {
		l = fitWidth(l, g.width-1)
		if i < len(lines)-1 {
			l += "\n"
		}
		fmt.Fprint(g.p.Stdout, l)
	}
	g.lines = len(lines)
}

func (g *progress) statusLine(r *runningStep, now time.Time) string {
	s := r.s
	elapsed := now.Sub(r.began)
	var b strings.Builder
	spin := []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}[int(now.UnixMilli()/100)%10]
	fmt.Fprintf(&b, "  %s %s %s", g.paint("36", spin), stepName(s), g.paint("2", "("+s.Kind+")"))
	planned := g.planned[s.Path]
	if r.meter != nil && r.meter.PlannedDuration > 0 {
		planned = r.meter.PlannedDuration
	}
	if planned > 0 {
		fmt.Fprintf(&b, " %s/%s %s", fmtSecs(elapsed), fmtSecs(planned), bar(float64(elapsed)/float64(planned), 12))
	} else {
		fmt.Fprintf(&b, " %s", fmtSecs(elapsed))
	}
	if r.meter != nil {
		done, errs, counting := r.meter.Read()
		if counting {
			if d := now.Sub(r.lastAt); d >= 500*time.Millisecond || r.qps == 0 && d >= redrawEvery {
				r.qps = float64(done-r.lastDone) / d.Seconds()
				r.lastDone, r.lastAt = done, now
			}
			if r.meter.Planned > 0 {
				fmt.Fprintf(&b, " · %d/%d req", done, r.meter.Planned)
				if planned == 0 {
					fmt.Fprintf(&b, " %s", bar(float64(done)/float64(r.meter.Planned), 12))
				}
			} else {
				fmt.Fprintf(&b, " · %d req", done)
			}
			fmt.Fprintf(&b, " · %.0f qps", r.qps)
			errText := fmt.Sprintf("%d errors", errs)
			if errs == 1 {
				errText = "1 error"
			}
			if errs > 0 {
				errText = g.paint("31", errText)
			}
			b.WriteString(" · " + errText)
		}
	}
	return b.String()
}

func bar(frac float64, width int) string {
	frac = max(0, min(1, frac))
	n := int(frac*float64(width) + 0.5)
	return "[" + strings.Repeat("█", n) + strings.Repeat("·", width-n) + "]"
}

func fmtSecs(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + "s"
}

// fitWidth cuts a status line to the terminal's width, not counting colour escapes.
func fitWidth(s string, width int) string {
	visible, i := 0, 0
	for i < len(s) {
		if s[i] == '\033' {
			j := strings.IndexByte(s[i:], 'm')
			if j < 0 {
				break
			}
			i += j + 1
			continue
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		if visible == width {
			return s[:i] + "\033[0m"
		}
		visible++
		i += size
	}
	return s
}

func (g *progress) paint(code, s string) string {
	if !g.color {
		return s
	}
	return "\033[" + code + "m" + s + "\033[0m"
}

func stepName(s *interp.StepRecord) string {
	if s.Name != "" {
		return s.Name
	}
	return s.Path
}

func label(s *interp.StepRecord) string {
	l := stepName(s) + " (" + s.Kind
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

// done stops the redraws and removes the status block.
func (g *progress) done() {
	if g.stop != nil {
		close(g.stop)
		g.wg.Wait()
		g.stop = nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.running = nil
	g.cleanupNow = ""
	g.clear()
}

// liveProgress holds the progress on screen, for notices printed from other goroutines (the
// interrupt handler).
type liveProgress struct {
	mu sync.Mutex
	g  *progress
}

func (l *liveProgress) set(g *progress) {
	l.mu.Lock()
	l.g = g
	l.mu.Unlock()
}

// notice runs print with the status block cleared; the next redraw brings it back.
func (l *liveProgress) notice(print func()) {
	l.mu.Lock()
	g := l.g
	l.mu.Unlock()
	if g == nil {
		print()
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.clear()
	print()
}
