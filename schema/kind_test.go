package schema

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestEveryKindIsComplete fails when a kind of the registry lacks a part: its Go file, its CUE
// file declaring the kind's field of #Step with a doc comment, a usage line, a constructor.
// The Params interface makes the compiler check the rest (Check, Plan, Needs, Mutates,
// Summary, Run); Result is declared in the Kind literal.
func TestEveryKindIsComplete(t *testing.T) {
	for name, k := range Kinds {
		if k.Usage == "" || strings.Contains(k.Usage, "\n") {
			t.Errorf("%s: usage must be one line, got %q", name, k.Usage)
		}
		if k.New == nil || k.New() == nil {
			t.Errorf("%s: no constructor", name)
			continue
		}
		goSrc, err := os.ReadFile(name + ".go")
		if err != nil {
			t.Errorf("%s: the kind's Go file: %v", name, err)
		} else if !regexp.MustCompile(`(?m)^var ` + name + `Kind = Kind\{`).Match(goSrc) {
			t.Errorf("%s.go does not define %sKind", name, name)
		}
		cueSrc, err := os.ReadFile(name + ".cue")
		if err != nil {
			t.Errorf("%s: the kind's CUE file: %v", name, err)
			continue
		}
		field := regexp.MustCompile(`(?m)^#Step: \{\n\t// ` + name + ` [^\n]+\n(\t//[^\n]*\n)*\t` + name + `\?: `)
		if !field.Match(cueSrc) {
			t.Errorf("%s.cue must open with #Step: { and the documented field %s?: …", name, name)
		}
	}
}

// TestNoKindOutsideTheRegistry fails when a CUE file adds a field to #Step that the registry
// does not know, or when step.cue declares a kind itself.
func TestNoKindOutsideTheRegistry(t *testing.T) {
	files, _ := Files.ReadDir(".")
	fieldRE := regexp.MustCompile(`(?m)^\t(\w+)\?: `)
	for _, f := range files {
		b, _ := Files.ReadFile(f.Name())
		src := string(b)
		i := strings.Index(src, "\n#Step: {\n")
		if i < 0 {
			continue
		}
		end := strings.Index(src[i+1:], "\n}\n")
		body := src[i+1 : i+1+end]
		for _, m := range fieldRE.FindAllStringSubmatch(body, -1) {
			kind := m[1]
			if f.Name() == "step.cue" {
				if _, ok := Kinds[kind]; ok {
					t.Errorf("step.cue declares the kind %s: it belongs in %s.cue", kind, kind)
				}
				continue
			}
			if _, ok := Kinds[kind]; !ok {
				t.Errorf("%s adds %s to #Step, but schema.Kinds has no kind %q", f.Name(), kind, kind)
			}
			if f.Name() != kind+".cue" {
				t.Errorf("%s adds the kind %s: it belongs in %s.cue", f.Name(), kind, kind)
			}
		}
	}
}

// TestCapabilityTexts fails when a capability has no description for errors.
func TestCapabilityTexts(t *testing.T) {
	for _, target := range []string{"local", "kube"} {
		caps, _ := TargetCaps(target, &Local{DNS: &LocalDNS{Zone: "lab.internal"}})
		for c := range caps {
			if capabilityText[c] == "" {
				t.Errorf("capability %s has no description", c)
			}
		}
	}
}
