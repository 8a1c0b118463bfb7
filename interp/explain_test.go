package interp_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/schema"
)

const explainScenario = `
s: schema.#Scenario & {
	target: "kube"
	namespaces: ["lab"]
	steps: [
		{name: "long", get: {kind: "Pod", selector: "app=a", namespace: "lab", path: "status.podIP"}},
		{name: "short", get: {kind: "Pod", selector: "app=b", namespace: "lab", path: "status.podIP"}},
		{name: "before", snapshot: {admin: "http://127.0.0.1:15000", cluster: "c"}},
		{name: "fortio", load: {url: "http://127.0.0.1:1", requests: 30}},
		{name: "after", snapshot: {admin: "http://127.0.0.1:15000", cluster: "c"}},
	]
	expect: [
		"approx(fortio.code503, 20, 0.1)",
		"all(long, # < 10)",
		"len(short) == 4",
		"fortio.code503 + fortio.code200 == 30",
		"not approx(fortio.code503, 15, 0.1) && within(fortio.code200, 0, 5)",
		"fortio.codes[short[0] == 1 ? \"503\" : \"200\"] == 0",
		"!(fortio.code503 > 0)",
	]
}
`

// TestExplainCallsAndLists: a failed expectation shows the values of a function's arguments,
// the list a predicate ran over (its first 10 items and its length when longer), and the
// operands of arithmetic — not just "(false)".
func TestExplainCallsAndLists(t *testing.T) {
	sc := loadScenario(t, explainScenario)
	rec := judgeRecord(interp.SnapshotRecord{}, interp.SnapshotRecord{})
	rec.Put("long", "get", false, []any{1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0})
	rec.Put("short", "get", false, []any{1.0, 2.0, 3.0})
	want := []string{
		"approx(fortio.code503 (15), 20, 0.1) (false; it accepts 18 to 22)", // the range the claim set
		"all(long ([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, …] (15 items)), # < 10) (false)",
		"len(short ([1, 2, 3])) (3) == 4",
		"(fortio.code503 (15) + fortio.code200 (18)) (33) == 30",
		// The value inside a negation is its operand's: parenthesised, it does not read as the
		// negation's.
		// The right side of && is not shown with values where the left was false: the judge
		// did not evaluate it.
		"(not (approx(fortio.code503 (15), 15, 0.1) (true))) && (within(fortio.code200, 0, 5): not evaluated)",
		// A conditional's condition with its parts' values (TestExplainConditional).
		`fortio.codes[(short[0] (1) == 1 ? "503" : "200") ("503")] (15) == 0`,
		"!(fortio.code503 (15) > 0)",
	}
	wantExplanations(t, interp.Rejudge(rec, sc), want)
}

// TestExplainUnits: each number an explanation shows has the unit its type has as the kinds
// declare it (schema/load.go: p99 in milliseconds, qps per second; started and ended in
// seconds), arithmetic included (a sum of milliseconds is milliseconds, a difference of times
// seconds, a ratio of counts a plain number), with at most 4 significant digits.
func TestExplainUnits(t *testing.T) {
	sc := loadScenario(t, `
s: schema.#Scenario & {
	steps: [{name: "fortio", load: {url: "http://127.0.0.1:1", requests: 30}}]
	expect: [
		"fortio.p99 < 1",
		"fortio.qps > 100000",
		"fortio.p50 + fortio.p99 < 1",
		"ended.fortio - started.fortio > 10",
		"fortio.code503 / fortio.requests > 0.9",
	]
}
`)
	rec := &interp.Record{Steps: []*interp.StepRecord{{Name: "fortio", Start: 10 * time.Millisecond, End: 2 * time.Second}}}
	rec.Put("fortio", "load", false, &interp.LoadRecord{LoadResult: schema.LoadResult{Requests: 30, Codes: map[string]float64{"200": 18, "503": 12},
		P50: 0.412345, P99: 1.66046, QPS: 14.9876}})
	want := []string{
		"fortio.p99 (1.66 ms) < 1",
		"fortio.qps (14.99 1/s) > 100000",
		"(fortio.p50 (0.4123 ms) + fortio.p99 (1.66 ms)) (2.073 ms) < 1",
		"(ended.fortio (2 s) - started.fortio (0.01 s)) (1.99 s) > 10",
		"(fortio.code503 (12) / fortio.requests (30)) (0.4) > 0.9",
	}
	wantExplanations(t, interp.Rejudge(rec, sc), want)
}

