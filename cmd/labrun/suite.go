package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/report"
	"labrun.dev/labrun/suite"
)

// Suites: run --parallel N runs the units of an invocation (scenarios, sweep combinations,
// repetitions) N at a time, never two that touch the same thing (package suite works out what
// each touches and schedules them); plan --parallel N prints that schedule. With N above 1,
// each run's output is kept until it ends and printed in one piece; the reports, verdicts and
// exit code are those of a sequential run.

// unitTarget is the target a unit runs on: --target, else the scenario's.
func unitTarget(f string, u *dsl.Unit) string { return or(f, u.Scenario.Target) }

// jobs are the units as the scheduler sees them, and the isolation lint's findings (one per
// position, for the scenarios of the units).
func jobsOf(w *work, target string) ([]suite.Job, []suite.Leak) {
	var jobs []suite.Job
	var leaks []suite.Leak
	seen := map[string]bool{}
	for _, u := range w.units {
		res, ls := suite.Footprint(u.Scenario, unitTarget(target, u))
		jobs = append(jobs, suite.Job{ID: u.ID, Resources: res, Planned: u.Planned.D, NotSeen: suite.NotSeen(u.Scenario, unitTarget(target, u))})
		for _, l := range ls {
			if k := l.Pos.String() + l.Msg; !seen[k] {
				seen[k] = true
				leaks = append(leaks, l)
			}
		}
	}
	return jobs, leaks
}

// printLeaks prints the isolation lint's findings as warnings: what makes runs wait for each
// other (or, without an ephemeral namespace, could change each other's results), and the fix.
func (p *process) printLeaks(leaks []suite.Leak) {
	for _, l := range leaks {
		l.Pos = l.Pos.Rel(p.Cwd)
		fmt.Fprintln(p.Stderr, l.String())
	}
}

// runScheduled runs the work's units through the scheduler (f.parallel at a time) and returns
// each started unit's run by index, and how many units --fail-fast kept from starting. An
// interrupt stops the starts; a single run not started then still gets its report, marked
// interrupted.
func (p *process) runScheduled(runCtx, cleanupCtx context.Context, w *work, f *runFlags, each func(ran)) (map[int]ran, int) {
	parallel := max(f.parallel, 1)
	if len(w.units) > 1 && p.leftoverScan == nil {
		p.leftoverScan = &leftoverScan{}
		defer func() { p.leftoverScan = nil }()
	}
	jobs, leaks := jobsOf(w, f.target)
	if parallel > 1 {
		p.printLeaks(leaks)
		// What plan --parallel says the schedule cannot see, said where the runs run at
		// once too (probe p109): once per scenario, on stderr.
		said := map[string]bool{}
		for i, u := range w.units {
			if len(jobs[i].NotSeen) > 0 && !said[u.Matrix.Scenario] {
				said[u.Matrix.Scenario] = true
				// Wrapped to stderr's terminal as every other warning (diagLines).
				fmt.Fprintln(p.Stderr, p.diagLines(fmt.Sprintf("labrun: warning: %s: not seen by the schedule, which may run it beside a run that shares these files: %s", u.Matrix.Scenario, strings.Join(jobs[i].NotSeen, "; ")), 2))
			}
		}
	}
	var mu sync.Mutex
	results := map[int]ran{}
	record := func(i int, r ran) {
		mu.Lock()
		defer mu.Unlock()
		results[i] = r
		if each != nil && r.rec != nil {
			each(r)
		}
	}
	// Where each run is among them (its number, the runs that failed so far, the time the
	// runs after it should take) for its progress and its matrix line; with N at once, the
	// rest takes a Nth of it.
	var eta runETA
	var started []bool
	status := func(i int) (*matrixStatus, string) {
		mu.Lock()
		defer mu.Unlock()
		var rest []*dsl.Unit
		for j, v := range w.units {
			if j != i && (started == nil || !started[j]) {
				rest = append(rest, v)
			}
		}
		if started != nil {
			started[i] = true
		}
		after := eta.rest(rest) / time.Duration(parallel)
		line := ""
		if eta.runs > 0 {
			line = fmt.Sprintf(" · %d failed", eta.failed)
			if r := eta.rest(append(rest, w.units[i])) / time.Duration(parallel); r > 0 {
				line += " · ETA " + fmtETA(r)
			}
		}
		return &matrixStatus{run: i + 1, runs: len(w.units), failed: eta.failed, rest: after}, line
	}
	started = make([]bool, len(w.units))
	type comboKey struct {
		m *dsl.Matrix
		c int
	}
	failures := map[comboKey]int{} // failed runs by combination, for --fail-fast under --pass-rate
	runUnit := func(i int) bool {
		u := w.units[i]
		q := p
		var out, errs bytes.Buffer
		if parallel > 1 {
			q = p.withStreams(&out, &errs)
		}
		fu := *f // its own place among the runs
		fu.matrixNow = nil
		now, line := status(i)
		if len(w.units) > 1 {
			fu.matrixNow = now
		}
		if u.Matrix.Summarized() && !f.quiet {
			fmt.Fprintln(q.Stdout, wrapLines(fmt.Sprintf("● %s [%d/%d%s]: %s", u.Matrix.Scenario, i+1, len(w.units), line, report.Combo(u.Vars, u.Round, u.Matrix.Count)), q.wrapWidth(), 2))
		}
		began := time.Now()
		r := q.runOne(runCtx, cleanupCtx, u, &fu)
		mu.Lock()
		eta.ran(u, time.Since(began), r.code)
		if parallel > 1 {
			_, _ = p.Stderr.Write(errs.Bytes())
			_, _ = p.Stdout.Write(out.Bytes())
		}
		mu.Unlock()
		record(i, r)
		if !f.failFast || r.code == exitOK || r.code == exitInterrupted {
			return true
		}
		// A failed run its combination's pass rate still allows: the matrix may pass yet.
		if m := u.Matrix; r.code == exitFailed && m.PassRate > 0 {
			mu.Lock()
			defer mu.Unlock()
			key := comboKey{m, u.Combination}
			failures[key]++
			return failures[key] <= m.Count-report.Need(m.PassRate, m.Count)
		}
		return false
	}
	ran := suite.Run(runCtx, jobs, parallel, runUnit)
	notStarted := 0
	for i, ok := range ran {
		if ok {
			continue
		}
		u := w.units[i]
		switch {
		case interrupted(runCtx) && !u.Matrix.Summarized():
			record(i, p.runOne(runCtx, cleanupCtx, u, f))
		case !interrupted(runCtx):
			notStarted++
		}
	}
	return results, notStarted
}

