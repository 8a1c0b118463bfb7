package scenarios_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/sandbox"
)

// kitCNamespace is Kit C's lab namespace (kitC.ns in scenarios.cue).
const kitCNamespace = "ambient-lab"

// kitC are Kit C's scenarios, with whether the mitigation (the VirtualService retrying on reset)
// is applied.
var kitC = []struct {
	name       string
	mitigation bool
}{{"c_stale", false}, {"c_retry", true}}

// TestE2EKitCReplay runs c_stale and c_retry unchanged on the sandbox with the seed's recorded
// figures replayed, and wants every expectation to hold.
//
// Real: istiod with ambient on (PILOT_ENABLE_AMBIENT) serving the istio-waypoint GatewayClass; the
// ambient namespace, the waypoint Gateway, the dummy app, the client and (c_retry) the
// VirtualService through the API server's schemas; the Gateway's Programmed status and the dummy
// Service's istio.io/WaypointBound condition, both written by istiod; the waypoint's config, which
// istiod computes for the waypoint pod (checked below: the dummy Service's inbound-vip chain, with
// the retry policy reset,connect-failure,refused-stream only under the mitigation); the setup's
// `pilot-agent request POST logging?paths=connection:debug,pool:debug` (the Envoy admin stand-in
// keeps the levels, and replayed Envoy debug lines reach the waypoint's log only at them); and
// kwok's pod lifecycle, including the seed's point: pods are deleted until kwok hands a new pod
// the IP of the first one (kwok recycles a deleted pod's IP). Stand-ins: the waypoint deployment
// stand-in creates the waypoint's Deployment, Service and ServiceAccount (istiod's deployment
// controller needs the Helm chart's templates). Replayed (seed 003, scenarios/testdata/replay/
// kit-c): the client's two curl results, the waypoint's debug lines (ConnectionId 79097 opened in
// phase 1 and reused in phase 2) and access-log lines they caused, and the waypoint's `ss` output;
// addresses in them are this run's (aaa's IP, the waypoint's). There is no Envoy and no ztunnel:
// nothing here shows that a waypoint reuses the connection; it shows that the scenarios, run on
// a real IP reuse, judge the seed's recorded outcome as the claim says. Then the perturbed replays.
//
// Each run holds a sandbox whole (holdSandbox): the lab deletes pods until kwok hands a new pod
// the first pod's IP, and a pod another test creates meanwhile in the same sandbox can take that
// IP (seen in CI: 60 rounds without a reuse while Kit B's diff runs created pods).
func TestE2EKitCReplay(t *testing.T) {
	t.Parallel()
	for _, c := range kitC {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			sb := holdSandbox(t)
			sb.EnvoyStandIn(t, kitCNamespace, "client", replay(t, "kit-c", c.name+"/client")...)
			sb.EnvoyStandIn(t, kitCNamespace, "waypoint", replay(t, "kit-c", c.name+"/waypoint")...)
			w := &waypointCheck{sb: sb, mitigation: c.mitigation}
			rec := kubeRunObserved(t, sb, c.name, nil, w.observe)
			requirePassed(t, rec)
			wrongOutcomesOf(t, rec, "") // the run's record edited into wrong_test.go's outcomes fails replay
			w.report(t)
			checkIPReuse(t, rec)
		})
	}
	t.Run("perturbed", func(t *testing.T) {
		t.Parallel()
		perturbedKitC(t)
	})
}

