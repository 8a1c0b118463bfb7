package dsl

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"

	"labrun.dev/labrun/schema"
)

// Lints are Istio's silent no-ops that the seeds fell into: configuration that the API server
// accepts and Istio then ignores, so an experiment measures something other than what its file
// says. Each has a code, a position in the user's file, the consequence and the fix. vet and
// run print them as warnings; --strict makes them errors; a scenario silences one code with a
// reason (lint: ignore: {CODE: "why"}).

// Warning is one lint finding.
type Warning struct {
	Pos  Pos    `json:"pos"`
	Code string `json:"code"`
	// Scenario is the scenario the finding is in.
	Scenario string `json:"scenario"`
	Msg      string `json:"message"`
}

func (w *Warning) String() string { return fmt.Sprintf("%s: warning[%s]: %s", w.Pos, w.Code, w.Msg) }

// The lint codes.
const (
	LintStatsMatcher  = "stats-matcher"
	LintPortLevel     = "port-level-shadow"
	LintTCPPort       = "http-on-tcp-port"
	LintClusterDomain = "cluster-domain"
	LintUnknownHost   = "unknown-host"
)

// LintCodes lists every lint code with what it finds, for docs and --help.
var LintCodes = map[string]string{
	LintStatsMatcher:  "an expectation reads Envoy cluster stats that the observed proxy's proxyStatsMatcher does not record",
	LintPortLevel:     "top-level DestinationRule fields that a portLevelSettings entry makes Istio ignore on that port",
	LintTCPPort:       "connectionPool.http fields on a port Istio treats as TCP (named tcp-…, or unnamed without appProtocol)",
	LintClusterDomain: "a literal cluster.local in a cluster name on the kube target",
	LintUnknownHost:   "a DestinationRule or VirtualService host, or a snapshot's cluster, that names no Service or ServiceEntry the scenario applies",
}

// applied is an object a step of the scenario applies, with the step.
type applied struct {
	obj  schema.Object
	step *Step
	ns   string
}

// lint runs the lints on a decoded scenario.
func (d *decoder) lint() {
	sc := d.sc
	var objs []applied
	for _, ph := range sc.Phases() {
		Walk(ph.Steps, func(s *Step) {
			if p, ok := s.Params.(*schema.Apply); ok {
				for _, o := range p.Objects {
					objs = append(objs, applied{o, s, d.defaultNamespace(p.Namespace)})
				}
			}
		})
	}
	warn := func(s *Step, field, code, format string, args ...any) {
		if _, ok := sc.LintIgnore[code]; ok {
			return
		}
		pos := s.Pos
		if field != "" {
			c := &stepChecker{d: d, s: s, kv: d.kindValue[s], kpath: s.Path + "." + s.Kind}
			if v := c.lookup(field); v.Exists() {
				if p := d.l.valuePos(v); p.IsValid() {
					pos = p
				}
			}
		}
		d.l.warnings = append(d.l.warnings, &Warning{Pos: pos, Code: code, Scenario: sc.Name, Msg: fmt.Sprintf(format, args...)})
	}
	services := map[string]schema.Object{} // host FQDN (and short forms) → Service
	entries := map[string]bool{}           // ServiceEntry hosts
	for _, a := range objs {
		kind, _ := a.obj["kind"].(string)
		md, _ := a.obj["metadata"].(map[string]any)
		name, _ := md["name"].(string)
		ns, _ := md["namespace"].(string)
		if ns == "" {
			ns = a.ns
		}
		switch kind {
		case "Service":
			for _, h := range []string{name, name + "." + ns, name + "." + ns + ".svc", name + "." + ns + ".svc.cluster.local"} {
				services[h] = a.obj
			}
		case "ServiceEntry":
			spec, _ := a.obj["spec"].(map[string]any)
			hosts, _ := spec["hosts"].([]any)
			for _, h := range hosts {
				if s, ok := h.(string); ok {
					entries[s] = true
				}
			}
		}
	}
	known := func(host string) bool {
		if HasInterpolation(host) || strings.HasPrefix(host, "*") {
			return true
		}
		return services[host] != nil || entries[host] || services[strings.TrimSuffix(host, ".")] != nil
	}
	for i, a := range objs {
		kind, _ := a.obj["kind"].(string)
		spec, _ := a.obj["spec"].(map[string]any)
		field := fmt.Sprintf("objects.%d", objIndex(objs, i))
		switch kind {
		case "DestinationRule":
			host, _ := spec["host"].(string)
			tp, _ := spec["trafficPolicy"].(map[string]any)
			d.lintPortLevel(a, tp, field, warn)
			d.lintTCPPort(a, host, tp, services, field, warn)
			if host != "" && len(services)+len(entries) > 0 && !known(host) {
				warn(a.step, field+".spec.host", LintUnknownHost, "DestinationRule host %q names no Service or ServiceEntry this scenario applies: the rule applies to nothing unless the host exists already; write the Service's name or FQDN", host)
			}
		case "VirtualService":
			hosts, _ := spec["hosts"].([]any)
			for j, h := range hosts {
				if s, ok := h.(string); ok && len(services)+len(entries) > 0 && !known(s) {
					warn(a.step, fmt.Sprintf("%s.spec.hosts.%d", field, j), LintUnknownHost, "VirtualService host %q names no Service or ServiceEntry this scenario applies: the routes apply to nothing unless the host exists already", s)
				}
			}
		}
	}
	reads := d.statsRead()
	Walk(append(append(append([]*Step{}, sc.Setup...), sc.Steps...), sc.Cleanup...), func(s *Step) {
		var cluster string
		var envoy *schema.PodRef
		switch p := s.Params.(type) {
		case *schema.Snapshot:
			cluster, envoy = p.Cluster, p.Envoy
		case *schema.Config:
			cluster = p.Cluster
		default:
			return
		}
		if d.target() == "kube" && strings.Contains(cluster, ".svc.cluster.local") && !HasInterpolation(cluster) {
			warn(s, "cluster", LintClusterDomain, "cluster %q hard-codes the cluster domain cluster.local; where the cluster's domain differs (seed 002 §7) no cluster has this name: write ${target.clusterDomain} (labrun reads it from CoreDNS)", cluster)
		}
		if host := clusterHost(cluster); host != "" && len(services)+len(entries) > 0 && !known(host) && !strings.Contains(host, "${") {
			warn(s, "cluster", LintUnknownHost, "cluster %q is for host %q, which no Service or ServiceEntry of this scenario defines: check the name, port and namespace", cluster, host)
		}
		if envoy != nil && s.Name != "" && len(reads[s.Name]) > 0 && cluster != "" {
			d.lintStatsMatcher(s, envoy, cluster, reads[s.Name], objs, warn)
		}
	})
}

