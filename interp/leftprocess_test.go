package interp_test

import (
	"testing"

	"labrun.dev/labrun/interp"
)

// TestLeftBehindProcessEndsWithLabrun: a process that a second interrupt (or the cleanup's
// timeout) kept the cleanup from stopping is not "left behind": it runs under a keeper that
// kills it, and all it started, as labrun exits. Before, the verdict said "left 1 process
// behind (process srv)" and the report "LEFT OBJECTS BEHIND", words that send a reader to
// `labrun clean`, which on the local target asks for a kubeconfig; the process was gone by
// then (/tmp/probe/p102/item2: ps shows no `sleep 300` after labrun exits).
func TestLeftBehindProcessEndsWithLabrun(t *testing.T) {
	for _, tc := range []struct {
		name        string
		leftovers   []string
		want        string
		leftObjects bool
	}{
		{"one process", []string{"process srv"},
			"did not stop 1 process in its cleanup (process srv): labrun ends it as it exits, with all it started", false},
		{"two processes", []string{"process a", "process b (its start was abandoned)"},
			"did not stop 2 processes in its cleanup (process a, process b (its start was abandoned)): labrun ends them as it exits, with all they started", false},
		{"an object and a process", []string{"ConfigMap lab/c", "process srv"},
			"left 1 object behind (ConfigMap lab/c); `labrun clean --yes --scenario s` deletes the objects; and it did not stop 1 process in its cleanup (process srv): labrun ends it as it exits, with all it started", true},
		{"objects alone, as before", []string{"ConfigMap lab/a", "ConfigMap lab/b"},
			"left 2 objects behind (ConfigMap lab/a, ConfigMap lab/b); `labrun clean --yes --scenario s` deletes the objects", true},
		{"nothing", nil, "", false},
	} {
		rec := &interp.Record{Scenario: "s", Leftovers: tc.leftovers}
		if got := rec.LeftBehind(); got != tc.want {
			t.Errorf("%s: LeftBehind() = %q\nwant %q", tc.name, got, tc.want)
		}
		if got := rec.LeftObjects(); got != tc.leftObjects {
			t.Errorf("%s: LeftObjects() = %v, want %v", tc.name, got, tc.leftObjects)
		}
	}
}
