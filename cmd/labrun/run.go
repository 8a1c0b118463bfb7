package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"labrun.dev/labrun/driver/compose"
	"labrun.dev/labrun/driver/kube"
	"labrun.dev/labrun/driver/local"
	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/envoy"
	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/report"
	"labrun.dev/labrun/schema"
)

// targetFlags select and configure the target.
type targetFlags struct {
	target     string
	kubeconfig string
	context    string
	namespace  string
	envoyVia   string
	// clusters are --cluster name=context: the contexts of a scenario's clusters.
	clusters []string
	// leftovers: look for what dead runs of the scenario left before it runs (run only).
	leftovers  bool
	cleanFirst bool
}

func (f *targetFlags) register(p *process, cmd *cobra.Command) {
	cmd.Flags().Var(targetValue{p, &f.target}, "target", "where to run: local or kube (default: the scenario's target, local unless it says kube)")
	f.registerCluster(cmd)
}

// registerCluster registers the flags that say which kube cluster (all but --target).
func (f *targetFlags) registerCluster(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.kubeconfig, "kubeconfig", "", "kube target: path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)")
	cmd.Flags().StringVar(&f.context, "context", "", "kube target: the kubeconfig context (default: the current one)")
	cmd.Flags().StringVarP(&f.namespace, "namespace", "n", "", "kube target: the default namespace of steps that name none (after the scenario's first namespace)")
	cmd.Flags().StringArrayVar(&f.clusters, "cluster", nil, "kube target: name=context, the kubeconfig context of the scenario's cluster name (repeatable; replaces the context its clusters: gives)")
	cmd.Flags().StringVar(&f.envoyVia, "envoy-via", "exec", "kube target: read Envoy admin by exec (pilot-agent request) or port-forward")
}

type runFlags struct {
	loadFlags
	targetFlags
	// shard is this process's shard (--shard), kept in each record.
	shard *interp.ShardRecord
	// invocation is this process's runs, kept in each record when it runs more than one.
	invocation *interp.InvocationRecord
	reportDir  string
	junit      string
	keep       bool
	selection
	quiet bool
	// count, sweeps and passRate make a matrix of runs (matrix.go).
	matrixFlags
	passRate float64
	// passRateGiven: --pass-rate was given (0 is refused, not taken as the default).
	passRateGiven bool
	// parallel is how many runs may run at once (--parallel); failFast stops starting runs
	// after one that did not pass.
	parallel int
	failFast bool
	// tally, set when a run has several scenarios, collects their outcomes for the summary.
	tally *runTally
	// matrixNow is where the run in progress is among the runs of this invocation.
	matrixNow *matrixStatus
}

// runTally counts the outcomes of a run of several scenarios for its one summary line.
type runTally struct {
	// mu guards lastTargetErr, which the runs of a parallel suite share.
	mu                                          sync.Mutex
	passed, failed, errors, interrupted, notRun int
	// leftBehind counts the runs that left objects or processes behind (exit 4); those of
	// them that also failed or erred are counted there too, and in leftFailed, leftErrors.
	leftBehind, leftFailed, leftErrors int
	reports                            []string
	// lastTargetErr is the last target error printed: a dead cluster fails every scenario
	// the same way, and once in full is enough.
	lastTargetErr string
}

// count counts a run (or a matrix) by its exit code; one that left objects behind (exit 4) is
// counted as how it ended besides (under: its outcome's code) too. Before, a run that failed
// and left objects behind was counted only as "left objects behind": the total said "0 failed"
// beside its FAILED line.
func (t *runTally) count(code, under int) {
	if code == exitLeftovers {
		t.leftBehind++
		switch under {
		case exitOK, exitLeftovers:
			return
		case exitFailed:
			t.leftFailed++
		default:
			t.leftErrors++
		}
		code = under
	}
	switch code {
	case exitOK:
		t.passed++
	case exitFailed:
		t.failed++
	case exitInterrupted:
		t.interrupted++
	case exitLeftovers:
		t.leftBehind++
	default:
		t.errors++
	}
}

// line is the total: "3 scenarios: 1 passed, 1 failed, 1 error (8 runs)".
func (t *runTally) line(n, runs int) string {
	parts := []string{fmt.Sprintf("%d passed", t.passed), fmt.Sprintf("%d failed", t.failed), fmt.Sprintf("%d error%s", t.errors, plural(t.errors))}
	if t.interrupted > 0 {
		parts = append(parts, fmt.Sprintf("%d interrupted", t.interrupted))
	}
	if t.leftBehind > 0 {
		// "2 left objects behind, of which 1 failed": the runs counted twice say so.
		var also []string
		if t.leftFailed > 0 {
			also = append(also, fmt.Sprintf("%d failed", t.leftFailed))
		}
		if t.leftErrors > 0 {
			also = append(also, fmt.Sprintf("%d erred", t.leftErrors))
		}
		left := fmt.Sprintf("%d left objects behind", t.leftBehind)
		if len(also) > 0 {
			left += ", of which " + strings.Join(also, " and ")
		}
		parts = append(parts, left)
	}
	if t.notRun > 0 {
		parts = append(parts, fmt.Sprintf("%d not run", t.notRun))
	}
	return fmt.Sprintf("%d scenarios: %s (%d run%s)", n, strings.Join(parts, ", "), runs, plural(runs))
}

