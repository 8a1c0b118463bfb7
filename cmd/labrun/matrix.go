package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/report"
)

// Experiments as science: --count N runs each scenario N times, --sweep var=a,b,c runs it once
// per value (repeatable: the cartesian product), and a scenario's own sweep: runs every
// combination of it; a --sweep flag replaces the values of the var it names only, and --count
// repeats every combination. Before anything runs, the matrix is worked out as a list of units
// (dsl.Unit: scenario × combination × round), each combination loaded with its vars (as --var:
// CUE fields computed from them change) and checked: a value of the wrong type or a
// combination the schema refuses stops the run before its first step. Each unit is an
// ordinary run (setup, steps, cleanup, its own report) whose record carries the unit; a
// matrix that sweeps or repeats gets a summary made from its records (report.Summarize).

// matrixFlags are the flags that make a matrix of runs (run, vet, plan).
type matrixFlags struct {
	count  int
	sweeps []string
	// shard is --shard i/n (run, plan): keep only that shard of the units (shard.go).
	shard string
}

// parseSweeps reads --sweep flags: name=v1,v2,...
func parseSweeps(flags []string) ([]dsl.SweepVar, error) {
	var out []dsl.SweepVar
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
		out = append(out, dsl.SweepVar{Name: name, Values: strings.Split(vals, ","), From: "--sweep"})
	}
	return out, nil
}

// work is what an invocation runs: each selected scenario's matrix, and every unit of them in
// the order they run.
type work struct {
	res      *dsl.Result
	matrices []*dsl.Matrix
	units    []*dsl.Unit
	// shard, when set, is the shard of the runs that units are (--shard), of all runs.
	shard *shardOf
}

// scenarios are the scenarios of the work, one per matrix (at the default vars).
func (w *work) scenarioCount() int { return len(w.matrices) }

// expansion says what to expand: the scenarios selected (--scenario, --tag), the matrix
// flags, the pass rate, how problems are reported (output: text, json or yaml), and whether no
// scenario at all is fine (vet).
type expansion struct {
	sel      selection
	matrix   matrixFlags
	passRate float64
	// passRateGiven: --pass-rate was given (its 0 is refused, not the default).
	passRateGiven bool
	output        string
	vet           bool
	// target is --target (run, plan): what the runs' footprints are worked out for (--shard).
	target string
	// warnings is where the lints' warnings go while loading; nil is stderr.
	warnings io.Writer
}

// expand loads args (DIR/... recursing), selects the scenarios and works out every matrix and
// its units, loading each combination with its vars; every problem of every combination is
// reported before anything runs (exit 2).
func (p *process) expand(args []string, opts dsl.Options, x expansion) (*work, error) {
	out := x.warnings
	if out == nil {
		out = p.Stderr
	}
	w, errs, err := p.collect(out, args, opts, x)
	if err != nil {
		return nil, err
	}
	if len(errs) == 0 && w.res != nil {
		// The tolerance lines of the Markdown documents' expected blocks, compiled as labrun
		// doc compiles them: vet and run of a document refuse what doc would.
		var docs []string
		seen := map[string]bool{}
		for _, sc := range w.res.Scenarios {
			if f := sc.Pos.File; isMarkdown(f) && !seen[f] {
				seen[f] = true
				docs = append(docs, f)
			}
		}
		errs = p.toleranceErrors(docs, w.res.Scenarios)
	}
	if len(errs) > 0 {
		return nil, p.reportVet(x.output, w.res, errs)
	}
	if x.matrix.shard != "" {
		spec, err := p.parseShard(x.matrix.shard)
		if err != nil {
			return nil, err
		}
		w.keepShard(spec, x.target, p.sources)
	}
	return w, nil
}

