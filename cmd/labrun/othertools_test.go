package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"labrun.dev/labrun/cmd/labrun/internal/e2ebin"
)

// otherToolsDir holds tests and examples of Chaos Toolkit (ctk_), k6 (k6_), testscript (ts_) and
// Runme (runme_, Markdown specs) translated into labrun scenarios on the local target, each
// naming its original in its comment. Every translation X comes with X_broken, a copy edited
// so that the original fails (a threshold crossed, a tolerance missed, a rollback that errs).
const otherToolsDir = "testdata/othertools"

// otherTools is the verdict of each translation: the exit code, the verdict word of its
// scenario, and a pattern its output must match, the evidence a user reads (the values of a
// failed expectation's parts, the step's error).
var otherTools = []struct {
	file     string
	exit     int
	verdict  string
	evidence string // a regexp
}{
	{"ctk_background.cue", 0, "PASSED", `✓ hypothesis \(assert: traffic.code200 == traffic.requests`},
	{"ctk_background_broken.cue", 1, "FAILED", `traffic.code200 \(\d+\) == traffic.requests \(40\)`},
	{"ctk_continuous.cue", 0, "PASSED", `✓ outcome.probe \("passed"\) == "passed"`},
	{"ctk_continuous_broken.cue", 1, "FAILED", `✗ outcome.probe \("error"\) == "passed"(.|\n)*1 step that may fail failed: probe \(exec\) ×\d`},
	{"ctk_http_status_list.cue", 0, "PASSED", `200×1`},
	{"ctk_http_status_list_broken.cue", 1, "FAILED", `500×1(.|\n)*\(probe.code200 \(0\) \+ probe.code301 \(0\)\) \(0\) \+ probe.code302 \(0\)\) \(0\) == 1`},
	{"ctk_rollback_default.cue", 0, "PASSED", `✓ cleanup: rollback \(exec: sh -c if \[ 'passed' != passed \]`},
	{"ctk_rollback_default_broken.cue", 1, "FAILED", `ssh.code200 \(0\) == 1(.|\n)*✓ cleanup: rollback \(exec: sh -c if \[ 'failed' != passed \]`},
	{"ctk_rollback_fails.cue", 0, "PASSED", `✓ cleanup: rollback \(exec: rm `},
	{"ctk_rollback_fails_broken.cue", 3, "ERROR", `cleanup: ctk_rollback_fails_broken.cue:\d+:\d+: rollback \(exec\): exited with code 1, expected 0; stderr: rm: cannot remove .*no-such-fault`},
	{"ctk_steady_state_file.cue", 0, "PASSED", `✓ steps.4 \(assert: after.exit == 0\)`},
	{"ctk_steady_state_file_broken.cue", 1, "FAILED", `steps.4 \(assert\): assert failed: after.exit \(1\) == 0`},
	{"ctk_tolerance_jsonpath.cue", 0, "PASSED", `✓ steps.2 \(assert: count\(fromJSON`},
	{"ctk_tolerance_jsonpath_broken.cue", 1, "FAILED", `\(\[\{bar: 1\}, \{baz: 2\}\]\), "baz" in #\) \(\[\{baz: 2\}\]\)\) \(1\) == 2`},
	{"ctk_tolerance_range.cue", 0, "PASSED", `✓ steps.1 \(assert: within\(probe.code503, 60, 140\)\)`},
	{"ctk_tolerance_range_broken.cue", 1, "FAILED", `within\(probe.code503 \(1\d\d\), 60, 140\) \(false\)`},
	{"ctk_tolerance_regex.cue", 0, "PASSED", `✓ steps.1 \(assert: probe.stdout matches`},
	{"ctk_tolerance_regex_broken.cue", 1, "FAILED", `probe.stdout \("you are number 8\\n"\) matches "\[0-9\]\{2\}"`},
	{"k6_dropped_iterations.cue", 0, "PASSED", `✓ approx\(carr1.qps \([\d.]+ 1/s\), 10, 0.2\)`},
	{"k6_dropped_iterations_broken.cue", 1, "FAILED", `✗ approx\(carr1.qps \([1-5](\.\d+)? 1/s\), 10, 0.2\) \(false; it accepts 8 1/s to 12 1/s\)`},
	{"k6_failed_rate.cue", 0, "PASSED", `✓ \(http.errors \(0\) / http.requests \(200\)\) \(0\) < 0.01`},
	{"k6_failed_rate_broken.cue", 1, "FAILED", `✗ \(http.errors \(\d+\) / http.requests \(200\)\) \([\d.]+\) < 0.01\n  ✗ \(http.code200 \(\d+\) / http.requests \(200\)\) \([\d.]+\) > 0.99`},
	{"k6_scenario_counts.cue", 0, "PASSED", `✓ delta\("b0", "b1"\).rq_total \(2\) == 2`},
	{"k6_scenario_counts_broken.cue", 1, "FAILED", `✓ \(delta\("a0", "a1"\).rq_total \(1\) \+ delta\("b0", "b1"\).rq_total \(2\)\) \(3\) == 3\n  ✗ delta\("a0", "a1"\).rq_total \(1\) == 2\n  ✗ delta\("b0", "b1"\).rq_total \(2\) == 1`},
	{"k6_start_time.cue", 0, "PASSED", `✓ started.carr2 \([\d.]+ s\) >= ended.carr1`},
	{"k6_start_time_broken.cue", 1, "FAILED", `✗ started.carr2 \(0.5\d* s\) >= ended.carr1 \(1.\d+ s\)`},
	{"k6_thresholds.cue", 0, "PASSED", `✓ http.p99 \([\d.]+ ms\) < duration\("500ms"\)`},
	{"k6_thresholds_broken.cue", 1, "FAILED", `✗ http.p99 \(([6-9]\d\d(\.\d+)? ms|\d+(\.\d+)? s)\) < duration\("500ms"\)`},
	{"runme_expected.md", 0, "PASSED", `✓ echo.captured.greeting \("Hello, runme!"\) == "Hello, runme!"`},
	{"runme_expected_broken.md", 1, "FAILED", `✗ echo.captured.greeting \("Hello, world!"\) == "Hello, runme!"(.|\n)*the expected output differs from the run`},
	{"runme_runbook.md", 0, "PASSED", `✓ ticks.count \(\d+\) >= 2`},
	{"runme_runbook_broken.md", 3, "ERROR", `echo \(exec\): exited with code 127, expected 0; stderr: .*failhereplease.*not found`},
	{"ts_cmp.cue", 0, "PASSED", `✓ got.stdout \("hello world\\n"\) == "hello world\\n"`},
	{"ts_cmp_broken.cue", 1, "FAILED", `✗ got.stdout \("hello world\\n"\) == "hello World\\n"`},
	{"ts_hello.cue", 0, "PASSED", `✓ cat.stderr \(""\) == ""`},
	{"ts_hello_broken.cue", 1, "FAILED", `✗ cat.stderr \("warning: hello\\n"\) == ""`},
	{"ts_kill.cue", 0, "PASSED", `✓ steps.2 \(kill: process test_sleep\)`},
	{"ts_kill_broken.cue", 3, "ERROR", `process test_sleep had already ended before the kill \(it exited with code 0\): nothing to stop`},
	{"ts_not_exec.cue", 0, "PASSED", `expectFail: failed as expected: exited with code 1, expected 0`},
	{"ts_not_exec_broken.cue", 1, "FAILED", `f \(exec\): expectFail: the step succeeded, but it was expected to fail with an error matching "exited with code 1,"`},
	{"ts_wait.cue", 0, "PASSED", `✓ b3.stdout \("bg3\\n"\) matches "bg3"`},
	{"ts_wait_broken.cue", 1, "FAILED", `✗ b3.stdout \("bg3\\n"\) matches "bg2"`},
}

