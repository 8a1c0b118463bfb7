package sandbox

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"testing"
	"time"
)

// shared is the one sandbox of a test binary.
var shared struct {
	once    sync.Once
	sb      *Sandbox
	err     error
	viaMain bool // Main installed: the shared sandbox is stopped after m.Run
	mu      sync.Mutex
	others  []*Sandbox // StartAnother's, stopped after m.Run too
	// clusters are the shared sandboxes of several clusters (StartClusters under Main), by n.
	clusters map[int]*sharedClusters
}

// sharedClusters is one shared sandbox of n clusters, started on first use.
type sharedClusters struct {
	once sync.Once
	cs   *Clusters
	err  error
}

// Disabled reports why the sandbox is off for this run, or "" when it is on: LABRUN_SANDBOX=off.
func Disabled() string {
	if os.Getenv("LABRUN_SANDBOX") == "off" {
		return "sandbox disabled by LABRUN_SANDBOX=off"
	}
	return ""
}

// skipUnlessOn skips t under LABRUN_SANDBOX=off and -short.
func skipUnlessOn(t testing.TB) {
	t.Helper()
	if why := Disabled(); why != "" {
		t.Skip(why)
	}
	if testing.Short() {
		t.Skip("sandbox skipped in -short mode")
	}
}

// Start returns the sandbox of this test binary, starting it on first use (building the binaries
// first if the cache lacks them: a cold build takes ~25 minutes, so run
// `go run ./sandbox/cmd/labrun-sandbox build` beforehand or give go test a -timeout to match).
// With Main in the package's TestMain, all tests share one sandbox, stopped when they end; without
// it, each test gets its own, stopped by t.Cleanup. Skips under LABRUN_SANDBOX=off and -short.
func Start(t testing.TB) *Sandbox {
	t.Helper()
	skipUnlessOn(t)
	shared.mu.Lock()
	viaMain := shared.viaMain
	shared.mu.Unlock()
	if !viaMain {
		sb, err := startForTests()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := sb.Stop(); err != nil {
				t.Errorf("stopping sandbox: %v", err)
			}
		})
		return sb
	}
	shared.once.Do(func() { shared.sb, shared.err = startForTests() })
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.sb
}

// Main runs the package's tests and stops the shared sandbox afterwards, if one was started. Use it
// as TestMain:
//
//	func TestMain(m *testing.M) { sandbox.Main(m) }
func Main(m *testing.M) {
	shared.mu.Lock()
	shared.viaMain = true
	shared.mu.Unlock()
	code := m.Run()
	shared.mu.Lock()
	all := append([]*Sandbox{shared.sb}, shared.others...)
	shared.mu.Unlock()
	for _, sb := range all {
		if sb == nil {
			continue
		}
		if err := sb.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "sandbox: stopping: %v\n", err)
			if code == 0 {
				code = 1
			}
		}
	}
	for _, c := range shared.clusters {
		if c.cs != nil {
			if err := c.cs.Stop(); err != nil {
				fmt.Fprintf(os.Stderr, "sandbox: stopping the clusters: %v\n", err)
				if code == 0 {
					code = 1
				}
			}
		}
	}
	os.Exit(code)
}

// StartAnother starts one more sandbox for this test binary, apart from Start's, and returns it:
// for tests that would otherwise queue for the one sandbox's namespaces (the seed labs use fixed
// ones). Each call starts a new sandbox (its own ports, directory and istiod); Main stops them all
// at the end, so it needs Main in the package's TestMain. Skips as Start does.
func StartAnother(t testing.TB) *Sandbox {
	t.Helper()
	skipUnlessOn(t)
	shared.mu.Lock()
	viaMain := shared.viaMain
	shared.mu.Unlock()
	if !viaMain {
		t.Fatal("sandbox.StartAnother needs sandbox.Main as the package's TestMain (Main stops the sandboxes)")
	}
	sb, err := startForTests()
	if err != nil {
		t.Fatal(err)
	}
	shared.mu.Lock()
	shared.others = append(shared.others, sb)
	shared.mu.Unlock()
	return sb
}

// startForTests builds (when needed) and starts a sandbox, reporting progress on stderr when
// testing -v is on.
func startForTests() (*Sandbox, error) {
	return withBinaries(func(ctx context.Context, bins Binaries, progress io.Writer) (*Sandbox, error) {
		return Up(ctx, bins, progress)
	})
}

// StartClusters returns a sandbox of n clusters in one mesh (UpClusters). With Main in the
// package's TestMain, the tests that ask for n clusters share one, started on first use and
// stopped when they end; without it, each test gets its own, stopped by t.Cleanup. Skips as
// Start does.
func StartClusters(t testing.TB, n int) *Clusters {
	t.Helper()
	skipUnlessOn(t)
	shared.mu.Lock()
	var sc *sharedClusters
	if shared.viaMain {
		if shared.clusters == nil {
			shared.clusters = map[int]*sharedClusters{}
		}
		if sc = shared.clusters[n]; sc == nil {
			sc = &sharedClusters{}
			shared.clusters[n] = sc
		}
	}
	shared.mu.Unlock()
	if sc == nil {
		cs, err := startClustersForTests(n)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := cs.Stop(); err != nil {
				t.Errorf("stopping the sandbox's clusters: %v", err)
			}
		})
		return cs
	}
	sc.once.Do(func() { sc.cs, sc.err = startClustersForTests(n) })
	if sc.err != nil {
		t.Fatal(sc.err)
	}
	return sc.cs
}

// startClustersForTests builds (when needed) and starts a sandbox of n clusters, reporting
// progress on stderr when testing -v is on.
func startClustersForTests(n int) (*Clusters, error) {
	return withBinaries(func(ctx context.Context, bins Binaries, progress io.Writer) (*Clusters, error) {
		return UpClusters(ctx, bins, n, progress)
	})
}

// withBinaries builds the sandbox's binaries when the cache lacks them and calls up with them,
// within 40 minutes, with stderr for progress when testing -v is on.
func withBinaries[T any](up func(ctx context.Context, bins Binaries, progress io.Writer) (T, error)) (T, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
	defer cancel()
	bins, err := Build(ctx, os.Stderr)
	if err != nil {
		var zero T
		return zero, fmt.Errorf("building the sandbox: %w", err)
	}
	var progress io.Writer
	if testing.Verbose() {
		progress = os.Stderr
	}
	return up(ctx, bins, progress)
}
