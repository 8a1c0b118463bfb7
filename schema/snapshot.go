package schema

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"
)

// Snapshot is the snapshot step: the stats of one source at one moment.
type Snapshot struct {
	Envoy      *PodRef `json:"envoy,omitempty"`
	Admin      string  `json:"admin,omitempty"`
	Prometheus string  `json:"prometheus,omitempty"`
	Backend    string  `json:"backend,omitempty"`
	Cluster    string  `json:"cluster,omitempty"`
	Hosts      bool    `json:"hosts,omitempty"`
	Histograms bool    `json:"histograms,omitempty"`
}

var snapshotKind = Kind{
	Usage: "record the stats of an Envoy cluster, a Prometheus endpoint or a local backend",
	New:   func() Params { return new(Snapshot) },
}

// Source is a stable description of where the snapshot reads from; snapshots with the same
// source form the pairs that a plain `delta` compares.
func (s Snapshot) Source() string {
	switch {
	case s.Envoy != nil:
		return "envoy " + s.Envoy.String() + " cluster " + s.Cluster
	case s.Admin != "":
		return "admin " + s.Admin + " cluster " + s.Cluster
	case s.Prometheus != "":
		return "prometheus " + s.Prometheus
	case s.Backend != "":
		return "backend " + s.Backend
	}
	return ""
}

// OfSource is a snapshot of the source Source described (its family and names, enough for its
// result's type: a record keeps its snapshots' sources, not their steps), with histograms
// recorded; nil when source is not one Source writes.
func OfSource(source string) *Snapshot {
	kind, rest, _ := strings.Cut(source, " ")
	where, cluster, _ := strings.Cut(rest, " cluster ")
	switch kind {
	case "envoy":
		return &Snapshot{Envoy: &PodRef{Pod: where}, Cluster: cluster, Histograms: true}
	case "admin":
		return &Snapshot{Admin: where, Cluster: cluster, Histograms: true}
	case "prometheus":
		return &Snapshot{Prometheus: rest}
	case "backend":
		return &Snapshot{Backend: rest}
	}
	return nil
}

// Check: one source; a cluster for Envoy; a backend the scenario declares.
func (p *Snapshot) Check(c Checker) {
	src := c.ExactlyOne("envoy", "admin", "prometheus", "backend")
	if (src == "envoy" || src == "admin") && p.Cluster == "" {
		c.Errorf("", "a snapshot of Envoy needs cluster: the exact cluster name, e.g. \"outbound|8080||backend.conn-lab.svc.cluster.local\"")
	}
	if (src == "prometheus" || src == "backend") && (p.Hosts || p.Cluster != "" || p.Histograms) {
		c.Errorf("", "cluster, hosts and histograms apply only to an Envoy snapshot (envoy or admin)")
	}
	if src == "backend" && !c.Templated("backend") {
		l := c.Local()
		if _, ok := localBackends(l)[p.Backend]; !ok {
			c.Errorf("backend", "no local backend named %q: expected one of local.backends (%s)", p.Backend, backendNames(l))
		}
	}
	for _, f := range []string{"admin", "prometheus"} {
		v := map[string]string{"admin": p.Admin, "prometheus": p.Prometheus}[f]
		if v != "" && !c.Templated(f) {
			if err := checkHTTPURL(v); err != nil {
				c.Errorf(f, "%v", err)
			}
		}
	}
	if p.Envoy != nil && p.Envoy.Pod == "" && p.Envoy.Selector == "" {
		c.Errorf("envoy", "envoy needs pod or selector: the pod whose sidecar to read")
	}
}

func localBackends(l *Local) map[string]Backend {
	if l == nil {
		return nil
	}
	return l.Backends
}

func backendNames(l *Local) string {
	if l == nil || len(l.Backends) == 0 {
		return "none declared"
	}
	return sortedKeys(l.Backends)
}

// Plan: a few reads.
func (p *Snapshot) Plan() Plan { return Plan{} }

// Needs pods for a sidecar, the local backends for a backend, this machine for a URL.
func (p *Snapshot) Needs() Need {
	switch {
	case p.Envoy != nil:
		return Need{CapPods, DriverStats}
	case p.Backend != "":
		return Need{CapBackends, DriverStats}
	}
	return Need{CapHost, DriverStats}
}

// Mutates nothing.
func (p *Snapshot) Mutates(func(string) string) Mutation { return Mutation{} }

// Summary is the source.
func (p *Snapshot) Summary() string { return p.Source() }

