package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/internal/gcfloor"
	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/schema"
	"labrun.dev/labrun/suite"
)

// loadFlags are the flags of every command that loads scenarios.
type loadFlags struct {
	vars       []string
	output     string
	strict     bool
	evalTime   time.Duration
	evalMemory string
	// allowSystem lets a scenario change the system namespaces it opts in to.
	allowSystem bool
}

func (f *loadFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringArrayVar(&f.vars, "var", nil, "set a scenario var: --var name=value (repeatable)")
	cmd.Flags().StringVarP(&f.output, "output", "o", "text", "output format: text, json or yaml")
	cmd.Flags().BoolVar(&f.strict, "strict", false, "make every warning (Istio's silent no-ops: docs/language.md) an error")
	cmd.Flags().DurationVar(&f.evalTime, "eval-timeout", dsl.DefaultBudget.Time,
		"time budget of loading and evaluating the CUE (0: none); over it, exit 2 naming what was being evaluated")
	cmd.Flags().StringVar(&f.evalMemory, "eval-memory", dsl.FormatBytes(dsl.DefaultBudget.Memory),
		"memory budget of loading and evaluating the CUE, e.g. 512MiB (0: none); over it, exit 2 naming what was being evaluated")
	cmd.Flags().BoolVar(&f.allowSystem, "allow-system-namespaces", false,
		"let scenarios change the system namespaces they opt in to with systemNamespaces (kube-system, kube-public, kube-node-lease, default, istio-system)")
}

func (f *loadFlags) options() (dsl.Options, error) {
	opts := dsl.Options{Vars: map[string]string{}, GivenVars: map[string]bool{}, Strict: f.strict, Budget: dsl.Budget{Time: f.evalTime}, AllowSystemNamespaces: f.allowSystem}
	if f.evalTime < 0 {
		return opts, &exitError{exitInvalid, fmt.Sprintf("--eval-timeout %v: expected a duration of 0 or more", f.evalTime)}
	}
	mem, err := dsl.ParseBytes(f.evalMemory)
	if err != nil {
		return opts, &exitError{exitInvalid, fmt.Sprintf("--eval-memory: %v", err)}
	}
	opts.Budget.Memory = mem
	for _, v := range f.vars {
		k, val, ok := strings.Cut(v, "=")
		if !ok || k == "" {
			return opts, &exitError{exitInvalid, fmt.Sprintf("--var %q: expected name=value", v)}
		}
		if first, dup := opts.Vars[k]; dup {
			// The last would win, the first be dropped unsaid: refused as --sweep given twice is.
			return opts, &exitError{exitInvalid, fmt.Sprintf("--var %s given twice (%s, then %s): give it once", k, first, val)}
		}
		opts.Vars[k] = val
		opts.GivenVars[k] = true
	}
	if err := checkOutput(f.output); err != nil {
		return opts, err
	}
	return opts, nil
}

// How loading paces the collector: a target of 400 % spends much less CPU on CUE's
// short-lived evaluation state than the default 100 % (the repository's vet: 0.55 s instead
// of 0.68 at 200 %), and a floor of 96 MiB spares a package that fits in it every marking
// of a build in progress: the loader collects between the two builds of a package, when
// little is live (the repository's vet: one collection instead of four, about 50 ms less;
// peak RSS 87 MB instead of 74, 300 files 95-99 instead of 83; the bar is 120). BENCHMARKS.md
// has the figures. A memory limit alone would make large packages collect without end.
const (
	loadGCPercent = 400
	// runLoadGCPercent is a run's (ForRun).
	runLoadGCPercent = 50
	loadHeapFloor    = 96 << 20
	// discardedBuildGCPercent paces vet's build of a package checked step by kind
	// (dsl.Options.DiscardedBuild): the loader collects as soon as it ends, so a cycle in
	// its middle only marks what is about to die (1,000 quickstarts: one cycle of 156 MB
	// live, ~0.12 s of CPU, with no lower peak RSS than without it).
	discardedBuildGCPercent = 800
)

