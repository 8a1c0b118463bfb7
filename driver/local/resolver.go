package local

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"net"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// This file is the only place where the package changes process-global state.
//
// In-process clients (fortio's load, net/http, the interpreter's own lookups) resolve names
// with net.DefaultResolver. While a local target with a DNS zone is open, net.DefaultResolver
// is replaced by a pure-Go resolver whose Dial routes each DNS exchange by the name it asks:
//
//   - a name in the lab zone goes to the lab server, over a real UDP or TCP socket on loopback
//     (so lookups really go through the server, its records, its TTLs);
//   - a name outside the zone goes to the nameserver the Go resolver chose from
//     /etc/resolv.conf, dialled as the previous resolver would have (its Dial if it had one).
//     /etc/hosts is still read first, as before. A process that resolved through the C library
//     (cgo) now resolves other names with Go's resolver against the same nameservers;
//   - a name that is a lab name with a search domain appended (resolv.conf "search", tried
//     after an NXDOMAIN) is answered NXDOMAIN in-process: a lab name must never be sent to
//     another server.
//
// Processes started by the target (e.g. a local Envoy) do not see this: point them at the
// server's address (Values "dns.address").
//
// Only one target at a time may hold the hook; installResolver refuses a second. Close
// restores the previous net.DefaultResolver. The swap is a plain assignment: it must happen
// before clients start resolving and after they stop, which the target's life cycle gives
// (New before any step, Close after every step).
var (
	hookMu     sync.Mutex
	hookActive bool
)

// installResolver points net.DefaultResolver at the lab server for the zone and returns the
// function that restores the previous resolver.
func installResolver(zone, labAddr string) (restore func(), err error) {
	hookMu.Lock()
	defer hookMu.Unlock()
	if hookActive {
		return nil, errors.New("dns: another local target with a DNS zone is open in this process; net.DefaultResolver can serve one")
	}
	prev := net.DefaultResolver
	h := &resolverHook{zone: zone, lab: labAddr}
	if prev != nil {
		h.upstreamDial = prev.Dial
	}
	r := &net.Resolver{PreferGo: true, Dial: h.dial}
	if prev != nil {
		r.StrictErrors = prev.StrictErrors
	}
	net.DefaultResolver = r
	hookActive = true
	var once sync.Once
	return func() {
		once.Do(func() {
			hookMu.Lock()
			defer hookMu.Unlock()
			net.DefaultResolver = prev
			hookActive = false
		})
	}, nil
}

// resolverHook routes the Go resolver's DNS exchanges by query name.
type resolverHook struct {
	zone         string // lower case, no trailing dot
	lab          string // host:port of the lab server, UDP and TCP
	upstreamDial func(ctx context.Context, network, address string) (net.Conn, error)
}

type route int

const (
	toLab      route = iota // the lab server answers
	toUpstream              // the nameserver the resolver chose answers
	nxLocal                 // answered NXDOMAIN here: a lab name with a search suffix
)

// routeOf decides where a query for name (any case, with or without trailing dot) goes.
func (h *resolverHook) routeOf(name string) route {
	n := strings.ToLower(strings.TrimSuffix(name, "."))
	switch {
	case n == h.zone || strings.HasSuffix(n, "."+h.zone):
		return toLab
	case strings.HasPrefix(n, h.zone+".") || strings.Contains(n, "."+h.zone+"."):
		return nxLocal
	}
	return toUpstream
}

// dial is the resolver's Dial: the destination is chosen when the query is written.
func (h *resolverHook) dial(ctx context.Context, network, address string) (net.Conn, error) {
	c := &routedConn{h: h, ctx: ctx, network: network, upstream: address,
		stream: !strings.HasPrefix(network, "udp")}
	if c.stream {
		return c, nil
	}
	// The Go resolver frames messages by whether the conn is a net.PacketConn.
	return &routedPacketConn{c}, nil
}

