package local

import (
	"context"
	"errors"
	"fmt"
	"log"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"labrun.dev/labrun/schema"
)

// Paths a backend serves itself; every other path is fortio's echo handler.
const (
	// metricsPath serves the backend's counters as Prometheus text. Requests to it are not
	// counted as requests (a scrape would otherwise change what it measures); their
	// connections and bytes are counted, as they are real.
	metricsPath = "/metrics"
	// whoPath answers "who=<name>\n": the body says which backend answered.
	whoPath = "/who"
	// backendHeader names the backend on every response.
	backendHeader = "X-Backend"
)

// backend is one in-process echo server with real counters.
//
// ?delay= is handled here, not by fortio: fhttp.MaxDelay is a process-wide flag, and each
// backend has its own cap. The wrapper parses delay (fortio's syntax: "200ms" or weighted
// "10ms:20,1s:0.5"), answers 400 to a delay above the backend's maxDelay (where fortio would
// cap it silently), removes it from the query and sleeps (cut short if the connection goes
// away) before fortio's handler runs, so fortio's global cap never applies.
type backend struct {
	name     string
	addr     *net.TCPAddr
	maxDelay time.Duration
	srv      *http.Server
	served   chan struct{} // closed when Serve has returned
	c        backendCounters
}

// backendCounters are counted as things happen; stats names are those of snapshot: backend.
type backendCounters struct {
	rqTotal  atomic.Int64 // requests received (metricsPath excluded)
	rqActive atomic.Int64 // requests being handled
	cxTotal  atomic.Int64 // connections accepted
	cxActive atomic.Int64 // connections open
	rxBytes  atomic.Int64 // bytes read from connections
	txBytes  atomic.Int64 // bytes written to connections

	mu    sync.Mutex
	codes map[int]int64 // responses by status code
}

func startBackend(name string, spec schema.Backend, logf func(string, ...any)) (*backend, error) {
	field := "local.backends." + name + ".address"
	ip, port, err := loopbackAddr(spec.Address)
	if err != nil {
		return nil, fixedAddress(field, spec.Address, fmt.Errorf("backend %s: %w", name, err))
	}
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: ip, Port: port})
	if err != nil {
		return nil, fixedAddress(field, spec.Address, fmt.Errorf("backend %s: %w", name, addressTaken(err, ip, port)))
	}
	b := &backend{
		name:     name,
		addr:     ln.Addr().(*net.TCPAddr),
		maxDelay: spec.MaxDelay.D(),
		served:   make(chan struct{}),
	}
	if b.maxDelay == 0 {
		b.maxDelay = schema.DefaultMaxDelay
	}
	b.c.codes = map[int]int64{}
	b.srv = &http.Server{
		Handler:           b,
		ReadHeaderTimeout: 30 * time.Second,
		ConnState:         b.connState,
		ErrorLog:          log.New(logWriter{logf, "backend " + name + ": "}, "", 0),
	}
	// Like fortio's own server: HTTP/1 and cleartext HTTP/2, so that an Envoy configured for
	// h2 upstreams can talk to it.
	b.srv.Protocols = new(http.Protocols)
	b.srv.Protocols.SetHTTP1(true)
	b.srv.Protocols.SetUnencryptedHTTP2(true)
	go func() {
		defer close(b.served)
		if err := b.srv.Serve(countingListener{ln, &b.c}); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logf("backend %s: serve: %v", name, err)
		}
	}()
	return b, nil
}

