package fortio

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"fortio.org/fortio/fhttp"

	"labrun.dev/labrun/schema"
)

// echoServer is fortio's echo handler on loopback; seen records each request's host, method and
// protocol, so tests can check what fortio sent.
type echoServer struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string
}

func newEchoServer(t testing.TB) *echoServer {
	t.Helper()
	s := &echoServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.seen = append(s.seen, r.Method+" "+r.Host+" "+r.Proto+" x-lab="+r.Header.Get("X-Lab"))
		s.mu.Unlock()
		fhttp.EchoHandler(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *echoServer) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.seen...)
}

func load(t *testing.T, req schema.Load) schema.LoadResponse {
	t.Helper()
	res, err := New().Load(t.Context(), req)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return res
}

func ptr[T any](v T) *T { return &v }

func TestLoadExactRequests(t *testing.T) {
	srv := newEchoServer(t)
	res := load(t, schema.Load{URL: srv.URL + "/echo", Requests: 37})
	r := res.LoadResult
	if r.Requests != 37 || r.Codes["200"] != 37 || r.OK != 37 || r.Errors != 0 {
		t.Errorf("requests %v codes %v ok %v errors %v; want 37 x 200", r.Requests, r.Codes, r.OK, r.Errors)
	}
	if got := len(srv.requests()); got != 37 {
		t.Errorf("server saw %d requests, want 37 (no warm-up with requests set)", got)
	}
	if r.Connections != schema.DefaultConnections || r.Sockets != schema.DefaultConnections {
		t.Errorf("connections %v sockets %v, want %d each (keepalive)", r.Connections, r.Sockets, schema.DefaultConnections)
	}
	addr := srv.Listener.Addr().String()
	if len(r.IPs) != 1 || r.IPs[addr] != schema.DefaultConnections {
		t.Errorf("ips %v, want {%s: %d}", r.IPs, addr, schema.DefaultConnections)
	}
	if r.QPS <= 0 || r.DurationS <= 0 || r.P50 <= 0 || r.Max < r.P50 || r.Min > r.P50 {
		t.Errorf("implausible timing: %+v", r)
	}
	if len(res.Warnings) != 0 {
		t.Errorf("warnings: %q", res.Warnings)
	}
	var raw map[string]any
	if err := json.Unmarshal(res.Raw, &raw); err != nil || raw["RunType"] != "HTTP" {
		t.Errorf("Raw is not fortio's JSON: %v %.200s", err, res.Raw)
	}
}

func TestLoadStatusRatio(t *testing.T) {
	srv := newEchoServer(t)
	const n = 400
	res := load(t, schema.Load{URL: srv.URL + "/echo?status=503:50", Requests: n})
	r := res.LoadResult
	if r.Codes["200"]+r.Codes["503"] != n || r.Requests != n {
		t.Fatalf("codes %v, want 200s and 503s summing to %d", r.Codes, n)
	}
	// Binomial(400, 0.5): standard deviation 10; allow 5 of them.
	if c := r.Codes["503"]; c < 150 || c > 250 {
		t.Errorf("503s = %v of %d, want about half", c, n)
	}
	if r.Errors != r.Codes["503"] || r.OK != r.Codes["200"] {
		t.Errorf("ok %v errors %v, codes %v", r.OK, r.Errors, r.Codes)
	}
	// fortio's fast client closes the connection after every non-OK response.
	if r.Sockets < r.Codes["503"] {
		t.Errorf("sockets %v < 503s %v: expected a new connection after each 503", r.Sockets, r.Codes["503"])
	}
}

func TestLoadDelayInLatency(t *testing.T) {
	srv := newEchoServer(t)
	res := load(t, schema.Load{URL: srv.URL + "/echo?delay=60ms", Requests: 16, Connections: 4})
	r := res.LoadResult
	if r.P50 < 60 || r.P50 > 400 || r.Min < 60 || r.Avg < 60 {
		t.Errorf("p50 %v min %v avg %v ms, want a little over 60", r.P50, r.Min, r.Avg)
	}
	if !(r.P50 <= r.P90 && r.P90 <= r.P99 && r.P99 <= r.P999 && r.P999 <= r.Max+1e-9) {
		t.Errorf("percentiles out of order: %+v", r)
	}
}

