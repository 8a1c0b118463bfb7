package dsl

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"labrun.dev/labrun/envoy/xdstype"
	"labrun.dev/labrun/schema"
)

// stepChain is a read of a step's value by a chain of selectors (after.retry_policy.num_retries,
// l.filter_chains[0].name), optionally inside duration(...): the step and the selectors.
var stepChain = regexp.MustCompile(`^(?:duration\(\s*)?([A-Za-z_][A-Za-z0-9_]*)((?:\??\.[A-Za-z_@][A-Za-z0-9_]*|\[[^\]]*\])+)\s*\)?$`)

// lintIstioDefault warns of a claim (an expectation, an assert, a config step's until) that a
// field of a config step's value equals what istiod writes there where the Istio object that
// sets it leaves it out (xdstype.IstioDefaults: route.retry_policy.num_retries == 2, Istio's
// default attempts; cluster.connect_timeout == "10s"), read after a step that changes Istio
// configuration (LintIstioDefault), where the claim cannot tell the object from the default:
//   - an object of the kind the scenario applies sets the field to that default value
//     (attempts: 2): the claim holds with the field removed too, and before the push;
//   - no object sets the field, and nothing waits for istiod's push of the change (a config
//     step's until that is such a claim holds at its first read), or every read of the step's
//     value is such a claim: nothing the step reads shows the object. A claim that an object
//     leaves a field at istiod's default, beside one about what it sets, is left alone.
func (d *decoder) lintIstioDefault() {
	sc := d.sc
	if _, ok := sc.LintIgnore[LintIstioDefault]; ok || d.target() != "kube" {
		return
	}
	// after are the Istio changes a config step reads after: only there is a claim meant to
	// show a change (a read before it may claim the default on purpose). waited says a step
	// that waits for istiod's push (reflects, until, a repeat's until over config) ran after
	// the change and before the read, or is the read.
	after := map[*Step][]configChange{}
	waited := map[*Step]bool{}
	var changes []configChange
	var waits []*Step
	for _, s := range d.order {
		if s.Phase != PhaseSetup && s.Phase != PhaseSteps {
			continue
		}
		changes = append(changes, d.configChanges(s)...)
		switch p := s.Params.(type) {
		case *schema.Repeat:
			if p.Until != "" {
				waits = append(waits, s)
			}
		case *schema.Config:
			for _, c := range changes {
				if d.endedBefore(c.step, s) {
					after[s] = append(after[s], c)
				}
			}
			if p.Reflects != nil {
				waits = append(waits, s)
			}
			if len(after[s]) > 0 {
				last := after[s][len(after[s])-1].step
				waited[s] = p.Reflects != nil || d.inRepeatUntil(s) || slices.ContainsFunc(waits, func(w *Step) bool { return d.endedBefore(last, w) && d.endedBefore(w, s) })
			}
			if p.Until != "" {
				waits = append(waits, s) // for the steps after it; its own until is judged below
			}
		}
	}
	if len(after) == 0 {
		return
	}
	type claim struct {
		e    *Expr
		side *Explain
		dc   defaultClaim
	}
	var claims []claim
	reads, hits := map[*Step]int{}, map[*Step]int{}
	find := func(e *Expr, until *Step) {
		for _, r := range e.Reads {
			if s := sc.names[r.Step]; s != nil && r.Via == "" {
				reads[s]++
			}
		}
		// walk finds the claims that hold of a default in x, which holds where they do: each
		// side of a conjunction, either of a disjunction (a || b holds where a does, whatever
		// b), a negated comparison as its opposite (!(n > 2) is n <= 2; !(a && b) is !a || !b).
		// neg says x is under an odd number of negations, or that one of its disjuncts is
		// (then a claim of a field an object sets to another value holds of the default too).
		var walk func(x *Explain, neg, or bool)
		walk = func(x *Explain, neg, or bool) {
			if x == nil {
				return
			}
			op := x.Op
			switch op {
			case "!", "not":
				walk(x.Left, !neg, or)
				return
			case "&&", "and", "||", "or":
				disj := (op == "||" || op == "or") != neg
				walk(x.Left, neg, or || disj)
				walk(x.Right, neg, or || disj)
				return
			case "==", "!=", "<", "<=", ">", ">=", "in", "not in":
				if x.Left == nil || x.Right == nil {
					return
				}
			default:
				return
			}
			if neg {
				op = negatedComparison[op]
			}
			for i, side := range []*Explain{x.Left, x.Right} {
				other := []*Explain{x.Right, x.Left}[i]
				if i == 1 && (x.Op == "in" || x.Op == "not in") {
					break // the read is the list: not a field's value
				}
				if dc, ok := d.istioDefaultClaim(side.Src, other.Src, op, i == 0, or, after); ok {
					dc.until = until == dc.step
					if neg {
						dc.cmp = "!(" + x.Source() + ")"
					}
					dc.or = or
					claims = append(claims, claim{e, side, dc})
					hits[dc.step]++
					return
				}
			}
		}
		walk(e.Explain, false, false)
	}
	for _, e := range sc.Expect {
		find(e, nil)
	}
	for _, s := range d.order {
		if s.Expr != nil {
			find(s.Expr, s)
		}
	}
	for _, c := range claims {
		s := c.dc.step
		if c.dc.atDefault == "" && !c.dc.until && !c.dc.or && waited[s] && reads[s] > hits[s] {
			continue // the object's arrival is waited for and its effect claimed elsewhere
		}
		pos := c.e.Pos
		if j := strings.Index(c.e.Src, c.side.Src); j >= 0 {
			pos = exprPos(c.e.Pos, c.e.Src, utf8.RuneCountInString(c.e.Src[:j]))
		}
		d.l.warnings = append(d.l.warnings, &Warning{Pos: pos, Code: LintIstioDefault, Scenario: sc.Name,
			Msg: fmt.Sprintf("in expression %q: %s", c.e.Src, c.dc.message(d.sc.Dir))})
	}
}

