package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"labrun.dev/labrun/report"
)

// The fault tests break the real labrun binary on purpose, on the local target: kill -9 in the
// middle of a run, SIGINT at many moments from start-up on, a port taken by another program,
// concurrent runs of one scenario. Every wait is bounded, everything listens on loopback, and
// every test kills what it started.

// orphanScenario starts a process step that leaves every kind of descendant: the direct child
// (a shell), a grandchild in the same process group, one that escaped into a new session
// (setsid), two that cleared their environment (env -i, as sudo or a daemon does), one of them
// in a new session too, and a daemon that double-forked (its parent exited at once). Only the
// keeper (a child subreaper) finds the last three. Then an exec step runs a long command:
// labrun is stopped while it runs.
const orphanScenario = `package s

import "labrun.dev/schema"

s: schema.#Scenario & {
	steps: [
		{name: "srv", process: {
			argv: ["sh", "-c", """
				echo $$ > child.pid
				sh -c 'echo $$ > grandchild.pid; exec sleep 300' &
				setsid sh -c 'echo $$ > escaped.pid; exec sleep 300' &
				setsid env -i /bin/sh -c 'echo $$ > cleared-setsid.pid; exec sleep 300' &
				env -i /bin/sh -c 'echo $$ > cleared.pid; exec sleep 300' &
				sh -c '(setsid env -i /bin/sh -c "echo \\$\\$ > daemon.pid; exec sleep 300" &)'
				sleep 0.2
				echo up
				exec sleep 300
				"""]
			ready: log: "^up$"
		}},
		{exec: argv: ["sh", "-c", "echo $$ > exec.pid; exec sleep 60"]},
	]
}
`

// orphanPidFiles are the pid files orphanScenario's descendants write.
var orphanPidFiles = []string{"child.pid", "grandchild.pid", "escaped.pid", "cleared-setsid.pid", "cleared.pid", "daemon.pid", "exec.pid"}

// startOrphanRun starts a run of orphanScenario in dir and returns once its process step is
// ready and every descendant has written its pid: the run is in its exec step's 60 s sleep.
func startOrphanRun(t *testing.T, bin, dir string) (*exec.Cmd, *lineLog, []int) {
	t.Helper()
	for _, f := range orphanPidFiles {
		os.Remove(filepath.Join(dir, f))
	}
	cmd := exec.Command(bin, "run", "--report-dir", "", "s.cue")
	cmd.Dir = dir
	// Its spool (no report directory: in the temporary directory) in dir, not in /tmp, where
	// each kill -9 left one.
	cmd.Env = append(os.Environ(), "TMPDIR="+dir)
	out := startLogged(t, cmd)
	pids := waitPidFiles(t, dir, orphanPidFiles, 10*time.Second, out)
	t.Cleanup(func() { killAll(pids) })
	waitLine(t, out, "✓ srv", 10*time.Second)
	return cmd, out, pids
}

// TestKill9LeavesNoChildren: kill -9 of labrun in the middle of a run leaves none of its process
// step's descendants, nor its running exec step, alive, whatever they did to their session or
// environment, 10 times in a row; each rerun in the same directory runs normally (nothing of the
// run before holds anything), and removes the spool folder the run before left in the
// temporary directory.
func TestKill9LeavesNoChildren(t *testing.T) {
	bin := buildFakeBinary(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "s.cue"), orphanScenario)
	var slowest time.Duration
	for round := range 10 {
		cmd, _, pids := startOrphanRun(t, bin, dir)
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		killed := time.Now()
		_ = cmd.Wait()
		if left := waitGone(pids, 5*time.Second); len(left) > 0 {
			t.Fatalf("round %d: after kill -9 of labrun, still alive: %v (%s)", round, left, describe(left))
		}
		slowest = max(slowest, time.Since(killed))
	}
	// Each run swept the spool folder the run before left in the temporary directory: the
	// last kill's is left.
	if spools, _ := filepath.Glob(filepath.Join(dir, spoolPrefix+"*")); len(spools) != 1 {
		t.Errorf("after 10 kill -9, %d spool folders in the temporary directory, want the last run's only: %v", len(spools), spools)
	}
	t.Logf("10 of 10 kill -9: 0 of %d descendants left each time, all gone within %s", len(orphanPidFiles), slowest)
}

