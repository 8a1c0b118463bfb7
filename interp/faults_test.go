package interp_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"labrun.dev/labrun/driver/fakes"
	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/schema"
)

// flakyCluster fails Delete (as a dead API server does) the first fails times.
type flakyCluster struct {
	schema.Cluster
	mu           sync.Mutex
	fails, calls int
}

func (c *flakyCluster) Delete(ctx context.Context, refs []schema.ObjectRef, wait bool) error {
	c.mu.Lock()
	c.calls++
	n := c.calls
	c.mu.Unlock()
	if n <= c.fails {
		return errors.New("dial tcp 127.0.0.1:6443: connect: connection refused")
	}
	return c.Cluster.Delete(ctx, refs, wait)
}

const cleanupScenario = `
s: schema.#Scenario & {
	target: "kube"
	namespaces: ["lab"]
	steps: [{apply: objects: [{apiVersion: "v1", kind: "ConfigMap", metadata: name: "a"}]}]
}
`

// TestCleanupRetries: what the automatic cleanup cannot remove at first is tried again with
// backoff; removed in the end, the run leaves nothing. Never removed, the run records it as
// left behind after DefaultCleanupRetry, and its verdict stays what it was (the CLI exits 4).
func TestCleanupRetries(t *testing.T) {
	sc := loadScenario(t, cleanupScenario)
	synctest.Test(t, func(t *testing.T) {
		w := &fakes.World{}
		tg := w.Target()
		tg.Cluster = &flakyCluster{Cluster: w, fails: 3}
		start := time.Now()
		rec := interp.New(tg).Run(context.Background(), context.Background(), sc)
		if rec.Outcome != interp.Passed || len(rec.Leftovers) != 0 {
			t.Fatalf("outcome %s, leftovers %v, cleanup %q", rec.Outcome, rec.Leftovers, rec.Cleanup)
		}
		if want := []string{"removed ConfigMap lab/a (attempt 4)"}; strings.Join(rec.Cleanup, "|") != strings.Join(want, "|") {
			t.Errorf("cleanup %q, want %q", rec.Cleanup, want)
		}
		// 250ms + 500ms + 1s of backoff.
		if took := time.Since(start); took != 1750*time.Millisecond {
			t.Errorf("took %s, want 1.75s", took)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		w := &fakes.World{}
		tg := w.Target()
		tg.Cluster = &flakyCluster{Cluster: w, fails: 1 << 30}
		start := time.Now()
		rec := interp.New(tg).Run(context.Background(), context.Background(), sc)
		took := time.Since(start)
		if rec.Outcome != interp.Passed {
			t.Errorf("outcome %s: leftovers do not change the verdict", rec.Outcome)
		}
		if len(rec.Leftovers) != 1 || rec.Leftovers[0] != "ConfigMap lab/a" {
			t.Fatalf("leftovers %v", rec.Leftovers)
		}
		if last := rec.Cleanup[len(rec.Cleanup)-1]; !strings.HasPrefix(last, "failed to remove ConfigMap lab/a (11 attempts): dial tcp") {
			t.Errorf("cleanup %q", rec.Cleanup)
		}
		if took > interp.DefaultCleanupRetry || took < interp.DefaultCleanupRetry-5*time.Second {
			t.Errorf("gave up after %s, want within the last backoff before %s", took, interp.DefaultCleanupRetry)
		}
		want := "left 1 object behind (ConfigMap lab/a); `labrun clean --yes --scenario s` deletes the objects"
		if got := rec.LeftBehind(); got != want {
			t.Errorf("LeftBehind() = %q, want %q", got, want)
		}
	})
}

// hangingCluster is a stand-in for an API server that stops answering: it fails its first
// Delete at once (connection refused), then hangs each later one until its context ends or
// 20 s have passed, as requests to a server that accepts connections and never answers do (a
// client's request timeout is longer than the retry time).
type hangingCluster struct {
	schema.Cluster
	mu    sync.Mutex
	calls int
}

func (c *hangingCluster) Delete(ctx context.Context, refs []schema.ObjectRef, wait bool) error {
	c.mu.Lock()
	c.calls++
	n := c.calls
	c.mu.Unlock()
	if n == 1 {
		return errors.New("dial tcp 127.0.0.1:6443: connect: connection refused")
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(20 * time.Second):
		return errors.New("the server was unable to return a response in the time allotted")
	}
}

// TestCleanupRetryTimeBoundsAnAttempt: the automatic cleanup's retries end with their time
// (DefaultCleanupRetry), an attempt in flight then included: against a server that hangs each
// request for 20 s the last attempt ran ~12 s past the 30 s. What is left says the last error
// an attempt returned, not the cut.
func TestCleanupRetryTimeBoundsAnAttempt(t *testing.T) {
	sc := loadScenario(t, cleanupScenario)
	synctest.Test(t, func(t *testing.T) {
		w := &fakes.World{}
		tg := w.Target()
		tg.Cluster = &hangingCluster{Cluster: w}
		start := time.Now()
		rec := interp.New(tg).Run(context.Background(), context.Background(), sc)
		took := time.Since(start)
		if took > interp.DefaultCleanupRetry {
			t.Errorf("the cleanup took %s, past its retry time %s", took, interp.DefaultCleanupRetry)
		}
		if len(rec.Leftovers) != 1 {
			t.Fatalf("leftovers %v, cleanup %q", rec.Leftovers, rec.Cleanup)
		}
		if last := rec.Cleanup[len(rec.Cleanup)-1]; !strings.Contains(last, "the server was unable to return a response") || strings.Contains(last, "deadline") {
			t.Errorf("cleanup %q, want the last attempt's error", rec.Cleanup)
		}
	})
}

// TestCleanupAbandoned: a cleanup whose context ends (a second interrupt) leaves what it did not
// reach, and says so.
func TestCleanupAbandoned(t *testing.T) {
	sc := loadScenario(t, cleanupScenario)
	synctest.Test(t, func(t *testing.T) {
		w := &fakes.World{}
		tg := w.Target()
		tg.Cluster = &flakyCluster{Cluster: w, fails: 1 << 30}
		cleanupCtx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		rec := interp.New(tg).Run(context.Background(), cleanupCtx, sc)
		if len(rec.Leftovers) != 1 {
			t.Fatalf("leftovers %v, cleanup %q", rec.Leftovers, rec.Cleanup)
		}
	})
}

// streamer is an Executor that writes n bytes of output to the step's writer, as a command
// printing without end does.
type streamer struct {
	n      int
	middle string // written once, half-way
}

func (s streamer) Exec(ctx context.Context, req schema.Exec) (schema.ExecResult, error) {
	chunk := []byte(strings.Repeat("0123456789abcde\n", 4096))
	for written := 0; written < s.n; written += len(chunk) {
		if s.middle != "" && written == s.n/2 {
			if _, err := io.WriteString(req.Stdout, s.middle); err != nil {
				return schema.ExecResult{}, err
			}
		}
		if _, err := req.Stdout.Write(chunk); err != nil {
			return schema.ExecResult{}, err
		}
	}
	return schema.ExecResult{}, nil
}

// TestExecOutputIsBounded: an exec's output is streamed to its artifact file whole, and the
// record (what expressions and reports read) keeps its head and tail and says it was cut;
// an expression that reads the cut stream errs rather than judge a claim over part of it.
func TestExecOutputIsBounded(t *testing.T) {
	sc := loadScenario(t, `
s: schema.#Scenario & {
	steps: [{name: "big", exec: argv: ["printer"]}]
	expect: ["big.cut", "big.stdoutCut", "!big.stderrCut", "big.stderr == ''"]
}
`)
	tg := (&fakes.World{}).Target()
	tg.Exec = streamer{n: 20 << 20}
	spool := t.TempDir()
	rec := interp.New(tg, interp.WithSpool(spool)).Run(context.Background(), context.Background(), sc)
	if rec.Outcome != interp.Passed {
		t.Fatalf("outcome %s: %s %v", rec.Outcome, rec.Error, rec.Expectations)
	}
	res := rec.Execs()["big"]
	if !res.Cut || !strings.Contains(res.Stdout, "bytes cut (the whole output, 20971520 bytes") {
		t.Errorf("stdout of %d bytes, cut %v: %.200q", len(res.Stdout), res.Cut, res.Stdout)
	}
	// stdout.txt, streamed to a file, and exit.txt (no stderr: it was empty).
	if len(rec.Artifacts) != 2 || rec.Artifacts[0].Name != "stdout.txt" || rec.Artifacts[0].Path == "" || rec.Artifacts[0].Data != nil || rec.Artifacts[1].Name != "exit.txt" {
		t.Fatalf("artifacts %+v: want stdout.txt streamed to a file, then exit.txt", rec.Artifacts)
	}
	f, err := os.Open(rec.Artifacts[0].Path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if n, _ := io.Copy(io.Discard, f); n != 20<<20 {
		t.Errorf("artifact file of %d bytes, want all 20 MiB", n)
	}
	// A claim over the cut stdout: before, !(big.stdout contains 'ERROR') passed of an output
	// whose ERROR line was in the part not kept.
	sc = loadScenario(t, `
s: schema.#Scenario & {
	steps: [{name: "big", exec: argv: ["printer"]}]
	expect: ["!(big.stdout contains 'ERROR')"]
}
`)
	rec = interp.New(tg, interp.WithSpool(t.TempDir())).Run(context.Background(), context.Background(), sc)
	if rec.Outcome == interp.Passed || len(rec.Expectations) != 1 || !strings.Contains(rec.Expectations[0].Reason, "more to its stdout than labrun keeps") {
		t.Errorf("a claim over a cut stdout: outcome %s, %+v", rec.Outcome, rec.Expectations)
	}
}

// TestExecCaptureOfCutOutput: an exec's capture is matched over the stdout labrun keeps; of
// a stdout cut (its first and last MiB kept), reading captured is an error, as reading stdout
// is. Before, !has(big.captured, "errors") and len(big.captured) == 0 passed of a command
// that printed errors=7 in the part not kept, and a group matched in the head or the tail was
// taken for the first match.
func TestExecCaptureOfCutOutput(t *testing.T) {
	for _, expr := range []string{
		`!has(big.captured, "errors")`,
		`len(big.captured) == 0`,
		`big.captured.errors != "7"`,
		`big.captured.first == "0123456789abcde"`, // matched in the head: still a part
	} {
		t.Run(expr, func(t *testing.T) {
			sc := loadScenario(t, `
s: schema.#Scenario & {
	steps: [{name: "big", exec: {argv: ["printer"], capture: "errors=(?P<errors>[0-9]+)|(?P<first>[0-9a-e]+)"}}]
	expect: [`+strconv.Quote(expr)+`]
}
`)
			tg := (&fakes.World{}).Target()
			tg.Exec = streamer{n: 8 << 20, middle: "errors=7\n"}
			rec := interp.New(tg, interp.WithSpool(t.TempDir())).Run(context.Background(), context.Background(), sc)
			if rec.Outcome == interp.Passed || len(rec.Expectations) != 1 || rec.Expectations[0].Outcome != interp.Errored ||
				!strings.Contains(rec.Expectations[0].Reason, "more to its stdout than labrun keeps") || !strings.Contains(rec.Expectations[0].Reason, "its capture would be matched over part of it") {
				t.Errorf("a claim over the capture of a cut stdout: outcome %s, %+v", rec.Outcome, rec.Expectations[0])
			}
		})
	}
}

// TestLogsAreBounded: a logs step counts every line and keeps a head and a tail of them.
func TestLogsAreBounded(t *testing.T) {
	sc := loadScenario(t, `
s: schema.#Scenario & {
	steps: [{name: "lg", logs: {pod: "p", match: "GET"}}]
	expect: ["lg.cut", "lg.count == 200000"]
}
`)
	w := &fakes.World{}
	at := time.Now().Add(time.Hour)
	for i := range 200000 {
		w.Lines = append(w.Lines, schema.LogLine{Time: at, Text: "GET " + strconv.Itoa(i)}, schema.LogLine{Time: at, Text: "POST"})
	}
	rec := interp.New(w.Target(), interp.WithAccessLogParser(func(string) (schema.LogEntry, bool) { return schema.LogEntry{}, false })).
		Run(context.Background(), context.Background(), sc)
	if rec.Outcome != interp.Passed {
		t.Fatalf("outcome %s: %s %+v", rec.Outcome, rec.Error, rec.Expectations)
	}
	lines := rec.Logs()["lg"].Lines
	if n := len(lines); n >= 200000/2 || lines[0] != "GET 0" || lines[n-1] != "GET 199999" {
		t.Errorf("%d lines kept, from %q to %q", n, lines[0], lines[n-1])
	}
	// A claim over the lines kept errs: all(lg.lines, # != 'GET 100000') held of the head
	// and tail of a log whose middle had that line.
	sc = loadScenario(t, `
s: schema.#Scenario & {
	steps: [{name: "lg", logs: {pod: "p", match: "GET"}}]
	expect: ["all(lg.lines, # != 'GET 100000')"]
}
`)
	rec = interp.New(w.Target(), interp.WithAccessLogParser(func(string) (schema.LogEntry, bool) { return schema.LogEntry{}, false })).
		Run(context.Background(), context.Background(), sc)
	if rec.Outcome == interp.Passed || len(rec.Expectations) != 1 || !strings.Contains(rec.Expectations[0].Reason, "the log was longer than labrun keeps") {
		t.Errorf("a claim over a cut log: outcome %s, %+v", rec.Outcome, rec.Expectations)
	}
}

// TestDiffHidesSecretData: labrun diff shows that a Secret's data changed, never the data.
func TestDiffHidesSecretData(t *testing.T) {
	secret := func(pw string) map[string]any {
		return map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "db"}, "data": map[string]any{"password": pw}}
	}
	a := &interp.Record{Scenario: "s"}
	a.Put("db", "get", false, secret("aHVudGVyMg=="))
	b := &interp.Record{Scenario: "s"}
	b.Put("db", "get", false, secret("c3dvcmRmaXNo"))
	d := interp.Diff(a, b, 0)
	if len(d.Differences) != 1 || d.Differences[0].Path != "values.db.data.password" {
		t.Fatalf("differences %+v", d.Differences)
	}
	for _, v := range []any{d.Differences[0].A, d.Differences[0].B} {
		if s := v.(string); !strings.HasPrefix(s, "(Secret data, not shown; sha256 ") {
			t.Errorf("shown: %q", s)
		}
	}
}

