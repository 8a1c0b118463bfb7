package scenarios_test

// End-to-end runs of the lab scenarios in the sandbox (labrun.dev/labrun/sandbox), through the
// same path as `labrun run --target kube --kubeconfig <sandbox>`: dsl.Load, kube.New,
// interp.New(...).Run. What is real and what is replayed:
//
//   - real: the Kubernetes API server, controller-manager and scheduler (v1.37.2), kwok v0.8.0 as
//     the kubelet, Istio's CRDs with their schemas (istio.io/api v1.30.8), and istiod itself
//     (istio.io/istio v0.0.0-20260827124520-eed52ebb66ad, Istio master of 2026-08-27, 1.31
//     development; the seeds used 1.30.0). Every config_dump a scenario reads is what that istiod
//     sends a sidecar of the pod; every apply, rollout, get, exec and log read goes through the
//     real API.
//   - stand-ins, named so everywhere: the sidecar injection stand-in (a webhook adding an
//     istio-proxy container, no Envoy in it); the waypoint deployment stand-in (a waypoint's
//     Deployment and Service for a Gateway of class istio-waypoint, Kit C); the Envoy admin
//     stand-in (pilot-agent) serving stats and /clusters from fixtures and keeping the log levels
//     POST logging sets; the exec stand-in replaying fortio's JSON result, curl loops and ss (and
//     the log lines of their requests, in the pod's or another pod's container) where a test
//     wrote one.
//   - replayed: Envoy's counters and gauges, /clusters, fortio results, access logs, a waypoint's
//     debug log lines and sockets — the seeds' recorded figures, in scenarios/testdata/replay
//     (README.md there says where each comes from).
//     A test that replays them proves labrun's handling of those figures, not Envoy's behaviour.
//
// The tests share one sandbox (TestMain). The kits use fixed namespaces, so a run holds its
// namespace (holdNamespace) while the top-level tests run in parallel: Kit A (conn-lab), Kit B
// (dns-lab) and Kit C (ambient-lab) overlap, which halves the wall time (their replays mostly wait). They skip
// under -short and LABRUN_SANDBOX=off.

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"labrun.dev/labrun/driver/kube"
	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/envoy"
	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/sandbox"
)

func TestMain(m *testing.M) { sandbox.Main(m) }

// labNamespaces are the kits' namespaces; a run holds the one of its scenario.
var labNamespaces = map[string]*sync.Mutex{"conn-lab": {}, "dns-lab": {}, "ambient-lab": {}}

// holdNamespace takes the named namespaces until the test ends.
func holdNamespace(t *testing.T, names ...string) {
	t.Helper()
	names = slices.Sorted(slices.Values(names)) // one order, no deadlock
	for _, n := range names {
		mu := labNamespaces[n]
		if mu == nil {
			t.Fatalf("namespace %s is not a kit's", n)
		}
		mu.Lock()
		t.Cleanup(mu.Unlock)
	}
}

// sandboxVars are the --var settings every sandbox run uses: kwok runs pod commands on the host,
// in the pod's working directory, so Kit B's lab DNS hosts file (a dns step writes it with sh in
// the writer container) is a file there, not /hosts/addn of the host.
var sandboxVars = map[string]string{"hostsFile": "addn"}

// loadedWithVars caches the scenarios loaded with a set of --var settings.
var loadedWithVars sync.Map // key string → *dsl.Result

// scenarioWithVars loads this package's scenarios as `labrun run --var k=v … scenarios/` does
// and returns the one named name.
func scenarioWithVars(t *testing.T, name string, vars map[string]string) *dsl.Scenario {
	t.Helper()
	var key strings.Builder
	for _, k := range slices.Sorted(maps.Keys(vars)) {
		fmt.Fprintf(&key, "%s=%s\n", k, vars[k])
	}
	v, ok := loadedWithVars.Load(key.String())
	if !ok {
		res, err := dsl.Load([]string{"."}, dsl.Options{Vars: vars})
		if err != nil {
			t.Fatalf("loading the scenarios with --var %v:\n%v", vars, err)
		}
		v, _ = loadedWithVars.LoadOrStore(key.String(), res)
	}
	for _, sc := range v.(*dsl.Result).Scenarios {
		if sc.Name == name {
			return sc
		}
	}
	t.Fatalf("no scenario %s", name)
	return nil
}

// kubeRun runs scenario name on the sandbox through the kube target, as the CLI's run command
// does (same target options, same access-log parser), logging each step as it ends. The caller
// holds the scenario's namespace (before it writes the stand-in's fixtures for it).
func kubeRun(t *testing.T, sb *sandbox.Sandbox, name string, vars map[string]string) *interp.Record {
	t.Helper()
	return kubeRunObserved(t, sb, name, vars, nil)
}

