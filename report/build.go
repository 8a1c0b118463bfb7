package report

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/interp"
)

// buildPage computes a report's content from rec; f names the report's files.
func buildPage(rec *interp.Record, f Files) *page {
	timeline := ""
	if len(rec.Steps) > 0 {
		timeline = TimelineSVG(rec)
	}
	return buildPageWith(rec, f, timeline)
}

// buildPageWith is buildPage with the timeline picture already drawn.
func buildPageWith(rec *interp.Record, f Files, timeline string) *page {
	pl := newPlaces(rec)
	p := &page{title: rec.Scenario, outcome: string(rec.Outcome), doc: rec.Doc, notes: rec.Notes, jsonFile: filepath.Base(f.JSON), leftBehind: rec.LeftObjects()}
	p.meta = metaRows(rec, f)
	p.mayFailed = MayFailed(rec)
	p.warned = Warned(rec, "")
	for _, w := range rec.Warnings {
		p.warnings = append(p.warnings, w.String())
	}
	// The sections first: the charts they draw are where the expectations' values link to.
	for _, s := range []*section{
		loadSection(rec, pl),
		deltaSection(rec, pl),
		timelineSection(rec, f, timeline),
		snapshotChartsSection(rec, pl),
		seriesSection(rec, f, pl),
		snapshotsSection(rec),
		capturesSection(rec),
		cleanupSection(rec),
		artifactsSection(rec, f),
	} {
		if s != nil {
			p.sections = append(p.sections, s)
		}
	}
	for _, j := range rec.Expectations {
		ev := expectationView{outcome: string(j.Outcome), src: j.Src, shown: j.Explanation, reason: j.Reason}
		if j.Outcome != interp.Skipped {
			ev.parts = pl.parts(j)
		}
		p.expectations = append(p.expectations, ev)
	}
	return p
}

// MayFailed says which steps that may fail (mayFail) did not pass in rec, each once with its
// kind ("1 step that may fail failed: busy (wait)"; a step that failed more than once, a
// sample or a round, says how many times), or "" when none did. Beside a run that did not
// pass it starts "besides, ", so that it does not read as the cause (the ✗ lines and the
// error are).
func MayFailed(rec *interp.Record) string {
	names, times := mayFailedSteps(rec)
	if len(names) == 0 {
		return ""
	}
	for i, n := range names {
		if times[n] > 1 {
			names[i] = fmt.Sprintf("%s ×%d", n, times[n])
		}
	}
	out := fmt.Sprintf("%d steps that may fail failed: %s", len(names), strings.Join(names, ", "))
	if len(names) == 1 {
		out = "1 step that may fail failed: " + names[0]
	}
	if rec.Outcome != interp.Passed {
		out = "besides, " + out
	}
	return out
}

// Warned says, beside a passed run's verdict, that the lints found something in its
// scenario (vet's warnings, which the run printed before its first step): how many, and of
// which lint where ("with 2 vet warnings: unknown-subset at x.cue:20:51, …"), the places
// relative to dir. "" for a run without warnings, or one that did not pass (its verdict says
// already that it is not clean). Before, a claim on a route whose subset no rule defines
// (unknown-subset: every request routed there fails while the claim holds) read plain
// PASSED on the verdict line and atop the report, the warning scrolled away above it. With
// dir "" (a report's title), each place is its file's base name.
func Warned(rec *interp.Record, dir string) string {
	if len(warnedCodes(rec)) == 0 {
		return ""
	}
	var where []string
	for _, w := range rec.Warnings {
		if w != nil {
			pos := w.Pos.Rel(dir)
			if dir == "" {
				pos.File = filepath.Base(pos.File) // a title's: the file's whole path is below
			}
			where = append(where, w.Code+" at "+pos.String())
		}
	}
	if len(where) == 0 {
		return ""
	}
	n := len(where)
	const shown = 3
	if n > shown {
		where = append(where[:shown:shown], fmt.Sprintf("%d more", n-shown))
	}
	noun := "warnings"
	if n == 1 {
		noun = "warning"
	}
	return fmt.Sprintf("with %d vet %s: %s", n, noun, strings.Join(where, ", "))
}

