package interp

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/parser"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/schema"
)

// A mutant that fails an expectation only by changing one of two records of one fact
// (delta.rq_200 == fortio.code200, the backend's count doubled, fortio's not) stands for a
// run where both changed alike. Whether the expectations tell that run apart is a question of
// what they mean together, not of how they are written: fortio's 200s doubled to 188 of its
// 200 requests leave it 12 503s, which approx(fortio.code503, 100, 0.3) refuses, though no
// expectation but the tie names fortio.code200. So Mutate builds that run (counterpart): the
// mutant's record with each tie's other side set to the changed side's value, as a run could
// record it (a load's other counts moved to keep its sums), and again for the ties those
// changes break, until none is broken; it judges every expectation on it. One that fails
// there kills the mutant; none: the mutant survives, as no claim can tell the outcome apart.
// A counterpart that cannot be built (a side no setter knows, a record that contradicts
// itself, ties that want one value two ways) falls back to the textual rule: a tie whose
// other side another expectation names is left as killing the mutant.

// maxCounterpartRounds bounds the ties followed from one record to the next.
const maxCounterpartRounds = 6

// counterpart judges the run mutant mr stands for, given the ties its failed expectations
// broke; ok is false when it cannot be built. failed are the expectations that fail on it,
// set what it changed ("fortio.code200 = 188").
func counterpart(mr *Record, sc *dsl.Scenario, env0 map[string]any, pair [2]string, before map[string]bool, ties []tie) (failed, set []string, ok bool) {
	if len(before) > 0 {
		return nil, nil, false // the base contradicts itself: the counterpart's could not be told
	}
	cr, err := cloneRecord(mr)
	if err != nil {
		return nil, nil, false
	}
	done := map[string]any{}
	for range maxCounterpartRounds {
		for _, t := range ties {
			if v, seen := done[t.other]; seen {
				if !sameValue(v, t.now) {
					return nil, nil, false // wanted two ways
				}
				continue
			}
			leaf, want, got, ok := setSide(cr, sc, t.other, t.now, pair)
			if !ok {
				return nil, nil, false
			}
			done[t.other] = t.now
			// What the run could record, which may stop short of the changed side's value
			// (more errors than the load's requests): the tie then fails there too.
			note := leaf + " = " + dsl.FormatValue(got)
			if want != got {
				note += fmt.Sprintf(" (not %s: the run cannot record that beside the rest)", dsl.FormatValue(want))
			}
			set = append(set, note)
		}
		if len(newContradictions(before, cr, sc)) > 0 {
			return nil, nil, false
		}
		env1 := NewJudge(cr, sc).Env()
		ties, failed = nil, nil
		for i, jd := range Rejudge(cr, sc) {
			if jd.Outcome == Passed {
				continue
			}
			if jd.Outcome == Failed && i < len(sc.Expect) {
				if why, ts := contradictionTies(sc.Expect[i], env0, env1, sc, pair); why != "" {
					if !slices.ContainsFunc(ts, func(t tie) bool { _, seen := done[t.other]; return seen }) {
						ties = append(ties, ts...)
						continue
					}
					// Its other side was set and could not be made equal: the tie fails on
					// the run closest to the mutant's outcome.
				}
			}
			failed = append(failed, jd.Src)
		}
		if len(ties) == 0 {
			return failed, set, true
		}
	}
	return nil, nil, false
}

var (
	deltaLeaf     = regexp.MustCompile(`^delta\.(\w+)$`)
	deltaPairLeaf = regexp.MustCompile(`^delta\(\s*("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')\s*,\s*("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')\s*\)\.(\w+)$`)
	fieldLeaf     = regexp.MustCompile(`^(\w+)\.(\w+)$`)
	keyLeaf       = regexp.MustCompile(`^(\w+)\.(codes|flags|details)\[\s*(?:"([^"]*)"|'([^']*)')\s*\]$`)
)