// TestExplainShortCircuit: where the left side of && is false, or of || true, the judge did
// not evaluate the right side, and the explanation does not show values for it: a step that
// did not run reads 0 there, a value the run never had.
func TestExplainShortCircuit(t *testing.T) {
	sc := loadScenario(t, `s: schema.#Scenario & {
	steps: [
		{name: "prep", mayFail: true, sequence: [
			{name: "check", exec: argv: ["false"]},
			{name: "migrate", exec: argv: ["true"]},
		]},
	]
	expect: [
		"outcome.migrate != 'skipped' && ended.migrate - started.migrate < 0.1",
		"outcome.migrate == 'skipped' || ended.migrate - started.migrate < 0.1",
		"outcome.check == 'error' && outcome.migrate == 'passed'",
	]
}`)
	want := []string{
		`(outcome.migrate ("skipped") != "skipped") && (ended.migrate - started.migrate < 0.1: not evaluated)`,
		`(outcome.migrate ("skipped") == "skipped") || (ended.migrate - started.migrate < 0.1: not evaluated)`,
		// Evaluated both: the left held.
		`(outcome.check ("error") == "error") && (outcome.migrate ("skipped") == "passed")`,
	}
	got := interp.Rejudge(migrateSkipped(), sc)
	for i, w := range want {
		if got[i].Explanation != w {
			t.Errorf("%s: %s %q\nwant %q", got[i].Src, got[i].Outcome, got[i].Explanation, w)
		}
	}
}

// TestExplainSampleFields: a predicate over a sampler's samples (any(g.samples, .rq_active >
// 5)) showed the samples as "[map with 23 entries, map with 23 entries, …]": a sample holds
// every stat, so none of the values the predicate read could be seen (seen on
// examples/local_samples_at.cue, on the console and in the HTML report). The list is shown by
// the fields the predicate reads of each item, in order, each with its unit.
func TestExplainSampleFields(t *testing.T) {
	sc := loadScenario(t, `s: schema.#Scenario & {
	steps: [{parallel: [
		{name: "f", load: {url: "http://127.0.0.1:1", requests: 30}},
		{name: "g", every: "100ms", while: "f", snapshot: prometheus: "http://127.0.0.1:1/metrics"},
	]}]
	expect: [
		"any(g.samples, .rq_active > 5)",
		"all(g.samples, .http.downstream_rq_active <= 3 && .at < 0.15)",
		"len(filter(g.samples, .rq_active >= 4)) > 2",
		"all(g.samples, .rq_503 < 3)",
	]
}`)
	start := time.Unix(1000, 0)
	rec := &interp.Record{StepsStart: start, Results: map[string]*interp.Result{}}
	ser := &interp.SeriesRecord{Name: "g", Every: 100 * time.Millisecond}
	for i, active := range []float64{0, 4, 4, 1} {
		filler := schema.Stats{}
		if i > 0 {
			filler["rq_503"] = float64(i) // created after the first sample
		}
		for k := range 12 {
			filler[fmt.Sprintf("other_%d", k)] = float64(k)
		}
		filler["http.downstream_rq_active"] = active
		ser.Samples = append(ser.Samples, &interp.SnapshotRecord{At: start.Add(time.Duration(i) * 100 * time.Millisecond), Counters: filler, Gauges: schema.Stats{"rq_active": active}})
	}
	rec.Put("g", "snapshot", true, ser)
	rec.Put("f", "load", false, &interp.LoadRecord{LoadResult: schema.LoadResult{Requests: 30, Codes: map[string]float64{"200": 30}}})
	want := []string{
		"any(g.samples[].rq_active ([0, 4, 4, 1]), .rq_active > 5) (false)",
		"all(g.samples[].http.downstream_rq_active ([0, 4, 4, 1]), g.samples[].at ([0 s, 0.1 s, 0.2 s, 0.3 s]), .http.downstream_rq_active <= 3 && .at < 0.15) (false)",
		"len(filter(g.samples[].rq_active ([0, 4, 4, 1]), .rq_active >= 4) (.rq_active: [4, 4])) (2) > 2",
		// A sample taken before the counter was created lacks it: absent, as a delta says.
		"all(g.samples[].rq_503 ([absent, 1, 2, 3]), .rq_503 < 3) (false)",
	}
	wantExplanations(t, interp.Rejudge(rec, sc), want)
}