func newRunCmd(p *process) *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run PATH...",
		Short: "Run scenarios and judge them (a bare PATH means run)",
		Long: `run loads the scenarios in PATH (.cue files, directories, DIR/... for DIR and every folder
below it, Markdown documents), runs each on its target — setup, steps on their timeline,
cleanup (always) — judges its expectations and writes a report: reports/<UTC
time>_<scenario>_<run id>.md, .json (the complete record, for labrun replay), and a folder with
every raw input and the SVG pictures.

A Markdown document's expected-output blocks (` + "```text labrun-expect" + `) are checked as labrun
doc checks them: a block that differs from its spec's run fails the run (exit 1) with a diff at
the document's lines. A block whose scenarios did not run as labrun doc runs them (not
selected; --count, --sweep, --var of a swept var, --pass-rate; a shard holding part of the
runs) is not compared, and the run says so on stderr.

A scenario that declares a sweep runs once per combination of its values; --sweep name=v1,v2
replaces the values of the var it names (or sweeps a var the scenario declares), --count N runs
every combination N times. Every combination is loaded and checked before the first run. Such
a matrix also writes a summary, <UTC time>_<scenario>_<id>.summary.{md,html,json}, with a row
per combination and plots of every value the expectations read. A run of several scenarios ends
with a line per scenario and the total.

The first Ctrl-C (or SIGTERM, or SIGHUP: a closed terminal) stops the steps (load included),
runs the cleanup, writes the report marked interrupted and exits 130; a second one abandons the
cleanup, and a run still not stopped 10 s later (a step blocked where nothing reaches it), or a
third one, makes labrun exit 130 at once, without that run's report (--junit says so). That holds from start-up on: an interrupt while the scenarios load or the target is
created also gets a report marked interrupted; one once the run is over, before or while its
report is written, lets the report finish with the run's verdict, then exits 130. Reports are written to a temporary name and renamed: never a part of one.

The cleanup tries again, with backoff for up to 30 s (within cleanupTimeout), what it could not
remove (a cluster that stopped answering). What is still there then makes the run exit 4: its
verdict line says what it left behind, and labrun clean removes it.

On the kube target, every object the run creates is labelled labrun.dev/run=<run id> and
labrun.dev/scenario, and annotated with the host and pid of this labrun: what a run killed
with -9 leaves behind is found by labrun clean. A run warns when dead runs of the same
scenario left objects; --clean-first deletes them before it starts. A system namespace
(kube-system, kube-public, kube-node-lease, default, istio-system) is changed only when the
scenario opts in (systemNamespaces) and --allow-system-namespaces is given; a namespace labrun
did not create is never deleted. On the local target, every command a run starts, and
everything it starts in turn, dies with the run, however it ends.

A command's output, a log and a process's output go whole to the report's artifacts folder;
memory and the record keep their first and last MiB (exec.<name>.cut, logs: .cut say so).
Vars named in the scenario's secrets read "[secret <name>]" on the console and in every
report; a swept one "[secret <name> #<i>]", i its place in the sweep.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f.passRateGiven = cmd.Flags().Changed("pass-rate")
			return p.junitOfRefusal("run", f.junit, p.run(args, &f))
		},
	}
	f.loadFlags.register(cmd)
	f.targetFlags.register(p, cmd)
	cmd.Flags().StringVar(&f.reportDir, "report-dir", "reports", "directory for reports (\"\" for none)")
	cmd.Flags().StringVar(&f.junit, "junit", "", "also write JUnit XML to this file")
	cmd.Flags().BoolVar(&f.keep, "keep", false, "keep what the run created (skip the automatic cleanup; cleanup steps still run)")
	f.selection.register(cmd, "run")
	cmd.Flags().BoolVarP(&f.quiet, "quiet", "q", false, "print only the verdicts")
	f.matrixFlags.register(cmd, "run")
	cmd.Flags().Float64Var(&f.passRate, "pass-rate", 0, passRateHelp)
	cmd.Flags().IntVar(&f.parallel, "parallel", 1, "run up to N runs at once (scenarios, sweep combinations, --count rounds); runs that touch the same fixed namespace, mesh-wide Istio config or local address never run at the same time (labrun plan --parallel N shows the schedule)")
	cmd.Flags().BoolVar(&f.failFast, "fail-fast", false, "start no more runs after one that did not pass, or under --pass-rate after a combination failed more runs than the rate allows (the runs already started end normally)")
	cmd.Flags().BoolVar(&f.cleanFirst, "clean-first", false, "kube target: first delete what dead runs of the same scenario left on the cluster (see labrun clean)")
	f.leftovers = true
	return cmd
}

func (p *process) run(args []string, f *runFlags) error {
	opts, err := f.options()
	if err != nil {
		return err
	}
	opts.ForRun = true // the scenarios run long after their load
	if err := p.checkTarget(f.target); err != nil {
		return err
	}
	opts.Target = f.target
	opts.Selected = f.selection.selects()
	w, err := p.expand(args, opts, expansion{sel: f.selection, matrix: f.matrixFlags, passRate: f.passRate, passRateGiven: f.passRateGiven, output: "text", target: f.target})
	if err != nil {
		return err
	}
	var scenarios []*dsl.Scenario
	for _, u := range w.units {
		scenarios = append(scenarios, u.Scenario)
		// The record's source is the files as they were loaded: hashed now, not when the
		// report is written, after steps that may have edited them.
		p.sources.of(u.Matrix.File)
	}
	if err := p.checkRunFlags(scenarios, f); err != nil {
		return err
	}
	if f.parallel < 1 {
		return &exitError{exitInvalid, fmt.Sprintf("--parallel %d: expected 1 or more", f.parallel)}
	}
	if err := checkWritable(p.Cwd, f.reportDir, f.junit); err != nil {
		return err
	}

	if f.junit != "" {
		path := inCwd(p.Cwd, f.junit)
		p.abandonJUnit.Store(&path)
		defer p.abandonJUnit.Store(nil)
	}
	runCtx, cleanupCtx, stop := p.runContexts()
	defer stop()

	// -o json: stdout carries the records, one JSON document per line (docs/json.md); -o yaml
	// the same as YAML documents; what a person reads goes to stderr.
	docOut := p.Stdout
	var each func(ran)
	code := exitOK
	if machine(f.output) {
		p.Stdout = p.Stderr
		defer func() { p.Stdout = docOut }()
		enc := &docWriter{w: docOut, output: f.output, lines: true}
		each = func(r ran) {
			if err := enc.write(r.rec); err != nil {
				fmt.Fprintf(p.Stderr, "labrun: -o %s: %v\n", f.output, err)
				p.markStdoutSaid()
				code = worse(code, exitInfra)
			}
		}
	}
	writeShardLine(p.Stdout, w)
	if sh := w.shard; sh != nil {
		f.shard = &interp.ShardRecord{Index: sh.spec.Index, Count: sh.spec.Count, Runs: len(w.units), All: sh.all, Plan: sh.plan}
	}
	if len(w.units) > 1 {
		f.invocation = &interp.InvocationRecord{ID: newRunInfo().id, Scenarios: map[string]int{}, Parallel: f.parallel, FailFast: f.failFast}
		f.invocation.Sources = map[string]string{}
		for _, u := range w.units {
			f.invocation.Scenarios[scenarioKey(u)]++
			f.invocation.Sources[scenarioKey(u)] = p.sources.of(u.Matrix.File)
		}
		f.invocation.Vars = flagNames(f.vars)
		start := time.Now().UTC()
		f.invocation.Start = &start
	}
	// After an interrupt, the units not started yet still get a report, marked interrupted.
	c, recs, never := p.runUnits(runCtx, cleanupCtx, w, f, each)
	code = worse(code, c)
	var docChecks []report.DocCheck
	if !interrupted(runCtx) {
		// A document's expected-output blocks are part of what it claims: run checks them
		// as labrun doc does, or says it did not, and the JUnit says the same.
		c, docChecks = p.compareDocs(w, recs)
		code = worse(code, c)
	}
	if f.junit != "" && len(recs)+len(never) > 0 {
		var skipped []report.NotStarted
		for _, n := range never {
			skipped = append(skipped, report.NotStarted{ID: n.unit.ID, Scenario: n.unit.Matrix.Scenario, File: relPath(p.Cwd, n.unit.Matrix.File), Why: n.why})
		}
		p.junitWritten = true
		err := report.JUnit(inCwd(p.Cwd, f.junit), recs, skipped, docChecks...)
		p.abandonJUnit.Store(nil)
		if err != nil {
			fmt.Fprintf(p.Stderr, "labrun: junit: %v\n", err)
			code = worse(code, exitInfra)
		}
	}
	if interrupted(runCtx) {
		// Whenever it came (a run, its report): an interrupt exits 130, as its message said.
		code = worse(code, exitInterrupted)
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
	if p.phases == nil {
		p.phases = &runPhases{}
	}
	ownStops := p.phases.stops == nil
	if ownStops {
		p.phases.stops = startStopWatch()
	}
	done := make(chan struct{})
	n := 0
	var first time.Time // the first interrupt's, and its signal
	var firstSig os.Signal
	select {
	case sig := <-sigs: // one that came while the scenarios were loading: the run is over before it starts
		n, first, firstSig = 1, time.Now(), sig
		fmt.Fprintln(p.Stderr, "labrun: interrupted: stopping before the run starts")
		cancelRun(interp.ErrInterrupted)
	default:
	}
	go func() {
		for {
			select {
			case <-done:
				return
			case sig := <-sigs:
				if n == 1 && sig == firstSig && time.Since(first) < sameInterrupt {
					// timeout(1) and a kill of the process group send the signal to labrun
					// twice at once: one interrupt, not a second that abandons the cleanup.
					continue
				}
				n++
				if n == 1 {
					first, firstSig = time.Now(), sig
				}
				// Decided, said and cancelled under the phases' lock: a run that returns
				// meanwhile reads the interrupt as its own (p.phases.over) only when it came
				// before; what is said is said before the run context ends.
				p.phases.mu.Lock()
				reportsOnly := p.phases.running == 0 && (p.phases.reporting > 0 || p.phases.allOver)
				writing := p.phases.reporting > 0
				if reportsOnly {
					// Every run is over and a report half-written (or the summaries, the
					// --junit file): finish it, then exit 130.
					p.live.notice(func() {
						if writing {
							fmt.Fprintln(p.Stderr, "labrun: interrupted while writing the report: finishing it; labrun then exits 130 (interrupted)")
						} else {
							fmt.Fprintln(p.Stderr, "labrun: interrupted once every run was over: finishing what they report; labrun then exits 130 (interrupted)")
						}
					})
					cancelRun(interp.ErrInterrupted)
					p.phases.mu.Unlock()
					continue
				}
				if n == 1 {
					// Between two runs (one reported, the next not begun) no step runs and
					// no cleanup is due: the runs left are not started. (Before the first,
					// and in commands that start no run, the words are the run's.)
					between := p.phases.begun > 0 && p.phases.running == 0 && p.phases.reporting == 0
					p.live.notice(func() {
						if between {
							fmt.Fprintln(p.Stderr, "labrun: interrupted between two runs: the runs left are not started; labrun then exits 130 (interrupted)")
						} else {
							fmt.Fprintln(p.Stderr, "labrun: interrupted: stopping steps, running cleanup (interrupt again to abandon it)")
						}
					})
					cancelRun(interp.ErrInterrupted)
				}
				p.phases.mu.Unlock()
				if n == 1 {
					continue
				}
				if n == 2 {
					p.live.notice(func() { fmt.Fprintln(p.Stderr, "labrun: interrupted again: abandoning cleanup") })
					cancelCleanup(interp.ErrInterrupted)
					// A step blocked where no context reaches it (a system call that does not
					// return) would hold labrun forever after the cleanup was abandoned: past
					// the grace, labrun exits without waiting for it, and says so.
					time.AfterFunc(abandonGrace, func() {
						select {
						case <-done:
							return
						default:
						}
						if p.phases.writing() {
							return
						}
						p.live.notice(func() {
							fmt.Fprintf(p.Stderr, "labrun: still not stopped %s after the second interrupt (a step does not return): exiting 130 without waiting for it; the run's report is not written\n", abandonGrace)
						})
						p.junitOfAbandon(fmt.Sprintf("still not stopped %s after the second interrupt (a step does not return): labrun exited without waiting for it; the run's report is not written", abandonGrace))
						p.exitNow(exitInterrupted)
					})
				} else {
					p.live.notice(func() {
						fmt.Fprintln(p.Stderr, "labrun: interrupted a third time: exiting 130 at once; the run's report is not written")
					})
					p.junitOfAbandon("interrupted a third time: labrun exited at once; the run's report is not written")
					p.exitNow(exitInterrupted)
				}
			}
		}
	}()
	return runCtx, cleanupCtx, func() {
		close(done)
		if ownStops {
			p.phases.stops.stop()
			p.phases.stops = nil
		}
		cancelRun(nil)
		cancelCleanup(nil)
	}
}

// runPhases counts the runs under way (from runOne's start until the run returns) and the
// reports being written (from then until runOne returns), for the interrupt handler.
type runPhases struct {
	// stops are the times the process was stopped and continued (SIGSTOP, Ctrl-Z).
	stops              *stopWatch
	mu                 sync.Mutex
	running, reporting int
	// begun counts the runs begun so far.
	begun int
	// allOver is set once no run is left to start (finish): what follows writes the runs'
	// summaries and the --junit file.
	allOver bool
}

// finish says that no run is left to start.
func (ph *runPhases) finish() {
	if ph == nil {
		return
	}
	ph.mu.Lock()
	ph.allOver = true
	ph.mu.Unlock()
}

// begin counts a run under way.
func (ph *runPhases) begin() {
	if ph == nil {
		return
	}
	ph.mu.Lock()
	ph.running++
	ph.begun++
	ph.mu.Unlock()
}

// over counts a run that began as over, its report next, and reports whether an interrupt
// came before: one that comes after is not the run's (the run reached its end; its verdict
// stands and labrun exits 130).
func (ph *runPhases) over(runCtx context.Context) bool {
	if ph == nil {
		return interrupted(runCtx)
	}
	ph.mu.Lock()
	defer ph.mu.Unlock()
	ph.running--
	ph.reporting++
	return interrupted(runCtx)
}

// reported counts a report as written.
func (ph *runPhases) reported() {
	if ph == nil {
		return
	}
	ph.mu.Lock()
	ph.reporting--
	ph.mu.Unlock()
}

// writing reports whether a report is being written.
func (ph *runPhases) writing() bool {
	if ph == nil {
		return false
	}
	ph.mu.Lock()
	defer ph.mu.Unlock()
	return ph.reporting > 0
}

// sameInterrupt is how soon after the first interrupt the same signal again is taken as the
// same one: GNU timeout sends its signal to labrun and then to labrun's process group, which
// labrun received as two interrupts at once and abandoned its cleanup (seen: `timeout 120
// labrun run …` left a namespace and its Deployments behind). A person's second Ctrl-C comes
// later than this.
const sameInterrupt = 100 * time.Millisecond

