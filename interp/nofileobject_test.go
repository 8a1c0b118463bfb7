package interp_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"labrun.dev/labrun/driver/fakes"
	"labrun.dev/labrun/interp"
)

// TestWaitFileOfNoObject: a wait: matchFiles over a file that holds no object (its object
// commented out) held at once, every object of none matching. vet refuses such a file when it
// can read it before the run; one whose path has ${...} is read only when the step starts, and
// the step errs then.
func TestWaitFileOfNoObject(t *testing.T) {
	for _, field := range []string{"matchFiles", "absentFiles"} {
		t.Run(field, func(t *testing.T) {
			sc := loadScenario(t, `
s: schema.#Scenario & {
	vars: f: "assert.yaml"
	steps: [{name: "w", timeout: "5s", wait: `+field+`: ["${vars.f}"]}]
}`)
			if err := os.WriteFile(filepath.Join(sc.Dir, "assert.yaml"), []byte("# apiVersion: v1\n# kind: ConfigMap\n---\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			rec := interp.New((&fakes.World{}).Target()).Run(context.Background(), context.Background(), sc)
			w := stepRecord(t, rec, "w")
			if w.Outcome != interp.Errored || !strings.Contains(w.Error, "assert.yaml holds no object") {
				t.Errorf("w: %s %q, want an error saying assert.yaml holds no object", w.Outcome, w.Error)
			}
			if rec.Outcome == interp.Passed {
				t.Errorf("run passed")
			}
		})
	}
}
