package fortio

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"fortio.org/fortio/fhttp"

	"labrun.dev/labrun/schema"
)

// The fortio CLI (fortio.org/fortio@v1.66.5, the newest that builds here; later ones import
// grol.io/grol) is what the kube target runs in a pod. Tests that need it look for, in order:
// $FORTIO_CLI, the sandbox's build (~/.cache/labrun/sandbox/*/bin/fortio), fortio on $PATH; and
// skip when there is none. Install it with
//
//	GOBIN=/tmp/fortio-cli go install fortio.org/fortio@v1.66.5 && export FORTIO_CLI=/tmp/fortio-cli/fortio

// fortioCLI returns the path of the fortio CLI or skips the test.
func fortioCLI(tb testing.TB) string {
	tb.Helper()
	if p := os.Getenv("FORTIO_CLI"); p != "" {
		if _, err := os.Stat(p); err != nil {
			tb.Fatalf("FORTIO_CLI: %v", err)
		}
		return p
	}
	if home, err := os.UserHomeDir(); err == nil {
		matches, _ := filepath.Glob(filepath.Join(home, ".cache/labrun/sandbox/*/bin/fortio"))
		if len(matches) > 0 {
			return matches[len(matches)-1]
		}
	}
	if p, err := exec.LookPath("fortio"); err == nil {
		return p
	}
	tb.Skip("fortio CLI not found: set FORTIO_CLI=/path/to/fortio " +
		"(GOBIN=/tmp/fortio-cli go install fortio.org/fortio@v1.66.5)")
	return ""
}

var listeningRE = regexp.MustCompile(`http-echo server listening on tcp (127\.0\.0\.1:\d+)`)

// startCLIServer runs `fortio server` with only its HTTP echo server, on a free loopback port,
// and returns its base URL. Every other server of the CLI is disabled: nothing listens beyond
// loopback.
func startCLIServer(tb testing.TB, cli string) string {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, cli, "server",
		"-http-port", "127.0.0.1:0",
		"-grpc-port", "disabled", "-redirect-port", "disabled",
		"-tcp-port", "disabled", "-udp-port", "disabled",
		"-ui-path", "", "-echo-debug-path", "")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		tb.Fatal(err)
	}
	cmd.Stdout = io.Discard
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := listeningRE.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
				break
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
	}()
	select {
	case addr := <-found:
		return "http://" + addr
	case <-time.After(10 * time.Second):
		tb.Fatal("fortio server did not say where it listens")
	}
	return ""
}

// runCLI runs `fortio` with CLIArgs(req) and returns its stdout (the JSON) and the warnings.
func runCLI(tb testing.TB, cli string, req schema.Load) ([]byte, []string) {
	out, warnings, _ := runCLICPU(tb, cli, req)
	return out, warnings
}

