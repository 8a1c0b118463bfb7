package interp_test

import (
	"encoding/json"
	"strings"
	"testing"

	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/schema"
)

// TestOutcomeContradictions: an assert whose value the record determines (it reads results of
// steps that had ended before it started, vars) is judged again over the record; a record as
// the run wrote it is told nothing, whether the assert passed, failed, or failed as its
// expectFail expected; one whose assert's outcome was flipped, or whose data under the assert
// were changed, is told, naming the step, the expression and its value. An assert whose value
// the record does not say exactly (a step it reads ran while it ran, or again after it) is
// left as recorded.
func TestOutcomeContradictions(t *testing.T) {
	const held = `s: schema.#Scenario & {
	steps: [
		{name: "hi", exec: argv: ["echo"]},
		{name: "check", assert: "hi.stdout == \"notready\\n\""},
		{name: "bye", exec: argv: ["echo"]},
	]
}`
	const failed = `s: schema.#Scenario & {
	steps: [
		{name: "hi", exec: argv: ["echo"]},
		{name: "check", assert: "hi.stdout == \"ready\\n\""},
	]
}`
	const expectFail = `s: schema.#Scenario & {
	steps: [
		{name: "hi", exec: argv: ["echo"]},
		{name: "check", expectFail: true, assert: "hi.stdout == \"ready\\n\""},
	]
}`
	const expectFailHeld = `s: schema.#Scenario & {
	steps: [
		{name: "hi", exec: argv: ["echo"]},
		{name: "check", expectFail: true, assert: "hi.stdout == \"notready\\n\""},
	]
}`
	const readsOutcome = `s: schema.#Scenario & {
	steps: [
		{name: "hi", exec: argv: ["fail"], mayFail: true},
		{name: "check", assert: "outcome.hi == \"failed\" || outcome.hi == \"error\""},
	]
}`
	const exits = `s: schema.#Scenario & {
	steps: [
		{name: "ok", exec: argv: ["echo"]},
		{name: "code", exec: {argv: ["fail"], exitCode: 1}},
		{name: "bad", exec: argv: ["fail"], mayFail: true},
		{name: "inverted", exec: argv: ["fail"], expectFail: true},
		{name: "again", repeat: {max: 2, until: "r.exit == 1", steps: [{name: "r", exec: argv: ["echo"]}]}},
	]
}`
	// A repeat's until that reads when steps started or ended: the repeat's own record is
	// there as it was when the until was judged (started, not ended).
	const timed = `s: schema.#Scenario & {
	steps: [
		{name: "again", mayFail: true, repeat: {max: 2, until: "ended.r - started.r > 100.0", steps: [{name: "r", exec: argv: ["echo"]}]}},
		{sleep: "1s"},
		{name: "all", repeat: {max: 2, until: "len(started) >= 4", steps: [{name: "r2", exec: argv: ["echo"]}]}},
	]
	expect: ["outcome.again == \"failed\""]
}`
	const waits = `s: schema.#Scenario & {
	steps: [
		{name: "hi", exec: argv: ["echo"], background: true},
		{sleep: "5s"},
		{name: "w", wait: {until: "hi.stdout == \"ready\\n\"", interval: "1s"}, timeout: "3s"},
		{await: ["hi"]},
	]
}`
	const reads = `s: schema.#Scenario & {
	namespaces: ["lab"]
	steps: [
		{name: "cm", get: {kind: "ConfigMap", name: "flags", until: "cm.metadata.name == \"flags\""}},
		{name: "never", timeout: "3s", mayFail: true, get: {kind: "ConfigMap", name: "other", until: "never.metadata.name == \"flags\""}},
		{name: "cb", config: {admin: "http://127.0.0.1:15000", cluster: "c", until: "cb.connect_timeout == \"10s\""}},
		{name: "cbx", timeout: "3s", mayFail: true, config: {admin: "http://127.0.0.1:15000", cluster: "c", until: "cbx.connect_timeout == \"5s\""}},
	]
}`
	value := func(name, key, v string) func(*interp.Record) {
		return func(rec *interp.Record) {
			m := rec.Results[name].Value.(map[string]any)
			if key == "name" {
				m["metadata"].(map[string]any)["name"] = v
			} else {
				m[key] = v
			}
		}
	}
	exit := func(name string, code float64) func(*interp.Record) {
		return func(rec *interp.Record) {
			r := rec.Results[name].Value.(schema.ExecResult)
			r.Exit = code
			rec.Results[name].Value = r
		}
	}
	stdout := func(s string) func(*interp.Record) {
		return func(rec *interp.Record) {
			r := rec.Results["hi"].Value.(schema.ExecResult)
			r.Stdout = s
			rec.Results["hi"].Value = r
		}
	}
	step := func(rec *interp.Record, name string) *interp.StepRecord {
		for _, s := range rec.Steps {
			if s.Name == name {
				return s
			}
		}
		t.Fatalf("no step %s", name)
		return nil
	}
	flip := func(rec *interp.Record) {
		s := step(rec, "check")
		s.Outcome, s.Error = interp.Passed, ""
	}
	for _, c := range []struct {
		name, src string
		edit      func(*interp.Record)
		want      string // "" for none
	}{
		{"passed", held, nil, ""},
		{"failed", failed, nil, ""},
		{"failed as expected", expectFail, nil, ""},
		{"held, which fails it with expectFail", expectFailHeld, nil, ""},
		{"held with expectFail, the data changed", expectFailHeld, stdout("ready\n"),
			`step check: its assert "hi.stdout == \"notready\\n\"" says passed, but over the data the record holds from before it ran the expression is false`},
		{"reads an outcome", readsOutcome, nil, ""},
		{"a failed assert flipped to passed", failed, flip,
			`step check: its assert "hi.stdout == \"ready\\n\"" says passed, but over the data the record holds from before it ran the expression is false: hi.stdout ("notready\n") == "ready\n"`},
		{"the data under a passed assert changed", held, stdout("ready\n"),
			`step check: its assert "hi.stdout == \"notready\\n\"" says passed, but over the data the record holds from before it ran the expression is false: hi.stdout ("ready\n") == "notready\n"`},
		{"the data under a failed assert changed", failed, stdout("ready\n"),
			`step check: its assert "hi.stdout == \"ready\\n\"" says failed, but over the data the record holds from before it ran the expression is true`},
		{"the data under an expected failure changed", expectFail, stdout("ready\n"), "says failed, but over the data the record holds from before it ran the expression is true"},
		{"an outcome it read changed", readsOutcome, func(rec *interp.Record) {
			s := step(rec, "hi")
			s.Outcome, s.Error, s.Warnings = interp.Passed, "", nil
		}, `step check: its assert "outcome.hi == \"failed\" || outcome.hi == \"error\"" says passed, but over the data the record holds from before it ran the expression is false`},
		{"exec exit codes as the run wrote them", exits, nil, ""},
		{"an exec that passed records another code", exits, exit("ok", 3),
			"step ok: its record contradicts itself: its outcome is passed, but it records exit 3 and the step expects 0"},
		{"an exec that passed records another code than its exitCode", exits, exit("code", 0),
			"step code: its record contradicts itself: its outcome is passed, but it records exit 0 and the step expects 1"},
		{"an exec that erred records the code it expects", exits, exit("bad", 0),
			"step bad: its record contradicts itself: its outcome is error, but it records exit 0, the code the step expects, with which it passes"},
		{"an exec that failed as expected records the code it expects", exits, exit("inverted", 0),
			"step inverted: its record contradicts itself: its outcome is passed, as failing its expectFail expected, but it records exit 0, the code the step expects"},
		{"an expectFail exec flipped to failed", exits, func(rec *interp.Record) {
			s := step(rec, "inverted")
			s.Outcome, s.ExpectedError, s.Warnings, s.Error = interp.Failed, "", nil, "x"
		}, "step inverted: its record contradicts itself: its outcome is failed, but it records exit 1 and the step expects 0"},
		{"an exec that ran twice, its earlier round flipped", exits, func(rec *interp.Record) {
			s := step(rec, "r") // the first round's: the result is the second's
			s.Outcome, s.Error = interp.Errored, "x"
		}, ""},
		{"an exec that ran twice records another code", exits, exit("r", 3),
			"step r (round 2): its record contradicts itself: its outcome is passed, but it records exit 3 and the step expects 0"},
		{"a repeat whose until never held flipped to passed", exits, func(rec *interp.Record) {
			s := step(rec, "again")
			s.Outcome, s.Error = interp.Passed, ""
		}, `step again: its repeat until "r.exit == 1" says passed, but over the data the record holds at its last round's end the expression is false: r.exit (0) == 1`},
		{"the data under a repeat that failed changed", exits, func(rec *interp.Record) {
			exit("r", 1)(rec)
		}, `step again: its repeat until "r.exit == 1" says failed, but over the data the record holds at its last round's end the expression is true`},
		{"a wait until as the run wrote it", waits, nil, ""},
		{"a wait until that never held flipped to passed", waits, func(rec *interp.Record) {
			s := step(rec, "w")
			s.Outcome, s.Error = interp.Passed, ""
		}, `step w: its wait until "hi.stdout == \"ready\\n\"" says passed, but over the data the record holds from before it ran the expression is false: hi.stdout ("notready\n") == "ready\n"`},
		{"the data under a wait until that failed changed", waits, stdout("ready\n"),
			`step w: its wait until "hi.stdout == \"ready\\n\"" says failed, but over the data the record holds from before it ran the expression is true`},
		{"get and config untils as the run wrote them", reads, nil, ""},
		{"a get until that never held flipped to passed", reads, func(rec *interp.Record) {
			s := step(rec, "never")
			s.Outcome, s.Error, s.Warnings = interp.Passed, "", nil
		}, `step never: its get until "never.metadata.name == \"flags\"" says passed, but over the data the record holds from its last read the expression is false: never.metadata.name ("other") == "flags"`},
		{"the value under a get until that passed changed", reads, value("cm", "name", "other"),
			`step cm: its get until "cm.metadata.name == \"flags\"" says passed, but over the data the record holds from its last read the expression is false`},
		{"the value under a get until that failed changed", reads, value("never", "name", "flags"),
			`step never: its get until "never.metadata.name == \"flags\"" says failed, but over the data the record holds from its last read the expression is true`},
		{"a get until that failed ran again after, recording nothing", reads, func(rec *interp.Record) {
			value("never", "name", "flags")(rec) // may be the later execution's value: not judged
			again := *step(rec, "never")
			again.Start, again.End = step(rec, "cbx").End+1, step(rec, "cbx").End+2
			again.Outcome, again.Error = interp.Errored, "x"
			rec.Steps = append(rec.Steps, &again)
		}, ""},
		{"a config until that never held flipped to passed", reads, func(rec *interp.Record) {
			s := step(rec, "cbx")
			s.Outcome, s.Error, s.Warnings = interp.Passed, "", nil
		}, `step cbx: its config until "cbx.connect_timeout == \"5s\"" says passed, but over the data the record holds from its last read the expression is false: cbx.connect_timeout ("10s") == "5s"`},
		{"the value under a config until that passed changed", reads, value("cb", "connect_timeout", "5s"),
			`step cb: its config until "cb.connect_timeout == \"10s\"" says passed, but over the data the record holds from its last read the expression is false`},
		{"the value under a config until that failed changed", reads, value("cbx", "connect_timeout", "5s"),
			`step cbx: its config until "cbx.connect_timeout == \"5s\"" says failed, but over the data the record holds from its last read the expression is true`},
		{"a step it reads ended after it started", held, func(rec *interp.Record) {
			stdout("ready\n")(rec)
			step(rec, "hi").End = step(rec, "check").Start + 1
		}, ""},
		{"a step it reads ran again after it", held, func(rec *interp.Record) {
			stdout("ready\n")(rec)
			again := *step(rec, "hi")
			again.Start, again.End = step(rec, "bye").Start, step(rec, "bye").End
			rec.Steps = append(rec.Steps, &again)
			// Each execution of an exec writes its exit.txt.
			rec.Artifacts = append(rec.Artifacts, &interp.ArtifactRecord{Step: "hi", Name: "exit.txt", File: "hi-exit-2.txt"})
		}, ""},
		{"a repeat's until over times, as recorded", timed, nil, ""},
		{"a repeat whose until over its step's times never held flipped to passed", timed, func(rec *interp.Record) {
			s := step(rec, "again")
			s.Outcome, s.Error = interp.Passed, ""
		}, `step again: its repeat until "ended.r - started.r > 100.0" says passed, but over the data the record holds at its last round's end the expression is false`},
		{"a repeat whose until over every step's start held flipped to failed", timed, func(rec *interp.Record) {
			s := step(rec, "all")
			s.Outcome, s.Error = interp.Failed, "repeat: x"
		}, `step all: its repeat until "len(started) >= 4" says failed, but over the data the record holds at its last round's end the expression is true`},
		{"a step it does not read ran while it ran", held, func(rec *interp.Record) {
			step(rec, "bye").Start = step(rec, "check").Start
			flip(rec)
			stdout("ready\n")(rec)
		}, "says passed, but over the data the record holds from before it ran the expression is false"},
	} {
		t.Run(c.name, func(t *testing.T) {
			sc := loadScenario(t, c.src)
			run := runInReplayWorld(t, sc)
			b, err := json.Marshal(run)
			if err != nil {
				t.Fatal(err)
			}
			var rec interp.Record
			if err := json.Unmarshal(b, &rec); err != nil {
				t.Fatal(err)
			}
			if err := interp.RestoreTypes(&rec); err != nil {
				t.Fatal(err)
			}
			if c.edit != nil {
				c.edit(&rec)
			}
			got := ""
			if err := interp.OutcomeContradictions(&rec, sc); err != nil {
				got = err.Error()
			}
			if c.want == "" && got != "" || !strings.Contains(got, c.want) {
				t.Errorf("OutcomeContradictions: %q, want %q", got, c.want)
			}
		})
	}
}