// paceLoads sets the collector's pacing for loads with opts (loadTo) and returns what puts
// back the settings it found. vet holds it over the loads of its sweeps' combinations
// (collect): between two of them the defaults would collect the garbage of a process that is
// about to exit (vet of examples/: three cycles, ~20 ms of its 200 ms of CPU).
func (p *process) paceLoads(opts dsl.Options) (restore func()) {
	percent := loadGCPercent
	if opts.ForRun {
		percent = runLoadGCPercent
	}
	switch m := opts.Budget.Memory; {
	case p.Getenv("GOGC") != "":
		// The user's setting wins.
		return func() {}
	case p.Getenv("GOMEMLIMIT") != "", m > 0 && m < 2*loadHeapFloor:
		// The user's limit, or an --eval-memory budget (which counts garbage too) that the
		// garbage under the floor could use up.
		prev := debug.SetGCPercent(percent)
		return func() { debug.SetGCPercent(prev) }
	case opts.ForRun:
		// The switch to pacing waits for a second cycle over the threshold: a run's load
		// collected first in the middle of its first build (the 10,000-step run: 70 MB
		// marked live, 35 MB at the next cycle), and pacing at 50 % from there took the heap
		// to 99 MB instead of the floor's ~80.
		return gcfloor.SetAfter(loadHeapFloor, percent, 2)
	default:
		return gcfloor.Set(loadHeapFloor, percent)
	}
}

// load loads paths; invalid specs come back as dsl.Errors with positions relative to cwd.
func (p *process) load(paths []string, opts dsl.Options) (*dsl.Result, dsl.Errors, error) {
	return p.loadTo(p.Stderr, paths, opts)
}

// loadTo is load with its warnings written to out.
func (p *process) loadTo(out io.Writer, paths []string, opts dsl.Options) (*dsl.Result, dsl.Errors, error) {
	return p.loadSwept(out, paths, opts, nil)
}

// loadSwept is loadTo for a matrix whose --sweep flags give values to the vars sweptByFlag: an
// expectation reading one is not judged for vacuity at the var's declared value, which no
// run has (each combination's check judges it at its own: unitsOf).
func (p *process) loadSwept(out io.Writer, paths []string, opts dsl.Options, sweptByFlag []string) (*dsl.Result, dsl.Errors, error) {
	// Loading allocates much that dies young (CUE's evaluation of each package) and keeps
	// little: no collection before loadHeapFloor (the loader collects between two builds,
	// when little is live), then a GC target of 400 %: vet's CPU. A run's load (ForRun) paces
	// at runLoadGCPercent (50 %) past the floor: the process lives on, and the load's peak is
	// the run's. What runs after the load gets the defaults back.
	res, err := func() (*dsl.Result, error) {
		if !p.loadsPaced {
			defer p.paceLoads(opts)()
		}
		// The scenarios with problems are kept, to be judged below as far as their
		// problems leave them whole.
		opts.Partial = true
		if !opts.ForRun && p.Getenv("GOGC") == "" && p.Getenv("GOMEMLIMIT") == "" {
			opts.DiscardedBuild = func() func() { return gcfloor.Boost(discardedBuildGCPercent) }
		}
		return dsl.Load(paths, opts)
	}()
	if opts.ForRun && p.Getenv("GOGC") == "" {
		// The evaluation is garbage now and little is live: collect it before the run
		// allocates on top of it (a 10,000-step run: 111 MB of heap before the first
		// collection of the run, 62 MB after this one).
		runtime.GC()
	}
	if res != nil {
		for _, w := range res.Skipped.Rel(p.Cwd) {
			p.printWarning(out, &dsl.Warning{Pos: w.Pos, Code: "skipped", Msg: w.Msg})
		}
	}
	// Warnings --strict made errors do not stop the checks below: every problem is said at once.
	var warned dsl.Errors
	if err != nil {
		var errs dsl.Errors
		if !errors.As(err, &errs) {
			return res, nil, err
		}
		if !errs.OnlyWarnings() {
			// What the judge finds is said with the load's problems, not once they are
			// fixed (a newcomer fixing ten met two more, then two more): in the scenarios
			// that have none, and in those that do as far as their problems leave them
			// whole.
			// (A problem of no scenario's, such as a --var refused, stops the judging: the
			// judge would draw with the value declared, not the one given.)
			loaded := errs
			// The lints' findings on the scenarios without problems are said too, as
			// --strict says them (as errors) and vet -o json lists them: a newcomer fixing
			// one file's problem met another file's warnings only then.
			for _, w := range res.Warnings {
				p.printWarning(out, w)
			}
			for _, sc := range res.Scenarios {
				errs = append(errs, interp.CheckSurvivors(sc)...)
			}
			if len(sweptByFlag) == 0 {
				for _, sc := range slices.Concat(res.Scenarios, res.Partial) {
					errs = append(errs, interp.CheckCannotFailOf(sc, loaded)...)
				}
			}
			errs.Sort()
			return res, errs.Rel(p.Cwd), nil
		}
		warned = errs.Rel(p.Cwd)
	}
	for _, w := range res.Warnings {
		p.printWarning(out, w)
	}
	// A --var that no scenario declares would change nothing: a typo, refused.
	if msgs := dsl.UndeclaredVars(res, opts.Vars); len(msgs) > 0 {
		return res, nil, &exitError{exitInvalid, strings.Join(msgs, "\n")}
	}
	// The survivors keys name mutants, which labrun mutate builds (interp), and an expectation
	// that holds of every load fortio could record needs the judge (interp): checked here, for
	// vet and every command that runs or judges.
	var errs dsl.Errors
	for _, sc := range res.Scenarios {
		errs = append(errs, interp.CheckSurvivors(sc)...)
		errs = append(errs, interp.CheckCannotFail(sc, sweptByFlag...)...)
	}
	if errs = append(warned, errs.Rel(p.Cwd)...); len(errs) > 0 {
		return res, errs, nil
	}
	return res, nil, nil
}

