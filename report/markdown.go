package report

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/interp"
)

func sortStrings(s []string) { sort.Strings(s) }

// Markdown renders the report for people.
func Markdown(rec *interp.Record, f Files) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("# %s — %s\n\n", mdText(rec.Scenario), strings.ToUpper(string(rec.Outcome)))
	if rec.Doc != "" {
		w("> %s\n\n", mdText(rec.Doc))
	}
	w("| | |\n|---|---|\n")
	w("| scenario | %s (%s) |\n", mdCode(rec.Scenario, true), mdCell(rec.Pos.String()))
	if rec.Where != "" {
		w("| target | %s: %s |\n", mdCell(rec.Target), mdCell(rec.Where))
	} else {
		w("| target | %s |\n", mdCell(rec.Target))
	}
	w("| started | %s |\n", rec.Start.UTC().Format("2006-01-02 15:04:05.000 UTC"))
	w("| duration | %s |\n", secs(rec.End.Sub(rec.Start)))
	if f.HTML != "" {
		w("| pictures | [the HTML report](%s) (charts per stat, latency histograms, codes over time) |\n", mdURL(relTo(f.Markdown, f.HTML)))
	}
	if rec.Error != "" {
		w("| stopped by | %s |\n", mdCell(rec.Error))
	}
	if lb := rec.LeftBehind(); lb != "" {
		w("| left behind | the run %s |\n", mdCell(lb))
	}
	if len(rec.Vars) > 0 {
		var vs []string
		for _, k := range sortedKeys(rec.Vars) {
			vs = append(vs, mdCode(k+"="+truncate(dsl.Stringify(rec.Vars[k]), 200), true))
		}
		w("| vars | %s |\n", strings.Join(vs, " "))
	}
	w("\n## Expectations\n\n")
	if len(rec.Expectations) == 0 {
		w("(none)\n")
	}
	for _, j := range rec.Expectations {
		mark := map[interp.Outcome]string{interp.Passed: "✅", interp.Failed: "❌", interp.Errored: "⚠️", interp.Skipped: "⏭️"}[j.Outcome]
		w("- %s %s — %s", mark, mdCode(j.Src, false), j.Outcome)
		if j.Explanation != "" {
			w(": %s", mdCode(j.Explanation, false))
		}
		if j.Reason != "" {
			w(": %s", mdText(j.Reason))
		}
		w("\n")
	}
	if len(rec.Notes) > 0 {
		w("\nNotes:\n")
		for _, n := range rec.Notes {
			w("- %s\n", mdText(n))
		}
	}

	w("\n## Timeline\n\n")
	if f.Timeline != "" {
		w("![timeline](%s)\n\n", mdURL(relTo(f.Markdown, f.Timeline)))
	}
	w("Offsets from the start of the run. Skew is the actual start minus the planned start of a timed step (`at`, a sample tick).\n\n")
	w("| step | kind | planned | started | ended | skew | outcome | summary |\n|---|---|---|---|---|---|---|---|\n")
	for _, s := range rec.Steps {
		label := s.Path
		if s.Name != "" {
			label = s.Name
		}
		if s.Sample > 0 {
			label += fmt.Sprintf(" #%d", s.Sample)
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
		w("| %s | %s | %s | %s | %s | %s | %s | %s |\n", mdCell(label), mdCell(s.Kind), secs(s.Planned), secs(s.Start), secs(s.End), skew, mdCell(outcome), mdCell(s.Summary))
	}

	if len(rec.Loads()) > 0 {
		w("\n## Load\n\n| load | requests | codes | sockets | connections | qps | avg | p50 | p99 | max |\n|---|---|---|---|---|---|---|---|---|---|\n")
		for _, n := range sortedKeys(rec.Loads()) {
			l := rec.Loads()[n]
			var codes []string
			for _, c := range sortedKeys(l.Codes) {
				codes = append(codes, fmt.Sprintf("%s×%s", c, dsl.FormatValue(l.Codes[c])))
			}
			w("| %s | %s | %s | %s | %s | %.1f | %.1f ms | %.1f ms | %.1f ms | %.1f ms |\n", mdCell(n), dsl.FormatValue(l.Requests),
				mdCell(strings.Join(codes, " ")), dsl.FormatValue(l.Sockets), dsl.FormatValue(l.Connections), l.QPS, l.Avg, l.P50, l.P99, l.Max)
			for _, wn := range l.Warnings {
				w("\n⚠ %s: %s\n", mdText(n), mdText(wn))
			}
		}
	}

	if len(rec.Snapshots()) > 0 {
		w("\n## Snapshots\n\n")
		sources, bySource := snapshotsBySource(rec)
		for _, src := range sources {
			snaps := bySource[src]
			w("### %s\n\n", mdText(src))
			w("| stat | type |")
			for _, n := range snaps {
				w(" %s |", mdCell(n))
			}
			if len(snaps) >= 2 {
				w(" Δ %s→%s |", mdCell(snaps[0]), mdCell(snaps[len(snaps)-1]))
			}
			w("\n|---|---|%s\n", strings.Repeat("---|", len(snaps)+min(1, len(snaps)/2)))
			first, last := rec.Snapshots()[snaps[0]], rec.Snapshots()[snaps[len(snaps)-1]]
			for _, stat := range statNames(rec, snaps) {
				typ := "counter"
				if _, ok := first.Gauges[stat]; ok {
					typ = "gauge"
				} else if _, ok := last.Gauges[stat]; ok {
					typ = "gauge"
				} else if _, ok := last.Histograms[stat]; ok {
					typ = "quantile"
				}
				w("| %s | %s |", mdCell(stat), typ)
				for _, n := range snaps {
					st := rec.Snapshot(n).Stats()
					if v, ok := st[stat]; ok {
						w(" %s |", dsl.FormatValue(v))
					} else {
						w(" – |")
					}
				}
				if len(snaps) >= 2 {
					if typ == "counter" {
						a, inA := first.Counters[stat]
						b2, inB := last.Counters[stat]
						switch {
						case !inB:
							w(" – |")
						case inA && b2 < a:
							w(" reset |")
						default:
							w(" %+g |", b2-a)
						}
					} else {
						w(" |")
					}
				}
				w("\n")
			}
			for _, n := range snaps {
				if hs := rec.Snapshot(n).Hosts; len(hs) > 0 {
					w("\nHosts at %s:\n\n| address | health | cx_active | cx_total | rq_total | rq_error |\n|---|---|---|---|---|---|\n", mdText(n))
					for _, h := range hs {
						w("| %s | %s | %g | %g | %g | %g |\n", mdCell(h.Address), mdCell(h.Health), h.CxActive, h.CxTotal, h.RqTotal, h.RqError)
					}
				}
			}
			w("\n")
		}
	}
	if len(rec.Series()) > 0 {
		w("\n## Sampled series\n\n")
		for _, n := range sortedKeys(rec.Series()) {
			s := rec.SeriesOf(n)
			w("- %s: %d samples every %s of %s\n", mdCode(n, false), len(s.Samples), s.Every, mdText(s.Source))
		}
		if f.HTML != "" {
			w("\nOne chart per stat (rates for counters) in the [HTML report](%s).\n", mdURL(relTo(f.Markdown, f.HTML)))
		}
	}
	if len(rec.Execs()) > 0 || len(rec.Values()) > 0 || len(rec.Logs()) > 0 {
		w("\n## Captures\n\n")
		for _, n := range sortedKeys(rec.Execs()) {
			e := rec.Execs()[n]
			w("- %s: exit %s, stdout %s", mdCode(n, false), dsl.FormatValue(e.Exit), mdCode(fmt.Sprintf("%q", truncate(strings.TrimSpace(e.Stdout), 200)), false))
			if len(e.Captured) > 0 {
				w(", captured %s", mdCode(truncate(fmt.Sprint(e.Captured), 300), false))
			}
			w("\n")
		}
		for _, n := range sortedKeys(rec.Values()) {
			w("- %s: %s\n", mdCode(n, false), mdCode(truncate(dsl.Stringify(rec.Values()[n]), 300), false))
		}
		for _, n := range sortedKeys(rec.Logs()) {
			l := rec.Logs()[n]
			w("- %s: %d lines; codes %s; flags %s\n", mdCode(n, false), int(l.Count), mdText(fmt.Sprint(l.Codes)), mdText(fmt.Sprint(l.Flags)))
		}
	}
	if len(rec.Cleanup) > 0 {
		w("\n## Cleanup\n\n")
		for _, c := range rec.Cleanup {
			w("- %s\n", mdText(c))
		}
	}
	if len(rec.Artifacts) > 0 {
		w("\n## Artifacts\n\nRaw inputs in %s, one JSON line per input (`{\"step\", \"name\", \"text\"}`); a command's output, a log and a process's output, whole, as files of their own:\n\n", mdCode(filepath.Base(f.Artifacts)+"/", false))
		for _, a := range rec.Artifacts {
			if a.File != "" {
				link := filepath.ToSlash(filepath.Join(filepath.Base(f.Artifacts), a.File))
				if n := f.lines[a]; n > 0 {
					w("- %s %s: [%s line %d](%s)\n", mdText(a.Step), mdText(a.Name), mdText(a.File), n, mdURL(link))
				} else {
					w("- %s %s: [%s](%s)\n", mdText(a.Step), mdText(a.Name), mdText(a.File), mdURL(link))
				}
			}
		}
	}
	return b.String()
}

