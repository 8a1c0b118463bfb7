package dsl

import (
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"net/url"
	"path"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"sigs.k8s.io/yaml"

	"labrun.dev/labrun/internal/kubeshape"
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
	LintStatsMatcher     = "stats-matcher"
	LintPortLevel        = "port-level-shadow"
	LintTCPPort          = "http-on-tcp-port"
	LintClusterDomain    = "cluster-domain"
	LintUnknownHost      = "unknown-host"
	LintOneSample        = "one-sample"
	LintUnknownStat      = "unknown-stat"
	LintMayFailUnread    = "mayfail-unread"
	LintUnknownAddress   = "unknown-address"
	LintNothingJudged    = "nothing-judged"
	LintUnusedDNSName    = "unused-dns-name"
	LintSweepOnlyJudged  = "sweep-only-judged"
	LintUnreachedBackend = "unreached-backend"
	LintDeltaWindowOpen  = "delta-window-open"
	LintDeltaBeforeLoads = "delta-before-loads"
	LintDeltaAfterLoads  = "delta-after-loads"
	LintWarmupUncounted  = "warmup-uncounted"
	// LintUnknownReason: an event reason compared with a literal close to a known one.
	LintUnknownReason = "unknown-reason"
	// LintBareTime: a time in milliseconds or seconds compared with a bare number.
	LintBareTime = "bare-time"
	// LintOutputAnchor: a command's output matched with a pattern whose $ is the end of the
	// whole text, past the output's last newline.
	LintOutputAnchor = "output-anchor"
	// LintUnmatchedLabels: labels that pick workloads (a DestinationRule's subsets, a
	// policy's selector, a step's pod selector) and match no pod the scenario applies: the
	// API server takes them, and the subset has no endpoint (503 UH), the policy applies to
	// nothing, the step finds no pod.
	LintUnmatchedLabels = "unmatched-labels"
	LintKindOnlyMatch   = "kind-only-match"
	// LintOneReplica: a snapshot by a selector that matches several replicas reads one.
	LintOneReplica = "one-replica"
	// LintRolloutKind: a wait: rollout of a name the scenario applies as another workload
	// kind (a StatefulSet, a DaemonSet) and never as a Deployment.
	LintRolloutKind = "rollout-not-deployment"
	// LintOtherCluster: a wait: match, absent or rollout (or matchFiles, absentFiles), an
	// events step, or a get (by name, or pods by selector), of objects that only steps of
	// other clusters apply.
	LintOtherCluster = "other-cluster"
	// LintHostContext: a command on this machine, in a step of a scenario of several
	// clusters, that runs kubectl, istioctl or helm without naming a context: it reaches the
	// kubeconfig's current context, whatever the step's cluster.
	LintHostContext = "host-context"
	// LintCrossClusterDiff: an expression subtracting a stat of a snapshot taken in one
	// cluster from the same stat of one taken in another (two Envoys).
	LintCrossClusterDiff = "cross-cluster-difference"
	// LintPodReplaced: a delta or series of an Envoy by selector across a step that replaces
	// the pods the selector matches.
	LintPodReplaced = "pod-replaced"
	// LintEventsUnknownObject: an events step filtered by an object (kind and name) of the
	// scenario's namespaces that no step names.
	LintEventsUnknownObject = "events-unknown-object"
	// LintLogFormatLacks: an expression reads an access-log entry field (or a count by it)
	// that the one access-log format the scenario applies does not give.
	LintLogFormatLacks = "log-format-lacks"
	// LintAbsentUnknownLabels: a wait: absent by labels that no object the scenario applies
	// in that namespace carries, close to labels one does.
	LintAbsentUnknownLabels = "absent-unknown-labels"
	// LintReflectsReapplied: a config step's reflects of an object the scenario has applied
	// before under the same name with another spec: the mark is the earlier apply's too.
	LintReflectsReapplied = "reflects-reapplied"
	// LintReflectsUnapplied: a config step's reflects of an object no earlier step applies.
	LintReflectsUnapplied = "reflects-unapplied"
	// LintConfigUnwaited: a config step with neither reflects nor until right after a step
	// that changes Istio configuration: the read may be of the config from before the push.
	LintConfigUnwaited = "config-unwaited"
	// LintUnknownSubset: a VirtualService destination's subset that no DestinationRule the
	// scenario applies for the host defines: the route names a cluster no proxy gets.
	LintUnknownSubset = "unknown-subset"
	// LintLocalityOutlier: locality failover in a traffic policy without outlier detection,
	// which istiod then does not apply.
	LintLocalityOutlier = "locality-without-outlier"
	// LintIgnoredField: a DestinationRule field the API server's CRD accepts and istiod
	// does not read (outlierDetection.consecutiveErrors).
	LintIgnoredField = "istio-ignored-field"
	// LintUnknownPort: a DestinationRule's portLevelSettings port that none of its host's
	// Service or ServiceEntry ports is (a targetPort): the settings reach no cluster.
	LintUnknownPort = "unknown-port"
	// LintUnknownFilter: a key of a typed_per_filter_config a letter or two off the name of an
	// HTTP filter istiod configures.
	LintUnknownFilter = "unknown-filter"
	// LintAtSiblings: an expression that compares the starts of two children of one
	// parallel block with different at: offsets.
	LintAtSiblings = "at-siblings"
	// LintIstioDefault: a claim that a config field equals what istiod writes there without
	// the Istio object's field, read after a change of Istio configuration.
	LintIstioDefault = "istio-default"
	// LintGaugeAfterLoads: a level Envoy holds only while requests are in flight (a circuit
	// breaker's open gauge, upstream_rq_active, upstream_rq_pending_active) read of a snapshot
	// taken after every load has ended.
	LintGaugeAfterLoads = "gauge-after-loads"
	// LintStatusDropped: an apply of an object's status without subresource: "status", of a
	// kind the API server keeps the status of apart (a status subresource): it drops it.
	LintStatusDropped = "status-dropped"
	// LintChangeAfterLoads: a dns or kill step beside loads at an offset planned after every
	// load has ended: it changes nothing a load sees.
	LintChangeAfterLoads = "change-after-loads"
	// LintDNSUnchanged: a dns step that sets a name to the addresses its record gives it
	// already, with no other dns step of the name: the flip changes nothing.
	LintDNSUnchanged = "dns-unchanged"
)

// LintCodeList is the codes of LintCodes, sorted: a record keeps those its labrun knew, and its
// warnings are held to the lints of these codes (interp.WarningAbsences).
func LintCodeList() []string { return sortedKeys(LintCodes) }

// LintCodes lists every lint code with what it finds, for docs and --help.
var LintCodes = map[string]string{
	LintStatsMatcher:        "an expectation reads Envoy cluster stats that the observed proxy's proxyStatsMatcher does not record",
	LintPortLevel:           "top-level DestinationRule fields that a portLevelSettings entry makes Istio ignore on that port",
	LintTCPPort:             "HTTP settings (connectionPool.http, a VirtualService's http routes) or request stats (upstream_rq_*) on a Service port Istio treats as TCP (not named http/http-…/grpc…, and no HTTP appProtocol)",
	LintCrossClusterDiff:    "in a scenario of several clusters, an expression subtracting a stat of a snapshot taken in one cluster from the same stat of a snapshot taken in another (w2.x - e1.x): two Envoys, whose difference is no delta",
	LintClusterDomain:       "a literal cluster.local in a cluster name on the kube target (a snapshot's or config's cluster or a config's endpoints, with or without a ${...}, or a string of an expression); in a scenario of several clusters, ${target.clusterDomain} (the first cluster's) in such a name of a step in another cluster, or in an expression that reads only results of steps in another cluster",
	LintUnknownHost:         "a DestinationRule or VirtualService host, or a snapshot's cluster, that names no Service or ServiceEntry the scenario applies",
	LintOneSample:           "a sampler (every) whose interval is not shorter than the planned duration of the step it samples during: no sample while it runs, one at its start and one at its end",
	LintUnknownStat:         "an expression reads an Envoy cluster stat that Envoy does not document (a misspelling, or a stat only an extension records)",
	LintMayFailUnread:       "a wait with mayFail: true (or inside a block with mayFail: true) whose outcome no expression reads: the run goes on whether or not its condition held",
	LintNothingJudged:       "a scenario that measures (a load, a snapshot, logs) but has no expect and no assert or wait step: it passes whenever its steps run, whatever they measured",
	LintSweepOnlyJudged:     "a swept var (of the scenario's sweep or --sweep) that only the expectations (or a catch step) read: every combination runs the same setup and steps, and only the claims judged of them differ",
	LintDNSUnchanged:        "a dns step on the local target that sets a name of local.dns to the addresses its record gives it already, where no other dns step of the scenario sets that name: the flip changes nothing, every client stays where it was, and a claim that one was not moved by it holds as of a run with no flip",
	LintUnusedDNSName:       "a dns step on the local target that sets a name no record of local.dns declares and no step of the scenario names (a misspelling: the flip changes nothing the scenario measures)",
	LintUnreachedBackend:    "a delta an expression reads compares snapshots of a local backend that no step of the scenario can reach (no load names its ${backends.<name>...} or address, no exec or process runs a command that could, nothing restarts it): nothing the run does moves its counters",
	LintUnknownReason:       "an expression compares an event's reason with a literal that is none of the reasons Kubernetes writes but a letter or two off one (reason == 'BackOf'), or an events step's reason filter has such a word (reason: \"Unhealty\"): no event has it, so the claim matches nothing, and one that none happened holds whatever happened",
	LintBareTime:            "an expression compares a time in milliseconds or seconds (a load's latencies, its duration, a config's timeout) with a number other than 0 written without its unit (fortio.avg >= 2): meant in the other unit, the claim is off by a factor of 1000 and may hold of any run; duration('2s') says which",
	LintOutputAnchor:        "an expression matches a command's whole output (an exec's stdout or stderr) with a pattern whose $ (without (?m)) is the end of the text, after the output's last newline: x.stdout matches 'bar$' is false of \"bar\\n\", and !(x.stdout matches '^bar$'), meant as no line is bar, holds of a line bar; (?m) makes $ and ^ the end and start of a line (as testscript's stdout and stderr patterns are), \\z the very end",
	LintDeltaWindowOpen:     "a delta an expression reads closes (its later snapshot is taken) right after a load that started after its earlier snapshot starts in the background (no step between takes time, no await), or opens (its earlier snapshot is taken) in one parallel block with a load, at the same offset, or is the plain delta and closes beside a load in a parallel block (no snapshot after it): the delta covers next to none of the load, may miss its first requests, or counts only those sent before its last snapshot",
	LintDeltaBeforeLoads:    "a delta of request or connection stats that an expression reads closes (its later snapshot is taken) before every load of the scenario starts, with no command or process that may run in its window: it counts none of the loads' requests (a baseline claim before the load says so with lint: ignore)",
	LintDeltaAfterLoads:     "a delta of request or connection stats that an expression reads opens (its earlier snapshot is taken) after every load of the scenario has ended, with no command or process that may run in its window: it counts none of the loads' requests (both snapshots written after the load)",
	LintWarmupUncounted:     "an expectation that equates a server's request count (rq_total, upstream_rq_total, downstream_rq_total of a delta) with the requests of a load of a duration: fortio first sends one warm-up request per connection, which it does not count and the server does, so the claim fails on a correct run by the load's connections",
	LintUnmatchedLabels:     "a DestinationRule subset's labels, or the selector of an AuthorizationPolicy, PeerAuthentication, RequestAuthentication, Sidecar, Telemetry, EnvoyFilter or WasmPlugin, or the pod selector of a step (logs, exec, snapshot, config, a load's from, kill, get or delete of pods, a wait for pods), set-based ones too, that match no pod template the scenario applies in that namespace, where it applies the workloads (of the rule's Service; of the namespace) or, for a policy, makes the namespace itself: the subset has no endpoint, the policy applies to nothing, the step finds no pod",
	LintUnknownSubset:       "a VirtualService destination's subset (an http, tcp or tls route's, a mirror's) that no DestinationRule the scenario applies for that host (in a step or from its files) defines, where it applies one or more for the host (vet --server: with the cluster's rules, for any host): istiod writes the route to the subset's cluster all the same but sends no proxy that cluster, so every request routed there fails (503 NC) while a claim on the route's cluster holds",
	LintLocalityOutlier:     "a DestinationRule's localityLbSetting failover or failoverPriority in a traffic policy (the rule's, or a subset's, which inherits the rule's) without outlierDetection: istiod applies locality failover only with outlier detection, so every locality gets priority 0 and Envoy never fails over",
	LintUnknownPort:         "a DestinationRule's portLevelSettings port (the rule's or a subset's) that is none of the ports of its host's Service or ServiceEntry the scenario applies (a targetPort, 443 for a ServiceEntry port 80 that targets 443): istiod matches it against the service's ports, so its settings reach no cluster (seen on the sandbox: tls SIMPLE at 443 left the port 80 cluster with no transport socket)",
	LintIgnoredField:        "a DestinationRule's outlierDetection.consecutiveErrors (the rule's, a subset's, a portLevelSettings entry's): the CRD still accepts the deprecated field, and istiod reads only consecutive5xxErrors and consecutiveGatewayErrors, so the cluster gets no consecutive-error ejection from it (seen on the sandbox: no consecutive_5xx)",
	LintUnknownFilter:       "an expression's literal key of a typed_per_filter_config (of a route, a virtual host) that is none of the HTTP filters' names istiod gives but a letter or two off one (\"envoy.filters.http.faults\" for envoy.filters.http.fault): it is never a key there, so a claim that it is absent holds whatever the route holds",
	LintUnknownNamespace:    "a step's literal namespace (of the step, a pod it names, an object's metadata) that is none of the scenario's namespaces but close to one of them (a typo: the step finds nothing there, and a wait: absent holds at once)",
	LintOtherCluster:        "in a scenario of several clusters, a wait: match, absent or rollout (or an object of its matchFiles or absentFiles), an events step, or a get, of an object (kind and name; a get's pods or objects by an equality selector too) that the scenario applies only in other clusters than the step's: the absent holds at once, the match never, the rollout polls until its timeout, the events step keeps none, the get by name fails and by selector lists none",
	LintHostContext:         "in a scenario of several clusters, a command on this machine (an exec without a pod, a process) that runs kubectl, istioctl or helm and names no context (--context, --kube-context, --kubeconfig, $LABRUN_CONTEXT), in a step whose cluster is not the first with its context left empty: the command reaches the kubeconfig's current context, not the step's cluster, whose context it gets only in $LABRUN_CONTEXT",
	LintRolloutKind:         "a wait: rollout (which waits for a Deployment) of a name the scenario applies as a StatefulSet, DaemonSet, ReplicaSet, Job or CronJob and never as a Deployment: the wait polls for a Deployment that does not exist until its timeout (5m by default)",
	LintKindOnlyMatch:       "a wait: match or absent, or an object of its matchFiles or absentFiles, with neither name nor labels (any object of the kind) of a kind Kubernetes or istiod puts in every namespace (a ConfigMap: kube-root-ca.crt, istio-ca-root-cert; a ServiceAccount: default; a Namespace: default, kube-system...): the match holds at once, the absent never",
	LintAbsentUnknownLabels: "a wait: absent by labels (no name), in one of the scenario's namespaces, whose labels no object of the kind the scenario applies there carries (a Pod's: no Pod or workload template), where one carries a label close to them (app=wbe for app=web, ap for app): the absence holds at its first poll",
	LintReflectsUnapplied:   "a config step's reflects of an object that no earlier step applies (in its objects or its files): the step waits for istiod's mark of it, which comes only if the object exists already on the cluster, else until its timeout (5 minutes by default), and fails",
	LintReflectsReapplied:   "a config step's reflects of an object that an earlier step applied already, under the same kind, name and namespace, with another spec: istiod's mark names the object, not its version, so the mark of the earlier apply is there already, and the step holds at its first read, which may be of the config from before the change",
	LintConfigUnwaited:      "a config step with neither reflects nor until that reads a proxy's config after a step that applies or deletes Istio configuration (an Istio or Gateway API object, a Service), with no config step that waits for the push (reflects, until) between them: istiod pushes a little after a change, so the read may be of the config from before it, and a claim that held there passes whatever the change does",
	LintEventsUnknownObject: "an events step (outside catch) filtered by an object, kind and name, of the scenario's namespaces that no step of the scenario applies, deletes or reads (a misspelling: it keeps no event, and a claim that none happened, len(ev) == 0, holds whatever happened)",
	LintPodReplaced:         "a delta of two snapshots of an Envoy by one selector, or a series sampled by selector, with a kill, restart, scale or delete of pods that selector matches that may run between the snapshots or while it samples: the later snapshots may read another pod's sidecar (a new Envoy, counting from zero), and the delta (the series' max, min, first, last) then errs when judged",
	LintOneReplica:          "a snapshot by selector whose stats an expression reads, where the selector matches pods of workloads the scenario applies that run several replicas (replicas: N, or several Pods) and no load runs from that selector: the snapshot reads one pod's sidecar (the first ready by name), so its counts are one replica's",
	LintLogFormatLacks:      "an expression reads a field of access-log entries (.cluster, .upstream_host, .details, .duration, …) or a count by one (codes, flags, details) that the one access-log format the scenario applies (the istio ConfigMap's mesh or an IstioOperator's meshConfig: accessLogFormat, or an extensionProviders envoyFileAccessLog logFormat; an EnvoyFilter's access_log log_format) does not give: read, it has no value, and the expectation errs when it runs",
	LintAtSiblings:          "an expression that holds the difference of the starts of two children of one parallel block, of different at: offsets, to at least the difference of their offsets, exactly (started.b - started.a >= duration('500ms')): each at: counts from the block's start, and each child starts a few µs after its offset (one without at: after the block's start), so the difference reads a few µs under the offsets' on a correct run; each child's start against the block's (started.<block>) holds",
	LintGaugeAfterLoads:     "an expectation or an assert that reads, of a snapshot taken after every load of the scenario has ended (and no command or process may run beside it), a level Envoy holds only while requests are in flight: a circuit breaker's open gauge (circuit_breakers.default.rq_pending_open), upstream_rq_active, upstream_rq_pending_active, a local backend's rq_active: it is back to 0 then, so a claim that it is 0 holds whatever the load did; a snapshot beside a load in a parallel block at an offset a second or more past the load's planned end (its offset and duration) counts as after it",
	LintStatusDropped:       "an apply (without subresource: \"status\") of an object (of its objects or its files) that writes its status, of a kind whose status the API server keeps apart (a built-in kind with a status, an Istio kind: a status subresource): the API server drops the status on a write of the object itself, so it never reaches the cluster, and a claim over it reads what the cluster's controllers write",
	LintChangeAfterLoads:    "a dns or kill step beside loads in a parallel block at an offset planned after every load of the scenario has ended (a second or more past each one's planned end: its offset and duration, or requests at a qps), with no load after it and no command or process that may send then: the flip or kill changes nothing any load sees, so a claim that the loads were not moved by it (no request failed, every connection stayed on one address) holds whatever it does",
	LintIstioDefault:        "a claim (an expectation, an assert, a config step's until) that a field of a config step's value, read after a step that changes Istio configuration, equals (or, by any comparison, holds of; negated, or one side of a ||, or at one of a swept var's values) what istiod writes there where the Istio object leaves its field out (route.retry_policy.num_retries == 2, Istio's default attempts; cluster.connect_timeout == \"10s\"; a circuit breaker's 4294967295; lb_policy LEAST_REQUEST; a route's timeout \"0s\"): it holds whether or not the object reached the proxy and whatever it says, and an until so holds at its first read, before istiod's push",
	LintUnknownAddress:      "a local load whose URL names a loopback address (literal, localhost, a name the lab DNS zone resolves to one by its record or a dns step, or through a ${...} known before the run) where no backend or blackhole of the scenario listens, and no command step of it (a process, an exec on this machine) that may run by then can be that server (a mistyped port: every request fails to connect); or a Kubernetes Service name (backend.lab.svc.cluster.local, backend.lab.svc), which resolves only inside a cluster",
}

