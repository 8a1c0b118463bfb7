package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestStoppedRunSaysSo stops the real labrun binary (SIGSTOP, as Ctrl-Z's SIGTSTP does) for
// 1.5 s and continues it (SIGCONT). Stopped during its steps, a run whose expectations hold is
// an error (exit 3) that says how long it was stopped: its timeline was not kept (before:
// PASSED, exit 0, nothing said). Stopped during its cleanup only, it passes, with a note. A
// SIGCONT that continues nothing is no stop.
func TestStoppedRunSaysSo(t *testing.T) {
	bin := buildFakeBinary(t)
	for _, tc := range []struct {
		name, waitFor string
		stop          bool
		code          int
		outcome, says string
	}{
		{"in its steps", "▸ nap", true, exitInfra, "error", "labrun was stopped (SIGSTOP or Ctrl-Z, then continued) for 1."},
		{"in its cleanup", "▸ tidy", true, exitOK, "passed", "during its cleanup, after its steps had ended: their timeline was kept"},
		{"continued only", "▸ nap", false, exitOK, "passed", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, "s.cue"), `package s

import "labrun.dev/schema"

s: schema.#Scenario & {
	steps: [{name: "nap", sleep: "1s"}, {name: "t", exec: argv: ["true"]}]
	cleanup: [{name: "tidy", sleep: "1s"}]
	expect: ["t.exit == 0"]
}
`)
			cmd := exec.Command(bin, "run", "--report-dir", "rep", "s.cue")
			cmd.Dir = dir
			out := startLogged(t, cmd)
			waitLine(t, out, tc.waitFor, 30*time.Second)
			time.Sleep(200 * time.Millisecond) // the step under way for sure (the stop watch measures to a tick)
			if tc.stop {
				if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
					t.Fatal(err)
				}
				time.Sleep(1500 * time.Millisecond)
			}
			if err := cmd.Process.Signal(syscall.SIGCONT); err != nil {
				t.Fatal(err)
			}
			for range out.lines {
			}
			code := exitCodeOf(cmd.Wait())
			if code != tc.code {
				t.Errorf("exit %d, want %d", code, tc.code)
			}
			rec := readFaultRecord(t, filepath.Join(dir, "rep"))
			if rec.Outcome != tc.outcome {
				t.Errorf("outcome %s, want %s (error %q)", rec.Outcome, tc.outcome, rec.Error)
			}
			b, err := os.ReadFile(mustGlob(t, filepath.Join(dir, "rep", "*.md")))
			if err != nil {
				t.Fatal(err)
			}
			if tc.says != "" && !strings.Contains(string(b), tc.says) {
				t.Errorf("the report does not say %q:\n%s", tc.says, b)
			}
			if tc.says != "" && len(rec.Stops) == 0 {
				t.Errorf("the record keeps no stop for its timeline to draw")
			}
			if tc.says == "" && strings.Contains(string(b), "stopped") {
				t.Errorf("the report says the run was stopped:\n%s", b)
			}
		})
	}
}
