package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"labrun.dev/labrun/driver/fakes"
	"labrun.dev/labrun/driver/kube"
	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/internal/earlysignal"
	"labrun.dev/labrun/schema"
)

// TestMain lets testscript run this test binary as the `labrun` command of the scripts in
// testdata/script: `exec labrun vet x.cue` runs Main in a child process, with the real stdio,
// environment and working directory ($WORK) of that process.
func TestMain(m *testing.M) {
	// A local run started in this process (Main called by a test) starts its backend host as
	// this executable with the hidden argument: be that host, not a second run of every test.
	if len(os.Args) > 1 && os.Args[1] == backendHostArg {
		os.Exit(serveBackendHost(testProcess()))
	}
	// The test binary links earlysignal, whose init catches SIGINT and SIGTERM: give them back
	// so that an interrupt stops the tests. Main, as the `labrun` command, takes them again.
	earlysignal.Release()
	// LABRUN_TEST_PROBE=1 (set by a script) adds the test-only kind probe (driver/fakes), whose
	// CUE the script puts beside the schema: new kinds' faults, seen as users would.
	if os.Getenv("LABRUN_TEST_PROBE") == "1" {
		fakes.RegisterProbe()
	}
	testscript.Main(m, map[string]func(){
		"labrun": func() { os.Exit(Main(testProcess())) },
	})
}

// testProcess is newProcess plus a "fake" target (driver/fakes), selected with --target fake,
// so that scripts can run scenarios without a machine's worth of servers.
func testProcess() *process {
	p := newProcess()
	// The tests give stderr a buffer or a file: a go test in a terminal would wrap its lines.
	p.StderrWidth = nil
	p.Targets = map[string]func(context.Context, *dsl.Scenario) (*schema.Target, error){
		"fake": func(ctx context.Context, sc *dsl.Scenario) (*schema.Target, error) {
			return fakeWorld().Target(), nil
		},
		// fake-nodns claims every capability but has no DNS driver: a faulty target.
		"fake-nodns": func(ctx context.Context, sc *dsl.Scenario) (*schema.Target, error) {
			tg := fakeWorld().Target()
			spec, _ := schema.BuiltinTarget("kube", nil)
			tg.Name, tg.Caps, tg.DNS = "fake-nodns", spec.Caps, nil
			return tg, nil
		},
	}
	return p
}

// fakeWorld is the fake target of the scripts. Every source's counters grow by a fixed step
// per read, so deltas are predictable: rq_total grows by 10 per snapshot of a source, and
// upstream_rq_pending_overflow by 3; a load of N requests answers 200 to all of them. Its
// cluster serves kinds Widget and Gadget only once an applied CRD defines them.
// LABRUN_FAKE_FAIL_ON (set by a script) makes every call whose description contains it fail:
// "delete" leaves what a run created behind. LABRUN_FAKE_MISSING names (space-separated) the
// objects its cluster does not have: a delete of them finds them absent. LABRUN_FAKE_READY
// ("app=backend:backend-a,backend-b") lists the ready pods of a selector (fakes.World.Ready);
// LABRUN_FAKE_OBJECTS=1 makes its cluster keep the objects applied and judge a wait's match or
// absent of them with the kube driver's matcher (fakes.World.KeepObjects); fakes.FromEnv reads them.
func fakeWorld() *fakes.World {
	w := fakes.FromEnv(os.Getenv) // the binary built with -tags labrun_fakes reads them too
	w.Match = kube.PartialMatches
	w.Stats = func(source string, n int) schema.StatsSnapshot {
		return schema.StatsSnapshot{
			Counters: schema.Stats{
				"rq_total":                     float64(10 * n),
				"upstream_rq_pending_overflow": float64(3 * n),
			},
			Gauges: schema.Stats{"rq_active": 1},
		}
	}
	// Kinds whose CRD the cluster stand-in does not have until a step applies one.
	w.Unknown = map[string]bool{"Widget": true, "Gadget": true}
	w.LoadTime = 10 * time.Millisecond
	w.LoadResult = func(req schema.Load) schema.LoadResult {
		n := float64(req.Requests)
		return schema.LoadResult{Requests: n, OK: n, Codes: map[string]float64{"200": n}, Connections: float64(req.Connections)}
	}
	return w
}

