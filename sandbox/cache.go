package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Binaries is a built sandbox: the cache directory build.sh filled.
type Binaries struct {
	Dir     string // <cache>/<key>, where key hashes every component version
	BinDir  string // etcd, kube-*, kubectl, kwok, pilot-discovery, fortio
	DataDir string // istio-crds.yaml, kwok-crds.yaml, kwok-stages.yaml
	StandIn string // the Envoy admin stand-in binary (installed in pods' PATH as pilot-agent)
}

// Build runs sandbox/build.sh, which builds what is missing from the cache and does nothing when all
// is there (a cold build takes ~25 minutes on 2 cores). The script's progress goes to progress.
func Build(ctx context.Context, progress io.Writer) (Binaries, error) {
	script, err := findBuildScript()
	if err != nil {
		return Binaries{}, err
	}
	if progress == nil {
		progress = io.Discard
	}
	var stdout bytes.Buffer
	cmd := exec.CommandContext(ctx, "bash", script)
	cmd.Stdout = &stdout
	cmd.Stderr = progress
	if err := cmd.Run(); err != nil {
		return Binaries{}, fmt.Errorf("%s: %w", script, err)
	}
	return parseBuildOutput(stdout.String())
}

// parseBuildOutput reads build.sh's stdout: a "standin <path>" line, then the cache directory on the
// last line.
func parseBuildOutput(out string) (Binaries, error) {
	var b Binaries
	var last string
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		if p, ok := strings.CutPrefix(line, "standin "); ok {
			b.StandIn = p
		}
		last = line
	}
	if last == "" {
		return b, errors.New("build.sh printed no cache directory")
	}
	b.Dir = last
	b.BinDir = filepath.Join(last, "bin")
	b.DataDir = filepath.Join(last, "data")
	if b.StandIn == "" {
		return b, errors.New("build.sh printed no stand-in path")
	}
	if _, err := os.Stat(filepath.Join(last, "complete")); err != nil {
		return b, fmt.Errorf("sandbox cache %s is incomplete (no 'complete' marker)", last)
	}
	return b, nil
}

// findBuildScript locates sandbox/build.sh: $LABRUN_SANDBOX_BUILD if set, else by walking up from
// the working directory to the labrun module root (tests run in their package's directory).
func findBuildScript() (string, error) {
	if p := os.Getenv("LABRUN_SANDBOX_BUILD"); p != "" {
		return p, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.HasPrefix(bytes.TrimSpace(gomod), []byte("module labrun.dev/labrun\n")) {
			return filepath.Join(dir, "sandbox", "build.sh"), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("sandbox/build.sh not found: run from inside the labrun module or set LABRUN_SANDBOX_BUILD")
		}
		dir = parent
	}
}
