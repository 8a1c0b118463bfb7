package report

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/schema"
)

// The evidence of a run: what each expectation read (with units, linked to where it was
// recorded), what each load did, and the deltas the expectations read. The terminal prints it
// at the end of a run; the reports show it first.

// Part is one value an expectation read.
type Part struct {
	// Read is the value as the expression writes it (perconn.ips[backends.b.address]).
	Read string
	// Shown is its value with its unit and at most 4 significant digits.
	Shown string
	// Anchor is the id of the chart or table of the HTML report that holds it, Where that
	// chart's or table's title ("" when the report has none).
	Anchor, Where string
}

// Parts lists the values j read, in the order the expression reads them.
func Parts(rec *interp.Record, j *interp.Judgement) []Part {
	return newPlaces(rec).parts(j)
}

// places finds where the HTML report shows a value: the ids of its charts and tables.
type places struct {
	rec *interp.Record
	// names type what the expectations read (the record's, as vet would): a value's unit.
	names   *dsl.Names
	charted map[string]bool // ids of the charts drawn
	pair    [2]string       // the snapshots a plain delta compares
}

func newPlaces(rec *interp.Record) *places {
	pl := &places{rec: rec, names: rec.Names(), charted: map[string]bool{}}
	pl.pair = defaultDeltaPair(rec)
	return pl
}

// holds says what recorded the result named root: "load", "snapshot", "series", "logs",
// "exec", "value" (any other kind's), or "" when no step did.
func (pl *places) holds(root string) string {
	res := pl.rec.Results[root]
	if res == nil {
		return ""
	}
	switch res.Value.(type) {
	case *interp.LoadRecord:
		return "load"
	case *interp.SnapshotRecord:
		return "snapshot"
	case *interp.SeriesRecord:
		return "series"
	case schema.LogResult:
		return "logs"
	case schema.ExecResult:
		return "exec"
	}
	return "value"
}

func (pl *places) parts(j *interp.Judgement) []Part {
	var out []Part
	for _, r := range readsOf(j) {
		id, where := pl.place(r)
		out = append(out, Part{Read: r, Shown: shownPart(j.Values[r], dsl.UnitOf(r, pl.names)), Anchor: id, Where: where})
	}
	return out
}

// shownPart writes a value a part read as the console's explanation does: a long string (a
// command's output of 100 KB, which the HTML report showed whole beside the claim) its first
// 200 characters and its length; the artifacts hold it whole.
func shownPart(v any, unit string) string {
	if s, ok := v.(string); ok && len(s) > 200 {
		return dsl.Truncate(dsl.ShowValue(s, unit), 200) + fmt.Sprintf(" (%d bytes)", len(s))
	}
	return dsl.ShowValue(v, unit)
}

// readsOf are the values j read, in the order the expression reads them; what it does not
// spell as written (expr's own formatting) after, by name.
func readsOf(j *interp.Judgement) []string {
	reads := make([]string, 0, len(j.Values))
	for k := range j.Values {
		reads = append(reads, k)
	}
	sort.SliceStable(reads, func(a, b int) bool {
		ia, ib := strings.Index(j.Src, reads[a]), strings.Index(j.Src, reads[b])
		if (ia < 0) != (ib < 0) {
			return ia >= 0
		}
		if ia != ib {
			return ia < ib
		}
		return reads[a] < reads[b]
	})
	return reads
}

var deltaPairRead = regexp.MustCompile(`^delta\("([^"]*)", "([^"]*)"\)\.(.+)$`)

// place is the id and title of the chart or table of the HTML report that holds read.
func (pl *places) place(read string) (id, where string) {
	root := rootOf(read)
	rest := strings.TrimPrefix(strings.TrimPrefix(read, root), ".")
	field := rest
	if i := strings.IndexAny(field, ".["); i >= 0 {
		field = field[:i]
	}
	holds := pl.holds(root)
	switch {
	case holds == "load":
		switch {
		case field == "ips" && pl.charted[loadChartID(root, "backends")]:
			return loadChartID(root, "backends"), root + ": connects by backend"
		case (field == "p50" || field == "p90" || field == "p99" || field == "p999" || field == "avg" || field == "min" || field == "max") && pl.charted[loadChartID(root, "latency")]:
			return loadChartID(root, "latency"), root + ": latency histogram"
		}
		return "load-" + anchorName(root), "load " + root
	case root == "delta":
		from, to, stat := pl.pair[0], pl.pair[1], rest
		if m := deltaPairRead.FindStringSubmatch(read); m != nil {
			from, to, stat = m[1], m[2], m[3]
		}
		if pl.charted[snapChartID(stat)] {
			return snapChartID(stat), stat + " at each snapshot"
		}
		if s := pl.rec.Snapshot(to); s != nil {
			return sourceID(s.Source), "snapshots of " + s.Source
		}
		_ = from
	case holds == "snapshot":
		if s := pl.rec.Snapshot(root); s != nil {
			return sourceID(s.Source), "snapshots of " + s.Source
		}
	case holds == "series":
		stat := rest
		if _, after, ok := strings.Cut(rest, "."); ok {
			stat = after // g.max.rq_active
		}
		if pl.charted[seriesChartID(root, stat)] {
			return seriesChartID(root, stat), root + ": " + stat
		}
		return "series-" + anchorName(root), "series " + root
	case holds == "logs" || holds == "exec" || holds == "value":
		return "captures", "captures"
	case root == "started" || root == "ended" || root == "outcome" || root == "error":
		return "steps", "steps"
	case root == "vars" || root == "backends" || root == "blackholes" || root == "target":
		return "run", "the run"
	}
	return "", ""
}