// WarnedRuns says, beside a summary's counts, how many of its runs passed with the lints'
// warnings in their scenario, and of which lints ("2 passed with vet warnings:
// unknown-subset; each run's verdict says where"): "" when none did. Each run's own verdict
// line says them (Warned); a summary of runs that each passed with one read as clean.
func WarnedRuns(recs []*interp.Record) string {
	var runs [][]string
	for _, rec := range recs {
		if rec != nil {
			runs = append(runs, warnedCodes(rec))
		}
	}
	n, codes := warnedTally(runs)
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%d passed with vet warnings: %s; each run's verdict says where", n, strings.Join(codes, ", "))
}

// warnedCodes is the lint code of each of vet's warnings that rec passed with, one per
// warning in vet's order: nil for a run without warnings, or one that did not pass (Warned
// says them beside a verdict).
func warnedCodes(rec *interp.Record) []string {
	if rec.Outcome != interp.Passed {
		return nil
	}
	var codes []string
	for _, w := range rec.Warnings {
		if w != nil {
			codes = append(codes, w.Code)
		}
	}
	return codes
}

// warnedTally is how many of runs (each its warnedCodes) passed with vet's warnings, and
// their lints, each once in the order first seen.
func warnedTally(runs [][]string) (n int, codes []string) {
	for _, r := range runs {
		if len(r) == 0 {
			continue
		}
		n++
		for _, c := range r {
			if !slices.Contains(codes, c) {
				codes = append(codes, c)
			}
		}
	}
	return n, codes
}

// mayFailedSteps are the steps that may fail (mayFail) that did not pass in rec, each once
// with its kind ("busy (wait)"), in the order they first failed, and how many times each did.
func mayFailedSteps(rec *interp.Record) (names []string, times map[string]int) {
	times = map[string]int{}
	for _, st := range rec.Steps {
		if st.Outcome == interp.Passed || !slices.Contains(st.Warnings, interp.MayFailWarning) {
			continue
		}
		name := stepLabel(st) + " (" + st.Kind + ")"
		if times[name] == 0 {
			names = append(names, name)
		}
		times[name]++
	}
	return names, times
}

func metaRows(rec *interp.Record, f Files) []metaRow {
	target := rec.Target
	if rec.Where != "" && len(rec.Clusters) == 0 { // else a row per cluster
		target += ": " + rec.Where
	}
	rows := []metaRow{
		{label: "scenario", value: inline{code(rec.Scenario), plain(" (" + rec.Pos.String() + ")")}},
		{label: "target", value: txt(target)},
	}
	for _, c := range rec.Clusters {
		rows = append(rows, metaRow{label: "cluster " + c.Name, value: txt(or(c.Where, "(not reached)"))})
	}
	rows = append(rows, []metaRow{
		{label: "started", value: txt(rec.Start.UTC().Format("2006-01-02 15:04:05.000 UTC"))},
		{label: "duration", value: txt(secs(rec.End.Sub(rec.Start)))},
	}...)
	if rec.Error != "" {
		rows = append(rows, metaRow{label: "stopped by", value: txt(rec.Error), class: "err"})
	}
	if lb := rec.LeftBehind(); lb != "" {
		label := "left behind"
		if !rec.LeftObjects() {
			label = "not stopped" // its processes: they end as labrun exits (LeftBehind)
		}
		rows = append(rows, metaRow{label: label, value: txt("the run " + lb), class: "err"})
	}
	for _, k := range sortedKeys(rec.Vars) {
		rows = append(rows, metaRow{label: "var " + k, value: inline{code(truncate(dsl.Stringify(rec.Vars[k]), 200))}})
	}
	if f.JSON != "" {
		rows = append(rows, metaRow{label: "record", value: inline{code(filepath.Base(f.JSON)), plain(" (the complete record: labrun replay, labrun diff)")}})
	}
	return rows
}

// localLatency says what the local target's latencies measure (BENCHMARKS.md, driver/local).
const localLatency = "On the local target these latencies are round trips on this machine (loopback), not over a network; its echo backends run in a process of their own, apart from the load generator."

