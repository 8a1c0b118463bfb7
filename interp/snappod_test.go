package interp_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"labrun.dev/labrun/driver/fakes"
	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/schema"
)

// TestDeltaAcrossPods: two snapshots of one selector that read two pods (the first pod deleted
// between them, as a kill, restart or scale does: the selector then picks another) have no
// delta: before read client-a at 10 (which reached 40), after read client-b at 10, and
// delta.upstream_rq_pending_overflow == 0 passed. The delta is an error naming both pods; the
// same pod read twice is judged (the claim fails, 30); the step's record names the pod it read;
// replay of the record errs the same way, and a record older than pods in records is judged as
// before.
func TestDeltaAcrossPods(t *testing.T) {
	src := `
s: schema.#Scenario & {
	steps: [
		{name: "before", snapshot: {envoy: {selector: "app=client"}, cluster: "c"}},
		{name: "after", snapshot: {envoy: {selector: "app=client"}, cluster: "c"}},
	]
	expect: [%s]
}`
	for _, c := range []struct {
		name, expect string
		pods         [2]string
		outcome      interp.Outcome
		reason       string
		// uids, when set, are the pods' uids (else uid-<pod>).
		uids [2]string
	}{
		{"default delta, two pods", `"delta.upstream_rq_pending_overflow == 0"`, [2]string{"lab/client-a", "lab/client-b"}, interp.Errored,
			`delta("before", "after"): before read pod lab/client-a, after read pod lab/client-b (the selector app=client picked another pod, e.g. after a kill/restart/scale): their counters are two Envoys'`, [2]string{}},
		{"named delta, two pods", `"delta('before', 'after').upstream_rq_pending_overflow == 0"`, [2]string{"lab/client-a", "lab/client-b"}, interp.Errored,
			"before read pod lab/client-a, after read pod lab/client-b", [2]string{}},
		{"one pod", `"delta.upstream_rq_pending_overflow == 0"`, [2]string{"lab/client-a", "lab/client-a"}, interp.Failed, "", [2]string{}},
		// A StatefulSet's pod killed and made again under its name (probe p9 #01): a new
		// Envoy, counting from zero; or the pods of one name in two clusters.
		{"one name, two pods", `"delta.upstream_rq_pending_overflow == 0"`, [2]string{"lab/client-0", "lab/client-0"}, interp.Errored,
			`delta("before", "after"): before read pod lab/client-0 (uid u1), after read pod lab/client-0 (uid u2): a pod of the same name made again between them`, [2]string{"u1", "u2"}},
		{"each alone", `"after.upstream_rq_pending_overflow == 10"`, [2]string{"lab/client-a", "lab/client-b"}, interp.Passed, "", [2]string{}},
		// Two claims joined by &&, each over one pod's snapshot, are two claims: they erred as
		// one ("before read pod lab/client-a, after read pod lab/client-b") though neither
		// compares the two Envoys. A conjunct over both still errs, naming itself.
		{"each alone, joined", `"before.upstream_rq_pending_overflow == 10 && after.upstream_rq_pending_overflow == 10"`, [2]string{"lab/client-a", "lab/client-b"}, interp.Passed, "", [2]string{}},
		{"each alone, joined, one false", `"before.upstream_rq_pending_overflow == 10 && after.upstream_rq_pending_overflow == 11"`, [2]string{"lab/client-a", "lab/client-b"}, interp.Failed, "", [2]string{}},
		{"both in one conjunct", `"before.upstream_rq_pending_overflow == 10 && after.upstream_rq_pending_overflow > before.upstream_rq_pending_overflow"`, [2]string{"lab/client-a", "lab/client-b"}, interp.Errored,
			"in after.upstream_rq_pending_overflow > before.upstream_rq_pending_overflow: before read pod lab/client-a, after read pod lab/client-b", [2]string{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			uid := func(n int) string {
				if c.uids[n] != "" {
					return c.uids[n]
				}
				return "uid-" + c.pods[n]
			}
			sc := loadScenario(t, strings.Replace(src, "%s", c.expect, 1))
			var rec *interp.Record
			synctest.Test(t, func(t *testing.T) {
				w := &fakes.World{Stats: func(_ string, n int) schema.StatsSnapshot {
					v := 10.0
					if n == 1 && c.pods[0] == c.pods[1] && c.uids[0] == c.uids[1] {
						v = 40
					}
					return schema.StatsSnapshot{Counters: schema.Stats{"upstream_rq_pending_overflow": v}, Gauges: schema.Stats{}, Pod: c.pods[n], PodUID: uid(n)}
				}}
				rec = interp.New(w.Target()).Run(context.Background(), context.Background(), sc)
			})
			if len(rec.Expectations) != 1 {
				t.Fatalf("expectations: %v", rec.Expectations)
			}
			j := rec.Expectations[0]
			if j.Outcome != c.outcome || !strings.Contains(j.Reason, c.reason) {
				t.Errorf("run: %s %q, want %s with %q", j.Outcome, j.Reason, c.outcome, c.reason)
			}
			if got := stepRecord(t, rec, "after").Read; got != "pod "+c.pods[1] {
				t.Errorf("after's record reads %q, want the pod %s", got, c.pods[1])
			}
			// The record, written and read back, is judged the same.
			back := throughJSON(t, rec)
			if s := back.Snapshot("before"); s == nil || s.Pod != c.pods[0] || s.PodUID != uid(0) {
				t.Fatalf("before read back: %+v", s)
			}
			for _, j := range interp.Rejudge(back, sc) {
				if j.Outcome != c.outcome || !strings.Contains(j.Reason, c.reason) {
					t.Errorf("replay: %s %q, want %s with %q", j.Outcome, j.Reason, c.outcome, c.reason)
				}
			}
			// The before's pod made the after's (the delta a number again): its step's read
			// still says the pod it read.
			if err := back.Contradictions(); err != nil {
				t.Fatalf("as recorded: %v", err)
			}
			if c.pods[0] != c.pods[1] {
				back.Snapshot("before").Pod = c.pods[1]
				if err := back.Contradictions(); err == nil || !strings.Contains(err.Error(), `step before: its record says it read "pod `+c.pods[0]+`", but its snapshot's pod is `+c.pods[1]) {
					t.Errorf("before's pod edited: %v, want a contradiction", err)
				}
				back.Snapshot("before").Pod = c.pods[0]
			}
			// A record without pods (older) is judged as before: the delta is a number.
			back.Snapshot("before").Pod, back.Snapshot("after").Pod = "", ""
			for _, j := range interp.Rejudge(back, sc) {
				if j.Outcome == interp.Errored {
					t.Errorf("old record: %s %q, want it judged", j.Outcome, j.Reason)
				}
			}
		})
	}
}

