package interp

import (
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/schema"
)

// Numeric mutants: every number an expectation reads — a counter's delta, a snapshot's or a
// series' stat, a load's count or latency, a captured number, a log count — scaled (×0.5, ×2)
// and, when it is a count, shifted (+1, -1). A bound that still holds on all of them is wider
// than the recorded figure needs; a survivor says which width the expectations leave open.
// Doubling and +1 of deltas and snapshot stats are the older mutants of mutate.go; the rest
// are here.

// half is v×0.5; a count stays a count (rounded down), so a delta of 1 halves to 0.
func half(v float64) float64 {
	if v == math.Trunc(v) {
		return math.Floor(v / 2)
	}
	return v / 2
}

// deltaNumeric halves the delta of stat between snapshots a and b, and takes one from it.
func deltaNumeric(add func(string, func(*Record)), label, pair, a, b, stat string) {
	with := func(f func(d float64) float64) func(*Record) {
		return func(r *Record) {
			sa, sb := r.Snapshot(a), r.Snapshot(b)
			if sa == nil || sb == nil {
				return
			}
			vb, ok := sb.Counters[stat]
			if !ok {
				return
			}
			va := sa.Counters[stat]
			if d := vb - va; d > 0 { // a delta of 0 cannot shrink without the counter going down
				sb.Counters[stat] = va + f(d)
			}
		}
	}
	add(label+" halved"+pair, with(half))
	add(label+" - 1"+pair, with(func(d float64) float64 { return d - 1 }))
}

// scalings are the numeric changes of a number: counts are also shifted.
func scalings(count bool) []struct {
	name string
	f    func(float64) float64
} {
	out := []struct {
		name string
		f    func(float64) float64
	}{
		{" ×0.5", half},
		{" ×2", func(v float64) float64 { return 2 * v }},
	}
	if count {
		out = append(out,
			struct {
				name string
				f    func(float64) float64
			}{" + 1", func(v float64) float64 { return v + 1 }},
			struct {
				name string
				f    func(float64) float64
			}{" - 1", func(v float64) float64 { return v - 1 }})
	}
	return out
}

// seriesNumeric changes stat in every sample of series name.
func seriesNumeric(add func(string, func(*Record)), name, stat string) {
	for _, s := range scalings(true) {
		f := s.f
		add(fmt.Sprintf("%s: %s%s in every sample", name, stat, s.name), func(r *Record) {
			ser := r.SeriesOf(name)
			if ser == nil {
				return
			}
			for _, smp := range ser.Samples {
				for _, m := range []map[string]float64{smp.Counters, smp.Gauges, smp.Histograms} {
					if v, ok := m[stat]; ok {
						m[stat] = f(v)
					}
				}
			}
		})
	}
}

// Field reads of load, exec and logs results, as written in the expressions: <name>.<field>,
// <name>.codeNNN, <name>.codes["NNN"], <name>.captured.<group>, <name>.flags["UF"], ...
var (
	fieldRead = regexp.MustCompile(`\b([A-Za-z_]\w*)\.(code\d+|code_1|requests|ok|errors|sockets|connections|qps|duration|avg|min|max|p50|p90|p99|p999|count)\b`)
	keyRead   = regexp.MustCompile(`\b([A-Za-z_]\w*)\.(codes|flags|details|captured)(?:\[\s*"([^"]+)"\s*\]|\.(\w+))`)
	// ipsRead is a read of a load's connections by address: keys(ka.ips), pc.ips[…].
	ipsRead = regexp.MustCompile(`\b([A-Za-z_]\w*)\.ips\b`)
)

// fieldReads are an expression's matches of fieldRead and keyRead.
type fieldReads struct{ fields, keys, ips [][]string }

// readsCache keeps fieldReads by expression source, up to maxReadsCached sources: the same
// expressions recur across a package's scenarios (vet of 1,000 quickstarts scanned 8 sources
// 1,000 times each: 2 % of its CPU), and the matches never change.
var (
	readsCache     sync.Map // string -> fieldReads
	readsCached    atomic.Int32
	maxReadsCached = int32(4096)
)

