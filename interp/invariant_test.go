package interp_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"labrun.dev/labrun/driver/fakes"
	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/schema"
)

// refusedOnItsTarget runs sc's preflight against in-memory fakes (a stand-in for every driver)
// that have exactly the capabilities and drivers of the built-in target the loader checked
// against, and returns the refusal, if any. The run context is cancelled, so nothing after the
// preflight runs.
func refusedOnItsTarget(t *testing.T, sc *dsl.Scenario, target string) string {
	t.Helper()
	tg := (&fakes.World{}).Target()
	tg.Name = target
	spec, _ := schema.BuiltinTarget(target, sc.Local)
	tg.Caps = spec.Caps
	keepDrivers(tg, spec.Drivers)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rec := interp.New(tg).Run(ctx, ctx, sc)
	if rec.Outcome == interp.Refused {
		return rec.Error
	}
	return ""
}

// TestVetOKMeansRunAccepts is the invariant of vet: every scenario it accepts (the examples
// and the seed labs, on their own target) passes run's preflight on that target.
func TestVetOKMeansRunAccepts(t *testing.T) {
	for _, dir := range []string{"../examples", "../scenarios"} {
		res, err := dsl.Load([]string{dir}, dsl.Options{})
		if err != nil {
			t.Fatalf("vet %s: %v", dir, err)
		}
		for _, sc := range res.Scenarios {
			if msg := refusedOnItsTarget(t, sc, sc.Target); msg != "" {
				t.Errorf("%s (%s): vet accepts it, run refuses it: %s", sc.Name, sc.Pos, msg)
			}
		}
	}
}

// FuzzVetThenRun: whatever vet accepts, run's preflight accepts on the same target, and
// nothing panics. Seeds: the examples and the CLI's golden cases.
func FuzzVetThenRun(f *testing.F) {
	for _, pattern := range []string{"../examples/*.cue", "../cmd/labrun/testdata/script/check_*.txtar", "../cmd/labrun/testdata/script/invalid_*.txtar"} {
		files, _ := filepath.Glob(pattern)
		for _, file := range files {
			b, err := os.ReadFile(file)
			if err == nil {
				f.Add(b, filepath.Ext(file) == ".txtar")
			}
		}
	}
	f.Fuzz(func(t *testing.T, src []byte, kube bool) {
		target := "local"
		if kube {
			target = "kube"
		}
		path := filepath.Join(t.TempDir(), "x.cue")
		if err := os.WriteFile(path, txtarOr(src), 0o644); err != nil {
			t.Fatal(err)
		}
		res, err := dsl.Load([]string{path}, dsl.Options{Target: target})
		if err != nil {
			return
		}
		for _, sc := range res.Scenarios {
			if msg := refusedOnItsTarget(t, sc, target); msg != "" {
				t.Errorf("vet --target %s accepts %s, run refuses it: %s\n%s", target, sc.Name, msg, strconv.Quote(string(src)))
			}
		}
	})
}

// txtarOr returns the x.cue file of a txtar archive, or src itself.
func txtarOr(src []byte) []byte {
	const marker = "\n-- x.cue --\n"
	s := string(src)
	i := indexOf(s, marker)
	if i < 0 {
		return src
	}
	s = s[i+len(marker):]
	if j := indexOf(s, "\n-- "); j >= 0 {
		s = s[:j+1]
	}
	return []byte(s)
}

func indexOf(s, sub string) int { return strings.Index(s, sub) }

// keepDrivers leaves t only the drivers of d.
func keepDrivers(t *schema.Target, d schema.Drivers) {
	if !d[schema.DriverCluster] {
		t.Cluster = nil
	}
	if !d[schema.DriverExec] {
		t.Exec = nil
	}
	if !d[schema.DriverLoad] {
		t.Load = nil
	}
	if !d[schema.DriverStats] {
		t.Stats = nil
	}
	if !d[schema.DriverLogs] {
		t.Logs = nil
	}
	if !d[schema.DriverDNS] {
		t.DNS = nil
	}
	if !d[schema.DriverProcesses] {
		t.Processes = nil
	}
}
