package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"
	"cuelang.org/go/cue/load"
)

// cueVet does what `cue vet ./...` does in dir, through CUE's own loader and without labrun's
// overlay: load the packages as the cue command would (cue.mod and all), build, validate.
func cueVet(t *testing.T, dir string) error {
	t.Helper()
	ctx := cuecontext.New()
	for _, inst := range load.Instances([]string{"./..."}, &load.Config{Dir: dir}) {
		if inst.Err != nil {
			return inst.Err
		}
		v := ctx.BuildInstance(inst)
		if err := v.Err(); err != nil {
			return err
		}
		if err := v.Validate(cue.Concrete(false)); err != nil {
			return err
		}
	}
	return nil
}

// TestInitCueVet: in a folder labrun init made, CUE's tools resolve labrun.dev/schema and
// enforce it (a misspelled field is refused); in a bare folder they cannot import it.
func TestInitCueVet(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	p := &process{Stdout: &out, Stderr: &out, Cwd: dir, Getenv: func(string) string { return "" }}
	if err := p.initDir("mylab", false); err != nil {
		t.Fatal(err)
	}
	lab := filepath.Join(dir, "mylab")
	if err := cueVet(t, lab); err != nil {
		t.Fatalf("cue vet of the folder labrun init made: %v", err)
	}
	cueBin, lookErr := exec.LookPath("cue")
	if lookErr == nil {
		cmd := exec.Command(cueBin, "vet", "./...")
		cmd.Dir = lab
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("the cue command refuses the folder labrun init made: %v\n%s", err, b)
		}
	}
	// The schema is really enforced: a misspelled field is refused.
	src, _ := os.ReadFile(filepath.Join(lab, "lab.cue"))
	os.WriteFile(filepath.Join(lab, "lab.cue"), bytes.Replace(src, []byte("requests: 50"), []byte("requestz: 50"), 1), 0o644)
	if err := cueVet(t, lab); err == nil || !strings.Contains(err.Error(), "requestz") {
		t.Errorf("cue vet accepts a misspelled field: %v", err)
	}
	// Without init there is no module, hence no import: the problem init solves.
	bare := filepath.Join(dir, "bare")
	os.MkdirAll(bare, 0o755)
	os.WriteFile(filepath.Join(bare, "lab.cue"), src, 0o644)
	if err := cueVet(t, bare); err == nil {
		t.Errorf("cue vet of a bare folder succeeded; the test cannot tell what init does")
	}
	if lookErr != nil {
		t.Log("the cue command is not installed: checked with CUE's loader only")
	}
}
