package envoy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// StatsFilter returns the RE2 for /stats?filter= that selects exactly the stats of cluster:
// "cluster.<name>;.<stat>" and "cluster.<name>.<stat>", never those of a cluster whose name
// merely starts with <name> (see the package comment). It is anchored and QuoteMeta'd; the
// caller URL-encodes it (url.QueryEscape) since cluster names hold '|'. It selects the same
// names as [ClusterStat], so a server-side filter and client-side scoping agree.
func StatsFilter(cluster string) string {
	return `^cluster\.` + regexp.QuoteMeta(cluster) + `(?:;\.|\.` + dottedStatRE + `)`
}

// ShownPath is an admin URL or path as an error shows it: without the stats filter, the
// regular expression StatsFilter makes of a cluster's name (~1,500 characters URL-encoded),
// which said nothing a reader could use and hid the rest of the message ("stats?type=Counters"
// for "stats?filter=%5Ecluster%5C.c…&type=Counters"). The caller names the cluster.
func ShownPath(u string) string {
	path, query, ok := strings.Cut(u, "?")
	if !ok {
		return u
	}
	var kept []string
	for _, p := range strings.Split(query, "&") {
		if !strings.HasPrefix(p, "filter=") {
			kept = append(kept, p)
		}
	}
	if len(kept) == 0 {
		return path
	}
	return path + "?" + strings.Join(kept, "&")
}

// dottedStatRE is isDottedClusterStat as an RE2 over the rest of the name; keep them in step.
const dottedStatRE = `(?:[a-z0-9-]*(?:[^a-z0-9.;-]|;+[^;.]|;+$)` + noSemiDotRE +
	`|version$` +
	`|[a-z0-9-]+\.total_match_count$` +
	`|(?:internal|external|canary|retry)\.upstream_[^.]*$` +
	`|grpc\.` + `(?:[^;]|;+[^;.])*[A-Z]` + noSemiDotRE +
	`|zone\.[^.]+\.[^.]+\.upstream_[^.]*$` +
	`|ssl\.(?:[a-z0-9_]+$|(?:ciphers|curves|sigalgs|versions)\.[^;.]` + noSemiDotRE + `)` +
	`|http[123]\.[^.]+$)`

// noSemiDotRE matches the rest of a name that holds no ";.": a ";." after the cluster's name
// and a dot means a longer cluster name in Istio's current style (cluster.<longer>;.<stat>).
const noSemiDotRE = `(?:[^;]|;+[^;.])*;*$`

// ClusterStat reports whether the full stat name belongs to exactly cluster and, if so,
// returns the stat with the cluster prefix removed ("upstream_rq_total",
// "circuit_breakers.default.rq_pending_open").
func ClusterStat(name, cluster string) (stat string, ok bool) {
	if len(name) < len("cluster.")+len(cluster) || name[:len("cluster.")] != "cluster." ||
		name[len("cluster."):len("cluster.")+len(cluster)] != cluster {
		return "", false
	}
	rest := name[len("cluster.")+len(cluster):]
	n := statStart(rest)
	if n < 0 {
		return "", false
	}
	return rest[n:], true
}

// statStart returns where the stat begins in rest, the part of a stat name after
// "cluster.<name>", or -1 if rest does not continue a stat of that cluster.
func statStart[T string | []byte](rest T) int {
	if len(rest) >= 2 && rest[0] == ';' && rest[1] == '.' {
		return 2
	}
	if len(rest) >= 1 && rest[0] == '.' && isDottedClusterStat(rest[1:]) {
		return 1
	}
	return -1
}

// isDottedClusterStat reports whether s, what follows "cluster.<name>." in an old-style name,
// is a stat of that cluster rather than the rest of a longer cluster name. Mirrors dottedStatRE.
func isDottedClusterStat[T string | []byte](s T) bool {
	if strings.Contains(string(s), ";.") {
		return false // a longer cluster name in the current style: cluster.<longer>;.<stat>
	}
	upper := -1
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] >= 'A' && s[i] <= 'Z' {
			upper = i
			break
		}
	}
	return dottedStat(s, upper)
}

