package interp

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/schema"
)

// An exec step's outcome follows from the exit code it records and the step's exitCode (0
// unless set): its command ran and recorded its result, then the step passed when the code
// was exitCode and erred otherwise; with expectFail, it failed when the code was exitCode (the
// step succeeded) and passed or erred otherwise, never failed (under a bare expectFail: true,
// 126 and 127, a shell's command not found, err: the command did not run). A record whose
// exec says otherwise, where the result it holds is that execution's, was changed after the
// run.

// execContradiction says how sr, an execution of the exec step s, contradicts the exit code
// rec holds for it; "" when it does not, or when the result rec holds is not known to be
// sr's (see ownResult).
func execContradiction(rec *Record, sr *StepRecord, s *dsl.Step) string {
	p, ok := s.Params.(*schema.Exec)
	if !ok || sr.Outcome == "" {
		return ""
	}
	if c := exitListedContradiction(rec, sr, s); c != "" {
		return c
	}
	if c := unrecordedPassContradiction(rec, sr, s); c != "" {
		return c
	}
	passed := sr.Outcome == Passed && sr.ExpectedError == ""
	r, ok := ownResult(rec, sr, passed && !s.ExpectFail)
	if !ok {
		return ""
	}
	var res schema.ExecResult
	switch v := r.Value.(type) {
	case schema.ExecResult:
		res = v
	case *schema.ExecResult:
		if v == nil {
			return ""
		}
		res = *v
	default:
		return ""
	}
	return strings.Join(slices.DeleteFunc([]string{exitContradiction(sr, s, p, res), captureContradiction(p, res)}, func(c string) bool { return c == "" }), "; ")
}

// captureContradiction says how the groups res records as captured differ from those the
// step's capture pattern finds in the stdout res records, which the run matched it against
// (schema.Exec.Run: the output as kept, cut or not); "" when they do not, or when the pattern
// is made at run time (a ${...} in it).
func captureContradiction(p *schema.Exec, res schema.ExecResult) string {
	if p.Capture == "" || strings.Contains(p.Capture, "${") {
		return ""
	}
	re, err := regexp.Compile(p.Capture)
	if err != nil {
		return ""
	}
	want := schema.CaptureMatch(re, res.Stdout)
	if maps.Equal(want, res.Captured) || len(want) == 0 && len(res.Captured) == 0 {
		return ""
	}
	var diffs []string
	for _, k := range slices.Sorted(maps.Keys(res.Captured)) {
		if w, ok := want[k]; !ok && want != nil && res.Captured[k] == "" && slices.Contains(re.SubexpNames(), k) {
			// A record made before only the groups that took part in the match were recorded.
			diffs = append(diffs, fmt.Sprintf("it records \"\" captured as %s, but group %s of its capture pattern %q takes no part in the match it finds in the stdout it records (a group in an alternative the match did not take has no value; a record made before labrun recorded only the groups that took part held it as \"\")", k, k, p.Capture))
		} else if !ok {
			diffs = append(diffs, fmt.Sprintf("it records %q captured as %s, but its capture pattern %q finds none in the stdout it records", res.Captured[k], k, p.Capture))
		} else if w != res.Captured[k] {
			diffs = append(diffs, fmt.Sprintf("it records %q captured as %s, but its capture pattern %q finds %q in the stdout it records", res.Captured[k], k, p.Capture, w))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if _, ok := res.Captured[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("it records nothing captured as %s, but its capture pattern %q finds %q in the stdout it records", k, p.Capture, want[k]))
		}
	}
	return strings.Join(diffs, "; ")
}