// TestReadsOnlyWhatWasEvaluated: where the left side of && was false (or of || true) the judge
// did not evaluate the right side, and the console says so ("…: not evaluated"); but the
// judgement's Values, which the HTML report shows under the expectation as what it read and the
// summaries of swept runs tabulate and plot, still held the right side's values: here
// ended.migrate and started.migrate of a step that never ran (0 s, a time it never had). They
// hold only what was evaluated, of a conditional's branches too.
func TestReadsOnlyWhatWasEvaluated(t *testing.T) {
	sc := loadScenario(t, `s: schema.#Scenario & {
	steps: [
		{name: "prep", mayFail: true, sequence: [
			{name: "check", exec: argv: ["false"]},
			{name: "migrate", exec: argv: ["true"]},
		]},
	]
	expect: [
		"outcome.migrate != 'skipped' && ended.migrate - started.migrate < 0.1",
		"outcome.migrate == 'skipped' || ended.migrate > 1",
		"outcome.check == 'error' && ended.check >= 1",
		"!(outcome.migrate != 'skipped' && ended.migrate > 1) && outcome.check == 'error'",
		"let o = outcome.check; o != 'error' && ended.check >= 1",
		"outcome.migrate != 'skipped' ? ended.migrate > 1 : ended.check >= 1",
		"(outcome.migrate == 'skipped' ? ended.check : ended.migrate) + 1 >= 2",
	]
}`)
	want := []map[string]any{
		{"outcome.migrate": "skipped"},
		{"outcome.migrate": "skipped"},
		{"outcome.check": "error", "ended.check": 1.0},
		{"outcome.migrate": "skipped", "outcome.check": "error"},
		// A let at the top hid the && below it: the values held ended.check, which the
		// explanation says was not evaluated.
		{"outcome.check": "error"},
		// A conditional reads the branch its condition chose: the other's values (a step that
		// never ran) were listed by the HTML report as read.
		{"outcome.migrate": "skipped", "ended.check": 1.0},
		{"outcome.migrate": "skipped", "ended.check": 1.0, `(outcome.migrate == "skipped" ? ended.check : ended.migrate) + 1`: 2.0},
	}
	got := interp.Rejudge(migrateSkipped(), sc)
	for i, w := range want {
		if !reflect.DeepEqual(map[string]any(got[i].Values), w) {
			t.Errorf("%s: values %v, want %v (%s %s %s)", got[i].Src, got[i].Values, w, got[i].Outcome, got[i].Explanation, got[i].Reason)
		}
	}
}