// routedConn is the conn the Go resolver writes one query to and reads one answer from,
// from one goroutine. The first Write picks the destination.
type routedConn struct {
	h        *resolverHook
	ctx      context.Context
	network  string
	upstream string
	stream   bool

	conn   net.Conn      // the real connection, once chosen
	local  *bytes.Reader // or an answer made here
	rd, wd time.Time
}

func (c *routedConn) Write(b []byte) (int, error) {
	if c.conn != nil {
		return c.conn.Write(b)
	}
	if c.local != nil {
		return len(b), nil
	}
	msg := b
	if c.stream {
		if len(b) < 2 {
			return 0, errors.New("dns hook: short query")
		}
		msg = b[2:]
	}
	var p dnsmessage.Parser
	qh, err := p.Start(msg)
	if err != nil {
		return 0, err
	}
	q, err := p.Question()
	if err != nil {
		return 0, err
	}
	var dest string
	switch c.h.routeOf(q.Name.String()) {
	case nxLocal:
		resp := build(dnsmessage.Header{ID: qh.ID, Response: true, Authoritative: true,
			RecursionDesired: qh.RecursionDesired, RCode: dnsmessage.RCodeNameError}, &q, nil)
		if c.stream {
			resp = append(binary.BigEndian.AppendUint16(nil, uint16(len(resp))), resp...)
		}
		c.local = bytes.NewReader(resp)
		return len(b), nil
	case toLab:
		var d net.Dialer
		c.conn, err = d.DialContext(c.ctx, c.network, c.h.lab)
		dest = c.h.lab
	default:
		if c.h.upstreamDial != nil {
			c.conn, err = c.h.upstreamDial(c.ctx, c.network, c.upstream)
		} else {
			var d net.Dialer
			c.conn, err = d.DialContext(c.ctx, c.network, c.upstream)
		}
		dest = c.upstream
	}
	if err != nil {
		return 0, &net.OpError{Op: "dial", Net: c.network, Addr: hookAddr{c.network, dest}, Err: err}
	}
	if !c.rd.IsZero() {
		_ = c.conn.SetReadDeadline(c.rd)
	}
	if !c.wd.IsZero() {
		_ = c.conn.SetWriteDeadline(c.wd)
	}
	return c.conn.Write(b)
}

func (c *routedConn) Read(b []byte) (int, error) {
	switch {
	case c.conn != nil:
		return c.conn.Read(b)
	case c.local != nil:
		return c.local.Read(b)
	}
	return 0, errors.New("dns hook: read before the query was written")
}

func (c *routedConn) Close() error {
	if c.conn != nil {
		return c.conn.Close()
	}
	return nil
}

func (c *routedConn) LocalAddr() net.Addr {
	if c.conn != nil {
		return c.conn.LocalAddr()
	}
	return hookAddr{c.network, ""}
}

func (c *routedConn) RemoteAddr() net.Addr {
	if c.conn != nil {
		return c.conn.RemoteAddr()
	}
	return hookAddr{c.network, c.upstream}
}

func (c *routedConn) SetDeadline(t time.Time) error {
	c.rd, c.wd = t, t
	if c.conn != nil {
		return c.conn.SetDeadline(t)
	}
	return nil
}

func (c *routedConn) SetReadDeadline(t time.Time) error {
	c.rd = t
	if c.conn != nil {
		return c.conn.SetReadDeadline(t)
	}
	return nil
}

func (c *routedConn) SetWriteDeadline(t time.Time) error {
	c.wd = t
	if c.conn != nil {
		return c.conn.SetWriteDeadline(t)
	}
	return nil
}

// routedPacketConn is a routedConn for UDP: one message per Write and per Read.
type routedPacketConn struct{ *routedConn }

func (c *routedPacketConn) ReadFrom(b []byte) (int, net.Addr, error) {
	n, err := c.Read(b)
	return n, c.RemoteAddr(), err
}

func (c *routedPacketConn) WriteTo(b []byte, _ net.Addr) (int, error) { return c.Write(b) }

type hookAddr struct{ network, address string }

func (a hookAddr) Network() string { return a.network }
func (a hookAddr) String() string  { return a.address }
