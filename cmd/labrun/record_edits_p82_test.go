package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestEnvoyGroupCounterTakenOut: Envoy makes a cluster's traffic stats together, and its
// endpoint stats (membership_change, membership_total, …) together, and its stats matcher keeps
// the same names of them in every dump of one proxy: two snapshots of one cluster of one pod
// that both hold stats of a group hold the same counters of it. A delta counts a counter
// absent from its first snapshot from 0: before, the sandbox's record docs/records/kitb-mode1_strict.json
// (membership_change 2 → 3) edited to hold no membership_change before the flip and 1 after it
// replayed PASSED on a delta of 1 that a run whose count went 2 → 4 (delta 2, the claim == 1
// failed) edited so would show too. replay refuses it (exit 2), naming both snapshots.
func TestEnvoyGroupCounterTakenOut(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(root) // the record names its scenario file relative to the repository
	rec := readJSON(t, filepath.Join(root, "docs", "records", "kitb-mode1_strict.json"))
	snaps := rec["snapshots"].(map[string]any) // a record of version 1: one section per kind
	counters := func(name string) map[string]any {
		return snaps[name].(map[string]any)["counters"].(map[string]any)
	}
	if counters("before_flip")["membership_change"] != 2.0 || counters("after_flip")["membership_change"] != 3.0 {
		t.Fatalf("the record's membership_change is not 2 → 3: %v → %v", counters("before_flip")["membership_change"], counters("after_flip")["membership_change"])
	}
	delete(counters("before_flip"), "membership_change")
	counters("after_flip")["membership_change"] = 1
	edited := filepath.Join(t.TempDir(), "edited.json")
	writeJSON(t, edited, rec)
	code, out := runIn(t, root, "replay", edited)
	if code != 2 || !strings.Contains(out, "step before_flip: its snapshot of envoy dns-lab/{app=client} cluster outbound|443||gslb.lab.internal lacks counter membership_change, which step after_flip's holds, though both hold stats Envoy makes with it (its cluster's endpoint stats") {
		t.Errorf("replay of the record with membership_change taken out of before_flip: exit %d, want 2 naming both snapshots\n%s", code, out)
	}
}

// TestSequenceStepEndMovedEarlier: a sequence plans a step when the one before it ends, so a
// step's end moved earlier leaves the step after it planned long after it. Before, a failed
// run's exec that took 0.2 s, its end moved to 50 ms after its start (the claim ended.s -
// started.s < duration('100ms') and its values made true, the seal computed again), replayed
// PASSED; replay refuses it (exit 2), naming the step after it.
func TestSequenceStepEndMovedEarlier(t *testing.T) {
	dir, rec := recordedRun(t, `package lab

import "labrun.dev/schema"

s: schema.#Scenario & {
	steps: [
		{name: "s", exec: argv: ["sleep", "0.2"]},
		{name: "t", exec: argv: ["true"]},
	]
	expect: ["ended.s - started.s < duration('100ms')"]
}
`, 1)
	refused(t, dir, []string{"step t: ", "it was planned at ", "but the step before it in its sequence, s, ended at ", "a sequence plans a step when the one before it ends"}, "replay", moveEndOfS(t, dir, rec))
}
