package docs_test

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"labrun.dev/labrun/schema"
)

// kindTable is docs/language.md's table of step kinds, generated from the registry.
func kindTable() string {
	var b strings.Builder
	b.WriteString("| kind | what it does | what expressions see by its name |\n|---|---|---|\n")
	for _, k := range schema.KindNames() {
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", k, schema.Kinds[k].Usage, schema.Kinds[k].Result.Describe())
	}
	return b.String()
}

// TestKindTable keeps docs/language.md's generated table equal to the registry, and its
// hand-written table naming exactly the registry's kinds.
func TestKindTable(t *testing.T) {
	const begin, end = "<!-- BEGIN step kinds", "<!-- END step kinds -->"
	b, err := os.ReadFile("language.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("language.md has no %q … %q block", begin, end)
	}
	i += strings.Index(doc[i:], "\n") + 1
	if got, want := doc[i:j], kindTable(); got != want {
		if os.Getenv("LABRUN_UPDATE") != "" {
			if err := os.WriteFile("language.md", []byte(doc[:i]+want+doc[j:]), 0o644); err != nil {
				t.Fatal(err)
			}
		} else {
			t.Errorf("language.md's table of step kinds is not the registry's (LABRUN_UPDATE=1 go test ./docs rewrites it):\n got:\n%s\nwant:\n%s", got, want)
		}
	}
	// The hand-written table: its first column names kinds as `kind` or `a` / `b`.
	start := strings.Index(doc, "| kind | what it does |\n")
	var named []string
	for _, line := range strings.Split(doc[start:], "\n")[2:] {
		if !strings.HasPrefix(line, "| `") {
			break
		}
		cell := strings.Split(line, "|")[1]
		for _, m := range regexp.MustCompile("`(\\w+)`").FindAllStringSubmatch(cell, -1) {
			named = append(named, m[1])
		}
	}
	slices.Sort(named)
	if !slices.Equal(named, schema.KindNames()) {
		t.Errorf("language.md's table of steps names %v; the registry has %v", named, schema.KindNames())
	}
}