// objIndex is the index of objs[i] among the objects of its own apply step.
func objIndex(objs []applied, i int) int {
	n := 0
	for j := 0; j < i; j++ {
		if objs[j].step == objs[i].step {
			n++
		}
	}
	return n
}

// clusterHost is the host of an Istio cluster name "outbound|8080|subset|host".
func clusterHost(cluster string) string {
	parts := strings.Split(cluster, "|")
	if len(parts) != 4 || parts[0] != "outbound" {
		return ""
	}
	return parts[3]
}

// statsRead maps each snapshot (and series) name to the stats the expectations read of it.
func (d *decoder) statsRead() map[string][]string {
	out := map[string][]string{}
	add := func(snap, stat string) {
		if snap != "" && stat != "" {
			out[snap] = append(out[snap], stat)
		}
	}
	var exprs []*Expr
	exprs = append(exprs, d.sc.Expect...)
	for _, s := range d.order {
		if s.Expr != nil {
			exprs = append(exprs, s.Expr)
		}
	}
	var first, last string
	if n := len(d.sc.Snapshots); n > 0 {
		first, last = d.sc.Snapshots[0].Name, d.sc.Snapshots[n-1].Name
	}
	for _, e := range exprs {
		for _, r := range e.Refs {
			switch r.Kind {
			case RefSnapshot:
				add(r.Name, r.Stat)
			case RefDelta:
				add(first, r.Stat)
				add(last, r.Stat)
			case RefDeltaPair:
				add(r.From, r.Stat)
				add(r.To, r.Stat)
			case RefSeries:
				add(strings.SplitN(r.Name, ".", 2)[0], r.Stat)
			}
		}
	}
	return out
}