func loadSection(rec *interp.Record, pl *places) *section {
	loads := Loads(rec)
	if len(loads) == 0 {
		return nil
	}
	s := &section{id: "load", title: "Load"}
	t := &table{head: []string{"load", "requests", "codes", "connections", "connects by backend", "qps", "avg", "p50", "p99", "max"},
		num: []bool{false, true, false, true, false, true, true, true, true, true}}
	var marked []string
	for _, l := range loads {
		// Latencies that are not those of answers are marked, and said below the table.
		mark := ""
		switch l.LatencyOf() {
		case LatencyOfErrors:
			mark = " †"
			marked = append(marked, fmt.Sprintf("%s got no HTTP response, so its latencies are the times its socket errors took (an expectation reads them as %s.errorLatency, not as %s.p99)", l.Name, l.Name, l.Name))
		case LatencyMixed:
			mark = " †"
			marked = append(marked, fmt.Sprintf("%s had socket errors among its answers, so its latencies are of both together, as fortio times them in one histogram (an expectation reads %s.errorLatency, not %s.p99)", l.Name, l.Name, l.Name))
		}
		lat := func(v float64) string {
			if l.LatencyOf() == LatencyNone {
				return "–"
			}
			return dsl.WithUnit(v, "ms") + mark
		}
		conns := dsl.Sig4(l.Connections)
		if l.Sockets != l.Connections {
			conns += " (" + l.SocketsText() + ")"
		}
		name := l.Name
		if l.Partial != "" {
			name += " (partial)"
		}
		t.addRow(row{id: "load-" + anchorName(l.Name), cells: cells(name, dsl.Sig4(l.Requests), l.CodesText(), conns, l.BackendsText(),
			dsl.WithUnit(l.QPS, "1/s"), lat(l.Avg), lat(l.P50), lat(l.P99), lat(l.Max))})
	}
	s.blocks = append(s.blocks, block{table: t})
	if len(marked) > 0 {
		s.blocks = append(s.blocks, block{hint: true, text: txt("† " + strings.Join(marked, "; ") + ".")})
	}
	if rec.Target == "local" {
		s.blocks = append(s.blocks, block{hint: true, text: txt(localLatency)})
	}
	names := backendNames(rec)
	artifact := func(step, name string) []byte {
		for _, a := range rec.Artifacts {
			if a.Step == step && a.Name == name {
				return a.Data
			}
		}
		return nil
	}
	for _, l := range loads {
		for _, wn := range l.Warnings {
			s.blocks = append(s.blocks, block{text: inline{classed("⚠ "+l.Name+": "+wn, "warn")}})
		}
		var cs []chart
		if c := latencyChart(l.Name, latencyTitle(l), artifact(l.Name, "fortio.json")); c != "" {
			cs = append(cs, pl.chart(loadChartID(l.Name, "latency"), c))
		}
		for _, st := range rec.Steps {
			if st.Kind == "load" && stepLabel(st) == l.Name {
				if c := codesChart(rec, st, artifact(l.Name, "codes-over-time.json")); c != "" {
					cs = append(cs, pl.chart(loadChartID(l.Name, "codes"), c))
				}
				break
			}
		}
		if c := backendsChart(l.Name, rec.Loads()[l.Name].IPs, names); c != "" {
			cs = append(cs, pl.chart(loadChartID(l.Name, "backends"), c))
		}
		if len(cs) > 0 {
			s.blocks = append(s.blocks, block{charts: cs})
		}
	}
	s.blocks = append(s.blocks, block{mdOnly: true, hint: true, text: txt("Latency histograms, responses by code over time and connects by backend: in the HTML report.")})
	return s
}

// chart is an inline SVG with the id a value links to.
type chart struct {
	id, svg string
}

func (pl *places) chart(id, svg string) chart {
	pl.charted[id] = true
	return chart{id: id, svg: svg}
}

func deltaSection(rec *interp.Record, pl *places) *section {
	ds := Deltas(rec)
	if len(ds) == 0 {
		return nil
	}
	s := &section{id: "deltas", title: "Deltas the expectations read"}
	t := &table{head: []string{"from → to", "source", "stat", "before", "after", "Δ"}, num: []bool{false, false, false, true, true, true}}
	for _, d := range ds {
		before, change := dsl.Sig4(d.Before), signed(d.Delta())
		if d.Absent {
			before = "absent (0)"
		}
		if d.Reset {
			change = "reset"
		}
		t.addRow(row{cells: cells(d.From+" → "+d.To, d.Source, d.Stat, before, dsl.Sig4(d.After), change)})
	}
	s.blocks = append(s.blocks, block{table: t})
	return s
}