// abandonGrace is how long labrun waits, after the second interrupt abandoned the cleanup,
// for the run to return before it exits anyway.
const abandonGrace = 10 * time.Second

// junitOfAbandon writes, in the --junit file of the run under way (if any, and not written
// yet), that labrun exits at once, interrupted, saying why: an older file left in its place
// read as this run's results to a CI that publishes the JUnit whatever the exit code.
func (p *process) junitOfAbandon(why string) {
	path := p.abandonJUnit.Swap(nil)
	if path == nil {
		return
	}
	if err := report.JUnitAbandoned(*path, "labrun run", exitInterrupted, why); err != nil {
		p.live.notice(func() { fmt.Fprintf(p.Stderr, "labrun: junit: %v\n", err) })
	}
}

// exitNow ends the process with code (p.Exit when a test sets it).
func (p *process) exitNow(code int) {
	if p.Exit != nil {
		p.Exit(code)
		return
	}
	os.Exit(code)
}

// worse returns the exit code that wins: interrupted, then leftovers, infrastructure,
// invalid, failed.
func worse(a, b int) int {
	rank := map[int]int{exitOK: 0, exitFailed: 1, exitInvalid: 2, exitInfra: 3, exitLeftovers: 4, exitInterrupted: 5}
	if rank[b] > rank[a] {
		return b
	}
	return a
}

