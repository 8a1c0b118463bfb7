//go:build !linux

package local

import (
	"context"
	"fmt"
	"net"
)

// blackhole is Linux-only: its timeouts rely on how Linux drops SYNs on a full accept queue
// (see blackhole_linux.go); other kernels answer differently (e.g. with RST).
type blackhole struct {
	addr *net.TCPAddr
	fill []net.Conn
}

func openBlackhole(_ context.Context, name, _ string) (*blackhole, error) {
	return nil, fmt.Errorf("blackhole %s: blackholes need Linux", name)
}

func (bh *blackhole) close() error { return nil }