// TestScript runs the CLI scripts in testdata/script. Each script gets its own $WORK as the
// working directory, so labrun prints paths relative to it; scenario files there import
// "labrun.dev/schema" without a cue.mod (the loader overlays one).
//
// Besides testscript's commands, scripts have `exits CODE PROGRAM ARGS...`: it runs PROGRAM
// like exec (stdout and stderr are kept for cmp) and fails unless it exits with exactly CODE
// (`! exec` only says "not 0", and labrun's exit codes are part of its interface). And
// `reseal RECORD.json`: it writes the seal of an edited record and its folder again, as an
// edit that computes it again would (the seal is no signature): what replay says of such a
// record is what its other checks say.
//
// The update switch: LABRUN_UPDATE=1 go test ./cmd/labrun/ -run TestScript rewrites every
// failing `cmp stdout|stderr FILE` golden inside its .txtar with what labrun printed. Review
// the diff (git diff cmd/labrun/testdata) before keeping it.
func TestScript(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		UpdateScripts:       os.Getenv("LABRUN_UPDATE") == "1",
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		Cmds:                map[string]func(*testscript.TestScript, bool, []string){"exits": cmdExits, "reseal": cmdReseal},
	})
}

// cmdExits is the `exits CODE PROGRAM ARGS...` script command.
func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits CODE PROGRAM [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exits: CODE %q is not a number", args[0])
	}
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		got = ee.ExitCode()
	case err != nil:
		ts.Fatalf("exits: %v", err)
	}
	if got != want {
		ts.Fatalf("%s exited with %d, want %d", args[1], got, want)
	}
}

// examplesDir is the repository's examples/ directory.
func examplesDir(tb testing.TB) string {
	dir, err := filepath.Abs(filepath.Join("..", "..", "examples"))
	if err != nil {
		tb.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.cue"))
	if len(files) == 0 {
		tb.Skipf("no examples in %s", dir)
	}
	return dir
}

// TestVetExamples keeps examples/ valid.
func TestVetExamples(t *testing.T) {
	dir := examplesDir(t)
	var out, errOut bytes.Buffer
	p := &process{Args: []string{"vet", dir}, Stdout: &out, Stderr: &errOut, Getenv: func(string) string { return "" }, Cwd: filepath.Dir(dir)}
	if code := Main(p); code != exitOK {
		t.Fatalf("labrun vet examples/: exit %d\n%s%s", code, out.String(), errOut.String())
	}
	if !strings.HasPrefix(out.String(), "ok: ") {
		t.Fatalf("labrun vet examples/: %q", out.String())
	}
}

// BenchmarkVetExamples measures `labrun vet examples/` in-process (one op = one vet of every
// file, schema compilation included, as a fresh process does it), then the same vet as a
// process of its own, and the same files through the CUE CLI (`cue vet ./examples/` from the
// repository root, which has cue.mod and schema/), as ratios:
//
//	cd cmd/labrun && nice go test -run '^$' -bench VetExamples -benchtime 20x .
//
// cue is built once (go install cuelang.org/go/cmd/cue@v0.17.1 into
// $TMPDIR/labrun-bench-cue-v0.17.1); when that fails the cue half is skipped with the reason.
// Metrics: ms/vet (labrun in-process), proc-ms/vet (labrun as a process: this test binary run
// as `labrun`, process start included), cue-ms/vet (cue vet as a process), cue/labrun-proc (the
// fair ratio: both pay a process start).
func BenchmarkVetExamples(b *testing.B) {
	dir := examplesDir(b)
	root := filepath.Dir(dir)
	vet := func() {
		var out, errOut bytes.Buffer
		p := &process{Args: []string{"vet", dir}, Stdout: &out, Stderr: &errOut, Getenv: func(string) string { return "" }, Cwd: root}
		if code := Main(p); code != exitOK {
			b.Fatalf("labrun vet examples/: exit %d\n%s", code, errOut.String())
		}
	}
	vet() // warm the file cache
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		vet()
	}
	labrunMS := float64(time.Since(start).Microseconds()) / 1000 / float64(b.N)
	b.StopTimer()
	b.ReportMetric(labrunMS, "ms/vet")

	// Processes are timed once per benchmark run, not once per b.N round.
	if procMS == 0 {
		procMS = timeProcess(b, labrunBinary(b), root, "vet", "./examples/")
	}
	b.ReportMetric(procMS, "proc-ms/vet")
	cue, why := buildCUE(b)
	if cue == "" {
		b.Logf("cue vet comparison skipped: %s", why)
		return
	}
	if cueMS == 0 {
		cueMS = timeProcess(b, cue, root, "vet", "./examples/")
	}
	b.ReportMetric(cueMS, "cue-ms/vet")
	b.ReportMetric(cueMS/procMS, "cue/labrun-proc")
}

