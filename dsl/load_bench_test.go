package dsl

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"labrun.dev/labrun/internal/growth"
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

// BenchmarkLoadGrowth measures Load of one package of 1, 10, 100, 300 and 1,000 copies of
// examples/quickstart.cue (internal/growth), valid and with one unknown field per file (the path
// that builds the open copy and explains every problem):
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

// writeGrowthTree writes a module of n copies of examples/quickstart.cue (internal/growth).
func writeGrowthTree(dir string, n int, invalid bool) error {
	src, err := os.ReadFile(filepath.Join("..", "examples", "quickstart.cue"))
	if err != nil {
		return err
	}
	return growth.Write(dir, n, src, invalid)
}

// TestGrowthTreeVets: the growth trees are valid (and their invalid form is not), so that the
// benchmarks measure vet of real scenarios.
func TestGrowthTreeVets(t *testing.T) {
	for _, invalid := range []bool{false, true} {
		dir := t.TempDir()
		if err := writeGrowthTree(dir, 3, invalid); err != nil {
			t.Fatal(err)
		}
		res, err := Load([]string{dir}, Options{})
		if invalid {
			if err == nil || !strings.Contains(err.Error(), "timout") {
				t.Fatalf("invalid tree: %v, want an error naming timout", err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Scenarios) != 3 || res.Scenarios[0].Name != "q0000" {
			t.Fatalf("scenarios %v", res.Scenarios)
		}
	}
}
