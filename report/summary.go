package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/interp"
)

// The summary of a matrix of runs (labrun run --count N, --sweep var=a,b,c, or a scenario's
// declared sweep): <time>_<scenario>_<id>.summary.{md,html,json} beside the runs' reports, and
// its plots. A summary is made from run records alone (each carries its unit of the matrix),
// so the records of one matrix made by several processes give the same summary.

// SummaryKind marks a summary's JSON, so that a command given one knows what it holds.
const SummaryKind = "labrun summary"

// SummaryVersion is the version of the summary's JSON form.
const SummaryVersion = 2

// Summary is what a matrix of runs writes per scenario.
type Summary struct {
	Kind     string `json:"kind"`
	Version  int    `json:"version"`
	Scenario string `json:"scenario"`
	File     string `json:"file,omitempty"`
	// Sweeps are the swept vars' names, Sweep the values of each, in order.
	Sweeps []string       `json:"sweeps,omitempty"`
	Sweep  []dsl.SweepVar `json:"sweep,omitempty"`
	// Count is how many times each combination runs; Combinations how many there are; Planned
	// the runs the matrix makes (a run missing from the records counts as not passed).
	Count        int `json:"count"`
	Combinations int `json:"combinations"`
	Planned      int `json:"planned"`
	// PassRate is the share of each combination's runs that must pass (0: every run).
	PassRate float64 `json:"passRate"`
	Passed   int     `json:"passed"`
	// Errors are the runs labrun could not make (an error, a timeout, a refusal) or made but
	// could not judge an expectation of (it erred): no pass rate lets them pass; NotStarted the planned runs that never started.
	Errors     int `json:"errors,omitempty"`
	NotStarted int `json:"notStarted,omitempty"`
	// Fixed are the vars the scenario sweeps that --var fixed at one value.
	Fixed []dsl.FixedVar `json:"fixed,omitempty"`
	// Expectations are the runs' expectations in the scenario's order (as its records list
	// them): the summary's columns, e1, e2, … and tables follow it.
	Expectations []string `json:"expectations,omitempty"`
	// Runs are in the matrix's order: combination, then round.
	Runs []SummaryRun `json:"runs"`
	// Units are the unit of every value the runs read (ms, 1/s, count, bytes; absent: unknown).
	Units map[string]string `json:"units,omitempty"`
	Plot  []dsl.PlotSpec    `json:"plot,omitempty"`
	// Verdict is "passed", "failed" (a combination below the pass rate), "error" (a run labrun
	// could not make), "interrupted", or "skipped" (runs not started because of --fail-fast,
	// and none of those that ran failed).
	Verdict string `json:"verdict"`
}

// The reasons a planned run has no record.
const (
	// NotStartedInterrupted: labrun was interrupted before the run started.
	NotStartedInterrupted = "interrupted before it started"
	// NotStartedFailFast: --fail-fast started no run after one that did not pass.
	NotStartedFailFast = "not started: --fail-fast, after a run that did not pass"
)

// RunKey is a run's place in its matrix: its combination and round, from 1.
type RunKey struct{ Combination, Round int }

// SummaryRun is one run of a combination.
type SummaryRun struct {
	ID          string            `json:"id,omitempty"`
	Vars        map[string]string `json:"vars"`
	Combination int               `json:"combination,omitempty"`
	Round       int               `json:"round"`
	Outcome     interp.Outcome    `json:"outcome"`
	// NotStarted says why a run has no record (then Outcome is "skipped").
	NotStarted string `json:"notStarted,omitempty"`
	// Report is the run's HTML report, relative to the summary.
	Report string `json:"report,omitempty"`
	// Expectations are the verdicts, by expression; Values every value they read.
	Expectations map[string]interp.Outcome `json:"expectations"`
	Values       interp.Values             `json:"values"`
	// MayFailed are the steps that may fail (mayFail) that did not pass in the run, each once
	// with its kind ("busy (wait)"): a run passes with them, and its summary says so as a
	// single run's verdict line does.
	MayFailed []string `json:"mayFailed,omitempty"`
	// Warned is the lint code of each of vet's warnings the run passed with, one per warning
	// ("unknown-subset", "unknown-subset"): a run that passed with them passed as its verdict
	// line says it, "with 2 vet warnings", and the summary's title and runs table say so.
	Warned []string `json:"warned,omitempty"`
	// Error is what stopped the run, as its record says (a step that failed or erred, a
	// timeout; "" when it ran to its end): the runs table shows why a run did not pass, where
	// a step that may fail that failed beside it read as the cause.
	Error string `json:"error,omitempty"`
	// Left is what the run left behind that its cleanup could not remove, as its record's
	// verdict says it ("left 1 object behind (ConfigMap lab/c); `labrun clean …`"): its
	// labrun run exited 4 whatever its verdict.
	Left string `json:"left,omitempty"`
}

// summaryOutcome is a run's outcome as a summary counts it: a failed run with an expectation
// that could not be evaluated (a capture that matched nothing, a stat no snapshot holds) was
// not judged by it, and counts as an error, which no pass rate covers. Before, --count 2
// --pass-rate 0.5 passed a matrix half of whose runs measured nothing.
func summaryOutcome(rec *interp.Record) interp.Outcome {
	if rec.Outcome != interp.Failed {
		return rec.Outcome
	}
	for _, jd := range rec.Expectations {
		if jd.Outcome == interp.Errored {
			return interp.Errored
		}
	}
	return rec.Outcome
}

// RunFile is a run's record and the path of its JSON ("" when it was not written).
type RunFile struct {
	Rec  *interp.Record
	JSON string
}

// Combo names a combination of vars ("connections=2, requests=4"), with "run i of n" when the
// matrix repeats it.
func Combo(vars map[string]string, round, count int) string {
	var parts []string
	for _, k := range sortedKeys(vars) {
		parts = append(parts, k+"="+vars[k])
	}
	if count > 1 {
		parts = append(parts, fmt.Sprintf("run %d of %d", round, count))
	}
	return strings.Join(parts, ", ")
}

// Summarize makes the summary of every matrix the runs belong to, in the order each matrix's
// first run appears; runs without a unit (a single run) are left out. dir is where the
// summaries go (reports are linked relative to it; "" links none).
func Summarize(runs []RunFile, dir string) []*Summary {
	var order []string
	byKey := map[string][]RunFile{}
	matrix := map[string]*dsl.Matrix{}
	for _, r := range runs {
		if r.Rec.Unit == nil || r.Rec.Unit.Matrix == nil {
			continue
		}
		b, _ := json.Marshal(r.Rec.Unit.Matrix)
		k := string(b)
		if _, ok := byKey[k]; !ok {
			order = append(order, k)
			matrix[k] = r.Rec.Unit.Matrix
		}
		byKey[k] = append(byKey[k], r)
	}
	var out []*Summary
	for _, k := range order {
		out = append(out, SummaryOf(matrix[k], byKey[k], dir))
	}
	return out
}

// SummaryOf is the summary of matrix m over its runs; a planned run without a record counts
// as not passed.
func SummaryOf(m *dsl.Matrix, runs []RunFile, dir string) *Summary {
	return SummaryWith(m, runs, nil, dir)
}

