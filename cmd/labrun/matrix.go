package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/report"
)

// Experiments as science: --count N runs each scenario N times, --sweep var=a,b,c runs it once
// per value (repeatable: the cartesian product), the two combined run every combination N
// times. Each run is an ordinary run (setup, steps, cleanup, its own report); the vars of a
// combination go through the same mechanism as --var, so CUE fields change with them. A
// summary per scenario is written beside the reports (report.WriteSummary):
// <time>_<scenario>.summary.{md,html,json}, plus one SVG plot per value an expectation reads
// against each swept var.

// sweep is one --sweep flag: a var and its values.
type sweep struct {
	name   string
	values []string
}

func parseSweeps(flags []string) ([]sweep, error) {
	var out []sweep
	seen := map[string]bool{}
	for _, f := range flags {
		name, vals, ok := strings.Cut(f, "=")
		if !ok || name == "" || vals == "" {
			return nil, &exitError{exitInvalid, fmt.Sprintf("--sweep %q: expected name=v1,v2,...", f)}
		}
		if seen[name] {
			return nil, &exitError{exitInvalid, fmt.Sprintf("--sweep %s given twice: give its values in one flag", name)}
		}
		seen[name] = true
		out = append(out, sweep{name, strings.Split(vals, ",")})
	}
	return out, nil
}

// combinations is the cartesian product of the sweeps (one empty combination without sweeps).
func combinations(sweeps []sweep) []map[string]string {
	combos := []map[string]string{{}}
	for _, s := range sweeps {
		var next []map[string]string
		for _, c := range combos {
			for _, v := range s.values {
				m := map[string]string{}
				for k, x := range c {
					m[k] = x
				}
				m[s.name] = v
				next = append(next, m)
			}
		}
		combos = next
	}
	return combos
}

// runMatrix runs every combination of the sweeps count times.
func (p *process) runMatrix(args []string, f *runFlags, base dsl.Options) error {
	sweeps, err := parseSweeps(f.sweeps)
	if err != nil {
		return err
	}
	if f.count < 1 {
		return &exitError{exitInvalid, fmt.Sprintf("--count %d: expected 1 or more", f.count)}
	}
	if f.passRate < 0 || f.passRate > 1 {
		return &exitError{exitInvalid, fmt.Sprintf("--pass-rate %g: expected a fraction from 0 to 1", f.passRate)}
	}
	for _, s := range sweeps {
		if _, ok := base.Vars[s.name]; ok {
			return &exitError{exitInvalid, fmt.Sprintf("--sweep %s and --var %s: give one", s.name, s.name)}
		}
	}
	if f.reportDir == "" {
		return &exitError{exitInvalid, "--count and --sweep write a summary: give --report-dir"}
	}
	runCtx, cleanupCtx, stop := p.runContexts()
	defer stop()
	m, err := p.matrix(runCtx, cleanupCtx, args, f, base, sweeps)
	if err != nil {
		return err
	}
	code := worse(m.code, p.writeSummaries(m, f, sweeps))
	if code != exitOK {
		return &exitError{code: code}
	}
	return nil
}

// matrixResult is what a matrix ran: a summary per scenario (in the order they first ran) and
// each run's record, in the summary's order of runs.
type matrixResult struct {
	sums  map[string]*report.Summary
	order []string
	recs  map[string][]*interp.Record
	// code is the worst of the interrupted and invalid exits (failed runs are the summary's).
	code int
}

