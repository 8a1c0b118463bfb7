package local

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"labrun.dev/labrun/schema"
)

func TestParseDelay(t *testing.T) {
	const max = time.Second
	for _, tc := range []struct {
		in      string
		want    time.Duration // for fixed delays
		oneOf   []time.Duration
		wantErr bool
	}{
		{in: "", want: 0},
		{in: "200ms", want: 200 * time.Millisecond},
		{in: "0s", want: 0},
		{in: "5s", wantErr: true}, // above max: refused, never capped
		{in: "10ms:100", want: 10 * time.Millisecond},
		{in: "10ms:100%", want: 10 * time.Millisecond},
		{in: "3s:100", wantErr: true}, // weighted entries too
		{in: "10ms:50,20ms:50", oneOf: []time.Duration{10 * time.Millisecond, 20 * time.Millisecond}},
		{in: "10ms:0", want: 0}, // 0% of requests: the rest get none
		{in: "200", wantErr: true},
		{in: "-1s", wantErr: true},
		{in: "10ms:abc", wantErr: true},
		{in: "10ms:60,20ms:60", wantErr: true},
		{in: "10ms:50,x", wantErr: true},
	} {
		for range 20 { // weighted delays are random; each draw must be valid
			got, err := parseDelay(tc.in, max)
			if (err != nil) != tc.wantErr {
				t.Fatalf("parseDelay(%q): err = %v, wantErr %v", tc.in, err, tc.wantErr)
			}
			if tc.wantErr {
				break
			}
			if tc.oneOf != nil {
				if got != tc.oneOf[0] && got != tc.oneOf[1] {
					t.Fatalf("parseDelay(%q) = %v, want one of %v", tc.in, got, tc.oneOf)
				}
			} else if got != tc.want {
				t.Fatalf("parseDelay(%q) = %v, want %v", tc.in, got, tc.want)
			}
		}
	}
}

// A real fortio load against a backend: the backend's counters say what fortio did.
func TestBackendCountsFortioLoad(t *testing.T) {
	tg := newTarget(t, &schema.Local{Backends: map[string]schema.Backend{"a": {}}}, Options{})
	url := tg.Values["backends"].(map[string]schema.Endpoint)["a"].URL
	ctx, cancel := bg()
	defer cancel()

	snap := func() (schema.Stats, schema.Stats) {
		s, err := tg.Stats.Snapshot(ctx, schema.Snapshot{Backend: "a"})
		if err != nil {
			t.Fatal(err)
		}
		return s.Counters, s.Gauges
	}
	c0, _ := snap()

	// requests set (fortio's -n): no warm-up; keepalive: one connection per thread.
	res, err := tg.Load.Load(ctx, schema.Load{URL: url + "/echo", Connections: 4, Requests: 40})
	if err != nil {
		t.Fatal(err)
	}
	c1, g1 := snap()
	if res.Requests != 40 || res.Sockets != 4 {
		t.Fatalf("fortio: requests %v sockets %v, want 40 and 4", res.Requests, res.Sockets)
	}
	assertDelta(t, c0, c1, map[string]float64{"rq_total": 40, "rq_200": 40, "rq_2xx": 40, "rq_5xx": 0, "cx_total": 4})
	// Envoy's dotted names for the same counts.
	assertDelta(t, c0, c1, map[string]float64{"http.downstream_rq_total": 40, "http.downstream_rq_2xx": 40, "http.downstream_rq_5xx": 0, "http.downstream_cx_total": 4})
	if c1["http.downstream_cx_rx_bytes_total"] != c1["cx_rx_bytes_total"] || c1["http.downstream_cx_tx_bytes_total"] != c1["cx_tx_bytes_total"] {
		t.Errorf("dotted byte counters differ from the plain ones: %v", c1)
	}
	if g1["rq_active"] != 0 {
		t.Errorf("rq_active after the load = %v, want 0", g1["rq_active"])
	}

	// duration mode: fortio sends one uncounted warm-up request per connection first; the
	// backend sees it, as an Envoy would.
	res, err = tg.Load.Load(ctx, schema.Load{URL: url + "/echo", Connections: 2, QPS: 100,
		Duration: schema.Duration(300 * time.Millisecond)})
	if err != nil {
		t.Fatal(err)
	}
	c2, _ := snap()
	if got, want := c2["rq_total"]-c1["rq_total"], res.Requests+2; got != want {
		t.Errorf("duration load: backend counted %v requests, fortio %v (+2 warm-ups)", got, res.Requests)
	}
	if got := c2["cx_total"] - c1["cx_total"]; got != res.Sockets {
		t.Errorf("duration load: backend counted %v connections, fortio %v sockets", got, res.Sockets)
	}
	// The Prometheus text has them with underscores (a Prometheus name has no dots).
	prom, err := tg.Stats.Snapshot(ctx, schema.Snapshot{Prometheus: url + "/metrics"})
	if err != nil {
		t.Fatal(err)
	}
	if promCounters := prom.Counters; promCounters["http_downstream_rq_total"] != c2["rq_total"] || promCounters["rq_total"] != promCounters["http_downstream_rq_total"] {
		t.Errorf("prometheus text: rq_total %v, http_downstream_rq_total %v, want both %v", promCounters["rq_total"], promCounters["http_downstream_rq_total"], c2["rq_total"])
	}
	if c1["cx_rx_bytes_total"] <= c0["cx_rx_bytes_total"] || c1["cx_tx_bytes_total"] <= c0["cx_tx_bytes_total"] {
		t.Errorf("bytes did not grow: %v -> %v", c0, c1)
	}
}