// SummaryWith is SummaryOf, with the planned runs that never started listed among the runs
// as skipped, each with its reason (notStarted, by place in the matrix).
func SummaryWith(m *dsl.Matrix, runs []RunFile, notStarted map[RunKey]string, dir string) *Summary {
	s := &Summary{Kind: SummaryKind, Version: SummaryVersion, Scenario: m.Scenario, File: m.File,
		Sweep: m.Sweep, Count: m.Count, Combinations: len(m.Combinations()), Planned: m.Runs(),
		PassRate: m.PassRate, Plot: m.Plot, Runs: []SummaryRun{}, Units: map[string]string{}}
	s.Fixed = m.Fixed
	for _, sw := range m.Sweep {
		s.Sweeps = append(s.Sweeps, sw.Name)
	}
	sorted := append([]RunFile(nil), runs...)
	sort.SliceStable(sorted, func(i, j int) bool {
		a, b := sorted[i].Rec.Unit, sorted[j].Rec.Unit
		if a == nil || b == nil {
			return false
		}
		if a.Combination != b.Combination {
			return a.Combination < b.Combination
		}
		return a.Round < b.Round
	})
	var names []*dsl.Names
	listed := map[string]bool{}
	for _, r := range sorted {
		rec := r.Rec
		names = append(names, rec.Names())
		for _, jd := range rec.Expectations {
			if !listed[jd.Src] {
				listed[jd.Src] = true
				s.Expectations = append(s.Expectations, jd.Src)
			}
		}
		sr := summaryRunOf(rec)
		if r.JSON != "" && dir != "" {
			if rel, err := filepath.Rel(dir, strings.TrimSuffix(r.JSON, ".json")+".html"); err == nil {
				sr.Report = filepath.ToSlash(rel)
			}
		}
		switch {
		case sr.Outcome == interp.Passed:
			s.Passed++
		case erred(sr):
			s.Errors++
		}
		s.Runs = append(s.Runs, sr)
	}
	if len(notStarted) > 0 {
		s.addNotStarted(m, notStarted)
	}
	for _, v := range summaryValues(s) {
		if u := UnitOf(v, names...); u != "" {
			s.Units[v] = u
		}
	}
	for _, p := range s.Plot {
		if p.Unit != "" {
			s.Units[p.Y] = p.Unit
		}
	}
	s.Verdict = verdictOf(s)
	return s
}

// summaryRunOf is the run rec as a summary lists it (its report not linked).
func summaryRunOf(rec *interp.Record) SummaryRun {
	sr := SummaryRun{Round: 1, Outcome: summaryOutcome(rec), Expectations: map[string]interp.Outcome{}, Values: map[string]any{}, Vars: map[string]string{}}
	if u := rec.Unit; u != nil {
		sr.ID, sr.Vars, sr.Combination, sr.Round = u.ID, u.Vars, u.Combination, u.Round
		if sr.Vars == nil {
			sr.Vars = map[string]string{}
		}
	}
	sr.MayFailed, _ = mayFailedSteps(rec)
	if rec.Outcome == interp.Passed && sr.Outcome == interp.Passed {
		sr.Warned = warnedCodes(rec)
	}
	sr.Error = summaryError(rec)
	sr.Left = rec.LeftBehind()
	for _, jd := range rec.Expectations {
		sr.Expectations[jd.Src] = jd.Outcome
		for k, v := range jd.Values {
			sr.Values[k] = v
		}
	}
	return sr
}

// summaryError is rec's error as a summary keeps it: its positions in the scenario's folder by
// the file's name ("s.cue:12:3: probe (exec): …"), as the summary's table shows them, and one
// in another folder relative to it. Before, the absolute path of the machine that ran it: a
// summary moved, merged from another machine's shards or compared with another checkout's
// read one machine's folders.
func summaryError(rec *interp.Record) string {
	msg := rec.Error
	if msg == "" || !filepath.IsAbs(rec.File) {
		return msg
	}
	home := filepath.Dir(rec.File)
	dirs := []string{home}
	if p := rec.ErrorPos; p != nil && filepath.IsAbs(p.File) && filepath.Dir(p.File) != home {
		dirs = append(dirs, filepath.Dir(p.File))
	}
	// The longer first: a folder inside another is said from the scenario's folder, not as
	// the other's path with a relative tail.
	slices.SortFunc(dirs, func(a, b string) int { return len(b) - len(a) })
	for _, d := range dirs {
		if rel, err := filepath.Rel(home, d); err == nil {
			to := filepath.ToSlash(rel) + "/"
			if rel == "." {
				to = ""
			}
			msg = strings.ReplaceAll(msg, d+string(filepath.Separator), to)
		}
	}
	return msg
}

// recordContradictions are where a run of the summary is not what its record beside it (the
// JSON of its linked report, in dir) says: the summary is made from its runs' records, and
// one whose run was edited together with its counts and verdict (a failed run made passed,
// its failed expectation passed, or a value it read changed) was taken at its word, beside
// the record that says otherwise. A run whose record is not there is not compared (replay
// judges the record itself).
func (s *Summary) recordContradictions(dir string) []string {
	var out []string
	planSaid := planWords(s.Sweep, s.Count, s.PassRate, s.Combinations, s.Planned)
	saidPlan := false
	for _, r := range s.Runs {
		if r.Report == "" {
			continue
		}
		path := filepath.Join(dir, filepath.FromSlash(strings.TrimSuffix(r.Report, ".html")+".json"))
		rec, err := Read(path) // as replay reads it: its version, and its own consistency
		if errors.Is(err, fs.ErrNotExist) {
			continue // not beside it
		}
		if err != nil {
			out = append(out, fmt.Sprintf("run %s: its record %s does not read: %v", r.ID, filepath.Base(path), err))
			continue
		}
		if m := planOf(rec); m != "" && m != planSaid && !saidPlan {
			// The summary is written from its matrix, which each run's record keeps: one whose
			// plan is not its runs' had runs taken out of it with its counts (a failed
			// combination or round dropped, its planned runs, combinations or count made
			// fewer). Before, such a summary read "2 of 2 runs passed", verdict passed.
			saidPlan = true
			out = append(out, fmt.Sprintf("it plans %s, but its run %s's record %s was of a matrix that plans %s", planSaid, r.ID, filepath.Base(path), m))
		}
		want := summaryRunOf(rec)
		want.Report, want.NotStarted = r.Report, r.NotStarted
		for _, f := range []struct {
			name      string
			got, want any
		}{
			{"id", r.ID, want.ID},
			{"combination", r.Vars, want.Vars},
			{"outcome", r.Outcome, want.Outcome},
			{"expectations", r.Expectations, want.Expectations},
			{"values", r.Values, want.Values},
			{"steps that may fail that failed", r.MayFailed, want.MayFailed},
			{"error", r.Error, want.Error},
			{"left", r.Left, want.Left},
			{"vet warnings", r.Warned, want.Warned},
		} {
			if f.name == "error" && (r.Error == "" || r.Error == rec.Error) {
				continue // a summary written before it said the run's error, or said it with its absolute paths
			}
			if f.name == "left" && r.Left == "" {
				continue // a summary written before it said what a run left behind
			}
			if f.name == "vet warnings" && r.Warned == nil {
				continue // a summary written before it said a run's vet warnings
			}
			if what, g, w := firstDifference(f.name, f.got, f.want); what != "" {
				out = append(out, fmt.Sprintf("run %s: its %s is %s, but its record %s gives %s", r.ID, what, g, filepath.Base(path), w))
				break
			}
		}
	}
	return out
}

// planOf says the plan of the matrix rec's unit keeps (planWords), "" when it keeps none.
func planOf(rec *interp.Record) string {
	if rec.Unit == nil || rec.Unit.Matrix == nil {
		return ""
	}
	m := rec.Unit.Matrix
	return planWords(m.Sweep, m.Count, m.PassRate, len(m.Combinations()), m.Runs())
}