// TestSeriesAcrossPods: a series sampled through a selector whose pick changed between samples
// (the first pod killed, restarted or scaled away) holds two Envoys' counters: client-a read 10
// then 40, client-b 0 then 3, and last - first <= 3 (a rate) and max < 50 passed, where
// client-a alone rose by 30. Every aggregate but count has no value (an error naming the pods
// and the sample where the pick changed); the same pod throughout is judged; replay of the
// record errs the same way, and a record whose samples do not all say their pod (one blanked
// by an edit) is refused.
func TestSeriesAcrossPods(t *testing.T) {
	src := `
s: schema.#Scenario & {
	steps: [{parallel: [
		{name: "n", sleep: "2500ms"},
		{name: "od", every: "1s", while: "n", snapshot: {envoy: {selector: "app=client"}, cluster: "c"}},
	]}]
	expect: [%s]
}`
	type want struct {
		outcome interp.Outcome
		reason  string
	}
	mixed := `series "od" read pod lab/client-a (samples 1-2), then pod lab/client-b (samples 3-4)`
	for _, c := range []struct {
		name, expect string
		pods         []string // each sample's pod
		want         want
	}{
		{"rate over two pods", `"od.last.upstream_rq_pending_overflow - od.first.upstream_rq_pending_overflow <= 3"`,
			[]string{"lab/client-a", "lab/client-a", "lab/client-b", "lab/client-b"}, want{interp.Errored, "od.last has no value: " + mixed}},
		{"max over two pods", `"od.max.upstream_rq_pending_overflow < 50"`,
			[]string{"lab/client-a", "lab/client-a", "lab/client-b", "lab/client-b"}, want{interp.Errored, "od.max has no value: " + mixed + " (the selector app=client picked another pod"}},
		{"samples over two pods", `"all(od.samples, .upstream_rq_pending_overflow < 50)"`,
			[]string{"lab/client-a", "lab/client-a", "lab/client-b", "lab/client-b"}, want{interp.Errored, "od.samples has no value: " + mixed}},
		{"count over two pods", `"od.count == 4"`,
			[]string{"lab/client-a", "lab/client-a", "lab/client-b", "lab/client-b"}, want{interp.Passed, ""}},
		{"one pod", `"od.last.upstream_rq_pending_overflow - od.first.upstream_rq_pending_overflow <= 3"`,
			[]string{"lab/client-a", "lab/client-a", "lab/client-a", "lab/client-a"}, want{interp.Failed, ""}},
	} {
		t.Run(c.name, func(t *testing.T) {
			sc := loadScenario(t, strings.Replace(src, "%s", c.expect, 1))
			var rec *interp.Record
			synctest.Test(t, func(t *testing.T) {
				w := &fakes.World{Stats: func(_ string, n int) schema.StatsSnapshot {
					pod := c.pods[min(n, len(c.pods)-1)]
					v := []float64{10, 40, 0, 3}[min(n, 3)]
					if pod == "lab/client-a" && n >= 2 {
						v = 40 + float64(n)
					}
					return schema.StatsSnapshot{Counters: schema.Stats{"upstream_rq_pending_overflow": v}, Gauges: schema.Stats{}, Pod: pod, PodUID: "uid-" + pod}
				}}
				rec = interp.New(w.Target()).Run(context.Background(), context.Background(), sc)
			})
			ser := rec.SeriesOf("od")
			if ser == nil || len(ser.Samples) != 4 {
				t.Fatalf("series: %+v, want 4 samples", ser)
			}
			if len(rec.Expectations) != 1 {
				t.Fatalf("expectations: %v", rec.Expectations)
			}
			j := rec.Expectations[0]
			if j.Outcome != c.want.outcome || !strings.Contains(j.Reason, c.want.reason) {
				t.Errorf("run: %s %q, want %s with %q", j.Outcome, j.Reason, c.want.outcome, c.want.reason)
			}
			back := throughJSON(t, rec)
			if err := back.Contradictions(); err != nil {
				t.Fatalf("as recorded: %v", err)
			}
			for _, j := range interp.Rejudge(back, sc) {
				if j.Outcome != c.want.outcome || !strings.Contains(j.Reason, c.want.reason) {
					t.Errorf("replay: %s %q, want %s with %q", j.Outcome, j.Reason, c.want.outcome, c.want.reason)
				}
			}
			// A sample's pod made another's (which would make the aggregates readable again).
			if c.pods[0] != c.pods[3] {
				back.SeriesOf("od").Samples[3].Pod = c.pods[0]
				if err := back.Contradictions(); err == nil || !strings.Contains(err.Error(), `step od (sample 4): its record says it read "pod `+c.pods[3]+`"`) {
					t.Errorf("a sample's pod edited: %v, want a contradiction", err)
				}
			}
			// A sample's pod blanked (which would make the aggregates readable again).
			back.SeriesOf("od").Samples[3].Pod = ""
			if err := back.Contradictions(); err == nil || !strings.Contains(err.Error(), "sample 4 does not say which pod it read") {
				t.Errorf("a sample's pod blanked: %v, want a contradiction", err)
			}
		})
	}
}

