package envoy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/schema"
)

// ErrNotFound is wrapped by the errors of lookups (a cluster in /clusters, a resource in a
// config dump, a path in [Query]) whose target is absent, as opposed to unreadable input.
var ErrNotFound = errors.New("not found")

// Clusters parses /clusters, in text form ("<cluster>::<host>::<stat>::<value>" lines) or JSON
// form (?format=json: cluster_statuses[].host_statuses[], uint64s as strings, zero values and
// false flags omitted), and returns the hosts of exactly cluster sorted by address (IP, then
// port; other addresses by text). A cluster that exists with no hosts gives an empty slice; a
// cluster that does not exist is an error wrapping [ErrNotFound] that lists the clusters that
// do, closest first.
//
// Host.Health is Envoy's health_flags text ("healthy", "/failed_outlier_check", …; the JSON
// form is rendered the same way). Host.Healthy is true when the host has no flag but
// /pending_dynamic_removal: a degraded host (/degraded_*) counts as not healthy.
func Clusters(data []byte, cluster string) ([]schema.Host, error) {
	if cluster == "" {
		return nil, errors.New("clusters: no cluster name given")
	}
	t := trimSpace(data)
	if len(t) > 0 && t[0] == '{' {
		return jsonClusters(data, cluster)
	}
	return textClusters(data, cluster)
}

func textClusters(data []byte, cluster string) ([]schema.Host, error) {
	prefix := []byte(cluster + "::")
	found := false
	var hosts []*schema.Host
	byAddr := map[string]*schema.Host{}
	flagged := map[*schema.Host]bool{}
	for off := 0; off < len(data); {
		end := bytes.IndexByte(data[off:], '\n')
		if end < 0 {
			end = len(data)
		} else {
			end += off
		}
		line := trimSpace(data[off:end])
		off = end + 1
		if !bytes.HasPrefix(line, prefix) {
			continue
		}
		found = true
		addr, key, val, ok := splitHostLine(line[len(prefix):])
		if !ok {
			continue // a cluster-level line (observability_name, default_priority::…, outlier::…)
		}
		h := byAddr[addr]
		if h == nil {
			h = &schema.Host{Address: addr}
			byAddr[addr] = h
			hosts = append(hosts, h)
		}
		num := func() float64 {
			f, err := strconv.ParseFloat(val, 64)
			if err != nil {
				return 0
			}
			return f
		}
		switch key {
		case "cx_active":
			h.CxActive = num()
		case "cx_total":
			h.CxTotal = num()
		case "cx_connect_fail":
			h.CxFail = num()
		case "rq_active":
			h.RqActive = num()
		case "rq_total":
			h.RqTotal = num()
		case "rq_error":
			h.RqError = num()
		case "weight":
			h.Weight = num()
		case "hostname":
			h.Hostname = val
		case "health_flags":
			h.Health = val
			h.Healthy = healthyFlags(val)
			flagged[h] = true
		}
	}
	if !found {
		return nil, notFound("clusters", "cluster", cluster, textClusterNames(data))
	}
	for _, h := range hosts {
		if !flagged[h] {
			// Envoy writes health_flags for every host: without it the output was cut short,
			// and the host read as not healthy (Healthy false, Health "") whatever it was.
			return nil, fmt.Errorf("clusters: host %s of cluster %q has no health_flags line (Envoy writes one for every host; was the output cut short?): its health is unknown", h.Address, cluster)
		}
	}
	return sortedHosts(hosts), nil
}

// splitHostLine splits "<address>::<stat>::<value>" (address "10.0.0.1:80", "[fd00::1]:80",
// "envoy://listener/id", a pipe path such as "./etc/istio/proxy/XDS"). Cluster-level lines
// ("default_priority::max_connections::1", "outlier::success_rate_average::-1") are refused:
// their first part is a bare word, which no address is.
func splitHostLine(rest []byte) (addr, key, val string, ok bool) {
	var a []byte
	if len(rest) > 0 && rest[0] == '[' {
		j := bytes.IndexByte(rest, ']')
		if j < 0 {
			return "", "", "", false
		}
		k := bytes.Index(rest[j:], []byte("::"))
		if k < 0 {
			return "", "", "", false
		}
		a, rest = rest[:j+k], rest[j+k+2:]
	} else {
		k := bytes.Index(rest, []byte("::"))
		if k < 0 {
			return "", "", "", false
		}
		a, rest = rest[:k], rest[k+2:]
		if bytes.IndexAny(a, ":/.@") < 0 { // default_priority, outlier, observability_name, …
			return "", "", "", false
		}
	}
	k := bytes.Index(rest, []byte("::"))
	if k < 0 {
		return "", "", "", false
	}
	return string(a), string(rest[:k]), string(trimSpace(rest[k+2:])), true
}

