package dsl

import (
	"net"
	"regexp"
	"strconv"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"

	"labrun.dev/labrun/schema"
)

// checkNamespaces checks that each declared namespace is a name the API server accepts (an
// RFC 1123 label), which a run finds only when it applies the first object there.
func (d *decoder) checkNamespaces() {
	if len(d.sc.Ephemeral) > 0 && d.target() == "local" {
		d.err(d.rootFieldPos("ephemeralNamespaces"), "ephemeralNamespaces", "ephemeralNamespaces are made on a cluster, and the scenario runs on the local target: add target: \"kube\" (or run with --target kube), or drop them")
	}
	for i, ns := range d.sc.Namespaces {
		if dnsLabelRE.MatchString(ns) || strings.Contains(ns, "${") {
			continue
		}
		pos := d.sc.Pos
		v := d.root.LookupPath(cue.MakePath(cue.Str("namespaces"), cue.Index(i)))
		if p := d.l.valuePos(v); v.Exists() && p.IsValid() {
			pos = p
		}
		d.err(pos, "namespaces."+strconv.Itoa(i), "namespace %q is not a valid Kubernetes name: expected lowercase letters, digits and '-', starting and ending with a letter or digit, at most 63 characters (RFC 1123), e.g. %q",
			ns, strings.Trim(strings.Map(func(r rune) rune {
				switch {
				case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
					return r
				case r >= 'A' && r <= 'Z':
					return r + 'a' - 'A'
				}
				return '-'
			}, ns), "-"))
	}
}

var dnsLabelRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// checkLocalWorld checks what the local target refuses when it creates the scenario's world,
// so that vet says it first: every address is a loopback IP (the target listens on loopback
// only), every initial DNS record is an IP.
func (d *decoder) checkLocalWorld() {
	l := d.sc.Local
	if l == nil {
		return
	}
	loopback := func(field, addr string) {
		if addr != "" {
			if d.sc.AddressPos == nil {
				d.sc.AddressPos = map[string]Pos{}
			}
			d.sc.AddressPos[field] = d.rootFieldPos(field)
		}
		if addr == "" || schema.CheckHostPort(addr) != nil {
			return // checkTimeline reports its shape
		}
		host, _, _ := net.SplitHostPort(addr)
		if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
			d.err(d.rootFieldPos(field), field, "address %q: the local target listens on loopback only: expected a loopback IP (127.0.0.0/8 or ::1), e.g. \"127.0.0.2:8080\"", addr)
		}
	}
	for _, n := range sortedKeys(l.Backends) {
		loopback("local.backends."+n+".address", l.Backends[n].Address)
	}
	for _, n := range sortedKeys(l.Blackholes) {
		loopback("local.blackholes."+n+".address", l.Blackholes[n].Address)
	}
	if l.DNS == nil {
		return
	}
	loopback("local.dns.address", l.DNS.Address)
	zone := strings.ToLower(strings.TrimSuffix(l.DNS.Zone, "."))
	for _, host := range sortedKeys(l.DNS.Records) {
		// As the lab DNS server takes a record's name: one in the zone, or a single label
		// relative to it; any other would be refused when the run starts.
		if h := strings.ToLower(strings.TrimSuffix(strings.TrimSpace(host), ".")); zone != "" && h != zone && !strings.HasSuffix(h, "."+zone) && strings.Contains(h, ".") {
			pos := d.rootFieldPos("local.dns.records")
			if f, ok := d.root.LookupPath(cue.MakePath(cue.Str("local"), cue.Str("dns"), cue.Str("records"), cue.Str(host))).Source().(*ast.Field); ok {
				pos = d.l.posOf(f.Label.Pos())
			}
			d.err(pos, quotePath([]string{"local", "dns", "records", host}), "record %q is not in the lab zone %q: the lab DNS answers only for names in its zone; expected a name ending in .%s, or a single label (taken relative to the zone)", host, zone, zone)
		}
		for i, a := range l.DNS.Records[host] {
			if net.ParseIP(a) != nil {
				continue
			}
			pos := d.sc.Pos
			v := d.root.LookupPath(cue.MakePath(cue.Str("local"), cue.Str("dns"), cue.Str("records"), cue.Str(host), cue.Index(i)))
			if p := d.l.valuePos(v); v.Exists() && p.IsValid() {
				pos = p
			}
			d.err(pos, quotePath([]string{"local", "dns", "records", host})+"."+strconv.Itoa(i),
				"expected an IPv4 or IPv6 address, got %q", a)
		}
	}
}