// lintStatsMatcher warns when the pods a snapshot reads belong to a workload the scenario
// applies whose proxy would not record the stats the expectations read. Istio records no
// per-cluster upstream_* or circuit_breakers.* stats unless proxyStatsMatcher includes them.
func (d *decoder) lintStatsMatcher(s *Step, envoy *schema.PodRef, cluster string, stats []string, objs []applied, warn func(*Step, string, string, string, ...any)) {
	for _, a := range objs {
		labels, annotations, ok := podTemplate(a.obj)
		if !ok || !selects(envoy, labels, a.obj) {
			continue
		}
		matcher := statsMatcher(annotations)
		var missing []string
		for _, st := range stats {
			full := "cluster." + cluster + "." + st
			if !matcher.matches(full) {
				missing = append(missing, st)
			}
		}
		if len(missing) == 0 {
			return
		}
		sort.Strings(missing)
		kind, _ := a.obj["kind"].(string)
		md, _ := a.obj["metadata"].(map[string]any)
		name, _ := md["name"].(string)
		what := "has no proxyStatsMatcher"
		if matcher.any() {
			what = "has a proxyStatsMatcher that does not include them"
		}
		warn(s, "envoy", LintStatsMatcher, "the expectations read %s of cluster %s, but the proxy of %s %s %s: Istio records no per-cluster upstream_*/circuit_breakers.* stats by default, so the run would fail with \"in none of the snapshots\"; add to its pod template the annotation proxy.istio.io/config: '{\"proxyStatsMatcher\": {\"inclusionRegexps\": [\".*%s.*\"]}}'",
			strings.Join(missing, ", "), cluster, kind, name, what, regexp.QuoteMeta(statsStem(cluster)))
		return
	}
}

// statsStem is the part of a cluster name worth matching on: its host's first label.
func statsStem(cluster string) string {
	if h := clusterHost(cluster); h != "" {
		return strings.SplitN(h, ".", 2)[0]
	}
	return cluster
}

// podTemplate returns the pod labels and annotations of a Pod or a workload's template.
func podTemplate(o schema.Object) (labels, annotations map[string]any, ok bool) {
	kind, _ := o["kind"].(string)
	md, _ := o["metadata"].(map[string]any)
	switch kind {
	case "Pod":
		labels, _ = md["labels"].(map[string]any)
		annotations, _ = md["annotations"].(map[string]any)
		return labels, annotations, true
	case "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet":
		spec, _ := o["spec"].(map[string]any)
		tmpl, _ := spec["template"].(map[string]any)
		tmd, _ := tmpl["metadata"].(map[string]any)
		labels, _ = tmd["labels"].(map[string]any)
		annotations, _ = tmd["annotations"].(map[string]any)
		return labels, annotations, true
	}
	return nil, nil, false
}

// selects reports whether a pod reference (a selector, or a pod name) picks the pods of o.
func selects(ref *schema.PodRef, labels map[string]any, o schema.Object) bool {
	if ref.Selector != "" {
		if HasInterpolation(ref.Selector) {
			return false
		}
		for _, term := range strings.Split(ref.Selector, ",") {
			k, v, ok := strings.Cut(strings.TrimSpace(term), "=")
			if !ok || strings.ContainsAny(k, "!") {
				return false // a set-based selector: not judged here
			}
			if got, _ := labels[strings.TrimSpace(k)].(string); got != strings.TrimSpace(v) {
				return false
			}
		}
		return true
	}
	md, _ := o["metadata"].(map[string]any)
	name, _ := md["name"].(string)
	kind, _ := o["kind"].(string)
	return ref.Pod != "" && (kind == "Pod" && ref.Pod == name || strings.HasPrefix(ref.Pod, name+"-"))
}

// matcher is a proxyStatsMatcher.
type matcher struct {
	prefixes, suffixes []string
	regexps            []*regexp.Regexp
}

func (m matcher) any() bool { return len(m.prefixes)+len(m.suffixes)+len(m.regexps) > 0 }

func (m matcher) matches(stat string) bool {
	for _, p := range m.prefixes {
		if strings.HasPrefix(stat, p) {
			return true
		}
	}
	for _, s := range m.suffixes {
		if strings.HasSuffix(stat, s) {
			return true
		}
	}
	for _, r := range m.regexps {
		if r.MatchString(stat) {
			return true
		}
	}
	return false
}

// statsMatcher reads proxy.istio.io/config's proxyStatsMatcher (JSON or YAML).
func statsMatcher(annotations map[string]any) matcher {
	var m matcher
	raw, _ := annotations["proxy.istio.io/config"].(string)
	if raw == "" {
		return m
	}
	var cfg struct {
		ProxyStatsMatcher struct {
			InclusionPrefixes []string `json:"inclusionPrefixes"`
			InclusionSuffixes []string `json:"inclusionSuffixes"`
			InclusionRegexps  []string `json:"inclusionRegexps"`
		} `json:"proxyStatsMatcher"`
	}
	b, err := yaml.YAMLToJSON([]byte(raw))
	if err != nil || json.Unmarshal(b, &cfg) != nil {
		return m
	}
	m.prefixes, m.suffixes = cfg.ProxyStatsMatcher.InclusionPrefixes, cfg.ProxyStatsMatcher.InclusionSuffixes
	for _, r := range cfg.ProxyStatsMatcher.InclusionRegexps {
		// Envoy matches the whole stat name.
		if re, err := regexp.Compile("^(?:" + r + ")$"); err == nil {
			m.regexps = append(m.regexps, re)
		}
	}
	return m
}

