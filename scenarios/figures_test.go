package scenarios_test

// TestSeedFigures judges every scenario's expectations, with labrun's own judge, on a record
// made of what the seed authors measured (shared/seeds; where a seed gives no number, a value
// of the same shape is used and marked "shape"), and on the same record altered into the wrong
// outcome the experiment is there to rule out. The first must pass, the second must fail: the
// expectations hold on the recorded figures and would catch a wrong result. Expressions that
// only run on a real cluster (stats, config dumps, logs) are thereby also run once here, so a
// runtime type error in one shows up now.

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/schema"
)

// fixture builds an interp.Record step by step; snapshots are taken one second apart.
type fixture struct {
	rec *interp.Record
	at  time.Time
	sc  *dsl.Scenario
}

func newFixture(sc *dsl.Scenario) *fixture {
	return &fixture{
		rec: &interp.Record{
			Scenario: sc.Name,
			// The record of a run whose steps all ended: its expectations decide (replay
			// keeps any other outcome, one no run has is an error, and mutate needs a pass).
			Outcome:      interp.Passed,
			Vars:         sc.Vars,
			TargetValues: map[string]any{"clusterDomain": "homelab.local"},
			Results:      map[string]*interp.Result{},
		},
		at: time.Date(2026, 7, 2, 10, 42, 50, 0, time.UTC),
		sc: sc,
	}
}

// gauges are the stats that are gauges (everything else in a snapshot is a counter).
var gauges = map[string]bool{
	"upstream_cx_active":                       true,
	"circuit_breakers.default.cx_open":         true,
	"circuit_breakers.default.rq_pending_open": true,
	"outlier_detection.ejections_active":       true,
	"membership_healthy":                       true,
}

func (f *fixture) snap(name string, stats map[string]float64, hosts ...string) *fixture {
	f.at = f.at.Add(time.Second)
	s := &interp.SnapshotRecord{Name: name, At: f.at, Counters: schema.Stats{}, Gauges: schema.Stats{}}
	for k, v := range stats {
		if gauges[k] {
			s.Gauges[k] = v
		} else {
			s.Counters[k] = v
		}
	}
	for _, h := range hosts {
		s.Hosts = append(s.Hosts, schema.Host{Address: h, Healthy: true, Health: "healthy"})
	}
	f.rec.Put(name, "snapshot", false, s)
	return f
}

func (f *fixture) series(name string, samples ...map[string]float64) *fixture {
	ser := &interp.SeriesRecord{Name: name}
	for _, smp := range samples {
		f.at = f.at.Add(500 * time.Millisecond)
		s := &interp.SnapshotRecord{Name: name, At: f.at, Counters: schema.Stats{}, Gauges: schema.Stats{}}
		for k, v := range smp {
			s.Gauges[k] = v
		}
		ser.Samples = append(ser.Samples, s)
	}
	f.rec.Put(name, "snapshot", true, ser)
	return f
}

func (f *fixture) load(name string, requests float64, codes map[string]float64, set func(*schema.LoadResult)) *fixture {
	r := schema.LoadResult{Requests: requests, Codes: codes}
	for c, n := range codes {
		if strings.HasPrefix(c, "2") {
			r.OK += n
		} else {
			r.Errors += n
		}
	}
	if set != nil {
		set(&r)
	}
	if r.Requests > 0 {
		// The times and latencies a run records with its counts (replay refuses a load
		// that made requests in no time, or whose calls took none): 1 ms a call, one
		// connection, unless the figures say otherwise.
		if r.Connections == 0 {
			r.Connections = 1
		}
		if r.Max == 0 {
			r.Min, r.P50, r.P90, r.P99, r.P999, r.Max = 1, 1, 1, 1, 1, 1
		}
		if r.Avg == 0 {
			r.Avg = r.Min
		}
		if r.DurationS == 0 && r.QPS > 0 {
			r.DurationS = r.Requests / r.QPS
		}
		if r.DurationS == 0 {
			r.DurationS = r.Requests*r.Max/1000/r.Connections + 0.01
		}
		if r.QPS == 0 {
			r.QPS = r.Requests / r.DurationS
		}
	}
	f.rec.Put(name, "load", false, &interp.LoadRecord{LoadResult: r})
	return f
}

func (f *fixture) exec(name, stdout string, captured map[string]string) *fixture {
	f.rec.Put(name, "exec", false, schema.ExecResult{Stdout: stdout, Captured: captured})
	return f
}

func (f *fixture) logs(name string, r schema.LogResult) *fixture {
	// As a run keeps them: every line counted is an entry (a capture given without one is a
	// line that captured it), counted under its code, flags and details, its captures listed.
	if len(r.Captures) == 0 && len(r.Capture) > 0 {
		r.Captures = []map[string]string{r.Capture}
	}
	if len(r.Entries) == 0 {
		for _, c := range r.Captures {
			r.Entries = append(r.Entries, schema.LogEntry{Line: fmt.Sprint(c), Captures: c})
		}
	}
	for len(r.Entries) < int(r.Count) {
		r.Entries = append(r.Entries, schema.LogEntry{Line: "a log line"})
	}
	r.Count, r.Lines, r.Captures = float64(len(r.Entries)), nil, nil
	r.Codes, r.Flags, r.Details, r.Capture = map[string]float64{}, map[string]float64{}, map[string]float64{}, map[string]string{}
	for _, e := range r.Entries {
		r.Lines = append(r.Lines, e.Line)
		if e.Captures != nil {
			if len(r.Captures) == 0 {
				r.Capture = e.Captures
			}
			r.Captures = append(r.Captures, e.Captures)
		}
		if !e.Access {
			continue
		}
		r.Codes[fmt.Sprint(e.Code)]++
		for _, fl := range e.Flags {
			r.Flags[fl]++
		}
		if e.Details != "" {
			r.Details[e.Details]++
		}
	}
	f.rec.Put(name, "logs", false, r)
	return f
}