// matrix runs every combination of the sweeps f.count times: each combination loads args
// again with its vars set (as --var), so the CUE fields computed from them change.
func (p *process) matrix(runCtx, cleanupCtx context.Context, args []string, f *runFlags, base dsl.Options, sweeps []sweep) (*matrixResult, error) {
	m := &matrixResult{sums: map[string]*report.Summary{}, recs: map[string][]*interp.Record{}}
	// The tally collects each run's report path, for the summary's links.
	if f.tally == nil {
		f.tally = &runTally{}
	}
	dir := f.reportDir
	if dir != "" && !filepath.IsAbs(dir) {
		dir = filepath.Join(p.Cwd, dir)
	}
	for _, combo := range combinations(sweeps) {
		opts := base
		opts.Vars = map[string]string{}
		for k, v := range base.Vars {
			opts.Vars[k] = v
		}
		for k, v := range combo {
			opts.Vars[k] = v
		}
		scenarios, err := p.loadSelected(args, opts, f)
		if err != nil {
			return nil, err
		}
		if err := p.checkRunFlags(scenarios, f); err != nil {
			return nil, err
		}
		for round := 1; round <= f.count; round++ {
			for _, sc := range scenarios {
				if runCtx.Err() != nil {
					break
				}
				if len(combo) > 0 || f.count > 1 {
					fmt.Fprintf(p.Stdout, "● %s: %s\n", sc.Name, report.Combo(combo, round, f.count))
				}
				reports := len(f.tally.reports)
				rec, c := p.runOne(runCtx, cleanupCtx, sc, f)
				if c == exitInterrupted || c == exitInvalid {
					m.code = worse(m.code, c)
				}
				if rec == nil {
					continue
				}
				s := m.sums[sc.Name]
				if s == nil {
					s = &report.Summary{Version: 1, Scenario: sc.Name, Count: f.count, PassRate: f.passRate}
					for _, sw := range sweeps {
						s.Sweeps = append(s.Sweeps, sw.name)
					}
					m.sums[sc.Name] = s
					m.order = append(m.order, sc.Name)
				}
				mr := report.SummaryRun{Vars: combo, Round: round, Outcome: rec.Outcome, Expectations: map[string]interp.Outcome{}, Values: map[string]any{}}
				if len(f.tally.reports) > reports {
					// The tally has the Markdown report relative to the working directory;
					// the summary links the HTML one, relative to itself.
					md := f.tally.reports[len(f.tally.reports)-1]
					if !filepath.IsAbs(md) {
						md = filepath.Join(p.Cwd, md)
					}
					if rel, err := filepath.Rel(dir, strings.TrimSuffix(md, ".md")+".html"); err == nil {
						mr.Report = filepath.ToSlash(rel)
					}
				}
				j := interp.NewJudge(rec, sc)
				for _, e := range sc.Expect {
					for k, v := range j.Values(e) {
						mr.Values[k] = v
					}
				}
				for _, jd := range rec.Expectations {
					mr.Expectations[jd.Src] = jd.Outcome
				}
				if rec.Outcome == interp.Passed {
					s.Passed++
				}
				s.Runs = append(s.Runs, mr)
				m.recs[sc.Name] = append(m.recs[sc.Name], rec)
			}
		}
	}
	for _, name := range m.order {
		s := m.sums[name]
		need := 1.0
		if f.passRate > 0 {
			need = f.passRate
		}
		s.Verdict = "passed"
		if float64(s.Passed)/float64(len(s.Runs)) < need {
			s.Verdict = "failed"
		}
	}
	return m, nil
}

// writeSummaries writes each scenario's summary into the report directory and prints where;
// it returns exitFailed when a summary's verdict is failed, exitInfra when one cannot be written.
func (p *process) writeSummaries(m *matrixResult, f *runFlags, sweeps []sweep) int {
	dir := f.reportDir
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(p.Cwd, dir)
	}
	var vars []report.SweepVar
	for _, sw := range sweeps {
		vars = append(vars, report.SweepVar{Name: sw.name, Values: sw.values})
	}
	stamp := time.Now().UTC().Format("20060102T150405Z")
	code := exitOK
	for _, name := range m.order {
		s := m.sums[name]
		if s.Verdict != "passed" {
			code = worse(code, exitFailed)
		}
		paths, err := report.WriteSummary(dir, stamp, s, vars)
		if err != nil {
			fmt.Fprintf(p.Stderr, "labrun: %s: writing the summary: %v\n", name, err)
			code = worse(code, exitInfra)
			continue
		}
		fmt.Fprintf(p.Stdout, "SUMMARY %s: %d of %d runs passed (%s) — %s\n", name, s.Passed, len(s.Runs), passNeed(f.passRate), relPath(p.Cwd, paths[0]))
		if !f.quiet {
			fmt.Fprintf(p.Stdout, "  html:   %s\n", relPath(p.Cwd, paths[1]))
		}
	}
	return code
}

func passNeed(rate float64) string {
	if rate > 0 {
		return fmt.Sprintf("--pass-rate %g", rate)
	}
	return "every run must pass"
}
