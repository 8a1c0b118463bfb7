package interp_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/interp"
)

// throughJSON is rec as replay reads it: written to JSON (indented, as a run writes it) and
// read back.
func throughJSON(t *testing.T, rec *interp.Record) *interp.Record {
	t.Helper()
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	var out interp.Record
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if err := interp.RestoreTypes(&out); err != nil {
		t.Fatal(err)
	}
	return &out
}

// TestChangedStepParams: the record keeps each step's parameters (stepParams), and ChangedStep
// names a step whose parameters the scenario changed since the run, where its summary says
// nothing of them (a logs step's match, an exec's capture, stdin or env, a repeat's interval),
// with the field and, when the record keeps the value rather than its digest, both values.
// What does not change what a step does is no change: a doc, a comment, the order and layout
// of fields, an expectation. Before, only the summary was compared: a logs step whose match
// was changed from " 599 " to " 503 " was taken as the step the run ran, and "no 503" judged
// over the run's count of other lines.
func TestChangedStepParams(t *testing.T) {
	long := strings.Repeat("x", 80)
	src := `
s: schema.#Scenario & {
	steps: [
		{name: "host", exec: {argv: ["host"], capture: "(?P<ip>[0-9.]+)"}},
		{name: "in", exec: {argv: ["cat"], stdin: "` + long + `"}},
		{name: "tpl", exec: {argv: ["cat"], stdin: "${host.stdout}"}},
		{name: "log", logs: {file: "access.log", match: " 599 "}},
		{name: "loop", repeat: {max: 2, interval: "10ms", until: "true", steps: [{name: "probe", exec: argv: ["echo"]}]}},
	]
	expect: ["log.count == 0"]
}`
	t.Chdir(t.TempDir())
	if err := os.WriteFile("access.log", []byte("GET / 503 UO\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rec := passedRecord(t, src)
	for _, tc := range []changedCase{
		{name: "the same"},
		{name: "an expectation changed", from: `"log.count == 0"`, to: `"log.count == 1"`},
		{name: "a doc and a comment added", from: `{name: "log", logs:`, to: "// the access log\n\t\t{name: \"log\", doc: \"reads it\", logs:"},
		{name: "fields reordered and laid out otherwise", from: `{name: "log", logs: {file: "access.log", match: " 599 "}}`, to: "{logs: {\n\t\t\tmatch: \" 599 \"\n\t\t\tfile:  \"access.log\"\n\t\t}, name: \"log\"}"},
		{name: "a repeat's max written as an expression", from: `max: 2,`, to: `max: 1 + 1,`},
		{name: "a logs step's match changed", from: `match: " 599 "`, to: `match: " 503 "`,
			want: `steps.3 (log, logs) ran with match " 599 " and would now run with match " 503 "`},
		{name: "a capture changed", from: `capture: "(?P<ip>[0-9.]+)"`, to: `capture: "(?P<ip>[0-9]+)"`,
			want: `steps.0 (host, exec) ran with capture "(?P<ip>[0-9.]+)" and would now run with capture "(?P<ip>[0-9]+)"`},
		{name: "a capture taken out", from: `, capture: "(?P<ip>[0-9.]+)"`, to: ``,
			want: `steps.0 (host, exec) ran with capture "(?P<ip>[0-9.]+)" and would now run without it`},
		{name: "an env added", from: `argv: ["host"],`, to: `argv: ["host"], env: {A: "1"},`,
			want: `steps.0 (host, exec) ran without env and would now run with env {"A":"1"}`},
		{name: "a long stdin changed", from: long, to: long + "y",
			want: `steps.1 (in, exec) ran with a stdin other than the one it would now run with (the record keeps its digest, not its value)`},
		{name: "a template changed as written", from: `stdin: "${host.stdout}"`, to: `stdin: "${host.stderr}"`,
			want: `steps.2 (tpl, exec) ran with stdin "${host.stdout}" and would now run with stdin "${host.stderr}"`},
		{name: "a repeat's interval changed", from: `interval: "10ms"`, to: `interval: "20ms"`,
			want: `steps.4 (loop, repeat) ran with interval "10ms" and would now run with interval "20ms"`},
		{name: "a record of version 2 without stepParams: its summaries alone, as before", from: `match: " 599 "`, to: `match: " 503 "`,
			edit: func(r *interp.Record) { r.Version, r.StepParams, r.StepOptions = 2, nil, nil }},
		{name: "a record of version 3 without stepParams", from: `match: " 599 "`, to: `match: " 503 "`,
			edit: func(r *interp.Record) { r.Version, r.StepParams = 3, nil },
			want: "steps.0 (host, exec) is in a record of version 3 without stepParams, which a run of that version keeps of every step: the record was changed after the run or is corrupt"},
		{name: "a record without one step's parameters", from: `match: " 599 "`, to: `match: " 503 "`,
			edit: func(r *interp.Record) { delete(r.StepParams, "steps.3") },
			want: "steps.3 (log, logs) is in the record without the parameters it ran with, which the record keeps of every other step: the record was changed after the run or is corrupt"},
	} {
		t.Run(tc.name, func(t *testing.T) { wantChangedStep(t, src, rec, tc.from, tc.to, tc.edit, tc.want) })
	}
}

// TestStepParamsHideSecrets: a step's parameters are kept with the secrets hidden, before a
// long one is digested (a digest of the value would let a short secret be guessed), and the
// scenario loaded with the record's vars (the secret's value its mask) has the parameters the
// record keeps.
func TestStepParamsHideSecrets(t *testing.T) {
	src := `
s: schema.#Scenario & {
	vars: token: "1234"
	secrets: ["token"]
	steps: [
		{name: "short", exec: {argv: ["cat"], stdin: "t=\(vars.token)"}},
		{name: "long", exec: {argv: ["cat"], stdin: "` + strings.Repeat("x", 80) + `\(vars.token)"}},
	]
}`
	dir := t.TempDir()
	p := filepath.Join(dir, "s.cue")
	if err := os.WriteFile(p, []byte("package s\n\nimport \"labrun.dev/schema\"\n\n"+src), 0o644); err != nil {
		t.Fatal(err)
	}
	load := func(vars map[string]string) *dsl.Scenario {
		res, err := dsl.Load([]string{p}, dsl.Options{Target: "fake", Vars: vars})
		if err != nil || len(res.Scenarios) != 1 {
			t.Fatalf("load: %v", err)
		}
		return res.Scenarios[0]
	}
	var run *interp.Record
	synctest.Test(t, func(t *testing.T) {
		run = interp.New(replayWorld().Target()).Run(context.Background(), context.Background(), load(nil))
	})
	rec := throughJSON(t, run)
	b, _ := json.Marshal(rec.StepParams)
	if strings.Contains(string(b), "1234") || !strings.Contains(string(b), `"stdin":"t=[secret token]"`) {
		t.Errorf("stepParams: %s, want the secret hidden", b)
	}
	vars := map[string]string{}
	for k, v := range rec.Vars {
		vars[k] = dsl.Stringify(v)
	}
	if got := interp.ChangedStep(rec, load(vars), nil); got != "" {
		t.Errorf("the scenario with the record's vars: ChangedStep says %q", got)
	}
	// The scenario's own vars (its secret as it is, which the record's masks hide).
	if got := interp.ChangedStep(rec, load(nil), nil); got != "" {
		t.Errorf("the scenario with its own vars: ChangedStep says %q", got)
	}
}

// TestChangedStepOptions: the record keeps each step's own fields beside its kind
// (stepOptions), and ChangedStep names a step whose mayFail, expectFail, timeout, background,
// at, every or while changed since the run. Before, only the kind's parameters were kept: a
// run whose failing step had mayFail: true replayed with --file of the scenario without it
// (where that failure fails the run) PASSED, and one whose timeout was lowered below the
// step's time the same.
func TestChangedStepOptions(t *testing.T) {
	src := `
s: schema.#Scenario & {
	steps: [
		{name: "bad", mayFail: true, exec: {argv: ["false"]}},
		{name: "bg", background: true, timeout: "5s", exec: {argv: ["echo"]}},
		{name: "after", exec: {argv: ["echo"]}},
		{parallel: [{name: "p", at: "10ms", exec: {argv: ["echo"]}}]},
	]
	expect: ["p.exit == 0"]
}`
	t.Chdir(t.TempDir())
	rec := passedRecord(t, src)
	for _, tc := range []changedCase{
		{name: "the same"},
		{name: "mayFail taken out", from: `mayFail: true, `, to: ``,
			want: `steps.0 (bad, exec) ran with mayFail true and would now run without it`},
		{name: "mayFail turned to expectFail", from: `mayFail: true`, to: `expectFail: "exit"`,
			want: `steps.0 (bad, exec) ran without expectFail and would now run with expectFail "exit"`},
		{name: "a timeout changed", from: `timeout: "5s"`, to: `timeout: "1ms"`,
			want: `steps.1 (bg, exec) ran with timeout "5s" and would now run with timeout "1ms"`},
		{name: "background taken out", from: `background: true, `, to: ``,
			want: `steps.1 (bg, exec) ran with background true and would now run without it`},
		{name: "at changed", from: `at: "10ms"`, to: `at: "20ms"`,
			want: `steps.3.parallel.0 (p, exec) ran with at "10ms" and would now run with at "20ms"`},
		{name: "a record of version 2 (before stepOptions): not compared", from: `mayFail: true, `, to: ``,
			edit: func(r *interp.Record) { r.Version, r.StepOptions = 2, nil }},
		{name: "stepOptions taken out of a record of version 3", from: `mayFail: true, `, to: `mayFail: true, `,
			edit: func(r *interp.Record) { r.StepOptions = nil },
			want: `steps.0 (bad, exec) ran without mayFail and would now run with mayFail true`},
	} {
		t.Run(tc.name, func(t *testing.T) { wantChangedStep(t, src, rec, tc.from, tc.to, tc.edit, tc.want) })
	}
}

// passedRecord runs the scenario src on the replay world (in a synctest bubble) and returns
// its record read back from JSON, failing the test unless the run passed.
func passedRecord(t *testing.T, src string) *interp.Record {
	t.Helper()
	var run *interp.Record
	synctest.Test(t, func(t *testing.T) {
		run = interp.New(replayWorld().Target()).Run(context.Background(), context.Background(), loadScenario(t, src))
	})
	if run.Outcome != interp.Passed {
		t.Fatalf("the run: %s (%s)", run.Outcome, run.Error)
	}
	return throughJSON(t, run)
}

// changedCase is a scenario edited since a run, and what ChangedStep says of the run's record.
type changedCase struct {
	name, from, to string // the scenario now: src with from replaced by to
	edit           func(*interp.Record)
	want           string // ChangedStep's answer
}

// wantChangedStep checks ChangedStep of a copy of rec (edited by edit, when given) against the
// scenario src with from replaced by to.
func wantChangedStep(t *testing.T, src string, rec *interp.Record, from, to string, edit func(*interp.Record), want string) {
	t.Helper()
	if !strings.Contains(src, from) {
		t.Fatalf("the scenario has no %q", from)
	}
	r := throughJSON(t, rec)
	if edit != nil {
		edit(r)
	}
	now := loadScenario(t, strings.Replace(src, from, to, 1))
	if got := interp.ChangedStep(r, now, nil); got != want {
		t.Errorf("ChangedStep:\n got %q\nwant %q", got, want)
	}
}
