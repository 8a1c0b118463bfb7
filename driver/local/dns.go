package local

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/dns/dnsmessage"

	"labrun.dev/labrun/schema"
)

// defaultTTL is the TTL of answers when the zone does not set one: short, so that a flip is
// seen by the next lookup of any caching client.
const defaultTTL = 1

// dnsServer is an in-process authoritative DNS server for the lab zone, on UDP and TCP at
// the same loopback address. It answers A and AAAA (and SOA at the apex) for the names it
// holds, NODATA for a name without records of the asked type, NXDOMAIN for other names in
// the zone, and REFUSED for names outside it. Every answer has the AA bit and the zone's TTL;
// negative answers carry the SOA, whose minimum is the same TTL.
type dnsServer struct {
	zone string // lower case, no trailing dot
	ttl  uint32
	addr *net.UDPAddr
	logf func(string, ...any)

	mu      sync.Mutex                              // serialises writers
	records atomic.Pointer[map[string][]netip.Addr] // by fqdn (lower case, no trailing dot); replaced whole
	serial  atomic.Uint32

	udp   *net.UDPConn
	tcp   *net.TCPListener
	conns sync.Map // open TCP connections, to close them at close
	wg    sync.WaitGroup
}

func startDNS(spec schema.LocalDNS, logf func(string, ...any)) (*dnsServer, error) {
	zone := strings.ToLower(strings.TrimSuffix(strings.TrimSpace(spec.Zone), "."))
	if zone == "" {
		return nil, errors.New("dns: zone is empty")
	}
	if _, err := dnsmessage.NewName(zone + "."); err != nil {
		return nil, fmt.Errorf("dns: zone %q: %v", spec.Zone, err)
	}
	ttl := defaultTTL
	if spec.TTL != nil {
		ttl = *spec.TTL
	}
	if ttl < 0 {
		return nil, fmt.Errorf("dns: ttl %d is negative", ttl)
	}
	s := &dnsServer{zone: zone, ttl: uint32(ttl), logf: logf}
	s.serial.Store(1)
	records := map[string][]netip.Addr{}
	for host, addrs := range spec.Records {
		name, err := s.fqdn(host)
		if err != nil {
			return nil, fmt.Errorf("dns: records: %w", err)
		}
		parsed, err := parseAddrs(addrs)
		if err != nil {
			return nil, fmt.Errorf("dns: records of %s: %w", host, err)
		}
		if len(parsed) > 0 {
			records[name] = parsed
		}
	}
	s.records.Store(&records)

	ip, port, err := loopbackAddr(spec.Address)
	if err != nil {
		return nil, fixedAddress("local.dns.address", spec.Address, fmt.Errorf("dns: %w", err))
	}
	if err := s.listen(ip, port); err != nil {
		// Who holds it and what to write, as a backend's taken address says.
		return nil, fixedAddress("local.dns.address", spec.Address, fmt.Errorf("dns: %w", addressTaken(err, ip, port)))
	}
	s.wg.Add(2)
	go s.serveUDP()
	go s.serveTCP()
	return s, nil
}

// listen binds UDP and TCP on the same port; with port 0 it retries until a free port is
// free on both.
func (s *dnsServer) listen(ip net.IP, port int) error {
	var lastErr error
	for range 10 {
		u, err := net.ListenUDP("udp", &net.UDPAddr{IP: ip, Port: port})
		if err != nil {
			return err
		}
		p := u.LocalAddr().(*net.UDPAddr).Port
		t, err := net.ListenTCP("tcp", &net.TCPAddr{IP: ip, Port: p})
		if err != nil {
			u.Close()
			if port != 0 {
				return err
			}
			lastErr = err
			continue
		}
		s.udp, s.tcp, s.addr = u, t, u.LocalAddr().(*net.UDPAddr)
		return nil
	}
	return fmt.Errorf("no port free for both udp and tcp: %w", lastErr)
}

func (s *dnsServer) close() error {
	err := errors.Join(s.udp.Close(), s.tcp.Close())
	s.conns.Range(func(k, _ any) bool {
		_ = k.(net.Conn).Close()
		return true
	})
	s.wg.Wait()
	return err
}