// checkIPReuse checks what the repeat loop left: the pod bbb the phase-2 request went to is not
// aaa and has aaa's IP, handed out again by kwok; and says how many pods it took.
func checkIPReuse(t *testing.T, rec *interp.Record) {
	t.Helper()
	pods := func(name string) []map[string]any {
		var out []map[string]any
		b, _ := json.Marshal(rec.Values()[name])
		_ = json.Unmarshal(b, &out)
		return out
	}
	aaa, bbb := pods("aaa"), pods("bbb")
	if len(aaa) == 0 || len(bbb) == 0 {
		t.Fatalf("captured pods: aaa %d, bbb %d", len(aaa), len(bbb))
	}
	field := func(p map[string]any, path ...string) string {
		var v any = p
		for _, k := range path {
			m, _ := v.(map[string]any)
			v = m[k]
		}
		s, _ := v.(string)
		return s
	}
	a := aaa[0]
	var b map[string]any
	for _, p := range bbb {
		if field(p, "metadata", "deletionTimestamp") == "" {
			b = p
		}
	}
	if b == nil {
		t.Fatalf("no live pod among bbb")
	}
	aName, aIP, bName, bIP := field(a, "metadata", "name"), field(a, "status", "podIP"), field(b, "metadata", "name"), field(b, "status", "podIP")
	if aName == bName || aIP == "" || aIP != bIP {
		t.Errorf("aaa %s (%s), bbb %s (%s): want another pod with aaa's IP", aName, aIP, bName, bIP)
		return
	}
	rounds := 0
	for _, s := range rec.Steps {
		if s.Name == "victim" {
			rounds++
		}
	}
	t.Logf("IP reuse: aaa %s and bbb %s both %s, after %d deletion round(s)", aName, bName, aIP, rounds)
}

// waypointCheck looks at what istiod made of the lab while the run is at phase 2 (the namespace
// exists then; the cleanup deletes it): the Gateway's and the Service's status, the waypoint's
// objects (the stand-in's), its log levels and its config.
type waypointCheck struct {
	sb         *sandbox.Sandbox
	mitigation bool
	done       bool
	errs       []string
	notes      []string
}

func (w *waypointCheck) errorf(format string, args ...any) {
	w.errs = append(w.errs, fmt.Sprintf(format, args...))
}