// collect is expand without reporting: the work, or every problem of every combination
// (positions relative to the working directory) with the work's load result; the load's
// warnings are written to out. vet reports what it returns, and the language server
// (labrun lsp) publishes it: the two never differ.
func (p *process) collect(out io.Writer, args []string, opts dsl.Options, x expansion) (w *work, errs dsl.Errors, err error) {
	mf, passRate := x.matrix, x.passRate
	sweeps, err := parseSweeps(mf.sweeps)
	if err != nil {
		return nil, nil, err
	}
	if mf.count < 1 {
		return nil, nil, &exitError{exitInvalid, fmt.Sprintf("--count %d: expected 1 or more", mf.count)}
	}
	if x.passRateGiven || passRate != 0 {
		if err := checkPassRate(passRate, mf.count); err != nil {
			return nil, nil, err
		}
	}
	for _, s := range sweeps {
		if _, ok := opts.Vars[s.Name]; ok {
			return nil, nil, &exitError{exitInvalid, fmt.Sprintf("--sweep %s and --var %s: give one", s.Name, s.Name)}
		}
	}
	paths, err := expandPaths(p.Cwd, args)
	if err != nil {
		return nil, nil, err
	}
	// The combinations' loads (below) parse no package again: the load hands them its
	// syntax. A run's load does not keep it (the run would hold it).
	opts.KeepSyntax = !opts.ForRun
	var sweptByFlag []string
	for _, s := range sweeps {
		sweptByFlag = append(sweptByFlag, s.Name)
	}
	res, errs, err := p.loadSwept(out, paths, opts, sweptByFlag)
	opts.KeepSyntax = false
	if err != nil {
		return nil, nil, loadError(err)
	}
	combos := dsl.NewCombinations()
	combos.Reuse(res)
	w = &work{res: res}
	if len(errs) > 0 && !errs.OnlyWarnings() {
		errs = append(errs, p.combinationProblems(res, sweeps, opts, x, errs)...)
		errs.Sort()
		return w, errs, nil
	}
	// The lints' findings said already: a combination's load says them again.
	said, strict := slices.Clone(res.Warnings), opts.Strict
	// Warnings --strict made errors: the sweeps' checks below still run, so that every
	// problem is said at once (each combination's load would repeat the warnings).
	if warned := errs; len(warned) > 0 {
		for _, e := range warned {
			if e.Warning != "" {
				said = append(said, &dsl.Warning{Pos: e.Pos, Scenario: e.Path, Code: e.Warning,
					Msg: strings.TrimPrefix(e.Msg, "warning["+e.Warning+"] (an error with --strict): ")})
			}
		}
		errs, opts.Strict = nil, false
		defer func() {
			if err == nil {
				errs = append(warned, errs...)
			}
		}()
	}
	sweepVars := map[string]string{}
	for _, s := range sweeps {
		sweepVars[s.Name] = strings.Join(s.Values, ",")
	}
	if msgs := dsl.UndeclaredVars(res, sweepVars); len(msgs) > 0 {
		return nil, nil, &exitError{exitInvalid, strings.ReplaceAll(strings.Join(msgs, "\n"), "--var ", "--sweep ")}
	}
	selected := res.Scenarios
	if !x.sel.empty() || len(selected) == 0 && !x.vet {
		if selected, err = selectScenarios(res.Scenarios, x.sel); err != nil {
			return nil, nil, err
		}
	}
	for _, sc := range selected {
		errs = append(errs, dsl.CheckSweep(sc, sweeps)...)
	}
	if len(errs) > 0 {
		return w, errs.Rel(p.Cwd), nil
	}
	// The combinations' loads share their packages' syntax and the schema's build: the load
	// above found no problem in any of them.
	opts.Combinations = combos
	if !opts.ForRun && !p.loadsPaced && slices.ContainsFunc(selected, func(sc *dsl.Scenario) bool { return len(sc.Sweep) > 0 || len(sweeps) > 0 }) {
		// vet's combinations' loads share one pacing: restored between two of them, the
		// defaults would collect in the checks after each (vet of examples/: 4 cycles → 1,
		// CPU 171 → 125 ms). Not over the packages' loads and their checks: held there, the
		// heap grows under 400 % pacing (1,000 quickstarts: 257 → 297 MB RSS). The
		// packages' evaluation is garbage now: collect it before the combinations build on
		// top of it (the repository's peak RSS: 109 MB without this, 101 MB with it), unless
		// the heap is too small for that to matter: since vet lets its evaluations go
		// (dsl.Options.DropEvaluation) the repository's heap is 16 MB here, the peak the
		// same without the collection (103 MB), and the collection ~3 % of vet's CPU.
		if p.Getenv("GOGC") == "" && heapBytes() >= combosGCHeap {
			runtime.GC()
		}
		restore := p.paceLoads(opts)
		p.loadsPaced = true
		defer func() { p.loadsPaced = false; restore() }()
	}
	for _, sc := range selected {
		m := dsl.NewMatrix(sc, sweeps, opts.Vars, mf.count, passRate)
		p.secrets.addBase(interp.MatrixRedactor(m, sc))
		units, uerrs, warns := p.unitsOf(m, sc, opts, !x.vet, said, nil)
		sweepWarns := dsl.SweepWarnings(sc, sweeps)
		warns = append(sweepWarns, warns...)
		// A --sweep flag's warning is the scenario's as the lints' are: each run's record
		// (and its reports) keeps it, as it keeps those its load found. Before, only the
		// console said it, before the runs.
		noted := map[*dsl.Scenario]bool{}
		for _, u := range units {
			if u.Scenario != nil && !noted[u.Scenario] && !strict {
				noted[u.Scenario] = true
				u.Scenario.Warnings = append(slices.Clip(u.Scenario.Warnings), sweepWarns...)
			}
		}
		errs = append(errs, uerrs...)
		w.matrices = append(w.matrices, m)
		w.units = append(w.units, units...)
		// A lint's finding in a combination other than the default is said as the load's
		// own are: before, plain vet said ok and nothing of a load URL that, at one value
		// of the sweep, names an address where nothing listens. (With --strict the
		// combination's load made it an error, unless the default's warnings had: then
		// the combinations were loaded without it.)
		for _, wr := range warns {
			if strict {
				errs = append(errs, &dsl.Error{Pos: wr.Pos.Rel(p.Cwd), Path: wr.Scenario, Warning: wr.Code,
					Msg: fmt.Sprintf("warning[%s] (an error with --strict): %s", wr.Code, wr.Msg)})
				continue
			}
			p.printWarning(out, wr)
			res.Warnings = append(res.Warnings, wr) // vet -o json and labrun lsp report them too
		}
	}
	if len(errs) > 0 {
		return w, errs, nil
	}
	// Two scenarios of one name (in two files): their units' ids name the file too.
	byName := map[string]int{}
	for _, m := range w.matrices {
		byName[m.Scenario]++
	}
	for _, u := range w.units {
		if byName[u.Matrix.Scenario] > 1 {
			u.ID = relPath(p.Cwd, u.Matrix.File) + ":" + u.ID
		}
	}
	return w, nil, nil
}