// applied is an object a step of the scenario applies, with the step and the apply's default
// namespace.
type applied struct {
	obj  schema.Object
	step *Step
	ns   string
}

// namespace is the object's namespace: its own, or the apply's default.
func (a applied) namespace() string {
	md, _ := a.obj["metadata"].(map[string]any)
	if ns, _ := md["namespace"].(string); ns != "" {
		return ns
	}
	return a.ns
}

// gatewayOnly says whether a VirtualService's spec binds it to gateways only (its gateways
// list, without "mesh"): its hosts are the names clients ask a Gateway's servers for
// (httpbin.example.com), matched against the servers' hosts, not Services, so naming no
// Service is the rule and not a mistake.
func gatewayOnly(spec map[string]any) bool {
	gws, _ := spec["gateways"].([]any)
	if len(gws) == 0 {
		return false
	}
	for _, g := range gws {
		if s, ok := g.(string); !ok || s == "mesh" || HasInterpolation(s) {
			return false
		}
	}
	return true
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
	for _, w := range d.pending {
		if _, ok := sc.LintIgnore[w.Code]; !ok {
			d.l.warnings = append(d.l.warnings, w)
		}
	}
	// warnAt warns at the step's field (its label; with atValue, the value written after it).
	warnAt := func(atValue bool, s *Step, field, code, format string, args ...any) {
		if _, ok := sc.LintIgnore[code]; ok {
			return
		}
		pos := s.Pos
		if field != "" {
			c := &stepChecker{d: d, s: s, kv: d.kindValue[s], kpath: s.Path + "." + s.Kind}
			if v := c.lookup(field); v.Exists() {
				p := d.l.valuePos(v)
				if atValue {
					p = d.l.litPos(v)
				}
				if p.IsValid() {
					pos = p
				}
			}
		}
		d.l.warnings = append(d.l.warnings, &Warning{Pos: pos, Code: code, Scenario: sc.Name, Msg: fmt.Sprintf(format, args...)})
	}
	warn := func(s *Step, field, code, format string, args ...any) { warnAt(false, s, field, code, format, args...) }
	ix := indexHosts(objs)
	known := func(host, ns string) bool {
		if HasInterpolation(host) || strings.HasPrefix(host, "*") {
			return true
		}
		return ix.entries[host] || ix.service(host, ns) != nil
	}
	// A copy of `kubectl get -o yaml` in an apply's files holds a status too: dropped alike.
	for _, s := range d.order {
		if p, ok := s.Params.(*schema.Apply); ok && len(p.Files) > 0 {
			for _, fo := range d.stepFileObjects(p.Files) {
				kind, _ := fo.Object["kind"].(string)
				lintStatusDropped(applied{fo.Object, s, d.defaultNamespace(p.Namespace)}, kind, "files", fo.Source, warn)
			}
		}
	}
	for i, a := range objs {
		kind, _ := a.obj["kind"].(string)
		spec, _ := a.obj["spec"].(map[string]any)
		field := fmt.Sprintf("objects.%d", objIndex(objs, i))
		lintStatusDropped(a, kind, field, "", warn)
		switch kind {
		case "DestinationRule":
			host, _ := spec["host"].(string)
			tp, _ := spec["trafficPolicy"].(map[string]any)
			d.lintPortLevel(a, tp, field+".spec.trafficPolicy", warn)
			subsets, _ := spec["subsets"].([]any)
			for j, sub := range subsets {
				sm, _ := sub.(map[string]any)
				stp, _ := sm["trafficPolicy"].(map[string]any)
				d.lintPortLevel(a, stp, fmt.Sprintf("%s.spec.subsets.%d.trafficPolicy", field, j), warn)
			}
			d.lintTCPPort(a, ix.service(host, a.namespace()), host, tp, field, warn)
			lintLocalityOutlier(a, spec, field, warn)
			lintIgnoredFields(a, spec, field, warn)
			lintUnknownPorts(a, spec, field, hostPorts(objs, ix, host, a.namespace()), warn)
			if host != "" && !ix.empty() && !known(host, a.namespace()) {
				warn(a.step, field+".spec.host", LintUnknownHost, "DestinationRule host %q names no Service or ServiceEntry this scenario applies: the rule applies to nothing unless the host exists already; write the Service's name or FQDN", host)
			}
		case "VirtualService":
			hosts, _ := spec["hosts"].([]any)
			for j, h := range hosts {
				if s, ok := h.(string); ok && !ix.empty() && !gatewayOnly(spec) && !known(s, a.namespace()) {
					warn(a.step, fmt.Sprintf("%s.spec.hosts.%d", field, j), LintUnknownHost, "VirtualService host %q names no Service or ServiceEntry this scenario applies: the routes apply to nothing unless the host exists already", s)
				}
			}
			d.lintHTTPRoutes(a, ix, spec, field, warn)
		}
	}
	reads := d.statsRead()
	tcpStatsWarned := map[string]bool{} // once per cluster: at its first snapshot
	replicaWarned := map[string]bool{}  // once per selector: at its first snapshot read
	Walk(append(append(append(append([]*Step{}, sc.Setup...), sc.Steps...), sc.Catch...), sc.Cleanup...), func(s *Step) {
		var cluster, endpoints string
		var envoy *schema.PodRef
		switch p := s.Params.(type) {
		case *schema.Snapshot:
			cluster, envoy = p.Cluster, p.Envoy
		case *schema.Config:
			cluster, endpoints = p.Cluster, p.Endpoints
		default:
			return
		}
		if d.target() == "kube" {
			// Both name a cluster; a ${...} in the name (a namespace's) leaves the domain
			// written around it as hard-coded as in a plain string.
			c := sc.ClusterOf(s)
			for _, f := range []struct{ field, name string }{{"cluster", cluster}, {"endpoints", endpoints}} {
				if hardCodesClusterLocal(f.name) {
					warnAt(true, s, f.field, LintClusterDomain, "%s %q hard-codes the cluster domain cluster.local; where the cluster's domain differs (seed 002 §7) no cluster has this name: write ${target.clusterDomain} (labrun reads it from CoreDNS)", f.field, f.name)
				}
				// target.clusterDomain is the first cluster's; the step reads the Envoy of
				// its own cluster, which names its clusters with that cluster's domain.
				if len(sc.Clusters) > 1 && c != sc.DefaultCluster() && strings.Contains(f.name, "${target.clusterDomain}") {
					warnAt(true, s, f.field, LintClusterDomain, "%s %q: ${target.clusterDomain} is the domain of cluster %s (the first), and this step reads an Envoy in cluster %s, which names its clusters with cluster %s's domain: where the two differ no cluster there has this name; write ${target.clusters.%s.clusterDomain}", f.field, f.name, sc.DefaultCluster(), c, c, c)
				}
			}
		}
		host := clusterHost(cluster)
		if host != "" && !ix.empty() && !known(host, "") && !strings.Contains(host, "${") {
			warn(s, "cluster", LintUnknownHost, "cluster %q is for host %q, which no Service or ServiceEntry of this scenario defines: check the name, port and namespace", cluster, host)
		}
		if s.Name != "" && len(reads[s.Name]) > 0 && !tcpStatsWarned[cluster] {
			tcpStatsWarned[cluster] = d.lintTCPStats(s, cluster, ix, reads[s.Name], warn)
		}
		if envoy != nil && s.Name != "" && len(reads[s.Name]) > 0 && cluster != "" {
			d.lintStatsMatcher(s, envoy, cluster, reads[s.Name], objs, warn)
			d.lintOneReplica(s, envoy, objs, replicaWarned, warn)
		}
	})
	d.lintExprClusterDomain()
	d.lintExprClusters()
	d.lintKindOnly(warn)
	d.lintRolloutKind(objs, warn)
	d.lintOtherCluster(objs, warn)
	d.lintHostContext(warn)
	d.lintLoopbackLoads(warn)
	d.lintClusterNameLoads(warn)
	d.lintDNSNames(warn)
	d.lintDNSUnchanged(warn)
	d.lintNothingJudged()
	d.lintDeltaWindows(warn)
	d.lintWarmup()
	d.lintGaugeAfterLoads()
	d.lintChangeAfterLoads()
	d.lintAtSiblings()
	d.lintIstioDefault()
	d.lintPodReplaced(objs, warn)
	d.lintUnmatchedLabels(objs, ix, warn)
	d.lintPodSelectors(objs, func(s *Step, field, code, format string, args ...any) { warnAt(true, s, field, code, format, args...) })
	d.lintUnknownSubsets(objs, ix, warn)
	d.lintEventsObjects(warn)
	d.lintEventsReason(func(s *Step, field, code, format string, args ...any) { warnAt(true, s, field, code, format, args...) })
	d.lintAbsentLabels(objs, warn)
	d.lintReflectsReapplied(warn)
	d.lintConfigUnwaited(warn)
	d.lintLogFormat(objs)
}

