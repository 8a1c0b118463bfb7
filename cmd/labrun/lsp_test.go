package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	protocol "github.com/tliron/glsp/protocol_3_16"

	"labrun.dev/labrun/cmd/labrun/internal/e2ebin"
	"labrun.dev/labrun/lsp"
	"labrun.dev/labrun/lsp/lsptest"
)

// lspScenario has a misspelled field (requestz, line 10) and a misspelled stat in an
// expectation (rq_totl, line 14); line 10 has non-ASCII text before the field, so that its
// column in UTF-16 units differs from its byte column.
const lspScenario = `package lab

import "labrun.dev/schema"

lab: schema.#Scenario & {
	local: backends: a: address: "127.0.0.2:18480"
	steps: [
		{name: "before", snapshot: backend: "a"},
		{name: "fortio", doc: "café ☕ 𝄞", load: {url: "http://127.0.0.2:18480/echo", requestz: 50}},
		{name: "after", snapshot: backend: "a"},
	]
	expect: [
		"delta.rq_totl == fortio.requests",
		"fortio.code200 > 0",
	]
}
`

// serveLSP runs labrun's language server in-process with the check vet makes.
func serveLSP(t *testing.T, dir string) *lsptest.Client {
	t.Helper()
	p := &process{Stdout: io.Discard, Stderr: io.Discard, Getenv: func(string) string { return "" }, Cwd: dir}
	srv := lsp.New(lsp.Options{Check: p.lspCheck, ReadFile: os.ReadFile, Delay: 20 * time.Millisecond})
	c := lsptest.Pipe(t, srv.Serve)
	c.Initialize(uriOf(dir))
	return c
}

// serveLSPProcess starts `bin lsp` in dir, as an editor does, and connects to it; the test's
// cleanup shuts it down and waits for it.
func serveLSPProcess(t *testing.T, bin, dir string) *lsptest.Client {
	t.Helper()
	cmd := exec.Command(bin, "lsp")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := lsptest.Connect(t, processStream{out, in})
	t.Cleanup(func() {
		c.Shutdown()
		_ = cmd.Wait()
	})
	c.Initialize(uriOf(dir))
	return c
}

func uriOf(path string) string { return "file://" + filepath.ToSlash(path) }

// TestLSPBar is issue 33's bar, driven as an editor drives the server: after didOpen of a
// scenario with a misspelled field and a misspelled stat in an expectation, both diagnostics
// arrive within 2 s at their line and UTF-16 column, and completion inside an expectation
// string offers the scenario's step names and delta.
func TestLSPBar(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "lab.cue")
	if err := os.WriteFile(file, []byte(lspScenario), 0o644); err != nil {
		t.Fatal(err)
	}
	c := serveLSP(t, dir)
	uri := uriOf(file)
	opened := time.Now()
	c.Open(uri, lspScenario)
	pub, ok := c.Diagnostics(uri, 0, 10*time.Second, nil)
	if !ok {
		t.Fatal("no diagnostics published within 10 s")
	}
	if took := pub.At.Sub(opened); took > 2*time.Second {
		t.Errorf("diagnostics took %v, want ≤ 2 s", took)
	}
	got := map[string]protocol.Range{}
	for _, d := range pub.Diagnostics {
		got[d.Message[:min(len(d.Message), 40)]] = d.Range
		t.Logf("%d:%d-%d:%d %s", d.Range.Start.Line, d.Range.Start.Character, d.Range.End.Line, d.Range.End.Character, d.Message)
	}
	if len(pub.Diagnostics) != 2 {
		t.Fatalf("got %d diagnostics, want 2", len(pub.Diagnostics))
	}
	// Line 9 (0-based 8) has "café ☕ 𝄞" before requestz: its UTF-16 column is its byte
	// column less 5 (é is 2 bytes and 1 unit; ☕ 3 bytes, 1 unit; 𝄞 4 bytes, 2 units).
	line := strings.Split(lspScenario, "\n")[8]
	byteCol := strings.Index(line, "requestz")
	want := []struct {
		prefix    string
		line, col uint32
		end       uint32
	}{
		{`unknown field "requestz"`, 8, uint32(byteCol - 5), uint32(byteCol - 5 + 8)},
		{`in expression "delta.rq_totl == fortio.`, 12, 9, 16},
	}
	for _, w := range want {
		var found *protocol.Diagnostic
		for i, d := range pub.Diagnostics {
			if strings.HasPrefix(d.Message, w.prefix) {
				found = &pub.Diagnostics[i]
			}
		}
		if found == nil {
			t.Errorf("no diagnostic %q", w.prefix)
			continue
		}
		r := found.Range
		if r.Start.Line != w.line || r.Start.Character != w.col || r.End.Line != w.line || r.End.Character != w.end {
			t.Errorf("%q at %d:%d-%d:%d, want %d:%d-%d:%d", w.prefix, r.Start.Line, r.Start.Character, r.End.Line, r.End.Character, w.line, w.col, w.line, w.end)
		}
	}
	// Completion inside the second expectation, before "fortio": step names and delta.
	list := c.Completion(uri, 13, 3)
	labels := map[string]bool{}
	for _, it := range list.Items {
		labels[it.Label] = true
	}
	for _, w := range []string{"before", "fortio", "after", "delta"} {
		if !labels[w] {
			t.Errorf("completion in an expectation lacks %q; got %v", w, keysOf(labels))
		}
	}
}

