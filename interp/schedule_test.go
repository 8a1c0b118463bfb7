package interp_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"labrun.dev/labrun/driver/fakes"
	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/interp"
)

// loadScenario writes src (a CUE file body, without package and import) to a temp dir and loads it.
func loadScenario(t *testing.T, src string) *dsl.Scenario {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, "s.cue")
	full := "package s\n\nimport \"labrun.dev/schema\"\n\n" + src
	if err := os.WriteFile(p, []byte(full), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := dsl.Load([]string{p}, dsl.Options{Target: "fake"}) // the fakes can run every kind
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if len(res.Scenarios) != 1 {
		t.Fatalf("want 1 scenario, got %d", len(res.Scenarios))
	}
	return res.Scenarios[0]
}

// loadScenarioErr is loadScenario for scenarios that must not load.
func loadScenarioErr(t *testing.T, src string) (*dsl.Result, error) {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, "s.cue")
	full := "package s\n\nimport \"labrun.dev/schema\"\n\n" + src
	if err := os.WriteFile(p, []byte(full), 0o644); err != nil {
		t.Fatal(err)
	}
	return dsl.Load([]string{p}, dsl.Options{Target: "fake"}) // the fakes can run every kind
}

// offsets returns "path@planned/start" for every step record, by path (first record wins,
// samples get #n).
func offsets(rec *interp.Record) map[string][2]time.Duration {
	out := map[string][2]time.Duration{}
	for _, s := range rec.Steps {
		key := s.Path
		if s.Name != "" {
			key = s.Name
		}
		if s.Sample > 0 {
			key += "#" + itoa(s.Sample)
		}
		if _, ok := out[key]; !ok {
			out[key] = [2]time.Duration{s.Planned - (rec.StepsStart.Sub(rec.Start)), s.Start - (rec.StepsStart.Sub(rec.Start))}
		}
	}
	return out
}

func itoa(i int) string {
	return strings.TrimSpace(strings.Repeat(" ", 0) + string(rune('0'+i%10)))
}

const timeline = `
s: schema.#Scenario & {
	steps: [
		{name: "before", snapshot: {admin: "http://127.0.0.1:15000", cluster: "c"}},
		{parallel: [
			{name: "fortio", load: {url: "http://127.0.0.1:1", duration: "40s"}},
			{name: "flip", at: "5s", dns: {host: "gslb.lab.internal", addresses: ["127.0.0.3"]}},
			{name: "mid1", at: "17s", snapshot: {admin: "http://127.0.0.1:15000", cluster: "c"}},
			{name: "mid2", at: "35s", snapshot: {admin: "http://127.0.0.1:15000", cluster: "c"}},
			{name: "g", every: "3s", while: "fortio", snapshot: {admin: "http://127.0.0.1:15001", cluster: "c"}},
			{at: "1s", sequence: [
				{name: "s1", sleep: "1500ms"},
				{name: "s2", sleep: "500ms"},
			]},
			{name: "bg", at: "2s", background: true, sleep: "60s"},
		]},
		{name: "pause", sleep: "3s"},
		{name: "after", snapshot: {admin: "http://127.0.0.1:15000", cluster: "c"}},
		{name: "join", await: "bg"},
		{name: "r", repeat: {steps: [{name: "tick", sleep: "1s"}], until: "true", max: 3}},
	]
	// Step times are visible to expressions, in seconds from the start of the steps.
	expect: ["started.flip == 5", "started.mid1 - started.flip == 12", "ended.fortio == 40"]
}
`