// setSide sets the value side src reads to v in r, as setLeaf does, where src is a leaf or
// the sum or difference of two (fortio.requests + fortio.connections: a duration load's
// requests with the warm-up request of each connection, as its server counts them): the
// first term setLeaf can set takes the value that makes the side v, the other term as r
// records it. leaf is the term it set, want the value it wanted there, got what it holds.
func setSide(r *Record, sc *dsl.Scenario, src string, v any, pair [2]string) (leaf string, want, got float64, ok bool) {
	n, isNum := number(v)
	if !isNum {
		return "", 0, 0, false
	}
	if got, ok := setLeaf(r, src, v, pair); ok {
		return src, n, got, true
	}
	tree, err := parser.Parse(src)
	if err != nil {
		return "", 0, 0, false
	}
	b, isBin := tree.Node.(*ast.BinaryNode)
	if !isBin || (b.Operator != "+" && b.Operator != "-") {
		return "", 0, 0, false
	}
	terms := [2]string{b.Left.String(), b.Right.String()}
	env := NewJudge(r, sc).Env()
	for i, term := range terms {
		o, err := expr.Eval(terms[1-i], env)
		on, isNum := number(o)
		if err != nil || !isNum {
			continue
		}
		switch {
		case b.Operator == "+":
			want = n - on
		case i == 0: // term - o == n
			want = n + on
		default: // o - term == n
			want = on - n
		}
		if got, ok := setLeaf(r, term, want, pair); ok {
			return term, want, got, true
		}
	}
	return "", 0, 0, false
}

// setLeaf sets the value the expression src reads to v in r, as a run could record it: a
// delta by its later snapshot's counter, a snapshot's stat, a load's figure with the load's
// sums kept (changeLoad), a logs step's count of a code, flag or details value with its lines
// (LogResult.Recount). got is the value it has then (a load's count stops at its requests);
// ok is false when src is none of these, or v no number.
func setLeaf(r *Record, src string, v any, pair [2]string) (got float64, ok bool) {
	n, isNum := number(v)
	if !isNum {
		return 0, false
	}
	setDelta := func(a, b, stat string) (float64, bool) {
		sa, sb := r.Snapshot(a), r.Snapshot(b)
		if sa == nil || sb == nil || sb.Counters == nil || n < 0 {
			return 0, false
		}
		if _, ok := sb.Counters[stat]; !ok {
			return 0, false
		}
		sb.Counters[stat] = sa.Counters[stat] + n
		return n, true
	}
	if m := deltaLeaf.FindStringSubmatch(src); m != nil {
		if pair[0] == "" || pair[1] == "" {
			return 0, false
		}
		return setDelta(pair[0], pair[1], m[1])
	}
	if m := deltaPairLeaf.FindStringSubmatch(src); m != nil {
		return setDelta(strings.Trim(m[1], `"'`), strings.Trim(m[2], `"'`), m[3])
	}
	if m := keyLeaf.FindStringSubmatch(src); m != nil {
		key := m[3] + m[4]
		if m[2] == "codes" && loadOf(r, m[1]) != nil {
			src = m[1] + ".code" + strings.Replace(key, "-", "_", 1) // fortio.codes["503"] is fortio.code503
			return setLeaf(r, src, v, pair)
		}
		found := false
		updateResult(r, m[1], func(l schema.LogResult) schema.LogResult {
			found = true
			l, _ = l.Recount(m[2], key, n)
			got = l.Counts(m[2])[key]
			return l
		})
		return got, found
	}
	m := fieldLeaf.FindStringSubmatch(src)
	if m == nil {
		return 0, false
	}
	name, field := m[1], m[2]
	if l := loadOf(r, name); l != nil {
		get := loadFigure(l, field)
		if get == nil {
			return 0, false
		}
		if field == "requests" {
			by := n - l.Requests
			changeLoad(l, field, true, func(x float64) float64 { return x + by })
		} else {
			changeLoad(l, field, false, func(float64) float64 { return n })
		}
		return get(), true
	}
	if sn := r.Snapshot(name); sn != nil {
		for _, st := range []schema.Stats{sn.Counters, sn.Gauges} {
			if _, ok := st[field]; ok {
				st[field] = n
				return n, true
			}
		}
	}
	return 0, false
}

// loadFigure reads field of load l (codeNNN, code_1: its count of that code); nil for a
// field changeLoad does not set.
func loadFigure(l *LoadRecord, field string) func() float64 {
	if code, ok := strings.CutPrefix(field, "code"); ok && code != "" {
		code = strings.Replace(code, "_", "-", 1)
		return func() float64 { return l.Codes[code] }
	}
	p := map[string]*float64{"requests": &l.Requests, "ok": &l.OK, "errors": &l.Errors, "sockets": &l.Sockets,
		"connections": &l.Connections, "qps": &l.QPS, "duration": &l.DurationS, "avg": &l.Avg, "min": &l.Min,
		"max": &l.Max, "p50": &l.P50, "p90": &l.P90, "p99": &l.P99, "p999": &l.P999}[field]
	if p == nil {
		return nil
	}
	return func() float64 { return *p }
}

// counterpartNote says what the run a mutant stands for recorded, for its verdict.
func counterpartNote(set []string) string {
	return fmt.Sprintf("judged as the run that records %s", strings.Join(set, ", "))
}
