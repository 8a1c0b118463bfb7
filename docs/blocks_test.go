package docs_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"
	cueerrors "cuelang.org/go/cue/errors"
	"cuelang.org/go/cue/load"

	"labrun.dev/labrun/dsl"
)

// TestReadingBlocksAgainstSchema checks the CUE blocks the documents show for reading (```cue
// fences that are no spec, which `labrun doc` does not run) against the schema: a field the
// schema does not have (a misspelling, a field renamed since) or a value of the wrong type is
// an error at the block's line in the document. Blocks are fragments, so each is read as what
// it starts with: a step (`{name: ..., exec: ...}`) as a schema.#Step, fields of a scenario
// (`steps: [...]`) inside a schema.#Scenario, a block that declares its own scenarios
// (`s2: schema.#Scenario & {...}`) as written; values left open (`[...]`) and names the
// fragment takes from elsewhere (`lab.client`, a kit's `#ApplyDR`) are not judged, only what
// the block writes. Copies of files (a fence naming the file) are held to the files by their
// own tests.
func TestReadingBlocksAgainstSchema(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	docs, _ := filepath.Glob("*.md")
	docs = append(docs, filepath.Join("..", "README.md"))
	checked := 0
	for _, md := range docs {
		src, err := os.ReadFile(md)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range dsl.Fences(src) {
			if f.Lang() != "cue" || f.IsSpec() || namesFile(root, f.Info) {
				continue
			}
			checked++
			for _, msg := range checkBlock(t, root, f.Content) {
				line := f.Line // the fence's; a message that has the block's line says it
				if m := blockLine.FindStringSubmatch(msg); m != nil {
					n, _ := strconv.Atoi(m[1])
					line += n
				}
				t.Errorf("%s:%d: a block shown for reading (```%s at line %d) does not hold against the schema: %s", md, line, f.Info, f.Line, msg)
			}
		}
	}
	t.Logf("checked %d reading blocks", checked)
	if checked < 10 {
		t.Errorf("checked %d reading blocks, want the documents' (at least 10): did the fences move?", checked)
	}
}

// TestReadingBlocksCheckFails: the check finds a misspelled field and a wrong type in each
// shape of block (a step, a scenario's fields, a block of scenarios), and only those.
func TestReadingBlocksCheckFails(t *testing.T) {
	root, _ := filepath.Abs("..")
	for _, c := range []struct{ block, want string }{
		{`{name: "routes", exec: {argv: ["true"], envv: A: "1"}}`, "envv: field not allowed (block line 1)"},
		{"steps: [\n\t{name: \"a\", sleep: 3},\n]\n", "(mismatched types int and string) (block line 2)"},
		{"s2: schema.#Scenario & {\n\tsteps: [{name: \"x\", snapshot: {envoy: lab.client, clustr: \"c\"}}]\n}\n", "clustr: field not allowed (block line 2)"},
		{"s2: schema.#Scenario & {\n\tsteps: [{name: \"x\", snapshot: {envoy: lab.client, cluster: \"c\"}}, ...]\n}\n", ""},
	} {
		got := strings.Join(checkBlock(t, root, c.block), "; ")
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("block %q: got %q, want %q", c.block, got, c.want)
		}
	}
}

// namesFile reports whether a fence's info string names a file of the repository (a copy
// shown for reading: "cue examples/quickstart.cue").
func namesFile(root, info string) bool {
	for _, w := range strings.Fields(info)[1:] {
		if _, err := os.Stat(filepath.Join(root, w)); err == nil && strings.HasSuffix(w, ".cue") {
			return true
		}
	}
	return false
}

var (
	notFound  = regexp.MustCompile(`reference "([^"]+)" not found`)
	blockLine = regexp.MustCompile(`\(block line (\d+)\)$`)
)

// checkBlock builds a reading block against the schema, as the test's doc says, and returns
// its errors (messages with the block's own line).
func checkBlock(t *testing.T, root, block string) []string {
	t.Helper()
	first := ""
	for _, l := range strings.Split(block, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "//") {
			first = l
			break
		}
	}
	head := "package docblock\n\nimport \"labrun.dev/schema\"\n\n"
	prefix, suffix := "", ""
	switch {
	case strings.HasPrefix(first, "package "):
		head = ""
	case strings.HasPrefix(first, "{"):
		prefix = "block: schema.#Step & "
	case strings.Contains(block, "schema.#Scenario"):
	default:
		prefix, suffix = "block: schema.#Scenario & {\n", "\n}\n"
	}
	body := prefix + block + suffix
	offset := strings.Count(head+prefix, "\n") // the built file's lines before the block's first
	declared := map[string]bool{}
	dir := filepath.Join(root, "docs", "zz_docblock")
	for range 20 {
		extra := ""
		for n := range declared {
			extra += fmt.Sprintf("\n%s: _\n", n)
		}
		src := head + body + extra
		insts := load.Instances([]string{"."}, &load.Config{Dir: dir, Overlay: map[string]load.Source{filepath.Join(dir, "block.cue"): load.FromString(src)}})
		if len(insts) != 1 || insts[0].Err != nil {
			return []string{fmt.Sprint(insts[0].Err)}
		}
		v := cuecontext.New().BuildInstance(insts[0])
		errs := cueerrors.Errors(v.Err())
		if len(errs) == 0 {
			errs = cueerrors.Errors(v.Validate(cue.Concrete(false)))
		}
		var out []string
		more := false
		for _, e := range errs {
			if m := notFound.FindStringSubmatch(e.Error()); m != nil {
				name := strings.SplitN(m[1], ".", 2)[0]
				if !declared[name] {
					declared[name], more = true, true
				}
				continue
			}
			msg := e.Error()
			for _, p := range cueerrors.Positions(e) {
				if strings.HasSuffix(p.Filename(), "block.cue") && p.Line() > offset {
					msg += fmt.Sprintf(" (block line %d)", p.Line()-offset)
					break
				}
			}
			out = append(out, msg)
		}
		if !more {
			return out
		}
	}
	return []string{"names left unresolved after 20 rounds"}
}
