package report

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/interp"
)

// Expected renders the normalised result of a run, as the expected-output blocks of a
// Markdown document hold it. It keeps what an experiment shows — the outcome, which response
// codes the load saw, the shape of every delta an expression reads (+, 0, or reset) and the
// verdict of each expectation — and leaves out what differs between clusters and runs: pod
// names, IPs, the cluster domain, absolute counter values, timings.
func Expected(rec *interp.Record, sc *dsl.Scenario) string {
	var b strings.Builder
	fmt.Fprintf(&b, "scenario %s: %s\n", rec.Scenario, rec.Outcome)
	loads := rec.Loads()
	for _, n := range sortedKeys(loads) {
		l := loads[n]
		codes := sortedKeys(l.Codes)
		fmt.Fprintf(&b, "load %s: %s requests, codes %s\n", n, dsl.FormatValue(l.Requests), strings.Join(codes, " "))
	}
	for _, line := range deltaShapes(rec, sc) {
		b.WriteString(line + "\n")
	}
	for _, j := range rec.Expectations {
		fmt.Fprintf(&b, "expect %s: %s\n", j.Src, j.Outcome)
	}
	return b.String()
}

// deltaShapes lists, for every delta an expression of the scenario reads, its shape.
func deltaShapes(rec *interp.Record, sc *dsl.Scenario) []string {
	var exprs []*dsl.Expr
	exprs = append(exprs, sc.Expect...)
	for _, ph := range sc.Phases() {
		dsl.Walk(ph.Steps, func(s *dsl.Step) {
			if s.Expr != nil {
				exprs = append(exprs, s.Expr)
			}
		})
	}
	first, last := defaultPair(rec, sc)
	seen := map[string]bool{}
	var out []string
	for _, e := range exprs {
		for _, r := range e.Refs {
			a, b := r.From, r.To
			switch r.Kind {
			case dsl.RefDelta:
				a, b = first, last
			case dsl.RefDeltaPair:
			default:
				continue
			}
			key := a + "→" + b + " " + r.Stat
			if seen[key] || a == "" {
				continue
			}
			seen[key] = true
			out = append(out, fmt.Sprintf("delta %s %s: %s", a+"→"+b, r.Stat, shape(rec.Snapshot(a), rec.Snapshot(b), r.Stat)))
		}
	}
	sort.Strings(out)
	return out
}

func defaultPair(rec *interp.Record, sc *dsl.Scenario) (string, string) {
	var taken []string
	for _, s := range sc.Snapshots {
		if rec.Snapshot(s.Name) != nil {
			taken = append(taken, s.Name)
		}
	}
	if len(taken) < 2 {
		return "", ""
	}
	sort.SliceStable(taken, func(i, j int) bool { return rec.Snapshot(taken[i]).At.Before(rec.Snapshot(taken[j]).At) })
	return taken[0], taken[len(taken)-1]
}

func shape(a, b *interp.SnapshotRecord, stat string) string {
	if a == nil || b == nil {
		return "not taken"
	}
	va, inA := a.Counters[stat]
	vb, inB := b.Counters[stat]
	switch {
	case !inA && !inB:
		return "absent"
	case !inB:
		return "gone"
	case vb < va:
		return "reset"
	case vb == va:
		return "0"
	}
	return "+"
}

// Tolerance is an expected-block line "~ EXPR VALUE ±N%": the value of EXPR (a timing, say)
// must be within N percent of VALUE.
type Tolerance struct {
	Expr  string
	Value float64
	Pct   float64
	// Line is the line's index in its block.
	Line int
	// Off is the byte offset of Expr in the line.
	Off int
}

var toleranceRE = regexp.MustCompile(`^~\s+(.+?)\s+(-?[0-9.]+(?:e[+-]?[0-9]+)?)\s+±\s*([0-9.]+)%\s*$`)

// ParseTolerance parses a tolerance line; ok is false for other lines.
func ParseTolerance(line string) (Tolerance, bool) {
	trimmed := strings.TrimSpace(line)
	ix := toleranceRE.FindStringSubmatchIndex(trimmed)
	if ix == nil {
		return Tolerance{}, false
	}
	m := toleranceRE.FindStringSubmatch(trimmed)
	v, err1 := strconv.ParseFloat(m[2], 64)
	p, err2 := strconv.ParseFloat(m[3], 64)
	if err1 != nil || err2 != nil {
		return Tolerance{}, false
	}
	lead := len(line) - len(strings.TrimLeft(line, " \t\r\n\v\f"))
	return Tolerance{Expr: m[1], Value: v, Pct: p, Off: lead + ix[2]}, true
}

// toleranceValueRE is VALUE of a tolerance line, as toleranceRE reads it.
var toleranceValueRE = regexp.MustCompile(`^-?[0-9.]+(?:e[+-]?[0-9]+)?$`)

