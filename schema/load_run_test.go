package schema

import (
	"context"
	"strings"
	"testing"
	"time"
)

// countingLoads is a load generator that answers every load with
// requests requests, all 200.
type countingLoads struct{ requests float64 }

func (g countingLoads) Load(_ context.Context, _ Load) (LoadResponse, error) {
	return LoadResponse{LoadResult: LoadResult{Requests: g.requests, OK: g.requests, Codes: map[string]float64{"200": g.requests}}}, nil
}

type loadRuntime struct {
	Runtime
	gen      countingLoads
	recorded []any
}

func (r *loadRuntime) Target() *Target            { return &Target{Load: r.gen} }
func (r *loadRuntime) Namespace(ns string) string { return ns }
func (r *loadRuntime) Now() time.Time             { return time.Unix(1e9, 0) }
func (r *loadRuntime) LoadStarted(*LoadMeter)     {}
func (r *loadRuntime) Artifact(string, []byte)    {}
func (r *loadRuntime) Warn(string)                {}
func (r *loadRuntime) Record(v any)               { r.recorded = append(r.recorded, v) }

// TestLoadOfFixedRequestsRecordsThem: vet refuses fortio.requests == 40 for a load of
// requests: 40 as a claim that cannot fail, since fortio makes exactly the requests it is told.
// A load that recorded another count (a fortio that stopped early without saying so, a
// stand-in's result) errs instead of being judged: an expectation reading its requests would
// otherwise judge a load the step does not describe. A load whose count p alone does not give
// (a duration, one request at a fixed qps: two) records what fortio made.
func TestLoadOfFixedRequestsRecordsThem(t *testing.T) {
	for _, c := range []struct {
		load    Load
		made    float64
		wantErr string
	}{
		{Load{URL: "http://127.0.0.1:1/", Requests: 40}, 40, ""},
		{Load{URL: "http://127.0.0.1:1/", Requests: 40}, 39, "fortio recorded 39 requests, not the 40 the step fixes (requests: 40)"},
		{Load{URL: "http://127.0.0.1:1/", Requests: 40, QPS: 10}, 41, "fortio recorded 41 requests, not the 40"},
		{Load{URL: "http://127.0.0.1:1/", Requests: 1}, 2, "fortio recorded 2 requests, not the 1"},
		{Load{URL: "http://127.0.0.1:1/", Requests: 1, QPS: 5}, 2, ""},
		{Load{URL: "http://127.0.0.1:1/", Duration: Duration(time.Second)}, 123, ""},
		{Load{URL: "http://127.0.0.1:1/", Requests: 40, From: &LoadFrom{PodRef: PodRef{Selector: "app=c"}, Pods: 3}}, 120, ""},
	} {
		rt := &loadRuntime{gen: countingLoads{c.made}}
		err := c.load.Run(context.Background(), rt)
		switch {
		case c.wantErr == "" && err != nil:
			t.Errorf("%+v, %v made: %v", c.load, c.made, err)
		case c.wantErr == "" && len(rt.recorded) != 1:
			t.Errorf("%+v, %v made: recorded %d results, want 1", c.load, c.made, len(rt.recorded))
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("%+v, %v made: err %v, want one saying %q", c.load, c.made, err, c.wantErr)
		case c.wantErr != "" && len(rt.recorded) != 0:
			t.Errorf("%+v, %v made: recorded a result of the wrong count", c.load, c.made)
		}
	}
}
