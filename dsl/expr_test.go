package dsl

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/expr-lang/expr"

	"labrun.dev/labrun/schema"
)

func set(names ...string) map[string]bool {
	m := map[string]bool{}
	for _, n := range names {
		m[n] = true
	}
	return m
}

// resultContext is a schema.ResultContext for tests.
type resultContext struct{ sampled bool }

func (c resultContext) Sampled() bool         { return c.sampled }
func (resultContext) ExpectsFailure() bool    { return false }
func (c resultContext) Templated(string) bool { return false }

// testStats is the result of a snapshot of one Envoy cluster whose names are not checked
// (its catalogue left out), with hosts when asked.
func testStats(hosts, sampled bool) *schema.Type {
	p := &schema.Snapshot{Envoy: &schema.PodRef{Pod: "client"}, Cluster: "c", Hosts: hosts}
	t := p.Result(resultContext{sampled})
	uncatalogued := func(t *schema.Type) *schema.Type {
		c := *t
		src := *t.Stats
		src.Catalogue = nil
		c.Stats = &src
		return &c
	}
	if !sampled {
		return uncatalogued(t)
	}
	return t.With(func(f *schema.Field) *schema.Field {
		g := *f
		switch g.Type.Kind {
		case schema.TStats:
			g.Type = uncatalogued(g.Type)
		case schema.TList:
			g.Type = schema.ListOf(uncatalogued(g.Type.Elem))
		}
		return &g
	})
}

func result(name, kind string, t *schema.Type) *StepResult {
	return &StepResult{Step: name, Kind: kind, Type: t}
}

// testNames is a scenario's names: three snapshots of one source, a sampled series, a load,
// an exec, a logs step, a get and a config result, vars and a local backend.
func testNames() *Names {
	plain := resultContext{}
	return &Names{
		Results: map[string]*StepResult{
			"before": result("before", "snapshot", testStats(false, false)),
			"mid":    result("mid", "snapshot", testStats(true, false)),
			"after":  result("after", "snapshot", testStats(false, false)),
			"g":      {Step: "g", Kind: "snapshot", Sampled: true, Type: testStats(false, true)},
			"fortio": result("fortio", "load", (&schema.Load{}).Result(plain)),
			"ip":     result("ip", "exec", (&schema.Exec{Capture: "(?P<ip>[0-9.]+)"}).Result(plain)),
			"access": result("access", "logs", (&schema.Logs{}).Result(plain)),
			"old":    result("old", "get", schema.AnyType),
			"cb":     result("cb", "config", schema.AnyType),
		},
		Vars:       map[string]any{"host": "127.0.0.1", "n": 10.0, "strict": true},
		Backends:   set("a"),
		Blackholes: map[string]bool{},
		Steps:      set("before", "mid", "after", "g", "fortio", "ip", "access", "old", "cb"),
		DeltaFrom:  "before",
		DeltaTo:    "after",
	}
}

// testEnv is what the interpreter would bind for testNames at the end of a run.
func testEnv() map[string]any {
	return map[string]any{
		"delta": schema.Stats{"rq_total": 30, "upstream_rq_pending_overflow": 12, "circuit_breakers.default.cx_open": 0},
		DeltaFunc: func(a, b string) schema.Stats {
			if a == "before" && b == "after" {
				return schema.Stats{"rq_total": 30, "x.y": 2}
			}
			return schema.Stats{}
		},
		HostsFunc: func(name string) []schema.Host {
			if name == "mid" {
				return []schema.Host{{Address: "10.0.0.7:8080", CxActive: 1, Healthy: true}}
			}
			return nil
		},
		DivisorFunc:        Divisor,
		"vars":             map[string]any{"host": "127.0.0.1", "n": 10.0, "strict": true},
		"approx":           Approx,
		"within":           Within,
		schema.CodeFunc:    schema.ReadCode,
		schema.CodeInFunc:  schema.HasCode,
		schema.CodeGetFunc: schema.GetCode,
		schema.LatencyFunc: schema.ReadLatency,
		schema.OnlyIfFunc:  schema.ReadOnlyIf,
		"backends":         map[string]schema.Endpoint{"a": {Address: "127.0.0.1:8080", Host: "127.0.0.1", Port: 8080, URL: "http://127.0.0.1:8080"}},
		"blackholes":       map[string]schema.Endpoint{},
		"target":           map[string]any{"clusterDomain": "cluster.local"},
		"before":           schema.Stats{"rq_total": 0},
		"mid":              schema.Stats{"circuit_breakers.default.rq_pending_open": 1, "rq_active": 3},
		"after":            schema.Stats{"rq_total": 30},
		"g":                schema.Series{Max: schema.Stats{"rq_active": 3}, Min: schema.Stats{"rq_active": 0}, Count: 12},
		"fortio":           schema.LoadResult{Requests: 30, OK: 18, Codes: map[string]float64{"200": 18, "503": 12}},
		"ip":               schema.ExecResult{Stdout: "10.0.0.7\n", Captured: map[string]string{"ip": "10.0.0.7"}},
		"access":           schema.LogResult{Count: 5, Flags: map[string]float64{"URX": 5, "UF": 5}, Codes: map[string]float64{"503": 5}},
		"old":              []any{"10.0.0.7"},
		"cb":               map[string]any{"max_connections": 1.0, "thresholds": []any{map[string]any{"priority": "DEFAULT"}}},
	}
}