// lintReflectsReapplied warns of a config step whose reflects names an object that the steps
// before it (setup, then steps, in their order) applied under that kind, name and namespace
// with another spec than the last apply's: istiod's mark (its config path, a rule's name)
// names the object, not its version, so reflects held at once after the second apply, over
// the config of the first (the change not pushed yet). An object applied again unchanged is
// no change.
func (d *decoder) lintReflectsReapplied(warn func(s *Step, field, code, format string, args ...any)) {
	sc := d.sc
	type key struct{ kind, ns, name string }
	specs := map[key][]any{} // the specs applied so far, in order
	unknown := false         // a step before applies what vet cannot see
	Walk(append(append([]*Step{}, sc.Setup...), sc.Steps...), func(s *Step) {
		switch p := s.Params.(type) {
		case *schema.Apply:
			objs := slices.Clone(p.Objects)
			for _, fo := range d.stepFileObjects(p.Files) {
				objs = append(objs, fo.Object)
			}
			for _, o := range objs {
				kind, _ := o["kind"].(string)
				md, _ := o["metadata"].(map[string]any)
				name, _ := md["name"].(string)
				ns, _ := md["namespace"].(string)
				k := key{kind, d.defaultNamespace(or(ns, p.Namespace)), name}
				specs[k] = append(specs[k], o["spec"])
			}
			if p.Subresource == "" && slices.ContainsFunc(p.Files, HasInterpolation) {
				unknown = true // a file named at run time: what it applies is not known here
			}
		case *schema.Exec, *schema.Process:
			unknown = true // a command (kubectl apply) may apply it
		case *schema.Config:
			if p.Reflects == nil {
				return
			}
			ref := p.Reflects.Ref()
			k := key{ref.Kind, d.defaultNamespace(ref.Namespace), ref.Name}
			applied := specs[k]
			if len(applied) == 0 && !unknown && !HasInterpolation(ref.Name) && !HasInterpolation(ref.Namespace) {
				warn(s, "reflects", LintReflectsUnapplied, "reflects %s, which no step before this one applies: the step waits for istiod's mark of it, which comes only if the object exists already on the cluster, else until its timeout, and fails; apply the object in a step before this one (or drop reflects)",
					ref.String())
			}
			changed := false
			for i := 1; i < len(applied); i++ {
				if !reflect.DeepEqual(applied[i], applied[i-1]) {
					changed = true
				}
			}
			if !changed {
				return
			}
			warn(s, "reflects", LintReflectsReapplied, "reflects %s: the scenario applies %s %s/%s %d times before this step, changing its spec, and istiod's mark names the object, not its version: the mark of the earlier apply is there already, so the step holds at its first read, which may be of the config from before the change; wait for the change itself with until (until: \"%s.<field> == <new value>\")",
				ref.String(), schema.A(ref.Kind), k.ns, ref.Name, len(applied), or(s.Name, "<name>"))
		}
	})
}

// lintKindOnly warns of a wait: match or absent of any object of a kind (neither name nor
// labels, nor any other field) that exists in every namespace without any step making it
// (schema.EveryNamespace): "the job created its ConfigMap" held at once in a fresh namespace,
// over kube-root-ca.crt. The objects of matchFiles and absentFiles are each such a partial
// object, read from the files as vet reads them (a file it cannot read or parse is left to
// the checks that say so).
func (d *decoder) lintKindOnly(warn func(s *Step, field, code, format string, args ...any)) {
	sc := d.sc
	Walk(append(append(append(append([]*Step{}, sc.Setup...), sc.Steps...), sc.Catch...), sc.Cleanup...), func(s *Step) {
		p, ok := s.Params.(*schema.Wait)
		if !ok {
			return
		}
		check := func(field, what string, absent bool, want schema.Object) {
			kind, _ := want["kind"].(string)
			always := schema.EveryNamespace[kind]
			if len(always) == 0 || !kindOnly(want) {
				return
			}
			where := "every namespace has"
			if kind == "Namespace" {
				where = "every cluster has"
			}
			consequence := "the wait holds at once, whatever the steps did"
			if absent {
				consequence = "the wait never holds"
			}
			warn(s, field, LintKindOnlyMatch, "%s of any %s (neither name nor labels) matches %s, which %s without any step making them: %s; name the object (metadata.name) or give its labels (metadata.labels)",
				what, kind, strings.Join(always, ", "), where, consequence)
		}
		switch {
		case p.Match != nil:
			check("match", "wait.match", false, p.Match)
		case p.Absent != nil:
			check("absent", "wait.absent", true, p.Absent)
		}
		// A ${...} of a file is read as the string it is written as: kindOnly takes a
		// metadata that is not a map (metadata: ${vars.md}) as naming the object.
		d.eachWaitFileObject(p, false, func(field string, i int, absent bool, o schema.FileObject) bool {
			check(fmt.Sprintf("%s.%d", field, i), fmt.Sprintf("wait.%s (%s)", field, o.Source), absent, o.Object)
			return false
		})
	})
}

// lintRolloutKind warns of a wait: rollout of a name the scenario applies as another workload
// kind and never as a Deployment: rollout waits for a Deployment, and polled for none until
// its timeout, 5 minutes by default, to say "the deployment does not exist" (probe p9 #07).
func (d *decoder) lintRolloutKind(objs []applied, warn func(s *Step, field, code, format string, args ...any)) {
	ready := map[string][2]string{ // each kind's apiVersion, and how its status says it is ready
		"StatefulSet": {"apps/v1", "readyReplicas: <replicas>"}, "ReplicaSet": {"apps/v1", "readyReplicas: <replicas>"},
		"DaemonSet": {"apps/v1", "numberReady: <nodes>"}, "Job": {"batch/v1", "succeeded: 1"}, "CronJob": {"batch/v1", "lastSuccessfulTime: …"},
	}
	kinds := map[string]string{} // a name → the first workload kind other than Deployment applied as it
	deployments := map[string]bool{}
	for _, a := range objs {
		kind, _ := a.obj["kind"].(string)
		md, _ := a.obj["metadata"].(map[string]any)
		name, _ := md["name"].(string)
		switch {
		case kind == "Deployment":
			deployments[name] = true
		case ready[kind][0] != "" && kinds[name] == "":
			kinds[name] = kind
		}
	}
	sc := d.sc
	Walk(append(append(append(append([]*Step{}, sc.Setup...), sc.Steps...), sc.Catch...), sc.Cleanup...), func(s *Step) {
		p, ok := s.Params.(*schema.Wait)
		if !ok || p.Rollout == "" || HasInterpolation(p.Rollout) || deployments[p.Rollout] {
			return
		}
		kind := kinds[p.Rollout]
		if kind == "" {
			return
		}
		warn(s, "rollout", LintRolloutKind, "rollout %q waits for a Deployment, and the scenario applies %s as a %s, no Deployment: the wait polls for a Deployment that does not exist until its timeout (5m by default); wait for the %s's status instead: wait: match: {apiVersion: %q, kind: %q, metadata: name: %q, status: %s}",
			p.Rollout, p.Rollout, kind, kind, ready[kind][0], kind, p.Rollout, ready[kind][1])
	})
}

// lintOtherCluster warns of a wait: match or absent, in a scenario of several clusters, of an
// object that the scenario applies only in other clusters: "west's ConfigMap is gone" looked
// in east (the step's cluster: forgotten), where no step made it, and held at once while a
// finalizer kept it in west (probe p9 #08).
func (d *decoder) lintOtherCluster(objs []applied, warn func(s *Step, field, code, format string, args ...any)) {
	sc := d.sc
	if len(sc.Clusters) < 2 {
		return
	}
	in := map[string]map[string]bool{} // kind/name → the clusters whose steps apply it
	for _, a := range objs {
		kind, _ := a.obj["kind"].(string)
		md, _ := a.obj["metadata"].(map[string]any)
		name, _ := md["name"].(string)
		if kind == "" || name == "" || HasInterpolation(name) {
			continue
		}
		k := kind + "/" + name
		if in[k] == nil {
			in[k] = map[string]bool{}
		}
		in[k][sc.ClusterOf(a.step)] = true
	}
	Walk(append(append(append(append([]*Step{}, sc.Setup...), sc.Steps...), sc.Catch...), sc.Cleanup...), func(s *Step) {
		if g, ok := s.Params.(*schema.Get); ok {
			d.lintGetOtherCluster(s, g, objs, in, warn)
			return
		}
		if ev, ok := s.Params.(*schema.Events); ok {
			// The events of an object are those of the step's cluster: of west's object, read
			// in east, none, and "no BackOff" (len(ev) == 0) held whatever happened in west.
			where, c := in[ev.Kind+"/"+ev.Name], sc.ClusterOf(s)
			if ev.Kind == "" || ev.Name == "" || len(where) == 0 || where[c] {
				return
			}
			others := clustersAmong(sc, where)
			warn(s, "name", LintOtherCluster, "the scenario applies %s %s only in cluster %s; this events step reads the events of cluster %s, where no step makes it: it keeps none, and a claim that none happened (len(…) == 0) holds whatever happened to it there; write cluster: %q on the step",
				ev.Kind, ev.Name, strings.Join(others, ", "), c, others[0])
			return
		}
		p, ok := s.Params.(*schema.Wait)
		if !ok {
			return
		}
		c := sc.ClusterOf(s)
		if p.Rollout != "" && !HasInterpolation(p.Rollout) {
			// A rollout waits for a Deployment of the step's cluster: of west's, in east, it
			// polls for one that is not there until its timeout.
			if where := in["Deployment/"+p.Rollout]; len(where) > 0 && !where[c] {
				others := clustersAmong(sc, where)
				warn(s, "rollout", LintOtherCluster, "the scenario applies Deployment %s only in cluster %s; this wait looks in cluster %s, where no step makes it: the wait polls for a Deployment that is not there until its timeout (5m by default); write cluster: %q on the step",
					p.Rollout, strings.Join(others, ", "), c, others[0])
			}
			return
		}
		check := func(field, what string, absent bool, want schema.Object) bool {
			kind, _ := want["kind"].(string)
			md, _ := want["metadata"].(map[string]any)
			name, _ := md["name"].(string)
			where := in[kind+"/"+name]
			if len(where) == 0 || where[c] {
				return false
			}
			others := clustersAmong(sc, where)
			consequence := "the wait holds at once, whatever happened to it there"
			if !absent {
				consequence = "the wait never holds"
			}
			warn(s, field, LintOtherCluster, "%sthe scenario applies %s %s only in cluster %s; this wait looks in cluster %s, where no step makes it: %s; write cluster: %q on the step",
				what, kind, name, strings.Join(others, ", "), c, consequence, others[0])
			return true
		}
		switch {
		case p.Absent != nil:
			check("absent", "", true, p.Absent)
		case p.Match != nil:
			check("match", "", false, p.Match)
		}
		// The objects of matchFiles and absentFiles are waited for as a match or absent of
		// each (read as vet reads them; a file it cannot read or parse is left to the checks
		// that say so). Before, an absentFiles of west's object, waited for in east, held at
		// once and vet --strict said ok. One warning a step: the step's cluster is one fix.
		d.eachWaitFileObject(p, true, func(field string, i int, absent bool, o schema.FileObject) bool {
			return check(fmt.Sprintf("%s.%d", field, i), fmt.Sprintf("wait.%s (%s): ", field, o.Source), absent, o.Object)
		})
	})
}

