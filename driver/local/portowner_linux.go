//go:build linux

package local

import (
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// portListeners finds the TCP sockets listening on port at ip (or on every address: 0.0.0.0,
// ::) in this network namespace, from /proc/net/tcp and /proc/net/tcp6, and the processes
// holding them, from /proc/<pid>/fd. ok is false when /proc cannot be read. A socket whose
// holder is not visible (another user's process) has a holder with pid 0.
func portListeners(ips []net.IP, port int) (holders []portHolder, ok bool) {
	inodes := map[string]bool{}
	read := false
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		read = true
		for _, line := range strings.Split(string(b), "\n")[1:] {
			fs := strings.Fields(line)
			if len(fs) < 10 || fs[3] != "0A" { // 0A: LISTEN
				continue
			}
			ip, p, err := parseProcAddr(fs[1])
			if err != nil || p != port {
				continue
			}
			if ip.IsUnspecified() || matchesAny(ip, ips) {
				inodes[fs[9]] = true
			}
		}
	}
	if !read {
		return nil, false
	}
	if len(inodes) == 0 {
		return nil, true
	}
	found := map[string]bool{}
	procs, _ := os.ReadDir("/proc")
	for _, e := range procs {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		fds, err := os.ReadDir(filepath.Join("/proc", e.Name(), "fd"))
		if err != nil {
			continue
		}
		for _, fd := range fds {
			link, err := os.Readlink(filepath.Join("/proc", e.Name(), "fd", fd.Name()))
			if err != nil || !strings.HasPrefix(link, "socket:[") {
				continue
			}
			inode := strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")
			if inodes[inode] {
				found[inode] = true
				holders = append(holders, portHolder{pid: pid})
				break
			}
		}
	}
	if len(found) < len(inodes) {
		holders = append(holders, portHolder{})
	}
	return holders, true
}

// portHolder is a process that holds a listening socket; pid 0 is one labrun cannot see.
type portHolder struct{ pid int }

// String names the holder: "pid 123 (python3 -m http.server 8080)".
func (h portHolder) String() string {
	if h.pid == 0 {
		return "a process labrun cannot see (another user's?)"
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", h.pid))
	// One line: arguments joined by spaces, newlines and other control characters folded.
	cmd := strings.Join(strings.FieldsFunc(string(b), func(r rune) bool { return r < ' ' || r == ' ' }), " ")
	if err != nil || cmd == "" {
		if st, err := readStat(h.pid); err == nil {
			cmd = st.comm
		}
	}
	if len(cmd) > 120 {
		cmd = cmd[:117] + "..."
	}
	if cmd == "" {
		return fmt.Sprintf("pid %d", h.pid)
	}
	return fmt.Sprintf("pid %d (%s)", h.pid, cmd)
}

// carries reports whether the holder's environment has the run's marker: it is one of the
// commands this run started, or a descendant of one.
func (h portHolder) carries(marker string) bool {
	if h.pid == 0 {
		return false
	}
	env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", h.pid))
	return err == nil && hasEnvEntry(env, []byte(markerEnv+"="+marker))
}

// parseProcAddr parses a /proc/net/tcp address: the IP in hex, as 32-bit words in host (little
// endian) order, a colon, the port in hex.
func parseProcAddr(s string) (net.IP, int, error) {
	h, p, ok := strings.Cut(s, ":")
	if !ok {
		return nil, 0, fmt.Errorf("bad address %q", s)
	}
	raw, err := hex.DecodeString(h)
	if err != nil || (len(raw) != 4 && len(raw) != 16) {
		return nil, 0, fmt.Errorf("bad address %q", s)
	}
	ip := make(net.IP, len(raw))
	for i := 0; i < len(raw); i += 4 {
		ip[i], ip[i+1], ip[i+2], ip[i+3] = raw[i+3], raw[i+2], raw[i+1], raw[i]
	}
	port, err := strconv.ParseUint(p, 16, 16)
	if err != nil {
		return nil, 0, fmt.Errorf("bad port in %q", s)
	}
	return ip, int(port), nil
}

func matchesAny(ip net.IP, ips []net.IP) bool {
	for _, x := range ips {
		if x.Equal(ip) || x.IsUnspecified() {
			return true
		}
	}
	return false
}