// TestExprRewrite checks the rewriting of expressions that plain expr cannot type (dotted
// stat names, delta("a","b"), <snapshot>.hosts, <load>.codeNNN, get and config results) and
// the stat references recorded for the checks that precede evaluation.
func TestExprRewrite(t *testing.T) {
	tests := []struct {
		src  string
		refs []Ref
	}{
		{
			src:  "mid.circuit_breakers.default.rq_pending_open == 1",
			refs: []Ref{{Kind: RefSnapshot, Name: "mid", Stat: "circuit_breakers.default.rq_pending_open"}},
		},
		{
			src:  "delta.upstream_rq_pending_overflow == fortio.code503",
			refs: []Ref{{Kind: RefDelta, Stat: "upstream_rq_pending_overflow"}},
		},
		{
			src:  `delta("before", "after").rq_total == 30`,
			refs: []Ref{{Kind: RefDeltaPair, From: "before", To: "after", Stat: "rq_total"}},
		},
		{
			src:  `delta("before", "after").x.y == 2`,
			refs: []Ref{{Kind: RefDeltaPair, From: "before", To: "after", Stat: "x.y"}},
		},
		{
			src:  `delta["circuit_breakers.default.cx_open"] == 0`,
			refs: []Ref{{Kind: RefDelta, Stat: "circuit_breakers.default.cx_open"}},
		},
		{
			src: "after.rq_total - before.rq_total == fortio.requests",
			refs: []Ref{
				{Kind: RefSnapshot, Name: "after", Stat: "rq_total"},
				{Kind: RefSnapshot, Name: "before", Stat: "rq_total"},
			},
		},
		{
			src:  "g.max.rq_active >= 1 && g.count == 12",
			refs: []Ref{{Kind: RefSeries, Name: "g.max", Stat: "rq_active"}},
		},
		{src: "fortio.code503 == 12 && fortio.code200 == 18 && fortio.code_1 == 0"},
		{src: `fortio.codes["503"] == delta.upstream_rq_pending_overflow`, refs: []Ref{{Kind: RefDelta, Stat: "upstream_rq_pending_overflow"}}},
		{src: "mid.hosts[0].cx_active == 1 && mid.hosts[0].healthy"},
		{src: "len(mid.hosts) == 1"},
		{src: "old[0] == ip.captured.ip"},
		{src: `cb.max_connections == 1 && cb.thresholds[0].priority == "DEFAULT"`},
		{src: "vars.n == 10 && vars.strict && vars.host == backends.a.host"},
		{src: "access.flags.URX == 5 && access.codes[\"503\"] == access.count"},
		{
			src:  "approx(fortio.requests, 31, 0.1) && within(g.max.rq_active, 1, 4)",
			refs: []Ref{{Kind: RefSeries, Name: "g.max", Stat: "rq_active"}},
		},
		{src: `target.clusterDomain == "cluster.local"`},
		// get(x, "key") reads as x.key is checked; a stat it reads may be absent (get's nil),
		// but one its source is not known to have must be in one of the source's snapshots.
		{
			src:  `(get(after, "rq_total") ?? 0) == 30 && get(delta, "nope") == nil`,
			refs: []Ref{{Kind: RefSource, Name: "envoy client cluster c", Steps: "after,before,g,mid", Stat: "rq_total"}, {Kind: RefSource, Name: "envoy client cluster c", Steps: "after,before,g,mid", Stat: "nope"}},
		},
		{src: `get(fortio, "code503") == 12 && get(fortio.codes, "503") == 12 && get(ip.captured, "ip") == "10.0.0.7" && get(vars, "n") == 10`},
	}
	names := testNames()
	env := testEnv()
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			e, err := compile(tt.src, Pos{File: "x.cue", Line: 1, Col: 1}, names, compileOpts{asBool: true})
			if err != nil {
				t.Fatalf("compile: %v", err)
			}
			if !reflect.DeepEqual(e.Refs, tt.refs) {
				t.Errorf("Refs = %+v, want %+v", e.Refs, tt.refs)
			}
			got, rerr := expr.Run(e.Program, env)
			if rerr != nil {
				t.Fatalf("run: %v", rerr)
			}
			if got != true {
				t.Errorf("run = %v, want true", got)
			}
			if e.Explain == nil {
				t.Errorf("no explanation tree")
			}
		})
	}
}

