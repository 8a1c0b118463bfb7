package dsl

import (
	"slices"
	"strings"

	"labrun.dev/labrun/schema"
)

// lintDNSUnchanged warns (LintDNSUnchanged) of a dns step on the local target that sets a name
// of local.dns to the very addresses its record gives it, where no other dns step of the
// scenario sets that name (so none may have changed it before): the "flip" changes nothing,
// every client stays where it was, and a claim that one was not moved by the flip
// (keys(ka.ips) == [backends.a.address]) holds of it as of a run with no flip at all. A flip
// back to the record's addresses after another dns step of the name is not warned of.
func (d *decoder) lintDNSUnchanged(warn func(s *Step, field, code, format string, args ...any)) {
	l := d.sc.Local
	if l == nil || l.DNS == nil || d.target() != "local" {
		return
	}
	if _, ok := d.sc.LintIgnore[LintDNSUnchanged]; ok {
		return
	}
	zone := zoneOf(l.DNS)
	records := map[string][]string{}
	for k, v := range l.DNS.Records {
		records[inZone(k, zone)] = v
	}
	steps := map[string][]*Step{} // the dns steps of each name
	for _, ph := range d.sc.Phases() {
		Walk(ph.Steps, func(s *Step) {
			if p, ok := s.Params.(*schema.DNS); ok && p.Server == nil {
				h := p.Host
				if !HasInterpolation(h) {
					h = inZone(h, zone)
				}
				steps[h] = append(steps[h], s)
			}
		})
	}
	for _, h := range sortedKeys(steps) {
		ss := steps[h]
		rec, ok := records[h]
		if len(ss) != 1 || !ok || len(rec) == 0 || HasInterpolation(h) {
			continue
		}
		s := ss[0]
		p := s.Params.(*schema.DNS)
		if slices.ContainsFunc(p.Addresses, HasInterpolation) || !sameSet(p.Addresses, rec) {
			continue
		}
		warn(s, "addresses", LintDNSUnchanged, "the dns step sets %s to %s, the addresses its record in local.dns gives it already, and no other dns step sets it: the flip changes nothing, every client stays where it was, and a claim that one was not moved by the flip holds of it as of a run with no flip; set the addresses the name moves to", h, strings.Join(p.Addresses, ", "))
	}
}

// sameSet says whether a and b hold the same strings, in any order and number.
func sameSet(a, b []string) bool {
	as, bs := slices.Clone(a), slices.Clone(b)
	slices.Sort(as)
	slices.Sort(bs)
	return slices.Equal(slices.Compact(as), slices.Compact(bs))
}
