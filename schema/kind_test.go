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
		spec, _ := BuiltinTarget(target, &Local{DNS: &LocalDNS{Zone: "lab.internal"}})
		for c := range spec.Caps {
			if capabilityText[c] == "" {
				t.Errorf("capability %s has no description", c)
			}
		}
	}
}

// TestNeedsNameADriver: what a step needs of its target is a capability and the driver its Run
// calls for it, both or neither, for every kind and every branch of its Needs: a capability
// without a driver would pass vet on a target without that driver, and the run would call
// nil.
func TestNeedsNameADriver(t *testing.T) {
	known := Drivers{DriverCluster: true, DriverExec: true, DriverLoad: true, DriverStats: true,
		DriverLogs: true, DriverDNS: true, DriverProcesses: true}
	check := func(what string, p Params) {
		need := p.Needs()
		switch {
		case (need.Cap == "") != (need.Driver == ""):
			t.Errorf("%s: Needs() = %+v: a capability and a driver, or neither", what, need)
		case need.Driver != "" && !known[need.Driver]:
			t.Errorf("%s: Needs() names driver %q, which is no field of Target", what, need.Driver)
		case need.Cap != "" && capabilityText[need.Cap] == "":
			t.Errorf("%s: Needs() names capability %q, which has no description", what, need.Cap)
		}
	}
	for _, name := range KindNames() {
		check(name, Kinds[name].New())
	}
	pod := PodRef{Pod: "p"}
	for what, p := range map[string]Params{
		"exec in a pod":     &Exec{Pod: "p"},
		"load from a pod":   &Load{From: &LoadFrom{PodRef: pod}},
		"snapshot envoy":    &Snapshot{Envoy: &pod},
		"snapshot backend":  &Snapshot{Backend: "a"},
		"snapshot admin":    &Snapshot{Admin: "http://127.0.0.1:15000"},
		"config envoy":      &Config{Envoy: &pod},
		"config admin":      &Config{Admin: "http://127.0.0.1:15000"},
		"logs of a process": &Logs{Process: "srv"},
		"logs of a file":    &Logs{File: "x.log"},
		"logs of a pod":     &Logs{PodRef: pod},
		"dns of a server":   &DNS{Server: &HostsFile{}},
		"kill a process":    &Kill{Process: "srv"},
		"kill a pod":        &Kill{Pod: "p"},
		"wait until":        &Wait{Until: "true"},
		"wait rollout":      &Wait{Rollout: "d"},
	} {
		check(what, p)
	}
}

// TestBuiltinTargetDrivers: a built-in target's drivers serve its capabilities: every kind
// whose capability it has finds the driver it needs.
func TestBuiltinTargetDrivers(t *testing.T) {
	for _, target := range []string{"local", "kube"} {
		spec, _ := BuiltinTarget(target, &Local{DNS: &LocalDNS{Zone: "lab.internal"}})
		for _, name := range KindNames() {
			need := Kinds[name].New().Needs()
			if spec.Caps[need.Cap] && !spec.Drivers[need.Driver] {
				t.Errorf("%s target: has %s but not the %s driver a %s step calls for it", target, need.Cap, need.Driver, name)
			}
		}
	}
}
