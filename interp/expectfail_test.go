package interp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"labrun.dev/labrun/driver/fakes"
	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/schema"
)

// stepRecord is the last record of the named step.
func stepRecord(t *testing.T, rec *interp.Record, name string) *interp.StepRecord {
	t.Helper()
	var out *interp.StepRecord
	for _, s := range rec.Steps {
		if s.Name == name {
			out = s
		}
	}
	if out == nil {
		t.Fatalf("no record of step %s", name)
	}
	return out
}

// TestExpectFail: a step's own timeout is a failure expectFail accepts; mayFail lets a step
// expected to fail that succeeded go on, and expressions see it as failed; a repeat retries a
// mayFail step until outcome.<step> says it passed; an error that does not match the pattern
// keeps its kind (exit 3, not 1).
func TestExpectFail(t *testing.T) {
	sc := loadScenario(t, `
s: schema.#Scenario & {
	steps: [
		{name: "hang", timeout: "1s", expectFail: "timed out after 1s", exec: argv: ["sleep"]},
		{name: "ok", mayFail: true, expectFail: true, exec: argv: ["true"]},
		{name: "r", repeat: {max: 5, until: "outcome.probe == 'passed'", steps: [
			{name: "probe", mayFail: true, exec: argv: ["probe"]},
		]}},
		{assert: "outcome.hang == 'passed' && error.hang == 'exec timed out after 1s'"},
	]
	expect: [
		"outcome.ok == 'failed' && error.ok contains 'expected to fail'",
		"outcome.probe == 'passed' && outcome.r == 'passed'",
	]
}
`)
	synctest.Test(t, func(t *testing.T) {
		probes := 0
		w := &fakes.World{StepTime: 0, ExecResult: func(req schema.Exec) schema.ExecResult {
			if req.Argv[0] == "probe" {
				probes++
				if probes < 3 {
					return schema.ExecResult{Exit: 1}
				}
			}
			return schema.ExecResult{}
		}}
		tg := w.Target()
		slow := &slowSleep{tg.Exec}
		tg.Exec = slow
		rec := interp.New(tg).Run(context.Background(), context.Background(), sc)
		if rec.Outcome != interp.Passed {
			t.Fatalf("outcome %s: %s", rec.Outcome, rec.Error)
		}
		if h := stepRecord(t, rec, "hang"); h.Outcome != interp.Passed || h.ExpectedError != "exec timed out after 1s" {
			t.Errorf("hang: %s %q", h.Outcome, h.ExpectedError)
		}
		if probes != 3 {
			t.Errorf("probe ran %d times, want 3", probes)
		}
		for _, j := range rec.Expectations {
			if j.Outcome != interp.Passed {
				t.Errorf("%s: %s %s", j.Src, j.Outcome, j.Explanation)
			}
		}
	})

	mismatch := loadScenario(t, `
s: schema.#Scenario & {
	steps: [{name: "x", expectFail: "NotFound", exec: argv: ["false"]}]
}
`)
	w := &fakes.World{ExecResult: func(schema.Exec) schema.ExecResult { return schema.ExecResult{Exit: 1} }}
	rec := interp.New(w.Target()).Run(context.Background(), context.Background(), mismatch)
	if rec.Outcome != interp.Errored || !strings.Contains(rec.Error, `(expectFail: expected an error matching "NotFound")`) {
		t.Errorf("mismatch: %s %q", rec.Outcome, rec.Error)
	}
}

// slowSleep makes `sleep` hang until its context ends (the fakes' exec returns at once).
type slowSleep struct{ schema.Executor }

func (s *slowSleep) Exec(ctx context.Context, req schema.Exec) (schema.ExecResult, error) {
	if req.Argv[0] == "sleep" {
		<-ctx.Done()
		return schema.ExecResult{}, ctx.Err()
	}
	return s.Executor.Exec(ctx, req)
}