func rootOf(read string) string {
	for i, r := range read {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return read[:i]
		}
	}
	return read
}

// Element ids of the HTML report, made of names a run supplies.
func anchorName(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r == '-' || r == '_' || r == '.' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			fmt.Fprintf(&b, "~%x", r)
		}
	}
	return b.String()
}

func loadChartID(load, chart string) string { return "load-" + anchorName(load) + "-" + chart }
func snapChartID(stat string) string        { return "snapshot-chart-" + anchorName(stat) }
func seriesChartID(series, stat string) string {
	return "series-" + anchorName(series) + "-" + anchorName(stat)
}
func sourceID(source string) string { return "snapshots-" + anchorName(source) }

// defaultDeltaPair is the pair of snapshots a plain delta compares: the first and the last
// taken (as the judge takes them).
func defaultDeltaPair(rec *interp.Record) [2]string {
	order := snapshotOrder(rec)
	if len(order) < 2 {
		return [2]string{}
	}
	return [2]string{order[0], order[len(order)-1]}
}

// Count is a number of something named: a response code's responses, a backend's connections.
type Count struct {
	Name string
	N    float64
}

// LoadSummary is what one load did, as the end of a run and the reports show it.
type LoadSummary struct {
	Name                 string
	Requests             float64
	Codes                []Count
	Connections, Sockets float64
	// Backends are the connections by destination, each named by its backend when the target
	// has one at that address.
	Backends                []Count
	QPS, Avg, P50, P99, Max float64
	Warnings                []string
	// Partial, when set, says why the load was stopped before its end: its numbers are what
	// it did until then.
	Partial string
}

// Loads summarises the loads of rec, by name.
func Loads(rec *interp.Record) []LoadSummary {
	names := backendNames(rec)
	var out []LoadSummary
	loads := rec.Loads()
	for _, n := range sortedKeys(loads) {
		l := loads[n]
		s := LoadSummary{Name: n, Requests: l.Requests, Connections: l.Connections, Sockets: l.Sockets,
			QPS: l.QPS, Avg: l.Avg, P50: l.P50, P99: l.P99, Max: l.Max, Warnings: l.Warnings, Partial: l.Partial}
		if l.Partial != "" {
			s.Warnings = append([]string{PartialLoad + l.Partial}, s.Warnings...)
		}
		for _, c := range sortedKeys(l.Codes) {
			s.Codes = append(s.Codes, Count{c, l.Codes[c]})
		}
		for _, a := range sortedKeys(l.IPs) {
			label := a
			if b := names[a]; b != "" {
				label = b + " " + a
			}
			s.Backends = append(s.Backends, Count{label, l.IPs[a]})
		}
		out = append(out, s)
	}
	return out
}

// CodesText is "200×28 503×2".
func (l LoadSummary) CodesText() string {
	var parts []string
	for _, c := range l.Codes {
		parts = append(parts, c.Name+"×"+dsl.Sig4(c.N))
	}
	return strings.Join(parts, " ")
}

// BackendsText is "a 127.0.0.2:80 ×14, b 127.0.0.3:80 ×16": the connects fortio tried by
// address, a refused one too (SocketsText says how many of them were socket errors).
func (l LoadSummary) BackendsText() string {
	var parts []string
	for _, c := range l.Backends {
		parts = append(parts, c.Name+" ×"+dsl.Sig4(c.N))
	}
	return strings.Join(parts, ", ")
}

// SocketsText is the sockets fortio opened beside the connections it was given: "30 sockets";
// where some of its requests were socket errors, how many of those connects were made at
// least and failed (refused, or timed out connecting) at most: "24 sockets: ≥ 4 made, ≤ 20
// failed to connect".
// fortio counts a connect it tried, a refused one too, in its sockets and its ips, and one
// refused connect fails one request (a -1): after a backend was killed, "24 sockets" and
// "127.0.0.1:18602 ×24" read as 24 connections made where 20 were refused. The record does
// not tell a refused connect from a -1 on a connection made (a reset, a request timed out
// on it: a slow backend's), so the split is given as the bounds the socket errors set.
func (l LoadSummary) SocketsText() string {
	s := dsl.Sig4(l.Sockets) + " sockets"
	refused := min(l.socketErrors(), l.Sockets)
	switch {
	case refused <= 0:
	case refused < l.Sockets:
		s += fmt.Sprintf(": ≥ %s made, ≤ %s failed to connect", dsl.Sig4(l.Sockets-refused), dsl.Sig4(refused))
	default: // as many socket errors as sockets: none need have been made (a blackhole's)
		s += fmt.Sprintf(": ≤ %s failed to connect", dsl.Sig4(refused))
	}
	return s
}