// step records a step's start and end, in seconds from the start of the steps phase.
func (f *fixture) step(name string, start, end float64) *fixture {
	at := time.Duration(start * float64(time.Second))
	kind := "exec"
	if st := f.sc.Step(name); st != nil {
		kind = st.Kind // replay refuses a result whose kind is not its step's
	}
	f.rec.Steps = append(f.rec.Steps, &interp.StepRecord{Name: name, Path: "steps." + name, Kind: kind, Outcome: interp.Passed,
		Planned: at, Start: at, End: time.Duration(end * float64(time.Second))})
	return f
}

// timeline records a2's protocol (and d2's, f0's) as the seed ran it: /slow from +10 s for
// 40.05 s, the flip 5 s in, MID1 and MID2 12 s and 30 s after the flip, AFTER 3 s after the end.
func timeline(f *fixture) *fixture {
	return f.step("slow", 10, 50.05).step("flip", 15, 15.1).step("mid1", 27, 27.2).step("mid2", 45, 45.2).step("after", 53.1, 53.3)
}

func (f *fixture) value(name string, v any) *fixture {
	f.rec.Put(name, "get", false, v)
	return f
}

// Addresses as the seed printed them.
const (
	ipA  = "10.250.161.145" // backend-a Service
	ipB  = "10.250.27.55"   // backend-b Service
	podA = "10.233.70.12"   // shape
	podB = "10.233.70.13"   // shape
)

// kitBValues are what Kit B's setup captures.
func kitBValues(f *fixture) *fixture {
	return f.value("lab_dns_ip", "10.250.217.19").value("ip_a", ipA).value("ip_b", ipB).
		value("pod_a", []any{podA}).value("pod_b", []any{podB})
}

// whoOut renders the curl loop's output: one row per second, backend(t) answering 200 unless
// code(t) says otherwise.
func whoOut(seconds int, backend func(t int) string, code func(t int) string) string {
	var b strings.Builder
	for t := 0; t < seconds; t++ {
		c := "200"
		if code != nil {
			c = code(t)
		}
		fmt.Fprintf(&b, "%d %s %s\n", t, c, backend(t))
	}
	return b.String()
}

func count(total, fail, slow, e28, e35 int) map[string]string {
	return map[string]string{"total": fmt.Sprint(total), "fail": fmt.Sprint(fail), "slow": fmt.Sprint(slow), "e28": fmt.Sprint(e28), "e35": fmt.Sprint(e35)}
}

func slowDone(who string) map[string]string {
	return map[string]string{"code": "200", "size": "409610", "time": "40.05", "who": who}
}

const hpo = "envoy.extensions.upstreams.http.v3.HttpProtocolOptions"