// TestExpectFailNotOnInterrupt: an interrupt is never the failure a step expects: the run is
// interrupted, the step cancelled.
func TestExpectFailNotOnInterrupt(t *testing.T) {
	sc := loadScenario(t, `
s: schema.#Scenario & {
	steps: [{name: "hang", expectFail: true, exec: argv: ["sleep"]}]
}
`)
	synctest.Test(t, func(t *testing.T) {
		w := &fakes.World{}
		tg := w.Target()
		tg.Exec = &slowSleep{tg.Exec}
		ctx, cancel := context.WithCancelCause(context.Background())
		time.AfterFunc(2*time.Second, func() { cancel(interp.ErrInterrupted) })
		rec := interp.New(tg).Run(ctx, context.Background(), sc)
		if rec.Outcome != interp.Interrupted {
			t.Fatalf("outcome %s: %s", rec.Outcome, rec.Error)
		}
		if h := stepRecord(t, rec, "hang"); h.Outcome != interp.Cancelled || h.ExpectedError != "" {
			t.Errorf("hang: %s %q", h.Outcome, h.ExpectedError)
		}
	})
}

// TestOutcomeOfOldRecord: a record written before outcome.<step> existed (no expectedError)
// is judged from its steps alone; a named step without a record was skipped, and has no error.
func TestOutcomeOfOldRecord(t *testing.T) {
	sc := loadScenario(t, `
s: schema.#Scenario & {
	steps: [
		{name: "a", mayFail: true, exec: argv: ["x"]},
		{name: "b", exec: argv: ["y"]},
	]
	expect: ["outcome.a == 'error' && error.a == 'boom'", "outcome.b == 'skipped' && !has(error, 'b')"]
}
`)
	var rec interp.Record
	old := `{"version": 1, "scenario": "s", "outcome": "passed", "steps": [
		{"path": "steps.0", "name": "a", "kind": "exec", "outcome": "error", "error": "boom"}]}`
	if err := json.Unmarshal([]byte(old), &rec); err != nil {
		t.Fatal(err)
	}
	for _, j := range interp.Rejudge(&rec, sc) {
		if j.Outcome != interp.Passed {
			t.Errorf("%s: %s %s %s", j.Src, j.Outcome, j.Explanation, j.Reason)
		}
	}
}

// TestOutcomeOfSampler: a sampler's outcome is that of its samples together: one sample that
// failed or erred is the step's failure, whatever the samples after it did. outcome.probe read
// the last sample's alone, so a probe sampled while a method ran, missing at two looks and
// back by the last, read "passed" and a continuous hypothesis (Chaos Toolkit's) passed.
func TestOutcomeOfSampler(t *testing.T) {
	sc := loadScenario(t, `
s: schema.#Scenario & {
	steps: [
		{name: "method", background: true, exec: argv: ["sleep", "1"]},
		{name: "probe", every: "100ms", while: "method", mayFail: true, exec: argv: ["test", "-f", "x"]},
	]
	expect: ["outcome.probe == 'error' && error.probe == 'first miss'"]
}
`)
	var rec interp.Record
	samples := `{"version": 1, "scenario": "s", "outcome": "passed", "steps": [
		{"path": "steps.0", "name": "method", "kind": "exec", "background": true, "outcome": "passed"},
		{"path": "steps.1", "name": "probe", "kind": "exec", "sample": 1, "outcome": "passed"},
		{"path": "steps.1", "name": "probe", "kind": "exec", "sample": 2, "outcome": "error", "error": "first miss"},
		{"path": "steps.1", "name": "probe", "kind": "exec", "sample": 3, "outcome": "error", "error": "second miss"},
		{"path": "steps.1", "name": "probe", "kind": "exec", "sample": 4, "outcome": "passed"}]}`
	if err := json.Unmarshal([]byte(samples), &rec); err != nil {
		t.Fatal(err)
	}
	for _, j := range interp.Rejudge(&rec, sc) {
		if j.Outcome != interp.Passed {
			t.Errorf("%s: %s %s %s", j.Src, j.Outcome, j.Explanation, j.Reason)
		}
	}
}