// TestExprErrors checks the load-time errors of expressions and their positions inside the
// CUE string (the string's quote is at column 10).
func TestExprErrors(t *testing.T) {
	tests := []struct {
		src  string
		col  int
		want string
	}{
		{`delta("before")`, 11, `delta takes two snapshot names: delta("before", "after")`},
		{`delta(before, after).x > 0`, 17, `delta's arguments must be snapshot names in quotes`},
		{`delta("before", "atfer").x > 0`, 11, `delta("before", "atfer"): no snapshot named "atfer" (did you mean after?); snapshots: after, before, mid`},
		{`vars.nope == 1`, 16, `no var named "nope" (declare it under vars); declared: host, n, strict`},
		{`max(fortio.p50, ended.fortio) < 1`, 33, `max(fortio.p50, ended.fortio) mixes units: fortio.p50 is milliseconds, ended.fortio is seconds; convert one`},
		{`backends.b.url != ""`, 20, `no local backend named "b" (did you mean a?); declared: a`},
		{`fortoi.requests > 0`, 11, `unknown name fortoi (did you mean fortio?); known names: access, after, backends, before, cb, delta, ended, error, fortio, g, ip, mid, old, outcome, started, vars`},
		{`fortio.p95 < 100`, 18, `fortio.p95: the result of "fortio" (a load step) has no field "p95" (did you mean p90?); its fields: requests, codes,`},
		{`fortio.codes["5O3"] == 0`, 23, `fortio.codes["5O3"]: "5O3" is not an HTTP status code (a key of fortio.codes is an HTTP status code such as "503"; "-1" is a socket error or a timeout): it is never there`},
		{`fortio.ips["127.0.0.2"] == 0`, 21, `"127.0.0.2" is not an ip:port address`},
		{`access.codes["5O3"] == 0`, 23, `access.codes["5O3"]: "5O3" is not an access-log response code`},
		{`access.codes["UF"] == 0`, 23, `"UF" is not an access-log response code`},
		{`access.codes["503 "] == 0`, 23, `"503 " is not an access-log response code`},
		{`access.flags["uf"] == 0`, 23, `access.flags["uf"]: "uf" is not an Envoy response flag`},
		{`access.flags["503"] == 0`, 23, `"503" is not an Envoy response flag`},
		{`fortio.ips[backends.a.host] == 0`, 33, `fortio.ips[backends.a.host]: backends.a.host is a host (without a port), and a key here is a destination address, ip:port: it is never one, so this reads the same whatever the run records; backends.a.address is one`},
		{`backends.a.url in fortio.ips`, 26, `backends.a.url in fortio.ips is always false: backends.a.url is a URL`},
		{`!has(fortio.codes, "x")`, 30, `has(fortio.codes, "x") is always false: "x" is not an HTTP status code`},
		// key in map asks what has(map, key) asks, and is checked alike.
		{`!("addr" in ip.captured)`, 20, `"addr" in ip.captured is always false: "addr" is not a named group of the step's capture pattern (those are: ip)`},
		{`"addr" not in ip.captured`, 22, `"addr" in ip.captured is always false: "addr" is not a named group`}, // expr reads not in as !(in)
		{`!("5O3" in access.codes)`, 19, `"5O3" in access.codes is always false: "5O3" is not an access-log response code`},
		{`none(access.entries, "uf" in .flags)`, 37, `"uf" in .flags is always false: "uf" is not an Envoy response flag (an element of .flags is a response flag such as "UF")`},
		{`any(access.entries, "503" not in .flags)`, 41, `"503" in .flags is always false: "503" is not an Envoy response flag`},
		{`all(fortio.pods, .code503 == 0)`, 22, `fortio.pods: this load ran from one client (from.pods not set)`},
		{`get(fortio, "p95") < 100`, 23, `get(fortio, "p95"): fortio.p95: the result of "fortio" (a load step) has no field "p95" (did you mean p90?)`},
		{`get(ip.captured, "addr") != ""`, 28, `get(ip.captured, "addr"): ip.captured.addr: "addr" is not a named group of the step's capture pattern`},
		{`get(mid, "hosts") != nil`, 20, `get(mid, "hosts") is always nil: hosts is not a key of mid; read it as mid.hosts`},
		{`ip.captured.ip <= '5'`, 26, `ip.captured.ip <= "5" orders strings, byte by byte ("10" < "5"): "5" is a number written as a string, and ip.captured.ip is a string; compare numbers: float(ip.captured.ip) <= 5 (int() for whole numbers)`},
		{`"1.5e3" > ip.stdout`, 19, `"1.5e3" > ip.stdout orders strings`},
		{`cb.max_connections >= "-2"`, 30, `compare numbers: float(cb.max_connections) >= -2`},
		{`fortio.requests`, 11, `expected an expression that is true or false`},
		{`fortio.requests ==`, 28, `the expression ends after "==": expected an operand`},
		// An unclosed bracket is said at itself, not where the text ran out.
		{`(fortio.requests == 10`, 11, `( is never closed: expected ) before the end of the expression`},
		{`fortio.codes["200" > 0 && (x == "(")`, 23, `[ is never closed: expected ]`},
		{`ip.stdout == "a\"[" && (fortio.requests == 10`, 34, `( is never closed: expected )`}, // \" does not end the string
		// ${ in an expression: the name meant is quoted back when there is one, never a
		// half of the expression ("write vars.x" itself") or nothing ("write  itself").
		{`fortio.requests == ${vars.n}`, 30, `write vars.n itself, e.g. vars.n == 'a'`},
		{`ip.stdout == '${vars.host'`, 25, `${ is not interpolated inside an expression (it would stay a literal string): expected the name itself`},
		{`ip.stdout == '${}'`, 25, `${ is not interpolated inside an expression (it would stay a literal string): expected the name itself`},
		// a; b is b, let x = a; b (x unread) too: the claim a is dropped, a false one included.
		{`fortio.code503 == 0; fortio.code200 == 10`, 26, `only the last part of a sequence (a; b) decides, here fortio.code200 == 10`},
		{`let ok = fortio.code503 == 0; fortio.code200 == 10`, 15, `let ok = fortio.code503 == 0: nothing after it reads ok`},
	}
	names := testNames()
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			_, err := compile(tt.src, Pos{File: "x.cue", Line: 3, Col: 10}, names, compileOpts{asBool: true})
			if err == nil {
				t.Fatal("compiled; want an error")
			}
			if !strings.Contains(err.Msg, tt.want) {
				t.Errorf("error %q\ndoes not hold %q", err.Msg, tt.want)
			}
			if !strings.HasPrefix(err.Msg, "in expression ") {
				t.Errorf("error %q does not quote the expression", err.Msg)
			}
			if err.Pos.Line != 3 || err.Pos.Col != tt.col {
				t.Errorf("position %s, want x.cue:3:%d", err.Pos, tt.col)
			}
		})
	}
}

