package interp_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"

	"labrun.dev/labrun/driver/fakes"
	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/interp"
)

// TestMatchFilesHoldTogetherFakeAPIServer (a fake API server, fakes.World, whose Match stands
// in for the objects' changes): the objects of a wait's matchFiles must match at one moment,
// as KUTTL judges an assert file's objects at each poll. Object a matches until b does, then
// never again: the wait waited for a, then for b, and passed, though the file never held. It
// does not pass now (it waits for a again, until its timeout); a file whose objects hold
// together passes.
func TestMatchFilesHoldTogetherFakeAPIServer(t *testing.T) {
	for _, tc := range []struct {
		name  string
		flaps bool
		want  interp.Outcome
	}{
		// The fake's wait that does not hold by its timeout times out (the kube driver's fails).
		{"a stops matching when b matches", true, interp.TimedOut},
		{"a and b hold together", false, interp.Passed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				dir := t.TempDir()
				files := map[string]string{
					"s.cue": `package s

import "labrun.dev/schema"

s: schema.#Scenario & {
	target: "kube"
	namespaces: ["lab"]
	steps: [
		{apply: objects: [
			{apiVersion: "v1", kind: "ConfigMap", metadata: name: "a", data: k: "1"},
			{apiVersion: "v1", kind: "ConfigMap", metadata: name: "b", data: k: "1"},
		]},
		{name: "both", timeout: "5s", wait: matchFiles: ["assert.yaml"]},
	]
}
`,
					"assert.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: \"1\"\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\ndata:\n  k: \"1\"\n",
				}
				for name, text := range files {
					if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				res, err := dsl.Load([]string{filepath.Join(dir, "s.cue")}, dsl.Options{Target: "fake"})
				if err != nil {
					t.Fatalf("load: %v", err)
				}
				var mu sync.Mutex
				bMatched := false
				w := &fakes.World{KeepObjects: true, Match: func(want, got any, _ bool) bool {
					mu.Lock()
					defer mu.Unlock()
					md, _ := want.(map[string]any)["metadata"].(map[string]any)
					switch md["name"] {
					case "a":
						return !tc.flaps || !bMatched
					case "b":
						bMatched = true
					}
					return true
				}}
				rec := interp.New(w.Target()).Run(context.Background(), context.Background(), res.Scenarios[0].ForRun("r1"))
				var step *interp.StepRecord
				for i := range rec.Steps {
					if rec.Steps[i].Name == "both" {
						step = rec.Steps[i]
					}
				}
				if step == nil {
					t.Fatalf("no step both: %+v", rec.Steps)
				}
				if step.Outcome != tc.want || rec.Outcome != tc.want {
					t.Errorf("step %s (%s), run %s; want %s", step.Outcome, step.Error, rec.Outcome, tc.want)
				}
			})
		})
	}
}