// readsOf is fieldRead's, keyRead's and ipsRead's matches in src.
func readsOf(src string) fieldReads {
	if r, ok := readsCache.Load(src); ok {
		return r.(fieldReads)
	}
	r := fieldReads{fieldRead.FindAllStringSubmatch(src, -1), keyRead.FindAllStringSubmatch(src, -1), ipsRead.FindAllStringSubmatch(src, -1)}
	if readsCached.Add(1) <= maxReadsCached {
		readsCache.Store(src, r)
	}
	return r
}

// loadCounts are the load fields that count something (the others are rates and latencies).
var loadCounts = map[string]bool{"requests": true, "ok": true, "errors": true, "sockets": true, "connections": true}

// resultNumeric changes every number of a load, exec or logs result that an expectation reads.
func resultNumeric(add func(string, func(*Record)), rec *Record, sc *dsl.Scenario) {
	seen := map[string]bool{}
	once := func(key string) bool {
		if seen[key] {
			return false
		}
		seen[key] = true
		return true
	}
	for _, e := range sc.Expect {
		r := readsOf(e.Src)
		for _, m := range r.fields {
			name, field := m[1], m[2]
			if !once(name + "." + field) {
				continue
			}
			switch {
			case loadOf(rec, name) != nil:
				if field == "requests" && fixedRequests(sc, name) {
					continue // fortio makes the requests it is told to: no run has another count
				}
				loadNumeric(add, name, field, timedLoad(sc, name))
			case isResult[schema.LogResult](rec, name) && field == "count":
				for _, s := range scalings(true) {
					f := s.f
					add(name+".count"+s.name, func(r *Record) {
						updateResult(r, name, func(l schema.LogResult) schema.LogResult {
							l, _ = l.SetCount(f(l.Count)) // fewer or more lines, counted as a log would
							return l
						})
					})
				}
			}
		}
		for _, m := range r.ips {
			if name := m[1]; loadOf(rec, name) != nil && once(name+".ips") {
				ipsMutants(add, rec, name)
			}
		}
		for _, m := range r.keys {
			name, kind, key := m[1], m[2], m[3]+m[4]
			if !once(name + "." + kind + "." + key) {
				continue
			}
			switch {
			case kind == "codes" && loadOf(rec, name) != nil:
				loadNumeric(add, name, "code"+key, timedLoad(sc, name))
			case kind == "captured" && isResult[schema.ExecResult](rec, name):
				captureNumeric(add, rec, name, key)
			case kind != "captured" && isResult[schema.LogResult](rec, name):
				logCountNumeric(add, name, kind, key)
			}
		}
	}
}

// ipsMutants moves every connection of load name to one address, for each address some load
// of the run reached: the wrong outcomes of a DNS flip, where the client never left the old
// address (the flip missed it) or was on the new one from the start. A claim about where a
// client's connections went (keys(ka.ips) == [backends.a.address], pc.ips[b] > 0) is judged
// by no other mutant: a load's codes and latencies say nothing of the addresses. The number of
// connections stays, so fortio's sums hold.
func ipsMutants(add func(string, func(*Record)), rec *Record, name string) {
	var total float64
	for _, n := range loadOf(rec, name).IPs {
		total += n
	}
	if total == 0 {
		return
	}
	seen := map[string]bool{}
	for _, n := range slices.Sorted(maps.Keys(rec.Results)) {
		if l := loadOf(rec, n); l != nil {
			for a := range l.IPs {
				seen[a] = true
			}
		}
	}
	own := loadOf(rec, name).IPs
	for _, a := range slices.Sorted(maps.Keys(seen)) {
		if len(own) == 1 && own[a] > 0 {
			continue // that is the run recorded
		}
		add(fmt.Sprintf("%s.ips: every connection to %s", name, a), func(r *Record) {
			if l := loadOf(r, name); l != nil {
				l.IPs = map[string]float64{a: total}
			}
		})
	}
}

// fixedRequests reports whether load step name makes a set number of requests (requests: N):
// fortio makes that many, each counted under some code, so its count is no outcome a run can
// get wrong.
// timedLoad says whether step name is a load of a duration (no requests): fortio runs it for
// its duration at least (loadDurationContradiction).
func timedLoad(sc *dsl.Scenario, name string) bool {
	if st := sc.Step(name); st != nil {
		if p, ok := st.Params.(*schema.Load); ok {
			return p.Requests == 0
		}
	}
	return false
}