// lintGetOtherCluster warns of a get, in a scenario of several clusters, of objects that the
// scenario applies only in other clusters (in: kind/name → their clusters): a get lists those
// of its step's cluster, and of west's pods, listed in east (the step's cluster: forgotten),
// it read an empty list, where "none left after the scale-down" (len(pods) == 0) held
// whatever happened in west; of west's object by name, it fails not found.
func (d *decoder) lintGetOtherCluster(s *Step, g *schema.Get, objs []applied, in map[string]map[string]bool, warn func(s *Step, field, code, format string, args ...any)) {
	sc := d.sc
	var where map[string]bool
	field, what, them, consequence := "name", g.Kind+" "+g.Name, "it", "the get fails (not found)"
	switch {
	case g.Name != "":
		where = in[g.Kind+"/"+g.Name]
	case g.Selector != "" && !HasInterpolation(g.Kind):
		want, ok := parseSelector(g.Selector)
		if !ok {
			return // one known at run time
		}
		ns := d.defaultNamespace(g.Namespace)
		where = map[string]bool{}
		for _, a := range objs {
			kind, _ := a.obj["kind"].(string)
			md, _ := a.obj["metadata"].(map[string]any)
			l, _ := md["labels"].(map[string]any)
			if schema.KindKey(g.Kind) == schema.KindKey("Pod") {
				l, _, _ = podTemplate(a.obj)
			} else if schema.KindKey(kind) != schema.KindKey(g.Kind) {
				continue
			}
			if l != nil && a.namespace() == ns && want.Matches(labelSetOf(l)) {
				where[sc.ClusterOf(a.step)] = true
			}
		}
		field, what, them = "selector", fmt.Sprintf("the %ss labelled %s", g.Kind, g.Selector), "them"
		consequence = "it lists none, and a claim that none is there (len(…) == 0) holds whatever happened to them there"
	}
	c := sc.ClusterOf(s)
	if len(where) == 0 || where[c] {
		return
	}
	others := clustersAmong(sc, where)
	warn(s, field, LintOtherCluster, "the scenario applies %s only in cluster %s; this get reads cluster %s, where no step makes %s: %s; write cluster: %q on the step",
		what, strings.Join(others, ", "), c, them, consequence, others[0])
}

// clustersAmong are the scenario's clusters that where holds, in declaration order.
func clustersAmong(sc *Scenario, where map[string]bool) []string {
	return slices.DeleteFunc(sc.ClusterNames(), func(x string) bool { return !where[x] })
}

// kindOnly reports whether a partial object says nothing but its kind (apiVersion, kind, a
// namespace): any object of the kind matches it.
func kindOnly(o schema.Object) bool {
	for k, v := range o {
		switch k {
		case "apiVersion", "kind":
		case "metadata":
			md, ok := v.(map[string]any)
			if !ok && v != nil {
				return false // a ${...} of a file, filled when the step starts
			}
			for mk := range md {
				if mk != "namespace" {
					return false
				}
			}
		default:
			return false
		}
	}
	return true
}

// deltaPair is a pair of snapshots a delta compares, and the stats read of it.
type deltaPair struct {
	from, to *Step
	stats    []string
}

// deltaPairs are the pairs of snapshots the deltas of the scenario's expectations and asserts
// compare, as the plan knows them (a plain delta of an expectation: the first and last
// snapshot), each once, in the order read, with the stats read of each.
func (d *decoder) deltaPairs() []*deltaPair {
	sc := d.sc
	var pairs []*deltaPair
	add := func(from, to, stat string) {
		a, b := sc.Step(from), sc.Step(to)
		if a == nil || b == nil || a == b {
			return
		}
		i := slices.IndexFunc(pairs, func(p *deltaPair) bool { return p.from == a && p.to == b })
		if i < 0 {
			pairs = append(pairs, &deltaPair{from: a, to: b})
			i = len(pairs) - 1
		}
		if stat != "" && !slices.Contains(pairs[i].stats, stat) {
			pairs[i].stats = append(pairs[i].stats, stat)
		}
	}
	for _, e := range sc.Expect {
		for _, r := range e.Refs {
			switch r.Kind {
			case RefDelta:
				if sc.ExprNames != nil && sc.ExprNames.DeltaErr == "" {
					add(sc.ExprNames.DeltaFrom, sc.ExprNames.DeltaTo, r.Stat)
				}
			case RefDeltaPair:
				add(r.From, r.To, r.Stat)
			}
		}
	}
	for _, ph := range sc.Phases() {
		Walk(ph.Steps, func(s *Step) {
			if s.Expr == nil {
				return
			}
			for _, r := range s.Expr.Refs {
				if r.Kind == RefDeltaPair {
					add(r.From, r.To, r.Stat)
				}
			}
		})
	}
	return pairs
}

// lintDeltaWindows warns of a delta an expression reads whose window cannot hold what the
// scenario measures: its snapshots are of a local backend no step can reach
// (LintUnreachedBackend), or it closes while a load that started inside it may still run
// (LintDeltaWindowOpen). Both hold a claim over the delta to nothing the load did (a delta
// of 0 rq_5xx while every request answered 503).
func (d *decoder) lintDeltaWindows(warn func(s *Step, field, code, format string, args ...any)) {
	pairs := d.deltaPairs()
	if len(pairs) == 0 {
		return
	}
	warned := map[string]bool{}
	for _, pr := range pairs {
		from, to := pr.from, pr.to
		fp, ok1 := from.Params.(*schema.Snapshot)
		tp, ok2 := to.Params.(*schema.Snapshot)
		if !ok1 || !ok2 {
			continue
		}
		if b := tp.Backend; b != "" && fp.Backend == b && d.target() == "local" && !warned[b] {
			if what := d.mayReachBackend(b); what == "" {
				warned[b] = true
				warn(to, "backend", LintUnreachedBackend, "the delta of %s and %s is of local backend %s, which no step of this scenario can reach (%s): nothing the run does moves its counters, so a claim over the delta (delta.rq_5xx == 0) holds or fails whatever the load did; snapshot the backend the load sends to", from.Name, to.Name, b, d.loadTargets())
			}
		}
		for _, l := range d.order {
			if _, ok := l.Params.(*schema.Load); !ok || l.Every > 0 {
				continue
			}
			// Started after the window opened, and the window closes right after it starts: a
			// snapshot taken on purpose while a load runs, after a sleep or at an offset (the
			// traffic so far), is not warned of.
			if stat := pr.trafficStat(); stat != "" && d.opensBeside(from, l) {
				// parallel: [before, load]: which starts first is a race of goroutines (on a
				// cluster, of two execs), so the delta may miss the load's first requests.
				warn(from, "", LintDeltaWindowOpen, "snapshot %s, which opens the delta of %s and %s an expression reads (%s), starts in one parallel block with load %s, at the same offset: which of them starts first is a race, so the delta may miss the load's first requests, and a claim over it (delta.%s == 0) may hold of requests it never counted; take snapshot %q ahead of the parallel block", from.Name, from.Name, to.Name, stat, l.Shown, stat, from.Name)
				continue
			}
			if d.endedBefore(from, l) && !d.endedBefore(l, to) && d.closesRightAfter(l, to) {
				warn(to, "", LintDeltaWindowOpen, "snapshot %s, which closes the delta of %s and %s an expression reads, is taken right after load %s starts in the background (nothing between takes time, and it is not awaited before %s): the delta covers none or little of the load's requests, so a claim over it (delta.rq_5xx == 0) judges a window the load sent next to nothing in; await %s before %s", to.Name, from.Name, to.Name, l.Shown, to.Name, l.Shown, to.Name)
			}
		}
		if l, stat := d.plainDeltaClosesBeside(pr); l != nil {
			// before; parallel: [load, {at: 1s, mid}] and no after: the plain delta, which
			// reads like the whole load's, is the first second's.
			warn(to, "", LintDeltaWindowOpen, "the plain delta an expectation reads (%s) is of snapshots %s and %s, the first and the last, and %s is taken beside load %s in a parallel block, while it may still run: the delta counts only the requests sent before it, so a claim over it (delta.%s == 0) may hold of requests it never counted; take a snapshot after the parallel block (the plain delta's last), or, for the traffic so far, write delta(%q, %q)", stat, from.Name, to.Name, to.Name, l.Shown, stat, from.Name, to.Name)
		}
		if l, stat := d.deltaAfterLoads(pr); l != nil {
			// load, before, after: the newcomer's order; delta is 0 and a claim that it
			// equals the load's 503s passes of a load that had none counted.
			warn(from, "", LintDeltaAfterLoads, "snapshot %s, which opens the delta of %s and %s an expression reads (%s), is taken after every load of the scenario has ended (load %s ends before it), and no command or process may run between the two snapshots: the delta counts none of the loads' requests, so a claim over it (delta.%s == 0) holds whatever the loads did; take snapshot %q before the load", from.Name, from.Name, to.Name, stat, l.Shown, stat, from.Name)
		}
		if l, stat := d.deltaBeforeLoads(pr); l != nil {
			warn(to, "", LintDeltaBeforeLoads, "snapshot %s, which closes the delta of %s and %s an expression reads (%s), is taken before every load of the scenario starts (load %s starts after it), and no command or process may run between the two snapshots: the delta counts none of the loads' requests, so a claim over it (delta.%s == 0) holds whatever the loads did; take snapshot %s once the load has ended, or, for a claim about the quiet before the load, say so: lint: ignore: {%q: \"the baseline before the load\"}", to.Name, from.Name, to.Name, stat, l.Shown, stat, to.Name, LintDeltaBeforeLoads)
		}
	}
}

// opensBeside says snapshot from and load l are children of one parallel block at the same
// offset: neither starts before the other.
func (d *decoder) opensBeside(from, l *Step) bool {
	lca := d.commonBlock(from, l)
	if lca == nil || lca.Kind != "parallel" {
		return false
	}
	bf, bl := d.branch(lca, from), d.branch(lca, l)
	return bf == from && bl == l && bf.At == bl.At
}

// trafficStat is a stat that requests or connections move (rq_total, upstream_rq_503,
// upstream_rq_pending_overflow, upstream_cx_total, retry counts): a delta of one over a window
// no traffic reaches is 0 whatever the traffic did.
var trafficStat = regexp.MustCompile(`(?:^|[._])(?:rq|cx)(?:_|$)|retry|overflow`)

// sendsNoRequest are the step kinds that send no request: a window the delta lints look at
// may hold them.
var sendsNoRequest = map[string]bool{
	"snapshot": true, "wait": true, "assert": true, "sleep": true, "logs": true, "await": true, "dns": true,
	"config": true, "get": true, "events": true, "apply": true, "delete": true, "scale": true, "kill": true,
	"restart": true, "parallel": true, "sequence": true, "repeat": true,
}

// trafficStat is the first stat the delta of pr reads that counts traffic (trafficStat), or "".
func (pr *deltaPair) trafficStat() string {
	for _, s := range pr.stats {
		if trafficStat.MatchString(s) {
			return s
		}
	}
	return ""
}

// plainDeltaClosesBeside returns, when an expectation reads a traffic stat (trafficStat) of
// the plain delta and pr is its pair, the first load that starts after the delta opens and
// runs beside its closing snapshot in a parallel block (neither surely ended before the
// other): the plain delta then ends while that load runs. An explicit delta("a", "mid") is a
// window written on purpose, and not returned.
func (d *decoder) plainDeltaClosesBeside(pr *deltaPair) (*Step, string) {
	names := d.sc.ExprNames
	if names == nil || names.DeltaErr != "" || pr.from.Name != names.DeltaFrom || pr.to.Name != names.DeltaTo {
		return nil, ""
	}
	stat := ""
	for _, e := range d.sc.Expect {
		for _, r := range e.Refs {
			if r.Kind == RefDelta && stat == "" && trafficStat.MatchString(r.Stat) {
				stat = r.Stat
			}
		}
	}
	if stat == "" {
		return nil, ""
	}
	for _, l := range d.order {
		if l.Kind != "load" || l.Every > 0 || !d.endedBefore(pr.from, l) {
			continue
		}
		if lca := d.commonBlock(pr.to, l); lca != nil && lca.Kind == "parallel" && !d.endedBefore(l, pr.to) && !d.endedBefore(pr.to, l) {
			return l, stat
		}
	}
	return nil, ""
}

// deltaBeforeLoads returns, when the scenario has loads and the delta of pr reads a traffic
// stat (trafficStat; the first is returned) over a window that closes before every load
// starts (its later snapshot ends before the load in a sequence, or is at an earlier offset
// than the load's branch in a parallel block) and that no command, process or step of a kind
// that may send may run in, the first of those loads.
func (d *decoder) deltaBeforeLoads(pr *deltaPair) (*Step, string) {
	stat := pr.trafficStat()
	if stat == "" {
		return nil, ""
	}
	closedBefore := func(s *Step) bool {
		if d.endedBefore(pr.to, s) {
			return true
		}
		lca := d.commonBlock(pr.to, s)
		return lca != nil && lca.Kind == "parallel" && d.startedBefore(pr.to, s)
	}
	var first *Step
	for _, s := range d.order {
		if s == pr.from || s == pr.to {
			continue
		}
		switch {
		case sendsNoRequest[s.Kind]:
			continue
		case s.Kind == "load":
			if !closedBefore(s) {
				return nil, "" // it may send in the window, or sent before it
			}
			if first == nil {
				first = s
			}
		default:
			if !d.endedBefore(s, pr.from) && !closedBefore(s) {
				return nil, "" // a command or process may send in the window
			}
		}
	}
	return first, stat
}

