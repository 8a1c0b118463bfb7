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
		var walk func(x *Explain)
		walk = func(x *Explain) {
			if x == nil {
				return
			}
			switch x.Op {
			case "&&", "and":
				walk(x.Left)
				walk(x.Right)
				return
			case "==":
				if x.Left == nil || x.Right == nil {
					return
				}
			default:
				return
			}
			for i, side := range []*Explain{x.Left, x.Right} {
				other := []*Explain{x.Right, x.Left}[i]
				if dc, ok := d.istioDefaultClaim(side.Src, other.Src, after); ok {
					dc.until = until == dc.step
					claims = append(claims, claim{e, side, dc})
					hits[dc.step]++
					return
				}
			}
		}
		walk(e.Explain)
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
		if c.dc.atDefault == "" && !c.dc.until && waited[s] && reads[s] > hits[s] {
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
}

// istioDefaultClaim finds in read == lit, read a chain below a config step's value and lit a
// literal, a claim that the field holds what istiod writes there by default.
func (d *decoder) istioDefaultClaim(read, lit string, after map[*Step][]configChange) (defaultClaim, bool) {
	m := stepChain.FindStringSubmatch(strings.TrimSpace(read))
	if m == nil || strings.HasPrefix(read, "duration(") != strings.HasPrefix(strings.TrimSpace(lit), "duration(") {
		return defaultClaim{}, false
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
	if !ok || !literalEquals(strings.TrimSpace(lit), def.Value) {
		return defaultClaim{}, false
	}
	dc := defaultClaim{step: s, field: field, def: def}
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
			if istioValueIs(v, def.Value) {
				dc.atDefault = fmt.Sprintf("%s sets %s: %v", o.what, def.Key(), v)
			}
		}
	}
	if set && dc.atDefault == "" {
		return defaultClaim{}, false // set to another value: the claim fails unless the object changed the field
	}
	return dc, true
}

// message says why the claim holds whatever the object says, and what to do.
func (dc defaultClaim) message(dir string) string {
	c := dc.change
	msg := fmt.Sprintf("%s is what istiod writes into %s without a %s's %s (Istio master of 2026-08-27), and ", dc.written, dc.field, dc.def.Kind, dc.def.Field)
	changed := fmt.Sprintf("%s %s, %s", c.step.Kind, c.step.Shown, c.step.Pos.Rel(dir))
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
