package fortio

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"fortio.org/fortio/fhttp"
	"fortio.org/fortio/periodic"

	"labrun.dev/labrun/schema"
)

// percentiles are the ones schema.LoadResult has fields for.
var percentiles = []float64{50, 90, 99, 99.9}

// resolution is the width in seconds of fortio's finest latency buckets (its buckets widen
// with the latency, to 100,000 times this: 10 s). fortio's default, 1 ms, puts every request
// of a fast local load in one bucket, which neither a histogram nor an interpolated
// percentile can see into; 0.1 ms can.
const resolution = 0.0001

// plan is a load step with labrun's defaults applied and checked. Both the in-process run
// (runnerOptions) and the CLI's arguments (CLIArgs) are built from it, so the local and the kube
// target load the same way.
type plan struct {
	url         string
	connections int     // what fortio is asked for
	qps         float64 // -1 is as fast as possible, fortio's "max"
	requests    int64   // 0: run for duration
	duration    time.Duration
	keepalive   bool
	timeout     time.Duration
	headers     []string // "Name:value", sorted by name
	http10      bool
	resolveEach bool
	// expectConnections is how many connections fortio will really run (see fortioConnections).
	expectConnections int
	// warnings are known before the run.
	warnings []string
}

// newPlan takes req with the load's defaults (schema.Load.WithDefaults) and refuses what its
// checks find (schema.Load.Problems), every problem at once: the defaults and checks live
// with the load step, which has applied them already; a request from elsewhere (a test) means
// the same. What is fortio's own is here: qps 0 as its max, the connections it really runs.
func newPlan(req schema.Load) (plan, error) {
	req = req.WithDefaults()
	if problems := req.Problems(); len(problems) > 0 {
		errs := make([]error, len(problems))
		for i, pr := range problems {
			errs[i] = fmt.Errorf("%s: %s", pr.Field, pr.Msg)
		}
		return plan{}, fmt.Errorf("load %s: %w", req.URL, errors.Join(errs...))
	}
	p := plan{
		url:         req.URL,
		connections: req.Connections,
		qps:         req.QPS,
		requests:    int64(req.Requests),
		duration:    req.Duration.D(),
		keepalive:   *req.Keepalive,
		timeout:     req.Timeout.D(),
		http10:      req.HTTP10,
		resolveEach: *req.ResolveEachConnection,
	}
	if p.qps == 0 {
		// fortio reads QPS 0 as its default of 8 qps; negative is its "max".
		p.qps = -1
	}
	for _, name := range slices.SortedFunc(maps.Keys(req.Headers), func(a, b string) int { return strings.Compare(strings.ToLower(a), strings.ToLower(b)) }) {
		// No space after the colon: fortio keeps a regular header's value as written.
		p.headers = append(p.headers, name+":"+req.Headers[name])
		if strings.EqualFold(name, "Content-Type") {
			p.warnings = append(p.warnings,
				"a Content-Type header makes fortio send POST requests (with an empty body) instead of GET")
		}
	}
	if n, why := req.RunConnections(); why != "" {
		p.warnings = append(p.warnings, why)
		p.connections = n
	}
	p.expectConnections = p.fortioConnections()
	if p.expectConnections != p.connections {
		p.warnings = append(p.warnings, p.loweredWarning(p.expectConnections))
	}
	return p, nil
}

// fortioConnections is how many connections fortio runs for the plan. At a fixed qps it plans
// the calls first (requests, or qps×duration) and wants at least 2 per connection: it lowers
// the connections to calls/2, and to 1 below 2 calls, logging only a warning (-c 10 -n 10 runs
// 5 connections). At max qps it runs them all.
func (p plan) fortioConnections() int {
	if p.qps <= 0 {
		return p.connections
	}
	calls := p.requests
	if calls == 0 {
		calls = int64(p.qps * p.duration.Seconds())
	}
	if calls < 2 {
		return 1
	}
	if int64(2*p.connections) > calls {
		return int(calls / 2)
	}
	return p.connections
}

func (p plan) loweredWarning(actual int) string {
	calls := p.requests
	if calls == 0 {
		calls = int64(p.qps * p.duration.Seconds())
	}
	return fmt.Sprintf("fortio runs %d connection(s), not %d: at a fixed qps it wants at least 2 requests per connection and the load plans %d",
		actual, p.connections, calls)
}

// runnerOptions are fortio's options for the plan. Stop and Out are left for Load to set.
func (p plan) runnerOptions() (*fhttp.HTTPRunnerOptions, error) {
	o := &fhttp.HTTPRunnerOptions{
		RunnerOptions: periodic.RunnerOptions{
			QPS:         p.qps,
			Duration:    p.duration,
			NumThreads:  p.connections,
			Exactly:     p.requests,
			Percentiles: slices.Clone(percentiles),
			Resolution:  resolution,
			Labels:      p.url,
		},
		HTTPOptions: fhttp.HTTPOptions{
			URL:               p.url,
			HTTPReqTimeOut:    p.timeout,
			DisableKeepAlive:  !p.keepalive,
			HTTP10:            p.http10,
			NoResolveEachConn: !p.resolveEach,
		},
		// Without it, one non-2xx warm-up response (a 503 from a circuit breaker, which is
		// what many labs are about) aborts the whole load.
		AllowInitialErrors: true,
	}
	for _, h := range p.headers {
		if err := o.HTTPOptions.AddAndValidateExtraHeader(h); err != nil {
			return nil, err
		}
	}
	return o, nil
}

// CLIArgs returns the arguments of the fortio CLI (v1.66.5 or later, e.g. `fortio` + args in a
// client pod) that run req the way Generator.Load does: same defaults, same corrections,
// percentiles 50/90/99/99.9, and only fortio's JSON result on stdout, for DecodeJSON. Warnings
// are those known before the run (e.g. connections fortio will lower).
func CLIArgs(req schema.Load) (args []string, warnings []string, err error) {
	p, err := newPlan(req)
	if err != nil {
		return nil, nil, err
	}
	return p.cliArgs(), p.warnings, nil
}

func (p plan) cliArgs() []string {
	ps := make([]string, len(percentiles))
	for i, v := range percentiles {
		ps[i] = strconv.FormatFloat(v, 'g', -1, 64)
	}
	args := []string{"load", "-json", "-", "-allow-initial-errors",
		"-p", strings.Join(ps, ","),
		"-r", strconv.FormatFloat(resolution, 'g', -1, 64),
		"-c", strconv.Itoa(p.connections),
		// The CLI's default is 8; 0 is its max.
		"-qps", strconv.FormatFloat(max(p.qps, 0), 'g', -1, 64),
		"-timeout", p.timeout.String(),
	}
	if p.requests > 0 {
		args = append(args, "-n", strconv.FormatInt(p.requests, 10))
	} else {
		args = append(args, "-t", p.duration.String())
	}
	if !p.keepalive {
		args = append(args, "-keepalive=false")
	}
	if p.http10 {
		args = append(args, "-http1.0")
	}
	if !p.resolveEach {
		args = append(args, "-no-reresolve")
	}
	for _, h := range p.headers {
		args = append(args, "-H", h)
	}
	return append(args, p.url)
}
