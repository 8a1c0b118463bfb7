package dsl

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExprPosInLiterals: an expression's error is placed where its text is written, whatever
// string literal holds it: escapes counted as written, the #s of a #"raw"# string before its
// quote, and a multi-line string's own line and column (its closing quotes' indentation
// added back), for a syntax error as for a type error.
func TestExprPosInLiterals(t *testing.T) {
	const head = "package lab\n\nimport \"labrun.dev/schema\"\n\ns: schema.#Scenario & {\n\tlocal: backends: a: {}\n\tsteps: [\n\t\t{name: \"before\", snapshot: backend: \"a\"},\n\t\t{name: \"fortio\", load: {url: \"${backends.a.url}/echo\", requests: 10}},\n\t\t{name: \"after\", snapshot: backend: \"a\"},\n\t]\n\texpect: [\n"
	// Lines of head: 12; the literal starts on line 13, column 3 (two tabs).
	for _, c := range []struct {
		name, lit, want string
	}{
		{"plain", `"delta.rq_totl == 10"`, "13:10"},
		{"escapes before", `"\"a\" != \"b\" && delta.rq_totl == 10"`, "13:28"},
		{"raw", `#"delta.rq_totl == 10"#`, "13:11"},
		{"raw, two #s", `##"delta.rq_totl == 10"##`, "13:12"},
		{"raw with an escape", `#"'\#u00e9' != '' && delta.rq_totl == 10"#`, "13:30"},
		{"multi-line, second line", "\"\"\"\n\t\t\tfortio.code200 == 10 &&\n\t\t\t  delta.rq_totl == 10\n\t\t\t\"\"\"", "15:12"},
		{"multi-line, syntax error", "\"\"\"\n\t\t\tfortio.code200 == 10 &&\n\t\t\t  fortio.code503 ==== 0\n\t\t\t\"\"\"", "15:23"},
		{"raw multi-line", "#\"\"\"\n\t\t\tdelta.rq_totl == 10\n\t\t\t\"\"\"#", "14:10"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.cue")
			src := head + "\t\t" + c.lit + ",\n\t]\n}\n"
			if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Load([]string{path}, Options{})
			var errs Errors
			if !errors.As(err, &errs) || len(errs) == 0 {
				t.Fatalf("Load: %v; want an error in the expectation", err)
			}
			e := errs[0]
			if got := fmt.Sprintf("%d:%d", e.Pos.Line, e.Pos.Col); got != c.want {
				line := strings.Split(src, "\n")[e.Pos.Line-1]
				t.Errorf("error at %s (%q from there), want %s: %s", got, line[min(e.Pos.Col-1, len(line)):], c.want, e.Msg)
			}
		})
	}
}