// TestTimelineExactOffsets checks planned and actual offsets of nested parallel, at,
// background, every, sequence and repeat under a fake clock (testing/synctest), where they
// must be exact.
func TestTimelineExactOffsets(t *testing.T) {
	sc := loadScenario(t, timeline)
	synctest.Test(t, func(t *testing.T) {
		w := &fakes.World{}
		rec := interp.New(w.Target()).Run(context.Background(), context.Background(), sc)
		if rec.Outcome != interp.Passed {
			t.Fatalf("outcome %s: %s", rec.Outcome, rec.Error)
		}
		got := offsets(rec)
		s := time.Second
		want := map[string]time.Duration{
			"before": 0, "fortio": 0, "flip": 5 * s, "mid1": 17 * s, "mid2": 35 * s,
			"s1": 1 * s, "s2": 2500 * time.Millisecond, "bg": 2 * s,
			"g#1": 0, "g#2": 3 * s, "g#3": 6 * s,
			"pause": 40 * s, "after": 43 * s, "join": 43 * s,
			// bg (started at 2s, 60s long) ends at 62s: the await joins it there.
			"r": 62 * s, "tick": 62 * s,
		}
		for k, w := range want {
			o, ok := got[k]
			if !ok {
				t.Errorf("%s: no record", k)
				continue
			}
			if o[0] != w || o[1] != w {
				t.Errorf("%s: planned %v, started %v; want %v", k, o[0], o[1], w)
			}
		}
		samples := 0
		for _, st := range rec.Steps {
			if st.Name == "g" {
				samples++
			}
		}
		// Samples at 0, 3, …, 39 s, and a last one when the load ends at 40 s, before the 15th
		// tick: the sampler stops.
		if samples != 15 {
			t.Errorf("every 3s while a 40s load: %d samples, want 15", samples)
		}
		var lastG time.Duration
		for _, st := range rec.Steps {
			if st.Name == "g" {
				lastG = st.Start - rec.StepsStart.Sub(rec.Start)
			}
		}
		if lastG != 40*s {
			t.Errorf("the last sample at %v, want when the load ended (40s)", lastG)
		}
		if n := len(rec.SeriesOf("g").Samples); n != samples {
			t.Errorf("series has %d samples, step records %d", n, samples)
		}
	})
}

// TestParallelOffsetsFromItsRecordedStart: a parallel block's children are planned at the
// block's start as its record holds it plus their at: offsets, whatever happens between
// that start and the block's launch of its children. An observer that takes 60 ms over the
// block's start (a slow terminal; on a loaded machine the scheduler alone) planned the
// children 60 ms late, and replay refused the genuine record: "it was planned at 160ms, but
// its at: 100ms after the start of its block … plans it at 100ms".
func TestParallelOffsetsFromItsRecordedStart(t *testing.T) {
	sc := loadScenario(t, `s: schema.#Scenario & {
	steps: [{parallel: [
		{name: "a", at: "100ms", sleep: "10ms"},
		{name: "b", at: "200ms", sleep: "10ms"},
	]}]
	expect: ["ended.b > ended.a"]
}`)
	synctest.Test(t, func(t *testing.T) {
		slow := func(ev interp.Event) {
			if ev.Step != nil && ev.Step.Kind == "parallel" && ev.Step.End == 0 {
				time.Sleep(60 * time.Millisecond)
			}
		}
		rec := interp.New((&fakes.World{}).Target(), interp.WithObserver(slow)).Run(context.Background(), context.Background(), sc)
		if rec.Outcome != interp.Passed {
			t.Fatalf("outcome %s: %s", rec.Outcome, rec.Error)
		}
		var block time.Duration
		for _, s := range rec.Steps {
			if s.Kind == "parallel" {
				block = s.Start
			}
		}
		for _, s := range rec.Steps {
			if want := map[string]time.Duration{"a": 100 * time.Millisecond, "b": 200 * time.Millisecond}[s.Name]; want > 0 && s.Planned != block+want {
				t.Errorf("%s planned at %s, want its block's start %s + %s", s.Name, s.Planned, block, want)
			}
		}
		if err := interp.OutcomeContradictions(rec, sc); err != nil {
			t.Errorf("replay would refuse the run's own record: %v", err)
		}
	})
}

// TestSequencePlansAStepWhenTheOneBeforeEnded: a step of a sequence is planned when the step
// before it ended, as that step's record holds it, whatever happens between that end and the
// sequence's next turn. An observer that takes 60 ms over a step's end (a slow terminal or pipe;
// on a loaded machine the scheduler alone) planned the next step 60 ms after the end, and replay
// refused the genuine record: "it was planned at 70ms, but the step before it in its sequence,
// a, ended at 10ms".
func TestSequencePlansAStepWhenTheOneBeforeEnded(t *testing.T) {
	sc := loadScenario(t, `s: schema.#Scenario & {
	steps: [
		{name: "a", sleep: "10ms"},
		{name: "b", sleep: "10ms"},
	]
	expect: ["ended.b > ended.a"]
}`)
	synctest.Test(t, func(t *testing.T) {
		slow := func(ev interp.Event) {
			if ev.Step != nil && ev.Step.Name == "a" && ev.Ended {
				time.Sleep(60 * time.Millisecond)
			}
		}
		rec := interp.New((&fakes.World{}).Target(), interp.WithObserver(slow)).Run(context.Background(), context.Background(), sc)
		var aEnd time.Duration
		for _, s := range rec.Steps {
			if s.Name == "a" {
				aEnd = s.End
			}
		}
		for _, s := range rec.Steps {
			if s.Name == "b" && s.Planned != aEnd {
				t.Errorf("b planned at %s, want when a ended (%s)", s.Planned, aEnd)
			}
		}
		if err := interp.OutcomeContradictions(rec, sc); err != nil {
			t.Errorf("replay would refuse the run's own record: %v", err)
		}
	})
}

