package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"labrun.dev/labrun/internal/growth"
)

// BenchmarkVetVsCUE compares `labrun vet` with the cue CLI's `cue vet` of the same files, as
// processes: CPU time (user + system, from the kernel's accounting of each child) and peak
// RSS, in alternated pairs (which goes first alternates too), reporting the medians and the
// median of the pairs' ratios. Sizes: the repository (`labrun vet examples/ scenarios/`, `cue
// vet ./examples/ ./scenarios/`) and one package of 10, 30, 100, 300 and 1,000 copies of
// examples/quickstart.cue (internal/growth, the schema under cue.mod/pkg so that cue vets what
// labrun does). BENCHMARKS.md's vet section has the figures and the bars (issue 35: CPU ≤ 1×
// cue's on the repository, ≤ 1.1× at 1,000 files, RSS ≤ 1.2×).
//
//	LABRUN_BENCH_PAIRS=5 nice go test -run '^$' -bench VetVsCUE -benchtime 1x ./cmd/labrun
//
// labrun is built from this tree with -tags no_tls_fallback (README's install line), cue
// v0.17.1 (go.mod's cuelang.org/go) installed as BENCHMARKS.md says, or taken from
// LABRUN_BENCH_CUE. LABRUN_BENCH_BEFORE names another labrun binary (an earlier commit's)
// to run in each round too; LABRUN_BENCH_SIZES (e.g. "repo,1000") picks sizes.
func BenchmarkVetVsCUE(b *testing.B) {
	pairs := 5
	if s := os.Getenv("LABRUN_BENCH_PAIRS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			b.Fatalf("LABRUN_BENCH_PAIRS=%q: expected a count", s)
		}
		pairs = n
	}
	cue := os.Getenv("LABRUN_BENCH_CUE")
	if cue == "" {
		var why string
		if cue, why = buildCUE(b); cue == "" {
			b.Skip(why)
		}
	}
	bin := filepath.Join(b.TempDir(), "labrun")
	if out, err := exec.Command("go", "build", "-tags", "no_tls_fallback", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	before := os.Getenv("LABRUN_BENCH_BEFORE")
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		b.Fatal(err)
	}
	quickstart, err := os.ReadFile(filepath.Join(repo, "examples", "quickstart.cue"))
	if err != nil {
		b.Fatal(err)
	}
	sizes := []string{"repo", "10", "30", "100", "300", "1000"}
	if s := os.Getenv("LABRUN_BENCH_SIZES"); s != "" {
		sizes = strings.Split(s, ",")
	}
	// The evaluation's time budget is wall time: on a machine shared with other work, 1,000
	// files can pass the default 10 s. The budget's goroutine runs either way.
	budget := []string{"--eval-timeout", "10m"}
	for _, size := range sizes {
		name := "repository"
		dir, labrunArgs, cueArgs := repo, append([]string{"vet", "examples/", "scenarios/"}, budget...), []string{"vet", "./examples/", "./scenarios/"}
		if size != "repo" {
			n, err := strconv.Atoi(size)
			if err != nil {
				b.Fatalf("LABRUN_BENCH_SIZES: %q is not repo or a count", size)
			}
			name = "files=" + size
			dir = b.TempDir()
			if err := growth.Write(dir, n, quickstart, false); err != nil {
				b.Fatal(err)
			}
			labrunArgs, cueArgs = append([]string{"vet", "."}, budget...), []string{"vet", "."}
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				tools := []vetTool{{"labrun", bin, labrunArgs, nil}, {"cue", cue, cueArgs, nil}}
				if before != "" {
					tools = append(tools, vetTool{"before", before, labrunArgs, nil})
				}
				for i := range pairs {
					order := slices.Clone(tools)
					if i%2 == 1 {
						slices.Reverse(order)
					}
					for _, t := range order {
						t := findTool(tools, t.name)
						t.runs = append(t.runs, runVet(b, dir, t.path, t.args))
					}
				}
				lr, cu := findTool(tools, "labrun"), findTool(tools, "cue")
				cpu, rss := ratios(lr.runs, cu.runs)
				b.ReportMetric(medianOf(cpu), "cpu-ratio")
				b.ReportMetric(medianOf(rss), "rss-ratio")
				for _, t := range tools {
					b.ReportMetric(medianOf(cpuMS(t.runs)), t.name+"-cpu-ms")
					b.ReportMetric(medianOf(rssMB(t.runs)), t.name+"-rss-MB")
				}
				b.Logf("%s, %d pairs: CPU labrun/cue per pair %s; RSS %s", name, pairs, fmtRatios(cpu), fmtRatios(rss))
			}
		})
	}
}

type vetTool struct {
	name, path string
	args       []string
	runs       []vetRun
}

type vetRun struct {
	cpu time.Duration
	rss int64 // bytes
}

func findTool(tools []vetTool, name string) *vetTool {
	for i := range tools {
		if tools[i].name == name {
			return &tools[i]
		}
	}
	panic(name)
}

// runVet runs one vet in dir, which must pass, and returns the child's CPU time and peak RSS.
func runVet(b *testing.B, dir, path string, args []string) vetRun {
	cmd := exec.Command(path, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("%s %s in %s: %v\n%s", path, strings.Join(args, " "), dir, err, out)
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		b.Skip("no rusage on this system")
	}
	return vetRun{
		cpu: time.Duration(ru.Utime.Nano() + ru.Stime.Nano()),
		rss: ru.Maxrss * 1024, // kilobytes on Linux
	}
}

func ratios(a, b []vetRun) (cpu, rss []float64) {
	for i := range a {
		cpu = append(cpu, a[i].cpu.Seconds()/b[i].cpu.Seconds())
		rss = append(rss, float64(a[i].rss)/float64(b[i].rss))
	}
	return cpu, rss
}

func cpuMS(runs []vetRun) []float64 {
	var out []float64
	for _, r := range runs {
		out = append(out, float64(r.cpu.Microseconds())/1000)
	}
	return out
}

func rssMB(runs []vetRun) []float64 {
	var out []float64
	for _, r := range runs {
		out = append(out, float64(r.rss)/(1<<20))
	}
	return out
}

func medianOf(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func fmtRatios(xs []float64) string {
	var parts []string
	for _, x := range xs {
		parts = append(parts, fmt.Sprintf("%.3g", x))
	}
	return strings.Join(parts, " ")
}
