package docs_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/sandbox"
)

// kitADoc is the Kit A lab guide; kitAScenarios are its specs, in document order.
const kitADoc = "kit-a.md"

var kitAScenarios = []string{"s1", "s2", "s3", "s4", "s5", "s6", "s7_full", "s7c", "s7b"}

// TestKitADocVet is `labrun doc --vet docs/kit-a.md`.
func TestKitADocVet(t *testing.T) {
	if code, out, errOut := doc(t, ".", "--vet", kitADoc); code != 0 {
		t.Fatalf("labrun doc --vet %s: exit %d\n%s%s", kitADoc, code, out, errOut)
	}
}

// TestKitADocImportsTheScenarios checks that the guide cannot drift from scenarios/: each spec is
// the scenario of the scenarios package, imported (every step is written in scenarios/*.cue or
// scenarios.cue, none in the document), and every copy of a file shown for reading is that file,
// byte for byte (the DestinationRule excerpt: a verbatim part of scenarios.cue).
func TestKitADocImportsTheScenarios(t *testing.T) {
	md, _ := filepath.Abs(kitADoc)
	root, _ := filepath.Abs("..")
	res, err := dsl.Load([]string{md}, dsl.Options{})
	if err != nil {
		t.Fatalf("loading %s:\n%v", kitADoc, err)
	}
	var names []string
	for _, sc := range res.Scenarios {
		names = append(names, sc.Name)
		if len(sc.Steps) == 0 {
			t.Errorf("%s: no steps", sc.Name)
		}
		for _, s := range sc.Steps {
			rel, err := filepath.Rel(root, s.Pos.File)
			if err != nil || !(strings.HasPrefix(rel, "scenarios"+string(filepath.Separator)) || rel == "scenarios.cue") {
				t.Errorf("%s: step %s is written at %s, want in scenarios/ or scenarios.cue: the guide must import the scenarios, not copy them", sc.Name, s.Path, s.Pos)
			}
		}
	}
	if strings.Join(names, " ") != strings.Join(kitAScenarios, " ") {
		t.Errorf("%s declares %v, want %v", kitADoc, names, kitAScenarios)
	}

	text, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	kit, err := os.ReadFile(filepath.Join(root, "scenarios.cue"))
	if err != nil {
		t.Fatal(err)
	}
	shown := map[string]bool{}
	for _, f := range dsl.Fences(text) {
		if f.Lang() != "cue" || f.IsSpec() {
			continue
		}
		fields := strings.Fields(f.Info)
		if len(fields) < 2 {
			t.Errorf("%s:%d: a cue block that is neither a spec nor a named file", kitADoc, f.Line)
			continue
		}
		file := fields[1]
		if strings.Contains(f.Info, "(excerpt)") {
			if file != "scenarios.cue" || !strings.Contains(string(kit), f.Content) {
				t.Errorf("%s:%d: the excerpt of %s is not in the file any more; paste it again", kitADoc, f.Line, file)
			}
			continue
		}
		want, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			t.Errorf("%s:%d: %v", kitADoc, f.Line, err)
			continue
		}
		if f.Content != string(want) {
			t.Errorf("%s:%d: the copy of %s differs from the file; paste the file again", kitADoc, f.Line, file)
		}
		shown[file] = true
	}
	for _, f := range []string{"s1", "s2", "s3", "s4", "s5", "s6", "s7"} {
		if !shown["scenarios/"+f+".cue"] {
			t.Errorf("%s does not show scenarios/%s.cue", kitADoc, f)
		}
	}
}

// TestKitADocInSandbox runs the guide the way a reader runs it on a cluster —
// `labrun doc --target kube --kubeconfig <sandbox> docs/kit-a.md` — in the labrun sandbox, and
// wants every expected block to match.
//
// Real: the Kubernetes API server (v1.37.2), kwok as the kubelet, Istio's CRDs, and istiod
// (istio.io/istio v0.0.0-20260827124520-eed52ebb66ad, master of 2026-08-27): every apply, rollout
// and DR wait, and every config step — s7_full, s7c and s7b are checked against istiod's real
// output. Replayed (scenarios/testdata/replay/kit-a, the seed's run T93): for s1–s6, the client
// sidecar's stats (Envoy admin stand-in), fortio's results and s6's access-log lines (exec
// stand-in). Each scenario creates its client pod anew, so the fixtures are handed out per pod:
// the first client pod to ask replays s1, the next s2, and so on (config steps ask istiod, not
// the stand-in, so s7's pods claim nothing).
//
// LABRUN_UPDATE=1 runs `labrun doc --update` instead, rewriting the expected blocks from the run.
func TestKitADocInSandbox(t *testing.T) {
	sb := sandbox.Start(t) // no sandbox.Main here: this test's own sandbox, stopped when it ends
	var perPod [][]sandbox.Fixture
	for _, name := range []string{"s1", "s2", "s3", "s4", "s5", "s6"} {
		fx, err := sandbox.ReplayDir(filepath.Join("..", "scenarios", "testdata", "replay", "kit-a", name))
		if err != nil {
			t.Fatal(err)
		}
		perPod = append(perPod, fx)
	}
	sb.EnvoyStandInPerPod(t, "conn-lab", "client", perPod...)
	out, errOut, reports := docInSandbox(t, sb, kitADoc)
	for _, name := range kitAScenarios {
		if !strings.Contains(out, "PASSED "+name+" ") {
			t.Errorf("no PASSED line for %s", name)
		}
	}
	noCredentialIn(t, sb.RESTConfig.BearerToken, out, errOut, reports)
}

// docInSandbox runs `labrun doc` of the document md (of this directory) on the kube target
// against sb, with LABRUN_UPDATE=1 as `--update` (rewriting its expected blocks from the run),
// and fails the test unless it exits 0. It returns labrun's output and the reports folder.
func docInSandbox(t *testing.T, sb *sandbox.Sandbox, md string) (stdout, stderr, reports string) {
	t.Helper()
	reports = t.TempDir()
	args := []string{"--target", "kube", "--kubeconfig", sb.Kubeconfig, "--quiet", "--report-dir", reports}
	if os.Getenv("LABRUN_UPDATE") == "1" {
		args = append(args, "--update")
	}
	code, out, errOut := doc(t, ".", append(args, md)...)
	t.Logf("labrun doc %s:\n%s%s", strings.Join(append(args, md), " "), out, errOut)
	if code != 0 {
		t.Fatalf("exit %d, want 0", code)
	}
	return out, errOut, reports
}

// noCredentialIn fails if the cluster's token appears in the output or in any file of the
// reports (Markdown, JSON, JUnit, every raw artifact) — it must never be written anywhere.
func noCredentialIn(t *testing.T, token, stdout, stderr, reports string) {
	t.Helper()
	if token == "" {
		t.Fatal("the sandbox has no token to look for")
	}
	if strings.Contains(stdout, token) || strings.Contains(stderr, token) {
		t.Error("the cluster's token is in labrun's output")
	}
	files := 0
	err := filepath.WalkDir(reports, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files++
		if strings.Contains(string(b), token) {
			t.Errorf("the cluster's token is in %s", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 2*len(kitAScenarios) {
		t.Errorf("%d report files: want every scenario's report (and artifacts) to be searched", files)
	}
	t.Logf("token absent from the output and %d report files", files)
}
