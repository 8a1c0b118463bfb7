package interp_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"labrun.dev/labrun/driver/fakes"
	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/schema"
)

// twoClusters applies an object to each of two clusters (west by a block's cluster), reads one
// back from west, and makes an ephemeral namespace, which every cluster gets.
const twoClusters = `
s: schema.#Scenario & {
	clusters: {east: "ctx-east", west: "ctx-west"}
	ephemeralNamespaces: ["app"]
	steps: [
		{name: "e", apply: objects: [{apiVersion: "v1", kind: "ConfigMap", metadata: name: "in-east"}]},
		{cluster: "west", sequence: [
			{apply: objects: [{apiVersion: "v1", kind: "ConfigMap", metadata: name: "in-west"}]},
			{name: "w", get: {kind: "ConfigMap", name: "in-west"}},
		]},
		{name: "e2", get: {kind: "ConfigMap", name: "in-east"}},
	]
	expect: ["w.metadata.name == 'in-west' && target.clusters.west.clusterDomain == 'cluster.local'"]
}
`

// runTwoClusters runs twoClusters (run id r1) on two in-memory clusters, east and west, and
// fails the test unless it passed.
func runTwoClusters(t *testing.T) (rec *interp.Record, east, west *fakes.World) {
	t.Helper()
	sc := loadScenario(t, twoClusters).ForRun("r1")
	east, west = &fakes.World{}, &fakes.World{}
	top := east.Target()
	top.Clusters = map[string]*schema.Target{"east": east.Target(), "west": west.Target()}
	top.Values = map[string]any{"clusters": map[string]any{"east": east.Target().Values, "west": west.Target().Values}}
	rec = interp.New(top).Run(context.Background(), context.Background(), sc)
	if rec.Outcome != interp.Passed {
		t.Fatalf("outcome %s: %s; expectations %+v", rec.Outcome, rec.Error, rec.Expectations)
	}
	return rec, east, west
}

// TestTwoClusters: each step's calls go to its cluster's drivers, the ephemeral namespace is
// made in both, the automatic cleanup deletes in both (saying which), and the record names the
// cluster of every step and result.
func TestTwoClusters(t *testing.T) {
	rec, east, west := runTwoClusters(t)
	ec, wc := strings.Join(east.Calls(), "\n"), strings.Join(west.Calls(), "\n")
	for _, want := range []string{"apply Namespace /app-r1", "apply ConfigMap app-r1/in-east", "get ConfigMap app-r1/in-east", "delete ConfigMap app-r1/in-east", "delete Namespace /app-r1"} {
		if !strings.Contains(ec, want) {
			t.Errorf("east: no %q in calls:\n%s", want, ec)
		}
	}
	for _, want := range []string{"apply Namespace /app-r1", "apply ConfigMap app-r1/in-west", "get ConfigMap app-r1/in-west", "delete ConfigMap app-r1/in-west", "delete Namespace /app-r1"} {
		if !strings.Contains(wc, want) {
			t.Errorf("west: no %q in calls:\n%s", want, wc)
		}
	}
	if strings.Contains(ec, "in-west") || strings.Contains(wc, "in-east") {
		t.Errorf("a call went to the other cluster:\neast:\n%s\nwest:\n%s", ec, wc)
	}
	for _, want := range []string{"ConfigMap app-r1/in-west in cluster west", "ConfigMap app-r1/in-east in cluster east"} {
		if !slices.ContainsFunc(rec.Cleanup, func(c string) bool { return strings.Contains(c, want) }) {
			t.Errorf("cleanup does not say %q: %q", want, rec.Cleanup)
		}
	}
	clusterOf := map[string]string{}
	for _, s := range rec.Steps {
		clusterOf[s.Path] = s.Cluster
	}
	for path, want := range map[string]string{"steps.0": "east", "steps.1": "west", "steps.1.sequence.0": "west", "steps.1.sequence.1": "west", "steps.2": "east"} {
		if clusterOf[path] != want {
			t.Errorf("step %s: cluster %q, want %q", path, clusterOf[path], want)
		}
	}
	if rec.Results["w"].Cluster != "west" || rec.Results["e2"].Cluster != "east" {
		t.Errorf("results' clusters: w %q, e2 %q", rec.Results["w"].Cluster, rec.Results["e2"].Cluster)
	}
	// The record keeps it: a step's and a result's cluster survive a round trip.
	back := throughJSON(t, rec)
	if back.Version != interp.RecordVersion || back.Results["w"].Cluster != "west" || len(back.Clusters) != 2 || back.Clusters[1].Name != "west" {
		t.Errorf("round trip: version %d, w's cluster %q, clusters %+v", back.Version, back.Results["w"].Cluster, back.Clusters)
	}
}