func timelineSection(rec *interp.Record, f Files, timeline string) *section {
	s := &section{id: "steps", title: "Timeline"}
	if f.Timeline != "" {
		s.blocks = append(s.blocks, block{mdOnly: true, file: relTo(f.Markdown, f.Timeline)})
	}
	if timeline != "" {
		s.blocks = append(s.blocks, block{htmlOnly: true, svg: timeline})
	}
	s.blocks = append(s.blocks, block{hint: true, text: inline{plain("Offsets from the start of the run. Skew is the actual start minus the planned start of a timed step ("), code("at"), plain(", a sample tick). In the picture, bars are steps from their actual start to their end, a black tick is a timed step's planned start, dots are snapshots.")}})
	t := &table{head: []string{"step", "kind", "planned", "started", "ended", "skew", "outcome", "summary"}, num: []bool{false, false, true, true, true, true, false, false}}
	clustered := len(rec.Clusters) > 0
	if clustered { // a scenario across clusters: the cluster of every step
		t.head = slices.Insert(t.head, 1, "cluster")
		t.num = slices.Insert(t.num, 1, false)
	}
	for _, r := range elideRows(stepRows(rec)) {
		if r.one != nil {
			r.row = stepRow(r.one)
		}
		if clustered {
			r.row.cells = slices.Insert(r.row.cells, 1, txt(r.row.cluster))
		}
		t.addRow(r.row)
	}
	s.blocks = append(s.blocks, block{table: t})
	return s
}

// maxRepeatRows is how many executions of one step (a sampler's samples, a repeat's rounds)
// the steps table lists at each end; the ones between are one row, and those that did not
// pass are listed (up to maxOddRows): a 5-minute run sampled every 100ms has 3,000 samples.
const (
	maxRepeatRows = 3
	maxOddRows    = 20
)

// maxTimelineRows is how many rows the steps table shows: a longer timeline (10,000 timed
// snapshots) shows its first and last maxTimelineRows/2 rows, and between them one row that
// sums up the others (how many, their skews), followed by those that did not pass and the
// maxSkewRows most skewed. Every step is in the JSON record.
const (
	maxTimelineRows = 80
	maxSkewRows     = 5
)

// stepRowOf is a row of the steps table and the executions it stands for (one, or an elided run).
// The row of a single execution is left to make (one) until the table keeps it: a long
// timeline keeps a hundred of its rows, and formatting all 10,000 held ~10 MB more while the
// report was written, when a run's heap is at its largest.
type stepRowOf struct {
	row
	steps []*interp.StepRecord
	one   *interp.StepRecord
}

