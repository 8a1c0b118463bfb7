package dsl

import (
	"fmt"
	"time"
)

// lintChangeAfterLoads warns (LintChangeAfterLoads) of a dns or kill step beside loads in a
// parallel block at an offset planned after every load of the scenario has ended (each beside
// it a second or more past its planned end, every other one ended before the block), with no
// command or process that may send at or after it: the flip, or the kill, that the block puts
// beside the loads changes nothing any of them sees. The newcomer's flip at: "5s" beside a 3 s
// load: keys(ka.ips) == [backends.a.address] ("the keepalive client stayed on a") holds of a
// run whose flip came after the load, as of one with no flip at all.
func (d *decoder) lintChangeAfterLoads() {
	sc := d.sc
	if _, ok := sc.LintIgnore[LintChangeAfterLoads]; ok {
		return
	}
	var plan map[string]*Entry
	for _, s := range d.order {
		if (s.Kind != "dns" && s.Kind != "kill") || !s.HasAt {
			continue
		}
		if p := d.parent[s]; p == nil || p.Kind != "parallel" {
			continue
		}
		if plan == nil {
			plan = map[string]*Entry{}
			p := planTimes(sc)
			for i := range p.Entries {
				plan[p.Entries[i].Path] = &p.Entries[i]
			}
		}
		var last *Step
		var end time.Duration
		ok := true
		for _, o := range d.order {
			if o == s || (sendsNoRequest[o.Kind] && o.Kind != "load") {
				continue
			}
			if o.Kind != "load" {
				// A command or process that may run at or after the change may send.
				if !d.endedBefore(o, s) {
					ok = false
					break
				}
				continue
			}
			if d.endedBefore(o, s) {
				continue
			}
			e, after := plannedAfter(plan, d.parent, o, s)
			if !after {
				ok = false
				break
			}
			if last == nil || e > end {
				last, end = o, e
			}
		}
		if !ok || last == nil {
			continue
		}
		what := "the flip"
		if s.Kind == "kill" {
			what = "the kill"
		}
		d.l.warnings = append(d.l.warnings, &Warning{Pos: d.stepLitPos(s, "at"), Code: LintChangeAfterLoads, Scenario: sc.Name, Msg: fmt.Sprintf("%s step %s at %s is planned after load %s beside it has ended (planned to end at %s in the block, and given a second for its last requests), and no load runs after it: %s changes nothing any load sees, so a claim that a load was not moved by it (no request failed, every connection stayed on one address) holds whatever it does; move it inside the load's duration (at: %q), or make the load longer", s.Kind, s.Shown, fmtDur(s.At), last.Shown, fmtDur(end), what, fmtDur(end/2))})
	}
}
