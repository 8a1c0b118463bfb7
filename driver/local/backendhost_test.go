package local

import (
	"io"
	"net/http"
	"os"
	"os/exec"
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
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("the host exited with %v, want 0", err)
		}
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Signal(syscall.SIGKILL)
		t.Fatal("the host still runs 10 s after its stdin ended")
	}
	if _, err := http.Get("http://" + addrs["a"].String() + "/echo"); err == nil {
		t.Error("backend a still answers after its host exited")
	}
}
