package envoy

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"labrun.dev/labrun/envoy/xdstype"
)

// A config dump is {"configs":[{"@type":"type.googleapis.com/envoy.admin.v3.<Kind>ConfigDump",
// …}, …]} in snake_case proto JSON. With ?resource= Envoy instead lists the resources
// themselves ("@type": "…ClustersConfigDump.DynamicCluster", …); both shapes are read.

// resourceKind says where one kind of resource sits in a config dump.
type resourceKind struct {
	noun     string
	dumpType string     // suffix of the section's @type
	lists    []string   // lists in the section holding wrappers
	paths    [][]string // where the resource sits in a wrapper, first present wins
	nameKey  string     // the resource's name field
	warming  string     // the list whose resources Envoy does not use yet
	// states name the state of a resource found at each of paths that Envoy does not use
	// (""): a listener's warming_state (not yet in effect) and draining_state (on its way out).
	states []string
}

var (
	clusterKind = resourceKind{
		noun:     "cluster",
		dumpType: "ClustersConfigDump",
		lists:    []string{"static_clusters", "dynamic_active_clusters", "dynamic_warming_clusters"},
		paths:    [][]string{{"cluster"}},
		nameKey:  "name",
		warming:  "dynamic_warming_clusters",
	}
	listenerKind = resourceKind{
		noun:     "listener",
		dumpType: "ListenersConfigDump",
		lists:    []string{"static_listeners", "dynamic_listeners"},
		paths:    [][]string{{"listener"}, {"active_state", "listener"}, {"warming_state", "listener"}, {"draining_state", "listener"}},
		nameKey:  "name",
		states:   []string{"", "", "warming", "draining"},
	}
	routeKind = resourceKind{
		noun:     "route config",
		dumpType: "RoutesConfigDump",
		lists:    []string{"static_route_configs", "dynamic_route_configs"},
		paths:    [][]string{{"route_config"}},
		nameKey:  "name",
	}
	endpointsKind = resourceKind{
		noun:     "endpoint config",
		dumpType: "EndpointsConfigDump",
		lists:    []string{"static_endpoint_configs", "dynamic_endpoint_configs"},
		paths:    [][]string{{"endpoint_config"}},
		nameKey:  "cluster_name",
	}
)

// DumpCluster returns the cluster called name from a /config_dump (static or dynamic active),
// as decoded JSON. When there is none the error wraps [ErrNotFound] and names the clusters that
// do exist, closest first; so does one that is only warming (dynamic_warming_clusters: Envoy
// does not use it yet, and its config read as the cluster's would say what is not in effect).
func DumpCluster(dump []byte, name string) (map[string]any, error) {
	return dumpFind(dump, name, clusterKind)
}

// DumpListener returns the listener called name ("0.0.0.0_8080", "virtualOutbound") from a
// /config_dump: a static listener, or a dynamic one's active state. One that is only warming
// (Envoy does not use it yet) or only draining (Envoy is removing it) is not found, the error
// saying which: read as the listener's, its config would say what is not in effect.
func DumpListener(dump []byte, name string) (map[string]any, error) {
	return dumpFind(dump, name, listenerKind)
}

// DumpRoute returns the route configuration called name ("8080",
// "backend.conn-lab.svc.cluster.local:8080") from a /config_dump.
func DumpRoute(dump []byte, name string) (map[string]any, error) {
	return dumpFind(dump, name, routeKind)
}

// DumpEndpoints returns the ClusterLoadAssignment of cluster from a /config_dump taken with
// ?include_eds (EndpointsConfigDump).
func DumpEndpoints(dump []byte, cluster string) (map[string]any, error) {
	return dumpFind(dump, cluster, endpointsKind)
}

// DumpClusterEndpoints returns the ClusterLoadAssignment of cluster: from the EDS part of a
// /config_dump taken with ?include_eds, else, for a cluster that carries its endpoints itself
// (STATIC, STRICT_DNS, LOGICAL_DNS), its load_assignment. An EDS cluster without an assignment
// in the dump is an error that says so.
func DumpClusterEndpoints(dump []byte, cluster string) (map[string]any, error) {
	eds, err := DumpEndpoints(dump, cluster)
	if err == nil || !errors.Is(err, ErrNotFound) {
		return eds, err
	}
	return ClusterEndpoints(dump, cluster)
}