// dottedStat is isDottedClusterStat given the index of the last upper-case letter in s (-1 for
// none). Its work is bounded by the first few segments of s, so StatClusters, which tries
// every dot of a name, stays linear.
func dottedStat[T string | []byte](s T, upper int) bool {
	first := len(s)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '.' {
			first = i
			break
		}
		if !isLabelByte(c) {
			return true
		}
	}
	// The first segment reads as a DNS label. Only a few stats start like that.
	if first == 0 {
		return false
	}
	rest := s[first:] // "" or ".…"
	if len(rest) == len(".total_match_count") && string(rest) == ".total_match_count" {
		return true // <transport socket match>.total_match_count
	}
	if first > len("external") { // longer than any word below
		return false
	}
	switch string(s[:first]) {
	case "version":
		return len(rest) == 0
	case "internal", "external", "canary", "retry":
		return len(rest) >= len(".upstream_") && string(rest[:len(".upstream_")]) == ".upstream_" &&
			indexByte(rest[1:], '.') < 0
	case "grpc": // grpc.<package.Service>.<Method>.<stat>: gRPC names have capitals, DNS labels not
		return len(rest) > 0 && upper > first
	case "zone": // zone.<from>.<to>.upstream_*
		if len(rest) == 0 {
			return false
		}
		r := rest[1:]
		for range 2 {
			d := indexByte(r, '.')
			if d <= 0 {
				return false
			}
			r = r[d+1:]
		}
		return len(r) >= len("upstream_") && string(r[:len("upstream_")]) == "upstream_" && indexByte(r, '.') < 0
	case "ssl":
		if len(rest) < 2 {
			return false
		}
		r := rest[1:]
		word := true
		for i := 0; i < len(r); i++ {
			if c := r[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
				word = false
				break
			}
		}
		if word {
			return true
		}
		for _, p := range [...]string{"ciphers.", "curves.", "sigalgs.", "versions."} {
			if len(r) > len(p) && string(r[:len(p)]) == p {
				return true
			}
		}
		return false
	case "http1", "http2", "http3":
		return len(rest) > 1 && indexByte(rest[1:], '.') < 0
	}
	return false
}

func indexByte[T string | []byte](s T, c byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return -1
}

// isLabelByte reports whether c may appear in a DNS label as Kubernetes writes them.
func isLabelByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-'
}

// ClusterStats parses Envoy's text /stats output ("name: value" lines) and returns the
// counters and gauges of exactly cluster, by stat name with the cluster prefix removed. With
// cluster "" it returns every stat by its full name, ";." normalised to ".". Histogram lines
// ("P0(…) …", "No recorded values", bucket forms) and text readouts ("\"…\"") are skipped;
// read histograms with [ClusterHistograms]. Lines of other clusters are not examined beyond
// their name, so a malformed line elsewhere in the dump is not an error. CRLF line ends, blank
// lines and surrounding spaces are tolerated; a stat that appears twice keeps its last value.
func ClusterStats(text []byte, cluster string) (map[string]float64, error) {
	if err := sniffText(text); err != nil {
		return nil, err
	}
	size := 0
	if cluster == "" {
		size = bytes.Count(text, []byte("\n")) // spares the map its growth steps
	}
	out := make(map[string]float64, size)
	if err := newStatScanner(cluster).scan(text, collect(out, nil, cluster)); err != nil {
		return nil, err
	}
	return out, nil
}

// ClusterHistograms parses the histogram lines of Envoy's text /stats output for exactly
// cluster (every cluster when cluster is "") into "<stat>.p<quantile>" → value, the quantile
// written without its dot: upstream_rq_time.p50, .p90, .p99, .p995 (P99.5), .p999 (P99.9),
// .p100. Envoy prints each quantile as "P50(interval,cumulative)"; the cumulative value (every
// sample since the proxy started or the cluster was rebuilt) is used, because the interval
// value covers only the last flush period (5 s by default) and is often nan between flushes.
// Quantiles whose cumulative value is nan, "No recorded values" lines and the bucket form
// (?histogram_buckets=…, "B0.5(…)") are left out.
func ClusterHistograms(text []byte, cluster string) (map[string]float64, error) {
	if err := sniffText(text); err != nil {
		return nil, err
	}
	out := make(map[string]float64)
	if err := newStatScanner(cluster).scan(text, collect(nil, out, cluster)); err != nil {
		return nil, err
	}
	return out, nil
}

