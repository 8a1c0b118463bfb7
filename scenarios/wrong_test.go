package scenarios_test

// TestWrongOutcomes edits run records — the JSON of record version 1 that `labrun replay`
// reads — into outcomes Istio or Envoy could have produced and the seeds rule out, and wants
// each replayed edit to fail while the unedited record passes. The records are the seeds'
// figures (figures_test.go); the sandbox replays (kit*_e2e_test.go) apply the same edits to
// the records of their runs (wrongOutcomesOf).

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/report"
	"labrun.dev/labrun/schema"
)

// jrec is a record in its JSON form.
type jrec = map[string]any

// node walks path (map keys, list indices) from v; nil when a step is missing.
func node(v any, path ...string) any {
	for _, p := range path {
		switch x := v.(type) {
		case map[string]any:
			v = x[p]
		case []any:
			i, err := strconv.Atoi(p)
			if err != nil || i < 0 || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

// set sets the value at path (its parent must exist).
func set(t *testing.T, v any, val any, path ...string) {
	t.Helper()
	parent, last := node(v, path[:len(path)-1]...), path[len(path)-1]
	switch x := parent.(type) {
	case map[string]any:
		x[last] = val
	case []any:
		i, _ := strconv.Atoi(last)
		x[i] = val
	default:
		t.Fatalf("no %s in the record", strings.Join(path, "."))
	}
}

func num(t *testing.T, v any, path ...string) float64 {
	t.Helper()
	f, ok := node(v, path...).(float64)
	if !ok {
		t.Fatalf("%s is not a number in the record", strings.Join(path, "."))
	}
	return f
}

// counter sets stat of snapshot to its value in snapshot from plus d: a delta of d.
func delta(t *testing.T, r jrec, from, to, stat string, d float64) {
	t.Helper()
	set(t, r, num(t, r, "snapshots", from, "counters", stat)+d, "snapshots", to, "counters", stat)
}

// codes sets a load's response codes (and its ok and error counts).
// codes sets a load's codes, with the sums fortio keeps (requests, ok, errors): a wrong outcome
// a run could record (replay refuses a load whose sums are broken, as an edited record).
func codes(t *testing.T, r jrec, load string, c map[string]float64) {
	t.Helper()
	m, ok := 0.0, 0.0
	out := map[string]any{}
	for k, v := range c {
		out[k] = v
		if schema.IsOK(k) {
			ok += v
		} else {
			m += v
		}
	}
	set(t, r, out, "loads", load, "codes")
	set(t, r, ok, "loads", load, "ok")
	set(t, r, m, "loads", load, "errors")
	set(t, r, ok+m, "loads", load, "requests")
}

// capture sets a captured group of an exec step.
func capture(t *testing.T, r jrec, step, group, val string) {
	t.Helper()
	set(t, r, val, "execs", step, "captured", group)
}

// rows rewrites the who= loop's rows ("<t> <code> <backend>"): f returns the new code and
// backend of the row at t seconds.
func rows(t *testing.T, r jrec, f func(t float64, code, backend string) (string, string)) {
	t.Helper()
	out, _ := node(r, "execs", "who", "stdout").(string)
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		fs := strings.Fields(line)
		if len(fs) < 3 {
			b.WriteString(line + "\n")
			continue
		}
		sec, _ := strconv.ParseFloat(fs[0], 64)
		c, be := f(sec, fs[1], fs[2])
		fmt.Fprintf(&b, "%s %s %s\n", fs[0], c, be)
	}
	set(t, r, b.String(), "execs", "who", "stdout")
}

// step returns the record's step named name.
func step(t *testing.T, r jrec, name string) map[string]any {
	t.Helper()
	steps, _ := r["steps"].([]any)
	for _, s := range steps {
		if m, ok := s.(map[string]any); ok && m["name"] == name {
			return m
		}
	}
	t.Fatalf("no step %s in the record", name)
	return nil
}

// lastString is the last element of a list value (a get step's pods, newest last).
func lastString(t *testing.T, r jrec, name string) string {
	t.Helper()
	l, _ := node(r, "values", name).([]any)
	if len(l) == 0 {
		t.Fatalf("no value %s", name)
	}
	return fmt.Sprint(l[len(l)-1])
}

// aaaIP is Kit C's phase-1 pod's IP.
func aaaIP(t *testing.T, r jrec) string {
	t.Helper()
	ip, _ := node(r, "values", "aaa", "0", "status", "podIP").(string)
	if ip == "" {
		t.Fatalf("no aaa pod IP in the record")
	}
	return ip
}

// requestLines are Kit C's phase-2 access-log entries of the request to aaa's IP.
func requestLines(t *testing.T, r jrec) []map[string]any {
	t.Helper()
	ip := aaaIP(t, r)
	var out []map[string]any
	entries, _ := node(r, "logs", "access", "entries").([]any)
	for _, e := range entries {
		m, _ := e.(map[string]any)
		if h, _ := m["upstream_host"].(string); m["access"] == true && strings.Contains(h, ip+":") {
			out = append(out, m)
		}
	}
	if len(out) == 0 {
		t.Fatalf("no access-log line of the request to %s", ip)
	}
	return out
}

// relog edits an access-log entry of a logs step and moves its counts (codes, flags, details)
// from what the line was to what it is: a log a run could record (replay refuses one whose
// counts are not its lines').
func relog(t *testing.T, r jrec, log string, entry map[string]any, edit func(map[string]any)) {
	t.Helper()
	count := func(e map[string]any, n float64) {
		add := func(kind, key string) {
			m, _ := node(r, "logs", log, kind).(map[string]any)
			if m == nil {
				m = map[string]any{}
				set(t, r, m, "logs", log, kind)
			}
			v, _ := m[key].(float64)
			if v += n; v > 0 {
				m[key] = v
			} else {
				delete(m, key)
			}
		}
		c, _ := e["code"].(float64)
		add("codes", strconv.Itoa(int(c)))
		flags, _ := e["flags"].([]any)
		for _, f := range flags {
			add("flags", f.(string))
		}
		if d, _ := e["details"].(string); d != "" {
			add("details", d)
		}
	}
	count(entry, -1)
	edit(entry)
	count(entry, 1)
}

// wrongOutcome is one edit of a scenario's record into a wrong outcome.
type wrongOutcome struct {
	scenario, name string
	edit           func(t *testing.T, r jrec)
}

var wrongOutcomes = []wrongOutcome{
	// Kit A
	{"s1", "maxConnections behaving as 3", func(t *testing.T, r jrec) {
		delta(t, r, "before", "after", "upstream_cx_total", 3)
	}},
	{"s1", "maxConnections alone rejecting requests", func(t *testing.T, r jrec) {
		codes(t, r, "fortio", map[string]float64{"200": 30, "503": 10})
		delta(t, r, "before", "after", "upstream_rq_total", 30)
	}},
	{"s1", "istiod writing another limit", func(t *testing.T, r jrec) {
		set(t, r, 3.0, "values", "drcfg", "circuit_breakers", "thresholds", "0", "max_connections")
	}},
	{"s1", "the limit never reached during the load", func(t *testing.T, r jrec) {
		samples, _ := node(r, "series", "mid", "samples").([]any)
		for i := range samples {
			set(t, r, 0.0, "series", "mid", "samples", strconv.Itoa(i), "gauges", "circuit_breakers.default.cx_open")
		}
	}},
	{"s2", "503s that are not the pending breaker's", func(t *testing.T, r jrec) {
		codes(t, r, "fortio", map[string]float64{"200": 15, "503": 15})
		delta(t, r, "before", "after", "upstream_rq_total", 15)
	}},
	{"s2", "503s of the requests limit, not the pending one", func(t *testing.T, r jrec) {
		delta(t, r, "before", "after", "upstream_rq_pending_overflow", 0)
		delta(t, r, "before", "after", "upstream_rq_active_overflow", 12)
	}},
	{"s3", "the turnover visible downstream", func(t *testing.T, r jrec) {
		set(t, r, 20.0, "loads", "fortio", "sockets")
	}},
	{"s4", "the idle timeout never firing", func(t *testing.T, r jrec) {
		delta(t, r, "before", "after", "upstream_cx_idle_timeout", 0)
	}},
	{"s5", "maxConnectionDuration cutting a request", func(t *testing.T, r jrec) {
		codes(t, r, "fortio", map[string]float64{"200": 99, "503": 1})
	}},
	{"s5", "the second connection never reaching its age", func(t *testing.T, r jrec) {
		delta(t, r, "before", "after", "upstream_cx_max_duration_reached", 1)
	}},
	{"s6", "connect failures not retried", func(t *testing.T, r jrec) {
		for _, s := range []string{"upstream_cx_connect_timeout", "upstream_cx_connect_fail", "upstream_cx_total"} {
			delta(t, r, "before", "after", s, 5)
		}
		delta(t, r, "before", "after", "upstream_rq_retry", 0)
		once := num(t, r, "loads", "fortio", "avg") / 3 // every request one attempt
		// Every latency of the load, so that the record keeps the order fortio's have (replay
		// refuses p999 above max as an edited record).
		for _, f := range []string{"avg", "min", "p50", "p90", "p99", "p999", "max"} {
			set(t, r, once, "loads", "fortio", f)
		}
	}},
	{"s6", "an unreachable destination, not an unanswered one", func(t *testing.T, r jrec) {
		delta(t, r, "before", "after", "upstream_cx_connect_timeout", 0)
	}},
	{"s6", "URX from the max_retries breaker", func(t *testing.T, r jrec) {
		delta(t, r, "before", "after", "upstream_rq_retry_overflow", 5)
	}},
	{"s7b", "without http2_protocol_options", func(t *testing.T, r jrec) {
		delete(node(r, "values", "hpo", "use_downstream_protocol_config").(map[string]any), "http2_protocol_options")
	}},
	{"s7c", "istio.io's default written out", func(t *testing.T, r jrec) {
		set(t, r, map[string]any{"max_concurrent_streams": 2147483647.0}, "values", "h2")
	}},
	{"s7_nodr", "Envoy's defaults without a DR", func(t *testing.T, r jrec) {
		set(t, r, map[string]any{"max_connections": 1024.0, "max_pending_requests": 1024.0, "max_requests": 1024.0, "max_retries": 3.0}, "values", "cb")
	}},

	// Kit B
	{"mode1_strict", "STRICT draining one of its two warm connections", func(t *testing.T, r jrec) {
		for _, s := range []string{"upstream_cx_destroy", "upstream_cx_destroy_local", "upstream_cx_total"} {
			delta(t, r, "before_flip", "after_flip", s, 1)
		}
	}},
	{"mode1_strict", "the backend closing the connections, not the sidecar", func(t *testing.T, r jrec) {
		delta(t, r, "before_flip", "after_flip", "upstream_cx_destroy_local", 0)
		delta(t, r, "before_flip", "after_flip", "upstream_cx_destroy_remote", 2)
	}},
	{"mode1_strict", "answers moving to B 15 s after the flip", func(t *testing.T, r jrec) {
		rows(t, r, func(sec float64, c, b string) (string, string) {
			if sec < 25 {
				return c, "backend-a"
			}
			return c, b
		})
	}},
	{"mode1_logical", "LOGICAL following the flip", func(t *testing.T, r jrec) {
		rows(t, r, func(sec float64, c, b string) (string, string) {
			if sec >= 16 {
				return c, "backend-b"
			}
			return c, b
		})
	}},
	{"mode2", "a loss on the dead address", func(t *testing.T, r jrec) {
		rows(t, r, func(sec float64, c, b string) (string, string) {
			if sec >= 30 && int(sec)%4 == 0 {
				return "503", b
			}
			return c, b
		})
	}},
	{"mode3", "a reconnect blip when A dies", func(t *testing.T, r jrec) {
		done := false
		rows(t, r, func(sec float64, c, b string) (string, string) {
			if sec >= 25 && !done {
				done = true
				return "503", b
			}
			return c, b
		})
	}},
	{"a1", "the flip after the request ended", func(t *testing.T, r jrec) {
		slow, flip := step(t, r, "slow1"), step(t, r, "flip1")
		d := flip["endNs"].(float64) - flip["startNs"].(float64)
		later := slow["endNs"].(float64) + 1e9 - flip["startNs"].(float64)
		flip["startNs"] = flip["startNs"].(float64) + later
		flip["plannedNs"] = flip["plannedNs"].(float64) + later // as planned: its skew stays
		flip["endNs"] = flip["startNs"].(float64) + d
	}},
	{"a2_strict", "the connection cut at the flip", func(t *testing.T, r jrec) {
		set(t, r, 0.0, "snapshots", "mid1", "gauges", "upstream_cx_active")
		delta(t, r, "before", "mid1", "upstream_cx_destroy", 1)
		delta(t, r, "before", "mid1", "upstream_cx_destroy_local", 1)
	}},
	{"a2_logical", "LOGICAL closing the connection after completion", func(t *testing.T, r jrec) {
		set(t, r, 0.0, "snapshots", "after", "gauges", "upstream_cx_active")
		delta(t, r, "before", "after", "upstream_cx_destroy", 1)
	}},
	{"d2", "STRICT keeping the old host next to the new one", func(t *testing.T, r jrec) {
		a := lastString(t, r, "pod_a") + ":443"
		for _, s := range []string{"mid2", "after"} {
			hosts, _ := node(r, "snapshots", s, "hosts").([]any)
			old := map[string]any{}
			for k, v := range hosts[0].(map[string]any) {
				old[k] = v
			}
			old["address"] = a
			set(t, r, append(hosts, old), "snapshots", s, "hosts")
		}
	}},
	{"f0", "LOGICAL changing membership", func(t *testing.T, r jrec) {
		delta(t, r, "before", "after", "membership_change", 1)
	}},
	{"b", "stage 3 with a tenth of stage 2's requests", func(t *testing.T, r jrec) {
		n, _ := strconv.Atoi(node(r, "execs", "stage2", "captured", "total").(string))
		capture(t, r, "stage3", "total", strconv.Itoa(n/10))
	}},
	{"b", "no default retry: the dead picks fail", func(t *testing.T, r jrec) {
		capture(t, r, "stage1", "fail", node(r, "execs", "stage1", "captured", "slow").(string))
		delta(t, r, "s1_before", "s1_after", "upstream_rq_retry", 0)
	}},
	{"b", "the dead host never flagged", func(t *testing.T, r jrec) {
		hosts, _ := node(r, "snapshots", "s2_after", "hosts").([]any)
		for _, h := range hosts {
			h.(map[string]any)["health"] = "healthy"
			h.(map[string]any)["healthy"] = true
		}
	}},
	{"d1", "passthrough protected like HTTP", func(t *testing.T, r jrec) {
		for _, g := range []string{"fail", "e28", "e35"} {
			capture(t, r, "pt", g, "0")
		}
	}},
	{"d1", "HTTP retries that failed", func(t *testing.T, r jrec) {
		d := num(t, r, "snapshots", "h_after", "counters", "upstream_rq_retry_success") - num(t, r, "snapshots", "h_before", "counters", "upstream_rq_retry_success")
		delta(t, r, "h_before", "h_after", "upstream_rq_retry_success", d-6)
	}},
	{"d3", "failures not tied to the ejections", func(t *testing.T, r jrec) {
		capture(t, r, "stage_b", "fail", "12")
		capture(t, r, "stage_b", "e35", "12")
	}},

	// Kit C
	{"c_stale", "the 503 UC line belonging to another upstream than the reused IP", func(t *testing.T, r jrec) {
		ip := aaaIP(t, r)
		for _, l := range requestLines(t, r) {
			l["upstream_host"] = strings.ReplaceAll(l["upstream_host"].(string), ip+":", "10.99.0.7:")
		}
	}},
	{"c_stale", "a fresh connection to the new pod", func(t *testing.T, r jrec) {
		caps, _ := node(r, "logs", "wp2", "captures").([]any)
		for _, c := range caps {
			c.(map[string]any)["id"] = "80112"
		}
		entries, _ := node(r, "logs", "wp2", "entries").([]any)
		for _, e := range entries { // the lines captured what captures lists
			if c, ok := e.(map[string]any)["captures"].(map[string]any); ok {
				c["id"] = "80112"
			}
		}
		set(t, r, "80112", "logs", "wp2", "capture", "id")
	}},
	{"c_stale", "the stale socket to another address", func(t *testing.T, r jrec) {
		capture(t, r, "ss_stale", "peer", "10.99.0.7:15008")
	}},
	{"c_stale", "UF instead of UC", func(t *testing.T, r jrec) {
		for _, l := range requestLines(t, r) {
			relog(t, r, "access", l, func(l map[string]any) { l["flags"] = []any{"UF"} })
		}
	}},
	{"c_stale", "the new pod with another IP", func(t *testing.T, r jrec) {
		pods, _ := node(r, "values", "bbb").([]any)
		set(t, r, "10.99.0.8", "values", "bbb", strconv.Itoa(len(pods)-1), "status", "podIP")
	}},
	{"c_retry", "503 despite retrying on reset", func(t *testing.T, r jrec) {
		capture(t, r, "phase2", "code", "503")
		for _, l := range requestLines(t, r) {
			relog(t, r, "access", l, func(l map[string]any) {
				l["code"] = 503.0
				l["flags"] = []any{"UC"}
			})
		}
	}},
}

// replayJSON writes rec as a record file, reads it back as `labrun replay` does (report.Read,
// the scenario loaded from the record's file with its vars, types restored) and re-judges it.
func replayJSON(t *testing.T, rec jrec) (interp.Outcome, []*interp.Judgement) {
	t.Helper()
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "run.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := report.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{}
	for k, v := range got.Vars {
		vars[k] = dsl.Stringify(v)
	}
	res, err := loadForReplay(got.File, vars)
	if err != nil {
		t.Fatalf("loading %s: %v", got.File, err)
	}
	var sc *dsl.Scenario
	for _, s := range res.Scenarios {
		if s.Name == got.Scenario {
			sc = s
		}
	}
	if sc == nil {
		t.Fatalf("%s declares no scenario %s", got.File, got.Scenario)
	}
	if err := interp.RestoreTypes(got); err != nil {
		t.Fatal(err)
	}
	judged := interp.Rejudge(got, sc)
	v, _ := interp.Verdict(got, judged)
	return v, judged
}

// loaded caches what replay loads: a file with a set of vars.
var (
	replayLoaded  sync.Map // key string → *dsl.Result
	replayLoading sync.Mutex
)

func loadForReplay(file string, vars map[string]string) (*dsl.Result, error) {
	key := file
	for _, k := range slices.Sorted(maps.Keys(vars)) {
		key += "\n" + k + "=" + vars[k]
	}
	replayLoading.Lock() // one load of each, not one per parallel run
	defer replayLoading.Unlock()
	if v, ok := replayLoaded.Load(key); ok {
		return v.(*dsl.Result), nil
	}
	res, err := dsl.Load([]string{file}, dsl.Options{Vars: vars})
	if err != nil {
		return nil, err
	}
	replayLoaded.Store(key, res)
	return res, nil
}

// recordJSON is rec's JSON form, version 1 and its scenario's file filled in.
func recordJSON(t *testing.T, rec *interp.Record, file string) jrec {
	t.Helper()
	rec.Version = interp.RecordVersion
	if rec.File == "" {
		rec.File = file
	}
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	var out jrec
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return version1(out)
}

// version1 rewrites a record's JSON into version 1's form, the one users keep from runs on
// real clusters and the one these edits are written against: one section per kind of result
// (snapshots, series, loads, execs, logs, values) instead of version 2's results map, and
// without what later versions keep (stepParams, stepOptions, fileDigests, an exec's
// exit.txt, lints, invocation): a record of version 1 that keeps them had its version
// lowered, and is refused.
func version1(r jrec) jrec {
	results, _ := r["results"].(map[string]any)
	delete(r, "results")
	delete(r, "stepParams")
	delete(r, "stepOptions")
	delete(r, "fileDigests")
	delete(r, "lints")
	delete(r, "invocation")
	if arts, ok := r["artifacts"].([]any); ok {
		var kept []any
		for _, a := range arts {
			if m, _ := a.(map[string]any); m != nil && m["name"] == "exit.txt" {
				continue
			}
			kept = append(kept, a)
		}
		r["artifacts"] = kept
	}
	r["version"] = 1
	section := func(name string) map[string]any {
		m, _ := r[name].(map[string]any)
		if m == nil {
			m = map[string]any{}
			r[name] = m
		}
		return m
	}
	for name, raw := range results {
		res, _ := raw.(map[string]any)
		kind, _ := res["kind"].(string)
		sampled, _ := res["sampled"].(bool)
		switch {
		case kind == "snapshot" && sampled:
			section("series")[name] = res["value"]
		case kind == "snapshot":
			section("snapshots")[name] = res["value"]
		case kind == "load":
			section("loads")[name] = res["value"]
		case kind == "exec":
			section("execs")[name] = res["value"]
		case kind == "logs":
			section("logs")[name] = res["value"]
		default:
			section("values")[name] = res["value"]
		}
	}
	return r
}

// wrongOutcomesOf replays rec unedited (it must pass) and edited into each wrong outcome of its
// scenario (each must fail), reporting the expectations that caught each.
func wrongOutcomesOf(t *testing.T, rec *interp.Record, file string) int {
	t.Helper()
	n := 0
	if v, judged := replayJSON(t, recordJSON(t, rec, file)); v != interp.Passed {
		for _, j := range judged {
			if j.Outcome != interp.Passed {
				t.Errorf("control %s: %s: %s %s%s", rec.Scenario, j.Src, j.Outcome, j.Explanation, j.Reason)
			}
		}
		t.Errorf("control %s: replayed unedited: %s, want passed", rec.Scenario, v)
	}
	for _, w := range wrongOutcomes {
		if w.scenario != rec.Scenario {
			continue
		}
		n++
		t.Run(w.name, func(t *testing.T) {
			r := recordJSON(t, rec, file)
			w.edit(t, r)
			v, judged := replayJSON(t, r)
			var caught []string
			for _, j := range judged {
				if j.Outcome != interp.Passed {
					caught = append(caught, j.Src)
				}
			}
			if v == interp.Passed {
				t.Errorf("%s: %s replays as passed", rec.Scenario, w.name)
			} else {
				t.Logf("%s: %s: caught by %d: %s", rec.Scenario, w.name, len(caught), strings.Join(caught, "; "))
			}
		})
	}
	return n
}

func TestWrongOutcomes(t *testing.T) {
	scs := byName(t)
	kits := map[string]int{}
	total := 0
	for _, name := range wantScenarios {
		sc := scs[name]
		f := newFixture(sc)
		figures[name](f, false)
		var n int
		t.Run(name, func(t *testing.T) { n = wrongOutcomesOf(t, f.rec, sc.Pos.File) })
		total += n
		if n > 0 {
			kits[strings.TrimPrefix(sc.Tags[0], "kit")] += n
		}
	}
	if total < 20 || len(kits) < 3 {
		t.Errorf("%d wrong outcomes over kits %v, want at least 20 across the three kits", total, kits)
	}
	for _, w := range wrongOutcomes {
		if scs[w.scenario] == nil {
			t.Errorf("wrong outcome %q: no scenario %s", w.name, w.scenario)
		}
	}
}