// Run reads the stats and records the snapshot (one sample of a series when sampled).
func (p *Snapshot) Run(ctx context.Context, rt Runtime) error {
	q := *p
	if q.Envoy != nil {
		e := *q.Envoy
		e.Namespace = rt.Namespace(e.Namespace)
		q.Envoy = &e
	}
	at := rt.Now()
	snap, err := rt.Target().Stats.Snapshot(ctx, q)
	// Artifacts first: a failed snapshot's (the full text of an error) matter most.
	for _, a := range snap.Artifacts {
		n := a.Name
		if rt.Sample() > 0 {
			n = fmt.Sprintf("%04d-%s", rt.Sample(), a.Name)
		}
		rt.Artifact(n, a.Data)
	}
	if err != nil {
		return err
	}
	if snap.Pod != "" {
		// The pod the read was of, as an artifact of its own (PodArtifact): the record says it
		// twice (the step's read, the snapshot's pod), and an edit of both reads as a run across
		// other pods unless an artifact says which pod was read.
		n := PodArtifact
		if rt.Sample() > 0 {
			n = fmt.Sprintf("%04d-%s", rt.Sample(), n)
		}
		rt.Artifact(n, []byte(strings.TrimSpace(snap.Pod+" "+snap.PodUID)+"\n"))
	}
	rt.Record(&SnapshotRecord{Name: rt.Label(), Source: q.Source(), Pod: snap.Pod, PodUID: snap.PodUID, At: at,
		Counters: nonNil(snap.Counters), Gauges: nonNil(snap.Gauges), Histograms: snap.Histograms, Hosts: snap.Hosts})
	return nil
}

// PodArtifact is the artifact a snapshot of a pod's sidecar writes beside its stats: the pod
// it read, "namespace/name uid" (the uid left out when the target has none), one line.
const PodArtifact = "pod.txt"

// SnapshotRecord is what a snapshot step records: one source's stats at one moment, counters,
// gauges and histogram quantiles apart (a delta is of counters only). Expressions see them as
// one map (ExprValue).
type SnapshotRecord struct {
	Name   string `json:"name"`
	Source string `json:"source"`
	// Pod is the pod whose sidecar the snapshot read, "namespace/name", and PodUID its uid:
	// a selector's snapshots may read different pods (one deleted between them), whose
	// counters are two Envoys' and have no delta. "" in a record older than them, or of a
	// source that is not a pod's.
	Pod        string    `json:"pod,omitempty"`
	PodUID     string    `json:"podUID,omitempty"`
	At         time.Time `json:"at"`
	Counters   Stats     `json:"counters"`
	Gauges     Stats     `json:"gauges"`
	Histograms Stats     `json:"histograms,omitempty"`
	Hosts      []Host    `json:"hosts,omitempty"`
}