// ReadStats is ClusterStats and ClusterHistograms in one pass over a stream, for a dump too
// big to hold or still arriving (the stdout of `pilot-agent request GET stats`). It reads in
// 1 MiB chunks, so memory stays flat whatever the size of the dump.
func ReadStats(r io.Reader, cluster string) (stats, histograms map[string]float64, err error) {
	stats, histograms = make(map[string]float64), make(map[string]float64)
	sc := newStatScanner(cluster)
	fn := collect(stats, histograms, cluster)
	buf := make([]byte, 1<<20)
	carry := 0
	for first := true; ; first = false {
		n, rerr := io.ReadFull(r, buf[carry:])
		data := buf[:carry+n]
		if first {
			if err := sniffText(data); err != nil {
				return nil, nil, err
			}
		}
		switch rerr {
		case nil: // buffer full: scan the complete lines, keep the rest
			last := bytes.LastIndexByte(data, '\n')
			if last < 0 { // one line longer than the buffer
				buf = append(buf, make([]byte, len(buf))...)
				carry = len(data)
				continue
			}
			if err := sc.scan(data[:last+1], fn); err != nil {
				return nil, nil, err
			}
			carry = copy(buf, data[last+1:])
		case io.EOF, io.ErrUnexpectedEOF:
			if err := sc.scan(data, fn); err != nil {
				return nil, nil, err
			}
			return stats, histograms, nil
		default:
			return nil, nil, fmt.Errorf("stats: reading: %w", rerr)
		}
	}
}

// collect returns a line handler that adds numbers to stats and quantiles to histograms
// (either may be nil: not wanted).
func collect(stats, histograms map[string]float64, cluster string) func(name, value []byte) error {
	return func(name, value []byte) error {
		v, kind := parseStatValue(value)
		switch kind {
		case valueNumber:
			if stats != nil {
				stats[statKey(name, cluster)] = v
			}
		case valueBad:
			return fmt.Errorf("value %q is not a number", value)
		case valueHistogram:
			if histograms == nil || value[0] != 'P' {
				return nil
			}
			prefix := statKey(name, cluster) + ".p"
			for len(value) > 0 {
				var tok []byte
				if i := bytes.IndexByte(value, ' '); i >= 0 {
					tok, value = value[:i], bytes.TrimLeft(value[i+1:], " ")
				} else {
					tok, value = value, nil
				}
				q, cum, ok := parseQuantile(tok)
				if !ok {
					return fmt.Errorf("histogram quantile %q is not P<q>(<interval>,<cumulative>)", tok)
				}
				if !math.IsNaN(cum) {
					histograms[prefix+quantileSuffix(q)] = cum
				}
			}
		}
		return nil
	}
}

// parseQuantile splits "P99.5(nan,12.3)" into "99.5" and the cumulative value.
func parseQuantile(tok []byte) (q string, cum float64, ok bool) {
	open := bytes.IndexByte(tok, '(')
	if len(tok) < 5 || tok[0] != 'P' || open < 2 || tok[len(tok)-1] != ')' {
		return "", 0, false
	}
	q = string(tok[1:open])
	inner := tok[open+1 : len(tok)-1]
	comma := bytes.IndexByte(inner, ',')
	if comma < 0 {
		return "", 0, false
	}
	if _, err := strconv.ParseFloat(q, 64); err != nil {
		return "", 0, false
	}
	cum, err := strconv.ParseFloat(string(inner[comma+1:]), 64)
	if err != nil {
		return "", 0, false
	}
	return q, cum, true
}

// quantileSuffix writes a quantile ("99.9") as a stat-name segment ("999").
func quantileSuffix(q string) string { return strings.ReplaceAll(q, ".", "") }

// statKey is the map key for a stat line's name: the stat itself when scoped (name is already
// the part after the prefix), or the full name with ";." normalised.
func statKey(name []byte, cluster string) string {
	if cluster != "" || bytes.IndexByte(name, ';') < 0 {
		return string(name)
	}
	return string(bytes.ReplaceAll(name, []byte(";."), []byte(".")))
}

// statScanner finds the "name: value" lines of one cluster (every line when cluster is "") in
// a text /stats dump given whole or in chunks of complete lines.
//
// For a cluster it does not walk the lines: it searches for "cluster.<name>" (see finder) and
// looks only at the lines where it occurs at the start, so the lines of other clusters cost a
// memory scan and nothing else.
type statScanner struct {
	cluster string
	needle  []byte
	find    *finder
	lines   int // lines in the chunks already scanned, for error positions
	scanned int // bytes in the chunks already scanned
}

func newStatScanner(cluster string) *statScanner {
	return &statScanner{cluster: cluster, needle: []byte("cluster." + cluster)}
}

