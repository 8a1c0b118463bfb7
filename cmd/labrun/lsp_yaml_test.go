package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLSPInNeovimYAML: in Neovim, a wrong object in the YAML an apply reads shows in the
// spec's buffer at the file's name, and in the YAML's buffer at its key (where vet says it,
// istio.yaml:7:5), once the user opens it.
func TestLSPInNeovimYAML(t *testing.T) {
	dir := neovimDir(t)
	spec := "package lab\n\nimport \"labrun.dev/schema\"\n\ns: schema.#Scenario & {\n\ttarget: \"kube\"\n\tephemeralNamespaces: [\"test\"]\n\tsteps: [{apply: files: [\"istio.yaml\"]}]\n}\n"
	yaml := "apiVersion: security.istio.io/v1\nkind: PeerAuthentication\nmetadata:\n  name: default\nspec:\n  mtls:\n    mode: strict\n"
	file, yfile := filepath.Join(dir, "lab.cue"), filepath.Join(dir, "istio.yaml")
	for p, text := range map[string]string{file: spec, yfile: yaml} {
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := runNeovim(t, dir, "testdata/nvim/yaml.lua", "LAB_FILE="+file, "YAML_FILE="+yfile)
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