func TestLoadNoKeepalive(t *testing.T) {
	srv := newEchoServer(t)
	res := load(t, schema.Load{URL: srv.URL + "/echo", Requests: 30, Keepalive: ptr(false)})
	if r := res.LoadResult; r.Sockets != 30 || r.Requests != 30 {
		t.Errorf("sockets %v for %v requests, want one socket per request", r.Sockets, r.Requests)
	}
}

func TestLoadDuration(t *testing.T) {
	srv := newEchoServer(t)
	res := load(t, schema.Load{URL: srv.URL + "/echo", QPS: 40, Duration: schema.Duration(500 * time.Millisecond),
		Connections: 2})
	r := res.LoadResult
	// 40 qps for 0.5s: 20 requests at most (a loaded machine loses a few ticks: fortio stops at
	// the duration, it does not catch up), plus one uncounted warm-up per connection at the
	// server. Without the duration the load would not stop; without the qps it would send
	// hundreds.
	if r.Requests < 12 || r.Requests > 20 || r.Connections != 2 {
		t.Errorf("requests %v connections %v, want 12 to 20 and 2", r.Requests, r.Connections)
	}
	if got := len(srv.requests()); got != int(r.Requests)+2 {
		t.Errorf("server saw %d requests, want %v (the counted ones + 2 warm-up)", got, r.Requests+2)
	}
	if r.QPS < 24 || r.QPS > 50 {
		t.Errorf("qps %v, want about 40", r.QPS)
	}
}

func TestLoadCancel(t *testing.T) {
	srv := newEchoServer(t)
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(400*time.Millisecond, cancel)
	start := time.Now()
	res, err := New().Load(ctx, schema.Load{URL: srv.URL + "/echo?delay=5ms", Duration: schema.Duration(30 * time.Second)})
	elapsed := time.Since(start)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if elapsed > 1400*time.Millisecond {
		t.Errorf("Load returned %v after start, %v after cancel; want < 1s after", elapsed, elapsed-400*time.Millisecond)
	}
	if r := res.LoadResult; r.Requests == 0 || r.DurationS > 1.4 || r.Codes["200"] != r.Requests {
		t.Errorf("partial results: %+v", r)
	}
	if len(res.Raw) == 0 {
		t.Error("no Raw for a stopped load")
	}
}

func TestLoadCancelledBeforeStart(t *testing.T) {
	srv := newEchoServer(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := New().Load(ctx, schema.Load{URL: srv.URL + "/echo"})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if n := len(srv.requests()); n != 0 {
		t.Errorf("%d requests sent by a cancelled load", n)
	}
}

func TestLoadConnectionsLowered(t *testing.T) {
	srv := newEchoServer(t)
	t.Run("fixed qps", func(t *testing.T) {
		res := load(t, schema.Load{URL: srv.URL + "/echo", QPS: 200, Requests: 10, Connections: 8})
		if r := res.LoadResult; r.Connections != 5 || r.Requests != 10 {
			t.Errorf("connections %v requests %v, want fortio's 5 and 10", r.Connections, r.Requests)
		}
		if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "runs 5 connection(s), not 8") {
			t.Errorf("warnings %q, want the lowered-connections one", res.Warnings)
		}
	})
	t.Run("max qps, fewer requests than connections", func(t *testing.T) {
		before := len(srv.requests())
		res := load(t, schema.Load{URL: srv.URL + "/echo", Requests: 5, Connections: 10})
		if r := res.LoadResult; r.Requests != 5 || r.Connections != 5 {
			t.Errorf("requests %v connections %v, want 5 and 5", r.Requests, r.Connections)
		}
		if got := len(srv.requests()) - before; got != 5 {
			t.Errorf("server saw %d requests, want 5", got)
		}
		if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "lowered from 10 to 5") {
			t.Errorf("warnings %q", res.Warnings)
		}
	})
	t.Run("max qps, as many requests as connections", func(t *testing.T) {
		// The circuit-breaker case: all requests at once. fortio keeps every connection here.
		res := load(t, schema.Load{URL: srv.URL + "/echo", Requests: 10, Connections: 10})
		if r := res.LoadResult; r.Requests != 10 || r.Connections != 10 || len(res.Warnings) != 0 {
			t.Errorf("requests %v connections %v warnings %q", r.Requests, r.Connections, res.Warnings)
		}
	})
}

