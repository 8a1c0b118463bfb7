package interp

import (
	"strings"
	"testing"
	"time"

	"labrun.dev/labrun/dsl"
)

// TestStepContradictions: a step's record a run could have written (passed, failed with its
// error, failed as expectFail expected, allowed by mayFail, still running) is told nothing;
// one edited so that its times, outcome or error disagree is told, naming what and the values.
func TestStepContradictions(t *testing.T) {
	good := func() StepRecord {
		return StepRecord{Path: "steps.1", Name: "check", Kind: "exec", Planned: time.Second, Start: time.Second + time.Millisecond,
			Skew: time.Millisecond, End: 2 * time.Second, Outcome: Passed}
	}
	for _, c := range []struct {
		name string
		edit func(s *StepRecord)
		want string // "" for none
	}{
		{"passed", func(*StepRecord) {}, ""},
		{"failed", func(s *StepRecord) { s.Outcome, s.Error = Failed, "assert: x" }, ""},
		{"timed out", func(s *StepRecord) { s.Outcome, s.Error = TimedOut, "exec timed out after 1s" }, ""},
		{"failed as expected", func(s *StepRecord) {
			s.ExpectedError, s.Warnings = "boom", []string{expectFailWarning + "boom"}
		}, ""},
		{"allowed by mayFail", func(s *StepRecord) { s.Outcome, s.Error, s.Warnings = Errored, "boom", []string{MayFailWarning} }, ""},
		{"still running", func(s *StepRecord) { s.Outcome, s.End = "", 0 }, ""},
		{"ends before it starts", func(s *StepRecord) { s.End = time.Second }, "it ends at 1s, before it starts at 1.001s"},
		{"started later, skew left", func(s *StepRecord) { s.Start += time.Second },
			"its skew is 1ms, but it started at 2.001s, planned at 1s: start − planned is 1.001s"},
		{"passed with an error", func(s *StepRecord) { s.Error = "boom" }, `its outcome is passed, but it records the error "boom"`},
		{"failed without an error", func(s *StepRecord) { s.Outcome = Errored }, "its outcome is error, but it records no error"},
		{"passed with mayFail's warning", func(s *StepRecord) { s.Warnings = []string{MayFailWarning} },
			`its outcome is passed, but it records the warning "mayFail: the run goes on"`},
		{"an expected error on a failed step", func(s *StepRecord) {
			s.Outcome, s.Error, s.ExpectedError, s.Warnings = Failed, "boom", "boom", []string{expectFailWarning + "boom"}
		}, `it records the error its expectFail expected ("boom"), but its outcome is failed, not passed`},
		{"an expected error added", func(s *StepRecord) { s.ExpectedError = "boom" },
			`it records the error its expectFail expected ("boom"), but not the warning "expectFail: failed as expected: …"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := good()
			c.edit(&s)
			got := strings.Join(s.Contradictions(), "; ")
			if c.want == "" && got != "" || !strings.Contains(got, c.want) {
				t.Errorf("contradictions %q, want %q", got, c.want)
			}
		})
	}
}

// TestSkippedContradictions: a skipped step record is one only a cleanup cut short writes (its
// timeout, a second interrupt); one in another phase, or in a record whose outcome does not
// say the cleanup ended early, is told.
func TestSkippedContradictions(t *testing.T) {
	for _, c := range []struct {
		name    string
		phase   string
		outcome Outcome
		err     string
		want    string // "" for none
	}{
		{"cleanup timed out", "cleanup", TimedOut, "cleanup: the cleanup's timeout (1s) expired", ""},
		{"failed, then the cleanup timed out", "cleanup", Failed, "cleanup: the cleanup's timeout (1s) expired", ""},
		{"a step failed, then the cleanup timed out", "cleanup", Errored, "x.cue:3:4: n (exec): boom; cleanup: the cleanup's timeout (1s) expired", ""},
		{"interrupted in the cleanup", "cleanup", Interrupted, "interrupted", ""},
		{"in a passed run", "cleanup", Passed, "", "but the run's outcome (passed) does not say the cleanup ended early"},
		{"in a failed run that says nothing of the cleanup", "cleanup", Failed, "", "but the run's outcome (failed) does not say the cleanup ended early"},
		{"a step of the steps phase", "steps", TimedOut, "cleanup: the cleanup's timeout (1s) expired", "but it is a step of the steps phase"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := &Record{Outcome: c.outcome, Error: c.err, Steps: []*StepRecord{
				{Path: c.phase + ".0", Name: "stop", Kind: "exec", Phase: dsl.Phase(c.phase), Outcome: Skipped, Error: "the cleanup's timeout (1s) expired"},
			}}
			got := strings.Join(rec.skippedContradictions(), "; ")
			if c.want == "" && got != "" || !strings.Contains(got, c.want) {
				t.Errorf("contradictions %q, want %q", got, c.want)
			}
		})
	}
}