// TestExplainDecidingItem: an all() over more items than an explanation shows (10) failed on
// an item past them: the console read "all(g.samples[].rq_active ([1, 1, 1, 1, 1, 1, 1, 1, 1,
// 1, …] (12 items)), .rq_active <= 4) (false)", every value shown passing the predicate, the
// one that failed it hidden. The item that decided (the first that fails an all() or a
// none(), the first that holds for an any()) is shown too, by its index, where it is not
// among those shown.
func TestExplainDecidingItem(t *testing.T) {
	sc := loadScenario(t, `s: schema.#Scenario & {
	steps: [{parallel: [
		{name: "f", load: {url: "http://127.0.0.1:1", requests: 30}},
		{name: "g", every: "100ms", while: "f", snapshot: prometheus: "http://127.0.0.1:1/metrics"},
	]}]
	expect: [
		"all(g.samples, .rq_active <= 4)",
		"!any(g.samples, .rq_active > 8)",
		"none(g.samples, .rq_active == 9)",
		"all(g.samples, .rq_active <= 20) && g.count > 20",
		"all(g.samples, .rq_active > 4)",
	]
}`)
	start := time.Unix(1000, 0)
	rec := &interp.Record{StepsStart: start, Results: map[string]*interp.Result{}}
	ser := &interp.SeriesRecord{Name: "g", Every: 100 * time.Millisecond}
	for i := range 12 {
		active := 1.0
		if i == 11 {
			active = 9
		}
		ser.Samples = append(ser.Samples, &interp.SnapshotRecord{At: start.Add(time.Duration(i) * 100 * time.Millisecond), Counters: schema.Stats{}, Gauges: schema.Stats{"rq_active": active}})
	}
	rec.Put("g", "snapshot", true, ser)
	rec.Put("f", "load", false, &interp.LoadRecord{LoadResult: schema.LoadResult{Requests: 30, Codes: map[string]float64{"200": 30}}})
	const shown = "g.samples[].rq_active ([1, 1, 1, 1, 1, 1, 1, 1, 1, 1, …] (12 items))"
	want := []string{
		"all(" + shown + ", g.samples[11].rq_active (9), .rq_active <= 4) (false)",
		"!(any(" + shown + ", g.samples[11].rq_active (9), .rq_active > 8) (true))",
		"none(" + shown + ", g.samples[11].rq_active (9), .rq_active == 9) (false)",
		// Nothing past those shown decided: all held.
		"(all(" + shown + ", .rq_active <= 20) (true)) && (g.count (12) > 20)",
		// The first that failed is shown already.
		"all(" + shown + ", .rq_active > 4) (false)",
	}
	wantExplanations(t, interp.Rejudge(rec, sc), want)
}

// TestExplainLet: an expectation that binds a name (let i = findIndex(…); …) was explained as
// its source and "(false)": neither what the name was bound to nor any value its body read
// (seen on examples/local_samples_at.cue's last expectation made to fail). The binding is
// shown with its value, and the body as any other expression, the name's value included.
func TestExplainLet(t *testing.T) {
	sc := loadScenario(t, `
s: schema.#Scenario & {
	target: "kube"
	namespaces: ["lab"]
	steps: [
		{name: "long", get: {kind: "Pod", selector: "app=a", namespace: "lab", path: "status.podIP"}},
		{name: "short", get: {kind: "Pod", selector: "app=b", namespace: "lab", path: "status.podIP"}},
	]
	expect: [
		"let i = findIndex(long, # > 3); i >= 0 && long[i] < 2",
		"let n = len(short); let m = n * 2; m == 5",
		"let x = 1; long[0] > x && (let y = 2; short[0] > y)",
	]
}
`)
	rec := judgeRecord(interp.SnapshotRecord{}, interp.SnapshotRecord{})
	rec.Put("long", "get", false, []any{1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0})
	rec.Put("short", "get", false, []any{1.0, 2.0, 3.0})
	want := []string{
		"let i = findIndex(long ([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, …] (15 items)), # > 3) (3); (i (3) >= 0) && (long[i (3)] (4) < 2)",
		"let n = len(short ([1, 2, 3])) (3); let m = (n (3) * 2) (6); m (6) == 5",
		"let x = 1; (long[0] (1) > x (1)) && (let y = 2; short[0] > y: not evaluated)",
	}
	wantExplanations(t, interp.Rejudge(rec, sc), want)
}

// TestExplainLetUnit: a let's name is shown with its value's unit and digits: let r =
// fortio.requests (24620); r (24616) == 1 (seen on the local target) read two counts of one
// value, the name's without the unit's 4 significant digits, and r of a p99 without its ms.
func TestExplainLetUnit(t *testing.T) {
	sc := loadScenario(t, strings.Replace(judgeScenario, `"delta.upstream_rq_pending_overflow == fortio.code503",`,
		`"let r = fortio.requests; r == 1", "let p = fortio.p99; p > 2",`, 1))
	rec := judgeRecord(interp.SnapshotRecord{}, interp.SnapshotRecord{})
	rec.Put("fortio", "load", false, &interp.LoadRecord{LoadResult: schema.LoadResult{Requests: 24616, P99: 1.66046}})
	want := []string{
		"let r = fortio.requests (24620); r (24620) == 1",
		"let p = fortio.p99 (1.66 ms); p (1.66 ms) > 2",
	}
	wantExplanations(t, interp.Rejudge(rec, sc), want)
}