// TestClusterDryRun: vet --server's dry run asks each step's cluster, and says which refused.
func TestClusterDryRun(t *testing.T) {
	sc := loadScenario(t, twoClusters)
	east, west := &fakes.World{}, &fakes.World{FailOn: "dry-run"}
	top := east.Target()
	top.Clusters = map[string]*schema.Target{"east": east.Target(), "west": west.Target()}
	problems, _, err := interp.DryRun(context.Background(), top, sc)
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) != 1 || !strings.HasPrefix(problems[0].Msg, "cluster west: ") || problems[0].Pos.Line != 12 {
		t.Errorf("want one problem of west's apply (line 12), got %+v", problems)
	}
}

// TestReplayRefusesAnotherCluster: a record of a two-cluster run is not judged as that of a
// scenario whose steps run on other clusters now. Of a step that names no cluster the first
// of clusters: is the cluster, which its options do not say: with clusters: reordered,
// ChangedStep found nothing and the record replayed PASSED over east's data for steps that
// would run in west.
func TestReplayRefusesAnotherCluster(t *testing.T) {
	rec, _, _ := runTwoClusters(t)
	for _, tc := range []struct{ name, from, to, want string }{
		{"the same", "", "", ""},
		{"another context", `east: "ctx-east"`, `east: "ctx-other"`, ""},
		{"clusters reordered", `{east: "ctx-east", west: "ctx-west"}`, `{west: "ctx-west", east: "ctx-east"}`,
			"steps.0 (e, apply) ran in cluster east and would now run in cluster west (the first of clusters:, where a step that names none runs)"},
		{"a step's cluster", `{name: "e2", get`, `{name: "e2", cluster: "west", get`,
			"steps.2 (e2, get) ran in cluster east and would now run in cluster west"},
		{"a block's cluster", `{cluster: "west", sequence`, `{cluster: "east", sequence`,
			"steps.1 (sequence) ran in cluster west and would now run in cluster east"},
		{"no clusters", `clusters: {east: "ctx-east", west: "ctx-west"}`, ``,
			"steps.0 (e, apply) ran in cluster east and would now run on the run's target (the scenario declares no clusters)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := twoClusters
			if tc.name == "no clusters" {
				src = strings.NewReplacer(`{cluster: "west", sequence`, `{sequence`, ` && target.clusters.west.clusterDomain == 'cluster.local'`, ``).Replace(src)
			}
			if !strings.Contains(src, tc.from) {
				t.Fatalf("the scenario has no %q", tc.from)
			}
			now := loadScenario(t, strings.Replace(src, tc.from, tc.to, 1))
			if got := interp.ChangedStep(rec, now, nil); got != tc.want {
				t.Errorf("ChangedStep: %q, want %q", got, tc.want)
			}
		})
	}
}

// TestEveryRunHeldToItsCluster: the record says the cluster of every run of a step (each
// round of a repeat) and of every result. A repeat's second round's record edited to another
// cluster than the one its step runs on was not compared (only a step's first run was), nor a
// result's cluster edited away from its step's: the report showed rows and results of a
// cluster the step never ran on, and replay said nothing.
func TestEveryRunHeldToItsCluster(t *testing.T) {
	const src = `
s: schema.#Scenario & {
	clusters: {east: "ctx-east", west: "ctx-west"}
	ephemeralNamespaces: ["app"]
	steps: [
		{apply: objects: [{apiVersion: "v1", kind: "ConfigMap", metadata: name: "in-west"}], cluster: "west"},
		{name: "rounds", cluster: "west", mayFail: true, repeat: {
			max: 2
			until: "false"
			steps: [{name: "w", get: {kind: "ConfigMap", name: "in-west"}}]
		}},
	]
	expect: ["outcome.rounds == 'failed'"]
}
`
	sc := loadScenario(t, src).ForRun("r1")
	east, west := &fakes.World{}, &fakes.World{}
	top := east.Target()
	top.Clusters = map[string]*schema.Target{"east": east.Target(), "west": west.Target()}
	top.Values = map[string]any{"clusters": map[string]any{"east": east.Target().Values, "west": west.Target().Values}}
	rec := interp.New(top).Run(context.Background(), context.Background(), sc)
	if rec.Outcome != interp.Passed {
		t.Fatalf("outcome %s: %s", rec.Outcome, rec.Error)
	}
	if got := interp.ChangedStep(rec, sc, nil); got != "" {
		t.Fatalf("the genuine record: ChangedStep says %q", got)
	}
	if err := throughJSON(t, rec).Contradictions(); err != nil {
		t.Fatalf("the genuine record: %v", err)
	}
	var second *interp.StepRecord
	for _, s := range rec.Steps {
		if s.Name == "w" && s.Round == 2 {
			second = s
		}
	}
	if second == nil {
		t.Fatalf("no second round of w: %+v", rec.Steps)
	}
	second.Cluster = "east"
	if got, want := interp.ChangedStep(rec, sc, nil), "steps.1.repeat.steps.0 (w, get) ran in cluster east and would now run in cluster west"; got != want {
		t.Errorf("a round's cluster edited: ChangedStep says %q, want %q", got, want)
	}
	second.Cluster = "west"
	rec.Results["w"].Cluster = "east"
	err := throughJSON(t, rec).Contradictions()
	if want := `step w: its result's cluster is "east", but its step ran in cluster west`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a result's cluster edited: %v, want %q", err, want)
	}
}

