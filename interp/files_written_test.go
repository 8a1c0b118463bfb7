package interp_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"labrun.dev/labrun/driver/fakes"
	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/schema"
)

// A manifest a step renders during the run (content that differs from run to run), then
// read by a wait (absentFiles; an apply's files are read before the run too, by its guard): the record keeps it as changed during the run, and a genuine record is not refused
// once the next run has rewritten the file. Before, the digest of the rendered file was kept
// as the scenario's own, and replay refused every record but the last run's ("read gone.yaml
// (wait.absentFiles), whose content changed since the run"). A file the run did not write is
// still held to its digest. So are paths written with ${...} (resolved before the run, and by
// replay over the record): before, they were not compared at all, and the rendered one was
// kept as the scenario's own once they were.
func TestFileWrittenByTheRunNotHeldToIt(t *testing.T) {
	for _, tc := range []struct{ name, vars, fixed, gone, where string }{
		{name: "literal", fixed: "fixed.yaml", gone: "gone.yaml", where: "apply.files"},
		{name: "templated", vars: `vars: {f: "fixed.yaml", g: "gone.yaml"}`, fixed: "${vars.f}", gone: "${vars.g}", where: "apply.files, written ${vars.f}"},
	} {
		t.Run(tc.name, func(t *testing.T) { fileWrittenByTheRun(t, tc.vars, tc.fixed, tc.gone, tc.where) })
	}
}

func fileWrittenByTheRun(t *testing.T, vars, fixed, gone, where string) {
	dir := t.TempDir()
	write := func(name, s string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cm := func(mode string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: flags\ndata:\n  mode: " + mode + "\n"
	}
	write("s.cue", `package s

import "labrun.dev/schema"

s: schema.#Scenario & {
	`+vars+`
	namespaces: ["lab"]
	steps: [
		{name: "render", exec: argv: ["render"]},
		{name: "cm", apply: files: ["`+fixed+`"]},
		{name: "gone", wait: {absentFiles: ["`+gone+`"], mayNeverExist: true}},
	]
}
`)
	write("gone.yaml", strings.Replace(cm("initial"), "flags", "gone", 1))
	write("fixed.yaml", strings.Replace(cm("fixed"), "flags", "fixed", 1))
	res, err := dsl.Load([]string{filepath.Join(dir, "s.cue")}, dsl.Options{Target: "fake"})
	if err != nil || len(res.Scenarios) != 1 {
		t.Fatalf("load: %v", err)
	}
	sc := res.Scenarios[0]
	runs := 0
	w := &fakes.World{ExecResult: func(schema.Exec) schema.ExecResult {
		runs++
		write("gone.yaml", strings.Replace(cm(fmt.Sprintf("run-%d", runs)), "flags", "gone", 1)) // the render step writes the manifest
		return schema.ExecResult{}
	}}
	first := interp.New(w.Target()).Run(context.Background(), context.Background(), sc)
	if first.Outcome != interp.Passed {
		t.Fatalf("outcome %s: %s", first.Outcome, first.Error)
	}
	if d := first.FileDigests["gone.yaml"]; d != interp.ChangedDuringRun {
		t.Errorf("gone.yaml's digest %q, want %q", d, interp.ChangedDuringRun)
	}
	interp.New(w.Target()).Run(context.Background(), context.Background(), sc) // rewrites gone.yaml
	if why := interp.ChangedFile(first, sc); why != "" {
		t.Errorf("the first run's record, after a second run: %s", why)
	}
	write("fixed.yaml", strings.Replace(cm("edited"), "flags", "fixed", 1))
	if why := interp.ChangedFile(first, sc); !strings.Contains(why, "read fixed.yaml ("+where+"), whose content changed since the run") {
		t.Errorf("fixed.yaml edited since the run: %q", why)
	}
}