// deltaAfterLoads is deltaBeforeLoads's mirror: when the scenario has loads and the delta of
// pr reads a traffic stat over a window that opens after every load has ended (each ends
// before its earlier snapshot starts) and that no command, process or step of a kind that
// may send may run in, the last of those loads.
func (d *decoder) deltaAfterLoads(pr *deltaPair) (*Step, string) {
	stat := pr.trafficStat()
	if stat == "" {
		return nil, ""
	}
	var last *Step
	for _, s := range d.order {
		if s == pr.from || s == pr.to {
			continue
		}
		switch {
		case sendsNoRequest[s.Kind]:
			continue
		case s.Kind == "load":
			if !d.endedBefore(s, pr.from) {
				return nil, "" // it may send in the window, or after it
			}
			last = s
		default:
			if !d.endedBefore(s, pr.from) && !d.endedBefore(pr.to, s) {
				return nil, "" // a command or process may send in the window
			}
		}
	}
	return last, stat
}

// inFlightGauge says whether stat is a level Envoy holds only while requests are in flight,
// back to 0 once they end: a circuit breaker's open gauge, upstream_rq_active,
// upstream_rq_pending_active (not upstream_cx_active: a pool keeps its connections open).
func inFlightGauge(stat string) bool {
	return schema.OnOff(stat) || stat == "upstream_rq_active" || stat == "upstream_rq_pending_active" || stat == "rq_active"
}

// plannedEndSlack is how long after a load's planned end (its offset in a parallel block and
// its duration) a snapshot beside it is taken for lintGaugeAfterLoads to judge the load ended:
// fortio stops sending at the duration and waits for the requests in flight, which a second
// covers unless they are slower than that.
const plannedEndSlack = time.Second

// plannedAfter says whether snapshot s is planned to start, in the parallel block it shares
// with load l, at least plannedEndSlack after l's planned end, and gives that end (from the
// block's start); a load of unknown duration, or steps not both in one parallel block, say no.
func plannedAfter(plan map[string]*Entry, parent map[*Step]*Step, l, s *Step) (time.Duration, bool) {
	p := parent[s]
	if p == nil || p.Kind != "parallel" || parent[l] != p || !s.HasAt {
		return 0, false
	}
	le, se := plan[l.Path], plan[s.Path]
	if le == nil || se == nil || !le.InBlock.Exact || !se.InBlock.Exact {
		return 0, false
	}
	d := minDuration(le)
	if d <= 0 {
		return 0, false
	}
	end := le.InBlock.D + d
	return end, se.InBlock.D >= end+plannedEndSlack
}

// lintGaugeAfterLoads warns (LintGaugeAfterLoads) of an expectation or assert that reads an
// in-flight level (inFlightGauge) of a snapshot taken after every load of the scenario has
// ended, with no command or process that may run beside it: the newcomer's load, then after,
// and after.circuit_breakers.default.rq_pending_open == 0 passes of a breaker that opened.
func (d *decoder) lintGaugeAfterLoads() {
	sc := d.sc
	if _, ok := sc.LintIgnore[LintGaugeAfterLoads]; ok {
		return
	}
	// plan is the scenario's planned times, made when a claim reads an in-flight level: a
	// snapshot at an offset beyond a load's planned end beside it (at: "3s" of a 500 ms load)
	// is taken after it as surely as one after it in a sequence.
	var plan map[string]*Entry
	planned := func(l, s *Step) (time.Duration, bool) {
		if plan == nil {
			plan = map[string]*Entry{}
			p := planTimes(sc)
			for i := range p.Entries {
				plan[p.Entries[i].Path] = &p.Entries[i]
			}
		}
		return plannedAfter(plan, d.parent, l, s)
	}
	// lastLoad is the load that ended last before snapshot s when every load and every step
	// that may send requests ended before it (or starts after it); nil otherwise. beside says
	// the load ended by its planned end, in the parallel block s is in.
	lastLoad := func(s *Step) (last *Step, end time.Duration, beside bool) {
		var before, besideLast *Step
		for _, o := range d.order {
			if o == s || sendsNoRequest[o.Kind] {
				continue
			}
			if o.Kind == "load" {
				if d.endedBefore(o, s) {
					before = o
					continue
				}
				e, ok := planned(o, s)
				if !ok {
					return nil, 0, false
				}
				if besideLast == nil || e > end {
					besideLast, end = o, e
				}
				continue
			}
			if !d.endedBefore(o, s) && !d.endedBefore(s, o) {
				return nil, 0, false // a command or process may send beside it
			}
		}
		if besideLast != nil {
			return besideLast, end, true
		}
		return before, 0, false
	}
	var claims []*Expr
	claims = append(claims, sc.Expect...)
	for _, ph := range sc.Phases() {
		Walk(ph.Steps, func(s *Step) {
			if s.Kind == "assert" && s.Expr != nil {
				claims = append(claims, s.Expr)
			}
		})
	}
	// watched are the levels some claim reads while a load may run (a series, a snapshot
	// beside a load): one read after the loads then says the level came back down (mid's 1,
	// after's 0), which is a claim.
	watched := map[string]bool{}
	for _, e := range claims {
		for _, r := range e.Refs {
			switch {
			case !inFlightGauge(r.Stat):
			case r.Kind == RefSeries || r.Kind == RefSource:
				watched[r.Stat] = true
			case r.Kind == RefSnapshot:
				s := sc.Step(r.Name)
				if s == nil {
					continue
				}
				for _, o := range d.order {
					if o.Kind == "load" && !d.endedBefore(o, s) && !d.endedBefore(s, o) {
						if _, after := planned(o, s); !after {
							watched[r.Stat] = true
						}
					}
				}
			}
		}
	}
	said := map[Pos]bool{}
	check := func(e *Expr) {
		for _, r := range e.Refs {
			if r.Kind != RefSnapshot || !inFlightGauge(r.Stat) || watched[r.Stat] {
				continue
			}
			s := sc.Step(r.Name)
			if s == nil || s.Kind != "snapshot" || s.Every > 0 {
				continue
			}
			l, end, beside := lastLoad(s)
			if l == nil {
				continue
			}
			if beside {
				pos := d.stepLitPos(s, "at")
				if said[pos] {
					return
				}
				said[pos] = true
				d.l.warnings = append(d.l.warnings, &Warning{Pos: pos, Code: LintGaugeAfterLoads, Scenario: sc.Name, Msg: fmt.Sprintf("snapshot %s at %s is planned after load %s beside it has ended (planned to end at %s in the block, and given a second for its last requests), yet %s.%s reads it as the load runs: %s is a level held only while requests are in flight, back to 0 once they end, so a claim that it is 0 holds whatever the load did (and one that it is at least 1 fails on a correct run); move snapshot %s inside the load's duration (at: %q), or sample it with every and while", r.Name, fmtDur(s.At), l.Shown, fmtDur(end), r.Name, r.Stat, r.Stat, r.Name, fmtDur(end/2))})
				return
			}
			pos := e.Pos
			if i := strings.Index(e.Src, r.Name+"."+r.Stat); i >= 0 {
				pos = exprPos(e.Pos, e.Src, utf8.RuneCountInString(e.Src[:i]))
			}
			d.l.warnings = append(d.l.warnings, &Warning{Pos: pos, Code: LintGaugeAfterLoads, Scenario: sc.Name, Msg: fmt.Sprintf("%s.%s is read of snapshot %s, taken after every load of the scenario has ended (load %s ends before it): %s is a level Envoy holds only while requests are in flight, back to 0 once they end, so a claim that it is 0 holds whatever the load did (and one that it is 1 fails on a correct run); take snapshot %s while the load runs: beside it in a parallel block at an offset (at: \"1s\"), or sampled with every and while", r.Name, r.Stat, r.Name, l.Shown, r.Stat, r.Name)})
			return
		}
	}
	for _, e := range claims {
		check(e)
	}
}

// serverRequests is a read of a server's request count over a window: a delta's rq_total (a
// local backend's, its http.downstream_ name) or upstream_rq_total / downstream_rq_total.
var serverRequests = regexp.MustCompile(`^(?:delta|deltaAcross)\b.*\.(?:http\.)?(?:upstream_|downstream_)?rq_total$`)

