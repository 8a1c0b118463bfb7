package dsl

import (
	"strings"
	"testing"
)

// loadOne loads a scenario file written from src (after the package clause and the schema
// import) and returns its only scenario.
func loadOne(t *testing.T, src string) *Scenario {
	t.Helper()
	_, path := writeLab(t, src)
	res, err := Load([]string{path}, Options{Target: "any"}) // no capability checks: these tests are about plans
	if err != nil {
		t.Fatalf("Load:\n%v", err)
	}
	if len(res.Scenarios) != 1 {
		t.Fatalf("%d scenarios, want 1", len(res.Scenarios))
	}
	return res.Scenarios[0]
}

// TestPlanOffsets checks the planned starts of nested parallel, sequence, background,
// sampler and repeat steps: from the start of the phase, and from the start of the block.
// "+" is exact, "≥" a lower bound (a step of unknown duration came first).
func TestPlanOffsets(t *testing.T) {
	sc := loadOne(t, `s: schema.#Scenario & {
	local: backends: a: {}
	setup: [{sleep: "2s"}]
	steps: [
		{sleep: "1s"},
		{name: "bg", background: true, sleep: "10s"},
		{parallel: [
			{sleep: "2s"},
			{at: "500ms", sequence: [
				{sleep: "1s"},
				{name: "x", assert: "len(started) > 0"},
				{sleep: "1s"},
			]},
			{at: "3s", parallel: [
				{at: "1s", sleep: "1s"},
				{name: "in", sleep: "250ms"},
			]},
			{name: "fortio", load: {url: "${backends.a.url}/", duration: "2s"}},
			{name: "g", every: "100ms", while: "fortio", snapshot: backend: "a"},
		]},
		{name: "join", await: "bg"},
		{name: "r", repeat: {max: 3, until: "true", steps: [{sleep: "1s"}, {sleep: "1s"}]}},
		{sleep: "1s"},
	]
	cleanup: [{sleep: "1s"}, {sleep: "1s"}]
}
`)
	type row struct {
		phase   Phase
		path    string
		depth   int
		start   string
		inBlock string
	}
	want := []row{
		{PhaseSetup, "setup.0", 0, "+0s", "+0s"},
		{PhaseSteps, "steps.0", 0, "+0s", "+0s"},
		{PhaseSteps, "steps.1", 0, "+1s", "+1s"}, // background: the next step starts at once
		{PhaseSteps, "steps.2", 0, "+1s", "+1s"},
		{PhaseSteps, "steps.2.parallel.0", 1, "+1s", "+0s"},
		{PhaseSteps, "steps.2.parallel.1", 1, "+1.5s", "+500ms"},
		{PhaseSteps, "steps.2.parallel.1.sequence.0", 2, "+1.5s", "+0s"},
		{PhaseSteps, "steps.2.parallel.1.sequence.1", 2, "+2.5s", "+1s"},
		{PhaseSteps, "steps.2.parallel.1.sequence.2", 2, "≥2.5s", "≥1s"}, // after an assert
		{PhaseSteps, "steps.2.parallel.2", 1, "+4s", "+3s"},
		{PhaseSteps, "steps.2.parallel.2.parallel.0", 2, "+5s", "+1s"},
		{PhaseSteps, "steps.2.parallel.2.parallel.1", 2, "+4s", "+0s"},
		{PhaseSteps, "steps.2.parallel.3", 1, "+1s", "+0s"},
		{PhaseSteps, "steps.2.parallel.4", 1, "+1s", "+0s"},
		// The block ends when its longest child does: the inner parallel at +6s, but the
		// sequence ends at ≥3.5s, which may be later: a lower bound.
		{PhaseSteps, "steps.3", 0, "≥6s", "≥6s"},
		{PhaseSteps, "steps.4", 0, "≥6s", "≥6s"},
		{PhaseSteps, "steps.4.repeat.steps.0", 1, "≥6s", "+0s"},
		// Inside a block that starts at a lower bound, offsets from the block's start stay exact.
		{PhaseSteps, "steps.4.repeat.steps.1", 1, "≥7s", "+1s"},
		{PhaseSteps, "steps.5", 0, "≥8s", "≥8s"},
		{PhaseCleanup, "cleanup.0", 0, "+0s", "+0s"},
		{PhaseCleanup, "cleanup.1", 0, "+1s", "+1s"},
	}
	pl := PlanOf(sc)
	var got []row
	for _, e := range pl.Entries {
		got = append(got, row{e.Phase, e.Path, e.Depth, e.Start.String(), e.InBlock.String()})
	}
	for i := 0; i < max(len(got), len(want)); i++ {
		var g, w row
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			t.Errorf("entry %d:\n got %+v\nwant %+v", i, g, w)
		}
	}

	byPath := map[string]Entry{}
	for _, e := range pl.Entries {
		byPath[e.Path] = e
	}
	if e := byPath["steps.1"]; !e.Background || e.JoinedBy != "join" {
		t.Errorf("bg: Background %v JoinedBy %q, want joined by the await named join", e.Background, e.JoinedBy)
	}
	if e := byPath["steps.2.parallel.4"]; e.Every.String() != "100ms" || e.While != "fortio" || len(e.WaitsOn) != 1 || e.WaitsOn[0] != "fortio" {
		t.Errorf("sampler: %+v", e)
	}
	if e := byPath["steps.3"]; len(e.WaitsOn) != 1 || e.WaitsOn[0] != "bg" {
		t.Errorf("await waits on %v, want [bg]", e.WaitsOn)
	}
	if e := byPath["steps.4"]; e.MaxRounds != 3 {
		t.Errorf("repeat MaxRounds %d, want 3", e.MaxRounds)
	}
	if e := byPath["steps.0"]; e.Duration == nil || e.Duration.String() != "1s" {
		t.Errorf("sleep duration %v, want 1s", e.Duration)
	}
	if e := byPath["steps.2.parallel.3"]; e.Duration != nil {
		t.Errorf("a load's duration is not exact (fortio's start-up), got %v", *e.Duration)
	}
	if pl.Target != "local" || !strings.Contains(pl.AutoCleanup, "local") {
		t.Errorf("target %q, auto cleanup %q", pl.Target, pl.AutoCleanup)
	}
}

