package docs_test

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/sandbox"
)

// These tests run the runnable documents of docs/ the way a reader does: with the labrun
// binary (built once, in TestMain), `labrun doc FILE.md`, on the local target for real.

// labrun is the path of the binary TestMain builds.
var labrun string

func TestMain(m *testing.M) {
	os.Exit(func() int {
		dir, err := os.MkdirTemp("", "labrun-docs-test-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		labrun = filepath.Join(dir, "labrun")
		build := exec.Command("go", "build", "-o", labrun, "labrun.dev/labrun/cmd/labrun")
		if out, err := build.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "building labrun: %v\n%s", err, out)
			return 1
		}
		return m.Run()
	}())
}

// doc runs `labrun doc ARGS...` in dir and returns its exit code and output.
func doc(t *testing.T, dir string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(labrun, append([]string{"doc", "--report-dir", ""}, args...)...)
	cmd.Dir = dir
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	// Tied to this test binary: a run against a sandbox must not outlive the test (and its
	// sandbox) when go test's timeout kills it.
	err := sandbox.StartTied(cmd)
	if err == nil {
		err = cmd.Wait()
	}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatalf("labrun doc %s: %v", strings.Join(args, " "), err)
	}
	return code, o.String(), e.String()
}

// TestQuickstartDoc runs docs/quickstart.md and wants every expected block to match the run.
func TestQuickstartDoc(t *testing.T) {
	if code, out, errOut := doc(t, ".", "--vet", "quickstart.md"); code != 0 {
		t.Fatalf("labrun doc --vet quickstart.md: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := doc(t, ".", "quickstart.md"); code != 0 {
		t.Fatalf("labrun doc quickstart.md: exit %d, want 0\n%s%s", code, out, errOut)
	}
}

// TestQuickstartDocRunsTheExample checks that the doc cannot drift from examples/quickstart.cue:
// its spec is that scenario, imported (its steps are written in the example file), and the copy
// of the file it shows for reading is the file, byte for byte.
func TestQuickstartDocRunsTheExample(t *testing.T) {
	md, _ := filepath.Abs("quickstart.md")
	example, _ := filepath.Abs("../examples/quickstart.cue")
	res, err := dsl.Load([]string{md}, dsl.Options{})
	if err != nil {
		t.Fatalf("loading quickstart.md:\n%v", err)
	}
	if len(res.Scenarios) != 1 || res.Scenarios[0].Name != "quickstart" {
		t.Fatalf("quickstart.md declares %d scenarios, want 1 named quickstart", len(res.Scenarios))
	}
	sc := res.Scenarios[0]
	if sc.Pos.File != md {
		t.Errorf("the scenario is declared at %s, want in %s", sc.Pos, md)
	}
	for _, s := range sc.Steps {
		if s.Pos.File != example {
			t.Errorf("step %s is written at %s, want in %s: the doc's spec must import the example, not copy it", s.Path, s.Pos, example)
		}
	}

	want, err := os.ReadFile(example)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	shown := 0
	for _, f := range dsl.Fences(doc) {
		if f.Lang() == "cue" && strings.Contains(f.Info, "examples/quickstart.cue") && !f.IsSpec() {
			shown++
			if f.Content != string(want) {
				t.Errorf("quickstart.md:%d: the copy of examples/quickstart.cue differs from the file; paste the file again", f.Line)
			}
		}
	}
	if shown != 1 {
		t.Errorf("quickstart.md shows examples/quickstart.cue %d times, want once (a fence \"cue examples/quickstart.cue\")", shown)
	}
}

// TestDocExpectedBlock is the golden test of `labrun doc` on a copy of the quickstart: a wrong
// expected block fails with a diff at its .md lines, a tolerance out of range fails at its own
// line, and --update rewrites the block so that the next run passes.
//
// The copy is a module of its own in a temp directory (cue.mod naming it labrun.dev, the
// example file under examples/, the doc under docs/), so that its import of labrun.dev/examples
// resolves as in the repository; its port is moved to a free one, so that it never meets
// another run of the quickstart (TestQuickstartDoc's, examples' tests, a user's).
func TestDocExpectedBlock(t *testing.T) {
	root := t.TempDir()
	copyFile(t, "../cue.mod/module.cue", filepath.Join(root, "cue.mod", "module.cue"), nil)
	copyFile(t, "../examples/quickstart.cue", filepath.Join(root, "examples", "quickstart.cue"), func(s string) string {
		return replaceOnce(t, s, "_quickstartPort: 18480", fmt.Sprintf("_quickstartPort: %d", freePort(t)))
	})
	good := string(readFile(t, "quickstart.md"))
	// Two mistakes: a response code the run did not see, and a value far outside its tolerance.
	// The tolerance stays the doc's ±50%: --update keeps it, and the run after the update must
	// pass although the split between the backends moves by a few requests from run to run
	// (14 and 16 of 30 were seen; ±10% failed under load).
	bad := replaceOnce(t, good, "load keepalive: 30 requests, codes 200\n", "load keepalive: 30 requests, codes 200 503\n")
	bad = regexp.MustCompile(`(?m)^~ perconn\.ips\[backends\.b\.address\] [0-9.]+ ±50%$`).
		ReplaceAllString(bad, "~ perconn.ips[backends.b.address] 100 ±50%")
	docPath := filepath.Join(root, "docs", "quickstart.md")
	writeFile(t, docPath, bad)
	dir := filepath.Dir(docPath)

	blockLine := lineOf(t, bad, "scenario quickstart: passed") // the block's first line
	tolLine := lineOf(t, bad, "~ perconn.ips[backends.b.address] 100 ±50%")

	code, _, errOut := doc(t, dir, "quickstart.md")
	t.Logf("labrun doc with a wrong expected block:\n%s", errOut)
	if code != 1 {
		t.Fatalf("a wrong expected block: exit %d, want 1\n%s", code, errOut)
	}
	for _, want := range []string{
		fmt.Sprintf("quickstart.md:%d: the expected output differs from the run (- expected, + got):\n", blockLine),
		"    scenario quickstart: passed\n",
		"  - load keepalive: 30 requests, codes 200 503\n",
		"  + load keepalive: 30 requests, codes 200\n",
		"    load perconn: 30 requests, codes 200\n",
		fmt.Sprintf("quickstart.md:%d: perconn.ips[backends.b.address] is ", tolLine),
		", not within 50% of 100\n",
		"quickstart.md: 1 expected block did not match the run (labrun doc --update rewrites them)\n",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}

	if code, out, errOut := doc(t, dir, "--update", "quickstart.md"); code != 0 || !strings.Contains(out, "updated the expected blocks of quickstart.md") {
		t.Fatalf("labrun doc --update: exit %d\n%s%s", code, out, errOut)
	}
	updated := string(readFile(t, docPath))
	if code, out, errOut := doc(t, dir, "quickstart.md"); code != 0 {
		t.Fatalf("after --update: exit %d, want 0\n%s%s\n%s", code, out, errOut, updated)
	}
	// --update keeps the tolerance (with the value of the run) and restores the good block.
	tol := regexp.MustCompile(`(?m)^~ perconn\.ips\[backends\.b\.address\] [0-9]+ ±50%$`)
	if !tol.MatchString(updated) {
		t.Errorf("the updated doc lacks the tolerance line with the run's value:\n%s", updated)
	}
	withoutTolerance := func(s string) string { return regexp.MustCompile(`(?m)^~ .*$`).ReplaceAllString(s, "~") }
	if withoutTolerance(updated) != withoutTolerance(good) {
		t.Errorf("the updated doc differs from docs/quickstart.md beyond the tolerance line:\n%s", updated)
	}
}

// freePort returns a TCP port free on both 127.0.0.2 and 127.0.0.3, the quickstart's backends.
func freePort(t *testing.T) int {
	t.Helper()
	for range 20 {
		l2, err := net.Listen("tcp", "127.0.0.2:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l2.Addr().(*net.TCPAddr).Port
		l3, err := net.Listen("tcp", net.JoinHostPort("127.0.0.3", strconv.Itoa(port)))
		l2.Close()
		if err == nil {
			l3.Close()
			return port
		}
	}
	t.Fatal("no port free on both 127.0.0.2 and 127.0.0.3")
	return 0
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func copyFile(t *testing.T, from, to string, edit func(string) string) {
	t.Helper()
	s := string(readFile(t, from))
	if edit != nil {
		s = edit(s)
	}
	writeFile(t, to, s)
}

func replaceOnce(t *testing.T, s, old, new string) string {
	t.Helper()
	if n := strings.Count(s, old); n != 1 {
		t.Fatalf("%q occurs %d times, want once: update this test", old, n)
	}
	return strings.Replace(s, old, new, 1)
}

// lineOf is the 1-based line of the line that is exactly text.
func lineOf(t *testing.T, s, text string) int {
	t.Helper()
	for i, l := range strings.Split(s, "\n") {
		if l == text {
			return i + 1
		}
	}
	t.Fatalf("no line %q", text)
	return 0
}
