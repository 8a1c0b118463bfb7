package dsl

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestNestedScenarios: a #Scenario below the top level never runs, wherever it is — in a
// struct, in a list, at any depth — and is refused at its path; one in a hidden field or a
// definition is a kit's template and is left alone.
func TestNestedScenarios(t *testing.T) {
	const sc = `schema.#Scenario & {steps: [{sleep: "1ms"}]}`
	tests := []struct {
		name, src string
		want      []string // the paths refused
	}{
		{"struct", "group: s1: " + sc, []string{"group.s1"}},
		{"list", "all: [" + sc + "]", []string{"all.0"}},
		{"list in struct", "scenarios: x: [" + sc + "]", []string{"scenarios.x.0"}},
		{"struct in list", "all: [{a: " + sc + "}]", []string{"all.0.a"}},
		{"deep", "a: b: [[{c: [" + sc + ", " + sc + "]}]]", []string{"a.b.0.0.c.0", "a.b.0.0.c.1"}},
		{"hidden", "_s: " + sc + "\n_l: [" + sc + "]", nil},
		{"definition", "#s: " + sc + "\n#l: [" + sc + "]", nil},
		{"hidden below", "k: _s: " + sc + "\nk: #d: [" + sc + "]\nk: n: [1, \"two\", {three: 3}]", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			src := "package lab\n\nimport \"labrun.dev/schema\"\n\ntop: " + sc + "\n" + tt.src + "\n"
			if err := os.WriteFile(filepath.Join(dir, "x.cue"), []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := loadErrorPaths(t, dir)
			if !slices.Equal(got, tt.want) {
				t.Errorf("refused %q, want %q (err: %v)", got, tt.want, err)
			}
		})
	}
}
