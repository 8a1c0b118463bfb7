package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestTakenAddressAtItsLine: a local backend, blackhole or DNS server whose fixed address
// another program listens on fails the run (exit 3) at the line that writes the address, and
// its verdict line and record say it too. Before, "labrun: s: target local: backend a: listen tcp …:
// address already in use …" named the backend alone, and the DNS server's said neither who
// held it nor what to write.
func TestTakenAddressAtItsLine(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	addr := ln.Addr().String()
	holder := fmt.Sprintf("address already in use, by pid %d (", os.Getpid())
	for _, c := range []struct {
		name, local, want string
	}{
		{"backend", `backends: a: {address: %q}`, "s.cue:6:23: target local: backend a: listen tcp " + addr + ": bind: " + holder},
		{"blackhole", `blackholes: h: {address: %q}`, "s.cue:6:25: target local: blackhole h: listen " + addr + ": bind: " + holder},
		{"dns", `dns: {zone: "lab.internal", address: %q}`, "s.cue:6:37: target local: dns: listen tcp " + addr + ": bind: " + holder},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			t.Chdir(dir)
			src := fmt.Sprintf(`package s

import "labrun.dev/schema"

s: schema.#Scenario & {
	local: %s
	steps: [{name: "e", exec: argv: ["echo", "hi"]}]
	expect: ["e.stdout == 'hi\\n'"]
}
`, fmt.Sprintf(c.local, addr))
			if err := os.WriteFile(filepath.Join(dir, "s.cue"), []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			code, out := runIn(t, dir, "run", "-q", "--report-dir", "r", "s.cue")
			if code != exitInfra {
				t.Fatalf("exit %d, want %d:\n%s", code, exitInfra, out)
			}
			if !regexp.MustCompile(`ERROR s in \S+: `).MatchString(out) || !strings.Contains(out, c.want) || !strings.Contains(out, "write another address, or none for a free port") {
				t.Errorf("output does not say %q and what to write:\n%s", c.want, out)
			}
			code, out = runIn(t, dir, "replay", mustGlob(t, filepath.Join(dir, "r", "*.json")))
			if code != exitInfra || !strings.Contains(out, "ERROR s in ") || !strings.Contains(out, ": "+c.want) {
				t.Errorf("replay (exit %d) does not say %q:\n%s", code, c.want, out)
			}
		})
	}
}

func mustGlob(t *testing.T, pattern string) string {
	t.Helper()
	m, err := filepath.Glob(pattern)
	if err != nil || len(m) != 1 {
		t.Fatalf("%s: %v %v", pattern, m, err)
	}
	return m[0]
}
