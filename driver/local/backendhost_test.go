package local

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"labrun.dev/labrun/schema"
)

// hostCmd runs the test binary as the backend host (see runHelper).
func hostCmd() *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$", "backend-host")
	cmd.Env = append(os.Environ(), helperEnv+"=backend-host")
	return cmd
}

// TestBackendHost: with BackendHost the backends answer from another process, a snapshot
// reads their counters there (the read itself counts nothing), and Close ends that process.
func TestBackendHost(t *testing.T) {
	var started *exec.Cmd
	spec := &schema.Local{Backends: map[string]schema.Backend{"a": {}, "b": {}}}
	tg := newTarget(t, spec, Options{BackendHost: func() *exec.Cmd { started = hostCmd(); return started }})
	if started == nil || started.Process == nil {
		t.Fatal("no backend host was started")
	}
	if started.Process.Pid == os.Getpid() {
		t.Fatal("the backend host is this process")
	}
	url := tg.Values["backends"].(map[string]schema.Endpoint)["a"].URL
	for range 3 {
		resp, err := http.Get(url + "/echo?status=503")
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if got := resp.Header.Get(backendHeader); got != "a" || resp.StatusCode != 503 {
			t.Fatalf("answer from %q with %d, want backend a with 503", got, resp.StatusCode)
		}
	}
	ctx, cancel := bg()
	defer cancel()
	for range 2 { // a second read sees the same: reading counts nothing
		snap, err := tg.Stats.Snapshot(ctx, schema.Snapshot{Backend: "a"})
		if err != nil {
			t.Fatal(err)
		}
		if snap.Counters["rq_total"] != 3 || snap.Counters["rq_503"] != 3 || snap.Counters["http.downstream_rq_5xx"] != 3 {
			t.Errorf("backend a: counters %v, want rq_total, rq_503 and http.downstream_rq_5xx 3", snap.Counters)
		}
		if len(snap.Artifacts) != 0 {
			t.Errorf("artifacts %v, want none (the record holds the stats)", snap.Artifacts)
		}
	}
	if snap, err := tg.Stats.Snapshot(ctx, schema.Snapshot{Backend: "b"}); err != nil || snap.Counters["rq_total"] != 0 {
		t.Errorf("backend b: %v, %v; want rq_total 0", snap.Counters, err)
	}
	if _, err := tg.Stats.Snapshot(ctx, schema.Snapshot{Backend: "c"}); err == nil {
		t.Error("a snapshot of backend c (none) did not fail")
	}
	if err := tg.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if started.ProcessState == nil || !started.ProcessState.Exited() {
		t.Errorf("after Close the backend host is %v, want exited", started.ProcessState)
	}
	if _, err := http.Get(url + "/echo"); err == nil {
		t.Error("backend a still answers after Close")
	}
}

