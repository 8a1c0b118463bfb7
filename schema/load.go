package schema

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/http"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Load is the load step: fortio, in-process on the local target, inside a pod on kube.
type Load struct {
	URL                   string            `json:"url"`
	From                  *LoadFrom         `json:"from,omitempty"`
	Connections           int               `json:"connections,omitempty"`
	QPS                   float64           `json:"qps,omitempty"`
	Requests              int               `json:"requests,omitempty"`
	Duration              Duration          `json:"duration,omitempty"`
	Keepalive             *bool             `json:"keepalive,omitempty"`
	Timeout               Duration          `json:"timeout,omitempty"`
	Headers               map[string]string `json:"headers,omitempty"`
	HTTP10                bool              `json:"http10,omitempty"`
	ResolveEachConnection *bool             `json:"resolveEachConnection,omitempty"`
}

// LoadFrom is the client pod of a load (kube), or with Pods that many pods of its selector.
type LoadFrom struct {
	PodRef
	Pods int `json:"pods,omitempty"`
}

// MaxLoadPods bounds from.pods: one exec stream and one fortio per pod.
const MaxLoadPods = 100

// The load defaults, applied once by WithDefaults.
const (
	DefaultConnections    = 4
	DefaultLoadDuration   = 5 * time.Second
	DefaultRequestTimeout = 3 * time.Second
)

var loadKind = Kind{
	Usage: "generate HTTP load with fortio and record its results",
	New:   func() Params { return new(Load) },
}

// WithDefaults returns the load with every default filled in: what drivers receive.
func (p Load) WithDefaults() Load {
	if p.Connections == 0 {
		p.Connections = DefaultConnections
	}
	if p.Requests == 0 && p.Duration == 0 {
		p.Duration = Duration(DefaultLoadDuration)
	}
	if p.Timeout == 0 {
		p.Timeout = Duration(DefaultRequestTimeout)
	}
	t := true
	if p.Keepalive == nil {
		p.Keepalive = &t
	}
	if p.ResolveEachConnection == nil {
		p.ResolveEachConnection = &t
	}
	return p
}

// A load's defaults (WithDefaults) and checks (Problems) live here, once: vet and every run
// check a load step through Check, and the drivers (driver/fortio, for the local target in
// this process and for the kube target as fortio's CLI in a pod) take the load with
// WithDefaults and refuse what Problems finds, so a request built without a scenario (a test's)
// means the same. What the drivers add is fortio's own behaviour (how it runs connections at a
// fixed rate, a Content-Type making it POST), said as warnings.

// LoadProblem is one problem of a load's values, in the field it is about. Bound says the
// schema (load.cue) refuses it too: a scenario's load never gets there.
type LoadProblem struct {
	Field string
	Msg   string
	Bound bool
}

