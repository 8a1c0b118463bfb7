package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	protocol "github.com/tliron/glsp/protocol_3_16"

	"labrun.dev/labrun/cmd/labrun/internal/e2ebin"
	"labrun.dev/labrun/dsl"
)

// TestLSPSaysWhatVetSays: the editor says what vet says. For every case of testdata/malformed,
// each alone in a directory as TestMalformed judges it, the diagnostics that the built labrun's
// language server publishes over stdio when an editor opens the file are the problems and
// warnings of `labrun vet -o json FILE`: at the same line and column (the diagnostic's UTF-16
// column turned back into bytes), with the same message, code and number of other places.
func TestLSPSaysWhatVetSays(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the labrun binary and runs vet and the language server on every malformed case; skipped with -short")
	}
	const dir = "testdata/malformed"
	cases := readMalformedCases(t, dir)
	bin := e2ebin.BuildTagged(t, ".", "")

	root := t.TempDir()
	c := serveLSPProcess(t, bin, root)

	for _, mc := range cases {
		t.Run(mc.file, func(t *testing.T) {
			if mc.category == "encoding" {
				// An editor's text is Unicode: a file that is not UTF-8 reaches the server
				// decoded (JSON carries no invalid byte), and vet's problem with its bytes
				// cannot be the editor's.
				t.Skip("the editor's text of a file that is not UTF-8 is not the file's")
			}
			work := filepath.Join(root, strings.TrimSuffix(strings.TrimSuffix(mc.file, ".cue"), ".md"))
			if err := os.Mkdir(work, 0o755); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(mc.path)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(work, mc.file)
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			want := vetSays(t, bin, work, mc.file)

			uri := uriOf(path)
			n := c.Count()
			c.Open(uri, string(data))
			pub, ok := c.Diagnostics(uri, n, time.Minute, nil)
			if !ok {
				t.Fatal("no diagnostics published within a minute")
			}
			c.Close(uri)
			var got []string
			lines := strings.Split(string(data), "\n")
			for _, d := range pub.Diagnostics {
				got = append(got, editorSays(lines, d))
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("the editor says\n\t%s\nvet says\n\t%s", strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
			}
		})
	}
}

// vetPos is a position in `labrun vet -o json`'s output.
type vetPos struct {
	File      string
	Line, Col int
}

// vetOutput is what `labrun vet -o json` writes: its problems and warnings.
type vetOutput struct {
	Errors []struct {
		Pos     vetPos
		Message string
		Also    []vetPos
	}
	Warnings []struct {
		Pos           vetPos
		Code, Message string
	}
}

// runVetJSON runs `labrun vet -o json FILE` in dir and decodes what it writes.
func runVetJSON(t *testing.T, bin, dir, file string) vetOutput {
	t.Helper()
	cmd := exec.Command(bin, "vet", "-o", "json", file)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	stdout, err := cmd.Output()
	if code := exitCodeOf(err); code != 0 && code != exitInvalid {
		t.Fatalf("vet: %v\n%s", err, stdout)
	}
	var v vetOutput
	if err := json.Unmarshal(stdout, &v); err != nil {
		t.Fatalf("vet -o json: %v\n%s", err, stdout)
	}
	return v
}

// vetSays runs `labrun vet -o json FILE` in dir and returns its problems and warnings as
// editorSays writes diagnostics, sorted.
func vetSays(t *testing.T, bin, dir, file string) []string {
	t.Helper()
	v := runVetJSON(t, bin, dir, file)
	at := func(p vetPos) string {
		if p.Line == 0 {
			return "1:1"
		}
		return fmt.Sprintf("%d:%d", p.Line, p.Col)
	}
	var out []string
	for _, e := range v.Errors {
		if strings.HasPrefix(e.Message, dsl.NoSpecInDocument) && strings.Contains(e.Message, "almost one") {
			// docs/editor.md: the editor opens every Markdown document, and one whose fences
			// are only almost a spec gets vet's problem as a hint (a warning), as a document
			// found in a directory does.
			out = append(out, fmt.Sprintf("%s warning[skipped] %s", at(e.Pos), e.Message))
			continue
		}
		out = append(out, fmt.Sprintf("%s error (%d more) %s", at(e.Pos), len(e.Also), e.Message))
	}
	for _, w := range v.Warnings {
		out = append(out, fmt.Sprintf("%s warning[%s] %s", at(w.Pos), w.Code, w.Message))
	}
	slices.Sort(out)
	// The server publishes a problem said twice at one place once (a comprehension's steps
	// share their text): so does this.
	return slices.Compact(out)
}

// editorSays writes a diagnostic as vetSays writes vet's: its start as line:column in bytes.
func editorSays(lines []string, d protocol.Diagnostic) string {
	l := int(d.Range.Start.Line)
	col := 0
	if l < len(lines) {
		units := 0
		for _, r := range lines[l] {
			if units >= int(d.Range.Start.Character) {
				break
			}
			units += len(utf16.Encode([]rune{r}))
			col += utf8.RuneLen(r)
		}
	}
	sev := "error"
	if d.Severity != nil && *d.Severity == protocol.DiagnosticSeverityWarning {
		sev = "warning"
	}
	if sev == "error" {
		return fmt.Sprintf("%d:%d error (%d more) %s", l+1, col+1, len(d.RelatedInformation), d.Message)
	}
	code := ""
	if d.Code != nil {
		code = fmt.Sprint(d.Code.Value)
	}
	return fmt.Sprintf("%d:%d warning[%s] %s", l+1, col+1, code, d.Message)
}