// runOne runs one unit and writes its report. Every run has a report, including one
// interrupted before it started or while its target was being created, and one whose target
// could not be created.
func (p *process) runOne(runCtx, cleanupCtx context.Context, u *dsl.Unit, f *runFlags) ran {
	run := newRunInfo()
	// The run is under way until it returns (or ends before its steps), then its report is
	// written: an interrupt in between is not the run's.
	p.phases.begin()
	var ended, before bool
	run.over = func() bool {
		if !ended {
			ended, before = true, p.phases.over(runCtx)
		}
		return before
	}
	defer func() {
		run.over()
		p.phases.reported()
	}()
	sc := u.Scenario.ForRun(run.id)
	p.secrets.set(interp.NewRedactor(sc))
	defer p.secrets.set(nil)
	name := f.target
	if name == "" {
		name = sc.Target
	}
	start := time.Now()
	if interrupted(runCtx) {
		return p.finish(u, notRun(sc, name, start, interp.Interrupted, "interrupted before the run started"), f, run, true)
	}
	target, err := p.newTarget(runCtx, name, sc, &f.targetFlags, run)
	if interrupted(runCtx) {
		if err == nil && target.Close != nil {
			if err := target.Close(cleanupCtx); err != nil {
				fmt.Fprintf(p.Stderr, "labrun: %s: closing the %s target: %v\n", sc.Name, name, err)
			}
		}
		return p.finish(u, notRun(sc, name, start, interp.Interrupted, "interrupted while the target was being created"), f, run, true)
	}
	if err != nil {
		// An address the scenario fixes that the target could not listen on (taken by
		// another program) is said at the line that writes it: before, the message named
		// "backend a" alone.
		at, where := dsl.Pos{}, ""
		if ae := (*local.AddressError)(nil); errors.As(err, &ae) {
			if pos, ok := sc.AddressPos[ae.Field]; ok && pos.IsValid() {
				at, where = pos, pos.Rel(p.Cwd).String()+": "
			}
		}
		// The run's verdict line says why, as any run's does: before, it was said on stderr
		// alone and stdout had the report's paths with no verdict over them (and the line in
		// the total of several runs read "ERROR name" with no reason).
		rec := notRun(sc, name, start, interp.Errored, fmt.Sprintf("target %s: %v", name, err))
		shown := "" // the record's error, unless the run before had the same
		if f.tally != nil {
			f.tally.mu.Lock()
			if f.tally.lastTargetErr == name+": "+err.Error() {
				shown = fmt.Sprintf("%starget %s: the same error as above", where, name)
			}
			f.tally.lastTargetErr = name + ": " + err.Error()
			f.tally.mu.Unlock()
		}
		if at.IsValid() {
			rec.Error, rec.ErrorPos = at.String()+": "+rec.Error, &at
		}
		r := p.finishShown(u, rec, f, run, true, shown)
		r.code = exitInfra
		return r
	}
	defer func() {
		if target.Close != nil {
			if err := target.Close(cleanupCtx); err != nil {
				fmt.Fprintf(p.Stderr, "labrun: %s: closing the %s target: %v\n", sc.Name, name, err)
			}
		}
	}()
	prog := newProgress(p, f.quiet)
	prog.forScenario(sc, f.matrixNow)
	p.live.set(prog)
	defer p.live.set(nil)
	if !f.quiet {
		head := fmt.Sprintf("▶ %s (%s) on %s", sc.Name, sc.Pos.Rel(p.Cwd), target.Name)
		if target.Describe != "" {
			head += ": " + target.Describe
		}
		fmt.Fprintln(p.Stdout, wrapLines(head, p.wrapWidth(), 2))
		if len(sc.Ephemeral) > 0 {
			var names []string
			for _, e := range sc.Ephemeral {
				names = append(names, dsl.NamespaceRef(e.Key)+" = "+sc.Generated[e.Key])
			}
			fmt.Fprintf(p.Stdout, "  ephemeral namespaces: %s\n", strings.Join(names, ", "))
		}
	}
	// What steps stream (a command's output, a log) goes to files beside the reports, which
	// the report then moves into its artifacts folder: memory holds a bounded head and tail.
	spool, doneSpool, err := p.spoolDir(f.reportDir, run.id)
	if err != nil {
		r := p.finish(u, notRun(sc, name, start, interp.Errored, err.Error()), f, run, true)
		r.code = exitInfra
		return r
	}
	defer doneSpool()
	r := interp.New(target,
		interp.WithClock(interp.PreciseClock{}),
		interp.WithObserver(prog.event),
		interp.WithKeep(f.keep),
		interp.WithAccessLogParser(envoy.AccessLog),
		interp.WithSpool(spool),
	)
	runStart := time.Now()
	rec := r.Run(runCtx, cleanupCtx, sc)
	p.judgeStops(rec, runStart, time.Now())
	interruptedDuring := run.over()
	if p.afterRun != nil {
		p.afterRun()
	}
	prog.done()
	if interruptedDuring && (rec.Outcome == interp.Refused || rec.Outcome == interp.Errored) {
		// An interrupt during the preflight checks makes them fail (a refusal): it is the
		// interrupt that stopped the run. One that came once the run had returned is not:
		// the run reached its end, and its verdict stands (it read INTERRUPTED, "interrupted: ",
		// with every expectation judged, and replay said "it did not reach its end").
		rec.Outcome, rec.Error = interp.Interrupted, "interrupted: "+rec.Error
	}
	return p.finish(u, rec, f, run, true)
}

// finish writes the report of rec, the run of unit u, and, when verdict is set, prints the
// verdict.
func (p *process) finish(u *dsl.Unit, rec *interp.Record, f *runFlags, run runInfo, verdict bool) ran {
	return p.finishShown(u, rec, f, run, verdict, "")
}

// finishShown is finish with the verdict line saying shownErr for the run's error when it is
// not "" (the record keeps the error whole): "target kube: the same error as above".
func (p *process) finishShown(u *dsl.Unit, rec *interp.Record, f *runFlags, run runInfo, verdict bool, shownErr string) ran {
	rec.Unit = shownUnit(u)
	rec.GivenVars = givenVars(rec, f.vars, u)
	rec.Shard, rec.Invocation = f.shard, f.invocation
	if rec.Labrun == "" {
		rec.Labrun = labrunBuild()
	}
	if rec.Source == "" {
		rec.Source = p.sources.of(u.Matrix.File)
	}
	out := ran{unit: u, rec: rec, code: exitCode(rec)}
	if run.over != nil {
		run.over() // (a run that ended before its steps)
	}
	var htmlPath, lost string
	if f.reportDir != "" {
		dir := f.reportDir
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(p.Cwd, dir)
		}
		done := p.reportPacing()
		files, err := writeReport(dir, rec, run.id)
		done()
		switch {
		case err != nil && files.JSON != "" && fileExists(files.JSON):
			// The record is whole (written under a temporary name, then renamed; the name is
			// this run's own): only the pages that show it are missing.
			fmt.Fprintf(p.Stderr, "labrun: %s: writing the report: %v\n", rec.Scenario, err)
			lost = fmt.Sprintf("its record is written (%s), its pages could not be: %v", relPath(p.Cwd, files.JSON), unwrapPath(err))
			if st, serr := os.Stat(files.Markdown); serr == nil && st.Mode().IsRegular() {
				// Written before the HTML page (a disk that filled between them).
				lost = fmt.Sprintf("its record and Markdown page are written (%s, %s), its HTML page could not be: %v", relPath(p.Cwd, files.JSON), relPath(p.Cwd, files.Markdown), unwrapPath(err))
			}
			rec.ReportLost = lost
			out.json = files.JSON
			out.code = worse(out.code, exitInfra)
		case err != nil:
			fmt.Fprintf(p.Stderr, "labrun: %s: writing the report: %v\n", rec.Scenario, err)
			lost = "its report could not be written: " + unwrapPath(err).Error()
			rec.ReportLost = lost
			out.code = worse(out.code, exitInfra)
		default:
			out.report = relPath(p.Cwd, files.Markdown)
			out.json = files.JSON
			htmlPath = relPath(p.Cwd, files.HTML)
		}
	}
	if verdict {
		shown := rec
		if shownErr != "" {
			c := *rec
			c.Error = shownErr
			shown = &c
		}
		p.printVerdict(shown, lost, f.quiet)
	}
	// The report's paths last, under the verdict: what to open next.
	if out.report != "" && !f.quiet {
		fmt.Fprintf(p.Stdout, "  report: %s\n  html:   %s\n  json:   %s\n", out.report, htmlPath, relPath(p.Cwd, out.json))
	}
	return out
}

