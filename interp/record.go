package interp

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/envoy"
	"labrun.dev/labrun/schema"
)

// RecordVersion is the version of the Record's JSON form. It changes when a field changes
// meaning; readers (labrun replay) refuse versions they do not know. Version 2 keeps every
// named step's result under results, in the form its kind declares; version 1 kept them in
// one section per kind (snapshots, series, loads, execs, logs, values), and is still read.
// Version 3 is version 2 whose run kept stepParams, stepOptions and fileDigests of every step:
// a record of version 3 without them was changed after the run (one of version 2 may be older than
// stepParams, and is judged by its summaries alone).
// Version 4 is version 3 whose exec steps that ran keep their exit code in an artifact
// (schema.ExitArtifact), which replay holds the recorded exit code to.
// Version 5 is version 4 whose logs results read access lines by their format (an entry's
// format; a field the format does not give has no value) and count a line with no flag under
// flags["-"]; a record of an older version has its lines read again so when it is read
// (Record.RereadLogs), as has one of version 5 (its numeric fields Envoy wrote no value for
// read 0).
// Version 6 is version 5 whose run kept the names of the vars the command line gave it
// (GivenVars: --var, a sweep's combination): a var of a record of version 6 that none gave
// is the scenario's own, and replay, merge and mutate hold it to the scenario's source.
// Version 7 is version 6 whose exec steps that ended without an exit code say why in their
// exit.txt (schema.ExitNotStarted, schema.ExitCut): a command that could not be started and
// one its timeout cut record no result, and only the first fails a bare expectFail: true;
// and whose run kept the lint codes its labrun knew (Lints), to which its warnings are held,
// and, of a labrun run of several runs, what that run ran (Invocation).
// Version 8 is version 7 whose run wrote a seal last in the record's folder (report.SealFile:
// the SHA-256 of the record and of each file of its folder), to which replay, mutate and merge
// hold them: a record edited together with its artifacts (an exec's stdout, fortio.json, an
// exit.txt) was consistent with them and replayed as the edit said.
// Version 9 is version 8 whose local backends count a response's code before any of it
// leaves (at its header), so that a load that sent every request to one local backend is held
// to that backend's counts exactly (localLoadBackendShortfalls), and whose loads keep the
// latencies of their failed requests apart (schema.LoadResult.ErrorLatency, fortio's
// ErrorsDurationHistogram), which errorLatency reads where some requests succeeded.
const RecordVersion = 9

// RereadLogs reads the access lines of the logs results of a record made before version 6
// again by this labrun's rules (schema.LogResult.Reread): labruns before version 5 read a
// field the line's format does not give as "" (so none(entries, .upstream_host == X) held
// over such lines) and counted a line with no flag under no flag; those of version 5 read a
// duration Envoy wrote "-" for, and a JSON line's null duration or response_code, as 0 (and
// counted such a code under codes["0"]), where there is no value. Without it, such a record,
// as its run wrote it, was refused as changed after the run (its counts disagree with its
// lines read now), and judged again by the old rules. Records of version 6 are left as they
// are.
func (r *Record) RereadLogs() {
	if r.Version >= 6 {
		return
	}
	for _, res := range r.Results {
		if res == nil {
			continue
		}
		if l, ok := res.Value.(schema.LogResult); ok {
			res.Value = l.Reread(envoy.AccessLog)
		}
	}
}

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
	// GivenVars are the names of the vars the command line gave the run (--var, the
	// combination of a sweep, declared or --sweep), sorted; the others among Vars are the
	// scenario's own, as its source computes them. Without it, a var edited in the record
	// together with the values and outcomes that read it was what a run with --var would have
	// written, and replayed PASSED. Kept since version 6; empty when none was given.
	GivenVars []string `json:"givenVars,omitempty"`
	// Namespaces are the run's ephemeral namespaces: key → the name this run gave it
	// (expressions read them as ns.<key>).
	Namespaces map[string]string `json:"namespaces,omitempty"`
	// Clusters are the scenario's clusters (clusters:), in declaration order, with what each
	// connected to; the first is the default of steps that name none.
	Clusters []ClusterRecord `json:"clusters,omitempty"`
	// TargetValues are the names the target gave expressions (e.g. local backends).
	TargetValues map[string]any `json:"targetValues,omitempty"`
	Start        time.Time      `json:"start"`
	End          time.Time      `json:"end"`
	// StepsStart is when the steps phase began (planned offsets of steps count from it).
	StepsStart time.Time `json:"stepsStart"`
	// Stops are the times labrun was stopped during the run (SIGSTOP, Ctrl-Z, then continued),
	// as its notes say them: the timeline draws each where it happened, with its length.
	Stops []StopRecord `json:"stops,omitempty"`

	Outcome Outcome `json:"outcome"`
	// Error is the infrastructure error or failure that stopped the run, if any.
	Error string `json:"error,omitempty"`
	// ErrorPos is where the failing step or assertion is written.
	ErrorPos *dsl.Pos `json:"errorPos,omitempty"`

	Steps []*StepRecord `json:"steps"`
	// Results are what the named steps recorded, by name (a sampling step without a name:
	// by its path), each in the form its kind declares.
	Results      map[string]*Result `json:"results"`
	Expectations []*Judgement       `json:"expectations"`
	// Notes are things the judge noticed that are not failures (a stat absent before traffic).
	Notes []string `json:"notes,omitempty"`
	// Warnings are the lints' findings in the scenario that ran (what the run said of it on
	// the console, e.g. warning[mayfail-unread]), so that its report says them too.
	Warnings []*dsl.Warning `json:"warnings,omitempty"`
	// Lints are the lint codes the labrun that ran knew (dsl.LintCodes), sorted: replay,
	// merge and mutate make the lints of the scenario's source again and hold Warnings to
	// those of these codes (WarningAbsences). A labrun that knew fewer lints wrote fewer
	// warnings; without it, a warning taken out of the record was not told from a lint the
	// run's labrun did not have. Kept since version 7.
	Lints []string `json:"lints,omitempty"`
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
	// Source identifies the scenario's source: "sha256:<hex>" of the file that declares it
	// and the other .cue files of its folder (its package), by base name and content, so
	// that labrun merge can tell records of one source from another's made on other
	// machines. Empty in records made before it was kept.
	Source string `json:"source,omitempty"`
	// Shard is the shard of the process that made the record (--shard i/n), so that labrun
	// merge can tell when the records of a shard are missing. Nil when the process ran every
	// run, and in records made before it was kept.
	Shard *ShardRecord `json:"shard,omitempty"`
	// Labrun is the labrun build that made the record: its module version, the VCS revision
	// it was built from and "modified" when its tree was ("(devel) <revision> modified"), so
	// that labrun merge can tell records of one labrun run, or of one split of shards, that
	// two builds made. Empty in records made before it was kept, which are not held to it.
	Labrun string `json:"labrun,omitempty"`
	// Invocation is the labrun run that made the record, when it ran more than one run (several
	// scenarios, a matrix): its runs beside this one, so that labrun merge can tell a sibling's
	// record taken out, or the runs said to have run alone that ran at once. Kept since version
	// 7; nil for a run alone.
	Invocation *InvocationRecord `json:"invocation,omitempty"`
	// StepParams are the parameters of each step of the scenario, by path, as the scenario
	// declared them (its ${...} as written, its vars resolved), in canonical JSON: each
	// top-level field whose JSON is longer than 64 bytes as "sha256:<hex>" of it, the secrets
	// hidden (see StepParams). replay, merge and mutate compare them with the steps of the
	// scenario they judge the record with: a summary leaves parameters out (a logs step's
	// match), and a step whose parameters changed since the run would have recorded other
	// data. Nil in records made before they were kept, which are judged without them.
	StepParams map[string]json.RawMessage `json:"stepParams,omitempty"`
	// StepOptions are the step's own fields beside its kind (cluster, at, timeout,
	// background, every, while, mayFail, expectFail) of each step of the scenario that sets
	// any, by path, as StepParams keeps parameters: a step whose mayFail (or timeout…)
	// changed since the run ran otherwise, or its failure would count otherwise. Compared in
	// records of version 3 on (a step they do not name set none); nil in older ones.
	StepOptions map[string]json.RawMessage `json:"stepOptions,omitempty"`
	// FileDigests are the files the steps read when they ran (apply.files, delete.files,
	// wait.matchFiles and absentFiles, and the files of the lab a command on this machine names
	// in its argv or stdin: commandFiles), by the path a step names (one written with ${...}: as
	// the run resolved it), each as "sha256:<hex>" of
	// its content as read (before its ${...} were filled), or ChangedDuringRun. replay, merge
	// and mutate refuse a scenario whose file reads otherwise now: its step would apply (wait
	// for…) other objects than the run did. Nil in records made before they were kept.
	FileDigests map[string]string `json:"fileDigests,omitempty"`
	// Artifacts are raw inputs, saved next to the report (not in the JSON).
	Artifacts []*ArtifactRecord `json:"artifacts,omitempty"`
	// ReportLost, set by the run command when the record could not be written (a full or
	// read-only report directory), says why: the JUnit then counts an error for it. Never in
	// the record itself, which holds what the run measured.
	ReportLost string `json:"-"`
}

// ShardRecord is a shard's place in its split: shard Index of Count, which held Runs of the
// All runs of every shard.
type ShardRecord struct {
	Index int `json:"index"`
	Count int `json:"count"`
	Runs  int `json:"runs"`
	All   int `json:"all"`
	// Plan identifies the split's runs, the same in every shard of it: "sha256:<hex>" of each
	// run's scenario file (its folder and name), scenario, run id and the file's source,
	// sorted. Shards of two scenario sets with as many runs, or of two checkouts of one, are
	// two splits. Empty in records made before it was kept, which are told apart by Count and
	// All only; made before it held the sources, of the rest alone.
	Plan string `json:"plan,omitempty"`
}

// InvocationRecord is a labrun run of several runs, as each of its records keeps it.
type InvocationRecord struct {
	// ID is the invocation's random id, the same in each of its records.
	ID string `json:"id"`
	// Scenarios are its runs by scenario (of its shard, with --shard): "<folder>/<file>
	// <scenario>" (the file's folder and name, as merge names a scenario) → how many runs.
	Scenarios map[string]int `json:"scenarios"`
	// Parallel is its --parallel: how many of its runs may have run at once.
	Parallel int `json:"parallel"`
	// FailFast is its --fail-fast: the runs not started after one that did not pass have no
	// record.
	FailFast bool `json:"failFast,omitempty"`
	// Vars are the names of the vars its command line gave (--var), sorted: the same in
	// every record of it, given to each run whose scenario declares them.
	Vars []string `json:"vars,omitempty"`
	// Sources are the sources its scenarios ran from: scenario key (as Scenarios names it)
	// → the source of its file, as its records' Source. Nil in records made before they were
	// kept (they are not held to them, nor to Vars).
	Sources map[string]string `json:"sources,omitempty"`
	// Start is when it began its runs: each of its records starts after it. Nil in records
	// made before it was kept.
	Start *time.Time `json:"start,omitempty"`
}

// ClusterRecord is one of a run's clusters.
type ClusterRecord struct {
	Name  string `json:"name"`
	Where string `json:"where,omitempty"`
}

// StepRecord is one execution of a step (a sampler records one per sample, a repeat one per
// round of its children).
type StepRecord struct {
	Path string `json:"path"`
	Name string `json:"name,omitempty"`
	// Label is what the step is called when it has no name but a named block holds it
	// ("create.1"; see dsl.Step.Shown).
	Label string `json:"label,omitempty"`
	Kind  string `json:"kind"`
	// Cluster is the cluster the step ran on, in a scenario that declares clusters.
	Cluster string    `json:"cluster,omitempty"`
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
	// Round is the round (from 1) of the innermost repeat whose steps the step ran among, 0
	// outside any (records made before it was kept say 0 in a repeat too).
	Round  int `json:"round,omitempty"`
	Sample int `json:"sample,omitempty"`
	// Background steps run on while later steps start.
	Background bool     `json:"background,omitempty"`
	Warnings   []string `json:"warnings,omitempty"`
	// Read is what the step read where its reference named more than one thing: the pod a
	// selector picked for a snapshot, config, exec or load ("pod lab/client-7d9-x2"; a load
	// from several pods, "pods lab/a, lab/b"), or "".
	Read string `json:"read,omitempty"`
}

// Result is one named step's result in the record.
type Result struct {
	// Kind is the step's kind, whose declaration says how to read Value.
	Kind string `json:"kind"`
	// Sampled says the step sampled (every/while): Value is its last sample's result, or,
	// for a kind whose samples accumulate, all of them (a snapshot's series).
	Sampled bool `json:"sampled,omitempty"`
	// Cluster is the cluster of the step that recorded it, in a scenario that declares
	// clusters.
	Cluster string `json:"cluster,omitempty"`
	Value   any    `json:"value"`
	// Unknown, of a get of a custom resource, are the names the scenario's expressions read
	// below its object that the kind's CRD has not (by the chain read, "spec.x", "*" for any
	// element of a list), each with why: a read of one errs, when the run judges it and when
	// replay judges the record again, rather than read nil.
	Unknown map[string]string `json:"unknown,omitempty"`
	// null says the record holds no value (null) where the kind always records one (see
	// Record.NullEntries).
	null bool
	// absent are the fields of Value, by the name expressions read them by, that the record
	// read back did not hold though every run records them (a record written before labrun
	// recorded the field, or edited): read as the zero value, a claim would be judged of
	// what nobody recorded (see Judge.noValue).
	// A field held whose items lack one of theirs (a load's pods[1] without its sockets)
	// is absent too, with what it lacks ("pods[1] holds no sockets"; "" for the field itself).
	absent map[string]string
}