// TestExpressionAcrossPods: an expression that reads two snapshots of one selector that read
// two pods compares two Envoys' counters however it is written (after.x - before.x, as well as
// delta); a pod of the same name with another uid (a StatefulSet's pod recreated) is another
// Envoy; each read alone is judged.
func TestExpressionAcrossPods(t *testing.T) {
	sc := loadScenario(t, `
s: schema.#Scenario & {
	steps: [
		{name: "before", snapshot: {envoy: {selector: "app=client"}, cluster: "c"}},
		{name: "after", snapshot: {envoy: {selector: "app=client"}, cluster: "c"}},
	]
	expect: [
		"after.upstream_rq_pending_overflow - before.upstream_rq_pending_overflow == 0",
		"delta.upstream_rq_pending_overflow == 0",
		"after.upstream_rq_pending_overflow == 10",
	]
}`)
	start := time.Unix(1000, 0)
	for _, c := range []struct {
		name       string
		pods, uids [2]string
		want       []interp.Outcome
		reason     string
	}{
		{"two pods", [2]string{"lab/client-a", "lab/client-b"}, [2]string{"u1", "u2"},
			[]interp.Outcome{interp.Errored, interp.Errored, interp.Passed}, "before read pod lab/client-a, after read pod lab/client-b"},
		{"one name, two uids", [2]string{"lab/client-0", "lab/client-0"}, [2]string{"u1", "u2"},
			[]interp.Outcome{interp.Errored, interp.Errored, interp.Passed}, "before read pod lab/client-0 (uid u1), after read pod lab/client-0 (uid u2)"},
		{"one pod", [2]string{"lab/client-a", "lab/client-a"}, [2]string{"u1", "u1"},
			[]interp.Outcome{interp.Failed, interp.Failed, interp.Passed}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := &interp.Record{StepsStart: start}
			for i, n := range []string{"before", "after"} {
				rec.Put(n, "snapshot", false, &interp.SnapshotRecord{Name: n, Source: "envoy {app=client} cluster c",
					Pod: c.pods[i], PodUID: c.uids[i], At: start.Add(time.Duration(i) * time.Second),
					Counters: schema.Stats{"upstream_rq_pending_overflow": 10 * float64(i)}, Gauges: schema.Stats{}})
			}
			for i, j := range interp.Rejudge(rec, sc) {
				if j.Outcome != c.want[i] || j.Outcome == interp.Errored && !strings.Contains(j.Reason, c.reason) {
					t.Errorf("%s: %s %q, want %s with %q", j.Src, j.Outcome, j.Reason, c.want[i], c.reason)
				}
			}
		})
	}
}

