package interp

import (
	"fmt"
	"reflect"
	"regexp"
	"strings"

	"github.com/expr-lang/expr"

	"labrun.dev/labrun/dsl"
)

// contradictionOnly says why expectation e, false on a mutant (env1) and true on the run
// (env0), is false only because the mutant changed one side of a comparison (==, <=, >=)
// whose two sides read values of the run that it recorded equal, the other side being a
// value the run measured (not a var, a literal or a load's fixed request count): with that
// side changed alike, as a run whose outcome were the mutant's would record both, e holds.
// "" when e fails on the mutant otherwise. The mutant is then no wrong outcome e can tell
// apart, only a record that contradicts itself: delta.rq_5xx == fortio.code503 kills
// "fortio: every request 503" because the backend's delta still counts the recorded 503s,
// while a run where every request answered 503 passes it.
func contradictionOnly(e *dsl.Expr, env0, env1 map[string]any, sc *dsl.Scenario, pair [2]string) string {
	why, _ := contradictionTies(e, env0, env1, sc, pair)
	return why
}

// contradictionTies is contradictionOnly with the ties it found: for each comparison, the
// side the mutant left as recorded and the value a run whose outcome were the mutant's
// would record there.
func contradictionTies(e *dsl.Expr, env0, env1 map[string]any, sc *dsl.Scenario, pair [2]string) (string, []tie) {
	c := &consistent{env0: env0, env1: env1, sc: sc, e: e, deltaPair: pair}
	if held, ok := c.holds(e.Explain, true); !ok || !held || len(c.pairs) == 0 {
		return "", nil
	}
	return strings.Join(c.pairs, "; "), c.ties
}

// tie is one comparison a mutant broke by changing one of two records of one fact: other is
// the side it left as recorded, now the value its changed side has.
type tie struct {
	changed, other string
	now            any
	// mentioned says another expectation's source names other (the textual rule, used
	// where no run with other changed alike can be built).
	mentioned bool
}

type consistent struct {
	env0, env1 map[string]any
	sc         *dsl.Scenario
	e          *dsl.Expr
	// deltaPair are the snapshots a plain delta compares.
	deltaPair [2]string
	pairs     []string
	ties      []tie
}

// holds evaluates x on the mutant, a comparison of two records of one fact, where positive
// (not under a negation), as holding; ok is false when it cannot say.
func (c *consistent) holds(x *dsl.Explain, positive bool) (held, ok bool) {
	if x == nil {
		return false, false
	}
	switch x.Op {
	case "&&", "and":
		l, ok := c.holds(x.Left, positive)
		if !ok || !l {
			return false, ok
		}
		return c.holds(x.Right, positive)
	case "||", "or":
		l, ok := c.holds(x.Left, positive)
		if !ok {
			return false, false
		}
		if l {
			return true, true
		}
		return c.holds(x.Right, positive)
	case "==", "<=", ">=":
		if positive {
			if why := c.pair(x); why != "" {
				c.pairs = append(c.pairs, why)
				return true, true
			}
		}
	}
	return x.Holds(c.env1)
}

