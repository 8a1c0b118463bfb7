// Package primitivese2e runs the real labrun binary, as users run it, against the sandbox (a
// real kube-apiserver and kwok on loopback) on the Kubernetes primitives of issue 15:
// examples/kube_primitives.cue (wait.match, wait.absent, apply modes create and patch,
// expectFail, kubectl on this machine with env, outcome.<step>), a copy of it that must fail
// with the closest object's diff, docs/language.md's worked example, and translations of Chainsaw's and KUTTL's own example tests
// (testdata/, each file naming the test it translates). Its own package, so that only it starts
// a sandbox.
package primitivese2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"labrun.dev/labrun/cmd/labrun/internal/e2ebin"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/sandbox"
)

func TestMain(m *testing.M) { sandbox.Main(m) }

// TestE2EKubePrimitives runs the bar (examples/kube_primitives.cue) and wants it to
// pass; then a copy whose wait.match wants data.b "3" (the patch wrote "2") and must fail,
// naming the field, what it wanted and what the object has.
func TestE2EKubePrimitives(t *testing.T) {
	sb := sandbox.Start(t)
	bin := e2ebin.Build(t)
	src, err := os.ReadFile(filepath.Join("..", "..", "..", "examples", "kube_primitives.cue"))
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"vet"}, {"vet", "--strict"}} {
		if out, err := labrun(t, sb, bin, "", append(args, "kube_primitives.cue")...); err != nil {
			t.Fatalf("labrun %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}

	t.Run("passes", func(t *testing.T) {
		dir := writeFile(t, "kube_primitives.cue", src)
		out, err := labrun(t, sb, bin, dir, "run", "--report-dir", "", "kube_primitives.cue")
		if err != nil {
			t.Fatalf("labrun run: %v\n%s", err, out)
		}
		for _, want := range []string{
			"✓ recreate (apply: create ConfigMap/flags)",
			"⚠ expectFail: failed as expected: create ConfigMap primitives-lab/flags (objects[0]): it exists already",
			"⚠ expectFail: failed as expected: sh -c kubectl -n \"$LABRUN_NAMESPACE\" get configmap flags exited with code 1",
			"✓ outcome.recreate == 'passed'",
			"✓ int(trim(pods.stdout)) == 2",
			// Deleted by a step and by kubectl: the cleanup does not claim to have removed them.
			"cleanup: already gone: Deployment primitives-lab/web",
			"cleanup: already gone: ConfigMap primitives-lab/flags",
			"cleanup: removed Namespace primitives-lab",
			"PASSED kube_primitives",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
	})

	t.Run("a wrong wanted field fails with the diff", func(t *testing.T) {
		broken := string(src)
		for _, r := range [][2]string{
			{`data: {a: "1", b: "2"}}}`, `data: {a: "1", b: "3"}}}`},
			{`timeout: "20s"`, `timeout: "2s"`},
		} {
			if strings.Count(broken, r[0]) != 1 {
				t.Fatalf("examples/kube_primitives.cue holds %q %d times, want once", r[0], strings.Count(broken, r[0]))
			}
			broken = strings.Replace(broken, r[0], r[1], 1)
		}
		dir := writeFile(t, "kube_primitives.cue", []byte(broken))
		out, err := labrun(t, sb, bin, dir, "run", "--report-dir", "rep", "kube_primitives.cue")
		if code := exitCode(err); code == 0 {
			t.Fatalf("the broken copy passed:\n%s", out)
		}
		diff := `wait match ConfigMap primitives-lab/flags: it differs: data.b: want "3", got "2"`
		for _, want := range []string{"⏱ merged (wait: match ConfigMap flags)", diff, "TIMEOUT kube_primitives"} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
		reports, _ := filepath.Glob(filepath.Join(dir, "rep", "*.md"))
		if len(reports) != 1 {
			t.Fatalf("reports %v, want one", reports)
		}
		if md, _ := os.ReadFile(reports[0]); !bytes.Contains(md, []byte(diff)) {
			t.Errorf("report %s lacks %q:\n%s", reports[0], diff, md)
		}
	})
}

// deleteByKind deletes the pods a selector picks, then every ConfigMap, in its namespace only:
// the pod of another label stays, as does a ConfigMap of another namespace the scenario owns.
const deleteByKind = `package s

import "labrun.dev/schema"

_pod: {apiVersion: "v1", kind: "Pod", spec: containers: [{name: "c", image: "x"}]}
_cm: {apiVersion: "v1", kind: "ConfigMap", data: a: "1"}

bykind: schema.#Scenario & {
	target: "kube"
	namespaces: ["bykind-lab", "bykind-other"]
	setup: [{apply: objects: [for n in namespaces {apiVersion: "v1", kind: "Namespace", metadata: name: n}]}]
	steps: [
		{apply: objects: [
			_pod & {metadata: {name: "a", labels: app: "x"}},
			_pod & {metadata: {name: "b", labels: app: "x"}},
			_pod & {metadata: {name: "c", labels: app: "y"}},
			_cm & {metadata: name: "one"},
			_cm & {metadata: name: "two"},
			_cm & {metadata: {name: "elsewhere", namespace: "bykind-other"}},
		]},
		{delete: {kind: "Pod", selector: "app=x"}},
		{wait: absent: {kind: "Pod", metadata: labels: app: "x"}},
		{wait: match: {apiVersion: "v1", kind: "Pod", metadata: name: "c"}},
		{name: "none", delete: {kind: "Pod", selector: "app=nosuch"}},
		// kube-root-ca.crt too: its controller makes it again at once, a new object not waited for
		{timeout: "30s", delete: {apiVersion: "v1", kind: "ConfigMap"}},
		{name: "cms", exec: argv: ["sh", "-c", "kubectl get configmaps -A -o name -l labrun.dev/scenario=bykind"]},
	]
	expect: ["trim(cms.stdout) == 'configmap/elsewhere'"]
}
`

// TestE2EDeleteByKind: KUTTL's delete by labels and by kind, in the sandbox.
func TestE2EDeleteByKind(t *testing.T) {
	sb := sandbox.Start(t)
	bin := e2ebin.Build(t)
	dir := writeFile(t, "s.cue", []byte(deleteByKind))
	out, err := labrun(t, sb, bin, dir, "run", "--report-dir", "", "s.cue")
	if err != nil {
		t.Fatalf("labrun run: %v\n%s", err, out)
	}
	for _, want := range []string{"✓ steps.1 (delete: Pod {app=x})", "⚠ no Pod {app=nosuch} in bykind-lab: nothing to delete", "PASSED bykind"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestE2EComingFromChainsawDoc vets docs/language.md as CI does and runs its worked example
// (section "Coming from Chainsaw/KUTTL") in the sandbox: it must pass.
func TestE2EComingFromChainsawDoc(t *testing.T) {
	sb := sandbox.Start(t)
	bin := e2ebin.Build(t)
	docs, err := filepath.Abs(filepath.Join("..", "..", "..", "docs"))
	if err != nil {
		t.Fatal(err)
	}
	if out, err := labrun(t, sb, bin, docs, "doc", "--vet", "language.md"); err != nil {
		t.Fatalf("labrun doc --vet docs/language.md: %v\n%s", err, out)
	}
	out, err := labrun(t, sb, bin, docs, "run", "--report-dir", "", "language.md")
	if err != nil || !strings.Contains(out, "PASSED flags in ") {
		t.Fatalf("labrun run docs/language.md: %v\n%s", err, out)
	}
}

// TestE2EChainsawKuttlTranslations runs every scenario of testdata/ (each translates one of
// Chainsaw's or KUTTL's example tests, named in its first comment) and wants each to pass. They
// run in three labrun processes at once (most of a run is its namespace's deletion).
func TestE2EChainsawKuttlTranslations(t *testing.T) {
	sb := sandbox.Start(t)
	bin := e2ebin.Build(t)
	files, err := filepath.Glob(filepath.Join("testdata", "*.cue"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 13 {
		t.Fatalf("%d translations, want at least 13", len(files))
	}
	dir, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		src, _ := os.ReadFile(f)
		if !strings.HasPrefix(string(src), "// Translated from ") {
			t.Errorf("%s does not start by naming the test it translates", f)
		}
	}
	// --server: the cluster accepts every object (the one cs_negative_resource expects it to
	// refuse is left to the run, and said so)
	out, err := labrun(t, sb, bin, dir, append([]string{"vet", "--strict", "--server", "--kubeconfig", sb.Kubeconfig}, bases(files)...)...)
	if err != nil {
		t.Fatalf("labrun vet --strict --server: %v\n%s", err, out)
	}
	if !strings.Contains(out, "cs_negative_resource: not validated: cs_negative_resource.cue:14:3: steps.1 (expectFail: the cluster rejects it") {
		t.Errorf("vet --server does not say it left the rejected object to the run:\n%s", out)
	}
	const procs = 3
	outs := make([]string, procs)
	errs := make([]error, procs)
	var wg sync.WaitGroup
	for p := range procs {
		var mine []string
		for i, f := range bases(files) {
			if i%procs == p {
				mine = append(mine, f)
			}
		}
		wg.Go(func() {
			outs[p], errs[p] = labrun(t, sb, bin, dir, append([]string{"run", "--report-dir", ""}, mine...)...)
		})
	}
	wg.Wait()
	all := strings.Join(outs, "\n")
	for p, err := range errs {
		if err != nil {
			t.Errorf("labrun run (process %d): %v\n%s", p, err, outs[p])
		}
	}
	for _, f := range bases(files) {
		name := strings.TrimSuffix(f, ".cue")
		if !strings.Contains(all, "PASSED "+name+" in ") {
			t.Errorf("%s: no PASSED %s", f, name)
		}
	}
	if t.Failed() {
		t.Logf("output:\n%s", all)
	}
}

// TestVetTranslations loads every translation as labrun vet does, without a cluster (so that
// -short and LABRUN_SANDBOX=off still check them): each one file, one scenario, with a doc.
func TestVetTranslations(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.cue"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no translations: %v", err)
	}
	for _, f := range files {
		res, err := dsl.Load([]string{f}, dsl.Options{})
		if err != nil {
			t.Errorf("labrun vet %s would report:\n%v", f, err)
			continue
		}
		if len(res.Scenarios) != 1 || res.Scenarios[0].Name != strings.TrimSuffix(filepath.Base(f), ".cue") || res.Scenarios[0].Doc == "" {
			t.Errorf("%s: want one scenario named as the file, with a doc", f)
		}
	}
}

func bases(files []string) []string {
	var b []string
	for _, f := range files {
		b = append(b, filepath.Base(f))
	}
	return b
}

// labrun runs the binary in dir (a temp dir when empty) with the sandbox's kubeconfig and
// kubectl first in PATH, and no KUBECONFIG of the caller's: commands on this machine reach the
// sandbox only through what labrun exports.
func labrun(t *testing.T, sb *sandbox.Sandbox, bin, dir string, args ...string) (string, error) {
	t.Helper()
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "examples")
	}
	if len(args) > 0 && args[0] == "run" {
		args = append([]string{"run", "--kubeconfig", sb.Kubeconfig}, args[1:]...)
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "KUBECONFIG=") && !strings.HasPrefix(kv, "PATH=") && !strings.HasPrefix(kv, "HOME=") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, "PATH="+sb.BinDir+string(os.PathListSeparator)+os.Getenv("PATH"), "HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func exitCode(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}