// TestExplainLogEntryFields: a predicate over a logs step's entries was explained with every
// entry whole ({line: "req 1 code=200", time: "2026-…", access: false,…, …} ten times over)
// and, past the ten shown, without the entry that decided: all(log.entries, .line contains
// 'code=200') failing on the 13th line showed twelve passing ones. Entries (structs, not
// maps) are shown by the fields the predicate reads, as samples are, the deciding one added;
// a field the entry's format does not give reads absent.
func TestExplainLogEntryFields(t *testing.T) {
	sc := loadScenario(t, `s: schema.#Scenario & {
	steps: [{name: "log", logs: file: "a.log"}]
	expect: [
		"all(log.entries, .line contains 'code=200')",
		"none(log.entries, .format == 'istio' && .cluster == 'c')",
	]
}`)
	var entries []schema.LogEntry
	var lines []string
	for i := 1; i <= 13; i++ {
		code := 200
		if i == 13 {
			code = 503
		}
		l := fmt.Sprintf("req %d code=%d", i, code)
		entries = append(entries, schema.LogEntry{Line: l, Time: "2026-12-06T00:26:21Z"})
		lines = append(lines, l)
	}
	entries[0].Access, entries[0].Format, entries[0].Lacks = true, "envoy", []string{"cluster"}
	entries[1].Access, entries[1].Format, entries[1].Cluster = true, "istio", "c"
	rec := &interp.Record{Results: map[string]*interp.Result{}}
	rec.Put("log", "logs", false, schema.LogResult{Count: float64(len(lines)), Lines: lines, Entries: entries,
		Codes: map[string]float64{}, Flags: map[string]float64{}, Details: map[string]float64{}})
	want := []string{
		`all(log.entries[].line (["req 1 code=200", "req 2 code=200", "req 3 code=200", "req 4 code=200", "req 5 code=200", "req 6 code=200", "req 7 code=200", "req 8 code=200", "req 9 code=200", "req 10 code=200", …] (13 items)), log.entries[12].line ("req 13 code=503"), .line contains "code=200") (false)`,
		`none(log.entries[].format (["envoy", "istio", "", "", "", "", "", "", "", "", …] (13 items)), log.entries[].cluster ([absent, "c", "", "", "", "", "", "", "", "", …] (13 items)), .format == "istio" && .cluster == "c") (false)`,
	}
	got := interp.Rejudge(rec, sc)
	for i, w := range want {
		if got[i].Explanation != w {
			t.Errorf("%s: %s %q %s\nwant explanation %q", got[i].Src, got[i].Outcome, got[i].Explanation, got[i].Reason, w)
		}
	}
}

// TestExplainDurationBeyondDigits: a time of the run compared with a duration, failing where
// the two differ only beyond 4 significant digits, reads as equal at 4 digits ("(0.5 s) >=
// duration("500ms") (500ms)", false): the time is then written in full, as a number compared
// with a number is. The second load started 499.96 ms after the first, its `at: "500ms"`
// counted from the block's start, which the first started 0.4 ms after; the p50 is 99.9999 ms
// against a delay of 100 ms.
func TestExplainDurationBeyondDigits(t *testing.T) {
	sc := loadScenario(t, `
s: schema.#Scenario & {
	steps: [{parallel: [
		{name: "la", load: {url: "http://127.0.0.1:1", requests: 30}},
		{name: "lb", at: "500ms", load: {url: "http://127.0.0.1:1", requests: 30}},
	]}]
	expect: [
		"started.lb - started.la >= duration('500ms')",
		"la.p50 >= duration('100ms')",
		"duration('100ms') <= la.p50",
	]
}
`)
	rec := &interp.Record{Steps: []*interp.StepRecord{
		{Name: "la", Start: 400 * time.Microsecond, End: 2 * time.Second},
		{Name: "lb", Start: 500360 * time.Microsecond, End: 2 * time.Second},
	}}
	for _, n := range []string{"la", "lb"} {
		rec.Put(n, "load", false, &interp.LoadRecord{LoadResult: schema.LoadResult{Requests: 30, Codes: map[string]float64{"200": 30}, P50: 99.9999}})
	}
	want := []string{
		`(started.lb (0.50036 s) - started.la (0.0004 s)) (0.49996 s) >= duration("500ms") (500ms)`,
		`la.p50 (99.9999 ms) >= duration("100ms") (100ms)`,
		`duration("100ms") (100ms) <= la.p50 (99.9999 ms)`,
	}
	wantExplanations(t, interp.Rejudge(rec, sc), want)
}