// TestExprOutcome maps every outcome a step record can have.
func TestExprOutcome(t *testing.T) {
	for in, want := range map[interp.Outcome]string{
		interp.Passed: "passed", interp.Failed: "failed", interp.Errored: "error", interp.TimedOut: "error",
		interp.Cancelled: "interrupted", interp.Interrupted: "interrupted", interp.Skipped: "skipped", "": "running",
	} {
		if got := interp.ExprOutcome(in); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}

// TestExpectFailNotJudged: expectFail: true accepts only the step's genuine failure. An
// expression that could not be evaluated (a capture that matched nothing, a type error) was
// neither true nor false: an assert, a wait's, a config's or a get's until that ends so keeps its
// error, saying so, and the run errors; one judged false is the failure expected. A pattern
// that matches the evaluation error itself says it is the failure expected; one that matches
// only the wait's timeout does not.
func TestExpectFailNotJudged(t *testing.T) {
	const notJudged = "(expectFail: the expression could not be evaluated; expectFail: true expects it to be false, not to have no answer; give a pattern that matches this error if it is the failure expected)"
	for _, c := range []struct {
		name, step string
		outcome    interp.Outcome // the step's
		err        string         // in the step's error (or the error it was expected to fail with)
	}{
		{"assert no value", `{name: "x", expectFail: true, assert: "int(c.captured.v) == 5"}`,
			interp.Errored, `c.captured.v has no value: the capture of "c" matched nothing in its stdout ` + notJudged},
		{"assert type error", `{name: "x", expectFail: true, assert: "int(c.stdout) == 5"}`,
			interp.Errored, notJudged},
		{"assert false", `{name: "x", expectFail: true, assert: "c.exit == 5"}`,
			interp.Passed, "assert failed: c.exit (0) == 5"},
		{"assert pattern names the error", `{name: "x", expectFail: "has no value", assert: "int(c.captured.v) == 5"}`,
			interp.Passed, "c.captured.v has no value"},
		{"assert pattern does not", `{name: "x", expectFail: "failed", assert: "int(c.captured.v) == 5"}`,
			interp.Errored, `(expectFail: expected an error matching "failed"; the expression could not be evaluated, which the pattern does not match)`},
		{"wait unknown stat", `{name: "x", expectFail: true, timeout: "3s", wait: until: "b.last.upstream_rq_totl > 0"}`,
			interp.TimedOut, "wait timed out after 3s; last: stat upstream_rq_totl is in none of"},
		{"wait unknown stat says why", `{name: "x", expectFail: true, timeout: "3s", wait: until: "b.last.upstream_rq_totl > 0"}`,
			interp.TimedOut, notJudged},
		{"wait pattern names the timeout only", `{name: "x", expectFail: "timed out", timeout: "3s", wait: until: "b.last.upstream_rq_totl > 0"}`,
			interp.TimedOut, `(expectFail: expected an error matching "timed out"; the expression could not be evaluated, which the pattern does not match)`},
		{"wait pattern names the error", `{name: "x", expectFail: "none of the snapshots", timeout: "3s", wait: until: "b.last.upstream_rq_totl > 0"}`,
			interp.Passed, "wait timed out after 3s; last: stat upstream_rq_totl is in none of"},
		{"wait false", `{name: "x", expectFail: true, timeout: "3s", wait: until: "b.last.upstream_rq_total > 1000000"}`,
			interp.Passed, "wait timed out after 3s"},
		{"config no value", `{name: "x", expectFail: true, timeout: "3s", config: {admin: "http://127.0.0.1:15000", cluster: "c", path: "circuit_breakers.thresholds[0]", until: "int(c.captured.v) == x.max_connections"}}`,
			interp.TimedOut, "last: assert int(c.captured.v) == x.max_connections: c.captured.v has no value: the capture of \"c\" matched nothing in its stdout " + notJudged},
		{"config false", `{name: "x", expectFail: true, timeout: "3s", config: {admin: "http://127.0.0.1:15000", cluster: "c", path: "circuit_breakers.thresholds[0]", until: "x.max_connections == 5"}}`,
			interp.Passed, "config timed out after 3s"},
		{"get no value", `{name: "x", expectFail: true, timeout: "3s", get: {kind: "Pod", name: "p", path: "status.podIP", until: "int(c.captured.v) == len(x)"}}`,
			interp.TimedOut, "last: assert int(c.captured.v) == len(x): c.captured.v has no value: the capture of \"c\" matched nothing in its stdout " + notJudged},
		{"get type error", `{name: "x", expectFail: true, timeout: "3s", get: {kind: "Pod", name: "p", path: "status.podIP", until: "int(x) > 1"}}`,
			interp.TimedOut, notJudged},
		{"get false", `{name: "x", expectFail: true, timeout: "3s", get: {kind: "Pod", name: "p", path: "status.podIP", until: "x == 'nope'"}}`,
			interp.Passed, "get timed out after 3s"},
	} {
		t.Run(c.name, func(t *testing.T) {
			sc := loadScenario(t, `
s: schema.#Scenario & {
	steps: [
		{name: "c", exec: {argv: ["echo"], capture: "v=(?P<v>[0-9]+)"}},
		{name: "bg", background: true, sleep: "10s"},
		{name: "b", every: "1s", while: "bg", snapshot: {admin: "http://127.0.0.1:15000", cluster: "c"}},
		`+c.step+`,
	]
}`)
			synctest.Test(t, func(t *testing.T) {
				w := &fakes.World{
					Stats: func(string, int) schema.StatsSnapshot {
						return schema.StatsSnapshot{Counters: schema.Stats{"upstream_rq_total": 1}, Gauges: schema.Stats{}}
					},
					ExecResult: func(schema.Exec) schema.ExecResult { return schema.ExecResult{Stdout: "nothing here"} },
					ConfigValue: func(schema.Config, int) (any, error) {
						return map[string]any{"max_connections": 1.0}, nil
					},
				}
				rec := interp.New(w.Target()).Run(context.Background(), context.Background(), sc)
				x := stepRecord(t, rec, "x")
				got := x.Error
				if x.Outcome == interp.Passed {
					got = x.ExpectedError
				}
				if x.Outcome != c.outcome || !strings.Contains(got, c.err) {
					t.Errorf("step x: %s %q, want %s with %q", x.Outcome, got, c.outcome, c.err)
				}
				if want := c.outcome; rec.Outcome != want { // an error, or the timeout that ended what could not be evaluated
					t.Errorf("run: %s, want %s (%s)", rec.Outcome, want, rec.Error)
				}
			})
		})
	}
}

// TestExpectFailGuardRefused: a step the namespace guard refused when it started (its
// namespace known only then, from a var) did nothing, and tested nothing: expectFail: true
// does not take the refusal for the failure it expected; the step keeps its error and the run
// errors. The fakes' cluster stands in for the kube driver; the refusal is interp's own guard
// (schema.Guard), the one the runner calls before every step that mutates.
func TestExpectFailGuardRefused(t *testing.T) {
	sc := loadScenario(t, `
s: schema.#Scenario & {
	namespaces: ["lab"]
	vars: ns: "other"
	steps: [{name: "x", expectFail: true, apply: objects: [
		{apiVersion: "v1", kind: "ConfigMap", metadata: {name: "c", namespace: "${vars.ns}"}},
	]}]
}`)
	w := &fakes.World{}
	rec := interp.New(w.Target()).Run(context.Background(), context.Background(), sc)
	x := stepRecord(t, rec, "x")
	if x.Outcome != interp.Errored || x.ExpectedError != "" ||
		!strings.Contains(x.Error, `apply would change ConfigMap other/c, outside the scenario`) ||
		!strings.Contains(x.Error, "(expectFail: the namespace guard refused the step") {
		t.Errorf("step x: %s %q (expected error %q)", x.Outcome, x.Error, x.ExpectedError)
	}
	if rec.Outcome != interp.Errored {
		t.Errorf("run: %s, want %s (%s)", rec.Outcome, interp.Errored, rec.Error)
	}
	for _, c := range w.Calls() {
		if strings.HasPrefix(c, "apply") {
			t.Errorf("the refused apply reached the cluster: %s", c)
		}
	}
}

// TestExpectFailNotTheCommandLine: an expectFail pattern, and an expression on error.<step>,
// see what the command's failure says (its exit code, its stderr), not the command line. On
// curl …?status=403 that could not connect (exit 7), expectFail: "403" held, as the error
// began with the command and its URL, and the run passed though no request was answered.
func TestExpectFailNotTheCommandLine(t *testing.T) {
	sc := loadScenario(t, `
s: schema.#Scenario & {
	steps: [
		{name: "req", mayFail: true, expectFail: "403", exec: argv: ["curl", "-sSf", "http://127.0.0.1:9/echo?status=403"]},
		{name: "denied", expectFail: "403", exec: argv: ["curl", "-sSf", "http://127.0.0.1:9/echo?status=403"]},
		{name: "other", mayFail: true, exec: argv: ["curl", "-sSf", "http://127.0.0.1:9/echo?status=403"]},
	]
	expect: ["!(error.other contains '403')", "error.other contains 'exited with code 7,'"]
}
`)
	synctest.Test(t, func(t *testing.T) {
		calls := 0
		w := &fakes.World{StepTime: 0, ExecResult: func(req schema.Exec) schema.ExecResult {
			calls++
			if calls == 2 { // the server refused the request: curl -f says so
				return schema.ExecResult{Exit: 22, Stderr: "curl: (22) The requested URL returned error: 403"}
			}
			return schema.ExecResult{Exit: 7, Stderr: "curl: (7) Failed to connect to 127.0.0.1 port 9 after 0 ms: Couldn't connect to server"}
		}}
		rec := interp.New(w.Target()).Run(context.Background(), context.Background(), sc)
		if r := stepRecord(t, rec, "req"); r.Outcome == interp.Passed {
			t.Errorf("req (exit 7, no 403 said) %s, want not passed: %q %q", r.Outcome, r.Error, r.ExpectedError)
		} else if !strings.Contains(r.Error, `expected an error matching "403"`) {
			t.Errorf("req: %q, want it to say the pattern was not matched", r.Error)
		}
		if d := stepRecord(t, rec, "denied"); d.Outcome != interp.Passed || !strings.Contains(d.ExpectedError, "returned error: 403") {
			t.Errorf("denied (exit 22, 403 said): %s %q %q", d.Outcome, d.Error, d.ExpectedError)
		}
		for _, j := range rec.Expectations {
			if j.Outcome != interp.Passed {
				t.Errorf("%s: %s %s", j.Src, j.Outcome, j.Explanation)
			}
		}
	})
}

// TestRepeatUntilNotJudged: a repeat whose until could not be evaluated at its last round (a
// type error on every round) said FAILED, "was still not true after 3 rounds" (exit 1), as if
// judged false: it tested nothing, and errs (exit 3), as a wait's until does.
func TestRepeatUntilNotJudged(t *testing.T) {
	for _, c := range []struct {
		until   string
		outcome interp.Outcome
		err     string
	}{
		{"int(e.stdout) > 1", interp.Errored, "repeat: int(e.stdout) > 1 had no answer after 3 rounds: "},
		{"e.stdout == 'no'", interp.Failed, "repeat: e.stdout == 'no' was still not true after 3 rounds: "},
	} {
		sc := loadScenario(t, `
s: schema.#Scenario & {
	steps: [{name: "r", repeat: {max: 3, until: "`+c.until+`", steps: [{name: "e", exec: argv: ["echo", "abc"]}]}}]
}`)
		w := &fakes.World{}
		rec := interp.New(w.Target()).Run(context.Background(), context.Background(), sc)
		r := stepRecord(t, rec, "r")
		if r.Outcome != c.outcome || !strings.Contains(r.Error, c.err) || rec.Outcome != c.outcome {
			t.Errorf("until %s: step r %s %q, run %s; want %s with %q", c.until, r.Outcome, r.Error, rec.Outcome, c.outcome, c.err)
		}
	}
}

// refusingEachCluster is the fake API server that refuses the apply of each object whose name is a
// key of refuse, with that message, after writing the others, and joins the refusals as the
// kube driver does (an apply writes every object; one line per refusal).
type refusingEachCluster struct {
	schema.Cluster
	refuse map[string]string
}

func (c refusingEachCluster) ApplyWith(ctx context.Context, objs []schema.Object, files []string, ns string, opts schema.ApplyOptions) (schema.ApplyResult, error) {
	var ok []schema.Object
	var refused []error
	for _, o := range objs {
		name, _ := o["metadata"].(map[string]any)["name"].(string)
		if msg, bad := c.refuse[name]; bad {
			refused = append(refused, fmt.Errorf("apply ConfigMap lab/%s (objects): %s", name, msg))
			continue
		}
		ok = append(ok, o)
	}
	res, err := c.Cluster.ApplyWith(ctx, ok, files, ns, opts)
	return res, errors.Join(append(refused, err)...)
}

// TestExpectFailEachRefusalStandIn (the fake API server stands in for the cluster): an apply
// with an expectFail pattern passes only when the pattern matches the refusal of each object
// refused, as Chainsaw's negative-testing/resource (an apply of a file whose ConfigMap "bad"
// must be refused) fails when "good" is refused too. Before, one refusal matching made the
// step's whole error match, and the step passed over the other.
func TestExpectFailEachRefusalStandIn(t *testing.T) {
	sc := loadScenario(t, `
s: schema.#Scenario & {
	namespaces: ["lab"]
	steps: [{name: "x", expectFail: "bad", apply: objects: [
		{apiVersion: "v1", kind: "ConfigMap", metadata: name: "good", data: foo: "7"},
		{apiVersion: "v1", kind: "ConfigMap", metadata: name: "bad", data: foo: "x"},
	]}]
}`)
	for _, tc := range []struct {
		name    string
		refuse  map[string]string
		outcome interp.Outcome
		note    string
	}{
		{"only bad refused", map[string]string{"bad": ".data.foo: expected string, got true"}, interp.Passed, ""},
		{"good refused too", map[string]string{
			"good": ".data.foo: expected string, got 7",
			"bad":  ".data.foo: expected string, got true",
		}, interp.Errored, `(expectFail: expected each object's refusal to match "bad"; 1 of 2 do not: apply ConfigMap lab/good (objects): .data.foo: expected string, got 7)`},
		{"both match", map[string]string{
			"good": "bad value",
			"bad":  ".data.foo: expected string, got true",
		}, interp.Passed, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runRefusing(t, sc, func(c schema.Cluster) schema.Cluster { return refusingEachCluster{c, tc.refuse} }, tc.outcome, tc.note)
		})
	}
}

