// Package faulte2e breaks the real labrun binary on purpose against the sandbox (a real
// kube-apiserver, controller-manager and kwok on loopback): runs killed with -9 at random
// moments leave marked objects behind, and `labrun clean --yes` removes every one of them.
package faulte2e

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"labrun.dev/labrun/cmd/labrun/internal/e2ebin"

	"labrun.dev/labrun/sandbox"
)

func TestMain(m *testing.M) { sandbox.Main(m) }

// killScenario creates a namespace, ConfigMaps and a Deployment (kwok pods), step by step, so
// that a kill -9 at a random moment leaves some of them behind.
const killScenario = `package s

import "labrun.dev/schema"

faultkill: schema.#Scenario & {
	target: "kube"
	namespaces: ["fault-lab"]
	setup: [
		{apply: objects: [{apiVersion: "v1", kind: "Namespace", metadata: name: "fault-lab"}]},
		{apply: objects: [{apiVersion: "v1", kind: "ConfigMap", metadata: name: "cm-a", data: k: "a"}]},
		{sleep: "200ms"},
		{apply: objects: [{apiVersion: "v1", kind: "ConfigMap", metadata: name: "cm-b", data: k: "b"}]},
		{apply: objects: [{
			apiVersion: "apps/v1", kind: "Deployment", metadata: name: "web"
			spec: {
				replicas: 2
				selector: matchLabels: app: "web"
				template: {
					metadata: labels: app: "web"
					spec: {containers: [{name: "web", image: "fake"}], terminationGracePeriodSeconds: 0}
				}
			}
		}]},
		{wait: rollout: "web"},
	]
	steps: [
		{apply: objects: [{apiVersion: "v1", kind: "ConfigMap", metadata: name: "cm-step", data: k: "s"}]},
		{sleep: "2s"},
	]
}
`

type result struct {
	killed   bool
	at       time.Duration
	stderr   string // with stdout
	exitCode int
}

// runAndKill runs the scenario and kills labrun with -9 at `at` after its first line (the
// target is up), or lets it finish when at is 0.
func runAndKill(t *testing.T, bin, dir, kubeconfig string, at time.Duration, extra ...string) result {
	t.Helper()
	args := append([]string{"run", "--report-dir", "reports", "--kubeconfig", kubeconfig}, extra...)
	killed := false
	code, out := runUntilLine(t, bin, dir, append(args, "s.cue"), func(line string, p *os.Process) {
		if at > 0 && !killed && strings.HasPrefix(line, "▶") {
			time.Sleep(at)
			killed = p.Signal(syscall.SIGKILL) == nil
		}
	})
	return result{killed: killed, at: at, stderr: out, exitCode: code}
}

// marked lists every object of the cluster with a run label, as kubectl sees it (not through
// labrun's own listing), and whether namespace fault-lab still exists.
func marked(t *testing.T, sb *sandbox.Sandbox) (objects []string, nsExists bool) {
	t.Helper()
	kubectl := filepath.Join(sb.BinDir, "kubectl")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, kubectl, "--kubeconfig", sb.Kubeconfig, "api-resources", "--verbs=list", "-o", "name").Output()
	if err != nil {
		t.Fatalf("kubectl api-resources: %v", err)
	}
	kinds := strings.Join(strings.Fields(string(out)), ",")
	out, err = exec.CommandContext(ctx, kubectl, "--kubeconfig", sb.Kubeconfig, "get", kinds, "-A", "-l", "labrun.dev/run",
		"-o", "custom-columns=KIND:.kind,NS:.metadata.namespace,NAME:.metadata.name", "--no-headers", "--ignore-not-found").Output()
	if err != nil {
		t.Fatalf("kubectl get: %v\n%s", err, out)
	}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if l != "" {
			objects = append(objects, l)
		}
	}
	err = exec.CommandContext(ctx, kubectl, "--kubeconfig", sb.Kubeconfig, "get", "namespace", "fault-lab").Run()
	return objects, err == nil
}