// TestExplainGroupsAnOperation: an operation shown by its value alone (a ?? b, the fallback
// the docs give for a counter created on first use) is written in parentheses, so that its
// value does not read as its last operand's: `get(after, "rq_200") ?? 0 (30)` read as 0
// being 30.
func TestExplainGroupsAnOperation(t *testing.T) {
	sc := loadScenario(t, `
s: schema.#Scenario & {
	local: backends: a: {}
	steps: [
		{name: "before", snapshot: backend: "a"},
		{name: "after", snapshot: backend: "a"},
	]
	expect: [
		"(get(after, 'rq_200') ?? 0) - (get(before, 'rq_200') ?? 0) == 31",
		"31 == get(after, 'rq_200') ?? 0",
	]
}
`)
	t0 := time.Unix(1000, 0)
	rec := &interp.Record{}
	rec.Put("before", "snapshot", false, &interp.SnapshotRecord{Name: "before", Source: "backend a", At: t0, Counters: schema.Stats{"rq_total": 0}})
	rec.Put("after", "snapshot", false, &interp.SnapshotRecord{Name: "after", Source: "backend a", At: t0.Add(time.Second), Counters: schema.Stats{"rq_total": 30, "rq_200": 30}})
	want := []string{
		`((get(after, "rq_200") ?? 0) (30) - (get(before, "rq_200") ?? 0) (0)) (30) == 31`,
		`31 == (get(after, "rq_200") ?? 0) (30)`,
	}
	wantExplanations(t, interp.Rejudge(rec, sc), want)
}

// wantExplanations wants each judgement failed, with the explanation want gives in its place.
func wantExplanations(t *testing.T, got []*interp.Judgement, want []string) {
	t.Helper()
	for i, w := range want {
		if got[i].Outcome != interp.Failed || got[i].Explanation != w {
			t.Errorf("%s: %s %q %s\nwant explanation %q", got[i].Src, got[i].Outcome, got[i].Explanation, got[i].Reason, w)
		}
	}
}

// TestExplainConditional: a conditional c ? a : b shows its condition with the value of each
// of its parts, and the branch it chose with its own values; the other branch, which the judge
// did not evaluate, as written. Before, `(fortio.qps > 100 ? … : …) (false)` said which value
// it had, not why that branch: the qps it compared was not shown (nor the 503s, the requests).
func TestExplainConditional(t *testing.T) {
	sc := loadScenario(t, `
s: schema.#Scenario & {
	steps: [{name: "fortio", load: {url: "http://127.0.0.1:1", requests: 30}}]
	expect: [
		"fortio.qps > 100 ? fortio.code503 == 0 : fortio.code503 > fortio.requests / 2",
		"fortio.code503 == (fortio.qps >= 10 && fortio.p99 < 5 ? 0 : 30)",
		"(fortio.qps < 10 ? fortio.code200 : fortio.code503) > 20",
		"true ? fortio.code503 == 0 : false",
	]
}
`)
	rec := &interp.Record{Steps: []*interp.StepRecord{{Name: "fortio", Start: 10 * time.Millisecond, End: 2 * time.Second}}}
	rec.Put("fortio", "load", false, &interp.LoadRecord{LoadResult: schema.LoadResult{Requests: 30, Codes: map[string]float64{"200": 18, "503": 12},
		P50: 0.412345, P99: 1.66046, QPS: 14.9876}})
	want := []string{
		"(fortio.qps (14.99 1/s) > 100 ? fortio.code503 == 0 : fortio.code503 (12) > (fortio.requests (30) / 2) (15)) (false)",
		"fortio.code503 (12) == ((fortio.qps (14.99 1/s) >= 10) && (fortio.p99 (1.66 ms) < 5) ? 0 : 30) (0)",
		"(fortio.qps (14.99 1/s) < 10 ? fortio.code200 : fortio.code503 (12)) (12) > 20",
		"(true ? fortio.code503 (12) == 0 : false) (false)",
	}
	wantExplanations(t, interp.Rejudge(rec, sc), want)
}