// ?status=503:50 answers about half the requests with 503; the backend's codes agree with
// fortio's exactly, and fortio's reconnect after every non-2xx shows in the connections.
func TestBackendStatusMix(t *testing.T) {
	tg := newTarget(t, &schema.Local{Backends: map[string]schema.Backend{"a": {}}}, Options{})
	url := tg.Values["backends"].(map[string]schema.Endpoint)["a"].URL
	ctx, cancel := bg()
	defer cancel()
	res, err := tg.Load.Load(ctx, schema.Load{URL: url + "/echo?status=503:50", Connections: 4, Requests: 200})
	if err != nil {
		t.Fatal(err)
	}
	s, err := tg.Stats.Snapshot(ctx, schema.Snapshot{Backend: "a"})
	if err != nil {
		t.Fatal(err)
	}
	c := s.Counters
	if c["rq_503"] != res.Codes["503"] || c["rq_200"] != res.Codes["200"] || c["rq_total"] != 200 {
		t.Fatalf("backend %v, fortio codes %v", c, res.Codes)
	}
	if c["rq_503"] < 50 || c["rq_503"] > 150 {
		t.Errorf("rq_503 = %v of 200, far from half", c["rq_503"])
	}
	if c["rq_5xx"] != c["rq_503"] {
		t.Errorf("rq_5xx %v != rq_503 %v", c["rq_5xx"], c["rq_503"])
	}
	if c["cx_total"] != res.Sockets || res.Sockets <= 4 {
		t.Errorf("cx_total %v, fortio sockets %v (want equal, and more than 4: fortio reconnects after a 503)", c["cx_total"], res.Sockets)
	}
	// Every stat the backend records is in its catalogue, as the counter or gauge it is: vet
	// refuses any other name, so the two must agree.
	for kind, stats := range map[schema.StatKind]schema.Stats{schema.Counter: s.Counters, schema.Gauge: s.Gauges} {
		for name := range stats {
			if st, ok := schema.BackendStats.Lookup(name); !ok || st.Kind != kind {
				t.Errorf("the backend records the %s %s; its catalogue says %v %v", kind, name, st.Kind, ok)
			}
		}
	}
}

