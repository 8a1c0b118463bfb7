package dsl

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// startedDiff is the difference of two steps' starts: the steps' names are the submatches.
var startedDiff = regexp.MustCompile(`^\(?\s*started\.([A-Za-z_][A-Za-z0-9_]*)\s*-\s*started\.([A-Za-z_][A-Za-z0-9_]*)\s*\)?$`)

// durationLit is a duration literal: duration('500ms').
var durationLit = regexp.MustCompile(`^duration\(\s*['"]([^'"]+)['"]\s*\)$`)

// lintAtSiblings warns of an expression (LintAtSiblings) that holds the difference of the starts
// of two children of one parallel block, of different at: offsets, to at least the difference
// of their offsets, exactly (started.b - started.a >= duration('500ms'), a within() from 0.5).
// Each offset counts from the block's start, and each child starts a few µs after its offset
// (one without at: after the block's start), so the difference is the offsets' only to within
// those µs: that claim failed on 5 of 10 correct runs (0.4999 s). Each child's start against
// the block's (started.<block>) holds, and so does a bound with room (within(…, 0.45, 0.55)).
func (d *decoder) lintAtSiblings() {
	sc := d.sc
	if _, ok := sc.LintIgnore[LintAtSiblings]; ok {
		return
	}
	// Only a parallel block's child with an offset makes such a claim: a scenario without one
	// (most) reads no expression for it.
	if !slices.ContainsFunc(d.order, func(s *Step) bool { p := d.parent[s]; return s.At > 0 && p != nil && p.Kind == "parallel" }) {
		return
	}
	exprs := append([]*Expr{}, sc.Expect...)
	for _, s := range d.order {
		if s.Expr != nil {
			exprs = append(exprs, s.Expr)
		}
	}
	for _, e := range exprs {
		if !strings.Contains(e.Src, "started.") {
			continue
		}
		var walk func(x *Explain) bool
		walk = func(x *Explain) bool {
			if x == nil {
				return false
			}
			var diff, bound *Explain
			switch {
			case x.Op == ">=" || x.Op == ">" || x.Op == "==":
				diff, bound = x.Left, x.Right
			case x.Op == "<=" || x.Op == "<":
				diff, bound = x.Right, x.Left
			case x.Call == "within" && len(x.Args) == 3:
				diff, bound = x.Args[0], x.Args[1]
			}
			if diff != nil && bound != nil {
				if msg := d.atSiblingsTight(diff.Src, bound.Src); msg != "" {
					pos := e.Pos
					if i := strings.Index(e.Src, diff.Src); i >= 0 {
						pos = exprPos(e.Pos, e.Src, utf8.RuneCountInString(e.Src[:i]))
					}
					d.l.warnings = append(d.l.warnings, &Warning{Pos: pos, Code: LintAtSiblings, Scenario: sc.Name,
						Msg: fmt.Sprintf("in expression %q: %s", e.Src, msg)})
					return true
				}
			}
			return walk(x.Left) || walk(x.Right)
		}
		walk(e.Explain)
	}
}

// atSiblingsTight says why diff held to at least bound fails on a correct run, or "": diff is
// started.b - started.a of two children of one parallel block, and bound is the difference of
// their offsets.
func (d *decoder) atSiblingsTight(diff, bound string) string {
	m := startedDiff.FindStringSubmatch(strings.TrimSpace(diff))
	if m == nil {
		return ""
	}
	late, early := d.sc.names[m[1]], d.sc.names[m[2]]
	if late == nil || early == nil {
		return ""
	}
	p := d.parent[late]
	if p == nil || p.Kind != "parallel" || d.parent[early] != p || late.At <= early.At {
		return ""
	}
	want := late.At - early.At
	if got, ok := durationOf(strings.TrimSpace(bound)); !ok || got != want {
		return ""
	}
	offset := func(s *Step) string {
		if !s.HasAt {
			return "no at:"
		}
		return "at: " + s.At.String()
	}
	block := "name the block and read started.<its name>"
	if p.Name != "" {
		block = "started." + p.Name
	}
	return fmt.Sprintf("%s (%s) and %s (%s) are children of one parallel block, and each at: counts from the block's start, not from the other's: each starts a few µs after its offset, so started.%s - started.%s can read a few µs under %s on a correct run (seen: 0.4999 s for 500ms); compare each with the block's start (%s), or leave room for those µs",
		early.Name, offset(early), late.Name, offset(late), late.Name, early.Name, want, block)
}

// durationOf reads a bound written as seconds (0.5) or as a duration (duration('500ms')).
func durationOf(src string) (time.Duration, bool) {
	if m := durationLit.FindStringSubmatch(src); m != nil {
		d, err := time.ParseDuration(m[1])
		return d, err == nil
	}
	f, err := strconv.ParseFloat(src, 64)
	if err != nil {
		return 0, false
	}
	return time.Duration(f * float64(time.Second)).Round(time.Microsecond), true
}