// combinationProblems are the problems of the sweeps' combinations of a load that had
// problems (said, the default combination's, left out): each combination is loaded on its
// own, as unitsOf loads it (the load's syntax is not shared: it found problems). Before, vet
// checked the other combinations only once the default was clean: a swept value the field it
// feeds refuses was said only once the scenario's other problems were fixed.
func (p *process) combinationProblems(res *dsl.Result, sweeps []dsl.SweepVar, opts dsl.Options, x expansion, said dsl.Errors) dsl.Errors {
	scenarios := slices.Concat(res.Scenarios, res.Partial)
	if !x.sel.empty() {
		scenarios, _ = selectScenarios(scenarios, x.sel) // none selected: none checked
	}
	opts.Combinations = nil
	var errs dsl.Errors
	for _, sc := range scenarios {
		if len(sc.Sweep) == 0 && len(sweeps) == 0 || slices.ContainsFunc(said, func(e *dsl.Error) bool {
			// A sweep or vars with a problem make no combinations to check: its values'
			// problems are said at them, by the load.
			return strings.HasPrefix(e.Path+".", sc.Name+".sweep.") || strings.HasPrefix(e.Path+".", sc.Name+".vars.")
		}) {
			continue
		}
		if serrs := dsl.CheckSweep(sc, sweeps); len(serrs) > 0 {
			errs = append(errs, serrs.Rel(p.Cwd)...)
			continue
		}
		m := dsl.NewMatrix(sc, sweeps, opts.Vars, 1, 0)
		_, uerrs, _ := p.unitsOf(m, sc, opts, false, nil, said)
		errs = append(errs, uerrs...)
	}
	return errs
}

// unitsOf lists m's units: each combination of its sweep is loaded from the scenario's file
// with its vars (the default combination is sc itself). The problems of a combination are
// reported at their positions, naming the combinations that have them. sc's load found no
// problem in its package (what opts.Combinations' loads rely on). Without plan, the units'
// Planned spans are zero (vet shows none). warns are the lints' findings of sc in its
// combinations that are not among said (the default combination's, said already), once each,
// naming the combinations that have them; saidErrs are problems said already (the default
// combination's load's, when it had any), not said again.
func (p *process) unitsOf(m *dsl.Matrix, sc *dsl.Scenario, opts dsl.Options, plan bool, said []*dsl.Warning, saidErrs dsl.Errors) (units []*dsl.Unit, errs dsl.Errors, warns []*dsl.Warning) {
	type problem struct {
		err    *dsl.Error
		combos []string
	}
	var problems []*problem
	seen := map[string]*problem{}
	problemKey := func(e *dsl.Error) string { return e.Pos.String() + "\x00" + e.Path + "\x00" + e.Msg }
	known := map[string]bool{}
	for _, e := range saidErrs {
		known[problemKey(e)] = true
	}
	type finding struct {
		w      *dsl.Warning
		combos []string
	}
	var findings []*finding
	found := map[string]*finding{}
	warningKey := func(w *dsl.Warning) string {
		return w.Pos.Rel(p.Cwd).String() + "\x00" + w.Scenario + "\x00" + w.Code + "\x00" + w.Msg
	}
	for _, w := range said {
		found[warningKey(w)] = nil // said: not again
	}
	combos := len(m.Combinations())
	var sweptNames []string
	for _, v := range m.Sweep {
		sweptNames = append(sweptNames, v.Name)
	}
	unitsOf := m.UnitsUnplanned
	if plan {
		unitsOf = m.Units
	}
	units = unitsOf(func(vars map[string]string) *dsl.Scenario {
		if len(vars) == 0 {
			return sc
		}
		o := opts
		if o.Combinations == nil {
			o.Combinations = dsl.NewCombinations()
			opts.Combinations = o.Combinations
		}
		o.Vars = map[string]string{}
		for k, v := range opts.Vars {
			o.Vars[k] = v
		}
		for k, v := range vars {
			o.Vars[k] = v
		}
		// The sweep's values, a --sweep flag's too: a secret's is hidden as its runs show it.
		o.Sweeps, o.SweepFrom = map[string][]string{}, map[string]string{}
		for _, v := range m.Sweep {
			o.Sweeps[v.Name], o.SweepFrom[v.Name] = v.Values, v.From
		}
		res, errs, err := p.loadQuiet([]string{sc.Pos.File}, o)
		if err != nil {
			errs = append(errs, &dsl.Error{Pos: sc.Pos.Rel(p.Cwd), Msg: err.Error()})
		}
		for _, e := range errs {
			key := problemKey(e)
			if known[key] {
				continue
			}
			if seen[key] == nil {
				seen[key] = &problem{err: e}
				problems = append(problems, seen[key])
			}
			seen[key].combos = append(seen[key].combos, dsl.ComboKey(vars))
		}
		if res != nil {
			for _, w := range res.Warnings {
				if w.Scenario != sc.Name {
					continue // another scenario of the file: its own load says its findings
				}
				key := warningKey(w)
				f, ok := found[key]
				if !ok {
					f = &finding{w: w}
					found[key] = f
					findings = append(findings, f)
				}
				if f != nil {
					f.combos = append(f.combos, dsl.ComboKey(vars))
				}
			}
		}
		if res == nil || len(errs) > 0 {
			return nil
		}
		for _, s := range res.Scenarios {
			if s.Name == sc.Name && s.Pos.Same(sc.Pos) {
				// An expectation that reads a swept var is judged for vacuity at each
				// combination's values (the scenario's own check leaves it: its value is
				// the combination's): fortio.requests == vars.requests of a load of
				// requests: vars.requests cannot fail in any of them.
				for _, e := range interp.CheckCannotFailSwept(s, sweptNames).Rel(p.Cwd) {
					key := problemKey(e)
					if seen[key] == nil {
						seen[key] = &problem{err: e}
						problems = append(problems, seen[key])
					}
					seen[key].combos = append(seen[key].combos, dsl.ComboKey(vars))
				}
				return s
			}
		}
		return nil
	})
	if a, b, culprit := m.SameID(); a != nil {
		// Two runs under one id: their reports, records and a merge take them for one run
		// (merge refused them as "different experiments under one id").
		at := sc.Pos.Rel(p.Cwd)
		if pos, ok := sc.Declared[culprit]; ok && pos.IsValid() {
			at = pos.Rel(p.Cwd)
		}
		for i, v := range sc.Sweep[culprit] {
			if (v == a[culprit] || v == b[culprit]) && strings.Contains(v, ",") && i < len(sc.SweepPos[culprit]) {
				at = sc.SweepPos[culprit][i].Rel(p.Cwd)
				break
			}
		}
		errs = append(errs, &dsl.Error{Pos: at, Msg: fmt.Sprintf("sweep of vars.%s: the combinations %s and %s would be runs of one id, %s: a run's id joins its vars with commas, and a swept value holds one; write the values without a comma",
			or(culprit, "?"), quotedCombo(a), quotedCombo(b), dsl.UnitID(sc.Name, a, 1))})
	}
	if secret := interp.SecretSweep(m, sc); secret != nil {
		for _, u := range units {
			if u.Scenario != nil {
				u.Scenario.SecretSweep = secret
			}
		}
	}
	cwd := p.Cwd
	for _, pr := range problems {
		e := *pr.err
		if p, ok := sweepCulprit(m, sc, pr.combos); ok && !p.Rel(cwd).Same(e.Pos) {
			// The field is right for every other value: the problem is the swept value, so
			// say it there, and where it lands.
			e.Also = append([]dsl.Pos{e.Pos}, e.Also...)
			e.Pos = p.Rel(cwd)
		}
		e.Msg += " (" + combosSaid(pr.combos, combos) + ")"
		errs = append(errs, &e)
	}
	for _, f := range findings {
		w := *f.w
		w.Msg += " (found only in a combination of the sweep other than the default: " + combosSaid(f.combos, combos) + ")"
		warns = append(warns, &w)
	}
	return units, errs, warns
}

