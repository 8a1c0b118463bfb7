// Package e2ebin builds the labrun binary for the tests that run it as a program: the
// end-to-end packages under cmd/labrun (faulte2e, kubehoste2e, primitivese2e) and cmd/labrun's
// own fault and interrupt tests.
package e2ebin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// build is one binary, built once per test binary.
type build struct {
	once sync.Once
	bin  string
	err  error
}

var (
	mu     sync.Mutex
	builds = map[string]*build{}
)

// Build builds labrun as users get it (no test tags), from a test of a package directly under
// cmd/labrun (its working directory), and returns the binary's path.
func Build(t testing.TB) string {
	t.Helper()
	return BuildTagged(t, "..", "")
}

// BuildTagged builds the package at pkgDir (relative to the test's working directory) with
// the comma-separated build tags, once per test binary for each pkgDir and tags, and returns
// the binary's path.
func BuildTagged(t testing.TB, pkgDir, tags string) string {
	t.Helper()
	mu.Lock()
	b, ok := builds[pkgDir+"\x00"+tags]
	if !ok {
		b = &build{}
		builds[pkgDir+"\x00"+tags] = b
	}
	mu.Unlock()
	b.once.Do(func() {
		dir, err := os.MkdirTemp("", "labrun-e2e-bin")
		if err != nil {
			b.err = err
			return
		}
		b.bin = filepath.Join(dir, "labrun")
		args := []string{"build", "-o", b.bin}
		if tags != "" {
			args = append(args, "-tags", tags)
		}
		goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
		if out, err := exec.Command(goTool, append(args, pkgDir)...).CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.bin
}

// Env is the environment a test runs the binary in: this process's, without its KUBECONFIG,
// with the sandbox's programs (binDir: pilot-agent's stand-in, kubectl, fortio) first on PATH
// and a fresh HOME.
func Env(t testing.TB, binDir string) []string {
	t.Helper()
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "KUBECONFIG=") && !strings.HasPrefix(kv, "PATH=") && !strings.HasPrefix(kv, "HOME=") {
			env = append(env, kv)
		}
	}
	return append(env, "PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"), "HOME="+t.TempDir())
}