// snapshotOrder returns snapshot names in the order they were taken.
func snapshotOrder(rec *interp.Record) []string {
	names := sortedKeys(rec.Snapshots())
	sort.SliceStable(names, func(i, j int) bool {
		return rec.Snapshots()[names[i]].At.Before(rec.Snapshots()[names[j]].At)
	})
	return names
}

func statNames(rec *interp.Record, snaps []string) []string {
	seen := map[string]bool{}
	for _, n := range snaps {
		for k := range rec.Snapshot(n).Stats() {
			seen[k] = true
		}
	}
	return sortedKeys(seen)
}

func truncate(s string, n int) string { return dsl.Truncate(s, n+1) }

func relTo(from, to string) string {
	r, err := filepath.Rel(filepath.Dir(from), to)
	if err != nil {
		return to
	}
	return filepath.ToSlash(r)
}

// snapshotsBySource groups the snapshots by source, sources and snapshots in the order they
// were taken.
func snapshotsBySource(rec *interp.Record) (sources []string, bySource map[string][]string) {
	bySource = map[string][]string{}
	for _, n := range snapshotOrder(rec) {
		src := rec.Snapshot(n).Source
		if _, ok := bySource[src]; !ok {
			sources = append(sources, src)
		}
		bySource[src] = append(bySource[src], n)
	}
	return sources, bySource
}
