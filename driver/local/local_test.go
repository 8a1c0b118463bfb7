package local

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"os"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"labrun.dev/labrun/schema"
)

func TestLoopbackAddr(t *testing.T) {
	for _, tc := range []struct {
		in, ip string
		port   int
		err    bool
	}{
		{in: "", ip: "127.0.0.1"},
		{in: "127.0.0.2:8080", ip: "127.0.0.2", port: 8080},
		{in: "127.0.0.2", ip: "127.0.0.2"},
		{in: ":8080", ip: "127.0.0.1", port: 8080},
		{in: "[::1]:53", ip: "::1", port: 53},
		{in: "::1", ip: "::1"},
		{in: "0.0.0.0:8080", err: true},
		{in: "192.0.2.1:80", err: true},
		{in: "localhost:80", err: true}, // an IP literal, so what is bound is what is meant
		{in: "127.0.0.1:http", err: true},
		{in: "127.0.0.1:70000", err: true},
	} {
		ip, port, err := loopbackAddr(tc.in)
		if tc.err {
			if err == nil {
				t.Errorf("loopbackAddr(%q) = %v %d, want an error", tc.in, ip, port)
			}
			continue
		}
		if err != nil || ip.String() != tc.ip || port != tc.port {
			t.Errorf("loopbackAddr(%q) = %v %d %v, want %s %d", tc.in, ip, port, err, tc.ip, tc.port)
		}
	}
}

func TestTargetShape(t *testing.T) {
	tg := newTarget(t, &schema.Local{
		Backends:   map[string]schema.Backend{"a": {Address: "127.0.0.2:0"}},
		Blackholes: map[string]schema.Blackhole{"bh": {}},
		DNS:        &schema.LocalDNS{Zone: "lab.internal"},
	}, Options{})
	if tg.Name != "local" || !strings.Contains(tg.Describe, "backend a 127.0.0.2:") ||
		!strings.Contains(tg.Describe, "dns lab.internal at 127.0.0.1:") {
		t.Errorf("name %q describe %q", tg.Name, tg.Describe)
	}
	if tg.Cluster != nil {
		t.Error("the local target has no Kubernetes cluster")
	}
	if tg.Exec == nil || tg.Load == nil || tg.Stats == nil || tg.Logs == nil || tg.DNS == nil || tg.Processes == nil {
		t.Errorf("missing drivers: %+v", tg)
	}
	eps := tg.Values["backends"].(map[string]schema.Endpoint)
	if a := eps["a"]; a.Host != "127.0.0.2" || a.Port == 0 || a.URL != "http://"+a.Address {
		t.Errorf("backend a = %+v", a)
	}

	// Without a zone there is no DNS driver (dns steps are refused before the run).
	bare := newTarget(t, nil, Options{})
	if bare.DNS != nil || bare.Describe != "this machine" {
		t.Errorf("bare target: DNS %v, describe %q", bare.DNS, bare.Describe)
	}
	// vet checks scenarios against what the schema declares of the local target: the
	// target built has exactly those capabilities and drivers.
	for _, c := range []struct {
		tg   *schema.Target
		spec *schema.Local
	}{{tg, &schema.Local{DNS: &schema.LocalDNS{Zone: "lab.internal"}}}, {bare, nil}} {
		want, _ := schema.BuiltinTarget("local", c.spec)
		if !maps.Equal(c.tg.Drivers(), want.Drivers) || !maps.Equal(c.tg.Caps, want.Caps) {
			t.Errorf("local target: drivers %v caps %v, the schema declares drivers %v caps %v", c.tg.Drivers(), c.tg.Caps, want.Drivers, want.Caps)
		}
	}
}

// A world that cannot be built leaves nothing behind: the backend that did start is closed,
// and net.DefaultResolver is untouched.
func TestNewFailureTearsDown(t *testing.T) {
	ctx, cancel := bg()
	defer cancel()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	prev := net.DefaultResolver
	for _, spec := range []*schema.Local{
		{Backends: map[string]schema.Backend{"a": {Address: "127.0.0.5:0"}, "b": {Address: taken.Addr().String()}}},
		{Backends: map[string]schema.Backend{"a": {Address: "127.0.0.5:0"}, "b": {Address: "0.0.0.0:0"}}},
		{Backends: map[string]schema.Backend{"a": {Address: "127.0.0.5:0"}}, DNS: &schema.LocalDNS{Zone: "lab.internal", Records: map[string][]string{"x": {"bad"}}}},
	} {
		before := listeningOn("127.0.0.5")
		if _, err := New(ctx, spec, Options{Logf: t.Logf}); err == nil {
			t.Fatalf("New(%+v) succeeded", spec)
		} else {
			t.Logf("as expected: %v", err)
		}
		if after := listeningOn("127.0.0.5"); after != before {
			t.Errorf("listeners on 127.0.0.5: %d before, %d after a failed New", before, after)
		}
		if net.DefaultResolver != prev {
			t.Fatal("a failed New changed net.DefaultResolver")
		}
	}
}