// combosSaid names the combinations of a problem, of all: "with port=1" or "in 2 of 3
// combinations: port=1; port=2".
func combosSaid(combos []string, all int) string {
	if len(combos) == 1 {
		return "with " + combos[0]
	}
	return fmt.Sprintf("in %d of %d combinations: %s", len(combos), all, strings.Join(combos, "; "))
}

// notStarted is a unit that never started, and why (report.NotStartedInterrupted,
// report.NotStartedFailFast).
type notStarted struct {
	unit *dsl.Unit
	why  string
}

// runUnits runs every unit in order, writes a summary for each matrix that sweeps or repeats,
// and prints a line per scenario and the total when there are several; it returns the exit
// code, the records (in the order they ran) and the units that never started.
func (p *process) runUnits(runCtx, cleanupCtx context.Context, w *work, f *runFlags, each func(ran)) (int, []*interp.Record, []notStarted) {
	if w.scenarioCount() > 1 || len(w.units) > 1 {
		f.tally = &runTally{}
	}
	code := exitOK
	byMatrix := map[*dsl.Matrix][]ran{}
	var recs []*interp.Record
	var never []notStarted
	results, failFast := p.runScheduled(runCtx, cleanupCtx, w, f, each)
	p.phases.finish() // an interrupt now stops no step: it lets the summaries and --junit be written
	skipped := 0
	for i, u := range w.units {
		r, ok := results[i]
		switch {
		case !ok && u.Matrix.Summarized() && interrupted(runCtx):
			// After an interrupt, a matrix's runs not started are not run: its summary lists
			// them as not started (a single run still gets its report, marked interrupted).
			skipped++
			never = append(never, notStarted{u, report.NotStartedInterrupted})
			continue
		case !ok && !interrupted(runCtx):
			never = append(never, notStarted{u, report.NotStartedFailFast})
			continue
		case !ok:
			continue
		case r.rec == nil:
			continue
		}
		recs = append(recs, r.rec)
		byMatrix[u.Matrix] = append(byMatrix[u.Matrix], r)
	}
	if failFast > 0 {
		fmt.Fprintf(p.Stderr, "labrun: --fail-fast: %d run%s not started after a run that did not pass\n", failFast, plural(failFast))
	}
	if skipped > 0 {
		fmt.Fprintf(p.Stderr, "labrun: interrupted: %d run%s of the matrix not started\n", skipped, plural(skipped))
	}
	if interrupted(runCtx) {
		code = exitInterrupted
	}
	return p.judge(w.matrices, byMatrix, never, w.shard != nil, f.reportDir, f.quiet, code, len(recs)), recs, never
}

// judgeMatrices writes a summary for each matrix that sweeps or repeats (not in a shard: merge
// writes those), prints a line per scenario and the total when there are several, and returns
// the exit code, starting from code. runs are each matrix's runs, records made; recs how many.
// labrun merge calls it with the records it read, and so says what one run would have said.
func (p *process) judgeMatrices(matrices []*dsl.Matrix, byMatrix map[*dsl.Matrix][]ran, shard bool, reportDir string, quiet bool, code, recs int) int {
	return p.judge(matrices, byMatrix, nil, shard, reportDir, quiet, code, recs)
}

