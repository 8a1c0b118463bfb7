//go:build !linux

package local

import "net"

// Without /proc, who holds a port is not known: the checks that need it are skipped.
func portListeners([]net.IP, int) ([]portHolder, bool) { return nil, false }

type portHolder struct{ pid int }

func (h portHolder) String() string      { return "another program" }
func (h portHolder) carries(string) bool { return false }
