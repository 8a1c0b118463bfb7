package report

import (
	"encoding/json"
	"fmt"
	"html"
	"path/filepath"
	"strings"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/interp"
)

// HTML renders the report as one self-contained page: inline CSS and SVG, no script, nothing
// fetched from the network. It shows what the Markdown shows, with pictures: the timeline, a
// chart per sampled stat (counters as rates) on the run's time axis, and per load its latency
// histogram, its responses by code over time and its connections by backend.
func HTML(rec *interp.Record, f Files) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	e := html.EscapeString
	outcome := strings.ToUpper(string(rec.Outcome))
	w("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n")
	w("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
	w("<title>%s — %s</title>\n<style>%s</style></head><body>\n", e(rec.Scenario), outcome, htmlCSS)
	w("<h1>%s <span class=\"badge %s\">%s</span></h1>\n", e(rec.Scenario), e(string(rec.Outcome)), outcome)
	if rec.Doc != "" {
		w("<p class=\"doc\">%s</p>\n", e(rec.Doc))
	}
	w("<table class=\"meta\">")
	w("<tr><th>scenario</th><td><code>%s</code> (%s)</td></tr>", e(rec.Scenario), e(rec.Pos.String()))
	target := rec.Target
	if rec.Where != "" {
		target += ": " + rec.Where
	}
	w("<tr><th>target</th><td>%s</td></tr>", e(target))
	w("<tr><th>started</th><td>%s</td></tr>", rec.Start.UTC().Format("2006-01-02 15:04:05.000 UTC"))
	w("<tr><th>duration</th><td>%s</td></tr>", secs(rec.End.Sub(rec.Start)))
	if rec.Error != "" {
		w("<tr><th>stopped by</th><td class=\"err\">%s</td></tr>", e(rec.Error))
	}
	if lb := rec.LeftBehind(); lb != "" {
		w("<tr><th>left behind</th><td class=\"err\">the run %s</td></tr>", e(lb))
	}
	for _, k := range sortedKeys(rec.Vars) {
		w("<tr><th>var %s</th><td><code>%s</code></td></tr>", e(k), e(truncate(dsl.Stringify(rec.Vars[k]), 200)))
	}
	w("</table>\n")

	w("<h2>Expectations</h2>\n<ul class=\"expect\">\n")
	if len(rec.Expectations) == 0 {
		w("<li>(none)</li>\n")
	}
	for _, j := range rec.Expectations {
		mark := map[interp.Outcome]string{interp.Passed: "✓", interp.Failed: "✗", interp.Errored: "!", interp.Skipped: "–"}[j.Outcome]
		w("<li class=\"%s\"><span class=\"mark\">%s</span> <code>%s</code> — %s", e(string(j.Outcome)), mark, e(j.Src), e(string(j.Outcome)))
		if j.Explanation != "" {
			w("<br><code class=\"why\">%s</code>", e(j.Explanation))
		}
		if j.Reason != "" {
			w("<br><span class=\"why\">%s</span>", e(j.Reason))
		}
		w("</li>\n")
	}
	w("</ul>\n")
	for _, n := range rec.Notes {
		w("<p class=\"note\">note: %s</p>\n", e(n))
	}

	artifact := func(step, name string) []byte {
		for _, a := range rec.Artifacts {
			if a.Step == step && a.Name == name {
				return a.Data
			}
		}
		return nil
	}

	w("<h2>Timeline</h2>\n<p class=\"hint\">Bars are steps from their actual start to their end; a black tick is a timed step's planned start; dots are snapshots.</p>\n")
	w("<div class=\"wide\">%s</div>\n", TimelineSVG(rec))

	if len(rec.Loads()) > 0 {
		w("<h2>Load</h2>\n<table><tr><th>load</th><th>requests</th><th>codes</th><th>sockets</th><th>connections</th><th>qps</th><th>avg</th><th>p50</th><th>p99</th><th>max</th></tr>\n")
		for _, n := range sortedKeys(rec.Loads()) {
			l := rec.Loads()[n]
			var codes []string
			for _, c := range sortedKeys(l.Codes) {
				codes = append(codes, fmt.Sprintf("%s×%s", c, dsl.FormatValue(l.Codes[c])))
			}
			w("<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%.1f</td><td>%.1f ms</td><td>%.1f ms</td><td>%.1f ms</td><td>%.1f ms</td></tr>\n",
				e(n), dsl.FormatValue(l.Requests), e(strings.Join(codes, " ")), dsl.FormatValue(l.Sockets), dsl.FormatValue(l.Connections), l.QPS, l.Avg, l.P50, l.P99, l.Max)
		}
		w("</table>\n")
		names := backendNames(rec)
		for _, n := range sortedKeys(rec.Loads()) {
			l := rec.Loads()[n]
			for _, wn := range l.Warnings {
				w("<p class=\"warn\">⚠ %s: %s</p>\n", e(n), e(wn))
			}
			w("<div class=\"charts\">")
			if c := latencyChart(n, artifact(n, "fortio.json")); c != "" {
				w("%s", c)
			}
			for _, s := range rec.Steps {
				if s.Kind == "load" && stepLabel(s) == n {
					if c := codesChart(rec, s, artifact(n, "codes-over-time.json")); c != "" {
						w("%s", c)
					}
					break
				}
			}
			if c := backendsChart(n, l.IPs, names); c != "" {
				w("%s", c)
			}
			w("</div>\n")
		}
	}

	if charts := snapshotCharts(rec); len(charts) > 0 {
		w("<h2>Snapshots over time</h2>\n<p class=\"hint\">Each counter an expectation reads, at every snapshot, one line per source; dashed: the timed steps.</p>\n<div class=\"charts\">%s</div>\n", strings.Join(charts, ""))
	}

	if len(rec.Series()) > 0 {
		w("<h2>Sampled series</h2>\n<p class=\"hint\">One chart per stat that changed, on the run's time axis (shaded: the loads). Counters are shown as rates per second between samples; gauges as values. Ticks along the bottom: each sample's planned time (grey) and actual start (black).</p>\n")
		for _, n := range sortedKeys(rec.Series()) {
			s := rec.SeriesOf(n)
			var samples []*interp.StepRecord
			for _, st := range rec.Steps {
				if st.Sample > 0 && stepLabel(st) == n {
					samples = append(samples, st)
				}
			}
			stats := seriesStats(rec, s)
			w("<h3>%s <span class=\"hint\">%d samples every %s of %s</span></h3>\n<div class=\"charts\">", e(n), len(s.Samples), s.Every, e(s.Source))
			for i, ss := range stats {
				if i == maxStatCharts {
					break
				}
				w("%s", statChart(rec, ss, samples))
			}
			w("</div>\n")
			if len(stats) > maxStatCharts {
				var rest []string
				for _, ss := range stats[maxStatCharts:] {
					rest = append(rest, ss.name)
				}
				w("<p class=\"hint\">Also changed (see the JSON record): %s</p>\n", e(strings.Join(rest, ", ")))
			}
			if len(stats) == 0 {
				w("<p class=\"hint\">No stat changed during the sampling.</p>\n")
			}
		}
	}

	w("<h2>Steps</h2>\n<table><tr><th>step</th><th>kind</th><th>planned</th><th>started</th><th>ended</th><th>skew</th><th>outcome</th><th>summary</th></tr>\n")
	for _, s := range rec.Steps {
		label := stepLabel(s)
		if s.Sample > 0 {
			label += fmt.Sprintf(" #%d", s.Sample)
		}
		skew := ""
		if s.Timed {
			skew = ms(s.Skew)
		}
		out := string(s.Outcome)
		if s.Error != "" {
			out += ": " + s.Error
		}
		for _, wn := range s.Warnings {
			out += " ⚠ " + wn
		}
		w("<tr class=\"%s\"><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n",
			e(string(s.Outcome)), e(label), e(s.Kind), secs(s.Planned), secs(s.Start), secs(s.End), skew, e(out), e(s.Summary))
	}
	w("</table>\n")

	if len(rec.Snapshots()) > 0 {
		w("<h2>Snapshots</h2>\n")
		sources, bySource := snapshotsBySource(rec)
		for _, src := range sources {
			snaps := bySource[src]
			w("<h3>%s</h3>\n<table><tr><th>stat</th>", e(src))
			for _, n := range snaps {
				w("<th>%s</th>", e(n))
			}
			if len(snaps) >= 2 {
				w("<th>Δ %s→%s</th>", e(snaps[0]), e(snaps[len(snaps)-1]))
			}
			w("</tr>\n")
			first, last := rec.Snapshots()[snaps[0]], rec.Snapshots()[snaps[len(snaps)-1]]
			for _, stat := range statNames(rec, snaps) {
				w("<tr><td>%s</td>", e(stat))
				for _, n := range snaps {
					if v, ok := rec.Snapshot(n).Stats()[stat]; ok {
						w("<td class=\"num\">%s</td>", dsl.FormatValue(v))
					} else {
						w("<td class=\"num\">–</td>")
					}
				}
				if len(snaps) >= 2 {
					a, inA := first.Counters[stat]
					b2, inB := last.Counters[stat]
					switch {
					case !inB:
						w("<td></td>")
					case inA && b2 < a:
						w("<td class=\"num err\">reset</td>")
					default:
						w("<td class=\"num\">%+g</td>", b2-a)
					}
				}
				w("</tr>\n")
			}
			w("</table>\n")
		}
	}
	if len(rec.Cleanup) > 0 {
		w("<h2>Cleanup</h2>\n<ul>")
		for _, c := range rec.Cleanup {
			w("<li>%s</li>", e(c))
		}
		w("</ul>\n")
	}
	if len(rec.Artifacts) > 0 {
		w("<h2>Artifacts</h2>\n<p class=\"hint\">Raw inputs, one JSON line per input, in <code>%s/</code>; a command's output, a log and a process's output, whole, as files of their own:</p>\n<ul>", e(filepath.Base(f.Artifacts)))
		for _, a := range rec.Artifacts {
			if a.File != "" {
				link := filepath.ToSlash(filepath.Join(filepath.Base(f.Artifacts), a.File))
				if n := f.lines[a]; n > 0 {
					w("<li>%s %s: <a href=\"%s\">%s</a> line %d</li>", e(a.Step), e(a.Name), e(link), e(a.File), n)
				} else {
					w("<li>%s %s: <a href=\"%s\">%s</a></li>", e(a.Step), e(a.Name), e(link), e(a.File))
				}
			}
		}
		w("</ul>\n")
	}
	w("<p class=\"hint\">Written by labrun. The complete record: <code>%s</code>.</p>\n</body></html>\n", e(filepath.Base(f.JSON)))
	return b.String()
}