// textClusterNames lists the cluster names of a text /clusters dump, in order of appearance.
func textClusterNames(data []byte) []string {
	var names []string
	seen := map[string]bool{}
	for line := range bytes.SplitSeq(data, []byte("\n")) {
		line = trimSpace(line)
		if k := bytes.Index(line, []byte("::")); k > 0 {
			if n := string(line[:k]); !seen[n] {
				seen[n] = true
				names = append(names, n)
			}
		}
	}
	return names
}

// healthFlagOrder is Envoy's order of health flags (Host::HealthFlag bits), as health_flags
// prints them: the names vet holds a claim's flags to.
var healthFlagOrder = schema.HealthFlagNames

func healthyFlags(flags string) bool {
	for f := range strings.SplitSeq(flags, "/") {
		if f != "" && f != "healthy" && f != "pending_dynamic_removal" {
			return false
		}
	}
	return true
}

type jsonClusterDoc struct {
	ClusterStatuses []struct {
		Name         string `json:"name"`
		HostStatuses []struct {
			Address struct {
				SocketAddress *struct {
					Address   string          `json:"address"`
					PortValue json.RawMessage `json:"port_value"`
					NamedPort string          `json:"named_port"`
				} `json:"socket_address"`
				Pipe *struct {
					Path string `json:"path"`
				} `json:"pipe"`
				EnvoyInternalAddress *struct {
					ServerListenerName string `json:"server_listener_name"`
					EndpointID         string `json:"endpoint_id"`
				} `json:"envoy_internal_address"`
			} `json:"address"`
			Stats []struct {
				Name  string          `json:"name"`
				Value json.RawMessage `json:"value"`
			} `json:"stats"`
			HealthStatus map[string]json.RawMessage `json:"health_status"`
			Weight       json.RawMessage            `json:"weight"`
			Hostname     string                     `json:"hostname"`
		} `json:"host_statuses"`
	} `json:"cluster_statuses"`
}

func jsonClusters(data []byte, cluster string) ([]schema.Host, error) {
	var doc jsonClusterDoc
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("clusters json: %w", err)
	}
	var names []string
	for _, cs := range doc.ClusterStatuses {
		names = append(names, cs.Name)
		if cs.Name != cluster {
			continue
		}
		hosts := make([]*schema.Host, 0, len(cs.HostStatuses))
		for _, hs := range cs.HostStatuses {
			h := &schema.Host{Hostname: hs.Hostname, Weight: jsonNumber(hs.Weight)}
			switch a := hs.Address; {
			case a.SocketAddress != nil:
				port := string(bytes.Trim(a.SocketAddress.PortValue, `"`))
				if port == "" {
					port = a.SocketAddress.NamedPort
				}
				if port == "" {
					port = "0"
				}
				h.Address = hostPort(a.SocketAddress.Address, port)
			case a.Pipe != nil:
				h.Address = a.Pipe.Path
			case a.EnvoyInternalAddress != nil:
				h.Address = "envoy://" + a.EnvoyInternalAddress.ServerListenerName + "/" + a.EnvoyInternalAddress.EndpointID
			}
			for _, s := range hs.Stats {
				v := jsonNumber(s.Value)
				switch s.Name {
				case "cx_active":
					h.CxActive = v
				case "cx_total":
					h.CxTotal = v
				case "cx_connect_fail":
					h.CxFail = v
				case "rq_active":
					h.RqActive = v
				case "rq_total":
					h.RqTotal = v
				case "rq_error":
					h.RqError = v
				}
			}
			h.Health = jsonHealthFlags(hs.HealthStatus)
			h.Healthy = healthyFlags(h.Health)
			hosts = append(hosts, h)
		}
		return sortedHosts(hosts), nil
	}
	return nil, notFound("clusters", "cluster", cluster, names)
}

