package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestStdoutThatFailsIsNotASuccess runs the real binary with stdout on a full disk
// (/dev/full), on /dev/null and closed: a verdict or a record that could not be written makes
// the exit code 3 and is said on stderr. Before, `run >/dev/full` exited 0 with the verdict
// lost. Discarding on purpose (`>/dev/null`) is no failure; nor is a closed stdout (`>&-`),
// which Go's runtime turns into /dev/null read-write before labrun runs, as a parent that
// discards the output hands it (Python's subprocess.DEVNULL): the two cannot be told apart,
// and a run that passed is not made an error on a guess.
func TestStdoutThatFailsIsNotASuccess(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full here")
	}
	bin := buildFakeBinary(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "s.cue"), `package s

import "labrun.dev/schema"

s: schema.#Scenario & {
	steps: [{name: "t", exec: argv: ["true"]}]
	expect: ["t.exit == 0"]
}
`)
	for _, tc := range []struct {
		args, redirect string
		code           int
		stderr         string
	}{
		{"run s.cue", ">/dev/full", exitInfra, "labrun: stdout could not be written: write /dev/stdout: no space left on device: what labrun printed there is lost"},
		{"run -o json s.cue", ">/dev/full", exitInfra, "labrun: -o json: write /dev/stdout: no space left on device"},
		{"version", ">/dev/full", exitInfra, "labrun: stdout could not be written"},
		{"run -o json s.cue", ">/dev/null", exitOK, ""},
		{"run s.cue", ">&-", exitOK, ""},
		{"run -o json s.cue", ">&-", exitOK, ""},
	} {
		t.Run(tc.args+" "+tc.redirect, func(t *testing.T) {
			args := tc.args
			if strings.HasPrefix(args, "run ") {
				args += ` --report-dir=""`
			}
			cmd := exec.Command("sh", "-c", `exec "$0" `+args+" "+tc.redirect, bin)
			cmd.Dir = dir
			var stderr strings.Builder
			cmd.Stderr = &stderr
			err := cmd.Run()
			if code := exitCodeOf(err); code != tc.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tc.code, stderr.String())
			}
			if tc.stderr != "" && !strings.Contains(stderr.String(), tc.stderr) {
				t.Errorf("stderr does not say %q:\n%s", tc.stderr, stderr.String())
			}
			n := 0
			for _, l := range strings.Split(stderr.String(), "\n") {
				if strings.Contains(l, "stdout") {
					n++
				}
			}
			if tc.code != exitOK && n != 1 {
				t.Errorf("stdout's failure said %d times, want once:\n%s", n, stderr.String())
			}
		})
	}
}
