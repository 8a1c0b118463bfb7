package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"

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

Every record names the source of its scenario (a hash of its file and package). Records of
one scenario from different sources — shards that ran different checkouts — are refused
(exit 2), naming the scenario and the files of each source, unless --allow-mixed-sources.
Two records of one run (the same scenario, combination and round: a shard run twice) keep
the later one, with a warning.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return p.merge(args, &f)
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
	if err := checkSources(p.Cwd, all, f.mixed); err != nil {
		return err
	}
	all = p.dropDuplicates(all)
	// The order of one run: by file, then position in it, then combination and round.
	sort.SliceStable(all, func(i, j int) bool {
		a, b := all[i].rec, all[j].rec
		if fa, fb := filepath.Base(a.File), filepath.Base(b.File); fa != fb {
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
			mx = u.Matrix
			byKey[k] = mx
			matrices = append(matrices, mx)
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
		fmt.Fprintf(p.Stdout, "%s %s\n", strings.ToUpper(string(recs[0].Outcome)), recs[0].Scenario)
	}
	if f.junit != "" {
		if err := report.JUnit(inCwd(p.Cwd, f.junit), recs); err != nil {
			fmt.Fprintf(p.Stderr, "labrun: junit: %v\n", err)
			code = worse(code, exitInfra)
		}
	}
	if code != exitOK {
		return &exitError{code: code}
	}
	return nil
}

// unitOrSingle is the record's unit, or the unit of a run of its scenario on its own (a record
// without one).
func unitOrSingle(rec *interp.Record) *dsl.Unit {
	if rec.Unit != nil && rec.Unit.Matrix != nil {
		return rec.Unit
	}
	rec.Unit = &dsl.Unit{ID: dsl.UnitID(rec.Scenario, nil, 1), Matrix: &dsl.Matrix{Scenario: rec.Scenario, File: rec.File, Count: 1}, Combination: 1, Round: 1}
	return rec.Unit
}

// matrixKey says which matrix a record's unit belongs to, wherever it ran: the matrix with
// its file's base name (a checkout's path differs between machines).
func matrixKey(u *dsl.Unit) string {
	m := *u.Matrix
	m.File = filepath.Base(m.File)
	m.Plot = slices.Clone(m.Plot)
	for i := range m.Plot {
		m.Plot[i].Pos = dsl.Pos{} // a position names the file by its path on that machine
	}
	b, _ := json.Marshal(m)
	return string(b)
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
		k := m.rec.Scenario
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

// dropDuplicates keeps one record of each run (scenario, combination, round): the later.
func (p *process) dropDuplicates(all []mergedRecord) []mergedRecord {
	byID := map[string]int{}
	var out []mergedRecord
	for _, m := range all {
		id := filepath.Base(m.rec.File) + ":" + unitOrSingle(m.rec).ID
		i, ok := byID[id]
		if !ok {
			byID[id] = len(out)
			out = append(out, m)
			continue
		}
		keep, drop := out[i], m
		if m.rec.Start.After(out[i].rec.Start) {
			keep, drop = m, out[i]
		}
		fmt.Fprintf(p.Stderr, "labrun: merge: warning: two records of run %s (%s, %s): keeping the later one, from %s\n",
			unitOrSingle(m.rec).ID, relPath(p.Cwd, out[i].from), relPath(p.Cwd, m.from), relPath(p.Cwd, keep.from))
		_ = drop
		out[i] = keep
	}
	return out
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
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				return nil, &exitError{exitInvalid, fmt.Sprintf("merge: %s: %v", relPath(p.Cwd, f), unwrapPath(err))}
			}
			if report.Sniff(f, b) != report.KindRecord {
				continue // a summary, a plan, another tool's JSON
			}
			rec, err := report.Decode(f, b)
			if err != nil {
				return nil, &exitError{exitInvalid, "merge: " + relError(p.Cwd, err.Error())}
			}
			out = append(out, mergedRecord{rec: rec, from: f, json: f})
		}
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
	recs, err := recordLines(relPath(p.Cwd, path), bytes.NewReader(b))
	if err != nil {
		return nil, &exitError{exitInvalid, "merge: " + err.Error()}
	}
	var out []mergedRecord
	for _, r := range recs {
		out = append(out, mergedRecord{rec: r, from: path})
	}
	return out, nil
}

// recordLines reads the records among the lines of r (labrun run -o json's stdout, a pod's
// log: other lines are skipped); name says where they came from in errors.
func recordLines(name string, r io.Reader) ([]*interp.Record, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 1<<30)
	var out []*interp.Record
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] != '{' {
			continue
		}
		at := fmt.Sprintf("%s:%d", name, n)
		if report.Sniff(at, line) != report.KindRecord {
			continue
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
