package scenarios_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"labrun.dev/labrun/interp"
)

// kitBDiffRecords are the records docs/experiments.md diffs (labrun diff STRICT LOGICAL): written
// by TestE2EKitBDiff with LABRUN_UPDATE=1 from a real run of each scenario on the sandbox.
const kitBDiffRecords = "../docs/records"

// TestE2EKitBDiff runs seed 002 §4's mode1 in both resolutions (STRICT_DNS, LOGICAL_DNS) on the
// sandbox, as TestE2EKitBReplay does (real: setup, the Istio objects through the API server,
// istiod's push, the timeline, the flip in the lab DNS; replayed: the client sidecar's stats and
// /clusters per snapshot, fortio's load and the curl loop, through the Envoy admin and exec
// stand-ins — no Envoy runs here), and compares the two records with interp.Diff, which is what
// labrun diff prints. The comparison must name what the seed claims differs — STRICT replaces
// the host (membership_change +1) and drains its connections (upstream_cx_destroy_local > 0),
// LOGICAL changes neither — and the committed records under docs/records must differ the same
// way. With LABRUN_UPDATE=1 it rewrites them. It runs with LABRUN_E2E_ALL=1 (CI).
func TestE2EKitBDiff(t *testing.T) {
	if os.Getenv("LABRUN_E2E_ALL") != "1" && os.Getenv("LABRUN_UPDATE") != "1" {
		t.Skip("runs with LABRUN_E2E_ALL=1 (two minutes of recorded timeline; TestE2EKitBReplay runs both scenarios too)")
	}
	t.Parallel()
	var mu sync.Mutex
	recs := map[string]*interp.Record{}
	t.Run("runs", func(t *testing.T) { // returns when both runs, in parallel, have ended
		for _, name := range []string{"mode1_strict", "mode1_logical"} {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				fx := replay(t, "kit-b", name)
				sb := holdLab(t, fx, "dns-lab")
				sb.EnvoyStandIn(t, "dns-lab", "client", fx...)
				rec := kubeRun(t, sb, name, sandboxVars)
				requirePassed(t, rec)
				mu.Lock()
				recs[name] = rec
				mu.Unlock()
			})
		}
	})
	if t.Failed() {
		return
	}
	checkKitBDiff(t, "this run", interp.Diff(recs["mode1_strict"], recs["mode1_logical"], 0))
	if os.Getenv("LABRUN_UPDATE") == "1" {
		root, err := filepath.Abs("..")
		if err != nil {
			t.Fatal(err)
		}
		for name, rec := range recs {
			b, err := json.MarshalIndent(rec, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			// The record names the scenario's files by their absolute paths: keep the
			// repository's.
			b = bytes.ReplaceAll(b, []byte(`"`+root+string(filepath.Separator)), []byte(`"`))
			if err := os.MkdirAll(kitBDiffRecords, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(kitBDiffRecords, "kitb-"+name+".json"), append(b, '\n'), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	var committed [2]*interp.Record
	for i, name := range []string{"mode1_strict", "mode1_logical"} {
		b, err := os.ReadFile(filepath.Join(kitBDiffRecords, "kitb-"+name+".json"))
		if err != nil {
			t.Fatalf("%v (LABRUN_UPDATE=1 writes it)", err)
		}
		committed[i] = new(interp.Record)
		if err := json.Unmarshal(b, committed[i]); err != nil {
			t.Fatal(err)
		}
	}
	checkKitBDiff(t, "the committed records", interp.Diff(committed[0], committed[1], 0))
}

// checkKitBDiff wants the STRICT → LOGICAL comparison to show seed 002 §4's difference.
func checkKitBDiff(t *testing.T, what string, d *interp.RunDiff) {
	t.Helper()
	const pair = `delta("before_flip","after_flip").`
	want := map[string]bool{pair + "membership_change": false, pair + "upstream_cx_destroy_local": false, pair + "upstream_cx_total": false}
	for _, df := range d.Differences {
		if _, ok := want[df.Path]; !ok {
			continue
		}
		a, okA := df.A.(float64)
		b, okB := df.B.(float64)
		if !okA || !okB || a <= 0 || b != 0 {
			t.Errorf("%s: %s is %v under STRICT and %v under LOGICAL, want > 0 and 0", what, df.Path, df.A, df.B)
		}
		want[df.Path] = true
	}
	for p, found := range want {
		if !found {
			t.Errorf("%s: the diff of STRICT and LOGICAL does not name %s", what, p)
		}
	}
	if len(d.Verdicts) == 0 {
		t.Errorf("%s: no expectation's verdict differs, yet the two scenarios claim different things", what)
	}
}