// timeProcess runs a command in dir 10 times after a warm-up and returns its mean wall time
// in milliseconds; the command must succeed.
func timeProcess(b *testing.B, bin, dir string, args ...string) float64 {
	run := func() time.Duration {
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		t0 := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%s %s: %v\n%s", bin, strings.Join(args, " "), err, out)
		}
		return time.Since(t0)
	}
	run()
	const rounds = 10
	var total time.Duration
	for range rounds {
		total += run()
	}
	return float64(total.Microseconds()) / 1000 / rounds
}

// labrunBinary copies this test binary to a file named labrun: run under that name, TestMain
// runs labrun's Main (as testscript does for the scripts).
func labrunBinary(b *testing.B) string {
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	bin := filepath.Join(b.TempDir(), "labrun")
	data, err := os.ReadFile(self)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		b.Fatal(err)
	}
	return bin
}

// buildCUE installs the CUE CLI v0.17.1 into $TMPDIR/labrun-bench-cue-v0.17.1 (reused by later
// runs); it returns the binary, or "" and the reason it could not be built.
func buildCUE(b *testing.B) (string, string) {
	if cuePath != "" || cueWhy != "" {
		return cuePath, cueWhy
	}
	gobin := filepath.Join(os.TempDir(), "labrun-bench-cue-v0.17.1")
	bin := filepath.Join(gobin, "cue")
	if _, err := os.Stat(bin); err == nil {
		cuePath = bin
		return cuePath, ""
	}
	cmd := exec.Command("go", "install", "cuelang.org/go/cmd/cue@v0.17.1")
	cmd.Env = append(os.Environ(), "GOBIN="+gobin)
	if out, err := cmd.CombinedOutput(); err != nil {
		cueWhy = "go install cuelang.org/go/cmd/cue@v0.17.1: " + strings.TrimSpace(string(out))
		return "", cueWhy
	}
	cuePath = bin
	return cuePath, ""
}

var (
	cuePath, cueWhy string
	cueMS, procMS   float64
)

// TestLoadGivesTheGCSettingsBack checks that a load's heap floor (internal/gcfloor) ends with
// the load: what runs after it (a run's target, its servers) gets the collector as it was.
func TestLoadGivesTheGCSettingsBack(t *testing.T) {
	dir := examplesDir(t)
	percent := debug.SetGCPercent(100)
	debug.SetGCPercent(percent)
	limit := debug.SetMemoryLimit(-1)
	var out, errOut bytes.Buffer
	p := &process{Args: []string{"vet", dir}, Stdout: &out, Stderr: &errOut, Getenv: func(string) string { return "" }, Cwd: filepath.Dir(dir)}
	if code := Main(p); code != exitOK {
		t.Fatalf("labrun vet examples/: exit %d\n%s%s", code, out.String(), errOut.String())
	}
	runtime.GC() // a cycle after the load must not switch anything either
	time.Sleep(20 * time.Millisecond)
	gotPercent := debug.SetGCPercent(percent)
	if gotLimit := debug.SetMemoryLimit(-1); gotPercent != percent || gotLimit != limit {
		t.Errorf("after vet: GOGC %d, memory limit %d; want %d, %d as before", gotPercent, gotLimit, percent, limit)
	}
}

// TestVetOfASmallSweepCollectsNothing: vet of a sweep whose load leaves a small heap does not
// collect it before the combinations' loads (a forced cycle there cost ~3 % of the
// repository's vet, for no lower peak once vet lets its evaluations go); only a heap of
// combosGCHeap or more is worth it.
func TestVetOfASmallSweepCollectsNothing(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join(examplesDir(t), "sweep.cue"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sweep.cue"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	forced := func() uint64 {
		s := []metrics.Sample{{Name: "/gc/cycles/forced:gc-cycles"}}
		metrics.Read(s)
		return s[0].Value.Uint64()
	}
	runtime.GC() // what the tests before left
	before := forced()
	var out, errOut bytes.Buffer
	p := &process{Args: []string{"vet", filepath.Join(dir, "sweep.cue")}, Stdout: &out, Stderr: &errOut, Getenv: func(string) string { return "" }, Cwd: dir}
	if code := Main(p); code != exitOK {
		t.Fatalf("labrun vet sweep.cue: exit %d\n%s%s", code, out.String(), errOut.String())
	}
	if !strings.Contains(out.String(), "6 combinations") {
		t.Fatalf("labrun vet sweep.cue: %q, want its 6 combinations checked", out.String())
	}
	if n := forced() - before; n != 0 {
		t.Errorf("vet of one small sweep forced %d collections, want none", n)
	}
}