// planWords says a matrix's plan: "3 runs (3 combinations of n = 1, 2, 3 × 1), every run
// must pass" (where each swept value came from left out: merge takes a --sweep of the
// declared values for the scenario's own).
func planWords(sweep []dsl.SweepVar, count int, passRate float64, combinations, planned int) string {
	var vars []string
	for _, v := range sweep {
		vars = append(vars, v.Name+" = "+strings.Join(v.Values, ", "))
	}
	of := ""
	if len(vars) > 0 {
		of = " of " + strings.Join(vars, "; ")
	}
	rule := "every run must pass"
	if passRate > 0 {
		rule = fmt.Sprintf("pass rate %g", passRate)
	}
	return fmt.Sprintf("%d run%s (%d combination%s%s × %d), %s", planned, plural(planned), combinations, plural(combinations), of, count, rule)
}

// firstDifference says where got and want, named name, differ in JSON: the first key of two
// objects whose values differ ("values[\"fortio.code200\"]"), or name itself; "" when they
// do not.
func firstDifference(name string, got, want any) (what, g, w string) {
	gb, _ := json.Marshal(got)
	wb, _ := json.Marshal(want)
	if string(gb) == string(wb) {
		return "", "", ""
	}
	var gm, wm map[string]json.RawMessage
	if json.Unmarshal(gb, &gm) != nil || json.Unmarshal(wb, &wm) != nil || gm == nil || wm == nil {
		return name, string(gb), string(wb)
	}
	keys := map[string]bool{}
	for k := range gm {
		keys[k] = true
	}
	for k := range wm {
		keys[k] = true
	}
	for _, k := range sortedKeys(keys) {
		gv, gok := gm[k]
		wv, wok := wm[k]
		if gok && wok && string(gv) == string(wv) {
			continue
		}
		g, w = "absent", "absent"
		if gok {
			g = string(gv)
		}
		if wok {
			w = string(wv)
		}
		return fmt.Sprintf("%s[%q]", name, k), g, w
	}
	return name, string(gb), string(wb)
}

// erred says whether the summary counts r among its errors (Errors): a run labrun could not
// make or could not judge, neither passed nor failed.
func erred(r SummaryRun) bool {
	switch r.Outcome {
	case interp.Passed, interp.Failed, interp.Interrupted:
		return false
	}
	return r.NotStarted == ""
}

// runCounts are how many of a combination's runs passed and how many erred.
func runCounts(g *group) (ok, errs int) {
	for _, r := range g.runs {
		switch {
		case r.Outcome == interp.Passed:
			ok++
		case erred(r):
			errs++
		}
	}
	return ok, errs
}

// passedOf says how many of a combination's count runs passed, and how many of them erred
// ("0 of 2, 2 errors") or were interrupted ("0 of 1, 1 interrupted"): a combination whose
// runs erred or were stopped was not judged by them, and "never passed" alone read as if they
// had failed.
func passedOf(g *group, count int) string {
	ok, errs := runCounts(g)
	out := fmt.Sprintf("%d of %d", ok, count)
	if errs > 0 {
		out += fmt.Sprintf(", %d error%s", errs, plural(errs))
	}
	stopped := 0
	for _, r := range g.runs {
		if r.Outcome == interp.Interrupted {
			stopped++
		}
	}
	if stopped > 0 {
		out += fmt.Sprintf(", %d interrupted", stopped)
	}
	return out
}

// addNotStarted lists the planned runs that have no record and a reason, in the matrix's
// order.
func (s *Summary) addNotStarted(m *dsl.Matrix, why map[RunKey]string) {
	have := map[RunKey]bool{}
	for _, r := range s.Runs {
		have[RunKey{r.Combination, r.Round}] = true
	}
	var all []SummaryRun
	for i, c := range m.Combinations() {
		for round := 1; round <= m.Count; round++ {
			k := RunKey{i + 1, round}
			if have[k] || why[k] == "" {
				continue
			}
			all = append(all, SummaryRun{ID: dsl.UnitID(m.Scenario, c, round), Vars: c, Combination: k.Combination, Round: round,
				Outcome: interp.Skipped, NotStarted: why[k], Expectations: map[string]interp.Outcome{}, Values: map[string]any{}})
			s.NotStarted++
		}
	}
	s.Runs = append(s.Runs, all...)
	sort.SliceStable(s.Runs, func(i, j int) bool {
		a, b := s.Runs[i], s.Runs[j]
		if a.Combination != b.Combination {
			return a.Combination < b.Combination
		}
		return a.Round < b.Round
	})
}

// Need is how many of a combination's count runs must pass at pass rate rate (0: all).
func Need(rate float64, count int) int {
	if rate <= 0 {
		return count
	}
	return max(1, int(math.Ceil(rate*float64(count)-1e-9)))
}

// verdictOf judges a summary. A pass rate is about runs judged by their expectations: each
// combination is its own experiment and must have its share of passed runs; a run labrun could
// not make (an error) is not judged, and makes the verdict "error" whatever the rate; a
// matrix interrupted is "interrupted". A planned run without a record counts as not passed.
func verdictOf(s *Summary) string {
	if s.Planned == 0 {
		return "failed"
	}
	interrupted, failed, short, failFast := false, false, false, false
	for _, g := range summaryGroups(s) {
		passed, judgedFailed := 0, 0
		for _, r := range g.runs {
			switch {
			case r.Outcome == interp.Passed:
				passed++
			case r.Outcome == interp.Failed:
				judgedFailed++
			case r.Outcome == interp.Interrupted || r.NotStarted == NotStartedInterrupted:
				interrupted = true
			case r.NotStarted == NotStartedFailFast:
				failFast = true
			}
		}
		n := Need(s.PassRate, s.Count)
		switch {
		case passed >= n:
		case judgedFailed > s.Count-n:
			failed = true // whatever the runs not made would have done
		default:
			short = true
		}
	}
	switch {
	case interrupted:
		return "interrupted"
	case s.Errors > 0:
		return "error"
	case failed:
		return "failed"
	case short && failFast && len(s.Runs) == s.Planned:
		return "skipped"
	case short:
		return "failed"
	}
	return "passed"
}

// CombinationsBelow are the combinations (as Combo writes them) that ran and have fewer
// passed runs than the pass rate needs, with their count passed: "share=100: 0 of 3".
func CombinationsBelow(s *Summary) []string {
	var out []string
	for _, g := range summaryGroups(s) {
		if len(g.vars) == 0 && len(s.Sweep) > 0 || neverStarted(g) {
			continue
		}
		if _, below := combinationPassed(s, g); below {
			out = append(out, fmt.Sprintf("%s: %s", or(Combo(g.vars, 0, 1), "runs"), passedOf(g, s.Count)))
		}
	}
	return out
}

// neverStarted reports whether no run of the combination started.
func neverStarted(g *group) bool {
	for _, r := range g.runs {
		if r.NotStarted == "" {
			return false
		}
	}
	return true
}