// observe runs the checks when the step phase2 has ended.
func (w *waypointCheck) observe(ev interp.Event) {
	if !ev.Ended || ev.Step.Name != "phase2" || w.done {
		return
	}
	w.done = true
	ctx := context.Background()
	cs := kubernetes.NewForConfigOrDie(w.sb.RESTConfig)
	dyn := dynamic.NewForConfigOrDie(w.sb.RESTConfig)

	// The Gateway: Programmed by istiod, assigned to the stand-in's Service.
	gw, err := dyn.Resource(schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "gateways"}).
		Namespace(kitCNamespace).Get(ctx, "waypoint", metav1.GetOptions{})
	if err != nil {
		w.errorf("Gateway waypoint: %v", err)
	} else if c := condition(gw, "Programmed"); c["status"] != "True" || !strings.Contains(fmt.Sprint(c["message"]), "waypoint."+kitCNamespace+".svc.cluster.local:15008") {
		w.errorf("Gateway waypoint Programmed condition %v: want istiod's True, assigned to the waypoint Service", c)
	} else {
		w.notes = append(w.notes, fmt.Sprintf("Gateway waypoint: %s (istiod)", c["message"]))
	}
	// The dummy Service: bound to the waypoint, says istiod's ambient status.
	svc, err := dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "services"}).Namespace(kitCNamespace).Get(ctx, "dummy", metav1.GetOptions{})
	if err != nil {
		w.errorf("Service dummy: %v", err)
	} else if c := condition(svc, "istio.io/WaypointBound"); c["status"] != "True" {
		w.errorf("Service dummy istio.io/WaypointBound condition %v: want True (istiod's ambient status)", c)
	} else {
		w.notes = append(w.notes, fmt.Sprintf("Service dummy: %s (istiod)", c["message"]))
	}
	// The waypoint's Deployment is the stand-in's.
	dep, err := cs.AppsV1().Deployments(kitCNamespace).Get(ctx, "waypoint", metav1.GetOptions{})
	if err != nil {
		w.errorf("Deployment waypoint: %v", err)
	} else if dep.Annotations["labrun.dev/waypoint-stand-in"] == "" {
		w.errorf("Deployment waypoint has no labrun.dev/waypoint-stand-in annotation: who made it?")
	}
	pods, err := cs.CoreV1().Pods(kitCNamespace).List(ctx, metav1.ListOptions{LabelSelector: "gateway.networking.k8s.io/gateway-name=waypoint"})
	if err != nil || len(pods.Items) != 1 {
		w.errorf("waypoint pods: %v (%d)", err, len(pods.Items))
		return
	}
	pod := pods.Items[0].Name
	// The setup's POST logging set the levels the replayed debug lines needed.
	if b, err := os.ReadFile(filepath.Join(w.sb.Dir, "pods", kitCNamespace, pod, "envoy-log-levels.json")); err != nil ||
		!strings.Contains(string(b), `"connection":"debug"`) || !strings.Contains(string(b), `"pool":"debug"`) {
		w.errorf("the waypoint's Envoy log levels after the setup: %q, %v; want connection and pool at debug", b, err)
	}
	// The waypoint's config, from istiod: the dummy Service's chain, and its retry policy. istiod
	// applies a config change after its debounce, later under load (the kits run in parallel),
	// so the config is read again until it has the wanted policy, for at most 30 s; a policy
	// that stays wrong fails with what was seen last.
	chain := "inbound-vip|8080|http|dummy." + kitCNamespace + ".svc.cluster.local"
	start := time.Now()
	for {
		retryOn, err := waypointRetryOn(w.sb, pod, chain)
		if err != nil {
			w.errorf("%v", err)
			return
		}
		hasReset := slices.ContainsFunc(retryOn, func(s string) bool { return slices.Contains(strings.Split(s, ","), "reset") })
		if hasReset == w.mitigation {
			w.notes = append(w.notes, fmt.Sprintf("waypoint %s: istiod sent chain %s, retry_on %v (read after %s)", pod, chain, retryOn, time.Since(start).Round(time.Millisecond)))
			return
		}
		if time.Since(start) > 30*time.Second {
			w.errorf("retry_on of the waypoint's %s: %v after %s; want reset there only with the mitigation (%v)", chain, retryOn, time.Since(start).Round(time.Second), w.mitigation)
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// waypointRetryOn reads the waypoint pod's config_dump (what istiod sends it, through the
// Envoy admin stand-in) and returns the retry_on values under the named filter chain.
func waypointRetryOn(sb *sandbox.Sandbox, pod, chain string) ([]string, error) {
	out, err := exec.Command(filepath.Join(sb.BinDir, "kubectl"), "--kubeconfig", sb.Kubeconfig, "-n", kitCNamespace,
		"exec", pod, "-c", "istio-proxy", "--", "pilot-agent", "request", "GET", "config_dump").Output()
	if err != nil {
		return nil, fmt.Errorf("config_dump of the waypoint %s: %v", pod, err)
	}
	var dump any
	if err := json.Unmarshal(out, &dump); err != nil {
		return nil, fmt.Errorf("config_dump of the waypoint: %v", err)
	}
	// The filter chain of that name among the listeners (a cluster has the same name).
	var listeners any
	configs, _ := dump.(map[string]any)["configs"].([]any)
	for _, c := range configs {
		if m, _ := c.(map[string]any); strings.HasSuffix(fmt.Sprint(m["@type"]), ".ListenersConfigDump") {
			listeners = m
		}
	}
	fc := findNamed(listeners, chain)
	if fc == nil {
		return nil, fmt.Errorf("the waypoint's config has no filter chain %s: istiod did not bind the dummy Service to it", chain)
	}
	return collect(fc, "retry_on"), nil
}

// report fails the test with what observe found, and logs what it saw.
func (w *waypointCheck) report(t *testing.T) {
	t.Helper()
	if !w.done {
		t.Errorf("the waypoint checks did not run: the run never finished step phase2")
	}
	for _, n := range w.notes {
		t.Log(n)
	}
	for _, e := range w.errs {
		t.Error(e)
	}
}

// condition returns the status condition of type typ of an object, nil if none.
func condition(u *unstructured.Unstructured, typ string) map[string]any {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, _ := c.(map[string]any); m["type"] == typ {
			return m
		}
	}
	return nil
}

// findNamed returns the first object (depth first) in v whose "name" is name.
func findNamed(v any, name string) map[string]any {
	switch x := v.(type) {
	case map[string]any:
		if x["name"] == name {
			return x
		}
		for _, e := range x {
			if f := findNamed(e, name); f != nil {
				return f
			}
		}
	case []any:
		for _, e := range x {
			if f := findNamed(e, name); f != nil {
				return f
			}
		}
	}
	return nil
}

// collect returns every string value of key in v.
func collect(v any, key string) []string {
	var out []string
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok && k == key {
				out = append(out, s)
			} else {
				out = append(out, collect(e, key)...)
			}
		}
	case []any:
		for _, e := range x {
			out = append(out, collect(e, key)...)
		}
	}
	slices.Sort(out)
	return out
}