// Stats returns counters, gauges and histogram quantiles in one map, as expressions see them.
func (s *SnapshotRecord) Stats() Stats {
	out := make(Stats, len(s.Counters)+len(s.Gauges)+len(s.Histograms))
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

// Stat is Stats()[stat] without building the merged map: a counter first, then a gauge, then
// a quantile.
func (s *SnapshotRecord) Stat(stat string) (float64, bool) {
	if v, ok := s.Counters[stat]; ok {
		return v, true
	}
	if v, ok := s.Gauges[stat]; ok {
		return v, true
	}
	v, ok := s.Histograms[stat]
	return v, ok
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

// Drop removes stat from the snapshot.
func (s *SnapshotRecord) Drop(stat string) {
	delete(s.Counters, stat)
	delete(s.Gauges, stat)
	delete(s.Histograms, stat)
}

// ExprValue is what expressions see of a snapshot: its stats in one map.
func (s *SnapshotRecord) ExprValue(time.Time) any { return s.Stats() }

// Accumulate adds the snapshot, one sample of a sampling step, to the series so far.
func (s *SnapshotRecord) Accumulate(soFar any, every time.Duration) any {
	ser, _ := soFar.(*SeriesRecord)
	if ser == nil {
		ser = &SeriesRecord{Name: s.Name, Source: s.Source, Every: every}
	}
	ser.Samples = append(ser.Samples, s)
	return ser
}

// SeriesRecord is what a snapshot step sampled with every records: one snapshot per tick.
type SeriesRecord struct {
	Name    string            `json:"name"`
	Source  string            `json:"source"`
	Every   time.Duration     `json:"everyNs"`
	Samples []*SnapshotRecord `json:"samples"`
	// Ends says the sampler took no sample while the step it samples during ran but its
	// first, at that step's start, and its last, when that step had ended: max, min and the
	// samples say nothing of what happened in between (a backend that held 8 requests at
	// once read a max of 0).
	Ends bool `json:"ends,omitempty"`
	// Views are the moments, in order, from which expressions read the samples from From on:
	// a sampler of a repeat's round reads the round's samples alone while it runs, every
	// round's after the repeat (From 0). None: every sample, always.
	Views []SeriesView `json:"views,omitempty"`
}

// SeriesView is a moment from which on a series reads its samples from From.
type SeriesView struct {
	At   time.Time `json:"at"`
	From int       `json:"from"`
}

// SeenAt is the series as expressions read it at t, of its samples those taken by then (n of
// them, n < 0: all): from the From of its last view at or before t (Views); a view of every
// sample (From 0, a repeat's end) only after t, as the repeat's until was judged before its
// end (on a clock that stood still, at the same moment).
func (s *SeriesRecord) SeenAt(t time.Time, n int) *SeriesRecord {
	if n < 0 || n > len(s.Samples) {
		n = len(s.Samples)
	}
	from := 0
	for _, v := range s.Views {
		if v.At.Before(t) || v.At.Equal(t) && v.From > 0 {
			from = v.From
		}
	}
	cut := *s
	cut.Samples = s.Samples[min(from, n):n]
	return &cut
}

// NoValue says why a field of the series has no value, or "": max, min and samples of a
// series sampled only at the start and the end of the step it samples during; every field but
// count of a series whose samples read two pods (PodChange).
func (s *SeriesRecord) NoValue(field string) string {
	if field != "count" {
		if why := s.PodChange(); why != "" {
			return why
		}
	}
	if !s.Ends || field != "max" && field != "min" && field != "samples" {
		return ""
	}
	return fmt.Sprintf("the sampler (every %s) took no sample while the step it samples during ran: one at its start and one when it had ended, so %s says nothing of what happened in between; sample more often than that step lasts", s.Every, field)
}

// PodChange says how the series' samples read more than one pod, or "": a selector picks the
// first ready pod it matches, and another once that one is gone (a kill, a restart, a scale
// between two samples), so its max, min, first, last and samples (a rate read from them) mix
// two Envoys' counters. A sample that does not say its pod (a record older than pods in
// records) is taken as the pod before it.
func (s *SeriesRecord) PodChange() string {
	type span struct {
		pod         *SnapshotRecord
		first, last int
	}
	var spans []span
	for i, smp := range s.Samples {
		if smp == nil || smp.Pod == "" {
			continue
		}
		if n := len(spans); n > 0 && spans[n-1].pod.SamePod(smp) {
			spans[n-1].last = i
			continue
		}
		spans = append(spans, span{smp, i, i})
	}
	if len(spans) < 2 {
		return ""
	}
	parts := make([]string, len(spans))
	for i, sp := range spans {
		name := sp.pod.Pod
		for _, o := range spans {
			if o.pod.Pod == name && !o.pod.SamePod(sp.pod) {
				name = sp.pod.PodName(o.pod) // one name, two uids
			}
		}
		parts[i] = fmt.Sprintf("pod %s (sample %d)", name, sp.first+1)
		if sp.last > sp.first {
			parts[i] = fmt.Sprintf("pod %s (samples %d-%d)", name, sp.first+1, sp.last+1)
		}
	}
	return fmt.Sprintf("series %q read %s (%s picked another pod, e.g. after a kill/restart/scale): its max, min, first, last and samples mix two Envoys' counters, and only its count has a value; sample a pod that stays, or one series before the change and one after",
		s.Name, strings.Join(parts, ", then "), SelectorOf(s.Source))
}

// SamePod reports whether s and o read one pod's sidecar, as far as their records say: one
// that does not say its pod (older than pods in records, or a source that is not a pod's) is
// taken as the same. A pod of the same name with another uid (a StatefulSet's pod recreated)
// is another pod, its Envoy a new one.
func (s *SnapshotRecord) SamePod(o *SnapshotRecord) bool {
	if s.Pod == "" || o.Pod == "" {
		return true
	}
	return s.Pod == o.Pod && (s.PodUID == "" || o.PodUID == "" || s.PodUID == o.PodUID)
}

// PodName is the pod s read, as a message names it beside other's: with its uid when both
// have one name and two uids.
func (s *SnapshotRecord) PodName(other *SnapshotRecord) string {
	if other != nil && other.Pod == s.Pod && !s.SamePod(other) {
		return fmt.Sprintf("%s (uid %s)", s.Pod, s.PodUID)
	}
	return s.Pod
}

// SelectorOf names what picked the pod of an Envoy snapshot's source: "the selector
// app=client", or "the selector" when source does not say.
func SelectorOf(source string) string {
	sel := "the selector"
	if ref := OfSource(source); ref != nil && ref.Envoy != nil {
		// OfSource keeps the whole "ns/{selector}" in Pod.
		if _, s, ok := strings.Cut(ref.Envoy.Pod, "{"); ok {
			sel += " " + strings.SplitN(s, "}", 2)[0]
		}
	}
	return sel
}

// ExprValue is what expressions see of a series: SeriesFrom the start of the steps phase.
func (s *SeriesRecord) ExprValue(stepsStart time.Time) any { return s.SeriesFrom(stepsStart) }

// SeriesFrom is Series with each sample's time: samples[i].at is when it was taken, in
// seconds from stepsStart (the start of the steps phase).
func (s *SeriesRecord) SeriesFrom(stepsStart time.Time) Series {
	out := s.Series()
	for i, smp := range s.Samples {
		at := make(Stats, len(out.Samples[i])+1)
		for k, v := range out.Samples[i] {
			at[k] = v
		}
		// Wall-clock readings only (Round(0) drops the monotonic one), as the judge's started
		// and ended: a record read back has none, and the run's own judging read them, so
		// replay of a genuine record found samples[i].at 10 ns off and refused it.
		at["at"] = smp.At.Round(0).Sub(stepsStart.Round(0)).Seconds()
		out.Samples[i] = at
	}
	return out
}

// Series computes what expressions see of the series.
func (s *SeriesRecord) Series() Series {
	out := Series{Max: Stats{}, Min: Stats{}, First: Stats{}, Last: Stats{}, Count: len(s.Samples)}
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

// Mutants of a series: every sample the same as the first (flat), shifted one sample later.
// (A snapshot's own stats are mutated by the stats the expectations read: labrun mutate.)
func (p *Snapshot) Mutants(recorded any) []Mutant {
	if _, ok := recorded.(*SeriesRecord); !ok {
		return nil
	}
	return []Mutant{
		{Name: "every sample the same as the first (flat)", Apply: func(v any) any {
			ser := v.(*SeriesRecord)
			for i := 1; i < len(ser.Samples); i++ {
				ser.Samples[i].Counters = maps.Clone(ser.Samples[0].Counters)
				ser.Samples[i].Gauges = maps.Clone(ser.Samples[0].Gauges)
				ser.Samples[i].Histograms = maps.Clone(ser.Samples[0].Histograms)
			}
			return ser
		}},
		{Name: "shifted one sample later", Apply: func(v any) any {
			ser := v.(*SeriesRecord)
			for i := len(ser.Samples) - 1; i > 0; i-- {
				ser.Samples[i].Counters = maps.Clone(ser.Samples[i-1].Counters)
				ser.Samples[i].Gauges = maps.Clone(ser.Samples[i-1].Gauges)
				ser.Samples[i].Histograms = maps.Clone(ser.Samples[i-1].Histograms)
			}
			return ser
		}},
	}
}

// NewRecord is an empty record of a snapshot step, for reading a run's record: a series when
// the step sampled.
func (p *Snapshot) NewRecord(sampled bool) any {
	if sampled {
		return &SeriesRecord{}
	}
	return &SnapshotRecord{}
}

func nonNil(s Stats) Stats {
	if s == nil {
		return Stats{}
	}
	return s
}

// Family is the kind of source: "envoy" (a sidecar or an admin URL), "prometheus", "backend".
func (s Snapshot) Family() string {
	switch {
	case s.Envoy != nil || s.Admin != "":
		return "envoy"
	case s.Prometheus != "":
		return "prometheus"
	case s.Backend != "":
		return "backend"
	}
	return ""
}

// Catalogue is the stats the snapshot's source can have (nil for a Prometheus endpoint, whose
// names labrun does not know).
func (s Snapshot) Catalogue() *Catalogue {
	switch s.Family() {
	case "envoy":
		return EnvoyClusterStats
	case "backend":
		return BackendStats
	}
	return nil
}

// Result: the stats of the snapshot's source, typed by its catalogue, and its hosts; sampled
// (every/while), the series of them.
func (p *Snapshot) Result(c ResultContext) *Type {
	src := &StatSource{ID: p.Source(), Catalogue: p.Catalogue(), Histograms: p.Histograms}
	switch p.Family() {
	case "envoy":
		src.What = "Envoy cluster " + p.Cluster
	case "backend":
		src.What = "local backend " + p.Backend
	case "prometheus":
		src.What = "Prometheus endpoint " + p.Prometheus
	}
	stats := StatsOf(src)
	if p.Family() == "envoy" {
		hosts := F("hosts", ListOf(hostType), "the cluster's upstream hosts, from Envoy's /clusters")
		if !p.Hosts {
			hosts.Absent = "the snapshot does not record hosts: add hosts: true to its snapshot step"
		}
		stats.Fields = []*Field{hosts}
	}
	if c.Sampled() {
		return seriesType(stats)
	}
	return stats
}

// hostType is one upstream host of a cluster.
var hostType = StructOf(reflect.TypeFor[Host](),
	F("address", StrForm("e.g. \"10.244.1.5:8080\"", FormAddress), "the host's address"),
	F("hostname", StringType, "the host's name, when Envoy knows one"),
	F("cx_active", Num(Count), "connections open to it now"),
	F("cx_total", Num(Count), "connections opened to it"),
	F("cx_connect_fail", Num(Count), "connection failures to it"),
	F("rq_active", Num(Count), "requests in flight to it now"),
	F("rq_total", Num(Count), "requests sent to it"),
	F("rq_error", Num(Count), "requests to it that failed"),
	F("healthy", BoolType, "it takes traffic (no health flag set)"),
	F("health", StrForm("\"healthy\", or each flag after a slash: \"/failed_outlier_check\"", FormHealthFlags), "Envoy's health_flags, e.g. \"healthy\" or \"/failed_outlier_check\""),
	F("weight", Num(Plain), "its load-balancing weight"),
)

// seriesType is what a sampled snapshot records: one sample of stats per tick.
func seriesType(stats *Type) *Type {
	agg := *stats
	agg.Fields = nil // hosts are read from a snapshot by name, not from a series
	stats = &agg
	sample := agg
	sample.Fields = []*Field{F("at", Num(Seconds), "when the sample was taken, in seconds from the start of the steps phase")}
	t := StructOf(reflect.TypeFor[Series](),
		F("samples", ListOf(&sample), "every sample, in order"),
		F("max", stats, "each stat's largest value over the samples that have it"),
		F("min", stats, "each stat's smallest value over the samples that have it"),
		F("first", stats, "each stat's first value"),
		F("last", stats, "each stat's last value"),
		F("count", Num(Count), "the number of samples"),
	)
	return t.Every(PerSample)
}

// Stats maps a stat name (Envoy's, with the cluster prefix removed and ";." normalised to ".",
// e.g. "upstream_rq_pending_overflow" or "circuit_breakers.default.rq_pending_open") to its value.
// Expressions read it as <snapshot>.<stat>, with dotted stat names written as they are:
// `mid.circuit_breakers.default.rq_pending_open`.
type Stats map[string]float64

// UnmarshalJSON reads stats, refusing a null value: encoding/json reads it as 0 (a stat
// nulled in a record read as a count of 0, and a delta counted from it), and no snapshot
// records one (a stat the source does not have is absent).
func (s *Stats) UnmarshalJSON(b []byte) error {
	var m map[string]float64
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	if m != nil && bytes.Contains(b, []byte("null")) {
		var ptrs map[string]*float64
		if err := json.Unmarshal(b, &ptrs); err != nil {
			return err
		}
		for _, k := range slices.Sorted(maps.Keys(ptrs)) {
			if ptrs[k] == nil {
				return fmt.Errorf("stat %q is null, where a snapshot always records a number", k)
			}
		}
	}
	*s = m
	return nil
}

// Host is one upstream host of an Envoy cluster, from the /clusters view.
type Host struct {
	Address  string  `expr:"address" json:"address"`
	Hostname string  `expr:"hostname" json:"hostname,omitempty"`
	CxActive float64 `expr:"cx_active" json:"cx_active"`
	CxTotal  float64 `expr:"cx_total" json:"cx_total"`
	CxFail   float64 `expr:"cx_connect_fail" json:"cx_connect_fail"`
	RqActive float64 `expr:"rq_active" json:"rq_active"`
	RqTotal  float64 `expr:"rq_total" json:"rq_total"`
	RqError  float64 `expr:"rq_error" json:"rq_error"`
	Healthy  bool    `expr:"healthy" json:"healthy"`
	// Health is Envoy's health_flags text, e.g. "healthy" or "/failed_outlier_check".
	Health string  `expr:"health" json:"health"`
	Weight float64 `expr:"weight" json:"weight,omitempty"`
}

// Series is what a snapshot step with every records: one sample per tick. Expressions read
// <name>.max.<stat>, .min, .first, .last (per stat, over the samples that have it) and .count.
type Series struct {
	Samples []Stats `expr:"samples" json:"samples"`
	Max     Stats   `expr:"max" json:"max"`
	Min     Stats   `expr:"min" json:"min"`
	First   Stats   `expr:"first" json:"first"`
	Last    Stats   `expr:"last" json:"last"`
	Count   int     `expr:"count" json:"count"`
}