// WriteSummary writes the summary's JSON, Markdown, HTML and plots into dir as
// <time>_<scenario>_<id>.summary.*; it returns their paths, the Markdown first. The JSON is
// created first and only if no file has its name, so that two processes writing into one
// directory never overwrite each other's summary (a name taken gets a suffix).
func WriteSummary(dir, id string, s *Summary) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	stem := filepath.Join(dir, time.Now().UTC().Format("20060102T150405Z")+"_"+safeName(s.Scenario)+"_"+id)
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, err
	}
	base := stem
	for i := 2; ; i++ {
		// The name is claimed (an empty file, created only if none has it), then written
		// through a temporary file renamed over it: never a part of a summary under its name.
		f, err := os.OpenFile(base+".summary.json", os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			f.Close()
			if err := WriteFile(base+".summary.json", append(b, '\n')); err != nil {
				os.Remove(base + ".summary.json")
				return nil, err
			}
			break
		}
		if !errors.Is(err, fs.ErrExist) || i > 100 {
			return nil, err
		}
		base = fmt.Sprintf("%s-%d", stem, i)
	}
	base += ".summary"
	plots := SummaryPlots(s)
	paths := []string{base + ".md", base + ".html", base + ".json"}
	for i := range plots {
		plots[i].File = filepath.Base(base) + ".plot-" + plotFileName(plots, i) + ".svg"
		if err := WriteFile(filepath.Join(dir, plots[i].File), []byte(plots[i].SVG)); err != nil {
			return nil, err
		}
		paths = append(paths, filepath.Join(dir, plots[i].File))
	}
	if err := WriteFile(base+".md", []byte(SummaryMarkdown(s, plots))); err != nil {
		return nil, err
	}
	if err := WriteFile(base+".html", []byte(SummaryHTML(s, plots))); err != nil {
		return nil, err
	}
	return paths, nil
}

// plotFileName names plots[i]'s file by its number and what it draws: "1-fortio.p50-against-requests",
// or "1-fortio.p50" for a strip plot (before, the swept var alone, so that every value drawn
// against it had the same name but for the number; a strip plot's was "_"). The numbers are as
// wide as the last, so that the files list in the summary's order.
func plotFileName(plots []Plot, i int) string {
	name := fmt.Sprintf("%0*d-%s", len(strconv.Itoa(len(plots))), i+1, safeName(truncate(plots[i].Value, 80)))
	if plots[i].Var != "" {
		name += "-against-" + safeName(plots[i].Var)
	}
	return name
}

// ReadSummary reads a summary's JSON, and refuses one that contradicts itself (Contradictions).
func ReadSummary(path string) (*Summary, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var s Summary
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if cs := append(s.Contradictions(), s.recordContradictions(filepath.Dir(path))...); len(cs) > 0 {
		return nil, fmt.Errorf("%s: %s; the summary was changed after it was written or is corrupt", path, strings.Join(cs, "; "))
	}
	return &s, nil
}

// Contradictions are where a summary's counts and verdict are not what its runs make them (a
// summary's passed and verdict follow from its runs' outcomes, as labrun wrote them), and runs
// that passed with an expectation that did not. Before, labrun diff took a summary edited to
// "passed" (passed 1 -> 2, verdict failed -> passed, its runs untouched) at its word: its
// header said "2 of 2 runs passed" beside the row computed from its runs, "1 of 2".
//
// Its errors and not-started counts too: the verdict reads Errors, and a summary whose erred
// run was edited out of that count (its verdict made passed) passed under a pass rate that no
// error may pass; and a run that failed where an expectation of it erred, which the summary
// counts as an error (summaryOutcome), was one edited from error to failed.
func (s *Summary) Contradictions() []string {
	var out []string
	passed, notStarted := 0, 0
	var erredRuns []string
	for _, r := range s.Runs {
		switch {
		case r.Outcome == interp.Passed:
			passed++
			for _, e := range sortedKeys(r.Expectations) {
				if o := r.Expectations[e]; o != interp.Passed {
					out = append(out, fmt.Sprintf("run %s passed, but its expectation %q %s", r.ID, e, o))
				}
			}
		case r.Outcome == interp.Failed:
			for _, e := range sortedKeys(r.Expectations) {
				if r.Expectations[e] == interp.Errored {
					out = append(out, fmt.Sprintf("run %s failed, but its expectation %q erred, which makes the run an error", r.ID, e))
					break
				}
			}
		case erred(r):
			erredRuns = append(erredRuns, r.ID)
		}
		if r.NotStarted != "" {
			notStarted++
		}
	}
	if passed != s.Passed {
		out = append(out, fmt.Sprintf("it says %d runs passed, but %d of its runs did", s.Passed, passed))
	}
	if len(erredRuns) != s.Errors {
		which := ""
		if len(erredRuns) > 0 {
			which = " (" + strings.Join(erredRuns, ", ") + ")"
		}
		out = append(out, fmt.Sprintf("it says %d runs erred, but %d of its runs did%s", s.Errors, len(erredRuns), which))
	}
	if notStarted != s.NotStarted {
		out = append(out, fmt.Sprintf("it says %d runs never started, but %d of its runs did not", s.NotStarted, notStarted))
	}
	if v := verdictOf(s); s.Verdict != v {
		out = append(out, fmt.Sprintf("its verdict is %s, but its runs make it %s", s.Verdict, v))
	}
	return out
}

// summaryExprs are the expectations of the summary's runs in the scenario's order; any a
// run has that the list lacks (a summary written before it was kept) follow, by their text.
func summaryExprs(s *Summary) []string {
	listed := map[string]bool{}
	for _, e := range s.Expectations {
		listed[e] = true
	}
	rest := map[string]bool{}
	for _, r := range s.Runs {
		for e := range r.Expectations {
			if !listed[e] {
				rest[e] = true
			}
		}
	}
	return append(slices.Clone(s.Expectations), sortedKeys(rest)...)
}

// summaryValues are the values the runs read, the numbers first, each in the order the
// expectations read them: by the first expectation (in the scenario's order) whose text has
// it, then by where in that text; a value no expectation's text has (a let's, as it binds it
// elsewhere) after them, by name.
func summaryValues(s *Summary) []string {
	m := map[string]bool{}
	num := map[string]bool{}
	for _, r := range s.Runs {
		for v, x := range r.Values {
			m[v] = true
			if _, ok := x.(float64); ok {
				num[v] = true
			}
		}
	}
	exprs := summaryExprs(s)
	type place struct{ expr, at int }
	where := map[string]place{}
	for v := range m {
		where[v] = place{len(exprs), 0}
		for i, e := range exprs {
			if at := strings.Index(e, v); at >= 0 {
				where[v] = place{i, at}
				break
			}
		}
	}
	out := sortedKeys(m)
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if num[a] != num[b] {
			return num[a]
		}
		if where[a].expr != where[b].expr {
			return where[a].expr < where[b].expr
		}
		return where[a].at < where[b].at
	})
	return out
}

// group is the runs of one combination.
type group struct {
	vars map[string]string
	runs []SummaryRun
}

// summaryGroups are the combinations in the matrix's order, each with the runs it has; a
// combination without a run is listed empty.
func summaryGroups(s *Summary) []*group {
	byKey := map[string]*group{}
	var out []*group
	add := func(vars map[string]string) *group {
		k := dsl.ComboKey(vars)
		g := byKey[k]
		if g == nil {
			g = &group{vars: vars}
			byKey[k] = g
			out = append(out, g)
		}
		return g
	}
	m := dsl.Matrix{Sweep: s.Sweep}
	if len(s.Sweep) > 0 {
		for _, c := range m.Combinations() {
			add(c)
		}
	}
	declared := len(out)
	for _, r := range s.Runs {
		// A run's place in the matrix decides its combination: its vars may read otherwise
		// (a secret var's values are hidden in the records, not yet in the summary).
		g := (*group)(nil)
		if r.Combination >= 1 && r.Combination <= declared {
			g = out[r.Combination-1]
		} else {
			g = add(r.Vars)
		}
		g.runs = append(g.runs, r)
	}
	return out
}