// judge is judgeMatrices knowing the units that never started and why: a summary lists them.
func (p *process) judge(matrices []*dsl.Matrix, byMatrix map[*dsl.Matrix][]ran, never []notStarted, shard bool, reportDir string, quiet bool, code, recs int) int {
	dir := ""
	if reportDir != "" {
		dir = inCwd(p.Cwd, reportDir)
	}
	type line struct {
		verdict, name, what, path string
		// why is the start of the error of a run that ended in one (whyNotJudged), cut to
		// the terminal's width when it is one.
		why string
	}
	var lines []line
	// Two scenarios of one name (in two folders of DIR/...) are told apart by their file:
	// before, the total's lines read "PASSED  s" and "FAILED  s", which said neither which.
	named := map[string]int{}
	for _, m := range matrices {
		named[m.Scenario]++
	}
	nameOf := func(m *dsl.Matrix) string {
		if named[m.Scenario] > 1 {
			return fmt.Sprintf("%s (%s)", m.Scenario, relPath(p.Cwd, m.File))
		}
		return m.Scenario
	}
	tally := &runTally{}
	whyOf := map[*dsl.Matrix]map[report.RunKey]string{}
	for _, n := range never {
		if whyOf[n.unit.Matrix] == nil {
			whyOf[n.unit.Matrix] = map[report.RunKey]string{}
		}
		whyOf[n.unit.Matrix][report.RunKey{Combination: n.unit.Combination, Round: n.unit.Round}] = n.why
	}
	for _, m := range matrices {
		runs := byMatrix[m]
		if shard && m.Summarized() {
			// A shard holds part of the matrix: its summary is labrun merge's, from every
			// shard's records. Each run's verdict is the shard's exit, unless a pass rate
			// below 1 lets runs fail (merge judges it).
			passed, mcode, under := 0, exitOK, exitOK
			for _, r := range runs {
				c, u := r.code, r.code
				if r.code == exitOK {
					passed++
				}
				if c == exitLeftovers {
					u = outcomeCode(r.rec)
				}
				if c == exitFailed && m.PassRate > 0 {
					c = exitOK
				}
				if u == exitFailed && m.PassRate > 0 {
					u = exitOK
				}
				mcode, under = worse(mcode, c), worse(under, u)
			}
			// The shard's runs that never started (--fail-fast, an interrupt) are its runs
			// too: before, a matrix none of whose runs started read "PASSED … 0 of 0 runs
			// passed" and counted as passed in the total.
			notStarted, interrupted := "", false
			for _, n := range never {
				interrupted = interrupted || n.unit.Matrix == m && n.why == report.NotStartedInterrupted
			}
			if k := len(whyOf[m]); k > 0 {
				notStarted = fmt.Sprintf(", %d not started", k)
			}
			if interrupted {
				mcode = worse(mcode, exitInterrupted)
			}
			code = worse(code, mcode)
			verdict := matrixVerdict(mcode, under)
			if notStarted != "" && mcode == exitOK {
				tally.notRun++
				verdict = "SKIPPED"
			} else {
				tally.count(mcode, under)
			}
			held := len(runs) + len(whyOf[m])
			fmt.Fprintf(p.Stdout, "SHARD %s: %d of the %d runs of this shard passed%s, of %d in all; labrun merge of every shard's records writes the summary\n", m.Scenario, passed, held, notStarted, m.Runs())
			lines = append(lines, line{verdict: or(verdict, "ERROR"), name: nameOf(m), what: fmt.Sprintf("%d of %d runs passed%s (part of %d)", passed, held, notStarted, m.Runs())})
			continue
		}
		if !m.Summarized() {
			for _, r := range runs {
				code = worse(code, r.code)
				tally.count(r.code, outcomeCode(r.rec))
				verdict := strings.ToUpper(string(r.rec.Outcome))
				if r.code == exitLeftovers {
					// As a summary's line says it, and the total counts it: before, the line
					// of a run whose cleanup left objects behind read PASSED.
					verdict = strings.TrimPrefix(verdict+", LEFT OBJECTS BEHIND", "PASSED, ")
				}
				what := report.MayFailed(r.rec)
				if fx := fixedSweep(r.rec); fx != "" {
					what = strings.TrimPrefix(what+"; "+fx, "; ")
				}
				if note := unverifiedNote([]*interp.Record{r.rec}, p.unverified); note != "" {
					// merge's, as its line of one run says it: before, the line of each of
					// several scenarios' runs said PASSED alone.
					what = strings.TrimPrefix(what+"; "+strings.TrimPrefix(note, " — "), "; ")
				}
				lines = append(lines, line{verdict: verdict, name: nameOf(m), what: what, path: r.report, why: whyNotJudged(p.Cwd, r.rec)})
			}
			if len(runs) == 0 {
				// A run that never started (--fail-fast, an interrupt) is said, as a shard's
				// is: before, it had no line, and only the total's "not run" counted it.
				tally.notRun++
				lines = append(lines, line{verdict: "SKIPPED", name: nameOf(m), what: notStartedWhy(whyOf[m])})
			}
			continue
		}
		// A failed run is the summary's to judge (its pass rate); an interrupt, a refusal, a
		// run that left objects behind or one labrun could not make (exit 3: it was not
		// judged, and no pass rate covers it) is the matrix's exit whatever the rate.
		// under is the same without what the runs left behind: how the matrix ended besides.
		mcode, under := exitOK, exitOK
		for _, r := range runs {
			switch r.code {
			case exitInterrupted, exitInvalid, exitLeftovers, exitInfra:
				mcode = worse(mcode, r.code)
			}
			u := r.code
			if u == exitLeftovers {
				u = outcomeCode(r.rec)
			}
			switch u {
			case exitInterrupted, exitInvalid, exitInfra:
				under = worse(under, u)
			}
		}
		var files []report.RunFile
		for _, r := range runs {
			files = append(files, report.RunFile{Rec: r.rec, JSON: r.json})
		}
		s := report.SummaryWith(m, files, whyOf[m], dir)
		if red := p.secrets.matrix(); red != nil {
			var shown report.Summary
			if err := red.JSON(s, &shown); err != nil {
				fmt.Fprintf(p.Stderr, "labrun: %s: hiding the secret vars in the summary: %v\n", m.Scenario, err)
				mcode = worse(mcode, exitInfra)
				continue
			}
			s = &shown
		}
		for _, c := range []*int{&mcode, &under} {
			switch s.Verdict {
			case "passed", "skipped":
			case "error":
				// The runs' own exits say which: 3 (an error, a timeout) or 2 (refused); a run
				// with an expectation that could not be judged exits 1 on its own (it says
				// failed), and was not judged: exit 3, as docs/experiments.md says (it was 1,
				// the line FAILED).
				if *c == exitOK {
					*c = exitInfra
				}
			case "interrupted":
				*c = worse(*c, exitInterrupted)
			default:
				*c = worse(*c, exitFailed)
			}
		}
		counts, mayFailed := summaryCounts(s), ""
		if mf := report.MayFailedRuns(s); mf != "" {
			// The runs pass with them, as a single run does: say which, as its verdict line does.
			mayFailed = " — " + mf
		}
		left := ""
		if l := report.LeftRuns(s); l != "" {
			// As each run's verdict line said it: before, "SUMMARY s: 2 of 2 runs passed"
			// and nothing more, of runs that exited 4. (The line in the total says LEFT
			// OBJECTS BEHIND.)
			left = " — " + l
		}
		var recs []*interp.Record
		for _, r := range runs {
			recs = append(recs, r.rec)
		}
		if w := report.WarnedRuns(recs); w != "" {
			// As each run's verdict line says it: before, "SUMMARY s: 6 of 6 runs passed"
			// of runs that each passed with an unknown-subset warning.
			left += " — " + w
		}
		if len(p.unverified) > 0 { // merge's: its records judged with fewer checks
			mayFailed += unverifiedNote(recs, p.unverified)
		}
		path := ""
		if dir != "" {
			paths, err := report.WriteSummary(dir, newRunInfo().id, s)
			if err != nil {
				fmt.Fprintf(p.Stderr, "labrun: %s: writing the summary: %v\n", m.Scenario, err)
				mcode = worse(mcode, exitInfra)
			} else {
				path = relPath(p.Cwd, paths[0])
				fmt.Fprintln(p.Stdout, wrapLines(fmt.Sprintf("SUMMARY %s: %s (%s)%s%s — %s", m.Scenario, counts, passNeed(m), mayFailed, left, path), p.wrapWidth(), 2))
				if !quiet {
					fmt.Fprintf(p.Stdout, "  html:   %s\n  json:   %s\n", relPath(p.Cwd, paths[1]), relPath(p.Cwd, paths[2]))
				}
			}
		} else {
			fmt.Fprintln(p.Stdout, wrapLines(fmt.Sprintf("SUMMARY %s: %s (%s)%s%s", m.Scenario, counts, passNeed(m), mayFailed, left), p.wrapWidth(), 2))
		}
		if below := report.CombinationsBelow(s); len(below) > 0 && len(m.Sweep) > 0 && (s.Verdict == "failed" || s.Verdict == "error") {
			fmt.Fprintln(p.Stdout, wrapLines("  combinations that did not pass: "+strings.Join(below, "; "), p.wrapWidth(), 4))
		}
		code = worse(code, mcode)
		verdict := matrixVerdict(mcode, under)
		if s.Verdict == "skipped" && mcode == exitOK {
			tally.notRun++
			verdict = "SKIPPED"
		} else {
			tally.count(mcode, under)
		}
		lines = append(lines, line{verdict: verdict, name: nameOf(m), what: counts + mayFailed, path: path})
	}
	if len(matrices) > 1 {
		wv, wn := 0, 0
		for _, l := range lines {
			wv, wn = max(wv, len(l.verdict)), max(wn, len(l.name))
		}
		for _, l := range lines {
			s := fmt.Sprintf("  %-*s  %-*s", wv, l.verdict, wn, l.name)
			what := l.what
			if l.why != "" {
				// The reason takes what the line leaves of the terminal's width, and at
				// least 24 columns (72 when the width is not known).
				room := 72
				if w := p.wrapWidth(); w > 0 {
					room = max(24, w-utf8.RuneCountInString(s)-2-len(l.path)-2-utf8.RuneCountInString(l.what)-3)
				}
				what = joinWhat(cutRunes(l.why, room), l.what)
			}
			if what != "" {
				s += "  " + what
			}
			if l.path != "" {
				s += "  " + l.path
			}
			fmt.Fprintln(p.Stdout, strings.TrimRight(s, " "))
		}
		fmt.Fprintln(p.Stdout, tally.line(len(matrices), recs))
	}
	return code
}

