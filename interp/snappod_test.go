package interp_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"testing/synctest"

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
			b, err := json.Marshal(rec)
			if err != nil {
				t.Fatal(err)
			}
			var back interp.Record
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			if s := back.Snapshot("before"); s == nil || s.Pod != c.pods[0] || s.PodUID != uid(0) {
				t.Fatalf("before read back: %+v", s)
			}
			for _, j := range interp.Rejudge(&back, sc) {
				if j.Outcome != c.outcome || !strings.Contains(j.Reason, c.reason) {
					t.Errorf("replay: %s %q, want %s with %q", j.Outcome, j.Reason, c.outcome, c.reason)
				}
			}
			// A record without pods (older) is judged as before: the delta is a number.
			back.Snapshot("before").Pod, back.Snapshot("after").Pod = "", ""
			for _, j := range interp.Rejudge(&back, sc) {
				if j.Outcome == interp.Errored {
					t.Errorf("old record: %s %q, want it judged", j.Outcome, j.Reason)
				}
			}
		})
	}
}
