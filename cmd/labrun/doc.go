package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/report"
)

type docFlags struct {
	runFlags
	vet    bool
	update bool
}

func newDocCmd(p *process) *cobra.Command {
	var f docFlags
	cmd := &cobra.Command{
		Use:   "doc FILE.md...",
		Short: "Run the specs embedded in Markdown documents and check their expected output",
		Long: "doc runs every fenced block marked as a labrun spec (```cue labrun) in document order —\n" +
			`the specs of one document share its context, so a kit defined in an earlier block is usable
later — on the chosen target, and checks each expected-output block (` + "```text labrun-expect" + `)
against the run: the block after a spec holds the normalised result of that spec's scenarios
(outcome, load codes, the shape of every delta an expression reads — +, 0 or reset —, and each
expectation's verdict), which leaves out what differs between clusters (pod names, IPs, the
cluster domain, absolute counter values, timings). A line "~ EXPR VALUE ±N%" checks a value
within a tolerance, e.g. "~ fortio.avg 3000 ±10%"; its EXPR is compiled as the scenario's
expectations are (the same names and refusals; a tolerance of 100% or more, which accepts
0, and an EXPR reading only the clock are refused), before any run and by --vet. A scenario that declares a sweep runs once
per combination (as labrun run does, summary included) and its block holds the summary: a row
per run with its vars, outcome, response codes and each expectation's verdict, the numbers left
out. A mismatch fails with a diff at the .md lines.

--update rewrites the expected blocks from the run; --vet only validates the specs.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return p.doc(args, &f)
		},
	}
	f.loadFlags.register(cmd)
	f.targetFlags.register(p, cmd)
	cmd.Flags().StringVar(&f.reportDir, "report-dir", "reports", "directory for reports (\"\" for none)")
	cmd.Flags().BoolVar(&f.keep, "keep", false, "keep what the runs created")
	cmd.Flags().BoolVarP(&f.quiet, "quiet", "q", false, "print only the verdicts")
	cmd.Flags().BoolVar(&f.vet, "vet", false, "validate the specs without running them")
	cmd.Flags().BoolVar(&f.update, "update", false, "rewrite the expected-output blocks from this run")
	f.leftovers = true // kube target: warn about what dead runs of a scenario left
	return cmd
}

// docBlock is a spec fence with its scenarios and the expected block that follows it.
type docBlock struct {
	spec      dsl.Fence
	scenarios []*dsl.Scenario
	expect    *dsl.Fence
}

func (p *process) doc(args []string, f *docFlags) error {
	for _, a := range args {
		if !dsl.IsMarkdown(a) {
			return &exitError{exitInvalid, fmt.Sprintf("%s: expected a Markdown document (.md)", a)}
		}
	}
	opts, err := f.options()
	if err != nil {
		return err
	}
	opts.ForRun = true // the documents' scenarios run after their load
	if machine(f.output) {
		return &exitError{exitInvalid, fmt.Sprintf("doc -o %s: labrun doc prints text only; run the document's specs with labrun run -o %s FILE.md for their records", f.output, f.output)}
	}
	if err := p.checkTarget(f.target); err != nil {
		return err
	}
	opts.Target = f.target
	res, errs, err := p.load(args, opts)
	if err != nil {
		return loadError(err)
	}
	if len(errs) == 0 {
		errs = p.expectedWithoutScenario(args, res.Scenarios)
	}
	if len(errs) == 0 {
		errs = p.toleranceErrors(args, res.Scenarios)
	}
	if len(errs) > 0 || f.vet {
		return p.reportVet(f.output, res, errs)
	}
	if err := checkWritable(p.Cwd, f.reportDir, f.junit); err != nil {
		return err
	}
	code := exitOK
	runCtx, cleanupCtx, stop := p.runContexts()
	defer stop()
	// The total of the documents' scenarios, as labrun run of them prints it: before, labrun
	// doc printed none, and two swept scenarios' SUMMARY lines were all a quiet run showed.
	var total runTally
	scenarios, runsAll := 0, 0
	defer func() {
		if scenarios > 1 {
			fmt.Fprintln(p.Stdout, total.line(scenarios, runsAll))
		}
	}()
	for _, path := range args {
		abs, _ := filepath.Abs(path)
		doc, err := os.ReadFile(abs)
		if err != nil {
			return &exitError{exitInvalid, err.Error()}
		}
		blocks := docBlocks(doc, abs, res.Scenarios)
		recs := map[string]*interp.Record{}
		swept := map[string]string{}
		for _, b := range blocks {
			for _, sc := range b.scenarios {
				if runCtx.Err() != nil {
					break
				}
				if len(sc.Sweep) > 0 {
					text, rec, c, runs, err := p.docSweep(runCtx, cleanupCtx, sc, f, opts)
					if err != nil {
						return err
					}
					code = worse(code, c)
					if rec != nil {
						recs[sc.Name], swept[sc.Name] = rec, text
					}
					under := c
					if c == exitLeftovers {
						under = exitOK
						for _, r := range runs {
							under = worse(under, outcomeCode(r))
						}
					}
					total.count(c, under)
					scenarios, runsAll = scenarios+1, runsAll+len(runs)
					continue
				}
				r := p.runOne(runCtx, cleanupCtx, unitOf(sc), &f.runFlags)
				code = worse(code, r.code)
				total.count(r.code, outcomeCode(r.rec))
				scenarios, runsAll = scenarios+1, runsAll+1
				if r.rec != nil {
					recs[sc.Name] = r.rec
				}
			}
		}
		if runCtx.Err() != nil {
			return &exitError{code: exitInterrupted}
		}
		updated, checks := p.checkExpected(path, doc, blocks, recs, swept, f.update)
		mismatches := countMismatches(checks)
		if f.update && !bytes.Equal(updated, doc) {
			if err := os.WriteFile(abs, updated, 0o644); err != nil {
				return &exitError{exitInfra, err.Error()}
			}
			fmt.Fprintf(p.Stdout, "updated the expected blocks of %s\n", path)
		}
		if mismatches > 0 && !f.update {
			fmt.Fprintf(p.Stderr, "%s: %d expected block%s did not match the run (labrun doc --update rewrites them)\n", path, mismatches, plural(mismatches))
			code = worse(code, exitFailed)
		}
	}
	if code != exitOK {
		return &exitError{code: code}
	}
	return nil
}

// expectedWithoutScenario refuses an expected-output block after a spec that declares no
// scenario (a kit, say): no run would ever be compared with it.
func (p *process) expectedWithoutScenario(paths []string, all []*dsl.Scenario) dsl.Errors {
	var errs dsl.Errors
	eachDocBlock(paths, all, func(abs string, b *docBlock) {
		if b.expect != nil && len(b.scenarios) == 0 {
			errs = append(errs, &dsl.Error{Pos: dsl.Pos{File: relPath(p.Cwd, abs), Line: b.expect.Line, Col: b.expect.Indent + 1},
				Msg: fmt.Sprintf("the spec at line %d declares no scenario, so the expected-output block after it would never be checked: declare the scenario in that spec, or move the block after the spec whose run it shows", b.spec.Line)})
		}
	})
	return errs
}

// eachDocBlock calls f with each block of the documents at paths (a document that cannot be
// read is skipped: the load has read it, and said so).
func eachDocBlock(paths []string, all []*dsl.Scenario, f func(abs string, b *docBlock)) {
	eachDocBlockOf(paths, all, os.ReadFile, f)
}

// eachDocBlockOf is eachDocBlock with the documents' text from read (the editor's, for labrun
// lsp).
func eachDocBlockOf(paths []string, all []*dsl.Scenario, read func(string) ([]byte, error), f func(abs string, b *docBlock)) {
	for _, path := range paths {
		abs, _ := filepath.Abs(path)
		doc, err := read(abs)
		if err != nil {
			continue
		}
		for _, b := range docBlocks(doc, abs, all) {
			f(abs, b)
		}
	}
}

// toleranceErrors compiles the tolerance lines ("~ EXPR VALUE ±N%") of every expected block
// against the scenario they check (toleranceOwners), as its expectations are compiled: the
// same names and aliases (fortio.code503), the same refusals (a stat or key the run can never
// hold), before any run, at the document's line and column. Before, a tolerance line was
// evaluated after the run with plain expr: fortio.code503 failed there, and a key expect
// refuses (fortio.codes["5O3"]) read 0 and passed.
func (p *process) toleranceErrors(paths []string, all []*dsl.Scenario) dsl.Errors {
	return p.toleranceErrorsOf(paths, all, os.ReadFile)
}

// toleranceErrorsOf is toleranceErrors with the documents' text from read.
func (p *process) toleranceErrorsOf(paths []string, all []*dsl.Scenario, read func(string) ([]byte, error)) dsl.Errors {
	var errs dsl.Errors
	eachDocBlockOf(paths, all, read, func(abs string, b *docBlock) {
		if b.expect == nil || len(b.scenarios) == 0 {
			return
		}
		content := strings.Split(strings.TrimRight(b.expect.Content, "\n"), "\n")
		owners := toleranceOwners(content, b.scenarios)
		for i, l := range content {
			if name, off, ok := scenarioLine(l); ok && !slices.ContainsFunc(b.scenarios, func(sc *dsl.Scenario) bool { return sc.Name == name }) {
				var names []string
				for _, sc := range b.scenarios {
					names = append(names, sc.Name)
				}
				errs = append(errs, &dsl.Error{Pos: dsl.Pos{File: relPath(p.Cwd, abs), Line: b.expect.Line + i + 1, Col: b.expect.Indent + off + 1},
					Msg: fmt.Sprintf("scenario %s: the spec at line %d declares no scenario %s%s, so this line never matches its run and the tolerance lines under it would check another scenario's; expected one of: %s", name, b.spec.Line, name, dslDidYouMean(name, names), strings.Join(names, ", "))})
				continue
			}
			if e := resultLineError(l, owners[i]); e != nil {
				e.Pos = dsl.Pos{File: relPath(p.Cwd, abs), Line: b.expect.Line + i + 1, Col: b.expect.Indent + e.Pos.Col}
				errs = append(errs, e)
				continue
			}
			t, ok := report.ParseTolerance(l)
			if !ok {
				if off, msg, bad := report.ToleranceProblem(l); bad {
					errs = append(errs, &dsl.Error{Pos: dsl.Pos{File: relPath(p.Cwd, abs), Line: b.expect.Line + i + 1, Col: b.expect.Indent + off + 1}, Msg: msg})
				}
				continue
			}
			sc := owners[i]
			pos := dsl.Pos{File: relPath(p.Cwd, abs), Line: b.expect.Line + i + 1, Col: b.expect.Indent + t.Off}
			if len(sc.Sweep) > 0 {
				errs = append(errs, &dsl.Error{Pos: dsl.Pos{File: pos.File, Line: pos.Line, Col: b.expect.Indent + 1},
					Msg: fmt.Sprintf("%s: a sweep's expected block takes no ~ line (a tolerance checks a value of one run; scenario %s runs once per combination): remove it", strings.TrimSpace(l), sc.Name)})
				continue
			}
			if _, err := t.Compile(sc, pos); err != nil {
				if e, ok := err.(*dsl.Error); ok {
					errs = append(errs, e)
				} else {
					errs = append(errs, &dsl.Error{Pos: pos, Msg: err.Error()})
				}
			}
		}
	})
	return errs
}

// resultLineError refuses an expected block's "load NAME: ..." line that names no step of sc,
// and its "expect SRC: OUTCOME" line whose SRC is none of sc's expectations (a step's name
// misspelt in it): the run's result never holds such a line, so labrun doc failed with a diff
// after the run, where vet could say it before. Its Pos holds the column (1-based, in the
// line) alone. A sweep's block (a summary's table) is not read here.
func resultLineError(l string, sc *dsl.Scenario) *dsl.Error {
	if sc == nil || len(sc.Sweep) > 0 {
		return nil
	}
	trimmed := strings.TrimLeft(l, " \t")
	indent := len(l) - len(trimmed)
	if strings.HasPrefix(trimmed, "scenario ") || strings.HasPrefix(trimmed, "expect ") {
		// scenario s: pased, expect X: passd: no run says that outcome.
		if i := strings.LastIndex(trimmed, ": "); i > 0 {
			word := strings.TrimRight(trimmed[i+2:], " \t\r")
			if !slices.Contains(resultOutcomes, word) {
				return &dsl.Error{Pos: dsl.Pos{Col: indent + i + 3}, Msg: fmt.Sprintf("%s: no run's result says %q%s, so this line never matches; expected one of: %s", strings.TrimSpace(trimmed[:i]), word, dslDidYouMean(word, resultOutcomes), strings.Join(resultOutcomes, ", "))}
			}
		}
	}
	if rest, ok := strings.CutPrefix(trimmed, "load "); ok {
		name, _, found := strings.Cut(rest, ":")
		if !found || name == "" || strings.ContainsAny(name, " \t") || sc.Step(name) != nil {
			return nil
		}
		return &dsl.Error{Pos: dsl.Pos{Col: indent + len("load ") + 1}, Msg: fmt.Sprintf("load %s: scenario %s has no step %s%s, so this line never matches its run's result; expected the name of one of its loads", name, sc.Name, name, dslDidYouMean(name, sc.Names()))}
	}
	if rest, ok := strings.CutPrefix(trimmed, "expect "); ok {
		i := strings.LastIndex(rest, ": ")
		if i <= 0 {
			return nil
		}
		src := rest[:i]
		var srcs []string
		for _, e := range sc.Expect {
			if e.Src == src {
				return nil
			}
			srcs = append(srcs, e.Src)
		}
		if len(srcs) == 0 {
			return nil
		}
		return &dsl.Error{Pos: dsl.Pos{Col: indent + len("expect ") + 1}, Msg: fmt.Sprintf("expect %s: scenario %s has no expectation %q, so this line never matches its run's result; expected one of: %s", src, sc.Name, src, strings.Join(srcs, "; "))}
	}
	return nil
}

// resultOutcomes are the outcomes a run's normalised result gives a scenario and an
// expectation (report.Expected).
var resultOutcomes = []string{string(interp.Passed), string(interp.Failed), string(interp.Errored), string(interp.Interrupted), string(interp.Skipped), string(interp.TimedOut), string(interp.Cancelled), string(interp.Refused)}

// scenarioLine parses an expected block's "scenario NAME: OUTCOME" line: NAME and its byte
// offset in the line.
func scenarioLine(l string) (name string, off int, ok bool) {
	trimmed := strings.TrimLeft(l, " \t")
	rest, found := strings.CutPrefix(trimmed, "scenario ")
	if !found {
		return "", 0, false
	}
	name, _, found = strings.Cut(rest, ":")
	if !found || name == "" || strings.ContainsAny(name, " \t") {
		return "", 0, false
	}
	return name, len(l) - len(trimmed) + len("scenario "), true
}

// dslDidYouMean is " (did you mean X?)" for the closest of names to name, or "".
func dslDidYouMean(name string, names []string) string {
	best, bestD := "", 3
	for _, n := range names {
		if d := dsl.EditDistance(name, n); d < bestD {
			best, bestD = n, d
		}
	}
	if best == "" {
		return ""
	}
	return " (did you mean " + best + "?)"
}

// toleranceOwners is, for each line of an expected block's content, the scenario its
// tolerance line ("~ EXPR VALUE ±N%") checks: the one whose "scenario NAME: ..." line is the
// last above it, the spec's first when none is. Before, every tolerance line checked the
// spec's first scenario: one written under the second's lines read the first's run.
func toleranceOwners(content []string, scenarios []*dsl.Scenario) []*dsl.Scenario {
	out := make([]*dsl.Scenario, len(content))
	cur := scenarios[0]
	for i, l := range content {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(l), "scenario "); ok {
			if name, _, ok := strings.Cut(rest, ":"); ok {
				for _, sc := range scenarios {
					if sc.Name == name {
						cur = sc
					}
				}
			}
		}
		out[i] = cur
	}
	return out
}

// docBlocks pairs each spec fence of a document with its scenarios and expected block.
func docBlocks(doc []byte, abs string, all []*dsl.Scenario) []*docBlock {
	var blocks []*docBlock
	var cur *docBlock
	for _, fc := range dsl.Fences(doc) {
		switch {
		case fc.IsSpec():
			cur = &docBlock{spec: fc}
			for _, sc := range all {
				if sc.Pos.File == abs && sc.Pos.Line > fc.Line && sc.Pos.Line < fc.EndLine {
					cur.scenarios = append(cur.scenarios, sc)
				}
			}
			blocks = append(blocks, cur)
		case fc.HasWord("labrun-expect") && cur != nil && cur.expect == nil:
			e := fc
			cur.expect = &e
		}
	}
	return blocks
}

// blockCheck is the comparison of one expected block with its runs: what was printed about it,
// "" when it matched.
type blockCheck struct {
	line    int // the block's opening fence
	problem string
}

// countMismatches counts the blocks that did not match.
func countMismatches(checks []blockCheck) int {
	n := 0
	for _, c := range checks {
		if c.problem != "" {
			n++
		}
	}
	return n
}

// checkExpected compares every expected block with its runs, prints a diff for each mismatch
// at the document's lines, and returns the document with the blocks rewritten from the runs,
// and each compared block's verdict. A scenario that declares a sweep has, instead of its
// run's result, its summary's (swept).
func (p *process) checkExpected(path string, doc []byte, blocks []*docBlock, recs map[string]*interp.Record, swept map[string]string, update bool) ([]byte, []blockCheck) {
	lines := strings.Split(string(doc), "\n")
	type repl struct {
		from, to int // content lines [from, to) (0-based)
		text     []string
	}
	var repls []repl
	var checks []blockCheck
	for _, b := range blocks {
		if b.expect == nil || len(b.scenarios) == 0 {
			continue
		}
		var got []string
		gotOf := map[string][]string{} // each scenario's lines, in got's order
		complete := true
		for _, sc := range b.scenarios {
			rec := recs[sc.Name]
			if rec == nil {
				complete = false
				continue
			}
			text, ok := swept[sc.Name]
			if !ok {
				text = report.Expected(rec, sc)
			}
			gotOf[sc.Name] = strings.Split(strings.TrimRight(text, "\n"), "\n")
			got = append(got, gotOf[sc.Name]...)
		}
		if !complete {
			continue
		}
		content := strings.Split(strings.TrimRight(b.expect.Content, "\n"), "\n")
		owners := toleranceOwners(content, b.scenarios)
		first := b.expect.Line // index of the first content line (0-based) = opening line (1-based)
		var problem strings.Builder
		stderr := io.MultiWriter(p.Stderr, &problem)
		var want []string
		tolerances := map[string][]string{} // by scenario: written after its lines
		for i, l := range content {
			if t, ok := report.ParseTolerance(l); ok {
				sc := owners[i]
				rec := recs[sc.Name]
				if _, ok := swept[sc.Name]; ok {
					fmt.Fprintf(stderr, "%s:%d: %s: a sweep's expected block takes no ~ line (a tolerance checks a value of one run; scenario %s runs once per combination): remove it\n", path, first+i+1, l, sc.Name)
					continue
				}
				v, within, err := t.Check(rec, sc)
				switch {
				case err != nil:
					fmt.Fprintf(stderr, "%s:%d: %s: %v\n", path, first+i+1, l, err)
				case !within:
					fmt.Fprintf(stderr, "%s:%d: %s is %s, not within %g%% of %s\n", path, first+i+1, t.Expr, dsl.FormatValue(v), t.Pct, dsl.FormatValue(t.Value))
				}
				t.Value = v
				tolerances[sc.Name] = append(tolerances[sc.Name], t.String())
				continue
			}
			if strings.TrimSpace(l) != "" {
				want = append(want, l)
			}
		}
		if d := diffLines(want, got); d != "" {
			fmt.Fprintf(stderr, "%s:%d: the expected output differs from the run (- expected, + got):\n%s", path, first+1, d)
		}
		// problem holds what was said of the block above: "" when it matched.
		checks = append(checks, blockCheck{line: b.expect.Line, problem: problem.String()})
		var text []string
		for _, sc := range b.scenarios {
			text = append(text, gotOf[sc.Name]...)
			text = append(text, tolerances[sc.Name]...)
		}
		if pad := strings.Repeat(" ", b.expect.Indent); pad != "" {
			// The fence is indented (at most three spaces): its lines are, as the rest
			// of the document's, rather than at the left margin under it.
			for i, l := range text {
				if l != "" {
					text[i] = pad + l
				}
			}
		}
		if strings.HasSuffix(lines[b.expect.Line-1], "\r") {
			// The document's lines end with CRLF (its fence's does): so do the block's.
			// Before, they were written with LF alone, the document's endings mixed.
			for i := range text {
				text[i] += "\r"
			}
		}
		repls = append(repls, repl{from: first, to: b.expect.EndLine - 1, text: text})
	}
	if !update {
		return doc, checks
	}
	var out []string
	last := 0
	for _, r := range repls {
		out = append(out, lines[last:r.from]...)
		out = append(out, r.text...)
		last = r.to
	}
	out = append(out, lines[last:]...)
	return []byte(strings.Join(out, "\n")), checks
}

// compareDocs is labrun doc's check of expected-output blocks, made by labrun run of a
// Markdown document: it compares each block with the runs of its spec's scenarios, prints a
// diff for each mismatch at the document's lines, and returns exitFailed when one differs (as
// labrun doc would). A block whose scenarios did not all run as labrun doc runs them (not
// selected, another matrix than the scenario's own: --sweep, --var of a swept var, --count,
// --pass-rate; runs missing: a shard, --fail-fast) cannot be compared: the run says so, naming
// labrun doc, and its exit stays what the runs made it. It returns, for the JUnit, each
// block's verdict: matched, did not (what was printed: the diff), not compared (why).
func (p *process) compareDocs(w *work, recs []*interp.Record) (int, []report.DocCheck) {
	matrixOf := map[string]*dsl.Matrix{}
	key := func(file, scenario string) string { return file + "\x00" + scenario }
	var docs []string
	for _, m := range w.matrices {
		matrixOf[key(m.File, m.Scenario)] = m
		if isMarkdown(m.File) && !slices.Contains(docs, m.File) {
			docs = append(docs, m.File)
		}
	}
	runs := map[*dsl.Matrix][]*interp.Record{}
	for _, r := range recs {
		if m := matrixOf[key(r.File, r.Scenario)]; m != nil {
			runs[m] = append(runs[m], r)
		}
	}
	code := exitOK
	var checks []report.DocCheck
	for _, abs := range docs {
		doc, err := os.ReadFile(abs)
		if err != nil {
			fmt.Fprintf(p.Stderr, "labrun: %s: its expected-output blocks were not compared with the run: %v\n", relPath(p.Cwd, abs), unwrapPath(err))
			checks = append(checks, report.DocCheck{File: relPath(p.Cwd, abs), Error: fmt.Sprintf("its expected-output blocks were not compared with the run: %v", unwrapPath(err))})
			code = worse(code, exitInfra)
			continue
		}
		path := relPath(p.Cwd, abs)
		byName := map[string]*interp.Record{}
		swept := map[string]string{}
		var compared []*docBlock
		var notCompared []report.DocCheck
		for _, b := range docBlocks(doc, abs, w.res.Scenarios) {
			if b.expect == nil {
				continue
			}
			why := ""
			if len(b.scenarios) == 0 {
				why = "its spec declares no scenario"
			}
			for _, sc := range b.scenarios {
				m := matrixOf[key(sc.Pos.File, sc.Name)]
				switch {
				case m == nil && w.shard != nil && w.shard.elsewhere[[2]string{sc.Pos.File, sc.Name}]:
					why = fmt.Sprintf("the runs of scenario %s are in another shard", sc.Name)
				case m == nil:
					why = fmt.Sprintf("scenario %s was not selected", sc.Name)
				case m.Count > 1 || m.PassRate > 0 || len(m.Fixed) > 0 || slices.ContainsFunc(m.Sweep, func(v dsl.SweepVar) bool { return v.From != "scenario" }):
					why = fmt.Sprintf("scenario %s ran as another matrix than its own (--sweep, --var, --count, --pass-rate)", sc.Name)
				case len(runs[m]) < m.Runs():
					why = fmt.Sprintf("%d of the %d runs of scenario %s were made", len(runs[m]), m.Runs(), sc.Name)
				case len(m.Sweep) > 0:
					byName[sc.Name], swept[sc.Name] = runs[m][len(runs[m])-1], sweptExpected(m, runs[m])
				default:
					byName[sc.Name] = runs[m][0]
				}
				if why != "" {
					break
				}
			}
			if why != "" {
				who := "labrun doc " + path
				if w.shard != nil {
					who += " or labrun merge of every shard's records"
				}
				fmt.Fprintf(p.Stderr, "labrun: %s:%d: this expected-output block was not compared with the run: %s; %s compares it\n", path, b.expect.Line, why, who)
				notCompared = append(notCompared, report.DocCheck{File: path, Line: b.expect.Line, Skipped: fmt.Sprintf("not compared with the run: %s; %s compares it", why, who)})
				continue
			}
			compared = append(compared, b)
		}
		_, verdicts := p.checkExpected(path, doc, compared, byName, swept, false)
		if mismatches := countMismatches(verdicts); mismatches > 0 {
			fmt.Fprintf(p.Stderr, "%s: %d expected block%s did not match the run (labrun doc --update rewrites them)\n", path, mismatches, plural(mismatches))
			code = worse(code, exitFailed)
		}
		mine := notCompared
		for _, v := range verdicts {
			mine = append(mine, report.DocCheck{File: path, Line: v.line, Failure: v.problem})
		}
		slices.SortStableFunc(mine, func(a, b report.DocCheck) int { return a.Line - b.Line })
		checks = append(checks, mine...)
	}
	return code, checks
}

// isMarkdown says whether path names a Markdown document.
func isMarkdown(path string) bool {
	return dsl.IsMarkdown(path)
}

// diffLines is a line diff of two short lists (longest common subsequence), "" when equal.
func diffLines(a, b []string) string {
	n, m := len(a), len(b)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out strings.Builder
	changed := false
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			out.WriteString("    " + a[i] + "\n")
			i, j = i+1, j+1
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]): // what was expected first, as diff does
			out.WriteString("  - " + a[i] + "\n")
			i, changed = i+1, true
		default:
			out.WriteString("  + " + b[j] + "\n")
			j, changed = j+1, true
		}
	}
	if !changed {
		return ""
	}
	return out.String()
}