// kubeRunObserved is kubeRun with observe called on every step event too, in the run's goroutine
// (so a check it makes on the sandbox sees the world as that step left it).
func kubeRunObserved(t *testing.T, sb *sandbox.Sandbox, name string, vars map[string]string, observe func(interp.Event)) *interp.Record {
	t.Helper()
	sc := scenarioWithVars(t, name, vars)
	timeout := sc.Timeout + sc.CleanupTimeout
	if timeout <= 0 {
		timeout = 20 * time.Minute
	}
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	target, err := kube.New(ctx, kube.Options{
		Kubeconfig:        sb.Kubeconfig,
		AllowedNamespaces: sc.Namespaces,
		ClusterScoped:     sc.ClusterScoped,
		EnvoyVia:          kube.EnvoyViaExec,
		Getenv:            func(string) string { return "" },
		Logf:              t.Logf,
		// Marked as the CLI marks a run's objects: the scenarios' cleanup deletes their
		// namespace, which labrun deletes only when a run of it created it.
		Run: kube.Run{ID: fmt.Sprintf("e2e%d", time.Now().UnixNano()%1e9), Scenario: sc.Name, Host: "e2e", PID: os.Getpid()},
	})
	if err != nil {
		t.Fatalf("kube target on the sandbox: %v", err)
	}
	start := time.Now()
	r := interp.New(target,
		interp.WithAccessLogParser(envoy.AccessLog),
		interp.WithObserver(func(ev interp.Event) {
			if observe != nil {
				observe(ev)
			}
			if !ev.Ended {
				return
			}
			s := ev.Step
			line := fmt.Sprintf("%8.3fs %-9s %s (%s) %s", time.Since(start).Seconds(), s.Outcome, or(s.Name, s.Path), s.Kind, s.Summary)
			if s.Error != "" {
				line += ": " + s.Error
			}
			t.Log(line)
		}))
	rec := r.Run(ctx, ctx, sc)
	if target.Close != nil {
		_ = target.Close(ctx)
	}
	t.Logf("%s: %s in %s", name, rec.Outcome, rec.End.Sub(rec.Start).Round(time.Millisecond))
	return rec
}

// requirePassed fails the test unless the run passed with every expectation of the scenario
// judged and holding.
func requirePassed(t *testing.T, rec *interp.Record) {
	t.Helper()
	if rec.Outcome != interp.Passed {
		t.Errorf("%s: %s, want passed%s", rec.Scenario, rec.Outcome, describeRecord(rec))
		return
	}
	if len(rec.Expectations) == 0 {
		t.Errorf("%s: no expectation was judged", rec.Scenario)
	}
	for _, j := range rec.Expectations {
		if j.Outcome != interp.Passed {
			t.Errorf("%s: %s: %s %s%s", rec.Scenario, j.Src, j.Outcome, j.Explanation, j.Reason)
		}
	}
}

// describeRecord renders why a run did not pass.
func describeRecord(rec *interp.Record) string {
	var b strings.Builder
	if rec.Error != "" {
		fmt.Fprintf(&b, "\n  error: %s", rec.Error)
	}
	for _, j := range rec.Expectations {
		fmt.Fprintf(&b, "\n  %s: %s", j.Outcome, j.Src)
		if j.Explanation != "" {
			fmt.Fprintf(&b, "\n      %s", j.Explanation)
		}
		if j.Reason != "" {
			fmt.Fprintf(&b, "\n      %s", j.Reason)
		}
	}
	for _, n := range rec.Notes {
		fmt.Fprintf(&b, "\n  note: %s", n)
	}
	return b.String()
}

// judgement returns the judgement of the expectation written src.
func judgement(t *testing.T, rec *interp.Record, src string) *interp.Judgement {
	t.Helper()
	for _, j := range rec.Expectations {
		if j.Src == src {
			return j
		}
	}
	t.Fatalf("%s: no expectation %q", rec.Scenario, src)
	return nil
}

// replay reads the recorded figures of one scenario (scenarios/testdata/replay/<kit>/<name>) as
// stand-in fixtures.
func replay(t *testing.T, kit, name string) []sandbox.Fixture {
	t.Helper()
	fx, err := sandbox.ReplayDir(filepath.Join("testdata", "replay", kit, name))
	if err != nil {
		t.Fatal(err)
	}
	if len(fx) == 0 {
		t.Fatalf("no replay fixtures for %s/%s", kit, name)
	}
	return fx
}
