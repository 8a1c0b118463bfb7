package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/spf13/cobra"

	"labrun.dev/labrun/schema"
)

// schemaVendorDir is where labrun init puts the schema: CUE resolves an import of
// labrun.dev/schema from a module's cue.mod/pkg, so cue vet, cue fmt and the CUE language
// server find it with no registry; labrun itself uses its own embedded copy.
var schemaVendorDir = filepath.Join("cue.mod", "pkg", "labrun.dev", "schema")

func newInitCmd(p *process) *cobra.Command {
	var force bool
	cmd := &cobra.Command{
		Use:   "init [DIR]",
		Short: "Make DIR (default: the current directory) a labrun folder: a cue.mod, the schema, a starter scenario",
		Long: `init writes what a folder of your own needs so that labrun, cue vet, cue fmt and an
editor's CUE language server all resolve "labrun.dev/schema":

  cue.mod/module.cue                   a CUE module
  cue.mod/pkg/labrun.dev/schema/*.cue  the schema of this labrun, vendored
  lab.cue                              a starter scenario that runs on the local target
  README.md                            how to run it (only when there is none)
  .gitignore                           reports/ (a line added when there is one without it)

It refuses to overwrite a file unless --force; the vendored schema is always rewritten (run
init again after upgrading labrun).`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := "."
			if len(args) == 1 {
				dir = args[0]
			}
			return p.initDir(dir, force)
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "overwrite lab.cue and cue.mod/module.cue if they exist")
	return cmd
}

func (p *process) initDir(dir string, force bool) error {
	abs := dir
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(p.Cwd, dir)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return &exitError{exitInvalid, fmt.Sprintf("init: %v", err)}
	}
	module := moduleName(filepath.Base(abs))
	files := []struct {
		path, content string
		keep          bool // an existing file stays as it is, even with --force
	}{
		{filepath.Join("cue.mod", "module.cue"), fmt.Sprintf("module: %q\nlanguage: version: \"v0.17.0\"\n", module), false},
		{"lab.cue", starterScenario, false},
		{"README.md", starterReadme, true},
	}
	var wrote []string
	for _, f := range files {
		p2 := filepath.Join(abs, f.path)
		if _, err := os.Stat(p2); err == nil {
			if f.keep {
				continue
			}
			if !force {
				return &exitError{exitInvalid, fmt.Sprintf("init: %s exists; labrun init --force overwrites it", relPath(p.Cwd, p2))}
			}
		}
		if err := os.MkdirAll(filepath.Dir(p2), 0o755); err != nil {
			return &exitError{exitInvalid, fmt.Sprintf("init: %v", err)}
		}
		if err := os.WriteFile(p2, []byte(f.content), 0o644); err != nil {
			return &exitError{exitInvalid, fmt.Sprintf("init: %v", err)}
		}
		wrote = append(wrote, f.path)
	}
	// Reports are a run's output, not the lab's source: kept out of git. An existing
	// .gitignore keeps its lines and gets the one it lacks.
	ignore := filepath.Join(abs, ".gitignore")
	had, err := os.ReadFile(ignore)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return &exitError{exitInvalid, fmt.Sprintf("init: %v", err)}
	}
	if !ignoresReports(string(had)) {
		add := "# labrun's reports (labrun run writes them to reports/)\nreports/\n"
		if len(had) > 0 && !strings.HasSuffix(string(had), "\n") {
			add = "\n" + add
		}
		if err := os.WriteFile(ignore, append(had, add...), 0o644); err != nil {
			return &exitError{exitInvalid, fmt.Sprintf("init: %v", err)}
		}
		wrote = append(wrote, ".gitignore")
	}
	// The schema: rewritten every time, so that it matches this labrun.
	vendor := filepath.Join(abs, schemaVendorDir)
	if err := os.RemoveAll(vendor); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return &exitError{exitInvalid, fmt.Sprintf("init: %v", err)}
	}
	if err := os.MkdirAll(vendor, 0o755); err != nil {
		return &exitError{exitInvalid, fmt.Sprintf("init: %v", err)}
	}
	entries, err := schema.Files.ReadDir(".")
	if err != nil {
		return &exitError{exitInfra, fmt.Sprintf("init: the embedded schema: %v", err)}
	}
	for _, e := range entries {
		b, err := schema.Files.ReadFile(e.Name())
		if err != nil {
			return &exitError{exitInfra, fmt.Sprintf("init: the embedded schema: %v", err)}
		}
		if err := os.WriteFile(filepath.Join(vendor, e.Name()), b, 0o644); err != nil {
			return &exitError{exitInvalid, fmt.Sprintf("init: %v", err)}
		}
	}
	wrote = append(wrote, filepath.ToSlash(schemaVendorDir)+"/ (the schema of "+strings.Fields(version())[1]+")")
	rel := relPath(p.Cwd, abs)
	fmt.Fprintf(p.Stdout, "labrun init %s: wrote %s\n", rel, strings.Join(wrote, ", "))
	fmt.Fprintf(p.Stdout, "next: labrun run %s   (and: cue vet ./... in %s)\n", filepath.Join(rel, "lab.cue"), rel)
	return nil
}

// ignoresReports says whether a .gitignore has a line for reports/.
func ignoresReports(gitignore string) bool {
	for _, l := range strings.Split(gitignore, "\n") {
		switch strings.TrimSpace(l) {
		case "reports", "reports/", "/reports", "/reports/":
			return true
		}
	}
	return false
}

var notModuleChar = regexp.MustCompile(`[^a-z0-9-]+`)

// moduleName is a CUE module path for a folder: <folder>.lab.local@v0.
func moduleName(base string) string {
	s := strings.Trim(notModuleChar.ReplaceAllString(strings.ToLower(base), "-"), "-")
	if s == "" {
		s = "lab"
	}
	return s + ".lab.local@v0"
}

const starterScenario = `package lab

import "labrun.dev/schema"

// starter: a local backend that answers 503 to about a fifth of the requests, a load of 50,
// and the backend's own counters before and after. Run it with: labrun run lab.cue
starter: schema.#Scenario & {
	doc: "a backend shedding about 20% of 50 requests with 503 counts exactly what the client saw"
	local: backends: a: {}
	steps: [
		{name: "before", snapshot: backend: "a"},
		{name: "fortio", load: {url: "${backends.a.url}/echo?status=503:20", requests: 50, connections: 2}},
		{name: "after", snapshot: backend: "a"},
	]
	expect: [
		"delta.rq_total == fortio.requests",
		"delta.rq_503 == fortio.code503",
		// The two claims above tie the backend's counts to fortio's; this one bounds what
		// happened: about a fifth (2 to 20 of 50 fails by chance about once in 2,000 runs),
		// so a backend that sheds none or every request fails it (labrun mutate shows it).
		"within(fortio.code503, 2, 20)",
	]
}
`

const starterReadme = `# Lab

Experiments for labrun: run one with ` + "`labrun run lab.cue`" + `, check them without
running with ` + "`labrun vet .`" + ` or ` + "`cue vet ./...`" + `. ` + "`labrun init`" + ` vendored the schema under
cue.mod/pkg/labrun.dev/schema, so CUE's tools and editors resolve ` + "`labrun.dev/schema`" + `; run
` + "`labrun init`" + ` again after upgrading labrun to refresh it.
`