func TestLoadHeaders(t *testing.T) {
	srv := newEchoServer(t)
	load(t, schema.Load{URL: srv.URL + "/echo", Requests: 4, Connections: 2,
		Headers: map[string]string{"Host": "backend.lab.test", "X-Lab": "one"}})
	want := "GET backend.lab.test HTTP/1.1 x-lab=one"
	for _, got := range srv.requests() {
		if got != want {
			t.Errorf("server saw %q, want %q", got, want)
		}
	}
}

func TestLoadHTTP10(t *testing.T) {
	srv := newEchoServer(t)
	load(t, schema.Load{URL: srv.URL + "/echo", Requests: 2, Connections: 1, HTTP10: true})
	for _, got := range srv.requests() {
		if !strings.Contains(got, " HTTP/1.0 ") {
			t.Errorf("server saw %q, want HTTP/1.0", got)
		}
	}
}

func TestLoadContentTypePosts(t *testing.T) {
	srv := newEchoServer(t)
	res := load(t, schema.Load{URL: srv.URL + "/echo", Requests: 2, Connections: 1,
		Headers: map[string]string{"content-type": "application/json"}})
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "POST") {
		t.Errorf("warnings %q, want the POST one", res.Warnings)
	}
	for _, got := range srv.requests() {
		if !strings.HasPrefix(got, "POST ") {
			t.Errorf("server saw %q, want POST", got)
		}
	}
}

func TestLoadSocketErrors(t *testing.T) {
	// A loopback port nobody listens on: every request is a socket error, code -1.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	res := load(t, schema.Load{URL: "http://" + addr + "/", Requests: 6, Connections: 2})
	if r := res.LoadResult; r.Codes["-1"] != 6 || r.Errors != 6 || r.OK != 0 {
		t.Errorf("codes %v errors %v ok %v, want 6 socket errors", r.Codes, r.Errors, r.OK)
	}
}

func TestLoadBigResponseWarning(t *testing.T) {
	srv := newEchoServer(t)
	res := load(t, schema.Load{URL: srv.URL + "/echo?size=200000", Requests: 2, Connections: 1})
	if !strings.Contains(strings.Join(res.Warnings, "\n"), "128 KiB buffer") {
		t.Errorf("warnings %q, want the buffer one (sizes max %v)", res.Warnings, res.Raw != nil)
	}
}

func TestLoadInvalid(t *testing.T) {
	_, err := New().Load(t.Context(), schema.Load{URL: "ftp://x", Connections: -1, QPS: -2,
		Headers: map[string]string{"Bad Name": "v", "X": "a\nb"}})
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"scheme", "connections", "qps", `"Bad Name"`, "line break"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %s", err, want)
		}
	}
}

// TestLoadRefusesWhatVetRefuses: the driver refuses a load with the load step's own checks
// (schema.Load.Problems), with vet's message: requests with a duration is an error here too,
// in process and as CLI arguments, not a warning that drops the duration.
func TestLoadRefusesWhatVetRefuses(t *testing.T) {
	req := schema.Load{URL: "http://127.0.0.1:1/", Requests: 10, Duration: schema.Duration(5 * time.Second)}
	want := "duration: load takes requests or duration, not both: requests=10 runs exactly that many"
	if _, err := New().Load(t.Context(), req); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Load: error %v, want one containing %q", err, want)
	}
	if _, _, err := CLIArgs(req); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("CLIArgs: error %v, want one containing %q", err, want)
	}
	if pr := req.Problems(); len(pr) != 1 || pr[0].Field+": "+pr[0].Msg != want {
		t.Errorf("Problems = %v, want the one the driver reports", pr)
	}
}

func TestTune(t *testing.T) {
	srv := newEchoServer(t)
	g := New(Tune(func(o *fhttp.HTTPRunnerOptions) { o.DisableFastClient = true }))
	res, err := g.Load(t.Context(), schema.Load{URL: srv.URL + "/echo", Requests: 8, Connections: 2})
	if err != nil {
		t.Fatal(err)
	}
	var raw struct{ DisableFastClient bool }
	if err := json.Unmarshal(res.Raw, &raw); err != nil || !raw.DisableFastClient || res.Codes["200"] != 8 {
		t.Errorf("tune not applied or load failed: %v %+v", err, res.LoadResult)
	}
}