// figures builds, per scenario, the recorded run (wrong=false) and the wrong outcome (wrong=true).
var figures = map[string]func(f *fixture, wrong bool){
	"s1": func(f *fixture, wrong bool) {
		// T93 S1: cx_overflow +41, cx_total +2, rq_total +40, cx_open 1 mid-load, 200×40, 4 sockets.
		codes := map[string]float64{"200": 40}
		if wrong { // maxConnections alone rejecting requests
			codes = map[string]float64{"200": 30, "503": 10}
		}
		drcfg(f, "dr-s1", kitALimits{maxConnections: 1}, "10s", nil)
		f.snap("before", map[string]float64{"upstream_cx_overflow": 0, "upstream_cx_total": 0, "upstream_rq_total": 0, "upstream_rq_pending_overflow": 0, "circuit_breakers.default.cx_open": 0}).
			series("mid", map[string]float64{"circuit_breakers.default.cx_open": 0}, map[string]float64{"circuit_breakers.default.cx_open": 1}, map[string]float64{"circuit_breakers.default.cx_open": 1}).
			load("fortio", 40, codes, func(r *schema.LoadResult) { r.Connections, r.Sockets = 4, 4 }).
			snap("after", map[string]float64{"upstream_cx_overflow": 41, "upstream_cx_total": 2, "upstream_rq_total": codes["200"], "upstream_rq_pending_overflow": 0, "circuit_breakers.default.cx_open": 0})
	},
	"s2": func(f *fixture, wrong bool) {
		// T93 S2: pending_overflow 0→12, cx_overflow 41→57, rq_total 40→58, 200×18, 503×12;
		// rq_active_overflow 0 (§4.2, C14); cx_total 2→3: shape.
		codes := map[string]float64{"200": 18, "503": 12}
		if wrong { // 503s that are not the pending breaker's
			codes = map[string]float64{"200": 15, "503": 15}
		}
		drcfg(f, "dr-s2", kitALimits{maxConnections: 1, maxPendingRequests: 1}, "10s", nil)
		f.snap("before", map[string]float64{"upstream_rq_pending_overflow": 0, "upstream_cx_overflow": 41, "upstream_rq_total": 40, "upstream_rq_active_overflow": 0, "upstream_cx_total": 2}).
			series("mid", map[string]float64{"circuit_breakers.default.rq_pending_open": 1}).
			load("fortio", 30, codes, func(r *schema.LoadResult) { r.Connections, r.Sockets = 3, 14 }).
			snap("after", map[string]float64{"upstream_rq_pending_overflow": 12, "upstream_cx_overflow": 57, "upstream_rq_total": 40 + codes["200"], "upstream_rq_active_overflow": 0, "upstream_cx_total": 3})
	},
	"s3": func(f *fixture, wrong bool) {
		// T93 S3: cx_max_requests 0→20, cx_total 3→23, rq_total 58→78, 200×20, 1 socket.
		maxReq, total := 20.0, 23.0
		if wrong { // connections reused: the DR had no effect
			maxReq, total = 0, 4
		}
		drcfg(f, "dr-s3", kitALimits{}, "10s", map[string]any{"max_requests_per_connection": 1.0})
		f.snap("before", map[string]float64{"upstream_cx_max_requests": 0, "upstream_cx_total": 3, "upstream_rq_total": 58}).
			load("fortio", 20, map[string]float64{"200": 20}, func(r *schema.LoadResult) { r.Connections, r.Sockets = 1, 1 }).
			snap("after", map[string]float64{"upstream_cx_max_requests": maxReq, "upstream_cx_total": total, "upstream_rq_total": 78})
	},
	"s4": func(f *fixture, wrong bool) {
		// T93 S4: cx_idle_timeout 0→1, cx_total 23→24; rq_total 78→79: shape.
		idle := 1.0
		if wrong {
			idle = 0
		}
		drcfg(f, "dr-s4", kitALimits{}, "10s", map[string]any{"idle_timeout": "2s"})
		f.step("fortio", 0, 0.012).step("after", 5.015, 5.05)
		f.snap("before", map[string]float64{"upstream_cx_idle_timeout": 0, "upstream_cx_total": 23, "upstream_rq_total": 78}).
			load("fortio", 1, map[string]float64{"200": 1}, nil).
			snap("after", map[string]float64{"upstream_cx_idle_timeout": idle, "upstream_cx_total": 24, "upstream_rq_total": 79})
	},
	"s5": func(f *fixture, wrong bool) {
		// T93 S5: cx_max_duration_reached 0→2, cx_total 24→26, 200×100, 1 socket; rq_total
		// 79→179 and the load's 10.012 s: shape.
		reached, total := 2.0, 26.0
		if wrong {
			reached, total = 0, 25
		}
		drcfg(f, "dr-s5", kitALimits{}, "10s", map[string]any{"max_connection_duration": "5s"})
		f.step("fortio", 0, 10.012).step("after", 15.02, 15.05)
		f.snap("before", map[string]float64{"upstream_cx_max_duration_reached": 0, "upstream_cx_total": 24, "upstream_rq_total": 79}).
			load("fortio", 100, map[string]float64{"200": 100}, func(r *schema.LoadResult) { r.Connections, r.Sockets, r.DurationS, r.QPS = 1, 1, 10.012, 100/10.012 }).
			snap("after", map[string]float64{"upstream_cx_max_duration_reached": reached, "upstream_cx_total": total, "upstream_rq_total": 179})
	},
	"s6": func(f *fixture, wrong bool) {
		// T93 S6: connect_timeout = connect_fail = cx_total 0→15, 503×5, avg 3033 ms, URX,UF,
		// "198.51.100.10:80" outbound|80||blackhole.lab.internal through VIP 240.240.0.12;
		// rq_retry 0→10 and retry_limit_exceeded 0→5: what 3 attempts a request mean.
		n, avg, retries := 15.0, 3033.0, 10.0
		if wrong { // no retries: one attempt per request
			n, avg, retries = 5, 1011, 0
		}
		drcfg(f, "dr-s6", kitALimits{}, "1s", nil)
		line := schema.LogEntry{Access: true, Method: "GET", Path: "/", Code: 503, Flags: []string{"URX", "UF"},
			Details: "upstream_reset_before_response_started{connection_timeout}", UpstreamHost: "198.51.100.10:80", Cluster: "outbound|80||blackhole.lab.internal"}
		counters := func(v, retry, exceeded float64) map[string]float64 {
			return map[string]float64{"upstream_cx_connect_timeout": v, "upstream_cx_connect_fail": v, "upstream_cx_total": v,
				"upstream_rq_retry": retry, "upstream_rq_retry_limit_exceeded": exceeded, "upstream_rq_retry_overflow": 0}
		}
		f.snap("before", counters(0, 0, 0)).
			load("fortio", 5, map[string]float64{"503": 5}, func(r *schema.LoadResult) {
				r.Avg, r.Min, r.Max = avg, avg, avg // every request the same attempts
				r.IPs = map[string]float64{"240.240.0.12:80": 5}
			}).
			snap("after", counters(n, retries, 5)).
			logs("accesslog", schema.LogResult{Count: 5, Codes: map[string]float64{"503": 5},
				Flags:   map[string]float64{"URX": 5, "UF": 5},
				Details: map[string]float64{"upstream_reset_before_response_started{connection_timeout}": 5},
				Entries: []schema.LogEntry{line, line, line, line, line}})
	},
	"s7_full": func(f *fixture, wrong bool) {
		retries := 2.0
		if wrong {
			retries = 4294967295
		}
		f.value("keepalive", map[string]any{"keepalive_probes": 3.0, "keepalive_time": 300.0, "keepalive_interval": 30.0}).
			value("cb", map[string]any{"max_connections": 4294967295.0, "max_pending_requests": 4294967295.0, "max_requests": 4294967295.0, "max_retries": retries}).
			value("h2", map[string]any{"max_concurrent_streams": 64.0})
	},
	"s7c": func(f *fixture, wrong bool) {
		h2 := map[string]any{}
		if wrong { // istio.io's documented default written out
			h2["max_concurrent_streams"] = 2147483647.0
		}
		f.value("cb_base", unlimited()).
			value("cb", unlimited()).
			value("h2", h2)
	},
	"s7_nodr": func(f *fixture, wrong bool) {
		// SCENARIOS.md, Kit A: with no DR istiod writes 4294967295 for all four.
		cb := unlimited()
		if wrong { // seed 000's C4: Envoy's defaults
			cb = envoyDefaults()
		}
		f.value("cb", cb)
	},
	"s7_lbonly": func(f *fixture, wrong bool) {
		// SCENARIOS.md, Kit A: a DR with only a loadBalancer, the same.
		cb := unlimited()
		if wrong {
			cb = envoyDefaults()
		}
		f.value("cb", cb)
	},
	"s7b": func(f *fixture, wrong bool) {
		v := map[string]any{"use_downstream_protocol_config": map[string]any{"http_protocol_options": map[string]any{}, "http2_protocol_options": map[string]any{}}}
		if wrong {
			v = map[string]any{"explicit_http_config": map[string]any{"http2_protocol_options": map[string]any{}}}
		}
		f.value("hpo", v)
	},
	"mode1_strict": func(f *fixture, wrong bool) {
		// §4: membership 2→3, destroy 0→2 (local 0→2), cx_total 2→4; who → b about 5 s after the flip.
		kitBValues(f)
		f.step("warm", 0, 60).step("who", 0.001, 55.3).step("before_flip", 8, 8.1).step("flip", 10, 10.05).step("after_flip", 50, 50.1)
		after := map[string]float64{"membership_change": 3, "upstream_cx_destroy": 2, "upstream_cx_destroy_local": 2, "upstream_cx_destroy_remote": 0, "upstream_cx_destroy_with_active_rq": 0, "upstream_cx_total": 4}
		who := func(t int) string {
			if t < 15 {
				return "backend-a"
			}
			return "backend-b"
		}
		if wrong { // LOGICAL's behaviour
			after = map[string]float64{"membership_change": 2, "upstream_cx_destroy": 0, "upstream_cx_destroy_local": 0, "upstream_cx_destroy_remote": 0, "upstream_cx_destroy_with_active_rq": 0, "upstream_cx_total": 2}
			who = func(int) string { return "backend-a" }
		}
		f.snap("settled", map[string]float64{"membership_change": 2}, ipA+":443").
			snap("before_flip", map[string]float64{"membership_change": 2, "upstream_cx_destroy": 0, "upstream_cx_destroy_local": 0, "upstream_cx_destroy_remote": 0, "upstream_cx_destroy_with_active_rq": 0, "upstream_cx_total": 2}, ipA+":443").
			load("warm", 600, map[string]float64{"200": 600}, func(r *schema.LoadResult) { r.Connections, r.Sockets = 2, 2 }).
			exec("who", whoOut(55, who, nil), nil).
			snap("after_flip", after, ipB+":443")
	},
	"mode1_logical": func(f *fixture, wrong bool) {
		// §4: membership 4→4, destroy 4→4, cx_total 6→6; who = a for 40 s; the view shows B.
		kitBValues(f)
		f.step("warm", 0, 60).step("who", 0.001, 55.3).step("before_flip", 8, 8.1).step("flip", 10, 10.05).step("after_flip", 50, 50.1)
		after := map[string]float64{"membership_change": 4, "upstream_cx_destroy": 4, "upstream_cx_total": 6}
		who := func(int) string { return "backend-a" }
		if wrong { // STRICT's behaviour
			after = map[string]float64{"membership_change": 5, "upstream_cx_destroy": 6, "upstream_cx_total": 8}
			who = func(t int) string {
				if t < 15 {
					return "backend-a"
				}
				return "backend-b"
			}
		}
		f.snap("settled", map[string]float64{"membership_change": 4}, ipA+":443").
			snap("before_flip", map[string]float64{"membership_change": 4, "upstream_cx_destroy": 4, "upstream_cx_total": 6}, ipA+":443").
			load("warm", 600, map[string]float64{"200": 600}, func(r *schema.LoadResult) { r.Connections, r.Sockets = 2, 2 }).
			exec("who", whoOut(55, who, nil), nil).
			snap("after_flip", after, ipB+":443")
	},
	"mode3": func(f *fixture, wrong bool) {
		// §5: who stays a after the flip, switches to b at the kill, 0 non-200;
		// destroy_remote +1, cx_total +2, destroy_with_active_rq 0.
		kitBValues(f)
		f.step("warm", 0, 60).step("who", 0.001, 55.3).step("before", 3, 3.1).step("flip", 5, 5.05).step("kill_a", 25, 25.2).step("after", 45, 45.1)
		code := func(int) string { return "200" }
		if wrong { // a reconnect blip
			code = func(t int) string {
				if t == 26 {
					return "503"
				}
				return "200"
			}
		}
		f.snap("settled", nil, ipA+":443").
			snap("before", map[string]float64{"upstream_cx_destroy_remote": 0, "upstream_cx_destroy": 0, "upstream_cx_total": 1, "upstream_cx_destroy_with_active_rq": 0}, ipA+":443"). // shape: one connection open
			load("warm", 600, map[string]float64{"200": 600}, nil).
			exec("who", whoOut(55, func(t int) string {
				if t < 26 {
					return "backend-a"
				}
				return "backend-b"
			}, code), nil).
			snap("after", map[string]float64{"upstream_cx_destroy_remote": 1, "upstream_cx_destroy": 1, "upstream_cx_total": 3, "upstream_cx_destroy_with_active_rq": 0}, ipB+":443")
	},
	"mode2": func(f *fixture, wrong bool) {
		// §6: after the kill all 35 requests 200 from b (shape: one row a second).
		kitBValues(f)
		f.step("warm", 0, 60).step("who", 0.001, 55.3).step("flip_both", 5, 5.05).step("before", 20, 20.1).step("kill_a", 25, 25.2).step("after", 50, 50.1)
		code := func(int) string { return "200" }
		if wrong { // loss on the dead IP
			code = func(t int) string {
				if t%4 == 0 && t > 25 {
					return "503"
				}
				return "200"
			}
		}
		none := map[string]float64{"upstream_rq_retry": 0, "upstream_cx_connect_fail": 0} // shape: the seed recorded no counter
		f.snap("settled", nil, ipA+":443").
			snap("before", none, ipA+":443", ipB+":443").
			load("warm", 600, map[string]float64{"200": 600}, nil).
			exec("who", whoOut(55, func(t int) string {
				if t < 25 && t%2 == 0 {
					return "backend-a"
				}
				return "backend-b"
			}, code), nil).
			snap("after", none, ipA+":443", ipB+":443")
	},
	"a1": func(f *fixture, wrong bool) {
		// §9: 2 runs, each 200 / 409,610 bytes / 40.05 s; destroy_with_active_rq Δ0,
		// membership_change +1, destroy_local +1.
		kitBValues(f)
		for i, base := range []float64{10, 20} {
			n := fmt.Sprint(i + 1)
			slow := slowDone("backend-a")
			destroyActive := 0.0
			if wrong && i == 1 { // the flip cut the request
				slow = map[string]string{"code": "000", "size": "122880", "time": "12.01", "who": "backend-a"}
				destroyActive = 1
			}
			f.step("slow"+n, base*5-45, base*5-45+40.05).step("flip"+n, base*5-40, base*5-40+0.1)
			f.snap("settle"+n, nil, ipA+":443").
				snap("before"+n, map[string]float64{"upstream_cx_destroy_with_active_rq": 0, "membership_change": base, "upstream_cx_destroy_local": base}, ipA+":443").
				exec("slow"+n, "", slow).
				snap("after"+n, map[string]float64{"upstream_cx_destroy_with_active_rq": destroyActive, "membership_change": base + 1, "upstream_cx_destroy_local": base + 1}, ipB+":443")
		}
	},
	"a2_strict": func(f *fixture, wrong bool) {
		// §10 STRICT: membership 17→18→18→18, cx_active 0→1→1→0, destroy/local 51/7 frozen → 52/8.
		kitBValues(f)
		timeline(f)
		mid1 := map[string]float64{"membership_change": 18, "upstream_cx_active": 1, "upstream_cx_destroy": 51, "upstream_cx_destroy_local": 7}
		if wrong { // cut at the flip
			mid1 = map[string]float64{"membership_change": 18, "upstream_cx_active": 0, "upstream_cx_destroy": 52, "upstream_cx_destroy_local": 8}
		}
		f.snap("settled", nil, ipA+":443").
			snap("before", map[string]float64{"membership_change": 17, "upstream_cx_active": 0, "upstream_cx_destroy": 51, "upstream_cx_destroy_local": 7}, ipA+":443").
			exec("slow", "", slowDone("backend-a")).
			snap("mid1", mid1, ipB+":443").
			snap("mid2", map[string]float64{"membership_change": 18, "upstream_cx_active": 1, "upstream_cx_destroy": 51, "upstream_cx_destroy_local": 7}, ipB+":443").
			snap("after", map[string]float64{"membership_change": 18, "upstream_cx_active": 0, "upstream_cx_destroy": 52, "upstream_cx_destroy_local": 8}, ipB+":443")
	},
	"a2_logical": func(f *fixture, wrong bool) {
		// §10 LOGICAL: cx_active stays 1 after completion, destroy Δ0.
		kitBValues(f)
		timeline(f)
		after := map[string]float64{"membership_change": 4, "upstream_cx_active": 1, "upstream_cx_destroy": 30}
		if wrong { // STRICT's drain
			after = map[string]float64{"membership_change": 4, "upstream_cx_active": 0, "upstream_cx_destroy": 31}
		}
		f.snap("settled", nil, ipA+":443").
			snap("before", map[string]float64{"membership_change": 4, "upstream_cx_active": 0, "upstream_cx_destroy": 30}, ipA+":443").
			exec("slow", "", slowDone("backend-a")).
			snap("mid1", map[string]float64{"membership_change": 4, "upstream_cx_active": 1, "upstream_cx_destroy": 30}, ipB+":443").
			snap("mid2", map[string]float64{"membership_change": 4, "upstream_cx_active": 1, "upstream_cx_destroy": 30}, ipB+":443").
			snap("after", after, ipB+":443")
	},
	"b": func(f *fixture, wrong bool) {
		// §11: 149 / 0 / 37 slow, rq_retry +81; 5,221 / 0 / 1, ejections +2; 5,219 / 0 / 1.
		kitBValues(f)
		stage1 := count(149, 0, 37, 0, 0)
		if wrong { // no default retry: the dead-IP picks fail
			stage1 = count(149, 37, 37, 0, 0)
		}
		f.snap("settled", nil, ipA+":443", ipB+":443").
			snap("s1_before", map[string]float64{"upstream_rq_retry": 0, "upstream_cx_total": 0, "upstream_rq_total": 0}).
			exec("stage1", "", stage1).
			snap("s1_after", map[string]float64{"upstream_rq_retry": 81, "upstream_cx_total": 230, "upstream_rq_total": 149}). // shape: 149 + 81, 149
			snap("s2_before", map[string]float64{"outlier_detection.ejections_enforced_total": 0, "upstream_rq_retry": 0}).
			exec("stage2", "", count(5221, 0, 1, 0, 0)).
			snap("s2_after", map[string]float64{"outlier_detection.ejections_enforced_total": 2, "upstream_rq_retry": 6}, ipA+":443", ipB+":443"). // rq_retry: shape, 3 picks an ejection
			snap("s3_before", nil).
			exec("stage3", "", count(5219, 0, 1, 0, 0)).
			snap("s3_after", nil)
		// §11: the dead host "health_flags:/failed_outlier_check".
		dead := &f.rec.Snapshot("s2_after").Hosts[0]
		dead.Healthy, dead.Health = false, "/failed_outlier_check"
	},
	"d1": func(f *fixture, wrong bool) {
		// p_after's upstream_cx_total +41 (one upstream connection per attempt): shape.
		// §14-3: passthrough 41 / 18 failed (13 × exit 28, 5 × exit 35), Envoy connect failures 11;
		// HTTP 86 / 0, rq_retry 46 all successful (rq_retry_success 46), rq_total +86.
		kitBValues(f)
		f.step("pt", 0, 40.5).step("http", 0.002, 40.1)
		pt := count(41, 18, 13, 13, 5)
		if wrong { // passthrough protected as well as HTTP
			pt = count(86, 0, 0, 0, 0)
		}
		f.snap("h_settled", nil, ipA+":443", ipB+":443").
			snap("p_settled", nil, podA+":443", podB+":443").
			snap("h_before", map[string]float64{"upstream_rq_retry": 0, "upstream_rq_retry_success": 0, "upstream_rq_total": 0}).
			snap("p_before", map[string]float64{"upstream_cx_connect_fail": 0, "upstream_cx_total": 0}).
			exec("pt", "", pt).
			exec("http", "", count(86, 0, 0, 0, 0)).
			snap("h_after", map[string]float64{"upstream_rq_retry": 46, "upstream_rq_retry_success": 46, "upstream_rq_total": 86}).
			snap("p_after", map[string]float64{"upstream_cx_connect_fail": 11, "upstream_cx_total": 41})
	},
	"d2": func(f *fixture, wrong bool) {
		// §14-4: completes; membership late (MID2), cx_active 1 through MID2, destroy after.
		kitBValues(f)
		timeline(f)
		slow := slowDone("backend-a")
		if wrong {
			slow = map[string]string{"code": "000", "size": "163840", "time": "17.02", "who": "backend-a"}
		}
		f.snap("settled", nil, podA+":443").
			snap("before", map[string]float64{"membership_change": 4, "upstream_cx_active": 0, "upstream_cx_destroy": 10}, podA+":443").
			exec("slow", "", slow).
			snap("mid1", map[string]float64{"membership_change": 4, "upstream_cx_active": 1, "upstream_cx_destroy": 10}, podA+":443").
			snap("mid2", map[string]float64{"membership_change": 5, "upstream_cx_active": 1, "upstream_cx_destroy": 10}, podB+":443").
			snap("after", map[string]float64{"membership_change": 5, "upstream_cx_active": 0, "upstream_cx_destroy": 11}, podB+":443")
	},
	"f0": func(f *fixture, wrong bool) {
		// §14-7: completes on A, membership 11→11, view shows B at MID1, destroy 2973 → 2974 after.
		kitBValues(f)
		timeline(f)
		record := ipA + "\n"
		if wrong { // the flip overwrote the other host name's record
			record = ""
		}
		f.snap("settled", nil, podA+":443").
			snap("before", map[string]float64{"membership_change": 11, "upstream_cx_destroy": 2973}, podA+":443").
			exec("slow", "", slowDone("backend-a")).
			snap("mid1", map[string]float64{"membership_change": 11, "upstream_cx_destroy": 2973}, podB+":443").
			snap("mid2", map[string]float64{"membership_change": 11, "upstream_cx_destroy": 2973}, podB+":443").
			snap("after", map[string]float64{"membership_change": 11, "upstream_cx_destroy": 2974}, podB+":443").
			exec("gslb_record", record, nil)
	},
	"d3": func(f *fixture, wrong bool) {
		// §14-5: A 29 / 15 failed; B 2,905 / 6 failed, ejections_enforced_total 2.
		kitBValues(f)
		// shape: slow and exits (DR 49's 1 s connect timeout resets the handshake: exit 35)
		stageB, ejections := count(2905, 6, 6, 0, 6), 2.0
		if wrong { // outlier detection without effect
			stageB, ejections = count(30, 15, 12, 12, 3), 0
		}
		f.snap("settled", nil, podA+":443", podB+":443").
			snap("a_before", nil).
			exec("stage_a", "", count(29, 15, 12, 12, 3)).
			snap("a_after", nil).
			snap("b_before", map[string]float64{"outlier_detection.ejections_enforced_total": 0}).
			exec("stage_b", "", stageB).
			snap("b_after", map[string]float64{"outlier_detection.ejections_enforced_total": ejections})
	},
	"c_stale": func(f *fixture, wrong bool) {
		// seed 003: ConnectionId 79097 reused for the pod that got 10.90.142.96; 503 UC.
		stale(f)
		id, code := "79097", "503"
		if wrong { // a fresh connection to the new pod
			id, code = "80112", "200"
		}
		f.exec("phase2", "code="+code, map[string]string{"code": code}).
			logs("wp2", reuseLines(id)).
			logs("access", schema.LogResult{Count: 1, Codes: map[string]float64{code: 1}, Flags: map[string]float64{"UC": 1},
				Details: map[string]float64{"upstream_reset_before_response_started{connection_termination}": 1},
				Entries: []schema.LogEntry{requestLine(code, "UC", "upstream_reset_before_response_started{connection_termination}")}})
	},
	"c_retry": func(f *fixture, wrong bool) {
		// seed 003 §5.2: the same sequence with retry on reset: 0 × 503.
		stale(f)
		code := "200"
		if wrong {
			code = "503"
		}
		f.exec("phase2", "code="+code, map[string]string{"code": code}).
			logs("wp2", reuseLines("79097")).
			logs("access", schema.LogResult{Count: 1, Codes: map[string]float64{code: 1}, Entries: []schema.LogEntry{requestLine(code, "", "via_upstream")}})
	},
	"cfg_resolution_strict": func(f *fixture, wrong bool) {
		kitBValues(f) // its setup is Kit B's
		typ := "STRICT_DNS"
		if wrong {
			typ = "LOGICAL_DNS"
		}
		f.value("gslb", map[string]any{"name": "outbound|443||gslb.lab.internal", "type": typ}).
			value("pt", map[string]any{"name": "outbound|443||gslb-pt.lab.internal", "type": typ})
	},
	"cfg_resolution_logical": func(f *fixture, wrong bool) {
		kitBValues(f) // its setup is Kit B's
		typ := "LOGICAL_DNS"
		if wrong {
			typ = "STRICT_DNS"
		}
		f.value("gslb", map[string]any{"name": "outbound|443||gslb.lab.internal", "type": typ}).
			value("pt", map[string]any{"name": "outbound|443||gslb-pt.lab.internal", "type": typ})
	},
	"cfg_portlevel": func(f *fixture, wrong bool) {
		kitBValues(f) // its setup is Kit B's
		broken := map[string]any{
			"transport_socket":                 map[string]any{"name": "envoy.transport_sockets.tls"},
			"typed_extension_protocol_options": map[string]any{hpo: map[string]any{"common_http_protocol_options": map[string]any{"idle_timeout": "3600s"}}},
		}
		if wrong { // top-level fields inherited (what one expects, not what Istio does)
			broken["outlier_detection"] = map[string]any{"consecutive_local_origin_failure": 3.0}
		}
		f.value("broken", broken).
			value("fixed", map[string]any{
				"transport_socket":                 map[string]any{"name": "envoy.transport_sockets.tls"},
				"outlier_detection":                map[string]any{"consecutive_local_origin_failure": 3.0, "split_external_local_origin_errors": true},
				"typed_extension_protocol_options": map[string]any{hpo: map[string]any{"common_http_protocol_options": map[string]any{"max_requests_per_connection": 1.0}}},
			})
	},
	"cfg_retry": func(f *fixture, wrong bool) {
		kitBValues(f) // its setup is Kit B's
		rp := map[string]any{
			"retry_on":             "connect-failure,refused-stream,unavailable,cancelled,retriable-status-codes",
			"num_retries":          2.0,
			"retry_host_predicate": []any{map[string]any{"name": "envoy.retry_host_predicates.previous_hosts"}},
		}
		if wrong { // no retry policy without VirtualService retries
			rp = map[string]any{"num_retries": 0.0, "retry_on": "", "retry_host_predicate": []any{}}
		}
		f.value("route80", map[string]any{"name": "80", "virtual_hosts": []any{
			map[string]any{"name": "allow_any", "routes": []any{}},
			map[string]any{"name": "gslb.lab.internal:80", "routes": []any{map[string]any{"route": map[string]any{
				"cluster": "outbound|443||gslb.lab.internal", "retry_policy": rp}}}},
		}})
	},
	"cfg_passthrough": func(f *fixture, wrong bool) {
		kitBValues(f) // its setup is Kit B's
		filters := []any{
			map[string]any{"name": "istio.stats"},
			map[string]any{"name": "envoy.filters.network.tcp_proxy", "typed_config": map[string]any{"stat_prefix": "outbound|443||gslb-pt.lab.internal", "cluster": "outbound|443||gslb-pt.lab.internal"}},
		}
		if wrong { // routed as HTTP
			filters = []any{map[string]any{"name": "envoy.filters.network.http_connection_manager", "typed_config": map[string]any{"rds": map[string]any{"route_config_name": "443"}}}}
		}
		f.value("l443", map[string]any{
			"name":             "0.0.0.0_443",
			"listener_filters": []any{map[string]any{"name": "envoy.filters.listener.tls_inspector"}},
			"filter_chains": []any{
				map[string]any{"filter_chain_match": map[string]any{"server_names": []any{"gslb.lab.internal"}}, "filters": []any{}},
				map[string]any{"filter_chain_match": map[string]any{"server_names": []any{"gslb-pt.lab.internal"}}, "filters": filters},
				map[string]any{"filters": []any{}},
			},
		})
	},
}

