package interp_test

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"labrun.dev/labrun/driver/fakes"
	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/schema"
)

// TestLaterRoundSamplerIsJoined: a sampler in a repeat whose first round's run was still
// taking its last sample when the second round started shares its state with the second
// round's run; the phase's end joined that state, ended by the first, and judged the
// expectations while the second still sampled: its last sample came into the record after
// them (seen on local: "the record says it read g.count = 5; its data read 6", replay refusing
// the run's own record). The phase now waits for every background run it started. The until
// (round 2's start, its own samples) holds in round 2 only; the expectation reads both rounds'.
func TestLaterRoundSamplerIsJoined(t *testing.T) {
	sc := loadScenario(t, `
s: schema.#Scenario & {
	local: backends: a: {}
	steps: [
		{name: "r", repeat: {max: 2, until: "started.l > 0.1 && g.count >= 2", steps: [
			{name: "l", background: true, load: {url: "${backends.a.url}/echo", duration: "150ms", qps: 20, connections: 1}},
			{name: "g", every: "100ms", while: "l", snapshot: backend: "a"},
			{await: "l"},
		]}},
	]
	expect: ["g.count >= 4"]
}`)
	synctest.Test(t, func(t *testing.T) {
		w := &fakes.World{StepTime: 30 * time.Millisecond} // a sample takes a while
		rec := interp.New(w.Target()).Run(context.Background(), context.Background(), sc)
		if rec.Outcome != interp.Passed {
			t.Fatalf("run %s (%s)", rec.Outcome, rec.Error)
		}
		judged := rec.Expectations[0].Values["g.count"]
		series, ok := rec.Results["g"].Value.(*schema.SeriesRecord)
		if !ok {
			t.Fatalf("g recorded %T", rec.Results["g"].Value)
		}
		if n := len(series.Samples); judged != float64(n) && judged != n {
			t.Errorf("the expectation read g.count = %v, the record holds %d samples", judged, n)
		}
	})
}

// TestRoundJoinsItsBackgroundSteps: a repeat's round ends when the background steps it started
// have: the next round's run of a background load starts after the last round's ended (before,
// round 2 started it again while round 1's still loaded, the two runs sharing one state, and
// round 2's snapshot counted round 1's requests), and the until reads the round's own load, ended.
func TestRoundJoinsItsBackgroundSteps(t *testing.T) {
	sc := loadScenario(t, `
s: schema.#Scenario & {
	local: backends: a: {}
	steps: [
		{name: "r", repeat: {max: 2, until: "after.rq_total > 1000000", steps: [
			{name: "l", background: true, load: {url: "${backends.a.url}/echo", duration: "1s", qps: 20, connections: 1}},
			{name: "s", sleep: "200ms"},
			{name: "after", snapshot: backend: "a"},
		]}},
		{await: "l"},
	]
}`)
	synctest.Test(t, func(t *testing.T) {
		rec := interp.New((&fakes.World{}).Target()).Run(context.Background(), context.Background(), sc)
		var loads, afters []*interp.StepRecord
		var r *interp.StepRecord
		for _, sr := range rec.Steps {
			switch sr.Name {
			case "l":
				loads = append(loads, sr)
			case "after":
				afters = append(afters, sr)
			case "r":
				r = sr
			}
		}
		if len(loads) != 2 || len(afters) != 2 || r == nil {
			t.Fatalf("%d runs of l, %d of after, r %v: want 2, 2 and r", len(loads), len(afters), r)
		}
		if loads[1].Start < loads[0].End {
			t.Errorf("round 2's load started at %s, while round 1's ran (until %s)", loads[1].Start, loads[0].End)
		}
		if afters[1].Start < loads[0].End {
			t.Errorf("round 2's snapshot at %s was taken while round 1's load ran (until %s)", afters[1].Start, loads[0].End)
		}
		if r.End < loads[1].End {
			t.Errorf("the repeat ended at %s, before its last round's load (%s)", r.End, loads[1].End)
		}
		if err := rec.Contradictions(); err != nil {
			t.Errorf("the record contradicts itself: %v", err)
		}
	})
}