// shownUnit is u as its record shows it: a swept secret var reads its mask in the unit's id,
// its vars and its matrix (the unit itself keeps the values the run ran with).
// givenVars are the names of rec's vars that the command line gave (flags: --var name=value;
// u's combination: a sweep's), sorted (interp.Record.GivenVars).
func givenVars(rec *interp.Record, flags []string, u *dsl.Unit) []string {
	var out []string
	for _, v := range flags {
		out = append(out, strings.SplitN(v, "=", 2)[0])
	}
	if u != nil {
		out = slices.AppendSeq(out, maps.Keys(u.Vars))
	}
	out = slices.DeleteFunc(out, func(k string) bool { _, ok := rec.Vars[k]; return !ok })
	slices.Sort(out)
	return slices.Compact(out)
}

func shownUnit(u *dsl.Unit) *dsl.Unit {
	if u.Scenario == nil {
		return u
	}
	red := interp.NewRedactor(u.Scenario)
	if red == nil {
		return u
	}
	var shown dsl.Unit
	if err := red.JSON(u, &shown); err != nil {
		return u
	}
	return &shown
}

// spoolDir creates the folder a run streams its artifacts to: in the report directory (the
// report then moves them, on the same file system), else in the temporary directory.
//
// The folder holds a lock (lockSpool) while the run uses it. The func returned removes the
// folder, then releases its lock: released first, another run of a --parallel suite (or
// another labrun) sweeping the report directory in between took the folder for one a
// labrun killed with -9 left, removed it and warned so. A labrun killed with -9 leaves its
// folder behind, and the next run removes such folders (sweepSpools) where no process holds
// their lock, saying so.
func (p *process) spoolDir(reportDir, runID string) (string, func(), error) {
	dir := ""
	if reportDir != "" {
		dir = reportDir
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(p.Cwd, dir)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", nil, err
		}
	}
	p.sweepSpools(dir)
	spool, err := os.MkdirTemp(dir, spoolPrefix+runID+"-")
	if err != nil {
		return "", nil, fmt.Errorf("a folder for the run's output: %w", err)
	}
	release, err := lockSpool(spool)
	if err != nil {
		os.RemoveAll(spool)
		return "", nil, fmt.Errorf("a folder for the run's output: %w", err)
	}
	return spool, func() {
		if err := os.RemoveAll(spool); err != nil && !os.IsNotExist(err) {
			// Its files are gone but the folder stays (the report directory made read-only
			// during the run): a lock file put back in it, unlocked once released, lets the
			// next run here take it for a dead run's and remove it. Before, the folder was
			// left without its lock, which no sweep removes (a labrun from before the lock
			// may use such a folder), and nothing said so.
			if f, ferr := os.Create(filepath.Join(spool, spoolLockName)); ferr == nil {
				f.Close()
			}
			var pe *os.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			fmt.Fprintf(p.Stderr, "labrun: warning: could not remove the folder the run streamed its output to, %s (%v): remove it, or the next run in %s removes it when it can\n", spool, err, or(dir, os.TempDir()))
		}
		release()
	}, nil
}

// writeReport writes rec's report as <UTC time>_<scenario>_<run id>: two runs never share a
// name, even of one scenario in the same second. The report's folder is created first, and a
// name whose folder exists already (another labrun got there first) gets a suffix.
func writeReport(dir string, rec *interp.Record, runID string) (report.Files, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return report.Files{}, err
	}
	stem := report.Base(rec) + "_" + runID
	base := stem
	for i := 2; ; i++ {
		err := os.Mkdir(filepath.Join(dir, base), 0o755)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) || i > 100 {
			return report.Files{}, err
		}
		base = fmt.Sprintf("%s-%d", stem, i)
	}
	return report.WriteAs(dir, base, rec)
}

// notRun is the record of a run that stopped before its steps: interrupted, or without a
// target. Its expectations are skipped.
func notRun(sc *dsl.Scenario, target string, start time.Time, outcome interp.Outcome, why string) *interp.Record {
	rec := &interp.Record{
		Version: interp.RecordVersion, Scenario: sc.Name, File: sc.Pos.File, Pos: sc.Pos, Doc: sc.Doc,
		Target: target, Vars: sc.Vars, Start: start, StepsStart: start, End: time.Now(),
		Outcome: outcome, Error: why, AllowReset: sc.AllowReset, Warnings: sc.Warnings,
		Lints: dsl.LintCodeList(), Results: map[string]*interp.Result{},
	}
	for _, e := range sc.Expect {
		rec.Expectations = append(rec.Expectations, &interp.Judgement{Src: e.Src, Pos: e.Pos, Outcome: interp.Skipped, Reason: why})
	}
	return interp.NewRedactor(sc).Record(rec)
}

// interrupted reports a run context cancelled by an interrupt.
func interrupted(ctx context.Context) bool {
	return ctx.Err() != nil && errors.Is(context.Cause(ctx), interp.ErrInterrupted)
}

// checkWritable finds, before anything runs, a report directory or JUnit file that cannot be
// written: the run would end with its results lost.
func checkWritable(cwd, reportDir, junit string) error {
	abs := func(p string) string {
		if filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(cwd, p)
	}
	try := func(flag, dir string) error {
		refuse := func(msg string) error {
			if flag == "--junit" {
				return &junitPathError{exitError{exitInvalid, msg}}
			}
			return &exitError{exitInvalid, msg}
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return refuse(fmt.Sprintf("%s: cannot create %s: %v", flag, dir, unwrapPath(err)))
		}
		f, err := os.CreateTemp(dir, ".labrun-write-check-*")
		if err != nil {
			return refuse(fmt.Sprintf("%s: cannot write in %s: %v", flag, dir, unwrapPath(err)))
		}
		f.Close()
		os.Remove(f.Name())
		return nil
	}
	if reportDir != "" {
		if err := try("--report-dir", abs(reportDir)); err != nil {
			return err
		}
	}
	if junit != "" {
		// A directory there would be found only once the run is over, by the rename onto it.
		if fi, err := os.Stat(abs(junit)); err == nil && fi.IsDir() {
			return &junitPathError{exitError{exitInvalid, fmt.Sprintf("--junit %s: is a directory; expected the path of the XML file to write, such as %s", junit, filepath.Join(junit, "junit.xml"))}}
		}
		if report.IsDevice(abs(junit)) {
			// /dev/stdout, a pipe: written in place (report.WriteWith), nothing beside it.
			return nil
		}
		if resolved, err := filepath.EvalSymlinks(abs(junit)); err == nil {
			junit = resolved // a link: the file it names is written
		}
		if err := try("--junit", filepath.Dir(abs(junit))); err != nil {
			return err
		}
	}
	return nil
}

// unwrapPath drops the path and operation of a *fs.PathError, which the message says already.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func relPath(cwd, p string) string {
	if r, err := filepath.Rel(cwd, p); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return p
}