// elideRows keeps the first and last rows of a long timeline and sums up the middle.
func elideRows(rows []stepRowOf) []stepRowOf {
	if len(rows) <= maxTimelineRows {
		return rows
	}
	head, tail := rows[:maxTimelineRows/2], rows[len(rows)-maxTimelineRows/2:]
	mid := rows[maxTimelineRows/2 : len(rows)-maxTimelineRows/2]
	var steps, odd []*interp.StepRecord
	var skews []time.Duration
	kinds := map[string]int{}
	seen := map[*interp.StepRecord]bool{} // a repeat's odd executions are also rows of their own
	for _, r := range mid {
		for _, m := range r.steps {
			if seen[m] {
				continue
			}
			seen[m] = true
			steps = append(steps, m)
			kinds[m.Kind]++
			if m.Timed {
				skews = append(skews, m.Skew)
			}
			if m.Outcome != interp.Passed {
				odd = append(odd, m)
			}
		}
	}
	var kindList []string
	for _, k := range sortedKeys(kinds) {
		kindList = append(kindList, fmt.Sprintf("%d %s steps", kinds[k], k))
	}
	if len(steps) == 0 {
		return rows
	}
	first, last := steps[0], steps[len(steps)-1]
	skew := ""
	if len(skews) > 0 {
		sorted := slices.Clone(skews)
		slices.Sort(sorted)
		skew = fmt.Sprintf("p50 %s, p99 %s, max %s", ms(sorted[len(sorted)/2]), ms(sorted[len(sorted)*99/100]), ms(sorted[len(sorted)-1]))
	}
	outcome := "passed"
	if len(odd) > 0 {
		outcome = fmt.Sprintf("%d of %d not passed", len(odd), len(steps))
	}
	out := slices.Clone(head)
	out = append(out, stepRowOf{row: row{class: "elided", cells: cells(
		fmt.Sprintf("… %d more rows (%s): every one in the JSON record", len(mid), strings.Join(kindList, ", ")),
		"", secs(first.Planned)+" …", secs(first.Start)+" …", "… "+secs(last.End), skew, outcome,
		fmt.Sprintf("%d executions", len(steps)))}})
	for k, m := range odd {
		if k == maxOddRows {
			out = append(out, stepRowOf{row: row{class: "elided", cells: cells(fmt.Sprintf("… %d more not passed (see the JSON record)", len(odd)-maxOddRows), "", "", "", "", "", "", "")}})
			break
		}
		out = append(out, stepRowOf{row: stepRow(m), steps: []*interp.StepRecord{m}})
	}
	if len(skews) > 0 {
		var timed []*interp.StepRecord
		for _, m := range steps {
			if m.Timed && m.Outcome == interp.Passed {
				timed = append(timed, m)
			}
		}
		slices.SortStableFunc(timed, func(a, b *interp.StepRecord) int { return cmp.Compare(b.Skew, a.Skew) })
		timed = timed[:min(maxSkewRows, len(timed))]
		slices.SortStableFunc(timed, func(a, b *interp.StepRecord) int { return cmp.Compare(a.Start, b.Start) })
		for _, m := range timed {
			r := stepRow(m)
			r.cells[0] = append(r.cells[0], plain(" (among the most skewed)"))
			out = append(out, stepRowOf{row: r, steps: []*interp.StepRecord{m}})
		}
	}
	return append(out, tail...)
}

// stepRows are the rows of the steps table, in the order the steps ran.
func stepRows(rec *interp.Record) []stepRowOf {
	byPath := map[string][]*interp.StepRecord{}
	index := map[*interp.StepRecord]int{} // an execution's place among its step's
	for _, s := range rec.Steps {
		index[s] = len(byPath[s.Path])
		byPath[s.Path] = append(byPath[s.Path], s)
	}
	var out []stepRowOf
	for _, s := range rec.Steps {
		all := byPath[s.Path]
		n, i := len(all), index[s]
		if n <= 2*maxRepeatRows+1 || i < maxRepeatRows || i >= n-maxRepeatRows {
			out = append(out, stepRowOf{steps: []*interp.StepRecord{s}, one: s})
			continue
		}
		if i != maxRepeatRows {
			continue
		}
		// The middle of a long run of one step: one row, then the executions that did not pass.
		mid := all[maxRepeatRows : n-maxRepeatRows]
		var skews []time.Duration
		var odd []*interp.StepRecord
		for _, m := range mid {
			if m.Timed {
				skews = append(skews, m.Skew)
			}
			if m.Outcome != interp.Passed {
				odd = append(odd, m)
			}
		}
		sort.Slice(skews, func(a, b int) bool { return skews[a] < skews[b] })
		skew := ""
		if len(skews) > 0 {
			skew = fmt.Sprintf("p50 %s, max %s", ms(skews[len(skews)/2]), ms(skews[len(skews)-1]))
		}
		outcome := "passed"
		if len(odd) > 0 {
			outcome = fmt.Sprintf("%d of %d not passed", len(odd), len(mid))
		}
		what, label := "runs", fmt.Sprintf("%s (%d more)", stepLabel(s), len(mid))
		if s.Sample > 0 {
			what, label = "samples", fmt.Sprintf("%s #%d–#%d", stepLabel(s), mid[0].Sample, mid[len(mid)-1].Sample)
		} else if s.Round > 0 {
			what, label = "rounds", fmt.Sprintf("%s rounds %d–%d", stepLabel(s), mid[0].Round, mid[len(mid)-1].Round)
		}
		out = append(out, stepRowOf{steps: mid, row: row{class: "elided", cluster: s.Cluster, cells: cells(label, s.Kind, secs(mid[0].Planned)+" …", secs(mid[0].Start)+" …", "… "+secs(mid[len(mid)-1].End), skew, outcome, fmt.Sprintf("%d %s", len(mid), what))}})
		for k, m := range odd {
			if k == maxOddRows {
				out = append(out, stepRowOf{row: row{class: "elided", cells: cells(fmt.Sprintf("… %d more not passed (see the JSON record)", len(odd)-maxOddRows), "", "", "", "", "", "", "")}})
				break
			}
			out = append(out, stepRowOf{row: stepRow(m), steps: []*interp.StepRecord{m}})
		}
	}
	return out
}