// TestInterruptLeavesNoChildren: SIGINT of labrun during the same run ends it with exit 130,
// and when labrun has exited (not later) none of the descendants is alive: the console's
// "removed process srv" is true. 10 times in a row.
func TestInterruptLeavesNoChildren(t *testing.T) {
	bin := buildFakeBinary(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "s.cue"), orphanScenario)
	for round := range 10 {
		cmd, out, pids := startOrphanRun(t, bin, dir)
		if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		waitLine(t, out, "removed process srv", 20*time.Second)
		for range out.lines { // the rest of the output, until labrun closes it
		}
		err := cmd.Wait()
		if left := waitGone(pids, 0); len(left) > 0 {
			t.Fatalf("round %d: labrun said it removed process srv, but when it exited these were alive: %v (%s)\n%s", round, left, describe(left), out)
		}
		if code := exitCodeOf(err); code != exitInterrupted {
			t.Fatalf("round %d: exit %d, want 130\n%s", round, code, out)
		}
	}
}

// describe names processes by their command lines, for failure messages.
func describe(pids []int) string {
	var parts []string
	for _, p := range pids {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p))
		parts = append(parts, fmt.Sprintf("%d: %s", p, strings.ReplaceAll(strings.TrimRight(string(b), "\x00"), "\x00", " ")))
	}
	return strings.Join(parts, "; ")
}

// startLogged starts cmd with stdout and stderr collected line by line in a channel-fed log.
func startLogged(t *testing.T, cmd *exec.Cmd) *lineLog {
	t.Helper()
	l := &lineLog{lines: make(chan string, 1000)}
	r, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			l.lines <- sc.Text()
		}
		close(l.lines)
	}()
	return l
}

type lineLog struct {
	lines chan string
	seen  []string
}

func (l *lineLog) String() string { return strings.Join(l.seen, "\n") }

// waitLine waits until a line containing s is read.
func waitLine(t *testing.T, l *lineLog, s string, within time.Duration) {
	t.Helper()
	deadline := time.After(within)
	for {
		select {
		case line, ok := <-l.lines:
			if !ok {
				t.Fatalf("output ended before a line with %q:\n%s", s, l)
			}
			l.seen = append(l.seen, line)
			if strings.Contains(line, s) {
				return
			}
		case <-deadline:
			t.Fatalf("no line with %q within %s:\n%s", s, within, l)
		}
	}
}

func waitPidFiles(t *testing.T, dir string, names []string, within time.Duration, l *lineLog) []int {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		var pids []int
		for _, n := range names {
			b, err := os.ReadFile(filepath.Join(dir, n))
			if err != nil {
				break
			}
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				break
			}
			pids = append(pids, pid)
		}
		if len(pids) == len(names) {
			return pids
		}
		if time.Now().After(deadline) {
			t.Fatalf("pid files %v not all written within %s; output:\n%s", names, within, l)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// alive reports a process that exists and is not a zombie.
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || len(s) < i+3 || (s[i+2] != 'Z' && s[i+2] != 'X')
}