// spread is min, median and max of a value over runs, and how many runs have it as a number.
// A NaN is no number to order: it is left out (sort would put it first, as the minimum) unless
// every run read NaN, whose spread is NaN.
func spread(runs []SummaryRun, v string) (lo, med, hi float64, n int) {
	var xs []float64
	nan := 0
	for _, r := range runs {
		if x, ok := r.Values[v].(float64); ok {
			if math.IsNaN(x) {
				nan++
				continue
			}
			xs = append(xs, x)
		}
	}
	if len(xs) == 0 {
		if nan > 0 {
			return math.NaN(), math.NaN(), math.NaN(), nan
		}
		return 0, 0, 0, 0
	}
	sort.Float64s(xs)
	return xs[0], median(xs), xs[len(xs)-1], len(xs)
}

// nanLeftOut is how many runs spread left out of a value's min, median and max for reading
// NaN (0 where every run that has it as a number read NaN: the spread is NaN then).
func nanLeftOut(runs []SummaryRun, v string) int {
	nan, other := 0, 0
	for _, r := range runs {
		if x, ok := r.Values[v].(float64); ok {
			if math.IsNaN(x) {
				nan++
			} else {
				other++
			}
		}
	}
	if other == 0 {
		return 0
	}
	return nan
}

func passedCount(runs []SummaryRun, expr string) int {
	n := 0
	for _, r := range runs {
		if r.Expectations[expr] == interp.Passed {
			n++
		}
	}
	return n
}

// expectationTally says how many of the planned runs expr passed in, and of the others how
// many could not judge it and how many did not judge it at all (it was skipped, its run erred
// before it or has no record): "1 of 3, 2 not judged". Before, the runs that never judged it
// read as failures of it, and the Markdown counted the runs with a record, the HTML the
// planned runs.
func expectationTally(s *Summary, expr string) string {
	passed, erred, judged := 0, 0, 0
	for _, r := range s.Runs {
		switch r.Expectations[expr] {
		case interp.Passed:
			passed++
			judged++
		case interp.Failed:
			judged++
		case interp.Errored:
			erred++
			judged++
		}
	}
	out := fmt.Sprintf("%d of %d", passed, s.Planned)
	if erred > 0 {
		out += fmt.Sprintf(", %d erred", erred)
	}
	if n := s.Planned - judged; n > 0 {
		out += fmt.Sprintf(", %d not judged", n)
	}
	return out
}

// judgedIn says whether any of runs judged expr (it passed, failed or erred there).
func judgedIn(runs []SummaryRun, expr string) bool {
	for _, r := range runs {
		switch r.Expectations[expr] {
		case interp.Passed, interp.Failed, interp.Errored:
			return true
		}
	}
	return false
}

// themOrIt is the pronoun for n runs.
func themOrIt(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}

func passRule(s *Summary) string {
	rule := "Every run must pass"
	if s.PassRate > 0 {
		rule = fmt.Sprintf("Pass rate required: %g (`--pass-rate`)", s.PassRate)
		if len(s.Sweep) > 0 {
			rule = fmt.Sprintf("Pass rate required: %g of each combination's runs (`--pass-rate`)", s.PassRate)
		}
	}
	out := fmt.Sprintf("%s; verdict: **%s**.", rule, s.Verdict)
	switch s.Verdict {
	case "interrupted":
		out += " labrun was interrupted: the runs that ran say nothing about the rest."
	case "error":
		out += fmt.Sprintf(" %d run%s ended in an error (labrun could not make the run, or could not judge one of its expectations): no pass rate covers %s.", s.Errors, plural(s.Errors), themOrIt(s.Errors))
	case "skipped":
		out += " Runs were not started because of --fail-fast: the matrix is not complete."
	}
	if s.Verdict != "error" && s.Errors > 0 {
		out += fmt.Sprintf(" %d run%s ended in an error (not made, or an expectation not judged).", s.Errors, plural(s.Errors))
	}
	if s.NotStarted > 0 {
		out += fmt.Sprintf(" %d of the %d planned runs never started (listed with the reason).", s.NotStarted, s.Planned)
	}
	return out
}

// Missing is how many planned runs have no record and no known reason: merged without their
// records (made elsewhere, or lost). They count as not passed.
func (s *Summary) Missing() int { return s.Planned - len(s.Runs) }

// missingRuns says how many planned runs have no record and no known reason ("" when none
// is missing).
func missingRuns(s *Summary) string {
	if n := s.Missing(); n > 0 {
		return fmt.Sprintf(" %d of the %d planned runs have no record (made elsewhere, or lost) and count as not passed.", n, s.Planned)
	}
	return ""
}

// fixedVars says which swept vars --var fixed ("" when none).
func fixedVars(s *Summary) string {
	var parts []string
	for _, f := range s.Fixed {
		p := fmt.Sprintf("%s = %s (%s", f.Name, f.Value, f.From)
		if len(f.Instead) > 0 {
			p += "; the scenario sweeps " + strings.Join(f.Instead, ", ")
		} else {
			p += "; the scenario sweeps it"
		}
		parts = append(parts, p+")")
	}
	if len(parts) == 0 {
		return ""
	}
	return "Fixed: " + strings.Join(parts, "; ") + "."
}

// runVerdict is a run's verdict as the tables show it: its outcome, why it never started or did
// not pass, and which steps that may fail failed.
func runVerdict(s *Summary, r SummaryRun) string {
	if r.NotStarted != "" {
		return string(r.Outcome) + " (" + r.NotStarted + ")"
	}
	v := string(r.Outcome)
	if why := whyNotPassed(s, r); why != "" {
		v += ": " + why
	}
	if wn := warnedAside(r); wn != "" {
		v += " " + wn
	}
	if mf := mayFailedAside(r); mf != "" {
		v += " (" + mf + ")"
	}
	if r.Left != "" {
		v += ", but it " + r.Left
	}
	return v
}

// warnedAside says beside a run's verdict that it passed with vet's warnings, how many and of
// which lints ("with 2 vet warnings: unknown-subset"), as its verdict line and its report's
// title do (Warned; they say where): "" for a run without them.
func warnedAside(r SummaryRun) string {
	if r.Outcome != interp.Passed || len(r.Warned) == 0 {
		return ""
	}
	_, codes := warnedTally([][]string{r.Warned})
	noun := "warnings"
	if len(r.Warned) == 1 {
		noun = "warning"
	}
	return fmt.Sprintf("with %d vet %s: %s", len(r.Warned), noun, strings.Join(codes, ", "))
}

// WarnedSummary says, beside a summary's counts, how many of its runs passed with vet's
// warnings and of which lints ("2 passed with vet warnings: unknown-subset"), "" when none did.
// Before, the title of a summary of runs that each passed with an unknown-subset warning (every
// request routed to the subset fails while the claim holds) read plain "2 of 2 runs passed".
func WarnedSummary(s *Summary) string {
	var runs [][]string
	for _, r := range s.Runs {
		if r.Outcome == interp.Passed {
			runs = append(runs, r.Warned)
		}
	}
	n, codes := warnedTally(runs)
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%d passed with vet warnings: %s", n, strings.Join(codes, ", "))
}