func fixedRequests(sc *dsl.Scenario, name string) bool {
	if st := sc.Step(name); st != nil {
		if p, ok := st.Params.(*schema.Load); ok {
			return p.Requests > 0
		}
	}
	return false
}

// loadNumeric changes one field of load name (codeNNN: the count of that code) as fortio could
// have recorded it: every request is counted under one code, ok and errors are the successes
// and the rest, and latencies keep their order. So a code's count changes by answering
// requests otherwise (more 503s are fewer successes; fewer 503s answered 200, or as the most
// common success), ok and errors move requests between them, requests scales every code (± 1:
// the most common one), and a latency moves the others as little as keeps min ≤ p50 ≤ … ≤ max.
// A mutant that changes one figure alone (ok + 1, requests the same) no run can record: an
// expectation that only restates fortio's sums (ok + errors == requests) kills it and proves
// nothing.
func loadNumeric(add func(string, func(*Record)), name, field string, timed bool) {
	isCode := len(field) > 4 && field[:4] == "code"
	for _, s := range scalings(isCode || loadCounts[field]) {
		f := s.f
		add(name+"."+field+s.name, func(r *Record) {
			if l := loadOf(r, name); l != nil {
				changeLoadAs(l, field, s.name == " + 1" || s.name == " - 1", timed, f)
			}
		})
	}
}

// changeLoad changes field of load l by f as fortio could have recorded it (loadNumeric);
// shift says f adds to or takes from the requests (one more answered as the most common
// code) rather than scaling every code.
func changeLoad(l *LoadRecord, field string, shift bool, f func(float64) float64) {
	changeLoadAs(l, field, shift, false, f)
}

// changeLoadAs is changeLoad of a load that is timed (a load of a duration, which fortio
// runs for its duration at least) or not: a timed load at another qps made other requests in
// its time, where another load made its requests in the time that rate takes. Before, a timed
// load's qps ×2 made its requests in half its duration, which no run records.
func changeLoadAs(l *LoadRecord, field string, shift, timed bool, f func(float64) float64) {
	code, isCode := "", false
	if len(field) > 4 && field[:4] == "code" {
		code, isCode = strings.Replace(field[4:], "_", "-", 1), true // code_1 is codes["-1"]
	}
	switch field {
	case "requests":
		if shift {
			top := l.MostCommon(true)
			if l.Codes[l.MostCommon(false)] > l.Codes[top] {
				top = l.MostCommon(false)
			}
			if l.Codes == nil {
				l.Codes = map[string]float64{}
			}
			l.Codes[top] = max(0, f(l.Codes[top]))
		} else {
			for k, v := range l.Codes {
				l.Codes[k] = f(v)
			}
		}
		l.Recount()
		if l.DurationS > 0 {
			// Made in the same time, as fortio's qps says: requests over duration.
			l.QPS = l.Requests / l.DurationS
		}
		return
	case "ok", "errors":
		v := l.OK
		if field == "errors" {
			v = l.Errors
		}
		d := min(max(f(v), 0), l.Requests) - v
		// More errors are fewer successes, and the other way.
		l.Answered(math.Abs(d), (d < 0) == (field == "ok"))
		return
	case "avg", "min", "max", "p50", "p90", "p99", "p999":
		v := map[string]float64{"avg": l.Avg, "min": l.Min, "max": l.Max, "p50": l.P50, "p90": l.P90, "p99": l.P99, "p999": l.P999}[field]
		l.SetLatency(field, f(v))
		return
	}
	if isCode {
		v := l.Codes[code]
		d := max(f(v), 0) - v
		ok := schema.IsOK(code)
		switch {
		case d < 0: // answered as the most common code of the other outcome
			l.Move(-d, func(k string) bool { return k == code }, l.MostCommon(!ok))
		case d > 0: // taken from the other outcome first, then from this one's other codes
			if moved := l.Move(d, func(k string) bool { return schema.IsOK(k) != ok }, code); moved < d {
				l.Move(d-moved, func(k string) bool { return schema.IsOK(k) == ok }, code)
			}
		}
		return
	}
	if field == "qps" && timed && l.QPS > 0 && l.DurationS > 0 {
		k := f(l.QPS) / l.QPS
		for c, n := range l.Codes {
			l.Codes[c] = math.Round(n * k)
		}
		l.Recount()
		l.QPS = l.Requests / l.DurationS // other requests in the same time
		return
	}
	for k, p := range map[string]*float64{
		"sockets": &l.Sockets, "connections": &l.Connections, "qps": &l.QPS, "duration": &l.DurationS,
	} {
		if k == field {
			*p = f(*p)
		}
	}
	switch {
	case field == "duration" && l.DurationS > 0:
		l.QPS = l.Requests / l.DurationS // the same requests in that time
	case field == "qps" && l.QPS > 0:
		l.DurationS = l.Requests / l.QPS // the same requests, in the time that rate takes
	}
}