// TestKill9ThenClean: runs of one scenario killed with -9 at random moments (seeded: the seed
// is logged) until 20 were killed leave marked objects behind; a run after a killed one warns about
// them; `labrun clean` lists them and `labrun clean --yes` deletes them all: 0 objects left.
func TestKill9ThenClean(t *testing.T) {
	sb := sandbox.Start(t)
	bin := e2ebin.Build(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "s.cue"), []byte(killScenario), 0o644); err != nil {
		t.Fatal(err)
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("LABRUN_FAULT_SEED"); s != "" {
		fmt.Sscan(s, &seed)
	}
	t.Logf("seed %d (LABRUN_FAULT_SEED reruns these moments)", seed)
	rng := rand.New(rand.NewPCG(seed, 0))

	// The first run is killed once its setup is surely done, so that the second must warn.
	first := runAndKill(t, bin, dir, sb.Kubeconfig, 2500*time.Millisecond)
	if !first.killed {
		t.Fatalf("the first run was not killed (exit %d): %s", first.exitCode, first.stderr)
	}
	if objs, _ := marked(t, sb); len(objs) == 0 {
		t.Fatal("a run killed after its setup left no marked object: are objects labelled?")
	}
	killed, warned, tried := 1, 0, 1
	// Until 20 runs were killed (a run that ends before its moment is not), within 40 runs.
	for i := 1; killed < 20 && i < 40; i++ {
		at := time.Duration(rng.IntN(2400)) * time.Millisecond
		r := runAndKill(t, bin, dir, sb.Kubeconfig, at)
		tried++
		if r.killed {
			killed++
		}
		if strings.Contains(r.stderr, "that earlier runs of this scenario left on the cluster") {
			warned++
		} else if i == 1 {
			t.Errorf("the run after a killed one did not warn about its leftovers; stderr:\n%s", r.stderr)
		}
		t.Logf("run %d: kill -9 at +%s (killed: %v, exit %d)", i, at, r.killed, r.exitCode)
	}
	before, _ := marked(t, sb)
	t.Logf("%d runs, %d killed with -9 (the others ended first); %d of the %d later runs warned about leftovers; %d marked objects on the cluster before clean: %v",
		tried, killed, warned, tried-1, len(before), before)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	list, err := exec.CommandContext(ctx, bin, "clean", "--kubeconfig", sb.Kubeconfig).CombinedOutput()
	if err != nil {
		t.Fatalf("labrun clean: %v\n%s", err, list)
	}
	if len(before) > 0 && !strings.Contains(string(list), "dead") {
		t.Errorf("labrun clean lists no dead run:\n%s", list)
	}
	out, err := exec.CommandContext(ctx, bin, "clean", "--yes", "--kubeconfig", sb.Kubeconfig).CombinedOutput()
	if err != nil {
		t.Fatalf("labrun clean --yes: %v\n%s", err, out)
	}
	after, nsExists := marked(t, sb)
	t.Logf("after labrun clean --yes: %d marked objects left, namespace fault-lab exists: %v", len(after), nsExists)
	if len(after) > 0 || nsExists {
		t.Errorf("left after clean --yes: %v (namespace fault-lab exists: %v)\nclean said:\n%s", after, nsExists, out)
	}
	if killed < 20 {
		t.Errorf("only %d runs were killed", killed)
	}

	// Once more: a run killed after its setup, then a run with --clean-first, which deletes
	// what the killed one left before it starts, runs to its end and cleans up after itself.
	if r := runAndKill(t, bin, dir, sb.Kubeconfig, 2000*time.Millisecond); !r.killed {
		t.Fatalf("not killed: exit %d", r.exitCode)
	}
	r := runAndKill(t, bin, dir, sb.Kubeconfig, 0, "--clean-first")
	if r.exitCode != 0 || !strings.Contains(r.stderr, "--clean-first: deleted") {
		t.Errorf("run --clean-first: exit %d, stderr:\n%s", r.exitCode, r.stderr)
	}
	out, err = exec.CommandContext(ctx, bin, "clean", "--yes", "--kubeconfig", sb.Kubeconfig).CombinedOutput()
	if err != nil {
		t.Fatalf("labrun clean --yes: %v\n%s", err, out)
	}
	if after, nsExists := marked(t, sb); len(after) > 0 || nsExists {
		t.Errorf("left after --clean-first and clean --yes: %v (namespace fault-lab exists: %v)", after, nsExists)
	}
}