// defaultClaim is a claim that a field of a config step's value is what istiod writes there
// by default.
type defaultClaim struct {
	step    *Step
	written string // the default, as an expression writes it
	field   string
	def     xdstype.IstioDefault
	change  configChange // the change of the default's kind (else the last) it reads after
	// atDefault, when set, says which object sets the field to the default value.
	atDefault string
	// until says the claim is the step's own until.
	until bool
	// cmp is the claim's comparison as written (read, operator, other side) when it is not
	// read == default: one that holds of the default too (num_retries < 3, != 5, in [1, 2]).
	cmp string
	// where are the values of the swept vars the claim holds of the default at ("n is 2").
	where []string
	// or says the claim is one side of a disjunction (a || b, !(a && b)), which holds where it
	// does; otherSet, that an object sets the field to a value it does not hold of.
	or       bool
	otherSet string
}

// istioDefaultClaim finds in read op lit (lit op read where readLeft is false), read a chain
// below a config step's value and lit a literal (a list of them for in; a var of the
// scenario's, by its value), a claim that holds of what istiod writes into the field by
// default: read == default, and any other comparison the default satisfies (num_retries < 3,
// num_retries != 5, num_retries in [1, 2], max_connections >= 1024), which holds before the
// push and without the object as well.
//
// Where lit reads a swept var (== vars.n, n swept over [2, 3]), each of its values is tried
// (in the objects' ${vars.n} too): a claim that holds of the default at one of them proves
// nothing in that combination's run. Where or is set (the claim is one side of a ||), an
// object that sets the field to another value does not make the claim fail without it.
func (d *decoder) istioDefaultClaim(read, lit, op string, readLeft, or bool, after map[*Step][]configChange) (defaultClaim, bool) {
	for _, bind := range d.sweepBindings(lit) {
		if dc, ok := d.istioDefaultClaimWith(read, lit, op, readLeft, or, bind, after); ok {
			return dc, true
		}
	}
	return defaultClaim{}, false
}

// sweptVarRef is a read of a var in an expression (vars.n).
var sweptVarRef = regexp.MustCompile(`\bvars\.([A-Za-z_][A-Za-z0-9_]*)`)

// objectVarRef is a var in a ${...} of an object's value (${vars.n}).
var objectVarRef = regexp.MustCompile(`\$\{\s*vars\.([A-Za-z_][A-Za-z0-9_]*)\s*\}`)

// sweepBindings are the combinations of the values of the swept vars lit reads (not secret
// ones), at most 64; one nil binding where it reads none.
func (d *decoder) sweepBindings(lit string) []map[string]string {
	out := []map[string]string{nil}
	seen := map[string]bool{}
	for _, m := range sweptVarRef.FindAllStringSubmatch(lit, -1) {
		name := m[1]
		vals, ok := d.sc.Sweep[name]
		if !ok || seen[name] || slices.Contains(d.sc.Secrets, name) || len(vals) == 0 {
			continue
		}
		seen[name] = true
		var next []map[string]string
		for _, b := range out {
			for _, v := range vals {
				nb := map[string]string{name: v}
				for k, x := range b {
					nb[k] = x
				}
				next = append(next, nb)
			}
		}
		if len(next) > 64 {
			break
		}
		out = next
	}
	return out
}

