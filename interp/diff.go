package interp

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"labrun.dev/labrun/schema"
)

// Comparing two runs: every value a record holds is flattened to a path ("loads.fortio.code503",
// "snapshots.after.counters.upstream_rq_total", "delta.upstream_rq_pending_overflow",
// "steps.flip.startMs") and the two runs' values are compared path by path.

// Difference is one value that differs between two records.
type Difference struct {
	Path string `json:"path"`
	// A and B are the values (nil: absent from that run).
	A any `json:"a"`
	B any `json:"b"`
	// Abs and Rel are B − A and (B − A) / |A| for numbers (Rel is absent when A is 0).
	Abs *float64 `json:"abs,omitempty"`
	Rel *float64 `json:"rel,omitempty"`
	// Beyond says the difference is beyond the tolerance.
	Beyond bool `json:"beyond"`
}

// MarshalJSON writes the difference, a non-finite number (a value read as +Inf, a change
// from it) as its string.
func (d Difference) MarshalJSON() ([]byte, error) {
	ptr := func(x *float64) any {
		if x == nil {
			return nil
		}
		return JSONNumber(*x)
	}
	return MarshalUnescaped(struct {
		Path   string `json:"path"`
		A      any    `json:"a"`
		B      any    `json:"b"`
		Abs    any    `json:"abs,omitempty"`
		Rel    any    `json:"rel,omitempty"`
		Beyond bool   `json:"beyond"`
	}{d.Path, jsonLike(d.A), jsonLike(d.B), ptr(d.Abs), ptr(d.Rel), d.Beyond})
}

// VerdictChange is an expectation whose verdict differs.
type VerdictChange struct {
	Expr string  `json:"expr"`
	A    Outcome `json:"a"`
	B    Outcome `json:"b"`
}

// RunDiff is the comparison of two records.
type RunDiff struct {
	A, B        string          `json:"-"`
	ScenarioA   string          `json:"scenarioA"`
	ScenarioB   string          `json:"scenarioB"`
	Differences []Difference    `json:"differences"`
	Verdicts    []VerdictChange `json:"verdicts"`
	// Beyond counts the differences beyond the tolerance, verdict changes included.
	Beyond int `json:"beyond"`
	// Normalized counts the local addresses with a port chosen at run time (a backend's
	// ephemeral port) that were written by name or as host:* before comparing.
	Normalized int `json:"normalized,omitempty"`
}