// TestRoundReadsItsOwnResults: a wait in a repeat's second round over the round's background
// load waits for that load's result (or its end); before, it read the first round's (the record
// kept it under the load's name, and ended.l was round 1's) and held at its first poll, before
// round 2's load had sent anything.
func TestRoundReadsItsOwnResults(t *testing.T) {
	for _, until := range []string{"l.requests > 0", "has(ended, 'l')"} {
		t.Run(until, func(t *testing.T) {
			sc := loadScenario(t, `
s: schema.#Scenario & {
	local: backends: a: {}
	steps: [
		{name: "r", repeat: {max: 2, until: "outcome.w == 'failed'", steps: [
			{name: "l", background: true, load: {url: "${backends.a.url}/echo", duration: "1s", qps: 20, connections: 1}},
			{name: "w", wait: {until: "`+until+`", interval: "100ms"}, timeout: "5s"},
			{await: "l"},
		]}},
	]
}`)
			synctest.Test(t, func(t *testing.T) {
				rec := interp.New((&fakes.World{}).Target()).Run(context.Background(), context.Background(), sc)
				ends := map[string][]time.Duration{}
				for _, sr := range rec.Steps {
					if sr.Name == "l" || sr.Name == "w" {
						ends[sr.Name] = append(ends[sr.Name], sr.End)
					}
				}
				if len(ends["l"]) != 2 || len(ends["w"]) != 2 {
					t.Fatalf("runs: %v, want two of l and of w", ends)
				}
				for i := range 2 {
					if ends["w"][i] < ends["l"][i] {
						t.Errorf("round %d: the wait ended at %s, before the round's load had ended (at %s)", i+1, ends["w"][i], ends["l"][i])
					}
				}
				if err := rec.Contradictions(); err != nil {
					t.Errorf("the record contradicts itself: %v", err)
				}
			})
		})
	}
}

// TestRoundSamplerSeriesIsTheRounds: a sampler of a repeat's round reads, during the round (a
// wait, the until), the samples of that round alone; before, its series went on over the rounds,
// and a wait in round 2 until g.count >= 3 held at its first poll on round 1's samples, before
// round 2's load had started, and an until g.count >= 15 held in round 2 of 11 + 11 samples
// though no round took 15. After the repeat (the expectations), the series is every round's.
func TestRoundSamplerSeriesIsTheRounds(t *testing.T) {
	sc := loadScenario(t, `
s: schema.#Scenario & {
	local: backends: a: {}
	steps: [
		{name: "r", repeat: {max: 2, until: "g.count >= 15", steps: [
			{name: "l", background: true, load: {url: "${backends.a.url}/echo", duration: "1s", qps: 20, connections: 1}},
			{name: "g", every: "100ms", while: "l", snapshot: backend: "a"},
			{name: "w", wait: {until: "g.count >= 3", interval: "50ms"}, timeout: "5s"},
			{await: "l"},
		]}},
	]
	expect: ["g.count >= 15"]
}`)
	synctest.Test(t, func(t *testing.T) {
		rec := interp.New((&fakes.World{}).Target()).Run(context.Background(), context.Background(), sc)
		var loads, waits []*interp.StepRecord
		for _, sr := range rec.Steps {
			switch sr.Name {
			case "l":
				loads = append(loads, sr)
			case "w":
				waits = append(waits, sr)
			}
		}
		if len(loads) != 2 || len(waits) != 2 {
			t.Fatalf("%d runs of l, %d of w: want 2 of each (the until holds in no round)", len(loads), len(waits))
		}
		for i := range 2 {
			if took := waits[i].End - loads[i].Start; took < 200*time.Millisecond {
				t.Errorf("round %d: the wait held %s after the round's load started, before the round's sampler could take 3 samples", i+1, took)
			}
		}
		if rec.Outcome != interp.Failed || !strings.Contains(rec.Error, "still not true after 2 rounds") {
			t.Errorf("run %s (%s): want failed, the until false in each round", rec.Outcome, rec.Error)
		}
		series, ok := rec.Results["g"].Value.(*schema.SeriesRecord)
		if !ok || len(series.Samples) < 20 {
			t.Fatalf("g recorded %#v: want every round's samples", rec.Results["g"].Value)
		}
		if err := rec.Contradictions(); err != nil {
			t.Errorf("the record contradicts itself: %v", err)
		}
	})
}