func stepRow(s *interp.StepRecord) row {
	label := stepLabel(s)
	switch {
	case s.Sample > 0:
		label += fmt.Sprintf(" #%d", s.Sample)
	case s.Round > 0:
		label += fmt.Sprintf(" round %d", s.Round)
	}
	skew := ""
	if s.Timed {
		skew = ms(s.Skew)
	}
	outcome := string(s.Outcome)
	if s.Error != "" {
		outcome += ": " + s.Error
	}
	for _, wn := range s.Warnings {
		outcome += " ⚠ " + wn
	}
	summary := s.Summary
	if s.Read != "" {
		summary += " (read " + s.Read + ")" // the pod a selector picked
	}
	if s.Outcome == interp.Skipped {
		// Not run (a cleanup cut short): it has no start or end.
		return row{class: string(s.Outcome), cluster: s.Cluster, cells: cells(label, s.Kind, "", "", "", skew, outcome, summary)}
	}
	return row{class: string(s.Outcome), cluster: s.Cluster, cells: cells(label, s.Kind, secs(s.Planned), secs(s.Start), secs(s.End), skew, outcome, summary)}
}

func snapshotChartsSection(rec *interp.Record, pl *places) *section {
	charts := snapshotCharts(rec)
	if len(charts) == 0 {
		return nil
	}
	s := &section{id: "snapshot-charts", title: "Snapshots over time"}
	s.blocks = append(s.blocks, block{htmlOnly: true, hint: true, text: txt("Each counter an expectation reads, at every snapshot (a dot), one line per source; between two snapshots the line holds the value of the first (dashed): what happened in between was not observed. Dashed verticals: the timed steps.")})
	var cs []chart
	for _, c := range charts {
		cs = append(cs, pl.chart(snapChartID(c.stat), c.svg))
	}
	s.blocks = append(s.blocks, block{charts: cs, mdNote: txt("One chart per counter the expectations read, at every snapshot: in the HTML report.")})
	return s
}

func seriesSection(rec *interp.Record, f Files, pl *places) *section {
	series := rec.Series()
	if len(series) == 0 {
		return nil
	}
	s := &section{id: "series", title: "Sampled series"}
	s.blocks = append(s.blocks, block{htmlOnly: true, hint: true, text: txt("One chart per stat that changed, on the run's time axis (shaded: the loads). Counters are rates per second over each interval between two samples; gauges are the values sampled. Ticks along the bottom: each sample's planned time (grey) and actual start (black). A chart wider than its samples shows each pixel's minimum to maximum (band) and mean (line).")})
	var list []inline
	for _, n := range sortedKeys(series) {
		ser := rec.SeriesOf(n)
		list = append(list, inline{code(n), plain(fmt.Sprintf(": %d samples every %s of %s", len(ser.Samples), ser.Every, ser.Source))})
	}
	s.blocks = append(s.blocks, block{mdOnly: true, list: list})
	if f.HTML != "" {
		s.blocks = append(s.blocks, block{mdOnly: true, text: inline{plain("One chart per stat (rates for counters) in the "), linked("HTML report", relTo(f.Markdown, f.HTML)), plain(".")}})
	}
	for _, n := range sortedKeys(series) {
		ser := rec.SeriesOf(n)
		var samples []*interp.StepRecord
		for _, st := range rec.Steps {
			if st.Sample > 0 && stepLabel(st) == n {
				samples = append(samples, st)
			}
		}
		stats := seriesStats(rec, ser)
		changes := podChanges(rec, ser.Samples)
		s.blocks = append(s.blocks, block{htmlOnly: true, heading: n, id: "series-" + anchorName(n), text: txt(fmt.Sprintf("%d samples every %s of %s", len(ser.Samples), ser.Every, ser.Source))})
		if why := ser.PodChange(); why != "" {
			// Both reports: the Markdown has no chart, and its list line above would read as one pod's.
			s.blocks = append(s.blocks, block{hint: true, text: txt(why)})
		}
		var cs []chart
		for i, ss := range stats {
			if i == maxStatCharts {
				break
			}
			cs = append(cs, pl.chart(seriesChartID(n, ss.name), statChart(rec, ss, samples, changes)))
		}
		if len(cs) > 0 {
			s.blocks = append(s.blocks, block{htmlOnly: true, charts: cs})
		}
		if len(stats) > maxStatCharts {
			var rest []string
			for _, ss := range stats[maxStatCharts:] {
				rest = append(rest, ss.name)
			}
			s.blocks = append(s.blocks, block{htmlOnly: true, hint: true, text: txt("Also changed (see the JSON record): " + strings.Join(rest, ", "))})
		}
		if len(stats) == 0 {
			s.blocks = append(s.blocks, block{htmlOnly: true, hint: true, text: txt("No stat changed during the sampling.")})
		}
	}
	return s
}

