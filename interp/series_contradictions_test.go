package interp_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"labrun.dev/labrun/interp"
)

// A sampled series whose samples were deleted (12 → 6, those that broke an expectation) while
// the record's steps kept a record of each sample that passed made replay pass: the series
// must hold one sample per sample that passed, at most one per sample, each taken while one
// of them ran.
func TestSeriesContradictions(t *testing.T) {
	const src = `
s: schema.#Scenario & {
	steps: [{parallel: [
		{name: "fortio", load: {url: "http://127.0.0.1:1/echo", qps: 10, duration: "4s", connections: 1}},
		{name: "g", every: "1s", while: "fortio", snapshot: {admin: "http://127.0.0.1:15000", cluster: "c"}},
	]}]
	expect: ["g.max.upstream_rq_total > 0"]
}`
	sc := loadScenario(t, src)
	run := runInReplayWorld(t, sc)
	b, err := json.Marshal(run)
	if err != nil {
		t.Fatal(err)
	}
	// 4 or 5: the tick at 4 s and the load's end race
	n := len(run.SeriesOf("g").Samples)
	if n < 4 {
		t.Fatalf("the run took %d samples, want 4 or more", n)
	}
	for _, c := range []struct {
		name string
		edit func(*interp.Record)
		want string
	}{
		{"as recorded", nil, ""},
		{"samples deleted", func(r *interp.Record) {
			ser := r.SeriesOf("g")
			ser.Samples = ser.Samples[:len(ser.Samples)/2]
		}, fmt.Sprintf("step g: its series holds %d samples, but its step records %d samples that passed, each of which recorded one", n/2, n)},
		{"a sample added", func(r *interp.Record) {
			ser := r.SeriesOf("g")
			ser.Samples = append(ser.Samples, ser.Samples[0])
		}, fmt.Sprintf("step g: its series holds %d samples, but its step records %d samples, each of which recorded at most one", n+1, n)},
		{"a sample's step failed: it recorded none", func(r *interp.Record) {
			ser := r.SeriesOf("g")
			ser.Samples = ser.Samples[1:]
			for _, s := range r.Steps {
				if s.Name == "g" && s.Sample == 1 {
					s.Outcome, s.Error = interp.Errored, "the admin did not answer"
				}
			}
		}, ""},
		{"a sample moved in time", func(r *interp.Record) {
			sn := r.SeriesOf("g").Samples[1]
			sn.At = sn.At.Add(500 * time.Millisecond)
		}, "step g: sample 2 of its series was taken at 1.5 s, but none of its step's samples ran then"},
		// One message for the series, not one per sample: a wait's step moved 1 s late by
		// labrun mutate gave a line of 4,000 characters, a time of 9 digits each.
		{"every sample moved in time", func(r *interp.Record) {
			for _, sn := range r.SeriesOf("g").Samples {
				sn.At = sn.At.Add(time.Minute)
			}
		}, fmt.Sprintf("step g: samples 1 to %d of its series were taken from 60", n)},
	} {
		t.Run(c.name, func(t *testing.T) {
			var rec interp.Record
			if err := json.Unmarshal(b, &rec); err != nil {
				t.Fatal(err)
			}
			if c.edit != nil {
				c.edit(&rec)
			}
			got := ""
			if err := rec.Contradictions(); err != nil {
				got = err.Error()
			}
			if c.want == "" && got != "" || !strings.Contains(got, c.want) || strings.Count(got, "none of its step's samples ran then") > 1 {
				t.Errorf("Contradictions: %q, want %q", got, c.want)
			}
		})
	}
}

// A result's kind edited (or nulled) made its value read as another kind's, or as plain data:
// a result's kind is that of the step that recorded it.
func TestResultKindContradictions(t *testing.T) {
	sc := loadScenario(t, `
s: schema.#Scenario & {
	steps: [{name: "fortio", load: {url: "http://127.0.0.1:1/echo", requests: 10, connections: 1}}]
	expect: ["fortio.requests == 10"]
}`)
	run := runInReplayWorld(t, sc)
	b, err := json.Marshal(run)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ kind, want string }{
		{"load", ""},
		{"", `step fortio: its result's kind is "", but its step's is load`},
		{"exec", `step fortio: its result's kind is "exec", but its step's is load`},
	} {
		var rec interp.Record
		if err := json.Unmarshal(b, &rec); err != nil {
			t.Fatal(err)
		}
		rec.Results["fortio"].Kind = c.kind
		got := ""
		if err := rec.Contradictions(); err != nil {
			got = err.Error()
		}
		if c.want == "" && got != "" || !strings.Contains(got, c.want) {
			t.Errorf("kind %q: Contradictions: %q, want %q", c.kind, got, c.want)
		}
	}
}