// TestBackendHostDiesWithItsStdin: a host whose labrun is gone (its stdin ends) closes its
// backends and exits by itself.
func TestBackendHostDiesWithItsStdin(t *testing.T) {
	launch := newLauncher()
	defer launch.close(t.Context())
	cmd := hostCmd()
	h, addrs, err := startHost(t.Context(), cmd, map[string]schema.Backend{"a": {}}, launch, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	h.in.Close()
	select {
	case <-h.exited:
		if h.exitErr != nil {
			t.Errorf("the host exited with %v, want 0", h.exitErr)
		}
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Signal(syscall.SIGKILL)
		t.Fatal("the host still runs 10 s after its stdin ended")
	}
	if _, err := http.Get("http://" + addrs["a"].String() + "/echo"); err == nil {
		t.Error("backend a still answers after its host exited")
	}
}

// TestTakenAddressNamesItsHolder: a backend or blackhole whose fixed address another program
// listens on fails with who holds it and what to write, once: the backend host's own exit
// after it said why ("backend host: exit status 3") is not a second error of the run.
func TestTakenAddressNamesItsHolder(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	addr := ln.Addr().String()
	holder := fmt.Sprintf(", by pid %d (", os.Getpid())
	for _, tc := range []struct {
		name  string
		spec  schema.Local
		host  bool
		field string // the AddressError's: where the run says the address is written
	}{
		{"backend", schema.Local{Backends: map[string]schema.Backend{"a": {Address: addr}}}, false, "local.backends.a.address"},
		{"hosted backend", schema.Local{Backends: map[string]schema.Backend{"a": {Address: addr}}}, true, "local.backends.a.address"},
		{"blackhole", schema.Local{Blackholes: map[string]schema.Blackhole{"h": {Address: addr}}}, false, "local.blackholes.h.address"},
		{"dns", schema.Local{DNS: &schema.LocalDNS{Zone: "lab.internal", Address: addr}}, false, "local.dns.address"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := Options{Logf: t.Logf}
			if tc.host {
				opts.BackendHost = hostCmd
			}
			ctx, cancel := bg()
			defer cancel()
			tg, err := New(ctx, &tc.spec, opts)
			if err == nil {
				_ = tg.Close(ctx)
				t.Fatal("New succeeded on a taken address")
			}
			msg := err.Error()
			if !strings.Contains(msg, "address already in use"+holder) || !strings.Contains(msg, "write another address, or none for a free port") {
				t.Errorf("error %q, want the address in use%s…), and what to write", msg, holder)
			}
			if strings.Contains(msg, "exit status") || strings.Contains(msg, "\n") {
				t.Errorf("error %q says the backend host's exit too", msg)
			}
			if ae := (*AddressError)(nil); !errors.As(err, &ae) || ae.Field != tc.field {
				t.Errorf("error %q: AddressError %v, want of field %s", msg, ae, tc.field)
			}
		})
	}
}

// TestBackendHostKilledSaysSo: a backend host killed during the run (a step's kill -9 of
// labrun's children, the OOM killer) failed the next snapshot with "backend host: write |1:
// broken pipe"; it says the host is gone, how, and that its backends went with it, and so
// does the target's Ended, which makes the run an error (run_backend_host_killed.txtar).
func TestBackendHostKilledSaysSo(t *testing.T) {
	var started *exec.Cmd
	spec := &schema.Local{Backends: map[string]schema.Backend{"a": {}}}
	tg := newTarget(t, spec, Options{BackendHost: func() *exec.Cmd { started = hostCmd(); return started }})
	ctx, cancel := bg()
	defer cancel()
	if _, err := tg.Stats.Snapshot(ctx, schema.Snapshot{Backend: "a"}); err != nil {
		t.Fatal(err)
	}
	if got := tg.Ended(); got != "" {
		t.Errorf("Ended of a host that serves: %q, want none", got)
	}
	if err := started.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("the backend host (pid %d, labrun's process that serves the local backends) is gone (signal: killed), and backend a with it", started.Process.Pid)
	for range 2 { // the first request finds it gone, the next is told the same
		_, err := tg.Stats.Snapshot(ctx, schema.Snapshot{Backend: "a"})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("snapshot after the host was killed: %v, want it to say %s", err, want)
		}
	}
	if got := tg.Ended(); !strings.Contains(got, want) {
		t.Errorf("Ended of a killed host: %q, want it to say %s", got, want)
	}
	// Ended said it, and the run is an error saying it: Close does not say it again (before,
	// "closing the local target: close backend host: backend host: signal: killed" followed
	// the verdict).
	if err := tg.Close(ctx); err != nil {
		t.Errorf("Close after Ended said the host is gone: %v, want nil", err)
	}
}

// TestBackendHostKilledUnsaidCloseSays: a host killed whose end no one asked Ended about is
// said by Close.
func TestBackendHostKilledUnsaidCloseSays(t *testing.T) {
	var started *exec.Cmd
	spec := &schema.Local{Backends: map[string]schema.Backend{"a": {}}}
	tg := newTarget(t, spec, Options{BackendHost: func() *exec.Cmd { started = hostCmd(); return started }})
	ctx, cancel := bg()
	defer cancel()
	if err := started.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := tg.Close(ctx); err == nil || !strings.Contains(err.Error(), "signal: killed") {
		t.Errorf("Close: %v, want the host's end", err)
	}
}