// pair says how the mutant broke comparison x's two records of one fact, "" when it did not.
func (c *consistent) pair(x *dsl.Explain) string {
	l, r := x.Left, x.Right
	if l == nil || r == nil || l.Op != "" || r.Op != "" || l.Value() == nil || r.Value() == nil {
		return ""
	}
	l0, okl0 := leafValueIn(l, c.env0)
	r0, okr0 := leafValueIn(r, c.env0)
	l1, okl1 := leafValueIn(l, c.env1)
	r1, okr1 := leafValueIn(r, c.env1)
	if !okl0 || !okr0 || !okl1 || !okr1 || !sameValue(l0, r0) {
		return ""
	}
	// Counts and measures only: two strings recorded equal are most often one name read
	// twice (a pod's IP and the host a proxy holds), and a mutant that changes one of them is
	// a renaming, which the claim rightly ties, not a wrong outcome.
	for _, v := range []any{l0, r0, l1, r1} {
		if _, ok := number(v); !ok {
			return ""
		}
	}
	lc, rc := !sameValue(l0, l1), !sameValue(r0, r1)
	changed, other, was, now := l, r, l0, l1
	switch {
	case lc && !rc:
	case rc && !lc:
		changed, other, was, now = r, l, r0, r1
	default:
		return ""
	}
	if !c.measured(other.Src) || !c.measured(changed.Src) {
		return "" // a value no run can change (a var, a load's fixed request count) tells
	}
	// Two records of one fact come from different steps (a load's 503s, a backend's 5xx
	// delta): two values of one step's record (a load's code200 and its requests, a delta's
	// destroy and destroy_local) are two facts that a claim relates, and the mutants keep
	// each step's record consistent in itself.
	sc, so := c.stepsOf(changed.Src), c.stepsOf(other.Src)
	if len(sc) == 0 || len(so) == 0 {
		return ""
	}
	for s := range sc {
		if so[s] {
			return ""
		}
	}
	if fn, ok := number(now); ok && fn < 0 {
		if fw, _ := number(was); fw >= 0 {
			return "" // a counter that went down (reset): no count of the other side reads so
		}
	}
	// The run where both changed alike must pass the other expectations too: Mutate builds
	// it and judges them (counterpart). Where it cannot, one that reads the other side
	// might fail there, and the mutant is left as killed.
	mentioned := false
	for _, x := range c.sc.Expect {
		if x != c.e && strings.Contains(x.Src, other.Src) {
			mentioned = true
		}
	}
	c.ties = append(c.ties, tie{changed: changed.Src, other: other.Src, now: now, mentioned: mentioned})
	return fmt.Sprintf("%s went from %s to %s while %s, recorded equal to it, stayed %s: a run that recorded %s for both passes it",
		changed.Src, dsl.FormatValue(was), dsl.FormatValue(now), other.Src, dsl.FormatValue(was), dsl.FormatValue(now))
}

// leafValueIn is leaf x's value in env; ok is false when it errs.
func leafValueIn(x *dsl.Explain, env map[string]any) (any, bool) {
	v, err := expr.Run(x.Value(), env)
	return v, err == nil
}

// sameValue compares two values of expressions, numbers by value (an int and a float).
func sameValue(a, b any) bool {
	fa, oka := number(a)
	fb, okb := number(b)
	if oka && okb {
		return fa == fb
	}
	return reflect.DeepEqual(a, b)
}

func number(v any) (float64, bool) {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return float64(rv.Int()), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return float64(rv.Uint()), true
	case reflect.Float32, reflect.Float64:
		return rv.Float(), true
	}
	return 0, false
}

var chainRE = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*(\s*\()?`)

// measured says whether the expression src reads something a run measures: not only vars,
// literals and the request counts of loads told how many requests to make.
func (c *consistent) measured(src string) bool {
	src = quoted.ReplaceAllString(src, `""`)
	for _, m := range chainRE.FindAllString(src, -1) {
		switch {
		case strings.HasSuffix(m, "("), m == "true", m == "false", m == "nil":
			continue // a function's name, a literal
		case m == "vars" || strings.HasPrefix(m, "vars."):
			continue
		}
		if name, ok := strings.CutSuffix(m, ".requests"); ok && fixedRequests(c.sc, name) {
			continue
		}
		return true
	}
	return false
}

var quoted = regexp.MustCompile(`"(\\.|[^"\\])*"|'(\\.|[^'\\])*'`)

var deltaPairRE = regexp.MustCompile(`delta\(\s*("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')\s*,\s*("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')\s*\)`)

// stepsOf are the steps whose records the expression src reads: a step's result by its name,
// a delta its two snapshots, started, ended, outcome and error the step they name.
func (c *consistent) stepsOf(src string) map[string]bool {
	out := map[string]bool{}
	for _, m := range deltaPairRE.FindAllStringSubmatch(src, -1) {
		out[strings.Trim(m[1], `"'`)], out[strings.Trim(m[2], `"'`)] = true, true
	}
	src = deltaPairRE.ReplaceAllString(src, "")
	src = quoted.ReplaceAllString(src, `""`)
	for _, m := range chainRE.FindAllString(src, -1) {
		if strings.HasSuffix(m, "(") {
			continue
		}
		parts := strings.Split(m, ".")
		switch {
		case parts[0] == "delta":
			out[c.deltaPair[0]], out[c.deltaPair[1]] = true, true
		case c.sc.Step(parts[0]) != nil:
			out[parts[0]] = true
		case len(parts) > 1 && (parts[0] == "started" || parts[0] == "ended" || parts[0] == "outcome" || parts[0] == "error"):
			out[parts[1]] = true
		}
	}
	delete(out, "")
	return out
}