// neovimDir skips the test where Neovim is not installed or under -short (runNeovim builds
// the labrun binary), and returns a directory for its files.
func neovimDir(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("nvim"); err != nil {
		t.Skip("nvim is not installed (Debian: apt-get install neovim)")
	}
	if testing.Short() {
		t.Skip("builds the labrun binary; skipped with -short")
	}
	return t.TempDir()
}

// runNeovim runs the Lua script (testdata/nvim) in a headless Neovim in dir, with the built
// labrun as LABRUN, env added, and returns what the script wrote to OUT.
func runNeovim(t *testing.T, dir, script string, env ...string) string {
	t.Helper()
	bin := e2ebin.BuildTagged(t, ".", "")
	script, err := filepath.Abs(script)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.txt")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "nvim", "--headless", "-u", "NONE", "-c", "luafile "+script)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "LABRUN="+bin, "OUT="+out, "HOME="+dir, "XDG_STATE_HOME="+dir, "XDG_DATA_HOME="+dir), env...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("nvim: %v\n%s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("what Neovim saw:\n%s", b)
	return string(b)
}

func keysOf(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestLSPInNeovim drives the built labrun's server from a real Neovim, headless, with the
// setup docs/editor.md gives (testdata/nvim/lsp.lua): both problems at their columns as
// Neovim decodes them, completion, hover, definition and the quick fix applied.
func TestLSPInNeovim(t *testing.T) {
	dir := neovimDir(t)
	file := filepath.Join(dir, "lab.cue")
	if err := os.WriteFile(file, []byte(lspScenario), 0o644); err != nil {
		t.Fatal(err)
	}
	got := runNeovim(t, dir, "testdata/nvim/lsp.lua", "LAB_FILE="+file)
	line := strings.Split(lspScenario, "\n")[8]
	byteCol := strings.Index(line, "requestz")
	for _, w := range []string{
		"diagnostics arrived true",
		fmt.Sprintf("diagnostic 8:%d-%d unknown field \"requestz\"", byteCol, byteCol+8),
		"diagnostic 12:9-16 in expression \"delta.rq_totl",
		"completion ",
		" after ",
		" before ",
		" delta ",
		" fortio ",
		"hover `fortio`: struct",
		"definition 8:10",
		"action Change rq_totl to rq_total",
		`line 13 now "delta.rq_total == fortio.requests",`,
		"after the fix true 1 diagnostic(s)",
	} {
		if !strings.Contains(got, w) {
			t.Errorf("Neovim did not see %q", w)
		}
	}
}

// BenchmarkLSPGrowth compares, as processes, `labrun vet DIR` with `labrun lsp` publishing
// the diagnostics of a file of DIR (from the process's start to the publication: start-up,
// initialize, didOpen, the check of the file's package). The folder is the growth tree of
// BENCHMARKS.md: LABRUN_GROWTH_DIR=/tmp/g300 LABRUN_GROWTH_FILES=300 go test -run
// WriteGrowthTree ./dsl/, then LABRUN_GROWTH_DIR=/tmp/g300 go test -run '^$' -bench
// LSPGrowth ./cmd/labrun. Issue 33's bar: lsp ≤ 2× vet.
func BenchmarkLSPGrowth(b *testing.B) {
	dir := os.Getenv("LABRUN_GROWTH_DIR")
	if dir == "" {
		b.Skip("LABRUN_GROWTH_DIR not set")
	}
	bin := labrunBinary(b)
	entries, _ := filepath.Glob(filepath.Join(dir, "*.cue"))
	if len(entries) == 0 {
		b.Fatalf("no .cue files in %s", dir)
	}
	file := entries[0]
	b.Run("vet-dir", func(b *testing.B) {
		for b.Loop() {
			vetProcess(b, bin, dir)
		}
	})
	b.Run("vet-file", func(b *testing.B) {
		for b.Loop() {
			vetProcess(b, bin, file)
		}
	})
	b.Run("lsp-open", func(b *testing.B) {
		for b.Loop() {
			cmd := exec.Command(bin, "lsp")
			in, _ := cmd.StdinPipe()
			out, _ := cmd.StdoutPipe()
			if err := cmd.Start(); err != nil {
				b.Fatal(err)
			}
			c := lsptest.Connect(b, processStream{out, in})
			c.Initialize(uriOf(dir))
			src, _ := os.ReadFile(file)
			c.Open(uriOf(file), string(src))
			if _, ok := c.Diagnostics(uriOf(file), 0, 60*time.Second, nil); !ok {
				b.Fatal("no diagnostics within 60 s")
			}
			b.StopTimer()
			c.Shutdown()
			_ = cmd.Wait()
			b.StartTimer()
		}
	})
}

// vetProcess runs labrun vet on path: exit 0, or 2 for problems (the tree may have some:
// both sides check the same).
func vetProcess(b *testing.B, bin, path string) {
	out, err := exec.Command(bin, "vet", path).CombinedOutput()
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == exitInvalid) {
		b.Fatalf("vet: %v\n%s", err, out)
	}
}