// whyNotJudged is the first line of the error of a run that ended in one (an error, an interrupt):
// the line in the total says why, as the run's verdict line does. Before, it read "ERROR two"
// and nothing more (a target that could not be created, a cluster that stopped answering).
func whyNotJudged(cwd string, rec *interp.Record) string {
	if rec.Outcome != interp.Errored && rec.Outcome != interp.Interrupted || rec.Error == "" || rec.Error == "interrupted" {
		return ""
	}
	why, _, _ := strings.Cut(relError(cwd, rec.Error), "\n")
	return why
}

// cutRunes is s cut to at most n runes, the last of them "…" when it is cut.
func cutRunes(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return strings.TrimRight(string(r[:n-1]), " ") + "…"
	}
	return s
}

// joinWhat joins the parts of a line's what that are not "" with " — ".
func joinWhat(parts ...string) string {
	return strings.Join(slices.DeleteFunc(parts, func(s string) bool { return s == "" }), " — ")
}

// matrixVerdict is the word of a scenario's line in the total for its exit code; one that left
// objects behind (exit 4) says how it ended besides (under), as a single run's line does:
// "FAILED, LEFT OBJECTS BEHIND". Before, a matrix whose summary failed and whose runs left
// objects behind read "LEFT OBJECTS BEHIND" alone.
func matrixVerdict(code, under int) string {
	word := func(c int) string {
		return or(map[int]string{exitOK: "PASSED", exitFailed: "FAILED", exitInterrupted: "INTERRUPTED", exitInvalid: "REFUSED", exitLeftovers: "LEFT OBJECTS BEHIND"}[c], "ERROR")
	}
	if code == exitLeftovers && under != exitOK && under != exitLeftovers {
		return word(under) + ", LEFT OBJECTS BEHIND"
	}
	return word(code)
}