// boundValue is v, an object's value, with the ${vars.x} of a string filled from bind, else
// from the scenario's vars (not secret ones): "${vars.n}" where n is 2 reads "2".
func (d *decoder) boundValue(v any, bind map[string]string) any {
	s, ok := v.(string)
	if !ok || !strings.Contains(s, "${") {
		return v
	}
	return objectVarRef.ReplaceAllStringFunc(s, func(ref string) string {
		name := objectVarRef.FindStringSubmatch(ref)[1]
		if b, ok := bind[name]; ok {
			return b
		}
		if x, ok := d.sc.Vars[name]; ok && !slices.Contains(d.sc.Secrets, name) {
			switch x.(type) {
			case string, float64, int, int64:
				return fmt.Sprint(x)
			}
		}
		return ref
	})
}

func (d *decoder) istioDefaultClaimWith(read, lit, op string, readLeft, or bool, bind map[string]string, after map[*Step][]configChange) (defaultClaim, bool) {
	m := stepChain.FindStringSubmatch(strings.TrimSpace(read))
	if m == nil {
		return defaultClaim{}, false
	}
	isDur := strings.HasPrefix(read, "duration(")
	lits, ok := d.claimLiterals(strings.TrimSpace(lit), op == "in" || op == "not in", bind)
	if !ok {
		return defaultClaim{}, false
	}
	for _, l := range lits {
		if strings.HasPrefix(l, "duration(") != isDur {
			return defaultClaim{}, false
		}
	}
	// holds says whether the claim holds where the field reads v.
	holds := func(v any) bool {
		return claimHolds(op, readLeft, lits, v)
	}
	s := d.sc.names[m[1]]
	if s == nil || len(after[s]) == 0 {
		return defaultClaim{}, false
	}
	p, ok := s.Params.(*schema.Config)
	if !ok {
		return defaultClaim{}, false
	}
	rest := strings.TrimPrefix(strings.ReplaceAll(m[2], "?.", "."), ".")
	def, field, ok := p.IstioDefault(rest)
	if !ok || !holds(def.Value) {
		return defaultClaim{}, false
	}
	dc := defaultClaim{step: s, field: field, def: def}
	for _, k := range sortedKeys(bind) {
		dc.where = append(dc.where, fmt.Sprintf("%s is %s", k, bind[k]))
	}
	if op != "==" || strings.TrimSpace(lit) != lits[0] {
		if readLeft {
			dc.cmp = strings.TrimSpace(read) + " " + op + " " + strings.TrimSpace(lit)
		} else {
			dc.cmp = strings.TrimSpace(lit) + " " + op + " " + strings.TrimSpace(read)
		}
	}
	switch v := def.Value.(type) {
	case string:
		dc.written = strconv.Quote(v)
	case float64:
		dc.written = strconv.FormatFloat(v, 'f', -1, 64)
	}
	changes := after[s]
	dc.change = changes[len(changes)-1]
	set := false
	for _, o := range changes {
		if o.kind != def.Kind {
			continue
		}
		dc.change = o
		if o.obj == nil || o.step.Kind != "apply" {
			continue
		}
		for _, v := range specValues(o.obj["spec"], def.Key()) {
			set = true
			v = d.boundValue(v, bind)
			if istioValueIs(v, def.Value) || (dc.cmp != "" && holds(istioValueAs(v, def.Value))) {
				dc.atDefault = fmt.Sprintf("%s sets %s: %v", o.what, def.Key(), v)
			} else if dc.otherSet == "" {
				dc.otherSet = fmt.Sprintf("%s sets %s: %v", o.what, def.Key(), v)
			}
		}
	}
	if set && dc.atDefault == "" && !or {
		return defaultClaim{}, false // set to another value: the claim fails unless the object changed the field
	}
	if dc.atDefault != "" {
		dc.otherSet = ""
	}
	return dc, true
}

