package interp

import (
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/schema"
)

// targetValueContradictions say how the local endpoints rec's targetValues hold (backends.<name>,
// blackholes.<name>: what expressions read as backends.a.address) contradict the scenario sc
// or themselves: the local target serves each endpoint the scenario declares, on the address
// it fixes (its host, and its port unless 0), and gives expressions its address, host, port
// and url as one (driver/local endpointOf); no two listen on one address. A record whose
// backends.a was edited to read b's address made fortio.ips[backends.a.address] == 1 replay
// PASSED though the client reached b. Records without the section (another target's, or made
// before it was kept) are not checked.
func targetValueContradictions(rec *Record, sc *dsl.Scenario) []string {
	if sc.Local == nil || rec.TargetValues == nil {
		return nil
	}
	var msgs []string
	owner := map[string]string{} // address → the endpoint that listens on it
	for _, sec := range []struct {
		name  string
		fixed map[string]string
	}{
		{"backends", addresses(sc.Local.Backends, func(b schema.Backend) string { return b.Address })},
		{"blackholes", addresses(sc.Local.Blackholes, func(b schema.Blackhole) string { return b.Address })},
	} {
		raw, ok := rec.TargetValues[sec.name]
		if !ok {
			continue
		}
		var eps map[string]*schema.Endpoint
		b, err := json.Marshal(raw)
		if err == nil {
			err = json.Unmarshal(b, &eps)
		}
		if err != nil {
			msgs = append(msgs, fmt.Sprintf("targetValues.%s is not a map of endpoints (address, host, port, url): %v", sec.name, err))
			continue
		}
		for _, name := range slices.Sorted(maps.Keys(sec.fixed)) {
			at := fmt.Sprintf("targetValues.%s.%s", sec.name, name)
			ep := eps[name]
			if ep == nil {
				msgs = append(msgs, fmt.Sprintf("%s is missing, but the scenario declares %s %s, which the local target serves", at, sec.name[:len(sec.name)-1], name))
				continue
			}
			if want := sec.fixed[name]; want != "" && !strings.Contains(want, "${") {
				host, port, err := net.SplitHostPort(want)
				if err != nil {
					host, port = want, "0"
				}
				if ep.Host != host || port != "0" && strconv.FormatFloat(ep.Port, 'f', -1, 64) != port {
					anyPort := ""
					if port == "0" {
						anyPort = " (port 0: any)"
					}
					msgs = append(msgs, fmt.Sprintf("%s.address is %s, but the scenario fixes %s %s at %s%s", at, ep.Address, sec.name[:len(sec.name)-1], name, want, anyPort))
				}
			}
		}
		for _, name := range slices.Sorted(maps.Keys(eps)) {
			at := fmt.Sprintf("targetValues.%s.%s", sec.name, name)
			ep := eps[name]
			if ep == nil {
				continue // a null entry: see Record.NullEntries
			}
			if _, ok := sec.fixed[name]; !ok {
				msgs = append(msgs, fmt.Sprintf("%s is there, but the scenario declares no %s %s", at, sec.name[:len(sec.name)-1], name))
			}
			hp := net.JoinHostPort(ep.Host, strconv.FormatFloat(ep.Port, 'f', -1, 64))
			switch {
			case ep.Address != hp:
				msgs = append(msgs, fmt.Sprintf("%s.address is %s, but its host and port are %s and %s", at, ep.Address, ep.Host, strconv.FormatFloat(ep.Port, 'f', -1, 64)))
			case ep.URL != "http://"+hp:
				msgs = append(msgs, fmt.Sprintf("%s.url is %s, but its address is %s", at, ep.URL, ep.Address))
			}
			if o, ok := owner[ep.Address]; ok {
				msgs = append(msgs, fmt.Sprintf("%s.address is %s, the address of %s too, but no two endpoints listen on one address", at, ep.Address, o))
			} else {
				owner[ep.Address] = at
			}
		}
	}
	return append(msgs, dnsValueContradictions(rec, sc)...)
}

// dnsValueContradictions say how the lab DNS zone rec's targetValues hold (dns: zone,
// address, host, port) contradicts the scenario's zone (its name, as the server normalizes
// it, and the address it fixes) or itself.
func dnsValueContradictions(rec *Record, sc *dsl.Scenario) []string {
	raw, ok := rec.TargetValues["dns"]
	if !ok || sc.Local.DNS == nil {
		return nil
	}
	var got struct {
		Zone, Address, Host string
		Port                float64
	}
	b, err := json.Marshal(raw)
	if err == nil {
		err = json.Unmarshal(b, &got)
	}
	if err != nil {
		return []string{fmt.Sprintf("targetValues.dns is not a zone (zone, address, host, port): %v", err)}
	}
	var msgs []string
	spec := sc.Local.DNS
	if zone := strings.ToLower(strings.TrimSuffix(strings.TrimSpace(spec.Zone), ".")); !strings.Contains(zone, "${") && got.Zone != zone {
		msgs = append(msgs, fmt.Sprintf("targetValues.dns.zone is %q, but the scenario's zone is %q", got.Zone, zone))
	}
	port := strconv.FormatFloat(got.Port, 'f', -1, 64)
	if hp := net.JoinHostPort(got.Host, port); got.Address != hp {
		msgs = append(msgs, fmt.Sprintf("targetValues.dns.address is %s, but its host and port are %s and %s", got.Address, got.Host, port))
	}
	if want := spec.Address; want != "" && !strings.Contains(want, "${") {
		host, wport, err := net.SplitHostPort(want)
		if err != nil {
			host, wport = want, "0"
		}
		if got.Host != host || wport != "0" && port != wport {
			msgs = append(msgs, fmt.Sprintf("targetValues.dns.address is %s, but the scenario fixes its zone's server at %s", got.Address, want))
		}
	}
	return msgs
}

// addresses are the addresses the scenario gives its endpoints, by name ("" when it fixes none).
func addresses[T any](m map[string]T, address func(T) string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = address(v)
	}
	return out
}