// runRefusing runs sc on a fake world whose cluster refuse wraps (a stand-in for an API server
// that refuses objects), and checks that its step x and the run ended with outcome and that x's
// error says note; it returns the run's record and x's.
func runRefusing(t *testing.T, sc *dsl.Scenario, refuse func(schema.Cluster) schema.Cluster, outcome interp.Outcome, note string) (*interp.Record, *interp.StepRecord) {
	t.Helper()
	w := &fakes.World{}
	tg := w.Target()
	tg.Cluster = refuse(tg.Cluster)
	rec := interp.New(tg).Run(context.Background(), context.Background(), sc)
	x := stepRecord(t, rec, "x")
	if x.Outcome != outcome || rec.Outcome != outcome {
		t.Errorf("step %s, run %s, want %s: %q", x.Outcome, rec.Outcome, outcome, x.Error)
	}
	if !strings.Contains(x.Error, note) {
		t.Errorf("step error %q does not say %q", x.Error, note)
	}
	return rec, x
}

// sourcedRefusal is a refusal as the kube driver words it: "apply ConfigMap lab/bad
// (bad.yaml, line 3): why", and without its file and line for an expectFail pattern.
type sourcedRefusal struct{ name, source, why string }

func (e sourcedRefusal) Error() string {
	return fmt.Sprintf("apply ConfigMap lab/%s (%s): %s", e.name, e.source, e.why)
}
func (e sourcedRefusal) Unsourced() string {
	return fmt.Sprintf("apply ConfigMap lab/%s: %s", e.name, e.why)
}