// socketErrors is the load's requests counted under "-1".
func (l LoadSummary) socketErrors() float64 {
	for _, c := range l.Codes {
		if c.Name == "-1" {
			return c.N
		}
	}
	return 0
}

// PartialLoad begins the warning of a load stopped before its end; why follows.
const PartialLoad = "partial, its numbers are what it did before it was stopped (no expectation reads them): "

// Line is the load on one line: "30 requests · 200×30 · 2 connections: a 127.0.0.2:80 ×2 ·
// p50 0.39 ms · p99 0.78 ms"; "1 connection (2 sockets): …" where it opened more sockets.
func (l LoadSummary) Line() string {
	s := fmt.Sprintf("%s request%s", dsl.Sig4(l.Requests), plural(int(l.Requests)))
	if l.Partial != "" {
		s = "partial: " + s
	}
	if c := l.CodesText(); c != "" {
		s += " · " + c
	}
	// The connections the load was given, as fortio.connections reads them; the sockets it
	// opened beside them when it opened more (a server that closes its connections, as
	// after an error): the by-backend split counts sockets.
	s += fmt.Sprintf(" · %s connection%s", dsl.Sig4(l.Connections), plural(int(l.Connections)))
	if l.Sockets > 0 && l.Sockets != l.Connections { // 0: none recorded (a stand-in's load)
		s += " (" + l.SocketsText() + ")"
	}
	if b := l.BackendsText(); b != "" {
		s += ": " + b
	}
	lat := fmt.Sprintf("p50 %s · p99 %s", dsl.WithUnit(l.P50, "ms"), dsl.WithUnit(l.P99, "ms"))
	switch l.LatencyOf() {
	case LatencyNone:
		return s
	case LatencyOfErrors:
		return s + " · no answer: the socket errors took " + lat
	case LatencyMixed:
		return s + " · " + lat + " of answers and socket errors together"
	}
	return s + " · " + lat
}

// What a load's latencies are the times of (LoadSummary.LatencyOf): fortio times every
// request, a socket error too, in one histogram; a claim reads a latency only of a load whose
// every request was answered (schema's LoadReads.Latency), and what a person reads says whose
// times the figures are where they are not those of answers.
const (
	LatencyOfAnswers = iota // every request got an HTTP response
	LatencyOfErrors         // none did: the times of its socket errors
	LatencyMixed            // some did: answers and socket errors in one histogram
	LatencyNone             // it made no request
)

// LatencyOf says what l's latency figures are the times of.
func (l LoadSummary) LatencyOf() int {
	socket := l.socketErrors()
	switch {
	case l.Requests <= 0:
		return LatencyNone
	case socket >= l.Requests:
		return LatencyOfErrors
	case socket > 0:
		return LatencyMixed
	}
	return LatencyOfAnswers
}

// DeltaRead is a counter's change between two snapshots that an expectation read.
type DeltaRead struct {
	From, To, Source, Stat string
	Before, After          float64
	// Absent: the counter was not in From (counted from 0).
	Absent bool
	// Reset: the counter went down.
	Reset bool
}

// Delta is After − Before.
func (d DeltaRead) Delta() float64 { return d.After - d.Before }

// Text is "rq_total 20 → 30 (+10)".
func (d DeltaRead) Text() string {
	before := dsl.Sig4(d.Before)
	if d.Absent {
		before = "absent"
	}
	change := signed(d.Delta())
	if d.Reset {
		change = "reset"
	}
	return fmt.Sprintf("%s %s → %s (%s)", d.Stat, before, dsl.Sig4(d.After), change)
}

// Deltas are the deltas rec's expectations read, in the order they read them, each once.
func Deltas(rec *interp.Record) []DeltaRead {
	// Only the reads: the places of every value (newPlaces types every result of the record,
	// 10,000 of a long run's) say nothing of a delta.
	var pair *[2]string
	var out []DeltaRead
	seen := map[string]bool{}
	for _, j := range rec.Expectations {
		for _, read := range readsOf(j) {
			if rootOf(read) != "delta" {
				continue
			}
			if pair == nil {
				p := defaultDeltaPair(rec)
				pair = &p
			}
			from, to, stat := pair[0], pair[1], strings.TrimPrefix(read, "delta.")
			if m := deltaPairRead.FindStringSubmatch(read); m != nil {
				from, to, stat = m[1], m[2], m[3]
			}
			a, b := rec.Snapshot(from), rec.Snapshot(to)
			key := from + "\x00" + to + "\x00" + stat
			if a == nil || b == nil || seen[key] {
				continue
			}
			vb, ok := b.Counters[stat]
			if !ok {
				continue
			}
			seen[key] = true
			va, inA := a.Counters[stat]
			out = append(out, DeltaRead{From: from, To: to, Source: b.Source, Stat: stat, Before: va, After: vb, Absent: !inA, Reset: inA && vb < va})
		}
	}
	return out
}

// signed is a change with its sign and at most 4 significant digits: +10, -3, +0.
func signed(x float64) string {
	if x < 0 {
		return dsl.Sig4(x)
	}
	return "+" + dsl.Sig4(x)
}
