package interp_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"labrun.dev/labrun/driver/fakes"
	"labrun.dev/labrun/interp"
)

// crdThenCR applies a CRD in one step and one of its objects in the next.
const crdThenCR = `
s: schema.#Scenario & {
	namespaces: ["lab"]
	clusterScoped: true
	steps: [
		{apply: objects: [{
			apiVersion: "apiextensions.k8s.io/v1"
			kind:       "CustomResourceDefinition"
			metadata: name: "widgets.example.com"
			spec: {group: "example.com", scope: "Namespaced", names: {kind: "Widget", plural: "widgets"}}
		}]},
		{apply: objects: [{apiVersion: "example.com/v1", kind: "Widget", metadata: name: "w"}]},
	]
}
`

// TestDeferredCRKind: a kind the cluster does not serve before the run, whose CRD an earlier
// step applies, is not refused: the step is checked (a dry run) when it starts, after the CRD.
// The fake cluster stands in for an API server that learns a kind from an applied CRD.
func TestDeferredCRKind(t *testing.T) {
	sc := loadScenario(t, crdThenCR)
	w := &fakes.World{Unknown: map[string]bool{"Widget": true}}
	rec := interp.New(w.Target()).Run(context.Background(), context.Background(), sc)
	if rec.Outcome != interp.Passed {
		t.Fatalf("outcome %s: %s", rec.Outcome, rec.Error)
	}
	calls := w.Calls()
	crd := slices.Index(calls, "apply CustomResourceDefinition /widgets.example.com")
	dry := slices.Index(calls, "dry-run 1 objects")
	cr := slices.Index(calls, "apply Widget lab/w")
	if crd < 0 || dry < crd || cr < dry {
		t.Errorf("want the CRD applied, then the CR dry-run, then applied; calls: %q", calls)
	}
}

// TestUndefinedKindStillRefused: a kind that no CRD of the scenario defines and the cluster
// does not serve is refused before the run, as before.
func TestUndefinedKindStillRefused(t *testing.T) {
	sc := loadScenario(t, strings.Replace(crdThenCR, `kind: "Widget", metadata`, `kind: "Gadget", metadata`, 1))
	w := &fakes.World{Unknown: map[string]bool{"Widget": true, "Gadget": true}}
	rec := interp.New(w.Target()).Run(context.Background(), context.Background(), sc)
	if rec.Outcome != interp.Refused || !strings.Contains(rec.Error, "serves no kind Gadget") {
		t.Fatalf("want refused for Gadget, got %s: %s", rec.Outcome, rec.Error)
	}
	if calls := w.Calls(); slices.ContainsFunc(calls, func(c string) bool { return strings.HasPrefix(c, "apply") }) {
		t.Errorf("nothing must be applied; calls: %q", calls)
	}
}

// TestDryRunDefersCRKind: vet --server's dry run does not reject an object whose CRD an
// earlier step applies; it says it is checked when the step runs.
func TestDryRunDefersCRKind(t *testing.T) {
	sc := loadScenario(t, crdThenCR)
	w := &fakes.World{Unknown: map[string]bool{"Widget": true}}
	problems, skipped, err := interp.DryRun(context.Background(), w.Target(), sc)
	if err != nil || len(problems) != 0 {
		t.Fatalf("problems %v, err %v", problems, err)
	}
	if len(skipped) != 1 || !strings.Contains(skipped[0], "checked when the step runs: the cluster does not serve kind Widget (its CRD is applied by the step at ") {
		t.Errorf("skipped: %q", skipped)
	}
	sc = loadScenario(t, strings.Replace(crdThenCR, `kind: "Widget", metadata`, `kind: "Gadget", metadata`, 1))
	w = &fakes.World{Unknown: map[string]bool{"Gadget": true}}
	problems, _, _ = interp.DryRun(context.Background(), w.Target(), sc)
	if len(problems) != 1 || !strings.Contains(problems[0].Msg, "serves no kind Gadget") {
		t.Errorf("want Gadget rejected, got %v", problems)
	}
}

// TestDeferredCRKindRejected: what the cluster rejects in the dry run of a deferred step, when
// it starts, fails the step before anything of it is applied.
func TestDeferredCRKindRejected(t *testing.T) {
	sc := loadScenario(t, crdThenCR)
	w := &fakes.World{Unknown: map[string]bool{"Widget": true}, FailOn: "dry-run"}
	rec := interp.New(w.Target()).Run(context.Background(), context.Background(), sc)
	if rec.Outcome != interp.Errored || !strings.Contains(rec.Error, "rejected by the cluster: fake failure on \"dry-run 1 objects\"") {
		t.Fatalf("want the step errored with the cluster's rejection, got %s: %s", rec.Outcome, rec.Error)
	}
	if calls := w.Calls(); slices.Contains(calls, "apply Widget lab/w") {
		t.Errorf("the rejected Widget was applied; calls: %q", calls)
	}
}

// TestDryRunExpectFail: vet --server does not refuse an object the cluster rejects when its
// step expects to fail; it says the run judges the rejection. Without expectFail it is refused.
func TestDryRunExpectFail(t *testing.T) {
	src := strings.Replace(crdThenCR, `{apply: objects: [{apiVersion: "example.com/v1"`, `{expectFail: true, apply: objects: [{apiVersion: "example.com/v1"`, 1)
	sc := loadScenario(t, src)
	w := &fakes.World{FailOn: "dry-run"}
	problems, skipped, err := interp.DryRun(context.Background(), w.Target(), sc)
	if err != nil || len(problems) != 1 {
		t.Fatalf("want the CRD's step refused, the expectFail one not: problems %v, err %v", problems, err)
	}
	if len(skipped) != 1 || !strings.Contains(skipped[0], "steps.1 (expectFail: the cluster rejects it") {
		t.Errorf("skipped: %q", skipped)
	}
}

// TestDeferredExpectFail: a deferred step expected to fail is not refused by its dry run when it
// starts: the apply itself fails, and that is what expectFail judges (as for a kind the cluster
// served before the run).
func TestDeferredExpectFail(t *testing.T) {
	src := strings.Replace(crdThenCR, `{apply: objects: [{apiVersion: "example.com/v1"`, `{expectFail: "fake failure", apply: objects: [{apiVersion: "example.com/v1"`, 1)
	sc := loadScenario(t, src)
	w := &fakes.World{Unknown: map[string]bool{"Widget": true}, FailOn: "apply Widget"}
	rec := interp.New(w.Target()).Run(context.Background(), context.Background(), sc)
	if rec.Outcome != interp.Passed {
		t.Fatalf("outcome %s: %s", rec.Outcome, rec.Error)
	}
	if calls := w.Calls(); slices.Contains(calls, "dry-run 1 objects") || !slices.Contains(calls, "apply Widget lab/w") {
		t.Errorf("want no dry run and the Widget's apply tried; calls: %q", calls)
	}
}
