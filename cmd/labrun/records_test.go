package main

import (
	"bytes"
	"path/filepath"
	"regexp"
	"strconv"
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
		"score: 55 of 61 mutants killed (90%); 6 survive with a reason, 0 without; 6 impossible (no run records them), not counted", // numeric mutants included; a load's, as fortio could record it (its latencies: a reason in mode1.cue); ip_a changed alone contradicts the repeat until that read it, warm.connections ×2 and + 1 are more than the step runs, and before_flip.upstream_cx_total and upstream_cx_destroy absent lack a traffic stat after_flip holds (Envoy makes them together)
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

// TestSampleTimesReplayAsRun: a genuine record of a series read by its samples' times
// (examples/local_samples_at.cue reads busy.samples[i].at) replays as the run judged it. The
// run computed samples[i].at with the clock's monotonic readings, which a record read back
// has not, and replay refused about half of such records: "the record says it read
// busy.samples[i].at = 0.003674373; its data read 0.003674383". The two readings differ as
// the system clock is slewed, so this can only catch it by chance: without the wall-clock
// reading on both sides the CLI's records were refused 4 times in 8, and this test failed
// once in 3 (4 runs each).
func TestSampleTimesReplayAsRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs an example four times (8 s)")
	}
	dir := t.TempDir()
	example, err := filepath.Abs("../../examples/local_samples_at.cue")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		out := filepath.Join(dir, strconv.Itoa(i))
		if code, text := runIn(t, dir, "run", "-q", "--report-dir", out, example); code != 0 {
			t.Fatalf("run: exit %d\n%s", code, text)
		}
		recs, _ := filepath.Glob(filepath.Join(out, "*.json"))
		if len(recs) != 1 {
			t.Fatalf("records %v, want one", recs)
		}
		if code, text := runIn(t, dir, "replay", recs[0]); code != 0 {
			t.Errorf("replay of a genuine record: exit %d\n%s", code, text)
		}
	}
}