// message says why the claim holds whatever the object says, and what to do.
func (dc defaultClaim) message(dir string) string {
	c := dc.change
	msg := fmt.Sprintf("%s is what istiod writes into %s without a %s's %s (Istio master of 2026-08-27), and ", dc.written, dc.field, dc.def.Kind, dc.def.Field)
	if dc.cmp != "" {
		cmp := dc.cmp
		if len(dc.where) > 0 {
			cmp += ", where " + strings.Join(dc.where, " and ") + " (a value of the sweep: that combination's run proves nothing),"
		}
		if dc.or {
			cmp += " (so the whole claim, one of whose sides it is)"
		}
		msg = fmt.Sprintf("%s holds of %s, what istiod writes into %s without a %s's %s (Istio master of 2026-08-27), and ", cmp, dc.written, dc.field, dc.def.Kind, dc.def.Field)
	} else if dc.or {
		msg = fmt.Sprintf("%s is what istiod writes into %s without a %s's %s (Istio master of 2026-08-27), so the claim, one of whose sides reads it, holds of it, and ", dc.written, dc.field, dc.def.Kind, dc.def.Field)
	}
	changed := fmt.Sprintf("%s %s, %s", c.step.Kind, c.step.Shown, c.step.Pos.Rel(dir))
	if dc.otherSet != "" {
		return msg + fmt.Sprintf("%s, yet %s, read after it (%s), holds the claim whether or not the object reached the proxy: claim the value the object sets alone", dc.otherSet, dc.step.Shown, changed)
	}
	if dc.atDefault != "" {
		msg += fmt.Sprintf("%s: %s, read after it (%s), holds it whether or not the object reached the proxy, and with the field removed; set another value, or read the field before the change too and claim that it changed", dc.atDefault, dc.step.Shown, changed)
	} else {
		msg += fmt.Sprintf("no %s the scenario applies before %s (after %s) sets %s, and nothing it reads there shows the object: the claim holds whatever the objects say, and before istiod's push; wait for the object (reflects) and claim what it sets, or, if the claim is that the objects leave the field, say so with lint: ignore", dc.def.Kind, dc.step.Shown, changed, dc.def.Key())
	}
	if dc.until {
		msg += "; as the step's until, it holds at the step's first read, so the step does not wait for the push"
	}
	return msg
}

// literalEquals reports whether src, an expression's literal (a string in either quotes, a
// number, a duration('…')), is v, a string or a float64 (a Duration's text compares as a
// duration).
func literalEquals(src string, v any) bool {
	if m := durationLit.FindStringSubmatch(src); m != nil {
		s, ok := v.(string)
		if !ok {
			return false
		}
		a, err1 := time.ParseDuration(m[1])
		b, err2 := time.ParseDuration(s)
		return err1 == nil && err2 == nil && a == b
	}
	switch v := v.(type) {
	case string:
		if len(src) >= 2 && (src[0] == '"' || src[0] == '\'') && src[len(src)-1] == src[0] {
			if src[0] == '\'' {
				src = `"` + strings.ReplaceAll(src[1:len(src)-1], `"`, `\"`) + `"`
			}
			u, err := strconv.Unquote(src)
			return err == nil && u == v
		}
	case float64:
		f, err := strconv.ParseFloat(src, 64)
		return err == nil && f == v
	}
	return false
}

// specValues are the values of every field called key in v, an object's spec, at any depth
// (a DestinationRule's connectTimeout in its traffic policy, a subset's or a port's).
func specValues(v any, key string) []any {
	var out []any
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if k == key {
				out = append(out, x)
			} else {
				out = append(out, specValues(x, key)...)
			}
		}
	case []any:
		for _, x := range v {
			out = append(out, specValues(x, key)...)
		}
	}
	return out
}

// istioValueIs reports whether v, an Istio object's value, is def, the value istiod writes
// for the field by default (a string: a duration compares as one; a number).
func istioValueIs(v, def any) bool {
	switch def := def.(type) {
	case string:
		s, ok := v.(string)
		if !ok {
			return false
		}
		a, err1 := time.ParseDuration(s)
		b, err2 := time.ParseDuration(def)
		if err1 == nil && err2 == nil {
			return a == b
		}
		return s == def
	case float64:
		f, err := strconv.ParseFloat(fmt.Sprint(v), 64)
		return err == nil && f == def
	}
	return false
}