// TestSelectorOfReplicas: a snapshot, exec, config or load by a selector that matches several
// ready pods uses one (the first by name), and what it records is that pod's, not the
// Deployment's: a snapshot of backend's sidecar, one replica of 3, counts a third of the
// requests, and "no replica saw a 503" would hold on one replica's word. The step's record
// (its console line and report row) names the pod used, and a warning names the other ready
// pods; a sampler says it once, not at every sample; a selector of one ready pod warns of
// nothing. The kube target is the fake world, whose Ready lists each selector's ready pods.
func TestSelectorOfReplicas(t *testing.T) {
	sc := loadScenario(t, `
s: schema.#Scenario & {
	steps: [
		{name: "snap", snapshot: {envoy: {selector: "app=backend"}, cluster: "c"}},
		{name: "ex", exec: {selector: "app=backend", argv: ["true"]}},
		{name: "cfg", config: {envoy: {selector: "app=backend"}, cluster: "c"}},
		{name: "fortio", load: {from: {selector: "app=backend"}, url: "http://b:8080/", requests: 10}},
		{name: "fortio3", load: {from: {selector: "app=backend", pods: 2}, url: "http://b:8080/", requests: 10}},
		{name: "solo", snapshot: {envoy: {selector: "app=client"}, cluster: "c"}},
		{parallel: [
			{name: "n", sleep: "2500ms"},
			{name: "od", every: "1s", while: "n", snapshot: {envoy: {selector: "app=backend"}, cluster: "c"}},
		]},
	]
}`)
	var rec *interp.Record
	synctest.Test(t, func(t *testing.T) {
		w := &fakes.World{Ready: map[string][]string{"app=backend": {"backend-c", "backend-a", "backend-b"}, "app=client": {"client-a"}}}
		rec = interp.New(w.Target()).Run(context.Background(), context.Background(), sc)
	})
	if rec.Outcome != interp.Passed {
		t.Fatalf("run: %s %s", rec.Outcome, rec.Error)
	}
	others := "selector app=backend matched 3 ready pods in lab (backend-a, backend-b, backend-c) and the step used backend-a only (the first by name): what it records is that pod's, not the other replicas'"
	for _, c := range []struct{ step, read, warning string }{
		{"snap", "pod lab/backend-a", others},
		{"ex", "pod lab/backend-a", others},
		{"cfg", "pod lab/backend-a", others},
		{"fortio", "pod lab/backend-a", others},
		{"fortio3", "pods lab/backend-a, lab/backend-b", "selector app=backend matched 3 ready pods in lab (backend-a, backend-b, backend-c) and the step used backend-a, backend-b only (the first by name): what it records is those pods', not the other replicas'"},
		{"solo", "pod lab/client-a", ""},
	} {
		sr := stepRecord(t, rec, c.step)
		if sr.Read != c.read {
			t.Errorf("%s reads %q, want %q", c.step, sr.Read, c.read)
		}
		if want := []string{c.warning}; c.warning == "" && len(sr.Warnings) > 0 || c.warning != "" && !slices.Equal(sr.Warnings, want) {
			t.Errorf("%s warns %q, want %q", c.step, sr.Warnings, c.warning)
		}
	}
	if s := rec.Snapshot("snap"); s == nil || s.Pod != "lab/backend-a" {
		t.Errorf("snap's record: %+v, want the pod read", s)
	}
	var samples, warned int
	for _, sr := range rec.Steps {
		if sr.Name == "od" {
			samples++
			if slices.Contains(sr.Warnings, others) {
				warned++
			}
		}
	}
	if samples < 3 || warned != 1 {
		t.Errorf("sampler: %d samples, %d warned, want the warning once", samples, warned)
	}
}

