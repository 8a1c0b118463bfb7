package local

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"labrun.dev/labrun/schema"
)

func TestExec(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "here.txt"), []byte("in the scenario dir\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tg := newTarget(t, nil, Options{Dir: dir, Env: []string{"PATH=" + os.Getenv("PATH"), "LAB=lab-env"}, AddEnv: map[string]string{"ADDED": "added"}})
	for _, tc := range []struct {
		name string
		req  schema.Exec
		want schema.ExecResult
	}{
		{"stdout", schema.Exec{Argv: []string{"echo", "hello", "world"}},
			schema.ExecResult{Stdout: "hello world\n"}},
		{"no shell: argv is literal", schema.Exec{Argv: []string{"echo", "$HOME", "a;b"}},
			schema.ExecResult{Stdout: "$HOME a;b\n"}},
		{"exit code is a result", schema.Exec{Argv: []string{"sh", "-c", "echo out; echo err >&2; exit 3"}},
			schema.ExecResult{Stdout: "out\n", Stderr: "err\n", Exit: 3}},
		{"killed by a signal", schema.Exec{Argv: []string{"sh", "-c", "kill -9 $$"}},
			schema.ExecResult{Exit: 137}},
		{"stdin", schema.Exec{Argv: []string{"cat"}, Stdin: "from stdin"},
			schema.ExecResult{Stdout: "from stdin"}},
		{"dir and env", schema.Exec{Argv: []string{"sh", "-c", "cat here.txt; echo $LAB"}},
			schema.ExecResult{Stdout: "in the scenario dir\nlab-env\n"}},
		{"AddEnv", schema.Exec{Argv: []string{"sh", "-c", "echo $ADDED"}},
			schema.ExecResult{Stdout: "added\n"}},
		{"AddEnv, then the step's env, over the base", schema.Exec{Argv: []string{"sh", "-c", "echo $LAB $ADDED $STEP"}, Env: map[string]string{"STEP": "step", "ADDED": "step-wins"}},
			schema.ExecResult{Stdout: "lab-env step-wins step\n"}},
		{"capture", schema.Exec{Argv: []string{"echo", "pod ip 10.244.1.5 port 8080"}, Capture: `ip (?P<ip>[0-9.]+) port (?P<port>\d+)`},
			schema.ExecResult{Stdout: "pod ip 10.244.1.5 port 8080\n", Captured: map[string]string{"ip": "10.244.1.5", "port": "8080"}}},
		{"capture without a match", schema.Exec{Argv: []string{"echo", "nothing"}, Capture: `ip (?P<ip>[0-9.]+)`},
			schema.ExecResult{Stdout: "nothing\n", Captured: map[string]string{}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := bg()
			defer cancel()
			got, err := tg.Exec.Exec(ctx, tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if got.Stdout != tc.want.Stdout || got.Stderr != tc.want.Stderr || got.Exit != tc.want.Exit ||
				!maps.Equal(got.Captured, tc.want.Captured) || (got.Captured == nil) != (tc.want.Captured == nil) {
				t.Errorf("got %#v\nwant %#v", got, tc.want)
			}
		})
	}
}

func TestExecErrors(t *testing.T) {
	tg := newTarget(t, nil, Options{})
	ctx, cancel := bg()
	defer cancel()
	for _, tc := range []struct {
		req  schema.Exec
		want string
	}{
		{schema.Exec{Argv: []string{"/nonexistent/labrun-no-such-command"}}, "no such file"},
		{schema.Exec{}, "argv is empty"},
		{schema.Exec{Argv: []string{"echo"}, Pod: "client"}, "kube target"},
		{schema.Exec{Argv: []string{"echo"}, Capture: "(?P<x"}, "capture"},
	} {
		if _, err := tg.Exec.Exec(ctx, tc.req); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.req, err, tc.want)
		}
	}
}

// A cancelled exec ends at once, with the processes it started: the whole group is killed,
// and a grandchild holding stdout does not keep the step waiting.
func TestExecCancelKillsGroup(t *testing.T) {
	tg := newTarget(t, nil, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := tg.Exec.Exec(ctx, schema.Exec{Argv: []string{"sh", "-c", "sleep 30 & sleep 30; wait"}})
	if err == nil || !strings.Contains(err.Error(), "deadline") {
		t.Fatalf("err = %v, want the deadline", err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Fatalf("cancel took %v", took)
	}
}