// loadRequests is a read of a load's requests: its step is the submatch.
var loadRequests = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)\.requests$`)

// lintWarmup warns of an expectation (LintWarmupUncounted) that equates a server's request
// count with the requests of a load of a duration (no requests): fortio's HTTP runner sends one
// warm-up request per connection before such a load, uncounted in its results and counted by
// the server, so delta.rq_total is requests + connections on a correct run.
func (d *decoder) lintWarmup() {
	if _, ok := d.sc.LintIgnore[LintWarmupUncounted]; ok {
		return
	}
	for _, e := range d.sc.Expect {
		var walk func(x *Explain)
		walk = func(x *Explain) {
			if x == nil {
				return
			}
			if x.Op != "==" || x.Left == nil || x.Right == nil {
				walk(x.Left)
				walk(x.Right)
				return
			}
			for _, pair := range [][2]*Explain{{x.Left, x.Right}, {x.Right, x.Left}} {
				srv, ld := strings.TrimSpace(pair[0].Src), strings.TrimSpace(pair[1].Src)
				m := loadRequests.FindStringSubmatch(ld)
				if m == nil || !serverRequests.MatchString(srv) {
					continue
				}
				st := d.sc.Step(m[1])
				if st == nil {
					continue
				}
				if l, ok := st.Params.(*schema.Load); ok && l.Requests == 0 {
					d.l.warnings = append(d.l.warnings, &Warning{Pos: e.Pos, Code: LintWarmupUncounted, Scenario: d.sc.Name, Msg: fmt.Sprintf("%s == %s: load %s runs for a duration, and fortio first sends one warm-up request per connection that it does not count and the server does, so %s is %s.requests + %s.connections on a correct run and this claim fails by the connections; write %s == %s.requests + %s.connections, or give the load requests: N (no warm-up)", srv, ld, m[1], srv, m[1], m[1], srv, m[1], m[1])})
					return
				}
			}
		}
		walk(e.Explain)
	}
}

// closesRightAfter reports whether snapshot to is taken right after background step l starts:
// both in one sequence (or a phase's list), l before to, and every step between them (and to)
// takes no time of its own (a snapshot, an assert, a dns flip) at no offset.
func (d *decoder) closesRightAfter(l, to *Step) bool {
	if !l.Background || to.At != 0 || d.index[l] >= d.index[to] {
		return false
	}
	if lca := d.commonBlock(l, to); lca != nil && lca.Kind != "sequence" || d.parent[l] != d.parent[to] {
		return false
	}
	for _, s := range d.order[d.index[l]+1 : d.index[to]] {
		if d.ancestor(l, s) {
			continue
		}
		switch s.Kind {
		case "snapshot", "assert", "dns":
			if s.At != 0 || s.Every > 0 {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// loadTargets says where the scenario's loads send, for a message.
func (d *decoder) loadTargets() string {
	var urls []string
	for _, s := range d.order {
		if p, ok := s.Params.(*schema.Load); ok && !slices.Contains(urls, p.URL) {
			urls = append(urls, p.URL)
		}
	}
	if len(urls) == 0 {
		return "it has no load"
	}
	return "its loads send to " + strings.Join(urls, ", ")
}

// backendRef finds ${backends.<name>…} in a string.
var backendRef = regexp.MustCompile(`\$\{\s*backends\.([A-Za-z_][\w-]*)`)

// mayReachBackend says which step of the scenario may send to (or restart) local backend b,
// "" when none can: only a load whose URL starts with another backend's ${backends.<name>.url}
// or address, a command that cannot listen or send (cannotListen), and steps that send nothing
// (snapshots, waits, asserts, sleeps, logs, awaits, dns, blocks) are known not to.
func (d *decoder) mayReachBackend(b string) string {
	for _, s := range d.order {
		switch p := s.Params.(type) {
		case *schema.Load:
			m := backendRef.FindStringSubmatchIndex(p.URL)
			other := m != nil && p.URL[m[2]:m[3]] != b && !strings.Contains(p.URL, "backends."+b+".") &&
				(m[0] == 0 && strings.HasPrefix(p.URL[m[1]:], ".url}") ||
					(strings.HasPrefix(p.URL, "http://") || strings.HasPrefix(p.URL, "https://")) && m[0] == strings.Index(p.URL, "//")+2 && strings.HasPrefix(p.URL[m[1]:], ".address}"))
			if !other {
				return "the " + s.Kind + " " + s.Shown
			}
		case *schema.Exec, *schema.Process:
			if !cannotListen(s) {
				return "the " + s.Kind + " " + s.Shown
			}
		default:
			switch s.Kind {
			case "snapshot", "wait", "assert", "sleep", "logs", "await", "dns", "sequence", "parallel", "repeat", "events", "get":
			default:
				return "the " + s.Kind + " " + s.Shown
			}
		}
	}
	return ""
}

// lintDNSNames warns of a dns step on the local target whose host is a name that no record of
// local.dns declares and no other step names (in a URL, an argv, any of its strings, with the
// ${...} known before the run written in): most often a misspelling (glsb for gslb), and the
// flip changes no name the scenario resolves. A step whose strings hold a ${...} known only at
// run time, other than a backend's or blackhole's address, may name it: the lint then says
// nothing.
func (d *decoder) lintDNSNames(warn func(s *Step, field, code, format string, args ...any)) {
	l := d.sc.Local
	if l == nil || l.DNS == nil || d.target() != "local" {
		return
	}
	zone := zoneOf(l.DNS)
	fqdn := func(h string) string { return inZone(h, zone) }
	declared := map[string]bool{}
	for k := range l.DNS.Records {
		declared[fqdn(k)] = true
	}
	var text strings.Builder // what the other steps write, lower case
	for _, s := range d.order {
		if _, ok := s.Params.(*schema.DNS); ok || s.Params == nil {
			continue
		}
		if b, err := json.Marshal(s.Params); err == nil {
			text.WriteString(strings.ToLower(string(b)))
			text.WriteByte('\n')
		}
		for _, t := range s.templates {
			for _, p := range t.parts {
				if p.expr == nil {
					continue
				}
				if _, ok := d.staticValue(strings.TrimSpace(p.expr.Src)); !ok && !endpointRef.MatchString(strings.TrimSpace(p.expr.Src)) {
					return // a name made at run time may be this one
				}
			}
			text.WriteString(strings.ToLower(t.Static(d.staticValue)))
			text.WriteByte('\n')
		}
	}
	names := text.String()
	for _, s := range d.order {
		p, ok := s.Params.(*schema.DNS)
		if !ok || p.Server != nil || HasInterpolation(p.Host) {
			continue
		}
		h := fqdn(p.Host)
		if h == "" || declared[h] || strings.Contains(names, h) {
			continue
		}
		if label := strings.TrimSuffix(h, "."+zone); label != h && regexp.MustCompile(`(^|[^a-z0-9.-])`+regexp.QuoteMeta(label)+`([^a-z0-9-]|$)`).MatchString(names) {
			continue // named by its label alone (dig gslb, with the zone as search domain)
		}
		var have []string
		for _, k := range sortedKeys(l.DNS.Records) {
			have = append(have, fqdn(k))
		}
		mean := didYouMean(h, have)
		known := "local.dns declares no record"
		if len(have) > 0 {
			known = "its records: " + strings.Join(have, ", ")
		}
		warn(s, "host", LintUnusedDNSName, "the dns step sets %s%s, which no record of local.dns declares (%s) and no step of this scenario names: the names the scenario resolves keep their addresses, and claims about the flip hold of nothing; set a name a load or exec uses", h, mean, known)
	}
}

// lintNothingJudged warns of a scenario that measures and judges nothing: no expectation, no
// assert or wait step in any phase. Its run passes whenever its steps run — a load every request of which
// answered 503 included — and its report reads as a proof. A scenario that only acts (applies,
// execs: each step fails on its own error) is judged by its steps and is not warned of.
func (d *decoder) lintNothingJudged() {
	sc := d.sc
	if len(sc.Expect) > 0 {
		return
	}
	if _, ok := sc.LintIgnore[LintNothingJudged]; ok {
		return
	}
	var measured []string
	judged := false
	// An assert or wait of cleanup judges as well: the run fails when it does not hold.
	for _, ph := range []([]*Step){sc.Setup, sc.Steps, sc.Catch, sc.Cleanup} {
		Walk(ph, func(s *Step) {
			switch s.Kind {
			case "assert", "wait":
				judged = true
			case "load", "snapshot", "logs":
				what := s.Kind
				if s.Name != "" {
					what += " " + s.Name
				}
				if !slices.Contains(measured, what) {
					measured = append(measured, what)
				}
			}
		})
	}
	if judged || len(measured) == 0 {
		return
	}
	d.l.warnings = append(d.l.warnings, &Warning{Pos: sc.Pos, Code: LintNothingJudged, Scenario: sc.Name, Msg: fmt.Sprintf(
		"scenario %s measures (%s) but judges none of it: it has no expect and no assert or wait step, so it passes whenever its steps run, a load whose every request answered 503 included; write the claim as expect: [\"…\"] (e.g. %s)",
		sc.Name, strings.Join(measured, ", "), nothingJudgedExample(measured))})
}

// nothingJudgedExample is an expectation of the first named measurement, for the warning.
func nothingJudgedExample(measured []string) string {
	for _, m := range measured {
		kind, name, ok := strings.Cut(m, " ")
		if !ok {
			continue
		}
		switch kind {
		case "load":
			return fmt.Sprintf("\"%s.code200 == %s.requests\"", name, name)
		case "logs":
			return fmt.Sprintf("\"%s.count > 0\"", name)
		}
	}
	return "\"delta.upstream_rq_total > 0\""
}

// lintLoopbackLoads warns of a local load whose URL names a loopback address (an IP literal or
// localhost) where no local backend or blackhole of the scenario listens, when nothing of the
// scenario's own (a process, an exec on this machine) could be listening there — no such step
// may run, or have left a server running, while the load runs (mayServe) with a command that
// can listen (cannotListen; a scenario with no local world is judged only where it runs
// commands, none of which can be the server): most often a
// mistyped port, whose every request fails to connect, and "no 503" claims then hold of
// nothing. A URL written with ${...} is judged on what is known before the run (staticValue:
// a backend's host, a fixed address, a var's value in this combination); one whose address
// is only known at run time is left alone. Nothing is resolved or dialed.
func (d *decoder) lintLoopbackLoads(warn func(s *Step, field, code, format string, args ...any)) {
	l := d.sc.Local
	if d.target() != "local" {
		return
	}
	// The commands this machine runs for the scenario: a process, or an exec without a pod
	// (which may leave a server behind). One may be what listens where a load's URL points,
	// unless it cannot listen at all (cannotListen) or the load has always ended before it
	// starts.
	var servers, idle []*Step
	for _, s := range d.order {
		if !writesLocalFiles(s) {
			continue
		}
		if cannotListen(s) {
			idle = append(idle, s)
		} else {
			servers = append(servers, s)
		}
	}
	if l == nil {
		// A scenario that declares no local world relies on a server of its own (a process
		// step) or one outside it: judged only where it starts commands, none of which can be
		// that server.
		if len(idle) == 0 {
			return
		}
		l = &schema.Local{}
	}
	known := map[string]string{}
	var declared []string
	for _, n := range sortedKeys(l.Backends) {
		if a := fixedAddress(l.Backends[n].Address); a != "" {
			known[a] = "backends." + n
			declared = append(declared, fmt.Sprintf("backends.%s at %s", n, l.Backends[n].Address))
		}
	}
	for _, n := range sortedKeys(l.Blackholes) {
		if a := fixedAddress(l.Blackholes[n].Address); a != "" {
			known[a] = "blackholes." + n
		}
	}
	for _, s := range d.order {
		p, ok := s.Params.(*schema.Load)
		if !ok || slices.ContainsFunc(servers, func(c *Step) bool { return d.mayServe(c, s) }) {
			continue
		}
		raw := p.URL
		if t := s.templates[pathSep+"url"]; t != nil {
			raw = t.Static(d.staticValue)
		}
		u, err := url.Parse(raw)
		if err != nil || HasInterpolation(u.Host) {
			continue
		}
		host, port := u.Hostname(), u.Port()
		if port == "" {
			port = "80"
		}
		var addrs []string // where the URL's requests go
		through := ""
		if strings.EqualFold(strings.TrimSuffix(host, "."), "localhost") {
			// localhost is loopback (RFC 6761): either address may answer it
			addrs = []string{net.JoinHostPort("127.0.0.1", port), net.JoinHostPort("::1", port)}
		} else if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
			addrs = []string{net.JoinHostPort(ip.String(), port)}
		} else if ips, how := d.zoneAddresses(host); len(ips) > 0 {
			for _, ip := range ips {
				if !ip.IsLoopback() {
					addrs = nil // something of this machine's network may answer
					break
				}
				addrs = append(addrs, net.JoinHostPort(ip.String(), port))
			}
			if addrs == nil {
				continue
			}
			through = fmt.Sprintf(" (%s through the lab DNS: %s)", strings.Join(addrs, ", "), how)
		} else {
			continue
		}
		if slices.ContainsFunc(addrs, func(a string) bool { return known[a] != "" }) {
			continue
		}
		addr := net.JoinHostPort(host, port) + through
		written := ""
		if raw != p.URL {
			written = fmt.Sprintf(" (as written: %s)", p.URL)
		}
		hint := "no backend of this scenario has a fixed address: write ${backends.<name>.url}"
		if len(declared) > 0 {
			hint = "its backends: " + strings.Join(declared, ", ")
		}
		starts := "no step of it starts a server"
		for _, c := range idle {
			if d.mayServe(c, s) {
				starts = fmt.Sprintf("no step of it that may run by then starts a server (the %s %s runs %s, which listens nowhere)", c.Kind, c.Shown, commandLine(c))
				break
			}
		}
		warn(s, "url", LintUnknownAddress, "the load's URL names %s%s, where no local backend or blackhole of this scenario listens (%s), and %s: if nothing else listens there, every request fails to connect and claims about its responses hold of nothing; write ${backends.<name>.url}", addr, written, hint, starts)
	}
}

// lintClusterNameLoads warns of a local load whose URL names a Kubernetes Service (a host
// ending in .svc or holding .svc., as a kube scenario's load from a client pod writes it)
// outside the lab DNS zone: this machine resolves it nowhere, and the run erred at the load
// ("no such host") after its setup, where vet could have said it.
func (d *decoder) lintClusterNameLoads(warn func(s *Step, field, code, format string, args ...any)) {
	if d.target() != "local" {
		return
	}
	for _, s := range d.order {
		p, ok := s.Params.(*schema.Load)
		if !ok {
			continue
		}
		raw := p.URL
		if t := s.templates[pathSep+"url"]; t != nil {
			raw = t.Static(d.staticValue)
		}
		u, err := url.Parse(raw)
		if err != nil || HasInterpolation(u.Host) {
			continue
		}
		host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
		if !strings.HasSuffix(host, ".svc") && !strings.Contains(host, ".svc.") {
			continue
		}
		if l := d.sc.Local; l != nil && l.DNS != nil {
			if zone := zoneOf(l.DNS); zone != "" {
				if h := inZone(host, zone); h == zone || strings.HasSuffix(h, "."+zone) {
					continue // the lab DNS answers it
				}
			}
		}
		warn(s, "url", LintUnknownAddress, "the load's URL names %s, a Kubernetes Service name, which resolves only inside a cluster: this scenario runs on the local target, where nothing resolves it and every request would fail (no such host); write ${backends.<name>.url} for a local backend, or target: \"kube\" with the load from a client pod", u.Hostname())
	}
}

// mayServe reports whether the command step c may be running, or have left a server
// running, while the load step l runs: l has not always ended by the time c starts. Two
// steps in one repeat run again, each round after the other's.
func (d *decoder) mayServe(c, l *Step) bool {
	for p := d.parent[l]; p != nil; p = d.parent[p] {
		if p.Kind == "repeat" && d.ancestor(p, c) {
			return true
		}
	}
	return !d.endedBefore(l, c)
}

// listenless are commands that open no socket, whatever their arguments.
var listenless = map[string]bool{"echo": true, "printf": true, "sleep": true, "true": true, "false": true, "date": true, ":": true}

// cannotListen reports whether a command step on this machine can start nothing that
// listens: its command is one of listenless, written out (no ${...}) with no environment of
// its own (PATH or LD_PRELOAD could make it another program), directly or as the one simple
// command of a shell's -c script (no ;, &, |, redirection, substitution or newline). Any
// other command may be a server, on a port its arguments, a configuration file or its
// defaults choose (python3 -m http.server listens on 8000 unasked): it is not judged.
func cannotListen(s *Step) bool {
	var argv []string
	switch p := s.Params.(type) {
	case *schema.Process:
		if len(p.Env) > 0 {
			return false
		}
		argv = p.Argv
	case *schema.Exec:
		if len(p.Env) > 0 {
			return false
		}
		argv = p.Argv
	default:
		return false
	}
	if len(argv) == 0 || slices.ContainsFunc(argv, HasInterpolation) {
		return false
	}
	switch base := path.Base(argv[0]); {
	case listenless[base]:
		return true
	case (base == "sh" || base == "bash" || base == "dash") && len(argv) == 3 && argv[1] == "-c":
		script := strings.TrimSpace(argv[2])
		if script == "" || strings.ContainsAny(script, ";&|<>$`(){}\\\n\r") {
			return false
		}
		return listenless[strings.Fields(script)[0]]
	}
	return false
}

// commandLine is a command step's argv as written, for a message.
func commandLine(s *Step) string {
	var argv []string
	switch p := s.Params.(type) {
	case *schema.Process:
		argv = p.Argv
	case *schema.Exec:
		argv = p.Argv
	}
	b, _ := json.Marshal(argv)
	return string(b)
}

