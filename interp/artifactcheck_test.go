package interp_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"labrun.dev/labrun/envoy"
	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/schema"
)

// A config step's value is what its config dump, the artifact it was read from, gives. A
// record whose max_connections was edited from 1 to 2 (its expectation and outcome with it)
// while its config dump still said 1 replayed PASSED: ArtifactContradictions names the step,
// the artifact and the value. The record as the run wrote it, one whose dump is missing, and
// one whose step did not pass (its last read may be cut short) are not refused.
func TestArtifactContradictionsConfig(t *testing.T) {
	dump, err := os.ReadFile("../envoy/testdata/config_dump_resource.json")
	if err != nil {
		t.Fatal(err)
	}
	const cluster = "outbound|8080||backend.conn-lab.svc.cluster.local"
	sc := loadScenario(t, `
s: schema.#Scenario & {
	steps: [
		{name: "cb", config: {admin: "http://127.0.0.1:15000", cluster: "`+cluster+`", path: "circuit_breakers.thresholds[0]"}},
		{name: "all", config: {admin: "http://127.0.0.1:15000", cluster: "`+cluster+`"}},
	]
	expect: ["cb.max_connections == 2", "all.connect_timeout == '10s'"]
}`)
	// The values as the drivers read them from that dump.
	value := func(path string) string {
		t.Helper()
		v, err := envoy.ConfigFromDumps(schema.Config{Admin: "http://127.0.0.1:15000", Cluster: cluster, Path: path}, []schema.Artifact{{Name: "config_dump.json", Data: dump}})
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	thresholds, whole := value("circuit_breakers.thresholds[0]"), value("")
	if !strings.Contains(thresholds, `"max_connections":1,`) || !strings.Contains(whole, `"connect_timeout":"10s",`) {
		t.Fatalf("the dump's values: %s, %s", thresholds, whole)
	}
	record := func(cb, all string, outcome interp.Outcome) (*interp.Record, map[*interp.ArtifactRecord][]byte) {
		t.Helper()
		rec := &interp.Record{Results: map[string]*interp.Result{}}
		for _, r := range []struct{ name, value string }{{"cb", cb}, {"all", all}} {
			var res interp.Result
			if err := json.Unmarshal([]byte(`{"kind": "config", "value": `+r.value+`}`), &res); err != nil {
				t.Fatal(err)
			}
			rec.Results[r.name] = &res
		}
		rec.Steps = []*interp.StepRecord{
			{Path: "steps.0", Name: "cb", Kind: "config", Outcome: outcome},
			{Path: "steps.1", Name: "all", Kind: "config", Outcome: interp.Passed},
		}
		data := map[*interp.ArtifactRecord][]byte{}
		for _, step := range []string{"cb", "all"} {
			a := &interp.ArtifactRecord{Step: step, Name: "config_dump.json", File: "config_dump.json.jsonl"}
			rec.Artifacts = append(rec.Artifacts, a)
			data[a] = dump
		}
		return rec, data
	}
	edited := strings.Replace(thresholds, `"max_connections":1,`, `"max_connections":2,`, 1)
	for _, tc := range []struct {
		name, cb, all string
		outcome       interp.Outcome
		missing       bool
		want          string
	}{
		{name: "as recorded", cb: thresholds, all: whole, outcome: interp.Passed},
		{name: "value edited", cb: edited, all: whole, outcome: interp.Passed,
			want: "step cb (config): its artifact config_dump.json (in config_dump.json.jsonl) gives cb.max_connections = 1, but the record's value has 2"},
		{name: "key removed", cb: thresholds, all: strings.Replace(whole, `"connect_timeout":"10s",`, "", 1), outcome: interp.Passed,
			want: "step all (config): its artifact config_dump.json (in config_dump.json.jsonl) gives all.connect_timeout = \"10s\", but the record's value has none"},
		{name: "dump missing", cb: edited, all: whole, outcome: interp.Passed, missing: true},
		{name: "step failed", cb: edited, all: whole, outcome: interp.Failed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec, data := record(tc.cb, tc.all, tc.outcome)
			if tc.missing {
				delete(data, rec.Artifacts[0])
			}
			got := strings.Join(interp.ArtifactContradictions(rec, sc, data), "\n")
			if got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

// A snapshot's counters and gauges are what the stats text it read gives: a counter edited in
// the record (upstream_rq_pending_overflow 3 → 0, a claim of no overflow made to pass) while
// stats-counters.txt still says 3 is refused; the record as read is not.
func TestArtifactContradictionsSnapshot(t *testing.T) {
	const cluster = "outbound|8080||backend.lab.svc.cluster.local"
	counters := "cluster." + cluster + ".upstream_rq_total: 20\ncluster." + cluster + ".upstream_rq_pending_overflow: 3\ncluster.other.upstream_rq_pending_overflow: 9\n"
	gauges := "cluster." + cluster + ".upstream_cx_active: 1\n"
	sc := loadScenario(t, `
s: schema.#Scenario & {
	steps: [{name: "after", snapshot: {admin: "http://127.0.0.1:15000", cluster: "`+cluster+`"}}]
	expect: ["after.upstream_rq_pending_overflow == 0"]
}`)
	for _, tc := range []struct {
		name     string
		overflow float64
		want     string
	}{
		{name: "as read", overflow: 3},
		{name: "counter edited", overflow: 0,
			want: "step after (snapshot): its artifact stats-counters.txt (in stats-counters.txt.jsonl) gives after.upstream_rq_pending_overflow = 3, but the record's snapshot has 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &interp.Record{
				Steps: []*interp.StepRecord{{Path: "steps.0", Name: "after", Kind: "snapshot", Outcome: interp.Passed}},
				Results: map[string]*interp.Result{"after": {Kind: "snapshot", Value: &interp.SnapshotRecord{Name: "after",
					Counters: schema.Stats{"upstream_rq_total": 20, "upstream_rq_pending_overflow": tc.overflow},
					Gauges:   schema.Stats{"upstream_cx_active": 1}}}},
			}
			data := map[*interp.ArtifactRecord][]byte{}
			for _, a := range []struct{ name, text string }{{"stats-counters.txt", counters}, {"stats-gauges.txt", gauges}} {
				ar := &interp.ArtifactRecord{Step: "after", Name: a.name, File: a.name + ".jsonl"}
				rec.Artifacts = append(rec.Artifacts, ar)
				data[ar] = []byte(a.text)
			}
			got := strings.Join(interp.ArtifactContradictions(rec, sc, data), "\n")
			if got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

// An exec's exit code is what its exit.txt holds (schema.ExitArtifact, written by the exec as it
// ends): a record whose exit was edited is refused naming the artifact and both values, and so is
// one whose exit.txt does not hold a number at all (a word, nothing, a code and more): the exec
// writes the code it records there, so a text that is no code is no exec's. Each way is judged
// with the scenario (replay, merge) and without it (diff).
func TestArtifactContradictionsExecExit(t *testing.T) {
	sc := loadScenario(t, `
s: schema.#Scenario & {
	steps: [{name: "p", exec: argv: ["sh", "-c", "exit 3"]}]
	expect: ["p.exit == 0"]
}`)
	for _, tc := range []struct {
		name, exitTxt string
		exit          float64
		want          string
	}{
		{name: "as written", exitTxt: "3\n", exit: 3},
		{name: "exit edited", exitTxt: "3\n", exit: 0,
			want: "step p (exec): its artifact p-exit.txt gives p.exit = 3, but the record's result has 0"},
		{name: "a word", exitTxt: "passed\n", exit: 0,
			want: `step p (exec): its artifact p-exit.txt does not hold an exit code ("passed"), but an exec writes the one it records there`},
		{name: "empty", exitTxt: "", exit: 0,
			want: `step p (exec): its artifact p-exit.txt does not hold an exit code (""), but an exec writes the one it records there`},
		{name: "two lines", exitTxt: "0\n3\n", exit: 0,
			want: `step p (exec): its artifact p-exit.txt does not hold an exit code ("0\n3"), but an exec writes the one it records there`},
	} {
		for _, withScenario := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/scenario=%v", tc.name, withScenario), func(t *testing.T) {
				a := &interp.ArtifactRecord{Step: "p", Name: schema.ExitArtifact, File: "p-exit.txt"}
				rec := &interp.Record{
					Steps:     []*interp.StepRecord{{Path: "steps.0", Name: "p", Kind: "exec", Outcome: interp.Passed}},
					Results:   map[string]*interp.Result{"p": {Kind: "exec", Value: schema.ExecResult{Exit: tc.exit}}},
					Artifacts: []*interp.ArtifactRecord{a},
				}
				s := sc
				if !withScenario {
					s = nil
				}
				got := strings.Join(interp.ArtifactContradictions(rec, s, map[*interp.ArtifactRecord][]byte{a: []byte(tc.exitTxt)}), "\n")
				if got != tc.want {
					t.Errorf("got  %q\nwant %q", got, tc.want)
				}
			})
		}
	}
}