// logsCaptureContradiction says which entry of the logs step s's result records a group as
// "" that takes no part in its capture pattern's match in the entry's line: what a record made
// before only the groups that took part were recorded holds, read as "" where it has no value
// (the artifacts, when beside the record, say so too; without them this does). "" when none.
func logsCaptureContradiction(rec *Record, sr *StepRecord, s *dsl.Step) string {
	p, ok := s.Params.(*schema.Logs)
	if !ok || p.Capture == "" || strings.Contains(p.Capture, "${") {
		return ""
	}
	r, ok := ownResult(rec, sr, sr.Outcome == Passed)
	if !ok {
		return ""
	}
	var res schema.LogResult
	switch v := r.Value.(type) {
	case schema.LogResult:
		res = v
	case *schema.LogResult:
		if v == nil {
			return ""
		}
		res = *v
	default:
		return ""
	}
	re, err := regexp.Compile(p.Capture)
	if err != nil {
		return ""
	}
	for i, e := range res.Entries {
		want := schema.CaptureMatch(re, e.Line)
		if want == nil {
			continue
		}
		for _, k := range slices.Sorted(maps.Keys(e.Captures)) {
			if _, ok := want[k]; !ok && e.Captures[k] == "" && slices.Contains(re.SubexpNames(), k) {
				return fmt.Sprintf("its entries[%d] records \"\" captured as %s, but group %s of its capture pattern %q takes no part in the match it finds in that entry's line (a group in an alternative the match did not take has no value; a record made before labrun recorded only the groups that took part held it as \"\")", i, k, k, p.Capture)
			}
		}
	}
	return ""
}

// unrecordedPassContradiction says that sr, the only execution of a named exec step, passed
// (not as an expectFail expected) in a record that holds no result of it: an exec records its
// result before it passes. Before, an exec an interrupt (or its timeout) cut, edited into a
// pass where no expectation read its result, replayed PASSED from a record of any version
// without the exit.txt that says it was cut (version 7).
func unrecordedPassContradiction(rec *Record, sr *StepRecord, s *dsl.Step) string {
	if sr.Outcome != Passed || sr.ExpectedError != "" || s.ExpectFail || sr.Name == "" || sr.Sample > 0 || rec.Version < 2 || rec.Results[sr.Name] != nil {
		return ""
	}
	for _, o := range rec.Steps {
		if o != sr && o.Name == sr.Name {
			return ""
		}
	}
	return "it passed, but the record holds no result of it, which an exec records before it passes"
}

// exitListedContradiction says that sr, an execution of an exec step, passed in a record of
// version 7 on that lists no exit.txt of it: an exec that ran to its end writes its exit code
// there, or why it has none (schema.ExitNotStarted, schema.ExitCut), and replay holds a step
// that passed to it (execEndContradictions). Its entry taken out, a command that was not
// started, edited into "failed as expected", was not held to it. A record of version 4 to 6
// (exit.txt written, of an exec that exited, since version 4) is held to it where the step
// passed other than as an expectFail expected: such a pass is an exit code, which it wrote.
// Before, an exec its timeout cut, edited into a pass with its exit.txt (cut) taken out and
// the record lowered to version 6 (lints and invocation taken out too), replayed PASSED.
//
// A step that ran more than once (a repeat's rounds, a sampler's samples) lists an exit.txt
// for each execution that passed so: which is whose is not known here, but each wrote its
// own. Said once, of the last such execution. Before, a repeat's last round that its timeout
// cut, edited into a pass with its exit.txt taken out, replayed PASSED.
func exitListedContradiction(rec *Record, sr *StepRecord, s *dsl.Step) string {
	// wrote says that o, an execution of s, wrote an exit.txt since it passed.
	wrote := func(o *StepRecord) bool {
		return o.Outcome == Passed && (rec.Version >= 7 || !s.ExpectFail && o.ExpectedError == "")
	}
	if rec.Version < 4 || !wrote(sr) {
		return "" // before version 7, a command not started passed an expectFail and wrote none
	}
	name := or(sr.Name, sr.Path)
	passed, last := 0, sr
	for _, o := range rec.Steps {
		if o == nil || or(o.Name, o.Path) != name {
			continue
		}
		if o.Path != sr.Path {
			return "" // another step's of the same name: not told apart here
		}
		if wrote(o) {
			passed, last = passed+1, o
		}
	}
	listed := 0
	for _, a := range rec.Artifacts {
		if a != nil && a.Step == name && a.Name == schema.ExitArtifact {
			listed++
		}
	}
	if last != sr || listed >= passed {
		return ""
	}
	since := "an exec writes its exit code to, or why it has none (records of version 7 on)"
	if rec.Version < 7 {
		since = "an exec that exited writes its exit code to (records of version 4 on)"
	}
	if passed == 1 {
		return fmt.Sprintf("it passed, but the record lists no %s of the step, which %s", schema.ExitArtifact, since)
	}
	return fmt.Sprintf("%d of its executions passed, but the record lists only %d %s of the step: each wrote one, which %s", passed, listed, schema.ExitArtifact, since)
}

