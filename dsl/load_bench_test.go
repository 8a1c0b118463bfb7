package dsl

import (
	"path/filepath"
	"testing"
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