// claimLiterals are the literals lit writes: one (a number, a string, a duration('…')), or,
// for in, a list of them ([1, 2]); a var of the scenario's (vars.n) is its value, written as a
// literal (bind's value where it binds the var: one of a sweep's). False when lit is anything
// else (a read, an operation).
func (d *decoder) claimLiterals(lit string, list bool, bind map[string]string) ([]string, bool) {
	one := func(l string) (string, bool) {
		l = strings.TrimSpace(l)
		if name, ok := strings.CutPrefix(l, "vars."); ok {
			if b, ok := bind[name]; ok {
				switch d.sc.VarKinds[name] {
				case "int", "number":
					if _, err := strconv.ParseFloat(b, 64); err == nil {
						return b, true
					}
				case "string", "duration": // a duration var is a string ("3s") where read
					return strconv.Quote(b), true
				}
				return "", false
			}
			v, found := d.sc.Vars[name]
			if !found || slices.Contains(d.sc.Secrets, name) {
				return "", false
			}
			switch v := v.(type) {
			case string:
				return strconv.Quote(v), true
			case float64:
				return strconv.FormatFloat(v, 'f', -1, 64), true
			case int:
				return strconv.Itoa(v), true
			case int64:
				return strconv.FormatInt(v, 10), true
			}
			return "", false
		}
		if durationLit.MatchString(l) {
			return l, true
		}
		if _, err := strconv.ParseFloat(l, 64); err == nil {
			return l, true
		}
		if len(l) >= 2 && (l[0] == '"' || l[0] == '\'') && l[len(l)-1] == l[0] && !strings.ContainsAny(l[1:len(l)-1], "\"'") {
			return l, true
		}
		return "", false
	}
	if !list {
		l, ok := one(lit)
		return []string{l}, ok
	}
	if len(lit) < 2 || lit[0] != '[' || lit[len(lit)-1] != ']' || strings.ContainsAny(lit[1:len(lit)-1], "[]()") {
		return nil, false
	}
	var out []string
	for _, part := range strings.Split(lit[1:len(lit)-1], ",") {
		l, ok := one(part)
		if !ok {
			return nil, false
		}
		out = append(out, l)
	}
	return out, len(out) > 0
}

// negatedComparison is the comparison that holds where the one it is of does not.
var negatedComparison = map[string]string{"==": "!=", "!=": "==", "<": ">=", ">=": "<", ">": "<=", "<=": ">", "in": "not in", "not in": "in"}

// claimHolds reports whether the comparison read op lits[0] (lits[0] op read where readLeft is
// false; read in lits for in) holds where read is v, istiod's default (a string, a float64).
// A comparison it cannot decide (an order of strings) does not hold.
func claimHolds(op string, readLeft bool, lits []string, v any) bool {
	switch op {
	case "in", "not in":
		in := slices.ContainsFunc(lits, func(l string) bool { return literalEquals(l, v) })
		return in == (op == "in")
	case "==":
		return literalEquals(lits[0], v)
	case "!=":
		// Of another kind (a number against a string) the literal is not a value the field
		// reads: that is another mistake, not this one.
		return sameKind(lits[0], v) && !literalEquals(lits[0], v)
	}
	a, b, ok := orderOf(lits[0], v)
	if !ok {
		return false
	}
	if !readLeft {
		a, b = b, a
	}
	// a is the read's value, b the literal's.
	switch op {
	case "<":
		return a < b
	case "<=":
		return a <= b
	case ">":
		return a > b
	case ">=":
		return a >= b
	}
	return false
}

// sameKind reports whether lit, a literal, is of the kind of v, a default: a number of a
// number, a string or a duration('…') of a string.
func sameKind(lit string, v any) bool {
	switch v.(type) {
	case float64:
		_, err := strconv.ParseFloat(lit, 64)
		return err == nil
	case string:
		return durationLit.MatchString(lit) || (len(lit) >= 2 && (lit[0] == '"' || lit[0] == '\''))
	}
	return false
}

// orderOf gives v, the default, and lit as two numbers to compare (a duration in seconds):
// false when they are not both numbers or both durations.
func orderOf(lit string, v any) (float64, float64, bool) {
	if m := durationLit.FindStringSubmatch(lit); m != nil {
		s, ok := v.(string)
		if !ok {
			return 0, 0, false
		}
		a, err1 := time.ParseDuration(s)
		b, err2 := time.ParseDuration(m[1])
		return a.Seconds(), b.Seconds(), err1 == nil && err2 == nil
	}
	if v, ok := v.(float64); ok {
		f, err := strconv.ParseFloat(lit, 64)
		return v, f, err == nil
	}
	return 0, 0, false
}

// istioValueAs is v, an Istio object's value, as a config step reads the field def is the
// default of: a duration's text as is, a number as a float64.
func istioValueAs(v, def any) any {
	if _, ok := def.(float64); ok {
		if f, err := strconv.ParseFloat(fmt.Sprint(v), 64); err == nil {
			return f
		}
		return nil
	}
	return fmt.Sprint(v)
}