// Problems returns what is wrong with the load's values, as written or with defaults: one
// of requests and duration, a URL with a scheme and a host, valid headers, no negative
// counts or durations, a client pod to run in.
func (p Load) Problems() []LoadProblem {
	var out []LoadProblem
	add := func(field, format string, args ...any) {
		out = append(out, LoadProblem{Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	bound := func(field, format string, args ...any) {
		out = append(out, LoadProblem{Field: field, Msg: fmt.Sprintf(format, args...), Bound: true})
	}
	if p.Requests > 0 && p.Duration > 0 {
		add("duration", "load takes requests or duration, not both: requests=%d runs exactly that many", p.Requests)
	}
	if err := CheckLoadURL(p.URL); err != nil {
		add("url", "%v", err)
	}
	for _, name := range slices.Sorted(maps.Keys(p.Headers)) {
		if err := CheckHeader(name, p.Headers[name]); err != nil {
			add("headers", "%v", err)
		}
	}
	if p.Connections < 0 {
		bound("connections", "expected a positive number of connections, got %d", p.Connections)
	}
	if p.QPS < 0 {
		bound("qps", "expected a qps of 0 (as fast as possible) or more, got %g", p.QPS)
	}
	if p.Requests < 0 {
		bound("requests", "expected a positive number of requests, got %d", p.Requests)
	}
	if p.Duration < 0 {
		bound("duration", "expected a positive duration, got %s", p.Duration.D())
	}
	if p.Timeout < 0 {
		bound("timeout", "expected a positive timeout, got %s", p.Timeout.D())
	}
	if p.From != nil && p.From.Pod == "" && p.From.Selector == "" {
		add("from", "from needs pod or selector: the client pod that runs fortio")
	}
	if p.From != nil && p.From.Pods != 0 {
		switch n := p.From.Pods; {
		case n < 1 || n > MaxLoadPods:
			add("from.pods", "pods is the number of client pods that each run fortio, 1 to %d; got %d", MaxLoadPods, n)
		case p.From.Pod != "":
			add("from.pods", "pods: %d runs fortio in that many pods of a selector, and from names one pod (%q): give selector instead of pod", n, p.From.Pod)
		}
	}
	return out
}

// RunConnections is the connections a load runs: connections, lowered to requests when a load
// of N requests as fast as possible has more connections than requests (fortio gives each
// connection requests/connections calls and every connection makes at least one: -c 10 -n 5
// sends 14 requests), with a warning saying so. Check refuses it when connections is written.
func (p Load) RunConnections() (int, string) {
	d := p.WithDefaults()
	if d.QPS == 0 && d.Requests > 0 && d.Requests < d.Connections {
		return d.Requests, fmt.Sprintf("connections lowered from %d to %d: with more connections than requests fortio would send more requests than asked", d.Connections, d.Requests)
	}
	return d.Connections, ""
}

// Check: Problems, at their fields (a field that holds ${...} is checked when the step runs;
// the schema reports what its bounds refuse), and the zeros that would mean a default.
func (p *Load) Check(c Checker) {
	for _, pr := range p.Problems() {
		if !pr.Bound && !c.Templated(pr.Field) {
			c.Errorf(pr.Field, "%s", pr.Msg)
		}
	}
	if p.From != nil && c.Has("from.pods") && p.From.Pods == 0 {
		c.Errorf("from.pods", "pods is the number of client pods that each run fortio, 1 to %d; got 0", MaxLoadPods)
	}
	checkNotZero(c, "duration", p.Duration, DefaultLoadDuration.String())
	checkNotZero(c, "timeout", p.Timeout, DefaultRequestTimeout.String())
	if n, why := p.RunConnections(); why != "" && c.Has("connections") && p.Connections > 0 {
		c.ValueErrorf("connections", "connections %d is more than requests %d: as fast as possible every connection makes at least one request, so the run would lower connections to %d; expected at most %d connections (or a qps)", p.Connections, p.Requests, n, n)
	}
}

// CheckLoadURL checks that a URL can be loaded: http or https, with a host.
func CheckLoadURL(raw string) error {
	if raw == "" {
		return errors.New("url is empty")
	}
	u, err := url.Parse(raw)
	if err != nil && !strings.Contains(raw, "://") {
		// "127.0.0.1:8080/echo" fails to parse for its colon; the scheme is what is missing.
		return fmt.Errorf("url %q has no scheme: expected e.g. \"http://backend:8080/echo\"", raw)
	}
	if err != nil {
		return fmt.Errorf("url %q: %v", raw, errors.Unwrap(err))
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("url %q: the scheme must be http or https, e.g. \"http://backend:8080/echo\"", raw)
	}
	if u.Host == "" {
		return fmt.Errorf("url %q has no host: expected e.g. \"http://backend:8080/echo\"", raw)
	}
	if err := checkPort(u.Port()); err != nil {
		return fmt.Errorf("url %q: %v", raw, err)
	}
	return nil
}

// CheckHeader checks an HTTP header's name and value.
func CheckHeader(name, value string) error {
	if name == "" || strings.ContainsFunc(name, func(r rune) bool {
		return r <= ' ' || r >= 0x7f || r == ':'
	}) {
		return fmt.Errorf("header name %q is not a valid HTTP header name", name)
	}
	if strings.ContainsAny(value, "\r\n") {
		return fmt.Errorf("header %s: the value must not contain a line break", name)
	}
	return nil
}

// Plan: a load of a duration lasts at least that long (fortio's own start-up adds a little); N
// requests at a fixed qps at least (N-c)/qps over c connections (each connection's first
// request goes at once, the others at the rate; fortio may run fewer connections, which takes
// longer); N requests as fast as possible, unknown.
func (p *Load) Plan() Plan {
	d := p.WithDefaults()
	switch {
	case d.Requests == 0:
		return Plan{Duration: d.Duration.D(), Timeout: TimeoutNone}
	case d.QPS > 0:
		c := min(d.Connections, d.Requests)
		return Plan{Duration: time.Duration(float64(d.Requests-c) / d.QPS * float64(time.Second)), Timeout: TimeoutNone}
	}
	return Plan{Timeout: TimeoutNone}
}

// Needs pods for a load from a pod, this machine otherwise.
func (p *Load) Needs() Need {
	if p.From != nil {
		return Need{CapPods, DriverLoad}
	}
	return Need{CapHost, DriverLoad}
}

// Mutates nothing.
func (p *Load) Mutates(func(string) string) Mutation { return Mutation{} }

// Summary: the count or duration, connections, rate and URL.
func (p *Load) Summary() string {
	d := p.WithDefaults()
	var b strings.Builder
	if d.Requests > 0 {
		fmt.Fprintf(&b, "%d req", d.Requests)
	} else {
		fmt.Fprintf(&b, "%s", d.Duration.D())
	}
	fmt.Fprintf(&b, " × %d conn", d.Connections)
	if d.From != nil && d.From.Pods > 1 {
		fmt.Fprintf(&b, " × %d pods", d.From.Pods)
	}
	if d.QPS > 0 {
		fmt.Fprintf(&b, " at %g qps", d.QPS)
	}
	if !*d.Keepalive {
		b.WriteString(" no-keepalive")
	}
	b.WriteString(" → " + d.URL)
	return b.String()
}

// FixedRequests is how many requests fortio makes for p whenever it completes the load: p's
// requests (-n: fortio makes exactly that many). 0 when p alone does not say: a load that runs
// for a duration, one request at a fixed qps (fortio makes two), a load from several pods
// (each pod's fortio makes its own).
func (p Load) FixedRequests() int {
	if p.Requests <= 0 || p.Requests == 1 && p.QPS > 0 || p.From != nil && p.From.Pods > 0 {
		return 0
	}
	return p.Requests
}

// Run runs the load and records its results. A load whose requests are fixed
// (FixedRequests) that recorded another count errs: vet and the judge take such a load to
// record exactly its requests, so an expectation restating them is refused as one that
// cannot fail; a result of another count is not the load the step describes, and is not
// judged.
func (p *Load) Run(ctx context.Context, rt Runtime) error {
	q := p.WithDefaults()
	if q.From != nil {
		from := *q.From
		from.Namespace = rt.Namespace(from.Namespace)
		q.From = &from
	}
	start := rt.Now()
	meter := &LoadMeter{Planned: int64(q.Requests), Start: start}
	if q.Requests == 0 {
		meter.PlannedDuration = q.Duration.D()
	}
	rt.LoadStarted(meter)
	res, err := rt.Target().Load.Load(WithLoadMeter(ctx, meter), q)
	if len(res.Raw) > 0 {
		rt.Artifact("fortio.json", res.Raw)
	}
	for _, a := range res.Artifacts {
		rt.Artifact(a.Name, a.Data)
	}
	if codes := meter.CodesJSON(); codes != nil {
		rt.Artifact("codes-over-time.json", codes)
	}
	if err != nil {
		if ctx.Err() != nil && res.Raw != nil {
			// Stopped (an interrupt, the step's timeout, the run's stop): what the load did
			// before is kept, marked partial, which no expression reads as the load's result.
			rt.Record(&LoadRecorded{LoadResult: res.LoadResult, Warnings: res.Warnings, Start: start, End: rt.Now(), Partial: context.Cause(ctx).Error()})
		}
		return err
	}
	for _, w := range res.Warnings {
		rt.Warn(w)
	}
	if n := q.FixedRequests(); n > 0 && res.Requests != float64(n) {
		return fmt.Errorf("load %s: fortio recorded %s requests, not the %d the step fixes (requests: %d): fortio makes exactly the requests it is told, so this is not the load the step describes and it is not judged",
			q.URL, strconv.FormatFloat(res.Requests, 'f', -1, 64), n, n)
	}
	rt.Record(&LoadRecorded{LoadResult: res.LoadResult, Warnings: res.Warnings, Start: start, End: rt.Now()})
	return nil
}

// LoadRecorded is what a load step records: its results, its warnings and when it ran.
// Expressions see its results (ExprValue).
type LoadRecorded struct {
	LoadResult
	Warnings []string  `json:"warnings,omitempty"`
	Start    time.Time `json:"start"`
	End      time.Time `json:"end"`
	// Partial, when set, says why the load was stopped before its end (an interrupt, its
	// step's timeout): its results are what it did until then, shown in the reports, and no
	// expression reads them (NoValue).
	Partial string `json:"partial,omitempty"`
}

// NoValue says why no field of a partial load has a value: a claim over what a load did
// before it was stopped is not a claim over the load the step describes (30 requests of a
// stopped load of 1000 all answered 200 says nothing of the 970 it never sent). A code of a
// load no request of which got an HTTP response has none either, however a claim reaches it:
// that is LoadReads' to say, when the expression reads it.
func (l *LoadRecorded) NoValue(field string) string {
	if l.Partial != "" {
		return fmt.Sprintf("the load was stopped before its end (%s): its results (%s requests) are partial", l.Partial, strconv.FormatFloat(l.Requests, 'f', -1, 64))
	}
	return ""
}

// CodeFunc is the environment name each read of a load's codes by a key written in the
// expression (codes["503"], code503) is handed through, wherever the codes come from: a
// let (let c = f.codes; c["503"]), a ?:, a pod of pods (f.pods[1].code503), a closure's item
// (all(f.pods, .code503 == 0)). CodeFunc(<the codes>, <key>, <as written>) is LoadReads.Read.
const CodeFunc = "__code"

// CodeInFunc is the environment name each look-up of a key in a load's codes (has(c, k),
// k in c) is handed through: CodeInFunc(<the codes>, <key>, <as written>) is LoadReads.Has.
const CodeInFunc = "__codeIn"

// CodeGetFunc is the environment name each get(<a load's codes>, <key>) is handed through:
// CodeGetFunc(<the codes>, <key>, <as written>) is LoadReads.Get.
const CodeGetFunc = "__codeGet"

// LoadReads answers one environment's reads of loads' codes by key, knowing whose codes each
// map is (Own): a load no request of which got an HTTP response (every one a socket error,
// fortio's code -1: a port nothing listens on, a backend gone) counts none by code, and
// "no 503" would hold of requests no server answered. The read errs there, however the claim
// reached the map (the step's own field, a let, a ?:, a pod of pods, a closure's item, a key
// computed when it runs), naming the load whose codes they are; codes["-1"] has its value.
// A LoadReads that knows no owner (nil: an environment for compiling) says "the load".
type LoadReads struct {
	owners map[uintptr]codesOwner
}

// codesOwner is whose codes a map is: the read that names them (f, pp.pods[1]) and the load
// they count for (the load f, client pod client-b of load pp).
type codesOwner struct{ name, load string }

// Own says that codes are the codes of name (f, or pp.pods[1] for one pod's), counted for
// load (the load, or client pod client-b's part of the load). A map owned twice (two results
// handed the same map) is said as no one's.
func (c *LoadReads) Own(codes map[string]float64, name, load string) {
	if codes == nil {
		return
	}
	if c.owners == nil {
		c.owners = map[uintptr]codesOwner{}
	}
	id := reflect.ValueOf(codes).Pointer()
	if o, ok := c.owners[id]; ok && o.name != name {
		c.owners[id] = codesOwner{}
		return
	}
	c.owners[id] = codesOwner{name: name, load: load}
}

// owner is whose codes m is; the zero codesOwner when no one's (or m is no load's codes).
func (c *LoadReads) owner(m map[string]float64) codesOwner {
	if c == nil || m == nil {
		return codesOwner{}
	}
	return c.owners[reflect.ValueOf(m).Pointer()]
}

// Owns says whether m is the codes of a load this LoadReads was told of.
func (c *LoadReads) Owns(m any) bool {
	codes, ok := m.(map[string]float64)
	if c == nil || !ok || codes == nil {
		return false
	}
	_, owned := c.owners[reflect.ValueOf(codes).Pointer()]
	return owned
}

// noValue is the error of a read of key of codes (written as the expression has it), or nil
// where it has a value.
func (c *LoadReads) noValue(codes map[string]float64, key, written string) error {
	n, ok := unanswered(codes)
	if key == "-1" || !ok {
		return nil
	}
	o := c.owner(codes)
	alias := "code" + strings.Replace(key, "-", "_", 1)
	what, read := fmt.Sprintf("codes[%q]", key), fmt.Sprintf("codes[%q]", key)
	if written == alias || strings.HasSuffix(written, "."+alias) {
		what, read = alias, alias
	}
	head, claim, load := written, `the load's codes["-1"] == its requests (or its ok == 0)`, "the load"
	if o.name != "" {
		read = o.name + "." + read
		if !namesCodesOf(written, o.name) {
			head = fmt.Sprintf("%s (%s)", written, read)
		}
		claim = fmt.Sprintf("%s.codes[\"-1\"] == %s.requests (or %s.ok == 0)", o.name, o.name, o.name)
		load = o.load
	}
	return &NoValueError{Msg: fmt.Sprintf("%s has no value: no request of %s got an HTTP response (all %s failed at the socket, code -1: refused, reset, or timed out before an answer), so it counts none by code: a claim about %s would hold of requests no server answered; to claim that none was answered, write %s",
		head, load, strconv.FormatFloat(n, 'f', -1, 64), what, claim)}
}

// unanswered is how many requests a load made, where codes, its counts by code, say that
// none got an HTTP response (its one key is "-1", every request a socket error); ok is false
// where some request got one, or none was made.
func unanswered(codes map[string]float64) (n float64, ok bool) {
	n, ok = codes["-1"]
	return n, ok && len(codes) == 1 && n > 0
}

// LatencyFunc is the environment name each read of a load's latency (avg, min, max, p50, p90,
// p99, p999, errorLatency) is handed through, wherever the load's result comes from (a let, a
// pod of pods, a closure's item): LatencyFunc(<the result>, <field>, <as written>) is
// LoadReads.Latency.
const LatencyFunc = "__latency"

// LoadLatency is the latencies of some of a load's requests, in milliseconds.
type LoadLatency struct {
	Avg  float64 `expr:"avg" json:"avg"`
	Min  float64 `expr:"min" json:"min"`
	Max  float64 `expr:"max" json:"max"`
	P50  float64 `expr:"p50" json:"p50"`
	P90  float64 `expr:"p90" json:"p90"`
	P99  float64 `expr:"p99" json:"p99"`
	P999 float64 `expr:"p999" json:"p999"`
}

// errorLatency is the field of a load's result that reads the latencies of its failed
// requests (LoadReads.Latency).
const errorLatency = "errorLatency"

// Latency is field of v, a load's result, read as written: a latency (avg, p99, …), or
// errorLatency, the latencies of the requests counted in errors.
//
// fortio times every request, a socket error too (a refused connect in microseconds, a
// connect timeout at the timeout), so where no request got an HTTP response the latencies
// are those of the errors alone, and f.p99 < duration("100ms") held of a load against a
// closed port: a latency of such a load errs, saying to read errorLatency. A load some of
// whose requests failed at the socket (codes["-1"]) and others were answered has its socket
// errors' times mixed with the answers' in every latency: those err too. errorLatency is the
// latencies of the failed requests (a 503 as a socket error): the load's where every request
// failed (ok == 0), else those fortio timed apart (LoadResult.ErrorLatency, records of
// version 9 on; an older record has none, and says so).
func (c *LoadReads) Latency(v any, field, written string) (any, error) {
	var l LoadResult
	switch r := v.(type) {
	case LoadResult:
		l = r
	case *LoadResult:
		if r == nil {
			return nil, fmt.Errorf("cannot get %s from <nil>", field)
		}
		l = *r
	default:
		if isNil(v) {
			return nil, fmt.Errorf("cannot get %s from <nil>", field)
		}
		f, _ := readField(v, field)
		return f, nil
	}
	if w, ok := strings.CutPrefix(written, "#."); ok {
		written = "." + w // a closure's item, as written: all(f.pods, .p99 < 100)
	}
	o := c.owner(l.Codes)
	head, load, name := written, "the load", "the load"
	if o.name != "" {
		if !namesFieldOf(written, o.name, field) {
			head = fmt.Sprintf("%s (%s.%s)", written, o.name, field)
		}
		load, name = o.load, o.name
	}
	if field == errorLatency {
		switch {
		case l.Requests <= 0:
			return nil, &NoValueError{Msg: fmt.Sprintf("%s has no value: %s made no request, so no request failed", head, load)}
		case l.Errors <= 0:
			return nil, &NoValueError{Msg: fmt.Sprintf("%s has no value: no request of %s failed (errors is 0); claim the latencies of every request (%s.p99)", head, load, name)}
		case l.OK > 0 && l.ErrorLatency == nil:
			return nil, &NoValueError{Msg: fmt.Sprintf("%s has no value: %s of the %s requests of %s succeeded and %s failed, and its result holds no latencies of the failed ones apart: it was recorded by a labrun before record version 9, which kept the latencies of every request together (and those of the failed requests only where every request failed, ok == 0)",
				head, num(l.OK), num(l.Requests), load, num(l.Errors))}
		case l.OK > 0:
			return *l.ErrorLatency, nil
		}
		return LoadLatency{Avg: l.Avg, Min: l.Min, Max: l.Max, P50: l.P50, P90: l.P90, P99: l.P99, P999: l.P999}, nil
	}
	if l.Requests <= 0 {
		// fortio's histogram of no call reads 0 for each: f.p99 < duration("100ms") held.
		return nil, &NoValueError{Msg: fmt.Sprintf("%s has no value: %s made no request, so it timed none; to claim that, write %s.requests == 0", head, load, name)}
	}
	if n, ok := unanswered(l.Codes); ok {
		return nil, &NoValueError{Msg: fmt.Sprintf("%s has no value: no request of %s got an HTTP response (all %s failed at the socket, code -1: refused, reset, or timed out before an answer), so its latencies are the times its socket errors took (a refused connect takes microseconds, a connect timeout its timeout), not those of any response: a claim about %s would hold of requests no server answered; to claim the time the errors took, read %s.%s.%s",
			head, load, num(n), field, name, errorLatency, field)}
	}
	if n := l.Codes["-1"]; n > 0 {
		// fortio times a socket error with the answers, in one histogram: 10 refused connects
		// of a few microseconds among 90 answers of 200 ms made p99 (and p50, min) fall, and
		// f.p99 < duration("100ms") held of a load no answer of which came under 100 ms.
		return nil, &NoValueError{Msg: fmt.Sprintf("%s has no value: %s of the %s requests of %s failed at the socket (code -1: refused, reset, or timed out before an answer), and fortio times those errors with the answers, in one histogram (a refused connect takes microseconds, a connect timeout its timeout): its %s is not that of the answers; claim that no request failed so (%s.codes[\"-1\"] == 0 && …), or read the latencies of the failed requests, %s.%s.%s",
			head, num(n), num(l.Requests), load, field, name, name, errorLatency, field)}
	}
	f, _ := readField(l, field)
	return f, nil
}

// namesFieldOf says whether written reads field of name as such (name.p99), so that a message
// need not say whose it is.
func namesFieldOf(written, name, field string) bool {
	return written == name+"."+field || strings.HasSuffix(written, " "+name+"."+field) || strings.HasSuffix(written, "("+name+"."+field)
}

// ReadLatency is LoadReads.Latency of a LoadReads that knows no owner (an environment for
// compiling).
func ReadLatency(v any, field, written string) (any, error) {
	return (*LoadReads)(nil).Latency(v, field, written)
}

// namesCodesOf says whether written reads the codes of name as such (name.codes, name.code503),
// so that a message need not say whose they are.
func namesCodesOf(written, name string) bool {
	for i := 0; ; {
		k := strings.Index(written[i:], name+".code")
		if k < 0 {
			return false
		}
		k += i
		if k == 0 || !isNameByte(written[k-1]) {
			return true
		}
		i = k + 1
	}
}

func isNameByte(b byte) bool {
	return b == '_' || b == '.' || b == ']' || '0' <= b && b <= '9' || 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z'
}

// Read is codes[key] (0 where no response had that code), or an error where the load those
// codes count got no HTTP response to any request.
func (c *LoadReads) Read(codes map[string]float64, key, written string) (float64, error) {
	if err := c.noValue(codes, key, written); err != nil {
		return 0, err
	}
	return codes[key], nil
}

// Has says whether codes holds key, or errs where the load those codes count got no HTTP
// response to any request and key is another code than "-1": !("503" in f.codes) and
// has(f.codes, "503") ? f.code503 : 0 held "no 503" of requests no server answered.
func (c *LoadReads) Has(codes map[string]float64, key, written string) (bool, error) {
	if err := c.noValue(codes, key, written); err != nil {
		return false, err
	}
	_, ok := codes[key]
	return ok, nil
}

// Get is get(codes, key): codes[key], nil where codes has no such key, or an error where
// the load those codes count got no HTTP response to any request (get(f.codes, "503") ?? 0
// held "no 503" of requests no server answered). codes is any: get's first argument may be
// nil (a result read through ?.), which get gives nil of.
func (c *LoadReads) Get(codes any, key any, written string) (any, error) {
	m, ok := codes.(map[string]float64)
	k, isStr := key.(string)
	if !ok || !isStr {
		return getAny(codes, key), nil
	}
	if err := c.noValue(m, k, written); err != nil {
		return nil, err
	}
	if v, ok := m[k]; ok {
		return v, nil
	}
	return nil, nil
}

// getAny is expr's get(v, key) of what is not a load's codes: a map's item or a struct's
// field by its expr tag, nil where there is none.
func getAny(v, key any) any {
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Map && key != nil {
		kv := reflect.ValueOf(key)
		if !kv.Type().AssignableTo(rv.Type().Key()) {
			return nil
		}
		if e := rv.MapIndex(kv); e.IsValid() {
			return e.Interface()
		}
		return nil
	}
	if name, ok := key.(string); ok {
		f, _ := readField(v, name)
		return f
	}
	return nil
}

// Check errs where m, read by key as written (a key computed when the expression runs:
// f.codes[k], f.codes?.[vars.code]), is the codes of a load this LoadReads was told of that
// got no HTTP response; nil elsewhere, any other map included.
func (c *LoadReads) Check(m, key any, written string) error {
	codes, ok := m.(map[string]float64)
	k, isStr := key.(string)
	if !ok || !isStr || !c.Owns(codes) {
		return nil
	}
	return c.noValue(codes, k, written)
}

// ReadCode is LoadReads.Read of a LoadReads that knows no owner (an environment for
// compiling).
func ReadCode(codes map[string]float64, key, written string) (float64, error) {
	return (*LoadReads)(nil).Read(codes, key, written)
}

// HasCode is LoadReads.Has of a LoadReads that knows no owner.
func HasCode(codes map[string]float64, key, written string) (bool, error) {
	return (*LoadReads)(nil).Has(codes, key, written)
}

// GetCode is LoadReads.Get of a LoadReads that knows no owner.
func GetCode(codes, key any, written string) (any, error) {
	return (*LoadReads)(nil).Get(codes, key, written)
}

// ExprValue is what expressions see of a load: its results.
func (l *LoadRecorded) ExprValue(time.Time) any { return l.LoadResult }

// NewRecord is an empty record of a load step, for reading a run's record.
func (p *Load) NewRecord(bool) any { return &LoadRecorded{} }

// Result: fortio's results in the units people read; a load from several pods has each pod's
// own under pods.
func (p *Load) Result(c ResultContext) *Type {
	if p.From == nil || p.From.Pods == 0 {
		return onePodLoadResult
	}
	return loadResult
}

// onePodLoadResult is what a load from one client records: no pods of its own (its pods
// would be the empty list, and all(…, pods) holds of any run).
var onePodLoadResult = func() *Type {
	t := *loadResult
	t.Fields = nil
	for _, f := range loadResult.Fields {
		if f.Name == "pods" {
			g := *f
			g.Absent = "this load ran from one client (from.pods not set): it records no pods, and pods would be the empty list whatever the run; read the load's own fields"
			f = &g
		}
		t.Fields = append(t.Fields, f)
	}
	return &t
}()

// codesType is a load's codes: each read of it by a key, each look-up of one and each get()
// goes through LoadReads (Read, Has, Get).
var codesType = func() *Type {
	t := MapOf(StrForm("an HTTP status code such as \"503\"; \"-1\" is a socket error or a timeout", FormStatus), Num(Count))
	t.KeyRead, t.KeyHas, t.KeyGet = CodeFunc, CodeInFunc, CodeGetFunc
	return t
}()

// latency is f, a latency of a load's requests, read through LatencyFunc: of a load no
// request of which got an HTTP response it has no value (the latencies are the socket
// errors'), and errorLatency names that.
func latency(f *Field) *Field {
	f.Read = LatencyFunc
	if f.Name != errorLatency {
		f.Doc += " of every request (a response with any code); no value where some request failed at the socket (code -1: its time is mixed with the answers'; read errorLatency there)"
	}
	return f
}

// errorLatencyType is errorLatency: the latencies of a load's failed requests.
var errorLatencyType = StructOf(reflect.TypeFor[LoadLatency](),
	F("avg", Num(Millis), "mean latency"),
	F("min", Num(Millis), "smallest latency"),
	F("max", Num(Millis), "largest latency"),
	F("p50", Num(Millis), "median latency"),
	F("p90", Num(Millis), "90th percentile latency"),
	F("p99", Num(Millis), "99th percentile latency"),
	F("p999", Num(Millis), "99.9th percentile latency"),
)

var loadResult = func() *Type {
	fields := []*Field{
		F("requests", Num(Count), "the requests counted; a load of a duration (no `requests`) first sends one warm-up request per connection that fortio does not count and the server does: its `rq_total` delta is `requests + connections`"),
		F("codes", codesType, "responses by status code; <load>.code503 is short for <load>.codes[\"503\"]"),
		F("ok", Num(Count), "2xx responses (and fortio's 418)"),
		F("errors", Num(Count), "every other response, socket errors included"),
		F("sockets", Num(Count), "the connects fortio tried, a refused or timed-out one too (one per failed request once a backend is gone): more than connections says a connection was lost, not that one was made again; the server's cx_total counts those made"),
		F("connections", Num(Count), "the connections (threads) fortio ran"),
		F("qps", Num(PerSec), "the achieved rate"),
		F("duration", Num(Seconds), "how long the load ran"),
		latency(F("avg", Num(Millis), "mean latency")),
		latency(F("min", Num(Millis), "smallest latency")),
		latency(F("max", Num(Millis), "largest latency")),
		latency(F("p50", Num(Millis), "median latency")),
		latency(F("p90", Num(Millis), "90th percentile latency")),
		latency(F("p99", Num(Millis), "99th percentile latency")),
		latency(F("p999", Num(Millis), "99.9th percentile latency")),
		latency(F(errorLatency, errorLatencyType, "latencies of the failed requests, those errors counts, a response with a code that is no success and a socket error alike (fortio times a socket error too: a refused connect, a connect timeout); no value where none failed, nor in a record made before version 9 where some succeeded")),
		F("ips", MapOf(StrForm("a destination address, ip:port", FormAddress), Num(Count)), "connects fortio tried by destination address, a refused or timed-out one too (as sockets counts them)"),
		F("pod", StringType, "the client pod of one of pods"),
	}
	pods := F("pods", nil, "each client pod's own result when the load ran from several pods (from.pods), in the order of the pods' names; the fields above are their merge")
	podless := *pods
	podless.Absent = "one pod's result has no pods of its own"
	with := func(p *Field) *Type {
		t := StructOf(reflect.TypeFor[LoadResult](), append(append(append([]*Field{}, fields[:len(fields)-1]...), p), fields[len(fields)-1])...)
		t.Alias = codeAlias
		return t
	}
	podless.Type = &Type{Kind: TList, Elem: AnyType}
	pods.Type = ListOf(with(&podless))
	return with(pods)
}()

// codeRE is <load>.codeNNN (code_1 for "-1").
var codeRE = regexp.MustCompile(`^code(\d{3}|_1)$`)

// codeAlias reads <load>.code503 as <load>.codes["503"].
func codeAlias(name string) (field, key string, ok bool) {
	m := codeRE.FindStringSubmatch(name)
	if m == nil {
		return "", "", false
	}
	return "codes", strings.Replace(m[1], "_", "-", 1), true
}

// Mutants: every request 200, every request 503, no request made, latencies doubled and
// halved.
func (p *Load) Mutants(recorded any) []Mutant {
	if l, ok := recorded.(*LoadRecorded); !ok || l == nil {
		return nil
	}
	codes := func(code string) func(any) any {
		return func(v any) any {
			l := v.(*LoadRecorded)
			l.Codes = map[string]float64{code: l.Requests}
			l.OK = 0
			if code == "200" {
				l.OK = l.Requests
			}
			l.Errors = l.Requests - l.OK
			return l
		}
	}
	// A load of N requests as fast as possible (no qps) makes each connection's calls one after
	// another: calls twice as long take twice as long, so its duration (and the time it ran,
	// its step's end) doubles and its qps halves (Stretch), or no run records it. At a fixed
	// qps fortio waits between calls, and a load of a duration stops at its end: their time
	// stays. Calls half as long keep the load's time too: the run where it ends sooner has
	// fewer samples of what sampled while it, which a mutant does not build. A load from
	// several pods keeps its pods' own results, which the merge is held to.
	// A load of a duration as fast as possible whose calls take twice as long makes about
	// half as many in that time, fewer of each code, which the backend counts too: a run
	// mutate does not build, and doubling the latencies alone overfills the load's time.
	l0 := recorded.(*LoadRecorded)
	stretch := p.QPS == 0 && p.Requests > 0 && len(l0.Pods) == 0 && l0.Partial == ""
	var unbuilt string
	if p.QPS == 0 && p.Requests == 0 {
		unbuilt = "a load of a duration as fast as possible whose calls take twice as long makes about half as many calls, fewer of each code; mutate does not build that run"
	}
	scale := func(k float64) func(any) any {
		return func(v any) any {
			l := v.(*LoadRecorded)
			for _, p := range []*float64{&l.Avg, &l.Min, &l.Max, &l.P50, &l.P90, &l.P99, &l.P999} {
				*p *= k
			}
			if e := l.ErrorLatency; e != nil {
				s := *e
				for _, p := range []*float64{&s.Avg, &s.Min, &s.Max, &s.P50, &s.P90, &s.P99, &s.P999} {
					*p *= k
				}
				l.ErrorLatency = &s
			}
			if stretch && k > 1 {
				longer := time.Duration((k - 1) * l.DurationS * float64(time.Second))
				l.DurationS *= k
				l.QPS /= k
				if !l.End.IsZero() {
					l.End = l.End.Add(longer)
				}
			}
			return l
		}
	}
	return []Mutant{
		{Name: "every request 200", Apply: codes("200")},
		{Name: "every request 503", Apply: codes("503")},
		{Name: "no request made", Apply: func(v any) any {
			l := v.(*LoadRecorded)
			l.Requests, l.OK, l.Errors, l.QPS, l.Sockets, l.Connections = 0, 0, 0, 0, 0, 0
			l.Codes = map[string]float64{}
			l.IPs = map[string]float64{}
			return l
		}},
		{Name: "latencies ×2", Apply: scale(2), Stretch: stretch, Unbuilt: unbuilt},
		{Name: "latencies ×0.5", Apply: scale(0.5)},
	}
}

// LoadResult is what a load step records: fortio's results in the units people read.
// Latencies are in milliseconds.
type LoadResult struct {
	// Requests is the number of requests counted. A load of a duration (Exactly unset) first
	// sends one warm-up request per connection (fortio's httprunner), which fortio does not
	// count and the server (Envoy, a local backend) does: the server's rq_total delta over
	// such a load is Requests + Connections. A load of N requests sends no warm-up.
	Requests float64 `expr:"requests" json:"requests"`
	// Codes counts responses by HTTP status code; "-1" is a socket error or timeout. Expressions
	// may also write <load>.code503 for <load>.codes["503"].
	Codes map[string]float64 `expr:"codes" json:"codes"`
	// OK counts 2xx (and fortio's 418) responses.
	OK float64 `expr:"ok" json:"ok"`
	// Errors counts every other response, socket errors included.
	Errors float64 `expr:"errors" json:"errors"`
	// Sockets is the number of connects fortio tried, a refused or timed-out one too.
	Sockets float64 `expr:"sockets" json:"sockets"`
	// Connections is the number of connections (threads) fortio actually ran.
	Connections float64 `expr:"connections" json:"connections"`
	// QPS is the achieved rate.
	QPS float64 `expr:"qps" json:"qps"`
	// DurationS is the load's duration in seconds.
	DurationS float64 `expr:"duration" json:"duration"`
	Avg       float64 `expr:"avg" json:"avg"`
	Min       float64 `expr:"min" json:"min"`
	Max       float64 `expr:"max" json:"max"`
	P50       float64 `expr:"p50" json:"p50"`
	P90       float64 `expr:"p90" json:"p90"`
	P99       float64 `expr:"p99" json:"p99"`
	P999      float64 `expr:"p999" json:"p999"`
	// ErrorLatency is the latencies of the requests counted in Errors alone (fortio's
	// ErrorsDurationHistogram), where some failed and some succeeded (expressions read it as
	// errorLatency, through LoadReads.Latency); nil where none failed or none succeeded (the
	// failed requests' latencies are then the load's), and in a record made
	// before version 9, which kept the latencies of every request together only.
	ErrorLatency *LoadLatency `expr:"-" json:"errorLatency,omitempty"`
	// IPs counts the connects fortio tried by destination address, a refused or timed-out one
	// too (as Sockets counts them).
	IPs map[string]float64 `expr:"ips" json:"ips"`
	// Pods holds each client pod's own result when the load ran from several pods
	// (from.pods), in the order of the pods' names; the fields above are then their merge.
	Pods []LoadResult `expr:"pods" json:"pods,omitempty"`
	// Pod is the client pod of one of Pods.
	Pod string `expr:"pod" json:"pod,omitempty"`
}

// OKCode is fortio's notion of success (fhttp's codeIsOK, not exported): 2xx or 418. A socket
// error or timeout ("-1") is not.
func OKCode(code int) bool {
	return (code >= 200 && code <= 299) || code == http.StatusTeapot
}

// IsOK reports whether key, a Codes key, is a success (OKCode).
func IsOK(key string) bool {
	c, err := strconv.Atoi(key)
	return err == nil && OKCode(c)
}

// Recount sets Requests, OK and Errors from Codes, as fortio's result has them: every request
// counted under one code, OK the 2xx (and 418), Errors the rest.
func (r *LoadResult) Recount() {
	r.Requests, r.OK = 0, 0
	for k, n := range r.Codes {
		r.Requests += n
		if IsOK(k) {
			r.OK += n
		}
	}
	r.Errors = r.Requests - r.OK
}

// Move moves up to n whole responses to code to from the codes from accepts, the most common
// first, and recounts: the same requests, answered otherwise. It returns how many moved.
func (r *LoadResult) Move(n float64, from func(code string) bool, to string) float64 {
	moved := 0.0
	for n-moved >= 1 {
		src, most := "", 0.0
		for k, v := range r.Codes {
			if k != to && from(k) && (v > most || v == most && k < src) {
				src, most = k, v
			}
		}
		if most < 1 {
			break
		}
		m := min(math.Floor(n-moved), math.Floor(most))
		r.Codes[src] -= m
		moved += m
	}
	if moved > 0 {
		if r.Codes == nil {
			r.Codes = map[string]float64{}
		}
		r.Codes[to] += moved
	}
	r.Recount()
	return moved
}

// Answered moves up to n responses from one outcome to the other — from the successes to the
// errors when toErrors, else back — the most common code first, onto the most common code of
// the other outcome (503 for an error, 200 for a success when it has none). It returns how
// many moved.
func (r *LoadResult) Answered(n float64, toErrors bool) float64 {
	return r.Move(n, func(k string) bool { return IsOK(k) == toErrors }, r.MostCommon(!toErrors))
}

// MostCommon is the code of the most responses among the successes (ok) or the errors, 200 or
// 503 when there are none.
func (r *LoadResult) MostCommon(ok bool) string {
	out, best := "503", -1.0
	if ok {
		out = "200"
	}
	for k, v := range r.Codes {
		if IsOK(k) == ok && (v > best || v == best && k < out) {
			out, best = k, v
		}
	}
	return out
}

// latencyOrder are the latency fields from the smallest a run can record to the largest.
func (r *LoadResult) latencyOrder() []*float64 {
	return []*float64{&r.Min, &r.P50, &r.P90, &r.P99, &r.P999, &r.Max}
}

// SetLatency sets one latency field (min, avg, p50, p90, p99, p999, max) and moves the others
// as little as keeps them an order a histogram can have: min ≤ p50 ≤ … ≤ p999 ≤ max, and the
// average between min and max.
func (r *LoadResult) SetLatency(field string, v float64) {
	if field == "avg" {
		r.Avg = v
		r.Min, r.Max = min(r.Min, v), max(r.Max, v)
		for _, p := range r.latencyOrder() {
			*p = min(max(*p, r.Min), r.Max)
		}
		return
	}
	order := r.latencyOrder()
	i := slices.Index([]string{"min", "p50", "p90", "p99", "p999", "max"}, field)
	if i < 0 {
		return
	}
	*order[i] = v
	for j, p := range order {
		switch {
		case j < i:
			*p = min(*p, v)
		case j > i:
			*p = max(*p, v)
		}
	}
	r.Avg = min(max(r.Avg, r.Min), r.Max)
}

// Contradictions are the sums every load result fortio records keeps and r breaks, each said
// with the fields and their values: requests is the sum of codes, ok that of the 2xx and 418
// codes (IsOK), errors requests − ok, qps requests / duration, the ips at most the sockets and
// connections; the latencies are in the order a histogram has them
// (min ≤ p50 ≤ p90 ≤ p99 ≤ p999 ≤ max, the average between min and max; a percentile fortio
// gave none of reads 0 and is left out); a load from several pods has its pods' requests and
// codes added, and each pod's own result keeps the same sums. None when r could have been
// recorded.
func (r *LoadResult) Contradictions() []string {
	out := r.ownContradictions()
	if len(r.Pods) == 0 {
		return out
	}
	requests, codes := 0.0, map[string]float64{}
	for i := range r.Pods {
		p := &r.Pods[i]
		requests += p.Requests
		for k, n := range p.Codes {
			codes[k] += n
		}
		name := fmt.Sprintf("pods[%d]", i)
		if p.Pod != "" {
			name += " (" + p.Pod + ")"
		}
		for _, c := range p.ownContradictions() {
			out = append(out, name+": "+c)
		}
	}
	if !sameCount(requests, r.Requests) {
		out = append(out, fmt.Sprintf("requests is %s, but its pods' requests add up to %s", num(r.Requests), num(requests)))
	}
	for _, k := range slices.Sorted(maps.Keys(codes)) {
		if !sameCount(codes[k], r.Codes[k]) {
			out = append(out, fmt.Sprintf("codes[%q] is %s, but its pods' add up to %s", k, num(r.Codes[k]), num(codes[k])))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(r.Codes)) {
		if _, ok := codes[k]; !ok && r.Codes[k] != 0 {
			out = append(out, fmt.Sprintf("codes[%q] is %s, but no pod has that code", k, num(r.Codes[k])))
		}
	}
	return out
}

// ownContradictions are the sums of r's own fields that r breaks (Contradictions).
func (r *LoadResult) ownContradictions() []string {
	var out []string
	sum, ok := 0.0, 0.0
	for _, k := range slices.Sorted(maps.Keys(r.Codes)) {
		sum += r.Codes[k]
		if IsOK(k) {
			ok += r.Codes[k]
		}
	}
	if !sameCount(sum, r.Requests) {
		out = append(out, fmt.Sprintf("requests is %s, but the codes (%s) add up to %s", num(r.Requests), r.codesText(), num(sum)))
	}
	if !sameCount(ok, r.OK) {
		out = append(out, fmt.Sprintf("ok is %s, but the 2xx and 418 codes (%s) add up to %s", num(r.OK), r.codesText(), num(ok)))
	}
	if !sameCount(r.Requests-r.OK, r.Errors) {
		out = append(out, fmt.Sprintf("errors is %s, but requests − ok is %s − %s = %s", num(r.Errors), num(r.Requests), num(r.OK), num(r.Requests-r.OK)))
	}
	// fortio's qps is its requests over its duration (ActualQPS = count / ActualDuration); a
	// load from several pods sums its pods' rates over the longest duration.
	if r.DurationS > 0 && r.Requests > 0 && len(r.Pods) == 0 {
		if want := r.Requests / r.DurationS; !sameLatency(r.QPS, want) {
			out = append(out, fmt.Sprintf("qps is %.4g/s, but requests / duration is %s / %.4g s = %.4g/s (fortio's qps is its requests over its duration)", r.QPS, num(r.Requests), r.DurationS, want))
		}
	}
	// fortio times every call it makes (its histogram's count is the requests), within the
	// run it measures the duration of (ActualDuration, from before its first call to after its
	// last), each connection making one call at a time: a load that made requests lasted, and
	// so did its calls, none longer than the load, and the calls of each connection add up to
	// at most the load's duration (a load from several pods: the longest, over all their
	// connections). No call takes 0 s.
	if r.Requests > 0 {
		if r.DurationS <= 0 {
			out = append(out, fmt.Sprintf("duration is %s s, but it made %s requests (fortio measures the time of its run, which a request takes)", num(r.DurationS), num(r.Requests)))
		}
		if r.Max <= 0 {
			out = append(out, fmt.Sprintf("max is %s ms, but it made %s requests (fortio times every call, and no call takes 0 ms)", num(r.Max), num(r.Requests)))
		}
		if r.Avg <= 0 {
			out = append(out, fmt.Sprintf("avg is %s ms, but it made %s requests (fortio times every call, and no call takes 0 ms)", num(r.Avg), num(r.Requests)))
		}
	}
	if d := r.DurationS * 1000; d > 0 {
		if r.Max > d+latencySlack(d) {
			out = append(out, fmt.Sprintf("max is %s ms, longer than the load's duration %.4g s (every call fortio times is made within it)", num(r.Max), r.DurationS))
		}
		if r.Connections > 0 && r.Avg > 0 && r.Requests > 0 {
			busy, most := r.Avg*r.Requests, d*r.Connections
			if busy > most+latencySlack(most) {
				out = append(out, fmt.Sprintf("avg × requests is %.4g ms × %s = %.4g s of calls, more than its %s connection(s) can make in its duration of %.4g s (%.4g s: each connection makes one call at a time)",
					r.Avg, num(r.Requests), busy/1000, num(r.Connections), r.DurationS, most/1000))
			}
		}
	}
	// fortio counts an address each time it resolves one for a socket: at most the sockets it
	// opened and one more per connection (the fast client resolves once when it starts).
	if r.Sockets > 0 {
		ips := 0.0
		for _, n := range r.IPs {
			ips += n
		}
		if limit := r.Sockets + r.Connections; ips > limit && !sameCount(ips, limit) {
			out = append(out, fmt.Sprintf("ips add up to %s, but fortio opened %s sockets over %s connection(s): it counts at most one address per socket and one more per connection (%s)", num(ips), num(r.Sockets), num(r.Connections), num(limit)))
		}
	}
	names := []string{"min", "p50", "p90", "p99", "p999", "max"}
	prev, prevName := math.Inf(-1), ""
	for i, p := range r.latencyOrder() {
		v := *p
		if math.IsNaN(v) || v == 0 && names[i] != "min" && names[i] != "max" {
			continue // a percentile fortio gave none of reads 0
		}
		if v < prev && !sameLatency(v, prev) {
			out = append(out, fmt.Sprintf("%s is %s ms, below %s %s ms (latencies are ordered min ≤ p50 ≤ p90 ≤ p99 ≤ p999 ≤ max)", names[i], num(v), prevName, num(prev)))
		}
		if v >= prev {
			prev, prevName = v, names[i]
		}
	}
	if (r.Avg < r.Min && !sameLatency(r.Avg, r.Min)) || (r.Avg > r.Max && !sameLatency(r.Avg, r.Max)) {
		out = append(out, fmt.Sprintf("avg is %s ms, outside min %s ms … max %s ms", num(r.Avg), num(r.Min), num(r.Max)))
	}
	return out
}

// latencySlack is how far a sum of latencies (ms) may exceed the time d (ms) it is held to:
// fortio's calls and its duration are timed by separate readings of the clock; 20 ms and 1 %,
// as a record's two accounts of one time (interp.timeSlack).
func latencySlack(d float64) float64 { return 20 + d/100 }

// sameCount reports whether two counts are the same (sums of whole counts are exact in a
// float64; the margin is for a merge's rounding).
func sameCount(a, b float64) bool {
	return a == b || math.Abs(a-b) <= 1e-6
}

// sameLatency reports whether two latencies are the same but for float rounding (a
// percentile interpolated at its bucket's end, an average of equal values).
func sameLatency(a, b float64) bool {
	return a == b || math.Abs(a-b) <= 1e-9*max(1, math.Abs(a), math.Abs(b))
}

// codesText is r's codes as the console prints them: 200×18, 503×2.
func (r *LoadResult) codesText() string {
	if len(r.Codes) == 0 {
		return "none"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(r.Codes)) {
		parts = append(parts, k+"×"+num(r.Codes[k]))
	}
	return strings.Join(parts, ", ")
}

func num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