// ClusterEndpoints returns the load_assignment of the cluster called name in dump (the dump
// has no EDS part for it): the endpoints of a cluster that carries them itself.
func ClusterEndpoints(dump []byte, name string) (map[string]any, error) {
	c, err := DumpCluster(dump, name)
	if err != nil {
		return nil, err
	}
	if la, ok := c["load_assignment"].(map[string]any); ok {
		return la, nil
	}
	typ, _ := c["type"].(string)
	if typ == "EDS" || typ == "" {
		return nil, absent(fmt.Sprintf("no endpoints of cluster %q in the config dump: it is an EDS cluster and the dump's EDS part (include_eds) has no assignment for it (has istiod sent its endpoints yet? a Service without ready pods has none)", name))
	}
	return nil, absent(fmt.Sprintf("cluster %q (%s) carries no load_assignment", name, typ))
}

func dumpFind(dump []byte, name string, kind resourceKind) (map[string]any, error) {
	var found map[string]any
	notInEffect := ""
	names, dynamic, err := dumpEach(dump, kind, func(n string, r map[string]any, state string) bool {
		if n != name {
			return true
		}
		if state != "" {
			notInEffect = state // an active one may follow (a ?resource= dump's order is Envoy's)
			return true
		}
		found = r
		return false
	})
	if err != nil {
		return nil, err
	}
	if found != nil {
		return found, nil
	}
	switch notInEffect {
	case "warming":
		where := kind.warming
		if where == "" {
			where = "warming_state"
		}
		return nil, absent(fmt.Sprintf("%s %q is warming in the config dump (%s), not active: Envoy does not use it yet (it waits for its endpoints or secrets from istiod), so its config says nothing of what is in effect; read it once it is active (a config step with until, or a wait before it)",
			kind.noun, name, where))
	case "draining":
		return nil, absent(fmt.Sprintf("%s %q is draining in the config dump (draining_state), not active: Envoy is removing it (istiod no longer sends it) and takes no new connection on it, so its config says nothing of what is in effect",
			kind.noun, name))
	}
	return nil, missing(kind.noun, name, names, dynamic)
}

// DumpNames lists the names of one kind of resource in a /config_dump ("clusters", "listeners",
// "routes": route configurations), in the dump's order: static first when the dump lists them
// first, as Envoy does. An empty dump ({}, which Envoy prints when nothing matches) has none.
func DumpNames(dump []byte, kind string) ([]string, error) {
	k, ok := kindsByPlural[kind]
	if !ok {
		return nil, fmt.Errorf("config dump: no resource kind %q: names lists clusters, listeners or routes", kind)
	}
	configs, err := dumpConfigs(dump)
	if err != nil {
		return nil, err
	}
	names, _ := configsEach(configs, k, func(string, map[string]any, string) bool { return true })
	if names == nil {
		names = []string{}
	}
	if !hasXDS(configs) {
		// What istiod sends is dynamic; a proxy that holds none of it has not been configured
		// yet (or the admin is not an xDS-fed proxy's): a list read now says nothing of what
		// istiod sends, and a claim that a name is absent from it would hold whatever istiod does.
		held := fmt.Sprintf("%d %s, all static", len(names), kind)
		switch len(names) {
		case 0:
			held = "no " + strings.TrimSuffix(kind, "s") + " at all"
		case 1:
			held = "1 " + strings.TrimSuffix(kind, "s") + ", static"
		}
		err = fmt.Errorf("config dump: it holds no resource from xDS (%s): istiod has not pushed this proxy its config yet, so its list of %s says nothing of what istiod sends; read it once the proxy is configured (a config step with until, or a wait before it)",
			held, kind)
	}
	return names, err
}

