package main

// Text stats fixtures are Envoy's /stats text format, `name: value` per line. Optional section lines
// `# counters`, `# gauges`, `# histograms` and `# textreadouts` say the type of the lines after them
// (Envoy's text format does not, but `type=Counters|Gauges|…` needs it); they are not printed. A line
// before any section gets a type guessed from its name: histogram when its value is not a number,
// gauge when its last name segment is a well-known Envoy gauge (cx_open, rq_pending_open,
// remaining_*, *_active, membership_healthy, …), counter otherwise. Other `#` lines and blank lines
// are skipped.

import (
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// statKind is Envoy's stat type, as named by the `type=` query parameter.
type statKind string

const (
	counterKind     statKind = "Counters"
	gaugeKind       statKind = "Gauges"
	histogramKind   statKind = "Histograms"
	textReadoutKind statKind = "TextReadouts"
)

// stat is one line of a stats fixture.
type stat struct {
	name, value string
	kind        statKind
}

// parseStats reads a text stats fixture.
func parseStats(body string) []stat {
	var out []stat
	section := statKind("")
	for _, line := range strings.Split(body, "\n") {
		line = strings.TrimRight(line, "\r")
		trimmed := strings.TrimSpace(line)
		if trimmed == "" {
			continue
		}
		if strings.HasPrefix(trimmed, "#") {
			switch strings.ToLower(strings.TrimSpace(strings.TrimPrefix(trimmed, "#"))) {
			case "counters":
				section = counterKind
			case "gauges":
				section = gaugeKind
			case "histograms":
				section = histogramKind
			case "textreadouts", "text readouts":
				section = textReadoutKind
			}
			continue
		}
		name, value, ok := strings.Cut(line, ": ")
		if !ok {
			name, value, _ = strings.Cut(line, ":")
		}
		st := stat{name: strings.TrimSpace(name), value: strings.TrimSpace(value), kind: section}
		if st.kind == "" {
			st.kind = guessKind(st.name, st.value)
		}
		out = append(out, st)
	}
	return out
}

// gaugeSegments are last name segments of Envoy stats that are gauges.
var gaugeSegments = map[string]bool{
	"cx_open": true, "cx_pool_open": true, "rq_pending_open": true, "rq_open": true, "rq_retry_open": true,
	"membership_healthy": true, "membership_total": true, "membership_degraded": true, "membership_excluded": true,
	"max_host_weight": true, "version": true, "uptime": true, "live": true, "state": true, "concurrency": true,
	"memory_allocated": true, "memory_heap_size": true, "memory_physical_size": true, "total_connections": true,
	"parent_connections": true, "days_until_first_cert_expiring": true, "seconds_until_first_ocsp_response_expiring": true,
	"hot_restart_epoch": true, "stats_recent_lookups": true, "warming_clusters": true, "active_clusters": true,
	"total_listeners_active": true, "total_listeners_warming": true, "total_listeners_draining": true,
	"lb_subsets_active": true, "ejections_active": true,
}

// guessKind types a stat of an unsectioned fixture from its name and value.
func guessKind(name, value string) statKind {
	if _, err := strconv.ParseUint(value, 10, 64); err != nil {
		if _, ferr := strconv.ParseFloat(value, 64); ferr != nil || strings.Contains(value, "(") {
			return histogramKind
		}
	}
	last := name[strings.LastIndex(name, ".")+1:]
	if gaugeSegments[last] || strings.HasPrefix(last, "remaining_") || strings.HasSuffix(last, "_active") {
		return gaugeKind
	}
	return counterKind
}

// renderStats answers /stats from a text fixture the way Envoy does for filter=, type= and format=json.
func renderStats(body string, query url.Values) (string, error) {
	var filter *regexp.Regexp
	if f := query.Get("filter"); f != "" {
		re, err := regexp.Compile(f)
		if err != nil {
			return "", fmt.Errorf("Invalid re2 regex %q: %v (Envoy answers 400)", f, err)
		}
		filter = re
	}
	want := statKind("")
	switch t := query.Get("type"); strings.ToLower(t) {
	case "", "all":
	case "counters":
		want = counterKind
	case "gauges":
		want = gaugeKind
	case "histograms":
		want = histogramKind
	case "textreadouts":
		want = textReadoutKind
	default:
		return "", fmt.Errorf("invalid &type= param %q (Envoy answers 400)", t)
	}
	var picked []stat
	for _, st := range parseStats(body) {
		if want != "" && st.kind != want {
			continue
		}
		if filter != nil && !filter.MatchString(st.name) {
			continue
		}
		picked = append(picked, st)
	}
	switch query.Get("format") {
	case "", "text":
	case "json":
		return statsJSON(picked)
	default:
		return "", fmt.Errorf("format=%s: the stand-in derives only text and json from text stats fixtures; "+
			"write a %q series for it", query.Get("format"), "stats."+query.Get("format"))
	}
	var b strings.Builder
	for _, st := range picked {
		b.WriteString(st.name + ": " + st.value + "\n")
	}
	return b.String(), nil
}

// statsJSON prints counters, gauges and text readouts in Envoy's /stats?format=json shape
// ({"stats":[{"name":…,"value":…}]}); histograms are left out.
func statsJSON(stats []stat) (string, error) {
	type entry struct {
		Name  string `json:"name"`
		Value any    `json:"value"`
	}
	out := struct {
		Stats []entry `json:"stats"`
	}{Stats: []entry{}}
	for _, st := range stats {
		switch st.kind {
		case counterKind, gaugeKind:
			v, err := strconv.ParseUint(st.value, 10, 64)
			if err != nil {
				return "", fmt.Errorf("stat %s: value %q is not an integer", st.name, st.value)
			}
			out.Stats = append(out.Stats, entry{st.name, v})
		case textReadoutKind:
			out.Stats = append(out.Stats, entry{st.name, st.value})
		}
	}
	b, err := json.MarshalIndent(out, "", " ")
	return string(b), err
}
