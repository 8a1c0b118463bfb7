package interp_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"labrun.dev/labrun/driver/fakes"
	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/interp"
)

// newerIstio applies a DestinationRule with FIELD below its connection pool's tcp, reads it
// back by a get's path, a wait's match and an expression. maxConnectionsPerEndpoint is no
// field of Istio 1.30.8's DestinationRule (the release vet knows): it stands for a field a
// newer Istio serves.
const newerIstio = `
s: schema.#Scenario & {
	target: "kube"
	namespaces: ["lab"]
	steps: [
		{apply: objects: [{
			apiVersion: "networking.istio.io/v1", kind: "DestinationRule", metadata: name: "web"
			spec: {host: "web", trafficPolicy: connectionPool: tcp: {maxConnections: 1, FIELD: 2}}
		}]},
		{wait: match: {apiVersion: "networking.istio.io/v1", kind: "DestinationRule", metadata: name: "web", spec: trafficPolicy: connectionPool: tcp: FIELD: 2}},
		{name: "n", get: {apiVersion: "networking.istio.io/v1", kind: "DestinationRule", name: "web", path: "spec.trafficPolicy.connectionPool.tcp.FIELD"}},
		{name: "dr", get: {apiVersion: "networking.istio.io/v1", kind: "DestinationRule", name: "web"}},
	]
	expect: ["dr.spec.trafficPolicy.connectionPool.tcp.FIELD == 2"]
}
`

// standInNewerDR is a stand-in for the CRD of a newer Istio's DestinationRule, as a cluster
// serves it: 1.30.8's fields this test writes, and maxConnectionsPerEndpoint.
func standInNewerDR() map[string]any {
	obj := func(props map[string]any) map[string]any {
		return map[string]any{"type": "object", "properties": props}
	}
	integer := map[string]any{"type": "integer"}
	return obj(map[string]any{"spec": obj(map[string]any{
		"host": map[string]any{"type": "string"},
		"trafficPolicy": obj(map[string]any{"connectionPool": obj(map[string]any{"tcp": obj(map[string]any{
			"maxConnections": integer, "maxConnectionsPerEndpoint": integer,
		})})}),
	})})
}