// reuseLines is phase 2's "using existing fully connected connection" lines: another pool's
// first (shape: a waypoint has more than one pool), then the request's on connection id.
func reuseLines(id string) schema.LogResult {
	return schema.LogResult{Count: 2, Capture: map[string]string{"id": "78411"},
		Captures: []map[string]string{{"id": "78411"}, {"id": id}}}
}

// requestLine is the waypoint's access-log line of the phase-2 request to the reused IP.
func requestLine(code, flag, details string) schema.LogEntry {
	c := 200.0
	if code == "503" {
		c = 503
	}
	var flags []string
	if flag != "" {
		flags = []string{flag}
	}
	return schema.LogEntry{Access: true, Method: "GET", Path: "/", Code: c, Flags: flags, Details: details,
		UpstreamHost: "envoy://connect_originate/10.90.142.96:8080", Cluster: "inbound-vip|8080|http|dummy.ambient-lab.svc.cluster.local"}
}

// stale records Kit C's sequence up to phase 2: pod aaa at 10.90.142.96, the waypoint's phase-1
// connection 79097 to it, a new pod with that IP, the socket still ESTABLISHED.
func stale(f *fixture) {
	pod := func(name string, deleting bool) map[string]any {
		md := map[string]any{"name": name}
		if deleting {
			md["deletionTimestamp"] = "2026-07-01T10:00:00Z"
		}
		return map[string]any{"metadata": md, "status": map[string]any{"podIP": "10.90.142.96"}}
	}
	f.value("aaa", []any{pod("dummy-7c9f-aaa", false)}).
		exec("phase1", "code=200", map[string]string{"code": "200"}).
		logs("wp1", schema.LogResult{Count: 1, Capture: map[string]string{"id": "79097", "addr": "10.90.142.96"}}).
		value("bbb", []any{pod("dummy-7c9f-aaa", true), pod("dummy-7c9f-bbb", false)}).
		exec("ss_stale", "ESTAB 0 0 10.90.11.4:41234 10.90.142.96:15008", map[string]string{"peer": "10.90.142.96:15008"})
}

