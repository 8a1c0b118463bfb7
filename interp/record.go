package interp

import (
	"fmt"
	"strings"
	"time"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/schema"
)

// RecordVersion is the version of the Record's JSON form. It changes when a field changes
// meaning; readers (labrun replay) refuse versions they do not know.
const RecordVersion = 1

// Outcome is the verdict of a run, a step or an expectation.
type Outcome string

// Outcomes.
const (
	Passed      Outcome = "passed"
	Failed      Outcome = "failed"
	Errored     Outcome = "error"
	Interrupted Outcome = "interrupted"
	Skipped     Outcome = "skipped"
	TimedOut    Outcome = "timeout"
	Cancelled   Outcome = "cancelled"
	// Refused: the scenario was refused before anything ran (a step the target cannot run,
	// a mutation outside the scenario's namespaces).
	Refused Outcome = "refused"
)

// Record is everything a run saw and decided: the report is written from it, and labrun replay
// re-judges it. It is complete: every value an expectation can read is in it.
type Record struct {
	Version  int    `json:"version"`
	Scenario string `json:"scenario"`
	// File is the file that declares the scenario; Pos its position.
	File string  `json:"file"`
	Pos  dsl.Pos `json:"pos"`
	Doc  string  `json:"doc,omitempty"`
	// Target is the target's name, Where what it connected to.
	Target string         `json:"target"`
	Where  string         `json:"where,omitempty"`
	Vars   map[string]any `json:"vars,omitempty"`
	// TargetValues are the names the target gave expressions (e.g. local backends).
	TargetValues map[string]any `json:"targetValues,omitempty"`
	Start        time.Time      `json:"start"`
	End          time.Time      `json:"end"`
	// StepsStart is when the steps phase began (planned offsets of steps count from it).
	StepsStart time.Time `json:"stepsStart"`

	Outcome Outcome `json:"outcome"`
	// Error is the infrastructure error or failure that stopped the run, if any.
	Error string `json:"error,omitempty"`
	// ErrorPos is where the failing step or assertion is written.
	ErrorPos *dsl.Pos `json:"errorPos,omitempty"`

	Steps        []*StepRecord                `json:"steps"`
	Snapshots    map[string]*SnapshotRecord   `json:"snapshots"`
	Series       map[string]*SeriesRecord     `json:"series,omitempty"`
	Loads        map[string]*LoadRecord       `json:"loads,omitempty"`
	Execs        map[string]schema.ExecResult `json:"execs,omitempty"`
	Logs         map[string]schema.LogResult  `json:"logs,omitempty"`
	Values       map[string]any               `json:"values,omitempty"`
	Expectations []*Judgement                 `json:"expectations"`
	// Notes are things the judge noticed that are not failures (a stat absent before traffic).
	Notes []string `json:"notes,omitempty"`
	// Cleanup lists what the automatic cleanup did, in order.
	Cleanup []string `json:"cleanup,omitempty"`
	// Leftovers are what the automatic cleanup created and could not remove (retried) or did
	// not reach (abandoned): the run left them behind, whatever its outcome.
	Leftovers []string `json:"leftovers,omitempty"`
	// AllowReset is the scenario's allowReset, kept so that replay judges the same way.
	AllowReset []string `json:"allowReset,omitempty"`
	// Unit is the run's place in a matrix of runs (--count, --sweep, a declared sweep): its
	// combination, its round and the matrix itself, so that a summary is made from records.
	Unit *dsl.Unit `json:"unit,omitempty"`
	// Artifacts are raw inputs, saved next to the report (not in the JSON).
	Artifacts []*ArtifactRecord `json:"artifacts,omitempty"`
}

// StepRecord is one execution of a step (a sampler records one per sample, a repeat one per
// round of its children).
type StepRecord struct {
	Path    string    `json:"path"`
	Name    string    `json:"name,omitempty"`
	Kind    string    `json:"kind"`
	Phase   dsl.Phase `json:"phase"`
	Pos     dsl.Pos   `json:"pos"`
	Summary string    `json:"summary,omitempty"`
	// Planned and Start are offsets from the start of the run; Skew = Start - Planned.
	Planned time.Duration `json:"plannedNs"`
	Start   time.Duration `json:"startNs"`
	End     time.Duration `json:"endNs"`
	Skew    time.Duration `json:"skewNs"`
	// Timed says the step had a planned time of its own (at, a sample tick) rather than
	// simply following the step before it.
	Timed   bool    `json:"timed,omitempty"`
	Outcome Outcome `json:"outcome"`
	Error   string  `json:"error,omitempty"`
	// ExpectedError is the error of a step that failed as its expectFail expected: the step
	// passed, and expressions read this as error.<step>.
	ExpectedError string `json:"expectedError,omitempty"`
	Round         int    `json:"round,omitempty"`
	Sample        int    `json:"sample,omitempty"`
	// Background steps run on while later steps start.
	Background bool     `json:"background,omitempty"`
	Warnings   []string `json:"warnings,omitempty"`
}

// SnapshotRecord is one snapshot.
type SnapshotRecord struct {
	Name       string        `json:"name"`
	Source     string        `json:"source"`
	At         time.Time     `json:"at"`
	Counters   schema.Stats  `json:"counters"`
	Gauges     schema.Stats  `json:"gauges"`
	Histograms schema.Stats  `json:"histograms,omitempty"`
	Hosts      []schema.Host `json:"hosts,omitempty"`
}

