package interp_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/schema"
)

const judgeScenario = `
s: schema.#Scenario & {
	allowReset: ["upstream_cx_destroy"]
	steps: [
		{name: "before", snapshot: {admin: "http://127.0.0.1:15000", cluster: "c"}},
		{name: "fortio", load: {url: "http://127.0.0.1:1", requests: 30}},
		{name: "after", snapshot: {admin: "http://127.0.0.1:15000", cluster: "c"}},
	]
	expect: [
		"delta.upstream_rq_pending_overflow == fortio.code503",
		"delta.upstream_cx_overflow > 0",
		"delta.membership_change == 1",
		"delta.upstream_rq_total == 18",
		"delta.custom_level == 0",
		"delta.upstream_cx_destroy == 1",
		"after.circuit_breakers.default.rq_pending_open == 1",
		"delta(\"before\", \"after\").upstream_rq_pending_overflow == 12",
	]
}
`

func judgeRecord(before, after interp.SnapshotRecord) *interp.Record {
	t0 := time.Unix(1000, 0)
	before.Name, after.Name = "before", "after"
	before.Source, after.Source = "admin c", "admin c"
	before.At, after.At = t0, t0.Add(time.Second)
	rec := &interp.Record{AllowReset: []string{"upstream_cx_destroy"}}
	rec.Put("before", "snapshot", false, &before)
	rec.Put("after", "snapshot", false, &after)
	rec.Put("fortio", "load", false, &interp.LoadRecord{LoadResult: schema.LoadResult{Requests: 30, Codes: map[string]float64{"200": 18, "503": 15}}})
	return rec
}

