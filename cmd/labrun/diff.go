package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/report"
)

func newDiffCmd(p *process) *cobra.Command {
	var output, plot string
	var tolerance float64
	var all bool
	cmd := &cobra.Command{
		Use:   "diff A.json B.json",
		Short: "Compare two recorded runs, or two summaries: every value that differs, and the verdicts that changed",
		Long: `diff reads two run records (of one scenario, or of two scenarios with the same step names,
e.g. STRICT_DNS against LOGICAL_DNS) and lists every recorded value that differs — counters,
gauges and histograms at each snapshot, deltas, sampled series, load results, exec and logs
results, captured values, what each step did (its summary), the run's outcome, the scenario's
source (a digest of its files), doc and target and what the run connected to — with its unit,
the absolute and the relative change, largest relative change first, then the expectations
whose verdict changed. The runs are named by the vars they differ in. A local address whose
port the run chose (a backend on port 0) is written by the name of its endpoint
(<backends.a.address>) or as host:*, and an ephemeral namespace as <ns.key>, so that they do
not differ in every run. Step timings and the values within --tolerance are hidden (counted under the
table); --all shows them. The table fits the terminal's width (COLUMNS, else 100 columns when
not a terminal); -o json has every value whole. --plot FILE.svg draws the counter deltas and
load figures that differ beyond the tolerance, A's bar above B's, a value absent from a run
marked absent.

Given two summaries (.summary.json of labrun run --count/--sweep), diff compares them
combination by combination: each value's median and spread (min–max) in A and B, each
combination's runs passed, and the summaries' verdicts (the same runs judged by another
--pass-rate); summaries of different swept vars, or without a combination in
common, are refused with the reason, and so is (exit 2) a summary whose passed, errors or
not-started count or verdict is not what its runs make them, whose run passed with an
expectation that did not, or failed where an expectation of it erred (an error), or whose
run is not what its record beside it says (the JSON of the report it links: its outcome, its
expectations' verdicts, the values they read), or whose record beside it, judged again over
its own data as merge judges it, gives another verdict, or whose plan (sweep, count, pass
rate, combinations, planned runs) is not the matrix its records keep, or whose records (none
of a shard) are parts of several labrun runs; a run whose record is not there is held
to the summary's counts alone, and named after the differences ("B (b.summary.json) —
unverified: 1 of its 2 runs taken at the summary's word, their records not beside it (…)"; on
stderr with -o json).

A record whose exec output, load results or snapshots of a Prometheus endpoint (each sample
of a series too) are not what the artifacts beside it give (its stdout.txt, stderr.txt,
fortio.json, prometheus.txt) is refused (exit 2), as replay and merge refuse it, and so is
one that, judged again over its own data as merge judges it, gives another verdict. A record
whose artifacts are not beside it, or of an older version than labrun's own (held to fewer
checks), is named so after the differences ("A (a.json) — unverified: judged from the record
alone, its artifacts not beside it").

Exit 0 when nothing differs beyond --tolerance (a relative change, 0.1 for 10%; a value present
in one run only, a changed string and a changed verdict always count), 1 otherwise.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			// NaN compares false with everything: as a tolerance it would hide every change.
			if tolerance < 0 || math.IsNaN(tolerance) || math.IsInf(tolerance, 0) {
				return &exitError{exitInvalid, fmt.Sprintf("--tolerance %g: expected a finite number, 0 or more (a relative change, 0.1 for 10%%)", tolerance)}
			}
			if plot != "" && !strings.HasSuffix(plot, ".svg") {
				return &exitError{exitInvalid, fmt.Sprintf("--plot %s: expected a file name ending in .svg", plot)}
			}
			var kinds [2]string
			for i, a := range args {
				b, err := os.ReadFile(inCwd(p.Cwd, a))
				if err != nil {
					return &exitError{exitInvalid, err.Error()}
				}
				kinds[i] = report.Sniff(a, b)
			}
			if kinds[0] == report.KindSummary || kinds[1] == report.KindSummary {
				if kinds[0] != kinds[1] {
					return &exitError{exitInvalid, fmt.Sprintf("%s is %s and %s %s: diff compares two run records or two summaries", args[0], article(kinds[0]), args[1], article(kinds[1]))}
				}
				return p.diffSummaries(args, output, tolerance, all)
			}
			var recs [2]*interp.Record
			for i, a := range args {
				rec, err := report.Read(inCwd(p.Cwd, a))
				if err != nil {
					return &exitError{exitInvalid, relError(p.Cwd, err.Error())}
				}
				// Its results that need no scenario to be parsed again from the artifacts
				// beside it (an exec's output, a load's fortio.json) are what those give, as
				// merge holds them. Before, a record edited into a pass (its exec's stdout
				// changed) showed "no difference" from a run that printed that, exit 0.
				if c := artifactsWithout(rec, inCwd(p.Cwd, a)); c != "" {
					return &exitError{exitInvalid, fmt.Sprintf("%s: %s; the record was changed after the run or is corrupt", a, c)}
				}
				// And to its seal, as replay and merge hold it: before, a record edited with
				// its artifact (an exec's stdout and stdout.txt) showed no difference in that
				// stdout from a run that printed it.
				if msg := report.SealProblem(inCwd(p.Cwd, a), rec, func(s string) string { return relPath(p.Cwd, s) }); msg != "" {
					return &exitError{exitInvalid, fmt.Sprintf("%s: %s", a, msg)}
				}
				recs[i] = rec
			}
			// Each judged again over its own data, as merge judges a record and diff the
			// records beside two summaries: before, a failed run's record edited to passed
			// (its outcome and its expectation's, its data and artifacts untouched, the seal
			// computed again), which replay and merge refuse, showed "outcome failed →
			// passed", "verdict changed: failed → passed", as if the run had passed.
			for i, a := range args {
				stderr := p.Stderr
				var said strings.Builder
				p.Stderr = &said
				err := p.rejudgeRecords([]mergedRecord{{rec: recs[i], from: inCwd(p.Cwd, a), json: inCwd(p.Cwd, a)}})
				p.Stderr = stderr
				fmt.Fprint(p.Stderr, strings.ReplaceAll(said.String(), "labrun: merge: ", "labrun: diff: "))
				if err != nil {
					msg := strings.ReplaceAll(strings.TrimPrefix(err.Error(), "merge: "), "labrun: merge: ", "labrun: diff: ")
					return &exitError{exitInvalid, "diff: " + strings.ReplaceAll(msg, "merge counts no run from it", "diff compares no run from it")}
				}
			}
			d := interp.Diff(recs[0], recs[1], tolerance)
			if plot != "" {
				svg, ok := report.DiffSVG(d, recs[0].Names(), recs[1].Names())
				if !ok {
					fmt.Fprintf(p.Stderr, "labrun: --plot %s: no counter delta or load figure differs beyond the tolerance: nothing to draw\n", plot)
				} else if err := os.WriteFile(inCwd(p.Cwd, plot), []byte(svg), 0o644); err != nil {
					return &exitError{exitInvalid, fmt.Sprintf("--plot: %v", err)}
				}
			}
			if machine(output) {
				p.printDoc(output, d)
			} else {
				writeDiff(p, args, recs, d, tolerance, all)
			}
			if d.Beyond > 0 {
				return &exitError{code: exitFailed}
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text, json or yaml")
	cmd.Flags().StringVar(&plot, "plot", "", "also draw what differs (counter deltas, load figures) as an SVG bar chart into this file")
	cmd.Flags().Float64Var(&tolerance, "tolerance", 0, "relative change below which a numeric difference does not count (0.1 for 10%)")
	cmd.Flags().BoolVar(&all, "all", false, "also list step timings and the values within the tolerance")
	return cmd
}

// article writes a file kind for a sentence: "a run record", "a CUE file".
func article(kind string) string {
	if strings.HasPrefix(kind, "a ") || strings.HasPrefix(kind, "an ") || strings.HasPrefix(kind, "not ") || strings.HasPrefix(kind, "the ") || strings.HasPrefix(kind, "JSON") {
		return kind
	}
	return "a " + kind
}

// termWidth is the width diff's table fits: the terminal's, else COLUMNS, else 100.
func (p *process) termWidth() int {
	if p.IsTerminal && p.TermWidth != nil {
		if w := p.TermWidth(); w >= 40 {
			return w
		}
	}
	if c, err := strconv.Atoi(p.Getenv("COLUMNS")); err == nil && c >= 40 {
		return c
	}
	return 100
}

// runNames names the two runs by the vars they differ in ("requests=4"), else by scenario.
func runNames(a, b *interp.Record) (string, string) {
	var da, db []string
	keys := map[string]bool{}
	for k := range a.Vars {
		keys[k] = true
	}
	for k := range b.Vars {
		keys[k] = true
	}
	for _, k := range sortedKeys(keys) {
		va, vb := dsl.Stringify(a.Vars[k]), dsl.Stringify(b.Vars[k])
		if va != vb {
			da, db = append(da, k+"="+va), append(db, k+"="+vb)
		}
	}
	na, nb := strings.Join(da, " "), strings.Join(db, " ")
	if a.Scenario != b.Scenario {
		na, nb = strings.TrimSpace(a.Scenario+" "+na), strings.TrimSpace(b.Scenario+" "+nb)
	}
	return na, nb
}

func writeDiff(p *process, args []string, recs [2]*interp.Record, d *interp.RunDiff, tolerance float64, all bool) {
	na, nb := runNames(recs[0], recs[1])
	names := []*dsl.Names{recs[0].Names(), recs[1].Names()}
	fmt.Fprintf(p.Stdout, "A: %s (%s)\nB: %s (%s)\n", args[0], or(na, d.ScenarioA), args[1], or(nb, d.ScenarioB))
	// A record judged with fewer checks (its artifacts not beside it, an older version) is
	// named so after the differences, as replay's verdict line and merge's line name it: the
	// differences are the record's word alone. Before, diff said nothing of either.
	defer func() {
		for i, which := range []string{"A", "B"} {
			why := map[*interp.Record][]string{recs[i]: recordUnverified(recs[i], inCwd(p.Cwd, args[i]))}
			if note := unverifiedNote(recs[i:i+1], why); note != "" {
				fmt.Fprintln(p.Stdout, wrapLines(which+" ("+args[i]+")"+note, p.termWidth(), 2))
			}
		}
	}()
	var rows []interp.Difference
	timings, within := 0, 0
	for _, df := range d.Differences {
		switch {
		case all:
		case strings.HasPrefix(df.Path, "steps.") && (strings.HasSuffix(df.Path, ".startMs") || strings.HasSuffix(df.Path, ".durationMs")):
			timings++
			continue
		case !df.Beyond:
			within++
			continue
		}
		rows = append(rows, df)
	}
	// Numbers by the size of their relative change (one absent, or from 0, first), then the
	// strings and other values by path.
	size := func(df interp.Difference) float64 {
		_, na := df.A.(float64)
		_, nb := df.B.(float64)
		switch {
		case df.Rel != nil:
			return math.Abs(*df.Rel)
		case na || nb:
			return math.Inf(1)
		}
		return -1
	}
	sort.SliceStable(rows, func(i, j int) bool {
		if si, sj := size(rows[i]), size(rows[j]); si != sj {
			return si > sj
		}
		return rows[i].Path < rows[j].Path
	})
	if len(rows) == 0 && len(d.Verdicts) == 0 {
		fmt.Fprintln(p.Stdout, "no difference")
		if h := hiddenNote(timings, within, tolerance); h != "" {
			fmt.Fprintln(p.Stdout, h)
		}
		return
	}
	if len(rows) > 0 {
		table := [][]string{{"VALUE", "UNIT", "A " + na, "B " + nb, "CHANGE"}}
		for _, df := range rows {
			a, b := shownPair(df.A, df.B)
			table = append(table, []string{report.DiffExpr(df.Path), report.DiffUnit(df.Path, names...), a, b, change(df)})
		}
		writeTable(p, table, p.termWidth())
	}
	for _, v := range d.Verdicts {
		change := fmt.Sprintf(": %s → %s", or(string(v.A), "absent"), or(string(v.B), "absent"))
		fmt.Fprintf(p.Stdout, "verdict changed: %s%s\n", cutEnd(v.Expr, max(20, p.termWidth()-len("verdict changed: ")-utf8.RuneCountInString(change))), change)
	}
	fmt.Fprintf(p.Stdout, "%d of %d differences shown (%d beyond the tolerance of %g)\n", len(rows), len(d.Differences), d.Beyond-len(d.Verdicts), tolerance)
	fmt.Fprintf(p.Stdout, "%d verdict%s changed\n", len(d.Verdicts), plural(len(d.Verdicts)))
	if h := hiddenNote(timings, within, tolerance); h != "" {
		fmt.Fprintln(p.Stdout, h)
	}
	if d.Normalized > 0 {
		fmt.Fprintf(p.Stdout, "local ports chosen at run time: compared by name (%d)\n", d.Normalized)
	}
}

// hiddenNote says what the table leaves out: "hidden: 3 step timings, 2 within the
// tolerance of 0.1 (--all)".
func hiddenNote(timings, within int, tolerance float64) string {
	var parts []string
	if timings > 0 {
		parts = append(parts, fmt.Sprintf("%d step timing%s", timings, plural(timings)))
	}
	if within > 0 {
		parts = append(parts, fmt.Sprintf("%d within the tolerance of %g", within, tolerance))
	}
	if len(parts) == 0 {
		return ""
	}
	return "hidden: " + strings.Join(parts, ", ") + " (--all)"
}

// change writes a difference's change: "+4 (+100%)".
func change(df interp.Difference) string {
	if df.Abs == nil {
		return ""
	}
	s := signed(*df.Abs)
	if df.Rel != nil {
		s += " (" + signed(100**df.Rel) + "%)"
	}
	return s
}

func signed(x float64) string {
	s := report.Sig4(x)
	if x > 0 && !math.IsInf(x, 1) { // Sig4 writes +Inf with its sign
		s = "+" + s
	}
	return s
}

// shownPair writes two differing values for the table: a long string is cut around where the
// two first differ, so that the difference shows.
func shownPair(a, b any) (string, string) {
	sa, oka := a.(string)
	sb, okb := b.(string)
	if !oka || !okb {
		return show(a), show(b)
	}
	i := 0
	for i < len(sa) && i < len(sb) && sa[i] == sb[i] {
		i++
	}
	cut := func(s string) string {
		s = strings.Join(strings.Fields(s), " ")
		return strconv.Quote(s)
	}
	if i < maxShown/2 || len(sa) <= maxShown && len(sb) <= maxShown {
		return show(a), show(b)
	}
	from := i - 4
	for from > 0 && !utf8.RuneStart(sa[from]) {
		from--
	}
	at := fmt.Sprintf("@%d ", utf8.RuneCountInString(sa[:from]))
	return at + cut(sa[from:]), at + cut(sb[from:])
}

// show writes a value for the table: a long one (an exec's stdout) is cut to fit the table;
// -o json has it whole.
func show(v any) string {
	if v == nil {
		return "—"
	}
	if x, ok := v.(float64); ok {
		return report.Sig4(x)
	}
	return strings.Join(strings.Fields(dsl.FormatValue(v)), " ")
}

const maxShown = 40

// writeTable prints rows as columns two spaces apart within width: the first column (a
// value's path) gives up its start ("…default.rq_pending_open"), the others their end, the
// last column is never cut.
func writeTable(p *process, rows [][]string, width int) {
	n := len(rows[0])
	w := make([]int, n)
	for _, r := range rows {
		for i, c := range r {
			w[i] = max(w[i], utf8.RuneCountInString(c))
		}
	}
	total := func() int {
		t := 2 * (n - 1)
		for _, x := range w {
			t += x
		}
		return t
	}
	// Shrink the widest of the middle columns down to 14 (or its header), then the first down
	// to 24; then the middle ones down to 8 and the first to 12, until the table fits (or
	// every column is at its narrowest).
	for _, floor := range [][2]int{{14, 24}, {8, 12}} {
		for total() > width {
			widest := -1
			for i := 1; i < n-1; i++ {
				lo := floor[0]
				if floor[0] > 8 {
					lo = max(lo, min(16, utf8.RuneCountInString(rows[0][i])))
				}
				if w[i] > lo && (widest < 0 || w[i] > w[widest]) {
					widest = i
				}
			}
			if widest >= 0 {
				w[widest]--
			} else if w[0] > floor[1] {
				w[0]--
			} else {
				break
			}
		}
	}
	// Names cut from the start (near) alike (delta.http.downstream_rq_2xx and
	// after.http.downstream_rq_2xx both "….http.downstream_rq_2xx", or "…a.http…" and
	// "…r.http…") keep their source's start.
	alike := func(c string) string { return cutStart(c, max(2, w[0]-3)) }
	names := map[string]map[string]bool{}
	for _, r := range rows {
		k := alike(r[0])
		if names[k] == nil {
			names[k] = map[string]bool{}
		}
		names[k][r[0]] = true
	}
	for _, r := range rows {
		var b strings.Builder
		for i, c := range r {
			if i == 0 {
				if len(names[alike(c)]) > 1 {
					c = cutHead(c, w[i])
				} else {
					c = cutStart(c, w[i])
				}
			} else if i < n-1 {
				c = cutEnd(c, w[i])
			}
			b.WriteString(c)
			if i < n-1 {
				b.WriteString(strings.Repeat(" ", w[i]-utf8.RuneCountInString(c)+2))
			}
		}
		fmt.Fprintln(p.Stdout, strings.TrimRight(b.String(), " "))
	}
}

func cutStart(s string, w int) string {
	r := []rune(s)
	if len(r) <= w {
		return s
	}
	return "…" + string(r[len(r)-w+1:])
}

// cutHead cuts a value's name to w runes keeping its end (the stat) and the start of its
// source (delta, after, delta("a", …)) before an ellipsis: for names that cutStart would
// show alike.
func cutHead(s string, w int) string {
	r := []rune(s)
	if len(r) <= w {
		return s
	}
	head := strings.IndexByte(s, '.')
	if head < 0 {
		head = len(s)
	}
	head = min(utf8.RuneCountInString(s[:head]), 6, (w-1)/3)
	return string(r[:head]) + "…" + string(r[len(r)-(w-1-head):])
}
func cutEnd(s string, w int) string {
	r := []rune(s)
	if len(r) <= w {
		return s
	}
	return string(r[:w-1]) + "…"
}

// diffSummaries compares two summaries combination by combination.
func (p *process) diffSummaries(args []string, output string, tolerance float64, all bool) error {
	var sums [2]*report.Summary
	var unbacked [2][]string
	for i, a := range args {
		s, err := report.ReadSummary(inCwd(p.Cwd, a))
		if err != nil {
			return &exitError{exitInvalid, relError(p.Cwd, err.Error())}
		}
		// The records beside it are judged again over their own data, as merge and replay
		// judge them: ReadSummary holds the summary to what they record, not what they are.
		// Before, a summary and its runs' records edited from failed to passed (their
		// outcomes and values only, the loads still counting the 503s the claim forbids;
		// their seals computed again) showed "2 of 2 runs passed, verdict changed: failed →
		// passed", where replay refused each record.
		stderr := p.Stderr
		var said strings.Builder
		p.Stderr = &said
		beside := summaryRecords(inCwd(p.Cwd, a), s)
		unbacked[i] = runsWithoutRecord(inCwd(p.Cwd, a), s)
		err = p.rejudgeRecords(beside)
		p.Stderr = stderr
		fmt.Fprint(p.Stderr, strings.ReplaceAll(said.String(), "labrun: merge: ", "labrun: diff: "))
		if err != nil {
			msg := strings.ReplaceAll(strings.TrimPrefix(err.Error(), "merge: "), "labrun: merge: ", "labrun: diff: ")
			return &exitError{exitInvalid, fmt.Sprintf("diff: %s: a record of its runs does not hold: %s", a, msg)}
		}
		if msgs := append(partsOfRuns(beside), invocationRuns(p.Cwd, beside)...); len(msgs) > 0 {
			return &exitError{exitInvalid, fmt.Sprintf("diff: %s: %s; the summary was changed after it was written", a, strings.Join(msgs, "; "))}
		}
		sums[i] = s
	}
	d, err := report.DiffSummaries(sums[0], sums[1], tolerance)
	if err != nil {
		return &exitError{exitInvalid, fmt.Sprintf("diff %s %s: %v", args[0], args[1], err)}
	}
	// A run whose record is not beside its summary is the summary's word alone: said after
	// the differences, as a record judged without its artifacts is. Before, a summary edited
	// from failed to passed (a run's outcome, expectations and values, its passed count and
	// verdict) with that run's record taken away showed "verdict changed: failed → passed"
	// and nothing else.
	note := func(i int) string {
		if len(unbacked[i]) == 0 {
			return ""
		}
		return fmt.Sprintf("%s (%s) — unverified: %d of its %d runs taken at the summary's word, their records not beside it (%s)", []string{"A", "B"}[i], args[i], len(unbacked[i]), len(sums[i].Runs), strings.Join(unbacked[i], ", "))
	}
	if machine(output) {
		p.printDoc(output, d)
		for i := range sums {
			if n := note(i); n != "" {
				fmt.Fprintln(p.Stderr, "labrun: warning: diff: "+n)
			}
		}
	} else {
		defer func() {
			for i := range sums {
				if n := note(i); n != "" {
					fmt.Fprintln(p.Stdout, wrapLines(n, p.termWidth(), 2))
				}
			}
		}()
		desc := func(s *report.Summary) string {
			return fmt.Sprintf("%s: %s, %d combination%s × %d", s.Scenario, summaryCounts(s), s.Combinations, plural(s.Combinations), s.Count)
		}
		fmt.Fprintf(p.Stdout, "A: %s (%s)\nB: %s (%s)\n", args[0], desc(sums[0]), args[1], desc(sums[1]))
		var rows []report.ComboValueDiff
		within := 0
		for _, r := range d.Values {
			if !r.Beyond && !all {
				within++
				continue
			}
			rows = append(rows, r)
		}
		report.SortByChange(rows, func(r report.ComboValueDiff) (float64, bool) {
			if r.Rel != nil {
				return *r.Rel, true
			}
			return 0, false
		}, func(r report.ComboValueDiff) string { return r.Combination + " " + r.Value })
		if len(rows) > 0 {
			table := [][]string{{"COMBINATION", "VALUE", "UNIT", "A MEDIAN (MIN–MAX)", "B MEDIAN (MIN–MAX)", "CHANGE"}}
			for _, r := range rows {
				c := ""
				if r.Rel != nil {
					c = signed(100**r.Rel) + "%"
				}
				table = append(table, []string{comboLabel(r.Combination), r.Value, r.Unit, report.SpreadText(r.A, ""), report.SpreadText(r.B, ""), c})
			}
			writeTable(p, table, p.termWidth())
		}
		for _, c := range d.Passed {
			fmt.Fprintf(p.Stdout, "runs passed changed: %s: %s → %s\n", comboLabel(c.Combination), c.A, c.B)
		}
		for _, k := range d.OnlyA {
			fmt.Fprintf(p.Stdout, "only in A: %s\n", comboLabel(k))
		}
		for _, k := range d.OnlyB {
			fmt.Fprintf(p.Stdout, "only in B: %s\n", comboLabel(k))
		}
		verdicts := 0
		if v := d.Verdict; v != nil {
			verdicts = 1
			rule := ""
			if v.PassRateA != v.PassRateB {
				rule = fmt.Sprintf(" (A: %s; B: %s)", report.PassRule(v.PassRateA), report.PassRule(v.PassRateB))
			}
			fmt.Fprintf(p.Stdout, "verdict changed: %s → %s%s\n", v.A, v.B, rule)
		}
		if len(rows) == 0 && len(d.Passed) == 0 && len(d.OnlyA)+len(d.OnlyB) == 0 && verdicts == 0 {
			fmt.Fprintln(p.Stdout, "no difference")
		} else {
			fmt.Fprintf(p.Stdout, "%d of %d combinations compared, %d values beyond the tolerance of %g\n", len(d.Combos), len(d.Combos)+len(d.OnlyA)+len(d.OnlyB), d.Beyond-len(d.Passed)-len(d.OnlyA)-len(d.OnlyB)-verdicts, tolerance)
		}
		if h := hiddenNote(0, within, tolerance); h != "" {
			fmt.Fprintln(p.Stdout, h)
		}
	}
	if d.Beyond > 0 {
		return &exitError{code: exitFailed}
	}
	return nil
}

// comboLabel writes a combination for the table: "connections=1 requests=2", "all runs"
// without a sweep.
func comboLabel(k string) string {
	if k == "" {
		return "all runs"
	}
	return strings.ReplaceAll(k, ",", " ")
}

// inCwd resolves a relative path against the process's working directory.
func inCwd(cwd, path string) string {
	if filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(cwd, path)
}

// runsWithoutRecord are the ids of the runs of the summary at path that ran (not one that
// never started) and whose record is not beside it (where its report links it).
func runsWithoutRecord(path string, s *report.Summary) []string {
	var out []string
	for _, r := range s.Runs {
		if r.NotStarted != "" {
			continue
		}
		if r.Report != "" {
			json := filepath.Join(filepath.Dir(path), filepath.FromSlash(strings.TrimSuffix(r.Report, ".html")+".json"))
			if _, err := os.Stat(json); err == nil {
				continue
			}
		}
		out = append(out, r.ID)
	}
	return out
}

// summaryRecords are the records of the summary at path's runs that are beside it (where its
// reports link them).
func summaryRecords(path string, s *report.Summary) []mergedRecord {
	var out []mergedRecord
	for _, r := range s.Runs {
		if r.Report == "" {
			continue
		}
		json := filepath.Join(filepath.Dir(path), filepath.FromSlash(strings.TrimSuffix(r.Report, ".html")+".json"))
		rec, err := report.Read(json)
		if err != nil {
			continue // not beside it (ReadSummary refused one that does not read)
		}
		out = append(out, mergedRecord{rec: rec, from: json, json: json})
	}
	return out
}