// unionKeys are the keys of a and of b, each once, sorted.
func unionKeys[V any](a, b map[string]V) []string {
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// Diff compares two records. tolerance is the relative change (0.1 for 10%) below which a
// numeric difference is not counted as beyond it; strings and presence always count.
func Diff(a, b *Record, tolerance float64) *RunDiff {
	d := &RunDiff{ScenarioA: a.Scenario, ScenarioB: b.Scenario, Differences: []Difference{}, Verdicts: []VerdictChange{}}
	fa, na := normalizeAddrs(Flatten(a), a)
	fb, nb := normalizeAddrs(Flatten(b), b)
	d.Normalized = na + nb
	for _, k := range unionKeys(fa, fb) {
		va, inA := fa[k]
		vb, inB := fb[k]
		if inA && inB && fmt.Sprint(va) == fmt.Sprint(vb) {
			continue
		}
		df := Difference{Path: k, A: va, B: vb, Beyond: true}
		xa, okA := va.(float64)
		xb, okB := vb.(float64)
		if okA && okB {
			abs := xb - xa
			df.Abs = &abs
			if xa != 0 {
				rel := abs / math.Abs(xa)
				df.Rel = &rel
				df.Beyond = !(math.Abs(rel) <= tolerance) // from ±Inf or NaN: NaN, beyond
			} else {
				df.Beyond = abs != 0
			}
		}
		if df.Beyond {
			d.Beyond++
		}
		d.Differences = append(d.Differences, df)
	}
	verdict := func(r *Record) map[string]Outcome {
		m := map[string]Outcome{}
		for _, j := range r.Expectations {
			m[j.Src] = j.Outcome
		}
		return m
	}
	va, vb := verdict(a), verdict(b)
	for _, e := range unionKeys(va, vb) {
		if va[e] != vb[e] {
			d.Verdicts = append(d.Verdicts, VerdictChange{Expr: e, A: va[e], B: vb[e]})
			d.Beyond++
		}
	}
	return d
}

// Flatten lists every value of a record by path: vars, snapshots (counters, gauges,
// histograms), the default delta and the delta of every pair of consecutive snapshots of one
// source, series aggregates, loads, execs, logs, captured values, each named step's start
// and duration in milliseconds, and where each of its clusters was.
func Flatten(r *Record) map[string]any {
	out := map[string]any{}
	for k, v := range r.Vars {
		out["vars."+k] = v
	}
	// What each cluster was (its context and server): runs of one scenario on other
	// clusters differ there. Before, the diff of two runs on other clusters said nothing of
	// it.
	for _, c := range r.Clusters {
		out["clusters."+c.Name] = c.Where
	}
	var snaps []*SnapshotRecord
	for name, s := range r.Snapshots() {
		prefix := "snapshots." + name + "."
		stats(out, prefix+"counters.", s.Counters)
		stats(out, prefix+"gauges.", s.Gauges)
		stats(out, prefix+"histograms.", s.Histograms)
		out[prefix+"hosts"] = float64(len(s.Hosts))
		snaps = append(snaps, s)
	}
	sort.Slice(snaps, func(i, j int) bool { return snaps[i].At.Before(snaps[j].At) })
	bySource := map[string][]*SnapshotRecord{}
	for _, s := range snaps {
		bySource[s.Source] = append(bySource[s.Source], s)
	}
	for _, list := range bySource {
		for i := 1; i < len(list); i++ {
			a, b := list[i-1], list[i]
			stats(out, fmt.Sprintf("delta(%q,%q).", a.Name, b.Name), Delta(a, b, nil))
		}
		if len(bySource) == 1 && len(list) >= 2 {
			stats(out, "delta.", Delta(list[0], list[len(list)-1], nil))
		}
	}
	for name, s := range r.Series() {
		ser := s.Series()
		stats(out, "series."+name+".max.", ser.Max)
		stats(out, "series."+name+".min.", ser.Min)
		stats(out, "series."+name+".last.", ser.Last)
		out["series."+name+".count"] = float64(ser.Count)
	}
	for name, l := range r.Loads() {
		flattenAny(out, "loads."+name, toAny(l.LoadResult))
	}
	for name, e := range r.Execs() {
		flattenAny(out, "execs."+name, toAny(e))
	}
	for name, l := range r.Logs() {
		p := "logs." + name + "."
		out[p+"count"] = l.Count
		stats(out, p+"codes.", l.Codes)
		stats(out, p+"flags.", l.Flags)
		for k, v := range l.Capture {
			out[p+"capture."+k] = v
		}
	}
	for name, v := range r.Values() {
		flattenAny(out, "values."+name, v)
	}
	base := r.StepsStart.Sub(r.Start)
	seen := map[string]bool{}
	for _, s := range r.Steps {
		// What a step did (its summary: the URL and query a load sent, the object applied)
		// is compared for every step, an unnamed one by its path.
		key := s.Path
		if s.Name != "" {
			key = "steps." + s.Name
		}
		if seen[key] {
			continue
		}
		seen[key] = true
		if s.Summary != "" {
			out[key+".summary"] = s.Summary
		}
		if s.Name == "" {
			continue
		}
		out["steps."+s.Name+".startMs"] = ms(s.Start - base)
		if s.End > 0 {
			out["steps."+s.Name+".durationMs"] = ms(s.End - s.Start)
		}
		out["steps."+s.Name+".outcome"] = string(s.Outcome)
	}
	out["outcome"] = string(r.Outcome)
	// What ran, and where: the scenario's source (a digest of its files), its doc, the target
	// and what it connected to, and the labrun build that ran it (two builds may measure
	// otherwise).
	out["target"] = r.Target
	for k, v := range map[string]string{"source": r.Source, "doc": r.Doc, "where": r.Where, "labrun": r.Labrun} {
		if v != "" {
			out[k] = v
		}
	}
	return out
}

// hideSecretData replaces every leaf of a Secret's data with a digest of it.
func hideSecretData(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = hideSecretData(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = hideSecretData(e)
		}
		return out
	case nil:
		return nil
	}
	sum := sha256.Sum256([]byte(fmt.Sprint(v)))
	return fmt.Sprintf("(Secret data, not shown; sha256 %x…)", sum[:4])
}