// TestPhasePlannedWhenThePhaseBeforeEnded (#31): the steps begin, and a cleanup's first
// step is planned, when the phase before ended with its last step, not when the runner reads
// the clock after that end was said: an observer that takes 60 ms over the setup's and the
// steps' last ends (a slow terminal) must leave a record replay takes as the run's own, as
// replay now holds a phase's last end to what follows it.
func TestPhasePlannedWhenThePhaseBeforeEnded(t *testing.T) {
	sc := loadScenario(t, `s: schema.#Scenario & {
	setup: [{name: "a", sleep: "10ms"}]
	steps: [{name: "b", sleep: "10ms"}]
	cleanup: [{name: "c", sleep: "10ms"}]
	expect: ["ended.b > ended.a"]
}`)
	synctest.Test(t, func(t *testing.T) {
		slow := func(ev interp.Event) {
			if ev.Step != nil && (ev.Step.Name == "a" || ev.Step.Name == "b") && ev.Ended {
				time.Sleep(60 * time.Millisecond)
			}
		}
		rec := interp.New((&fakes.World{}).Target(), interp.WithObserver(slow)).Run(context.Background(), context.Background(), sc)
		ends := map[string]time.Duration{}
		for _, s := range rec.Steps {
			ends[s.Name] = s.End
		}
		for _, s := range rec.Steps {
			if s.Name == "c" && s.Planned != ends["b"] {
				t.Errorf("c planned at %s, want when b, the steps' last, ended (%s)", s.Planned, ends["b"])
			}
		}
		if got := rec.StepsStart.Sub(rec.Start); got != ends["a"] {
			t.Errorf("the steps began at %s, want when a, the setup's last, ended (%s)", got, ends["a"])
		}
		for _, s := range rec.Steps {
			if s.Name == "b" && s.Planned != ends["a"] {
				t.Errorf("b planned at %s, want when a, the setup's last, ended (%s)", s.Planned, ends["a"])
			}
		}
		if err := interp.OutcomeContradictions(rec, sc); err != nil {
			t.Errorf("replay would refuse the run's own record: %v", err)
		}
	})
}

// TestTimeoutCountsFromTheRecordedStart: a step's timeout counts from its start as its record
// holds it. The timeout's clock started after the step's start event: an observer that took
// 60 ms over it let a 100 ms step's 50 ms sleep pass at 110 ms, and replay refused the run's
// own record ("it passed, but it lasted 110ms, longer than its timeout of 100ms").
func TestTimeoutCountsFromTheRecordedStart(t *testing.T) {
	sc := loadScenario(t, `s: schema.#Scenario & {
	steps: [{name: "nap", timeout: "100ms", sleep: "50ms"}]
	expect: ["ended.nap > started.nap"]
}`)
	synctest.Test(t, func(t *testing.T) {
		slow := func(ev interp.Event) {
			if ev.Step != nil && ev.Step.Name == "nap" && !ev.Ended {
				time.Sleep(60 * time.Millisecond)
			}
		}
		rec := interp.New((&fakes.World{}).Target(), interp.WithObserver(slow)).Run(context.Background(), context.Background(), sc)
		for _, s := range rec.Steps {
			if s.Name == "nap" && s.Outcome == interp.Passed && s.End-s.Start > 100*time.Millisecond {
				t.Errorf("nap passed, lasting %s, past its timeout of 100ms", s.End-s.Start)
			}
		}
		if err := interp.OutcomeContradictions(rec, sc); err != nil {
			t.Errorf("replay would refuse the run's own record: %v", err)
		}
	})
}
