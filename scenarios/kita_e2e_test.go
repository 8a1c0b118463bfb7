package scenarios_test

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/sandbox"
)

// kitA are Kit A's scenarios that need a data plane (s7 is config only: see config_e2e_test.go).
var kitA = []string{"s1", "s2", "s3", "s4", "s5", "s6"}

// TestE2EKitAReplay runs s1–s6 unchanged on the sandbox with the seed's recorded figures
// replayed, and wants every expectation to hold.
//
// Real: the kit's setup (namespace, backend and client Deployments, the blackhole ServiceEntry,
// the Telemetry), each scenario's DestinationRule through the API server's Istio schemas, the
// wait until istiod (istio.io/istio v0.0.0-20260827124520-eed52ebb66ad) has pushed the DR to the
// client's sidecar config, the client pod's exec and log streams, the cleanup. Replayed (seed 000,
// run T93, scenarios/testdata/replay/kit-a): the client sidecar's counters and gauges per snapshot
// (Envoy admin stand-in, in call order: before, the mid-load samples, after), fortio's JSON result
// (exec stand-in, lasting the recorded run's duration so that the mid-load sampler sees it
// running), and for s6 the sidecar's access-log lines of the 5 requests. Then the perturbed
// replays (perturbedKitA).
func TestE2EKitAReplay(t *testing.T) {
	t.Parallel()
	for _, name := range kitA {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fixtures := replay(t, "kit-a", name)
			sb := holdLab(t, fixtures, "conn-lab")
			sb.EnvoyStandIn(t, "conn-lab", "client", fixtures...)
			rec := kubeRun(t, sb, name, nil)
			requirePassed(t, rec)
			// The run's own record, edited into the wrong outcomes of wrong_test.go, must fail
			// replay as the seed's figures do.
			wrongOutcomesOf(t, rec, "")
			// The load the judge saw is the replayed recording, not a fortio run on the host.
			load := rec.Loads()["fortio"]
			if load == nil {
				t.Fatalf("no load recorded")
			}
			var want string
			for _, f := range fixtures {
				if f.Path == "exec/fortio" {
					var r struct{ Stdout string }
					_ = json.Unmarshal([]byte(f.Body), &r)
					want = r.Stdout
				}
			}
			found := false
			for _, a := range rec.Artifacts {
				if a.Step == "fortio" && string(a.Data) == want {
					found = true
				}
			}
			if !found {
				t.Errorf("the load's raw result (artifact of step fortio) is not the replayed fortio JSON")
			}
		})
	}
	t.Run("perturbed", func(t *testing.T) {
		t.Parallel()
		perturbedKitA(t)
	})
}

// perturbedKitA (TestE2EKitAReplay/perturbed) replays Kit A with one recorded figure changed into what a broken
// run or a broken measurement would show, and wants the expectation that guards against it to
// fail (or error), saying why, while the expectations that do not read the changed figure hold.
// Everything else is as in the replays above: real API server and istiod, replayed Envoy and
// fortio figures.
func perturbedKitA(t *testing.T) {
	cases := []struct {
		name, scenario string
		perturb        func(t *testing.T, fx []sandbox.Fixture) []sandbox.Fixture
		wants          map[string]perturbedWant // by expectation; every other expectation must pass
	}{{
		name:     "503s that are not the pending breaker's",
		scenario: "s2",
		// fortio says 15 × 503 (and 15 × 200) while upstream_rq_pending_overflow grew by 12.
		perturb: func(t *testing.T, fx []sandbox.Fixture) []sandbox.Fixture {
			return editFortio(t, fx, func(res map[string]any) { res["RetCodes"] = map[string]any{"200": 15, "503": 15} })
		},
		wants: map[string]perturbedWant{
			"delta.upstream_rq_pending_overflow == fortio.code503": {interp.Failed, []string{"(12)", "(15)"}},
			"delta.upstream_rq_total == fortio.code200":            {interp.Failed, []string{"(18)", "(15)"}},
		},
	}, {
		name:     "counters reset between the snapshots",
		scenario: "s3",
		// The client's sidecar restarted after the load (or the cluster was rebuilt): in the after
		// snapshot every counter of the cluster starts again from 0.
		perturb: func(t *testing.T, fx []sandbox.Fixture) []sandbox.Fixture {
			return editStats(t, fx, 2, func(line string) string {
				return regexp.MustCompile(`^(cluster\.outbound\|8080\|\|backend\.conn-lab\.svc\.cluster\.local;\.(?:upstream_[a-z_]+)): \d+$`).ReplaceAllString(line, "$1: 0")
			})
		},
		wants: map[string]perturbedWant{
			// went down from 3 to 0, from 58 to 0: a reset, not a delta
			"delta.upstream_cx_total == fortio.requests": {interp.Failed, []string{"upstream_cx_total went down", "reset"}},
			"delta.upstream_rq_total == fortio.requests": {interp.Failed, []string{"upstream_rq_total went down", "reset"}},
			// 0 before and 0 after: nothing shows that this one was reset too; it just fails
			"delta.upstream_cx_max_requests == fortio.requests": {interp.Failed, []string{"(0)", "(20)"}},
		},
	}, {
		name:     "a stat the stats matcher dropped",
		scenario: "s2",
		// The client's proxyStatsMatcher does not include upstream_rq_pending_overflow: no snapshot has it.
		perturb: func(t *testing.T, fx []sandbox.Fixture) []sandbox.Fixture {
			for i := 1; i <= 3; i++ {
				fx = editStats(t, fx, i, func(line string) string {
					if strings.Contains(line, "conn-lab") && strings.HasSuffix(strings.SplitN(line, ":", 2)[0], ".upstream_rq_pending_overflow") {
						return ""
					}
					return line
				})
			}
			return fx
		},
		wants: map[string]perturbedWant{
			"delta.upstream_rq_pending_overflow == fortio.code503": {interp.Errored, []string{"stat upstream_rq_pending_overflow is in none of the snapshots", "proxyStatsMatcher"}},
		},
	}}
	for _, c := range cases {
		t.Run(c.scenario+": "+c.name, func(t *testing.T) {
			t.Parallel()
			fixtures := c.perturb(t, replay(t, "kit-a", c.scenario))
			sb := holdLab(t, fixtures, "conn-lab")
			sb.EnvoyStandIn(t, "conn-lab", "client", fixtures...)
			rec := kubeRun(t, sb, c.scenario, nil)
			checkPerturbed(t, rec, c.wants)
		})
	}
}