// TestReplayRefusesALoadOfAnotherCount: a load records its result only when fortio made the
// requests its step fixes (schema.Load.Run), and vet refuses an expectation restating them:
// a record whose load of requests: 20 holds 19 (its sums kept) was changed after the run, and
// is refused rather than judged. A load of a duration records whatever fortio made.
func TestReplayRefusesALoadOfAnotherCount(t *testing.T) {
	const src = `
s: schema.#Scenario & {
	steps: [
		{name: "fixed", load: {url: "http://127.0.0.1:1/echo", requests: 20, connections: 1}},
		{name: "timed", load: {url: "http://127.0.0.1:1/echo", duration: "1s", connections: 1}},
	]
	expect: ["fixed.code200 == fixed.requests && timed.code200 == timed.requests"]
}`
	count := func(name string, n float64) func(*interp.Record) {
		return func(rec *interp.Record) {
			l := rec.Results[name].Value.(*interp.LoadRecord)
			l.Codes = map[string]float64{"200": n}
			l.Recount()
			// the times fortio records of n requests: the edit changes only the count (a
			// load of a duration of 1 s lasts that long at least)
			if l.DurationS == 0 {
				l.DurationS, l.Connections = 1, 1
			}
			l.QPS = n / l.DurationS
			if l.Max == 0 {
				l.Min, l.P50, l.P90, l.P99, l.P999, l.Max, l.Avg = 1, 1, 1, 1, 1, 1, 1
			}
		}
	}
	for _, c := range []struct {
		name string
		edit func(*interp.Record)
		want string
	}{
		{"as recorded", nil, ""},
		{"the fixed load's count changed", count("fixed", 19), "step fixed: its load records 19 requests, but the step fixes 20 (requests: 20)"},
		{"the timed load's count changed", count("timed", 7), ""},
		// fortio runs the connections it is given or fewer (driver/fortio: fortioConnections):
		// mutate's fortio.connections ×2 SURVIVED as an outcome no run records.
		{"the timed load ran more connections than its step's", func(rec *interp.Record) {
			rec.Results["timed"].Value.(*interp.LoadRecord).Connections = 2
		}, "step timed: its load records 2 connections, but the step runs at most 1 (connections: 1)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			sc := loadScenario(t, src)
			run := runInReplayWorld(t, sc)
			b, err := json.Marshal(run)
			if err != nil {
				t.Fatal(err)
			}
			var rec interp.Record
			if err := json.Unmarshal(b, &rec); err != nil {
				t.Fatal(err)
			}
			if err := interp.RestoreTypes(&rec); err != nil {
				t.Fatal(err)
			}
			if c.edit != nil {
				c.edit(&rec)
			}
			if err := rec.Contradictions(); err != nil {
				t.Fatalf("the edit breaks fortio's sums: %v", err)
			}
			got := ""
			if err := interp.OutcomeContradictions(&rec, sc); err != nil {
				got = err.Error()
			}
			if c.want == "" && got != "" || !strings.Contains(got, c.want) {
				t.Errorf("OutcomeContradictions: %q, want %q", got, c.want)
			}
		})
	}
}