// kitALimits are the circuit-breaker limits a Kit A DR sets (0: not set, written 4294967295).
type kitALimits struct{ maxConnections, maxPendingRequests, maxRequests, maxRetries float64 }

// drcfg records the DR wait's config value of a Kit A scenario: the client sidecar's cluster
// as the sandbox's istiod writes it for DR dr (circuit breakers, connect_timeout, and the
// HttpProtocolOptions' common options when the DR sets any).
func drcfg(f *fixture, dr string, l kitALimits, connectTimeout string, common map[string]any) {
	or := func(v float64) float64 {
		if v == 0 {
			return 4294967295
		}
		return v
	}
	c := map[string]any{
		"name":            "outbound|8080||backend.conn-lab.svc.homelab.local",
		"connect_timeout": connectTimeout,
		"circuit_breakers": map[string]any{"thresholds": []any{map[string]any{
			"max_connections": or(l.maxConnections), "max_pending_requests": or(l.maxPendingRequests),
			"max_requests": or(l.maxRequests), "max_retries": or(l.maxRetries)}}},
		"metadata": map[string]any{"filter_metadata": map[string]any{"istio": map[string]any{
			"config": "/apis/networking.istio.io/v1/namespaces/conn-lab/destination-rule/" + dr}}},
	}
	if common != nil {
		c["typed_extension_protocol_options"] = map[string]any{hpo: map[string]any{
			"common_http_protocol_options": common,
			"explicit_http_config":         map[string]any{"http_protocol_options": map[string]any{}},
		}}
	}
	f.value("drcfg", c)
}

