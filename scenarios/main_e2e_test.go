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
// The kits use fixed namespaces, so two runs of one kit cannot share a sandbox. Every run is its
// own parallel test and holds its kit's namespace on one of several sandboxes (holdLab): the
// first is the package's (sandbox.Start, TestMain), further ones start when every sandbox has
// that namespace taken (sandbox.StartAnother), up to LABRUN_E2E_SANDBOXES (default 4). Kit C
// holds a sandbox of its own (holdSandbox). The runs mostly wait on their recorded timelines, so
// they overlap: see TESTING.md for the wall times. They skip under -short and LABRUN_SANDBOX=off.

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
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

// TestMain runs the tests on the package's sandboxes (sandbox.Main stops them all). Unless
// go test is given -parallel, it lets 16 parallel tests run at once rather than GOMAXPROCS (2 on
// CI): the e2e runs are the only parallel tests here, they mostly wait, and the lanes (holdLab)
// bound how many run on the sandboxes at once.
func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		if err := flag.Set("test.parallel", "16"); err != nil {
			panic(err)
		}
	}
	sandbox.Main(m)
}

// labNamespaces are the kits' namespaces; a run holds the one of its scenario.
var labNamespaces = map[string]bool{"conn-lab": true, "dns-lab": true, "ambient-lab": true}

// A lane is one sandbox and the kit namespaces tests hold on it.
type lane struct {
	sb    *sandbox.Sandbox
	held  map[string]bool
	whole bool // a test holds the whole sandbox (holdSandbox)
}

// lanePool hands out lanes, starting a new sandbox when none has what a test asks for and fewer
// than max are running.
type lanePool struct {
	name     string
	max      func() int
	first    bool // the pool's first lane is the package's sandbox (sandbox.Start)
	mu       sync.Mutex
	cond     *sync.Cond
	lanes    []*lane
	starting int
	waiting  map[*waiter]bool
}

// labLanes are the sandboxes the kits share, each kit's namespace held by one run at a time.
var labLanes = &lanePool{name: "lab", max: sandboxesAllowed, first: true}

// ownLanes are the sandboxes a run holds whole (Kit C, which waits for kwok to hand a deleted
// pod's IP to a new pod: a pod another test created meanwhile can take it, as seen in CI when Kit
// B's diff shared its sandbox). One, so Kit C's runs queue for it while the others go on.
var ownLanes = &lanePool{name: "own", max: func() int { return 1 }}

// sandboxesAllowed is LABRUN_E2E_SANDBOXES, how many sandboxes the kits share (default 4: on 2
// cores with Kit C's own, that is five API servers and istiods, mostly idle).
func sandboxesAllowed() int {
	if n, err := strconv.Atoi(os.Getenv("LABRUN_E2E_SANDBOXES")); err == nil && n > 0 {
		return n
	}
	return 4
}

// holdLab returns a sandbox on which the test holds the named kit namespaces until it ends. Of the
// runs waiting, the one with the longest replays (fx, the fixtures it will replay) goes first, so
// that the last to start are short ones.
func holdLab(t *testing.T, fx []sandbox.Fixture, names ...string) *sandbox.Sandbox {
	t.Helper()
	return labLanes.hold(t, replayedTime(t, fx), false, names)
}

// replayedTime is how long the exec replays among fx last, together.
func replayedTime(t *testing.T, fx []sandbox.Fixture) time.Duration {
	t.Helper()
	var d time.Duration
	for _, f := range fx {
		if !strings.HasPrefix(f.Path, "exec/") {
			continue
		}
		r, err := sandbox.ParseExecReplay(f)
		if err != nil {
			t.Fatal(err)
		}
		d += r.Duration
	}
	return d
}

// holdSandbox returns a sandbox that the test holds whole until it ends: no other run uses it.
func holdSandbox(t *testing.T) *sandbox.Sandbox {
	t.Helper()
	return ownLanes.hold(t, 0, true, nil)
}

// A waiter is a test waiting for a lane.
type waiter struct {
	first time.Duration // waiters with more go first
	whole bool
	names []string
}

