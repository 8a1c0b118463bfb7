//go:build linux

package local

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"labrun.dev/labrun/schema"
)

// A port someone else listens on before the process starts is an error naming that someone
// (here: this test binary), and the process is not started.
func TestReadyOnTakenPortFails(t *testing.T) {
	tg := newTarget(t, nil, Options{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	addr := ln.Addr().String()
	self := fmt.Sprintf("pid %d", os.Getpid())
	for _, rd := range []*schema.Ready{{TCP: addr}, {HTTP: "http://" + addr + "/ready"}, {TCP: strings.Replace(addr, "127.0.0.1", "localhost", 1)}} {
		ctx, cancel := bg()
		_, err := tg.Processes.Start(ctx, "srv", helperProcess("listen-tcp", addr, rd))
		cancel()
		if err == nil || !strings.Contains(err.Error(), "already in use before the process started") || !strings.Contains(err.Error(), self) {
			t.Errorf("ready %+v on a taken port: err = %v, want it taken by %s", rd, err, self)
		}
	}
	// A listener on every address (0.0.0.0) takes the port of 127.0.0.1 too.
	any, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	defer any.Close()
	loop := fmt.Sprintf("127.0.0.1:%d", any.Addr().(*net.TCPAddr).Port)
	ctx, cancel := bg()
	defer cancel()
	if _, err := tg.Processes.Start(ctx, "srv", helperProcess("listen-tcp", loop, &schema.Ready{TCP: loop})); err == nil || !strings.Contains(err.Error(), self) {
		t.Errorf("port held on 0.0.0.0: err = %v", err)
	}
}

// A check answered by another program's listener that appeared after the process started (the
// process itself never listens) fails and names that program.
func TestReadyAnsweredBySomeoneElseFails(t *testing.T) {
	tg := newTarget(t, nil, Options{})
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t, "127.0.0.1"))
	go func() {
		time.Sleep(150 * time.Millisecond)
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return
		}
		time.Sleep(3 * time.Second)
		ln.Close()
	}()
	ctx, cancel := bg()
	defer cancel()
	_, err := tg.Processes.Start(ctx, "srv", schema.Process{Argv: []string{"sleep", "30"}, Ready: &schema.Ready{TCP: addr}})
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("answered by pid %d", os.Getpid())) {
		t.Fatalf("err = %v, want the check answered by this test's pid", err)
	}
}

// A process that died (its port was taken, say) is not ready even when the check passes.
func TestReadyNeedsTheProcessAlive(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	p := &process{name: "srv", cmd: cmd, done: make(chan struct{})}
	close(p.done)
	rd, _ := readinessOf(&schema.Ready{Log: "x"})
	if err := p.confirmReady(rd); err == nil || !strings.Contains(err.Error(), "although its check passed") {
		t.Errorf("err = %v", err)
	}
}

func TestParseProcAddr(t *testing.T) {
	for in, want := range map[string]string{
		"0100007F:1F90":                         "127.0.0.1:8080",
		"00000000:0050":                         "0.0.0.0:80",
		"00000000000000000000000001000000:0016": "[::1]:22",
	} {
		ip, port, err := parseProcAddr(in)
		if err != nil || net.JoinHostPort(ip.String(), fmt.Sprint(port)) != want {
			t.Errorf("%s: %v %d %v, want %s", in, ip, port, err, want)
		}
	}
}
