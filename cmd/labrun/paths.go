package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"labrun.dev/labrun/dsl"
)

// expandPaths turns each DIR/... argument into DIR and every directory below it that holds
// .cue or .md files, as go test ./... does: directories whose names start with . or _, named
// testdata, or cue.mod are skipped. Other arguments stay as they are.
func expandPaths(cwd string, args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		root, ok := strings.CutSuffix(a, "...")
		if !ok {
			out = append(out, a)
			continue
		}
		root = strings.TrimSuffix(root, string(filepath.Separator))
		if root == "" {
			root = "."
		}
		abs := inCwd(cwd, root)
		var found []string
		err := filepath.WalkDir(abs, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() {
				return nil
			}
			name := d.Name()
			if path != abs && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "cue.mod") {
				return filepath.SkipDir
			}
			entries, err := os.ReadDir(path)
			if err != nil {
				return err
			}
			for _, e := range entries {
				n := e.Name()
				if !e.IsDir() && !strings.HasPrefix(n, ".") && !strings.HasPrefix(n, "_") && (strings.HasSuffix(n, ".cue") || dsl.IsMarkdown(n)) {
					rel := path
					if r, err := filepath.Rel(cwd, path); err == nil && !strings.HasPrefix(r, "..") {
						rel = r
					}
					found = append(found, rel)
					break
				}
			}
			return nil
		})
		if err != nil {
			return nil, &exitError{exitInvalid, fmt.Sprintf("%s: %v", a, unwrapPath(err))}
		}
		if len(found) == 0 {
			return nil, &exitError{exitInvalid, fmt.Sprintf("%s: no directory below %s holds .cue or .md files", a, root)}
		}
		out = append(out, found...)
	}
	return out, nil
}

// register adds --count and --sweep to a command that loads scenarios (run, vet, plan).
func (f *matrixFlags) register(cmd *cobra.Command, verb string) {
	what := map[string]string{
		"run":  "run each combination N times (setup and cleanup each time) and write a summary of the runs",
		"vet":  "check the matrix run --count N would make",
		"plan": "list the runs --count N would make",
	}[verb]
	cmd.Flags().IntVar(&f.count, "count", 1, what)
	cmd.Flags().StringArrayVar(&f.sweeps, "sweep", nil, "sweep a var: --sweep name=v1,v2,... (repeatable: every combination); replaces the values of that var only in a scenario's own sweep; the vars reach CUE as --var does")
	if verb != "vet" {
		cmd.Flags().StringVar(&f.shard, "shard", "", verb+" only shard i of n (i/n, such as 2/4) of the runs: every process given the same paths and flags splits them the same way, balanced by planned span, runs that touch the same thing in one shard; labrun merge joins the shards' records (docs/scaling-out.md)")
	}
}
