package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/interp/envoy"
	"labrun.dev/labrun/interp/kube"
	"labrun.dev/labrun/interp/local"
	"labrun.dev/labrun/interp/report"
)

// targetFlags select and configure the target.
type targetFlags struct {
	target     string
	kubeconfig string
	context    string
	namespace  string
	envoyVia   string
}

func (f *targetFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.target, "target", "", "where to run: local or kube (default: the scenario's target, local unless it says kube)")
	cmd.Flags().StringVar(&f.kubeconfig, "kubeconfig", "", "kube target: path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)")
	cmd.Flags().StringVar(&f.context, "context", "", "kube target: the kubeconfig context (default: the current one)")
	cmd.Flags().StringVarP(&f.namespace, "namespace", "n", "", "kube target: the default namespace of steps that name none (after the scenario's first namespace)")
	cmd.Flags().StringVar(&f.envoyVia, "envoy-via", "exec", "kube target: read Envoy admin by exec (pilot-agent request) or port-forward")
}

type runFlags struct {
	loadFlags
	targetFlags
	reportDir string
	junit     string
	keep      bool
	scenarios []string
	tags      []string
	quiet     bool
	// tally, set when a run has several scenarios, collects their outcomes for the summary.
	tally *runTally
}

// runTally counts the outcomes of a run of several scenarios for its one summary line.
type runTally struct {
	passed, failed, errors, interrupted, notRun int
	reports                                     []string
	// lastTargetErr is the last target error printed: a dead cluster fails every scenario
	// the same way, and once in full is enough.
	lastTargetErr string
}

func (t *runTally) count(code int) {
	switch code {
	case exitOK:
		t.passed++
	case exitFailed:
		t.failed++
	case exitInterrupted:
		t.interrupted++
	default:
		t.errors++
	}
}

// line is the summary: "3 scenarios: 1 passed, 1 failed, 1 error; reports: a.md b.md".
func (t *runTally) line(n int) string {
	parts := []string{fmt.Sprintf("%d passed", t.passed), fmt.Sprintf("%d failed", t.failed), fmt.Sprintf("%d error%s", t.errors, plural(t.errors))}
	if t.interrupted > 0 {
		parts = append(parts, fmt.Sprintf("%d interrupted", t.interrupted))
	}
	if t.notRun > 0 {
		parts = append(parts, fmt.Sprintf("%d not run", t.notRun))
	}
	s := fmt.Sprintf("%d scenarios: %s", n, strings.Join(parts, ", "))
	if len(t.reports) > 0 {
		s += "; reports: " + strings.Join(t.reports, " ")
	}
	return s
}

