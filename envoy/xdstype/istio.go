package xdstype

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"unicode"
)

// How istiod fills Envoy's config, as far as labrun reads it: the marks it leaves of the Istio
// objects a resource comes from, and the names it gives resources. Measured against istiod of
// Istio master (istio.io/istio v0.0.0-20260827124520-eed52ebb66ad) in labrun's sandbox.

// ObjectRef names an Istio object.
type ObjectRef struct {
	Kind, Namespace, Name string
}

func (r ObjectRef) String() string {
	if r.Namespace == "" {
		return r.Kind + " " + r.Name
	}
	return r.Kind + " " + r.Namespace + "/" + r.Name
}

// Marked says, for each kind of Istio object istiod marks in Envoy's config, in which resources
// the mark is: the config path /apis/<group>/<version>/namespaces/<ns>/<kind>/<name> in the
// metadata (filter_metadata.istio.config) of what the object made, or, for an
// AuthorizationPolicy, its rules' names ns[<ns>]-policy[<name>]-rule[<n>] among a listener's RBAC
// policies. Other kinds (PeerAuthentication, ServiceEntry, Telemetry, EnvoyFilter) leave no
// mark: only their effect shows.
var Marked = map[string][]string{
	"DestinationRule":     {"cluster"},
	"VirtualService":      {"route", "listener"},
	"Sidecar":             {"listener"},
	"AuthorizationPolicy": {"listener"},
}

// MarksObject reports whether istiod marks the object of this kind and spec in the config it
// pushes: a kind of Marked, and for a Sidecar one with ingress listeners (its mark is in their
// inbound filter chains; an egress-only Sidecar leaves none).
func MarksObject(kind string, spec any) bool {
	if Marked[kind] == nil {
		return false
	}
	if kind == "Sidecar" {
		m, _ := spec.(map[string]any)
		return m["ingress"] != nil
	}
	return true
}