// captureNumeric changes a captured group of exec name that holds a number (on a record
// without the value, as vet's planned one, every change is named: a count's shifts too).
func captureNumeric(add func(string, func(*Record)), rec *Record, name, group string) {
	raw, known := resultOf[schema.ExecResult](rec, name).Captured[group]
	if _, err := strconv.ParseFloat(raw, 64); known && err != nil {
		return
	}
	_, intErr := strconv.Atoi(raw)
	for _, s := range scalings(!known || intErr == nil) {
		f := s.f
		add(name+".captured."+group+s.name, func(r *Record) {
			updateResult(r, name, func(e schema.ExecResult) schema.ExecResult {
				v, err := strconv.ParseFloat(e.Captured[group], 64)
				if err != nil {
					return e
				}
				c := maps.Clone(e.Captured)
				c[group] = strconv.FormatFloat(f(v), 'f', -1, 64)
				e.Captured = c
				return e
			})
		})
	}
}

// logCountNumeric changes the count of one code, flag or details value of logs step name, as
// a log could have it (schema.LogResult.Recount): lines move between codes, or are added, so
// that count, the other counts and the entries agree with it.
func logCountNumeric(add func(string, func(*Record)), name, kind, key string) {
	for _, s := range scalings(true) {
		f := s.f
		add(fmt.Sprintf("%s.%s[%q]%s", name, kind, key, s.name), func(r *Record) {
			updateResult(r, name, func(l schema.LogResult) schema.LogResult {
				l, _ = l.Recount(kind, key, f(l.Counts(kind)[key])) // a key no line has is 0 (+ 1: one line has it)
				return l
			})
		})
	}
}

// stepRead finds started.<step> and ended.<step> in an expression.
var stepRead = regexp.MustCompile(`\b(?:started|ended)(?:\.(\w+)|(\[))`)

// stepsRead are the steps whose times the expectations read, nil when one reads them by an
// index expression (then every step's time may matter).
func stepsRead(sc *dsl.Scenario) map[string]bool {
	read := map[string]bool{}
	for _, e := range sc.Expect {
		for _, m := range stepRead.FindAllStringSubmatch(e.Src, -1) {
			if m[2] != "" {
				return nil
			}
			read[m[1]] = true
		}
	}
	return read
}

// valueNumeric changes every number of a get or config value at once (a config dump's limits,
// timeouts in seconds, counts); its strings and booleans stay.
func valueNumeric(add func(string, func(*Record)), name string) {
	for _, s := range scalings(true) {
		f := s.f
		add(name+": every number"+s.name, func(r *Record) {
			if x := r.Results[name]; x != nil {
				x.Value = mapNumbers(x.Value, f)
			}
		})
	}
}

func mapNumbers(v any, f func(float64) float64) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = mapNumbers(e, f)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = mapNumbers(e, f)
		}
		return out
	case float64:
		return f(x)
	}
	return v
}

// loadOf is the load recorded under name (nil if none).
func loadOf(r *Record, name string) *LoadRecord {
	return resultOf[*LoadRecord](r, name)
}

// resultOf is the result recorded under name when it is a T (T's zero value otherwise).
func resultOf[T any](r *Record, name string) T {
	var zero T
	if x := r.Results[name]; x != nil {
		if v, ok := x.Value.(T); ok {
			return v
		}
	}
	return zero
}

// isResult reports whether name recorded a T.
func isResult[T any](r *Record, name string) bool {
	if x := r.Results[name]; x != nil {
		_, ok := x.Value.(T)
		return ok
	}
	return false
}

// updateResult replaces the T recorded under name (a value type, such as a LogResult) by f's.
func updateResult[T any](r *Record, name string, f func(T) T) {
	if x := r.Results[name]; x != nil {
		if v, ok := x.Value.(T); ok {
			x.Value = f(v)
		}
	}
}