// TestCleanRefusesLiveRun: the objects of a run that is still running are listed as alive
// and not deleted; --clean-first of another run of the scenario leaves them too, while it
// deletes those of a dead run.
func TestCleanRefusesLiveRun(t *testing.T) {
	sb := sandbox.Start(t)
	bin := e2ebin.Build(t)
	dir := t.TempDir()
	src := strings.Replace(killScenario, `{sleep: "2s"}`, `{sleep: "30s"}`, 1)
	if err := os.WriteFile(filepath.Join(dir, "s.cue"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "run", "--report-dir", "", "--kubeconfig", sb.Kubeconfig, "s.cue")
	cmd.Dir = dir
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGINT) // let it clean up after itself
		_ = cmd.Wait()
	}()
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if strings.Contains(sc.Text(), "sleep: 30s") {
			break
		}
	}
	go func() {
		for sc.Scan() {
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "clean", "--yes", "--kubeconfig", sb.Kubeconfig).CombinedOutput()
	if err != nil {
		t.Fatalf("labrun clean --yes: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "still alive (not deleted)") || strings.Contains(string(out), "deleting") {
		t.Errorf("clean --yes during a live run:\n%s", out)
	}
	if objs, _ := marked(t, sb); len(objs) == 0 {
		t.Errorf("clean --yes deleted a live run's objects:\n%s", out)
	}
}

// TestInterruptOnKube delivers SIGINT, SIGTERM or SIGHUP (in turn) at moments counted from the
// start of labrun: while it loads, checks for leftovers, creates the kube client, applies,
// waits for the rollout, runs its steps. Every time labrun exits 130 with a report marked
// interrupted, and its cleanup removes what it created: in the end no marked object is left
// (namespaces are given a bounded time to finish terminating).
func TestInterruptOnKube(t *testing.T) {
	sb := sandbox.Start(t)
	bin := e2ebin.Build(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "s.cue"), []byte(killScenario), 0o644); err != nil {
		t.Fatal(err)
	}
	delays := []time.Duration{20, 50, 100, 200, 300, 500, 800, 1200, 1800, 2500}
	var outs []string // each run's output, shown if the runs left anything
	for i, d := range delays {
		d := d * time.Millisecond
		// SIGINT, SIGTERM and SIGHUP (a closed terminal or SSH session) in turn: all the same.
		sig := []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP}[i%3]
		reports := filepath.Join(dir, fmt.Sprintf("reports-%d", i))
		cmd := exec.Command(bin, "run", "--report-dir", reports, "--kubeconfig", sb.Kubeconfig, "s.cue")
		cmd.Dir = dir
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(d)
		// d counts wall time; on a loaded machine (CI runs test binaries side by side) a
		// fresh process may not yet have run its first millisecond by then, and before the Go
		// runtime and earlysignal's init no program can catch anything. So the signal waits
		// also until labrun has had 5 ms of CPU (its init catches signals at about 0.7 ms).
		waitCPU(t, cmd.Process.Pid, 5*time.Millisecond)
		_ = cmd.Process.Signal(sig)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		var err error
		select {
		case err = <-done:
		case <-time.After(2 * time.Minute):
			_ = cmd.Process.Kill()
			<-done
			t.Fatalf("%s at +%s: labrun did not end within 2 minutes:\n%s", sig, d, out.String())
		}
		outs = append(outs, fmt.Sprintf("%s at +%s:\n%s", sig, d, out.String()))
		// labrun catches signals from about 1 ms after exec (package earlysignal), so even
		// the first moment must give 130 and a report, not the signal's default action.
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				t.Errorf("%s at +%s: labrun was killed by %s instead of catching it:\n%s", sig, d, ws.Signal(), out.String())
				continue
			}
		}
		if ee == nil || ee.ExitCode() != 130 {
			t.Errorf("%s at +%s: exit %v, want 130:\n%s", sig, d, err, out.String())
			continue
		}
		files, _ := filepath.Glob(filepath.Join(reports, "*.json"))
		if len(files) != 1 {
			t.Errorf("%s at +%s: reports %v, want one", sig, d, files)
			continue
		}
		b, _ := os.ReadFile(files[0])
		if !strings.Contains(string(b), `"outcome": "interrupted"`) {
			t.Errorf("%s at +%s: the report is not marked interrupted", sig, d)
		}
		var rec struct {
			Error string `json:"error"`
		}
		_ = json.Unmarshal(b, &rec)
		t.Logf("%s at +%s: exit 130, %q", sig, d, rec.Error)
	}
	deadline := time.Now().Add(90 * time.Second)
	for {
		objs, ns := marked(t, sb)
		if len(objs) == 0 && !ns {
			break
		}
		if time.Now().After(deadline) {
			// What holds what is left (a namespace terminating, finalizers), and what each
			// run said of its cleanup.
			yaml, _ := exec.Command(filepath.Join(sb.BinDir, "kubectl"), "--kubeconfig", sb.Kubeconfig, "get", "namespace", "fault-lab", "-o", "yaml").CombinedOutput()
			t.Fatalf("interrupted runs left %v (namespace fault-lab exists: %v)\n%s\nthe runs:\n%s", objs, ns, yaml, strings.Join(outs, "\n"))
		}
		time.Sleep(time.Second)
	}
}