// SetRecords replaces the records of one host name, leaving every other name as it was; an
// empty list removes the name (it then answers NXDOMAIN). The change is one atomic swap of
// the record map: a query sees the old or the new records, never a mix.
func (s *dnsServer) SetRecords(_ context.Context, req schema.DNS) error {
	if req.Server != nil {
		return errors.New("dns: server names a CoreDNS hosts file in a pod (kube target); the local target serves its own zone")
	}
	name, err := s.fqdn(req.Host)
	if err != nil {
		return fmt.Errorf("dns: %w", err)
	}
	addrs, err := parseAddrs(req.Addresses)
	if err != nil {
		return fmt.Errorf("dns: %s: %w", req.Host, err)
	}
	s.mu.Lock()
	next := maps.Clone(*s.records.Load())
	if len(addrs) == 0 {
		delete(next, name)
	} else {
		next[name] = addrs
	}
	s.records.Store(&next)
	s.serial.Add(1)
	s.mu.Unlock()
	s.logf("dns: %s -> %v", name, addrs)
	return nil
}

// lookup returns the records of name (fqdn) in the current record set.
func (s *dnsServer) lookup(name string) []netip.Addr { return (*s.records.Load())[name] }

// fqdn turns a host name of a scenario into a name of the zone: a name in the zone is kept
// ("gslb.lab.internal"), a single label is taken relative to the zone ("gslb"); any other
// name is refused rather than guessed at (a typo in the zone must not create a new name).
func (s *dnsServer) fqdn(host string) (string, error) {
	h := strings.ToLower(strings.TrimSuffix(strings.TrimSpace(host), "."))
	switch {
	case h == "":
		return "", errors.New("empty host name")
	case h == s.zone || strings.HasSuffix(h, "."+s.zone):
	case !strings.Contains(h, "."):
		h += "." + s.zone
	default:
		return "", fmt.Errorf("host %q is not in the lab zone %q", host, s.zone)
	}
	if _, err := dnsmessage.NewName(h + "."); err != nil {
		return "", fmt.Errorf("host %q: %v", host, err)
	}
	return h, nil
}

func parseAddrs(list []string) ([]netip.Addr, error) {
	var out []netip.Addr
	for _, a := range list {
		ip, err := netip.ParseAddr(strings.TrimSpace(a))
		if err != nil || ip.Zone() != "" {
			return nil, fmt.Errorf("%q is not an IP address", a)
		}
		out = append(out, ip.Unmap())
	}
	return out, nil
}

func (s *dnsServer) serveUDP() {
	defer s.wg.Done()
	buf := make([]byte, 65535)
	for {
		n, from, err := s.udp.ReadFromUDPAddrPort(buf)
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				s.logf("dns: udp: %v", err)
			}
			return
		}
		if resp := s.answer(buf[:n], true); resp != nil {
			_, _ = s.udp.WriteToUDPAddrPort(resp, from)
		}
	}
}

func (s *dnsServer) serveTCP() {
	defer s.wg.Done()
	for {
		c, err := s.tcp.Accept()
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				s.logf("dns: tcp: %v", err)
			}
			return
		}
		s.conns.Store(c, nil)
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer s.conns.Delete(c)
			defer c.Close()
			s.serveConn(c)
		}()
	}
}

// serveConn answers length-prefixed queries until the client closes or idles for 10s.
func (s *dnsServer) serveConn(c net.Conn) {
	var lenBuf [2]byte
	for {
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.ReadFull(c, lenBuf[:]); err != nil {
			return
		}
		msg := make([]byte, binary.BigEndian.Uint16(lenBuf[:]))
		if _, err := io.ReadFull(c, msg); err != nil {
			return
		}
		resp := s.answer(msg, false)
		if resp == nil {
			return
		}
		out := binary.BigEndian.AppendUint16(make([]byte, 0, 2+len(resp)), uint16(len(resp)))
		if _, err := c.Write(append(out, resp...)); err != nil {
			return
		}
	}
}