// loadForCluster loads src as vet --server and a run do: the cluster's CRDs judge Istio
// kinds (dsl.Options.IstioByCluster).
func loadForCluster(t *testing.T, src string) *dsl.Scenario {
	t.Helper()
	p := filepath.Join(t.TempDir(), "s.cue")
	if err := os.WriteFile(p, []byte("package s\n\nimport \"labrun.dev/schema\"\n\n"+src), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := dsl.Load([]string{p}, dsl.Options{Target: "fake", IstioByCluster: true})
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	return res.Scenarios[0]
}

// TestNewerIstioFieldJudgedByClusterCRDStandIn: a field of an Istio kind that Istio 1.30.8's
// CRDs have not, which vet refuses without a cluster, is judged by the cluster's CRD (a
// stand-in's, of a newer Istio) where the scenario meets its cluster: vet --server (DryRun)
// and a run's preflight accept the field the CRD serves, in the applied object, a wait's
// match, a get's path and an expression, and refuse a misspelling of it, once each, at where
// it is written, naming the cluster's CRD.
func TestNewerIstioFieldJudgedByClusterCRDStandIn(t *testing.T) {
	world := func() *fakes.World {
		return &fakes.World{CRDSchemas: map[string]map[string]any{"DestinationRule": standInNewerDR()}}
	}
	t.Run("served", func(t *testing.T) {
		sc := loadForCluster(t, strings.ReplaceAll(newerIstio, "FIELD", "maxConnectionsPerEndpoint"))
		problems, _, err := interp.DryRun(context.Background(), world().Target(), sc)
		if err != nil || len(problems) > 0 {
			t.Errorf("vet --server: %v %+v, want no problem", err, problems)
		}
		w := world()
		rec := interp.New(w.Target()).Run(context.Background(), context.Background(), sc.ForRun("r1"))
		if rec.Outcome == interp.Refused {
			t.Errorf("the run was refused: %s", rec.Error)
		}
	})
	t.Run("misspelled", func(t *testing.T) {
		sc := loadForCluster(t, strings.ReplaceAll(newerIstio, "FIELD", "maxConnectionsPerEndpont"))
		problems, _, err := interp.DryRun(context.Background(), world().Target(), sc)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, p := range problems {
			got = append(got, fmt.Sprintf("%d:%d %s", p.Pos.Line, p.Pos.Col, p.Msg))
		}
		all := strings.Join(got, "\n")
		// The lines of the file (the preamble is 5 lines): 12 the apply's object, 18 the
		// expectation, 14 the wait's match, 15 the get's path.
		want := []string{
			"12:80 DestinationRule spec.trafficPolicy.connectionPool.tcp (the cluster's CRD of DestinationRule) has no field maxConnectionsPerEndpont (did you mean maxConnectionsPerEndpoint?)",
			"18:53 in expression",
			"14:146 match.spec.trafficPolicy.connectionPool.tcp.maxConnectionsPerEndpont",
			"15:97 path",
		}
		if len(got) != len(want) {
			t.Fatalf("%d problems, want %d (one each):\n%s", len(got), len(want), all)
		}
		for i, w := range want {
			if !strings.HasPrefix(got[i], w) || !strings.Contains(got[i], "maxConnectionsPerEndpont") {
				t.Errorf("problem %d: %q, want %q… about maxConnectionsPerEndpont", i, got[i], w)
			}
		}
		rec := interp.New(world().Target()).Run(context.Background(), context.Background(), sc.ForRun("r1"))
		if rec.Outcome != interp.Refused || strings.Count(rec.Error, "s.cue:") != 4 || strings.Count(rec.Error, "by the cluster's CRD: ") != 3 || !strings.Contains(rec.Error, "s.cue:12:80: DestinationRule spec.trafficPolicy.connectionPool.tcp (the cluster's CRD of DestinationRule) has no field maxConnectionsPerEndpont") {
			t.Errorf("run: %s %q, want refused before its first step, once at each place", rec.Outcome, rec.Error)
		}
		if len(rec.Steps) > 0 {
			t.Errorf("%d steps ran", len(rec.Steps))
		}
	})
	t.Run("unread", func(t *testing.T) {
		// A cluster that will not let the CRD be read cannot judge: what vet says without one.
		sc := loadForCluster(t, strings.ReplaceAll(newerIstio, "FIELD", "maxConnectionsPerEndpoint"))
		w := &fakes.World{CRDSchemaErrs: map[string]error{"DestinationRule": errors.New("forbidden")}}
		problems, _, err := interp.DryRun(context.Background(), w.Target(), sc)
		if err != nil {
			t.Fatal(err)
		}
		if len(problems) != 4 || !strings.Contains(problems[0].Msg, "(Istio 1.30.8's CRDs) has no field maxConnectionsPerEndpoint") || !strings.Contains(problems[0].Msg, "could not be read to judge it: forbidden") {
			t.Errorf("problems %+v, want 4, the first Istio 1.30.8's and saying the CRD could not be read", problems)
		}
		rec := interp.New(w.Target()).Run(context.Background(), context.Background(), sc.ForRun("r1"))
		if rec.Outcome != interp.Refused {
			t.Errorf("run: %s %q, want refused", rec.Outcome, rec.Error)
		}
	})
	t.Run("said once", func(t *testing.T) {
		// A cluster whose dry run refuses the object too (as a real API server's does, its
		// field validation Strict): the field is said once, by the CRD's judgement.
		sc := loadForCluster(t, strings.ReplaceAll(newerIstio, "FIELD", "maxConnectionsPerEndpont"))
		w := world()
		w.FailOn = "dry-run"
		problems, _, err := interp.DryRun(context.Background(), w.Target(), sc)
		if err != nil {
			t.Fatal(err)
		}
		// The four of the misspelled subtest: the apply's object, the expression, the
		// wait's match, the get's path; no fifth from the dry run.
		if len(problems) != 4 {
			t.Errorf("%d problems, want 4 (the apply's once): %+v", len(problems), problems)
		}
	})
}

// TestNewerIstioKindJudgedByClusterStandIn: a kind of an Istio group that Istio 1.30.8's CRDs
// do not serve (as a newer Istio may) is accepted by vet --server where the cluster (a
// stand-in) serves it by a CRD, in an apply's object and a get's kind, and refused where it
// does not, at the kind, with vet's offline message.
func TestNewerIstioKindJudgedByClusterStandIn(t *testing.T) {
	const src = `
s: schema.#Scenario & {
	target: "kube"
	namespaces: ["lab"]
	steps: [
		{apply: objects: [{apiVersion: "networking.istio.io/v1", kind: "MeshLimit", metadata: name: "m"}]},
		{name: "m", get: {apiVersion: "networking.istio.io/v1", kind: "MeshLimit", name: "m"}},
	]
}
`
	sc := loadForCluster(t, src)
	served := &fakes.World{CRDSchemas: map[string]map[string]any{"MeshLimit": {"type": "object"}}}
	if problems, _, err := interp.DryRun(context.Background(), served.Target(), sc); err != nil || len(problems) > 0 {
		t.Errorf("served: %v %+v, want no problem", err, problems)
	}
	problems, _, err := interp.DryRun(context.Background(), (&fakes.World{}).Target(), sc)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range problems {
		got = append(got, fmt.Sprintf("%d:%d %s", p.Pos.Line, p.Pos.Col, p.Msg))
	}
	if len(got) != 2 || !strings.HasPrefix(got[0], "10:") || !strings.HasPrefix(got[1], "11:") || !strings.Contains(got[0], "networking.istio.io has no kind MeshLimit (Istio 1.30.8's CRDs)") || !strings.Contains(got[0], "nor does the cluster serve it by a CRD") {
		t.Errorf("not served: want the apply's kind and the get's refused:\n%s", strings.Join(got, "\n"))
	}
}

// labelledCRDs is a stand-in cluster whose CRDs carry Istio's chart labels: it names each
// kind's CRD and the release its labels say (schema.CRDSources).
type labelledCRDs struct{ *fakes.World }

func (labelledCRDs) CRDSource(_ context.Context, kind, _ string) (string, string) {
	return strings.ToLower(kind) + "s.networking.istio.io", "1.31.0"
}

// TestIstioRefusalNamesClusterCRDStandIn: what the cluster's CRD refuses names the CRD and the
// Istio release its labels say, as docs/language.md shows it.
func TestIstioRefusalNamesClusterCRDStandIn(t *testing.T) {
	sc := loadForCluster(t, strings.ReplaceAll(newerIstio, "FIELD", "maxConnectionsPerEndpont"))
	tg := (&fakes.World{CRDSchemas: map[string]map[string]any{"DestinationRule": standInNewerDR()}}).Target()
	tg.Cluster = labelledCRDs{tg.Cluster.(*fakes.World)}
	problems, _, err := interp.DryRun(context.Background(), tg, sc)
	if err != nil {
		t.Fatal(err)
	}
	const want = "DestinationRule spec.trafficPolicy.connectionPool.tcp (the cluster's CRD destinationrules.networking.istio.io, of Istio 1.31.0 by its labels) has no field maxConnectionsPerEndpont (did you mean maxConnectionsPerEndpoint?)"
	if len(problems) == 0 || problems[0].Msg != want {
		t.Errorf("problems %+v, the first want %q", problems, want)
	}
}

// TestNewerIstioFileFieldStandIn: an apply's file's object, and a wait's matchFiles', are
// judged by the cluster's CRD (a stand-in's, serving maxConnectionsPerEndpoint) as one written
// in CUE, at its line in the YAML: the field the CRD serves accepted, a misspelling refused.
func TestNewerIstioFileFieldStandIn(t *testing.T) {
	for _, c := range []struct{ field, want string }{
		{"maxConnectionsPerEndpoint", ""},
		{"maxConnectionsPerEndpont", "dr.yaml:11:9 apply.files (dr.yaml, line 1): spec.trafficPolicy.connectionPool.tcp.maxConnectionsPerEndpont: DestinationRule spec.trafficPolicy.connectionPool.tcp (the cluster's CRD of DestinationRule) has no field maxConnectionsPerEndpont (did you mean maxConnectionsPerEndpoint?)\n" +
			"dr.yaml:11:9 wait.matchFiles (dr.yaml, line 1): spec.trafficPolicy.connectionPool.tcp.maxConnectionsPerEndpont: DestinationRule spec.trafficPolicy.connectionPool.tcp (the cluster's CRD of DestinationRule) has no field maxConnectionsPerEndpont (did you mean maxConnectionsPerEndpoint?)"},
	} {
		dir := t.TempDir()
		yaml := "apiVersion: networking.istio.io/v1\nkind: DestinationRule\nmetadata:\n  name: web\n  namespace: lab\nspec:\n  host: web\n  trafficPolicy:\n    connectionPool:\n      tcp:\n        " + c.field + ": 2\n"
		src := "package s\n\nimport \"labrun.dev/schema\"\n\ns: schema.#Scenario & {\n\ttarget: \"kube\"\n\tnamespaces: [\"lab\"]\n\tsteps: [{apply: files: [\"dr.yaml\"]}, {wait: matchFiles: [\"dr.yaml\"]}]\n}\n"
		for name, data := range map[string]string{"dr.yaml": yaml, "s.cue": src} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		res, err := dsl.Load([]string{filepath.Join(dir, "s.cue")}, dsl.Options{Target: "fake", IstioByCluster: true})
		if err != nil {
			t.Fatalf("load: %v", err)
		}
		w := &fakes.World{CRDSchemas: map[string]map[string]any{"DestinationRule": standInNewerDR()}}
		problems, _, err := interp.DryRun(context.Background(), w.Target(), res.Scenarios[0])
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, p := range problems {
			got = append(got, fmt.Sprintf("%s:%d:%d %s", filepath.Base(p.Pos.File), p.Pos.Line, p.Pos.Col, p.Msg))
		}
		if all := strings.Join(got, "\n"); all != c.want {
			t.Errorf("%s: problems\n%s\nwant\n%s", c.field, all, c.want)
		}
	}
}
