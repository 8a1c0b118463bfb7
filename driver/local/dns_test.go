package local

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"

	"labrun.dev/labrun/schema"
)

func ttl(n int) *int { return &n }

func startTestDNS(t *testing.T, spec schema.LocalDNS) *dnsServer {
	t.Helper()
	s, err := startDNS(spec, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

// exchange sends one query to the server over udp or tcp and returns the parsed answer.
func exchange(t *testing.T, network, addr, name string, qtype dnsmessage.Type, edns bool) dnsmessage.Message {
	t.Helper()
	q := dnsmessage.Message{
		Header:    dnsmessage.Header{ID: 4242, RecursionDesired: true},
		Questions: []dnsmessage.Question{{Name: dnsmessage.MustNewName(name), Type: qtype, Class: dnsmessage.ClassINET}},
	}
	if edns {
		var rh dnsmessage.ResourceHeader
		_ = rh.SetEDNS0(1232, dnsmessage.RCodeSuccess, false)
		q.Additionals = []dnsmessage.Resource{{Header: rh, Body: &dnsmessage.OPTResource{}}}
	}
	msg, err := q.Pack()
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.DialTimeout(network, addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	buf := make([]byte, 65535)
	var n int
	if network == "udp" {
		if _, err := c.Write(msg); err != nil {
			t.Fatal(err)
		}
		n, err = c.Read(buf)
	} else {
		if _, err := c.Write(append(binary.BigEndian.AppendUint16(nil, uint16(len(msg))), msg...)); err != nil {
			t.Fatal(err)
		}
		if _, err = io.ReadFull(c, buf[:2]); err == nil {
			n = int(binary.BigEndian.Uint16(buf))
			_, err = io.ReadFull(c, buf[:n])
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	var m dnsmessage.Message
	if err := m.Unpack(buf[:n]); err != nil {
		t.Fatal(err)
	}
	if m.ID != 4242 || !m.Response {
		t.Fatalf("bad response header %+v", m.Header)
	}
	return m
}

// answers renders the answer section as "A 127.0.0.2 ttl=5" lines.
func answers(m dnsmessage.Message) []string {
	var out []string
	for _, r := range m.Answers {
		switch b := r.Body.(type) {
		case *dnsmessage.AResource:
			out = append(out, fmt.Sprintf("A %s ttl=%d", netip.AddrFrom4(b.A), r.Header.TTL))
		case *dnsmessage.AAAAResource:
			out = append(out, fmt.Sprintf("AAAA %s ttl=%d", netip.AddrFrom16(b.AAAA), r.Header.TTL))
		case *dnsmessage.SOAResource:
			out = append(out, fmt.Sprintf("SOA %s ttl=%d", b.NS, r.Header.TTL))
		}
	}
	return out
}

func TestDNSServerAnswers(t *testing.T) {
	s := startTestDNS(t, schema.LocalDNS{Zone: "Lab.Internal.", TTL: ttl(5), Records: map[string][]string{
		"gslb":                  {"127.0.0.2"},
		"dual.lab.internal":     {"127.0.0.4", "::1"},
		"deep.sub.lab.internal": {"127.0.0.5"},
	}})
	for _, tc := range []struct {
		name  string
		qtype dnsmessage.Type
		rcode dnsmessage.RCode
		aa    bool
		ans   []string
		soa   bool // SOA in the authority section
	}{
		{"gslb.lab.internal.", dnsmessage.TypeA, dnsmessage.RCodeSuccess, true, []string{"A 127.0.0.2 ttl=5"}, false},
		{"GSLB.Lab.Internal.", dnsmessage.TypeA, dnsmessage.RCodeSuccess, true, []string{"A 127.0.0.2 ttl=5"}, false},
		{"gslb.lab.internal.", dnsmessage.TypeAAAA, dnsmessage.RCodeSuccess, true, nil, true}, // NODATA
		{"dual.lab.internal.", dnsmessage.TypeAAAA, dnsmessage.RCodeSuccess, true, []string{"AAAA ::1 ttl=5"}, false},
		{"dual.lab.internal.", dnsmessage.TypeALL, dnsmessage.RCodeSuccess, true, []string{"A 127.0.0.4 ttl=5", "AAAA ::1 ttl=5"}, false},
		{"missing.lab.internal.", dnsmessage.TypeA, dnsmessage.RCodeNameError, true, nil, true},
		{"sub.lab.internal.", dnsmessage.TypeA, dnsmessage.RCodeSuccess, true, nil, true}, // empty non-terminal
		{"lab.internal.", dnsmessage.TypeSOA, dnsmessage.RCodeSuccess, true, []string{"SOA ns.lab.internal. ttl=5"}, false},
		{"lab.internal.", dnsmessage.TypeA, dnsmessage.RCodeSuccess, true, nil, true},
		{"example.com.", dnsmessage.TypeA, dnsmessage.RCodeRefused, false, nil, false},
		{"notlab.internal.", dnsmessage.TypeA, dnsmessage.RCodeRefused, false, nil, false},
	} {
		for _, network := range []string{"udp", "tcp"} {
			t.Run(network+" "+tc.name+" "+tc.qtype.String(), func(t *testing.T) {
				m := exchange(t, network, s.addr.String(), tc.name, tc.qtype, network == "udp")
				if m.RCode != tc.rcode || m.Authoritative != tc.aa {
					t.Errorf("rcode %v aa %v, want %v %v", m.RCode, m.Authoritative, tc.rcode, tc.aa)
				}
				if got := answers(m); !slices.Equal(got, tc.ans) {
					t.Errorf("answers %q, want %q", got, tc.ans)
				}
				hasSOA := len(m.Authorities) == 1 && m.Authorities[0].Header.Type == dnsmessage.TypeSOA
				if hasSOA != tc.soa {
					t.Errorf("authorities %v, want SOA: %v", m.Authorities, tc.soa)
				}
				if hasSOA && m.Authorities[0].Body.(*dnsmessage.SOAResource).MinTTL != 5 {
					t.Errorf("SOA minimum %v, want the zone's ttl", m.Authorities[0].Body)
				}
				if network == "udp" && (len(m.Additionals) != 1 || m.Additionals[0].Header.Type != dnsmessage.TypeOPT) {
					t.Errorf("an EDNS query must get an OPT back: %v", m.Additionals)
				}
			})
		}
	}
}

func TestDNSFQDN(t *testing.T) {
	s := &dnsServer{zone: "lab.internal"}
	for _, tc := range []struct{ in, want, err string }{
		{in: "gslb", want: "gslb.lab.internal"},
		{in: "GSLB.lab.internal.", want: "gslb.lab.internal"},
		{in: "a.b.lab.internal", want: "a.b.lab.internal"},
		{in: "lab.internal", want: "lab.internal"},
		{in: "gslb.lab.intenal", err: "not in the lab zone"},
		{in: "example.com", err: "not in the lab zone"},
		{in: "", err: "empty"},
	} {
		got, err := s.fqdn(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("fqdn(%q) = %q, %v; want error %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("fqdn(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

// SetRecords changes one name and never another; an empty list removes the name; readers
// racing with writers see either the old or the new records of a name.
func TestDNSSetRecordsPerHost(t *testing.T) {
	s := startTestDNS(t, schema.LocalDNS{Zone: "lab.internal", Records: map[string][]string{
		"a": {"127.0.0.2"}, "b": {"127.0.0.3"},
	}})
	ctx := context.Background()
	set := func(host string, addrs ...string) {
		t.Helper()
		if err := s.SetRecords(ctx, schema.DNS{Host: host, Addresses: addrs}); err != nil {
			t.Fatal(err)
		}
	}
	set("a.lab.internal", "127.0.0.4", "::ffff:127.0.0.5")
	if got := fmt.Sprint(s.lookup("a.lab.internal"), s.lookup("b.lab.internal")); got != "[127.0.0.4 127.0.0.5] [127.0.0.3]" {
		t.Fatalf("after setting a: %s", got)
	}
	set("a")
	if got := s.knownHosts(); !slices.Equal(got, []string{"b.lab.internal"}) {
		t.Fatalf("after removing a: %v", got)
	}
	if m := exchange(t, "udp", s.addr.String(), "a.lab.internal.", dnsmessage.TypeA, false); m.RCode != dnsmessage.RCodeNameError {
		t.Fatalf("removed name: %v", m.RCode)
	}
	for _, bad := range []schema.DNS{
		{Host: "a", Addresses: []string{"not-an-ip"}},
		{Host: "a.other.zone", Addresses: []string{"127.0.0.1"}},
		{Host: "a", Addresses: []string{"127.0.0.1"}, Server: &schema.HostsFile{File: "/hosts/addn"}},
	} {
		if err := s.SetRecords(ctx, bad); err == nil {
			t.Errorf("SetRecords(%+v) succeeded", bad)
		}
	}

	s.logf = func(string, ...any) {}
	set("a", "127.0.1.0", "127.0.2.0")
	var wg sync.WaitGroup
	stop := make(chan struct{})
	defer wg.Wait()
	defer close(stop)
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			err := s.SetRecords(ctx, schema.DNS{Host: "a", Addresses: []string{
				fmt.Sprintf("127.0.1.%d", i%200), fmt.Sprintf("127.0.2.%d", i%200)}})
			if err != nil {
				t.Error(err)
				return
			}
		}
	})
	for range 2000 {
		got := s.lookup("a.lab.internal")
		if len(got) != 2 || got[0].As4()[3] != got[1].As4()[3] {
			t.Fatalf("torn read of a: %v", got)
		}
		if b := s.lookup("b.lab.internal"); len(b) != 1 || b[0].String() != "127.0.0.3" {
			t.Fatalf("b changed: %v", b)
		}
	}
}

func TestResolverRoute(t *testing.T) {
	h := &resolverHook{zone: "lab.internal"}
	for _, tc := range []struct {
		name string
		want route
	}{
		{"gslb.lab.internal.", toLab},
		{"GSLB.LAB.INTERNAL", toLab},
		{"lab.internal.", toLab},
		{"gslb.lab.internal.corp.example.", nxLocal}, // a search-list expansion of a lab name
		{"lab.internal.corp.example.", nxLocal},
		{"example.com.", toUpstream},
		{"mylab.internal.", toUpstream},
		{"internal.", toUpstream},
	} {
		if got := h.routeOf(tc.name); got != tc.want {
			t.Errorf("routeOf(%q) = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// The hook's routing with a real Go resolver: lab names reach the lab server, other names the
// "upstream" (here a second lab server standing in for the system's nameserver, on loopback:
// tests never send a query anywhere else), search expansions of lab names are NXDOMAIN here.
func TestResolverHookRouting(t *testing.T) {
	lab := startTestDNS(t, schema.LocalDNS{Zone: "lab.internal", Records: map[string][]string{"gslb": {"127.0.0.2"}}})
	upstream := startTestDNS(t, schema.LocalDNS{Zone: "example.test", Records: map[string][]string{"www": {"127.0.0.9"}}})
	h := &resolverHook{zone: "lab.internal", lab: lab.addr.String()}
	var mu sync.Mutex
	var dialled []string
	for _, network := range []string{"udp", "tcp"} {
		r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
			// Whatever nameserver resolv.conf names, the test's upstream stands in for it.
			c, err := h.dial(ctx, network, upstream.addr.String())
			mu.Lock()
			dialled = append(dialled, network)
			mu.Unlock()
			return c, err
		}}
		ctx, cancel := bg()
		got, err := r.LookupHost(ctx, "gslb.lab.internal.")
		if err != nil || !slices.Equal(got, []string{"127.0.0.2"}) {
			t.Errorf("%s: lab name: %v, %v", network, got, err)
		}
		got, err = r.LookupHost(ctx, "www.example.test.")
		if err != nil || !slices.Equal(got, []string{"127.0.0.9"}) {
			t.Errorf("%s: other name: %v, %v", network, got, err)
		}
		_, err = r.LookupHost(ctx, "gslb.lab.internal.example.test.")
		var dnsErr *net.DNSError
		if !errors.As(err, &dnsErr) || !dnsErr.IsNotFound {
			t.Errorf("%s: search expansion: %v, want not found", network, err)
		}
		cancel()
	}
	if !slices.Contains(dialled, "tcp") {
		t.Errorf("the tcp resolver never dialled: %v", dialled)
	}
}

// With a target open, net.DefaultResolver resolves the lab zone through the server: a flip is
// seen by the next lookup, a removed name is not found, localhost still resolves. Close puts
// the previous resolver back.
func TestDefaultResolverHook(t *testing.T) {
	prev := net.DefaultResolver
	ctx, cancel := bg()
	defer cancel()
	tg, err := New(ctx, &schema.Local{DNS: &schema.LocalDNS{Zone: "lab.internal",
		Records: map[string][]string{"gslb": {"127.0.0.2"}}}}, Options{Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	if net.DefaultResolver == prev || !net.DefaultResolver.PreferGo {
		t.Fatal("net.DefaultResolver was not replaced")
	}
	dnsv := tg.Values["dns"].(map[string]any)
	if dnsv["zone"] != "lab.internal" || !strings.HasPrefix(dnsv["address"].(string), "127.0.0.1:") {
		t.Errorf("values dns = %v", dnsv)
	}
	lookup := func(name string) ([]string, error) { return net.DefaultResolver.LookupHost(ctx, name) }

	if got, err := lookup("gslb.lab.internal"); err != nil || !slices.Equal(got, []string{"127.0.0.2"}) {
		t.Fatalf("gslb: %v %v", got, err)
	}
	if err := tg.DNS.SetRecords(ctx, schema.DNS{Host: "gslb.lab.internal", Addresses: []string{"127.0.0.3", "::1"}}); err != nil {
		t.Fatal(err)
	}
	got, err := lookup("gslb.lab.internal")
	slices.Sort(got)
	if err != nil || !slices.Equal(got, []string{"127.0.0.3", "::1"}) {
		t.Fatalf("gslb after the flip: %v %v", got, err)
	}
	if err := tg.DNS.SetRecords(ctx, schema.DNS{Host: "gslb", Addresses: nil}); err != nil {
		t.Fatal(err)
	}
	_, err = lookup("gslb.lab.internal.") // rooted: no search list
	var dnsErr *net.DNSError
	if !errors.As(err, &dnsErr) || !dnsErr.IsNotFound {
		t.Fatalf("removed gslb: %v, want not found", err)
	}
	if got, err := lookup("localhost"); err != nil || len(got) == 0 {
		t.Fatalf("localhost: %v %v", got, err)
	}

	// A second target with DNS cannot take the hook while this one holds it.
	if _, err := New(ctx, &schema.Local{DNS: &schema.LocalDNS{Zone: "other.internal"}}, Options{}); err == nil {
		t.Fatal("a second DNS target opened")
	}
	if err := tg.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if net.DefaultResolver != prev {
		t.Fatal("Close did not restore net.DefaultResolver")
	}
}

// The phenomenon of seed 002 §4 at the client level: after a DNS flip, a client that opens a
// connection per request follows the new address at once; a keepalive client stays on the
// connection it has, so on the old backend, until that connection ends.
func TestDNSFlipFollowedPerConnectionNotKeepalive(t *testing.T) {
	port := freePort(t, "127.0.0.2", "127.0.0.3")
	tg := newTarget(t, &schema.Local{
		Backends: map[string]schema.Backend{
			"a": {Address: fmt.Sprintf("127.0.0.2:%d", port)},
			"b": {Address: fmt.Sprintf("127.0.0.3:%d", port)},
		},
		DNS: &schema.LocalDNS{Zone: "lab.internal", Records: map[string][]string{"gslb": {"127.0.0.2"}}},
	}, Options{})
	ctx, cancel := bg()
	defer cancel()
	url := fmt.Sprintf("http://gslb.lab.internal:%d/who", port)
	counts := func() (a, b float64) {
		sa, err := tg.Stats.Snapshot(ctx, schema.Snapshot{Backend: "a"})
		if err != nil {
			t.Fatal(err)
		}
		sb, err := tg.Stats.Snapshot(ctx, schema.Snapshot{Backend: "b"})
		if err != nil {
			t.Fatal(err)
		}
		return sa.Counters["rq_total"], sb.Counters["rq_total"]
	}
	flip := func(to string) {
		if err := tg.DNS.SetRecords(ctx, schema.DNS{Host: "gslb", Addresses: []string{to}}); err != nil {
			t.Error(err)
		}
	}
	// run loads for 1.2s at 50 qps on one connection and flips a→b at 0.4s.
	run := func(keepalive bool) (schema.LoadResult, float64, float64) {
		flip("127.0.0.2")
		a0, b0 := counts()
		timer := time.AfterFunc(400*time.Millisecond, func() { flip("127.0.0.3") })
		defer timer.Stop()
		res, err := tg.Load.Load(ctx, schema.Load{URL: url, Connections: 1, QPS: 50,
			Duration: schema.Duration(1200 * time.Millisecond), Keepalive: &keepalive})
		if err != nil {
			t.Fatal(err)
		}
		a1, b1 := counts()
		t.Logf("keepalive=%v: fortio %v requests, codes %v, ips %v; backend a +%v, b +%v",
			keepalive, res.Requests, res.Codes, res.IPs, a1-a0, b1-b0)
		if res.OK != res.Requests {
			t.Errorf("keepalive=%v: errors %v", keepalive, res.Codes)
		}
		return res.LoadResult, a1 - a0, b1 - b0
	}

	res, a, b := run(true)
	if b != 0 || a < 10 || len(res.IPs) != 1 {
		t.Errorf("keepalive client: a +%v, b +%v, ips %v; want every request on a, over one connection", a, b, res.IPs)
	}
	res, a, b = run(false)
	if a < 5 || b < 5 || len(res.IPs) != 2 {
		t.Errorf("connection-per-request client: a +%v, b +%v, ips %v; want both, b after the flip", a, b, res.IPs)
	}

	// A plain net/http client without keepalive (seed 002's curl loop) says who answers.
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "who=b\n" {
		t.Errorf("after the flip: %q, want who=b", body)
	}
}
