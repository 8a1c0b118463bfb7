package main

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"labrun.dev/labrun/driver/kube"
	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/report"
)

// labrun merge: the records of runs made by several processes or machines (the shards of
// --shard i/n, the pods of labrun job) become what one run of them all would have written: a
// summary per matrix that sweeps or repeats, one JUnit file, the verdict lines and the exit
// code. A summary is made from records alone (each carries its unit of its matrix), so the
// shards' records of one sweep give the summary one process would have.

type mergeFlags struct {
	reportDir, junit string
	mixed, quiet     bool
}

func newMergeCmd(p *process) *cobra.Command {
	var f mergeFlags
	cmd := &cobra.Command{
		Use:   "merge PATH...",
		Short: "Merge the records of runs made by several processes (shards) into one summary and JUnit",
		Long: `merge reads run records — the .json records in each folder PATH (a report directory), record
files, and files of JSON lines (labrun run -o json, a pod's log; other lines are skipped) —
and writes what one run of them all would have: a summary for each scenario that sweeps or
repeats (--report-dir), one JUnit file (--junit), a line per scenario and the total; it
exits as that run would (0 all passed, 1 a run or summary failed, 3 a run could not reach
its target). A record read from JSON lines gets its report (.md, .html, .json, without the
raw artifacts, which stay where it ran) in --report-dir.

A record is counted only as far as it supports itself: one whose outcome disagrees with its
own expectations, steps or error is refused (exit 2, naming the file). When the scenario file
a record names is here, with the source the run had (or another source whose scenario has the
steps and expectations the record holds: a comment added, a kit edited), its expectations
are judged again over the data it recorded (as labrun replay does), and a record whose
outcome differs from that verdict, or whose expectations recorded other values than they
read from its data, is refused: it was edited or damaged. So is a record whose vars make
that source a scenario labrun refuses (where its own vars do not): no run had them. So is a record of that source whose matrix is
not the one the scenario declares with the flags the record keeps (a value of the sweep
taken out, the sweep taken out, a var swept or fixed that the scenario does not sweep), or
whose assert says passed where its expression is false over the data it read (or failed
where it is true; see labrun replay --help). Without the file, a record's round, combination
and id must be its matrix's, and records of one source must agree on what the scenario
sweeps. Records that cannot be judged again (the file is
elsewhere, or its steps or expectations changed) are counted as recorded; stderr says how
many; their exec outputs and load results are still held to the artifacts beside them. In JSON lines, a line
that begins as a record and does not parse is an error (file:line), but for a record a
container runtime split into chunks with another stream's line written between two, at a
chunk's edge: it is read with that line taken out, and stderr says so. The line of a run, or of
a summary, whose records were judged from the record alone (their artifacts folder not
beside them: a record shared as JSON alone, or read from JSON lines) or are of an older
version than labrun's own says so, as replay's verdict line does ("PASSED s — unverified:
judged from the record alone, its artifacts not beside it"); the exit code is the verdict's.

Every record names the source of its scenario (a hash of its file and package). Records of
one scenario from different sources — shards that ran different checkouts — are refused
(exit 2), naming the scenario and the files of each source, unless --allow-mixed-sources.
Scenarios are told apart by name and file, the file by its folder and name (p1/x.cue), as
the path to a checkout differs between machines. Two records of one run (the same scenario,
combination and round: a shard run twice) keep the later one, with a warning; two whose vars
differ (a --var is not in a run's id), or whose plans differ (a plain run's s#1 and the first
round of a --count 2, another --pass-rate or --sweep), are different experiments, and are
refused (exit 2); so are records of the shards of one split, or of one summary's runs, made
with other --var (a var outside their sweep's combination given two values, or given to
one and had with another value by another).
Two records of different runs that are one run (a record copied under another id or round,
its times edited or not) are refused (exit 2), naming both files and why: a load of one
scenario of the local target that timed its requests alike in both (its requests, duration
and mean, min and max latency, to the nanosecond), or an ephemeral namespace of the same name, which no two runs
share; else, for runs without them, the same start and end instants, or every step's timing
the same to the nanosecond, or the same results (their times aside) with every step's
duration and skew the same to the nanosecond, each step moved by any amount. Two records of
one run id that are one run so but differ (a copy edited, its outcome made passed and its times
made later) are refused too (exit 2); two alike (a shard given twice) are kept once.
A record of run --shard i/n keeps its shard and the runs of every shard: records that do not
hold every run the shards planned (a shard's records missing) are refused (exit 2).

Records of a Markdown document's scenarios: when the document is here, with the source they
ran, its expected-output blocks are compared with the merged runs, as labrun run of the whole
document compares them (a diff at the document's lines, exit 1, a failure in the JUnit); a
block whose runs are not all merged is not compared, and stderr says so, as it says when the
document is not here.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return p.junitOfRefusal("merge", f.junit, p.merge(args, &f))
		},
	}
	cmd.Flags().StringVar(&f.reportDir, "report-dir", "reports", "directory for the summaries and the reports of records read from JSON lines (\"\" for none)")
	cmd.Flags().StringVar(&f.junit, "junit", "", "write JUnit XML of every run to this file")
	cmd.Flags().BoolVar(&f.mixed, "allow-mixed-sources", false, "merge records of one scenario made from different sources (files that changed between the runs)")
	cmd.Flags().BoolVarP(&f.quiet, "quiet", "q", false, "print only the verdicts")
	return cmd
}

// mergedRecord is a record read for merge: where from, and its JSON file when it has one.
type mergedRecord struct {
	rec  *interp.Record
	from string
	json string
}

func (p *process) merge(args []string, f *mergeFlags) error {
	if err := checkWritable(p.Cwd, f.reportDir, f.junit); err != nil {
		return err
	}
	var all []mergedRecord
	for _, a := range args {
		recs, err := p.readRecords(inCwd(p.Cwd, a))
		if err != nil {
			return err
		}
		if len(recs) == 0 {
			fmt.Fprintf(p.Stderr, "labrun: merge: %s: no run records\n", a)
		}
		all = append(all, recs...)
	}
	if len(all) == 0 {
		return &exitError{exitInvalid, "merge: no run records in " + strings.Join(args, ", ")}
	}
	return p.mergeRecords(all, f)
}

// mergeRecords checks, orders and judges the records, and writes what one run would have.
func (p *process) mergeRecords(all []mergedRecord, f *mergeFlags) error {
	if err := checkVerdicts(p.Cwd, all); err != nil {
		return err
	}
	if err := checkSources(p.Cwd, all, f.mixed); err != nil {
		return err
	}
	all, err := p.dropDuplicates(all)
	if err != nil {
		return err
	}
	if err := checkShards(all); err != nil {
		return err
	}
	if warning, err := checkBuilds(p.Cwd, all); err != nil {
		return err
	} else if warning != "" {
		fmt.Fprintf(p.Stderr, "labrun: merge: warning: %s\n", warning)
	}
	if err := checkGivenVars(p.Cwd, all); err != nil {
		return err
	}
	if err := checkInvocations(p.Cwd, all); err != nil {
		return err
	}
	if err := checkMatrices(p.Cwd, all); err != nil {
		return err
	}
	if err := p.rejudgeRecords(all); err != nil {
		return err
	}
	if err := p.summariesBeside(p.besideSummaries, all); err != nil {
		return err
	}
	if err := checkInvocationRuns(p.Cwd, all); err != nil {
		return err
	}
	// The order of one run: by file, then position in it, then combination and round.
	sort.SliceStable(all, func(i, j int) bool {
		a, b := all[i].rec, all[j].rec
		if fa, fb := fileKey(a.File), fileKey(b.File); fa != fb {
			return fa < fb
		}
		if a.Pos.Line != b.Pos.Line {
			return a.Pos.Line < b.Pos.Line
		}
		if a.Scenario != b.Scenario {
			return a.Scenario < b.Scenario
		}
		ua, ub := unitOrSingle(a), unitOrSingle(b)
		if ua.Combination != ub.Combination {
			return ua.Combination < ub.Combination
		}
		return ua.Round < ub.Round
	})
	dir := ""
	if f.reportDir != "" {
		dir = inCwd(p.Cwd, f.reportDir)
	}
	var matrices []*dsl.Matrix
	byKey := map[string]*dsl.Matrix{}
	byMatrix := map[*dsl.Matrix][]ran{}
	var recs []*interp.Record
	code := exitOK
	for _, m := range all {
		u := unitOrSingle(m.rec)
		k := matrixKey(u)
		mx := byKey[k]
		if mx == nil {
			c := *u.Matrix
			c.Sweep = slices.Clone(c.Sweep)
			mx = &c
			byKey[k] = mx
			matrices = append(matrices, mx)
		}
		for i, sw := range u.Matrix.Sweep {
			// One plan (matrixKey): a --sweep of the values the scenario declares beside a run
			// of the scenario's own sweep is the scenario's, whichever record came first.
			if sw.From == "scenario" && i < len(mx.Sweep) {
				mx.Sweep[i].From = sw.From
			}
		}
		r := ran{unit: u, rec: m.rec, code: exitCode(m.rec), json: m.json}
		if m.json == "" && dir != "" {
			// Read from JSON lines: its report is written here, as the run would have.
			files, err := writeReport(dir, m.rec, newRunInfo().id)
			if err != nil {
				fmt.Fprintf(p.Stderr, "labrun: %s: writing the report: %v\n", m.rec.Scenario, err)
				code = worse(code, exitInfra)
			} else {
				r.json = files.JSON
			}
		}
		if md := strings.TrimSuffix(r.json, ".json") + ".md"; r.json != "" && fileExists(md) {
			r.report = relPath(p.Cwd, md)
		}
		byMatrix[mx] = append(byMatrix[mx], r)
		recs = append(recs, m.rec)
	}
	code = p.judgeMatrices(matrices, byMatrix, false, f.reportDir, f.quiet, code, len(recs))
	if len(matrices) == 1 && !matrices[0].Summarized() {
		// One run: no line per scenario; its verdict.
		fmt.Fprintf(p.Stdout, "%s %s%s\n", strings.ToUpper(string(recs[0].Outcome)), recs[0].Scenario, unverifiedNote(recs[:1], p.unverified))
	}
	// The runs of a Markdown document's scenarios, merged: its expected-output blocks are
	// compared with them, as labrun run of the whole document compares them. Before, a block
	// that did not match failed the shard that held its runs (or no shard, its runs split
	// between two), and merge said PASSED and exited 0.
	docCode, docChecks := p.compareMergedDocs(matrices, byMatrix)
	code = worse(code, docCode)
	if f.junit != "" {
		p.junitWritten = true
		if err := report.JUnit(inCwd(p.Cwd, f.junit), recs, nil, docChecks...); err != nil {
			fmt.Fprintf(p.Stderr, "labrun: junit: %v\n", err)
			code = worse(code, exitInfra)
		}
	}
	if code != exitOK {
		return &exitError{code: code}
	}
	return nil
}

// compareMergedDocs compares the expected-output blocks of every Markdown document whose
// scenarios' runs were merged with those runs (compareDocs: a block whose runs are not all
// here is not compared, and stderr says so). A document that is not here, or not the source
// its records ran, is not compared either, and stderr says so: merge cannot know its blocks.
func (p *process) compareMergedDocs(matrices []*dsl.Matrix, byMatrix map[*dsl.Matrix][]ran) (int, []report.DocCheck) {
	w := &work{res: &dsl.Result{}}
	var recs []*interp.Record
	loaded := map[string]string{} // a document's path here: "" loaded, else why it was not
	for _, m := range matrices {
		runs := byMatrix[m]
		if !isMarkdown(m.File) || len(runs) == 0 {
			continue
		}
		file := p.scenarioFile(m.File)
		why, seen := loaded[file]
		if !seen {
			switch {
			case !fileExists(file):
				why = "the document is not here"
			case p.sources.of(file) != runs[0].rec.Source:
				why = "the document here is not the source they ran"
			default:
				res, errs, err := p.loadTo(io.Discard, []string{file}, dsl.Options{})
				if err != nil || len(errs) > 0 {
					why = "the document does not load here"
				} else {
					w.res.Scenarios = append(w.res.Scenarios, res.Scenarios...)
				}
			}
			loaded[file] = why
			if why != "" {
				fmt.Fprintf(p.Stderr, "labrun: merge: %s: its expected-output blocks were not compared with the runs merged: %s; labrun doc compares them\n", relPath(p.Cwd, file), why)
			}
		}
		if why != "" {
			continue
		}
		mm := *m
		mm.File = file
		w.matrices = append(w.matrices, &mm)
		for _, r := range runs {
			rec := *r.rec
			rec.File = file
			recs = append(recs, &rec)
		}
	}
	if len(w.matrices) == 0 {
		return exitOK, nil
	}
	return p.compareDocs(w, recs)
}

// matrixNotDeclared leads what dsl.Unit.Contradictions finds in a record, in merge and replay.
const matrixNotDeclared = "its matrix is not the one its scenario declares with the flags it records"

// unitOrSingle is the record's unit, or the unit of a run of its scenario on its own (a record
// without one), which it gives the record.
func unitOrSingle(rec *interp.Record) *dsl.Unit {
	if rec.Unit != nil && rec.Unit.Matrix != nil {
		return rec.Unit
	}
	rec.Unit = &dsl.Unit{ID: dsl.UnitID(rec.Scenario, nil, 1), Matrix: &dsl.Matrix{Scenario: rec.Scenario, File: rec.File, Count: 1}, Combination: 1, Round: 1}
	return rec.Unit
}

// matrixKey says which matrix a record's unit belongs to, wherever it ran: the matrix with
// its file's key (a checkout's path differs between machines).
func matrixKey(u *dsl.Unit) string {
	m := u.Matrix.Plan()
	m.File = fileKey(m.File)
	m.Plot = slices.Clone(m.Plot)
	for i := range m.Plot {
		m.Plot[i].Pos = dsl.Pos{} // a position names the file by its path on that machine
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// checkVerdicts refuses records whose outcome disagrees with their own expectations and
// steps: such a record was edited or damaged, and merge, which counts outcomes, would count
// a run that failed as passed.
func checkVerdicts(cwd string, all []mergedRecord) error {
	var msgs []string
	for _, m := range all {
		if why := contradiction(m.rec); why != "" {
			msgs = append(msgs, fmt.Sprintf("%s: run %s: %s", relPath(cwd, m.from), unitOrSingle(m.rec).ID, why))
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	return &exitError{exitInvalid, "merge: " + strings.Join(msgs, "\nlabrun: merge: ") + "\nlabrun: merge: a record that disagrees with itself was edited or damaged; merge counts no run from it"}
}

// contradiction says how a record's outcome disagrees with the verdicts it records (its
// expectations', its steps', its error), or "" when it does not: a passed run has every
// expectation passed, no error, and no step failed but those a mayFail or the catch phase
// allowed; a failed run has a failed expectation, a failed step or an error.
func contradiction(rec *interp.Record) string {
	var exp *interp.Judgement
	for _, j := range rec.Expectations {
		if j.Outcome != interp.Passed {
			exp = j
			break
		}
	}
	var step *interp.StepRecord
	for _, s := range rec.Steps {
		if s.Phase == dsl.PhaseCatch || slices.Contains(s.Warnings, interp.MayFailWarning) {
			continue
		}
		if s.Outcome == interp.Failed || s.Outcome == interp.Errored || s.Outcome == interp.TimedOut {
			step = s
			break
		}
	}
	switch rec.Outcome {
	case interp.Passed:
		switch {
		case exp != nil:
			return fmt.Sprintf("the record says passed; its expectation %q says %s", exp.Src, exp.Outcome)
		case step != nil:
			return fmt.Sprintf("the record says passed; its step %s says %s", step.Path, step.Outcome)
		case rec.Error != "":
			return fmt.Sprintf("the record says passed; it records the error %q", rec.Error)
		}
	case interp.Failed:
		failedExp := exp != nil && (exp.Outcome == interp.Failed || exp.Outcome == interp.Errored)
		if !failedExp && step == nil && rec.Error == "" {
			return "the record says failed; its expectations passed, its steps ended and it records no error"
		}
	}
	return ""
}

// fileKey names a scenario's file the same way on every machine that ran it, and apart from
// the files of other folders: its folder's name and its own ("p1/x.cue"). The path before
// them is where the checkout was on that machine. Two folders of one name in different
// places (a/p/x.cue, b/p/x.cue) share a key: merge refuses their records of one scenario as
// made from different sources.
func fileKey(file string) string {
	file = filepath.ToSlash(filepath.Clean(file))
	dir, base := path.Split(file)
	if d := path.Base(path.Clean(dir)); dir != "" && d != "." && d != "/" {
		return d + "/" + base
	}
	return base
}

// checkShards refuses records of shards (run --shard i/n) that do not hold every run their
// split planned: a shard's records missing (a job that never uploaded them), or some of a
// shard's runs. A shard whose records are not there is missing unless the shards that are
// there hold every run (a shard can hold none). Records without shard (made without
// --shard, or before records kept it) are not checked.
func checkShards(all []mergedRecord) error {
	// A split is told by its runs (Plan), not by their number only: before, shards of two
	// scenario sets of as many runs were taken for the shards of one.
	type split struct {
		count, all int
		plan       string
	}
	type shard struct{ runs, held int }
	splits := map[split]map[int]*shard{}
	units := map[split][]*dsl.Unit{} // the runs the records of each split hold
	sources := map[split][]string{}  // and their sources, in that order
	var order []split
	// The shards of one split run one plan: a scenario's matrix (its --count, --pass-rate,
	// sweep) is the same in each. Shards run with other flags would each be summarized as
	// part of a matrix of their own, and the split's check above would count them as one.
	// Keyed by the split's count and runs only: shards whose plans differ are two splits
	// by Plan, and this says how a scenario's differed.
	type planned struct {
		split
		scenario string
	}
	plans := map[planned]mergedRecord{}
	said := map[[2]string]bool{}
	var msgs []string
	// A record made before records kept the plan has none: the splits of its count and runs
	// are told by those alone, as before (shards of one split run by two labrun versions).
	noPlan := map[split]bool{}
	for _, m := range all {
		if sh := m.rec.Shard; sh != nil && sh.Plan == "" {
			noPlan[split{sh.Count, sh.All, ""}] = true
		}
	}
	for _, m := range all {
		sh := m.rec.Shard
		if sh == nil {
			continue
		}
		k := split{sh.Count, sh.All, sh.Plan}
		if noPlan[split{sh.Count, sh.All, ""}] {
			k.plan = ""
		}
		if u := m.rec.Unit; u != nil && u.Matrix != nil {
			pk := planned{split{k.count, k.all, ""}, m.rec.Scenario + "\x00" + fileKey(m.rec.File)}
			if first, ok := plans[pk]; !ok {
				plans[pk] = m
			} else if a, b := matrixKey(first.rec.Unit), matrixKey(u); a != b && !said[[2]string{a, b}] {
				said[[2]string{a, b}], said[[2]string{b, a}] = true, true
				msgs = append(msgs, fmt.Sprintf("shard %d/%d ran scenario %s as %s, shard %d/%d as %s: the shards of one split run one plan; run every shard with the same --count, --pass-rate and --sweep",
					first.rec.Shard.Index, sh.Count, m.rec.Scenario, planWords(first.rec.Unit.Matrix), sh.Index, sh.Count, planWords(u.Matrix)))
			}
		}
		if splits[k] == nil {
			splits[k] = map[int]*shard{}
			order = append(order, k)
		}
		s := splits[k][sh.Index]
		if s == nil {
			s = &shard{runs: sh.Runs}
			splits[k][sh.Index] = s
		}
		s.held++
		units[k] = append(units[k], unitOrSingle(m.rec))
		sources[k] = append(sources[k], m.rec.Source)
	}
	if len(msgs) > 0 {
		return &exitError{exitInvalid, "merge: " + strings.Join(msgs, "\nlabrun: merge: ")}
	}
	for _, k := range order {
		held, planned := 0, 0
		var short, absent []string
		for i := 1; i <= k.count; i++ {
			s := splits[k][i]
			if s == nil {
				absent = append(absent, fmt.Sprintf("%d/%d", i, k.count))
				continue
			}
			held += s.held
			planned += s.runs
			if s.held < s.runs {
				short = append(short, fmt.Sprintf("shard %d/%d holds %d of its %d runs", i, k.count, s.held, s.runs))
			}
		}
		if held >= k.all {
			// As many runs as the split planned, but they must be its runs: before, a failed
			// run's record replaced by a record of another scenario (its shard edited to
			// match), or renamed, merged as a split every run of which passed.
			// A labrun before the plan held the sources hashed the runs alone.
			if k.plan != "" && planHash(units[k], sources[k]) != k.plan && planHash(units[k], nil) != k.plan {
				msgs = append(msgs, fmt.Sprintf("the %d shards planned %d runs; the records hold %d, but not the runs planned (%s): a record of a run the split did not plan (another scenario's, or one whose scenario, file or run id was edited) stands for one it planned", k.count, k.all, held, heldRuns(units[k])))
			}
			continue
		}
		var why []string
		if planned < k.all && len(absent) > 0 {
			n := k.all - planned
			if len(absent) == 1 {
				why = append(why, fmt.Sprintf("no records of shard %s (%d run%s)", absent[0], n, plural(n)))
			} else {
				why = append(why, fmt.Sprintf("no records of shards %s (%d run%s between them)", strings.Join(absent, ", "), n, plural(n)))
			}
			// Records of such a shard of another split of as many shards are here: a split
			// whose shards ran other plans (a scenario file that changed between them, other
			// flags). Before, merge said only "no records of shard 2/2" beside them.
			for _, k2 := range order {
				if k2 == k || k2.count != k.count {
					continue
				}
				var there []string
				for _, a := range absent {
					var i int
					fmt.Sscanf(a, "%d/", &i)
					if splits[k2][i] != nil {
						there = append(there, a)
					}
				}
				switch {
				case len(there) == 0:
				case k2.all != k.all:
					why = append(why, fmt.Sprintf("the records of shard %s here are of a split of %d runs, not %d: its shards ran other plans (other --count, --pass-rate or --sweep, or a scenario file that changed between them)", strings.Join(there, ", "), k2.all, k.all))
				default:
					why = append(why, fmt.Sprintf("the records of shard %s here are of another split of %d runs: its shards ran other scenarios (other paths, --scenario, or scenario files that changed between them)", strings.Join(there, ", "), k2.all))
				}
			}
		}
		why = append(why, short...)
		msgs = append(msgs, fmt.Sprintf("the %d shards planned %d runs; the records hold %d: %s", k.count, k.all, held, strings.Join(why, "; ")))
	}
	if len(msgs) == 0 {
		return nil
	}
	return &exitError{exitInvalid, "merge: " + strings.Join(msgs, "\nlabrun: merge: ") + "\nlabrun: merge: a summary of part of the runs would not say what ran; merge the records of every shard"}
}

// heldRuns says which runs records hold, by scenario: "a/a.cue good: 1 run; o/o.cue more: 1
// run".
func heldRuns(units []*dsl.Unit) string {
	n := map[string]int{}
	var keys []string
	for _, u := range units {
		k := scenarioKey(u)
		if n[k] == 0 {
			keys = append(keys, k)
		}
		n[k]++
	}
	slices.Sort(keys)
	for i, k := range keys {
		keys[i] = fmt.Sprintf("%s: %d run%s", k, n[k], plural(n[k]))
	}
	return strings.Join(keys, "; ")
}

// planWords says a matrix's flags as the command line gives them.
func planWords(m *dsl.Matrix) string { return planText(m, true) }

// planText writes m's plan as the command line gives it; with said false, a sweep the scenario
// declares is written as a --sweep of the same values: two plans are one experiment whether a
// var's values came from the scenario or from the flag, and are compared so.
func planText(m *dsl.Matrix, said bool) string {
	w := fmt.Sprintf("--count %d", m.Count)
	if m.PassRate != 0 {
		w += " --pass-rate " + strconv.FormatFloat(m.PassRate, 'g', -1, 64)
	}
	// A sweep the scenario declares is said as the scenario's, not as a flag no one gave:
	// before, two shards run from two versions of the file read "a run of --count 1 --sweep
	// n=1,2,3" though neither had a --sweep.
	var declared []string
	for _, s := range m.Sweep {
		if said && s.From == "scenario" {
			declared = append(declared, s.Name+"="+strings.Join(s.Values, ","))
			continue
		}
		w += " --sweep " + s.Name + "=" + strings.Join(s.Values, ",")
	}
	if len(declared) > 0 {
		w += " with the scenario's sweep " + strings.Join(declared, " ")
	}
	return w
}

// rejudgeRecords judges each record again over the data it recorded, when the scenario file
// it names is here with the source it ran (the same hash), and refuses a record that the
// judgement contradicts: its data were edited or damaged after the run. Its matrix must be
// the one the scenario declares with the flags it records (dsl.Unit.Contradictions), and each
// of its asserts whose value the record determines must say what its expression says over
// those data (interp.OutcomeContradictions). Its expectations are judged again, as labrun
// replay does, when it reached its end with no step failed (the verdict of the others is
// their failure's), and its recorded outcome must be that verdict. The records that could not
// be judged again (no file, another source) are counted on stderr.
func (p *process) rejudgeRecords(all []mergedRecord) error {
	cache := map[string]loadedScenario{}
	var msgs, matrixMsgs []string
	notHere := map[string]bool{}
	unjudged := 0
	p.unverified = map[*interp.Record][]string{}
	for _, m := range all {
		rec := m.rec
		if why := recordUnverified(rec, m.json); len(why) > 0 {
			p.unverified[rec] = why
		}
		judgeable := (rec.Outcome == interp.Passed || rec.Outcome == interp.Failed) && rec.Error == "" && !anyStepFailed(rec)
		// A record without a source (of version 1, made before records kept it) is judged
		// again as one of another source is, when its scenario file is here: replay does so.
		// Before, merge counted it as recorded: a failed run's record of that form, its
		// outcome flipped, merged PASSED, exit 0, where replay said FAILED.
		if rec.File == "" {
			if c := artifactsWithout(rec, m.json); c != "" {
				msgs = append(msgs, fmt.Sprintf("%s: run %s: %s; the record was changed after the run or is corrupt", relPath(p.Cwd, m.from), unitOrSingle(rec).ID, c))
				continue
			}
			if judgeable {
				unjudged++
				notHere["they name no scenario file"] = true
			}
			continue
		}
		file := p.scenarioFile(rec.File)
		vars := map[string]string{}
		var names []string
		for k, v := range rec.Vars {
			vars[k] = dsl.Stringify(v)
			names = append(names, k+"="+vars[k])
		}
		sort.Strings(names)
		key := file + "\x00" + rec.Source + "\x00" + rec.Scenario + "\x00" + strings.Join(names, "\x00") + "\x00" + strings.Join(rec.GivenVars, ",") + fmt.Sprint(rec.Version >= 6)
		l, ok := cache[key]
		if !ok {
			l = p.scenarioOf(file, rec, vars)
			cache[key] = l
		}
		at := fmt.Sprintf("%s: run %s", relPath(p.Cwd, m.from), unitOrSingle(rec).ID)
		if l.badVars != "" {
			msgs = append(msgs, fmt.Sprintf("%s: %s", at, l.badVars))
			continue
		}
		if l.sc == nil {
			// What its artifacts give without the scenario (an exec's output, a load's
			// fortio.json) is compared still: before, a record edited into a pass merged
			// PASSED, exit 0, when its scenario file was not here, its exec's stdout.txt
			// beside it saying otherwise.
			if c := artifactsWithout(rec, m.json); c != "" {
				msgs = append(msgs, fmt.Sprintf("%s: %s; the record was changed after the run or is corrupt", at, c))
				continue
			}
			if judgeable {
				unjudged++
				notHere[l.why] = true
			}
			continue
		}
		cp := *rec
		cp.TargetValues = maps.Clone(rec.TargetValues)
		restoreErr := interp.RestoreTypes(&cp)
		changedStep := ""
		if restoreErr == nil {
			changedStep = interp.ChangedStep(&cp, l.sc, l.hide)
		}
		sameSteps := restoreErr == nil && changedStep == ""
		if !l.changed && changedStep != "" {
			// Its source as the run had it, its vars the same: steps that differ from the
			// source's are the record's doing (its stepParams taken out, a step's own
			// fields edited), but for a file a step read (an apply's), which the source
			// does not cover: that one is counted as recorded, as a changed source is.
			// Before, such a record was judged by its expectations alone, without its
			// asserts or its artifacts.
			if interp.ChangedFile(&cp, l.sc) != "" {
				if judgeable {
					unjudged++
					notHere["a file their steps read changed since the run"] = true
				}
				continue
			}
			msgs = append(msgs, fmt.Sprintf("%s: its steps are not those of its source, unchanged since the run: %s; the record was changed after the run or is corrupt", at, strings.TrimSuffix(changedStep, ": the record was changed after the run or is corrupt")))
			continue
		}
		if l.changed {
			// Another source (a comment added, a kit edited): the record is judged again
			// when the scenario still has the steps and expectations the run had, whose
			// data it holds; its matrix may have been changed since, and is not compared.
			if !sameExpectations(rec, l.sc) || !sameSteps {
				if c := artifactsWithout(rec, m.json); c != "" {
					msgs = append(msgs, fmt.Sprintf("%s: %s; the record was changed after the run or is corrupt", at, c))
					continue
				}
				if judgeable {
					unjudged++
					if rec.Source == "" {
						notHere["they keep no source (records of version 1), and their scenario file here has not the steps or expectations they hold"] = true
					} else {
						notHere["their scenario file here is not the source they ran, and its steps or expectations are not the ones they hold"] = true
					}
				}
				continue
			}
			// Judged by another source than the run's: the line of its runs says so, as
			// replay's verdict line does. Before, a failed step taken out of the record and
			// of the scenario file both merged "PASSED s", exit 0, with no word of the file.
			if rec.Source != "" {
				p.unverified[rec] = append(p.unverified[rec], unverifiedChanged)
			}
		} else if cs := unitOrSingle(rec).Contradictions(l.sc); len(cs) > 0 {
			matrixMsgs = append(matrixMsgs, fmt.Sprintf("%s: %s: %s", at, matrixNotDeclared, strings.Join(cs, "; ")))
			continue
		}
		if restoreErr != nil {
			msgs = append(msgs, fmt.Sprintf("%s: %v", at, restoreErr))
			continue
		}
		if sameSteps {
			// The asserts of the steps the run ran (a record whose steps are not the
			// scenario's is judged by its expectations below, as before).
			check := interp.OutcomeContradictions
			if l.changed {
				check = func(rec *interp.Record, sc *dsl.Scenario) error {
					return interp.ScenarioDisagreements(rec, sc, relPath(p.Cwd, file))
				}
			}
			if err := check(&cp, l.sc); err != nil {
				msgs = append(msgs, fmt.Sprintf("%s: %v", at, err))
				continue
			}
			ra := readRecordArtifacts(rec, m.json)
			if ra.problem != "" {
				msgs = append(msgs, fmt.Sprintf("%s: %s; the record was changed after the run or is corrupt", at, ra.problem))
				continue
			}
			fmt.Fprint(p.Stderr, ra.warning)
			if m.json != "" {
				// Its results parsed from the artifacts beside it must be what those give,
				// parsed with the steps as the scenario has them (replay's). Before, a source
				// changed since the run (a comment added) skipped the check: a record edited
				// into a pass merged PASSED, exit 0.
				if cs := interp.ArtifactContradictions(&cp, l.sc, ra.data); len(cs) > 0 {
					why := "the record was changed after the run or is corrupt"
					if l.changed {
						why = fmt.Sprintf("the record and %s disagree: a step of the scenario reads the run's artifacts otherwise than the run did (its match, capture, path or cluster changed since the run), or the record was changed after the run; run the scenario again", relPath(p.Cwd, file))
					}
					msgs = append(msgs, fmt.Sprintf("%s: %s; %s", at, strings.Join(cs, "; "), why))
					continue
				}
			}
		}
		if !judgeable {
			if l.ungiven != "" {
				msgs = append(msgs, fmt.Sprintf("%s: %s", at, l.ungiven))
			}
			continue
		}
		judged := interp.Rejudge(&cp, l.sc)
		v, _ := interp.Verdict(&cp, judged)
		if cs := append(interp.ValueContradictions(rec.Expectations, judged, l.hide), interp.UnrecordedVarReads(&cp, judged, l.hide)...); v == rec.Outcome && len(cs) > 0 {
			msgs = append(msgs, fmt.Sprintf("%s: %s", at, strings.Join(cs, "; ")))
			continue
		}
		if v == rec.Outcome && l.ungiven != "" {
			msgs = append(msgs, fmt.Sprintf("%s: %s", at, l.ungiven))
			continue
		}
		if v != rec.Outcome {
			why := ""
			for _, j := range judged {
				if j.Outcome != interp.Passed {
					why = fmt.Sprintf(" (%q %s", j.Src, j.Outcome)
					if j.Explanation != "" {
						why += ": " + j.Explanation
					} else if j.Reason != "" {
						why += ": " + j.Reason
					}
					why += ")"
					break
				}
			}
			msgs = append(msgs, fmt.Sprintf("%s: the record says %s; its data says %s%s", at, rec.Outcome, v, why))
		}
	}
	if len(msgs) == 0 && len(matrixMsgs) == 0 {
		// The seals last (replay's order): a record that contradicts itself, its artifacts or
		// its scenario is refused above, saying where; one edited consistently with all of
		// them (a record and its artifact edited together) differs from its seal.
		var sealMsgs []string
		for _, m := range all {
			if m.json == "" {
				continue
			}
			if msg := report.SealProblem(m.json, m.rec, func(s string) string { return relPath(p.Cwd, s) }); msg != "" {
				sealMsgs = append(sealMsgs, fmt.Sprintf("%s: run %s: %s", relPath(p.Cwd, m.from), unitOrSingle(m.rec).ID, msg))
			}
		}
		if len(sealMsgs) > 0 {
			return &exitError{exitInvalid, "merge: " + strings.Join(sealMsgs, "\nlabrun: merge: ") + "\nlabrun: merge: merge counts no run from a record that differs from its seal"}
		}
	}
	if unjudged > 0 {
		fmt.Fprintf(p.Stderr, "labrun: merge: %d of %d records were counted as recorded, not judged again over their data (%s)\n",
			unjudged, len(all), strings.Join(slices.Sorted(maps.Keys(notHere)), "; "))
	}
	var out []string
	if len(matrixMsgs) > 0 {
		out = append(out, strings.Join(matrixMsgs, "\nlabrun: merge: ")+"\nlabrun: merge: a record whose matrix is not the one its run had was edited or damaged; merge counts no run from it")
	}
	if len(msgs) > 0 {
		out = append(out, strings.Join(msgs, "\nlabrun: merge: ")+"\nlabrun: merge: judged again over its own data, a record gives another verdict, or reads other values, than it records: it was edited or damaged; merge counts no run from it")
	}
	if len(out) == 0 {
		return nil
	}
	return &exitError{exitInvalid, "merge: " + strings.Join(out, "\nlabrun: merge: ")}
}

// scenarioFile is where the scenario file a record names is on this machine: its path (from
// the working directory when relative). A record of a labrun job's pod names its file under
// the pod's mount of the job's ConfigMap (/scenarios/<path>), which holds the files by their
// paths from the folder labrun job ran in, where collect runs: when the mount is not here,
// the file is <path> from the working directory (the source hash says whether it is the one
// the run had). Before, every record of a job was "not here" and none was judged again.
func (p *process) scenarioFile(file string) string {
	f := inCwd(p.Cwd, file)
	if rel, ok := strings.CutPrefix(filepath.ToSlash(file), kube.MountPath+"/"); ok && rel != "" && !fileExists(f) {
		return filepath.Join(p.Cwd, filepath.FromSlash(rel))
	}
	return f
}

// loadedScenario is the scenario of a record, or why it could not be had.
type loadedScenario struct {
	sc  *dsl.Scenario
	why string
	// changed: the file here is not the source the record ran (its hash differs); sc is
	// then judged with only when its steps and expectations are the ones the record holds.
	changed bool
	// badVars, when not "": the file is the source the record ran, and loads with its own
	// vars but not with the record's (refusedVars says so): the record's vars were not a run's.
	badVars string
	// ungiven, when not "": the file is the source the record ran, and the record's vars
	// that no one gave are not the source's (varsNotGiven), or its warnings lack one its
	// lints give (interp.WarningAbsences).
	ungiven string
	// hide hides the values of secrets that the scenario's source writes out itself
	// (interp.ChangedStep).
	hide *interp.Redactor
}

// scenarioOf loads the scenario a record names from file with the record's vars, when file is
// the source the record ran; else why not.
func (p *process) scenarioOf(file string, rec *interp.Record, vars map[string]string) (l loadedScenario) {
	if !fileExists(file) {
		l.why = "their scenario file is not here"
		return l
	}
	// A record without a source (version 1) is judged as one of another source: its steps and
	// expectations must be the scenario's.
	l.changed = rec.Source == "" || p.sources.of(file) != rec.Source
	opts := dsl.Options{Vars: vars}
	res, errs, err := p.loadTo(io.Discard, []string{file}, opts)
	if refused := err != nil || len(errs) > 0; refused || declaresSecrets(res) {
		// The secrets the scenario's source writes out itself: hidden in what merge prints
		// (an expectation's source, the values it read: loadOwn), and in a step or an
		// expectation compared with the record (l.hide), as the record hides them.
		own, ownOK := p.loadOwn(file, opts)
		l.hide = ownRedactor(own, rec.Scenario)
		if refused {
			l.why = "their scenario file does not load here"
			if !l.changed {
				l.badVars = p.refusedVars(file, rec, vars, refusals(errs, err), own, ownOK)
			}
			return l
		}
	}
	for _, s := range res.Scenarios {
		if s.Name == rec.Scenario {
			l.sc = s
		}
	}
	if l.sc == nil {
		l.why = "their scenario file here declares no such scenario"
	} else if !l.changed {
		l.ungiven = p.varsNotGiven(file, rec)
		// Loaded for the scenario's own target: its lints are the run's where that is the
		// run's target (a run given --target may lint otherwise).
		if cs := interp.WarningAbsences(rec, l.sc); l.ungiven == "" && len(cs) > 0 && l.sc.Target == rec.Target {
			l.ungiven = strings.Join(cs, "; ") + "; the record was changed after the run or is corrupt"
		}
	}
	return l
}

// sameExpectations says whether sc's expectations are the ones rec judged, in order.
func sameExpectations(rec *interp.Record, sc *dsl.Scenario) bool {
	if len(rec.Expectations) != len(sc.Expect) {
		return false
	}
	for i, e := range sc.Expect {
		if rec.Expectations[i].Src != e.Src {
			return false
		}
	}
	return true
}

// anyStepFailed says whether a step of the record failed (not one a mayFail or the catch phase
// allowed).
func anyStepFailed(rec *interp.Record) bool {
	for _, s := range rec.Steps {
		if s.Phase == dsl.PhaseCatch || slices.Contains(s.Warnings, interp.MayFailWarning) {
			continue
		}
		if s.Outcome == interp.Failed || s.Outcome == interp.Errored || s.Outcome == interp.TimedOut {
			return true
		}
	}
	return false
}

// checkSources refuses records of one scenario made from different sources, unless mixed.
func checkSources(cwd string, all []mergedRecord, mixed bool) error {
	type src struct {
		hash  string
		froms []string
	}
	byScenario := map[string][]*src{}
	var order []string
	for _, m := range all {
		k := m.rec.Scenario + " (" + fileKey(m.rec.File) + ")"
		if m.rec.Source == "" {
			continue // made before records kept their source: nothing to compare
		}
		if _, ok := byScenario[k]; !ok {
			order = append(order, k)
		}
		i := slices.IndexFunc(byScenario[k], func(s *src) bool { return s.hash == m.rec.Source })
		if i < 0 {
			byScenario[k] = append(byScenario[k], &src{hash: m.rec.Source})
			i = len(byScenario[k]) - 1
		}
		s := byScenario[k][i]
		if !slices.Contains(s.froms, m.from) {
			s.froms = append(s.froms, m.from)
		}
	}
	var msgs []string
	for _, k := range order {
		srcs := byScenario[k]
		if len(srcs) < 2 {
			continue
		}
		var parts []string
		for _, s := range srcs {
			short := strings.TrimPrefix(s.hash, "sha256:")
			parts = append(parts, fmt.Sprintf("%s in %s", short[:min(12, len(short))], strings.Join(relAll(cwd, s.froms), ", ")))
		}
		msgs = append(msgs, fmt.Sprintf("scenario %s was run from %d different sources: %s", k, len(srcs), strings.Join(parts, "; ")))
	}
	if len(msgs) == 0 {
		return nil
	}
	if mixed {
		return nil
	}
	return &exitError{exitInvalid, "merge: " + strings.Join(msgs, "\nlabrun: merge: ") + "\nlabrun: merge: the runs did not run the same scenarios (a checkout that changed between them); --allow-mixed-sources merges them anyway"}
}

func relAll(cwd string, paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = relPath(cwd, p)
	}
	return out
}

// dropDuplicates keeps one record of each run (file, scenario, combination, round): the later,
// when the two are copies of one run (a shard run twice). Two records of one run id whose
// vars differ are runs of different experiments (a var fixed with --var is not in the id):
// merge refuses them. Two whose sources differ are refused by checkSources unless mixed: then
// the later is kept, as a job retried from a newer checkout, and the warning says so.
func (p *process) dropDuplicates(all []mergedRecord) ([]mergedRecord, error) {
	byID := map[string]int{}
	var out []mergedRecord
	var msgs, splitMsgs, copyMsgs []string
	for _, m := range all {
		id := fileKey(m.rec.File) + ":" + unitOrSingle(m.rec).ID
		i, ok := byID[id]
		if !ok {
			byID[id] = len(out)
			out = append(out, m)
			continue
		}
		if diff := differentRuns(out[i].rec, m.rec); diff != "" {
			msgs = append(msgs, fmt.Sprintf("%s and %s are both run %s but of different experiments: %s",
				relPath(p.Cwd, out[i].from), relPath(p.Cwd, m.from), unitOrSingle(m.rec).ID, diff))
			continue
		}
		if a, b := out[i].rec.Shard, m.rec.Shard; a != nil && b != nil && a.Count == b.Count && a.Plan == b.Plan && a.Index != b.Index {
			// Not a shard run twice: two shards of one split that each held the run. Before,
			// the later was kept as a retry, and merge said a shard was short of its runs.
			splitMsgs = append(splitMsgs, fmt.Sprintf("run %s ran in shard %d/%d (%s) and in shard %d/%d (%s)",
				unitOrSingle(m.rec).ID, a.Index, a.Count, relPath(p.Cwd, out[i].from), b.Index, b.Count, relPath(p.Cwd, m.from)))
			continue
		}
		if why := editedCopy(p, out[i], m); why != "" {
			// One run's record twice, the two not alike: a copy edited (its outcome made
			// passed, its times moved so that it is the later). Before, the later was kept
			// as a retry of the run, and the run counted as passed.
			copyMsgs = append(copyMsgs, fmt.Sprintf("%s and %s are both run %s, and %s, but they differ: one is a copy of the other, edited",
				relPath(p.Cwd, out[i].from), relPath(p.Cwd, m.from), unitOrSingle(m.rec).ID, why))
			continue
		}
		keep := out[i]
		if m.rec.Start.After(out[i].rec.Start) {
			keep = m
		}
		sources := ""
		if out[i].rec.Source != "" && m.rec.Source != "" && out[i].rec.Source != m.rec.Source {
			sources = " from different sources"
		}
		dropped := out[i]
		if keep == out[i] {
			dropped = m
		}
		outcomes := ""
		if dropped.rec.Outcome != keep.rec.Outcome {
			// A run that failed and passed on another attempt is not a clean pass: say which
			// attempt the merge counts, and what the other did.
			outcomes = fmt.Sprintf(" (%s); the other %s and is not counted", keep.rec.Outcome, strings.ToUpper(string(dropped.rec.Outcome)))
		}
		fmt.Fprintf(p.Stderr, "labrun: merge: warning: two records of run %s%s (%s, %s): keeping the later one, from %s%s\n",
			unitOrSingle(m.rec).ID, sources, relPath(p.Cwd, out[i].from), relPath(p.Cwd, m.from), relPath(p.Cwd, keep.from), outcomes)
		out[i] = keep
	}
	if len(msgs) > 0 {
		return nil, &exitError{exitInvalid, "merge: " + strings.Join(msgs, "\nlabrun: merge: ") + "\nlabrun: merge: the runs ran different experiments under one id; merge them apart"}
	}
	if len(copyMsgs) > 0 {
		return nil, &exitError{exitInvalid, "merge: " + strings.Join(copyMsgs, "\nlabrun: merge: ") + "\nlabrun: merge: merge counts no run from them: take the copy out and merge the record the run wrote"}
	}
	if len(splitMsgs) > 0 {
		return nil, &exitError{exitInvalid, "merge: " + strings.Join(splitMsgs, "\nlabrun: merge: ") + "\nlabrun: merge: the jobs split the runs differently, and a run may have run in no shard: every job must work out the split from the same paths, flags and files (what a run touches is read before it runs, such as a process's config file or a file it applies; one that differs between the machines moves runs between shards)"}
	}
	if err := p.checkClones(out); err != nil {
		return nil, err
	}
	return out, nil
}

// editedCopy says why a and b, two records of one run id, are records of one run (what
// checkClones finds of them) where they differ (their records as JSON), or "": two copies of
// one record alike (a shard given twice) are one run kept once; two runs of one id (a shard
// run again) are kept as the later.
func editedCopy(p *process, a, b mergedRecord) string {
	err := p.checkClones([]mergedRecord{a, b})
	if err == nil {
		return ""
	}
	ja, errA := json.Marshal(a.rec)
	jb, errB := json.Marshal(b.rec)
	if errA == nil && errB == nil && bytes.Equal(ja, jb) {
		return ""
	}
	msg := err.Error()
	if _, why, ok := strings.Cut(msg, " are records of one run: "); ok {
		msg, _, _ = strings.Cut(why, "\n")
	}
	return "they are records of one run (" + msg + ")"
}

// checkClones refuses two records of different runs (other ids, rounds, scenarios) that are
// one run: a record copied with its unit's id or round edited, so that merge would count one
// run as two (2 passing repetitions where 1 ran). It rests first on what a run measured and no
// other run measures alike (runMeasures: a load's timing of its requests, compared between
// records of one scenario; an ephemeral namespace named after the run's random id), whatever
// the copy's times say: times are edited at will (each step's by an amount of its own, those
// inside its results). Loads are compared only where labrun's own fortio timed them (the
// local target): a load replayed from a recording (the sandbox's fixtures, the fakes of tests)
// is timed alike in every run, and a kube run may be one. A record
// without such measures is told by its times alone: the instants it started and ended, to the
// nanosecond; its steps' offsets from the start of its steps; or, with the same results and
// expectation values, the times in them aside, every step's duration and skew, to the
// nanosecond, whenever it ran (sameWork).
func (p *process) checkClones(all []mergedRecord) error {
	type measured struct {
		rec  int
		name string
	}
	byMeasure := map[string]measured{}
	byTimes := map[string]int{}
	bySteps := map[string]int{}
	byWork := map[string]int{}
	var msgs []string
	for i, m := range all {
		why, j := "", -1
		scenario := m.rec.Scenario + "\x00" + fileKey(m.rec.File)
		for _, r := range runMeasures(m.rec) {
			k := r.key
			if !r.ns {
				// A load of one scenario: the loads of two scenarios may replay one
				// recording (the sandbox's fixtures), never one run's.
				k = scenario + "\x00" + k
			}
			first, ok := byMeasure[k]
			if !ok {
				byMeasure[k] = measured{i, r.name}
				continue
			}
			if first.rec == i || j >= 0 {
				continue
			}
			j = first.rec
			if r.ns {
				why = fmt.Sprintf("both ran in the ephemeral namespace %s (ns.%s), which a run names after its own random id", r.what, r.name)
			} else if first.name == r.name {
				why = fmt.Sprintf("the load of their step %s timed the same %s, to the nanosecond; fortio times every request, and no two runs time theirs alike", r.name, r.what)
			} else {
				why = fmt.Sprintf("the loads of step %s of the first and step %s of the second timed the same %s, to the nanosecond; fortio times every request, and no two runs time theirs alike", first.name, r.name, r.what)
			}
		}
		if !m.rec.Start.IsZero() {
			k := m.rec.Start.UTC().Format(time.RFC3339Nano) + " " + m.rec.End.UTC().Format(time.RFC3339Nano)
			if first, ok := byTimes[k]; ok && j < 0 {
				why, j = fmt.Sprintf("both started at %s and ended at %s", m.rec.Start.UTC().Format(time.RFC3339Nano), m.rec.End.UTC().Format(time.RFC3339Nano)), first
			} else if !ok {
				byTimes[k] = i
			}
		}
		if k := stepTimings(m.rec); k != "" {
			if first, ok := bySteps[k]; ok && j < 0 {
				why, j = fmt.Sprintf("their %d step%s started and ended at the same offsets, to the nanosecond", len(m.rec.Steps), plural(len(m.rec.Steps))), first
			} else if !ok {
				bySteps[k] = i
			}
		}
		if k := sameWork(m.rec); k != "" {
			if first, ok := byWork[k]; ok && j < 0 {
				why, j = fmt.Sprintf("they hold the same results and expectation values (the times in them aside), and each of their %d step%s lasted as long, with the same skew, to the nanosecond, whenever it ran", len(m.rec.Steps), plural(len(m.rec.Steps))), first
			} else if !ok {
				byWork[k] = i
			}
		}
		if j >= 0 {
			msgs = append(msgs, fmt.Sprintf("%s (run %s) and %s (run %s) are records of one run: %s",
				relPath(p.Cwd, all[j].from), unitOrSingle(all[j].rec).ID, relPath(p.Cwd, m.from), unitOrSingle(m.rec).ID, why))
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	return &exitError{exitInvalid, "merge: " + strings.Join(msgs, "\nlabrun: merge: ") +
		"\nlabrun: merge: one of each two is a copy of the other's record under another run's id (its times edited or not), which would count one run twice; merge counts no run from them: take the copies out and merge the records the runs wrote (a run whose own record is missing must run again to be counted)"}
}

// runMeasure is something a record holds that only its run measured or named: key tells it
// apart; name is its step's name (a namespace's key), what says it.
type runMeasure struct {
	key, name, what string
	ns              bool
}

// runMeasures are what a record holds that only its run measured or named: each load's
// timing of its requests (its requests, duration and mean, smallest and largest latency
// together: fortio times every request to the nanosecond, so two runs never record the same,
// where each alone may repeat in many runs), and the names of its ephemeral namespaces, made
// from its run's random id. A load that timed no request (a maximum of 0) is left out, and so
// is every load of a record whose target is not local: there fortio ran in labrun's own
// process, while on kube it ran in a pod, or a sandbox replayed a recording of it (the same
// timings in every run: two runs of one scenario would read as one).
func runMeasures(rec *interp.Record) []runMeasure {
	var out []runMeasure
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	for _, name := range slices.Sorted(maps.Keys(rec.Results)) {
		if rec.Target != "local" {
			break
		}
		res := rec.Results[name]
		if res == nil {
			continue
		}
		l, ok := res.Value.(*interp.LoadRecord)
		if !ok || l == nil || l.DurationS <= 0 || l.Max <= 0 {
			continue
		}
		out = append(out, runMeasure{
			key:  fmt.Sprintf("load %v %v %v %v %v", g(l.Requests), g(l.DurationS), g(l.Avg), g(l.Min), g(l.Max)),
			name: name,
			what: fmt.Sprintf("%s requests in %ss, latency mean %s ms, min %s ms, max %s ms", g(l.Requests), g(l.DurationS), g(l.Avg), g(l.Min), g(l.Max)),
		})
	}
	for _, key := range slices.Sorted(maps.Keys(rec.Namespaces)) {
		if n := rec.Namespaces[key]; n != "" {
			out = append(out, runMeasure{key: "namespace " + n, name: key, what: n, ns: true})
		}
	}
	return out
}

// stepTimings is a record's steps' paths and timings, or "" when no step took time.
func stepTimings(rec *interp.Record) string {
	var b strings.Builder
	timed := false
	for _, s := range rec.Steps {
		if s.End > 0 {
			timed = true
		}
		fmt.Fprintf(&b, "%s %d %d\n", s.Path, s.Start, s.End)
	}
	if !timed {
		return ""
	}
	return b.String()
}

// sameWork is what a record holds of its run whatever its times were moved by, each step's
// by an amount of its own: its outcome, its results and the values its expectations read,
// every time in them (a load's start, a snapshot's instant: any RFC 3339 text) left out, and
// each step's path, outcome, errors, round, sample, duration and skew, to the nanosecond, in
// the order of their paths; "" when no step took time. Two runs that share it are one run:
// what each step measured is the same, and so is how long each step took.
func sameWork(rec *interp.Record) string {
	type step struct {
		Path, Outcome, Error, Expected string
		Round, Sample                  int
		Took, Skew                     time.Duration
	}
	type exp struct {
		Src     string
		Outcome interp.Outcome
		Values  map[string]any
	}
	doc := struct {
		Outcome interp.Outcome
		Results map[string]*interp.Result
		Exps    []exp
		Steps   []step
	}{Outcome: rec.Outcome, Results: rec.Results}
	timed := false
	for _, s := range rec.Steps {
		if s.End > s.Start {
			timed = true
		}
		doc.Steps = append(doc.Steps, step{s.Path, string(s.Outcome), s.Error, s.ExpectedError, s.Round, s.Sample, s.End - s.Start, s.Skew})
	}
	if !timed {
		return ""
	}
	slices.SortStableFunc(doc.Steps, func(a, b step) int {
		return cmp.Or(strings.Compare(a.Path, b.Path), cmp.Compare(a.Round, b.Round), cmp.Compare(a.Sample, b.Sample))
	})
	for _, j := range rec.Expectations {
		doc.Exps = append(doc.Exps, exp{j.Src, j.Outcome, j.Values})
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return ""
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return ""
	}
	b, err = json.Marshal(timeless(v))
	if err != nil {
		return ""
	}
	return string(b)
}

// timeless is v, JSON-like data, with every string that is an RFC 3339 time left out.
func timeless(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = timeless(e)
		}
	case []any:
		for i, e := range x {
			x[i] = timeless(e)
		}
	case string:
		if _, err := time.Parse(time.RFC3339Nano, x); err == nil {
			return "(a time)"
		}
	}
	return v
}

// artifactsWithout is where rec's results contradict the artifacts beside its JSON file (json)
// that need no scenario to parse (interp.ArtifactContradictions without one), or "".
func artifactsWithout(rec *interp.Record, json string) string {
	if json == "" {
		return ""
	}
	ra := readRecordArtifacts(rec, json)
	if ra.problem != "" {
		return ra.problem
	}
	cp := *rec
	cp.TargetValues = maps.Clone(rec.TargetValues)
	if interp.RestoreTypes(&cp) != nil {
		return ""
	}
	return strings.Join(interp.ArtifactContradictions(&cp, nil, ra.data), "; ")
}

// recordArtifacts are the artifacts beside a record's JSON file, read once.
type recordArtifacts struct {
	data map[*interp.ArtifactRecord][]byte // report.ReadArtifacts's
	// problem is where the folder and the record's list disagree (an artifact the folder holds
	// that the record does not list, or one it lists that the folder does not hold), or "".
	problem string
	// warning, for a record that lists artifacts whose folder is not there (shared as JSON
	// alone), says that it is judged from the record alone; "" otherwise.
	warning string
	// unverified is what replay's verdict line adds then: that the verdict was not held to
	// the artifacts the run wrote; "" otherwise.
	unverified string
}

// The ways a record is judged with fewer checks than one of labrun's own version with its
// artifacts beside it (recordUnverified).
const (
	unverifiedAlone = "alone" // its artifacts are not beside it (a record shared as JSON alone, JSON lines)
	unverifiedOld   = "old"   // a record of an older version
	// judged by its scenario file as it is now, which is not the source its run had (edited
	// since the run): the steps and expectations are the record's, which says nothing of the
	// run's when the record was edited with the file (a failed step taken out of both)
	unverifiedChanged = "changed"
)

// recordUnverified says which checks rec, read from json ("": from JSON lines), escapes
// (unverifiedAlone, unverifiedOld), as replay's verdict line says them.
func recordUnverified(rec *interp.Record, json string) []string {
	var why []string
	if len(rec.Artifacts) > 0 || rec.Version >= report.SealVersion {
		if json == "" {
			why = append(why, unverifiedAlone)
		} else if st, err := os.Stat(report.ArtifactsDir(json)); err != nil || !st.IsDir() {
			why = append(why, unverifiedAlone)
		}
	}
	if rec.Version < interp.RecordVersion {
		why = append(why, unverifiedOld)
	}
	return why
}

// unverifiedNote is what merge's line of runs adds when some of their records were judged with
// fewer checks (unverified, recordUnverified's): " — unverified: 2 of its 3 records judged alone, their
// artifacts not beside them; 1 of its 3 records of version 4, …"; "" when none was. Before, merge
// printed neither of the qualifications replay's verdict line carries (a warning on stderr
// only): a record shared without its folder merged PASSED as one held to its artifacts.
func unverifiedNote(recs []*interp.Record, unverified map[*interp.Record][]string) string {
	if len(unverified) == 0 {
		return ""
	}
	alone, changed := 0, 0
	old := map[int]int{}
	for _, r := range recs {
		for _, w := range unverified[r] {
			switch w {
			case unverifiedChanged:
				changed++
			case unverifiedAlone:
				alone++
			case unverifiedOld:
				old[r.Version]++
			}
		}
	}
	var parts []string
	one := len(recs) == 1
	switch {
	case alone > 0 && one:
		parts = append(parts, "judged from the record alone, its artifacts not beside it")
	case alone > 0:
		parts = append(parts, fmt.Sprintf("%d of its %d records judged alone, their artifacts not beside them", alone, len(recs)))
	}
	switch {
	case changed > 0 && one:
		parts = append(parts, "judged by its scenario file as it is now, not the source its run had (edited since the run)")
	case changed > 0:
		parts = append(parts, fmt.Sprintf("%d of its %d records judged by their scenario file as it is now, not the source their run had (edited since the run)", changed, len(recs)))
	}
	for _, v := range slices.Sorted(maps.Keys(old)) {
		if one {
			parts = append(parts, fmt.Sprintf("a record of version %d, held to fewer checks than one of version %d", v, interp.RecordVersion))
		} else {
			parts = append(parts, fmt.Sprintf("%d of its %d records of version %d, held to fewer checks than one of version %d", old[v], len(recs), v, interp.RecordVersion))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " — unverified: " + strings.Join(parts, "; ")
}

// readRecordArtifacts reads the artifacts beside rec's JSON file (json; "" for none).
func readRecordArtifacts(rec *interp.Record, json string) recordArtifacts {
	if json == "" {
		return recordArtifacts{}
	}
	dir := report.ArtifactsDir(json)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		if len(rec.Artifacts) == 0 && rec.Version < report.SealVersion {
			return recordArtifacts{}
		}
		if len(rec.Artifacts) == 0 {
			// Its run wrote its folder, with the seal of the record (report.SealFile).
			return recordArtifacts{
				warning:    fmt.Sprintf("labrun: warning: %s: the folder of its artifacts (%s) is not beside it: its seal (%s) is not there to hold the record to what the run wrote, and it is judged from the record alone\n", json, dir, report.SealFile),
				unverified: fmt.Sprintf("judged from the record alone, its folder with its seal not beside it (%s)", dir),
			}
		}
		return recordArtifacts{
			warning:    fmt.Sprintf("labrun: warning: %s: the folder of its artifacts (%s) is not beside it: its %d artifacts are not there to hold its results to what the run wrote, and it is judged from the record alone\n", json, dir, len(rec.Artifacts)),
			unverified: fmt.Sprintf("judged from the record alone, its %d artifacts not beside it (%s)", len(rec.Artifacts), dir),
		}
	}
	ra := recordArtifacts{data: report.ReadArtifacts(dir, rec)}
	if un := report.UnlistedArtifacts(dir, rec); len(un) > 0 {
		ra.problem = fmt.Sprintf("the folder beside it holds %s, which the record does not list among its artifacts (an entry taken out of its list)", strings.Join(un, ", "))
	} else if gone := report.MissingArtifacts(rec, ra.data); len(gone) > 0 {
		ra.problem = fmt.Sprintf("it lists %s among its artifacts, which the folder beside it does not hold (taken out of the folder)", strings.Join(gone, ", "))
	}
	return ra
}

// differentRuns says how two records of one run id differ in the vars they ran with (each
// with its two values) or in the plan they were a run of (--count, --pass-rate, --sweep: a
// plain run's s#1 and the first round of a --count 2), or "" when they are copies of one run.
// Before, a plain run that failed and a later --count 2 whose rounds passed merged as one run
// retried: the failed record was dropped with a warning and merge said "2 of 2 runs passed",
// exit 0.
func differentRuns(a, b *interp.Record) string {
	diffs := differentVars(a, b)
	if ma, mb := unitOrSingle(a).Matrix, unitOrSingle(b).Matrix; planOf(ma, false) != planOf(mb, false) {
		diffs = append(diffs, fmt.Sprintf("the first is a run of %s, the second of %s", planOf(ma, true), planOf(mb, true)))
	}
	return strings.Join(diffs, "; ")
}

// planOf says a matrix's plan as the command line gives it (planWords), with the swept vars
// --var fixed: what makes its runs one experiment (not its plots).
func planOf(m *dsl.Matrix, said bool) string {
	w := planText(m, said)
	for _, f := range m.Fixed {
		w += " --var " + f.Name + "=" + f.Value
	}
	return w
}

// differentVars says how two records differ in the vars they ran with, each with its two
// values.
func differentVars(a, b *interp.Record) []string {
	var names []string
	for k := range a.Vars {
		names = append(names, k)
	}
	for k := range b.Vars {
		if _, ok := a.Vars[k]; !ok {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	var diffs []string
	for _, k := range names {
		va, oka := a.Vars[k]
		vb, okb := b.Vars[k]
		sa, sb := "unset", "unset"
		if oka {
			sa = dsl.Stringify(va)
		}
		if okb {
			sb = dsl.Stringify(vb)
		}
		if sa != sb {
			diffs = append(diffs, fmt.Sprintf("var %s is %s in the first, %s in the second", k, sa, sb))
		}
	}
	return diffs
}

// readRecords reads the records at path: a folder's .json records (not its summaries), a
// record file, or a file of JSON lines whose record lines are read and other lines skipped.
func (p *process) readRecords(path string) ([]mergedRecord, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, &exitError{exitInvalid, fmt.Sprintf("merge: %s: %v", relPath(p.Cwd, path), unwrapPath(err))}
	}
	if st.IsDir() {
		files, _ := filepath.Glob(filepath.Join(path, "*.json"))
		var out []mergedRecord
		var summaries []string
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				return nil, &exitError{exitInvalid, fmt.Sprintf("merge: %s: %v", relPath(p.Cwd, f), unwrapPath(err))}
			}
			if kind := report.Sniff(f, b); kind != report.KindRecord {
				if kind == report.KindSummary {
					summaries = append(summaries, f)
				}
				continue // a summary, a plan, another tool's JSON
			}
			rec, err := report.Decode(f, b)
			if err != nil {
				return nil, &exitError{exitInvalid, "merge: " + relError(p.Cwd, err.Error())}
			}
			out = append(out, mergedRecord{rec: rec, from: f, json: f})
		}
		p.besideSummaries = append(p.besideSummaries, summaries...)
		return out, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, &exitError{exitInvalid, fmt.Sprintf("merge: %s: %v", relPath(p.Cwd, path), unwrapPath(err))}
	}
	if report.Sniff(path, b) == report.KindRecord {
		rec, err := report.Decode(path, b)
		if err != nil {
			return nil, &exitError{exitInvalid, "merge: " + relError(p.Cwd, err.Error())}
		}
		return []mergedRecord{{rec: rec, from: path, json: path}}, nil
	}
	recs, err := recordLines(relPath(p.Cwd, path), bytes.NewReader(b), func(msg string) {
		fmt.Fprintf(p.Stderr, "labrun: merge: warning: %s\n", msg)
	})
	if err != nil {
		return nil, &exitError{exitInvalid, "merge: " + err.Error()}
	}
	var out []mergedRecord
	for _, r := range recs {
		out = append(out, mergedRecord{rec: r, from: path})
	}
	return out, nil
}

// summariesBeside holds the records recs of a folder to the summaries of runs in it (paths)
// that list one of them, as diff holds a summary to its records (report.ReadSummary: its
// counts and verdict against its runs, each run against its record beside it, its plan
// against theirs). Before, merge read the records alone: a --count 3 run's last round's
// record taken out and the count edited to 2 in the records left (seals computed again)
// merged "2 of 2 runs passed", exit 0, beside the run's summary that planned 3 and listed
// the round. A summary that lists none of recs (an older run's in the same folder) is not
// read; nor is a summary taken out with the record (the records are read alone, as before:
// nothing in them says a round is missing).
func (p *process) summariesBeside(paths []string, recs []mergedRecord) error {
	given := map[string]bool{}
	for _, m := range recs {
		given[m.json] = true
	}
	for _, f := range paths {
		b, err := os.ReadFile(f)
		if err != nil {
			return &exitError{exitInvalid, fmt.Sprintf("merge: %s: %v", relPath(p.Cwd, f), unwrapPath(err))}
		}
		var s report.Summary
		if json.Unmarshal(b, &s) != nil {
			continue // not one labrun reads: it is not merged either
		}
		if !slices.ContainsFunc(s.Runs, func(r report.SummaryRun) bool {
			return r.Report != "" && given[filepath.Join(filepath.Dir(f), filepath.FromSlash(strings.TrimSuffix(r.Report, ".html")+".json"))]
		}) {
			continue
		}
		if _, err := report.ReadSummary(f); err != nil {
			return &exitError{exitInvalid, "merge: " + relError(p.Cwd, err.Error()) + "\nlabrun: merge: the summary beside the records lists them: a record edited, or taken out with its plan edited, makes another summary than the run's; merge counts no run from them"}
		}
	}
	return nil
}

// runtimeChunk is the least size at which a container runtime splits a long line of a
// container's output into chunks (8 KiB; containerd's is 16 KiB): another stream's line
// written between two chunks of a record lands in its line, at a multiple of it.
const runtimeChunk = 8 << 10

// joinSplitRecord rebuilds a record whose line a container runtime split, with another
// stream's line (shorter than a chunk: a pod's error) written between two chunks, where the
// kubelet serves a chunk without its line break: first is the record's first chunks and that
// line, next the rest of the record. The line written in is what first holds after its last
// chunk's edge (the last multiple of runtimeChunk); the record is the rest joined with next,
// when that makes one that does not contradict itself. Nothing else is tried: a cut
// elsewhere (a longer line written in, or one written at no chunk's edge) would be a guess,
// and a record inside a long string can be whole at several cuts. What is cut off must not
// hold `","`, of which a record's compact JSON is full: a piece of the record cut off with
// the line written in at no chunk's edge is not taken for that line.
func joinSplitRecord(first, next []byte) (joined, foreign []byte) {
	cut := len(first) / runtimeChunk * runtimeChunk
	if cut == 0 || bytes.Contains(first[cut:], []byte(`","`)) {
		return nil, nil
	}
	j := append(bytes.Clone(first[:cut]), next...)
	if _, err := report.Decode("", j); err != nil { // a record, parsed, its own contradictions none
		return nil, nil
	}
	return j, first[cut:]
}

// recordStart matches how a record's line begins (its first field is its version).
var recordStart = regexp.MustCompile(`^\{\s*"version"\s*:`)

// recordWithin matches a record's beginning inside a line (its version, then its scenario).
var recordWithin = regexp.MustCompile(`\{\s*"version"\s*:\s*\d+\s*,\s*"scenario"\s*:`)

// recordLines reads the records among the lines of r (labrun run -o json's stdout, a pod's
// log: other lines are skipped); name says where they came from in errors.
func recordLines(name string, r io.Reader, warn func(string)) ([]*interp.Record, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 1<<30)
	var out []*interp.Record
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		if line[0] != '{' {
			if loc := recordWithin.FindIndex(sc.Bytes()); loc != nil {
				// Another output written into the record's line (a warning without its
				// newline, a timestamp): skipped as one of the log's other lines, the run was
				// lost, perhaps the one that failed.
				before := []rune(string(bytes.TrimLeft(sc.Bytes()[:loc[0]], " \t")))
				if len(before) > 60 {
					before = append([]rune("…"), before[len(before)-60:]...)
				}
				return nil, fmt.Errorf("%s:%d:%d: a run record after other text on its line (%q): another output was written into the record's line; merge counts no run from it: give each record a line of its own", name, n, loc[0]+1, string(before))
			}
			continue
		}
		at := fmt.Sprintf("%s:%d", name, n)
		if report.Sniff(at, line) != report.KindRecord {
			if recordStart.Match(line) && !json.Valid(line) {
				// A record cut short (a pod's log truncated, a line split): skipping it would
				// drop a run, perhaps the one that failed.
				var v any
				err := json.Unmarshal(line, &v)
				first := bytes.Clone(sc.Bytes())
				if !sc.Scan() {
					return nil, fmt.Errorf("%s: a run record that does not parse (cut short or damaged): %v", at, err)
				}
				n++
				joined, foreign := joinSplitRecord(first, sc.Bytes())
				if joined == nil {
					return nil, fmt.Errorf("%s: a run record that does not parse (cut short or damaged): %v", at, err)
				}
				shown := []rune(string(foreign))
				if len(shown) > 60 {
					shown = append(shown[:60], '…')
				}
				warn(fmt.Sprintf("%s: a run record split by another output's line (%q), written into it after its first %d bytes, the edge of a chunk (a container runtime splits a long line into chunks, and another stream's line lands between two): read with that line taken out", at, string(shown), len(first)-len(foreign)))
				line = joined
			} else {
				continue
			}
		}
		rec, err := report.Decode(at, line)
		if err != nil {
			return nil, err
		}
		out = append(out, rec)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	return out, nil
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// checkMatrices refuses records whose unit contradicts itself (dsl.Unit.Contradictions: a
// round or combination its matrix does not have, an id they do not make) and records of one
// scenario and source that disagree on what the scenario sweeps: one source declares one
// sweep, and a record whose matrix was edited (a value of the sweep taken out, so that the
// summary counts fewer runs) would make a summary of another experiment.
func checkMatrices(cwd string, all []mergedRecord) error {
	var msgs []string
	type declared struct {
		values string
		from   string
	}
	type group struct {
		names map[string]declared
	}
	groups := map[string]*group{}
	for _, m := range all {
		u := unitOrSingle(m.rec)
		for _, c := range u.Contradictions(nil) {
			msgs = append(msgs, fmt.Sprintf("%s: run %s: %s", relPath(cwd, m.from), u.ID, c))
		}
		if m.rec.Source == "" {
			continue
		}
		k := m.rec.Scenario + "\x00" + fileKey(m.rec.File) + "\x00" + m.rec.Source
		if groups[k] == nil {
			groups[k] = &group{names: map[string]declared{}}
		}
		g := groups[k]
		for name, values := range scenarioSweep(u.Matrix) {
			if d, ok := g.names[name]; !ok {
				g.names[name] = declared{values, m.from}
			} else if values != "" && d.values == "" {
				g.names[name] = declared{values, m.from}
			}
		}
	}
	for _, m := range all {
		if m.rec.Source == "" {
			continue
		}
		g := groups[m.rec.Scenario+"\x00"+fileKey(m.rec.File)+"\x00"+m.rec.Source]
		u := unitOrSingle(m.rec)
		own := scenarioSweep(u.Matrix)
		for _, name := range slices.Sorted(maps.Keys(g.names)) {
			d := g.names[name]
			values, ok := own[name]
			switch {
			case !ok && !slices.ContainsFunc(u.Matrix.Sweep, func(s dsl.SweepVar) bool { return s.Name == name }):
				msgs = append(msgs, fmt.Sprintf("%s: run %s: its matrix neither sweeps nor fixes %s, which the scenario's sweep holds in %s, a record of the same source", relPath(cwd, m.from), u.ID, name, relPath(cwd, d.from)))
			case ok && values != "" && d.values != "" && values != d.values:
				msgs = append(msgs, fmt.Sprintf("%s: run %s: its matrix says the scenario sweeps %s over %s; %s, a record of the same source, says over %s", relPath(cwd, m.from), u.ID, name, values, relPath(cwd, d.from), d.values))
			}
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	return &exitError{exitInvalid, "merge: " + strings.Join(msgs, "\nlabrun: merge: ") + "\nlabrun: merge: a record whose matrix is not the one its run had was edited or damaged; merge counts no run from it"}
}

// scenarioSweep is what a matrix says of its scenario's own sweep: each var the scenario
// sweeps (swept as the scenario declares, or fixed by --var) with its declared values ("" when
// the matrix does not say them: a secret's).
func scenarioSweep(m *dsl.Matrix) map[string]string {
	out := map[string]string{}
	for _, s := range m.Sweep {
		if s.From == "scenario" {
			out[s.Name] = strings.Join(s.Values, ", ")
		}
	}
	for _, f := range m.Fixed {
		out[f.Name] = strings.Join(f.Instead, ", ")
	}
	return out
}
