package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"labrun.dev/labrun/cmd/labrun/internal/e2ebin"
)

// TestLSPInNeovimYAML: in Neovim, a wrong object in the YAML an apply reads shows in the
// spec's buffer at the file's name, and in the YAML's buffer at its key (where vet says it,
// istio.yaml:7:5), once the user opens it.
func TestLSPInNeovimYAML(t *testing.T) {
	nvim, err := exec.LookPath("nvim")
	if err != nil {
		t.Skip("nvim is not installed (Debian: apt-get install neovim)")
	}
	if testing.Short() {
		t.Skip("builds the labrun binary; skipped with -short")
	}
	bin := e2ebin.BuildTagged(t, ".", "")
	dir := t.TempDir()
	spec := "package lab\n\nimport \"labrun.dev/schema\"\n\ns: schema.#Scenario & {\n\ttarget: \"kube\"\n\tephemeralNamespaces: [\"test\"]\n\tsteps: [{apply: files: [\"istio.yaml\"]}]\n}\n"
	yaml := "apiVersion: security.istio.io/v1\nkind: PeerAuthentication\nmetadata:\n  name: default\nspec:\n  mtls:\n    mode: strict\n"
	file, yfile := filepath.Join(dir, "lab.cue"), filepath.Join(dir, "istio.yaml")
	for p, text := range map[string]string{file: spec, yfile: yaml} {
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	script, err := filepath.Abs("testdata/nvim/yaml.lua")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.txt")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, nvim, "--headless", "-u", "NONE", "-c", "luafile "+script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LABRUN="+bin, "LAB_FILE="+file, "YAML_FILE="+yfile, "OUT="+out, "HOME="+dir, "XDG_STATE_HOME="+dir, "XDG_DATA_HOME="+dir)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("nvim: %v\n%s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	t.Logf("what Neovim saw:\n%s", got)
	col := strings.Index(strings.Split(spec, "\n")[7], `"istio.yaml"`)
	for _, w := range []string{
		"spec diagnostics arrived true",
		fmt.Sprintf("spec 7:%d istio.yaml:7:5: apply.files (istio.yaml, line 1): spec.mtls.", col),
		"yaml 6:4 apply.files (istio.yaml, line 1): spec.mtls.mode: PeerAuthen",
	} {
		if !strings.Contains(got, w) {
			t.Errorf("Neovim did not show %q", w)
		}
	}
}