// Close leaves nothing behind: no goroutine, no listener, the previous resolver; a second
// Close is a no-op.
func TestCloseLeavesNothing(t *testing.T) {
	http.DefaultClient.CloseIdleConnections()
	baseline := runtime.NumGoroutine()
	prev := net.DefaultResolver
	ctx, cancel := bg()
	defer cancel()
	tg, err := New(ctx, &schema.Local{
		Backends:   map[string]schema.Backend{"a": {}, "b": {Address: "127.0.0.2:0"}},
		Blackholes: map[string]schema.Blackhole{"bh": {}},
		DNS:        &schema.LocalDNS{Zone: "lab.internal", Records: map[string][]string{"a": {"127.0.0.1"}}},
	}, Options{StopGrace: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	eps := tg.Values["backends"].(map[string]schema.Endpoint)
	dnsAddr := tg.Values["dns"].(map[string]any)["address"].(string)

	// Use everything: a load through the lab DNS, a keepalive connection left open, a stats
	// read, a process, a DNS lookup over TCP.
	if _, err := tg.Load.Load(ctx, schema.Load{URL: "http://a.lab.internal:" + strings.Split(eps["a"].Address, ":")[1] + "/echo",
		Connections: 2, Requests: 10}); err != nil {
		t.Fatal(err)
	}
	idle := &http.Client{Transport: &http.Transport{}}
	if resp, err := idle.Get(eps["b"].URL + "/who"); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
	}
	if _, err := tg.Stats.Snapshot(ctx, schema.Snapshot{Prometheus: eps["a"].URL + "/metrics"}); err != nil {
		t.Fatal(err)
	}
	if _, err := tg.Processes.Start(ctx, "sleeper", schema.Process{Argv: []string{"sleep", "30"}}); err != nil {
		t.Fatal(err)
	}
	tcpResolver := &net.Resolver{PreferGo: true, Dial: func(ctx2 context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx2, "tcp", dnsAddr)
	}}
	if _, err := tcpResolver.LookupHost(ctx, "a.lab.internal."); err != nil {
		t.Fatal(err)
	}

	// A request still waiting in ?delay= does not hold Close up.
	inflight := make(chan error, 1)
	go func() {
		c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
		resp, err := c.Get(eps["a"].URL + "/echo?delay=1400ms")
		if err == nil {
			resp.Body.Close()
		}
		inflight <- err
	}()
	time.Sleep(100 * time.Millisecond)

	start := time.Now()
	if err := tg.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("Close took %v", took)
	}
	if err := <-inflight; err == nil {
		t.Error("the in-flight request got an answer from a closed backend")
	}
	if err := tg.Close(ctx); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	idle.CloseIdleConnections()
	if net.DefaultResolver != prev {
		t.Error("net.DefaultResolver not restored")
	}
	for _, addr := range []string{eps["a"].Address, eps["b"].Address, tg.Values["blackholes"].(map[string]schema.Endpoint)["bh"].Address, dnsAddr} {
		if _, err := net.DialTimeout("tcp", addr, time.Second); !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("%s after Close: %v, want connection refused", addr, err)
		}
	}
	if u, err := net.ListenPacket("udp", dnsAddr); err != nil {
		t.Errorf("dns udp port still bound: %v", err)
	} else {
		u.Close()
	}
	// Nothing of the target may remain: the count is back to the baseline, and no goroutine
	// runs this package's code, an HTTP server, or a command's I/O.
	var n int
	var leaked []string
	for range 100 {
		n, leaked = runtime.NumGoroutine(), leakedGoroutines()
		if n <= baseline && len(leaked) == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Errorf("goroutines: %d before New, %d after Close; leaked:\n%s", baseline, n, strings.Join(leaked, "\n\n"))
}

// leakedGoroutines returns the stacks of goroutines that belong to a target, not to a test.
func leakedGoroutines() []string {
	buf := make([]byte, 1<<20)
	var out []string
	for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
		if strings.Contains(g, "testing.tRunner") || strings.Contains(g, "testing.(*T).Run") {
			continue
		}
		for _, mark := range []string{"driver/local.", "net/http.(*conn).serve", "net/http.(*Server).Serve", "os/exec.", "fortio.org/"} {
			if strings.Contains(g, mark) {
				out = append(out, g)
				break
			}
		}
	}
	return out
}

// listeningOn counts TCP listening sockets on an IPv4 address, from /proc/net/tcp.
func listeningOn(ip string) int {
	v4 := net.ParseIP(ip).To4()
	local := fmt.Sprintf("%02X%02X%02X%02X:", v4[3], v4[2], v4[1], v4[0])
	b, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		return -1
	}
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 3 && strings.HasPrefix(f[1], local) && f[3] == "0A" {
			n++
		}
	}
	return n
}