// whyNotPassed says why a run of s that started did not pass: what stopped it (its positions
// in the scenario's file by the file's name), or how many of its expectations failed or were
// not evaluated ("" for a run that passed).
func whyNotPassed(s *Summary, r SummaryRun) string {
	if r.Outcome == interp.Passed {
		return ""
	}
	if r.Error != "" && r.Error != string(r.Outcome) { // not "interrupted: interrupted"
		msg := r.Error
		if s.File != "" {
			msg = strings.ReplaceAll(msg, filepath.Dir(s.File)+string(filepath.Separator), "")
		}
		return truncate(msg, 200)
	}
	n := map[interp.Outcome]int{}
	for _, o := range r.Expectations {
		n[o]++
	}
	var why []string
	if n[interp.Failed] > 0 {
		why = append(why, fmt.Sprintf("%d expectation%s failed", n[interp.Failed], plural(n[interp.Failed])))
	}
	if n[interp.Errored] > 0 {
		why = append(why, fmt.Sprintf("%d expectation%s could not be evaluated", n[interp.Errored], plural(n[interp.Errored])))
	}
	return strings.Join(why, ", ")
}

// mayFailedAside names the steps that may fail that failed in a run: after a run that passed,
// "may fail, failed: warm (exec)"; after one that did not, worded so that it does not read as
// the cause ("and warm (exec), which may fail, failed").
func mayFailedAside(r SummaryRun) string {
	if len(r.MayFailed) == 0 {
		return ""
	}
	if r.Outcome == interp.Passed {
		return "may fail, failed: " + strings.Join(r.MayFailed, ", ")
	}
	return "and " + strings.Join(r.MayFailed, ", ") + ", which may fail, failed"
}

// MayFailedRuns says which steps that may fail (mayFail) failed in the summary's runs, each
// with how many of the runs that started it failed in ("1 step that may fail failed: busy
// (wait) in 2 of 3 runs"), or "" when none did: the runs pass with them, and a single run's
// verdict line says it (MayFailed).
func MayFailedRuns(s *Summary) string {
	var names []string
	in := map[string]int{}
	ran := 0
	for _, r := range s.Runs {
		if r.NotStarted != "" {
			continue
		}
		ran++
		for _, n := range r.MayFailed {
			if in[n] == 0 {
				names = append(names, n)
			}
			in[n]++
		}
	}
	if len(names) == 0 {
		return ""
	}
	for i, n := range names {
		names[i] = fmt.Sprintf("%s in %d of %d run%s", n, in[n], ran, plural(ran))
	}
	if len(names) == 1 {
		return "1 step that may fail failed: " + names[0]
	}
	return fmt.Sprintf("%d steps that may fail failed: %s", len(names), strings.Join(names, ", "))
}

// LeftRuns says how many of the summary's runs left objects or processes behind that their
// cleanup could not remove, or "" when none did: "2 of 2 runs left objects or processes behind
// (`labrun clean --yes --scenario s` deletes the objects)". Each of those runs exited 4; before,
// the summary of them said only that they passed.
func LeftRuns(s *Summary) string {
	n, ran, objects, held, unstopped := 0, 0, false, 0, 0
	for _, r := range s.Runs {
		if r.NotStarted != "" {
			continue
		}
		ran++
		if strings.HasPrefix(r.Left, "did not stop ") { // interp.Record.LeftBehind's: processes alone
			unstopped++
			continue
		}
		if r.Left != "" {
			n++
			objects = objects || strings.Contains(r.Left, "`labrun clean --yes")
			if strings.Contains(r.Left, "finalizers hold ") { // interp.Record.LeftBehind's
				held++
			}
		}
	}
	// Processes a run's cleanup did not stop (a second interrupt, the cleanup's timeout) are
	// not left behind: labrun ends them as it exits. Before, "1 of 2 runs left objects or
	// processes behind" of runs that had left nothing running.
	notStopped := ""
	if unstopped > 0 {
		notStopped = fmt.Sprintf("the cleanup of %d of %d run%s did not stop processes, which labrun ended as it exited", unstopped, ran, plural(ran))
	}
	if n == 0 {
		return notStopped
	}
	out := fmt.Sprintf("%d of %d run%s left objects or processes behind", n, ran, plural(ran))
	if objects {
		out += fmt.Sprintf(" (`labrun clean --yes --scenario %s` deletes the objects)", s.Scenario)
	}
	if held > 0 {
		// Which labrun clean does not remove: only deleted again, they stay.
		out += fmt.Sprintf("; finalizers hold objects of %d of them, which no delete removes, `labrun clean` neither: each run's verdict says what does", held)
	}
	if notStopped != "" {
		out += "; " + notStopped
	}
	return out
}

// combinationPassed is how many of a combination's runs passed, and whether that is below
// what the pass rate needs.
func combinationPassed(s *Summary, g *group) (ok int, below bool) {
	for _, r := range g.runs {
		if r.Outcome == interp.Passed {
			ok++
		}
	}
	return ok, ok < Need(s.PassRate, s.Count)
}

// header is a value's column header: its name and unit.
func header(s *Summary, v string) string {
	if u := s.Units[v]; u != "" {
		return v + " (" + u + ")"
	}
	return v
}

// SummaryMarkdown renders the summary as Markdown; plots are linked by file name.
func SummaryMarkdown(s *Summary, plots []Plot) string {
	var md strings.Builder
	fmt.Fprintf(&md, "# %s: %d of %d runs passed", s.Scenario, s.Passed, s.Planned)
	if wn := WarnedSummary(s); wn != "" {
		md.WriteString(" — " + sumCell(wn))
	}
	fmt.Fprintf(&md, "\n\n%s%s\n\n", passRule(s), missingRuns(s))
	if mf := MayFailedRuns(s); mf != "" {
		md.WriteString(sumCell(mf) + ".\n\n")
	}
	if left := LeftRuns(s); left != "" {
		md.WriteString(sumCell(left) + ".\n\n")
	}
	if len(s.Sweep) > 0 {
		md.WriteString("Swept:")
		for _, sw := range s.Sweep {
			fmt.Fprintf(&md, " %s = %s", sw.Name, strings.Join(sw.Values, ", "))
			if sw.From == "--sweep" {
				fmt.Fprintf(&md, " (%s)", sw.Source())
			}
			md.WriteString(";")
		}
		fmt.Fprintf(&md, " %d combination%s × %d run%s each.\n\n", s.Combinations, plural(s.Combinations), s.Count, plural(s.Count))
	}
	if f := fixedVars(s); f != "" {
		md.WriteString(sumCell(f) + "\n\n")
	}
	if len(s.Sweep) > 0 {
		md.WriteString("## Combinations\n\n| vars | passed | |\n|---|---|---|\n")
		for _, g := range summaryGroups(s) {
			ok, below := combinationPassed(s, g)
			mark := ""
			switch {
			case len(g.runs) > 0 && neverStarted(g):
				mark = "never started"
			case below && ok == 0:
				mark = "never passed"
			case below:
				mark = fmt.Sprintf("below the %d needed", Need(s.PassRate, s.Count))
			}
			fmt.Fprintf(&md, "| %s | %s | %s |\n", sumCell(Combo(g.vars, 0, 1)), passedOf(g, s.Count), mark)
		}
		md.WriteString("\n")
	}
	exprs := summaryExprs(s)
	md.WriteString("## Runs\n\n| run | vars | verdict |")
	for _, e := range exprs {
		fmt.Fprintf(&md, " %s |", sumCell(e))
	}
	md.WriteString(" report |\n|---|---|---|")
	for range exprs {
		md.WriteString("---|")
	}
	md.WriteString("---|\n")
	for i, r := range s.Runs {
		fmt.Fprintf(&md, "| %d | %s | %s |", i+1, sumCell(Combo(r.Vars, r.Round, s.Count)), sumCell(runVerdict(s, r)))
		for _, e := range exprs {
			fmt.Fprintf(&md, " %s |", judged(r.Expectations[e]))
		}
		if r.Report != "" {
			md.WriteString(" [html](" + mdURL(r.Report) + ") |\n")
		} else {
			md.WriteString(" |\n")
		}
	}
	md.WriteString("\n## Expectations\n\n| expectation | passed |\n|---|---|\n")
	for _, e := range exprs {
		fmt.Fprintf(&md, "| %s | %s |\n", sumCell(e), expectationTally(s, e))
	}
	md.WriteString("\n## Values the expectations read\n\n")
	groups := summaryGroups(s)
	var rows []string
	for _, v := range summaryValues(s) {
		for _, g := range groups {
			lo, med, hi, n := spread(g.runs, v)
			if n == 0 {
				continue
			}
			cell := fmt.Sprint(n)
			if k := nanLeftOut(g.runs, v); k > 0 {
				cell += fmt.Sprintf(", and %d NaN left out", k)
			}
			rows = append(rows, fmt.Sprintf("| %s | %s | %s | %s | %s | %s | %s |\n", sumCell(v), or(s.Units[v], "–"), sumCell(Combo(g.vars, 0, 1)), sig4(lo), sig4(med), sig4(hi), cell))
		}
	}
	if len(rows) == 0 {
		// Before, a table of headers alone, as if its rows had been lost.
		md.WriteString("None: the expectations read no number (strings, booleans, outcomes).\n")
	} else {
		md.WriteString("| value | unit | vars | min | median | max | runs |\n|---|---|---|---|---|---|---|\n" + strings.Join(rows, ""))
	}
	if len(plots) > 0 {
		md.WriteString("\n## Plots\n\n")
		for _, p := range plots {
			fmt.Fprintf(&md, "![%s](%s)\n\n", sumCell(p.Title), p.File)
		}
	}
	return EscapeControls(md.String())
}

