package interp_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"labrun.dev/labrun/driver/fakes"
	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/interp"
)

// probeFile registers the probe kind (fakes.Probe) for the test and writes src in a module of the test's own,
// with the kind's CUE beside the schema; it returns the file's path.
func probeFile(t *testing.T, src string) string {
	t.Helper()
	t.Cleanup(fakes.RegisterProbe())
	dir := t.TempDir()
	files := map[string]string{
		"cue.mod/module.cue":                      "module: \"probe.test@v0\"\nlanguage: version: \"v0.17.0\"\n",
		"cue.mod/pkg/labrun.dev/schema/probe.cue": fakes.ProbeCUE,
		"s.cue": "package s\n\nimport \"labrun.dev/schema\"\n\n" + src,
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "s.cue")
}

// loadWithProbe loads src with the probe kind, for a test target (which vet cannot check).
func loadWithProbe(t *testing.T, src string) *dsl.Scenario {
	t.Helper()
	res, err := dsl.Load([]string{probeFile(t, src)}, dsl.Options{Target: "fake"})
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	return res.Scenarios[0]
}

// TestVetRefusesAMissingDriver: on a built-in target that has the capability a step needs but
// not the driver its Run calls (the local target without a DNS zone has no DNS driver), vet
// (and run, which loads the same way) refuses the step at its position, as it refuses a
// missing capability.
func TestVetRefusesAMissingDriver(t *testing.T) {
	p := probeFile(t, "s: schema.#Scenario & {steps: [{probe: {}}]}\n")
	_, err := dsl.Load([]string{p}, dsl.Options{Target: "local"})
	want := p + ":5:33: s.steps.0.probe: a probe step needs the dns driver (for this machine (commands, load and HTTP reads from here)), which the local target does not have"
	if err == nil || err.Error() != want {
		t.Errorf("load: %v\nwant: %s", err, want)
	}
}

// TestMissingDriverIsAnInfraError: a target that claims the capability but lacks the driver
// (a target's bug, not the scenario's) is refused before any step runs, as an
// infrastructure error the record keeps, never a nil call.
func TestMissingDriverIsAnInfraError(t *testing.T) {
	sc := loadWithProbe(t, "s: schema.#Scenario & {steps: [{name: \"srv\", process: argv: [\"x\"]}, {probe: {}}]}\n")
	w := &fakes.World{}
	tg := w.Target()
	tg.DNS = nil
	rec := interp.New(tg).Run(context.Background(), context.Background(), sc)
	if rec.Outcome != interp.Errored {
		t.Errorf("outcome %s, want %s", rec.Outcome, interp.Errored)
	}
	if want := "a probe step needs the dns driver"; !strings.Contains(rec.Error, want) {
		t.Errorf("error %q, want it to say %q", rec.Error, want)
	}
	if len(w.Calls()) != 0 {
		t.Errorf("calls %q: nothing may run before the refusal", w.Calls())
	}
}

// TestMissingDriverAfterInterpolation: a step whose ${...} decide what it needs is checked
// again when it starts: an infrastructure error, the cleanup runs, and the record says why.
func TestMissingDriverAfterInterpolation(t *testing.T) {
	sc := loadWithProbe(t, `s: schema.#Scenario & {
	vars: via: "dns"
	steps: [{name: "srv", process: argv: ["x"]}, {probe: via: "${vars.via}"}]
}
`)
	w := &fakes.World{}
	tg := w.Target()
	tg.DNS = nil
	rec := interp.New(tg).Run(context.Background(), context.Background(), sc)
	if rec.Outcome != interp.Errored || !strings.Contains(rec.Error, "a probe step needs the dns driver") {
		t.Errorf("outcome %s, error %q: want an error naming the missing driver", rec.Outcome, rec.Error)
	}
	if !slices.Contains(w.Calls(), "stop srv TERM") {
		t.Errorf("calls %q: the cleanup must stop the process the run started", w.Calls())
	}
}

// TestStepPanicIsAnInfraError: a panic inside a step's Run ends the run as an infrastructure
// error, not labrun: the cleanup removes what the run created, and the record keeps the error
// and the stack (the step's panic.txt).
func TestStepPanicIsAnInfraError(t *testing.T) {
	sc := loadWithProbe(t, "s: schema.#Scenario & {steps: [{name: \"srv\", process: argv: [\"x\"]}, {probe: panic: true}], expect: [\"ended.srv >= 0\"]}\n")
	w := &fakes.World{}
	rec := interp.New(w.Target()).Run(context.Background(), context.Background(), sc)
	if rec.Outcome != interp.Errored {
		t.Errorf("outcome %s, want %s", rec.Outcome, interp.Errored)
	}
	if want := "the probe step panicked (a bug in labrun"; !strings.Contains(rec.Error, want) || !strings.Contains(rec.Error, "nil map") {
		t.Errorf("error %q, want it to say %q and the panic's value", rec.Error, want)
	}
	if !slices.Contains(w.Calls(), "stop srv TERM") {
		t.Errorf("calls %q: the cleanup must stop the process the run started", w.Calls())
	}
	i := slices.IndexFunc(rec.Artifacts, func(a *interp.ArtifactRecord) bool { return a.Name == "panic.txt" })
	if i < 0 || !strings.Contains(string(rec.Artifacts[i].Data), "fakes.(*Probe).Run") {
		t.Errorf("no panic.txt artifact with the stack through probe.Run")
	}
}
