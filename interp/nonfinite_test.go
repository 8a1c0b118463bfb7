package interp_test

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/interp"
)

// A value that changed from or to ±Inf is beyond any tolerance (its relative change is ±Inf or
// NaN, which compares false with everything), and diff's JSON writes it as a string.
func TestDiffNonFinite(t *testing.T) {
	rec := func(x float64) *interp.Record {
		return &interp.Record{Scenario: "s", Target: "local", Vars: map[string]any{"r": x}}
	}
	for _, c := range []struct{ a, b float64 }{{5, math.Inf(1)}, {math.Inf(1), 5}, {math.NaN(), 5}, {5, math.NaN()}} {
		d := interp.Diff(rec(c.a), rec(c.b), 0.5)
		if len(d.Differences) != 1 || !d.Differences[0].Beyond || d.Beyond != 1 {
			t.Errorf("%v → %v: %+v, beyond %d", c.a, c.b, d.Differences, d.Beyond)
		}
		b, err := json.Marshal(d)
		if err != nil {
			t.Errorf("%v → %v: %v", c.a, c.b, err)
		} else if !strings.Contains(string(b), `"+Inf"`) && !strings.Contains(string(b), `"NaN"`) {
			t.Errorf("%v → %v: %s", c.a, c.b, b)
		}
	}
	if d := interp.Diff(rec(math.NaN()), rec(math.NaN()), 0); len(d.Differences) != 0 {
		t.Errorf("NaN against NaN: %+v", d.Differences)
	}
}

// What a step did (its summary) is compared, a run's ephemeral namespace by its key: two runs
// differ in their namespaces' names, not in what their steps did.
func TestDiffStepSummaries(t *testing.T) {
	rec := func(ns, summary string) *interp.Record {
		return &interp.Record{Scenario: "s", Target: "kube", Namespaces: map[string]string{"app": ns},
			Steps: []*interp.StepRecord{{Path: "steps.0", Name: "put", Summary: "apply ConfigMap " + ns + "/c"}, {Path: "steps.1", Summary: summary}}}
	}
	if d := interp.Diff(rec("app-1a2b", "sleep 1s"), rec("app-3c4d", "sleep 1s"), 0); len(d.Differences) != 0 {
		t.Errorf("the same steps in other namespaces: %+v", d.Differences)
	}
	d := interp.Diff(rec("app-1a2b", "sleep 1s"), rec("app-3c4d", "sleep 2s"), 0)
	if len(d.Differences) != 1 || d.Differences[0].Path != "steps.1.summary" || d.Differences[0].A != "sleep 1s" {
		t.Errorf("an unnamed step's summary changed: %+v", d.Differences)
	}
}

// A record whose JSON-like result holds NaN still has its secrets hidden (the redactor goes
// through the record's JSON, which encoding/json refuses with a NaN in it).
func TestRedactNonFiniteResult(t *testing.T) {
	red := interp.NewRedactor(&dsl.Scenario{Secrets: []string{"pw"}, Vars: map[string]any{"pw": "hunter2"}})
	rec := &interp.Record{Scenario: "s", Error: "login hunter2 refused"}
	rec.Put("cfg", "config", false, map[string]any{"weight": math.NaN(), "user": "hunter2"})
	out := red.Record(rec)
	b, err := json.Marshal(out.WithFiniteJSON())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "hunter2") {
		t.Errorf("the secret shows: %s", b)
	}
}