// backendNames maps a target's backend addresses to their names (local backends), for the
// per-backend chart.
func backendNames(rec *interp.Record) map[string]string {
	out := map[string]string{}
	// Through JSON: in a live run the values are typed, in a replayed one they are maps.
	b, err := json.Marshal(rec.TargetValues["backends"])
	if err != nil {
		return out
	}
	var bs map[string]struct {
		Address string `json:"address"`
	}
	if json.Unmarshal(b, &bs) != nil {
		return out
	}
	for name, v := range bs {
		if v.Address != "" {
			out[v.Address] = name
		}
	}
	return out
}

const htmlCSS = `
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px auto;max-width:1180px;padding:0 16px;color:#222;line-height:1.4}
h1{font-size:24px;margin:0 0 8px} h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px} h3{font-size:15px;margin:16px 0 6px}
.badge{font-size:14px;padding:2px 8px;border-radius:4px;color:#fff;vertical-align:middle;background:#757575}
.badge.passed{background:#2e7d32} .badge.failed{background:#c62828} .badge.error,.badge.interrupted,.badge.refused{background:#ef6c00}
.doc{color:#444;margin:4px 0 12px} .hint{color:#666;font-size:13px;font-weight:normal}
table{border-collapse:collapse;font-size:13px;margin:6px 0} th,td{border:1px solid #e0e0e0;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#fafafa} td.num{text-align:right;font-variant-numeric:tabular-nums} .meta th{width:110px}
code{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12.5px;background:#f5f5f5;padding:0 3px;border-radius:3px}
ul.expect{list-style:none;padding-left:0} ul.expect li{margin:4px 0} .mark{display:inline-block;width:1.2em;font-weight:bold}
li.passed .mark{color:#2e7d32} li.failed .mark,.err{color:#c62828} li.error .mark{color:#ef6c00} li.skipped .mark{color:#757575}
.why{color:#555} tr.failed td{background:#ffebee} tr.error td,tr.timeout td{background:#fff3e0}
.charts{display:flex;flex-wrap:wrap;gap:8px} .chart{border:1px solid #eee;border-radius:4px;background:#fff}
.wide svg{max-width:100%;height:auto} .warn{color:#ef6c00} .note{color:#555}
`
