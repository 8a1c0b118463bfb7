// Package growth writes the trees that vet's growth benchmarks load: one CUE module holding
// one package of n copies of a real scenario (examples/quickstart.cue), so that labrun vet and
// the cue CLI's vet of the same module can be compared at sizes from 10 to 1,000 files
// (BENCHMARKS.md).
package growth

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	"labrun.dev/labrun/schema"
)

// Module is the module path the trees declare.
const Module = "growth.example@v0"

// Write writes into dir a CUE module (cue.mod/module.cue, and labrun's schema under
// cue.mod/pkg/labrun.dev/schema, so that the cue CLI vets exactly what labrun does) holding the
// package lab in n files s0000.cue…: each is quickstart, a scenario file of package examples
// whose scenario is named quickstart, with its package clause changed to lab and every name
// containing "quickstart" made unique to the copy (quickstart → q0007, _quickstartPort →
// _q0007Port). invalid adds an unknown field (timout) to every scenario.
func Write(dir string, n int, quickstart []byte, invalid bool) error {
	pkg := regexp.MustCompile(`(?m)^package \w+$`)
	if !pkg.Match(quickstart) || !bytes.Contains(quickstart, []byte("quickstart: schema.#Scenario & {\n")) {
		return fmt.Errorf("growth: the source is not examples/quickstart.cue (a package clause and quickstart: schema.#Scenario & {)")
	}
	src := pkg.ReplaceAll(quickstart, []byte("package lab"))
	if invalid {
		src = bytes.Replace(src, []byte("quickstart: schema.#Scenario & {\n"),
			[]byte("quickstart: schema.#Scenario & {\n\ttimout: \"5s\"\n"), 1)
	}
	schemaDir := filepath.Join(dir, "cue.mod", "pkg", "labrun.dev", "schema")
	if err := os.MkdirAll(schemaDir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "cue.mod", "module.cue"),
		[]byte("module: \""+Module+"\"\nlanguage: version: \"v0.17.0\"\n"), 0o644); err != nil {
		return err
	}
	entries, err := schema.Files.ReadDir(".")
	if err != nil {
		return err
	}
	for _, e := range entries {
		b, err := schema.Files.ReadFile(e.Name())
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(schemaDir, e.Name()), b, 0o644); err != nil {
			return err
		}
	}
	for i := range n {
		name := fmt.Sprintf("q%04d", i)
		b := bytes.ReplaceAll(src, []byte("quickstart"), []byte(name))
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("s%04d.cue", i)), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}