// TestDeltaRules checks each rule of a delta: a stat absent before and present after counts
// from 0 (noted); a stat in no snapshot is an error naming the stat, the snapshots and the
// likely cause; a counter that went down is a reset and fails unless allowed; a gauge in a
// delta is refused (here one labrun does not know by name: the loader refuses a delta of a
// known gauge, see check_delta_gauge_envoy.txtar); a false expectation shows each part's value.
func TestDeltaRules(t *testing.T) {
	sc := loadScenario(t, judgeScenario)
	rec := judgeRecord(
		interp.SnapshotRecord{
			Counters: schema.Stats{"upstream_rq_pending_overflow": 0, "upstream_rq_total": 10, "upstream_cx_destroy": 7},
			Gauges:   schema.Stats{"custom_level": 0, "circuit_breakers.default.rq_pending_open": 0},
		},
		interp.SnapshotRecord{
			Counters: schema.Stats{"upstream_rq_pending_overflow": 12, "upstream_rq_total": 2, "upstream_cx_overflow": 16, "upstream_cx_destroy": 1},
			Gauges:   schema.Stats{"custom_level": 1, "circuit_breakers.default.rq_pending_open": 1},
		},
	)
	got := interp.Rejudge(rec, sc)
	want := []struct {
		outcome interp.Outcome
		has     []string
	}{
		// 12 overflows against 15 503s: the values are shown.
		{interp.Failed, []string{"delta.upstream_rq_pending_overflow (12) == fortio.code503 (15)"}},
		// Absent before, present after: counted from 0.
		{interp.Passed, nil},
		// In no snapshot: an error that names the stat, the snapshots and the likely cause.
		{interp.Errored, []string{"membership_change", `"before"`, `"after"`, "proxyStatsMatcher", "usedonly"}},
		// 10 → 2: a reset, not -8.
		{interp.Failed, []string{"upstream_rq_total went down from 10", "reset", "allowReset"}},
		// A gauge has no delta.
		{interp.Errored, []string{"custom_level is a gauge", "compare the snapshots"}},
		// A reset the scenario allows: 7 → 1 counts 1, what the counter counted since.
		{interp.Passed, nil},
		// Gauges are read from one snapshot, dotted names and all.
		{interp.Passed, nil},
		{interp.Passed, nil},
	}
	if len(got) != len(want) {
		t.Fatalf("%d judgements, want %d", len(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		text := g.Explanation + " " + g.Reason
		if g.Outcome != w.outcome {
			t.Errorf("%s: outcome %s (%s), want %s", g.Src, g.Outcome, text, w.outcome)
		}
		for _, h := range w.has {
			if !strings.Contains(text, h) {
				t.Errorf("%s: %q does not say %q", g.Src, text, h)
			}
		}
	}
	notes := strings.Join(rec.Notes, "\n")
	if !strings.Contains(notes, "upstream_cx_overflow was absent in \"before\"") || !strings.Contains(notes, "counted from 0") {
		t.Errorf("notes %q do not record the lazily created stat", notes)
	}
	if !strings.Contains(notes, "upstream_cx_destroy reset") {
		t.Errorf("notes %q do not record the allowed reset", notes)
	}
}

// TestDeltaAmbiguousSources: a plain delta over snapshots of two sources is refused when the
// scenario loads, pointing at the expression; deltaAcross says it is meant.
func TestDeltaAmbiguousSources(t *testing.T) {
	_, err := loadScenarioErr(t, `
s: schema.#Scenario & {
	steps: [
		{name: "a1", snapshot: {admin: "http://127.0.0.1:15000", cluster: "a"}},
		{name: "b1", snapshot: {admin: "http://127.0.0.1:15000", cluster: "b"}},
	]
	expect: ["delta.x == 0", "deltaAcross(\"a1\", \"b1\").x == 0"]
}
`)
	if err == nil || !strings.Contains(err.Error(), "delta is ambiguous") || !strings.Contains(err.Error(), `s.cue:11:18`) {
		t.Fatalf("want an ambiguous-delta error at s.cue:11:18, got %v", err)
	}
	if strings.Count(err.Error(), "\n") != 0 {
		t.Errorf("deltaAcross(\"a1\", \"b1\") is explicit and must be accepted; got %v", err)
	}
}

// TestReplayChangesWithExpectation: re-judging the same record with an edited expectation
// changes the verdict; with the same expectations it reproduces it.
func TestReplayChangesWithExpectation(t *testing.T) {
	rec := judgeRecord(
		interp.SnapshotRecord{Counters: schema.Stats{"upstream_rq_pending_overflow": 3}},
		interp.SnapshotRecord{Counters: schema.Stats{"upstream_rq_pending_overflow": 18}},
	)
	rec.Outcome = interp.Passed // a run whose steps all ended: its expectations decide
	held := loadScenario(t, `s: schema.#Scenario & {
	steps: [
		{name: "before", snapshot: {admin: "http://127.0.0.1:15000", cluster: "c"}},
		{name: "fortio", load: {url: "http://127.0.0.1:1", requests: 30}},
		{name: "after", snapshot: {admin: "http://127.0.0.1:15000", cluster: "c"}},
	]
	expect: ["delta.upstream_rq_pending_overflow == fortio.code503"]
}`)
	if v, _ := interp.Verdict(rec, interp.Rejudge(rec, held)); v != interp.Passed {
		t.Fatalf("15 == 15 should hold, got %s", v)
	}
	edited := loadScenario(t, strings.Replace(`s: schema.#Scenario & {
	steps: [
		{name: "before", snapshot: {admin: "http://127.0.0.1:15000", cluster: "c"}},
		{name: "fortio", load: {url: "http://127.0.0.1:1", requests: 30}},
		{name: "after", snapshot: {admin: "http://127.0.0.1:15000", cluster: "c"}},
	]
	expect: ["delta.upstream_rq_pending_overflow == fortio.code503"]
}`, "== fortio.code503", "== fortio.code200", 1))
	if v, _ := interp.Verdict(rec, interp.Rejudge(rec, edited)); v != interp.Failed {
		t.Fatalf("15 == 18 should fail, got %s", v)
	}
}

// TestMissingStatCauses: a stat in no snapshot names the likely causes of the snapshots'
// source, not Envoy's for every source.
func TestMissingStatCauses(t *testing.T) {
	sc := loadScenario(t, judgeScenario)
	for _, c := range []struct {
		source     string
		has, lacks []string
	}{
		{"admin c", []string{"proxyStatsMatcher", "usedonly"}, []string{"local backend"}},
		{"envoy client cluster x", []string{"proxyStatsMatcher"}, []string{"local backend"}},
		{"backend a", []string{"a local backend creates a counter the first time it counts", "rq_<code>"}, []string{"proxyStatsMatcher", "Envoy"}},
		{"prometheus http://127.0.0.1:9/metrics", []string{"the endpoint does not export it", "labels sorted by name"}, []string{"proxyStatsMatcher"}},
	} {
		t.Run(c.source, func(t *testing.T) {
			rec := judgeRecord(interp.SnapshotRecord{Counters: schema.Stats{"x": 1}}, interp.SnapshotRecord{Counters: schema.Stats{"x": 2}})
			rec.Snapshot("before").Source, rec.Snapshot("after").Source = c.source, c.source
			var text string
			for _, g := range interp.Rejudge(rec, sc) {
				if g.Src == "delta.membership_change == 1" {
					text = g.Explanation + " " + g.Reason
					if g.Outcome != interp.Errored {
						t.Errorf("outcome %s, want errored", g.Outcome)
					}
				}
			}
			for _, h := range c.has {
				if !strings.Contains(text, h) {
					t.Errorf("%q does not say %q", text, h)
				}
			}
			for _, h := range c.lacks {
				if strings.Contains(text, h) {
					t.Errorf("%q says %q, which is not about this source", text, h)
				}
			}
		})
	}
}

// TestHasGuardsARead: a stat read only where has() found it (the ?: and && idioms of
// docs/language.md) is not an error when absent: the expression does not read it then. The
// same read without the guard is.
func TestHasGuardsARead(t *testing.T) {
	sc := loadScenario(t, `s: schema.#Scenario & {
	steps: [
		{name: "before", snapshot: {admin: "http://127.0.0.1:15000", cluster: "c"}},
		{name: "fortio", load: {url: "http://127.0.0.1:1/", requests: 30}},
		{name: "after", snapshot: {admin: "http://127.0.0.1:15000", cluster: "c"}},
	]
	expect: [
		"(has(after, \"upstream_rq_503\") ? delta.upstream_rq_503 : 0) == 0",
		"has(after, \"upstream_rq_503\") && after.upstream_rq_503 > 0",
		"delta.upstream_rq_503 == 0",
	]
}`)
	rec := judgeRecord(interp.SnapshotRecord{Counters: schema.Stats{"upstream_rq_total": 1}}, interp.SnapshotRecord{Counters: schema.Stats{"upstream_rq_total": 31}})
	got := interp.Rejudge(rec, sc)
	want := []interp.Outcome{interp.Passed, interp.Failed, interp.Errored}
	for i, jd := range got {
		if jd.Outcome != want[i] {
			t.Errorf("%s: %s (%s%s), want %s", jd.Src, jd.Outcome, jd.Reason, jd.Explanation, want[i])
		}
	}
}

// TestCaptureThatMatchedNothing: a group of an exec capture that matched nothing has no value:
// an expectation reading it errors, saying so, instead of reading ""; read where has() found
// it (&&, ?:, or after !has(…) ||), it is fine; a group that matched reads its text.
func TestCaptureThatMatchedNothing(t *testing.T) {
	sc := loadScenario(t, `s: schema.#Scenario & {
	steps: [
		{name: "v", exec: {argv: ["echo", "version: abc"], capture: "version: (?P<n>[0-9]+)"}},
		{name: "w", exec: {argv: ["echo", "version: 12"], capture: "version: (?P<n>[0-9]+)"}},
	]
	expect: [
		"v.captured.n != '0'",
		"v.captured['n'] == ''",
		"!has(v.captured, 'n') || v.captured.n == '1'",
		"has(v.captured, 'n') && v.captured.n == '1'",
		"(has(v.captured, 'n') ? v.captured.n : 'none') == 'none'",
		"w.captured.n == '12'",
		"has(v.captured, 'n') || v.captured.n == '1'",
		"!has(w.captured, 'n') || !has(v.captured, 'n') || v.captured.n == '1'",
	]
}`)
	rec := &interp.Record{}
	rec.Put("v", "exec", false, schema.ExecResult{Stdout: "version: abc\n"})
	rec.Put("w", "exec", false, schema.ExecResult{Stdout: "version: 12\n", Captured: map[string]string{"n": "12"}})
	got := interp.Rejudge(rec, sc)
	want := []interp.Outcome{interp.Errored, interp.Errored, interp.Passed, interp.Failed, interp.Passed, interp.Passed, interp.Errored, interp.Passed}
	for i, jd := range got {
		if jd.Outcome != want[i] {
			t.Errorf("%s: %s (%s%s), want %s", jd.Src, jd.Outcome, jd.Reason, jd.Explanation, want[i])
		}
		if want[i] == interp.Errored && !strings.Contains(jd.Reason, `v.captured.n has no value: the capture of "v" matched nothing in its stdout`) {
			t.Errorf("%s: reason %q", jd.Src, jd.Reason)
		}
	}
}

// TestLogCountsOfNoAccessLine: a logs step's codes, flags and details count access lines; where
// lines matched and none parsed as one, an expectation reading them errors, saying so,
// instead of reading "no 503, no UF" of lines that say nothing of either; so does one that
// read no line at all (an empty log holds no 503). Its lines and count read as ever; a step
// that parsed some of its lines counts as ever.
func TestLogCountsOfNoAccessLine(t *testing.T) {
	sc := loadScenario(t, `s: schema.#Scenario & {
	steps: [
		{name: "plain", logs: file: "a.log"},
		{name: "none", logs: file: "b.log"},
		{name: "mixed", logs: file: "c.log"},
	]
	expect: [
		"plain.codes['503'] == 0",
		"plain.flags.UF == 0",
		"!has(plain.flags, 'UF')",
		"len(plain.details) == 0",
		"plain.count == 2 && plain.lines[0] == 'GET /x 503 UF'",
		"none.codes['503'] == 0",
		"mixed.codes['503'] == 1 && mixed.flags.UF == 1",
		"none.count == 0",
	]
}`)
	plain := schema.LogResult{Count: 2, Lines: []string{"GET /x 503 UF", "GET /y 503 UF"},
		Entries: []schema.LogEntry{{Line: "GET /x 503 UF"}, {Line: "GET /y 503 UF"}},
		Codes:   map[string]float64{}, Flags: map[string]float64{}, Details: map[string]float64{}}
	access := schema.LogEntry{Line: "[2026-03-02T09:17:14.000Z] ...", Access: true, Code: 503, Flags: []string{"UF"}}
	mixed := schema.LogResult{Count: 2, Lines: []string{"debug", access.Line}, Entries: []schema.LogEntry{{Line: "debug"}, access},
		Codes: map[string]float64{"503": 1}, Flags: map[string]float64{"UF": 1}, Details: map[string]float64{}}
	rec := &interp.Record{}
	rec.Put("plain", "logs", false, plain)
	rec.Put("none", "logs", false, schema.LogResult{Codes: map[string]float64{}, Flags: map[string]float64{}, Details: map[string]float64{}})
	rec.Put("mixed", "logs", false, mixed)
	got := interp.Rejudge(rec, sc)
	want := []interp.Outcome{interp.Errored, interp.Errored, interp.Errored, interp.Errored, interp.Passed, interp.Errored, interp.Passed, interp.Passed}
	field := []string{"codes", "flags", "flags", "details"}
	for i, jd := range got {
		if jd.Outcome != want[i] {
			t.Errorf("%s: %s (%s%s), want %s", jd.Src, jd.Outcome, jd.Reason, jd.Explanation, want[i])
		}
		if i == 5 {
			if !strings.Contains(jd.Reason, "none.codes has no value: no line matched since the mark") {
				t.Errorf("%s: reason %q", jd.Src, jd.Reason)
			}
			continue
		}
		if want[i] == interp.Errored && !strings.Contains(jd.Reason, `plain.`+field[i]+` has no value: 2 lines matched, none parsed as an access line (Istio's text or JSON format, or Envoy's default), so it counts none by code, flag or details; the first: "GET /x 503 UF"`) {
			t.Errorf("%s: reason %q", jd.Src, jd.Reason)
		}
	}
}

// TestErrorOfStepThatDidNotRun: error.<step> of a step that did not run (a later step of a
// mayFail block whose first step failed) has no value: an expectation reading it errors,
// saying so, instead of reading "" — the value of a step that passed. Read only where the step
// ran (outcome.<step> == 'passed' &&, outcome.<step> != 'skipped' &&, outcome.<step> ==
// 'skipped' ||, has(error, ...), the branch of ?: where it ran), it is fine; outcome.<step> is
// "skipped".
func TestErrorOfStepThatDidNotRun(t *testing.T) {
	sc := loadScenario(t, `s: schema.#Scenario & {
	steps: [
		{name: "prep", mayFail: true, sequence: [
			{name: "check", exec: argv: ["false"]},
			{name: "migrate", exec: argv: ["true"]},
		]},
	]
	expect: [
		"error.migrate == ''",
		"error.migrate contains 'code'",
		"outcome.migrate == 'passed' && error.migrate == ''",
		"outcome.migrate != 'skipped' && error.migrate == ''",
		"outcome.migrate == 'skipped' || error.migrate == ''",
		"(outcome.migrate == 'passed' ? error.migrate : 'skipped') == 'skipped'",
		"!has(error, 'migrate') || error.migrate == ''",
		"outcome.migrate == 'skipped'",
		"error.check contains 'code 1'",
		"outcome.migrate == 'passed' || error.migrate == ''",
		"outcome.check == 'passed' && error.migrate == ''",
		"(outcome.migrate == 'skipped' ? 'none' : error.migrate) == 'none'",
		"(outcome.migrate == 'skipped' ? error.migrate : 'x') == ''",
	]
}`)
	rec := &interp.Record{}
	rec.Steps = append(rec.Steps,
		&interp.StepRecord{Path: "steps.0", Name: "prep", Kind: "sequence", Outcome: interp.Errored, Error: "check (exec): false exited with code 1"},
		&interp.StepRecord{Path: "steps.0.sequence.0", Name: "check", Kind: "exec", Outcome: interp.Errored, Error: "false exited with code 1"})
	got := interp.Rejudge(rec, sc)
	// outcome.check == 'passed' && error.migrate == '' does not evaluate error.migrate where
	// check failed (migrate then never runs): it fails, as written, rather than erring on a
	// read it did not make.
	want := []interp.Outcome{interp.Errored, interp.Errored, interp.Failed, interp.Failed, interp.Passed, interp.Passed, interp.Passed, interp.Passed, interp.Passed, interp.Errored, interp.Failed, interp.Passed, interp.Errored}
	if len(got) != len(want) {
		t.Fatalf("%d judgements, want %d", len(got), len(want))
	}
	for i, jd := range got {
		if jd.Outcome != want[i] {
			t.Errorf("%s: %s (%s%s), want %s", jd.Src, jd.Outcome, jd.Reason, jd.Explanation, want[i])
		}
		if want[i] == interp.Errored && !strings.Contains(jd.Reason, `error.migrate has no value: step "migrate" did not run (outcome.migrate is "skipped")`) {
			t.Errorf("%s: reason %q", jd.Src, jd.Reason)
		}
	}
	// Once it ran and passed, error.migrate is "".
	rec.Steps = append(rec.Steps, &interp.StepRecord{Path: "steps.0.sequence.1", Name: "migrate", Kind: "exec", Outcome: interp.Passed})
	if jd := interp.Rejudge(rec, sc)[0]; jd.Outcome != interp.Passed {
		t.Errorf("%s: %s (%s), want passed", jd.Src, jd.Outcome, jd.Reason)
	}
}

// TestTimesOfStepThatDidNotRun: started.<step> and ended.<step> of a step that did not run
// have no value: 'ended.migrate - started.migrate < 0.1' read 0 - 0 and passed, a duration
// claimed of a step never run. Read only where the step ran (outcome.<step> != 'skipped' &&,
// has(started, ...)), it is fine; has(started, ...) is false for it.
func TestTimesOfStepThatDidNotRun(t *testing.T) {
	sc := loadScenario(t, `s: schema.#Scenario & {
	steps: [
		{name: "prep", mayFail: true, sequence: [
			{name: "check", exec: argv: ["false"]},
			{name: "migrate", exec: argv: ["true"]},
		]},
	]
	expect: [
		"ended.migrate - started.migrate < 0.1",
		"started.migrate >= 0",
		"outcome.migrate != 'skipped' && ended.migrate - started.migrate < 0.1",
		"!has(started, 'migrate') || ended.migrate < 1",
		"has(started, 'migrate')",
		"ended.check - started.check < 5",
		"outcome.check == 'error' ? ended.check >= 1 : ended.migrate > 1",
		"outcome.check != 'error' && ended['migrate'] > 1",
		"outcome.check == 'error' ? ended.migrate > 1 : true",
		"(outcome.check == 'error' ? started.check : started.migrate) >= 0 && ended.migrate >= 0",
	]
}`)
	got := interp.Rejudge(migrateSkipped(), sc)
	// The last four read migrate's times where check decided whether they are evaluated:
	// not evaluated, they do not make the claim err (check failed, migrate did not run).
	want := []interp.Outcome{interp.Errored, interp.Errored, interp.Failed, interp.Passed, interp.Failed, interp.Passed,
		interp.Passed, interp.Failed, interp.Errored, interp.Errored}
	if len(got) != len(want) {
		t.Fatalf("%d judgements, want %d", len(got), len(want))
	}
	for i, jd := range got {
		if jd.Outcome != want[i] {
			t.Errorf("%s: %s (%s%s), want %s", jd.Src, jd.Outcome, jd.Reason, jd.Explanation, want[i])
		}
		if want[i] == interp.Errored && !strings.Contains(jd.Reason, `has no value: step "migrate" did not run (outcome.migrate is "skipped"), so it has no start or end, not 0`) {
			t.Errorf("%s: reason %q", jd.Src, jd.Reason)
		}
	}
}

// migrateSkipped is the record of a mayFail sequence whose first step, check, erred: the
// sequence stopped, and migrate, the step after it, did not run.
func migrateSkipped() *interp.Record {
	rec := &interp.Record{}
	rec.Steps = append(rec.Steps,
		&interp.StepRecord{Path: "steps.0", Name: "prep", Kind: "sequence", Outcome: interp.Errored, Error: "check (exec): false exited with code 1", End: time.Second},
		&interp.StepRecord{Path: "steps.0.sequence.0", Name: "check", Kind: "exec", Outcome: interp.Errored, Error: "false exited with code 1", End: time.Second},
		&interp.StepRecord{Path: "steps.0.sequence.1", Name: "migrate", Kind: "exec", Outcome: interp.Skipped})
	return rec
}

// TestQuantifierOverEmptyCollection: an expectation's all(), none() or count() — or any
// builtin whose value over an empty collection is the same whatever it asks of the items:
// any(), one(), filter(), map(), find(), findIndex(), sum(), reduce(), groupBy() — over an
// empty collection the run produced (a log nothing wrote, a filter that kept nothing, a let
// bound to one) has no value: it errs, saying so, instead of passing having read nothing
// (len(filter(x, p)) == 0 is none(x, p), !any(x, p) too, sum(map(x, .n)) == 0 a total of
// nothing). Where the expression reads the collection in another operand of && or ||
// (len(x) == 0 || …) it is judged as written; a read in the same comparison says nothing of
// an empty one (count(x, p) == len(x) is all(x, p)). A collection that is not the run's (vars,
// a literal) or that reads an enclosing item is judged as ever, and so is sortBy(), the
// collection reordered.
func TestQuantifierOverEmptyCollection(t *testing.T) {
	sc := loadScenario(t, `s: schema.#Scenario & {
	steps: [
		{name: "log", logs: file: "a.log"},
		{name: "full", logs: file: "b.log"},
		{name: "x", exec: argv: ["true"]},
	]
	expect: [
		"all(log.entries, .code != 503)",
		"none(log.entries, .code == 503)",
		"all(filter(full.entries, .code == 404), .flags == [])",
		"let rows = filter(split(x.stdout, '\\n'), # != ''); all(rows, # contains 'backend-b')",
		"len(log.entries) == 0 || all(log.entries, .code != 503)",
		"len(log.entries) > 0 && all(log.entries, .code != 503)",
		"log.count == 0 && all(filter(['a', 'b'], # == 'c'), # != '')",
		"all(full.entries, all(.flags, # != 'UF'))",
		"!any(log.entries, .code == 503) && !one(log.entries, .code == 503)",
		"all(full.entries, .code != 503) && none(full.entries, .code == 500)",
		"full.count == 1 && all(log.entries, .code != 503)",
		"count(log.entries, .code == 503) == 0",
		"count(full.entries, .code == 503) == 0",
		"count(log.entries, .code == 503) == len(log.entries)",
		"len(filter(log.entries, .code == 503)) == 0",
		"len(filter(log.entries, .code == 503)) == len(log.entries)",
		"sum(map(log.entries, .code)) == 0",
		"sum(log.entries, .code) == 0",
		"find(log.entries, .code == 503) == nil",
		"findIndex(log.entries, .code == 503) >= 0", // == -1 never holds (nil, not -1, when nothing matches): vet refuses it
		"reduce(log.entries, #acc + .code, 0) == 0",
		"len(groupBy(log.entries, .code)) <= 1",
		"len(sortBy(log.entries, .code)) == 0",
		"len(log.entries) == 0 || len(filter(log.entries, .code == 503)) == 0",
		"len(filter(full.entries, .code == 503)) == 0 && sum(map(full.entries, .code)) == 200 && find(full.entries, .code == 503) == nil && mean(map(full.entries, .code)) == 200 && max(map(full.entries, .code)) == 200",
		"count(full.entries, .code == 200) == len(full.entries)",
		"log.count == 0 && sum([]) == 0 && len(filter([1, 2], # > 5)) == 0 && len(filter([], # > 0)) == 0",
		"any(log.entries, .code == 503)",
		"len(filter(log.entries, .code == 503)) > 0",
		"sum(map(log.entries, .code)) > 5",
	]
}`)
	full := schema.LogResult{Count: 1, Lines: []string{"a"}, Entries: []schema.LogEntry{{Line: "a", Access: true, Code: 200}},
		Codes: map[string]float64{"200": 1}, Flags: map[string]float64{}, Details: map[string]float64{}}
	rec := &interp.Record{}
	rec.Put("log", "logs", false, schema.LogResult{Codes: map[string]float64{}, Flags: map[string]float64{}, Details: map[string]float64{}})
	rec.Put("full", "logs", false, full)
	rec.Put("x", "exec", false, schema.ExecResult{Stdout: "\n"})
	const empty = "has no value: %s is empty, so it holds of nothing and would pass having read nothing"
	for i, c := range []struct {
		want   interp.Outcome
		reason string // of an error: a substring, with the collection
	}{
		{interp.Errored, "all(log.entries, …) " + fmt.Sprintf(empty, "log.entries")},
		{interp.Errored, "none(log.entries, …) " + fmt.Sprintf(empty, "log.entries")},
		{interp.Errored, `all(filter(full.entries, .code == 404), …) ` + fmt.Sprintf(empty, `filter(full.entries, .code == 404)`)},
		{interp.Errored, "all(rows, …) " + fmt.Sprintf(empty, "rows")},
		{interp.Passed, ""},
		{interp.Failed, ""},
		{interp.Passed, ""},
		{interp.Passed, ""},
		{interp.Errored, "any(log.entries, …) has no value: log.entries is empty, so it is false whatever it asks, having read nothing (and !any(…) would pass)"},
		{interp.Passed, ""},
		{interp.Errored, "all(log.entries, …) " + fmt.Sprintf(empty, "log.entries") + "; claim that there is something (len(log.entries) > 0 && all(log.entries, .code != 503)), or, where an empty one is the claim, say so (len(log.entries) == 0 || all(log.entries, .code != 503))"},
		{interp.Errored, "count(log.entries, …) has no value: log.entries is empty, so it counts nothing, and its 0 would read as none found"},
		{interp.Passed, ""},
		{interp.Errored, "count(log.entries, …) has no value: log.entries is empty, so it counts nothing, and its 0 would read as none found; claim that there is something (len(log.entries) > 0 && count(log.entries, .code == 503) == len(log.entries))"},
		{interp.Errored, "filter(log.entries, …) has no value: log.entries is empty, so it keeps nothing whatever it asks, and its [] would read as none found; claim that there is something (len(log.entries) > 0 && len(filter(log.entries, .code == 503)) == 0)"},
		{interp.Errored, "filter(log.entries, …) has no value: log.entries is empty"},
		{interp.Errored, "map(log.entries, …) has no value: log.entries is empty, so it maps nothing"},
		{interp.Errored, "sum(log.entries, …) has no value: log.entries is empty, so it adds nothing, and its 0 would read as a total"},
		{interp.Errored, "find(log.entries, …) has no value: log.entries is empty, so it finds nothing whatever it asks, and its nil would read as none found"},
		{interp.Errored, "findIndex(log.entries, …) has no value: log.entries is empty, so it finds nothing whatever it asks, and its -1"},
		{interp.Errored, "reduce(log.entries, …) has no value: log.entries is empty, so it reduces nothing"},
		{interp.Errored, "groupBy(log.entries, …) has no value: log.entries is empty, so it groups nothing"},
		{interp.Passed, ""},
		{interp.Passed, ""},
		{interp.Passed, ""},
		{interp.Passed, ""},
		{interp.Passed, ""},
		// False over the empty collection: the claim fails, as a wrong outcome should (not
		// an error, which says nothing of the outcome).
		{interp.Failed, "log.entries is empty"},
		{interp.Failed, "log.entries is empty"},
		{interp.Failed, "log.entries is empty"},
	} {
		jd := interp.Rejudge(rec, sc)[i]
		if jd.Outcome != c.want || c.reason != "" && !strings.Contains(jd.Reason, c.reason) {
			t.Errorf("%s: %s (%s%s), want %s %q", jd.Src, jd.Outcome, jd.Reason, jd.Explanation, c.want, c.reason)
		}
	}
}

// TestReadOfStepWithoutResult: a step that recorded no result (its command not found, killed
// by its timeout, skipped by its mayFail block) has no output: a read of its stdout, stderr or
// lines errs "has no value", naming the step and how it ended, as a read of its exit does.
// Read as nil, `!(scan.stdout contains 'ERROR')` passed over a command that never ran, and
// len() and none() said expr's and reflect's words for nil.
func TestReadOfStepWithoutResult(t *testing.T) {
	sc := loadScenario(t, `s: schema.#Scenario & {
	steps: [
		{name: "scan", mayFail: true, exec: argv: ["grpe", "ERROR", "app.log"]},
		{name: "log", mayFail: true, logs: file: "/nonexistent/app.log"},
		{name: "blk", mayFail: true, sequence: [
			{name: "rotate", exec: argv: ["false"]},
			{name: "later", exec: argv: ["cat", "app.log"]},
		]},
	]
	expect: [
		"!(scan.stdout contains 'ERROR')",
		"!(scan.stdout matches 'ERROR')",
		"!(scan.stderr startsWith 'ERROR')",
		"!(scan.stdout endsWith 'ERROR')",
		"scan.stdout != 'ERROR'",
		"len(scan.stdout) == 0",
		"scan.exit != 2",
		"none(log.lines, # contains 'ERROR')",
		"!(later.stdout contains 'ERROR')",
		"outcome.scan == 'passed' && scan.stdout contains 'ERROR'",
		"outcome.later == 'skipped' || !(later.stdout contains 'ERROR')",
	]
}`)
	rec := &interp.Record{Results: map[string]*interp.Result{}}
	rec.Steps = append(rec.Steps,
		&interp.StepRecord{Path: "steps.0", Name: "scan", Kind: "exec", Outcome: interp.Errored, Error: `exec grpe: exec: "grpe": executable file not found in $PATH`},
		&interp.StepRecord{Path: "steps.1", Name: "log", Kind: "logs", Outcome: interp.Errored, Error: "logs: open /nonexistent/app.log: no such file or directory"},
		&interp.StepRecord{Path: "steps.2", Name: "blk", Kind: "sequence", Outcome: interp.Errored, Error: "rotate (exec): false exited with code 1"},
		&interp.StepRecord{Path: "steps.2.sequence.0", Name: "rotate", Kind: "exec", Outcome: interp.Errored, Error: "false exited with code 1"})
	got := interp.Rejudge(rec, sc)
	why := map[string]string{
		"scan":  `step "scan" recorded no result (its outcome is error: exec grpe: exec: "grpe": executable file not found in $PATH)`,
		"log":   `step "log" recorded no result (its outcome is error: logs: open /nonexistent/app.log: no such file or directory)`,
		"later": `step "later" recorded no result (it did not run: outcome.later is "skipped")`,
	}
	want := []string{"scan.stdout", "scan.stdout", "scan.stderr", "scan.stdout", "scan.stdout", "scan.stdout", "scan.exit", "log.lines", "later.stdout", "", ""}
	if len(got) != len(want) {
		t.Fatalf("%d judgements, want %d", len(got), len(want))
	}
	for i, jd := range got {
		if want[i] == "" { // guarded: read only where the step ran
			if jd.Outcome == interp.Errored {
				t.Errorf("%s: %s (%s)", jd.Src, jd.Outcome, jd.Reason)
			}
			continue
		}
		step, _, _ := strings.Cut(want[i], ".")
		if w := want[i] + " has no value: " + why[step]; jd.Outcome != interp.Errored || jd.Reason != w {
			t.Errorf("%s: %s (%s%s), want error %q", jd.Src, jd.Outcome, jd.Reason, jd.Explanation, w)
		}
	}
}

// TestAssertOverEmptyCollection: an assert's all() over an empty collection errs as an
// expectation's does. A repeat's (or a wait's) until waits: its all() over an empty collection
// does not hold (it errs, saying the collection is empty, and the repeat goes on), as does a
// count() or filter() the same comparison sets against the collection's len (all() written
// otherwise); before, all(pods.items, .status.phase == 'Running') held over no pod, and a wait
// for pods to be ready ended before any existed. none(), count() == 0 and !any() over no item
// are held to the same rule (they held at once before: over no pod, "none pending" ended a
// wait before any pod existed); an until that says what an empty one means (len(x) == 0 ||
// all(x, …), len(x) == 0 || none(x, …)) is judged as written.
func TestAssertOverEmptyCollection(t *testing.T) {
	untils := []struct {
		until string
		want  interp.Outcome
	}{
		{"none(again.entries, .code == 503)", interp.Errored},
		{"count(again.entries, .code == 503) == 0", interp.Errored},
		{"!any(again.entries, .code == 503) && len(filter(again.entries, .code == 503)) == 0", interp.Errored},
		{"len(again.entries) == 0 || all(again.entries, .code != 503)", interp.Passed},
		{"len(again.entries) == 0 || none(again.entries, .code == 503)", interp.Passed},
		{"all(again.entries, .code != 503)", interp.Errored},
		{"count(again.entries, .code != 503) == len(again.entries)", interp.Errored},
		{"len(filter(again.entries, .code != 503)) >= len(again.entries)", interp.Errored},
		{"again.count == 0 && all(again.entries, .code != 503)", interp.Errored},
	}
	var steps []string
	for i, u := range untils { // each repeat its own step again0, again1…
		steps = append(steps, fmt.Sprintf("{repeat: {steps: [{name: \"again%d\", logs: file: \"a.log\"}], until: %q, max: 2}}", i, strings.ReplaceAll(u.until, "again", fmt.Sprint("again", i))))
	}
	sc := loadScenario(t, `s: schema.#Scenario & {
	steps: [
		{name: "log", logs: file: "a.log"},
		{assert: "all(log.entries, .code != 503)"},
		`+strings.Join(steps, ",\n\t\t")+`,
	]
	expect: ["log.count == 0"]
}`)
	rec := &interp.Record{}
	rec.Put("log", "logs", false, schema.LogResult{Codes: map[string]float64{}, Flags: map[string]float64{}, Details: map[string]float64{}})
	j := interp.NewJudge(rec, sc)
	if jd := j.Judge(sc.Steps[1].Expr); jd.Outcome != interp.Errored || !strings.Contains(jd.Reason, "log.entries is empty") {
		t.Errorf("assert: %s (%s)", jd.Outcome, jd.Reason)
	}
	for i, u := range untils {
		rec.Put(fmt.Sprint("again", i), "logs", false, schema.LogResult{Codes: map[string]float64{}, Flags: map[string]float64{}, Details: map[string]float64{}})
		jd := j.Judge(sc.Steps[2+i].Expr)
		switch {
		case jd.Outcome != u.want:
			t.Errorf("repeat until %s: %s (%s), want %s", u.until, jd.Outcome, jd.Reason, u.want)
		case u.want == interp.Errored && !strings.Contains(jd.Reason, fmt.Sprintf("has no value yet: again%d.entries is empty", i)) || strings.Contains(jd.Reason, "claim that"):
			t.Errorf("repeat until %s: %s, want it to say again.entries is empty, as an until's", u.until, jd.Reason)
		}
	}
}

// TestDeltaIsThePlansPair: judged after the run (expectations, replay), a plain delta is the
// scenario's first and last snapshot. Where the last was not taken (a mayFail block skipped
// it), or the first was taken again (a repeat's rounds: the record keeps the last), delta
// errs saying so, instead of judging the shorter window of the snapshots taken (before → mid,
// a repeat's last round), which passed over the 503s outside it.
func TestDeltaIsThePlansPair(t *testing.T) {
	skipped := loadScenario(t, `s: schema.#Scenario & {
	local: backends: a: {}
	steps: [
		{name: "before", snapshot: backend: "a"},
		{name: "mid", snapshot: backend: "a"},
		{name: "blk", mayFail: true, sequence: [
			{name: "hook", exec: argv: ["false"]},
			{name: "after", snapshot: backend: "a"},
		]},
	]
	expect: ["delta.rq_5xx == 0", "delta(\"before\", \"mid\").rq_5xx == 0"]
}`)
	t0 := time.Unix(1000, 0)
	snap := func(rec *interp.Record, name string, at int, n5xx float64) {
		rec.Put(name, "snapshot", false, &interp.SnapshotRecord{Name: name, Source: "backend a", At: t0.Add(time.Duration(at) * time.Second), Counters: schema.Stats{"rq_5xx": n5xx}})
	}
	rec := &interp.Record{}
	snap(rec, "before", 0, 0)
	snap(rec, "mid", 1, 0)
	got := interp.Rejudge(rec, skipped)
	if g := got[0]; g.Outcome != interp.Errored || !strings.Contains(g.Reason, `delta is delta("before", "after"), the scenario's first and last snapshot, and snapshot "after" has not been taken (outcome.after is "skipped")`) || !strings.Contains(g.Reason, `delta("before", "mid")`) {
		t.Errorf("%s: %s (%s%s), want an error saying after was not taken", g.Src, g.Outcome, g.Reason, g.Explanation)
	}
	if g := got[1]; g.Outcome != interp.Passed {
		t.Errorf("%s: %s (%s), want passed: the pair named is taken", g.Src, g.Outcome, g.Reason)
	}
	snap(rec, "after", 2, 11)
	if g := interp.Rejudge(rec, skipped)[0]; g.Outcome != interp.Failed {
		t.Errorf("%s with after taken: %s (%s), want failed", g.Src, g.Outcome, g.Reason)
	}

	repeat := loadScenario(t, `s: schema.#Scenario & {
	local: backends: a: {}
	steps: [
		{name: "retry", repeat: {max: 3, until: "probe.exit == 0", steps: [
			{name: "s1", snapshot: backend: "a"},
			{name: "probe", exec: argv: ["true"]},
			{name: "s2", snapshot: backend: "a"},
		]}},
	]
	expect: ["delta.rq_5xx == 0", "delta(\"s1\", \"s2\").rq_5xx == 0"]
}`)
	rec = &interp.Record{}
	for round := range 3 {
		for _, n := range []string{"s1", "probe", "s2"} {
			rec.Steps = append(rec.Steps, &interp.StepRecord{Path: "steps.0.repeat." + n, Name: n, Kind: "snapshot", Outcome: interp.Passed})
		}
		snap(rec, "s1", 2*round, 1)
		snap(rec, "s2", 2*round+1, 1)
	}
	got = interp.Rejudge(rec, repeat)
	if g := got[0]; g.Outcome != interp.Errored || !strings.Contains(g.Reason, `"s1" was taken 3 times (a repeat's rounds) and the record keeps its last, so delta would cover only the last round`) {
		t.Errorf("%s: %s (%s%s), want an error saying s1 was taken 3 times", g.Src, g.Outcome, g.Reason, g.Explanation)
	}
	if g := got[1]; g.Outcome != interp.Passed {
		t.Errorf("%s: %s (%s), want passed: the last round's pair, named", g.Src, g.Outcome, g.Reason)
	}
}

// TestRejudgeKeepsNowExpectations: an expectation that calls now() is not judged again over a
// record (replay, merge, mutate): judged at that later time, a fresh stamp read as stale, so
// an untouched passed record replayed FAILED and merge refused it as edited, and a failed one
// replayed PASSED. It keeps the recorded outcome, with a note, and no values to hold to the
// data; one the record holds no judgement of errs. Expectations that do not call now() are
// judged again as ever.
func TestRejudgeKeepsNowExpectations(t *testing.T) {
	sc := loadScenario(t, `s: schema.#Scenario & {
	steps: [{name: "stamp", exec: argv: ["date", "-u", "+%Y-%m-%dT%H:%M:%SZ"]}]
	expect: [
		"now() - date(trim(stamp.stdout)) < duration('5s')",
		"now() - date(trim(stamp.stdout)) > duration('3s')",
		"trim(stamp.stdout) != ''",
	]
}`)
	rec := &interp.Record{Outcome: interp.Failed}
	rec.Steps = append(rec.Steps, &interp.StepRecord{Path: "steps.0", Name: "stamp", Kind: "exec", Outcome: interp.Passed})
	rec.Put("stamp", "exec", false, schema.ExecResult{Stdout: "2020-01-01T00:00:00Z\n"})
	rec.Expectations = []*interp.Judgement{
		{Src: sc.Expect[0].Src, Outcome: interp.Passed, Explanation: "recorded", Values: map[string]any{"trim(stamp.stdout)": "2020-01-01T00:00:00Z"}},
		{Src: sc.Expect[1].Src, Outcome: interp.Failed, Explanation: "recorded", Values: map[string]any{"now() - date(trim(stamp.stdout))": 0.4}},
		{Src: sc.Expect[2].Src, Outcome: interp.Passed, Values: map[string]any{"trim(stamp.stdout)": "2020-01-01T00:00:00Z"}},
	}
	got := interp.Rejudge(rec, sc)
	for i, want := range []interp.Outcome{interp.Passed, interp.Failed, interp.Passed} {
		if got[i].Outcome != want {
			t.Errorf("%s: %s (%s%s), want %s as recorded", got[i].Src, got[i].Outcome, got[i].Reason, got[i].Explanation, want)
		}
	}
	if got[0].Explanation != "recorded" {
		t.Errorf("%s: explanation %q, want the recorded one", got[0].Src, got[0].Explanation)
	}
	if cs := interp.ValueContradictions(rec.Expectations, got, nil); len(cs) > 0 {
		t.Errorf("values of expectations that call now() held to the data: %q", cs)
	}
	if notes := strings.Join(rec.Notes, "\n"); !strings.Contains(notes, `calls now(): it keeps the outcome the run recorded (passed)`) {
		t.Errorf("notes %q do not say the expectation kept its outcome", notes)
	}
	// An expectation that does not call now() is still held to the data.
	rec.Expectations[2].Values["trim(stamp.stdout)"] = "edited"
	if cs := interp.ValueContradictions(rec.Expectations, interp.Rejudge(rec, sc), nil); len(cs) != 1 {
		t.Errorf("contradictions %q, want the edited value of the third", cs)
	}
	// One the record holds no judgement of errs, not judged at this time.
	rec.Expectations = nil
	if jd := interp.Rejudge(rec, sc)[0]; jd.Outcome != interp.Errored || !strings.Contains(jd.Reason, "calls now(), so only the run can judge it") {
		t.Errorf("%s without a recorded judgement: %s (%s)", jd.Src, jd.Outcome, jd.Reason)
	}
}

// TestFoundNothingSaid: findIndex and findLastIndex give nil when no item matches (expr
// 1.17.8), and min and max of an empty list nil too; a comparison of it then errs with Go's
// "interface conversion: interface {} is nil, not int" or expr's "invalid operation: <nil> <
// int". The judge says what happened in the claim's terms instead.
func TestFoundNothingSaid(t *testing.T) {
	sc := loadScenario(t, `s: schema.#Scenario & {
	steps: [
		{name: "log", logs: file: "a.log"},
		{name: "none", logs: file: "b.log"},
	]
	expect: [
		"findIndex(log.lines, # contains 'ERROR') >= 0",
		"findLastIndex(log.lines, # contains 'ERROR') > 1",
		"min(map(none.lines, len(#))) > 0",
	]
}`)
	rec := &interp.Record{}
	rec.Put("log", "logs", false, schema.LogResult{Lines: []string{"ok", "fine"}, Count: 2, Codes: map[string]float64{}, Flags: map[string]float64{}, Details: map[string]float64{}})
	rec.Put("none", "logs", false, schema.LogResult{Lines: []string{}, Codes: map[string]float64{}, Flags: map[string]float64{}, Details: map[string]float64{}})
	j := interp.NewJudge(rec, sc)
	for i, want := range []string{
		"findIndex(log.lines, # contains 'ERROR') found no item: findIndex gives nil, not -1, when nothing matches",
		"findLastIndex(log.lines, # contains 'ERROR') found no item: findLastIndex gives nil, not -1, when nothing matches",
		"none.lines is empty", // said by the empty-collection check (dsl.EmptyCollection)
	} {
		jd := j.Judge(sc.Expect[i])
		if jd.Outcome != interp.Errored || !strings.Contains(jd.Reason, want) || strings.Contains(jd.Reason, "interface conversion") {
			t.Errorf("%s: %s (%s), want an error saying %q", sc.Expect[i].Src, jd.Outcome, jd.Reason, want)
		}
	}
}

// TestOutOfRangeSaid: an index past a list's end erred in expr's words ("index out of range: 0
// (array length is 0)"); it names the list as written, with its length, through calls and
// negative indexes, on any line of the expression, past a bracket in a string and a rune of
// two bytes.
func TestOutOfRangeSaid(t *testing.T) {
	sc := loadScenario(t, `s: schema.#Scenario & {
	steps: [
		{name: "log", logs: file: "a.log"},
	]
	expect: [
		"log.lines[2] == 'x'",
		"filter(log.lines, # contains 'o')[-3] == 'x'",
		"""
			len(log.lines) > 0 &&
			  map(log.lines, len(#))[5] > 0
			""",
		"filter(log.lines, # != ']')[3] == 'x'",
		"filter(log.lines, # != 'é')[4] == 'x'",
		"log.lines[0][9:] == 'x' || log.lines[1] == 'fine'",
	]
}`)
	rec := &interp.Record{}
	rec.Put("log", "logs", false, schema.LogResult{Lines: []string{"ok", "fine"}, Count: 2, Codes: map[string]float64{}, Flags: map[string]float64{}, Details: map[string]float64{}})
	j := interp.NewJudge(rec, sc)
	for i, want := range []string{
		"log.lines[2] has no value: log.lines holds 2 items (indexes 0 to 1, or -2 to -1 from its end)",
		"filter(log.lines, # contains 'o')[-3] has no value: filter(log.lines, # contains 'o') holds 1 item (indexes 0 to 0",
		"map(log.lines, len(#))[5] has no value: map(log.lines, len(#)) holds 2 items",
		"filter(log.lines, # != ']')[3] has no value: filter(log.lines, # != ']') holds 2 items", // a bracket in a string is text
		"filter(log.lines, # != 'é')[4] has no value: filter(log.lines, # != 'é') holds 2 items", // expr counts runes
		"", // passes
	} {
		jd := j.Judge(sc.Expect[i])
		if want == "" {
			if jd.Outcome != interp.Passed {
				t.Errorf("%s: %s (%s), want passed", sc.Expect[i].Src, jd.Outcome, jd.Reason)
			}
			continue
		}
		if jd.Outcome != interp.Errored || !strings.HasPrefix(jd.Reason, want) {
			t.Errorf("%s: %s (%s), want an error saying %q", sc.Expect[i].Src, jd.Outcome, jd.Reason, want)
		}
	}
}