// exitCode maps a record's outcome to the exit code; a run that left something behind exits
// exitLeftovers, unless it was interrupted.
func exitCode(rec *interp.Record) int {
	if len(rec.Leftovers) > 0 && rec.Outcome != interp.Interrupted {
		return exitLeftovers
	}
	return outcomeCode(rec)
}

// outcomeCode is the exit code of rec's outcome alone, what the run left behind aside: how a
// run that exits 4 ended besides (exitOK when it passed; nil: exitOK).
func outcomeCode(rec *interp.Record) int {
	if rec == nil {
		return exitOK
	}
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

// printVerdict prints the evidence of a run and its verdict: the claim (the scenario's doc),
// every expectation with the value of each part, the notes, what each load did and the deltas
// the expectations read (not when quiet), then the verdict line, the one place that says how
// the run ended: why it stopped, what it left behind and, when lost is set, that its report
// was lost.
func (p *process) printVerdict(rec *interp.Record, lost string, quiet bool) {
	w := p.Stdout
	wrap := p.wrapWidth()
	if rec.Doc != "" && !quiet {
		fmt.Fprintf(w, "  doc: %s\n", wrapText(printable(rec.Doc), wrap, 7))
	}
	for _, j := range rec.Expectations {
		mark := map[interp.Outcome]string{interp.Passed: "✓", interp.Failed: "✗", interp.Errored: "!", interp.Skipped: "-"}[j.Outcome]
		line := fmt.Sprintf("  %s %s", mark, or(j.Explanation, j.Src))
		if j.Outcome == interp.Skipped {
			// The reason is the run's (interrupted, stopped early): the verdict line says it.
			line += " (not judged)"
		}
		if j.Reason != "" && j.Outcome != interp.Skipped {
			at := j.Pos
			if j.ReasonPos != nil {
				at = *j.ReasonPos // the part that erred
			}
			line += fmt.Sprintf("\n      %s: %s", at.Rel(p.Cwd), j.Reason)
		}
		fmt.Fprintln(w, wrapLines(printable(line), wrap, 4))
	}
	for _, n := range rec.Notes {
		fmt.Fprintln(w, wrapLines("  note: "+printable(n), wrap, 8))
	}
	if !quiet {
		loads := report.Loads(rec)
		width := 0
		for _, l := range loads {
			width = max(width, len(l.Name))
		}
		for _, l := range loads {
			fmt.Fprintln(w, wrapLines(printable(fmt.Sprintf("  load %-*s  %s", width, l.Name, l.Line())), wrap, 4))
		}
		var pair, line string
		for _, d := range report.Deltas(rec) {
			if pr := fmt.Sprintf("  delta %s → %s (%s):", d.From, d.To, d.Source); pr != pair {
				if pair != "" {
					fmt.Fprintln(w, wrapLines(printable(line), wrap, 4))
				}
				pair, line = pr, pr
			} else {
				line += ","
			}
			line += " " + d.Text()
		}
		if pair != "" {
			fmt.Fprintln(w, wrapLines(printable(line), wrap, 4))
		}
	}
	name := rec.Scenario
	if u := rec.Unit; u != nil && u.Matrix != nil && u.Matrix.Summarized() {
		// One run of a sweep or a repetition: which one, or a quiet console's verdicts
		// ("FAILED shed in 6ms" three times) cannot be told apart.
		name += " [" + report.Combo(u.Vars, u.Round, u.Matrix.Count) + "]"
	}
	verdict := fmt.Sprintf("%s %s in %s", strings.ToUpper(string(rec.Outcome)), name, rec.End.Sub(rec.Start).Round(time.Millisecond))
	if rec.Error != "" && !(rec.Outcome == interp.Interrupted && rec.Error == "interrupted") {
		// (An interrupt's own reason is the verdict again: "INTERRUPTED s in 1.7s: interrupted".)
		verdict += ": " + relError(p.Cwd, rec.Error)
	}
	if failed := failedExpectations(rec); failed > 0 && rec.Outcome != interp.Failed {
		// An error outranks a failure in the outcome (a cleanup that failed after a
		// judged run): the verdict line still says the failure, not only the error.
		verdict += fmt.Sprintf(" — and %d of %d expectations failed", failed, len(rec.Expectations))
	}
	if lb := rec.LeftBehind(); lb != "" {
		verdict += " — but it " + lb
	}
	if mf := report.MayFailed(rec); mf != "" {
		verdict += " — " + mf
	}
	if wn := report.Warned(rec, p.Cwd); wn != "" {
		verdict += " — " + wn
	}
	if fx := fixedSweep(rec); fx != "" {
		verdict += " — " + fx
	}
	if lost != "" {
		verdict += " — " + lost
	}
	fmt.Fprintln(w, wrapLines(printable(verdict), wrap, 2))
}

// failedExpectations counts rec's expectations that failed.
func failedExpectations(rec *interp.Record) int {
	n := 0
	for _, j := range rec.Expectations {
		if j.Outcome == interp.Failed {
			n++
		}
	}
	return n
}

// minWrap is the narrowest width lines are broken to: the status block's (progress) is the
// same. It was 40, over the width less its last column: on a terminal of 40 columns (39),
// the verdict, the expectations and the steps' lines were left to the terminal, which broke
// "127.0.0.2:184" / "80" and "pe" / "rconn.p99", while the status block was fitted to it.
const minWrap = 19

// wrapText breaks s at spaces into lines of at most width columns, every line after the
// first indented by indent spaces (the first starts after a label that long); a width under
// minWrap (or unknown) leaves s as it is.
func wrapText(s string, width, indent int) string {
	if width < minWrap {
		return s
	}
	var b strings.Builder
	col := indent
	for i, word := range strings.Fields(s) {
		n := utf8.RuneCountInString(word)
		if i > 0 && col+1+n > width {
			b.WriteString("\n" + strings.Repeat(" ", indent))
			col = indent
		} else if i > 0 {
			b.WriteByte(' ')
			col++
		}
		b.WriteString(word)
		col += n
	}
	return b.String()
}

// wrapLines breaks every line of s longer than width columns at its last space that fits,
// each continuation indented by indent spaces (or, for a line indented deeper, its own
// indentation and 2 more), so that a terminal does not break it where its last column falls,
// in the middle of a number or a name; colour escapes take no columns. A word longer than a
// line stays whole, after the word before it; spaces are kept as they are (the alignment of names, a string's spaces);
// a width under minWrap (or unknown: not a terminal) leaves s as it is.
func wrapLines(s string, width, indent int) string {
	if width < minWrap || visibleLen(s) <= width && !strings.Contains(s, "\n") {
		return s
	}
	lines := strings.Split(s, "\n")
	for i, line := range lines {
		lines[i] = wrapLine(line, width, indent)
	}
	return strings.Join(lines, "\n")
}

func wrapLine(line string, width, indent int) string {
	if visibleLen(line) <= width {
		return line
	}
	lead := len(line) - len(strings.TrimLeft(line, " "))
	if lead >= indent {
		indent = lead + 2
	}
	words := strings.Split(line, " ")
	var b strings.Builder
	col := 0
	for i, w := range words {
		n := visibleLen(w)
		switch {
		case i == 0:
		case w != "" && !gluedWord[w] && col > lead && col+1+n > width && indent+n < col+1+n && indent+n <= width:
			// (A word longer than a line stays after the one before it, "FAILED <a long
			// name>": on a line of its own the terminal would break it all the same.)
			b.WriteString("\n" + strings.Repeat(" ", indent))
			col = indent
		default:
			b.WriteByte(' ')
			col++
		}
		b.WriteString(w)
		col += n
	}
	return b.String()
}

// gluedWord are the separators a line is not broken before: "· p99 3.8 ms" and "a → b" keep
// the separator at the end of the line, where it says that the line goes on.
var gluedWord = map[string]bool{"·": true, "—": true, "→": true}

// wrapWidth is the width lines are wrapped to: the terminal's, less the last column (a line
// that fills it makes some terminals add an empty line); 0 when stdout is not a terminal.
func (p *process) wrapWidth() int {
	if !p.IsTerminal && !p.shownOnTerminal || p.TermWidth == nil {
		return 0
	}
	return p.TermWidth() - 1
}

// diagLines is a message for stderr (a lint's warning, an error) broken at spaces to the width
// of the terminal stderr is, less its last column, each continuation indented by indent
// spaces: the terminal broke "fort" / "io.requests" where its last column fell. Not a
// terminal: the message as it is, a line per finding for scripts and editors.
func (p *process) diagLines(s string, indent int) string {
	if p.StderrWidth == nil {
		return s
	}
	w := p.StderrWidth()
	if w == 0 {
		return s
	}
	return wrapLines(s, w-1, indent)
}

// relError shortens absolute file names in a message to paths relative to cwd, its control
// characters escaped (see printable).
func relError(cwd, msg string) string {
	if cwd == "" {
		return printable(msg)
	}
	return printable(strings.ReplaceAll(msg, cwd+string(filepath.Separator), ""))
}

// printable is s with its control characters but newlines and tabs written as escapes
// (report.EscapeControls): what a command, a backend or a cluster wrote reaches the console.
func printable(s string) string { return report.EscapeControls(s) }

// loadSelected loads the scenarios of paths and keeps those --scenario and --tag select; an
// invalid spec is reported (exit 2).
func (p *process) loadSelected(args []string, opts dsl.Options, f *runFlags) ([]*dsl.Scenario, error) {
	res, errs, err := p.load(args, opts)
	if err != nil {
		return nil, loadError(err)
	}
	if len(errs) > 0 {
		return nil, p.reportVet("text", res, errs)
	}
	return selectScenarios(res.Scenarios, f.selection)
}

// checkRunFlags refuses the flags that would do nothing for these scenarios, and warns about
// those that are ignored: -n when a scenario declares its namespaces (its first one is the
// default), --context and --kubeconfig on the local target.
func (p *process) checkRunFlags(scenarios []*dsl.Scenario, f *runFlags) error {
	return p.checkTargetFlags(scenarios, &f.targetFlags)
}

// checkTargetFlags refuses target flags that would do nothing for these scenarios: a
// --cluster that names no cluster of theirs, a -n beside declared namespaces.
func (p *process) checkTargetFlags(scenarios []*dsl.Scenario, f *targetFlags) error {
	declared := map[string]bool{}
	var all, unreadable []string
	for _, sc := range scenarios {
		for _, c := range sc.ClusterNames() {
			if !declared[c] {
				declared[c] = true
				all = append(all, c)
			}
		}
		if or(f.target, sc.Target) == "kube" && len(sc.Clusters) > 0 {
			contexts, err := clusterContexts(sc, f)
			if err != nil {
				return err
			}
			unread, err := p.distinctClusters(sc, f, contexts)
			if err != nil {
				return err
			}
			if len(unread) > 0 {
				unreadable = append(unreadable, fmt.Sprintf("scenario %s: %s", sc.Name, strings.Join(unread, "; ")))
			}
		}
	}
	for _, kv := range f.clusters {
		if name, _, _ := strings.Cut(kv, "="); !declared[name] {
			if len(all) == 0 {
				return &exitError{exitInvalid, fmt.Sprintf("--cluster %s: no scenario declares clusters (clusters: {name: \"<context>\"})", kv)}
			}
			return &exitError{exitInvalid, fmt.Sprintf("--cluster %s: no scenario declares a cluster %q (declared: %s)%s", kv, name, strings.Join(all, ", "), dsl.DidYouMean(name, all))}
		}
	}
	for _, sc := range scenarios {
		target := or(f.target, sc.Target)
		if all := sc.Allowed(); f.namespace != "" && len(all) > 0 && target == "kube" {
			return &exitError{exitInvalid, fmt.Sprintf("-n %s: scenario %s declares its namespaces (%s), and steps that name none use its first, %s; -n applies only to scenarios that declare none",
				f.namespace, sc.Name, strings.Join(all, ", "), all[0])}
		}
		if target == "local" {
			for _, fl := range [][2]string{{"--kubeconfig", f.kubeconfig}, {"--context", f.context}, {"-n", f.namespace}} {
				if fl[1] != "" {
					fmt.Fprintf(p.Stderr, "labrun: warning: %s applies to the kube target; %s runs on the local target, which ignores it\n", fl[0], sc.Name)
				}
			}
		}
	}
	if len(unreadable) > 0 {
		return &exitError{exitInfra, strings.Join(unreadable, "\nlabrun: ") + "; nothing was run"}
	}
	return nil
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// checkTarget refuses a --target that names no target.
func (p *process) checkTarget(name string) error {
	if name != "" && name != "local" && name != "kube" && p.Targets[name] == nil {
		names := p.targetNames()
		return &exitError{exitInvalid, fmt.Sprintf("--target %q: no such target%s; expected %s", name, dsl.DidYouMean(name, names), orList(names))}
	}
	return nil
}

// targetNames are the targets --target may name: local, kube, then those registered.
func (p *process) targetNames() []string {
	return append([]string{"local", "kube"}, slices.Sorted(maps.Keys(p.Targets))...)
}

// orList is names as a sentence says them: "local, kube or fake".
func orList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// targetValue is the --target flag: an empty value is refused as it is given. Taken as no
// flag, --target "" (an unset variable in a script: --target "$TARGET") ran each scenario
// on its own target, which the command did not ask for.
type targetValue struct {
	p *process
	s *string
}

func (v targetValue) String() string {
	if v.s == nil {
		return ""
	}
	return *v.s
}

func (v targetValue) Set(s string) error {
	if s == "" {
		return fmt.Errorf("an empty target names none; expected %s (leave --target out for each scenario's own)", orList(v.p.targetNames()))
	}
	*v.s = s
	return nil
}

func (v targetValue) Type() string { return "string" }

// clusterContexts are the kubeconfig contexts of a scenario's clusters: --cluster name=context,
// else what clusters: gives; the first cluster's falls back to --context (then the current one).
func clusterContexts(sc *dsl.Scenario, f *targetFlags) ([]string, error) {
	given := map[string]string{}
	for _, kv := range f.clusters {
		name, ctx, ok := strings.Cut(kv, "=")
		if !ok || name == "" || ctx == "" {
			return nil, &exitError{exitInvalid, fmt.Sprintf("--cluster %q: expected name=context", kv)}
		}
		given[name] = ctx
	}
	out := make([]string, len(sc.Clusters))
	for i, c := range sc.Clusters {
		out[i] = or(given[c.Name], c.Context)
		if out[i] == "" && i == 0 {
			out[i] = f.context // "" is the kubeconfig's current context
		}
		if out[i] == "" && i > 0 {
			return nil, &exitError{exitInvalid, fmt.Sprintf("scenario %s: cluster %s has no kubeconfig context: give it in clusters: or with --cluster %s=<context>", sc.Name, c.Name, c.Name)}
		}
	}
	return out, nil
}

// distinctClusters refuses two of a scenario's clusters whose contexts reach one API server
// (--cluster west=<east's context>, or two contexts of one cluster): a cross-cluster claim
// would run inside one cluster, where it holds with nothing crossing (probe p9 #03). It
// returns the clusters whose context cannot be read from the kubeconfig (it has none of that
// name), each with where its context is given and why, for checkTargetFlags to say before
// anything runs (exit 3: the kubeconfig is this machine's): the run found one when it reached
// its cluster, after the scenarios before it had run, and said the first problem only.
func (p *process) distinctClusters(sc *dsl.Scenario, f *targetFlags, contexts []string) (unread []string, err error) {
	servers := map[string]int{}
	for i, c := range sc.Clusters {
		server, err := kube.Server(kube.Options{Kubeconfig: f.kubeconfig, Context: contexts[i], Getenv: p.Getenv})
		if err != nil {
			where := c.Pos.Rel(p.Cwd).String()
			if slices.ContainsFunc(f.clusters, func(kv string) bool { return strings.HasPrefix(kv, c.Name+"=") }) {
				where = "--cluster " + c.Name + "=" + contexts[i]
			}
			unread = append(unread, fmt.Sprintf("cluster %s (%s): %v", c.Name, where, err))
			continue
		}
		if server == "" {
			continue
		}
		if j, ok := servers[server]; ok {
			return nil, &exitError{exitInvalid, fmt.Sprintf("scenario %s: clusters %s and %s are one cluster (context %s and context %s, both server %s): a scenario's clusters are different clusters; give each its own context (--cluster %s=<context>)",
				sc.Name, sc.Clusters[j].Name, c.Name, or(contexts[j], "(current)"), or(contexts[i], "(current)"), server, c.Name)}
		}
		servers[server] = i
	}
	return unread, nil
}

// newClusters builds the kube target of a scenario that declares clusters: one kube client per
// cluster, each beside this machine's drivers with that cluster's context in the environment
// of its commands. The target returned is the first (default) cluster's, holding them all.
func (p *process) newClusters(ctx context.Context, sc *dsl.Scenario, f *targetFlags, run runInfo) (_ *schema.Target, err error) {
	contexts, err := clusterContexts(sc, f)
	if err != nil {
		return nil, err
	}
	byName := map[string]*schema.Target{}
	var opened []*schema.Target
	defer func() {
		if err != nil {
			for _, t := range opened {
				err = errors.Join(err, t.Close(context.WithoutCancel(ctx)))
			}
		}
	}()
	var where []string
	values := map[string]any{}
	for i, c := range sc.Clusters {
		opts := p.kubeOptions(sc, f, run, contexts[i])
		if f.leftovers {
			p.leftoversBeforeRun(ctx, sc.Name, opts, f.cleanFirst)
		}
		cluster, err := kube.New(ctx, opts)
		if err != nil {
			return nil, fmt.Errorf("cluster %s: %w", c.Name, err)
		}
		host, err := local.New(ctx, nil, local.Options{Dir: sc.Dir, AddEnv: kube.HostEnv(opts)})
		if err != nil {
			return nil, errors.Join(fmt.Errorf("cluster %s: %w", c.Name, err), cluster.Close(context.WithoutCancel(ctx)))
		}
		t := compose.WithHost(cluster, host)
		opened = append(opened, t)
		byName[c.Name] = t
		where = append(where, c.Name+": "+t.Describe)
		v := map[string]any{"context": or(kube.HostEnv(opts)["LABRUN_CONTEXT"], contexts[i])}
		for k, x := range t.Values {
			v[k] = x
		}
		values[c.Name] = v
	}
	top := *byName[sc.DefaultCluster()]
	top.Clusters = byName
	top.Describe = strings.Join(where, "; ")
	top.Values = map[string]any{"clusters": values}
	for k, x := range byName[sc.DefaultCluster()].Values {
		top.Values[k] = x // the default cluster's, as on one cluster
	}
	top.Close = func(ctx context.Context) error {
		var errs []error
		for _, t := range opened {
			errs = append(errs, t.Close(ctx))
		}
		return errors.Join(errs...)
	}
	return &top, nil
}

// kubeOptions are the kube driver's options for a run of sc on the cluster of kubeconfig
// context kctx.
func (p *process) kubeOptions(sc *dsl.Scenario, f *targetFlags, run runInfo, kctx string) kube.Options {
	return kube.Options{
		Kubeconfig: f.kubeconfig, Context: kctx, Namespace: f.namespace,
		AllowedNamespaces: sc.Allowed(), ClusterScoped: sc.ClusterScoped, SystemNamespaces: sc.SystemNamespaces,
		EnvoyVia: f.envoyVia, Getenv: p.Getenv,
		Run: kube.Run{ID: run.id, Scenario: sc.Name, Host: run.host, PID: run.pid, PIDStart: run.pidStart},
	}
}

// newTarget builds the named target for a scenario.
func (p *process) newTarget(ctx context.Context, name string, sc *dsl.Scenario, f *targetFlags, run runInfo) (*schema.Target, error) {
	if mk := p.Targets[name]; mk != nil {
		return mk(ctx, sc)
	}
	switch name {
	case "local":
		return local.New(ctx, sc.Local, local.Options{Dir: sc.Dir, BackendHost: backendHostCmd})
	case "kube":
		if len(sc.Clusters) > 0 {
			return p.newClusters(ctx, sc, f, run)
		}
		opts := p.kubeOptions(sc, f, run, f.context)
		if f.leftovers {
			p.leftoversBeforeRun(ctx, sc.Name, opts, f.cleanFirst)
		}
		cluster, err := kube.New(ctx, opts)
		if err != nil {
			return nil, err
		}
		// Commands and processes without a pod run here, with the run's kubeconfig, context
		// and namespace in their environment (kubectl, istioctl, curl from this machine).
		host, err := local.New(ctx, nil, local.Options{Dir: sc.Dir, AddEnv: kube.HostEnv(opts)})
		if err != nil {
			return nil, errors.Join(err, cluster.Close(context.WithoutCancel(ctx)))
		}
		return compose.WithHost(cluster, host), nil
	}
	return nil, errors.New("unknown target " + name)
}

// junitOfRefusal writes the --junit file path of a command that ended with err before it
// wrote one (a spec refused, a filter that matched nothing, records merge refuses, a target
// that could not be created for any run): one suite of one error case saying why, as every run
// that did not reach its end has. An older file left in its place read as this invocation's
// results to a CI that publishes the JUnit whatever the exit code: old passes for a refused run.
func (p *process) junitOfRefusal(command, path string, err error) error {
	if path == "" || err == nil || p.junitWritten {
		return err
	}
	code, why := exitInvalid, err.Error()
	var ee *exitError
	if errors.As(err, &ee) {
		code = ee.code
		why = ee.msg
	}
	if pe := (*printedError)(nil); errors.As(err, &pe) {
		why = strings.TrimSpace(pe.printed + why)
	}
	if je := (*junitPathError)(nil); errors.As(err, &je) {
		return err // the file itself is what is wrong: nothing can be written there
	}
	if why == "" {
		why = "see labrun's error output"
	}
	// Into a folder not made yet, as a run's (checkWritable): a refusal comes before that.
	// (A folder that cannot be made is said by the write's error below.)
	_ = os.MkdirAll(filepath.Dir(inCwd(p.Cwd, path)), 0o755)
	if werr := report.JUnitRefused(inCwd(p.Cwd, path), "labrun "+command, code, why); werr != nil {
		fmt.Fprintf(p.Stderr, "labrun: junit: %v\n", werr)
	}
	return err
}
