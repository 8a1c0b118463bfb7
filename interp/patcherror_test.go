package interp_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"labrun.dev/labrun/driver/fakes"
	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/schema"
)

// refusingCluster refuses every merge patch as the kube driver words a strict patch's refusal.
type refusingCluster struct{ schema.Cluster }

type serverRefusal struct{ short string }

func (e serverRefusal) Error() string { return e.short }
func (e serverRefusal) Detail() string {
	return `"" is invalid: patch: Invalid value: "{\"apiVersion\":...}": strict decoding error: ...`
}

func (c refusingCluster) ApplyWith(ctx context.Context, objs []schema.Object, files []string, ns string, opts schema.ApplyOptions) (schema.ApplyResult, error) {
	if opts.Mode != "patch" {
		return c.Cluster.ApplyWith(ctx, objs, files, ns, opts)
	}
	return schema.ApplyResult{}, fmt.Errorf("patch TrafficRule lab/backend (objects[0]): %w",
		serverRefusal{"unknown field spec.trafficPolicy.connectionPool.tcp.maxConection: the cluster's TrafficRule has no such field (did you mean maxConnections?)"})
}

// TestApplyRefusalAtField: the cluster's refusal of a field of an apply step's object is placed
// at that field's line and column (probe p8 #13: a merge patch's unknown field was placed at the
// step, s.cue:18:3), as vet --server places a create's; the server's full text is an artifact.
// The kind is a custom resource vet does not know (an Istio kind's unknown field vet refuses
// before the run).
func TestApplyRefusalAtField(t *testing.T) {
	sc := loadScenario(t, `s: schema.#Scenario & {
	namespaces: ["lab"]
	steps: [
		{apply: {mode: "patch", objects: [{apiVersion: "mesh.example.com/v1", kind: "TrafficRule", metadata: name: "backend",
			spec: trafficPolicy: connectionPool: tcp: {
				maxConection: 5
			}}]}},
	]
}
`)
	w := &fakes.World{}
	tg := w.Target()
	tg.Cluster = refusingCluster{tg.Cluster}
	rec := interp.New(tg).Run(context.Background(), context.Background(), sc)
	if rec.Outcome != interp.Errored {
		t.Fatalf("outcome %s: %s", rec.Outcome, rec.Error)
	}
	// line 10 of s.cue (4 lines of header), column of maxConection
	if !strings.Contains(rec.Error, "s.cue:10:5: steps.0 (apply): patch TrafficRule lab/backend (objects[0]): unknown field spec.trafficPolicy.connectionPool.tcp.maxConection") {
		t.Errorf("error %q, want it at maxConection's line and column", rec.Error)
	}
	if rec.ErrorPos == nil || rec.ErrorPos.Line != 10 {
		t.Errorf("error position %v, want line 10", rec.ErrorPos)
	}
	found := false
	for _, a := range rec.Artifacts {
		if a.Name == "error.txt" && strings.Contains(string(a.Data), "is invalid: patch: Invalid value") {
			found = true
		}
	}
	if !found {
		t.Errorf("the server's full text is not kept as an artifact: %v", rec.Artifacts)
	}

}

// patchCluster dry-runs merge patches as the kube driver does: TrafficRule lab/backend
// exists and has no field maxConection; any other object does not exist.
type patchCluster struct{ schema.Cluster }

func (patchCluster) DryRunPatch(ctx context.Context, objs []schema.Object, files []string, ns string) ([]schema.ObjectRef, error) {
	var missing []schema.ObjectRef
	var errs []string
	for i, o := range objs {
		md, _ := o["metadata"].(map[string]any)
		if md["name"] != "backend" {
			missing = append(missing, schema.ObjectRef{Kind: o["kind"].(string), Namespace: ns, Name: md["name"].(string)})
			continue
		}
		errs = append(errs, fmt.Sprintf("TrafficRule %s/backend (objects[%d]): unknown field spec.trafficPolicy.connectionPool.tcp.maxConection: the cluster's TrafficRule has no such field (did you mean maxConnections?)", ns, i))
	}
	if len(errs) > 0 {
		return missing, fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return missing, nil
}

// TestDryRunMergePatch: vet --server dry-runs a merge patch against the object when it exists
// (probe p8 #13: it only noted that a merge patch is checked when the step runs, and the typo
// went to the run), placing what the cluster refuses at the field; a patch of an object that
// does not exist yet is still left for the run, and says so.
func TestDryRunMergePatch(t *testing.T) {
	sc := loadScenario(t, `s: schema.#Scenario & {
	namespaces: ["lab"]
	steps: [
		{apply: {mode: "patch", objects: [{apiVersion: "mesh.example.com/v1", kind: "TrafficRule", metadata: name: "backend",
			spec: trafficPolicy: connectionPool: tcp: {
				maxConection: 5
			}}]}},
		{apply: {mode: "patch", objects: [{apiVersion: "v1", kind: "ConfigMap", metadata: name: "later", data: a: "1"}]}},
	]
}
`)
	w := &fakes.World{}
	tg := w.Target()
	tg.Cluster = patchCluster{tg.Cluster}
	problems, skipped, err := interp.DryRun(context.Background(), tg, sc)
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) != 1 || problems[0].Pos.Line != 10 || problems[0].Pos.Col != 5 || !strings.Contains(problems[0].Msg, "unknown field spec.trafficPolicy.connectionPool.tcp.maxConection") {
		t.Errorf("problems %v, want the unknown field at 10:5", problems)
	}
	if len(skipped) != 1 || !strings.Contains(skipped[0], "steps.1 (a merge patch of ConfigMap lab/later, which does not exist yet, is checked against the object when the step runs)") {
		t.Errorf("skipped %q", skipped)
	}
}