// scan calls fn for each line of text in scope, with name reduced to the stat (the full name
// when cluster is "") and value trimmed. An error from fn is reported with the line's position.
func (s *statScanner) scan(text []byte, fn func(name, value []byte) error) error {
	defer func() {
		s.lines += bytes.Count(text, []byte("\n"))
		s.scanned += len(text)
	}()
	if s.cluster == "" {
		for off := 0; off < len(text); {
			end := bytes.IndexByte(text[off:], '\n')
			if end < 0 {
				end = len(text)
			} else {
				end += off
			}
			line := trimSpace(text[off:end])
			if len(line) > 0 {
				name, value, ok := splitStatLine(line)
				if !ok {
					return s.lineError(text, off, errors.New("not a \"name: value\" stat line"))
				}
				if err := fn(name, value); err != nil {
					return s.lineError(text, off, err)
				}
			}
			off = end + 1
		}
		return nil
	}
	if s.find == nil {
		s.find = newFinder(text, s.needle)
	}
	s.find.base = s.scanned
	for pos := 0; pos < len(text); {
		start := s.find.next(text, pos)
		if start < 0 {
			return nil
		}
		after := start + len(s.needle)
		lineStart := start
		for lineStart > 0 && (text[lineStart-1] == ' ' || text[lineStart-1] == '\t' || text[lineStart-1] == '\r') {
			lineStart--
		}
		if lineStart > 0 && text[lineStart-1] != '\n' {
			pos = start + 1 // inside some other line; it may still hold a line start further on
			continue
		}
		end := bytes.IndexByte(text[after:], '\n')
		if end < 0 {
			end = len(text)
		} else {
			end += after
		}
		pos = end + 1
		rest := trimSpace(text[after:end])
		name, value, ok := splitStatLine(rest)
		if !ok {
			// "cluster.<name>…" without a value: only an error if it is in scope.
			if statStart(rest) >= 0 {
				return s.lineError(text, start, errors.New("not a \"name: value\" stat line"))
			}
			continue
		}
		n := statStart(name)
		if n < 0 {
			continue
		}
		if err := fn(name[n:], value); err != nil {
			return s.lineError(text, start, err)
		}
	}
	return nil
}

// lineError reports err on the line of text that contains off.
func (s *statScanner) lineError(text []byte, off int, err error) error {
	line := s.lines + bytes.Count(text[:off], []byte("\n")) + 1
	start := bytes.LastIndexByte(text[:off], '\n') + 1
	end := bytes.IndexByte(text[start:], '\n')
	if end < 0 {
		end = len(text)
	} else {
		end += start
	}
	l := trimSpace(text[start:end])
	if len(l) > 160 {
		l = append(l[:157:157], "..."...)
	}
	return fmt.Errorf("stats: line %d: %w: %q", line, err, l)
}