// The marks' patterns, compiled on first use (labrun's start-up pays for nothing it may not use).
var (
	configPath = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^/apis/[^/]+/[^/]+/namespaces/([^/]+)/([a-z0-9-]+)/([^/]+)$`)
	})
	rbacPolicy = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`ns\[([^\]]*)\]-policy\[([^\]]*)\]-rule\[[0-9]+\]`)
	})
)

// IstioMarks returns the Istio objects whose marks istiod wrote into v (decoded JSON: one
// resource or a whole dump), sorted and without repeats.
func IstioMarks(v any) []ObjectRef {
	seen := map[ObjectRef]bool{}
	var walk func(any)
	note := func(s string) {
		if m := configPath().FindStringSubmatch(s); m != nil {
			seen[ObjectRef{Kind: camelKind(m[2]), Namespace: m[1], Name: m[3]}] = true
		}
		for _, m := range rbacPolicy().FindAllStringSubmatch(s, -1) {
			seen[ObjectRef{Kind: "AuthorizationPolicy", Namespace: m[1], Name: m[2]}] = true
		}
	}
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if strings.Contains(k, "-policy[") {
					note(k)
				}
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		case string:
			if strings.HasPrefix(x, "/apis/") || strings.Contains(x, "-policy[") {
				note(x)
			}
		}
	}
	walk(v)
	out := make([]ObjectRef, 0, len(seen))
	for r := range seen {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// camelKind turns Istio's kebab-case kind ("destination-rule") back into the kind.
func camelKind(kebab string) string {
	var b strings.Builder
	for _, w := range strings.Split(kebab, "-") {
		if w == "" {
			continue
		}
		r := []rune(w)
		r[0] = unicode.ToUpper(r[0])
		b.WriteString(string(r))
	}
	return b.String()
}

// Reflects reports whether v carries the mark of want, and says what v carries of want's kind
// (for the message when it does not: the last state seen).
func Reflects(v any, want ObjectRef) (bool, string) {
	var same []string
	for _, r := range IstioMarks(v) {
		if r == want {
			return true, "carries " + want.String()
		}
		if r.Kind == want.Kind {
			same = append(same, r.Namespace+"/"+r.Name)
		}
	}
	if len(same) == 0 {
		if want.Kind == "Sidecar" {
			// The run waited its whole timeout: say where the mark would be, and when never.
			return false, "carries no Sidecar (istiod marks a Sidecar only in the inbound filter chains of its ingress listeners, in virtualInbound; an egress-only Sidecar leaves no mark: wait for its effect with until)"
		}
		return false, fmt.Sprintf("carries no %s", want.Kind)
	}
	return false, fmt.Sprintf("carries %s %s, not %s/%s", want.Kind, strings.Join(same, ", "), want.Namespace, want.Name)
}

// NameHint says how Istio names the resource of kind ("route", "listener", "cluster") that a
// user looked for as name and did not find, when name looks like another of Istio's names: a
// route configuration written as a virtual host ("host:port"), a listener written as a port.
// "" when there is nothing to add.
func NameHint(kind, name string) string {
	switch kind {
	case "route":
		if i := strings.LastIndexByte(name, ':'); i > 0 && allDigits(name[i+1:]) {
			return fmt.Sprintf("istiod names a sidecar's outbound HTTP route configurations by port (%q); %q is the name of a virtual host inside it: route: %q, path: `virtual_hosts[%q]`",
				name[i+1:], name, name[i+1:], name)
		}
	case "listener":
		if allDigits(name) {
			return fmt.Sprintf("istiod names a sidecar's outbound listeners <address>_<port> (\"0.0.0.0_%s\" for a port of several services, \"<cluster IP>_%s\" for one service's); inbound traffic has one listener, \"virtualInbound\"; a waypoint's is \"main_internal\"", name, name)
		}
	case "cluster":
		if !strings.Contains(name, "|") && strings.Contains(name, ".") {
			return fmt.Sprintf("istiod names a sidecar's outbound clusters outbound|<port>|<subset>|<host>, e.g. \"outbound|80||%s\"", name)
		}
	}
	return ""
}

// Extensions are the names istiod gives the extensions it configures (a filter's, a listener
// filter's, an access log's, a retry predicate's name) with the message of their typed_config,
// so that a path that selects one by name (filters[name=envoy.filters.network.http_connection_manager])
// is typed past its typed_config before the run. Seen in the config dumps istiod of Istio master
// (2026-08-27) sends a sidecar and a waypoint in labrun's sandbox. A transport socket's
// typed_config is not here: its message depends on where it is (a cluster's originates TLS, a
// filter chain's terminates it), which its "@type" says at run time.
var Extensions = map[string]string{
	"envoy.filters.network.http_connection_manager": "envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager",
	"envoy.filters.network.tcp_proxy":               "envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy",
	"envoy.filters.network.rbac":                    "envoy.extensions.filters.network.rbac.v3.RBAC",
	"envoy.filters.http.rbac":                       "envoy.extensions.filters.http.rbac.v3.RBAC",
	"envoy.filters.http.router":                     "envoy.extensions.filters.http.router.v3.Router",
	"envoy.filters.http.fault":                      "envoy.extensions.filters.http.fault.v3.HTTPFault",
	"envoy.filters.http.cors":                       "envoy.extensions.filters.http.cors.v3.Cors",
	"envoy.filters.http.grpc_stats":                 "envoy.extensions.filters.http.grpc_stats.v3.FilterConfig",
	"envoy.filters.listener.tls_inspector":          "envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector",
	"envoy.filters.listener.http_inspector":         "envoy.extensions.filters.listener.http_inspector.v3.HttpInspector",
	"envoy.filters.listener.original_dst":           "envoy.extensions.filters.listener.original_dst.v3.OriginalDst",
	"envoy.access_loggers.file":                     "envoy.extensions.access_loggers.file.v3.FileAccessLog",
	"envoy.retry_host_predicates.previous_hosts":    "envoy.extensions.retry.host.previous_hosts.v3.PreviousHostsPredicate",
}

// IstioDefault is what istiod writes into a field of Envoy's config where the Istio object
// that configures the field leaves its own out (or where there is no such object): a claim
// that the field holds this value holds whatever the object says, and before its push too.
type IstioDefault struct {
	// Value is the field's value as a config step reads it: a string (a Duration's text,
	// "10s"; an enum's name) or a number.
	Value any
	// Kind is the kind of Istio object that sets it, Field the object's field, whose last
	// name is the key that sets it wherever it is written in the object's spec.
	Kind, Field string
}

// Key is the name of the object's field that sets the default's field ("attempts").
func (d IstioDefault) Key() string { return d.Field[strings.LastIndexByte(d.Field, '.')+1:] }

// IstioDefaults are the defaults istiod writes, by "<message>.<field>": read in the outbound
// cluster and the route of a Service (HTTP port 8080) in a client sidecar's config_dump,
// without a DestinationRule and VirtualService, and with ones that leave the field out, from
// istiod of Istio master (istio.io/istio v0.0.0-20260827124520-eed52ebb66ad) in labrun's
// sandbox. What istiod leaves out (an outlier detection's interval, a retry's per-try
// timeout: Envoy's default applies) reads nil, which no such claim equals, and is not here.
var IstioDefaults = map[string]IstioDefault{
	"envoy.config.cluster.v3.Cluster.connect_timeout":                         {"10s", "DestinationRule", "trafficPolicy.connectionPool.tcp.connectTimeout"},
	"envoy.config.cluster.v3.Cluster.lb_policy":                               {"LEAST_REQUEST", "DestinationRule", "trafficPolicy.loadBalancer.simple"},
	"envoy.config.cluster.v3.CircuitBreakers.Thresholds.max_connections":      {float64(4294967295), "DestinationRule", "trafficPolicy.connectionPool.tcp.maxConnections"},
	"envoy.config.cluster.v3.CircuitBreakers.Thresholds.max_pending_requests": {float64(4294967295), "DestinationRule", "trafficPolicy.connectionPool.http.http1MaxPendingRequests"},
	"envoy.config.cluster.v3.CircuitBreakers.Thresholds.max_requests":         {float64(4294967295), "DestinationRule", "trafficPolicy.connectionPool.http.http2MaxRequests"},
	"envoy.config.cluster.v3.CircuitBreakers.Thresholds.max_retries":          {float64(4294967295), "DestinationRule", "trafficPolicy.connectionPool.http.maxRetries"},
	"envoy.config.route.v3.RouteAction.timeout":                               {"0s", "VirtualService", "http[].timeout"},
	"envoy.config.route.v3.RetryPolicy.num_retries":                           {float64(2), "VirtualService", "http[].retries.attempts"},
	"envoy.config.route.v3.RetryPolicy.retry_on":                              {"connect-failure,refused-stream,unavailable,cancelled,retriable-status-codes", "VirtualService", "http[].retries.retryOn"},
}

// IstioDefaultAt is the default istiod writes (IstioDefaults) into the field that path, a
// config step's path, selects in a resource of type t, and the field's name; false when the
// path selects no field of IstioDefaults (or a part known only at run time).
func (t *Type) IstioDefaultAt(path string) (IstioDefault, string, bool) {
	p, err := ParsePath(path)
	if err != nil || len(p.Segs) == 0 {
		return IstioDefault{}, "", false
	}
	last := p.Segs[len(p.Segs)-1]
	if last.Kind != SegKey || strings.Contains(last.Text, Hole) {
		return IstioDefault{}, "", false
	}
	parent, err := t.at(Path{Text: path, Segs: p.Segs[:len(p.Segs)-1]})
	if err != nil || parent == nil || parent.Kind != Message || parent.Msg == nil {
		return IstioDefault{}, "", false
	}
	d, ok := IstioDefaults[parent.Msg.Name+"."+last.Text]
	return d, last.Text, ok
}