// answer builds the response to one query; nil means drop it (not even a header to answer).
func (s *dnsServer) answer(query []byte, udp bool) []byte {
	var p dnsmessage.Parser
	qh, err := p.Start(query)
	if err != nil || qh.Response {
		return nil
	}
	rh := dnsmessage.Header{ID: qh.ID, Response: true, OpCode: qh.OpCode, RecursionDesired: qh.RecursionDesired}
	q, err := p.Question()
	if err != nil {
		rh.RCode = dnsmessage.RCodeFormatError
		return build(rh, nil, nil)
	}
	// The UDP size a client can take: 512 unless it says more with EDNS(0).
	limit, edns := 512, false
	if udp {
		_ = p.SkipAllQuestions()
		_ = p.SkipAllAnswers()
		_ = p.SkipAllAuthorities()
		for {
			h, err := p.AdditionalHeader()
			if err != nil {
				break
			}
			if h.Type == dnsmessage.TypeOPT {
				edns = true
				limit = max(512, min(int(h.Class), 4096))
			}
			if p.SkipAdditional() != nil {
				break
			}
		}
	} else {
		limit = 65535
	}
	finish := func(resp []byte) []byte {
		if edns {
			resp = addOPT(resp)
		}
		if len(resp) > limit {
			rh.Truncated = true
			resp = build(rh, &q, nil)
		}
		return resp
	}
	if qh.OpCode != 0 {
		rh.RCode = dnsmessage.RCodeNotImplemented
		return finish(build(rh, &q, nil))
	}
	name := strings.ToLower(strings.TrimSuffix(q.Name.String(), "."))
	if name != s.zone && !strings.HasSuffix(name, "."+s.zone) {
		rh.RCode = dnsmessage.RCodeRefused
		return finish(build(rh, &q, nil))
	}
	rh.Authoritative = true
	var ans []dnsmessage.Resource
	hdr := dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: s.ttl}
	addrs := s.lookup(name)
	for _, a := range addrs {
		switch {
		case a.Is4() && (q.Type == dnsmessage.TypeA || q.Type == dnsmessage.TypeALL):
			h := hdr
			h.Type = dnsmessage.TypeA
			ans = append(ans, dnsmessage.Resource{Header: h, Body: &dnsmessage.AResource{A: a.As4()}})
		case a.Is6() && (q.Type == dnsmessage.TypeAAAA || q.Type == dnsmessage.TypeALL):
			h := hdr
			h.Type = dnsmessage.TypeAAAA
			ans = append(ans, dnsmessage.Resource{Header: h, Body: &dnsmessage.AAAAResource{AAAA: a.As16()}})
		}
	}
	if name == s.zone && (q.Type == dnsmessage.TypeSOA || q.Type == dnsmessage.TypeALL) {
		ans = append(ans, s.soa())
	}
	var auth []dnsmessage.Resource
	if len(ans) == 0 {
		if len(addrs) == 0 && name != s.zone && !s.hasDescendant(name) {
			rh.RCode = dnsmessage.RCodeNameError
		}
		auth = append(auth, s.soa())
	}
	return finish(build(rh, &q, ans, auth...))
}

// hasDescendant says whether a name holds no records itself but names below it do (an
// "empty non-terminal", which is NODATA, not NXDOMAIN).
func (s *dnsServer) hasDescendant(name string) bool {
	for n := range *s.records.Load() {
		if strings.HasSuffix(n, "."+name) {
			return true
		}
	}
	return false
}

func (s *dnsServer) soa() dnsmessage.Resource {
	zone := dnsmessage.MustNewName(s.zone + ".")
	return dnsmessage.Resource{
		Header: dnsmessage.ResourceHeader{Name: zone, Type: dnsmessage.TypeSOA, Class: dnsmessage.ClassINET, TTL: s.ttl},
		Body: &dnsmessage.SOAResource{
			NS:      dnsmessage.MustNewName("ns." + s.zone + "."),
			MBox:    dnsmessage.MustNewName("hostmaster." + s.zone + "."),
			Serial:  s.serial.Load(),
			Refresh: 60, Retry: 10, Expire: 600,
			MinTTL: s.ttl,
		},
	}
}

// build packs a message; a packing error (which valid inputs cannot cause) becomes SERVFAIL.
func build(h dnsmessage.Header, q *dnsmessage.Question, ans []dnsmessage.Resource, auth ...dnsmessage.Resource) []byte {
	m := dnsmessage.Message{Header: h, Answers: ans, Authorities: auth}
	if q != nil {
		m.Questions = []dnsmessage.Question{*q}
	}
	b, err := m.Pack()
	if err != nil {
		m = dnsmessage.Message{Header: h, Questions: m.Questions}
		m.Header.RCode = dnsmessage.RCodeServerFailure
		b, _ = m.Pack()
	}
	return b
}

// addOPT appends an EDNS(0) OPT record to a packed message, as a server should when the
// query had one.
func addOPT(msg []byte) []byte {
	var m dnsmessage.Message
	if err := m.Unpack(msg); err != nil {
		return msg
	}
	var rh dnsmessage.ResourceHeader
	if err := rh.SetEDNS0(1232, dnsmessage.RCodeSuccess, false); err != nil {
		return msg
	}
	m.Additionals = append(m.Additionals, dnsmessage.Resource{Header: rh, Body: &dnsmessage.OPTResource{}})
	out, err := m.Pack()
	if err != nil {
		return msg
	}
	return out
}

// knownHosts lists the names the zone holds, sorted, for messages and tests.
func (s *dnsServer) knownHosts() []string {
	return slices.Sorted(maps.Keys(*s.records.Load()))
}