// TestExprKeysOfTheirForm: keys of the form a map's keys have compile (a status code, "-1",
// an ip:port address, a backend's address), in every way a key is read.
func TestExprKeysOfTheirForm(t *testing.T) {
	for _, src := range []string{
		`fortio.codes["503"] == 0 && fortio.codes["-1"] == 0 && fortio.code503 == 0`,
		`fortio.ips[backends.a.address] > 0 && fortio.ips["127.0.0.2:8080"] > 0 && fortio.ips["[::1]:80"] == 0`,
		`backends.a.address in fortio.ips && has(fortio.codes, "200") && "503" not in fortio.codes`,
		`fortio.ips[keys(fortio.ips)[0]] > 0`,
		`access.codes["503"] == 0 && access.codes["0"] == 0 && access.flags["UF"] == 0 && access.flags["-"] == 0 && access.flags["UAEX"] == 0`,
		`access.codes[keys(fortio.codes)[0]] >= 1`, // a load's status code is an access log's too
		`"ip" in ip.captured && "ip" not in ip.captured || all(access.entries, "UF" in .flags || "-" in .flags || "UAEX" not in .flags)`,
		`all(access.entries, .flags[0] in ["UF", "uf"]) && "ip" in keys(ip.captured)`,
		// strings ordered against a literal that is no number (a word, a version) are left alone
		`ip.captured.ip >= "a" && ip.stdout < "1.2.3" && ip.captured.ip == "5" && ip.stdout > "inf"`,
	} {
		if _, err := compile(src, Pos{}, testNames(), compileOpts{asBool: true}); err != nil {
			t.Errorf("%s: %v", src, err)
		}
	}
}

// TestExprDeltaErr: a plain delta is refused with the scenario's reason (e.g. two sources);
// delta("a", "b") still works.
// TestGetVarKeyRefs: get(delta, vars.stat), the key fixed by a var, is checked as the key
// written out: a stat the source (an Envoy cluster's, an open catalogue) is not known to
// have is a reference the judge checks before it evaluates, where get's nil read ?? 0 and
// passed of a misspelled stat; and one of a closed catalogue is refused, naming the var.
func TestGetVarKeyRefs(t *testing.T) {
	names := testNames()
	names.Vars = map[string]any{"stat": "upstream_rq_retyr", "code": "5O3"}
	compileRefs := func(src string) []Ref {
		t.Helper()
		e, err := compile(src, Pos{File: "x.cue", Line: 1, Col: 1}, names, compileOpts{asBool: true})
		if err != nil {
			t.Fatalf("compile %s: %v", src, err)
		}
		return e.Refs
	}
	want := compileRefs(`(get(delta, "upstream_rq_retyr") ?? 0) == 0`)
	if len(want) == 0 {
		t.Fatalf("the key written out records no reference")
	}
	if got := compileRefs(`(get(delta, vars.stat) ?? 0) == 0`); !reflect.DeepEqual(got, want) {
		t.Errorf("Refs of get(delta, vars.stat) = %+v, want %+v (as the key written out)", got, want)
	}
	_, err := compile(`(get(ip.captured, "n" + vars.code) ?? "") == ""`, Pos{File: "x.cue", Line: 1, Col: 1}, names, compileOpts{asBool: true})
	if err == nil || !strings.Contains(err.Error(), `with vars.code = "5O3" the key is "n5O3"`) {
		t.Errorf("get of a capture group a var misspells: err = %v, want it refused naming vars.code", err)
	}
}

// TestDurationOfVar: duration(vars.limit) compared with a time is the var's duration in that
// time's unit, as duration('500ms') is, where expr refused float64 against time.Duration.
func TestDurationOfVar(t *testing.T) {
	names := testNames()
	names.Vars = map[string]any{"limit": "500ms", "word": "fast"}
	e, err := compile(`fortio.p99 < duration(vars.limit) || fortio.duration < duration(vars.limit)`, Pos{File: "x.cue", Line: 1, Col: 1}, names, compileOpts{asBool: true})
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	if _, err := expr.Run(e.Program, testEnv()); err != nil {
		t.Errorf("run: %v", err)
	}
	if !slices.Contains(e.vars, "limit") {
		t.Errorf("reads vars %v, want limit among them", e.vars)
	}
	_, err = compile(`fortio.p99 < duration(vars.word)`, Pos{File: "x.cue", Line: 1, Col: 1}, names, compileOpts{asBool: true})
	if err == nil || !strings.Contains(err.Error(), `"fast" is no duration`) {
		t.Errorf("duration(vars.word): err = %v, want it to say \"fast\" is no duration", err)
	}
}

