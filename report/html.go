package report

import (
	"encoding/json"

	"labrun.dev/labrun/interp"
)

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
h1{font-size:24px;margin:0 0 8px;overflow-wrap:anywhere} h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px} h3{font-size:15px;margin:16px 0 6px}
.badge{font-size:14px;padding:2px 8px;border-radius:4px;color:#fff;vertical-align:middle;background:#757575}
.badge.passed{background:#2e7d32} .badge.failed{background:#c62828} .badge.error,.badge.interrupted,.badge.refused{background:#ef6c00} .badge.leftover{background:#6a1b9a}
.doc{color:#444;margin:4px 0 12px} .hint{color:#666;font-size:13px;font-weight:normal}
table{border-collapse:collapse;font-size:13px;margin:6px 0} th,td{border:1px solid #e0e0e0;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#fafafa} td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap} .meta th{width:110px} .meta td{overflow-wrap:anywhere}
.scroll{overflow-x:auto;max-width:100%}
code{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12.5px;background:#f5f5f5;padding:0 3px;border-radius:3px}
ul.expect{list-style:none;padding-left:0;overflow-wrap:anywhere} ul.expect li{margin:4px 0} ul.warn,p.note,p.warn{overflow-wrap:anywhere} .mark{display:inline-block;width:1.2em;font-weight:bold}
li.passed .mark{color:#2e7d32} li.failed .mark,.err{color:#c62828} li.error .mark{color:#ef6c00} li.skipped .mark{color:#757575}
.why{color:#555;font-size:12px;margin-left:1.2em} tr.failed td{background:#ffebee} tr.error td,tr.timeout td{background:#fff3e0}
.charts{display:flex;flex-wrap:wrap;gap:8px} .chart{border:1px solid #eee;border-radius:4px;background:#fff} .chartbox{max-width:100%}
svg.chart{max-width:100%;height:auto}
.wide{overflow-x:auto;max-width:100%} .wide svg{max-width:100%;min-width:720px;height:auto} .warn{color:#ef6c00} .note{color:#555} h1 .mayfailed,h1 .warned{font-size:15px;font-weight:normal}
.verdict{color:#666;font-size:12px} .parts{font-size:12px;color:#444;margin-left:1.2em}
.parts a{color:#1565c0;text-decoration:none} .parts a:hover{text-decoration:underline} .parts code{font-size:11.5px;background:none;padding:0}
.chartbox:target .chart{outline:2px solid #1565c0} tr:target td{background:#e3f2fd} table:target{outline:2px solid #1565c0}
tr.elided td{color:#666;font-style:italic}
`