// TestRoundSamplerReplays: the record says what a round's until and waits read of a sampler
// of the round (SeriesRecord.Views), so that judging them again over the record (replay,
// merge) reads what the run read. A stand-in stats source counts up from 0, sample by sample:
// the until g.min.rq_total >= 5 is false over round 1 (its first sample 0) and over every
// round's samples, true over round 2's; the record read back said "passed, but over the
// data the record holds at its last round's end the expression is false".
func TestRoundSamplerReplays(t *testing.T) {
	sc := loadScenario(t, `
s: schema.#Scenario & {
	local: backends: a: {}
	steps: [
		{name: "r", repeat: {max: 2, until: "g.min.rq_total >= 5", steps: [
			{name: "l", background: true, load: {url: "${backends.a.url}/echo", duration: "1s", qps: 20, connections: 1}},
			{name: "g", every: "100ms", while: "l", snapshot: backend: "a"},
			{name: "w", mayFail: true, wait: {until: "g.min.rq_total >= 5", interval: "50ms"}, timeout: "900ms"},
			{await: "l"},
		]}},
	]
	expect: ["outcome.w == 'passed'", "g.min.rq_total == 0"]
}`)
	synctest.Test(t, func(t *testing.T) {
		w := &fakes.World{Stats: func(_ string, n int) schema.StatsSnapshot {
			return schema.StatsSnapshot{Counters: schema.Stats{"rq_total": float64(n)}}
		}}
		rec := interp.New(w.Target()).Run(context.Background(), context.Background(), sc)
		if rec.Outcome != interp.Passed {
			t.Fatalf("run %s (%s): want passed, the until true over round 2's samples", rec.Outcome, rec.Error)
		}
		b, err := json.Marshal(rec)
		if err != nil {
			t.Fatal(err)
		}
		var back interp.Record
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		for what, r := range map[string]*interp.Record{"the run's record": rec, "the record read back": &back} {
			if err := interp.OutcomeContradictions(r, sc); err != nil {
				t.Errorf("%s: %v", what, err)
			}
			if err := r.Contradictions(); err != nil {
				t.Errorf("%s: %v", what, err)
			}
		}
		// The views edited: replay would judge round 2's until and wait over other samples
		// than the run's (round 1's too, or fewer of round 2's). Each is a record no run wrote.
		views := back.SeriesOf("g").Views
		if len(views) != 2 || views[0].From == 0 || views[1].From != 0 {
			t.Fatalf("views %+v: want a round 2's (from its first sample) and the repeat's end's (from 0)", views)
		}
		for _, c := range []struct {
			name string
			edit func(v []schema.SeriesView)
			want string
		}{
			{"round 2 reads from sample 1", func(v []schema.SeriesView) { v[0].From = 0 }, "reads every sample, but no repeat ended then"},
			{"round 2 reads from a later sample", func(v []schema.SeriesView) { v[0].From++ }, "begins a round, but its step's samples"},
			{"round 2's view moved", func(v []schema.SeriesView) { v[0].At = v[0].At.Add(300 * time.Millisecond) }, "begins a round, but no repeat's round 2 or later started then"},
			{"the repeat's end's view moved earlier", func(v []schema.SeriesView) { v[1].At = v[0].At }, "reads every sample, but no repeat ended then"},
			{"a view past the samples", func(v []schema.SeriesView) { v[0].From = 1000 }, "reads from a sample the series does not hold"},
		} {
			var r interp.Record
			if err := json.Unmarshal(b, &r); err != nil {
				t.Fatal(err)
			}
			c.edit(r.SeriesOf("g").Views)
			got := ""
			if err := r.Contradictions(); err != nil {
				got = err.Error()
			}
			if !strings.Contains(got, c.want) {
				t.Errorf("%s: Contradictions %q, want %q", c.name, got, c.want)
			}
		}
	})
}

