package main

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"

	"cuelang.org/go/cue/parser"
	"github.com/spf13/cobra"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/envoy/xdstype"
	"labrun.dev/labrun/lsp"
)

func newLSPCmd(p *process) *cobra.Command {
	return &cobra.Command{
		Use:   "lsp",
		Short: "Serve the Language Server Protocol on stdin and stdout: vet's problems, completion and hover in an editor",
		Long: `lsp is labrun's language server, for editors (docs/editor.md says how to set one up). It
speaks the Language Server Protocol on stdin and stdout, and says nothing else there.

On opening, changing and saving a .cue file or a Markdown document it makes the checks of
labrun vet FILE, with the editor's unsaved text in place of the files on disk, and publishes
every problem and warning at its range. Inside expressions (expect, assert, until) and ${...}
it completes the names a step can read at its point of the timeline, their result fields,
stat names, vars and functions, and explains them on hover; definition goes from a name to
its step; a problem's "did you mean" is a quick fix. Outside expressions it completes step
kinds and the schema's fields.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			version := "(devel)"
			if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
				version = bi.Main.Version
			}
			srv := lsp.New(lsp.Options{Check: p.lspCheck, ReadFile: os.ReadFile, Log: p.Stderr, Version: version, Values: completeValue})
			out := p.Stdout
			if p.rawStdout != nil {
				// The protocol's messages, each after its Content-Length: the hiding of
				// secrets rewrote a message that quoted a swept secret into one of another
				// length, and the stream broke. lspCheck hides them in what it says.
				out = p.rawStdout
			}
			return srv.Serve(context.Background(), stdio{p.Stdin, out})
		},
	}
}

// stdio is the server's stream: stdin and stdout, left open (the process ends with it).
type stdio struct {
	io.Reader
	io.Writer
}

func (stdio) Close() error { return nil }

// lspCheck makes vet's checks of one file (what `labrun vet FILE` makes, on its default
// target and budget) with the editor's documents in place of the files on disk.
func (p *process) lspCheck(path string, overlay map[string][]byte) (rep *lsp.Report) {
	opts := dsl.Options{Vars: map[string]string{}, Budget: dsl.DefaultBudget, Overlay: overlay, Partial: true}
	p.secrets.takeBase()
	w, errs, err := p.collect(io.Discard, []string{path}, opts, expansion{vet: true, matrix: matrixFlags{count: 1}})
	// The secrets of the matrices this check expanded, hidden as vet's output hides them (a
	// combination's problem names its swept secret: "(with token=[secret token #2])").
	hide := p.secrets.takeBase()
	if err != nil {
		return &lsp.Report{Failed: errors.New(hide.String(err.Error()))}
	}
	if hide != nil {
		defer func() {
			// Copies: a load's problems and warnings may be shared with a later load's.
			for i, e := range rep.Problems {
				c := *e
				c.Msg = hide.String(e.Msg)
				rep.Problems[i] = &c
			}
			for i, e := range rep.Skipped {
				c := *e
				c.Msg = hide.String(e.Msg)
				rep.Skipped[i] = &c
			}
			ws := make([]*dsl.Warning, len(rep.Warnings))
			for i, w := range rep.Warnings {
				c := *w
				c.Msg = hide.String(w.Msg)
				ws[i] = &c
			}
			rep.Warnings = ws
		}()
	}
	abs := func(pos dsl.Pos) dsl.Pos {
		if pos.IsValid() && !filepath.IsAbs(pos.File) {
			pos.File = filepath.Join(p.Cwd, pos.File)
		}
		return pos
	}
	if len(errs) == 0 && w.res != nil && dsl.IsMarkdown(path) {
		// The tolerance lines of the document's expected blocks, as vet compiles them after
		// its load (expand): the editor said nothing of them.
		read := func(f string) ([]byte, error) {
			if b, ok := overlay[f]; ok {
				return b, nil
			}
			return os.ReadFile(f)
		}
		errs = p.toleranceErrorsOf([]string{path}, w.res.Scenarios, read)
	}
	rep = &lsp.Report{}
	noSpec := dsl.IsMarkdown(path) && !hasSpec(path, overlay)
	for _, e := range errs {
		if strings.HasPrefix(e.Msg, dsl.NoScenarioInFile) && abs(e.Pos).File == path && hasPackageMates(path, overlay) {
			// A package's kit (shared definitions), opened to be edited: labrun vet DIR is
			// ok with it, as vet is with the package's files named together.
			continue
		}
		if noSpec && strings.HasPrefix(e.Msg, dsl.NoSpecInDocument) {
			// An editor opens every Markdown document, most of which are no lab: as in a
			// directory, one with no labrun fence is passed over, and a fence that is
			// almost one (cue without labrun) is a hint, not a problem.
			if strings.Contains(e.Msg, "almost one") {
				w := *e
				w.Pos = abs(e.Pos)
				rep.Skipped = append(rep.Skipped, &w)
			}
			continue
		}
		c := *e
		c.Pos = abs(e.Pos)
		c.Also = nil
		for _, a := range e.Also {
			c.Also = append(c.Also, abs(a))
		}
		rep.Problems = append(rep.Problems, &c)
	}
	if res := w.res; res != nil {
		rep.Warnings = res.Warnings
		rep.Skipped = append(rep.Skipped, res.Skipped...)
		rep.Scenarios = append(append(rep.Scenarios, res.Scenarios...), res.Partial...)
	}
	return rep
}

// hasSpec reports whether the Markdown document at path (the editor's text, else the file's)
// has a labrun fence.
func hasSpec(path string, overlay map[string][]byte) bool {
	doc, ok := overlay[path]
	if !ok {
		var err error
		if doc, err = os.ReadFile(path); err != nil {
			return true // let the check say what is wrong with it
		}
	}
	return slices.ContainsFunc(dsl.Fences(doc), dsl.Fence.IsSpec)
}

// hasPackageMates reports whether the CUE file at path has other files of its package in its
// directory (the editor's text of each, else the file's).
func hasPackageMates(path string, overlay map[string][]byte) bool {
	read := func(p string) []byte {
		if b, ok := overlay[p]; ok {
			return b
		}
		b, _ := os.ReadFile(p)
		return b
	}
	pkgOf := func(p string) string {
		f, err := parser.ParseFile(p, read(p), parser.PackageClauseOnly)
		if err != nil {
			return ""
		}
		return f.PackageName()
	}
	pkg := pkgOf(path)
	if pkg == "" {
		return false
	}
	dir := filepath.Dir(path)
	others := map[string]bool{}
	if entries, err := os.ReadDir(dir); err == nil {
		for _, e := range entries {
			others[filepath.Join(dir, e.Name())] = true
		}
	}
	for p := range overlay {
		if filepath.Dir(p) == dir {
			others[p] = true
		}
	}
	for p := range others {
		if p != path && strings.HasSuffix(p, ".cue") && pkgOf(p) == pkg {
			return true
		}
	}
	return false
}

// completeValue completes a config step's path against Envoy's types: of the resource the
// step reads (its cluster, listener, route or endpoints field), the whole dump without one.
func completeValue(kind, field, written string, siblings map[string]bool) []string {
	if kind != "config" || field != "path" || siblings["names"] {
		return nil
	}
	resource := "dump"
	for _, r := range []string{"cluster", "listener", "route", "endpoints"} {
		if siblings[r] {
			resource = r
		}
	}
	return xdstype.Complete(resource, written)
}