func ms(d time.Duration) float64 { return math.Round(float64(d)/1e4) / 100 }

func stats(out map[string]any, prefix string, s schema.Stats) {
	for k, v := range s {
		out[prefix+k] = v
	}
}

// toAny turns a result struct into JSON-like values through its JSON form.
func toAny(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

// flattenAny adds every leaf of a JSON-like value under prefix. The data of a Secret (a get
// step's object) is shown as a digest: a change still shows, the values do not.
func flattenAny(out map[string]any, prefix string, v any) {
	switch x := v.(type) {
	case map[string]any:
		secret := x["kind"] == "Secret" && x["apiVersion"] == "v1"
		for k, e := range x {
			if secret && (k == "data" || k == "stringData") {
				e = hideSecretData(e)
			}
			flattenAny(out, prefix+"."+k, e)
		}
	case []any:
		for i, e := range x {
			flattenAny(out, prefix+"."+strconv.Itoa(i), e)
		}
	case nil:
	default:
		out[prefix] = x
	}
}

// A local address whose port the run chose (a backend, a blackhole or a server on port 0)
// differs in every run: before two records are compared, such an address in a path or a
// string is written by the name of what owns it (backends.a.address) or, when no named
// endpoint owns it, with its port as * (only loopback ports of the ephemeral range).
var localAddr = regexp.MustCompile(`(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|localhost|\[::1\]):(\d{2,5})\b`)

// normalizeAddrs rewrites the local addresses of a flattened record; it returns how many it
// rewrote.
func normalizeAddrs(flat map[string]any, r *Record) (map[string]any, int) {
	owner := map[string]string{}
	tv, _ := toAny(r.TargetValues).(map[string]any) // a record read back, or one just made
	for kind, v := range tv {
		eps, ok := v.(map[string]any)
		if !ok {
			continue
		}
		for name, ep := range eps {
			if m, ok := ep.(map[string]any); ok {
				if addr, ok := m["address"].(string); ok {
					owner[addr] = kind + "." + name + ".address"
				}
			}
		}
	}
	// A run's ephemeral namespaces are named after its id (a step's summary names them):
	// each is written as <ns.key>.
	var ns []string
	for key, name := range r.Namespaces {
		if name != "" {
			ns = append(ns, name, "<ns."+key+">")
		}
	}
	renameNamespaces := strings.NewReplacer(ns...)
	n := 0
	rewrite := func(s string) string {
		s = renameNamespaces.Replace(s)
		return localAddr.ReplaceAllStringFunc(s, func(addr string) string {
			if name, ok := owner[addr]; ok {
				n++
				return "<" + name + ">"
			}
			m := localAddr.FindStringSubmatch(addr)
			if port, _ := strconv.Atoi(m[2]); port >= 32768 {
				n++
				return m[1] + ":*"
			}
			return addr
		})
	}
	out := make(map[string]any, len(flat))
	for k, v := range flat {
		if s, ok := v.(string); ok {
			v = rewrite(s)
		}
		k = rewrite(k)
		if prev, ok := out[k].(float64); ok {
			if x, ok := v.(float64); ok {
				v = prev + x // two ephemeral ports of one host: their counts together
			}
		}
		out[k] = v
	}
	return out, n
}