// TestDurationSums: a sum, a difference or a scaling of duration()s compared with a time is
// that time's number in its unit, as one duration() is; vet let
// fortio.p50 < duration('10ms') + duration('50ms') by and the run refused it ("float64 <
// time.Duration"). A duration plus a number is refused at vet.
func TestDurationSums(t *testing.T) {
	for _, tc := range []struct {
		src, err string
	}{
		{src: `fortio.p99 < duration('10ms') + duration('50ms')`},
		{src: `fortio.requests > 0 && fortio.duration < duration('1s') - duration('500ms')`},
		{src: `fortio.duration <= duration('100ms') * 2`},
		{src: `fortio.duration < 2 * duration('100ms')`},
		{src: `fortio.duration < (duration('1s') - duration('500ms')) / 2`},
		{src: `fortio.duration < (fortio.requests > 0 ? duration('1s') : duration('2s')) + duration('1s')`},
		{src: `fortio.p99 < duration('10ms') + 5`, err: `adds a duration, duration("10ms"), and 5, a number`},
		{src: `fortio.p99 < 5 - duration('10ms')`, err: `subtracts a duration, duration("10ms"), and 5, a number`},
	} {
		e, err := compile(tc.src, Pos{File: "x.cue", Line: 1, Col: 1}, testNames(), compileOpts{asBool: true})
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: err = %v, want it to say %q", tc.src, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: compile: %v", tc.src, err)
			continue
		}
		if _, err := expr.Run(e.Program, testEnv()); err != nil {
			t.Errorf("%s: run: %v", tc.src, err)
		}
	}
}

func TestExprDeltaErr(t *testing.T) {
	names := testNames()
	names.DeltaErr = "delta is ambiguous"
	if _, err := compile("delta.rq_total > 0", Pos{}, names, compileOpts{asBool: true}); err == nil || !strings.Contains(err.Msg, "delta is ambiguous") {
		t.Errorf("delta.rq_total: err = %v, want the DeltaErr", err)
	}
	if _, err := compile(`delta("before", "after").rq_total > 0`, Pos{}, names, compileOpts{asBool: true}); err != nil {
		t.Errorf(`delta("before", "after"): %v`, err)
	}
}

// TestExprMultiline: an error in a multi-line expression is placed at the string itself.
func TestExprMultiline(t *testing.T) {
	_, err := compile("fortio.requests == 10 &&\nfortio.p95 > 0", Pos{File: "x.cue", Line: 3, Col: 10}, testNames(), compileOpts{asBool: true})
	if err == nil {
		t.Fatal("compiled; want an error")
	}
	if err.Pos != (Pos{File: "x.cue", Line: 3, Col: 10}) {
		t.Errorf("position %s, want x.cue:3:10", err.Pos)
	}
}

func TestExplainTree(t *testing.T) {
	e, err := compile("delta.rq_total == fortio.requests && !(g.max.rq_active > 4)", Pos{}, testNames(), compileOpts{asBool: true})
	if err != nil {
		t.Fatal(err)
	}
	x := e.Explain
	if x.Op != "&&" || x.Left.Op != "==" || x.Right.Op != "!" || x.Right.Left.Op != ">" {
		t.Fatalf("tree %+v", x)
	}
	if x.Left.Left.Src != "delta.rq_total" || x.Left.Right.Src != "fortio.requests" {
		t.Errorf("leaves %q, %q", x.Left.Left.Src, x.Left.Right.Src)
	}
	v, rerr := expr.Run(x.Left.Left.Value(), testEnv())
	if rerr != nil || v != 30.0 {
		t.Errorf("delta.rq_total evaluates to %v, %v; want 30", v, rerr)
	}
	if lit := x.Right.Left.Right; lit.Src != "4" || lit.Value() != nil {
		t.Errorf("literal leaf %+v", lit)
	}
}

func TestFormatValue(t *testing.T) {
	big := map[string]float64{}
	for _, k := range "abcdefghi" {
		big[string(k)] = 1
	}
	tests := []struct {
		v    any
		want string
	}{
		{nil, "nil"},
		{12.0, "12"},
		{-3.0, "-3"},
		{0.0, "0"},
		{0.5, "0.5"},
		{1.0 / 3, "0.333333"},
		{1e20, "1e+20"},
		{4294967295.0, "4294967295"},
		{math.Inf(1), "+Inf"},
		{float32(2), "2"},
		{"x", `"x"`},
		{"a\"b", `"a\"b"`},
		{true, "true"},
		{42, "42"},
		// Lists and maps as expr writes them (Go's map[cid:7] read as nothing an expression
		// holds, and lost a string's quotes).
		{[]any{1.0, "a"}, `[1, "a"]`},
		{map[string]float64{"a": 1}, "{a: 1}"},
		{map[string]string{"cid": "7", "503": "x"}, `{"503": "x", cid: "7"}`},
		{map[string]string(nil), "{}"},
		{[]map[string]string{{"cid": "7"}}, `[{cid: "7"}]`},
		{schema.LogEntry{Line: "hello", Captures: map[string]string{}}, `{line: "hello", access: false, captures: {}}`},
		{big, "map with 9 entries"},
	}
	for _, tt := range tests {
		if got := FormatValue(tt.v); got != tt.want {
			t.Errorf("FormatValue(%#v) = %q, want %q", tt.v, got, tt.want)
		}
	}
}