// loadError is the exit of a load that could not be done: a usage error as it is, anything
// else an infrastructure error.
func loadError(err error) error {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee
	}
	return &exitError{exitInfra, err.Error()}
}

func newVetCmd(p *process) *cobra.Command {
	var f loadFlags
	var tf targetFlags
	var mf matrixFlags
	var server bool
	var parallel int
	cmd := &cobra.Command{
		Use:   "vet PATH...",
		Short: "Check scenarios without running them: every problem, at its file:line:col",
		Long: `vet loads scenarios (.cue files, directories, Markdown documents), validates them against
labrun's schema, compiles every expression and makes every check run makes before its first
step: each step kind's own checks, what the target can run (--target, else the scenario's
target, else local), the namespace guard on every object known before the run, and the
timeline. It prints every problem as file:line:col: message and exits 2, or prints a
one-line summary and exits 0. With --server it also dry-runs the objects on the cluster.


A scenario that sweeps (its own sweep:, --sweep) is checked at every combination of its
values, each value against the var's declared type, as run checks them before its first run;
--count and --sweep are run's. A lint's warning found only in a combination other than the
default is said once, naming the combinations that have it (an error with --strict).

With --parallel N (above 1) vet also says what run --parallel N and plan --parallel N say of
the runs: the isolation lint's findings (warning[mesh-wide]), the objects whose effect reaches
beyond a run's own namespaces, so that the runs that share them wait for each other. They
stay warnings under --strict, as run --parallel N --strict runs such runs (one after the
other).

A .cue file is judged with the rest of its CUE package (the files of its directory, and of the
directories above it up to cue.mod, that declare the same package): CUE builds a package as a
whole, so vetting one file costs what its package costs, not what the other packages and files
of the directory cost. Files named *.cue that are not regular files (named pipes, dangling
symlinks) or cannot be read are skipped with a warning, and so are syntax errors of other
packages next to the named file.

Evaluation has a budget, --eval-timeout and --eval-memory (the growth of the heap while
loading): CUE can be made to compute without end (a comprehension over list.Range(0, 1e8, 1),
steps nested a thousand deep), and over budget vet stops with exit 2, naming the file or
directory and what it was evaluating. Raise the budget for very large kits.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, err := f.options()
			if err != nil {
				return err
			}
			if err := p.checkTarget(tf.target); err != nil {
				return err
			}
			if parallel < 0 {
				return &exitError{exitInvalid, fmt.Sprintf("--parallel %d: expected 1 or more", parallel)}
			}
			opts.Target = tf.target
			if server {
				opts.Target = "kube"
				// An Istio kind's fields, kinds and versions are the cluster's CRDs' to
				// judge (vetServer), not those of the Istio release vet knows: the
				// cluster may run a newer one.
				opts.IstioByCluster = true
			}
			// Only --server's dry runs and --parallel's isolation lint ask where a step's
			// fields are written once the loads are done: without them the evaluations are
			// let go at the end of each load.
			opts.DropEvaluation = !server && parallel <= 1
			// Every combination of every sweep (declared, --sweep) is loaded and checked, as
			// run does before its first step.
			// With --server the scenarios are loaded twice (below): the first load's
			// warnings are said only if the second does not happen, so that each is said
			// once (before, vet --server printed every warning twice).
			var first bytes.Buffer
			x := expansion{matrix: mf, output: f.output, vet: true}
			if server {
				x.warnings = &first
			}
			w, err := p.expand(args, opts, x)
			if err != nil {
				_, _ = p.Stderr.Write(first.Bytes())
				return err
			}
			var errs dsl.Errors
			if server {
				// The DestinationRules the cluster holds already count for unknown-subset:
				// the scenarios are loaded again with them.
				rules, err := p.clusterRules(w.res.Scenarios, &tf)
				if err != nil {
					_, _ = p.Stderr.Write(first.Bytes())
					return err
				}
				if len(rules) > 0 {
					opts.ClusterRules = rules
					if w, err = p.expand(args, opts, expansion{matrix: mf, output: f.output, vet: true}); err != nil {
						return err
					}
				} else {
					_, _ = p.Stderr.Write(first.Bytes())
				}
				serverErrs, err := p.vetServer(serverCombinations(w), &tf)
				if err != nil {
					return err
				}
				errs = serverErrs
			}
			if parallel > 1 && len(errs) == 0 {
				// What run --parallel N prints before its runs (before, vet --strict said
				// ok and nothing of the objects that make them wait for each other); vet
				// -o json lists them among its warnings.
				_, leaks := jobsOf(w, tf.target)
				if !machine(f.output) {
					p.printLeaks(leaks)
				}
				for _, l := range leaks {
					w.res.Warnings = append(w.res.Warnings, &dsl.Warning{Pos: l.Pos, Code: suite.LintCode, Scenario: l.Scenario, Msg: l.Msg + "; " + l.Fix})
				}
			}
			if err := p.reportVet(f.output, w.res, errs); err != nil || machine(f.output) {
				return err
			}
			for _, m := range w.matrices {
				if m.Summarized() {
					fmt.Fprintf(p.Stdout, "  %s: %s\n", m.Scenario, matrixSummary(m))
				}
			}
			return nil
		},
	}
	f.register(cmd)
	tf.register(p, cmd)
	mf.register(cmd, "vet")
	cmd.Flags().IntVar(&parallel, "parallel", 0, "also say what run --parallel N says of the runs: the objects that leak mesh-wide (warning[mesh-wide]; warnings even with --strict), which make the runs that share them wait for each other")
	cmd.Flags().BoolVar(&server, "server", false, "also dry-run every object the scenarios apply on the cluster (kube target), so its schemas catch misspelled fields")
	return cmd
}

// clusterRules reads, for each scenario (of the kube target, without several clusters), the
// DestinationRules its cluster holds in the namespaces a rule for its routes is looked up in:
// its own fixed namespaces and Istio's root namespace, istio-system. A scenario whose rules
// cannot be read (no Istio CRDs) is said on stderr and left out.
func (p *process) clusterRules(scenarios []*dsl.Scenario, tf *targetFlags) (map[string][]map[string]any, error) {
	if err := p.checkTargetFlags(scenarios, tf); err != nil {
		return nil, err
	}
	ctx, _, stop := p.runContexts()
	defer stop()
	out := map[string][]map[string]any{}
	for _, sc := range scenarios {
		if _, done := out[sc.Name]; done || len(sc.Clusters) > 1 {
			continue
		}
		target, err := p.newTarget(ctx, "kube", sc, tf, newRunInfo())
		if err != nil {
			return nil, &exitError{exitInfra, fmt.Sprintf("vet --server: %v", err)}
		}
		var rules []map[string]any
		var readErr error
		for _, ns := range append(slices.Clone(sc.Namespaces), "istio-system") {
			v, err := target.Cluster.Get(ctx, schema.Get{Kind: "DestinationRule", APIVersion: "networking.istio.io/v1", Namespace: ns})
			if err != nil {
				readErr = err
				break
			}
			list, _ := v.([]any)
			for _, o := range list {
				if m, ok := o.(map[string]any); ok {
					if md, _ := m["metadata"].(map[string]any); md != nil && md["namespace"] == nil {
						md["namespace"] = ns
					}
					rules = append(rules, m)
				}
			}
		}
		if target.Close != nil {
			_ = target.Close(ctx)
		}
		if readErr != nil {
			fmt.Fprintf(p.Stderr, "labrun: vet --server: %s: the cluster's DestinationRules not read (unknown-subset judges the scenario's alone): %s\n", sc.Name, relError(p.Cwd, readErr.Error()))
			continue
		}
		if rules == nil {
			rules = []map[string]any{}
		}
		out[sc.Name] = rules
	}
	return out, nil
}

// serverCombination is a scenario loaded at one combination of its sweep (vars empty: the
// scenario sweeps nothing), of all its matrix's combinations.
type serverCombination struct {
	sc   *dsl.Scenario
	vars map[string]string
	all  int
}

// serverCombinations are the scenarios vet --server dry-runs: each combination of each sweep
// (declared, --sweep), as the runs apply them. Before, only the default combination's objects
// were sent: vet --server --sweep t=1m30s,0s said ok of a VirtualService whose timeout the API
// server refuses at 0s, which only the run's apply then said.
func serverCombinations(w *work) []serverCombination {
	var out []serverCombination
	seen := map[*dsl.Scenario]bool{}
	for _, u := range w.units {
		if u.Scenario == nil || seen[u.Scenario] {
			continue
		}
		seen[u.Scenario] = true
		out = append(out, serverCombination{sc: u.Scenario, vars: u.Vars, all: len(u.Matrix.Combinations())})
	}
	return out
}

// vetServer dry-runs the objects of every scenario, at each combination of its sweep, on the
// cluster. A problem of some combinations only names them.
func (p *process) vetServer(combos []serverCombination, tf *targetFlags) (dsl.Errors, error) {
	var scenarios []*dsl.Scenario
	for _, c := range combos {
		scenarios = append(scenarios, c.sc)
	}
	if err := p.checkTargetFlags(scenarios, tf); err != nil {
		return nil, err
	}
	ctx, _, stop := p.runContexts()
	defer stop()
	type found struct {
		err    *dsl.Error
		combos []string
		all    int
	}
	var said []*found
	byKey := map[string]*found{}
	skippedSaid := map[string]bool{}
	// The answers of a dry run by what it sends: the combinations of a sweep whose vars change
	// only loads or claims send the same objects, and the cluster is asked once.
	type answer struct {
		problems []interp.DryRunProblem
		skipped  []string
	}
	asked := map[string]answer{}
	for _, c := range combos {
		sc := c.sc
		key := interp.DryRunKey(sc)
		a, ok := asked[key]
		if !ok || key == "" {
			target, err := p.newTarget(ctx, "kube", sc, tf, newRunInfo())
			if err != nil {
				return nil, &exitError{exitInfra, fmt.Sprintf("vet --server: %v", err)}
			}
			a.problems, a.skipped, err = interp.DryRun(ctx, target, sc)
			if target.Close != nil {
				_ = target.Close(ctx)
			}
			if err != nil {
				return nil, &exitError{exitInfra, fmt.Sprintf("vet --server: %s: %v", sc.Name, err)}
			}
			if key != "" {
				asked[key] = a
			}
		}
		problems, skipped := a.problems, a.skipped
		for _, s := range skipped {
			if skippedSaid[sc.Name+"\x00"+s] {
				continue // said at another combination
			}
			skippedSaid[sc.Name+"\x00"+s] = true
			fmt.Fprintf(p.Stderr, "labrun: vet --server: %s: not validated: %s\n", sc.Name, relError(p.Cwd, s))
		}
		for _, pr := range problems {
			msg := "rejected by the cluster: " + pr.Msg
			switch {
			case pr.Whole:
				msg = pr.Msg
			case pr.Schema:
				msg = "by the cluster's CRD: " + pr.Msg
			}
			e := &dsl.Error{Pos: pr.Pos.Rel(p.Cwd), Path: sc.Name, Msg: msg}
			key := e.Pos.String() + "\x00" + sc.Name + "\x00" + msg
			f := byKey[key]
			if f == nil {
				f = &found{err: e, all: c.all}
				byKey[key] = f
				said = append(said, f)
			}
			if len(c.vars) > 0 {
				f.combos = append(f.combos, dsl.ComboKey(c.vars))
			}
		}
	}
	var errs dsl.Errors
	for _, f := range said {
		if len(f.combos) > 0 && len(f.combos) < f.all {
			f.err.Msg += " (" + combosSaid(f.combos, f.all) + ")"
		}
		errs = append(errs, f.err)
	}
	return errs, nil
}

type vetJSON struct {
	OK        bool         `json:"ok"`
	Files     int          `json:"files"`
	Scenarios []string     `json:"scenarios"`
	Errors    []*dsl.Error `json:"errors"`
	// Warnings are the lints' findings (Istio's silent no-ops), positions relative to cwd.
	Warnings []*dsl.Warning `json:"warnings,omitempty"`
}

func (p *process) reportVet(output string, res *dsl.Result, errs dsl.Errors) error {
	var names []string
	for _, s := range res.Scenarios {
		names = append(names, s.Name)
	}
	files := uniqueCount(res.Files)
	if machine(output) {
		out := vetJSON{OK: len(errs) == 0, Files: files, Scenarios: names, Errors: errs}
		for _, w := range res.Warnings {
			rel := *w
			rel.Pos = w.Pos.Rel(p.Cwd)
			out.Warnings = append(out.Warnings, &rel)
		}
		if out.Errors == nil {
			out.Errors = []*dsl.Error{}
		}
		if out.Scenarios == nil {
			out.Scenarios = []string{}
		}
		p.printDoc(output, out)
		if len(errs) > 0 {
			return &exitError{code: exitInvalid}
		}
		return nil
	}
	if len(errs) > 0 {
		var printed strings.Builder
		for _, e := range errs {
			fmt.Fprintln(p.Stderr, p.diagLines(e.Error(), 4))
			printed.WriteString(e.Error() + "\n")
		}
		msg := fmt.Sprintf("%d problem%s", len(errs), plural(len(errs)))
		// (A file named twice, as itself and through its folder, holds its scenarios once.)
		with := map[string]bool{}
		for _, sc := range res.Partial {
			with[sc.Pos.String()+"\x00"+sc.Name] = true
		}
		if n := len(with); n > 0 {
			// The lints look at a scenario once it has no problems: that none warned of
			// these says nothing of them.
			msg += fmt.Sprintf(" (lints skipped %d scenario%s with problems: they look at a scenario once it has none)", n, plural(n))
		}
		return &printedError{exitError{exitInvalid, msg}, printed.String()}
	}
	fmt.Fprintf(p.Stdout, "ok: %d scenario%s in %d file%s\n", len(names), plural(len(names)), files, plural(files))
	return nil
}

// printWarning prints a lint's finding to out (stderr, or what reaches it later), its file
// relative to the working directory, wrapped to stderr's terminal (diagLines).
func (p *process) printWarning(out io.Writer, w *dsl.Warning) {
	rel := *w
	rel.Pos = w.Pos.Rel(p.Cwd)
	fmt.Fprintln(out, p.diagLines(rel.String(), 4))
}

func uniqueCount(xs []string) int {
	seen := map[string]bool{}
	for _, x := range xs {
		seen[x] = true
	}
	return len(seen)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