// perturbedKitC (TestE2EKitCReplay/perturbed) replays Kit C with one recorded figure changed into
// what the other outcome would show, and wants the expectation that guards against it to fail,
// saying why, while the expectations that do not read the changed figure hold. The rest is as
// above: real API server, istiod and kwok IP reuse, replayed data plane.
func perturbedKitC(t *testing.T) {
	cases := []struct {
		name, scenario string
		// perturb changes the client's and the waypoint's fixtures.
		perturb func(t *testing.T, client, waypoint []sandbox.Fixture) ([]sandbox.Fixture, []sandbox.Fixture)
		wants   map[string]perturbedWant // by expectation; every other expectation must pass; none: the run must pass
	}{{
		name:     "another pool's connection logged first",
		scenario: "c_stale",
		// The waypoint has more than one pool: another pool's connection to another address is
		// logged before phase 1's to aaa, and reused before it in phase 2. wp1 and wp2 must find
		// the lines of the connection to aaa's IP, not the first ones; the run still passes.
		perturb: func(t *testing.T, client, waypoint []sandbox.Fixture) ([]sandbox.Fixture, []sandbox.Fixture) {
			client = editExec(t, client, 1, func(f *sandbox.ExecReplay) {
				prependLogs(f, "2026-07-01T10:42:51.100Z\tdebug\tenvoy connection external/envoy/source/common/network/connection_impl.cc:1017\t[Tags: \"ConnectionId\":\"78411\"] connecting to 10.90.7.31:15008\tthread=20")
			})
			return editExec(t, client, 2, func(f *sandbox.ExecReplay) {
				prependLogs(f, "2026-07-01T10:44:27.511Z\tdebug\tenvoy pool external/envoy/source/common/conn_pool/conn_pool_base.cc:265\t[Tags: \"ConnectionId\":\"78411\"] using existing fully connected connection\tthread=20")
			}), waypoint
		},
	}, {
		name:     "no access-log line for the request",
		scenario: "c_retry",
		// Phase 2 answers 200 but the waypoint logs no access line for it: "no 503 logged"
		// proves nothing then, and the check that the request's line exists says so. So does
		// the judge of access.codes: the log's lines matched and none is an access line, so it
		// has no code to count (it read 0 before, and "no 503" passed).
		perturb: func(t *testing.T, client, waypoint []sandbox.Fixture) ([]sandbox.Fixture, []sandbox.Fixture) {
			return editExec(t, client, 2, func(f *sandbox.ExecReplay) {
				for c, lines := range f.Logs {
					f.Logs[c] = slices.DeleteFunc(slices.Clone(lines), func(l string) bool { return strings.HasPrefix(l, "[") })
				}
			}), waypoint
		},
		wants: map[string]perturbedWant{
			`access.codes["503"] == 0`: {interp.Errored, []string{"access.codes has no value", "none parsed as an access line"}},
			// The explanation shows what the let bound (no line) and the part that failed.
			`let l = filter(access.entries, .access && .upstream_host contains (fromJSON(toJSON(aaa))[0].status.podIP + ":")); len(l) >= 1 && all(l, .code == 200 && len(.flags) == 0)`: {interp.Failed, []string{"([]);", "(len(l ([])) (0) >= 1)"}},
		},
	}, {
		name:     "a fresh connection for the new pod",
		scenario: "c_stale",
		// The phase-2 request goes out on connection 80112, not on phase 1's 79097 (what a pool
		// keyed by more than IP:port would do); the 503 is left as recorded.
		perturb: func(t *testing.T, client, waypoint []sandbox.Fixture) ([]sandbox.Fixture, []sandbox.Fixture) {
			return editExec(t, client, 2, func(f *sandbox.ExecReplay) {
				replaceInLogs(f, `"ConnectionId":"79097"`, `"ConnectionId":"80112"`)
			}), waypoint
		},
		wants: map[string]perturbedWant{
			"wp1.capture.id in map(wp2.captures, .id)": {interp.Failed, []string{"80112", `"79097"`}},
		},
	}, {
		name:     "the socket to the old IP already gone",
		scenario: "c_stale",
		// ss in the waypoint lists no connection to aaa's IP:15008.
		perturb: func(t *testing.T, client, waypoint []sandbox.Fixture) ([]sandbox.Fixture, []sandbox.Fixture) {
			return client, editExec(t, waypoint, 1, func(f *sandbox.ExecReplay) {
				f.Stdout = strings.SplitAfter(f.Stdout, "\n")[0]
			})
		},
		wants: map[string]perturbedWant{
			// The capture matches nothing: its group has no value, which the judge says (it read
			// as "" before, and a comparison with "" would say nothing of the socket).
			`ss_stale.exit == 0 && ss_stale.captured.peer == fromJSON(toJSON(aaa))[0].status.podIP + ":15008"`: {interp.Errored, []string{`ss_stale.captured.peer has no value: the capture of "ss_stale" matched nothing in its stdout`}},
		},
	}, {
		name:     "no retry on reset",
		scenario: "c_retry",
		// Phase 2 ends as without the mitigation: the stale connection's reset is the answer.
		perturb: func(t *testing.T, client, waypoint []sandbox.Fixture) ([]sandbox.Fixture, []sandbox.Fixture) {
			stale := replay(t, "kit-c", "c_stale/client")
			return editExec(t, client, 2, func(f *sandbox.ExecReplay) {
				*f = readExec(t, stale[1])
				replaceInLogs(f, `"ConnectionId":"79097"`, `"ConnectionId":"81356"`)
			}), waypoint
		},
		wants: map[string]perturbedWant{
			`phase2.captured.code == "200"`: {interp.Failed, []string{`("503")`}},
			`access.codes["503"] == 0`:      {interp.Failed, []string{"(1)"}},
			`let l = filter(access.entries, .access && .upstream_host contains (fromJSON(toJSON(aaa))[0].status.podIP + ":")); len(l) >= 1 && all(l, .code == 200 && len(.flags) == 0)`: {interp.Failed, []string{"(false)"}},
		},
	}}
	for _, c := range cases {
		t.Run(c.scenario+": "+c.name, func(t *testing.T) {
			t.Parallel()
			sb := holdSandbox(t)
			client, waypoint := c.perturb(t, replay(t, "kit-c", c.scenario+"/client"), replay(t, "kit-c", c.scenario+"/waypoint"))
			sb.EnvoyStandIn(t, kitCNamespace, "client", client...)
			sb.EnvoyStandIn(t, kitCNamespace, "waypoint", waypoint...)
			rec := kubeRun(t, sb, c.scenario, nil)
			if c.wants == nil {
				requirePassed(t, rec)
				return
			}
			checkPerturbed(t, rec, c.wants)
		})
	}
}

// prependLogs puts line before the log lines of an exec replay.
func prependLogs(r *sandbox.ExecReplay, line string) {
	for c, lines := range r.Logs {
		r.Logs[c] = append([]string{line}, lines...)
	}
}

// replaceInLogs replaces old by repl in every log line of an exec replay.
func replaceInLogs(r *sandbox.ExecReplay, old, repl string) {
	for c, lines := range r.Logs {
		for i, l := range lines {
			r.Logs[c][i] = strings.ReplaceAll(l, old, repl)
		}
	}
}

func readExec(t *testing.T, fx sandbox.Fixture) sandbox.ExecReplay {
	t.Helper()
	r, err := sandbox.ParseExecReplay(fx)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// editExec changes the n-th (from 1) fixture, an exec replay.
func editExec(t *testing.T, fx []sandbox.Fixture, n int, edit func(*sandbox.ExecReplay)) []sandbox.Fixture {
	t.Helper()
	if n < 1 || n > len(fx) {
		t.Fatalf("no fixture %d of %d", n, len(fx))
	}
	out := append([]sandbox.Fixture(nil), fx...)
	r := readExec(t, out[n-1])
	edit(&r)
	out[n-1] = r.Fixture()
	return out
}