type refusingFromFileCluster struct {
	schema.Cluster
	refuse map[string]string
}

func (c refusingFromFileCluster) ApplyWith(ctx context.Context, objs []schema.Object, files []string, ns string, opts schema.ApplyOptions) (schema.ApplyResult, error) {
	var refused []error
	for _, o := range objs {
		name, _ := o["metadata"].(map[string]any)["name"].(string)
		if msg, bad := c.refuse[name]; bad {
			refused = append(refused, sourcedRefusal{name, "negative/bad-objects.yaml, line 1", msg})
		}
	}
	return schema.ApplyResult{}, errors.Join(refused...)
}

// TestExpectFailNotByFileStandIn (the fake API server stands in for the cluster): an
// expectFail pattern is matched against each object's refusal without the file and line the
// object was written at. Before, "bad-objects" (the file's name) matched every refusal of the
// file's objects, and the step passed whatever the API server said.
func TestExpectFailNotByFileStandIn(t *testing.T) {
	for _, tc := range []struct {
		name, pattern string
		refuse        map[string]string
		outcome       interp.Outcome
		note          string
	}{
		{"file name only", "bad-objects", map[string]string{"bad": "the stand-in is down"}, interp.Errored,
			`(expectFail: expected an error matching "bad-objects")`},
		{"file name, two refused", "bad-objects", map[string]string{"bad": "the stand-in is down", "good": "also down"}, interp.Errored,
			`(expectFail: expected an error matching "bad-objects")`},
		{"line only", "line 1", map[string]string{"bad": "the stand-in is down"}, interp.Errored,
			`(expectFail: expected an error matching "line 1")`},
		{"the reason", "expected string", map[string]string{"bad": ".data.foo: expected string, got true"}, interp.Passed, ""},
		{"the object", "lab/bad: ", map[string]string{"bad": ".data.foo: expected string, got true"}, interp.Passed, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := loadScenario(t, fmt.Sprintf(`
s: schema.#Scenario & {
	namespaces: ["lab"]
	steps: [{name: "x", expectFail: %q, apply: objects: [
		{apiVersion: "v1", kind: "ConfigMap", metadata: name: "good", data: foo: "7"},
		{apiVersion: "v1", kind: "ConfigMap", metadata: name: "bad", data: foo: "x"},
	]}]
}`, tc.pattern))
			rec, x := runRefusing(t, sc, func(c schema.Cluster) schema.Cluster { return refusingFromFileCluster{c, tc.refuse} }, tc.outcome, tc.note)
			// Its record replays as the run judged it: a pass whose expected error the
			// pattern matches without the file is no contradiction; an error edited into an
			// expected one, which the pattern matches only by the file, is.
			if tc.outcome == interp.Passed {
				if err := interp.OutcomeContradictions(rec, sc); err != nil {
					t.Errorf("the run's own record: %v", err)
				}
				return
			}
			x.Outcome, rec.Outcome, x.ExpectedError, x.Error = interp.Passed, interp.Passed, x.Error[:strings.Index(x.Error, " (expectFail")], ""
			if err := interp.OutcomeContradictions(rec, sc); err == nil || !strings.Contains(err.Error(), "which its pattern") {
				t.Errorf("a record edited to pass: %v, want the pattern's contradiction", err)
			}
		})
	}
}