// TestRepeatedStepTimesAreOneRound: started.<step> and ended.<step> of a step a repeat ran in
// more than one round read, after the run, its latest round's start and end, as outcome does;
// before, started read round 1's and ended round 2's, and ended.s - started.s >= 0.15 passed of
// a sleep of 100ms (two rounds of it), a sampler's likewise.
func TestRepeatedStepTimesAreOneRound(t *testing.T) {
	for _, claim := range []string{"ended.s - started.s >= 0.15", "ended.g - started.g >= 0.15"} {
		t.Run(claim, func(t *testing.T) {
			sc := loadScenario(t, `
s: schema.#Scenario & {
	steps: [
		{name: "r", repeat: {max: 2, until: "started.s > 0.05", steps: [
			{name: "s", background: true, sleep: "100ms"},
			{name: "g", every: "20ms", while: "s", exec: argv: ["true"]},
			{await: "s"},
		]}},
	]
	expect: ["`+claim+`"]
}`)
			synctest.Test(t, func(t *testing.T) {
				rec := interp.New((&fakes.World{}).Target()).Run(context.Background(), context.Background(), sc)
				rounds := 0
				for _, sr := range rec.Steps {
					if sr.Name == "s" {
						rounds++
					}
				}
				if rounds != 2 {
					t.Fatalf("s ran %d times, want 2 (the until false after round 1)", rounds)
				}
				if rec.Outcome != interp.Failed {
					t.Errorf("run %s: %s held over two rounds of a 100ms sleep; values %v", rec.Outcome, claim, rec.Expectations[0].Values)
				}
			})
		})
	}
}

// TestStepNotRunInTheLastRoundReadsSkipped: a step of a mayFail block that a repeat ran in
// its first round and not in its last (the block's first step failed there) reads, after the
// run, as not run, as its result does: before, outcome.x read round 1's "passed", error.x its
// "" and ended.x - started.x its times, and each claim passed, while x.exit had no value
// ("recorded no result (its outcome is passed)"). A fake's execs stand in for the commands.
func TestStepNotRunInTheLastRoundReadsSkipped(t *testing.T) {
	for _, c := range []struct{ claim, want string }{
		{"outcome.x == 'passed'", `outcome.x ("skipped") == "passed"`},
		{"error.x == ''", `error.x has no value: step "x" did not run in the latest round of its repeat`},
		{"ended.x - started.x >= 0", `has no value: step "x" did not run in the latest round of its repeat`},
		{"x.exit == 0", `x.exit has no value: step "x" recorded no result (it did not run in the latest round of its repeat`},
	} {
		t.Run(c.claim, func(t *testing.T) {
			sc := loadScenario(t, `
s: schema.#Scenario & {
	steps: [{name: "r", repeat: {max: 2, until: "n.stdout == '2'", steps: [
		{name: "n", exec: argv: ["count"]},
		{name: "tail", mayFail: true, sequence: [
			{name: "boom", exec: argv: ["secondfails"]},
			{name: "x", exec: argv: ["ok"]},
		]},
	]}}]
	expect: ["`+c.claim+`"]
}`)
			synctest.Test(t, func(t *testing.T) {
				count, fails := 0, 0
				w := &fakes.World{ExecResult: func(e schema.Exec) schema.ExecResult {
					switch e.Argv[0] {
					case "count":
						count++
						return schema.ExecResult{Stdout: strconv.Itoa(count)}
					case "secondfails":
						if fails++; fails == 2 {
							return schema.ExecResult{Exit: 1}
						}
					}
					return schema.ExecResult{}
				}}
				rec := interp.New(w.Target()).Run(context.Background(), context.Background(), sc)
				if len(rec.Expectations) != 1 {
					t.Fatalf("run %s (%s): %d expectations judged, want 1", rec.Outcome, rec.Error, len(rec.Expectations))
				}
				j := rec.Expectations[0]
				if j.Outcome == interp.Passed || !strings.Contains(j.Explanation+j.Reason, c.want) {
					t.Errorf("%s: %s (%s%s), want it not passed, saying %q", c.claim, j.Outcome, j.Explanation, j.Reason, c.want)
				}
			})
		})
	}
}