func TestStringify(t *testing.T) {
	tests := []struct {
		v    any
		want string
	}{
		{"10.0.0.7", "10.0.0.7"},
		{nil, ""},
		{8080.0, "8080"},
		{0.25, "0.25"},
		{3, "3"},
		{true, "true"},
		{[]any{"a", 1.0}, `["a",1]`},
		{map[string]any{"k": "v"}, `{"k":"v"}`},
		// A number as the scenario writes it, into a command, an object or a run's id: up to
		// 15 significant digits, which a float64 holds exactly, no exponent from 1e-6 to
		// 1e21. Before, 6 digits and an exponent: a var of 1234567.5 ran as 1.23457e+06,
		// and a sweep of 0.1234567 ran 0.123457.
		{1234567.5, "1234567.5"},
		{0.1234567, "0.1234567"},
		{100 * 1.1, "110"}, // 110.00000000000001: arithmetic's last bit, not the scenario's
		{0.1 + 0.2, "0.3"},
		{1234567500000000.0, "1234567500000000"},
		{0.0000025, "0.0000025"},
		{-42.125, "-42.125"},
		{1e21, "1e+21"},
		{1e-7, "1e-07"},
		{math.Copysign(0, -1), "0"},
		{int64(1) << 60, "1152921504606846976"},
		// A float32 (a proto field of Envoy's config) as its own shortest digits, not
		// float64's view of its bits (0.100000001490116).
		{float32(0.1), "0.1"},
		{float32(1234.5678), "1234.5677"},
	}
	for _, tt := range tests {
		if got := Stringify(tt.v); got != tt.want {
			t.Errorf("Stringify(%#v) = %q, want %q", tt.v, got, tt.want)
		}
	}
}

// TestCompiledOncePerNames: an expression met again against the same frozen names (a kit's
// expectation at each use) reuses its program, with its own position; unfrozen names and
// errors are compiled each time, so that every error is reported where it is written.
func TestCompiledOncePerNames(t *testing.T) {
	names := &Names{Results: map[string]*StepResult{"a": result("a", "snapshot", testStats(false, false)), "b": result("b", "snapshot", testStats(false, false))}}
	names.freeze()
	e1, err := compile("a.x == 1", Pos{File: "f", Line: 1, Col: 1}, names, compileOpts{asBool: true})
	if err != nil {
		t.Fatal(err)
	}
	e2, err := compile("a.x == 1", Pos{File: "f", Line: 9, Col: 3}, names, compileOpts{asBool: true})
	if err != nil {
		t.Fatal(err)
	}
	if e1.Program != e2.Program || e2.Pos.Line != 9 || e1.Pos.Line != 1 {
		t.Errorf("second compile: program shared %v, positions %v and %v", e1.Program == e2.Program, e1.Pos, e2.Pos)
	}
	if e3, _ := compile("a.x == 1", Pos{}, names, compileOpts{}); e3.Program == e1.Program {
		t.Error("an expression compiled with other options reused the boolean program")
	}
	_, err1 := compile("nosuch.x == 1", Pos{File: "f", Line: 2, Col: 1}, names, compileOpts{asBool: true})
	_, err2 := compile("nosuch.x == 1", Pos{File: "f", Line: 5, Col: 1}, names, compileOpts{asBool: true})
	if err1 == nil || err2 == nil || err1.Pos.Line != 2 || err2.Pos.Line != 5 {
		t.Errorf("errors: %v and %v, want each at its own line", err1, err2)
	}
	open := &Names{Results: map[string]*StepResult{"a": result("a", "snapshot", testStats(false, false))}}
	o1, _ := compile("a.x == 1", Pos{}, open, compileOpts{})
	o2, _ := compile("a.x == 1", Pos{}, open, compileOpts{})
	if o1 == nil || o2 == nil || o1.Program == o2.Program {
		t.Error("names not frozen: compiled once, but they may still change")
	}
}

// TestFunctionsAreBound: every function Functions documents is one an expression can call.
func TestFunctionsAreBound(t *testing.T) {
	names := testNames()
	for fn, sig := range Functions {
		call := fn + `("before", "after")`
		switch fn {
		case "approx":
			call = "approx(1, 1, 0.5)"
		case "within":
			call = "within(1, 0.5, 2)"
		case "has":
			call = `has(mid, "x")`
		case "quantity":
			call = `quantity("500m") == 0.5`
		case "deltaAcross":
			continue // refused over one source: TestExprChecks has it
		}
		if !strings.HasPrefix(sig, fn+"(") {
			t.Errorf("%s: signature %q", fn, sig)
		}
		if _, err := compile(call, Pos{}, names, compileOpts{}); err != nil {
			t.Errorf("%s: %v", call, err)
		}
	}
}