// close stops the server, cutting open connections, and waits until every connection and
// handler has finished.
func (b *backend) close(ctx context.Context) error {
	err := b.srv.Close()
	<-b.served
	for b.c.cxActive.Load() > 0 || b.c.rqActive.Load() > 0 {
		select {
		case <-ctx.Done():
			return fmt.Errorf("backend %s: %d connections and %d requests still active: %w",
				b.name, b.c.cxActive.Load(), b.c.rqActive.Load(), ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
	return err
}

func (b *backend) connState(_ net.Conn, s http.ConnState) {
	switch s {
	case http.StateNew:
		b.c.cxTotal.Add(1)
		b.c.cxActive.Add(1)
	case http.StateHijacked, http.StateClosed:
		b.c.cxActive.Add(-1)
	}
}

// ServeHTTP counts the request, applies ?delay= and answers: metrics, who, or fortio's echo.
func (b *backend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set(backendHeader, b.name)
	if r.URL.Path == metricsPath {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = w.Write(b.prometheus())
		return
	}
	b.c.rqTotal.Add(1)
	b.c.rqActive.Add(1)
	defer b.c.rqActive.Add(-1)
	rec := &statusRecorder{ResponseWriter: w, count: b.c.count}
	defer func() {
		if !rec.abandoned {
			rec.final(rec.status()) // a handler that wrote nothing: an empty 200
		}
	}()

	if q := r.URL.Query(); q.Has("delay") {
		d, err := parseDelay(q.Get("delay"), b.maxDelay)
		if err != nil {
			http.Error(rec, fmt.Sprintf("backend %s: %v", b.name, err), http.StatusBadRequest)
			return
		}
		if d > 0 {
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-r.Context().Done():
				// The client went away (or the backend is closing): no response, no code.
				t.Stop()
				rec.abandoned = true
				return
			}
		}
		q.Del("delay")
		r = withQuery(r, q)
	}
	if r.URL.Path == whoPath {
		rec.Header().Set("Content-Type", "text/plain")
		_, _ = fmt.Fprintf(rec, "who=%s\n", b.name)
		return
	}
	echo(rec, r)
}

// withQuery returns a shallow copy of r with its query replaced.
func withQuery(r *http.Request, q url.Values) *http.Request {
	nr := *r
	u := *r.URL
	u.RawQuery = q.Encode()
	nr.URL = &u
	nr.RequestURI = u.RequestURI()
	nr.Form = nil
	return &nr
}

// parseDelay reads fortio's delay syntax: "200ms" for every request, or "10ms:20,1s:0.5" for
// 10ms on 20% of requests, 1s on 0.5% and none on the rest. A delay drawn above max is an
// error.
func parseDelay(s string, max time.Duration) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	choices, err := schema.ParseDelay(s)
	if err != nil {
		return 0, err
	}
	roll := 100 * rand.Float64()
	cumulative := 0.0
	for _, c := range choices {
		cumulative += c.Percent
		if roll < cumulative {
			if c.Delay > max {
				// Held for less than asked, the request would measure something other than its
				// URL says: refused, as vet refuses a delay it can read.
				return 0, fmt.Errorf("?delay=%s is above this backend's maxDelay %s: it would not be held as asked; raise maxDelay", c.Delay, max)
			}
			return c.Delay, nil
		}
	}
	return 0, nil
}

func (c *backendCounters) count(code int) {
	c.mu.Lock()
	c.codes[code]++
	c.mu.Unlock()
}

// stats returns the backend's counters and gauges under the names expressions use:
// counters rq_total, rq_<code> (e.g. rq_503, only for codes seen), rq_1xx … rq_5xx (always
// present), cx_total, cx_rx_bytes_total, cx_tx_bytes_total; gauges cx_active, rq_active.
// Each of those but rq_<code> is also under the dotted name Envoy's HTTP connection manager
// gives it, without the listener's stat prefix (schema.BackendHTTPAliases): http.downstream_rq_active, … — the
// same counts, so that a local scenario reads a dotted Envoy name as one on kube does.
func (b *backend) stats() (counters, gauges schema.Stats) {
	counters = schema.Stats{
		"rq_total":          float64(b.c.rqTotal.Load()),
		"cx_total":          float64(b.c.cxTotal.Load()),
		"cx_rx_bytes_total": float64(b.c.rxBytes.Load()),
		"cx_tx_bytes_total": float64(b.c.txBytes.Load()),
	}
	for class := 1; class <= 5; class++ {
		counters[fmt.Sprintf("rq_%dxx", class)] = 0
	}
	b.c.mu.Lock()
	for code, n := range b.c.codes {
		counters["rq_"+strconv.Itoa(code)] = float64(n)
		if class := code / 100; class >= 1 && class <= 5 {
			counters[fmt.Sprintf("rq_%dxx", class)] += float64(n)
		}
	}
	b.c.mu.Unlock()
	gauges = schema.Stats{
		"cx_active": float64(b.c.cxActive.Load()),
		"rq_active": float64(b.c.rqActive.Load()),
	}
	for name, envoy := range schema.BackendHTTPAliases {
		if v, ok := counters[name]; ok {
			counters[envoy] = v
		}
		if v, ok := gauges[name]; ok {
			gauges[envoy] = v
		}
	}
	return counters, gauges
}

// prometheus renders stats() in the Prometheus text format, with the same names, so that a
// prometheus snapshot of <url>/metrics reads what a backend snapshot reads — except that a
// Prometheus name has no dots: as Envoy's /stats/prometheus does, a dot becomes "_"
// (http.downstream_rq_total is http_downstream_rq_total there).
func (b *backend) prometheus() []byte { return promText(b.stats()) }

// promText renders counters and gauges in the Prometheus text format (see prometheus).
func promText(counters, gauges schema.Stats) []byte {
	var sb strings.Builder
	write := func(kind string, s schema.Stats) {
		for _, name := range slices.Sorted(maps.Keys(s)) {
			prom := strings.ReplaceAll(name, ".", "_")
			fmt.Fprintf(&sb, "# TYPE %s %s\n%s %s\n", prom, kind, prom, strconv.FormatFloat(s[name], 'f', -1, 64))
		}
	}
	write("counter", counters)
	write("gauge", gauges)
	return []byte(sb.String())
}

// statusRecorder remembers the status code of a response and counts it (count) when it is
// final, before any byte of the response can leave: a client that read the answer finds it
// counted by a snapshot taken after. Before, the code was counted once the handler returned,
// which could be after the client read the answer: a snapshot right after a load could count
// one answer per connection fewer than the load got.
type statusRecorder struct {
	http.ResponseWriter
	code      int
	counted   bool
	count     func(code int)
	abandoned bool // no response was sent
}

// final counts code as the response's, once.
func (s *statusRecorder) final(code int) {
	if s.code == 0 {
		s.code = code
	}
	if !s.counted && s.count != nil {
		s.counted = true
		s.count(s.code)
	}
}

func (s *statusRecorder) WriteHeader(code int) {
	if code >= 200 {
		s.final(code)
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(p []byte) (int, error) {
	s.final(http.StatusOK)
	return s.ResponseWriter.Write(p)
}

// Flush keeps fortio's streaming (h2) echo working through the wrapper; a flush before any
// header sends a 200.
func (s *statusRecorder) Flush() {
	s.final(http.StatusOK)
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

func (s *statusRecorder) status() int {
	if s.code == 0 {
		return http.StatusOK
	}
	return s.code
}

// countingListener counts the bytes of every connection it accepts.
type countingListener struct {
	net.Listener
	c *backendCounters
}

func (l countingListener) Accept() (net.Conn, error) {
	conn, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: conn, c: l.c}, nil
}

type countingConn struct {
	net.Conn
	c *backendCounters
}

func (c *countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.c.rxBytes.Add(int64(n))
	return n, err
}

func (c *countingConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.c.txBytes.Add(int64(n))
	return n, err
}

// logWriter turns a server's error log into Logf lines.
type logWriter struct {
	logf   func(string, ...any)
	prefix string
}

func (w logWriter) Write(p []byte) (int, error) {
	w.logf("%s%s", w.prefix, strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