// Stats returns counters, gauges and histogram quantiles in one map, as expressions see them.
func (s *SnapshotRecord) Stats() schema.Stats {
	out := make(schema.Stats, len(s.Counters)+len(s.Gauges)+len(s.Histograms))
	for k, v := range s.Histograms {
		out[k] = v
	}
	for k, v := range s.Gauges {
		out[k] = v
	}
	for k, v := range s.Counters {
		out[k] = v
	}
	return out
}

// Has reports whether the snapshot holds stat (as a counter, gauge or quantile).
func (s *SnapshotRecord) Has(stat string) bool {
	if _, ok := s.Counters[stat]; ok {
		return true
	}
	if _, ok := s.Gauges[stat]; ok {
		return true
	}
	_, ok := s.Histograms[stat]
	return ok
}

// SeriesRecord is a sampled series: one snapshot per tick.
type SeriesRecord struct {
	Name    string            `json:"name"`
	Source  string            `json:"source"`
	Every   time.Duration     `json:"everyNs"`
	Samples []*SnapshotRecord `json:"samples"`
}

// SeriesFrom is Series with each sample's time: samples[i].at is when it was taken, in
// seconds from stepsStart (the start of the steps phase).
func (s *SeriesRecord) SeriesFrom(stepsStart time.Time) schema.Series {
	out := s.Series()
	for i, smp := range s.Samples {
		at := make(schema.Stats, len(out.Samples[i])+1)
		for k, v := range out.Samples[i] {
			at[k] = v
		}
		at["at"] = smp.At.Sub(stepsStart).Seconds()
		out.Samples[i] = at
	}
	return out
}

// Series computes what expressions see of the series.
func (s *SeriesRecord) Series() schema.Series {
	out := schema.Series{Max: schema.Stats{}, Min: schema.Stats{}, First: schema.Stats{}, Last: schema.Stats{}, Count: len(s.Samples)}
	for _, smp := range s.Samples {
		st := smp.Stats()
		out.Samples = append(out.Samples, st)
		for k, v := range st {
			if cur, ok := out.Max[k]; !ok || v > cur {
				out.Max[k] = v
			}
			if cur, ok := out.Min[k]; !ok || v < cur {
				out.Min[k] = v
			}
			if _, ok := out.First[k]; !ok {
				out.First[k] = v
			}
			out.Last[k] = v
		}
	}
	return out
}

// LoadRecord is one load's results.
type LoadRecord struct {
	schema.LoadResult
	Warnings []string  `json:"warnings,omitempty"`
	Start    time.Time `json:"start"`
	End      time.Time `json:"end"`
}

// Judgement is the verdict on one expression.
type Judgement struct {
	Src     string  `json:"expr"`
	Pos     dsl.Pos `json:"pos"`
	Outcome Outcome `json:"outcome"`
	// Explanation shows the values of the parts: `delta.x (12) == fortio.code503 (15)`.
	Explanation string `json:"explanation,omitempty"`
	// Reason says why the expression could not be judged as written (a missing stat, a reset).
	Reason string `json:"reason,omitempty"`
	// Values are the numbers, strings and booleans the expression read (dsl.ReadsOf), by
	// source: what the summaries of repeated and swept runs tabulate and plot.
	Values map[string]any `json:"values,omitempty"`
}

// ArtifactRecord is a raw input of one step.
type ArtifactRecord struct {
	Step string `json:"step"`
	Name string `json:"name"`
	// File is the artifact's path relative to the report's artifacts folder, set when saved.
	File string `json:"file,omitempty"`
	Data []byte `json:"-"`
	// Path, when set, is the file the artifact was streamed to (see WithSpool) instead of
	// Data; the report moves it into its artifacts folder as a file of its own.
	Path string `json:"-"`
}

// LeftBehind says what the run left behind and how to remove it, for the verdict line and
// the report ("" when it left nothing): "left 2 objects behind (ConfigMap lab/a, Namespace
// lab); `labrun clean --yes --scenario s` deletes them".
func (r *Record) LeftBehind() string {
	if len(r.Leftovers) == 0 {
		return ""
	}
	objects, processes := 0, 0
	for _, l := range r.Leftovers {
		if strings.HasPrefix(l, "process ") {
			processes++
		} else {
			objects++
		}
	}
	var what []string
	if objects > 0 {
		what = append(what, countOf(objects, "object"))
	}
	if processes > 0 {
		what = append(what, countOf(processes, "process"))
	}
	shown := r.Leftovers
	more := ""
	if len(shown) > 5 {
		shown, more = shown[:5], fmt.Sprintf(" and %d more", len(r.Leftovers)-5)
	}
	s := fmt.Sprintf("left %s behind (%s%s)", strings.Join(what, " and "), strings.Join(shown, ", "), more)
	if objects > 0 {
		s += fmt.Sprintf("; `labrun clean --yes --scenario %s` deletes the objects", r.Scenario)
	}
	return s
}

func countOf(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	if strings.HasSuffix(noun, "s") {
		return fmt.Sprintf("%d %ses", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
