package dsl

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf16"
)

// TestUnreadableText: a file saved in UTF-16 or with lines ending in a carriage return alone
// is refused at 1:1 with what labrun reads and how to convert it, named on its own, found in
// a directory, as a .cue file or a Markdown document. Before, UTF-16 gave a CUE error per
// byte (a document: "no labrun spec"), and CR-only lines a syntax error at column 19 of the
// file's one line. UTF-8 with a byte order mark and CRLF line endings load.
func TestUnreadableText(t *testing.T) {
	const spec = "package lab\n\nimport \"labrun.dev/schema\"\n\ns: schema.#Scenario & {\n\tsteps: [{name: \"a\", sleep: \"1ms\"}]\n}\n"
	const doc = "# Notes\n\n```cue labrun\n" + spec + "```\n"
	utf16le := func(s string, bom bool) []byte {
		var b []byte
		if bom {
			b = append(b, 0xff, 0xfe)
		}
		for _, u := range utf16.Encode([]rune(s)) {
			b = binary.LittleEndian.AppendUint16(b, u)
		}
		return b
	}
	utf16be := func(s string) []byte {
		b := []byte{0xfe, 0xff}
		for _, u := range utf16.Encode([]rune(s)) {
			b = binary.BigEndian.AppendUint16(b, u)
		}
		return b
	}
	for _, c := range []struct {
		name, file string
		src        []byte
		inDir      bool
		want       string // "" when it loads
	}{
		{"UTF-16LE with its mark", "s.cue", utf16le(spec, true), false, "in UTF-16"},
		{"UTF-16BE with its mark", "s.cue", utf16be(spec), false, "in UTF-16"},
		{"UTF-16LE without a mark", "s.cue", utf16le(spec, false), false, "looks like UTF-16"},
		{"UTF-16 document", "d.md", utf16le(doc, true), false, "in UTF-16"},
		{"UTF-16 in a directory", "s.cue", utf16le(spec, true), true, "in UTF-16"},
		{"CR-only lines", "s.cue", []byte(strings.ReplaceAll(spec, "\n", "\r")), false, "carriage return alone"},
		{"CR-only document", "d.md", []byte(strings.ReplaceAll(doc, "\n", "\r")), false, "carriage return alone"},
		{"CR-only in a directory", "d.md", []byte(strings.ReplaceAll(doc, "\n", "\r")), true, "carriage return alone"},
		{"CRLF lines load", "s.cue", []byte(strings.ReplaceAll(spec, "\n", "\r\n")), false, ""},
		{"UTF-8 with its mark loads", "s.cue", append([]byte("\ufeff"), spec...), false, ""},
		{"CRLF document loads", "d.md", []byte(strings.ReplaceAll(doc, "\n", "\r\n")), false, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, c.file)
			if err := os.WriteFile(path, c.src, 0o644); err != nil {
				t.Fatal(err)
			}
			arg := path
			if c.inDir {
				arg = dir
			}
			_, err := Load([]string{arg}, Options{})
			if c.want == "" {
				if err != nil {
					t.Fatalf("Load: %v; want it to load", err)
				}
				return
			}
			var errs Errors
			if !errors.As(err, &errs) || len(errs) != 1 {
				t.Fatalf("Load: %v; want one error", err)
			}
			e := errs[0]
			if e.Pos.File != path || e.Pos.Line != 1 || e.Pos.Col != 1 || !strings.Contains(e.Msg, c.want) || !strings.Contains(e.Msg, "save it") {
				t.Errorf("error %s:%d:%d: %s; want %s:1:1 saying %q and how to save it", e.Pos.File, e.Pos.Line, e.Pos.Col, e.Msg, path, c.want)
			}
		})
	}
}

// TestUnreadableSibling: a UTF-16 file beside a named file is left out with what it is,
// not with a CUE error per byte of its package clause.
func TestUnreadableSibling(t *testing.T) {
	dir := t.TempDir()
	named := filepath.Join(dir, "s.cue")
	src := "package lab\n\nimport \"labrun.dev/schema\"\n\ns: schema.#Scenario & {\n\tsteps: [{name: \"a\", sleep: \"1ms\"}]\n}\n"
	if err := os.WriteFile(named, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "t.cue"), []byte{0xff, 0xfe, 'p', 0, 'a', 0}, 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Load([]string{named}, Options{})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if len(res.Skipped) != 1 || !strings.Contains(res.Skipped[0].Msg, "in UTF-16") {
		t.Errorf("skipped %v; want t.cue, saying it is in UTF-16", res.Skipped)
	}
}
