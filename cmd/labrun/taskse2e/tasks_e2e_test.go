// Package taskse2e runs the real labrun binary, as users run it, on examples/istio-tasks/:
// experiments written from Istio's task pages, whose config halves must vet and pass against
// the sandbox's real istiod. Its own package, so that only it starts a sandbox.
package taskse2e

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"labrun.dev/labrun/cmd/labrun/internal/e2ebin"
	"labrun.dev/labrun/sandbox"
)

func TestMain(m *testing.M) { sandbox.Main(m) }

// tasksDir is examples/istio-tasks, from this package's directory.
var tasksDir = filepath.Join("..", "..", "..", "examples", "istio-tasks")

// tasks are the experiments' scenarios, one per task (two for locality load balancing).
var tasks = []string{
	"dns_flip_sweep", "egress_tls_origination", "locality_failover", "locality_distribute",
	"mirroring", "peer_auth_strict", "registry_only", "retries", "waypoint_authz",
}

// TestIstioTasksVet: `labrun vet --strict` accepts every experiment (no sandbox needed).
func TestIstioTasksVet(t *testing.T) {
	bin := e2ebin.Build(t)
	cmd := exec.Command(bin, "vet", "--strict", ".")
	cmd.Dir = tasksDir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("labrun vet --strict examples/istio-tasks: %v\n%s", err, out)
	}
	if want := "ok: 9 scenarios in 9 files"; !strings.Contains(string(out), want) {
		t.Errorf("labrun vet printed %q, want %q", out, want)
	}
}

// TestE2EIstioTasks: `labrun run` on the sandbox passes every experiment: each applies the task's objects through the real API server
// (Istio's CRD schemas) and reads, through the Envoy admin stand-in, what the real istiod
// (istio.io/istio v0.0.0-20260827124520-eed52ebb66ad, master of 2026-08-27) sends curl's sidecar
// or the waypoint. No fixture is installed: nothing is replayed.
func TestE2EIstioTasks(t *testing.T) {
	sb := sandbox.Start(t)
	bin := e2ebin.Build(t)
	out, err := labrun(t, sb, bin, tasksDir, "run", "--target", "kube", "--kubeconfig", sb.Kubeconfig, "--report-dir", t.TempDir(), ".")
	t.Logf("labrun run examples/istio-tasks:\n%s", out)
	if err != nil {
		t.Errorf("labrun run: %v", err)
	}
	for _, name := range tasks {
		if !regexp.MustCompile(`(?m)^\s+PASSED\s+` + name + `\s`).MatchString(out) {
			t.Errorf("%s did not pass", name)
		}
	}
	if !strings.Contains(out, "9 scenarios: 9 passed, 0 failed, 0 errors (10 runs)") {
		t.Errorf("want 9 scenarios in 10 runs (the DNS sweep runs twice), all passed")
	}
}

// TestE2EIstioTasksMisspelledPath: the same experiments with one step of a config path
// misspelled do not run: vet names the file, line and column of the step, and the field meant.
func TestE2EIstioTasksMisspelledPath(t *testing.T) {
	bin := e2ebin.Build(t)
	dir := t.TempDir()
	files, err := filepath.Glob(filepath.Join(tasksDir, "*.cue"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no experiments in %s: %v", tasksDir, err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Base(f) == "mirroring.cue" {
			const right = `:8000\"].routes[0].route"`
			if strings.Count(string(b), right) != 1 {
				t.Fatalf("mirroring.cue holds %s %d times, want once", right, strings.Count(string(b), right))
			}
			b = []byte(strings.Replace(string(b), right, `:8000\"].routes[0].rout"`, 1))
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bin, "vet", ".")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 {
		t.Fatalf("labrun vet: %v, want exit 2\n%s", err, out)
	}
	want := regexp.MustCompile(`mirroring\.cue:\d+:\d+: mirroring\.steps\.1\.config\.path: path ".*\.rout": .*\(Route\) has no field "rout" \(did you mean "route"\?\)`)
	if !want.Match(out) {
		t.Errorf("vet's output lacks the misspelled field at its position:\n%s", out)
	}
}

// labrun runs the binary in dir with the sandbox's programs first on PATH.
func labrun(t *testing.T, sb *sandbox.Sandbox, bin, dir string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = e2ebin.Env(t, sb.BinDir)
	out, err := cmd.CombinedOutput()
	return string(out), err
}
