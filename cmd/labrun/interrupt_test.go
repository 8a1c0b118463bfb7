package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"labrun.dev/labrun/cmd/labrun/internal/e2ebin"
)

// The interrupt tests run the real labrun binary (built with -tags labrun_fakes, which adds a
// target of in-memory fakes) and deliver SIGINT at many points of a run.

// buildFakeBinary builds labrun with the fake target (tag labrun_fakes), once per test binary.
func buildFakeBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the labrun binary; skipped with -short")
	}
	return e2ebin.BuildTagged(t, ".", "labrun_fakes")
}

const interruptScenario = `package s

import "labrun.dev/schema"

s: schema.#Scenario & {
	namespaces: ["lab"]
	setup: [
		{apply: {objects: [{apiVersion: "v1", kind: "ConfigMap", metadata: name: "setup-cm"}]}},
	]
	steps: [
		{name: "before", snapshot: {admin: "http://127.0.0.1:15000", cluster: "c"}},
		{apply: {objects: [{apiVersion: "v1", kind: "ConfigMap", metadata: name: "step-cm"}]}},
		{parallel: [
			{name: "fortio", load: {url: "http://127.0.0.1:1/", duration: "1s"}},
			{at: "300ms", dns: {host: "gslb.lab.internal", addresses: ["127.0.0.2"]}},
			{name: "g", every: "100ms", while: "fortio", snapshot: {admin: "http://127.0.0.1:15000", cluster: "c"}},
		]},
		{sleep: "700ms"},
		{name: "after", snapshot: {admin: "http://127.0.0.1:15000", cluster: "c"}},
	]
	cleanup: [
		{delete: {objects: [{apiVersion: "v1", kind: "Namespace", metadata: name: "lab"}]}},
	]
	// It judges something, so that vet has no warning (nothing-judged) to print: the tests
	// send SIGINT on the first line that names the load.
	expect: ["fortio.code200 == fortio.requests"]
}
`

// TestInterruptAtManyPoints delivers SIGINT at 10 points of a run (setup, before the load,
// during the load and sampling, after it, near the end): every time the cleanup runs (the
// scenario's cleanup step and the automatic deletion of what the run created), the report is
// written and marked interrupted, and labrun exits 130.
func TestInterruptAtManyPoints(t *testing.T) {
	bin := buildFakeBinary(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "s.cue"), []byte(interruptScenario), 0o644); err != nil {
		t.Fatal(err)
	}
	// Delays count from the run's first line (printed once the scenario is loaded and the
	// target is up). The run lasts about 20 ms (setup) + 4×20 ms + 1 s + 700 ms: the points
	// spread over setup, the first steps, the load with its sampling, the pause and the end.
	delays := []time.Duration{0, 30, 90, 150, 300, 500, 700, 900, 1150, 1350}
	for i, d := range delays {
		d := d * time.Millisecond
		t.Run(fmt.Sprintf("at_%s", d), func(t *testing.T) {
			marker := filepath.Join(dir, fmt.Sprintf("calls-%d.txt", i))
			reports := filepath.Join(dir, fmt.Sprintf("reports-%d", i))
			cmd := exec.Command(bin, "run", "--target", "fake", "--report-dir", reports, "s.cue")
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "LABRUN_FAKE_MARKER="+marker, "LABRUN_FAKE_STEP_TIME=20ms")
			var out strings.Builder
			stdout, _ := cmd.StdoutPipe()
			cmd.Stderr = cmd.Stdout
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				out.WriteString(sc.Text() + "\n")
				if strings.HasPrefix(sc.Text(), "▶") {
					time.AfterFunc(d, func() { _ = cmd.Process.Signal(syscall.SIGINT) })
					break
				}
			}
			for sc.Scan() {
				out.WriteString(sc.Text() + "\n")
			}
			err := cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 130 {
				t.Fatalf("exit: %v, want 130; output:\n%s", err, out.String())
			}
			calls := readLines(t, marker)
			if !contains(calls, "delete Namespace /lab") {
				t.Errorf("the cleanup step did not run; calls: %q", calls)
			}
			// What the run created is deleted, newest first.
			created := []string{}
			for _, c := range calls {
				if strings.HasPrefix(c, "apply ConfigMap") {
					created = append(created, "delete ConfigMap "+strings.TrimPrefix(c, "apply ConfigMap "))
				}
			}
			var deletes []string
			for _, c := range calls {
				if strings.HasPrefix(c, "delete ConfigMap") {
					deletes = append(deletes, c)
				}
			}
			for k := range created {
				if k >= len(deletes) || deletes[k] != created[len(created)-1-k] {
					t.Errorf("created %q, deleted %q: want every created object deleted in reverse order", created, deletes)
					break
				}
			}
			rec := readRecord(t, reports)
			if rec.Outcome != "interrupted" {
				t.Errorf("report outcome %q, want interrupted", rec.Outcome)
			}
		})
	}
}