// unlimited is the thresholds istiod writes when the DR sets none: 2^32-1 each.
func unlimited() map[string]any {
	return map[string]any{"max_connections": 4294967295.0, "max_pending_requests": 4294967295.0, "max_requests": 4294967295.0, "max_retries": 4294967295.0}
}

// envoyDefaults is Envoy's own circuit-breaker defaults, which seed 000's C4 expects.
func envoyDefaults() map[string]any {
	return map[string]any{"max_connections": 1024.0, "max_pending_requests": 1024.0, "max_requests": 1024.0, "max_retries": 3.0}
}

func TestSeedFigures(t *testing.T) {
	scs := byName(t)
	for _, name := range wantScenarios {
		sc := scs[name]
		build := figures[name]
		if sc == nil || build == nil {
			t.Errorf("%s: no figures", name)
			continue
		}
		t.Run(name, func(t *testing.T) {
			for _, wrong := range []bool{false, true} {
				f := newFixture(sc)
				build(f, wrong)
				j := interp.NewJudge(f.rec, sc)
				failed := 0
				for _, e := range sc.Expect {
					jd := j.Judge(e)
					switch {
					case jd.Outcome == interp.Errored:
						t.Errorf("wrong=%v: %s: cannot be judged: %s", wrong, e.Src, jd.Reason)
					case !wrong && jd.Outcome != interp.Passed:
						t.Errorf("on the seed's figures: %s: %s %s%s", e.Src, jd.Outcome, jd.Explanation, jd.Reason)
					case jd.Outcome == interp.Failed:
						failed++
					}
				}
				if wrong && failed == 0 {
					t.Errorf("the wrong outcome passes every expectation")
				}
			}
		})
	}
}