// splitStatLine splits a trimmed "name: value" line. Envoy writes ": "; a bare ':' is accepted
// after the last colon when no ": " is present.
func splitStatLine(line []byte) (name, value []byte, ok bool) {
	i := bytes.Index(line, []byte(": "))
	if i < 0 {
		i = bytes.LastIndexByte(line, ':')
		if i < 0 {
			return nil, nil, false
		}
	}
	name = trimSpace(line[:i])
	value = trimSpace(line[i+1:])
	if len(name) == 0 || len(value) == 0 {
		return nil, nil, false
	}
	return name, value, true
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

type valueKind int

const (
	valueNumber valueKind = iota
	valueHistogram
	valueText
	valueBad
)

// parseStatValue classifies and parses the value of a stat line. Counters and gauges are
// uint64s in Envoy; the fast path parses digits without allocating.
func parseStatValue(v []byte) (float64, valueKind) {
	if len(v) > 0 && len(v) <= 19 {
		var n uint64
		digits := true
		for _, c := range v {
			if c < '0' || c > '9' {
				digits = false
				break
			}
			n = n*10 + uint64(c-'0')
		}
		if digits {
			return float64(n), valueNumber
		}
	}
	switch {
	case len(v) == 0:
		return 0, valueBad
	case v[0] == '"':
		return 0, valueText
	case len(v) >= 2 && (v[0] == 'P' || v[0] == 'B') && (v[1] >= '0' && v[1] <= '9'),
		bytes.HasPrefix(v, []byte("No recorded values")):
		return 0, valueHistogram
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil {
		if isRangeErr(err) {
			return f, valueNumber // beyond float64: ±Inf, as close as float64 gets
		}
		return 0, valueBad
	}
	return f, valueNumber
}

// sniffText refuses input that is plainly not the text format, so a wrong ?format= or an HTML
// error page is reported instead of read as "no stats".
func sniffText(text []byte) error {
	t := trimSpace(text)
	if len(t) == 0 {
		return nil
	}
	switch t[0] {
	case '{', '[':
		return errors.New("stats: input looks like JSON, not Envoy's text /stats (use JSONStats)")
	case '<':
		return errors.New("stats: input looks like HTML, not Envoy's text /stats")
	case '#':
		return errors.New("stats: input looks like Prometheus exposition, not Envoy's text /stats (use Prometheus)")
	}
	return nil
}

// StatClusters lists the clusters that have stats in a text /stats dump, sorted. A name in
// the old dotted form is split where the rest first reads as a stat of the cluster (see the
// package comment). Useful to say which clusters exist when a requested one has no stats.
func StatClusters(text []byte) []string {
	seen := map[string]bool{}
	for off := 0; off < len(text); {
		end := bytes.IndexByte(text[off:], '\n')
		if end < 0 {
			end = len(text)
		} else {
			end += off
		}
		line := trimSpace(text[off:end])
		off = end + 1
		if !bytes.HasPrefix(line, []byte("cluster.")) {
			continue
		}
		name, _, ok := splitStatLine(line)
		if !ok {
			continue
		}
		name = name[len("cluster."):]
		if i := bytes.Index(name, []byte(";.")); i >= 0 {
			seen[string(name[:i])] = true
			continue
		}
		upper := bytes.LastIndexFunc(name, func(r rune) bool { return r >= 'A' && r <= 'Z' })
		for i := 1; i < len(name); i++ {
			if name[i] == '.' && dottedStat(name[i+1:], upper-(i+1)) {
				seen[string(name[:i])] = true
				break
			}
		}
	}
	out := make([]string, 0, len(seen))
	for c := range seen {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

// finder searches a stats dump for "cluster.<name>". bytes.Index is slowed down by such a
// needle: its first byte, 'c', is on every line ("cluster.", "circuit_breakers", "cx"), so it
// falls back to comparing at every position (~1.5 GB/s). Instead the finder picks the needle
// byte that is rarest in a sample of the text (often a letter of the service name) and jumps
// between its occurrences with bytes.IndexByte, which is vectorised and far faster, verifying
// the needle around each one. If the rare byte turns out common (many false hits), it goes
// back to bytes.Index for the rest of the text.
type finder struct {
	needle []byte
	rare   byte
	off    int  // position of rare in needle
	index  bool // use bytes.Index
	fails  int  // false hits so far
	base   int  // bytes scanned before the current chunk
}

func newFinder(text, needle []byte) *finder {
	f := &finder{needle: needle}
	if len(text) < 64<<10 || len(needle) < 2 {
		f.index = true
		return f
	}
	// Count bytes in a few windows spread over the text.
	var freq [256]int
	const windows, window = 8, 4 << 10
	for w := range windows {
		at := (len(text) - window) / (windows - 1) * w
		for _, c := range text[at : at+window] {
			freq[c]++
		}
	}
	f.off = len(needle) - 1
	for i := len(needle) - 1; i >= 0; i-- {
		if freq[needle[i]] < freq[needle[f.off]] {
			f.off = i
		}
	}
	f.rare = needle[f.off]
	// A byte seen more than once per 32 sampled bytes is no shortcut.
	f.index = freq[f.rare]*32 > windows*window
	return f
}

// next returns the position of the next needle at or after pos, or -1.
func (f *finder) next(text []byte, pos int) int {
	if f.index {
		if i := bytes.Index(text[pos:], f.needle); i >= 0 {
			return pos + i
		}
		return -1
	}
	for at := pos + f.off; at < len(text); {
		i := bytes.IndexByte(text[at:], f.rare)
		if i < 0 {
			return -1
		}
		at += i
		if start := at - f.off; start >= pos && start+len(f.needle) <= len(text) &&
			bytes.Equal(text[start:start+len(f.needle)], f.needle) {
			return start
		}
		at++
		f.fails++
		if f.fails > 64 && f.fails*32 > f.base+at { // more than one false hit per 32 bytes so far
			f.index = true
			return f.next(text, pos)
		}
	}
	return -1
}