// runETA estimates the time the runs of a matrix not yet run will take: their planned spans,
// scaled by how long the runs so far took against theirs (setup, a load's start-up and the
// cleanup take time the plan does not know), or the mean of the runs so far when the plans
// know no span.
type runETA struct {
	planned, took time.Duration
	runs, failed  int
}

func (e *runETA) ran(u *dsl.Unit, took time.Duration, code int) {
	e.planned += u.Planned.D
	e.took += took
	e.runs++
	if code != exitOK {
		e.failed++
	}
}

func (e *runETA) rest(units []*dsl.Unit) time.Duration {
	var planned time.Duration
	for _, u := range units {
		planned += u.Planned.D
	}
	switch {
	case e.runs == 0:
		return planned
	case e.planned > 0 && planned > 0:
		return time.Duration(float64(planned) * float64(e.took) / float64(e.planned))
	}
	return e.took / time.Duration(e.runs) * time.Duration(len(units))
}

// ran is one unit's run: its record (nil when none was made), its exit code and its report.
type ran struct {
	unit *dsl.Unit
	rec  *interp.Record
	code int
	// report is the Markdown report relative to the working directory, json the record's
	// absolute path ("" without a report directory).
	report, json string
}

// loadQuiet loads paths as load does, without printing the warnings: a combination of a
// sweep is the scenario loaded again, whose warnings were printed once.
func (p *process) loadQuiet(paths []string, opts dsl.Options) (*dsl.Result, dsl.Errors, error) {
	return p.loadTo(io.Discard, paths, opts)
}

// matrixSummary says what a matrix runs, for vet and plan: "6 combinations × 2 runs = 12 runs".
func matrixSummary(m *dsl.Matrix) string {
	n := len(m.Combinations())
	s := fmt.Sprintf("%d combination%s × %d run%s = %d runs", n, plural(n), m.Count, plural(m.Count), m.Runs())
	var parts []string
	for _, sw := range m.Sweep {
		parts = append(parts, fmt.Sprintf("%s: %s (%s)", sw.Name, strings.Join(sw.Values, ", "), sw.Source()))
	}
	if len(parts) > 0 {
		s += "; " + strings.Join(parts, "; ")
	}
	return s
}

// docSweep runs a document's scenario that declares a sweep once per combination, as labrun
// run does, writes its summary beside the reports, and returns the summary as its expected
// block holds it (report.SummaryExpected: verdicts and response codes, not the numbers), the
// last run's record, the exit code and the runs (for the document's total).
func (p *process) docSweep(runCtx, cleanupCtx context.Context, sc *dsl.Scenario, f *docFlags, opts dsl.Options) (string, *interp.Record, int, []*interp.Record, error) {
	for _, k := range sortedKeys(sc.Sweep) {
		if _, ok := opts.Vars[k]; ok {
			return "", nil, exitOK, nil, &exitError{exitInvalid, fmt.Sprintf("--var %s: scenario %s (%s) sweeps %s: its expected block holds every value of the sweep; drop --var %s", k, sc.Name, sc.Pos.Rel(p.Cwd), k, k)}
		}
	}
	rf := f.runFlags
	rf.count, rf.passRate = 1, 0
	m := dsl.NewMatrix(sc, nil, nil, 1, 0)
	p.secrets.addBase(interp.MatrixRedactor(m, sc))
	units, errs, warns := p.unitsOf(m, sc, opts, true, nil, nil)
	// A lint's finding in a combination other than the default is said as collect says it
	// for run and vet (under --strict the combination's load made it an error already).
	for _, wr := range warns {
		p.printWarning(p.Stderr, wr)
	}
	if len(errs) > 0 {
		return "", nil, exitOK, nil, p.reportVet("text", &dsl.Result{}, errs)
	}
	code, recs, _ := p.runUnits(runCtx, cleanupCtx, &work{matrices: []*dsl.Matrix{m}, units: units}, &rf, nil)
	if len(recs) == 0 {
		return "", nil, code, nil, nil
	}
	return sweptExpected(m, recs), recs[len(recs)-1], code, recs, nil
}