// waitGone waits until none of pids is alive and returns those still alive at the end.
func waitGone(pids []int, within time.Duration) []int {
	deadline := time.Now().Add(within)
	for {
		var left []int
		for _, p := range pids {
			if alive(p) {
				left = append(left, p)
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func killAll(pids []int) {
	for _, p := range pids {
		if alive(p) {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
	}
}

func writeFile(t *testing.T, p, data string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func exitCodeOf(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err == nil {
		return 0
	}
	return -1
}

// TestReadyOnTakenPort: a process step whose ready check names a port another program holds
// fails the run (exit 3) with a message naming that program, instead of passing against it.
func TestReadyOnTakenPort(t *testing.T) {
	bin := buildFakeBinary(t)
	dir := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	writeFile(t, filepath.Join(dir, "s.cue"), fmt.Sprintf(`package s

import "labrun.dev/schema"

s: schema.#Scenario & {
	steps: [{name: "srv", process: {argv: ["sleep", "30"], ready: tcp: %q}}]
}
`, ln.Addr().String()))
	cmd := exec.Command(bin, "run", "--report-dir", "", "s.cue")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if code := exitCodeOf(err); code != exitInfra {
		t.Fatalf("exit %d, want %d; output:\n%s", code, exitInfra, out)
	}
	want := fmt.Sprintf("already in use before the process started, by pid %d", os.Getpid())
	if !strings.Contains(string(out), want) {
		t.Errorf("output does not say %q:\n%s", want, out)
	}
}

// startupScenario builds a whole local world (backends, a blackhole, a DNS zone), starts a
// process and runs load: SIGINT lands in loading, target creation, setup or the steps
// depending on its moment.
const startupScenario = `package s

import "labrun.dev/schema"

s: schema.#Scenario & {
	local: {
		backends: {a: {}, b: {}}
		blackholes: hole: {}
		dns: {zone: "lab.internal", records: {"svc.lab.internal": ["127.0.0.1"]}}
	}
	setup: [{name: "srv", process: {argv: ["sleep", "30"]}}]
	steps: [
		{name: "fortio", load: {url: "http://${backends.a.address}/echo", duration: "600ms", qps: 50, connections: 2}},
		{sleep: "600ms"},
	]
	expect: ["fortio.ok > 0"]
}
`

// TestInterruptFromStartup delivers SIGINT (or SIGTERM, every other time) at moments counted from the start of the labrun
// process (not from its first line): during loading, while the target is created (backends,
// blackhole, DNS), during setup and during the steps. Every time labrun exits 130 with one
// report marked interrupted, and leaves no process behind.
//
// A SIGINT that comes before labrun's own code runs (the Go runtime initializing the linked
// libraries, ~15-25 ms on a 2-core machine) ends the process by the signal's default action:
// nothing has been created then, and there is no report; the test tells that case apart
// (the process was killed by SIGINT, printed nothing and created no report directory) and
// allows it only before 100 ms.
func TestInterruptFromStartup(t *testing.T) {
	bin := buildFakeBinary(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "s.cue"), startupScenario)
	delays := []time.Duration{10, 20, 35, 50, 100, 150, 200, 300, 500, 800}
	// Package earlysignal catches signals from about 1 ms after exec (TestSignalsAreCaughtBefore
	// TheLibrariesInit). Before that only the runtime and a few standard packages have run, and
	// a signal takes its default action, which is no bug of labrun's. On a loaded machine (other
	// test binaries, builds) that moment comes later: the default action is allowed up to 100 ms,
	// or three times the latest moment measured now.
	initBound := 20 * time.Millisecond
	for range 3 {
		if d := 3 * earlySignalInit(t, bin); d > initBound {
			initBound = d
		}
	}
	// The moment is measured before the signals, on a machine whose load changes meanwhile:
	// measured at 20 ms, a SIGHUP at +35 ms still took the default action once (the init had
	// not reached earlysignal: nothing printed, no report). The order of the inits is
	// TestSignalsAreCaughtBeforeTheLibrariesInit's to hold.
	initBound = max(initBound, 100*time.Millisecond)
	t.Logf("signals before +%s may come before labrun catches them", initBound)
	early := 0
	for i, d := range delays {
		d := d * time.Millisecond
		t.Run(fmt.Sprintf("at_%s", d), func(t *testing.T) {
			reports := filepath.Join(dir, fmt.Sprintf("reports-%d", i))
			cmd := exec.Command(bin, "run", "--report-dir", reports, "s.cue")
			cmd.Dir = dir
			var out strings.Builder
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// SIGTERM and SIGHUP (a closed terminal) are the same as SIGINT for labrun.
			sig := []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP}[i%3]
			time.Sleep(d)
			_ = cmd.Process.Signal(sig)
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			var err error
			select {
			case err = <-done:
			case <-time.After(20 * time.Second):
				_ = cmd.Process.Kill()
				<-done
				t.Fatalf("labrun did not end within 20s of SIGINT; output:\n%s", out.String())
			}
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == sig {
					// Only before earlysignal's init: then nothing was printed or created.
					if _, err := os.Stat(reports); d >= initBound || out.Len() > 0 || err == nil {
						t.Fatalf("killed by %s at +%s, after labrun catches signals; output:\n%s", sig, d, out.String())
					}
					early++
					t.Logf("%s at +%s came before labrun caught signals (runtime init): default action", sig, d)
					return
				}
			}
			if code := exitCodeOf(err); code != exitInterrupted {
				t.Fatalf("exit %d (%v), want 130; output:\n%s", code, err, out.String())
			}
			rec := readFaultRecord(t, reports)
			if rec.Outcome != "interrupted" {
				t.Errorf("report outcome %q, want interrupted; output:\n%s", rec.Outcome, out.String())
			}
			t.Logf("%s at +%s: %q, %d steps recorded", sig, d, rec.Error, len(rec.Steps))
			if strings.Contains(out.String(), "PASSED") {
				t.Errorf("an interrupted run printed PASSED:\n%s", out.String())
			}
			if left := sleepersIn(dir); len(left) > 0 {
				t.Errorf("processes left behind: %v", left)
			}
		})
	}
	t.Logf("%d of %d signals came before labrun caught signals", early, len(delays))
}

// sleepersIn lists live processes running in dir (the scenario's process steps run there).
func sleepersIn(dir string) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd"))
		if err == nil && cwd == dir && alive(pid) {
			out = append(out, pid)
		}
	}
	return out
}

// runTogether starts n copies of a command in dir at once and returns their outputs when all
// have ended; a copy that fails fails the test.
func runTogether(t *testing.T, n int, dir string, bin string, args ...string) []strings.Builder {
	t.Helper()
	errs := make(chan error, n)
	outs := make([]strings.Builder, n)
	for i := range n {
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		cmd.Stdout, cmd.Stderr = &outs[i], &outs[i]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { errs <- cmd.Wait() }()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Errorf("%s: %v", strings.Join(args, " "), err)
		}
	}
	return outs
}