// TestExprShadowedBuiltin: a call of one of expr's builtins whose name is a step's (count,
// now, len) is refused at the call, saying the step's name shadows it (expr said "unexpected
// token Operator("#")" or "ExecResult is not callable"), and the step is noted for the refusal
// at its name; reading the step by that name is fine, and so is a step typed any (a get), which
// expressions read through $env: there the builtin is still the builtin.
func TestExprShadowedBuiltin(t *testing.T) {
	plain := resultContext{}
	names := func() *Names {
		return &Names{
			Results: map[string]*StepResult{
				"count": result("count", "exec", (&schema.Exec{}).Result(plain)),
				"now":   result("now", "exec", (&schema.Exec{}).Result(plain)),
				"len":   result("len", "load", (&schema.Load{}).Result(plain)),
				"keys":  result("keys", "get", schema.AnyType),
				"job":   result("job", "exec", (&schema.Exec{}).Result(plain)),
			},
			Steps: set("count", "now", "len", "keys", "job"),
		}
	}
	for _, tt := range []struct {
		src  string
		name string
		col  int
	}{
		{`count(split(trim(job.stdout), "\n"), # != "") == 2`, "count", 11},
		{`now() - date(trim(job.stdout)) < duration("2s")`, "now", 11},
		{`trim(count.stdout) == "2" && len(job.stdout) > 0`, "len", 40},
		{`all([1], len([#]) == 1)`, "len", 20},
	} {
		t.Run(tt.src, func(t *testing.T) {
			n := names()
			_, err := compile(tt.src, Pos{File: "x.cue", Line: 3, Col: 10}, n, compileOpts{asBool: true})
			if err == nil {
				t.Fatal("compiled; want an error")
			}
			want := fmt.Sprintf("%s(…) calls the step %q, not expr's builtin %s: the step's name shadows it", tt.name, tt.name, tt.name)
			if !strings.Contains(err.Msg, want) {
				t.Errorf("error %q\ndoes not hold %q", err.Msg, want)
			}
			if err.Pos.Line != 3 || err.Pos.Col != tt.col {
				t.Errorf("position %s, want x.cue:3:%d", err.Pos, tt.col)
			}
			if at, ok := n.shadowed[tt.name]; !ok || at != err.Pos {
				t.Errorf("shadowed = %v, want %s at %s", n.shadowed, tt.name, err.Pos)
			}
		})
	}
	for _, src := range []string{
		`trim(count.stdout) == "2" && now.exit == 0 && len.requests > 0`,
		`keys == "Running" && keys({"a": 1})[0] == "a" && count([1, 2, 3], # > 1) == 2`, // keys is typed any: count is shadowed, keys is not
	} {
		n := names()
		if src[0] == 'k' {
			delete(n.Results, "count")
		}
		e, err := compile(src, Pos{}, n, compileOpts{asBool: true})
		if err != nil {
			t.Errorf("%s: %v", src, err)
			continue
		}
		if len(n.shadowed) > 0 {
			t.Errorf("%s: shadowed = %v, want none", src, n.shadowed)
		}
		if src[0] != 'k' {
			continue
		}
		got, rerr := expr.Run(e.Program, map[string]any{"keys": "Running"})
		if rerr != nil || got != true {
			t.Errorf("%s: run = %v, %v; want true (keys() the builtin, keys the get's result)", src, got, rerr)
		}
	}
}

// TestReservedNames: the names labrun's expressions have besides the steps' are reserved,
// derived from the names Env binds (nothing to keep in step by hand).
func TestReservedNames(t *testing.T) {
	for _, name := range []string{"delta", "deltaAcross", "vars", "approx", "within", "has", "quantity", "backends", "blackholes", "target", "started", "ended", "outcome", "error", deltaFunc, hostsFunc, envoyFunc, envoyCmpFunc, envoyJSONFunc, nonEmptyFunc, keyFunc, optKeyFunc, stringFunc, schema.OnlyIfFunc, schema.SetFunc, schema.GroupFunc, schema.CodeFunc, schema.CodeInFunc, schema.CodeGetFunc, schema.LatencyFunc, divisorFunc, finiteFunc} {
		if !Reserved[name] {
			t.Errorf("%s is not reserved", name)
		}
	}
	for name := range Functions {
		if !Reserved[name] {
			t.Errorf("labrun's function %s is not reserved", name)
		}
	}
	if len(Reserved) != 32 {
		t.Errorf("Reserved has %d names, want 32: %v", len(Reserved), Reserved)
	}
}

// TestVarNamedUnit: a number var whose name says milliseconds or seconds, set beside a time of
// the other unit, is refused as mixing units: fortio.duration < vars.maxDurationMs (2000,
// meant as 2 s) read 2000 s and held of any load shorter than half an hour. A var whose name
// says no unit, or the time's own, is left alone.
func TestVarNamedUnit(t *testing.T) {
	names := testNames()
	names.Vars = map[string]any{"maxDurationMs": 2000, "max_p99_s": 0.5, "p99Seconds": 0.5, "limitMs": 100, "limit": 100, "ms": 5, "requests": 10, "delaySec": 1, "maxQPS": 100, "timeoutMS": 300}
	checkRefusals(t, names, []refusal{
		{src: `fortio.duration < vars.maxDurationMs`, err: `vars.maxDurationMs is milliseconds by its name`},
		{src: `vars.maxDurationMs > fortio.duration`, err: `vars.maxDurationMs is milliseconds by its name`},
		{src: `fortio.p99 <= vars.max_p99_s`, err: `vars.max_p99_s is seconds by its name`},
		{src: `approx(fortio.duration, vars.maxDurationMs, 0.1)`, err: `convert it (vars.maxDurationMs / 1000)`},
		{src: `within(fortio.p99, 0, vars.p99Seconds)`, err: `convert it (vars.p99Seconds * 1000)`},
		{src: `ended.fortio - started.fortio < vars.limitMs`, err: `mixes units`},
		{src: `fortio.p99 < vars.limitMs`},
		{src: `fortio.duration < vars.delaySec`},
		{src: `fortio.duration < vars.maxDurationMs / 1000`},
		{src: `fortio.p99 < vars.limit`},
		{src: `fortio.p99 < vars.ms`},
		{src: `fortio.requests == vars.requests`},
		{src: `fortio.requests < vars.maxDurationMs`},
		{src: `fortio.duration < vars.maxQPS`},
		{src: `fortio.p99 < vars.maxQPS`},
		{src: `fortio.duration < vars.timeoutMS`, err: `vars.timeoutMS is milliseconds by its name`},
		{src: `fortio.p99 < vars.timeoutMS`},
	})
}