// runCLICPU is runCLI that also returns the CPU time (user + system) the CLI used.
func runCLICPU(tb testing.TB, cli string, req schema.Load) ([]byte, []string, time.Duration) {
	tb.Helper()
	args, warnings, err := CLIArgs(req)
	if err != nil {
		tb.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(cli, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		tb.Fatalf("fortio %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return stdout.Bytes(), warnings, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}

func TestCLIArgs(t *testing.T) {
	args, warnings, err := CLIArgs(schema.Load{URL: "http://b:8080/echo?delay=200ms", Connections: 3, Requests: 30,
		Keepalive: ptr(false), ResolveEachConnection: ptr(false), HTTP10: true,
		Headers: map[string]string{"x-b": "2", "Host": "backend"}})
	if err != nil || len(warnings) != 0 {
		t.Fatal(err, warnings)
	}
	want := "load -json - -allow-initial-errors -p 50,90,99,99.9 -r 0.0001 -c 3 -qps 0 -timeout 3s -n 30 -keepalive=false " +
		"-http1.0 -no-reresolve -H Host:backend -H x-b:2 http://b:8080/echo?delay=200ms"
	if got := strings.Join(args, " "); got != want {
		t.Errorf("args\n got %s\nwant %s", got, want)
	}
	args, _, _ = CLIArgs(schema.Load{URL: "http://b/", QPS: 12.5, Timeout: schema.Duration(time.Second)})
	if got := strings.Join(args, " "); !strings.Contains(got, "-c 4 -qps 12.5 -timeout 1s -t 5s http://b/") {
		t.Errorf("defaults: %s", got)
	}
	if _, _, err := CLIArgs(schema.Load{}); err == nil {
		t.Error("no error for an empty url")
	}
}

// TestCLIMatchesLoad runs the same steps with the CLI (CLIArgs, DecodeJSON) and in-process
// (Load), against the same backend, and compares what must agree.
func TestCLIMatchesLoad(t *testing.T) {
	cli := fortioCLI(t)
	srv := newEchoServer(t)
	for _, tc := range []struct {
		name string
		req  schema.Load
	}{
		{"exact", schema.Load{URL: srv.URL + "/echo", Requests: 20, Connections: 4}},
		{"no keepalive", schema.Load{URL: srv.URL + "/echo", Requests: 12, Connections: 3, Keepalive: ptr(false)}},
		{"lowered at fixed qps", schema.Load{URL: srv.URL + "/echo", Requests: 10, Connections: 8, QPS: 200}},
		{"fewer requests than connections", schema.Load{URL: srv.URL + "/echo", Requests: 3, Connections: 8}},
		{"all 503", schema.Load{URL: srv.URL + "/echo?status=503", Requests: 9, Connections: 3,
			Headers: map[string]string{"Host": "b.test"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, cliWarnings := runCLI(t, cli, tc.req)
			viaCLI, err := DecodeJSON(out)
			if err != nil {
				t.Fatal(err)
			}
			inProc := load(t, tc.req)
			a, b := viaCLI.LoadResult, inProc.LoadResult
			if a.Requests != b.Requests || a.Connections != b.Connections || a.Sockets != b.Sockets ||
				a.OK != b.OK || a.Errors != b.Errors || len(a.Codes) != len(b.Codes) {
				t.Errorf("CLI and in-process differ:\n cli %+v\n lib %+v", a, b)
			}
			if strings.Join(cliWarnings, "|") != strings.Join(inProc.Warnings, "|") {
				t.Errorf("warnings differ: cli %q, in-process %q", cliWarnings, inProc.Warnings)
			}
		})
	}
}

// TestDecodeJSONNotAResult covers what a pod may print instead of a result.
func TestDecodeJSONNotAResult(t *testing.T) {
	for _, tc := range []struct{ name, data, want string }{
		{"empty", "", "EOF"},
		{"text", "Aborting because of lookup nope: no such host\n", "invalid character"},
		{"other JSON", `{"a": 1}`, "not a fortio load result"},
		{"grpc", `{"RunType": "GRPC Health", "DurationHistogram": {"Count": 0}}`, "not HTTP"},
		{"error reply", `{"RunType": "HTTP", "DurationHistogram": {"Count": 0}, "error": true, "message": "Aborted before even starting"}`,
			"fortio: Aborted before even starting"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeJSON([]byte(tc.data))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want one containing %q", err, tc.want)
			}
		})
	}
	// What fortio makes of a run that cannot start (the CLI prints no JSON then, but its REST
	// API and library do): two made-up latencies that are no requests.
	errResult, _ := json.Marshal(fhttp.NewErrorResult(&fhttp.HTTPRunnerOptions{}, "init error", errors.New("bad port")))
	res, err := DecodeJSON(errResult)
	if err == nil || !strings.Contains(err.Error(), "init error") || res.Requests != 0 || len(res.Raw) == 0 {
		t.Errorf("error result: %v %+v", err, res.LoadResult)
	}
	if _, err := DecodeJSON([]byte(`{"RunType":"HTTP","DurationHistogram":{"Count":0}}`)); err != nil {
		t.Errorf("minimal result: %v", err)
	}
}