// apiDownScenario creates a namespace and three ConfigMaps, then sleeps: the test kills the API
// server during the sleep, so that the cleanup finds it gone.
const apiDownScenario = `package s

import "labrun.dev/schema"

apidown: schema.#Scenario & {
	target: "kube"
	namespaces: ["apidown-lab"]
	cleanupTimeout: "CLEANUP"
	setup: [
		{apply: objects: [{apiVersion: "v1", kind: "Namespace", metadata: name: "apidown-lab"}]},
		{apply: objects: [for n in ["a", "b", "c"] {apiVersion: "v1", kind: "ConfigMap", metadata: name: n}]},
	]
	steps: [{name: "nap", sleep: "2s"}]
}
`

// runUntilLine runs labrun and calls at(line, its process) for each line of its stdout; it
// returns the exit code and the output (stdout, then stderr).
func runUntilLine(t *testing.T, bin, dir string, args []string, at func(string, *os.Process)) (int, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		out.WriteString(sc.Text() + "\n")
		at(sc.Text(), cmd.Process)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(3 * time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("labrun did not end within 3 minutes:\n%s%s", out.String(), stderr.String())
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	}
	return code, out.String() + stderr.String()
}

// linesWith returns the lines of out that contain one of subs, for the test's log.
func linesWith(out string, subs ...string) string {
	var keep []string
	for _, l := range strings.Split(out, "\n") {
		for _, s := range subs {
			if strings.Contains(l, s) {
				keep = append(keep, strings.TrimSpace(l))
				break
			}
		}
	}
	return strings.Join(keep, " | ")
}