// TestDurationOfNoString: duration() reads a string with a unit; of a number (a var declared
// 0.1, a load's p99) vet let it by and the run erred after the steps in Go's words
// ("interface conversion: interface {} is float64, not string"). A duration beside what is no
// time (a count, a rate, a string) is refused naming both sides, not in expr's words
// ("mismatched types float64 and time.Duration"), or, of a string, not at all.
func TestDurationOfNoString(t *testing.T) {
	names := testNames()
	names.Vars = map[string]any{"maxP99": 0.1, "limit": "100ms"}
	checkRefusals(t, names, []refusal{
		{src: `fortio.p99 < duration(vars.maxP99)`, err: `vars.maxP99 is a number, with no unit: declare it with its unit (maxP99: "100ms"`},
		{src: `duration(fortio.p99) < duration('1s')`, err: `fortio.p99 is a number (ms), a time already`},
		{src: `fortio.p99 < duration(100)`, err: `duration reads a string with a unit`},
		{src: `fortio.qps > duration('1s')`, err: `compares duration("1s"), a duration, with fortio.qps, a number (1/s): a duration compares only with a time`},
		{src: `duration('1s') < fortio.requests`, err: `a duration compares only with a time`},
		{src: `fortio.p99 < duration(vars.limit)`},
		{src: `fortio.p99 < duration('100ms')`},
		{src: `duration('1s') > duration('100ms')`},
		{src: `max(duration('1s'), duration('2s')) > duration('100ms')`},
	})
}

// TestIntOfText: int() and float() of text known when the scenario loads (a var's value, a
// literal) that they cannot read are refused at vet: int(vars.d) of a var holding "100ms"
// passed vet and erred after the steps ("invalid operation: int(100ms)").
func TestIntOfText(t *testing.T) {
	names := testNames()
	names.Vars = map[string]any{"d": "100ms", "n": "42", "half": "0.5", "word": "ten", "nan": "NaN", "inf": "-inf"}
	checkRefusals(t, names, []refusal{
		// float("NaN") has no value (finite.go): a var holding it is refused before the run.
		{src: `!(fortio.qps > float(vars.nan))`, err: `float(vars.nan): vars.nan is "NaN", which float reads as NaN, not a number measured; expected a finite number written as text, such as "0.5"`},
		{src: `fortio.qps > float(vars.inf)`, err: `vars.inf is "-inf", which float reads as -Inf`},
		{src: `fortio.p99 < int(vars.d)`, err: `int(vars.d): vars.d is "100ms", which int cannot read: it reads a whole number written as text, such as "42"; "100ms" is a duration: compare it with a time as duration(vars.d)`},
		{src: `fortio.requests == int(vars.half)`, err: `which int cannot read`},
		{src: `fortio.requests == float(vars.word)`, err: `vars.word is "ten", which float cannot read`},
		{src: `fortio.requests == int(vars.n)`},
		{src: `fortio.qps > float(vars.half)`},
		{src: `fortio.requests == int('10')`},
	})
}

// TestApproxFractionOfVar: approx's 3rd argument given by a var is judged as a literal is:
// approx(fortio.qps, 100, vars.tol) of tol: 10 accepted any rate up to 1100 (0 too), where
// approx(fortio.qps, 100, 10) was refused.
func TestApproxFractionOfVar(t *testing.T) {
	names := testNames()
	names.Vars = map[string]any{"tol": 10, "neg": -0.1, "ok": 0.1, "word": "x"}
	checkRefusals(t, names, []refusal{
		{src: `approx(fortio.qps, 100, vars.tol)`, err: `and vars.tol (10) accepts every value from -900 to 1100: a run where nothing happened (0) passes`},
		{src: `approx(fortio.qps, 100, vars.neg)`, err: `approx(fortio.qps, 100, vars.neg (-0.1)) never holds`},
		{src: `approx(fortio.qps, 100, vars.ok)`},
		{src: `approx(fortio.qps, 100, 0.1)`},
	})
}

// refusal is an expression and what compiling it must say ("": it is accepted).
type refusal struct{ src, err string }

// checkRefusals compiles each expression as an expectation over names and holds it to what
// it must say.
func checkRefusals(t *testing.T, names *Names, cases []refusal) {
	t.Helper()
	for _, tc := range cases {
		_, err := compile(tc.src, Pos{File: "x.cue", Line: 1, Col: 1}, names, compileOpts{asBool: true})
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v, want it accepted", tc.src, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: err = %v, want it to say %q", tc.src, err, tc.err)
		}
	}
}
