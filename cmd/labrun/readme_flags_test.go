package main

import (
	"io"
	"os"
	"strings"
	"testing"
)

// TestReadmeFlagsOnTheirCommands holds README's "Useful flags" to the commands' flags: README
// listed --cluster name=context among flags shared by commands, but plan has none (it reaches
// no cluster), and a reader could not tell which commands take which. Each claim is a README
// fragment naming commands, and the flags those commands have (and some command has not).
func TestReadmeFlagsOnTheirCommands(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(readme)), " ")
	root := newRoot(&process{Stdout: io.Discard, Stderr: io.Discard, Getenv: func(string) string { return "" }})
	has := func(cmd, flag string) bool {
		for _, c := range root.Commands() {
			if c.Name() == cmd {
				return c.Flags().Lookup(flag) != nil
			}
		}
		t.Fatalf("no command %s", cmd)
		return false
	}
	for _, c := range []struct {
		readme string
		flags  []string
		on     []string
		notOn  []string
	}{
		{"`--var name=value`, `--target local|kube` and `--allow-system-namespaces` (", []string{"var", "target", "allow-system-namespaces"},
			[]string{"run", "vet", "plan", "doc", "job"}, nil},
		{") on `run`, `vet`, `plan`, `doc` and `job`;", []string{"var", "target", "allow-system-namespaces"}, []string{"run", "vet", "plan", "doc", "job"}, nil},
		{"on the commands that reach a cluster: `run`, `doc`, `vet --server` and `plan --server` (plain `plan` reaches none", []string{"kubeconfig", "context", "namespace", "cluster"},
			[]string{"run", "doc", "vet", "plan"}, nil},
		{"`--report-dir` and `--keep` on `run` and `doc`", []string{"report-dir", "keep"}, []string{"run", "doc"}, []string{"vet", "plan"}},
		{"`--junit FILE` on `run`;", []string{"junit"}, []string{"run"}, []string{"doc", "vet", "plan"}},
		{"`--scenario NAME|GLOB`, `--match RE`, `--skip RE`, `--tag T` on `run`, `plan` and `job`;", []string{"scenario", "match", "skip", "tag"},
			[]string{"run", "plan", "job"}, []string{"vet", "doc"}},
	} {
		if !strings.Contains(text, c.readme) {
			t.Errorf("README does not say %q", c.readme)
		}
		for _, f := range c.flags {
			for _, cmd := range c.on {
				if !has(cmd, f) {
					t.Errorf("README says %s takes --%s; it has no such flag", cmd, f)
				}
			}
			for _, cmd := range c.notOn {
				if has(cmd, f) {
					t.Errorf("%s has --%s, which README leaves out of the commands that take it", cmd, f)
				}
			}
		}
	}
}