// zoneAddresses are the addresses the scenario's lab DNS zone gives host before the run: those
// of its record (local.dns.records) and of every dns step that sets it, with how (for a
// message); none when host is not a name of the zone, or a dns step of the scenario sets a
// name or addresses known only at run time.
func (d *decoder) zoneAddresses(host string) ([]net.IP, string) {
	l := d.sc.Local
	if l == nil || l.DNS == nil {
		return nil, ""
	}
	zone := zoneOf(l.DNS)
	fqdn := func(h string) string { return inZone(h, zone) }
	h := fqdn(host)
	if zone == "" || h != zone && !strings.HasSuffix(h, "."+zone) {
		return nil, ""
	}
	var ips []net.IP
	var how []string
	add := func(list []string, what string) bool {
		for _, a := range list {
			ip := net.ParseIP(strings.TrimSpace(a))
			if ip == nil {
				return false
			}
			ips = append(ips, ip)
		}
		if len(list) > 0 {
			how = append(how, what)
		}
		return true
	}
	for _, k := range sortedKeys(l.DNS.Records) {
		if fqdn(k) == h && !add(l.DNS.Records[k], "local.dns.records."+k) {
			return nil, ""
		}
	}
	for _, s := range d.order {
		p, ok := s.Params.(*schema.DNS)
		if !ok || p.Server != nil {
			continue
		}
		if HasInterpolation(p.Host) || slices.ContainsFunc(p.Addresses, HasInterpolation) {
			return nil, "" // set at run time: not known
		}
		if fqdn(p.Host) == h && !add(p.Addresses, "the dns step "+s.Path) {
			return nil, ""
		}
	}
	return ips, strings.Join(how, ", ")
}

// fixedAddress is the address a local backend or blackhole listens at, "host:port" as
// net.JoinHostPort writes it, when its declared address fixes the port ("" when the port is
// chosen at run time); the host defaults to 127.0.0.1, as the local target does.
func fixedAddress(declared string) string {
	host, port, err := net.SplitHostPort(declared)
	if err != nil || port == "" || port == "0" {
		return ""
	}
	if host == "" {
		host = "127.0.0.1"
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return ""
	}
	return net.JoinHostPort(ip.String(), port)
}

// endpointRef is a ${...} that names a field of a local backend or blackhole.
var endpointRef = regexp.MustCompile(`^(backends|blackholes)\.([A-Za-z_][A-Za-z0-9_-]*)\.(host|port|address|url)$`)

// varRef is a ${...} that names a var.
var varRef = regexp.MustCompile(`^vars\.([A-Za-z_][A-Za-z0-9_]*)$`)