// finalizedCluster is a stand-in for an API server holding an object with a finalizer that
// nothing removes: the delete of the object named stuck is accepted, and the wait for it to go
// lasts until the caller's context ends. Other objects delete as the fake's do.
type finalizedCluster struct {
	schema.Cluster
}

func (c finalizedCluster) Delete(ctx context.Context, refs []schema.ObjectRef, wait bool) error {
	if len(refs) == 1 && refs[0].Name == "stuck" && wait {
		<-ctx.Done()
		return fmt.Errorf("waiting for deletion: still present: ConfigMap lab/stuck (finalizers example.com/never): %w", context.Cause(ctx))
	}
	return c.Cluster.Delete(ctx, refs, wait)
}

// TestCleanupStuckDeletionStandIn (a stand-in API server): an object whose deletion never ends
// (a finalizer nothing removes) does not keep the automatic cleanup from what the run created
// before it: each first attempt has the retry time at most, and the object created first is
// removed. Before, the wait for the stuck one took the whole cleanup's time (2 minutes) and
// abandoned the rest: on the sandbox, a process of the run was left running after labrun
// exited.
func TestCleanupStuckDeletionStandIn(t *testing.T) {
	sc := loadScenario(t, `
s: schema.#Scenario & {
	target: "kube"
	namespaces: ["lab"]
	steps: [
		{apply: objects: [{apiVersion: "v1", kind: "ConfigMap", metadata: name: "a"}]},
		{apply: objects: [{apiVersion: "v1", kind: "ConfigMap", metadata: name: "stuck"}]},
	]
}
`)
	synctest.Test(t, func(t *testing.T) {
		w := &fakes.World{}
		tg := w.Target()
		tg.Cluster = finalizedCluster{w}
		start := time.Now()
		rec := interp.New(tg).Run(context.Background(), context.Background(), sc)
		took := time.Since(start)
		if len(rec.Leftovers) != 1 || rec.Leftovers[0] != "ConfigMap lab/stuck" {
			t.Errorf("leftovers %v, want only ConfigMap lab/stuck; cleanup %q", rec.Leftovers, rec.Cleanup)
		}
		if !slices.Contains(rec.Cleanup, "removed ConfigMap lab/a") {
			t.Errorf("cleanup %q: ConfigMap lab/a not removed", rec.Cleanup)
		}
		if took > 2*interp.DefaultCleanupRetry {
			t.Errorf("the cleanup took %s, want at most twice the retry time %s", took, interp.DefaultCleanupRetry)
		}
	})
}