// TestAPIServerKilledDuringRun: the API server dies with -9 while the run sleeps. Restarted
// during the cleanup, the cleanup's retries remove everything and the run exits 0. Left dead
// longer than the cleanup may take, the run exits 4, its verdict line says it left 4 objects
// behind with the labrun clean command, and they are there; the next run's warning counts what
// labrun clean lists; labrun clean --yes removes them. Never exit 0 with objects left.
func TestAPIServerKilledDuringRun(t *testing.T) {
	sb := sandbox.Start(t)
	bin := e2ebin.Build(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var down atomic.Bool // the API server is dead
	t.Cleanup(func() {
		if down.Load() {
			_ = sb.RestartAPIServer(context.Background())
		}
	})
	run := func(cleanupTimeout string, restartAfter time.Duration) (int, string) {
		dir := t.TempDir()
		src := strings.Replace(apiDownScenario, "CLEANUP", cleanupTimeout, 1)
		if err := os.WriteFile(filepath.Join(dir, "s.cue"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		defer wg.Wait()
		return runUntilLine(t, bin, dir, []string{"run", "--report-dir", "reports", "--kubeconfig", sb.Kubeconfig, "s.cue"}, func(line string, _ *os.Process) {
			if !strings.Contains(line, "▸ nap") {
				return
			}
			if err := sb.KillAPIServer(); err != nil {
				t.Error(err)
				return
			}
			down.Store(true)
			t.Logf("kube-apiserver killed at the start of the sleep")
			if restartAfter == 0 {
				return
			}
			wg.Go(func() {
				time.Sleep(restartAfter)
				if err := sb.RestartAPIServer(ctx); err != nil {
					t.Error(err)
				}
				down.Store(false)
				t.Logf("kube-apiserver restarted %s after its death", restartAfter)
			})
		})
	}

	// Back 5s after its death (3s into the cleanup): the retries remove all 4 objects.
	code, out := run("2m", 5*time.Second)
	objs, ns := marked(t, sb)
	t.Logf("restarted during the cleanup: exit %d, %d marked objects after; %s", code, len(objs), linesWith(out, "cleanup:", "PASSED"))
	if code != 0 || len(objs) != 0 || !strings.Contains(out, "(attempt ") {
		t.Errorf("exit %d, left %v (namespace: %v); output:\n%s", code, objs, ns, out)
	}

	// Dead for longer than the cleanup's 8s: the run exits 4 and says what it left.
	code, out = run("8s", 0)
	if err := sb.RestartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	down.Store(false)
	objs, _ = marked(t, sb)
	t.Logf("dead through the cleanup: exit %d, %d marked objects after: %v; %s", code, len(objs), objs, linesWith(out, "PASSED"))
	if code != 4 {
		t.Errorf("exit %d, want 4 (left objects behind); output:\n%s", code, out)
	}
	if len(objs) != 4 || !strings.Contains(out, "— but it left 4 objects behind (") ||
		!strings.Contains(out, "`labrun clean --yes --scenario apidown` deletes the objects") {
		t.Errorf("left %v; output:\n%s", objs, out)
	}

	// The next run warns with the count labrun clean lists.
	list, err := exec.CommandContext(ctx, bin, "clean", "--scenario", "apidown", "--kubeconfig", sb.Kubeconfig).CombinedOutput()
	if err != nil {
		t.Fatalf("labrun clean: %v\n%s", err, list)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "s.cue"), []byte(strings.Replace(apiDownScenario, "CLEANUP", "2m", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out = runUntilLine(t, bin, dir, []string{"run", "--report-dir", "", "--kubeconfig", sb.Kubeconfig, "s.cue"}, func(string, *os.Process) {})
	if want := fmt.Sprintf("lists %d object(s) that earlier runs", len(objs)); !strings.Contains(out, want) || !strings.Contains(string(list), fmt.Sprintf(": %d object(s) of 1 run(s)", len(objs))) {
		t.Errorf("the warning does not count what labrun clean lists (%q):\n%s\nlabrun clean:\n%s", want, out, list)
	}
	if code != 0 {
		t.Errorf("the run after: exit %d\n%s", code, out)
	}
	if out, err := exec.CommandContext(ctx, bin, "clean", "--yes", "--kubeconfig", sb.Kubeconfig).CombinedOutput(); err != nil {
		t.Fatalf("labrun clean --yes: %v\n%s", err, out)
	}
	if objs, ns := marked(t, sb); len(objs) != 0 {
		t.Errorf("after labrun clean --yes: %v (namespace: %v)", objs, ns)
	}
}

// waitCPU waits until the process pid has run for at least cpu on the processors, summed over
// its threads (the first field of /proc/PID/task/TID/schedstat, in nanoseconds), or it has
// ended, or 10 s have passed.
func waitCPU(t *testing.T, pid int, cpu time.Duration) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
		if err != nil || len(tasks) == 0 {
			return // ended (or no /proc): nothing to wait for
		}
		var ran time.Duration
		for _, f := range tasks {
			b, err := os.ReadFile(f)
			if err != nil {
				continue
			}
			var ns int64
			if _, err := fmt.Sscan(string(b), &ns); err == nil {
				ran += time.Duration(ns)
			}
		}
		if ran >= cpu {
			return
		}
		time.Sleep(time.Millisecond)
	}
}
