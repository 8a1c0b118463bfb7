package interp

import (
	"testing"

	"labrun.dev/labrun/dsl"
)

// TestArtifactWriterAfterTheRunEnded: a step its runner no longer waits for (abandoned past its
// timeout) that asks for an artifact once the run closed its writers (an exec's exit.txt, written
// as the command returns, cut) gets a closed writer: its artifact is not listed in the record
// already made, nor written beside it.
func TestArtifactWriterAfterTheRunEnded(t *testing.T) {
	ru := &run{Runner: &Runner{}, rec: &Record{}, redact: NewRedactor(&dsl.Scenario{})}
	rt := &stepRuntime{ru: ru, s: &dsl.Step{Name: "x"}}
	before := rt.ArtifactWriter("stdout.txt")
	if _, err := before.Write([]byte("hi\n")); err != nil {
		t.Fatal(err)
	}
	ru.closeWriters()
	late := rt.ArtifactWriter("exit.txt")
	if _, err := late.Write([]byte("cut\n")); err == nil {
		t.Error("a writer asked for after the run closed its writers took a write")
	}
	late.Close()
	if len(ru.rec.Artifacts) != 1 || ru.rec.Artifacts[0].Name != "stdout.txt" {
		t.Errorf("the record lists %v, want stdout.txt alone", ru.rec.Artifacts)
	}
}