// processStream is a child's stdout and stdin as one stream.
type processStream struct {
	io.ReadCloser
	io.WriteCloser
}

func (s processStream) Close() error {
	_ = s.WriteCloser.Close()
	return s.ReadCloser.Close()
}

// TestLSPMarkdownWithoutSpec: the editor attaches the server to every Markdown document
// (docs/editor.md), most of which are no lab: a README with no labrun fence gets no
// problem (as in `labrun vet DIR`, which passes over it), and one with a fence that is
// almost a spec (cue without labrun) gets the hint as a warning, not an error.
func TestLSPMarkdownWithoutSpec(t *testing.T) {
	dir := t.TempDir()
	c := serveLSP(t, dir)
	for _, tc := range []struct {
		name, text string
		want       []protocol.DiagnosticSeverity
	}{
		{"README.md", "# My project\n\nSome text, `code` and a fence:\n\n```sh\nmake\n```\n", nil},
		{"notes.md", "# Notes\n\n```cue\nx: 1\n```\n", []protocol.DiagnosticSeverity{protocol.DiagnosticSeverityWarning}},
	} {
		file := filepath.Join(dir, tc.name)
		if err := os.WriteFile(file, []byte(tc.text), 0o644); err != nil {
			t.Fatal(err)
		}
		uri := uriOf(file)
		n := c.Count()
		c.Open(uri, tc.text)
		pub, ok := c.Diagnostics(uri, n, 10*time.Second, nil)
		if !ok {
			t.Fatalf("%s: no diagnostics published", tc.name)
		}
		var got []protocol.DiagnosticSeverity
		for _, d := range pub.Diagnostics {
			got = append(got, *d.Severity)
			t.Logf("%s: %d:%d %s", tc.name, d.Range.Start.Line, d.Range.Start.Character, d.Message)
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s: severities %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestLSPKitFile: a package's kit (a file of shared definitions, examples/kit.cue) declares
// no scenario; `labrun vet DIR` is ok with it, and so is the editor that opens it, while a
// file alone in its package that declares none keeps the problem.
func TestLSPKitFile(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"kit.cue":       "package lab\n\n_port: 18480\n",
		"lab.cue":       strings.Replace(lspScenario, "18480", `\(_port)`, -1),
		"alone/new.cue": "package other\n\nx: 1\n",
	}
	for name, text := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c := serveLSP(t, dir)
	for _, tc := range []struct {
		name string
		want int
	}{{"kit.cue", 0}, {"alone/new.cue", 1}} {
		uri := uriOf(filepath.Join(dir, filepath.FromSlash(tc.name)))
		n := c.Count()
		c.Open(uri, files[tc.name])
		pub, ok := c.Diagnostics(uri, n, 10*time.Second, nil)
		if !ok {
			t.Fatalf("%s: no diagnostics published", tc.name)
		}
		for _, d := range pub.Diagnostics {
			t.Logf("%s: %d:%d %s", tc.name, d.Range.Start.Line, d.Range.Start.Character, d.Message)
		}
		if len(pub.Diagnostics) != tc.want {
			t.Errorf("%s: %d diagnostics, want %d", tc.name, len(pub.Diagnostics), tc.want)
		}
	}
}
