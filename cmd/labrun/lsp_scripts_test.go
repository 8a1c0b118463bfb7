package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/txtar"

	"labrun.dev/labrun/cmd/labrun/internal/e2ebin"
	"labrun.dev/labrun/dsl"
)

// vetLine is a script's command `labrun vet FILE` (no flag: the editor checks as vet does
// without one), FILE a .cue or a Markdown document.
var vetLine = regexp.MustCompile(`(?m)^(?:exec|exits [0-9]+) labrun vet ([^ -][^ ]*\.(?:cue|md))$`)

// lspScriptsApart are the scripts' vet commands whose editor's diagnostics differ from vet's
// on purpose, and why.
var lspScriptsApart = map[string]string{
	"vet_package_files_with_kit/lab/kit.cue": "a package's kit opened alone: the editor does not call it a file with no scenario (TestLSPKitFile)",
}

// TestLSPSaysWhatVetSaysOfScripts: the editor says what vet says of every spec a script of
// testdata/script vets (vetLine; lspScriptsApart says which differ on purpose): newer checks
// (an applied object's shape, inline and in an apply's YAML; the unmatched-labels lint of every
// pod selector; a load's latency where requests failed at the socket; a swept secret's mask)
// are there before the malformed corpus has a case of them. The diagnostics the language
// server publishes when the editor opens the file are what `labrun vet -o json FILE` says, in
// every file it names: the same line, column and message. A problem in a file the spec reads
// (an apply's YAML) is published in that file, and in the spec at the step's file name as
// "FILE:line:col: message" (lsp.readerOf).
func TestLSPSaysWhatVetSaysOfScripts(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the labrun binary; skipped with -short")
	}
	bin := e2ebin.BuildTagged(t, ".", "")
	scripts, err := filepath.Glob("testdata/script/*.txtar")
	if err != nil {
		t.Fatal(err)
	}
	type vetOf struct {
		ar           *txtar.Archive
		script, file string
	}
	var cases []vetOf
	for _, name := range scripts {
		ar, err := txtar.ParseFile(name)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, m := range vetLine.FindAllStringSubmatch(string(ar.Comment), -1) {
			if !seen[m[1]] {
				seen[m[1]] = true
				cases = append(cases, vetOf{ar, strings.TrimSuffix(filepath.Base(name), ".txtar"), m[1]})
			}
		}
	}
	if len(cases) < 100 {
		t.Fatalf("%d vet commands in testdata/script; want at least 100", len(cases))
	}
	for _, sc := range cases {
		t.Run(sc.script+"/"+sc.file, func(t *testing.T) {
			if why := lspScriptsApart[sc.script+"/"+sc.file]; why != "" {
				t.Skip(why)
			}
			ar := sc.ar
			dir := t.TempDir()
			texts := map[string]string{}
			for _, f := range ar.Files {
				p := filepath.Join(dir, filepath.FromSlash(f.Name))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, f.Data, 0o644); err != nil {
					t.Fatal(err)
				}
				texts[p] = string(f.Data)
			}
			path := filepath.Join(dir, filepath.FromSlash(sc.file))
			if _, ok := texts[path]; !ok {
				t.Skip("the script makes the file")
			}
			want := vetSaysByFile(t, bin, dir, sc.file)

			c := serveLSP(t, dir)
			uri := uriOf(path)
			n := c.Count()
			c.Open(uri, texts[path])
			pub, ok := c.Diagnostics(uri, n, time.Minute, nil)
			if !ok {
				t.Fatal("no diagnostics published within a minute")
			}
			got := map[string][]string{}
			for _, d := range pub.Diagnostics {
				got[path] = append(got[path], editorSays(strings.Split(texts[path], "\n"), d))
			}
			for file := range want {
				if file == path {
					continue
				}
				p, ok := c.Diagnostics(uriOf(file), n, 5*time.Second, nil)
				if !ok {
					t.Errorf("nothing published for %s", file)
					continue
				}
				for _, d := range p.Diagnostics {
					got[file] = append(got[file], editorSays(strings.Split(texts[file], "\n"), d))
				}
			}
			for file, says := range want {
				if file == path || strings.HasSuffix(file, ".cue") || strings.HasSuffix(file, ".md") {
					continue // a spec file says its own
				}
				// In the spec at the step's file name: its message only (where the step names
				// the file is the spec's, which vet does not say).
				for _, s := range says {
					pos, rest, _ := strings.Cut(s, " error (0 more) ")
					rel, _ := filepath.Rel(filepath.Dir(path), file)
					want[path] = append(want[path], fmt.Sprintf("error (1 more) %s:%s: %s", rel, pos, rest))
				}
			}
			for _, file := range slices.Sorted(mapKeys(want, got)) {
				w, g := want[file], got[file]
				if file != path || len(want) > 1 {
					g = withoutPos(g, w) // the spec's own notes of a file's problems have the step's position
				}
				slices.Sort(w)
				slices.Sort(g)
				if !slices.Equal(g, w) {
					t.Errorf("%s: the editor says\n\t%s\nvet says\n\t%s", file, strings.Join(g, "\n\t"), strings.Join(w, "\n\t"))
				}
			}
		})
	}
}

// withoutPos drops the position of got's entries that want has without one (the spec's notes
// of a file's problems, placed at the step).
func withoutPos(got, want []string) []string {
	out := make([]string, 0, len(got))
	for _, g := range got {
		if _, rest, ok := strings.Cut(g, " "); ok && slices.Contains(want, rest) {
			g = rest
		}
		out = append(out, g)
	}
	return out
}

func mapKeys(ms ...map[string][]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		seen := map[string]bool{}
		for _, m := range ms {
			for k := range m {
				if !seen[k] {
					seen[k] = true
					if !yield(k) {
						return
					}
				}
			}
		}
	}
}

// vetSaysByFile is vetSays by file (absolute paths): vet's problems and warnings of FILE in
// dir, each written as editorSays writes a diagnostic.
func vetSaysByFile(t *testing.T, bin, dir, file string) map[string][]string {
	t.Helper()
	v := runVetJSON(t, bin, dir, file)
	out := map[string][]string{filepath.Join(dir, file): nil}
	abs := func(p vetPos) string {
		if p.File == "" {
			return filepath.Join(dir, file)
		}
		if filepath.IsAbs(p.File) {
			return p.File
		}
		return filepath.Join(dir, p.File)
	}
	for _, e := range v.Errors {
		if strings.HasPrefix(e.Message, dsl.NoSpecInDocument) && strings.Contains(e.Message, "almost one") {
			// A hint in the editor, as vetSays has it (docs/editor.md).
			out[abs(e.Pos)] = append(out[abs(e.Pos)], fmt.Sprintf("%d:%d warning[skipped] %s", e.Pos.Line, e.Pos.Col, e.Message))
			continue
		}
		out[abs(e.Pos)] = append(out[abs(e.Pos)], fmt.Sprintf("%d:%d error (%d more) %s", e.Pos.Line, e.Pos.Col, len(e.Also), e.Message))
	}
	for _, w := range v.Warnings {
		out[abs(w.Pos)] = append(out[abs(w.Pos)], fmt.Sprintf("%d:%d warning[%s] %s", w.Pos.Line, w.Pos.Col, w.Code, w.Message))
	}
	for f := range out {
		slices.Sort(out[f])
		out[f] = slices.Compact(out[f])
	}
	return out
}