// TestPlanBlockEndOrder: the end of a parallel block does not depend on the order of its
// children.
func TestPlanBlockEndOrder(t *testing.T) {
	for _, children := range []string{
		`{name: "x", assert: "len(started) > 0"}, {sleep: "2s"}`,
		`{sleep: "2s"}, {name: "x", assert: "len(started) > 0"}`,
		`{sequence: [{sleep: "3s"}, {name: "x", assert: "len(started) > 0"}]}, {sleep: "2s"}`,
		`{sleep: "2s"}, {sequence: [{sleep: "1s"}, {name: "x", assert: "len(started) > 0"}]}`,
	} {
		sc := loadOne(t, `s: schema.#Scenario & {
	steps: [{parallel: [`+children+`]}, {sleep: "1s"}]
}
`)
		pl := PlanOf(sc)
		last := pl.Entries[len(pl.Entries)-1]
		d := "2s"
		if strings.Contains(children, "3s") {
			d = "3s"
		}
		if want := "≥" + d; last.Start.String() != want {
			t.Errorf("parallel [%s]: the next step starts at %s, want %s", children, last.Start, want)
		}
	}
}

func TestSummary(t *testing.T) {
	sc := loadOne(t, `s: schema.#Scenario & {
	target: "kube"
	namespaces: ["lab"]
	steps: [
		{apply: objects: [{apiVersion: "v1", kind: "ConfigMap", metadata: name: "b"}, {apiVersion: "v1", kind: "ConfigMap", metadata: name: "a"}]},
		{scale: {deployment: "backend", replicas: 0}},
		{name: "l", load: {url: "http://b/", requests: 30, connections: 3, qps: 10, keepalive: false}},
		{name: "m", load: {url: "http://b/"}},
		{wait: rollout: "backend"},
		{wait: condition: {kind: "Pod", selector: "app=b", type: "Ready"}},
		{name: "e", exec: argv: ["ss", "-tn"]},
		{dns: {host: "gslb", addresses: ["10.0.0.1", "10.0.0.2"]}},
		{sleep: "250ms"},
		{parallel: [{sleep: "1s"}, {sleep: "1s"}]},
	]
}
`)
	want := []string{
		"ConfigMap/a ConfigMap/b",
		"deployment backend → 0",
		"30 req × 3 conn at 10 qps no-keepalive → http://b/",
		"5s × 4 conn → http://b/",
		"rollout of backend",
		"Pod app=b Ready=True",
		"ss -tn",
		"gslb → 10.0.0.1,10.0.0.2",
		"250ms",
		"2 steps",
	}
	for i, s := range sc.Steps {
		if got := Summary(s); got != want[i] {
			t.Errorf("Summary(%s) = %q, want %q", s.Path, got, want[i])
		}
	}
}