func TestBackendPathsHeadersDelayCap(t *testing.T) {
	tg := newTarget(t, &schema.Local{Backends: map[string]schema.Backend{
		"a": {Address: "127.0.0.2:0", MaxDelay: schema.Duration(100 * time.Millisecond)},
		"b": {},
	}}, Options{})
	eps := tg.Values["backends"].(map[string]schema.Endpoint)
	if !strings.HasPrefix(eps["a"].Address, "127.0.0.2:") || eps["a"].Host != "127.0.0.2" || eps["a"].URL != "http://"+eps["a"].Address {
		t.Fatalf("endpoint a = %+v", eps["a"])
	}
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	get := func(u string) (*http.Response, string, time.Duration) {
		t.Helper()
		start := time.Now()
		resp, err := client.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(body), time.Since(start)
	}

	resp, body, _ := get(eps["b"].URL + "/who")
	if body != "who=b\n" || resp.Header.Get("X-Backend") != "b" {
		t.Errorf("/who of b: %q, X-Backend %q", body, resp.Header.Get("X-Backend"))
	}
	// The limit is a's own (100ms), not fortio's global 1.5s; above it the request is
	// refused, never held for less than asked.
	resp, body, took := get(eps["a"].URL + "/echo?delay=1s&status=418")
	if resp.StatusCode != http.StatusBadRequest || took > 900*time.Millisecond || !strings.Contains(body, "backend a: ?delay=1s is above this backend's maxDelay 100ms") {
		t.Errorf("delay=1s above a maxDelay of 100ms: status %d after %v, body %q", resp.StatusCode, took, body)
	}
	resp, _, took = get(eps["a"].URL + "/echo?delay=100ms&status=418")
	if resp.StatusCode != 418 || took < 100*time.Millisecond {
		t.Errorf("delay=100ms at a maxDelay of 100ms: status %d after %v", resp.StatusCode, took)
	}
	resp, _, _ = get(eps["a"].URL + "/echo?delay=fast")
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("bad delay: status %d, want 400", resp.StatusCode)
	}
	resp, body, _ = get(eps["b"].URL + "/echo?delay=10ms&header=X-Lab:yes")
	if resp.Header.Get("X-Lab") != "yes" || resp.Header.Get("X-Backend") != "b" || body != "" {
		t.Errorf("echo: headers %v body %q", resp.Header, body)
	}

	// The metrics path is not a request; Prometheus text and the in-process read agree.
	ctx, cancel := bg()
	defer cancel()
	direct, err := tg.Stats.Snapshot(ctx, schema.Snapshot{Backend: "a"})
	if err != nil {
		t.Fatal(err)
	}
	scraped, err := tg.Stats.Snapshot(ctx, schema.Snapshot{Prometheus: eps["a"].URL + "/metrics"})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"rq_total", "rq_418", "rq_400", "rq_4xx", "rq_2xx"} {
		if direct.Counters[name] != scraped.Counters[name] {
			t.Errorf("%s: direct %v, scraped %v", name, direct.Counters[name], scraped.Counters[name])
		}
	}
	if direct.Counters["rq_total"] != 3 || direct.Counters["rq_418"] != 1 || direct.Counters["rq_400"] != 2 {
		t.Errorf("a counters = %v", direct.Counters)
	}
	if _, ok := scraped.Gauges["cx_active"]; !ok {
		t.Errorf("scraped gauges lack cx_active: %v", scraped.Gauges)
	}
	if len(direct.Artifacts) != 0 {
		t.Errorf("backend artifacts = %+v, want none (the record holds the stats)", direct.Artifacts)
	}
}

