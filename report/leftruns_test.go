package report

import "testing"

// TestLeftRunsHeldByFinalizers: the summary of runs whose leftovers finalizers hold does not
// send the user to labrun clean alone (which only deletes them again): it says that
// finalizers hold them and that each run's verdict says what removes them. Before, runs that
// each left a held object read "2 of 2 runs left objects or processes behind" and nothing of
// why labrun clean would not help; runs of mixed leftovers sent all to labrun clean.
func TestLeftRunsHeldByFinalizers(t *testing.T) {
	held := "left 1 object behind (ConfigMap lab/held); finalizers hold ConfigMap lab/held (example.com/hold): no delete removes them, `labrun clean` neither; what added them removes them when it runs, or by hand `kubectl patch configmap held -n lab --type=merge -p '{\"metadata\":{\"finalizers\":null}}'`"
	process := "did not stop 1 process in its cleanup (process srv): labrun ends it as it exits, with all it started"
	plain := "left 1 object behind (ConfigMap lab/c); `labrun clean --yes --scenario s` deletes the objects"
	for _, tc := range []struct {
		name  string
		lefts []string
		want  string
	}{
		{"plain", []string{plain, ""}, "1 of 2 runs left objects or processes behind (`labrun clean --yes --scenario s` deletes the objects)"},
		{"held", []string{held, held}, "2 of 2 runs left objects or processes behind; finalizers hold objects of 2 of them, which no delete removes, `labrun clean` neither: each run's verdict says what does"},
		// A process the cleanup did not stop is not left behind (interp.Record.LeftBehind):
		// before, "1 of 2 runs left objects or processes behind" of a run that left nothing.
		{"process alone", []string{process, ""}, "the cleanup of 1 of 2 runs did not stop processes, which labrun ended as it exited"},
		{"process and object", []string{process, plain}, "1 of 2 runs left objects or processes behind (`labrun clean --yes --scenario s` deletes the objects); the cleanup of 1 of 2 runs did not stop processes, which labrun ended as it exited"},
		{"mixed", []string{held, plain}, "2 of 2 runs left objects or processes behind (`labrun clean --yes --scenario s` deletes the objects); finalizers hold objects of 1 of them, which no delete removes, `labrun clean` neither: each run's verdict says what does"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &Summary{Scenario: "s"}
			for _, l := range tc.lefts {
				s.Runs = append(s.Runs, SummaryRun{Left: l})
			}
			if got := LeftRuns(s); got != tc.want {
				t.Errorf("LeftRuns() =\n%q, want\n%q", got, tc.want)
			}
		})
	}
}
