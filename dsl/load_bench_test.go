package dsl

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"labrun.dev/labrun/schema"
)

// BenchmarkLoadRepo measures Load of examples/ and scenarios/ (what `labrun vet examples/
// scenarios/` loads), one op = one whole load in a fresh loader, schema compilation included:
//
//	go test -run '^$' -bench LoadRepo -benchmem ./dsl/
//
// Profile it with -cpuprofile / -memprofile.
func BenchmarkLoadRepo(b *testing.B) {
	paths := []string{filepath.Join("..", "examples"), filepath.Join("..", "scenarios")}
	for b.Loop() {
		res, err := Load(paths, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Scenarios) == 0 {
			b.Fatal("no scenarios")
		}
	}
}

// BenchmarkLoadGrowth measures Load of one package of 1, 10, 100 and 1,000 generated scenario
// files (writeGrowthTree), valid and with one unknown field per file (the path that builds the
// open copy and explains every problem):
//
//	go test -run '^$' -bench LoadGrowth -benchmem ./dsl/
func BenchmarkLoadGrowth(b *testing.B) {
	for _, invalid := range []bool{false, true} {
		for _, n := range []int{1, 10, 100, 300, 1000} {
			name := fmt.Sprintf("files=%d", n)
			if invalid {
				name = "invalid/" + name
			}
			b.Run(name, func(b *testing.B) {
				dir := b.TempDir()
				if err := writeGrowthTree(dir, n, invalid); err != nil {
					b.Fatal(err)
				}
				for b.Loop() {
					res, err := Load([]string{dir}, Options{})
					if invalid != (err != nil) {
						b.Fatalf("invalid=%v, err=%v", invalid, err)
					}
					if !invalid && len(res.Scenarios) != n {
						b.Fatalf("%d scenarios, want %d", len(res.Scenarios), n)
					}
				}
			})
		}
	}
}

// TestWriteGrowthTree writes the tree of BenchmarkLoadGrowth for measuring labrun and the cue
// CLI as processes (BENCHMARKS.md): LABRUN_GROWTH_DIR=/tmp/g LABRUN_GROWTH_FILES=100 go test
// -run WriteGrowthTree ./dsl/, then `labrun vet /tmp/g` and `cd /tmp/g && cue vet .`.
func TestWriteGrowthTree(t *testing.T) {
	dir := os.Getenv("LABRUN_GROWTH_DIR")
	if dir == "" {
		t.Skip("LABRUN_GROWTH_DIR not set")
	}
	n, err := strconv.Atoi(os.Getenv("LABRUN_GROWTH_FILES"))
	if err != nil {
		t.Fatalf("LABRUN_GROWTH_FILES: %v", err)
	}
	if err := writeGrowthTree(dir, n, os.Getenv("LABRUN_GROWTH_INVALID") == "1"); err != nil {
		t.Fatal(err)
	}
}

// writeGrowthTree writes a CUE module in dir (cue.mod with labrun's schema under
// cue.mod/pkg/labrun.dev/schema, so that the cue CLI vets the same thing) holding one package
// of n files, each declaring one scenario of the shape the examples have: a local backend, two
// snapshots around a load inside a parallel block, a sleep, an assert and two expectations.
// invalid adds an unknown field to every scenario.
func writeGrowthTree(dir string, n int, invalid bool) error {
	schemaDir := filepath.Join(dir, "cue.mod", "pkg", "labrun.dev", "schema")
	if err := os.MkdirAll(schemaDir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "cue.mod", "module.cue"),
		[]byte("module: \"growth.example@v0\"\nlanguage: version: \"v0.17.0\"\n"), 0o644); err != nil {
		return err
	}
	entries, _ := schema.Files.ReadDir(".")
	for _, e := range entries {
		b, _ := schema.Files.ReadFile(e.Name())
		if err := os.WriteFile(filepath.Join(schemaDir, e.Name()), b, 0o644); err != nil {
			return err
		}
	}
	for i := range n {
		extra := ""
		if invalid {
			extra = "\n\ttimout: \"5s\""
		}
		src := strings.NewReplacer("NAME", fmt.Sprintf("s%04d", i), "EXTRA", extra).Replace(growthScenario)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("s%04d.cue", i)), []byte(src), 0o644); err != nil {
			return err
		}
	}
	return nil
}

const growthScenario = `package lab

import "labrun.dev/schema"

NAME: schema.#Scenario & {
	doc: "a generated scenario for the growth benchmark"
	vars: {requests: 50, path: "/echo"}
	local: backends: a: {}
	steps: [
		{name: "before", snapshot: backend: "a"},
		{parallel: [
			{name: "fortio", load: {url: "${backends.a.url}${vars.path}", requests: 50, connections: 2}},
			{at: "10ms", name: "mid", snapshot: backend: "a"},
		]},
		{sleep: "10ms"},
		{name: "after", snapshot: backend: "a"},
		{assert: "fortio.requests == vars.requests"},
	]EXTRA
	expect: [
		"delta.requests >= fortio.requests",
		"fortio.code200 == vars.requests",
	]
}
`