// SummaryHTML renders the summary as one self-contained page in the look of the run reports:
// the verdict, what was swept, a row per combination (its vars, runs passed, each
// expectation's pass count, each value's median with min–max and unit), the plots inline, the
// expectations, and the runs with their verdicts and links to their reports.
func SummaryHTML(s *Summary, plots []Plot) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	e := html.EscapeString
	w("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n")
	w("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
	warned := WarnedSummary(s)
	w("<title>%s — %d of %d runs passed", e(s.Scenario), s.Passed, s.Planned)
	if warned != "" {
		w(" — %s", e(warned))
	}
	w("</title>\n<style>%s%s</style></head><body>\n", htmlCSS, summaryCSS)
	w("<h1>%s <span class=\"badge %s\">%s</span>", e(s.Scenario), e(s.Verdict), strings.ToUpper(e(s.Verdict)))
	if warned != "" {
		w(" <span class=\"warned warn\">%s</span>", e(warned))
	}
	w("</h1>\n")
	w("<p class=\"doc\">%d of %d runs passed. %s%s</p>\n", s.Passed, s.Planned, strings.ReplaceAll(strings.ReplaceAll(e(passRule(s)), "**", ""), "`", ""), e(missingRuns(s)))
	if mf := MayFailedRuns(s); mf != "" {
		w("<p class=\"mayfailed warn\">%s.</p>\n", e(mf))
	}
	if left := LeftRuns(s); left != "" {
		w("<p class=\"left warn\">%s.</p>\n", strings.ReplaceAll(e(left), "`", ""))
	}
	w("<div class=\"scroll\"><table class=\"meta\">")
	for _, sw := range s.Sweep {
		w("<tr><th>%s</th><td>%s <span class=\"hint\">(%s)</span></td></tr>", e(sw.Name), e(strings.Join(sw.Values, ", ")), e(sw.Source()))
	}
	for _, f := range s.Fixed {
		instead := "the scenario sweeps it"
		if len(f.Instead) > 0 {
			instead = "the scenario sweeps " + strings.Join(f.Instead, ", ")
		}
		w("<tr><th>%s</th><td>%s <span class=\"hint\">(fixed by %s; %s)</span></td></tr>", e(f.Name), e(f.Value), e(f.From), e(instead))
	}
	if len(s.Sweep) == 0 { // --count alone: no combination but the one
		w("<tr><th>runs</th><td>%d</td></tr>", s.Planned)
	} else {
		w("<tr><th>runs</th><td>%d combination%s × %d run%s each = %d</td></tr>", s.Combinations, plural(s.Combinations), s.Count, plural(s.Count), s.Planned)
	}
	w("</table></div>\n")

	exprs := summaryExprs(s)
	var values []string
	for _, v := range summaryValues(s) {
		if !varsOnly(v) {
			values = append(values, v)
		}
	}
	groups := summaryGroups(s)
	if len(s.Sweep) == 0 {
		w("<h2>All runs</h2>\n<p class=\"hint\">One row: the %d runs together. e1, e2, …: how many of the runs each expectation passed (listed below); each value: the median over the runs", s.Planned)
	} else {
		w("<h2>Combinations</h2>\n<p class=\"hint\">One row per combination of the swept vars. e1, e2, …: how many of its runs each expectation passed (listed below); each value: the median over the runs")
	}
	if s.Count > 1 {
		w(", min–max under it")
	}
	w("; – : no run recorded it.</p>\n<div class=\"scroll\"><table class=\"combos\"><tr>")
	for _, v := range s.Sweeps {
		w("<th>%s</th>", e(v))
	}
	w("<th>passed</th>")
	for i := range exprs {
		w("<th title=\"%s\">e%d</th>", e(exprs[i]), i+1)
	}
	for _, v := range values {
		if u := s.Units[v]; u != "" {
			w("<th>%s <span class=\"unit\">%s</span></th>", e(v), e(u))
		} else {
			w("<th>%s</th>", e(v))
		}
	}
	w("</tr>\n")
	for _, g := range groups {
		ok, below := combinationPassed(s, g)
		cls := "passed"
		if below {
			cls = "failed"
		}
		w("<tr class=\"%s\">", cls)
		for _, v := range s.Sweeps {
			w("<td class=\"num\">%s</td>", e(g.vars[v]))
		}
		switch {
		case len(g.runs) > 0 && neverStarted(g):
			w("<td class=\"num\">%s <span class=\"hint\">never started</span></td>", passedOf(g, s.Count))
		case ok == 0:
			w("<td class=\"num err\">%s <span class=\"hint\">never passed</span></td>", passedOf(g, s.Count))
		default:
			w("<td class=\"num\">%s</td>", passedOf(g, s.Count))
		}
		for _, x := range exprs {
			if !judgedIn(g.runs, x) {
				// Not 0/2 in red: no run of the combination failed it, none judged it.
				w("<td class=\"num hint\" title=\"not judged in any run of this combination\">–</td>")
				continue
			}
			n := passedCount(g.runs, x)
			c := "ok"
			if n < s.Count {
				c = "err"
			}
			w("<td class=\"num %s\">%d/%d</td>", c, n, s.Count)
		}
		for _, v := range values {
			lo, med, hi, n := spread(g.runs, v)
			switch {
			case n == 0:
				w("<td class=\"num\">%s</td>", e(otherValue(g.runs, v)))
			case n > 1 || nanLeftOut(g.runs, v) > 0:
				left := ""
				if k := nanLeftOut(g.runs, v); k > 0 {
					left = fmt.Sprintf(", %d NaN left out", k)
				}
				w("<td class=\"num\">%s<br><span class=\"hint\">%s–%s%s</span></td>", sig4(med), sig4(lo), sig4(hi), left)
			default:
				w("<td class=\"num\">%s</td>", sig4(med))
			}
		}
		w("</tr>\n")
	}
	w("</table></div>\n")

	if len(plots) > 0 {
		w("<h2>Plots</h2>\n<p class=\"hint\">")
		if plots[0].Var != "" {
			w("Each value against a swept var: a line through the medians, one per combination of the other vars (dashed from the second on); the band spans min–max of the runs, each circle is one run. ")
		} else {
			w("Each value over the runs: each circle is one run, the bar the median, the whisker min–max. ")
		}
		w("Hover a mark for its value.</p>\n<div class=\"charts\">")
		for _, p := range plots {
			w("<div class=\"chart\">%s</div>", p.SVG)
		}
		w("</div>\n")
	}

	w("<h2>Expectations</h2>\n<div class=\"scroll\"><table><tr><th></th><th>expectation</th><th>passed</th></tr>\n")
	for i, x := range exprs {
		n := passedCount(s.Runs, x)
		cls := "passed"
		if n < s.Planned {
			cls = "failed"
		}
		w("<tr class=\"%s\"><td>e%d</td><td><code>%s</code></td><td class=\"num\">%s</td></tr>\n", cls, i+1, e(x), e(expectationTally(s, x)))
	}
	w("</table></div>\n")

	w("<h2>Runs</h2>\n<div class=\"scroll\"><table><tr><th>run</th><th>vars</th><th>verdict</th>")
	for i := range exprs {
		w("<th title=\"%s\">e%d</th>", e(exprs[i]), i+1)
	}
	w("<th>report</th></tr>\n")
	mark := map[interp.Outcome]string{interp.Passed: "✓", interp.Failed: "✗", interp.Errored: "!", interp.Skipped: "–"}
	for i, r := range s.Runs {
		w("<tr class=\"%s\"><td class=\"num\" title=\"%s\">%d</td><td>%s</td><td><span class=\"badge %s\">%s</span>%s</td>", e(string(r.Outcome)), e(r.ID), i+1, e(Combo(r.Vars, r.Round, s.Count)), e(string(r.Outcome)), e(string(r.Outcome)), runHint(s, r))
		for _, x := range exprs {
			o := r.Expectations[x]
			w("<td class=\"vm %s\" title=\"%s\">%s</td>", e(string(o)), e(judged(o)), mark[o])
		}
		if r.Report != "" {
			// "html", as the Markdown's link, its file's name on hover: the name took a third of
			// the table at 480 pixels, and the verdicts beside it wrapped a word a line.
			w("<td><a href=\"%s\" title=\"%s\">html</a></td>", e(filepath.ToSlash(r.Report)), e(filepath.Base(r.Report)))
		} else {
			w("<td></td>")
		}
		w("</tr>\n")
	}
	w("</table></div>\n<p class=\"hint\">Written by labrun. The complete summary: the <code>.summary.json</code> beside this page.</p>\n</body></html>\n")
	return EscapeControls(b.String())
}

