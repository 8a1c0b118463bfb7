package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDumbTerminalNoEscapes: a terminal whose TERM is dumb (Emacs' shell, some CI consoles)
// cannot move its cursor or show colours, and labrun run on it printed the status block's
// redraws (ESC[1A ESC[J) and colours (ESC[32m) as they are, garbage on every line; a dumb
// terminal now gets the plain lines a log gets, with no escape code. A terminal that is not
// dumb still gets the status block.
func TestDumbTerminalNoEscapes(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "s.cue")
	if err := os.WriteFile(file, []byte(`package x

import "labrun.dev/schema"

s: schema.#Scenario & {
	steps: [{name: "nap", exec: argv: ["sleep", "0.5"]}]
	expect: ["nap.exit == 0"]
}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, term := range []string{"dumb", "xterm-256color"} {
		var out, errOut bytes.Buffer
		p := testProcess()
		p.Args = []string{"run", "--report-dir", "", file}
		p.Stdout, p.Stderr = &out, &errOut
		p.Getenv = func(k string) string {
			if k == "TERM" {
				return term
			}
			return ""
		}
		p.IsTerminal = true
		p.TermWidth = func() int { return 80 }
		if code := Main(p); code != exitOK {
			t.Fatalf("TERM=%s: exit %d\n%s%s", term, code, out.String(), errOut.String())
		}
		escapes := strings.Contains(out.String()+errOut.String(), "\033")
		if term == "dumb" && escapes {
			t.Errorf("TERM=dumb: escape codes printed:\n%q", out.String())
		}
		if term != "dumb" && !escapes {
			t.Errorf("TERM=%s: no status block, no colour:\n%q", term, out.String())
		}
		if !strings.Contains(out.String(), "PASSED s") {
			t.Errorf("TERM=%s: no verdict line:\n%s", term, out.String())
		}
	}
}