// TestReplayRefusesRelabelledClusters: a two-cluster record (in-memory stand-ins of the two
// clusters) whose list of clusters had one dropped or two names swapped, or whose result (w,
// read on west) was relabelled as read on east, replayed PASSED with nothing said (round 10
// of edited records), its report showing the edited labels. ChangedStep names the edit.
func TestReplayRefusesRelabelledClusters(t *testing.T) {
	rec, _, _ := runTwoClusters(t)
	sc := loadScenario(t, twoClusters).ForRun("r1")
	for _, tc := range []struct {
		name string
		edit func(r *interp.Record)
		want string
	}{
		{"none", func(r *interp.Record) {}, ""},
		{"a cluster dropped", func(r *interp.Record) { r.Clusters = r.Clusters[:1] },
			"the record's clusters are [east], and the scenario's [east, west]: the run ran on the clusters its record names"},
		{"names swapped", func(r *interp.Record) {
			r.Clusters[0].Name, r.Clusters[1].Name = r.Clusters[1].Name, r.Clusters[0].Name
		}, "the record's clusters are [west, east], and the scenario's [east, west]: the run ran on the clusters its record names"},
		{"a result relabelled", func(r *interp.Record) { r.Results["w"].Cluster = "east" },
			"result w says it was read in cluster east, and its step steps.1.sequence.1 (w, get) ran in cluster west: a result is read where its step ran"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := throughJSON(t, rec)
			tc.edit(r)
			if got := interp.ChangedStep(r, sc, nil); got != tc.want {
				t.Errorf("ChangedStep = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestDiffNamesOtherClusters: the diff of two runs of a two-cluster scenario (in-memory
// stand-ins of the clusters) on other clusters — one's context or server another, a cluster
// missing from one's list — said nothing of it: its values alone were compared.
func TestDiffNamesOtherClusters(t *testing.T) {
	rec, _, _ := runTwoClusters(t)
	a := throughJSON(t, rec)
	if d := interp.Diff(a, throughJSON(t, rec), 0); len(d.Differences) != 0 {
		t.Fatalf("a record and its copy differ: %+v", d.Differences)
	}
	b := throughJSON(t, rec)
	b.Clusters[1].Where = "context ctx-prod"
	d := interp.Diff(a, b, 0)
	if len(d.Differences) != 1 || d.Differences[0].Path != "clusters.west" || d.Differences[0].B != "context ctx-prod" || d.Beyond != 1 {
		t.Errorf("west on another context: differences %+v, beyond %d", d.Differences, d.Beyond)
	}
}

// TestDiffNamesOtherBuild: the diff of two runs made by two labrun builds (records' labrun)
// said nothing of it; runs of one build, or records that keep none, show no difference there.
func TestDiffNamesOtherBuild(t *testing.T) {
	rec, _, _ := runTwoClusters(t)
	a, b := throughJSON(t, rec), throughJSON(t, rec)
	a.Labrun, b.Labrun = "(devel) 0123", "(devel) 4567 modified"
	d := interp.Diff(a, b, 0)
	if len(d.Differences) != 1 || d.Differences[0].Path != "labrun" || d.Beyond != 1 {
		t.Errorf("two builds: differences %+v, beyond %d", d.Differences, d.Beyond)
	}
	b.Labrun = a.Labrun
	if d := interp.Diff(a, b, 0); len(d.Differences) != 0 {
		t.Errorf("one build: differences %+v", d.Differences)
	}
}