// editFortio changes the replayed fortio result.
func editFortio(t *testing.T, fx []sandbox.Fixture, edit func(map[string]any)) []sandbox.Fixture {
	t.Helper()
	out := append([]sandbox.Fixture(nil), fx...)
	for i, f := range out {
		if f.Path != "exec/fortio" {
			continue
		}
		var r map[string]any
		if err := json.Unmarshal([]byte(f.Body), &r); err != nil {
			t.Fatal(err)
		}
		var res map[string]any
		if err := json.Unmarshal([]byte(r["stdout"].(string)), &res); err != nil {
			t.Fatal(err)
		}
		edit(res)
		b, _ := json.MarshalIndent(res, "", "  ")
		r["stdout"] = string(b) + "\n"
		body, _ := json.Marshal(r)
		out[i].Body = string(body)
		return out
	}
	t.Fatal("no fortio replay among the fixtures")
	return nil
}

// editStats changes the n-th (from 1) stats fixture line by line; an empty line is dropped.
func editStats(t *testing.T, fx []sandbox.Fixture, n int, edit func(string) string) []sandbox.Fixture {
	t.Helper()
	out := append([]sandbox.Fixture(nil), fx...)
	seen := 0
	for i, f := range out {
		if f.Path != "stats" {
			continue
		}
		if seen++; seen != n {
			continue
		}
		var lines []string
		for _, l := range strings.Split(f.Body, "\n") {
			if l = edit(l); l != "" {
				lines = append(lines, l)
			}
		}
		out[i].Body = strings.Join(lines, "\n") + "\n"
		return out
	}
	t.Fatalf("no stats fixture %d", n)
	return nil
}

// perturbedWant is what a perturbed replay must do to one expectation: its outcome, and text its
// judgement's explanation or reason must contain.
type perturbedWant struct {
	outcome interp.Outcome
	text    []string
}

// checkPerturbed checks a run on a perturbed replay: it did not pass, each expectation in wants
// has its outcome and says why, and every other expectation (which does not read the perturbed
// figure) still held.
func checkPerturbed(t *testing.T, rec *interp.Record, wants map[string]perturbedWant) {
	t.Helper()
	if rec.Outcome == interp.Passed {
		t.Fatalf("the perturbed replay passed:%s", describeRecord(rec))
	}
	for _, j := range rec.Expectations {
		w, guarded := wants[j.Src]
		if !guarded {
			if j.Outcome != interp.Passed {
				t.Errorf("%s: %s %s%s, want passed: it does not read the perturbed figure", j.Src, j.Outcome, j.Explanation, j.Reason)
			}
			continue
		}
		if j.Outcome != w.outcome {
			t.Errorf("%s: %s, want %s", j.Src, j.Outcome, w.outcome)
		}
		why := j.Explanation + " " + j.Reason
		for _, s := range w.text {
			if !strings.Contains(why, s) {
				t.Errorf("%s: the judgement does not say %q: %s", j.Src, s, why)
			}
		}
		t.Logf("%s → %s: %s", j.Src, j.Outcome, strings.TrimSpace(why))
	}
	for src := range wants {
		judgement(t, rec, src)
	}
}