// maxSnapshotColumns is how many snapshots of one source the snapshots table shows.
const maxSnapshotColumns = 12

func snapshotsSection(rec *interp.Record) *section {
	if len(rec.Results) == 0 || len(rec.Snapshots()) == 0 {
		return nil
	}
	s := &section{id: "snapshots", title: "Snapshots"}
	sources, bySource := snapshotsBySource(rec)
	for _, src := range sources {
		all := bySource[src]
		s.blocks = append(s.blocks, block{heading: src})
		// A long run's snapshots of one source: the first and last columns, and a column that
		// says how many are left out (all of them are in the JSON record).
		snaps, elided := all, 0
		if len(all) > maxSnapshotColumns {
			snaps = append(slices.Clone(all[:maxSnapshotColumns/2]), all[len(all)-maxSnapshotColumns/2:]...)
			elided = len(all) - len(snaps)
		}
		t := &table{id: sourceID(src), head: []string{"stat", "type"}, num: []bool{false, false}}
		for i, n := range snaps {
			if elided > 0 && i == maxSnapshotColumns/2 {
				t.head = append(t.head, fmt.Sprintf("… %d more (JSON record)", elided))
				t.num = append(t.num, false)
			}
			t.head = append(t.head, n)
			t.num = append(t.num, true)
		}
		if len(snaps) >= 2 {
			t.head = append(t.head, fmt.Sprintf("Δ %s→%s", snaps[0], snaps[len(snaps)-1]))
			t.num = append(t.num, true)
		}
		first, last := rec.Snapshot(snaps[0]), rec.Snapshot(snaps[len(snaps)-1])
		for _, stat := range statNames(rec, all) {
			typ := "counter"
			switch {
			case hasStat(first.Gauges, stat) || hasStat(last.Gauges, stat):
				typ = "gauge"
			case hasStat(last.Histograms, stat):
				typ = "quantile"
			}
			r := row{cells: cells(stat, typ)}
			for i, n := range snaps {
				if elided > 0 && i == maxSnapshotColumns/2 {
					r.cells = append(r.cells, txt("…"))
				}
				if v, ok := rec.Snapshot(n).Stat(stat); ok {
					r.cells = append(r.cells, txt(dsl.ShowValue(v, ""))) // a fraction (a quantile) at 4 digits, a whole value as it is
				} else {
					r.cells = append(r.cells, txt("–"))
				}
			}
			if len(snaps) >= 2 {
				a, inA := first.Counters[stat]
				b, inB := last.Counters[stat]
				switch {
				case typ != "counter" || !inB:
					r.cells = append(r.cells, txt(""))
				case inA && b < a:
					r.cells = append(r.cells, inline{classed("reset", "err")})
				default:
					r.cells = append(r.cells, txt(fmt.Sprintf("%+g", b-a)))
				}
			}
			t.addRow(r)
		}
		s.blocks = append(s.blocks, block{table: t})
		for _, n := range snaps {
			if hs := rec.Snapshot(n).Hosts; len(hs) > 0 {
				s.blocks = append(s.blocks, block{text: txt("Hosts at " + n + ":")})
				ht := &table{head: []string{"address", "health", "cx_active", "cx_total", "rq_total", "rq_error"}, num: []bool{false, false, true, true, true, true}}
				for _, h := range hs {
					ht.addRow(row{cells: cells(h.Address, h.Health, fmt.Sprintf("%g", h.CxActive), fmt.Sprintf("%g", h.CxTotal), fmt.Sprintf("%g", h.RqTotal), fmt.Sprintf("%g", h.RqError))})
				}
				s.blocks = append(s.blocks, block{table: ht})
			}
		}
	}
	return s
}

