package dsl

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// FuzzLoad feeds arbitrary bytes to Load as a .cue file and as a Markdown document. Load must
// never panic, and every problem it reports must be placed in the user's file (never in the
// schema) at a real line.
//
//	go test -run '^$' -fuzz FuzzLoad -fuzztime 2m ./dsl/
//
// Crashers are kept under testdata/fuzz/FuzzLoad and replayed by every go test.
func FuzzLoad(f *testing.F) {
	for _, s := range []string{
		"",
		"package lab\n",
		"package lab\n\nimport \"labrun.dev/schema\"\n\ns: schema.#Scenario & {steps: [{sleep: \"1s\"}]}\n",
		"import \"labrun.dev/schema\"\n\ns: schema.#Scenario & {steps: [{slep: \"1s\"}], expect: [\"delta.x ==\"]}\n",
		"s: {_labrunScenario: true, steps: [{parallel: []}]}\n",
		"# doc\n\n```cue labrun\npackage lab\n\nimport \"labrun.dev/schema\"\n\ns: schema.#Scenario & {steps: [{sleep: \"1s\"}]}\n```\n",
		"```cue labrun\n",
		"~~~ cue labrun\na: {\n~~~\n",
	} {
		f.Add([]byte(s))
	}
	// The examples and the CLI's corpus of invalid scenarios are good seeds.
	for _, pattern := range []string{"../examples/*.cue", "../cmd/labrun/testdata/script/invalid_*.txtar"} {
		files, _ := filepath.Glob(pattern)
		for _, file := range files {
			b, err := os.ReadFile(file)
			if err != nil {
				continue
			}
			if strings.HasSuffix(file, ".txtar") {
				b = txtarFile(b, "x.cue")
				if b == nil {
					continue
				}
			}
			f.Add(b)
			f.Add([]byte("# " + file + "\n\n```cue labrun\n" + string(b) + "```\n"))
		}
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		dir := t.TempDir()
		for _, name := range []string{"cue/x.cue", "md/doc.md"} {
			path := filepath.Join(dir, name)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, src, 0o644); err != nil {
				t.Fatal(err)
			}
			res, err := Load([]string{path}, Options{})
			if res == nil {
				t.Fatalf("%s: Load returned no result", name)
			}
			if err == nil {
				continue
			}
			var errs Errors
			if !errors.As(err, &errs) {
				t.Fatalf("%s: Load error is a %T, not Errors: %v", name, err, err)
			}
			for _, e := range errs {
				if strings.Contains(e.Pos.File, "cue.mod") || strings.Contains(e.Pos.File, "labrun-schema") {
					t.Errorf("%s: error placed in the schema: %v", name, e)
				}
				if e.Pos.File != "" && e.Pos.File != path {
					t.Errorf("%s: error placed in another file: %v", name, e)
				}
				if e.Pos.File != "" && e.Pos.Line < 1 {
					t.Errorf("%s: error without a line: %v", name, e)
				}
			}
		}
	})
}

// txtarFile returns the content of the file name in a txtar archive, or nil.
func txtarFile(archive []byte, name string) []byte {
	marker := "-- " + name + " --\n"
	s := string(archive)
	i := strings.Index(s, marker)
	if i < 0 {
		return nil
	}
	s = s[i+len(marker):]
	if j := strings.Index(s, "\n-- "); j >= 0 {
		s = s[:j+1]
	}
	return []byte(s)
}

// FuzzScenario fuzzes the inside of a well-formed scenario: the text of its steps list and one
// expectation, so that most inputs get past the parser into the decoder, the structure checks
// and the expression compiler. Load must never panic.
//
//	go test -run '^$' -fuzz FuzzScenario -fuzztime 2m ./dsl/
func FuzzScenario(f *testing.F) {
	f.Add(`{name: "before", snapshot: backend: "a"}, {name: "after", snapshot: backend: "a"}`, `delta.rq_total > 0`)
	f.Add(`{parallel: [{name: "fortio", load: {url: "${backends.a.url}/", requests: 10}}, {name: "g", every: "100ms", while: "fortio", snapshot: backend: "a"}, {at: "1s", name: "mid", snapshot: backend: "a"}]}`, `g.max.rq_active >= 1 && mid.rq_total > 0`)
	f.Add(`{name: "bg", background: true, sequence: [{sleep: "1s"}, {await: "bg"}]}, {await: ["bg", "x"]}`, `delta("a", "b").x`)
	f.Add(`{name: "r", repeat: {max: 2, until: "e.exit == 0", steps: [{name: "e", exec: {argv: ["true"], capture: "(?P<x>.)"}}]}}`, `e.captured.x == "${e.stdout}"`)
	f.Add(`{name: "old", get: {kind: "Pod", selector: "app=x", path: "status.podIP"}}, {name: "cb", config: {admin: "http://127.0.0.1:1", cluster: "c", path: "a.0"}}`, `old[0] == cb.b && vars.x`)
	f.Add(`{dns: {host: "${vars.h", addresses: ["$${x}", "${}"]}}`, `fortio.code503 ==`)
	f.Add(`{name: "l", logs: file: "a.log"}`, `let r = filter(l.entries, .code == 1); all(r, all(.flags, # != "")) && none(l.lines[1:], # == "") && all(l.entries, len(l.lines) > 0)`)
	f.Fuzz(func(t *testing.T, steps, expect string) {
		src := "package lab\n\nimport \"labrun.dev/schema\"\n\ns: schema.#Scenario & {\n\tlocal: backends: a: {}\n\tvars: h: \"x\"\n\tsteps: [" +
			steps + "]\n\texpect: [" + strconv.Quote(expect) + "]\n}\n"
		path := filepath.Join(t.TempDir(), "x.cue")
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		res, err := Load([]string{path}, Options{Vars: map[string]string{"h": "y"}})
		if res == nil {
			t.Fatal("Load returned no result")
		}
		if err == nil {
			for _, sc := range res.Scenarios {
				_ = PlanOf(sc) // a valid scenario can be planned
			}
		}
	})
}