// TestOtherTools runs every translation of testdata/othertools with the labrun binary, each
// alone in a directory of its own, as a user runs one, and wants its exit code, its verdict and
// its evidence.
// Every file of the directory is in the table, and every translation has its broken copy.
func TestOtherTools(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the labrun binary and runs every translation; skipped with -short")
	}
	files, err := os.ReadDir(otherToolsDir)
	if err != nil {
		t.Fatal(err)
	}
	var listed, present []string
	for _, c := range otherTools {
		listed = append(listed, c.file)
	}
	for _, f := range files {
		present = append(present, f.Name())
	}
	slices.Sort(listed)
	if !slices.Equal(listed, present) {
		t.Fatalf("the table lists %q\nthe directory holds %q", listed, present)
	}
	for _, name := range present {
		ext := filepath.Ext(name)
		if base := strings.TrimSuffix(name, ext); !strings.HasSuffix(base, "_broken") && !slices.Contains(present, base+"_broken"+ext) {
			t.Errorf("%s has no broken copy %s_broken%s", name, base, ext)
		}
	}

	bin := e2ebin.BuildTagged(t, ".", "")
	for _, c := range otherTools {
		t.Run(c.file, func(t *testing.T) {
			t.Parallel()
			work := t.TempDir()
			data, err := os.ReadFile(filepath.Join(otherToolsDir, c.file))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(work, c.file), data, 0o644); err != nil {
				t.Fatal(err)
			}
			code, out := runLabrun(t, bin, work, time.Minute, "run", "--report-dir", filepath.Join(work, "reports"), c.file)
			if p := panicIn(out); p != "" {
				t.Fatalf("labrun panicked:\n%s", p)
			}
			scenario := strings.TrimSuffix(c.file, filepath.Ext(c.file))
			if code != c.exit || !regexp.MustCompile(`(?m)^`+c.verdict+` `+scenario+` in `).MatchString(out) {
				t.Errorf("exit %d, want %d with %s %s:\n%s", code, c.exit, c.verdict, scenario, out)
			}
			if !regexp.MustCompile(c.evidence).MatchString(out) {
				t.Errorf("the output lacks %s:\n%s", c.evidence, out)
			}
		})
	}
}