// While a request waits in ?delay=, the gauges show it.
func TestBackendActiveGauges(t *testing.T) {
	tg := newTarget(t, &schema.Local{Backends: map[string]schema.Backend{"a": {}}}, Options{})
	url := tg.Values["backends"].(map[string]schema.Endpoint)["a"].URL
	ctx, cancel := bg()
	defer cancel()
	done := make(chan error, 1)
	go func() {
		resp, err := http.Get(url + "/echo?delay=600ms")
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	deadline := time.Now().Add(500 * time.Millisecond)
	var g schema.Stats
	for time.Now().Before(deadline) {
		s, err := tg.Stats.Snapshot(ctx, schema.Snapshot{Backend: "a"})
		if err != nil {
			t.Fatal(err)
		}
		if g = s.Gauges; g["rq_active"] == 1 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if g["rq_active"] != 1 || g["cx_active"] != 1 || g["http.downstream_rq_active"] != 1 || g["http.downstream_cx_active"] != 1 {
		t.Errorf("during a delayed request: gauges %v, want rq_active, cx_active and their http.downstream_ names 1", g)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	http.DefaultClient.CloseIdleConnections()
}

func assertDelta(t *testing.T, before, after schema.Stats, want map[string]float64) {
	t.Helper()
	for name, w := range want {
		if got := after[name] - before[name]; got != w {
			t.Errorf("delta %s = %v, want %v (before %v, after %v)", name, got, w, before[name], after[name])
		}
	}
}

// Cleartext HTTP/2 (prior knowledge, as an Envoy with h2 upstreams speaks it) is served and
// counted like HTTP/1.
func TestBackendH2C(t *testing.T) {
	tg := newTarget(t, &schema.Local{Backends: map[string]schema.Backend{"a": {}}}, Options{})
	url := tg.Values["backends"].(map[string]schema.Endpoint)["a"].URL
	tr := &http.Transport{Protocols: new(http.Protocols)}
	tr.Protocols.SetUnencryptedHTTP2(true)
	client := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	defer client.CloseIdleConnections()
	for range 3 {
		resp, err := client.Get(url + "/echo?status=503")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.ProtoMajor != 2 || resp.StatusCode != 503 || resp.Header.Get("X-Backend") != "a" {
			t.Fatalf("proto %s status %d headers %v", resp.Proto, resp.StatusCode, resp.Header)
		}
	}
	ctx, cancel := bg()
	defer cancel()
	s, err := tg.Stats.Snapshot(ctx, schema.Snapshot{Backend: "a"})
	if err != nil {
		t.Fatal(err)
	}
	if s.Counters["rq_503"] != 3 || s.Counters["cx_total"] != 1 || s.Gauges["cx_active"] != 1 {
		t.Errorf("h2c: counters %v gauges %v, want 3 requests on 1 connection", s.Counters, s.Gauges)
	}
}

// sendCheck is a ResponseWriter that, when the handler first hands it the response (its
// header or a byte of its body, which could then leave for the client), records what the
// backend counted of that code at that moment.
type sendCheck struct {
	*httptest.ResponseRecorder
	b       *backend
	seen    bool
	counted float64
}

func (s *sendCheck) look(code int) {
	if !s.seen {
		s.seen = true
		c, _ := s.b.stats()
		s.counted = c["rq_"+strconv.Itoa(code)]
	}
}

func (s *sendCheck) WriteHeader(code int) { s.look(code); s.ResponseRecorder.WriteHeader(code) }
func (s *sendCheck) Write(p []byte) (int, error) {
	s.look(http.StatusOK)
	return s.ResponseRecorder.Write(p)
}

// TestBackendCountsBeforeAnswering: a backend counts a response's code before any of it can
// leave for the client, so that a snapshot taken after a load has every code the load got.
// Before, it counted once its handler had returned: a response big enough to be flushed
// while the handler wrote it (or flushed by the handler) could reach the client first, and a
// snapshot right after the load counted fewer than the load got — which a record's replay
// then had to allow for.
func TestBackendCountsBeforeAnswering(t *testing.T) {
	b, err := startBackend("a", schema.Backend{}, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	defer b.srv.Close()
	for _, target := range []string{"/echo?status=503", "/echo?size=100000", "/who", "/echo?delay=abc"} {
		w := &sendCheck{ResponseRecorder: httptest.NewRecorder(), b: b}
		c0, _ := b.stats()
		b.ServeHTTP(w, httptest.NewRequest("GET", target, nil))
		code := w.Code
		if !w.seen {
			t.Fatalf("%s: the handler wrote nothing", target)
		}
		if w.counted != c0["rq_"+strconv.Itoa(code)]+1 {
			t.Errorf("%s: when the response (%d) was handed over, the backend counted rq_%d %v, want %v", target, code, code, w.counted, c0["rq_"+strconv.Itoa(code)]+1)
		}
		if c1, _ := b.stats(); c1["rq_"+strconv.Itoa(code)] != c0["rq_"+strconv.Itoa(code)]+1 {
			t.Errorf("%s: counted %v times in all, want once", target, c1["rq_"+strconv.Itoa(code)]-c0["rq_"+strconv.Itoa(code)])
		}
	}
}

// TestSocketsCountRefusedConnects: fortio's sockets (and ips) count every connect it tries, a
// refused one too: against a port where nothing listens, 3 requests are 3 sockets and 3 at the
// address, with no connection made. So a load whose backend went away mid-run (a kill) counts
// a socket per failed request, and sockets > connections does not say that it reconnected; the
// server's cx_total counts only connections made. (docs/language.md said "the connections
// fortio opened".)
func TestSocketsCountRefusedConnects(t *testing.T) {
	tg := newTarget(t, &schema.Local{}, Options{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now: every connect is refused
	ctx, cancel := bg()
	defer cancel()
	res, err := tg.Load.Load(ctx, schema.Load{URL: "http://" + addr + "/echo", Connections: 1, Requests: 3, Timeout: schema.Duration(time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Codes["-1"] != 3 || res.OK != 0 {
		t.Fatalf("codes %v, want 3 socket errors", res.Codes)
	}
	if res.Sockets != 3 || res.IPs[addr] != 3 {
		t.Errorf("sockets %v, ips %v: want 3 and 3 at %s, one per refused connect", res.Sockets, res.IPs, addr)
	}
}
