package schema

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
)

// DNS is the dns step: the records of one host name in the lab DNS server.
type DNS struct {
	Host      string     `json:"host"`
	Addresses []string   `json:"addresses"`
	Server    *HostsFile `json:"server,omitempty"`
}

// HostsFile is a CoreDNS hosts file written through a writer container.
type HostsFile struct {
	PodRef
	File string `json:"file,omitempty"`
}

var dnsKind = Kind{
	Usage: "set the records of one host name in the lab DNS server",
	New:   func() Params { return new(DNS) },
}

// Check: IP addresses, a host name, and on the local target a host of the lab zone.
func (p *DNS) Check(c Checker) {
	for i, a := range p.Addresses {
		if c.Templated(fmt.Sprintf("addresses.%d", i)) {
			continue
		}
		if _, err := netip.ParseAddr(a); err != nil {
			c.Errorf(fmt.Sprintf("addresses.%d", i), "expected an IPv4 or IPv6 address, got %q", a)
		}
	}
	h := strings.TrimSuffix(strings.TrimSpace(p.Host), ".")
	if c.Templated("host") {
		return
	}
	if h == "" || strings.ContainsAny(p.Host, " \t\r\n#") {
		c.Errorf("host", "expected a host name such as \"gslb.lab.internal\", got %q", p.Host)
		return
	}
	if p.Server == nil {
		if l := c.Local(); l != nil && l.DNS != nil {
			zone := strings.ToLower(strings.TrimSuffix(l.DNS.Zone, "."))
			lh := strings.ToLower(h)
			if lh != zone && !strings.HasSuffix(lh, "."+zone) && strings.Contains(lh, ".") {
				c.Errorf("host", "host %q is not in the lab zone %q: expected a name ending in .%s, or a single label", p.Host, zone, zone)
			}
		}
	} else if p.Server.Pod == "" && p.Server.Selector == "" {
		c.Errorf("server", "server needs pod or selector: the pod whose writer container holds the hosts file")
	}
}

// Plan: a write.
func (p *DNS) Plan() Plan { return Plan{} }

// Needs a hosts file in a pod (server), or the local lab zone.
func (p *DNS) Needs() Need {
	if p.Server != nil {
		return Need{CapHostsFile, DriverDNS}
	}
	return Need{CapLocalDNS, DriverDNS}
}

// Mutates the hosts file's namespace.
func (p *DNS) Mutates(ns func(string) string) Mutation {
	if p.Server == nil {
		return Mutation{}
	}
	return Mutation{Namespaces: []string{ns(p.Server.Namespace)}}
}

// Summary: host → addresses.
func (p *DNS) Summary() string {
	return fmt.Sprintf("%s → %s", p.Host, strings.Join(p.Addresses, ","))
}

// Run sets the records.
func (p *DNS) Run(ctx context.Context, rt Runtime) error {
	q := *p
	if q.Server != nil {
		srv := *q.Server
		srv.Namespace = rt.Namespace(srv.Namespace)
		q.Server = &srv
	}
	return rt.Target().DNS.SetRecords(ctx, q)
}