// policyFields are the traffic policy fields a portLevelSettings entry replaces for its port.
var policyFields = []string{"connectionPool", "loadBalancer", "outlierDetection", "tls"}

// lintPortLevel warns about top-level traffic policy fields next to portLevelSettings: on a
// port with its own entry Istio applies none of them (seed 002 §11).
func (d *decoder) lintPortLevel(a applied, tp map[string]any, field string, warn func(*Step, string, string, string, ...any)) {
	pls, _ := tp["portLevelSettings"].([]any)
	if len(pls) == 0 {
		return
	}
	var top []string
	for _, f := range policyFields {
		if _, ok := tp[f]; ok {
			top = append(top, f)
		}
	}
	if len(top) == 0 {
		return
	}
	for i, e := range pls {
		entry, _ := e.(map[string]any)
		port, _ := entry["port"].(map[string]any)
		num := port["number"]
		var missing []string
		for _, f := range top {
			if _, ok := entry[f]; !ok {
				missing = append(missing, f)
			}
		}
		if len(missing) == 0 {
			missing = top
		}
		warn(a.step, fmt.Sprintf("%s.spec.trafficPolicy.portLevelSettings.%d", field, i), LintPortLevel,
			"port %v has its own portLevelSettings entry, so Istio applies none of the top-level %s to it (they are not inherited, seed 002 §11): move them into the entry for port %v",
			FormatValue(num), strings.Join(missing, ", "), FormatValue(num))
	}
}

// lintTCPPort warns about connectionPool.http settings on a port Istio treats as TCP: every
// http.* field is then a no-op (seed 000).
func (d *decoder) lintTCPPort(a applied, host string, tp map[string]any, services map[string]schema.Object, field string, warn func(*Step, string, string, string, ...any)) {
	svc := services[host]
	if svc == nil {
		return
	}
	spec, _ := svc["spec"].(map[string]any)
	ports, _ := spec["ports"].([]any)
	isTCP := func(num any) (string, bool) {
		for _, p := range ports {
			pm, _ := p.(map[string]any)
			if num != nil && FormatValue(pm["port"]) != FormatValue(num) {
				continue
			}
			name, _ := pm["name"].(string)
			app, _ := pm["appProtocol"].(string)
			if proto := istioProtocol(name, app); proto == "tcp" {
				label := name
				if label == "" {
					label = "(unnamed)"
				}
				return fmt.Sprintf("%v %s", FormatValue(pm["port"]), label), true
			}
		}
		return "", false
	}
	hasHTTP := func(m map[string]any) bool {
		cp, _ := m["connectionPool"].(map[string]any)
		_, ok := cp["http"]
		return ok
	}
	if hasHTTP(tp) {
		if port, tcp := isTCP(nil); tcp {
			warn(a.step, field+".spec.trafficPolicy.connectionPool.http", LintTCPPort,
				"Service port %s of %s is treated as TCP by Istio (name it http or http-…, or set appProtocol: http): every connectionPool.http field is a no-op there (seed 000)", port, host)
		}
	}
	pls, _ := tp["portLevelSettings"].([]any)
	for i, e := range pls {
		entry, _ := e.(map[string]any)
		if !hasHTTP(entry) {
			continue
		}
		pn, _ := entry["port"].(map[string]any)
		if port, tcp := isTCP(pn["number"]); tcp {
			warn(a.step, fmt.Sprintf("%s.spec.trafficPolicy.portLevelSettings.%d.connectionPool.http", field, i), LintTCPPort,
				"Service port %s of %s is treated as TCP by Istio (name it http or http-…, or set appProtocol: http): every connectionPool.http field is a no-op there (seed 000)", port, host)
		}
	}
}

// istioProtocol is the protocol Istio gives a Service port by its appProtocol or name prefix.
func istioProtocol(name, appProtocol string) string {
	p := strings.ToLower(appProtocol)
	if p == "" {
		p = strings.ToLower(strings.SplitN(name, "-", 2)[0])
	}
	switch p {
	case "http", "http2", "grpc", "grpc-web", "h2c":
		return "http"
	case "":
		return "tcp" // unnamed, no appProtocol: no HTTP settings apply (seed 000)
	case "https", "tls":
		return "tls"
	}
	return "tcp" // tcp-…, mongo, redis, any other name: no HTTP settings apply
}
