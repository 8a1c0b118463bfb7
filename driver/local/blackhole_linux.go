//go:build linux

package local

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"syscall"
	"time"
)

// A blackhole is a loopback TCP endpoint whose connects time out, for connect-timeout
// experiments (Envoy's connect_timeout, UF flags, upstream_cx_connect_timeout).
//
// Design, as measured on Linux 6.x with tcp_syncookies=1 and tcp_abort_on_overflow=0:
//
//   - a socket that is bound but not listening answers a SYN with RST: a connect is refused at
//     once, not timed out; so the endpoint must be a listening socket;
//   - a listening socket with backlog b completes handshakes for b+1 connections that nobody
//     accepts; they wait in the accept queue;
//   - once the accept queue is full, the kernel drops every further SYN before it looks at
//     SYN cookies (tcp_conn_request checks sk_acceptq_is_full and drops; cookies only replace
//     a full SYN queue), so the client retransmits its SYN until its own timeout: a connect
//     timeout, with or without syncookies. Nothing is sent back, so nothing leaves loopback.
//   - the queue is filled before the address is handed out, with connections this process
//     opens and holds (they are established, so they stay queued: no timer removes them). A
//     SYN that arrives while the queue has room would complete a handshake, and with
//     tcp_abort_on_overflow=0 a client whose final ACK meets a full queue believes it is
//     connected; filling first avoids both.
//
// The listener is made with syscall (net.Listen always asks for somaxconn) and is never
// accepted on. openBlackhole fills the queue and then checks that one more connect really
// times out (a probe of blackholeProbe); if a probe connects instead, it is kept as filler and
// the check repeats, up to blackholeMaxFill connections.
const (
	blackholeBacklog = 1
	blackholeProbe   = 200 * time.Millisecond
	blackholeMaxFill = 16
)

type blackhole struct {
	name string
	addr *net.TCPAddr
	fd   int
	fill []net.Conn
}

func openBlackhole(ctx context.Context, name, address string) (*blackhole, error) {
	field := "local.blackholes." + name + ".address"
	ip, port, err := loopbackAddr(address)
	if err != nil {
		return nil, fixedAddress(field, address, fmt.Errorf("blackhole %s: %w", name, err))
	}
	fd, addr, err := listenBacklog(ip, port, blackholeBacklog)
	if err != nil {
		return nil, fixedAddress(field, address, fmt.Errorf("blackhole %s: listen %s: %w", name, net.JoinHostPort(ip.String(), strconv.Itoa(port)), addressTaken(err, ip, port)))
	}
	bh := &blackhole{name: name, addr: addr, fd: fd}
	if err := bh.fillQueue(ctx); err != nil {
		_ = bh.close()
		return nil, fmt.Errorf("blackhole %s on %s: %w", name, addr, err)
	}
	return bh, nil
}

// fillQueue connects until the accept queue is full: the first backlog+1 connects must
// succeed; then a connect must time out.
func (bh *blackhole) fillQueue(ctx context.Context) error {
	var d net.Dialer
	for len(bh.fill) < blackholeMaxFill {
		timeout := blackholeProbe
		if len(bh.fill) < blackholeBacklog+1 {
			timeout = 5 * time.Second // these must connect; be generous on a busy machine
		}
		dctx, cancel := context.WithTimeout(ctx, timeout)
		c, err := d.DialContext(dctx, "tcp", bh.addr.String())
		cancel()
		switch {
		case err == nil:
			bh.fill = append(bh.fill, c)
		case ctx.Err() != nil:
			return ctx.Err()
		case isTimeout(err) && len(bh.fill) >= blackholeBacklog+1:
			return nil
		default:
			return fmt.Errorf("filling the accept queue (connection %d): %w", len(bh.fill)+1, err)
		}
	}
	return fmt.Errorf("the accept queue was not full after %d connections; connects would not time out", blackholeMaxFill)
}

func (bh *blackhole) close() error {
	err := syscall.Close(bh.fd)
	for _, c := range bh.fill {
		_ = c.Close()
	}
	bh.fill = nil
	return err
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// listenBacklog opens a TCP listening socket with the given backlog.
func listenBacklog(ip net.IP, port, backlog int) (int, *net.TCPAddr, error) {
	family := syscall.AF_INET6
	var sa syscall.Sockaddr
	if v4 := ip.To4(); v4 != nil {
		family = syscall.AF_INET
		sa4 := &syscall.SockaddrInet4{Port: port}
		copy(sa4.Addr[:], v4)
		sa = sa4
	} else {
		sa6 := &syscall.SockaddrInet6{Port: port}
		copy(sa6.Addr[:], ip.To16())
		sa = sa6
	}
	fd, err := syscall.Socket(family, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, syscall.IPPROTO_TCP)
	if err != nil {
		return -1, nil, os.NewSyscallError("socket", err)
	}
	// As Go does for its listeners: a fixed port can be bound again right after a run.
	if err := syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1); err != nil {
		syscall.Close(fd)
		return -1, nil, os.NewSyscallError("setsockopt", err)
	}
	if err := syscall.Bind(fd, sa); err != nil {
		syscall.Close(fd)
		return -1, nil, os.NewSyscallError("bind", err)
	}
	if err := syscall.Listen(fd, backlog); err != nil {
		syscall.Close(fd)
		return -1, nil, os.NewSyscallError("listen", err)
	}
	got, err := syscall.Getsockname(fd)
	if err != nil {
		syscall.Close(fd)
		return -1, nil, os.NewSyscallError("getsockname", err)
	}
	addr := &net.TCPAddr{IP: ip}
	switch a := got.(type) {
	case *syscall.SockaddrInet4:
		addr.Port = a.Port
	case *syscall.SockaddrInet6:
		addr.Port = a.Port
	}
	return fd, addr, nil
}
