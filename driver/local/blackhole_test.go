//go:build linux

package local

import (
	"errors"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"labrun.dev/labrun/schema"
)

// A connect to a blackhole times out: the SYN is dropped (the kernel counts a listen
// overflow), it is retransmitted after 1s and dropped again, and the client gives up at its
// own timeout. Checked for IPv4 on 127.0.0.3 and for ::1, with the machine's tcp_syncookies.
func TestBlackholeConnectTimesOut(t *testing.T) {
	t.Logf("tcp_syncookies=%s tcp_abort_on_overflow=%s", sysctl("net/ipv4/tcp_syncookies"), sysctl("net/ipv4/tcp_abort_on_overflow"))
	spec := &schema.Local{Blackholes: map[string]schema.Blackhole{
		"v4": {Address: "127.0.0.3:0"},
		"v6": {Address: "[::1]:0"},
	}}
	tg := newTarget(t, spec, Options{})
	eps := tg.Values["blackholes"].(map[string]schema.Endpoint)
	if eps["v4"].Host != "127.0.0.3" || eps["v6"].Host != "::1" || !strings.HasPrefix(eps["v6"].URL, "http://[::1]:") {
		t.Fatalf("endpoints %+v", eps)
	}
	overflows := listenOverflows()
	for _, name := range []string{"v4", "v6"} {
		start := time.Now()
		// 1.3s spans the first SYN retransmission (at 1s): it is dropped as well.
		c, err := net.DialTimeout("tcp", eps[name].Address, 1300*time.Millisecond)
		took := time.Since(start)
		if err == nil {
			c.Close()
			t.Fatalf("%s: connect to the blackhole succeeded", name)
		}
		if !isTimeout(err) || took < 1300*time.Millisecond {
			t.Fatalf("%s: connect failed with %v after %v, want a timeout after 1.3s", name, err, took)
		}
	}
	if after := listenOverflows(); overflows >= 0 && after <= overflows {
		t.Errorf("ListenOverflows %d -> %d: the SYNs were not dropped by a full accept queue", overflows, after)
	}

	// A real fortio client sees socket errors (code -1), as an Envoy would see connect timeouts.
	ctx, cancel := bg()
	defer cancel()
	res, err := tg.Load.Load(ctx, schema.Load{URL: eps["v4"].URL + "/", Connections: 1, Requests: 2,
		Timeout: schema.Duration(200 * time.Millisecond)})
	if err != nil {
		t.Logf("load: %v", err)
	}
	if res.Codes["-1"] == 0 || res.OK != 0 {
		t.Errorf("fortio against the blackhole: codes %v", res.Codes)
	}
}

// Once the target is closed, the address refuses at once.
func TestBlackholeCloseFreesAddress(t *testing.T) {
	ctx, cancel := bg()
	defer cancel()
	tg, err := New(ctx, &schema.Local{Blackholes: map[string]schema.Blackhole{"bh": {}}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	addr := tg.Values["blackholes"].(map[string]schema.Endpoint)["bh"].Address
	if err := tg.Close(ctx); err != nil {
		t.Fatal(err)
	}
	_, err = net.DialTimeout("tcp", addr, time.Second)
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("after Close: %v, want connection refused", err)
	}
	// The same fixed address can be opened again right away.
	tg2, err := New(ctx, &schema.Local{Blackholes: map[string]schema.Blackhole{"bh": {Address: addr}}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := tg2.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

func sysctl(name string) string {
	b, err := os.ReadFile("/proc/sys/" + name)
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(b))
}

// listenOverflows reads TcpExt ListenOverflows, or -1 when it cannot.
func listenOverflows() int64 {
	b, err := os.ReadFile("/proc/net/netstat")
	if err != nil {
		return -1
	}
	lines := strings.Split(string(b), "\n")
	for i := 0; i+1 < len(lines); i += 2 {
		names, values := strings.Fields(lines[i]), strings.Fields(lines[i+1])
		if len(names) == 0 || names[0] != "TcpExt:" || len(names) != len(values) {
			continue
		}
		for j, n := range names {
			if n == "ListenOverflows" {
				v, _ := strconv.ParseInt(values[j], 10, 64)
				return v
			}
		}
	}
	return -1
}