// staticValue is the value of a ${...} as it is known before the run, for a lint: a var's
// value (not a secret's), and the fields of a declared local backend or blackhole that its
// declaration fixes (its host always, as the local target chooses it; its port, address and
// url only when the declaration fixes the port). Any other expression is not known.
func (d *decoder) staticValue(src string) (string, bool) {
	if m := varRef.FindStringSubmatch(src); m != nil {
		v, ok := d.sc.Vars[m[1]]
		if !ok || slices.Contains(d.sc.Secrets, m[1]) {
			return "", false
		}
		switch v.(type) {
		case string, float64, float32, int, int64, json.Number, bool:
			return Stringify(normalizeNumber(v)), true
		}
		return "", false
	}
	m := endpointRef.FindStringSubmatch(src)
	l := d.sc.Local
	if m == nil || l == nil {
		return "", false
	}
	var declared string
	switch m[1] {
	case "backends":
		b, ok := l.Backends[m[2]]
		if !ok {
			return "", false
		}
		declared = b.Address
	default:
		b, ok := l.Blackholes[m[2]]
		if !ok || m[3] == "url" {
			return "", false
		}
		declared = b.Address
	}
	if m[3] == "host" {
		// Known whether or not the port is: the declared host (with a port or without), else
		// the local target's.
		host := declared
		if h, _, err := net.SplitHostPort(declared); err == nil {
			host = h
		}
		host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
		if host == "" {
			host = "127.0.0.1"
		}
		if ip := net.ParseIP(host); ip != nil {
			return ip.String(), true
		}
		return "", false
	}
	addr := fixedAddress(declared)
	if addr == "" {
		return "", false // the port is chosen at run time
	}
	switch m[3] {
	case "port":
		_, port, _ := net.SplitHostPort(addr)
		return port, true
	case "address":
		return addr, true
	}
	return "http://" + addr, true
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

// lintStatusDropped warns of an apply that writes an object's status, of a kind whose status
// the API server keeps apart, without subresource: "status": a write of the object itself
// leaves the status as it was (an update, a server-side apply) or empty (a create).
// An object of the apply's files (where names the file) is warned at the step's files.
func lintStatusDropped(a applied, kind, field, where string, warn func(s *Step, field, code, format string, args ...any)) {
	if _, ok := a.obj["status"]; !ok {
		return
	}
	p, ok := a.step.Params.(*schema.Apply)
	if !ok || p.Subresource == "status" {
		return
	}
	apiVersion, _ := a.obj["apiVersion"].(string)
	sh, name := kubeshape.Known(apiVersion, kind)
	if sh == nil || sh.Kind != kubeshape.Object || sh.Fields["status"] == nil {
		return
	}
	md, _ := a.obj["metadata"].(map[string]any)
	objName, _ := md["name"].(string)
	if where != "" {
		where = " (" + where + ")"
	} else {
		field += ".status"
	}
	warn(a.step, field, LintStatusDropped, "this apply writes the status of %s %s%s, which the API server keeps apart (a status subresource) and drops from a write of the object itself: the status written here never reaches the cluster, and a claim over it reads what the cluster's controllers write; write it in an apply of its own with subresource: \"status\" (once the object exists), or leave it out", name, objName, where)
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

// podTemplate returns the pod labels and annotations of a Pod or a workload's template
// (a Deployment's, StatefulSet's, DaemonSet's, ReplicaSet's, Job's or CronJob's).
func podTemplate(o schema.Object) (labels, annotations map[string]any, ok bool) {
	kind, _ := o["kind"].(string)
	var md map[string]any
	switch kind {
	case "Pod":
		md, _ = o["metadata"].(map[string]any)
	case "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job":
		md = dig(o, "spec", "template", "metadata")
	case "CronJob":
		md = dig(o, "spec", "jobTemplate", "spec", "template", "metadata")
	default:
		return nil, nil, false
	}
	labels, _ = md["labels"].(map[string]any)
	annotations, _ = md["annotations"].(map[string]any)
	return labels, annotations, true
}

// selects reports whether a pod reference (a selector, or a pod name) picks the pods of o.
func selects(ref *schema.PodRef, labels map[string]any, o schema.Object) bool {
	if ref.Selector != "" {
		sel, ok := parseSelector(ref.Selector)
		if !ok {
			return false // one known at run time: not judged here
		}
		return sel.Matches(labelSetOf(labels)) // as the API server matches it, set-based too
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

// hostPorts are the port numbers of host's Service (its ports' port) or ServiceEntry (its
// ports' number) the scenario applies, each mapped to the targetPort it sends to (0: none
// written); nil where the scenario applies neither, or a port is not a plain number.
func hostPorts(objs []applied, ix hosts, host, ns string) map[int]int {
	var lists [][]any
	key, target := "port", "targetPort"
	if svc := ix.service(host, ns); svc != nil {
		ports, _ := dig(svc, "spec")["ports"].([]any)
		lists = append(lists, ports)
	} else if ix.entries[host] {
		key = "number"
		for _, a := range objs {
			if kind, _ := a.obj["kind"].(string); kind != "ServiceEntry" {
				continue
			}
			spec, _ := a.obj["spec"].(map[string]any)
			hs, _ := spec["hosts"].([]any)
			if slices.Contains(hs, any(host)) {
				ports, _ := spec["ports"].([]any)
				lists = append(lists, ports)
			}
		}
	}
	if len(lists) == 0 {
		return nil
	}
	out := map[int]int{}
	for _, ports := range lists {
		for _, p := range ports {
			pm, _ := p.(map[string]any)
			n, ok := plainInt(pm[key])
			if !ok {
				return nil
			}
			t, _ := plainInt(pm[target])
			out[n] = t
		}
	}
	return out
}

// plainInt is v as an int where it is a number written out.
func plainInt(v any) (int, bool) {
	switch n := v.(type) {
	case int:
		return n, true
	case int64:
		return int(n), true
	case float64:
		return int(n), n == float64(int(n))
	}
	return 0, false
}

// lintUnknownPorts warns of a portLevelSettings entry (the rule's, a subset's) whose port is
// none of ports, the host's service ports: istiod applies an entry to the cluster of the
// service port it names, so one naming a targetPort (443 for a ServiceEntry port 80 that
// targets 443) reaches no cluster. Seen on the sandbox (Istio master of 2026-08-27): a rule
// with tls SIMPLE at port 443 for such a ServiceEntry was accepted and left the cluster
// outbound|80||api.example.com with no transport_socket.
func lintUnknownPorts(a applied, spec map[string]any, field string, ports map[int]int, warn func(*Step, string, string, string, ...any)) {
	if ports == nil {
		return
	}
	var written []string
	for _, n := range slices.Sorted(maps.Keys(ports)) {
		written = append(written, strconv.Itoa(n))
	}
	check := func(tp map[string]any, at string) {
		pls, _ := tp["portLevelSettings"].([]any)
		for k, pl := range pls {
			pm, _ := pl.(map[string]any)
			n, ok := plainInt(dig(pm, "port")["number"])
			if _, known := ports[n]; !ok || known {
				continue
			}
			var also string
			for sp, t := range ports {
				if t == n {
					also = fmt.Sprintf("; %d is the targetPort of service port %d: write %d", n, sp, sp)
				}
			}
			warn(a.step, fmt.Sprintf("%s.portLevelSettings.%d.port.number", at, k), LintUnknownPort,
				"portLevelSettings port %d is none of the ports of host %v's service (%s%s): istiod applies the entry to the cluster of the service port it names, so its settings reach no cluster",
				n, spec["host"], strings.Join(written, ", "), also)
		}
	}
	tp, _ := spec["trafficPolicy"].(map[string]any)
	check(tp, field+".spec.trafficPolicy")
	subsets, _ := spec["subsets"].([]any)
	for j, sub := range subsets {
		sm, _ := sub.(map[string]any)
		stp, _ := sm["trafficPolicy"].(map[string]any)
		check(stp, fmt.Sprintf("%s.spec.subsets.%d.trafficPolicy", field, j))
	}
}

// policyFields are the traffic policy fields a portLevelSettings entry replaces for its port.
var policyFields = []string{"connectionPool", "loadBalancer", "outlierDetection", "tls"}

// lintIgnoredFields warns of a DestinationRule's outlierDetection.consecutiveErrors, in any
// traffic policy of the rule (its own, a subset's, a portLevelSettings entry of either): the
// CRD accepts the deprecated field, and istiod (Istio master of 2026-08-27,
// applyOutlierDetection) reads only consecutive5xxErrors and consecutiveGatewayErrors. Seen
// on the sandbox: consecutiveErrors: 3 gave the cluster an outlier_detection with the
// interval and ejection time written beside it and no consecutive_5xx, so Envoy ejected on
// its own default (5) — a claim on the interval held, and one that 3 errors eject failed.
func lintIgnoredFields(a applied, spec map[string]any, field string, warn func(*Step, string, string, string, ...any)) {
	outlier := func(tp map[string]any, at string) {
		od, _ := tp["outlierDetection"].(map[string]any)
		if v, ok := od["consecutiveErrors"]; ok && v != nil {
			warn(a.step, at+".outlierDetection.consecutiveErrors", LintIgnoredField,
				"outlierDetection.consecutiveErrors is deprecated and istiod ignores it: the API server accepts it, and the cluster gets no consecutive-error ejection from it (Envoy's default, 5 consecutive 5xx, applies); write consecutive5xxErrors (any 5xx) or consecutiveGatewayErrors (502, 503, 504)")
		}
	}
	check := func(tp map[string]any, at string) {
		outlier(tp, at)
		pls, _ := tp["portLevelSettings"].([]any)
		for k, pl := range pls {
			pm, _ := pl.(map[string]any)
			outlier(pm, fmt.Sprintf("%s.portLevelSettings.%d", at, k))
		}
	}
	top, _ := spec["trafficPolicy"].(map[string]any)
	check(top, field+".spec.trafficPolicy")
	subsets, _ := spec["subsets"].([]any)
	for j, sub := range subsets {
		sm, _ := sub.(map[string]any)
		stp, _ := sm["trafficPolicy"].(map[string]any)
		check(stp, fmt.Sprintf("%s.spec.subsets.%d.trafficPolicy", field, j))
	}
}

// lintLocalityOutlier warns of a DestinationRule's localityLbSetting with failover or
// failoverPriority in a traffic policy (the rule's, a subset's) that has no outlierDetection
// (a subset's inherits the rule's): istiod then sets no locality priorities (seen in the
// sandbox: every locality at priority 0), so Envoy never fails over, and a claim that the
// client's own locality comes first holds whatever the rule says. distribute applies without
// outlier detection, and enabled: false turns the setting off.
func lintLocalityOutlier(a applied, spec map[string]any, field string, warn func(*Step, string, string, string, ...any)) {
	top, _ := spec["trafficPolicy"].(map[string]any)
	check := func(tp map[string]any, at string, inherited bool) {
		lb, _ := tp["loadBalancer"].(map[string]any)
		ls, _ := lb["localityLbSetting"].(map[string]any)
		if ls == nil || ls["enabled"] == false {
			return
		}
		var what string
		for _, f := range []string{"failover", "failoverPriority"} {
			if l, _ := ls[f].([]any); len(l) > 0 {
				what = f
				break
			}
		}
		if what == "" || tp["outlierDetection"] != nil || inherited {
			return
		}
		warn(a.step, at+".loadBalancer.localityLbSetting."+what, LintLocalityOutlier,
			"localityLbSetting.%s without outlierDetection: istiod applies locality failover only where the traffic policy has outlier detection, so it gives every locality priority 0 and Envoy never fails over, while a claim that the client's own locality has priority 0 holds; add outlierDetection (consecutive5xxErrors, interval, baseEjectionTime) to this traffic policy", what)
	}
	check(top, field+".spec.trafficPolicy", false)
	subsets, _ := spec["subsets"].([]any)
	for j, sub := range subsets {
		sm, _ := sub.(map[string]any)
		stp, _ := sm["trafficPolicy"].(map[string]any)
		check(stp, fmt.Sprintf("%s.spec.subsets.%d.trafficPolicy", field, j), top["outlierDetection"] != nil)
	}
}

// lintPortLevel warns about top-level traffic policy fields next to portLevelSettings: on a
// port with its own entry Istio applies none of them (seed 002 §11). tp is the rule's traffic
// policy, or a subset's, at the path field.
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
		var gets []string
		for _, f := range missing {
			gets = append(gets, portGets(f, tp[f]))
		}
		warn(a.step, fmt.Sprintf("%s.portLevelSettings.%d", field, i), LintPortLevel,
			"port %v has its own portLevelSettings entry, so Istio applies none of the top-level %s to it (they are not inherited, seed 002 §11): port %v gets %s; move them into the entry for port %v",
			FormatValue(num), strings.Join(missing, ", "), FormatValue(num), strings.Join(gets, ", and "), FormatValue(num))
	}
}

// portGets says what a port with its own portLevelSettings entry gets in place of the top-level
// field f (written as v), as istiod builds the port's cluster (measured against istiod of Istio
// master, 2026-08-27, in labrun's sandbox).
func portGets(f string, v any) string {
	switch f {
	case "loadBalancer":
		m, _ := v.(map[string]any)
		if simple, ok := m["simple"].(string); ok {
			return fmt.Sprintf("LEAST_REQUEST, Istio's default, not %s", simple)
		}
		return fmt.Sprintf("LEAST_REQUEST, Istio's default, not %s", flatSettings(v))
	case "connectionPool":
		return fmt.Sprintf("no connection limits (4294967295 for every circuit breaker, as without a rule), not %s", flatSettings(v))
	case "outlierDetection":
		return fmt.Sprintf("no outlier detection, not %s", flatSettings(v))
	case "tls":
		m, _ := v.(map[string]any)
		if mode, ok := m["mode"].(string); ok {
			return fmt.Sprintf("Istio's automatic mutual TLS to workloads with a sidecar and plain text to others, not mode %s", mode)
		}
	}
	return fmt.Sprintf("Istio's default, not %s %s", f, flatSettings(v))
}

// flatSettings writes a policy's settings as "tcp.maxConnections 1, http.idleTimeout 2s".
func flatSettings(v any) string {
	var parts []string
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		m, ok := v.(map[string]any)
		if !ok {
			text, isString := v.(string)
			if !isString {
				text = FormatValue(v)
			}
			parts = append(parts, strings.TrimSpace(prefix+" "+text))
			return
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			walk(p, m[k])
		}
	}
	walk("", v)
	return strings.Join(parts, ", ")
}

// hosts indexes the Services and ServiceEntry hosts a scenario applies.
type hosts struct {
	services map[string]schema.Object // "namespace/name" → Service
	entries  map[string]bool          // ServiceEntry hosts
}

func indexHosts(objs []applied) hosts {
	ix := hosts{services: map[string]schema.Object{}, entries: map[string]bool{}}
	for _, a := range objs {
		kind, _ := a.obj["kind"].(string)
		md, _ := a.obj["metadata"].(map[string]any)
		name, _ := md["name"].(string)
		switch kind {
		case "Service":
			ix.services[a.namespace()+"/"+name] = a.obj
		case "ServiceEntry":
			spec, _ := a.obj["spec"].(map[string]any)
			list, _ := spec["hosts"].([]any)
			for _, h := range list {
				if s, ok := h.(string); ok {
					ix.entries[s] = true
				}
			}
		}
	}
	return ix
}

func (ix hosts) empty() bool { return len(ix.services)+len(ix.entries) == 0 }

// service is the Service a host names: a short name in ns (the namespace of the rule that
// names it; "" when there is none), name.namespace, name.namespace.svc, or the FQDN
// name.namespace.svc.<domain>, the domain written out or as ${target.clusterDomain}.
//
// ns may be a ${...} as the Services are indexed under it: before a run the default namespace
// of a scenario with ephemeral namespaces is "${ns.key}" for the rule and the Service alike.
func (ix hosts) service(host, ns string) schema.Object {
	parts := strings.Split(strings.TrimSuffix(host, "."), ".")
	var key string
	switch {
	case len(parts) == 1:
		if ns == "" {
			return nil
		}
		key = ns + "/" + parts[0]
	case len(parts) == 2, len(parts) >= 3 && parts[2] == "svc":
		if strings.Contains(parts[0]+parts[1], "${") {
			return nil // a ${...} (its dots split it: name.${ns.t}.svc) known at run time
		}
		key = parts[1] + "/" + parts[0]
	default:
		return nil
	}
	return ix.services[key]
}

// tcpPort describes the port of svc numbered num (a number, or its digits as in a cluster
// name; any port when nil) that Istio treats as TCP, "8080 tcp-web"; ok is false when there
// is none.
func tcpPort(svc schema.Object, num any) (port string, ok bool) {
	spec, _ := svc["spec"].(map[string]any)
	ports, _ := spec["ports"].([]any)
	digits := func(v any) string {
		if s, ok := v.(string); ok {
			return s
		}
		return FormatValue(v)
	}
	for _, p := range ports {
		pm, _ := p.(map[string]any)
		if num != nil && digits(pm["port"]) != digits(num) {
			continue
		}
		name, _ := pm["name"].(string)
		app, _ := pm["appProtocol"].(string)
		if istioProtocol(name, app) == "tcp" {
			if name == "" {
				name = "(unnamed)"
			}
			return fmt.Sprintf("%v %s", FormatValue(pm["port"]), name), true
		}
	}
	return "", false
}

// lintTCPPort warns about connectionPool.http settings on a port Istio treats as TCP: every
// http.* field is then a no-op (seed 000).
func (d *decoder) lintTCPPort(a applied, svc schema.Object, host string, tp map[string]any, field string, warn func(*Step, string, string, string, ...any)) {
	if svc == nil {
		return
	}
	hasHTTP := func(m map[string]any) bool {
		cp, _ := m["connectionPool"].(map[string]any)
		_, ok := cp["http"]
		return ok
	}
	if hasHTTP(tp) {
		if port, tcp := tcpPort(svc, nil); tcp {
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
		if port, tcp := tcpPort(svc, pn["number"]); tcp {
			warn(a.step, fmt.Sprintf("%s.spec.trafficPolicy.portLevelSettings.%d.connectionPool.http", field, i), LintTCPPort,
				"Service port %s of %s is treated as TCP by Istio (name it http or http-…, or set appProtocol: http): every connectionPool.http field is a no-op there (seed 000)", port, host)
		}
	}
}

// lintHTTPRoutes warns about a VirtualService's http routes to a Service port Istio treats as
// TCP: Istio builds a TCP proxy for that port and applies no http route (no retries, timeouts,
// faults or weights), silently.
func (d *decoder) lintHTTPRoutes(a applied, ix hosts, spec map[string]any, field string, warn func(*Step, string, string, string, ...any)) {
	routes, _ := spec["http"].([]any)
	for i, r := range routes {
		route, _ := r.(map[string]any)
		dests, _ := route["route"].([]any)
		for j, dst := range dests {
			dm, _ := dst.(map[string]any)
			dest, _ := dm["destination"].(map[string]any)
			host, _ := dest["host"].(string)
			svc := ix.service(host, a.namespace())
			if svc == nil {
				continue
			}
			pm, _ := dest["port"].(map[string]any)
			if port, tcp := tcpPort(svc, pm["number"]); tcp {
				warn(a.step, fmt.Sprintf("%s.spec.http.%d.route.%d.destination", field, i, j), LintTCPPort,
					"Service port %s of %s is treated as TCP by Istio (name it http or http-…, or set appProtocol: http): this http route (its retries, timeouts, faults and weights) does not apply to it (seed 000)", port, host)
			}
		}
	}
}

// httpOnly reports whether an Envoy cluster stat counts HTTP requests, which a cluster that
// proxies TCP never counts (its upstream_rq_* stay 0).
func httpOnly(stat string) bool {
	// upstream_cx_max_duration_reached and upstream_cx_idle_timeout are the HTTP connection
	// pool's (Istio writes maxConnectionDuration and idleTimeout into HttpProtocolOptions).
	return strings.HasPrefix(stat, "upstream_rq") || strings.HasSuffix(stat, "_with_active_rq") ||
		stat == "upstream_cx_max_requests" || stat == "upstream_cx_max_duration_reached" || stat == "upstream_cx_idle_timeout" ||
		strings.HasPrefix(stat, "circuit_breakers.") && strings.Contains(stat, ".rq_")
}

// lintTCPStats warns when the expectations read request stats of a cluster for a Service
// port Istio treats as TCP: Envoy proxies its connections without counting requests, so the
// stats stay 0 and the expectations judge a run that never exercised the setting.
// It reports whether it warned.
func (d *decoder) lintTCPStats(s *Step, cluster string, ix hosts, stats []string, warn func(*Step, string, string, string, ...any)) bool {
	parts := strings.Split(cluster, "|")
	if len(parts) != 4 || parts[0] != "outbound" {
		return false
	}
	svc := ix.service(parts[3], "")
	if svc == nil {
		return false
	}
	port, tcp := tcpPort(svc, parts[1])
	if !tcp {
		return false
	}
	var read []string
	for _, st := range stats {
		if httpOnly(st) && !slices.Contains(read, st) {
			read = append(read, st)
		}
	}
	if len(read) == 0 {
		return false
	}
	sort.Strings(read)
	warn(s, "cluster", LintTCPPort,
		"the expectations read %s of cluster %s, but Service port %s is treated as TCP by Istio (name it http or http-…, or set appProtocol: http): Envoy counts no requests on a TCP cluster, so these stay 0 (seed 000)",
		strings.Join(read, ", "), cluster, port)
	return true
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

// zoneOf is the lab DNS zone's name as inZone compares it: lower case, no final dot.
func zoneOf(d *schema.LocalDNS) string {
	return strings.ToLower(strings.TrimSuffix(d.Zone, "."))
}

// inZone is host as the lab DNS server answers it: lower case, no final dot, and a single
// label (probe) completed with the zone (probe.lab.internal).
func inZone(host, zone string) string {
	h := strings.ToLower(strings.TrimSuffix(strings.TrimSpace(host), "."))
	if h != "" && !strings.Contains(h, ".") {
		h += "." + zone
	}
	return h
}

// eachWaitFileObject calls f with each object of the wait p's matchFiles and absentFiles (the
// absentFiles first when absentFirst), read as vet reads them: the field, the file's index
// in the field, whether the wait is for its absence, and the object; until f returns true. A
// file named with ${...} (known when the step starts), or one vet cannot read or parse (the
// checks that say so), is passed over.
func (d *decoder) eachWaitFileObject(p *schema.Wait, absentFirst bool, f func(field string, i int, absent bool, o schema.FileObject) bool) {
	fields := []struct {
		field  string
		files  []string
		absent bool
	}{{"matchFiles", p.MatchFiles, false}, {"absentFiles", p.AbsentFiles, true}}
	if absentFirst {
		fields[0], fields[1] = fields[1], fields[0]
	}
	for _, fs := range fields {
		for i, file := range fs.files {
			for _, o := range d.stepFileObjects([]string{file}) {
				if f(fs.field, i, fs.absent, o) {
					return
				}
			}
		}
	}
}

// lintEventsReason warns of an events step whose reason filter (a pattern, matched anywhere
// in the reason) has a plain alternative that matches none of the reasons Kubernetes writes
// but is a letter or two off one: events: {reason: "Unhealty"} keeps no event, and a claim
// that none happened (len(ev) == 0) held whatever happened. The unknown-reason lint of
// expressions (reason == 'BackOf') did not read the step's own filter.
func (d *decoder) lintEventsReason(warn func(s *Step, field, code, format string, args ...any)) {
	for _, ph := range d.sc.Phases() {
		Walk(ph.Steps, func(s *Step) {
			p, ok := s.Params.(*schema.Events)
			if !ok || p.Reason == "" || HasInterpolation(p.Reason) || strings.ContainsAny(p.Reason, "()") {
				return
			}
			for _, alt := range strings.Split(p.Reason, "|") {
				if alt == "" || regexp.QuoteMeta(alt) != alt || slices.ContainsFunc(schema.EventReasons, func(r string) bool { return strings.Contains(r, alt) }) {
					continue // a pattern, or a part of a reason Kubernetes writes
				}
				if m := closest(alt, schema.EventReasons); m != "" {
					what := fmt.Sprintf("reason %q", p.Reason)
					if alt != p.Reason {
						what = fmt.Sprintf("reason %q: its %q", p.Reason, alt)
					}
					warn(s, "reason", LintUnknownReason, "events %s matches none of the reasons Kubernetes writes (did you mean %q?): the filter keeps no event of it, and a claim that none happened (len(…) == 0) holds whatever happened; the pattern matches anywhere in the reason, case-sensitively", what, m)
					return
				}
			}
		})
	}
}
