// Package fortio is labrun's load generator: it runs fortio (fortio.org/fortio) in-process for
// the local target, and gives the kube target what it needs to run the fortio CLI in a pod the
// same way (CLIArgs) and to read its JSON (DecodeJSON). It is the only package of labrun that
// imports fortio; fortio's process-wide state is tamed in one place, tameFortio (globals.go).
//
// A load step maps to fortio as follows (defaults in brackets: schema.Load.WithDefaults, the
// one place they are set; schema.Load.Problems is the one place a load is checked):
//
//	url                    the URL (http or https)
//	connections [4]        -c, NumThreads; fortio may run fewer, reported as a warning
//	qps [0 = max]          -qps; 0 is as fast as possible (fortio's library reads 0 as 8 qps)
//	requests               -n, Exactly; the warm-up request per connection is skipped
//	duration [5s]          -t, when requests is not set
//	keepalive [true]       false: DisableKeepAlive, a new connection per request
//	timeout [3s]           -timeout, per request
//	headers                -H, AddAndValidateExtraHeader; Host sets the request's host
//	http10                 -http1.0
//	resolveEachConnection  [true] false: -no-reresolve, NoResolveEachConn
//	(histogram)            -r 0.0001, Resolution: 0.1 ms latency buckets (fortio: 1 ms)
//
// Warm-up errors never abort a load (AllowInitialErrors): a lab's first response may well be
// the 503 it is about.
package fortio

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"fortio.org/fortio/fhttp"
	"fortio.org/fortio/periodic"

	"labrun.dev/labrun/schema"
)

// Generator runs loads with fortio in this process. It implements schema.LoadGenerator; one
// Generator may run several loads at the same time.
type Generator struct {
	tune []func(*fhttp.HTTPRunnerOptions)
}

var _ schema.LoadGenerator = (*Generator)(nil)

// Option configures a Generator.
type Option func(*Generator)

// Tune adjusts fortio's options of every load after labrun has set them from the step, e.g. to
// use fortio's standard-library client (DisableFastClient) or a connection reuse range. Out and
// Stop are labrun's and are set after f runs.
func Tune(f func(*fhttp.HTTPRunnerOptions)) Option {
	return func(g *Generator) { g.tune = append(g.tune, f) }
}

// New returns a Generator.
func New(opts ...Option) *Generator {
	g := &Generator{}
	for _, opt := range opts {
		opt(g)
	}
	return g
}

// Load runs the load step req and returns its results, fortio's JSON as Raw, and warnings
// about what fortio did differently from what the step says.
//
// When ctx is cancelled the load stops: no new request starts, and Load returns the results so
// far with an error wrapping ctx's. Requests in flight are not interrupted (fortio gives them no
// context), so Load returns once they end, at the latest after the step's timeout; the same holds
// for the warm-up requests, sent before the load proper.
func (g *Generator) Load(ctx context.Context, req schema.Load) (schema.LoadResponse, error) {
	tameFortio()
	p, err := newPlan(req)
	if err != nil {
		return schema.LoadResponse{}, err
	}
	o, err := p.runnerOptions()
	if err != nil {
		return schema.LoadResponse{}, fmt.Errorf("load %s: %w", p.url, err)
	}
	for _, f := range g.tune {
		f(o)
	}
	result := schema.LoadResponse{Warnings: p.warnings}
	if err := ctx.Err(); err != nil {
		return result, fmt.Errorf("load %s not started: %w", p.url, err)
	}
	// One Aborter per run: it is how fortio stops, and without one periodic would install a
	// process-wide SIGINT handler of its own.
	aborter := periodic.NewAborter()
	o.Stop = aborter
	o.Out = io.Discard
	if m := schema.LoadMeterFrom(ctx); m != nil {
		m.Counting()
		o.AccessLogger = meterLogger{m}
	}
	stop := context.AfterFunc(ctx, func() { aborter.Abort(false) })
	res, runErr := fhttp.RunHTTPTest(o)
	aborted := !stop()

	result.LoadResult = emptyResult()
	if res != nil {
		// fortio's result for a run that failed to start holds two made-up latencies (for its
		// UI's graph), not requests: only a run's result is converted.
		if runErr == nil {
			var warnings []string
			result.LoadResult, warnings = convert(res)
			result.Warnings = append(result.Warnings, warnings...)
			if res.NumThreads != p.expectConnections {
				result.Warnings = append(result.Warnings, p.loweredWarning(res.NumThreads))
			}
		}
		raw, err := json.Marshal(res)
		if err != nil {
			result.Warnings = append(result.Warnings, "fortio's JSON result is missing: "+err.Error())
		}
		result.Raw = raw
	}
	switch {
	case runErr != nil:
		return result, fmt.Errorf("load %s: %w", p.url, runErr)
	case aborted && ctx.Err() != nil:
		return result, fmt.Errorf("load %s stopped after %d requests: %w", p.url, int64(result.Requests), ctx.Err())
	}
	return result, nil
}

// meterLogger is a fortio access logger that counts each request on the load's meter, for
// live progress.
type meterLogger struct{ m *schema.LoadMeter }

func (l meterLogger) Start(ctx context.Context, _ periodic.ThreadID, _ int64, _ time.Time) context.Context {
	return ctx
}

func (l meterLogger) Report(_ context.Context, _ periodic.ThreadID, _ int64, start time.Time, latency float64, ok bool, code string) {
	l.m.Done(ok)
	l.m.Code(code, start.Add(time.Duration(latency*float64(time.Second))))
}

func (meterLogger) Info() string { return "labrun progress" }
