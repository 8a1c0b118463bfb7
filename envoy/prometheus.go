package envoy

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"labrun.dev/labrun/dsl"
)

// Prometheus parses Prometheus text exposition (Envoy's /stats/prometheus, the agent's :15090,
// or any exporter) into counters and gauges, each keyed `metric` or `metric{k="v",…}` with the
// labels sorted by name and values escaped as the exposition format escapes them.
//
// The kind comes from the family's # TYPE line: counter → counters; gauge, untyped, a missing
// TYPE and unknown types → gauges. A histogram contributes <name>_sum and <name>_count as
// counters (its _bucket series are skipped); a summary contributes _sum and _count as counters
// and each quantile series (`name{quantile="0.99"}`) as a gauge. OpenMetrics' counter samples
// `<name>_total` are counters; `_created` series are skipped. Timestamps are ignored. A series
// that appears twice keeps its last value.
func Prometheus(data []byte) (counters, gauges map[string]float64, err error) {
	counters = make(map[string]float64)
	gauges = make(map[string]float64)
	types := make(map[string]string)
	var labels []promLabel
	lineNo := 0
	for off := 0; off < len(data); {
		end := bytes.IndexByte(data[off:], '\n')
		if end < 0 {
			end = len(data)
		} else {
			end += off
		}
		line := trimSpace(data[off:end])
		off = end + 1
		lineNo++
		if len(line) == 0 {
			continue
		}
		if line[0] == '#' {
			f := strings.Fields(string(line[1:]))
			if len(f) >= 3 && f[0] == "TYPE" {
				types[f[1]] = strings.ToLower(f[2])
			}
			continue
		}
		var name string
		var value float64
		name, labels, value, err = parsePromSample(line, labels[:0])
		if err != nil {
			return nil, nil, fmt.Errorf("prometheus: line %d: %w: %q", lineNo, err, truncate(line, 160))
		}
		dst := promKind(types, name)
		if dst == promSkip {
			continue
		}
		key := renderSeries(name, labels)
		if dst == promCounter {
			counters[key] = value
		} else {
			gauges[key] = value
		}
	}
	return counters, gauges, nil
}

type promLabel struct{ name, value string }

type promDest int

const (
	promGauge promDest = iota
	promCounter
	promSkip
)

// promKind decides where a sample goes from its family's # TYPE.
func promKind(types map[string]string, name string) promDest {
	if t, ok := types[name]; ok {
		switch t {
		case "counter":
			return promCounter
		case "histogram", "gaugehistogram":
			return promSkip // a bare family sample is not part of the format
		}
		return promGauge // gauge, untyped, summary quantiles, info, stateset, unknown
	}
	for _, sfx := range [...]string{"_bucket", "_sum", "_count", "_total", "_created", "_gsum", "_gcount", "_info"} {
		base, ok := strings.CutSuffix(name, sfx)
		if !ok {
			continue
		}
		t, ok := types[base]
		if !ok {
			continue
		}
		switch {
		case sfx == "_created":
			return promSkip
		case sfx == "_bucket" && (t == "histogram" || t == "gaugehistogram"):
			return promSkip
		case (sfx == "_sum" || sfx == "_count") && (t == "histogram" || t == "summary"):
			return promCounter
		case sfx == "_total" && t == "counter":
			return promCounter
		}
		return promGauge
	}
	return promGauge
}

// parsePromSample parses `name{l="v",…} value [timestamp]`.
func parsePromSample(line []byte, labels []promLabel) (string, []promLabel, float64, error) {
	i := 0
	for i < len(line) && isMetricByte(line[i], i == 0) {
		i++
	}
	if i == 0 {
		return "", labels, 0, fmt.Errorf("no metric name")
	}
	name := string(line[:i])
	rest := line[i:]
	if len(rest) > 0 && rest[0] == '{' {
		var err error
		labels, rest, err = parsePromLabels(rest[1:], labels)
		if err != nil {
			return "", labels, 0, err
		}
	}
	if len(rest) == 0 || (rest[0] != ' ' && rest[0] != '\t') {
		return "", labels, 0, fmt.Errorf("no value after the series")
	}
	rest = trimSpace(rest)
	if j := bytes.IndexAny(rest, " \t"); j >= 0 {
		rest = rest[:j] // drop the timestamp
	}
	v, err := strconv.ParseFloat(string(rest), 64)
	if err != nil && !isRangeErr(err) {
		return "", labels, 0, fmt.Errorf("value %q is not a number", rest)
	}
	if len(labels) > 1 {
		slices.SortFunc(labels, func(a, b promLabel) int { return strings.Compare(a.name, b.name) })
	}
	return name, labels, v, nil
}

func parsePromLabels(s []byte, labels []promLabel) ([]promLabel, []byte, error) {
	for {
		s = trimSpace(s)
		if len(s) > 0 && s[0] == '}' {
			return labels, s[1:], nil
		}
		i := 0
		for i < len(s) && isMetricByte(s[i], i == 0) && s[i] != ':' {
			i++
		}
		if i == 0 {
			return labels, nil, fmt.Errorf("bad label name")
		}
		ln := string(s[:i])
		s = trimSpace(s[i:])
		if len(s) < 2 || s[0] != '=' {
			return labels, nil, fmt.Errorf("label %s: no '='", ln)
		}
		s = trimSpace(s[1:])
		if len(s) == 0 || s[0] != '"' {
			return labels, nil, fmt.Errorf("label %s: value not quoted", ln)
		}
		var val strings.Builder
		j := 1
		closed := false
		for ; j < len(s); j++ {
			c := s[j]
			if c == '"' {
				closed = true
				break
			}
			if c == '\\' && j+1 < len(s) {
				j++
				switch s[j] {
				case 'n':
					val.WriteByte('\n')
				case '\\', '"':
					val.WriteByte(s[j])
				default:
					val.WriteByte('\\')
					val.WriteByte(s[j])
				}
				continue
			}
			val.WriteByte(c)
		}
		if !closed {
			return labels, nil, fmt.Errorf("label %s: unterminated value", ln)
		}
		labels = append(labels, promLabel{ln, val.String()})
		s = trimSpace(s[j+1:])
		if len(s) > 0 && s[0] == ',' {
			s = s[1:]
		} else if len(s) == 0 || s[0] != '}' {
			return labels, nil, fmt.Errorf("label %s: expected ',' or '}'", ln)
		}
	}
}

func isMetricByte(c byte, first bool) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == ':' || !first && c >= '0' && c <= '9'
}

var promEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)

// renderSeries writes name{k="v",…} with labels already sorted.
func renderSeries(name string, labels []promLabel) string {
	if len(labels) == 0 {
		return name
	}
	var b strings.Builder
	b.WriteString(name)
	b.WriteByte('{')
	for i, l := range labels {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(l.name)
		b.WriteString(`="`)
		promEscaper.WriteString(&b, l.value)
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String()
}

func truncate(b []byte, n int) string {
	return dsl.Truncate(string(b), n)
}