// concurrentScenario is the scenario the concurrent runs share: a load of the local backend.
const concurrentScenario = `package s

import "labrun.dev/schema"

s: schema.#Scenario & {
	local: backends: a: {}
	steps: [{name: "fortio", load: {url: "http://${backends.a.address}/echo", requests: 10, connections: 1}}]
	expect: ["fortio.ok == 10"]
}
`

// TestConcurrentRunsKeepBothReports: two runs of one scenario started together, into one
// report directory, leave two report sets.
func TestConcurrentRunsKeepBothReports(t *testing.T) {
	bin := buildFakeBinary(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "s.cue"), concurrentScenario)
	const n = 4
	outs := runTogether(t, n, dir, bin, "run", "-q", "--report-dir", "reports", "s.cue")
	for i := range outs {
		if !strings.Contains(outs[i].String(), "PASSED") {
			t.Errorf("run %d:\n%s", i, outs[i].String())
		}
	}
	for _, ext := range []string{"*.json", "*.md"} {
		files, _ := filepath.Glob(filepath.Join(dir, "reports", ext))
		if len(files) != n {
			t.Errorf("%d concurrent runs left %d %s reports: %v", n, len(files), ext, files)
		}
	}
}

// TestConcurrentMatricesKeepEverySummary: three concurrent --count 2 runs into one report
// directory leave three summaries, each listing its own two runs, and six run records.
func TestConcurrentMatricesKeepEverySummary(t *testing.T) {
	bin := buildFakeBinary(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "s.cue"), concurrentScenario)
	const n = 3
	outs := runTogether(t, n, dir, bin, "run", "-q", "--count", "2", "--report-dir", "reports", "s.cue")
	printed := map[string]bool{}
	for i := range outs {
		m := regexp.MustCompile(`SUMMARY s: 2 of 2 runs passed \(every run must pass\) — (\S+)`).FindStringSubmatch(outs[i].String())
		if m == nil {
			t.Fatalf("run %d printed no summary:\n%s", i, outs[i].String())
		}
		printed[m[1]] = true
	}
	sums, _ := filepath.Glob(filepath.Join(dir, "reports", "*.summary.json"))
	if len(sums) != n || len(printed) != n {
		t.Fatalf("%d concurrent --count 2 runs printed %d summary paths and left %d summaries: %v", n, len(printed), len(sums), sums)
	}
	linked := map[string]bool{}
	for _, f := range sums {
		s, err := report.ReadSummary(f)
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Runs) != 2 {
			t.Errorf("%s lists %d runs, want its own 2", f, len(s.Runs))
		}
		for _, r := range s.Runs {
			if linked[r.Report] {
				t.Errorf("%s: run %s is in two summaries", f, r.Report)
			}
			linked[r.Report] = true
			if _, err := os.Stat(filepath.Join(dir, "reports", r.Report)); err != nil {
				t.Errorf("%s links %s: %v", f, r.Report, err)
			}
		}
	}
	if records, _ := filepath.Glob(filepath.Join(dir, "reports", "*_s_??????????.json")); len(records) != 2*n {
		t.Errorf("want %d run records, found %d", 2*n, len(records))
	}
}