// quotedCombo writes a combination's vars with their values quoted: a="1,b=2" b="3".
func quotedCombo(vars map[string]string) string {
	var parts []string
	for _, k := range sortedKeys(vars) {
		parts = append(parts, k+"="+strconv.Quote(vars[k]))
	}
	return strings.Join(parts, " ")
}

// sweptExpected is what the expected-output block of a spec whose scenario sweeps shows of
// the matrix m's runs recs: the summary's table.
func sweptExpected(m *dsl.Matrix, recs []*interp.Record) string {
	var files []report.RunFile
	var codes []string
	for _, r := range recs {
		files = append(files, report.RunFile{Rec: r})
		codes = append(codes, report.LoadCodes(r))
	}
	return report.SummaryExpected(report.SummaryOf(m, files, ""), codes)
}

// passRateHelp is --pass-rate's help (run, job).
const passRateHelp = "with --count 2 or more: the fraction of each combination's runs that must pass, above 0 and at most 1 (default: every run); a run labrun could not make (exit 3) is never covered"

// checkPassRate refuses a pass rate that is not a fraction above 0 and at most 1 (NaN
// included), and one with nothing to apply to: a pass rate is the share of a combination's
// repetitions that must pass, so it needs --count 2 or more.
func checkPassRate(rate float64, count int) error {
	if !(rate > 0 && rate <= 1) {
		return &exitError{exitInvalid, fmt.Sprintf("--pass-rate %g: expected a fraction above 0 and at most 1 (0.8: 80 %% of each combination's runs must pass)", rate)}
	}
	if count < 2 {
		return &exitError{exitInvalid, fmt.Sprintf("--pass-rate %g: a pass rate is the share of each combination's repeated runs that must pass; give --count 2 or more (without it, every run must pass)", rate)}
	}
	return nil
}

func passNeed(m *dsl.Matrix) string {
	switch {
	case m.PassRate > 0 && len(m.Sweep) > 0:
		return fmt.Sprintf("--pass-rate %g of each combination's runs", m.PassRate)
	case m.PassRate > 0:
		return fmt.Sprintf("--pass-rate %g", m.PassRate)
	}
	return "every run must pass"
}

// notStartedWhy says why a scenario's one run never started ("not started" when no reason
// is known).
func notStartedWhy(why map[report.RunKey]string) string {
	for _, w := range why {
		return w
	}
	return "not started"
}

// summaryCounts says what a summary's runs did: "1 of 2 runs passed, 1 error, 1 not started",
// and how many planned runs have no record (merged without them).
func summaryCounts(s *report.Summary) string {
	out := fmt.Sprintf("%d of %d runs passed", s.Passed, s.Planned)
	if s.Errors > 0 {
		out += fmt.Sprintf(", %d error%s", s.Errors, plural(s.Errors))
	}
	// probe p109: a sweep interrupted under --parallel read "2 of 4 runs passed" of two runs
	// passed and two stopped midway, as if those two had failed.
	interrupted := 0
	for _, r := range s.Runs {
		if r.Outcome == interp.Interrupted && r.NotStarted == "" {
			interrupted++
		}
	}
	if interrupted > 0 {
		out += fmt.Sprintf(", %d interrupted", interrupted)
	}
	if s.NotStarted > 0 {
		out += fmt.Sprintf(", %d not started", s.NotStarted)
	}
	if n := s.Missing(); n > 0 {
		out += fmt.Sprintf(", %d without a record", n)
	}
	return out
}

// unitOf is the unit of a scenario run on its own, once.
func unitOf(sc *dsl.Scenario) *dsl.Unit {
	m := &dsl.Matrix{Scenario: sc.Name, File: sc.Pos.File, Count: 1}
	return &dsl.Unit{ID: dsl.UnitID(sc.Name, nil, 1), Matrix: m, Combination: 1, Round: 1, Planned: dsl.PlanOf(sc).Span(), Scenario: sc}
}

// sweepCulprit finds the declared sweep value that every failing combination has and no other
// combination has; its position, relative to the process's directory like the errors'.
func sweepCulprit(m *dsl.Matrix, sc *dsl.Scenario, failing []string) (dsl.Pos, bool) {
	all := m.Combinations()
	for _, sv := range m.Sweep {
		if sv.From != "scenario" {
			continue // a --sweep value has no place in a file
		}
		value, with := "", 0
		for _, c := range all {
			if slices.Contains(failing, dsl.ComboKey(c)) {
				if value != "" && c[sv.Name] != value {
					value = ""
					break
				}
				value = c[sv.Name]
			}
		}
		if value == "" {
			continue
		}
		for _, c := range all {
			if c[sv.Name] == value {
				with++
			}
		}
		if with != len(failing) {
			continue
		}
		if i := slices.Index(sc.Sweep[sv.Name], value); i >= 0 && i < len(sc.SweepPos[sv.Name]) && sc.SweepPos[sv.Name][i].IsValid() {
			return sc.SweepPos[sv.Name][i], true
		}
	}
	return dsl.Pos{}, false
}

// combosGCHeap is how large the heap (live or not yet collected) must be for vet to collect it
// before its sweeps' combinations are loaded.
const combosGCHeap = 32 << 20

// heapBytes is the size of the heap's objects, live or not yet collected; math.MaxInt64 when
// the runtime does not say (then vet collects, as before).
func heapBytes() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return math.MaxInt64
	}
	return int64(s[0].Value.Uint64())
}