// hasXDS reports whether a /config_dump's sections hold any resource that came from xDS: an
// entry of a dynamic_* list in any of them, or a ?resource= entry of a Dynamic type.
func hasXDS(configs []any) bool {
	for _, c := range configs {
		section, ok := c.(map[string]any)
		if !ok {
			continue
		}
		if typ, _ := section["@type"].(string); strings.Contains(typ, ".Dynamic") {
			return true
		}
		for key, v := range section {
			if items, ok := v.([]any); ok && len(items) > 0 && strings.HasPrefix(key, "dynamic_") {
				return true
			}
		}
	}
	return false
}

// kindsByPlural maps what a names query is written as to the kind.
var kindsByPlural = map[string]resourceKind{
	"clusters":  clusterKind,
	"listeners": listenerKind,
	"routes":    routeKind,
}

// dumpEach calls yield with every resource of kind in the dump, until it returns false; it
// returns the names seen and how many of them came from xDS (dynamic lists). A dump that is
// an empty object is a dump without resources: Envoy prints {} for a ?resource= query that
// matches nothing, and a proxy that istiod has not pushed yet has no dynamic resources.
func dumpEach(dump []byte, kind resourceKind, yield func(name string, r map[string]any, state string) bool) (names []string, dynamic int, err error) {
	configs, err := dumpConfigs(dump)
	if err != nil {
		return nil, 0, err
	}
	names, dynamic = configsEach(configs, kind, yield)
	return names, dynamic, nil
}

// dumpConfigs decodes a /config_dump into its sections; an empty object has none.
func dumpConfigs(dump []byte) ([]any, error) {
	const op = "config dump"
	var doc map[string]any
	if err := json.Unmarshal(dump, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w (output starts %q)", op, err, truncate(dump, 60))
	}
	configs, ok := doc["configs"].([]any)
	if !ok && len(doc) > 0 {
		return nil, fmt.Errorf("%s: no \"configs\" array (is this /config_dump?)", op)
	}
	return configs, nil
}

// configsEach is dumpEach over a dump's decoded sections; yield is told the state of a resource
// Envoy does not use ("" for one in effect): "warming" in the kind's warming list or a
// listener's warming_state, "draining" in its draining_state.
func configsEach(configs []any, kind resourceKind, yield func(name string, r map[string]any, state string) bool) (names []string, dynamic int) {
	stop := false
	consider := func(wrapper map[string]any, isDynamic, warming bool) {
		for i, p := range kind.paths {
			r, ok := walk(wrapper, p).(map[string]any)
			if !ok {
				continue
			}
			n, _ := r[kind.nameKey].(string)
			names = append(names, n)
			if isDynamic {
				dynamic++
			}
			state := ""
			switch {
			case warming:
				state = "warming"
			case i < len(kind.states):
				state = kind.states[i]
			}
			stop = !yield(n, r, state)
			return
		}
	}
	for _, c := range configs {
		section, ok := c.(map[string]any)
		if !ok {
			continue
		}
		typ, _ := section["@type"].(string)
		switch {
		case strings.HasSuffix(typ, "."+kind.dumpType):
			for _, list := range kind.lists {
				items, _ := section[list].([]any)
				for _, it := range items {
					if w, ok := it.(map[string]any); ok {
						consider(w, strings.HasPrefix(list, "dynamic_"), list == kind.warming)
						if stop {
							return names, dynamic
						}
					}
				}
			}
		case strings.Contains(typ, "."+kind.dumpType+"."): // ?resource= form
			consider(section, strings.Contains(typ, "."+kind.dumpType+".Dynamic"), false)
			if stop {
				return names, dynamic
			}
		}
	}
	return names, dynamic
}