// TestSelectorOfReplicasInRepeat: in a repeat, each round's step by a selector of several ready
// pods picks anew (another pod, if the pods changed), and its record names the pod it read:
// each round's record says the selector matched others. Before, only the first round's did
// (the warning was said once per step path, as a sampler's later samples say it), and the
// second round's record read "pod lab/backend-a" as if the selector matched that pod alone.
func TestSelectorOfReplicasInRepeat(t *testing.T) {
	sc := loadScenario(t, `
s: schema.#Scenario & {
	steps: [
		{name: "r", mayFail: true, repeat: {max: 3, until: "ex.stdout == 'ready'", steps: [
			{name: "ex", exec: {selector: "app=backend", argv: ["true"]}},
		]}},
	]
	expect: ["outcome.r == 'failed'"]
}`)
	var rec *interp.Record
	synctest.Test(t, func(t *testing.T) {
		w := &fakes.World{Ready: map[string][]string{"app=backend": {"backend-c", "backend-a", "backend-b"}}}
		rec = interp.New(w.Target()).Run(context.Background(), context.Background(), sc)
	})
	others := "selector app=backend matched 3 ready pods in lab (backend-a, backend-b, backend-c) and the step used backend-a only (the first by name): what it records is that pod's, not the other replicas'"
	rounds, warned := 0, 0
	for _, sr := range rec.Steps {
		if sr.Name == "ex" {
			rounds++
			if slices.Contains(sr.Warnings, others) {
				warned++
			}
		}
	}
	if rounds != 3 || warned != 3 {
		t.Errorf("ex: %d rounds, %d warned, want 3 of 3", rounds, warned)
	}
}