// ExprValue is what expressions see of the result (see schema.ExprValuer).
func (r *Result) ExprValue(stepsStart time.Time) any {
	if v, ok := r.Value.(schema.ExprValuer); ok {
		return v.ExprValue(stepsStart)
	}
	return r.Value
}

// UnmarshalJSON reads a result into the Go form its kind declares.
func (r *Result) UnmarshalJSON(b []byte) error {
	var raw struct {
		Kind    string            `json:"kind"`
		Sampled bool              `json:"sampled"`
		Cluster string            `json:"cluster"`
		Value   json.RawMessage   `json:"value"`
		Unknown map[string]string `json:"unknown"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	v, err := decodeResult(raw.Kind, raw.Sampled, raw.Value)
	if err != nil {
		return err
	}
	r.Kind, r.Sampled, r.Cluster, r.Value, r.Unknown = raw.Kind, raw.Sampled, raw.Cluster, v, raw.Unknown
	r.null = isNull(raw.Value) && recordsItsOwnForm(v)
	r.absent = absentFields(v, raw.Value)
	return nil
}

// absentFields are the fields of v, a struct (or a pointer to one) decoded from b, by their
// expr names, whose JSON names b does not hold though they are always written (no
// omitempty); nil when there are none, or v is no struct or b no object.
func absentFields(v any, b json.RawMessage) map[string]string {
	t := reflect.TypeOf(v)
	if t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	var absent map[string]string
	lacks(t, b, func(field, inner string) {
		if absent == nil {
			absent = map[string]string{}
		}
		if _, seen := absent[field]; !seen {
			absent[field] = inner
		}
	})
	return absent
}

// lacks calls found(field, inner) for each field of the struct type t, by its expr name,
// that b, t's JSON, does not hold though every run records it; and for each held field whose
// items are structs (a load's pods) with one such item that lacks a field of its own, with
// inner naming it ("pods[1] holds no sockets"): read as the zero value, all(f.pods, .sockets
// <= 2) passed of a count nobody recorded.
func lacks(t reflect.Type, b json.RawMessage, found func(field, inner string)) {
	var held map[string]json.RawMessage
	if json.Unmarshal(b, &held) != nil || held == nil {
		return
	}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for i := range t.NumField() {
			f := t.Field(i)
			if f.Anonymous && f.Type.Kind() == reflect.Struct {
				walk(f.Type)
				continue
			}
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			exprName := f.Tag.Get("expr")
			if !f.IsExported() || name == "-" || name == "" || exprName == "" || exprName == "-" {
				continue
			}
			raw, ok := held[name]
			if !ok {
				if !slices.Contains(strings.Split(opts, ","), "omitempty") {
					found(exprName, "")
				}
				continue
			}
			item := f.Type
			for item.Kind() == reflect.Pointer {
				item = item.Elem()
			}
			switch {
			case item.Kind() == reflect.Struct:
				lacks(item, raw, func(field, inner string) {
					found(exprName, nestedLack(name, field, inner))
				})
			case (item.Kind() == reflect.Slice || item.Kind() == reflect.Array) && derefStruct(item.Elem()):
				var items []json.RawMessage
				if json.Unmarshal(raw, &items) != nil {
					continue
				}
				elem := item.Elem()
				for elem.Kind() == reflect.Pointer {
					elem = elem.Elem()
				}
				for k, it := range items {
					lacks(elem, it, func(field, inner string) {
						found(exprName, nestedLack(fmt.Sprintf("%s[%d]", name, k), field, inner))
					})
				}
			}
		}
	}
	walk(t)
}

// nestedLack names a field that at, a struct below a result, lacks: "pods[1] holds no
// sockets", or deeper, what the lower one says of its own.
func nestedLack(at, field, inner string) string {
	if inner != "" {
		return at + "." + inner
	}
	return at + " holds no " + field
}

// derefStruct says t, through its pointers, is a struct.
func derefStruct(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Kind() == reflect.Struct
}

// isNull says whether b, a JSON value, is null or absent.
func isNull(b json.RawMessage) bool {
	s := strings.TrimSpace(string(b))
	return s == "" || s == "null"
}

// recordsItsOwnForm says whether v, a value decodeResult read, is of a kind's own Go form (a
// struct, or a pointer to one: a load's, a snapshot's, an exec's), which every run records
// (a get's object or a config's value are JSON-like data, which may be null).
func recordsItsOwnForm(v any) bool {
	t := reflect.TypeOf(v)
	if t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t != nil && t.Kind() == reflect.Struct
}

// decodeResult reads the recorded value of a step of kind into the Go form the kind
// declares: its record form (schema.RecordForm), else its result type's Go type, else
// JSON-like data.
func decodeResult(kind string, sampled bool, b json.RawMessage) (any, error) {
	k, ok := schema.Kinds[kind]
	if !ok {
		var v any
		err := json.Unmarshal(b, &v)
		return v, err
	}
	p := k.New()
	if rf, ok := p.(schema.RecordForm); ok {
		v := rf.NewRecord(sampled)
		err := json.Unmarshal(b, v)
		return v, err
	}
	if t := schema.ResultOf(p, sampledContext(sampled)); t != nil && t.Go != nil {
		v := reflect.New(t.Go)
		if err := json.Unmarshal(b, v.Interface()); err != nil {
			return nil, fmt.Errorf("%s result: %w", kind, err)
		}
		return v.Elem().Interface(), nil
	}
	var v any
	err := json.Unmarshal(b, &v)
	return v, err
}

// sampledContext is the ResultContext of a step as a record knows it.
type sampledContext bool

func (c sampledContext) Sampled() bool         { return bool(c) }
func (sampledContext) ExpectsFailure() bool    { return false }
func (c sampledContext) Templated(string) bool { return false }

// The record forms that the run's reports and the judge read by name. They are the kinds'
// own types (schema/snapshot.go, schema/load.go).
type (
	SnapshotRecord = schema.SnapshotRecord
	SeriesRecord   = schema.SeriesRecord
	LoadRecord     = schema.LoadRecorded
)

// Put stores a step's result under name.
func (r *Record) Put(name, kind string, sampled bool, v any) {
	if r.Results == nil {
		r.Results = map[string]*Result{}
	}
	r.Results[name] = &Result{Kind: kind, Sampled: sampled, Value: v}
}

// resultsOf are the results whose value is a T, by name.
func resultsOf[T any](r *Record) map[string]T {
	out := map[string]T{}
	for n, res := range r.Results {
		if v, ok := res.Value.(T); ok {
			out[n] = v
		}
	}
	return out
}

// Snapshot is the snapshot recorded under name (nil if none).
func (r *Record) Snapshot(name string) *SnapshotRecord {
	if res := r.Results[name]; res != nil {
		s, _ := res.Value.(*SnapshotRecord)
		return s
	}
	return nil
}

// SeriesOf is the series recorded under name (nil if none).
func (r *Record) SeriesOf(name string) *SeriesRecord {
	if res := r.Results[name]; res != nil {
		s, _ := res.Value.(*SeriesRecord)
		return s
	}
	return nil
}

// Snapshots are the snapshots taken, by name.
func (r *Record) Snapshots() map[string]*SnapshotRecord { return resultsOf[*SnapshotRecord](r) }

// Series are the sampled series, by name.
func (r *Record) Series() map[string]*SeriesRecord { return resultsOf[*SeriesRecord](r) }

// Loads are the loads' results, by name.
func (r *Record) Loads() map[string]*LoadRecord { return resultsOf[*LoadRecord](r) }

// Execs are the commands' results, by name.
func (r *Record) Execs() map[string]schema.ExecResult { return resultsOf[schema.ExecResult](r) }

// Logs are the logs steps' results, by name.
func (r *Record) Logs() map[string]schema.LogResult { return resultsOf[schema.LogResult](r) }

// Values are every other result (a get's object, a config value, a process, the result of a
// kind the reports have no section of their own for), by name, as expressions see them.
func (r *Record) Values() map[string]any {
	out := map[string]any{}
	for n, res := range r.Results {
		switch res.Value.(type) {
		case *SnapshotRecord, *SeriesRecord, *LoadRecord, schema.ExecResult, schema.LogResult:
			continue
		}
		out[n] = res.ExprValue(r.StepsStart)
	}
	return out
}

// Names are the names the record gives expressions, typed as the results' kinds declare them
// (a snapshot's by its source): what reports read of a value's type and unit without the
// scenario. A plain delta compares the first and the last snapshot taken.
func (r *Record) Names() *dsl.Names {
	n := &dsl.Names{Results: map[string]*dsl.StepResult{}, Vars: r.Vars, Steps: map[string]bool{}}
	for _, s := range r.Steps {
		if s.Name != "" {
			n.Steps[s.Name] = true
		}
	}
	var snaps []*SnapshotRecord
	// A result's type depends only on its kind, source and sampling: results alike share one
	// (a long run's 10,000 snapshots of one backend made 10,000 copies, ~13 MB while its
	// report was written).
	type typeKey struct {
		kind, source string
		sampled      bool
	}
	types := map[typeKey]*schema.Type{}
	for name, res := range r.Results {
		k, ok := schema.Kinds[res.Kind]
		if !ok {
			continue
		}
		source := ""
		switch v := res.Value.(type) {
		case *SnapshotRecord:
			source = v.Source
			snaps = append(snaps, v)
		case *SeriesRecord:
			source = v.Source
		}
		key := typeKey{res.Kind, source, res.Sampled}
		t, ok := types[key]
		if !ok {
			p := k.New()
			if sp := schema.OfSource(source); sp != nil {
				p = sp
			}
			t = schema.ResultOf(p, sampledContext(res.Sampled))
			types[key] = t
		}
		if t != nil {
			n.Results[name] = &dsl.StepResult{Step: name, Kind: res.Kind, Sampled: res.Sampled, Type: t}
		}
	}
	sort.Slice(snaps, func(i, j int) bool { return snaps[i].At.Before(snaps[j].At) })
	if len(snaps) >= 2 {
		n.DeltaFrom, n.DeltaTo = snaps[0].Name, snaps[len(snaps)-1].Name
	}
	return n
}

// UnmarshalJSON reads a record of version 2, or of version 1 (one section per kind).
func (r *Record) UnmarshalJSON(b []byte) error {
	type plain Record
	var v1 struct {
		plain
		Snapshots map[string]*SnapshotRecord   `json:"snapshots"`
		Series    map[string]*SeriesRecord     `json:"series"`
		Loads     map[string]*LoadRecord       `json:"loads"`
		Execs     map[string]schema.ExecResult `json:"execs"`
		Logs      map[string]schema.LogResult  `json:"logs"`
		Values    map[string]json.RawMessage   `json:"values"`
	}
	if err := json.Unmarshal(b, &v1); err != nil {
		return err
	}
	*r = Record(v1.plain)
	if r.Version != 1 {
		return nil
	}
	// Version 1: the kind of a value is its step's (a get, a config, a process).
	kinds := map[string]string{}
	for _, s := range r.Steps {
		if _, ok := kinds[s.Name]; s.Name != "" && !ok {
			kinds[s.Name] = s.Kind
		}
	}
	for n, s := range v1.Snapshots {
		r.Put(n, "snapshot", false, s)
	}
	for n, s := range v1.Series {
		r.Put(n, "snapshot", true, s)
	}
	for n, l := range v1.Loads {
		r.Put(n, "load", false, l)
	}
	for n, e := range v1.Execs {
		r.Put(n, "exec", false, e)
	}
	for n, l := range v1.Logs {
		r.Put(n, "logs", false, l)
	}
	for n, raw := range v1.Values {
		v, err := decodeResult(kinds[n], false, raw)
		if err != nil {
			return fmt.Errorf("values.%s: %w", n, err)
		}
		r.Put(n, kinds[n], false, v)
	}
	if r.Results == nil {
		r.Results = map[string]*Result{}
	}
	return nil
}

// StopRecord is a time labrun was stopped: At from StepsStart (as a step's Start; negative
// before the steps), For how long.
type StopRecord struct {
	At  time.Duration `json:"atNs"`
	For time.Duration `json:"forNs"`
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
	// ReasonPos is where in the scenario's file the part of the expression that erred is, when
	// the evaluation says it (int(p.stdout) of a stdout that is no number): the verdict says
	// the reason there. Before, at the expression's start, with expr's snippet of it and a
	// caret flush at the terminal's first column, under nothing the line above it held.
	ReasonPos *dsl.Pos `json:"reasonPos,omitempty"`
	// Values are the numbers, strings and booleans the expression read (dsl.ReadsOf), by
	// source: what the summaries of repeated and swept runs tabulate and plot.
	Values Values `json:"values,omitempty"`
	// emptyUntil says it errs because an until's collection is empty (dsl.EmptyCollection):
	// the state awaited not there, which a step's timeout fails (schema.EmptyUntil).
	emptyUntil bool
	// zeroDivisor says it errs because a divisor it reads is 0 (dsl.ZeroDivisor): the
	// division has no value, so its parts read as ±Inf or NaN are not shown (setValues).
	zeroDivisor bool
}

// setValues sets the values the expression read (Judge.Reads), less, where the judgement
// erred of a zero divisor, the parts read as ±Inf or NaN: the division it says has no value
// and the parts that hold it. The report showed "1 / p.exit = +Inf" beside "1 / p.exit has no
// value", and a summary tabulated and plotted it. A guarded claim (p.exit == 0 || …, or the
// division read before the guard) did not err, and shows what it measured.
func (jd *Judgement) setValues(v Values) {
	if jd.zeroDivisor {
		for k, x := range v {
			if f, ok := x.(float64); ok && (math.IsInf(f, 0) || math.IsNaN(f)) {
				delete(v, k)
			}
		}
		if len(v) == 0 {
			v = nil
		}
	}
	jd.Values = v
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
// lab); `labrun clean --yes --scenario s` deletes them". A process its cleanup did not stop
// (abandoned by a second interrupt or the cleanup's timeout) is not left behind: every process
// a run starts runs under a keeper that kills it, and all it started, when labrun exits
// (internal/keeper), and the target's close stops it before. It is said so: "did not stop 1
// process in its cleanup (process srv): it ends as labrun exits, with all it started". Before,
// "left 1 process behind", which on the local target nothing was; `labrun clean`, which the
// words "left behind" send a reader to, asks there for a kubeconfig.
func (r *Record) LeftBehind() string {
	if len(r.Leftovers) == 0 {
		return ""
	}
	var objects, processes []string
	for _, l := range r.Leftovers {
		if strings.HasPrefix(l, "process ") {
			processes = append(processes, l)
		} else {
			objects = append(objects, l)
		}
	}
	listed := func(what []string) string {
		if len(what) > 5 {
			return strings.Join(what[:5], ", ") + fmt.Sprintf(" and %d more", len(what)-5)
		}
		return strings.Join(what, ", ")
	}
	var parts []string
	if len(objects) > 0 {
		s := fmt.Sprintf("left %s behind (%s)", countOf(len(objects), "object"), listed(objects))
		held := r.heldLeftovers()
		if len(objects) > len(held) {
			s += fmt.Sprintf("; `labrun clean --yes --scenario %s` deletes the objects", r.Scenario)
			if len(held) > 0 {
				s += " that no finalizer holds"
			}
		}
		if len(held) > 0 {
			s += "; " + heldAdvice(held)
		}
		parts = append(parts, s)
	}
	if len(processes) > 0 {
		them, they := "them", "they"
		if len(processes) == 1 {
			them, they = "it", "it"
		}
		parts = append(parts, fmt.Sprintf("did not stop %s in its cleanup (%s): labrun ends %s as it exits, with all %s started", countOf(len(processes), "process"), listed(processes), them, they))
	}
	return strings.Join(parts, "; and it ")
}

// LeftObjects says whether the run left objects behind that its cleanup could not remove:
// what `labrun clean` lists. A process its cleanup did not stop is not one (LeftBehind).
func (r *Record) LeftObjects() bool {
	return slices.ContainsFunc(r.Leftovers, func(l string) bool { return !strings.HasPrefix(l, "process ") })
}

// heldLeftover is a leftover whose deletion its finalizers hold: the cleanup's failed line
// for it names them ("…, finalizers example.com/hold)", "its finalizers (example.com/hold)").
type heldLeftover struct {
	kind, namespace, name string
	finalizers            string
}

// finalizersSaid are the finalizers a cleanup's failed line says hold an object: the wait
// for its deletion's state (deletion started …, finalizers a,b, phase …), or the ephemeral
// namespace's check (its finalizers (a, b) hold it).
var finalizersSaid = regexp.MustCompile(`(?:\(deletion started [^,)]*, finalizers ([^,)]+(?:,[^ ,)]+)*)|its finalizers \(([^)]*)\) hold it)`)

// heldLeftovers are the leftovers that finalizers hold (a delete, labrun clean's too, only
// marks them deleted again): only what added a finalizer, or a hand, removes it.
func (r *Record) heldLeftovers() []heldLeftover {
	var out []heldLeftover
	for _, what := range r.Leftovers {
		for _, line := range r.Cleanup {
			if !strings.HasPrefix(line, failedLine+what) {
				continue
			}
			m := finalizersSaid.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			fins := m[1] + m[2]
			ref := strings.Fields(strings.TrimPrefix(what, "ephemeral "))
			if len(ref) < 2 {
				continue
			}
			h := heldLeftover{kind: ref[0], name: ref[1], finalizers: fins}
			if ns, name, ok := strings.Cut(ref[1], "/"); ok {
				h.namespace, h.name = ns, name
			}
			out = append(out, h)
			break
		}
	}
	return out
}

// heldAdvice says what removes leftovers that finalizers hold: not labrun clean, which only
// deletes them again, but what added the finalizers, or a patch that removes them (a
// Namespace held only by "kubernetes", the namespace controller's own, waits for its content:
// a finalizer of an object in it, which its status conditions name).
func heldAdvice(held []heldLeftover) string {
	var names []string
	for _, h := range held {
		q := h.name
		if h.namespace != "" {
			q = h.namespace + "/" + h.name
		}
		names = append(names, fmt.Sprintf("%s %s (%s)", h.kind, q, h.finalizers))
	}
	s := fmt.Sprintf("finalizers hold %s: no delete removes them, `labrun clean` neither; what added them removes them when it runs, or by hand ", strings.Join(names, ", "))
	var patched, emptying []heldLeftover
	for _, h := range held {
		if h.kind == "Namespace" && h.finalizers == "kubernetes" {
			emptying = append(emptying, h)
		} else {
			patched = append(patched, h)
		}
	}
	var ways []string
	if len(patched) > 0 {
		h := patched[0]
		ns := ""
		if h.namespace != "" {
			ns = " -n " + h.namespace
		}
		way := fmt.Sprintf("`kubectl patch %s %s%s --type=merge -p '{\"metadata\":{\"finalizers\":null}}'`", strings.ToLower(h.kind), h.name, ns)
		if len(patched) > 1 {
			way += " (and likewise for the others)"
		}
		ways = append(ways, way)
	}
	if len(emptying) > 0 {
		h := emptying[0]
		ways = append(ways, fmt.Sprintf("find what in Namespace %s holds it with `kubectl get namespace %s -o jsonpath='{.status.conditions}'` and remove that object's finalizers", h.name, h.name))
	}
	return s + strings.Join(ways, "; ")
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

// podGaps: a run records the pod (and its uid) of every snapshot of a pod's sidecar it took,
// or of none (a record older than pods in records); one that does not say it beside others of
// its source that do had it removed, which makes reads across two pods (a delta, a series'
// max) look like reads of one (see otherPod, SeriesRecord.PodChange).
func (r *Record) podGaps() []string {
	type snap struct {
		what string
		s    *SnapshotRecord
	}
	bySource := map[string][]snap{}
	var sources []string
	add := func(what string, s *SnapshotRecord) {
		if s == nil || !strings.HasPrefix(s.Source, "envoy ") {
			return
		}
		if _, ok := bySource[s.Source]; !ok {
			sources = append(sources, s.Source)
		}
		bySource[s.Source] = append(bySource[s.Source], snap{what, s})
	}
	for _, name := range sortedResultNames(r) {
		if res := r.Results[name]; res != nil {
			switch v := res.Value.(type) {
			case *SnapshotRecord:
				add("step "+name, v)
			case *SeriesRecord:
				if v != nil {
					for i, smp := range v.Samples {
						add(fmt.Sprintf("step %s: sample %d", name, i+1), smp)
					}
				}
			}
		}
	}
	var msgs []string
	for _, src := range sources {
		snaps := bySource[src]
		var said *SnapshotRecord
		for _, sn := range snaps {
			if sn.s.Pod != "" && (said == nil || said.PodUID == "" && sn.s.PodUID != "") {
				said = sn.s
			}
		}
		if said == nil {
			continue
		}
		for _, sn := range snaps {
			switch {
			case sn.s.Pod == "":
				msgs = append(msgs, fmt.Sprintf("%s does not say which pod it read, where the run's other snapshots of %s do (e.g. pod %s): a run records the pod of every snapshot of a sidecar, and one removed makes a read across two pods look like a read of one", sn.what, src, said.Pod))
			case sn.s.PodUID == "" && said.PodUID != "":
				msgs = append(msgs, fmt.Sprintf("%s does not say the uid of pod %s, where the run's other snapshots of %s do (e.g. pod %s, uid %s): a run records the uid of every pod it reads, and one removed makes a recreated pod of the same name look like the same pod", sn.what, sn.s.Pod, src, said.Pod, said.PodUID))
			}
		}
	}
	return msgs
}

// podReads: a snapshot step's record says the pod it read twice, in the step's read ("pod
// lab/client-a", its console line) and in the snapshot's pod, both from the one read; a record
// where they differ had one edited (two snapshots' pods made one, which turns a delta across
// two Envoys into a number). A series' samples are held, in order, to the reads of the
// samples that passed (one that did not recorded nothing).
func (r *Record) podReads() []string {
	var msgs []string
	runs := map[string][]*StepRecord{}
	for _, sr := range r.Steps {
		if sr != nil && sr.Kind == "snapshot" && sr.Outcome == Passed {
			name := or(sr.Name, sr.Path)
			runs[name] = append(runs[name], sr)
		}
	}
	check := func(sr *StepRecord, s *SnapshotRecord) {
		if s == nil || s.Pod == "" || sr.Read == "pod "+s.Pod {
			return
		}
		msgs = append(msgs, fmt.Sprintf("step %s: its record says it read %q, but its snapshot's pod is %s: both come from the one read, so one was changed after the run", shownStep(sr), sr.Read, s.Pod))
	}
	for _, name := range sortedResultNames(r) {
		res, srs := r.Results[name], runs[name]
		if res == nil || len(srs) == 0 {
			continue
		}
		switch v := res.Value.(type) {
		case *SnapshotRecord:
			check(srs[len(srs)-1], v) // a repeat's rounds: the result is the last one's
		case *SeriesRecord:
			if v != nil && len(v.Samples) == len(srs) {
				for i, smp := range v.Samples {
					check(srs[i], smp)
				}
			}
		}
	}
	return msgs
}

// Contradictions says what the record holds that no run writes, naming the step, the fields
// and their values; nil when nothing does: a result that contradicts itself (a load's
// requests, ok and errors against its codes, its latencies' order: see
// schema.LoadResult.Contradictions; a logs step's counts against the lines it kept: see
// schema.LogResult.Contradictions), a step's record that does (StepRecord.Contradictions).
// A record with a null entry (NullEntries) is refused before anything else reads it.
// Such a record was changed after the run, or is corrupt: judging it again would judge data
// no run recorded.
func (r *Record) Contradictions() error {
	if nulls := r.NullEntries(); len(nulls) > 0 {
		return nullEntriesError(nulls) // what follows reads every entry
	}
	msgs := r.contradictions()
	if len(msgs) == 0 {
		return nil
	}
	return fmt.Errorf("%s; the record was changed after the run or is corrupt", strings.Join(msgs, "; "))
}

// contradictions are Contradictions' findings, one a message, of a record without null
// entries.
func (r *Record) contradictions() []string {
	msgs := r.versionContradictions()
	for _, name := range sortedResultNames(r) {
		res := r.Results[name]
		if res == nil {
			continue
		}
		c, ok := res.Value.(selfContradicting)
		if !ok || reflect.ValueOf(c).Kind() == reflect.Pointer && reflect.ValueOf(c).IsNil() {
			continue
		}
		if cs := c.Contradictions(); len(cs) > 0 {
			lead := fmt.Sprintf("its %s result contradicts itself", res.Kind)
			if _, ok := c.(*LoadRecord); ok {
				lead = "its load result breaks the sums fortio always keeps"
			}
			msgs = append(msgs, fmt.Sprintf("step %s: %s: %s", name, lead, strings.Join(cs, "; ")))
		}
	}
	msgs = append(msgs, r.partialLoadContradictions()...)
	for _, name := range sortedResultNames(r) {
		res := r.Results[name]
		if res == nil {
			continue
		}
		var snaps []*SnapshotRecord
		switch v := res.Value.(type) {
		case *SnapshotRecord:
			snaps = append(snaps, v)
		case *SeriesRecord:
			if v != nil {
				snaps = v.Samples
				// Two samples less than every apart are the first and the last one, taken
				// when the step sampled during ended: none in between, which ends says
				// (max, min and samples have no value). Dropping it makes them pass again.
				if len(v.Samples) == 2 && !v.Ends && v.Every > 0 && v.Samples[0] != nil && v.Samples[1] != nil && v.Samples[1].At.Sub(v.Samples[0].At) < v.Every {
					msgs = append(msgs, fmt.Sprintf("step %s: its series has 2 samples %s apart, less than its every (%s): the first and the last, with none while the step it samples during ran, but it does not say so (ends)", name, v.Samples[1].At.Sub(v.Samples[0].At), v.Every))
				}
			}
		}
		for i, sn := range snaps {
			if cs := localBackendContradictions(sn); len(cs) > 0 {
				what := name
				if len(snaps) > 1 || res.Sampled {
					what = fmt.Sprintf("%s (sample %d)", name, i+1)
				}
				msgs = append(msgs, fmt.Sprintf("step %s: its snapshot of %s %s: %s", what, sn.Source, localBackendSums, strings.Join(cs, "; ")))
			}
		}
	}
	msgs = append(msgs, r.localBackendAbsences()...)
	msgs = append(msgs, r.localBackendDecreases()...)
	msgs = append(msgs, r.envoyGroupAbsences()...)
	msgs = append(msgs, r.podGaps()...)
	msgs = append(msgs, r.podReads()...)
	msgs = append(msgs, r.resultKindContradictions()...)
	for _, s := range r.Steps {
		if cs := s.Contradictions(); len(cs) > 0 {
			msgs = append(msgs, fmt.Sprintf("step %s: its record contradicts itself: %s", shownStep(s), strings.Join(cs, "; ")))
		}
	}
	msgs = append(msgs, r.timeContradictions()...)
	msgs = append(msgs, r.seriesContradictions()...)
	msgs = append(msgs, r.phaseContradictions()...)
	msgs = append(msgs, r.endedEarlyContradictions()...)
	msgs = append(msgs, r.skippedContradictions()...)
	msgs = append(msgs, r.leftoverContradictions()...)
	msgs = append(msgs, r.processCleanupAbsences()...)
	msgs = append(msgs, r.namespaceCleanupAbsences()...)
	msgs = append(msgs, r.localLoadBackendShortfalls()...)
	msgs = append(msgs, r.localLoadAddresses()...)
	msgs = append(msgs, r.unitVarContradictions()...)
	msgs = append(msgs, r.execArtifactAbsences()...)
	msgs = append(msgs, r.loadArtifactAbsences()...)
	msgs = append(msgs, r.repeatContradictions()...)
	return msgs
}

// versionContradictions are what the record keeps that no run of its version kept: a field or
// an artifact labrun writes since a later version (stepParams since version 2, stepOptions
// and fileDigests since 3, an exec's exit.txt since 4). The checks replay, merge and mutate make
// depend on the version (a record of version 3 is not held to an exit.txt, one of version 2 to
// its fileDigests): before, a record of version 4 edited into a pass (its exec's exit edited
// from 3 to 0 and its outcome to passed) whose version was lowered to 3 was not held to the
// exit.txt still listed beside it, and replayed PASSED. A record of version 1 that keeps its
// results under results (version 2's form) is refused when its file is read (report.Decode:
// once read, a record of version 1 keeps its results there).
func (r *Record) versionContradictions() []string {
	var kept []string
	if r.Version < 2 && r.StepParams != nil {
		kept = append(kept, "stepParams (kept since version 2)")
	}
	if r.Version < 3 && r.StepOptions != nil {
		kept = append(kept, "stepOptions (kept since version 3)")
	}
	if r.Version < 3 && r.FileDigests != nil {
		kept = append(kept, "fileDigests (kept since version 3)")
	}
	if r.Version < 7 && r.Lints != nil {
		kept = append(kept, "lints (kept since version 7)")
	}
	if r.Version < 7 && r.Invocation != nil {
		kept = append(kept, "invocation (kept since version 7)")
	}
	if r.Version < 6 && r.GivenVars != nil {
		kept = append(kept, "givenVars (kept since version 6)")
	}
	if r.Version < 7 {
		for _, a := range r.Artifacts {
			if a != nil && a.Name == schema.ExitArtifact && r.Results[a.Step] == nil && slices.ContainsFunc(r.Steps, func(s *StepRecord) bool { return s != nil && s.Kind == "exec" && or(s.Name, s.Path) == a.Step }) {
				kept = append(kept, fmt.Sprintf("the %s of exec %s, which recorded no result (written since version 7)", schema.ExitArtifact, a.Step))
				break
			}
		}
	}
	if r.Version < 4 {
		execs := map[string]bool{}
		for _, s := range r.Steps {
			if s != nil && s.Kind == "exec" {
				execs[or(s.Name, s.Path)] = true
			}
		}
		for _, a := range r.Artifacts {
			if a != nil && a.Name == schema.ExitArtifact && execs[a.Step] {
				kept = append(kept, fmt.Sprintf("the %s of exec %s (written since version 4)", schema.ExitArtifact, a.Step))
				break
			}
		}
	}
	if len(kept) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("it says it is of version %d, but it keeps %s, which no run of that version wrote: its version was lowered after the run (a record of an older version is held to fewer checks)", r.Version, strings.Join(kept, ", "))}
}

// localBackendSums says a snapshot of labrun's local backend breaks its sums.
const localBackendSums = "breaks the sums labrun's local backend always keeps"

// execArtifactAbsences are the exec results with output whose step the record lists no
// artifact of that output for: an exec streams each of its outputs to an artifact as it runs
// (stdout.txt, stderr.txt), recorded at its first byte, so a step with a stdout has a
// stdout.txt. Before, a record edited into a pass (its exec's stdout changed) with the entry
// of its stdout.txt taken out of its artifacts - the file itself left beside it - replayed and
// merged PASSED: the artifact check reads only the artifacts the record lists. Records of
// version 1 are not checked.
func (r *Record) execArtifactAbsences() []string {
	if r.Version < 2 {
		return nil
	}
	var msgs []string
	for _, name := range sortedResultNames(r) {
		res := r.Results[name]
		if res == nil || res.Kind != "exec" || res.Sampled {
			continue
		}
		var ex schema.ExecResult
		switch v := res.Value.(type) {
		case schema.ExecResult:
			ex = v
		case *schema.ExecResult:
			if v == nil {
				continue
			}
			ex = *v
		default:
			continue
		}
		if r.Version >= 4 && !slices.ContainsFunc(r.Artifacts, func(a *ArtifactRecord) bool { return a != nil && a.Step == name && a.Name == schema.ExitArtifact }) {
			msgs = append(msgs, fmt.Sprintf("step %s: its exec result has exit %s, but the record lists no %s of the step, which an exec that ran writes its exit code to", name, strconv.FormatFloat(ex.Exit, 'f', -1, 64), schema.ExitArtifact))
		}
		for _, o := range []struct{ field, text, file string }{{"stdout", ex.Stdout, "stdout.txt"}, {"stderr", ex.Stderr, "stderr.txt"}} {
			if o.text == "" || slices.ContainsFunc(r.Artifacts, func(a *ArtifactRecord) bool { return a != nil && a.Step == name && a.Name == o.file }) {
				continue
			}
			msgs = append(msgs, fmt.Sprintf("step %s: its exec result has a %s (%s), but the record lists no %s of the step, which an exec writes its %s to as it runs", name, o.field, clipJSON(o.text), o.file, o.field))
		}
	}
	return msgs
}

// repeatContradictions are the repeats whose record holds more rounds than their max, or
// whose rounds (StepRecord.Round, of their first step, in the order they started) are not
// 1, 2, …: a repeat stops at its max (failed), and each round's steps record their round.
// Before, a repeat (max 2) whose until never held, edited into a pass by a third round added
// with the output that makes it hold (its step record, result and stdout.txt), replayed and
// merged PASSED. A repeat's runs are told apart by time (within a repeat that a repeat runs
// again); a record made before rounds were recorded is held to its max alone.
func (r *Record) repeatContradictions() []string {
	var msgs []string
	for _, rp := range r.Steps {
		if rp.Kind != "repeat" || rp.Sample > 0 || rp.Outcome == Skipped {
			continue
		}
		first := rp.Path + ".repeat.steps.0"
		var rounds []*StepRecord
		for _, c := range r.Steps {
			if c.Path == first && c.Sample == 0 && c.Start >= rp.Start && c.Start <= rp.End {
				rounds = append(rounds, c)
			}
		}
		slices.SortStableFunc(rounds, func(a, b *StepRecord) int { return cmp.Compare(a.Start, b.Start) })
		if m := r.repeatMax(rp); m > 0 && len(rounds) > m {
			msgs = append(msgs, fmt.Sprintf("step %s: its repeat stops after its max of %d rounds, but the record holds %d runs of its first step %s between its start and its end", shownStep(rp), m, len(rounds), or(rounds[0].Name, rounds[0].Path)))
			continue
		}
		if !slices.ContainsFunc(rounds, func(c *StepRecord) bool { return c.Round > 0 }) {
			continue // recorded before rounds were
		}
		for i, c := range rounds {
			if c.Round != i+1 {
				var got []string
				for _, c := range rounds {
					got = append(got, strconv.Itoa(c.Round))
				}
				msgs = append(msgs, fmt.Sprintf("step %s: the runs of its first step %s say rounds %s (in the order they started), but a repeat's rounds are 1, 2, … in turn", shownStep(rp), or(c.Name, c.Path), strings.Join(got, ", ")))
				break
			}
		}
	}
	return msgs
}

// repeatMax is the max of the repeat rp as its record keeps it (its stepParams, else its
// summary, "until … (max N)"), 0 when neither says.
func (r *Record) repeatMax(rp *StepRecord) int {
	var p struct {
		Max int `json:"max"`
	}
	if raw, ok := r.StepParams[rp.Path]; ok && json.Unmarshal(raw, &p) == nil && p.Max > 0 {
		return p.Max
	}
	if i := strings.LastIndex(rp.Summary, " (max "); i >= 0 && strings.HasSuffix(rp.Summary, ")") {
		if n, err := strconv.Atoi(rp.Summary[i+len(" (max ") : len(rp.Summary)-1]); err == nil {
			return n
		}
	}
	return 0
}

// FortioTarget says whether target's loads are run by fortio and keep its JSON result
// (fortio.json) whenever they record one: labrun's local target and kube (a target of tests,
// "fake", keeps a stand-in).
func FortioTarget(target string) bool { return target == "local" || target == "kube" }

// loadArtifactAbsences are the load results, on a target whose loads keep fortio's JSON result
// (FortioTarget), whose step the record lists no fortio.json of: a load writes fortio's result
// as an artifact before it records its own (schema.Load.Run), unless fortio's JSON could not
// be written (a warning says so). Before, a record edited into a pass (its load's codes
// changed) with its fortio.json taken out of the artifacts list and the folder replayed and
// merged PASSED: the artifact check compares only the artifacts there are. Records of version
// 1 are not checked.
func (r *Record) loadArtifactAbsences() []string {
	if r.Version < 2 || !FortioTarget(r.Target) {
		return nil
	}
	var msgs []string
	for _, name := range sortedResultNames(r) {
		res := r.Results[name]
		if res == nil || res.Kind != "load" || res.Sampled {
			continue
		}
		l, ok := res.Value.(*LoadRecord)
		if !ok || l == nil || slices.ContainsFunc(l.Warnings, func(w string) bool { return strings.Contains(w, "fortio's JSON result is missing") }) {
			continue
		}
		if slices.ContainsFunc(r.Artifacts, func(a *ArtifactRecord) bool { return a != nil && a.Step == name && a.Name == "fortio.json" }) {
			continue
		}
		msgs = append(msgs, fmt.Sprintf("step %s: it recorded a load result (%s requests), but the record lists no fortio.json of the step, which a load on the %s target writes fortio's result to before it records its own", name, strconv.FormatFloat(l.Requests, 'f', -1, 64), r.Target))
	}
	return msgs
}

// localBackendContradictions are the sums a snapshot of labrun's local backend (source
// "backend <name>") breaks, each with its values; none for other sources. The backend makes
// every snapshot's stats from one reading of its counts (driver/local backend.stats), so
// these hold by construction: rq_Nxx is the sum of its rq_<code> of class N (1 to 5), and
// each stat kept under an Envoy name (http.downstream_rq_5xx) is the stat itself. rq_total
// is not their sum (a request is counted when it arrives, its code when it is answered), but
// a snapshot that counts a request counts a connection and bytes read (read after it), and
// Envoy's stats (kube, an admin or prometheus snapshot) keep none of these by construction:
// neither is checked. A stat absent from the snapshot (a record made before it was kept) is
// not checked.
func localBackendContradictions(sn *SnapshotRecord) []string {
	if sn == nil || !strings.HasPrefix(sn.Source, "backend ") {
		return nil
	}
	var out []string
	var sums [6]float64
	var parts [6][]string
	for k, v := range sn.Counters {
		digits, ok := strings.CutPrefix(k, "rq_")
		code, err := strconv.Atoi(digits)
		if !ok || err != nil || strconv.Itoa(code) != digits {
			continue
		}
		if class := code / 100; class >= 1 && class <= 5 {
			sums[class] += v
			parts[class] = append(parts[class], fmt.Sprintf("%s %s", k, dsl.FormatValue(v)))
		}
	}
	for class := 1; class <= 5; class++ {
		k := fmt.Sprintf("rq_%dxx", class)
		v, ok := sn.Counters[k]
		if !ok || v == sums[class] {
			continue
		}
		sort.Strings(parts[class])
		of := "none"
		if len(parts[class]) > 0 {
			of = strings.Join(parts[class], ", ")
		}
		out = append(out, fmt.Sprintf("%s is %s, but its codes of class %dxx (%s) add up to %s", k, dsl.FormatValue(v), class, of, dsl.FormatValue(sums[class])))
	}
	// A connection is counted when the backend accepts it, and the bytes it reads as it reads
	// them, before the request they carry is counted; rq_total is read first. Before, a
	// series whose last sample was edited to count requests (rq_total, rq_200) on no
	// connection made a wait that timed out hold, and the run replayed PASSED.
	if rq, ok := sn.Counters["rq_total"]; ok && rq > 0 {
		for _, c := range []struct{ k, why string }{
			{"cx_total", "the backend counts a connection when it accepts it, before any request on it"},
			{"cx_rx_bytes_total", "the backend counts the bytes it reads before the request they carry"},
		} {
			if v, ok := sn.Counters[c.k]; ok && v <= 0 {
				out = append(out, fmt.Sprintf("rq_total is %s, but %s is %s: %s", dsl.FormatValue(rq), c.k, dsl.FormatValue(v), c.why))
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(schema.BackendHTTPAliases)) {
		alias := schema.BackendHTTPAliases[k]
		for _, st := range []schema.Stats{sn.Counters, sn.Gauges} {
			v, ok1 := st[k]
			a, ok2 := st[alias]
			if ok1 && ok2 && v != a {
				out = append(out, fmt.Sprintf("%s is %s, but %s, the same count, is %s", alias, dsl.FormatValue(a), k, dsl.FormatValue(v)))
			}
		}
	}
	return out
}

// resultKindContradictions are the results whose kind is not that of the step that recorded
// them (a step records its result under its name, or its path, in its own kind's form): a
// kind edited (or nulled) makes the value read as another kind's, or as plain data. Nor is a
// result's cluster another than its step ran on (the report shows it). Results that no step
// of the record has the name of are not checked.
func (r *Record) resultKindContradictions() []string {
	kinds, clusters := map[string][]string{}, map[string][]string{}
	for _, s := range r.Steps {
		name := or(s.Name, s.Path)
		if !slices.Contains(kinds[name], s.Kind) {
			kinds[name] = append(kinds[name], s.Kind)
		}
		if !slices.Contains(clusters[name], s.Cluster) {
			clusters[name] = append(clusters[name], s.Cluster)
		}
	}
	var msgs []string
	for _, name := range sortedResultNames(r) {
		ks, ok := kinds[name]
		if kind := r.Results[name].Kind; ok && !slices.Contains(ks, kind) {
			msgs = append(msgs, fmt.Sprintf("step %s: its result's kind is %q, but its step's is %s", name, kind, strings.Join(ks, ", ")))
		}
		if c, cs := r.Results[name].Cluster, clusters[name]; ok && !slices.Contains(cs, c) {
			msgs = append(msgs, fmt.Sprintf("step %s: its result's cluster is %q, but its step ran %s", name, c, inCluster(cs[0], nil)))
		}
	}
	return msgs
}

// localBackendAbsences are the stats a snapshot of labrun's local backend lacks that another
// snapshot of the same backend in the record holds, and the backend always has: its catalogue
// (rq_total, cx_total, rq_active, ... and their http.downstream_ names: driver/local
// backend.stats) is in every snapshot from the start, and an rq_<code>, created when the
// backend first answers with that code, is in every snapshot after. rq_total deleted from a
// "before" snapshot read as absent, counted from 0 (stats are created on first use), and
// made a delta the backend never counted. A stat that no snapshot of the backend holds (a
// record made before it was kept) is not checked.
func (r *Record) localBackendAbsences() []string {
	type taken struct {
		what string
		sn   *SnapshotRecord
	}
	bySource := map[string][]taken{}
	for _, name := range sortedResultNames(r) {
		res := r.Results[name]
		switch v := res.Value.(type) {
		case *SnapshotRecord:
			if v != nil && strings.HasPrefix(v.Source, "backend ") {
				bySource[v.Source] = append(bySource[v.Source], taken{name, v})
			}
		case *SeriesRecord:
			if v == nil {
				continue
			}
			for i, sn := range v.Samples {
				if sn != nil && strings.HasPrefix(sn.Source, "backend ") {
					bySource[sn.Source] = append(bySource[sn.Source], taken{fmt.Sprintf("%s (sample %d)", name, i+1), sn})
				}
			}
		}
	}
	isCode := func(k string) bool {
		digits, ok := strings.CutPrefix(k, "rq_")
		code, err := strconv.Atoi(digits)
		return ok && err == nil && strconv.Itoa(code) == digits
	}
	var msgs []string
	for _, src := range slices.Sorted(maps.Keys(bySource)) {
		snaps := bySource[src]
		if len(snaps) < 2 {
			continue
		}
		sort.SliceStable(snaps, func(i, j int) bool { return snaps[i].sn.At.Before(snaps[j].sn.At) })
		for _, kind := range []string{"counter", "gauge"} {
			stats := func(sn *SnapshotRecord) schema.Stats {
				if kind == "counter" {
					return sn.Counters
				}
				return sn.Gauges
			}
			// where each stat is first held, and whether it is of the catalogue
			first := map[string]int{}
			for i, t := range snaps {
				for k := range stats(t.sn) {
					if _, ok := first[k]; !ok {
						first[k] = i
					}
				}
			}
			for i, t := range snaps {
				var missing []string
				for _, k := range slices.Sorted(maps.Keys(first)) {
					if _, ok := stats(t.sn)[k]; ok {
						continue
					}
					holder := first[k]
					if isCode(k) && holder > i {
						continue // created on first use, after this snapshot
					}
					if !isCode(k) {
						// held by another snapshot, earlier or later
						missing = append(missing, fmt.Sprintf("%s %s (step %s's has it, and the backend has it from its start)", kind, k, snaps[holder].what))
					} else {
						missing = append(missing, fmt.Sprintf("%s %s (step %s's, taken before, has it, and the backend never removes a stat)", kind, k, snaps[holder].what))
					}
				}
				if len(missing) > 0 {
					msgs = append(msgs, fmt.Sprintf("step %s: its snapshot of %s lacks the %s", t.what, src, strings.Join(missing, ", the ")))
				}
			}
		}
	}
	return msgs
}

// backendRead is a snapshot of labrun's local backend that a step took once: its step's span
// (offsets on the run's monotonic clock) and what it read.
type backendRead struct {
	what       string
	start, end time.Duration
	sn         *SnapshotRecord
}

// localBackendReads are the reads of each local backend (by source, "backend <name>") whose
// step ran once (a snapshot), or whose series' passed samples are its samples one for one.
func (r *Record) localBackendReads() map[string][]backendRead {
	type read = backendRead
	runs := map[string][]*StepRecord{}
	for _, sr := range r.Steps {
		if sr != nil && sr.Kind == "snapshot" {
			runs[or(sr.Name, sr.Path)] = append(runs[or(sr.Name, sr.Path)], sr)
		}
	}
	bySource := map[string][]read{}
	for _, name := range sortedResultNames(r) {
		res, rs := r.Results[name], runs[name]
		if res == nil || len(rs) == 0 {
			continue
		}
		switch v := res.Value.(type) {
		case *SnapshotRecord:
			if v == nil || res.Sampled || len(rs) != 1 || rs[0].Sample > 0 || !strings.HasPrefix(v.Source, "backend ") {
				continue
			}
			bySource[v.Source] = append(bySource[v.Source], read{name, rs[0].Start, rs[0].End, v})
		case *SeriesRecord:
			if v == nil {
				continue
			}
			var passed []*StepRecord
			for _, sr := range rs {
				if sr.Round > 1 {
					passed = nil
					break
				}
				if sr.Sample > 0 && sr.Outcome == Passed {
					passed = append(passed, sr)
				}
			}
			if len(passed) != len(v.Samples) {
				continue
			}
			for i, sn := range v.Samples {
				if sn != nil && strings.HasPrefix(sn.Source, "backend ") {
					bySource[sn.Source] = append(bySource[sn.Source], read{fmt.Sprintf("%s (sample %d)", name, i+1), passed[i].Start, passed[i].End, sn})
				}
			}
		}
	}
	return bySource
}

// localLoadBackendShortfalls are the loads on the local target that sent every request to one
// local backend (their ips: its address alone) and whose codes that backend, read after the
// load's step ended, did not answer as many of as the load counts, since the backend's last
// read that ended before the load's step started (or its start, where none did): the backend
// counts each request's code as it answers it (rq_<code>), and fortio counts what it got
// back; warm-up requests and other traffic make the backend's count higher, never lower, but
// for the last answer on each of the load's connections (threads), whose code the backend
// counted once its handler had returned, which could be after fortio read the answer, by the
// labruns that wrote records of version 8 and older: a shortfall of up to its connections is
// such a run's. From version 9 on the backend counts a code when the response's header is
// written, before any of it leaves: the load is held to the backend's count exactly (run 40
// times over two loads of 600 requests and 1 s, 16 and 8 connections, bodies of 100 kB, no
// shortfall; before, one code of a load of 4 503s edited to a 200 with the seal computed again
// replayed PASSED, within the allowance). A code outside 100 to 599 (-1: a socket error) is
// not the backend's. Before, a load's 503s
// edited to 200s in the record, fortio.json and codes-over-time.json together (the seal
// computed again) replayed PASSED, the snapshot after it still counting rq_503 4 and no
// rq_200. Records of version 2 or 1 are not held to it.
func (r *Record) localLoadBackendShortfalls() []string {
	if r.Version < 3 || r.Target != "local" {
		return nil
	}
	sources := map[string]string{} // a backend's address → its snapshots' source
	if bs, ok := r.TargetValues["backends"].(map[string]any); ok {
		for name, v := range bs {
			if m, ok := v.(map[string]any); ok {
				if a, ok := m["address"].(string); ok && a != "" {
					sources[a] = "backend " + name
				}
			}
		}
	}
	if len(sources) == 0 {
		return nil
	}
	runs := map[string][]*StepRecord{}
	for _, sr := range r.Steps {
		if sr != nil && sr.Kind == "load" {
			runs[or(sr.Name, sr.Path)] = append(runs[or(sr.Name, sr.Path)], sr)
		}
	}
	reads := r.localBackendReads()
	var msgs []string
	for _, name := range sortedResultNames(r) {
		res, rs := r.Results[name], runs[name]
		if res == nil || res.Kind != "load" || res.Sampled || len(rs) != 1 || rs[0].Round > 1 || rs[0].Sample > 0 {
			continue
		}
		l, ok := res.Value.(*LoadRecord)
		if !ok || l == nil || l.Partial != "" || len(l.IPs) != 1 {
			continue
		}
		src := sources[slices.Collect(maps.Keys(l.IPs))[0]]
		if src == "" {
			continue
		}
		var before, after *backendRead
		for i := range reads[src] {
			x := &reads[src][i]
			if x.end < rs[0].Start && (before == nil || x.end > before.end) {
				before = x
			}
			if x.start > rs[0].End && (after == nil || x.start < after.start) {
				after = x
			}
		}
		if after == nil || len(localBackendContradictions(after.sn)) > 0 || before != nil && len(localBackendContradictions(before.sn)) > 0 {
			continue // a snapshot that breaks its own sums is refused for that
		}
		if c := socketShortfall(name, src, l, before, after); c != "" {
			msgs = append(msgs, c)
		}
		if c := warmupShortfall(name, src, l, r.StepParams[rs[0].Path], before, after); c != "" {
			msgs = append(msgs, c)
		}
		for _, k := range slices.Sorted(maps.Keys(l.Codes)) {
			if code, err := strconv.Atoi(k); err != nil || code < 100 || code > 599 {
				continue
			}
			if _, ok := after.sn.Counters["rq_"+k]; !ok && before != nil && before.sn.Counters["rq_"+k] > 0 {
				continue // a stat taken out after it was held: localBackendAbsences says so
			}
			since, from := after.sn.Counters["rq_"+k], "its start"
			if before != nil {
				if before.sn.Counters["rq_"+k] > since {
					continue // a counter lower than before: localBackendDecreases says so
				}
				since -= before.sn.Counters["rq_"+k]
				from = fmt.Sprintf("step %s's read, which ended before the load started", before.what)
			}
			if r.Version >= 9 && since < l.Codes[k] {
				msgs = append(msgs, fmt.Sprintf("step %s: its load sent every request to %s (%s) and counts %s answered %s, but step %s's snapshot of it, taken after the load, counts %s rq_%s since %s: the backend counts each code it answers before the answer leaves it (records of version 9 on), at least as many as the load got", name, src, slices.Collect(maps.Keys(l.IPs))[0], dsl.FormatValue(l.Codes[k]), k, after.what, dsl.FormatValue(since), k, from))
				break
			}
			if since+max(l.Connections, 1) < l.Codes[k] {
				msgs = append(msgs, fmt.Sprintf("step %s: its load sent every request to %s (%s) and counts %s answered %s, but step %s's snapshot of it, taken after the load, counts %s rq_%s since %s: the backend counts each code it answers, as many as the load got but at most one per connection (%s) still to count when the load ended", name, src, slices.Collect(maps.Keys(l.IPs))[0], dsl.FormatValue(l.Codes[k]), k, after.what, dsl.FormatValue(since), k, from, dsl.FormatValue(max(l.Connections, 1))))
				break
			}
		}
	}
	return msgs
}

// socketShortfall says how a load that sent every request to one local backend opened more
// connections (sockets) than that backend accepted between its read before the load and its
// read after: fortio's client opens a connection when it is about to send a request on it,
// and the backend counts one (cx_total) when it accepts it, before it reads what it carries.
// Before, a load of 4 requests on 1 connection, kept alive, whose sockets were edited to 4
// (its fortio.json's SocketCount and ips with them; the seal computed again) replayed PASSED
// fortio.sockets == 4, the snapshots counting 1 connection between them (seen equal in 70
// runs of loads of 16 and 8 connections that reconnect after each 503).
func socketShortfall(name, src string, l *LoadRecord, before, after *backendRead) string {
	if l.Sockets <= 0 {
		return ""
	}
	cx, from, ok := counterSince("cx_total", before, after)
	if !ok {
		return ""
	}
	if cx >= l.Sockets {
		return ""
	}
	return fmt.Sprintf("step %s: its load sent every request to %s and opened %s connections (sockets), but step %s's snapshot of it, taken after the load, counts %s cx_total since %s: the backend counts each connection it accepts, before it reads a request on it", name, src, dsl.FormatValue(l.Sockets), after.what, dsl.FormatValue(cx), from)
}

// localLoadAddresses are the loads on the local target whose URL, as their step wrote it
// (stepParams), is a local backend's (${backends.<name>.url}…), and whose ips (the addresses
// fortio connected to) name another address than that backend's: fortio connects to the
// address the URL gives, and the backend's is an IP and a port, which no DNS resolves
// otherwise. Before, a load of 4 503s from backend a edited to 200s, its ips (and fortio.json's
// IPCountMap) moved to 127.0.0.1:1, the seal computed again, replayed PASSED: the rule that
// holds a load to its backend's counts (localLoadBackendShortfalls) looked for the backend by
// the load's ips.
func (r *Record) localLoadAddresses() []string {
	if r.Version < 3 || r.Target != "local" {
		return nil
	}
	bs, _ := r.TargetValues["backends"].(map[string]any)
	var msgs []string
	for _, sr := range r.Steps {
		if sr == nil || sr.Kind != "load" || sr.Name == "" || len(r.StepParams[sr.Path]) == 0 {
			continue
		}
		res := r.Results[sr.Name]
		if res == nil || res.Kind != "load" || res.Sampled {
			continue
		}
		l, ok := res.Value.(*LoadRecord)
		if !ok || l == nil || len(l.IPs) == 0 {
			continue
		}
		var p struct {
			URL string `json:"url"`
		}
		if json.Unmarshal(r.StepParams[sr.Path], &p) != nil {
			continue
		}
		rest, ok := strings.CutPrefix(p.URL, "${backends.")
		if !ok {
			continue
		}
		name, tail, ok := strings.Cut(rest, ".url}")
		if !ok || tail != "" && tail[0] != '/' && tail[0] != '?' {
			continue
		}
		b, _ := bs[name].(map[string]any)
		addr, _ := b["address"].(string)
		if host, _, err := net.SplitHostPort(addr); err != nil || net.ParseIP(host) == nil {
			continue // a name: fortio's ips give the address it resolved to
		}
		for _, ip := range slices.Sorted(maps.Keys(l.IPs)) {
			if ip != addr {
				msgs = append(msgs, fmt.Sprintf("step %s: its load's URL is backend %s's (%s), but its ips name %s, not the backend's address %s: fortio connects to the address the URL gives", sr.Name, name, p.URL, ip, addr))
				break
			}
		}
		if c := delayShortfall(sr.Name, name, p.URL, l); c != "" {
			msgs = append(msgs, c)
		}
		if c := statusContradiction(sr.Name, name, p.URL, l); c != "" {
			msgs = append(msgs, c)
		}
	}
	return msgs
}

// statusContradiction says how a load from a local backend's URL whose ?status= answers every
// request with one code (no percentages; fortio's echo) records an answer of another code:
// the backend answers each request so (its snapshots count what it answered, and can be
// edited with the load). Before, a load through ?status=503 whose 503s were edited to 200s
// in the record, fortio.json, codes-over-time.json and the backend's snapshot after it (rq_503
// and rq_5xx moved to rq_200 and rq_2xx; the seal computed again) replayed PASSED.
func statusContradiction(step, backend, rawURL string, l *LoadRecord) string {
	_, query, ok := strings.Cut(rawURL, "?")
	if !ok || l.Partial != "" {
		return ""
	}
	q, err := url.ParseQuery(query)
	if err != nil || !q.Has("status") {
		return ""
	}
	want := q.Get("status")
	if code, err := strconv.Atoi(want); err != nil || code < 100 || code > 599 {
		return "" // a distribution (503:50), or no code fortio's echo answers with
	}
	for _, k := range slices.Sorted(maps.Keys(l.Codes)) {
		if k == "400" && q.Has("delay") {
			continue // the backend refuses a delay above its maxDelay with a 400, before the echo
		}
		if k != want && k != "-1" && l.Codes[k] > 0 {
			return fmt.Sprintf("step %s: its load's URL has backend %s answer every request %s (?status=%s), but the load counts %s answered %s", step, backend, want, want, dsl.FormatValue(l.Codes[k]), k)
		}
	}
	return ""
}

// delayShortfall says how a load from a local backend's URL whose ?delay= holds every
// request (one duration, no percentages) records a latency (min) under that delay: the
// backend waits the delay before it answers, and fortio times each request from before it
// sends it to the end of the answer. A load with a socket error (the client gave up, an
// abandoned request) is not held to it. Before, a load through ?delay=20ms whose latencies
// were edited to about 2.5 ms in the record and fortio.json (its buckets, percentiles, min,
// max, sum and average together; the seal computed again) replayed PASSED fortio.max < 10.
func delayShortfall(step, backend, rawURL string, l *LoadRecord) string {
	_, query, ok := strings.Cut(rawURL, "?")
	if !ok || l.Partial != "" || l.Requests <= 0 || l.Codes["-1"] > 0 || l.Codes["400"] > 0 {
		return "" // a 400: the backend refused the delay (above its maxDelay) at once
	}
	q, err := url.ParseQuery(query)
	if err != nil || !q.Has("delay") {
		return ""
	}
	choices, err := schema.ParseDelay(q.Get("delay"))
	if err != nil || len(choices) != 1 || choices[0].Percent != 100 {
		return ""
	}
	d := float64(choices[0].Delay) / float64(time.Millisecond)
	if l.Min >= d-1e-6 {
		return ""
	}
	return fmt.Sprintf("step %s: its load's URL holds every request backend %s answers for %s (?delay=%s), but its shortest latency (min) is %s: the backend waits that long before it answers, and fortio times each request to its answer", step, backend, dsl.WithUnit(d, "ms"), q.Get("delay"), dsl.WithUnit(l.Min, "ms"))
}

// warmupShortfall says how a load of a duration (its step's parameters, params, give no
// requests) that sent every request to one local backend, none of them a socket error, made
// more requests with its warm-up than that backend counted (rq_total) between its reads
// around the load: fortio first sends one warm-up request per connection that it does not
// count, and the backend counts every request it is handed, warm-up or not, as it starts to
// answer it. Before, a load of 50 qps for 1 s on 2 connections whose backend's snapshot after
// it was edited from 52 requests (rq_total, rq_200, rq_2xx and their dotted names) to 50
// replayed PASSED delta.rq_total == fortio.requests, the claim the warmup-uncounted lint
// warns fails on a correct run.
func warmupShortfall(name, src string, l *LoadRecord, params json.RawMessage, before, after *backendRead) string {
	var p schema.Load
	if len(params) == 0 || json.Unmarshal(params, &p) != nil || p.Requests > 0 || p.From != nil && p.From.Pods > 0 || l.Codes["-1"] > 0 || l.Requests <= 0 {
		return ""
	}
	total, from, ok := counterSince("rq_total", before, after)
	if !ok {
		return ""
	}
	if total >= l.Requests+l.Connections {
		return ""
	}
	return fmt.Sprintf("step %s: its load of a duration sent every request to %s, %s of them and a warm-up request on each of its %s connections, which fortio sends first and does not count, but step %s's snapshot of it, taken after the load, counts %s rq_total since %s: the backend counts every request it answers, warm-up or not", name, src, dsl.FormatValue(l.Requests), dsl.FormatValue(l.Connections), after.what, dsl.FormatValue(total), from)
}

// localBackendDecreases are the counters of labrun's local backend (source "backend <name>")
// that a snapshot holds lower than a snapshot of the same backend whose step ended before its
// step started: the backend counts each stat up from its start and never resets it (only
// gauges go down), so a read that followed another holds at least its counts. Before, the
// local backend's snapshots had no artifact and no check between them: a failed run whose
// after snapshot was edited from rq_503 9 to 0 (rq_5xx, rq_200 and rq_2xx with it, its
// expectation's values and the outcomes) replayed PASSED, while the samples of a series taken
// before it still counted 503s. Which read came first is told by the steps' spans (offsets on
// the run's monotonic clock), not by the snapshots' moments, taken just before each read: two
// snapshots of steps that overlap (a sampler beside a snapshot) are not compared. A step that
// ran more than once (a repeat's rounds) is not compared, nor a series whose passed samples
// are not its samples one for one.
func (r *Record) localBackendDecreases() []string {
	bySource := r.localBackendReads()
	var msgs []string
	for _, src := range slices.Sorted(maps.Keys(bySource)) {
		reads := bySource[src]
		byEnd := slices.Clone(reads)
		sort.SliceStable(byEnd, func(i, j int) bool { return byEnd[i].end < byEnd[j].end })
		sort.SliceStable(reads, func(i, j int) bool { return reads[i].start < reads[j].start })
		// high is each counter's highest value over the reads that ended before the one
		// judged started, and which read held it.
		high := map[string]float64{}
		holder := map[string]string{}
		next := 0
		for _, y := range reads {
			for ; next < len(byEnd) && byEnd[next].end < y.start; next++ {
				for k, v := range byEnd[next].sn.Counters {
					if h, ok := high[k]; !ok || v > h {
						high[k], holder[k] = v, byEnd[next].what
					}
				}
			}
			for _, k := range slices.Sorted(maps.Keys(y.sn.Counters)) {
				if h, ok := high[k]; ok && y.sn.Counters[k] < h {
					msgs = append(msgs, fmt.Sprintf("step %s: its snapshot of %s has counter %s = %s, but step %s's, which ended before it started, has %s: the backend's counters never go down", y.what, src, k, dsl.FormatValue(y.sn.Counters[k]), holder[k], dsl.FormatValue(h)))
					break
				}
			}
		}
		// A gauge counts requests (connections) in flight, each counted in rq_total (cx_total)
		// before it is in the gauge: a read that started after another ended counts at least
		// as many as the other's gauge (rq_total of a read in the same snapshot is read
		// first, and is not compared). A gauge edited up (a series' max.rq_active raised to
		// show concurrency) beyond what the backend had received is refused; one edited down
		// is not seen: nothing the run kept bounds it from below.
	gauges:
		for _, y := range reads {
			for _, g := range [][3]string{{"rq_active", "rq_total", "request"}, {"cx_active", "cx_total", "connection"}} {
				v, ok := y.sn.Gauges[g[0]]
				if !ok {
					continue
				}
				for _, z := range reads {
					if c, ok := z.sn.Counters[g[1]]; ok && z.start > y.end && v > c {
						msgs = append(msgs, fmt.Sprintf("step %s: its snapshot of %s has gauge %s = %s, but step %s's, which started after it ended, has counter %s = %s: the backend counts a %s in %s before it counts it in %s, so no later read counts fewer", y.what, src, g[0], dsl.FormatValue(v), z.what, g[1], dsl.FormatValue(c), g[2], g[1], g[0]))
						break gauges
					}
				}
			}
		}
	}
	return msgs
}

// timeSlack is how far two accounts of one moment or one duration in a record may differ: the
// steps' times are offsets on the monotonic clock, a load's start and end and a snapshot's
// moment are wall-clock times, and fortio measures a load's duration itself. 20 ms and 1 % of
// the time compared, far less than any edit that changes what an expression reads of them.
func timeSlack(d time.Duration) time.Duration {
	if d < 0 {
		d = -d
	}
	return 20*time.Millisecond + d/100
}

// timeContradictions are the times a record holds twice that disagree: a load's duration (as
// fortio measured it) and its start and end against the span of the step that ran it, a
// snapshot's moment against its step's span. The step's start and end are what started.<step>
// and ended.<step> read: a step's end edited to start + 50 ms while its load records 0.41 s
// would judge a load that never ran so fast. A result is checked against the executions of
// its step (by name; several for a step in a repeat or a sampler): one of them must hold it.
// Results without times (records made before they were kept) are not checked.
func (r *Record) timeContradictions() []string {
	if r.Start.IsZero() {
		return nil
	}
	byName := map[string][]*StepRecord{}
	for _, s := range r.Steps {
		if s.Outcome == "" {
			continue // still running: no end
		}
		name := s.Name
		if name == "" {
			name = s.Path
		}
		byName[name] = append(byName[name], s)
	}
	var msgs []string
	for _, name := range sortedResultNames(r) {
		res := r.Results[name]
		if res == nil || res.Sampled {
			continue
		}
		steps := byName[name]
		if len(steps) == 0 {
			continue
		}
		var why string
		holds := func(check func(s *StepRecord) string) {
			why = ""
			for _, s := range steps {
				w := check(s)
				if w == "" {
					why = ""
					return
				}
				if why == "" {
					why = w
				}
			}
		}
		span := func(s *StepRecord) string {
			return fmt.Sprintf("its step started at %s and ended at %s (%s)", secs(s.Start), secs(s.End), secs(s.End-s.Start))
		}
		switch v := res.Value.(type) {
		case *LoadRecord:
			if v == nil {
				continue
			}
			// labrun reads the load's start before fortio starts and its end after fortio
			// ends: fortio's duration is within them.
			if d, ran := time.Duration(v.DurationS*float64(time.Second)), v.End.Sub(v.Start); !v.Start.IsZero() && !v.End.IsZero() && d > ran+timeSlack(ran) {
				msgs = append(msgs, fmt.Sprintf("step %s: its load's duration is %s, but its load ran from %s to %s (%s)", name, secs(d), secs(v.Start.Sub(r.Start)), secs(v.End.Sub(r.Start)), secs(ran)))
			}
			holds(func(s *StepRecord) string {
				d := time.Duration(v.DurationS * float64(time.Second))
				if v.DurationS > 0 && s.End-s.Start < d-timeSlack(d) {
					return fmt.Sprintf("%s, shorter than the load it ran, whose duration is %s", span(s), secs(d))
				}
				if v.Start.IsZero() || v.End.IsZero() {
					return ""
				}
				from, to := v.Start.Sub(r.Start), v.End.Sub(r.Start)
				if from < s.Start-timeSlack(s.Start) || to > s.End+timeSlack(s.End) {
					return fmt.Sprintf("%s, but its load ran from %s to %s", span(s), secs(from), secs(to))
				}
				return ""
			})
		case *SnapshotRecord:
			if v == nil || v.At.IsZero() {
				continue
			}
			holds(func(s *StepRecord) string {
				at := v.At.Sub(r.Start)
				if at < s.Start-timeSlack(s.Start) || at > s.End+timeSlack(s.End) {
					return fmt.Sprintf("%s, but its snapshot was taken at %s", span(s), secs(at))
				}
				return ""
			})
		}
		if why != "" {
			msgs = append(msgs, fmt.Sprintf("step %s: %s", name, why))
		}
	}
	return msgs
}

// seriesContradictions are the series whose samples disagree with the executions of the step
// that sampled them (a StepRecord per sample, numbered): each sample that passed recorded one
// sample, which it took between its start and its end, and a sample that did not pass recorded
// none, or one before it failed. A series with samples deleted (12 → 6, those that broke an
// expectation) while the steps keep a record of each would judge data no run recorded.
// Records whose steps number no samples (made before they were) are not checked.
func (r *Record) seriesContradictions() []string {
	var msgs []string
	for _, name := range sortedResultNames(r) {
		res := r.Results[name]
		ser, ok := res.Value.(*SeriesRecord)
		if !ok || ser == nil || !res.Sampled {
			continue
		}
		var samples, passedSamples []*StepRecord
		for _, s := range r.Steps {
			if s.Sample > 0 && or(s.Name, s.Path) == name {
				samples = append(samples, s)
				if s.Outcome == Passed && s.ExpectedError == "" {
					passedSamples = append(passedSamples, s)
				}
			}
		}
		passed := len(passedSamples)
		if len(samples) == 0 {
			continue
		}
		switch n := len(ser.Samples); {
		case n < passed:
			msgs = append(msgs, fmt.Sprintf("step %s: its series holds %s, but its step records %s that passed, each of which recorded one", name, countOf(n, "sample"), countOf(passed, "sample")))
			continue
		case n > len(samples):
			msgs = append(msgs, fmt.Sprintf("step %s: its series holds %s, but its step records %s, each of which recorded at most one", name, countOf(n, "sample"), countOf(len(samples), "sample")))
			continue
		}
		if r.Start.IsZero() {
			continue
		}
		msgs = append(msgs, r.viewContradictions(name, ser, passedSamples)...)
		// One message for the series: a series moved in time (mutate's step 1 s late) has
		// every sample out of its step's, and a message each was a line of thousands.
		var out []int
		var first, last time.Duration
		for i, sn := range ser.Samples {
			if sn.At.IsZero() {
				continue
			}
			at := sn.At.Sub(r.Start)
			if !slices.ContainsFunc(samples, func(s *StepRecord) bool {
				return at >= s.Start-timeSlack(s.Start) && (s.Outcome == "" || at <= s.End+timeSlack(s.End))
			}) {
				if len(out) == 0 {
					first = at
				}
				out, last = append(out, i+1), at
			}
		}
		switch {
		case len(out) == 1:
			msgs = append(msgs, fmt.Sprintf("step %s: sample %d of its series was taken at %s, but none of its step's samples ran then", name, out[0], secs(first)))
		case len(out) > 1:
			msgs = append(msgs, fmt.Sprintf("step %s: samples %s of its series were taken from %s to %s, but none of its step's samples ran then", name, numberRanges(out), secs(first), secs(last)))
		}
	}
	return msgs
}

// secs writes a time of the run in seconds, with at most 4 significant digits.
func secs(d time.Duration) string { return dsl.WithUnit(d.Seconds(), "s") }

// numberRanges writes ascending numbers with their runs joined: 1 to 4, 7 and 9 to 12.
func numberRanges(ns []int) string {
	var parts []string
	for i := 0; i < len(ns); {
		j := i
		for j+1 < len(ns) && ns[j+1] == ns[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d to %d", ns[i], ns[j]))
		} else {
			parts = append(parts, strconv.Itoa(ns[i]))
		}
		i = j + 1
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// viewContradictions are the views of series ser (of step name, whose samples that passed
// are passed) that no run records: a view from a sample on (From > 0) begins a repeat's round,
// when the first step of the repeat's round 2 or later started, at a sample of another round
// than the one before it, and splits the samples at its moment (those before From taken
// before it, the rest after); a view of every sample (From 0) is taken at a repeat's end. Replay judges a round's
// until and waits over the samples a view gives (SeenAt): a view moved, or its From, would
// judge them over other samples than the run's (a wait of round 2 over round 1's).
func (r *Record) viewContradictions(name string, ser *SeriesRecord, passed []*StepRecord) []string {
	var msgs []string
	// rounds are the places in the samples where a round begins: a sample of another round
	// than the one before, or counted from 1 again (its repeat ran again).
	rounds := map[int]bool{}
	for k := 1; k < len(passed); k++ {
		if passed[k].Round != passed[k-1].Round || passed[k].Sample <= passed[k-1].Sample {
			rounds[k] = true
		}
	}
	if len(ser.Views) == 0 {
		return nil
	}
	// roundStarts are when a repeat's round 2 or later started: its first step's start.
	firsts := map[string]bool{}
	for _, s := range r.Steps {
		if s.Kind == "repeat" {
			firsts[s.Path+".repeat.steps.0"] = true
		}
	}
	var roundStarts []time.Duration
	for _, c := range r.Steps {
		if firsts[c.Path] && c.Sample == 0 && c.Round >= 2 {
			roundStarts = append(roundStarts, c.Start)
		}
	}
	near := func(d, at time.Duration) bool { return d >= at-timeSlack(at) && d <= at+timeSlack(at) }
	for i, v := range ser.Views {
		at := v.At.Sub(r.Start)
		say := func(format string, args ...any) {
			msgs = append(msgs, fmt.Sprintf("step %s: view %d of its series (from sample %d at %s) ", name, i+1, v.From+1, at)+fmt.Sprintf(format, args...))
		}
		switch {
		case v.From < 0 || v.From > len(ser.Samples):
			say("reads from a sample the series does not hold (it holds %s)", countOf(len(ser.Samples), "sample"))
			continue
		case i > 0 && v.At.Before(ser.Views[i-1].At):
			say("comes before view %d, at %s: views are taken in order", i, ser.Views[i-1].At.Sub(r.Start))
			continue
		case v.From == 0:
			if !slices.ContainsFunc(r.Steps, func(s *StepRecord) bool { return s.Kind == "repeat" && s.Outcome != "" && near(s.End, at) }) {
				say("reads every sample, but no repeat ended then: a series reads every round's samples from its repeat's end on")
			}
			continue
		}
		if !slices.ContainsFunc(roundStarts, func(d time.Duration) bool { return near(d, at) }) {
			say("begins a round, but no repeat's round 2 or later started then")
			continue
		}
		if len(passed) == len(ser.Samples) && v.From < len(passed) && !rounds[v.From] {
			say("begins a round, but its step's samples %d and %d are of one round", v.From, v.From+1)
			continue
		}
		for k, sn := range ser.Samples {
			if sn.At.IsZero() {
				continue
			}
			if k < v.From && sn.At.After(v.At) || k >= v.From && sn.At.Before(v.At) {
				say("splits the samples there, but sample %d was taken at %s", k+1, sn.At.Sub(r.Start))
				break
			}
		}
	}
	return msgs
}

// ClockAbsences say where the record lacks a time every run records (start, end, stepsStart:
// labrun has written them since its first record, a run refused before its steps included)
// or ends before it starts. Before, a record whose start was taken out replayed PASSED
// ("recorded 0001-01-01") and merge, which places a record among its labrun run's others by
// its start, skipped it: another labrun run's passed record, the invocation copied in and its
// start taken out, stood for a failed run. Asked of a record read from its file
// (report.Decode), not of the records tests and mutate make in memory.
//
// Records of version 1 are not held to it: the scenarios package's fixtures are written in
// version 1's form without a clock, and a record of version 1 is held to fewer checks anyway
// (versionContradictions: a later record's version lowered is refused).
func (r *Record) ClockAbsences() []string {
	if r.Version < 2 {
		return nil
	}
	var msgs []string
	for _, f := range []struct {
		field string
		t     time.Time
	}{{"start", r.Start}, {"end", r.End}, {"stepsStart", r.StepsStart}} {
		if f.t.IsZero() {
			msgs = append(msgs, fmt.Sprintf("it keeps no %s (when its run %s): every run's record keeps it", f.field, clockWords[f.field]))
		}
	}
	if !r.Start.IsZero() && !r.End.IsZero() && r.End.Before(r.Start) {
		msgs = append(msgs, fmt.Sprintf("it ends (end) at %s, %s before it started (start) at %s", r.End.UTC().Format(time.RFC3339Nano), r.Start.Sub(r.End), r.Start.UTC().Format(time.RFC3339Nano)))
	}
	return msgs
}

// clockWords say what each of a record's times is.
var clockWords = map[string]string{"start": "started", "end": "ended", "stepsStart": "began its steps"}

// phaseContradictions are the times of a record that its phases' order does not hold
// (each with timeSlack, as the steps' offsets are on the monotonic clock and the phases'
// instants on the wall clock): every step that ended ended before the run did (the run's end
// is taken after its cleanup, which joins every step); the steps phase starts (stepsStart)
// within the run, after every step of the setup ended (the setup joins its background steps
// too) and before any step of the steps, catch and cleanup phases starts. stepsStart moved
// later so that ended.<step>, which counts from it, reads less was accepted. Records without
// a start or an end are not checked; nor is stepsStart when the run did not reach its steps.
// A step of the steps or catch phase that passed or failed ended before any step of a later
// phase started (a phase joins the background steps it started; one cancelled may have been
// abandoned, its end recorded late): before, a background step's end moved past the start of
// a cleanup step, so that a claim that it still ran then held, replayed PASSED.
func (r *Record) phaseContradictions() []string {
	msgs := r.phaseJoinContradictions()
	if r.Start.IsZero() || r.End.IsZero() {
		return msgs
	}
	end := r.End.Sub(r.Start)
	say := func(s *StepRecord, format string, args ...any) {
		msgs = append(msgs, fmt.Sprintf("step %s: its record contradicts itself: ", shownStep(s))+fmt.Sprintf(format, args...))
	}
	steps := time.Duration(-1)
	if !r.StepsStart.IsZero() {
		steps = r.StepsStart.Sub(r.Start)
		if steps < -timeSlack(0) || steps > end+timeSlack(end) {
			msgs = append(msgs, fmt.Sprintf("its steps phase starts (stepsStart) at %s, outside the run, which started at 0s and ended at %s", steps, end))
			steps = -1
		}
	}
	for _, s := range r.Steps {
		if s.Outcome == "" {
			continue // still running: no end
		}
		if s.End > end+timeSlack(end) {
			say(s, "it ends at %s, after the run's end at %s", s.End, end)
		}
		if steps < 0 {
			continue
		}
		switch s.Phase {
		case dsl.PhaseSetup:
			if s.End > steps+timeSlack(steps) {
				say(s, "it is a step of the setup and ends at %s, after the steps phase's start (stepsStart) at %s", s.End, steps)
			}
		case dsl.PhaseSteps, dsl.PhaseCatch, dsl.PhaseCleanup:
			if s.Start < steps-timeSlack(steps) {
				say(s, "it is a step of the %s phase and starts at %s, before that phase's start (stepsStart) at %s", s.Phase, s.Start, steps)
			}
		}
	}
	return msgs
}

// phaseJoinContradictions say where a step of the steps or catch phase that passed or failed
// ended after a step of a later phase started (see phaseContradictions; the setup is held to
// stepsStart there). Both are offsets on the run's clock.
func (r *Record) phaseJoinContradictions() []string {
	first := map[dsl.Phase]*StepRecord{} // the first step of each phase to start
	for _, s := range r.Steps {
		if s.Outcome == "" || s.Outcome == Skipped && s.Start == s.End {
			continue // still running, or settled without running
		}
		if f := first[s.Phase]; f == nil || s.Start < f.Start {
			first[s.Phase] = s
		}
	}
	var msgs []string
	for _, s := range r.Steps {
		if s.Outcome != Passed && s.Outcome != Failed || s.Phase != dsl.PhaseSteps && s.Phase != dsl.PhaseCatch {
			continue
		}
		var next *StepRecord // the first step of a later phase to start
		for ph, f := range first {
			if phaseRank[ph] > phaseRank[s.Phase] && (next == nil || f.Start < next.Start) {
				next = f
			}
		}
		if next != nil && s.End > next.Start {
			ended, started := apartSecs(s.End, next.Start)
			msgs = append(msgs, fmt.Sprintf("step %s: its record contradicts itself: it is a step of the %s phase and ends at %s, after step %s of the %s phase started (at %s): a phase ends once the background steps it started have", shownStep(s), s.Phase, ended, shownStep(next), next.Phase, started))
		}
	}
	return msgs
}

// endedEarlyContradictions are the process steps whose record says their process ended on its
// own with a failure before the cleanup (EndedEarlyWarning) in a record that does not say
// what such a run says: its outcome is an error (not passed or failed: the runner makes it
// one), and its cleanup says the process had ended.
func (r *Record) endedEarlyContradictions() []string {
	var msgs []string
	for _, s := range r.Steps {
		for _, w := range s.Warnings {
			msg, ok := strings.CutPrefix(w, EndedEarlyWarning)
			if !ok {
				continue
			}
			var cs []string
			if r.Outcome == Passed || r.Outcome == Failed {
				cs = append(cs, fmt.Sprintf("which makes the run an error, but the run's outcome is %s", r.Outcome))
			}
			if !slices.Contains(r.Cleanup, msg) {
				cs = append(cs, "and its cleanup does not say so")
			}
			if len(cs) > 0 {
				msgs = append(msgs, fmt.Sprintf("step %s: its record contradicts itself: it records that its process ended on its own (%s), %s", shownStep(s), msg, strings.Join(cs, "; ")))
			}
		}
	}
	return msgs
}

// leftoverContradictions are where a record's leftovers and its cleanup disagree: the run
// writes each thing its cleanup left (failed to remove, abandoned, not waited for) as a line
// of its cleanup and in its leftovers, together, and a run that left something exits 4.
// Before, a record whose leftovers were taken out (the line "failed to remove ConfigMap
// lab/c (3 attempts): …" still in its cleanup) replayed and merged as a clean run, exit 0. A
// record whose line is taken out too, or edited into "removed ConfigMap lab/c", says nothing
// against itself: the cleanup's lines are the only evidence of what it removed. A record of
// version 2 or 1 is not held to it: leftovers came in beside version 2, and some of its runs
// wrote the lines alone.
func (r *Record) leftoverContradictions() []string {
	if r.Version < 3 {
		return nil
	}
	left := slices.Clone(r.Leftovers)
	var msgs []string
	for _, line := range r.Cleanup {
		if !leftoverLine(line, "") {
			continue
		}
		i := slices.IndexFunc(left, func(what string) bool { return leftoverLine(line, what) })
		if i < 0 {
			msgs = append(msgs, fmt.Sprintf("its cleanup says %q, but its leftovers do not name what it left", line))
			continue
		}
		left = slices.Delete(left, i, i+1)
	}
	for _, what := range left {
		msgs = append(msgs, fmt.Sprintf("its leftovers name %s, but its cleanup does not say that it left it", what))
	}
	if len(msgs) > 0 {
		msgs[len(msgs)-1] += " (a run records what its cleanup left in both, and exits 4)"
	}
	return msgs
}

// processCleanupAbsences are the process steps that passed (their process started) of which
// the record's cleanup says nothing: the automatic cleanup stops every process a step started
// and writes a line that names it ("removed process srv", "process srv had already ended: …",
// "already gone: process srv" after a kill, "failed to remove process srv: …", "abandoned:
// process srv"). Before, a run whose process ended on its own with a failure (an error, exit
// 3), its cleanup line and its step's "ended early" warning taken out with the run's error,
// replayed PASSED. Records of version 2 or 1 are not held to it, as to their leftovers.
func (r *Record) processCleanupAbsences() []string {
	if r.Version < 3 {
		return nil
	}
	var msgs []string
	said := map[string]bool{}
	for _, s := range r.Steps {
		if s == nil || s.Kind != "process" || s.Outcome != Passed {
			continue
		}
		what := "process " + or(s.Name, s.Path)
		if said[what] || slices.ContainsFunc(r.Cleanup, func(line string) bool { return namesThing(line, what) }) {
			continue
		}
		said[what] = true
		msgs = append(msgs, fmt.Sprintf("step %s started its process, but the record's cleanup says nothing of %s: the cleanup stops every process a step started, and writes a line that names it (removed, had already ended, already gone, failed to remove, abandoned)", shownStep(s), what))
	}
	return msgs
}

// namespaceCleanupAbsences are the run's ephemeral namespaces (Namespaces), in a record whose
// steps ran, of which its cleanup says nothing: the run makes them before its setup (no step
// runs unless it made them all), and its automatic cleanup removes each and writes a line that
// names it ("removed ephemeral Namespace app-1a2b (its deletion is not waited for)", kept with
// --keep, already gone, failed to remove, abandoned). Before, a kube run whose cleanup could not
// remove its namespace, its cleanup and leftovers both taken out, replayed as a clean run (exit
// 0 where the run exited 4): the record does not keep what its apply steps created, but it
// keeps its namespaces. Records of version 2 or 1 are not held to it, as to their leftovers.
func (r *Record) namespaceCleanupAbsences() []string {
	if r.Version < 3 || len(r.Steps) == 0 {
		return nil
	}
	var msgs []string
	for _, key := range slices.Sorted(maps.Keys(r.Namespaces)) {
		name := r.Namespaces[key]
		what := "ephemeral Namespace " + name
		if name == "" || slices.ContainsFunc(r.Cleanup, func(line string) bool { return namesThing(line, what) }) {
			continue
		}
		msgs = append(msgs, fmt.Sprintf("its steps ran, so the run made its ephemeral namespace %s (ns.%s) before them, but the record's cleanup says nothing of it: the cleanup removes every ephemeral namespace, and writes a line that names it (removed, kept with --keep, already gone, failed to remove, abandoned)", name, key))
	}
	return msgs
}

// namesThing says whether line, a line of a record's cleanup, names what (a thing the cleanup
// removes): what is in it, followed by its end, a space, a colon or a parenthesis.
func namesThing(line, what string) bool {
	for from := 0; from < len(line); {
		i := strings.Index(line[from:], what)
		if i < 0 {
			return false
		}
		i += from
		after := line[i+len(what):]
		if (i == 0 || line[i-1] == ' ') && (after == "" || strings.ContainsRune(" :(", rune(after[0]))) {
			return true
		}
		from = i + 1
	}
	return false
}

// unitVarContradictions are the vars of a record that its unit says otherwise: a run of a
// matrix keeps its combination (unit.vars) and the vars its matrix fixed with --var
// (unit.matrix.fixed) both as the command line wrote them, and each in its vars and, since
// version 6, in its givenVars. Before, a failed sweep run whose var an expectation alone reads
// edited in vars alone (limit 5 made 20, with the values the expectation read) replayed
// PASSED, its verdict line still naming the combination limit=5. A var masked as a secret is
// not compared. An edit of the unit too (its vars, its id, its matrix's sweep said to be
// --sweep's) is a record a run with other flags writes: it is not told from one.
func (r *Record) unitVarContradictions() []string {
	if r.Unit == nil {
		return nil
	}
	type kept struct{ value, says string }
	given := map[string]kept{}
	if r.Unit.Matrix != nil {
		for _, f := range r.Unit.Matrix.Fixed {
			given[f.Name] = kept{f.Value, fmt.Sprintf("its matrix fixes %s=%s (unit.matrix.fixed, %s)", f.Name, f.Value, f.From)}
		}
	}
	for k, v := range r.Unit.Vars {
		given[k] = kept{v, fmt.Sprintf("its unit's combination (unit.vars) has %s=%s", k, v)}
	}
	var msgs []string
	for _, k := range slices.Sorted(maps.Keys(given)) {
		g := given[k]
		v, ok := r.Vars[k]
		switch {
		case !ok:
			msgs = append(msgs, fmt.Sprintf("%s, but its vars do not keep %s", g.says, k))
		case strings.Contains(dsl.Stringify(v), "[secret ") || strings.Contains(g.value, "[secret "):
		case !sameVarValue(v, g.value):
			msgs = append(msgs, fmt.Sprintf("%s, but its vars have %s=%s", g.says, k, dsl.Stringify(v)))
		case r.Version >= 6 && !slices.Contains(r.GivenVars, k):
			msgs = append(msgs, fmt.Sprintf("%s, but its givenVars do not name %s", g.says, k))
		}
	}
	if len(msgs) > 0 {
		msgs[len(msgs)-1] += " (a run keeps the vars of its combination and its --var in both)"
	}
	return msgs
}

// sameVarValue says whether v, a var's value as a record keeps it, is s, the value as a
// command line wrote it and dsl.VarValueOK read it (--sweep limit=5.0 runs with the number
// 5, --var on=1 with true).
func sameVarValue(v any, s string) bool {
	if dsl.Stringify(v) == s {
		return true
	}
	switch x := v.(type) {
	case float64:
		g, err := strconv.ParseFloat(s, 64)
		return err == nil && g == x
	case bool:
		b, err := strconv.ParseBool(s)
		return err == nil && b == x
	}
	var x any
	return json.Unmarshal([]byte(s), &x) == nil && reflect.DeepEqual(x, v)
}

// partialLoadContradictions are the load results whose partial mark contradicts their step's
// outcome: a load that passed ran to its end, and one that did not (stopped, timed out) records
// only what it did before, marked partial. Without the mark, what a stopped load did would be
// judged as the load the step describes; with it on a load that passed, a correct result would
// be kept from being judged.
func (r *Record) partialLoadContradictions() []string {
	var msgs []string
	for _, name := range sortedResultNames(r) {
		l, ok := r.Results[name].Value.(*LoadRecord)
		if !ok || l == nil {
			continue
		}
		var last *StepRecord
		for _, s := range r.Steps {
			if s.Name == name && s.Sample == 0 && s.Outcome != Skipped {
				last = s
			}
		}
		switch {
		case last == nil:
		case last.Outcome == Passed && l.Partial != "":
			msgs = append(msgs, fmt.Sprintf("step %s: its record contradicts itself: it passed, but its load result is marked partial (%s), which only a load stopped before its end records", name, l.Partial))
		case last.Outcome != Passed && l.Partial == "":
			msgs = append(msgs, fmt.Sprintf("step %s: its record contradicts itself: its outcome is %s, but its load result is not marked partial, as a load stopped before its end records it", name, last.Outcome))
		}
	}
	return msgs
}

// skippedContradictions are the step records whose outcome is skipped where no run records
// one: a run records a skipped step only when its cleanup ended (its timeout, a second
// interrupt) before the step started, so only in the cleanup, and only in a record that says
// its cleanup did not end well (an interrupted run, or an error that names the cleanup); or a
// step of the setup or the steps that the run's stop kept from starting, so only in a record
// of a run that stopped (interrupted, or an error of its own, not the cleanup's). A failed step
// edited into a skipped one would otherwise be left out of the verdict.
func (r *Record) skippedContradictions() []string {
	var msgs []string
	for _, s := range r.Steps {
		if s.Outcome != Skipped {
			continue
		}
		switch {
		case (s.Phase == dsl.PhaseSetup || s.Phase == dsl.PhaseSteps) && (r.Outcome == Interrupted || r.Error != "" && !strings.HasPrefix(r.Error, "cleanup: ")):
			// not run: the run had stopped
		case s.Phase != dsl.PhaseCleanup:
			msgs = append(msgs, fmt.Sprintf("step %s: its record contradicts itself: its outcome is skipped, which only a cleanup step its cleanup's end kept from starting, or a step a stopped run did not reach, records, but it is a step of the %s phase of a run that did not stop", shownStep(s), s.Phase))
		case r.Outcome != Interrupted && !strings.Contains(r.Error, "cleanup: "):
			msgs = append(msgs, fmt.Sprintf("step %s: its record contradicts itself: its outcome is skipped, which only a cleanup cut short records, but the run's outcome (%s) does not say the cleanup ended early", shownStep(s), r.Outcome))
		}
	}
	return msgs
}

// shownStep is how a contradiction names the execution s: its step, with its round or sample.
func shownStep(s *StepRecord) string {
	name := stepName(s)
	if s.Round > 0 {
		name += fmt.Sprintf(" (round %d)", s.Round)
	}
	if s.Sample > 0 {
		name += fmt.Sprintf(" (sample %d)", s.Sample)
	}
	return name
}

// selfContradicting is a recorded result that can tell what in it no run records (see
// schema.LoadResult.Contradictions, schema.LogResult.Contradictions).
type selfContradicting interface{ Contradictions() []string }

// Contradictions are what s says that no step's execution records, each with the fields and
// their values; none when a run could have recorded s. A step ends after it starts; its
// skew is its start less its planned start; a step that passed records no error, one that
// did not (failed, erred, timed out, cancelled) records its error; a step that failed as its
// expectFail expected passed, with the warning expectFail gives; one whose failure its
// mayFail allowed did not pass. A step still running (no outcome) has no end yet.
func (s *StepRecord) Contradictions() []string {
	var out []string
	if s.Outcome != "" && s.End < s.Start {
		out = append(out, fmt.Sprintf("it ends at %s, before it starts at %s", s.End, s.Start))
	}
	if s.Skew != s.Start-s.Planned {
		out = append(out, fmt.Sprintf("its skew is %s, but it started at %s, planned at %s: start − planned is %s", s.Skew, s.Start, s.Planned, s.Start-s.Planned))
	}
	switch s.Outcome {
	case Passed:
		if s.Error != "" {
			out = append(out, fmt.Sprintf("its outcome is passed, but it records the error %q", s.Error))
		}
		if slices.Contains(s.Warnings, MayFailWarning) {
			out = append(out, fmt.Sprintf("its outcome is passed, but it records the warning %q, which only a step that did not pass has", MayFailWarning))
		}
	case Failed, Errored, TimedOut, Cancelled:
		if s.Error == "" {
			out = append(out, fmt.Sprintf("its outcome is %s, but it records no error", s.Outcome))
		}
	}
	if s.ExpectedError != "" {
		if s.Outcome != Passed {
			out = append(out, fmt.Sprintf("it records the error its expectFail expected (%q), but its outcome is %s, not passed", s.ExpectedError, s.Outcome))
		}
		if !slices.ContainsFunc(s.Warnings, func(w string) bool { return strings.HasPrefix(w, expectFailWarning) }) {
			out = append(out, fmt.Sprintf("it records the error its expectFail expected (%q), but not the warning %q that goes with it", s.ExpectedError, expectFailWarning+"…"))
		}
	}
	return out
}

func sortedResultNames(r *Record) []string {
	names := make([]string, 0, len(r.Results))
	for n := range r.Results {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// WarningAbsences say which warnings the lints of sc, the source the run had (loaded with the
// record's vars), give now that rec's warnings lack, of the lint codes the labrun that ran
// knew (rec.Lints): a run writes the warnings its scenario's lints give, so one taken out of
// the record hides a finding (a mayfail-unread, an unknown-subset) from its reports and from
// merge. Before, such a record replayed and merged as the run, its reports silent on it. A
// warning is told by its code and its line and column (its message's words may differ from
// labrun to labrun); a record of version 7 without lints was changed after the run; one of an
// older version does not say which lints its labrun knew, and is not compared (its verdict
// line says it is of an older version). A lint whose rules changed since the run's labrun (it
// now finds what it did not) reads as a warning taken out: run the scenario again.
func WarningAbsences(rec *Record, sc *dsl.Scenario) []string {
	if rec.Version < 7 || sc == nil {
		return nil
	}
	if rec.Lints == nil {
		return []string{fmt.Sprintf("it is a record of version %d without lints, which a run of that version keeps (the lint codes its labrun knew)", rec.Version)}
	}
	type at struct {
		code      string
		line, col int
	}
	has := map[at]bool{}
	for _, w := range rec.Warnings {
		if w != nil {
			has[at{w.Code, w.Pos.Line, w.Pos.Col}] = true
		}
	}
	var msgs []string
	for _, w := range sc.Warnings {
		if w == nil || !slices.Contains(rec.Lints, w.Code) || has[at{w.Code, w.Pos.Line, w.Pos.Col}] {
			continue
		}
		msgs = append(msgs, fmt.Sprintf("the scenario's lints give warning[%s] at line %d, column %d (%s), which its warnings lack, and the labrun that ran knew that lint (lints): a warning was taken out after the run", w.Code, w.Pos.Line, w.Pos.Col, clip(w.Msg)))
	}
	return msgs
}

// counterSince is a local backend's counter stat as after read it, less what before read (nil:
// counted from the backend's start), and from when it counts; not ok where a read lacks it or
// it went down (localBackendAbsences and localBackendDecreases say so).
func counterSince(stat string, before, after *backendRead) (n float64, from string, ok bool) {
	n, ok = after.sn.Counters[stat]
	if !ok {
		return 0, "", false
	}
	if before == nil {
		return n, "its start", true
	}
	b, ok := before.sn.Counters[stat]
	if !ok || b > n {
		return 0, "", false
	}
	return n - b, fmt.Sprintf("step %s's read, which ended before the load started", before.what), true
}