// jsonHealthFlags renders a JSON host health_status as the text form's health_flags.
func jsonHealthFlags(hs map[string]json.RawMessage) string {
	set := map[string]bool{}
	isTrue := func(k string) bool { return string(hs[k]) == "true" }
	set["failed_active_hc"] = isTrue("failed_active_health_check")
	set["failed_outlier_check"] = isTrue("failed_outlier_check")
	set["degraded_active_hc"] = isTrue("failed_active_degraded_check")
	set["pending_dynamic_removal"] = isTrue("pending_dynamic_removal")
	set["pending_active_hc"] = isTrue("pending_active_hc")
	set["excluded_via_immediate_hc_fail"] = isTrue("excluded_via_immediate_hc_fail")
	set["active_hc_timeout"] = isTrue("active_hc_timeout")
	switch strings.Trim(string(hs["eds_health_status"]), `"`) {
	case "UNHEALTHY", "TIMEOUT":
		set["failed_eds_health"] = true
	case "DEGRADED":
		set["degraded_eds_health"] = true
	case "DRAINING":
		set["eds_status_draining"] = true
	}
	var b strings.Builder
	for _, f := range healthFlagOrder {
		if set[f] {
			b.WriteString("/" + f)
		}
	}
	if b.Len() == 0 {
		return "healthy"
	}
	return b.String()
}

// jsonNumber reads a proto-JSON number, which uint64s print as a string; absent is 0.
func jsonNumber(raw json.RawMessage) float64 {
	s := strings.Trim(string(bytes.TrimSpace(raw)), `"`)
	if s == "" {
		return 0
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0
	}
	return f
}

func hostPort(host, port string) string {
	if strings.IndexByte(host, ':') >= 0 {
		return "[" + host + "]:" + port
	}
	return host + ":" + port
}

// sortedHosts sorts by address: IP:port addresses numerically, others after them by text.
func sortedHosts(hosts []*schema.Host) []schema.Host {
	slices.SortStableFunc(hosts, func(a, b *schema.Host) int {
		pa, ea := netip.ParseAddrPort(a.Address)
		pb, eb := netip.ParseAddrPort(b.Address)
		switch {
		case ea == nil && eb == nil:
			return pa.Compare(pb)
		case ea == nil:
			return -1
		case eb == nil:
			return 1
		}
		return strings.Compare(a.Address, b.Address)
	})
	out := make([]schema.Host, len(hosts))
	for i, h := range hosts {
		out[i] = *h
	}
	return out
}

// notFound reports a missing name with the names that do exist, closest first.
func notFound(op, kind, want string, have []string) error {
	if len(have) == 0 {
		return fmt.Errorf("%s: %s %q: %w (there are no %ss)", op, kind, want, ErrNotFound, kind)
	}
	c := closest(want, have)
	const show = 8
	more := ""
	if len(c) > show {
		more = fmt.Sprintf(" and %d more", len(c)-show)
		c = c[:show]
	}
	q := make([]string, len(c))
	for i, n := range c {
		q[i] = strconv.Quote(n)
	}
	return fmt.Errorf("%s: %s %q: %w; closest of the %d that exist: %s%s",
		op, kind, want, ErrNotFound, len(have), strings.Join(q, ", "), more)
}

// closest orders names by how likely each is what want meant: names that contain want (or
// that want contains) first, shortest difference first; then by edit distance.
func closest(want string, names []string) []string {
	type cand struct {
		name  string
		group int
		dist  int
	}
	seen := map[string]bool{}
	var cs []cand
	for _, n := range names {
		if seen[n] {
			continue
		}
		seen[n] = true
		c := cand{name: n, group: 1}
		if strings.Contains(n, want) || strings.Contains(want, n) {
			c.group = 0
			c.dist = abs(len(n) - len(want))
		} else {
			c.dist = dsl.EditDistance(want, n)
		}
		cs = append(cs, c)
	}
	slices.SortStableFunc(cs, func(a, b cand) int {
		if a.group != b.group {
			return a.group - b.group
		}
		if a.dist != b.dist {
			return a.dist - b.dist
		}
		return strings.Compare(a.name, b.name)
	})
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.name
	}
	return out
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