// ToleranceProblem says what is wrong with a line of an expected block that starts with "~"
// but is not a tolerance line ("~ EXPR VALUE ±N%"): off is the byte offset in line of the
// part at fault. ok is false for a tolerance line and for a line that does not start with ~.
// Before, such a line (~ fortio.avg 3000 10%, ±-5%, ±5 without %, ~fortio.avg) was compared
// as text with the run's lines: vet accepted it, and labrun doc failed after the run with a
// diff that did not say why.
func ToleranceProblem(line string) (off int, msg string, ok bool) {
	trimmed := strings.TrimSpace(line)
	if !strings.HasPrefix(trimmed, "~") {
		return 0, "", false
	}
	if _, isTol := ParseTolerance(line); isTol {
		return 0, "", false
	}
	lead := len(line) - len(strings.TrimLeft(line, " \t\r\n\v\f"))
	const want = "expected ~ EXPR VALUE ±N%, e.g. ~ fortio.avg 3000 ±10%"
	if len(trimmed) == 1 || !unicode.IsSpace(rune(trimmed[1])) {
		return lead, fmt.Sprintf("%s: a tolerance line has a space after its ~: %s", trimmed, want), true
	}
	pm := strings.LastIndex(trimmed, "±")
	if pm < 0 {
		last := strings.LastIndexFunc(trimmed, unicode.IsSpace) + 1
		if strings.HasSuffix(trimmed, "%") {
			return lead + last, fmt.Sprintf("%s: the tolerance %s has no ±: write ±%s; %s", trimmed, trimmed[last:], strings.TrimPrefix(trimmed[last:], "+-"), want), true
		}
		return lead + last, fmt.Sprintf("%s: no tolerance ±N%% at the end of the line: %s", trimmed, want), true
	}
	pct := strings.TrimSpace(trimmed[pm+len("±"):])
	if !strings.HasSuffix(pct, "%") {
		return lead + pm, fmt.Sprintf("%s: the tolerance ±%s is in percent: write ±%s%%; %s", trimmed, pct, pct, want), true
	}
	if p, err := strconv.ParseFloat(strings.TrimSuffix(pct, "%"), 64); err != nil || p < 0 || strings.ContainsAny(pct, "+-eEnNiI") {
		return lead + pm, fmt.Sprintf("%s: ±%s is not a tolerance: expected a number of percent, 0 or more, e.g. ±10%%", trimmed, pct), true
	}
	before := strings.TrimRightFunc(trimmed[:pm], unicode.IsSpace)
	v := strings.LastIndexFunc(before, unicode.IsSpace) + 1
	value := before[v:]
	_, err := strconv.ParseFloat(value, 64)
	number := err == nil && toleranceValueRE.MatchString(value)
	if v <= 1 || strings.TrimSpace(before[1:v]) == "" {
		if number {
			return lead, fmt.Sprintf("%s: no expression before the value %s: %s", trimmed, value, want), true
		}
		return lead + pm, fmt.Sprintf("%s: no value between %s and ±%s: %s", trimmed, value, pct, want), true
	}
	if !number {
		return lead + v, fmt.Sprintf("%s: the value %s is not a finite number: expected the value EXPR is to be near, such as 3000 or 0.25, before ±%s", trimmed, value, pct), true
	}
	return lead, fmt.Sprintf("%s: %s", trimmed, want), true
}

// Compile compiles the tolerance's expression against the scenario's names, typed as its
// expectations are (sc.CompileValue); pos is the position of the byte before the expression
// (Pos of its line, column before it), where errors are said.
//
// A tolerance of 100% or more is refused: it accepts 0 (and, above 100%, values of the other
// sign) whatever VALUE is, so "~ fortio.code200 5 ±100%" held of a load with no 200 at all.
func (t Tolerance) Compile(sc *dsl.Scenario, pos dsl.Pos) (*dsl.Expr, error) {
	if t.Pct >= 100 && t.Value != 0 {
		at := pos
		at.Col++
		return nil, &dsl.Error{Pos: at, Msg: fmt.Sprintf("%s: a tolerance of 100%% or more accepts 0 (no such value at all) whatever %s is, so the line cannot tell the value from its absence; write a tolerance under 100%%, e.g. ±10%%", t.String(), strconv.FormatFloat(t.Value, 'f', -1, 64))}
	}
	return sc.CompileValue(t.Expr, pos)
}

// Check evaluates the tolerance's expression over a recorded run; it returns the value and
// whether it is within the tolerance.
func (t Tolerance) Check(rec *interp.Record, sc *dsl.Scenario) (float64, bool, error) {
	e, err := t.Compile(sc, dsl.Pos{})
	if err != nil {
		return 0, false, err
	}
	out, err := interp.NewJudge(rec, sc).Value(e)
	if err != nil {
		return 0, false, err
	}
	var v float64
	switch x := out.(type) {
	case float64:
		v = x
	case int:
		v = float64(x)
	default:
		return 0, false, fmt.Errorf("%s is %T, not a number", t.Expr, out)
	}
	return v, math.Abs(v-t.Value) <= math.Abs(t.Value)*t.Pct/100, nil
}

// String writes the tolerance line back with a new value.
func (t Tolerance) String() string {
	return fmt.Sprintf("~ %s %s ±%s%%", t.Expr, strconv.FormatFloat(t.Value, 'f', -1, 64), strconv.FormatFloat(t.Pct, 'f', -1, 64))
}