// judged is an expectation's outcome in a run as the runs table shows it: one the run skipped
// (it stopped before judging) is "not judged", as the expectations table counts it.
func judged(o interp.Outcome) string {
	if o == interp.Skipped {
		return "not judged"
	}
	return string(o)
}

// runHint is what the runs table shows beside a run's verdict: why it never started or did
// not pass, and which steps that may fail failed.
func runHint(s *Summary, r SummaryRun) string {
	if r.NotStarted != "" {
		return " <span class=\"hint\">" + html.EscapeString(r.NotStarted) + "</span>"
	}
	out := ""
	if why := whyNotPassed(s, r); why != "" {
		out += " <span class=\"hint\">" + html.EscapeString(why) + "</span>"
	}
	if wn := warnedAside(r); wn != "" {
		if len(r.MayFailed) > 0 {
			wn += ";" // not "…: mayfail-unread may fail, failed: …", one run-on phrase
		}
		out += " <span class=\"hint warn\">" + html.EscapeString(wn) + "</span>"
	}
	if mf := mayFailedAside(r); mf != "" {
		out += " <span class=\"hint warn\">" + html.EscapeString(mf) + "</span>"
	}
	if r.Left != "" {
		out += " <span class=\"hint warn\">but it " + html.EscapeString(r.Left) + "</span>"
	}
	return out
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// otherValue shows a value that is not a number (the first run's), or "–": a string quoted,
// as the console writes it (a page shows "2\n" as 2, and the newline can decide the claim),
// a long one cut inside its quotes.
func otherValue(runs []SummaryRun, v string) string {
	for _, r := range runs {
		if x, ok := r.Values[v]; ok {
			if s, ok := x.(string); ok {
				return strconv.Quote(truncate(s, 40))
			}
			return truncate(dsl.FormatValue(x), 40)
		}
	}
	return "–"
}

const summaryCSS = `
.badge.passed,.badge.failed,.badge.error,.badge.interrupted,.badge.skipped{font-size:12px;padding:1px 6px}
.badge.skipped{background:#757575}
table.combos td.ok{color:#2e7d32} table.combos td.err{color:#c62828;font-weight:bold}
th .unit{font-weight:normal;color:#666} table.combos .hint{white-space:nowrap}
td.vm{text-align:center;font-weight:bold} td.vm.passed{color:#2e7d32} td.vm.failed{color:#c62828} td.vm.error{color:#ef6c00}
.chart svg{display:block;max-width:100%;height:auto} .charts{display:flex;flex-wrap:wrap;gap:12px}
`

// SummaryExpected renders a summary as the expected-output block of a document holds it: a
// row per run with its vars, outcome, the response codes its loads saw and each expectation's
// verdict (e1, e2, … listed under the table). The numbers the expectations read are left out:
// they vary between runs and clusters; the verdicts say what the numbers showed.
func SummaryExpected(s *Summary, codes []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "sweep %s: %d of %d runs passed\n", s.Scenario, s.Passed, len(s.Runs))
	exprs := summaryExprs(s)
	b.WriteString("|")
	for _, v := range s.Sweeps {
		b.WriteString(" " + v + " |")
	}
	b.WriteString(" outcome | codes |")
	for i := range exprs {
		fmt.Fprintf(&b, " e%d |", i+1)
	}
	b.WriteString("\n")
	for i, r := range s.Runs {
		b.WriteString("|")
		for _, v := range s.Sweeps {
			b.WriteString(" " + r.Vars[v] + " |")
		}
		c := ""
		if i < len(codes) {
			c = codes[i]
		}
		fmt.Fprintf(&b, " %s | %s |", r.Outcome, or(c, "–"))
		for _, x := range exprs {
			fmt.Fprintf(&b, " %s |", r.Expectations[x])
		}
		b.WriteString("\n")
	}
	for i, x := range exprs {
		fmt.Fprintf(&b, "e%d: %s\n", i+1, x)
	}
	return b.String()
}

// LoadCodes lists the response codes each load of a run saw: "fortio: 200 503".
func LoadCodes(rec *interp.Record) string {
	var parts []string
	for _, n := range sortedKeys(rec.Loads()) {
		parts = append(parts, n+": "+strings.Join(sortedKeys(rec.Loads()[n].Codes), " "))
	}
	return strings.Join(parts, "; ")
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// sumCell escapes a summary's Markdown table cell.
func sumCell(s string) string {
	r := strings.NewReplacer("|", `\|`, "<", "&lt;", ">", "&gt;", "\n", " ", "`", "\\`", "*", `\*`, "_", `\_`)
	return r.Replace(s)
}

func median(xs []float64) float64 {
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}
