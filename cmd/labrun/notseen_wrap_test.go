package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNotSeenWarningWrapped: run --parallel's warning that the schedule cannot see a run's
// files was printed whole to stderr, where every other warning is broken at spaces to the
// terminal's width (diagLines): on a terminal of 40 columns the terminal broke it mid-word
// ("sha" / "res these files"). It is wrapped as the others, and says the same words.
func TestNotSeenWarningWrapped(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "p.cue"), []byte(`package par

import "labrun.dev/schema"

gen: schema.#Scenario & {
	steps: [{name: "g", exec: argv: ["awk", "BEGIN { print 1 > \"out.txt\" }"]}]
	expect: ["g.exit == 0"]
}
other: schema.#Scenario & {
	steps: [{name: "w", exec: argv: ["true"]}]
	expect: ["w.exit == 0"]
}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	for _, width := range []int{0, 40} {
		var out, errOut bytes.Buffer
		p := testProcess()
		p.Cwd = dir
		p.Args = []string{"run", "-q", "--parallel", "2", "--report-dir", "", "."}
		p.Stdout, p.Stderr = &out, &errOut
		p.Getenv = func(string) string { return "" }
		p.StderrWidth = func() int { return width }
		if code := Main(p); code != exitOK {
			t.Fatalf("exit %d\n%s%s", code, out.String(), errOut.String())
		}
		joined := strings.Join(strings.Fields(errOut.String()), " ")
		if !strings.Contains(joined, "labrun: warning: gen: not seen by the schedule, which may run it beside a run that shares these files: exec g runs awk") {
			t.Fatalf("width %d: no warning:\n%s", width, errOut.String())
		}
		for _, l := range strings.Split(strings.TrimRight(errOut.String(), "\n"), "\n") {
			if width > 0 && visibleLen(l) >= width {
				t.Errorf("stderr a terminal of %d columns: a line of %d columns, which the terminal breaks where it falls:\n%s", width, visibleLen(l), l)
			}
		}
	}
}
