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
	// The scenario's line of the status block: its name, the steps of its plan that have
	// ended of all of them, the time since it started of its planned span.
	scenario string
	steps    int
	ended    map[string]bool
	span     dsl.Offset
	began    time.Time
	// matrix is where this run is in a matrix of runs (nil for a single run).
	matrix *matrixStatus

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
	g := &progress{p: p, quiet: quiet, planned: map[string]time.Duration{}, ended: map[string]bool{}, now: time.Now, width: 120}
	g.began = g.now()
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

// forScenario reads what progress shows of sc: its steps, planned durations, and the stats its
// expectations read; m is where the run is in a matrix of runs (nil: a single run).
func (g *progress) forScenario(sc *dsl.Scenario, m *matrixStatus) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.matrix = m
	plan := dsl.PlanOf(sc)
	g.scenario, g.span = sc.Name, plan.Span()
	for _, e := range plan.Entries {
		if e.Duration != nil {
			g.planned[e.Path] = *e.Duration
		}
		if countedStep(e.Kind, e.Every) {
			g.steps++
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
			if e.CleanupBad {
				mark = g.paint("31", "!")
			}
			g.println(g.wrap(fmt.Sprintf("  %9s %s cleanup: %s", "", mark, e.Cleanup), 14))
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
		g.println(g.wrap(fmt.Sprintf("  %9s %s %s #%d %s", fmtOffset(e.Step.Start), g.paint("36", "·"), stepName(e.Step), e.Step.Sample, g.sampleValues(e.Sample)), 14))
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
			g.println(g.wrap(fmt.Sprintf("  %9s ▸ %s", fmtOffset(s.Start), label(s)), 14))
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
	if s.Sample == 0 {
		g.ended[s.Path] = true
	}
	if s.Outcome == interp.Skipped {
		// A cleanup step the cleanup's end kept from starting: no time of its own, only why.
		g.println(g.wrap(fmt.Sprintf("  %9s %s %s: %s skipped: %s", fmtOffset(s.End), g.paint("33", "-"), s.Phase, label(s), relError(g.p.Cwd, s.Error)), 14))
		g.redraw()
		return
	}
	if s.Sample == 0 || s.Outcome != interp.Passed {
		mark := map[interp.Outcome]string{interp.Passed: g.paint("32", "✓"), interp.Failed: g.paint("31", "✗"), interp.Errored: g.paint("31", "!"), interp.TimedOut: g.paint("33", "⏱"), interp.Cancelled: g.paint("33", "-")}[s.Outcome]
		line := fmt.Sprintf("  %9s %s %s %s", fmtOffset(s.End), mark, label(s), (s.End - s.Start).Round(time.Millisecond))
		if s.Phase == dsl.PhaseCleanup || s.Phase == dsl.PhaseCatch {
			line = fmt.Sprintf("  %9s %s %s: %s %s", fmtOffset(s.End), mark, s.Phase, label(s), (s.End - s.Start).Round(time.Millisecond))
		}
		if s.Timed {
			line += fmt.Sprintf(" (skew %s)", s.Skew.Round(10*time.Microsecond))
		}
		if s.Error != "" {
			line += ": " + relError(g.p.Cwd, s.Error)
		}
		for _, w := range s.Warnings {
			line += " ⚠ " + printable(w)
		}
		g.println(g.wrap(line, 14))
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
		parts = append(parts, n+"="+dsl.ShowValue(st[n], "")) // a quantile at 4 digits, a count whole
	}
	if len(parts) == 0 {
		return "(no stats)"
	}
	return strings.Join(parts, " ")
}

// wrap breaks a line printed above the status block at spaces to the terminal's width (see
// wrapLines), continuations indented by indent; not on a terminal, lines stay whole.
func (g *progress) wrap(line string, indent int) string {
	if !g.p.IsTerminal && !g.p.shownOnTerminal {
		return line
	}
	width := g.width
	if g.p.TermWidth != nil {
		if w := g.p.TermWidth(); w >= 20 {
			width = w
		}
	}
	return wrapLines(line, width-1, indent)
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
	if g.scenario != "" && (len(g.running) > 0 || g.cleanupNow != "") {
		lines = append(lines, fitFields(g.headerFields(now), g.width-1))
	}
	for i, r := range g.running {
		if i == maxStatusLines {
			lines = append(lines, fmt.Sprintf("  … and %d more running", len(g.running)-maxStatusLines))
			break
		}
		lines = append(lines, fitFields(g.statusFields(r, now), g.width-1))
	}
	if g.cleanupNow != "" {
		lines = append(lines, "  "+g.paint("33", "…")+" cleanup: "+g.cleanupNow)
	}
	g.clear()
	if len(lines) == 0 {
		return
	}
	for i, l := range lines {
		if i < len(lines)-1 {
			l += "\n"
		}
		fmt.Fprint(g.p.Stdout, l)
	}
	g.lines = len(lines)
}

// A status line is made of fields, each with a priority: on a narrow terminal the least
// important go first (the bar, the rate, the kind), so that the step's name, its requests and
// its errors survive.
type field struct {
	text string
	prio int // 0: kept always; higher: dropped sooner
}

// fitFields joins fields, dropping the least important until the line fits width columns;
// what still does not fit is cut.
func fitFields(fs []field, width int) string {
	join := func(fs []field) string {
		var b strings.Builder
		for _, f := range fs {
			b.WriteString(f.text)
		}
		return b.String()
	}
	for {
		s := join(fs)
		if visibleLen(s) <= width {
			return s
		}
		worst := -1
		for i, f := range fs {
			if f.prio > 0 && (worst < 0 || f.prio >= fs[worst].prio) {
				worst = i
			}
		}
		if worst < 0 {
			return fitWidth(s, width)
		}
		fs = append(fs[:worst:worst], fs[worst+1:]...)
	}
}

// visibleLen counts the columns of s, not counting colour escapes.
func visibleLen(s string) int {
	n, _ := visible(s, -1)
	return n
}

// visible walks the runes of s that show, colour escapes skipped: it counts them, and says
// where the one after the first width begins (len(s) when there are no more; width < 0: all).
func visible(s string, width int) (n, at int) {
	for i := 0; i < len(s); {
		if s[i] == '\033' {
			j := strings.IndexByte(s[i:], 'm')
			if j < 0 {
				break
			}
			i += j + 1
			continue
		}
		if n == width {
			return n, i
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		n++
		i += size
	}
	return n, len(s)
}

// headerFields are the scenario's line: "▶ quickstart · run 7/18 · 1 failed · step 4/9 ·
// 2.0s/≥3.0s · ETA ≥1.0s".
func (g *progress) headerFields(now time.Time) []field {
	fs := []field{{"  " + g.paint("1", g.scenario), 0}}
	if m := g.matrix; m != nil {
		fs = append(fs, field{fmt.Sprintf(" · run %d/%d", m.run, m.runs), 0})
		failed := fmt.Sprintf("%d failed", m.failed)
		prio := 3
		if m.failed > 0 {
			failed, prio = g.paint("31", failed), 0
		}
		fs = append(fs, field{" · " + failed, prio})
	}
	if g.steps > 0 {
		fs = append(fs, field{fmt.Sprintf(" · step %d/%d", min(len(g.ended)+1, g.steps), g.steps), 2})
	}
	elapsed := now.Sub(g.began)
	// The planned end: the plan's span, or later when a running step's own plan says so (a
	// load of N requests at a rate).
	end := g.span.D
	for _, r := range g.running {
		planned := g.planned[r.s.Path]
		if r.meter != nil && r.meter.PlannedDuration > 0 {
			planned = r.meter.PlannedDuration
		}
		if r.meter != nil && r.meter.Planned > 0 {
			// A load of N requests: at the pace so far.
			if done, _, counting := r.meter.Read(); counting && done > 0 {
				planned = max(planned, time.Duration(float64(now.Sub(r.began))*float64(r.meter.Planned)/float64(done)))
			}
		}
		end = max(end, r.began.Sub(g.began)+planned)
	}
	approx := "≥"
	if g.span.Exact && end == g.span.D {
		approx = "~"
	}
	if end > 0 {
		fs = append(fs, field{fmt.Sprintf(" · %s/%s%s", fmtSecs(elapsed), approx, fmtSecs(end)), 4})
	} else {
		fs = append(fs, field{" · " + fmtSecs(elapsed), 4})
	}
	left := end - elapsed
	if m := g.matrix; m != nil && m.rest > 0 {
		fs = append(fs, field{" · matrix ETA " + approx + fmtETA(max(left, 0)+m.rest), 1})
	} else if left > 0 {
		fs = append(fs, field{" · ETA " + approx + fmtETA(left), 1})
	}
	return fs
}

// fmtETA is a remaining time, coarser as it grows: 4.2s, 37s, 3m20s, 1h05m.
func fmtETA(d time.Duration) string {
	switch {
	case d < 10*time.Second:
		return fmtSecs(d)
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()+0.5))
	case d < time.Hour:
		d = d.Round(10 * time.Second)
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	d = d.Round(time.Minute)
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

// countedStep says whether a plan entry counts as a step of the scenario's line: blocks and
// samplers do not (a sampler's samples print lines of their own).
func countedStep(kind string, every time.Duration) bool {
	return every == 0 && kind != "parallel" && kind != "sequence" && kind != "repeat"
}

// statusFields are a running step's line: "⠇ fortio (load) 2.8s/6.0s [██████······] · 140/300
// req · 47 qps · 11 errors".
func (g *progress) statusFields(r *runningStep, now time.Time) []field {
	s := r.s
	elapsed := now.Sub(r.began)
	spin := []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}[int(now.UnixMilli()/100)%10]
	fs := []field{{fmt.Sprintf("  %s %s", g.paint("36", spin), stepName(s)), 0}, {" " + g.paint("2", "("+s.Kind+")"), 5}}
	planned := g.planned[s.Path]
	if r.meter != nil && r.meter.PlannedDuration > 0 {
		planned = r.meter.PlannedDuration
	}
	if planned > 0 {
		fs = append(fs, field{fmt.Sprintf(" %s/%s", fmtSecs(elapsed), fmtSecs(planned)), 2}, field{" " + bar(float64(elapsed)/float64(planned), 12), 4})
	} else {
		fs = append(fs, field{" " + fmtSecs(elapsed), 2})
	}
	if r.meter != nil {
		done, errs, counting := r.meter.Read()
		if counting {
			if d := now.Sub(r.lastAt); d >= 500*time.Millisecond || r.qps == 0 && d >= redrawEvery {
				r.qps = float64(done-r.lastDone) / d.Seconds()
				r.lastDone, r.lastAt = done, now
			}
			if r.meter.Planned > 0 {
				fs = append(fs, field{fmt.Sprintf(" · %d/%d req", done, r.meter.Planned), 1})
				if planned == 0 {
					fs = append(fs, field{" " + bar(float64(done)/float64(r.meter.Planned), 12), 4})
				}
			} else {
				fs = append(fs, field{fmt.Sprintf(" · %d req", done), 1})
			}
			fs = append(fs, field{fmt.Sprintf(" · %.0f qps", r.qps), 3})
			errText := fmt.Sprintf("%d errors", errs)
			if errs == 1 {
				errText = "1 error"
			}
			if errs > 0 {
				errText = g.paint("31", errText)
			}
			fs = append(fs, field{" · " + errText, 0})
		}
	}
	return fs
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
	if _, at := visible(s, width); at < len(s) {
		return s[:at] + "\033[0m"
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
	return or(s.Label, s.Path)
}

func label(s *interp.StepRecord) string {
	l := stepName(s) + " (" + s.Kind
	if s.Cluster != "" {
		// A scenario of several clusters: the same step read on another cluster reads alike.
		l += " on " + s.Cluster
	}
	if s.Summary != "" {
		// Cut at 70 characters, the quickstart's perconn load read "→
		// http://gslb.lab.internal:184…" at 80 columns, its port 18480 cut; the lines are
		// wrapped at spaces now, and only a summary longer than a few lines is cut.
		l += ": " + dsl.Truncate(s.Summary, 200)
	}
	l += ")"
	if s.Sample > 0 {
		l += fmt.Sprintf(" #%d", s.Sample)
	}
	if s.Read != "" {
		l += " read " + s.Read
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

// matrixStatus is where a run is in its matrix: its number of all, the runs that failed so
// far, and the planned time of the runs after it (scaled by how long the runs so far took
// against their plan).
type matrixStatus struct {
	run, runs, failed int
	rest              time.Duration
}
