package report

import (
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/interp"
)

// FuzzRecord: a record edited by hand, any bytes, is refused or judged and shown, never a
// panic. Each input goes the way labrun replay takes a record (decoded with its own
// contradictions checked, its types restored, its steps held to the scenario's, its outcome
// to its data, re-judged) and the way a report shows one (Markdown, HTML). The seeds are
// quickstart records a run wrote (cmd/labrun/testdata/clones) and the kube records of
// docs/records; `go test` runs the seeds alone, `go test -fuzz FuzzRecord ./report` mutates them.
func FuzzRecord(f *testing.F) {
	res, err := dsl.Load([]string{"../examples/quickstart.cue"}, dsl.Options{})
	if err != nil {
		f.Fatal(err)
	}
	scenarios := map[string]*dsl.Scenario{}
	for _, sc := range res.Scenarios {
		scenarios[sc.Name] = sc
	}
	var seeds []string
	for _, glob := range []string{"../cmd/labrun/testdata/clones/single/*.json", "../cmd/labrun/testdata/clones/count2/*.json", "../docs/records/*.json"} {
		m, _ := filepath.Glob(glob)
		seeds = append(seeds, m...)
	}
	if len(seeds) < 3 {
		f.Fatalf("seeds %v: want the clones' and docs/records' records", seeds)
	}
	for _, s := range seeds {
		b, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		rec, err := Decode("r.json", b)
		if err != nil {
			return
		}
		_ = Markdown(rec, Files{})
		_ = HTML(rec, Files{})
		sc := scenarios[rec.Scenario]
		if sc == nil || interp.RestoreTypes(rec) != nil || interp.ChangedStep(rec, sc, nil) != "" || interp.OutcomeContradictions(rec, sc) != nil {
			return
		}
		judged := interp.Rejudge(rec, sc)
		outcome, _ := interp.Verdict(rec, judged)
		rec.Expectations, rec.Outcome = judged, outcome
		_ = Markdown(rec, Files{})
		_ = HTML(rec, Files{})
	})
}

// TestAxisTicksBounded: a time axis has at most 13 ticks, from 0, none past its end, whatever
// the end: a record whose end was edited centuries on drew one tick per 10 minutes of it (9 GB
// of SVG before the heap ran out; FuzzRecord's first find), and one near the largest duration
// overflowed the tick's time.
func TestAxisTicksBounded(t *testing.T) {
	for _, end := range []time.Duration{time.Nanosecond, time.Millisecond, 90 * time.Second, 3 * time.Hour, 40 * 24 * time.Hour, 250 * 365 * 24 * time.Hour, math.MaxInt64} {
		ticks := axisTicks(end)
		if len(ticks) == 0 || len(ticks) > 13 || ticks[0] != 0 || ticks[len(ticks)-1] > end || ticks[len(ticks)-1] < 0 {
			t.Errorf("end %v: %d ticks %v", end, len(ticks), ticks)
		}
	}
}