func TestLoadConcurrent(t *testing.T) {
	// A parallel block may run several loads at once on one Generator.
	srv := newEchoServer(t)
	g := New()
	var wg sync.WaitGroup
	results := make([]schema.LoadResponse, 3)
	for i := range results {
		wg.Go(func() {
			res, err := g.Load(t.Context(), schema.Load{URL: srv.URL + "/echo?status=503:20", Requests: 50 + i, Connections: 2})
			if err != nil {
				t.Error(err)
			}
			results[i] = res
		})
	}
	wg.Wait()
	for i, res := range results {
		if res.Requests != float64(50+i) || res.Codes["200"]+res.Codes["503"] != res.Requests {
			t.Errorf("load %d: %+v", i, res.LoadResult)
		}
	}
	if got := len(srv.requests()); got != 50+51+52 {
		t.Errorf("server saw %d requests, want %d", got, 50+51+52)
	}
}

func TestLoadClientError(t *testing.T) {
	// A port out of range is refused by the load's own checks (schema.CheckLoadURL, the
	// ones vet makes), before fortio makes its clients and without a DNS lookup.
	_, err := New().Load(t.Context(), schema.Load{URL: "http://127.0.0.1:99999/", Requests: 2})
	if err == nil || !strings.Contains(err.Error(), "99999") || !strings.Contains(err.Error(), "port") {
		t.Fatalf("err = %v, want the port refused", err)
	}
}

// refusingServer is an HTTP server on loopback that answers each request after delay, but
// closes every other connection it accepts before reading from it: a client that opens a
// connection per request gets a socket error (code -1) on those, in microseconds.
func refusingServer(t *testing.T, delay time.Duration) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int64
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(delay)
		w.WriteHeader(http.StatusOK)
	})}
	go func() { _ = srv.Serve(closingEveryOther{l, &n}) }()
	t.Cleanup(func() { _ = srv.Close() })
	return "http://" + l.Addr().String() + "/"
}

type closingEveryOther struct {
	net.Listener
	n *atomic.Int64
}

func (c closingEveryOther) Accept() (net.Conn, error) {
	for {
		conn, err := c.Listener.Accept()
		if err != nil || c.n.Add(1)%2 == 1 {
			return conn, err
		}
		_ = conn.Close()
	}
}

// TestLoadPartlyAnsweredLatencies: a real fortio load of 20 requests, a connection each, half
// of them closed by the server before any answer (socket errors, microseconds) and half
// answered after 30 ms. fortio times both in one histogram, so the load's p50 came out far
// under 30 ms and f.p50 < duration("10ms") held of a load no answer of which came under 30
// ms; and errorLatency had no value, the failed requests' own times not kept. The load now
// keeps the failed requests' latencies apart (ErrorLatency: all under 30 ms), and its
// latencies have no value (they are not the answers').
func TestLoadPartlyAnsweredLatencies(t *testing.T) {
	url := refusingServer(t, 30*time.Millisecond)
	res := load(t, schema.Load{URL: url, Requests: 20, Connections: 1, Keepalive: ptr(false)})
	r := res.LoadResult
	if r.Codes["-1"] == 0 || r.Codes["200"] == 0 || r.OK == 0 {
		t.Fatalf("codes %v: want some socket errors and some 200s", r.Codes)
	}
	if r.ErrorLatency == nil {
		t.Fatalf("ErrorLatency is nil, want the latencies of the %v failed requests", r.Errors)
	}
	if e := r.ErrorLatency; e.Max >= 30 || e.P99 >= 30 {
		t.Errorf("ErrorLatency %+v: want the socket errors' own times, all under 30 ms", *e)
	}
	for _, f := range []string{"p50", "p99", "min", "avg"} {
		v, err := schema.ReadLatency(r, f, "f."+f)
		var nv *schema.NoValueError
		if !errors.As(err, &nv) || !strings.Contains(err.Error(), "failed at the socket") {
			t.Errorf("f.%s = %v, %v: want no value (its socket errors' times are mixed with the answers')", f, v, err)
		}
	}
	v, err := schema.ReadLatency(r, "errorLatency", "f.errorLatency")
	if e, ok := v.(schema.LoadLatency); err != nil || !ok || e != *r.ErrorLatency {
		t.Errorf("f.errorLatency = %v, %v: want %+v", v, err, *r.ErrorLatency)
	}
	// A result recorded before version 9 has no ErrorLatency: no value, and says why.
	r.ErrorLatency = nil
	if _, err := schema.ReadLatency(r, "errorLatency", "f.errorLatency"); err == nil || !strings.Contains(err.Error(), "before record version 9") {
		t.Errorf("f.errorLatency of an older record: %v, want no value saying the record predates it", err)
	}
}