func (p *lanePool) hold(t *testing.T, first time.Duration, whole bool, names []string) *sandbox.Sandbox {
	t.Helper()
	if why := sandbox.Disabled(); why != "" {
		t.Skip(why)
	}
	if testing.Short() {
		t.Skip("sandbox skipped in -short mode")
	}
	for _, n := range names {
		if !labNamespaces[n] {
			t.Fatalf("namespace %s is not a kit's", n)
		}
	}
	waited := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cond == nil {
		p.cond = sync.NewCond(&p.mu)
		p.waiting = map[*waiter]bool{}
	}
	me := &waiter{first, whole, names}
	p.waiting[me] = true
	defer func() { // the lanes left for me are free for others now
		delete(p.waiting, me)
		p.cond.Broadcast()
	}()
	for {
		for i, l := range p.lanes {
			if !l.fits(whole, names) || p.leftFor(me, l) {
				continue
			}
			l.whole = whole
			for _, n := range names {
				l.held[n] = true
			}
			t.Cleanup(func() {
				p.mu.Lock()
				defer p.mu.Unlock()
				l.whole = false
				for _, n := range names {
					delete(l.held, n)
				}
				p.cond.Broadcast()
			})
			if d := time.Since(waited); d > time.Second {
				t.Logf("sandbox %s %d after %s in its queue", p.name, i, d.Round(time.Second))
			} else {
				t.Logf("sandbox %s %d", p.name, i)
			}
			return l.sb
		}
		if len(p.lanes)+p.starting < p.max() {
			p.start(t)
			continue
		}
		p.cond.Wait()
	}
}

// leftFor reports whether a waiter that goes before me could take the lane.
func (p *lanePool) leftFor(me *waiter, l *lane) bool {
	for w := range p.waiting {
		if w.first > me.first && l.fits(w.whole, w.names) {
			return true
		}
	}
	return false
}

// fits reports whether a test can hold the lane: all of it, or the named namespaces.
func (l *lane) fits(whole bool, names []string) bool {
	if l.whole || (whole && len(l.held) > 0) {
		return false
	}
	for _, n := range names {
		if l.held[n] {
			return false
		}
	}
	return true
}

// start starts one more sandbox for the pool, p.mu held (and released while it starts).
func (p *lanePool) start(t *testing.T) {
	t.Helper()
	first := p.first && len(p.lanes) == 0 && p.starting == 0
	p.starting++
	p.mu.Unlock()
	var sb *sandbox.Sandbox
	defer func() { // also when the start fails (t.Fatal)
		p.mu.Lock()
		p.starting--
		if sb != nil {
			p.lanes = append(p.lanes, &lane{sb: sb, held: map[string]bool{}})
		}
		p.cond.Broadcast()
	}()
	began := time.Now()
	if first {
		sb = sandbox.Start(t)
	} else {
		sb = sandbox.StartAnother(t)
	}
	t.Logf("a sandbox for lane pool %s started in %s", p.name, time.Since(began).Round(100*time.Millisecond))
}

// sandboxVars are the --var settings every sandbox run uses: kwok runs pod commands on the host,
// in the pod's working directory, so Kit B's lab DNS hosts file (a dns step writes it with sh in
// the writer container) is a file there, not /hosts/addn of the host.
var sandboxVars = map[string]string{"hostsFile": "addn"}

// loadedWithVars caches the scenarios loaded with a set of --var settings.
var (
	loadedWithVars  sync.Map // key string → *dsl.Result
	loadingWithVars sync.Mutex
)

// scenarioWithVars loads this package's scenarios as `labrun run --var k=v … scenarios/` does
// and returns the one named name.
func scenarioWithVars(t *testing.T, name string, vars map[string]string) *dsl.Scenario {
	t.Helper()
	var key strings.Builder
	for _, k := range slices.Sorted(maps.Keys(vars)) {
		fmt.Fprintf(&key, "%s=%s\n", k, vars[k])
	}
	loadingWithVars.Lock() // one load of each set, not one per parallel run
	v, ok := loadedWithVars.Load(key.String())
	if !ok {
		res, err := dsl.Load([]string{"."}, dsl.Options{Vars: vars})
		if err != nil {
			loadingWithVars.Unlock()
			t.Fatalf("loading the scenarios with --var %v:\n%v", vars, err)
		}
		v, _ = loadedWithVars.LoadOrStore(key.String(), res)
	}
	loadingWithVars.Unlock()
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
	// A logs read whose pods the run could not note or follow from its mark passes on the
	// word of the pods there at the read: against the sandbox's API server it never should.
	for _, s := range rec.Steps {
		for _, w := range s.Warnings {
			if strings.Contains(w, "could not be noted at its mark") || strings.Contains(w, "could not be followed since its mark") {
				t.Errorf("%s: step %s: %s", rec.Scenario, s.Name, w)
			}
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
