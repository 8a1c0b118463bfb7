package envoy

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
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
}

var (
	clusterKind = resourceKind{
		noun:     "cluster",
		dumpType: "ClustersConfigDump",
		lists:    []string{"static_clusters", "dynamic_active_clusters", "dynamic_warming_clusters"},
		paths:    [][]string{{"cluster"}},
		nameKey:  "name",
	}
	listenerKind = resourceKind{
		noun:     "listener",
		dumpType: "ListenersConfigDump",
		lists:    []string{"static_listeners", "dynamic_listeners"},
		paths:    [][]string{{"listener"}, {"active_state", "listener"}, {"warming_state", "listener"}, {"draining_state", "listener"}},
		nameKey:  "name",
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

// DumpCluster returns the cluster called name from a /config_dump (static, dynamic active or
// warming), as decoded JSON. When there is none the error wraps [ErrNotFound] and names the
// clusters that do exist, closest first.
func DumpCluster(dump []byte, name string) (map[string]any, error) {
	return dumpFind(dump, name, clusterKind)
}

// DumpListener returns the listener called name ("0.0.0.0_8080", "virtualOutbound") from a
// /config_dump: a static listener, or a dynamic one's active state (else its warming, else its
// draining state).
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

func dumpFind(dump []byte, name string, kind resourceKind) (map[string]any, error) {
	var found map[string]any
	names, dynamic, err := dumpEach(dump, kind, func(n string, r map[string]any) bool {
		if n == name {
			found = r
			return false
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	if found != nil {
		return found, nil
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
	names, _, err := dumpEach(dump, k, func(string, map[string]any) bool { return true })
	if names == nil && err == nil {
		names = []string{}
	}
	return names, err
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
func dumpEach(dump []byte, kind resourceKind, yield func(name string, r map[string]any) bool) (names []string, dynamic int, err error) {
	const op = "config dump"
	var doc map[string]any
	if err := json.Unmarshal(dump, &doc); err != nil {
		return nil, 0, fmt.Errorf("%s: %w (output starts %q)", op, err, truncate(dump, 60))
	}
	configs, ok := doc["configs"].([]any)
	if !ok {
		if len(doc) == 0 {
			return nil, 0, nil
		}
		return nil, 0, fmt.Errorf("%s: no \"configs\" array (is this /config_dump?)", op)
	}
	stop := false
	consider := func(wrapper map[string]any, isDynamic bool) {
		for _, p := range kind.paths {
			r, ok := walk(wrapper, p).(map[string]any)
			if !ok {
				continue
			}
			n, _ := r[kind.nameKey].(string)
			names = append(names, n)
			if isDynamic {
				dynamic++
			}
			stop = !yield(n, r)
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
						consider(w, strings.HasPrefix(list, "dynamic_"))
						if stop {
							return names, dynamic, nil
						}
					}
				}
			}
		case strings.Contains(typ, "."+kind.dumpType+"."): // ?resource= form
			consider(section, strings.Contains(typ, "."+kind.dumpType+".Dynamic"))
			if stop {
				return names, dynamic, nil
			}
		}
	}
	return names, dynamic, nil
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
	return absent(fmt.Sprintf("no %s %q in the config dump (%d %s; did you mean %s?)",
		noun, want, len(have), plural, strings.Join(q, ", ")))
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

// Query follows a dotted path into JSON-like values (maps, slices, as encoding/json decodes
// them). Segments are map keys or list indexes: "circuit_breakers.thresholds.0.max_connections"
// or "circuit_breakers.thresholds[0].max_connections". A key that contains dots may be quoted
// (`typed_extension_protocol_options."envoy.extensions.upstreams.http.v3.HttpProtocolOptions"`);
// unquoted, the segments are joined back greedily when no key matches a single one, so the
// quotes are optional. The empty path is v itself. A missing key or index is an error wrapping
// [ErrNotFound] that names the part that is missing and what exists there.
func Query(v any, path string) (any, error) {
	segs, err := splitPath(path)
	if err != nil {
		return nil, err
	}
	budget := 10000 // backtracking over dotted keys is bounded, whatever the data
	return query(v, segs, 0, path, &budget)
}

// query resolves segs[i:] from cur. When both "b" and "b.c" are keys, it tries the single
// segment first and falls back to the joined one, so either spelling that leads somewhere wins;
// on failure it reports the first way tried.
func query(cur any, segs []pathSeg, i int, path string, budget *int) (any, error) {
	if i == len(segs) {
		return cur, nil
	}
	if *budget--; *budget < 0 {
		return nil, fmt.Errorf("query %s: too many ways to read the dotted keys: %w", path, ErrNotFound)
	}
	s := segs[i]
	at := joinPath(segs[:i])
	switch c := cur.(type) {
	case map[string]any:
		var firstErr error
		if next, ok := c[s.text]; ok {
			r, err := query(next, segs, i+1, path, budget)
			if err == nil {
				return r, nil
			}
			firstErr = err
		}
		if !s.quoted && !s.index {
			joined := s.text
			for j := i + 1; j < len(segs) && !segs[j].quoted && !segs[j].index; j++ {
				joined += "." + segs[j].text
				if next, ok := c[joined]; ok {
					r, err := query(next, segs, j+1, path, budget)
					if err == nil {
						return r, nil
					}
					if firstErr == nil {
						firstErr = err
					}
				}
			}
		}
		if firstErr != nil {
			return nil, firstErr
		}
		keys := make([]string, 0, len(c))
		for k := range c {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		return nil, fmt.Errorf("query %s: %s has no key %q (keys: %s): %w",
			path, describeAt(at), s.text, quoteList(keys), ErrNotFound)
	case []any:
		n, err := strconv.Atoi(s.text)
		if err != nil || s.quoted {
			return nil, fmt.Errorf("query %s: %s is a list of %d, %q is not an index: %w",
				path, describeAt(at), len(c), s.text, ErrNotFound)
		}
		if n < 0 || n >= len(c) {
			return nil, fmt.Errorf("query %s: %s has %d items, no index %d: %w",
				path, describeAt(at), len(c), n, ErrNotFound)
		}
		return query(c[n], segs, i+1, path, budget)
	}
	return nil, fmt.Errorf("query %s: %s is %s, not a map or list; cannot take %q: %w",
		path, describeAt(at), describeValue(cur), s.text, ErrNotFound)
}

type pathSeg struct {
	text   string
	quoted bool
	index  bool // written [n]
}

// splitPath splits a.b."c.d"[0].e into segments.
func splitPath(path string) ([]pathSeg, error) {
	var segs []pathSeg
	bad := func(msg string) ([]pathSeg, error) {
		return nil, fmt.Errorf("query %s: bad path: %s", path, msg)
	}
	i := 0
	for i < len(path) {
		switch c := path[i]; {
		case c == '"':
			j := i + 1
			var b strings.Builder
			for ; j < len(path) && path[j] != '"'; j++ {
				if path[j] == '\\' && j+1 < len(path) {
					j++
				}
				b.WriteByte(path[j])
			}
			if j >= len(path) {
				return bad("unterminated quote")
			}
			segs = append(segs, pathSeg{text: b.String(), quoted: true})
			i = j + 1
		case c == '[':
			j := strings.IndexByte(path[i:], ']')
			if j < 0 {
				return bad("unterminated [")
			}
			segs = append(segs, pathSeg{text: strings.Trim(path[i+1:i+j], `"`), index: true})
			i += j + 1
		default:
			j := i
			for j < len(path) && path[j] != '.' && path[j] != '[' && path[j] != '"' {
				j++
			}
			if j == i {
				return bad(fmt.Sprintf("empty segment at %d", i))
			}
			segs = append(segs, pathSeg{text: path[i:j]})
			i = j
		}
		if i < len(path) {
			switch path[i] {
			case '.':
				i++
				if i == len(path) {
					return bad("ends with '.'")
				}
			case '[':
			default:
				return bad(fmt.Sprintf("unexpected %q at %d", path[i], i))
			}
		}
	}
	return segs, nil
}

func joinPath(segs []pathSeg) string {
	var b strings.Builder
	for _, s := range segs {
		switch {
		case s.index:
			b.WriteString("[" + s.text + "]")
			continue
		case b.Len() > 0:
			b.WriteByte('.')
		}
		if s.quoted || strings.ContainsAny(s.text, `."[`) {
			b.WriteString(strconv.Quote(s.text))
		} else {
			b.WriteString(s.text)
		}
	}
	return b.String()
}

func describeAt(at string) string {
	if at == "" {
		return "the top level"
	}
	return at
}

func describeValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return fmt.Sprintf("the string %q", truncate([]byte(x), 60))
	case bool:
		return fmt.Sprintf("the boolean %v", x)
	case float64, json.Number, int, int64, uint64:
		return fmt.Sprintf("the number %v", x)
	}
	return fmt.Sprintf("a %T", v)
}

func quoteList(keys []string) string {
	if len(keys) == 0 {
		return "none"
	}
	const show = 30
	more := ""
	if len(keys) > show {
		more = fmt.Sprintf(", … %d more", len(keys)-show)
		keys = keys[:show]
	}
	return strings.Join(keys, ", ") + more
}

// protoDuration is a google.protobuf.Duration in proto JSON: seconds with up to nine decimals
// and an "s" ("0.500s", "10s", "-1.5s").
var protoDuration = regexp.MustCompile(`^-?[0-9]+(\.[0-9]{1,9})?s$`)

// DurationsAsSeconds returns v (decoded JSON) with every string that is a protobuf Duration
// ("0.500s") replaced by its number of seconds (0.5); maps and lists are copied, v is not
// changed. Other strings stay as they are: "500ms" is not how Envoy prints a Duration.
func DurationsAsSeconds(v any) any {
	switch x := v.(type) {
	case string:
		if protoDuration.MatchString(x) {
			if f, err := strconv.ParseFloat(strings.TrimSuffix(x, "s"), 64); err == nil {
				return f
			}
		}
		return x
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = DurationsAsSeconds(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = DurationsAsSeconds(e)
		}
		return out
	}
	return v
}