func newRunCmd(p *process) *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run PATH...",
		Short: "Run scenarios and judge them (a bare PATH means run)",
		Long: `run loads the scenarios in PATH (.cue files, directories, Markdown documents), runs each on
its target — setup, steps on their timeline, cleanup (always) — judges its expectations and
writes a report: reports/<UTC time>_<scenario>.md, .json (the complete record, for labrun
replay), and a folder with every raw input and the SVG pictures.

The first Ctrl-C (or SIGTERM) stops the steps (load included), runs the cleanup, writes the
report marked interrupted and exits 130; a second one abandons the cleanup.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return p.run(args, &f)
		},
	}
	f.loadFlags.register(cmd)
	f.targetFlags.register(cmd)
	cmd.Flags().StringVar(&f.reportDir, "report-dir", "reports", "directory for reports (\"\" for none)")
	cmd.Flags().StringVar(&f.junit, "junit", "", "also write JUnit XML to this file")
	cmd.Flags().BoolVar(&f.keep, "keep", false, "keep what the run created (skip the automatic cleanup; cleanup steps still run)")
	cmd.Flags().StringArrayVar(&f.scenarios, "scenario", nil, "run only the scenario with this name (repeatable)")
	cmd.Flags().StringArrayVar(&f.tags, "tag", nil, "run only scenarios with this tag (repeatable)")
	cmd.Flags().BoolVarP(&f.quiet, "quiet", "q", false, "print only the verdicts")
	return cmd
}

func (p *process) run(args []string, f *runFlags) error {
	opts, err := f.options()
	if err != nil {
		return err
	}
	res, errs, err := p.load(args, opts)
	if err != nil {
		return &exitError{exitInfra, err.Error()}
	}
	if len(errs) > 0 {
		return p.reportVet("text", res, errs)
	}
	scenarios, err := selectScenarios(res.Scenarios, f.scenarios, f.tags)
	if err != nil {
		return err
	}
	if f.target != "" && f.target != "local" && f.target != "kube" && p.Targets[f.target] == nil {
		return &exitError{exitInvalid, fmt.Sprintf("--target %q: expected local or kube", f.target)}
	}

	runCtx, cleanupCtx, stop := p.runContexts()
	defer stop()

	code := exitOK
	var recs []*interp.Record
	if len(scenarios) > 1 {
		f.tally = &runTally{}
	}
	for i, sc := range scenarios {
		if runCtx.Err() != nil {
			if f.tally != nil {
				f.tally.notRun = len(scenarios) - i
			}
			break
		}
		rec, c := p.runOne(runCtx, cleanupCtx, sc, f)
		if rec != nil {
			recs = append(recs, rec)
		}
		if f.tally != nil {
			f.tally.count(c)
		}
		code = worse(code, c)
	}
	if f.tally != nil {
		fmt.Fprintln(p.Stdout, f.tally.line(len(scenarios)))
	}
	if f.junit != "" && len(recs) > 0 {
		if err := report.JUnit(f.junit, recs); err != nil {
			fmt.Fprintf(p.Stderr, "labrun: junit: %v\n", err)
			code = worse(code, exitInfra)
		}
	}
	if code != exitOK {
		return &exitError{code: code}
	}
	return nil
}

// runContexts returns the run context and the cleanup context: the first interrupt
// (SIGINT, SIGTERM) cancels the run — running steps stop, cleanup still runs — and the second
// cancels the cleanup.
func (p *process) runContexts() (runCtx, cleanupCtx context.Context, stop func()) {
	runCtx, cancelRun := context.WithCancelCause(context.Background())
	cleanupCtx, cancelCleanup := context.WithCancelCause(context.Background())
	// Interrupts stay caught until the process exits: one that comes while the report is being
	// written must not kill labrun half-way.
	sigs, _ := p.Signals()
	done := make(chan struct{})
	go func() {
		n := 0
		for {
			select {
			case <-done:
				return
			case <-sigs:
				n++
				if n == 1 {
					p.live.notice(func() {
						fmt.Fprintln(p.Stderr, "labrun: interrupted: stopping steps, running cleanup (interrupt again to abandon it)")
					})
					cancelRun(interp.ErrInterrupted)
				} else {
					p.live.notice(func() { fmt.Fprintln(p.Stderr, "labrun: interrupted again: abandoning cleanup") })
					cancelCleanup(interp.ErrInterrupted)
				}
			}
		}
	}()
	return runCtx, cleanupCtx, func() {
		close(done)
		cancelRun(nil)
		cancelCleanup(nil)
	}
}

// worse returns the exit code that wins: interrupted, then infrastructure, invalid, failed.
func worse(a, b int) int {
	rank := map[int]int{exitOK: 0, exitFailed: 1, exitInvalid: 2, exitInfra: 3, exitInterrupted: 4}
	if rank[b] > rank[a] {
		return b
	}
	return a
}

func selectScenarios(all []*dsl.Scenario, names, tags []string) ([]*dsl.Scenario, error) {
	var out []*dsl.Scenario
	found := map[string]bool{}
	for _, sc := range all {
		if len(names) > 0 && !slices.Contains(names, sc.Name) {
			continue
		}
		// Found by name even when its tags leave it out: the error then is about the tags.
		found[sc.Name] = true
		if len(tags) > 0 && !slices.ContainsFunc(tags, func(t string) bool { return slices.Contains(sc.Tags, t) }) {
			continue
		}
		out = append(out, sc)
	}
	for _, n := range names {
		if !found[n] {
			var have []string
			for _, sc := range all {
				have = append(have, sc.Name)
			}
			return nil, &exitError{exitInvalid, fmt.Sprintf("--scenario %q: no such scenario; found: %s", n, strings.Join(have, ", "))}
		}
	}
	if len(out) == 0 && len(tags) > 0 {
		have := map[string]bool{}
		for _, sc := range all {
			if len(names) > 0 && !slices.Contains(names, sc.Name) {
				continue
			}
			for _, t := range sc.Tags {
				have[t] = true
			}
		}
		which := "the scenarios"
		if len(names) > 0 {
			which = "the selected scenarios"
		}
		tagFlags := "--tag " + strings.Join(tags, " --tag ")
		if len(have) == 0 {
			return nil, &exitError{exitInvalid, fmt.Sprintf("%s: no scenario to run: %s have no tags", tagFlags, which)}
		}
		return nil, &exitError{exitInvalid, fmt.Sprintf("%s: no scenario to run; tags of %s: %s", tagFlags, which, strings.Join(sortedSet(have), ", "))}
	}
	if len(out) == 0 {
		return nil, &exitError{exitInvalid, "no scenario to run"}
	}
	return out, nil
}

// runOne runs one scenario and writes its report; it returns the record and the exit code.
func (p *process) runOne(runCtx, cleanupCtx context.Context, sc *dsl.Scenario, f *runFlags) (*interp.Record, int) {
	name := f.target
	if name == "" {
		name = sc.Target
	}
	target, err := p.newTarget(runCtx, name, sc, &f.targetFlags)
	if err != nil {
		if f.tally != nil && f.tally.lastTargetErr == name+": "+err.Error() {
			fmt.Fprintf(p.Stderr, "labrun: %s: target %s: the same error as above\n", sc.Name, name)
		} else {
			fmt.Fprintf(p.Stderr, "labrun: %s: target %s: %v\n", sc.Name, name, err)
		}
		if f.tally != nil {
			f.tally.lastTargetErr = name + ": " + err.Error()
		}
		return nil, exitInfra
	}
	defer func() {
		if target.Close != nil {
			if err := target.Close(cleanupCtx); err != nil {
				fmt.Fprintf(p.Stderr, "labrun: %s: closing the %s target: %v\n", sc.Name, name, err)
			}
		}
	}()
	prog := newProgress(p, f.quiet)
	prog.forScenario(sc)
	p.live.set(prog)
	defer p.live.set(nil)
	if !f.quiet {
		fmt.Fprintf(p.Stdout, "▶ %s (%s) on %s", sc.Name, sc.Pos.Rel(p.Cwd), target.Name)
		if target.Describe != "" {
			fmt.Fprintf(p.Stdout, ": %s", target.Describe)
		}
		fmt.Fprintln(p.Stdout)
	}
	r := interp.New(target,
		interp.WithClock(interp.PreciseClock{}),
		interp.WithObserver(prog.event),
		interp.WithKeep(f.keep),
		interp.WithAccessLogParser(envoy.AccessLog),
	)
	rec := r.Run(runCtx, cleanupCtx, sc)
	prog.done()
	code := exitCode(rec)

	var reportPath, htmlPath string
	if f.reportDir != "" {
		dir := f.reportDir
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(p.Cwd, dir)
		}
		files, err := report.Write(dir, rec)
		if err != nil {
			fmt.Fprintf(p.Stderr, "labrun: %s: writing the report: %v\n", sc.Name, err)
			code = worse(code, exitInfra)
		} else {
			reportPath = relPath(p.Cwd, files.Markdown)
			htmlPath = relPath(p.Cwd, files.HTML)
			if f.tally != nil {
				f.tally.reports = append(f.tally.reports, reportPath)
			}
		}
	}
	p.printVerdict(rec)
	// The report's path last, under the verdict: what to open next.
	if reportPath != "" && !f.quiet {
		fmt.Fprintf(p.Stdout, "  report: %s\n  html:   %s\n", reportPath, htmlPath)
	}
	return rec, code
}

func relPath(cwd, p string) string {
	if r, err := filepath.Rel(cwd, p); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return p
}

// exitCode maps a record's outcome to the exit code.
func exitCode(rec *interp.Record) int {
	switch rec.Outcome {
	case interp.Passed:
		return exitOK
	case interp.Failed:
		return exitFailed
	case interp.Refused:
		return exitInvalid
	case interp.Interrupted:
		return exitInterrupted
	}
	return exitInfra
}

// printVerdict prints the expectations with their values, and why the run stopped.
func (p *process) printVerdict(rec *interp.Record) {
	w := p.Stdout
	for _, j := range rec.Expectations {
		mark := map[interp.Outcome]string{interp.Passed: "✓", interp.Failed: "✗", interp.Errored: "!", interp.Skipped: "-"}[j.Outcome]
		fmt.Fprintf(w, "  %s %s", mark, j.Src)
		switch {
		case j.Explanation != "":
			fmt.Fprintf(w, "\n      %s", j.Explanation)
		case j.Reason != "" && j.Outcome != interp.Skipped:
			fmt.Fprintf(w, "\n      %s: %s", j.Pos.Rel(p.Cwd), j.Reason)
		}
		fmt.Fprintln(w)
	}
	for _, n := range rec.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
	verdict := strings.ToUpper(string(rec.Outcome))
	fmt.Fprintf(w, "%s %s in %s", verdict, rec.Scenario, rec.End.Sub(rec.Start).Round(time.Millisecond))
	if rec.Error != "" {
		fmt.Fprintf(w, ": %s", relError(p.Cwd, rec.Error))
	}
	fmt.Fprintln(w)
}

// relError shortens absolute file names in a message to paths relative to cwd.
func relError(cwd, msg string) string {
	if cwd == "" {
		return msg
	}
	return strings.ReplaceAll(msg, cwd+string(filepath.Separator), "")
}

// newTarget builds the named target for a scenario.
func (p *process) newTarget(ctx context.Context, name string, sc *dsl.Scenario, f *targetFlags) (*interp.Target, error) {
	if mk := p.Targets[name]; mk != nil {
		return mk(ctx, sc)
	}
	switch name {
	case "local":
		return local.New(ctx, sc.Local, local.Options{Dir: sc.Dir})
	case "kube":
		return kube.New(ctx, kube.Options{
			Kubeconfig: f.kubeconfig, Context: f.context, Namespace: f.namespace,
			AllowedNamespaces: sc.Namespaces, ClusterScoped: sc.ClusterScoped,
			EnvoyVia: f.envoyVia, Getenv: p.Getenv,
		})
	}
	return nil, errors.New("unknown target " + name)
}
