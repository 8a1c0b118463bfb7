// Package e2ebin builds the labrun binary for the end-to-end test packages under cmd/labrun
// (faulte2e, kubehoste2e, primitivese2e), which run it as users do.
package e2ebin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

var (
	once sync.Once
	bin  string
	err  error
)

// Build builds labrun as users get it (no test tags), once per test binary, from a test of a
// package directly under cmd/labrun (its working directory), and returns the binary's path.
func Build(t testing.TB) string {
	t.Helper()
	once.Do(func() {
		dir, derr := os.MkdirTemp("", "labrun-e2e-bin")
		if derr != nil {
			err = derr
			return
		}
		bin = filepath.Join(dir, "labrun")
		goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
		if out, berr := exec.Command(goTool, "build", "-o", bin, "..").CombinedOutput(); berr != nil {
			err = fmt.Errorf("go build: %v\n%s", berr, out)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return bin
}