func hasStat(m map[string]float64, k string) bool {
	_, ok := m[k]
	return ok
}

func capturesSection(rec *interp.Record) *section {
	execs, values, logs := rec.Execs(), rec.Values(), rec.Logs()
	if len(execs) == 0 && len(values) == 0 && len(logs) == 0 {
		return nil
	}
	var list []inline
	for _, n := range sortedKeys(execs) {
		e := execs[n]
		in := inline{code(n), plain(": exit " + dsl.FormatValue(e.Exit) + ", stdout "), code(fmt.Sprintf("%q", truncate(strings.TrimSpace(e.Stdout), 200)))}
		if len(e.Captured) > 0 {
			in = in.add(plain(", captured "), code(truncate(fmt.Sprint(e.Captured), 300)))
		}
		list = append(list, in)
	}
	for _, n := range sortedKeys(values) {
		list = append(list, inline{code(n), plain(": "), code(truncate(dsl.Stringify(values[n]), 300))})
	}
	for _, n := range sortedKeys(logs) {
		l := logs[n]
		list = append(list, inline{code(n), plain(fmt.Sprintf(": %d lines; codes %s; flags %s", int(l.Count), fmt.Sprint(l.Codes), fmt.Sprint(l.Flags)))})
	}
	return &section{id: "captures", title: "Captures", blocks: []block{{list: list}}}
}

func cleanupSection(rec *interp.Record) *section {
	if len(rec.Cleanup) == 0 {
		return nil
	}
	var list []inline
	for _, c := range rec.Cleanup {
		list = append(list, txt(c))
	}
	return &section{id: "cleanup", title: "Cleanup", blocks: []block{{list: list}}}
}

// maxArtifactItems is how many raw inputs the artifacts section lists one by one; beyond, it
// lists each file with how many it holds.
const maxArtifactItems = 40

func artifactsSection(rec *interp.Record, f Files) *section {
	var saved []*interp.ArtifactRecord
	for _, a := range rec.Artifacts {
		if a.File != "" {
			saved = append(saved, a)
		}
	}
	if len(saved) == 0 {
		return nil
	}
	dir := filepath.Base(f.Artifacts)
	link := func(file string) string { return relTo(f.Markdown, filepath.Join(f.Artifacts, file)) }
	s := &section{id: "artifacts", title: "Artifacts"}
	s.blocks = append(s.blocks, block{text: inline{plain("Raw inputs in "), code(dir + "/"), plain(", one JSON line per input ("), code(`{"step", "name", "text"}`), plain("); a command's output, a log and a process's output, whole, as files of their own:")}})
	var list []inline
	if len(saved) <= maxArtifactItems {
		for _, a := range saved {
			at := a.File // a streamed output is a file of its own: no line
			if n := f.lines[a]; n > 0 {
				at = fmt.Sprintf("%s line %d", a.File, n)
			}
			list = append(list, inline{plain(a.Step + " " + a.Name + ": "), linked(at, link(a.File))})
		}
	} else {
		byFile := map[string][]*interp.ArtifactRecord{}
		for _, a := range saved {
			byFile[a.File] = append(byFile[a.File], a)
		}
		for _, file := range sortedKeys(byFile) {
			as := byFile[file]
			steps := map[string]bool{}
			for _, a := range as {
				steps[a.Step] = true
			}
			list = append(list, inline{linked(file, link(file)), plain(fmt.Sprintf(": %d inputs of %s", len(as), strings.Join(sortedKeys(steps), ", ")))})
		}
	}
	s.blocks = append(s.blocks, block{list: list})
	return s
}

// latencyTitle is the end of a load's latency chart's title: whose times fortio's histogram
// holds (LoadSummary.LatencyOf).
func latencyTitle(l LoadSummary) string {
	switch l.LatencyOf() {
	case LatencyOfErrors:
		return ": socket errors' times (no answer)"
	case LatencyMixed:
		return ": latency, answers and socket errors"
	}
	return ": latency histogram"
}