// missing says that the resource want is not in a dump that holds have (dynamic of them from
// xDS): how many there are and the closest names, or that istiod has pushed nothing yet.
func missing(noun, want string, have []string, dynamic int) error {
	plural := noun + "s"
	switch {
	case len(have) == 0:
		return absent(fmt.Sprintf("no %s %q in the config dump: it holds no %s at all (has istiod pushed this proxy its config yet?)",
			noun, want, plural))
	case dynamic == 0:
		return absent(fmt.Sprintf("no %s %q in the config dump (%d %s, all static: istiod has not pushed this proxy its config yet)",
			noun, want, len(have), plural))
	}
	c := closest(want, have)
	const show = 3
	if len(c) > show {
		c = c[:show]
	}
	q := make([]string, len(c))
	for i, n := range c {
		q[i] = strconv.Quote(n)
	}
	if len(have) == 1 {
		plural = noun
	}
	msg := fmt.Sprintf("no %s %q in the config dump (%d %s; did you mean %s?)", noun, want, len(have), plural, strings.Join(q, ", "))
	if h := xdstype.NameHint(strings.TrimSuffix(noun, " config"), want); h != "" {
		msg += ": " + h
	}
	return absent(msg)
}

// absent is a lookup error that wraps [ErrNotFound] without repeating "not found".
type absent string

func (e absent) Error() string { return string(e) }
func (e absent) Unwrap() error { return ErrNotFound }

func walk(v any, path []string) any {
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// ReadConfig is what a config step records of resource, one resource of a config dump decoded
// from JSON (or the whole dump) whose kind is "cluster", "listener", "route", "endpoints" or
// "dump" ("" for a value of no Envoy type, e.g. a list of names): resource as Envoy wrote it,
// 64-bit integers as numbers (xdstype.Normalize), the value at path in it read through Envoy's
// types (checked against the type; a left-out field reads as its default), and with seconds
// every Duration as a number of seconds. It returns the value and the normalized resource.
func ReadConfig(resource any, kind, path string, seconds bool) (value, normalized any, err error) {
	t := xdstype.Resource(kind)
	normalized = xdstype.Normalize(resource, t)
	value = normalized
	vt := t
	if path != "" {
		if value, err = QueryTyped(normalized, t, path); err != nil {
			return nil, normalized, err
		}
		if t != nil {
			vt, _ = t.At(path)
		}
	}
	if seconds {
		value = xdstype.DurationsAsSeconds(value, vt)
	}
	return value, normalized, nil
}

// Query follows a path into JSON-like values (maps, slices, as encoding/json decodes them), in
// the grammar of xdstype.ParsePath: "circuit_breakers.thresholds.0.max_connections",
// "circuit_breakers.thresholds[0].max_connections", `virtual_hosts["x:80"].routes[-1]`,
// "endpoints[locality.zone=b]". A key that contains dots may be quoted
// (`typed_extension_protocol_options."envoy.extensions.upstreams.http.v3.HttpProtocolOptions"`);
// unquoted, the segments are joined back greedily when no key matches a single one, so the
// quotes are optional. The empty path is v itself. A missing key or index, or a selection that
// matches no item or several, is an error wrapping [ErrNotFound] that names the part that is
// missing and what exists there. Query knows no types: [QueryTyped] reads through Envoy's.
func Query(v any, path string) (any, error) {
	return QueryTyped(v, nil, path)
}

// QueryTyped is Query through the type t of v (xdstype: a cluster, a listener, …), which v
// should be normalized as: a field t lacks is an error with did-you-mean, and an unset message
// or wrapper along the path reads as nil.
func QueryTyped(v any, t *xdstype.Type, path string) (any, error) {
	r, err := xdstype.Select(v, t, path)
	if pe, ok := err.(*xdstype.PathError); ok {
		if pe.Missing {
			return nil, fmt.Errorf("query %s: %s: %w", path, pe.Msg, ErrNotFound)
		}
		return nil, fmt.Errorf("query %s: %s", path, pe.Msg)
	}
	return r, err
}

// DurationsAsSeconds returns v (decoded JSON) with every string that is a protobuf Duration
// ("0.500s") replaced by its number of seconds (0.5); maps and lists are copied, v is not
// changed. Other strings stay as they are: "500ms" is not how Envoy prints a Duration. With
// Envoy's types, xdstype.DurationsAsSeconds converts only the fields that are Durations.
func DurationsAsSeconds(v any) any { return xdstype.DurationsAsSeconds(v, nil) }