// TestUnwritableReportDir: a report directory that cannot be written is found before the run
// (exit 2), and nothing runs: no PASSED, no process started.
func TestUnwritableReportDir(t *testing.T) {
	bin := buildFakeBinary(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "s.cue"), `package s

import "labrun.dev/schema"

s: schema.#Scenario & {
	steps: [{exec: argv: ["touch", "ran"]}]
}
`)
	writeFile(t, filepath.Join(dir, "afile"), "")
	for _, rd := range []string{"afile", "afile/sub"} {
		cmd := exec.Command(bin, "run", "--report-dir", rd, "s.cue")
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if code := exitCodeOf(err); code != exitInvalid {
			t.Errorf("--report-dir %s: exit %d, want 2; output:\n%s", rd, code, out)
		}
		if !strings.Contains(string(out), "--report-dir") || strings.Contains(string(out), "PASSED") {
			t.Errorf("--report-dir %s: output:\n%s", rd, out)
		}
		if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
			t.Errorf("--report-dir %s: the scenario ran", rd)
		}
	}
}

type faultRecord struct {
	Outcome string            `json:"outcome"`
	Error   string            `json:"error"`
	Steps   []json.RawMessage `json:"steps"`
	Stops   []json.RawMessage `json:"stops"`
}

// readFaultRecord reads the one JSON report in dir.
func readFaultRecord(t *testing.T, dir string) faultRecord {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) != 1 {
		t.Fatalf("want one JSON report in %s, found %v", dir, files)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var rec faultRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	return rec
}

// TestOneCommandTwoScenariosOfOneName: `labrun run a/s.cue b/s.cue`, both declaring s, in the
// same second: two report sets.
func TestOneCommandTwoScenariosOfOneName(t *testing.T) {
	bin := buildFakeBinary(t)
	dir := t.TempDir()
	for _, d := range []string{"a", "b"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, d, "s.cue"), "package s\n\nimport \"labrun.dev/schema\"\n\ns: schema.#Scenario & {steps: [{sleep: \"1ms\"}]}\n")
	}
	cmd := exec.Command(bin, "run", "-q", "a/s.cue", "b/s.cue")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "reports", "*_s_*.json"))
	if len(files) != 2 {
		t.Errorf("reports %v, want two", files)
	}
}