// TestSecondInterruptAbandonsCleanup: a second SIGINT during a slow cleanup abandons it; the
// report is still written, marked interrupted.
func TestSecondInterruptAbandonsCleanup(t *testing.T) {
	bin := buildFakeBinary(t)
	dir := t.TempDir()
	src := strings.Replace(interruptScenario, `cleanup: [`, `cleanup: [
		{sleep: "30s"},`, 1)
	if err := os.WriteFile(filepath.Join(dir, "s.cue"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	reports := filepath.Join(dir, "reports")
	cmd := exec.Command(bin, "run", "--target", "fake", "--report-dir", reports, "s.cue")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LABRUN_FAKE_MARKER="+filepath.Join(dir, "calls.txt"), "LABRUN_FAKE_STEP_TIME=20ms")
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	sc := bufio.NewScanner(stdout)
	interrupted, again := false, false
	var out strings.Builder
	for sc.Scan() {
		line := sc.Text()
		out.WriteString(line + "\n")
		if !interrupted && strings.Contains(line, "fortio") {
			_ = cmd.Process.Signal(syscall.SIGINT)
			interrupted = true
		}
		if interrupted && !again && strings.Contains(line, "cleanup.0") {
			// Later than sameInterrupt after the first: the same signal sooner is taken as
			// that one sent twice (timeout(1)), not a second interrupt.
			time.Sleep(3 * sameInterrupt)
			_ = cmd.Process.Signal(syscall.SIGINT)
			again = true
		}
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("exit: %v, want 130; output:\n%s", err, out.String())
	}
	if time.Since(start) > 20*time.Second {
		t.Errorf("took %s: the 30s cleanup sleep was not abandoned", time.Since(start))
	}
	rec := readRecord(t, reports)
	if rec.Outcome != "interrupted" {
		t.Errorf("outcome %q", rec.Outcome)
	}
	if !strings.Contains(strings.Join(rec.Cleanup, "\n"), "abandoned") {
		t.Errorf("cleanup log %q does not say it was abandoned", rec.Cleanup)
	}
}

func readLines(t *testing.T, p string) []string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("marker: %v", err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

func readRecord(t *testing.T, dir string) struct {
	Outcome string   `json:"outcome"`
	Cleanup []string `json:"cleanup"`
} {
	t.Helper()
	var rec struct {
		Outcome string   `json:"outcome"`
		Cleanup []string `json:"cleanup"`
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) != 1 {
		t.Fatalf("want one JSON report in %s, found %v", dir, files)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	return rec
}

// TestInterruptMatrix: SIGINT during the second of five runs of --count 5 stops the run in
// progress (its report marked interrupted), starts no other, and still writes the summary,
// which says interrupted (not passed, though 1 of 5 meets --pass-rate 0.2) and lists the runs
// never started; exit 130.
func TestInterruptMatrix(t *testing.T) {
	bin := buildFakeBinary(t)
	dir := t.TempDir()
	src := `package s

import "labrun.dev/schema"

s: schema.#Scenario & {
	steps: [{sleep: "400ms"}]
}
`
	if err := os.WriteFile(filepath.Join(dir, "s.cue"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "run", "--count", "5", "--pass-rate", "0.2", "--report-dir", "r", "s.cue")
	cmd.Dir = dir
	var out strings.Builder
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	starts := 0
	for sc.Scan() {
		out.WriteString(sc.Text() + "\n")
		if strings.HasPrefix(sc.Text(), "▶") {
			if starts++; starts == 2 {
				time.AfterFunc(100*time.Millisecond, func() { _ = cmd.Process.Signal(syscall.SIGINT) })
			}
		}
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("exit: %v, want 130; output:\n%s", err, out.String())
	}
	if starts != 2 || !strings.Contains(out.String(), "labrun: interrupted: 3 runs of the matrix not started") ||
		!strings.Contains(out.String(), "SUMMARY s: 1 of 5 runs passed") {
		t.Errorf("want two runs started, three not, and the summary of 1 of 5; output:\n%s", out.String())
	}
	sums, _ := filepath.Glob(filepath.Join(dir, "r", "*.summary.md"))
	if len(sums) != 1 {
		t.Fatalf("summaries: %v", sums)
	}
	b, _ := os.ReadFile(sums[0])
	if !strings.Contains(string(b), "verdict: **interrupted**") || !strings.Contains(string(b), "3 of the 5 planned runs never started") ||
		strings.Count(string(b), "| skipped (interrupted before it started) |") != 3 {
		t.Errorf("the summary does not say interrupted, or does not list the runs not started:\n%s", b)
	}
	html, _ := filepath.Glob(filepath.Join(dir, "r", "*.summary.html"))
	if len(html) != 1 {
		t.Fatalf("summaries: %v", html)
	}
	if b, _ := os.ReadFile(html[0]); !strings.Contains(string(b), `<span class="badge interrupted">INTERRUPTED</span>`) {
		t.Errorf("the HTML summary's badge is not INTERRUPTED")
	}
}

// TestInterruptWhileWritingTheReport: an interrupt that comes once the run is over, while its
// report is being written, lets the report finish, says so, and makes labrun exit 130 (the
// exit code the message announces), not the run's own 0.
func TestInterruptWhileWritingTheReport(t *testing.T) {
	sigs := make(chan os.Signal, 1)
	var stderr strings.Builder
	p := &process{Stdout: io.Discard, Stderr: &stderr, Getenv: func(string) string { return "" },
		Signals: func() (<-chan os.Signal, func()) { return sigs, func() {} }}
	runCtx, _, stop := p.runContexts()
	defer stop()
	p.phases.begin()
	p.phases.over(runCtx) // the run returned: its report is being written
	sigs <- os.Interrupt
	select {
	case <-runCtx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the interrupt did not reach the run context")
	}
	if !interrupted(runCtx) {
		t.Error("the run context is not marked interrupted: labrun would exit with the run's code")
	}
	if want := "labrun: interrupted while writing the report: finishing it; labrun then exits 130 (interrupted)\n"; stderr.String() != want {
		t.Errorf("stderr %q, want %q", stderr.String(), want)
	}
}

// TestSecondInterruptDoesNotWaitForAStuckStep: after the second interrupt abandoned the
// cleanup, a run that does not return (a step blocked in a system call no context reaches,
// as an open(2) of a FIFO was) no longer holds labrun forever: past abandonGrace labrun exits
// 130 and says that the report is not written; a third interrupt exits at once. A run that
// returns within the grace is not cut short. Either exit replaces the --junit file an earlier
// run left (it passed) with one saying that labrun was interrupted: the old one read as this
// run's results, passed, to a CI that publishes the JUnit whatever the exit code.
func TestSecondInterruptDoesNotWaitForAStuckStep(t *testing.T) {
	for _, tc := range []struct {
		name     string
		signals  int
		returnIn time.Duration // the run returns (stop) after this; 0: never
		wait     time.Duration
		wantExit bool
		wantErr  string
	}{
		{name: "stuck", signals: 2, wait: abandonGrace + time.Second, wantExit: true, wantErr: "still not stopped 10s after the second interrupt"},
		{name: "returns within the grace", signals: 2, returnIn: abandonGrace / 2, wait: 2 * abandonGrace},
		{name: "third interrupt", signals: 3, wait: time.Second, wantExit: true, wantErr: "interrupted a third time: exiting 130 at once"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sigs := make(chan os.Signal, 3)
				var stderr syncBuffer
				exited := make(chan int, 2)
				p := &process{Stdout: io.Discard, Stderr: &stderr, Getenv: func(string) string { return "" },
					Signals: func() (<-chan os.Signal, func()) { return sigs, func() {} },
					Exit:    func(code int) { exited <- code }}
				junit := filepath.Join(t.TempDir(), "junit.xml")
				const old = `<testsuites><testsuite name="s"><properties><property name="outcome" value="passed"></property></properties></testsuite></testsuites>`
				if err := os.WriteFile(junit, []byte(old), 0o644); err != nil {
					t.Fatal(err)
				}
				p.abandonJUnit.Store(&junit)
				_, cleanupCtx, stop := p.runContexts()
				for i := range tc.signals {
					if i > 0 {
						time.Sleep(2 * sameInterrupt) // not the same interrupt sent twice
					}
					sigs <- os.Interrupt
					synctest.Wait()
				}
				if cleanupCtx.Err() == nil {
					t.Fatal("the second interrupt did not cancel the cleanup")
				}
				if tc.returnIn > 0 {
					time.Sleep(tc.returnIn)
					stop()
					time.Sleep(tc.wait - tc.returnIn)
				} else {
					time.Sleep(tc.wait)
					defer stop()
				}
				synctest.Wait()
				select {
				case code := <-exited:
					if !tc.wantExit {
						t.Errorf("labrun exited %d though the run returned", code)
					} else if code != exitInterrupted {
						t.Errorf("exit %d, want %d", code, exitInterrupted)
					}
				default:
					if tc.wantExit {
						t.Errorf("labrun did not exit %s after the interrupts; stderr:\n%s", tc.wait, stderr.String())
					}
				}
				if tc.wantErr != "" && !strings.Contains(stderr.String(), tc.wantErr) {
					t.Errorf("stderr %q, want it to say %q", stderr.String(), tc.wantErr)
				}
				b, err := os.ReadFile(junit)
				if err != nil {
					t.Fatal(err)
				}
				if !tc.wantExit {
					if string(b) != old {
						t.Errorf("the JUnit file was rewritten though the run returned (it writes its own):\n%s", b)
					}
				} else if !strings.Contains(string(b), `<property name="outcome" value="interrupted">`) || !strings.Contains(string(b), `<error message="labrun run was interrupted and exited before its runs&#39; results were written (exit 130)" type="interrupted">`) {
					t.Errorf("labrun exited at once, but its JUnit file does not say it was interrupted (an older one read as this run's):\n%s", b)
				}
			})
		})
	}
}

// syncBuffer is a strings.Builder safe for the writers of several goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestInterruptOnceTheRunReturned: an interrupt that comes after the run returned (its steps,
// its cleanup and its expectations done) and before its report is written does not make the
// run's record say INTERRUPTED ("interrupted: ", every expectation judged, and replay's "it
// did not reach its end"), nor print "stopping steps, running cleanup" for steps that are
// over: the run's verdict stands in its record and on its verdict line, the report is written
// whole, and labrun exits 130 as its message says. The run is in-process, on the local target;
// afterRun interrupts in the window, before prog.done and the report.
func TestInterruptOnceTheRunReturned(t *testing.T) {
	dir := t.TempDir()
	const cue = `package lab

import "labrun.dev/schema"

s: schema.#Scenario & {
	steps: [{name: "x", exec: argv: ["sh", "-c", "echo hi"]}]
	expect: ["x.exit == 0"]
}
`
	if err := os.WriteFile(filepath.Join(dir, "s.cue"), []byte(cue), 0o644); err != nil {
		t.Fatal(err)
	}
	sigs := make(chan os.Signal, 1)
	var stdout, stderr syncBuffer
	p := testProcess()
	p.Args = []string{"run", "--report-dir", "r", "--junit", "j.xml", filepath.Join(dir, "s.cue")}
	p.Stdout, p.Stderr, p.Cwd = &stdout, &stderr, dir
	p.Signals = func() (<-chan os.Signal, func()) { return sigs, func() {} }
	p.ReleaseSignals = nil
	p.afterRun = func() {
		sigs <- os.Interrupt
		for i := 0; !strings.Contains(stderr.String(), "labrun: interrupted"); i++ {
			if i == 1000 {
				t.Fatal("the interrupt was not handled")
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	if code := Main(p); code != exitInterrupted {
		t.Errorf("exit %d, want %d (interrupted)", code, exitInterrupted)
	}
	if want := "labrun: interrupted while writing the report: finishing it; labrun then exits 130 (interrupted)\n"; stderr.String() != want {
		t.Errorf("stderr %q, want %q", stderr.String(), want)
	}
	if !regexp.MustCompile(`(?m)^PASSED s in `).MatchString(stdout.String()) {
		t.Errorf("the verdict line is not the run's (PASSED); stdout:\n%s", stdout.String())
	}
	if rec := readRecord(t, filepath.Join(dir, "r")); rec.Outcome != "passed" {
		t.Errorf("the record's outcome is %q, want the run's (passed)", rec.Outcome)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "j.xml")); !strings.Contains(string(b), `<property name="outcome" value="passed">`) {
		t.Errorf("the JUnit does not say the run's outcome (passed):\n%s", b)
	}
}

// TestInterruptOnceEveryRunIsOver: an interrupt that comes once no run is left to start (the
// summaries, the --junit file being written) says so and that labrun exits 130; it said
// "stopping steps, running cleanup (interrupt again to abandon it)" of runs that were over.
func TestInterruptOnceEveryRunIsOver(t *testing.T) {
	sigs := make(chan os.Signal, 1)
	var stderr syncBuffer
	p := &process{Stdout: io.Discard, Stderr: &stderr, Getenv: func(string) string { return "" },
		Signals: func() (<-chan os.Signal, func()) { return sigs, func() {} }}
	runCtx, _, stop := p.runContexts()
	p.phases.begin()
	p.phases.over(runCtx)
	p.phases.reported()
	p.phases.finish()
	sigs <- os.Interrupt
	select {
	case <-runCtx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the interrupt did not reach the run context")
	}
	stop() // the notice is printed before the handler reads the next signal
	if !interrupted(runCtx) {
		t.Error("the run context is not marked interrupted: labrun would exit with the runs' code")
	}
	if want := "labrun: interrupted once every run was over: finishing what they report; labrun then exits 130 (interrupted)\n"; stderr.String() != want {
		t.Errorf("stderr %q, want %q", stderr.String(), want)
	}
}

// TestInterruptBetweenTwoRuns: an interrupt after one run's report was written and before the
// next run began (no step runs, no cleanup is due) says that the runs left are not started and
// that labrun exits 130; it said "stopping steps, running cleanup (interrupt again to abandon
// it)". Before the first run, the words are the run's (as in commands that start none).
func TestInterruptBetweenTwoRuns(t *testing.T) {
	for _, c := range []struct {
		name  string
		begun bool
		want  string
	}{
		{"after a run", true, "labrun: interrupted between two runs: the runs left are not started; labrun then exits 130 (interrupted)\n"},
		{"before the first", false, "labrun: interrupted: stopping steps, running cleanup (interrupt again to abandon it)\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			sigs := make(chan os.Signal, 1)
			var stderr syncBuffer
			p := &process{Stdout: io.Discard, Stderr: &stderr, Getenv: func(string) string { return "" },
				Signals: func() (<-chan os.Signal, func()) { return sigs, func() {} }}
			runCtx, _, stop := p.runContexts()
			if c.begun {
				p.phases.begin()
				p.phases.over(runCtx)
				p.phases.reported()
			}
			sigs <- os.Interrupt
			select {
			case <-runCtx.Done():
			case <-time.After(10 * time.Second):
				t.Fatal("the interrupt did not reach the run context")
			}
			stop()
			if !interrupted(runCtx) {
				t.Error("the run context is not marked interrupted: the runs left would start")
			}
			if stderr.String() != c.want {
				t.Errorf("stderr %q, want %q", stderr.String(), c.want)
			}
		})
	}
}

// TestSameSignalTwiceAtOnceKeepsCleanup: the same signal twice within sameInterrupt (GNU
// timeout signals labrun and then its process group) is one interrupt: the run is cancelled,
// the cleanup is not; the same signal later is the second interrupt, which cancels it.
func TestSameSignalTwiceAtOnceKeepsCleanup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sigs := make(chan os.Signal, 3)
		var stderr syncBuffer
		p := &process{Stdout: io.Discard, Stderr: &stderr, Getenv: func(string) string { return "" },
			Signals: func() (<-chan os.Signal, func()) { return sigs, func() {} },
			Exit:    func(code int) {}}
		runCtx, cleanupCtx, stop := p.runContexts()
		defer stop()
		sigs <- syscall.SIGTERM
		sigs <- syscall.SIGTERM
		synctest.Wait()
		if runCtx.Err() == nil || cleanupCtx.Err() != nil {
			t.Fatalf("run cancelled %v, cleanup cancelled %v: want the run only\n%s", runCtx.Err() != nil, cleanupCtx.Err() != nil, stderr.String())
		}
		time.Sleep(2 * sameInterrupt)
		sigs <- syscall.SIGTERM
		synctest.Wait()
		if cleanupCtx.Err() == nil {
			t.Fatal("a later second interrupt did not cancel the cleanup")
		}
	})
}