// exitContradiction says how sr's outcome contradicts the exit code res records.
func exitContradiction(sr *StepRecord, s *dsl.Step, p *schema.Exec, res schema.ExecResult) string {
	exit, want := int(res.Exit), p.ExitCode
	switch {
	case !s.ExpectFail && sr.Outcome == Passed && exit != want:
		return fmt.Sprintf("its outcome is passed, but it records exit %d and the step expects %d", exit, want)
	case !s.ExpectFail && sr.Outcome != Passed && exit == want:
		return fmt.Sprintf("its outcome is %s, but it records exit %d, the code the step expects, with which it passes", sr.Outcome, exit)
	case s.ExpectFail && sr.Outcome == Passed && exit == want:
		return fmt.Sprintf("its outcome is passed, as failing its expectFail expected, but it records exit %d, the code the step expects: the command succeeded, which fails a step with expectFail", exit)
	case s.ExpectFail && sr.Outcome == Failed && exit != want:
		return fmt.Sprintf("its outcome is failed, but it records exit %d and the step expects %d: with expectFail, another code passes the step or errs it, never fails it", exit, want)
	case s.ExpectFail && s.ExpectFailRE == nil && sr.Outcome == Passed && (exit == 126 || exit == 127):
		// A shell's "not executable", "command not found": the command did not run
		// (schema.DidNotRun), which a bare expectFail: true does not take for the failure it
		// expects. Before, such a run's error edited into "failed as expected" replayed
		// PASSED beside the exit.txt that says 127.
		return fmt.Sprintf("it passed as its expectFail: true expected, but it records exit %d, a shell's command not found or not executable: the command did not run, which expectFail: true does not expect (a step that did not run keeps its error)", exit)
	}
	return ""
}

// ownResult is the result rec holds under sr's name when it is the one sr's execution
// recorded: sr is the last execution of its step, every other one ended before it started
// (none recorded after it), and sr recorded a result: it is the step's only execution (the
// result is then its), or recorded says it did (an exec that passed recorded its result first).
func ownResult(rec *Record, sr *StepRecord, recorded bool) (*Result, bool) {
	if sr.Name == "" {
		return nil, false
	}
	r := rec.Results[sr.Name]
	if r == nil || r.Kind != sr.Kind {
		return nil, false
	}
	only, after := true, false
	for _, o := range rec.Steps {
		if o == sr {
			after = true
			continue
		}
		if o.Name != sr.Name {
			continue
		}
		only = false
		if after || o.Outcome == "" || o.End > sr.Start {
			return nil, false
		}
	}
	if !only && !recorded {
		return nil, false
	}
	return r, true
}