// initStep is one package's initialisation in the runtime's init trace.
type initStep struct {
	pkg       string
	at, clock time.Duration // since the process started; how long its init took
}

// initTrace runs `labrun version` with the runtime's init trace and returns the packages in
// the order they were initialised.
func initTrace(t *testing.T, bin string) []initStep {
	t.Helper()
	cmd := exec.Command(bin, "version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("labrun version: %v\n%s", err, stderr.String())
	}
	ms := func(s string) time.Duration {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatalf("unexpected init trace: %q in\n%s", s, stderr.String())
		}
		return time.Duration(f * float64(time.Millisecond))
	}
	var steps []initStep
	// init os/signal @1.1 ms, 0.006 ms clock, 0 bytes, 0 allocs
	for _, line := range strings.Split(stderr.String(), "\n") {
		f := strings.Fields(line)
		if len(f) < 6 || f[0] != "init" || !strings.HasPrefix(f[2], "@") || f[3] != "ms," || f[5] != "ms" {
			continue
		}
		steps = append(steps, initStep{pkg: f[1], at: ms(f[2][1:]), clock: ms(f[4])})
	}
	return steps
}

const earlySignalPkg = "labrun.dev/labrun/internal/earlysignal"

// earlySignalInit is the moment labrun starts catching signals, from the init trace.
func earlySignalInit(t *testing.T, bin string) time.Duration {
	t.Helper()
	steps := initTrace(t, bin)
	for _, s := range steps {
		if s.pkg == earlySignalPkg {
			return s.at
		}
	}
	t.Fatalf("no earlysignal in the init trace: %v", steps)
	return 0
}

// TestSignalsAreCaughtBeforeTheLibrariesInit: earlysignal must be initialised before nearly
// all the init work of the packages labrun links (CUE, client-go and fortio take tens of
// milliseconds), so that a signal during start-up is caught. The packages that go before it
// (a few standard ones, and leaves such as expr's operator table) may take at most 5% of
// the init time. An import added to earlysignal, or a rename that sorts it later, breaks this.
//
// Init times are one process's clock readings: on a loaded machine a preemption can land in
// one of the packages before earlysignal and push it over the bound. The packages before it
// are the same in every run, so the bound holds if it holds in one of three traces.
func TestSignalsAreCaughtBeforeTheLibrariesInit(t *testing.T) {
	bin := buildFakeBinary(t)
	for try := 1; ; try++ {
		msg, ok := earlySignalShare(t, bin)
		if ok {
			t.Log(msg)
			return
		}
		if try == 3 {
			t.Fatal(msg)
		}
		t.Logf("trace %d: %s; tracing again", try, msg)
	}
}

// earlySignalShare traces labrun's init once and says whether the packages initialised before
// earlysignal took at most 5% of the init time.
func earlySignalShare(t *testing.T, bin string) (string, bool) {
	t.Helper()
	steps := initTrace(t, bin)
	var before, total time.Duration
	found := -1
	for i, s := range steps {
		total += s.clock
		if s.pkg == earlySignalPkg {
			found = i
		}
		if found < 0 {
			before += s.clock
		}
	}
	if found < 0 {
		t.Fatalf("no earlysignal in the init trace: %v", steps)
	}
	if before*20 > total {
		var names []string
		for _, s := range steps[:found] {
			names = append(names, fmt.Sprintf("%s (%s)", s.pkg, s.clock))
		}
		return fmt.Sprintf("%s of %s init time comes before earlysignal: a signal then kills labrun. Before it: %s",
			before, total, strings.Join(names, ", ")), false
	}
	return fmt.Sprintf("earlysignal initialised at +%s, after %d of %d packages with init work (%s of %s init time)",
		steps[found].at, found, len(steps), before, total), true
}