// withStreams is a copy of the process whose runs write to out and errs, with no live
// progress: the runs of a parallel suite print when they end.
// Its secrets are its own: what it prints is hidden with its run's secret vars before it
// reaches the buffer (the process's own redactor is another run's, or none).
func (p *process) withStreams(out, errs io.Writer) *process {
	q := &process{
		Args: p.Args, Stdin: p.Stdin, Getenv: p.Getenv, Cwd: p.Cwd,
		TermWidth: p.TermWidth, Signals: p.Signals, ReleaseSignals: p.ReleaseSignals, Targets: p.Targets,
		leftoverScan: p.leftoverScan, sources: p.sources, phases: p.phases, afterRun: p.afterRun,
		shownOnTerminal: p.IsTerminal || p.shownOnTerminal,
	}
	q.Stdout, q.Stderr = q.secrets.wrap(out), q.secrets.wrap(errs)
	return q
}

// writeSchedule prints the schedule of a suite: each run's lane and planned start, and what
// it waits for; then the isolation lint's findings.
func writeSchedule(w io.Writer, cwd string, units []*dsl.Unit, jobs []suite.Job, parallel int, slots []suite.Slot) {
	order := make([]int, len(slots))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		sa, sb := slots[order[a]], slots[order[b]]
		if sa.Start != sb.Start {
			return sa.Start < sb.Start
		}
		return sa.Order < sb.Order
	})
	var end time.Duration
	var sum time.Duration
	for i, s := range slots {
		end = max(end, s.End)
		sum += jobs[i].Planned
	}
	if sum > 0 {
		fmt.Fprintf(w, "schedule: %d run%s, at most %d at once; planned ≥%s (one at a time: ≥%s)\n", len(units), plural(len(units)), parallel, fmtSpan(end), fmtSpan(sum))
	} else {
		fmt.Fprintf(w, "schedule: %d run%s, at most %d at once, in the order they start (how long each takes is known only when it runs)\n", len(units), plural(len(units)), parallel)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  LANE\tSTART\tRUN\tPLANNED\tWAITS FOR")
	for _, i := range order {
		s := slots[i]
		waits := "-"
		if s.After >= 0 {
			waits = fmt.Sprintf("%s: %s", units[s.After].ID, strings.ReplaceAll(s.Why, cwd+"/", ""))
		}
		fmt.Fprintf(tw, "  %d\t≥%s\t%s\t%s\t%s\n", s.Lane, fmtSpan(s.Start), units[i].ID, units[i].Planned, waits)
	}
	tw.Flush()
	// What each run holds that another could want (fixed namespaces, mesh-wide hosts,
	// addresses), once per scenario.
	seen := map[string]bool{}
	for i, u := range units {
		var held []string
		for _, r := range jobs[i].Resources {
			if !r.Shared {
				held = append(held, r.Key)
			}
		}
		key := u.Matrix.Scenario + "\x00" + strings.Join(held, ",")
		if len(held) == 0 || seen[key] {
			continue
		}
		seen[key] = true
		fmt.Fprintf(w, "  %s holds: %s\n", u.Matrix.Scenario, strings.Join(held, ", "))
	}
	// What the schedule cannot see, once per scenario: two runs sharing such a file run at
	// once, each maybe judged on what the other wrote (probe p109).
	said := map[string]bool{}
	for i, u := range units {
		if len(jobs[i].NotSeen) == 0 || said[u.Matrix.Scenario] {
			continue
		}
		said[u.Matrix.Scenario] = true
		fmt.Fprintf(w, "  %s: not seen by the schedule, which may run it beside a run that shares these files: %s\n", u.Matrix.Scenario, strings.Join(jobs[i].NotSeen, "; "))
	}
}

func fmtSpan(d time.Duration) string {
	return dsl.Offset{D: d, Exact: true}.String()[1:]
}