// loadCountContradictions says which loads rec holds recorded more connections than their
// step runs (schema.Load.RunConnections), or another number of requests than their step fixes
// (schema.Load.FixedRequests), each with the numbers: a load records its
// result only when fortio made exactly the requests it was told (schema.Load.Run), and vet
// refuses an expectation restating them as one that cannot fail, so a record that holds
// another count was changed after the run; one stopped before its end (partial) holds fewer.
func loadCountContradictions(rec *Record, sc *dsl.Scenario) []string {
	var msgs []string
	for _, ph := range sc.Phases() {
		dsl.Walk(ph.Steps, func(s *dsl.Step) {
			p, ok := s.Params.(*schema.Load)
			if !ok || s.Kind != "load" || s.Name == "" {
				return
			}
			r := rec.Results[s.Name]
			if r == nil || r.Kind != "load" {
				return
			}
			l, ok := r.Value.(*LoadRecord)
			if !ok || l == nil {
				return
			}
			// fortio runs the connections it is given, or fewer (driver/fortio lowers them at
			// a fixed qps); a load from several pods records their sum.
			if c, _ := p.RunConnections(); l.Connections > float64(c) && (p.From == nil || p.From.Pods == 0) {
				written := fmt.Sprintf("connections: %d", p.WithDefaults().Connections)
				if c != p.WithDefaults().Connections {
					written += fmt.Sprintf(", lowered to its %d requests", c)
				}
				msgs = append(msgs, fmt.Sprintf("step %s: its load records %s connections, but the step runs at most %d (%s), and fortio runs the connections it is given or fewer",
					s.Name, dsl.FormatValue(l.Connections), c, written))
			}
			if c := loadDurationContradiction(s.Name, p, l); c != "" {
				msgs = append(msgs, c)
			}
			n := p.FixedRequests()
			if n == 0 || l.Requests == float64(n) || l.Partial != "" && l.Requests < float64(n) {
				return // a load stopped before its end (partial) made fewer
			}
			msgs = append(msgs, fmt.Sprintf("step %s: its load records %s requests, but the step fixes %d (requests: %d), and a load records its result only when fortio made exactly that many",
				s.Name, dsl.FormatValue(l.Requests), n, n))
		})
	}
	return msgs
}

// loadDurationContradiction says how the duration a load of a duration (no requests) records
// is shorter than fortio runs such a load: as fast as it can, each connection calls until the
// duration has passed, so the load lasts at least its duration; at a fixed qps, each
// connection's last call is planned at its calls over its share of the qps, so the load lasts
// at least its requests over its qps (fewer than the duration when they do not divide evenly
// among the connections: 4 requests of 10 qps for 500 ms over 2 connections took 0.4006 s), or
// the duration where fortio fell behind and stopped early. Before, a load of 50 qps for 1 s
// whose duration was edited to 0.5 s and its qps to 100 in the record and fortio.json (the
// seal computed again) replayed PASSED approx(fortio.qps, 100, 0.1). A load stopped before
// its end (partial), one from several pods and one that made no request are not held to it.
func loadDurationContradiction(name string, p *schema.Load, l *LoadRecord) string {
	if p.Requests > 0 || p.From != nil && p.From.Pods > 0 || l.Partial != "" || l.Requests <= 0 {
		return ""
	}
	d := p.WithDefaults().Duration.D().Seconds()
	least, why := d, fmt.Sprintf("as fast as it can, fortio calls until its duration (%s) has passed", dsl.WithUnit(d, "s"))
	if p.QPS > 0 {
		if r := l.Requests / p.QPS; r < least {
			least = r
			why = fmt.Sprintf("at %s, fortio plans each connection's last call at its calls over its share of the qps: its %s requests take at least %s", dsl.WithUnit(p.QPS, "1/s"), dsl.FormatValue(l.Requests), dsl.WithUnit(r, "s"))
		} else {
			why = fmt.Sprintf("at %s, fortio plans its last calls at its duration (%s) or later", dsl.WithUnit(p.QPS, "1/s"), dsl.WithUnit(d, "s"))
		}
	}
	if l.DurationS >= least-0.001 {
		return ""
	}
	return fmt.Sprintf("step %s: its load records a duration of %s, but %s: the load's duration was changed after the run", name, dsl.WithUnit(l.DurationS, "s"), why)
}