// TestTemplatesResolve evaluates every ${...} of every step, as the runner does when the step
// starts, with the values the recorded run captured: each must give a plain value.
func TestTemplatesResolve(t *testing.T) {
	for _, sc := range scenarios(t) {
		f := newFixture(sc)
		figures[sc.Name](f, false)
		env := interp.NewJudge(f.rec, sc).Env()
		for _, s := range steps(sc) {
			if !s.HasTemplates() {
				continue
			}
			p, err := s.Resolve(env)
			if err != nil {
				t.Errorf("%s: %s: %v", sc.Name, s.Path, err)
				continue
			}
			b, _ := json.Marshal(p)
			for _, bad := range []string{"${", "<nil>", "map[", "homelab.local.homelab"} {
				if strings.Contains(string(b), bad) {
					t.Errorf("%s: %s resolves to %s", sc.Name, s.Path, b)
				}
			}
			if !strings.Contains(string(b), "homelab.local") && strings.Contains(string(jsonOf(s.Params)), "clusterDomain") {
				t.Errorf("%s: %s: the cluster domain was not filled in: %s", sc.Name, s.Path, b)
			}
		}
	}
}

func jsonOf(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// TestWaitConditions: a repeat's until is false before anything is recorded (so the repeat
// really waits), and an #AwaitDR's until turns true on the cluster config that carries the DR.
func TestWaitConditions(t *testing.T) {
	drRE := regexp.MustCompile(`^\((\w+)\?\.metadata.*"/destination-rule/([a-z0-9-]+)"$`)
	awaits := 0
	defer func() {
		if awaits == 0 {
			t.Errorf("no DR await found: the pattern above no longer matches #AwaitDR's until")
		}
	}()
	for _, sc := range scenarios(t) {
		for _, s := range steps(sc) {
			if s.Kind != "repeat" || s.Expr == nil {
				continue
			}
			empty := newFixture(sc)
			if jd := interp.NewJudge(empty.rec, sc).Judge(s.Expr); jd.Outcome == interp.Passed {
				t.Errorf("%s: %s: until %q holds before anything was recorded", sc.Name, s.Path, s.Expr.Src)
			}
			if m := drRE.FindStringSubmatch(s.Expr.Src); m != nil {
				awaits++
				f := newFixture(sc)
				f.value(m[1], map[string]any{"metadata": map[string]any{"filter_metadata": map[string]any{"istio": map[string]any{
					"config": "/apis/networking.istio.io/v1/namespaces/" + sc.Namespaces[0] + "/destination-rule/" + m[2]}}}})
				if jd := interp.NewJudge(f.rec, sc).Judge(s.Expr); jd.Outcome != interp.Passed {
					t.Errorf("%s: %s: until %q does not hold on a cluster carrying the DR: %s%s", sc.Name, s.Path, s.Expr.Src, jd.Explanation, jd.Reason)
				}
				other := newFixture(sc)
				other.value(m[1], map[string]any{"metadata": map[string]any{"filter_metadata": map[string]any{"istio": map[string]any{
					"config": "/apis/networking.istio.io/v1/namespaces/" + sc.Namespaces[0] + "/destination-rule/another"}}}})
				if jd := interp.NewJudge(other.rec, sc).Judge(s.Expr); jd.Outcome == interp.Passed {
					t.Errorf("%s: %s: until %q holds on a cluster carrying another DR", sc.Name, s.Path, s.Expr.Src)
				}
			}
		}
	}
}

// TestDeadIPAssumption: b's stage-1 latency tax depends on what a connection to the dead
// ClusterIP meets (vars.deadIPConnect). The seed's cluster hung (24.8 % of requests ≥ 0.9 s):
// the default assumption passes on its figures, "refused" fails on them and passes on a stage 1
// without the tax.
func TestDeadIPAssumption(t *testing.T) {
	res, err := dsl.Load([]string{"."}, dsl.Options{Vars: map[string]string{"deadIPConnect": "refused"}})
	if err != nil {
		t.Fatal(err)
	}
	var refused *dsl.Scenario
	for _, sc := range res.Scenarios {
		if sc.Name == "b" {
			refused = sc
		}
	}
	if refused == nil {
		t.Fatal("no scenario b")
	}
	const hangSrc = `vars.deadIPConnect == "hang" && float(stage1.captured.slow) / float(stage1.captured.total) > 0.1`
	const refusedSrc = `vars.deadIPConnect == "refused" && float(stage1.captured.slow) / float(stage1.captured.total) < 0.1`
	judge := func(sc *dsl.Scenario, slow int) map[string]interp.Outcome {
		f := newFixture(sc)
		figures["b"](f, false)
		if slow >= 0 {
			f.exec("stage1", "", count(149, 0, slow, 0, 0))
		}
		out := map[string]interp.Outcome{}
		j := interp.NewJudge(f.rec, sc)
		for _, e := range sc.Expect {
			out[e.Src] = j.Judge(e).Outcome
		}
		return out
	}
	hang := judge(byName(t)["b"], -1)
	if hang[hangSrc] != interp.Passed || hang[refusedSrc] != "" {
		t.Errorf("default (hang) on the seed's figures: %v", hang)
	}
	if got := judge(refused, -1); got[refusedSrc] != interp.Failed || got[hangSrc] != "" {
		t.Errorf("refused on the seed's figures (a hanging cluster's): %v, want the refused check failed", got)
	}
	if got := judge(refused, 1); got[refusedSrc] != interp.Passed {
		t.Errorf("refused on a stage 1 without the tax: %v", got)
	}
}
