package main

import (
	"bytes"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// runIn runs labrun with args in dir, in this process, and returns its exit code and output.
func runIn(t *testing.T, dir string, args ...string) (int, string) {
	t.Helper()
	var out bytes.Buffer
	p := testProcess()
	p.Args, p.Stdout, p.Stderr, p.Cwd = args, &out, &out, dir
	return Main(p), out.String()
}

// TestVersion1Records: records written before results were typed by their kinds (version 1,
// one section per kind: docs/records, from two runs on the sandbox) still replay, mutate and
// diff, with the verdicts, mutants and differences they had.
func TestVersion1Records(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(root) // the records name their scenario file relative to the repository
	a, b := "docs/records/kitb-mode1_strict.json", "docs/records/kitb-mode1_logical.json"
	for _, rec := range []string{a, b} {
		code, out := runIn(t, root, "replay", rec)
		if code != 0 || !strings.Contains(out, "PASSED mode1_") || strings.Contains(out, "✗") {
			t.Errorf("replay %s: exit %d\n%s", rec, code, out)
		}
	}
	code, out := runIn(t, root, "mutate", a)
	for _, want := range []string{
		"warm: every request 503", "killed by warm.code200 == warm.requests", // a load's mutants
		"who: another exit code                                                                    killed by the who step itself", // an exec's
		"ip_a: every field changed", // a get's value, its kind from the step that recorded it
		"score: 57 of 63 mutants killed (90%); 6 survive with a reason, 0 without; 4 impossible (no run records them), not counted", // numeric mutants included; a load's, as fortio could record it (its latencies: a reason in mode1.cue); ip_a changed alone contradicts the repeat until that read it, and warm.connections ×2 and + 1 are more than the step runs
	} {
		if !strings.Contains(out, want) {
			t.Errorf("mutate %s (exit %d) lacks %q:\n%s", a, code, want, out)
		}
	}
	code, out = runIn(t, root, "diff", "--all", a, b)
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^delta\.membership_change +count +1 +0 `),   // snapshots and the delta between them
		regexp.MustCompile(`(?m)^who\.stdout `),                             // an exec's
		regexp.MustCompile(`(?m)^drcfg\.type +"STRICT_DNS" +"LOGICAL_DNS"`), // a config value
		regexp.MustCompile(`(?m)^pod_a\.0 +"10\.0\.0\.2" +"10\.0\.0\.3"`),   // a get's list
	} {
		if code != 1 || !want.MatchString(out) {
			t.Errorf("diff (exit %d) lacks %s:\n%s", code, want, out)
		}
	}
}
