package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"labrun.dev/labrun/cmd/labrun/internal/e2ebin"
)

// TestLSPSecretSweepKeepsTheStream: `labrun lsp` speaks on labrun's stdout, which hides
// secret vars as every command's output does. A check of a scenario that sweeps a secret made
// that hiding rewrite the server's own messages: a diagnostic quoting the swept value was
// written with the mask in its place, a body of another length than the Content-Length
// written before it, and the editor's stream broke (no diagnostic of any later document
// arrived). The editor's diagnostics say the mask as vet does, and the stream holds.
func TestLSPSecretSweepKeepsTheStream(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the labrun binary; skipped with -short")
	}
	bin := e2ebin.BuildTagged(t, ".", "")
	dir := t.TempDir()
	secret := "package lab\n\nimport \"labrun.dev/schema\"\n\ns: schema.#Scenario & {\n\tvars: token: \"dflt\"\n\tsecrets: [\"token\"]\n\tsweep: token: [\"hunter2-A\", \"hunter2'BB\"]\n\tsteps: [{name: \"who\", exec: argv: [\"echo\", vars.token]}]\n\texpect: [\"who.stdout == '\\(vars.token)'\"]\n}\n"
	other := strings.Replace(lspScenario, "lab: schema", "other: schema", 1)
	for name, text := range map[string]string{"a/x.cue": secret, "b/y.cue": other} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c := serveLSPProcess(t, bin, dir)

	uri := uriOf(filepath.Join(dir, "a/x.cue"))
	n := c.Count()
	c.Open(uri, secret)
	pub, ok := c.Diagnostics(uri, n, time.Minute, nil)
	if !ok {
		t.Fatal("no diagnostics of the secret's scenario")
	}
	var msgs []string
	for _, d := range pub.Diagnostics {
		msgs = append(msgs, d.Message)
	}
	all := strings.Join(msgs, "\n")
	if strings.Contains(all, "hunter2") || !strings.Contains(all, "(with token=[secret token #2])") {
		t.Errorf("diagnostics:\n%s\nwant the swept secret masked as vet masks it: (with token=[secret token #2])", all)
	}
	uri2 := uriOf(filepath.Join(dir, "b/y.cue"))
	n = c.Count()
	c.Open(uri2, other)
	if pub, ok := c.Diagnostics(uri2, n, 30*time.Second, nil); !ok || len(pub.Diagnostics) != 2 {
		t.Errorf("the next document's diagnostics: %v, %v; want its 2 problems (the stream broke?)", ok, pub.Diagnostics)
	}
}
