package multiclustere2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"labrun.dev/labrun/cmd/labrun/internal/e2ebin"
	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/sandbox"
)

// mode1Replay is seed 002's one-cluster recording of mode1 STRICT (Kit B), which the Kit B e2e
// test replays too (scenarios/testdata/replay/README.md gives the source of every number).
var mode1Replay = filepath.Join("..", "..", "..", "scenarios", "testdata", "replay", "kit-b", "mode1_strict")

// gslbFixtures reads mode1_strict's recording for the east client's Envoy stand-in. The
// recording's addresses were backend-a's and backend-b's ClusterIPs in one cluster; in the
// example the GSLB's answers are east's backend-a pod and west's backend-b pod, so its /clusters
// views name those (the stand-in fills in this run's addresses, west's from cluster2). edit, when
// set, changes the recording first (a wrong outcome).
func gslbFixtures(t *testing.T, edit func([]sandbox.Fixture)) []sandbox.Fixture {
	t.Helper()
	fx, err := sandbox.ReplayDir(mode1Replay)
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(fx)
	}
	addresses := strings.NewReplacer(
		"{{clusterIP backend-a}}", "{{podIP app=backend-a}}",
		"{{clusterIP backend-b}}", "{{podIP app=backend-b @cluster2}}")
	var a, b int
	for i := range fx {
		a += strings.Count(fx[i].Body, "{{clusterIP backend-a}}")
		b += strings.Count(fx[i].Body, "{{clusterIP backend-b}}")
		fx[i].Body = addresses.Replace(fx[i].Body)
	}
	if a == 0 || b == 0 {
		t.Fatalf("%s names backend-a's address %d times and backend-b's %d times: the recording changed, see what it says now", mode1Replay, a, b)
	}
	return fx
}

// runGSLB runs examples/multicluster/gslb_flip.cue with the recording fx replayed by the Envoy
// stand-in of east's client pods, and returns labrun's exit code, output, record and the record's
// file.
func runGSLB(t *testing.T, cs *sandbox.Clusters, fx []sandbox.Fixture) (int, string, *interp.Record, string) {
	t.Helper()
	east := cs.Members[0]
	east.EnvoyStandIn(t, "mc-gslb", "client", fx...)
	bin := e2ebin.Build(t)
	reports := t.TempDir()
	cmd := exec.Command(bin, "run", "--kubeconfig", cs.Kubeconfig, "--var", "hostsFile=addn", "--report-dir", reports, "gslb_flip.cue")
	cmd.Dir = exampleDir
	cmd.Env = e2ebin.Env(t, east.BinDir)
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("labrun run: %v\n%s", err, out)
	}
	files, _ := filepath.Glob(filepath.Join(reports, "*.json"))
	if len(files) != 1 {
		t.Fatalf("want one record in %s, got %v\n%s", reports, files, out)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var rec interp.Record
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	return code, string(out), &rec, files[0]
}

// TestE2EGSLBFlipReplayedDataPlane runs examples/multicluster/gslb_flip.cue on the two-cluster
// sandbox. Its config half is real: the objects in both clusters, each backend's pod IP read in
// its own cluster, the lab DNS's hosts file rewritten at the flip (this test reads it), east's
// istiod's STRICT_DNS cluster for the ServiceEntry (its one endpoint the host name) and west's
// backend-b pod as an endpoint east's istiod knows through its remote secret. Its data plane is
// a replay through the Envoy stand-in: seed 002's one-cluster recording of mode1 STRICT (the
// counters and /clusters views of the client's sidecar, fortio's keepalive load, the who= curl
// loop), on its recorded timeline. Nothing here measures traffic between two clusters.
//
// The same recording edited into a wrong outcome (the sidecar did not replace the host after
// the flip) must fail the run on the expectation that reads it, and on it alone.
func TestE2EGSLBFlipReplayedDataPlane(t *testing.T) {
	cs := sandbox.StartClusters(t, 2)

	t.Run("recorded", func(t *testing.T) {
		code, out, rec, file := runGSLB(t, cs, gslbFixtures(t, nil))
		t.Logf("labrun run gslb_flip.cue:\n%s", out)
		if code != 0 || rec.Outcome != interp.Passed {
			t.Fatalf("exit %d, %s, want 0 and passed%s", code, rec.Outcome, failures(rec))
		}
		if len(rec.Expectations) != 22 {
			t.Errorf("%d expectations judged, want the file's 22", len(rec.Expectations))
		}
		// The flip was real: east's lab DNS hosts file names west's pod IP.
		podB := lastAddress(rec.Values()["pod_b"])
		if !strings.HasPrefix(podB, "10.2.") {
			t.Errorf("pod_b = %q, want an address of cluster2's pods (10.2.0.0/24)", podB)
		}
		if got := hostsRecord(t, cs.Members[0], "gslb.lab.internal"); got != podB {
			t.Errorf("east's lab DNS says gslb.lab.internal → %q after the run, want west's backend-b %q", got, podB)
		}
		steps := map[string]string{}
		for _, s := range rec.Steps {
			if s.Name != "" {
				steps[s.Name] = s.Cluster
			}
		}
		if steps["pod_b"] != "west" || steps["pod_a"] != "east" || steps["after_flip"] != "east" {
			t.Errorf("steps' clusters: %v", steps)
		}

		// Could the expectations have failed? labrun mutate's perturbed copies of this record:
		// every survivor needs a reason in the scenario (exit 1 otherwise).
		mutate := exec.Command(e2ebin.Build(t), "mutate", "-o", "json", file)
		mutate.Dir = exampleDir
		mout, err := mutate.Output()
		var mr struct {
			Killed, Allowed, Unexplained int
			Mutants                      []struct {
				Name     string
				Killed   bool
				Survives string
			}
		}
		if jerr := json.Unmarshal(mout, &mr); jerr != nil {
			t.Fatalf("labrun mutate: %v, %v\n%s", err, jerr, mout)
		}
		for _, m := range mr.Mutants {
			if !m.Killed {
				t.Logf("survives: %s (%s)", m.Name, m.Survives)
			}
		}
		t.Logf("labrun mutate: %d mutants, %d killed, %d survive with a reason, %d without", len(mr.Mutants), mr.Killed, mr.Allowed, mr.Unexplained)
		if err != nil || mr.Unexplained != 0 || len(mr.Mutants) == 0 {
			t.Errorf("labrun mutate: %v; %d survivors without a reason", err, mr.Unexplained)
		}
	})

	t.Run("membership unchanged", func(t *testing.T) {
		// After the flip the sidecar's membership_change stays at 2: the host was not replaced.
		fx := gslbFixtures(t, func(fx []sandbox.Fixture) {
			n := 0
			for i := range fx {
				if fx[i].Path != "stats" {
					continue
				}
				if n++; n == 3 { // settled, before_flip, after_flip
					old := "gslb.lab.internal;.membership_change: 3"
					if !strings.Contains(fx[i].Body, old) {
						t.Fatalf("after_flip's stats have no %q", old)
					}
					fx[i].Body = strings.Replace(fx[i].Body, old, "gslb.lab.internal;.membership_change: 2", 1)
				}
			}
		})
		code, out, rec, _ := runGSLB(t, cs, fx)
		if code != 1 || rec.Outcome != interp.Failed {
			t.Fatalf("exit %d, %s, want 1 and failed\n%s", code, rec.Outcome, out)
		}
		const want = `delta("before_flip", "after_flip").membership_change == 1`
		for _, j := range rec.Expectations {
			switch {
			case j.Src == want && (j.Outcome != interp.Failed || !strings.Contains(j.Explanation, "(0)")):
				t.Errorf("%s: %s %s, want failed on 0", j.Src, j.Outcome, j.Explanation)
			case j.Src != want && j.Outcome != interp.Passed:
				t.Errorf("%s: %s %s%s, want passed (it does not read membership_change)", j.Src, j.Outcome, j.Explanation, j.Reason)
			}
		}
		if line := `✗ delta("before_flip", "after_flip").membership_change (0) == 1`; !strings.Contains(out, line) {
			t.Errorf("the output has no line %s:\n%s", line, out)
		}
	})
}

// failures renders the expectations that did not pass.
func failures(rec *interp.Record) string {
	var b strings.Builder
	if rec.Error != "" {
		b.WriteString("\n  error: " + rec.Error)
	}
	for _, j := range rec.Expectations {
		if j.Outcome != interp.Passed {
			b.WriteString("\n  " + string(j.Outcome) + ": " + j.Src + " " + j.Explanation + j.Reason)
		}
	}
	return b.String()
}

// lastAddress is the address a get step captured: the last of a list (the newest pod).
func lastAddress(v any) string {
	if l, ok := v.([]any); ok && len(l) > 0 {
		v = l[len(l)-1]
	}
	s, _ := v.(string)
	return s
}

// hostsRecord reads the addresses of host in the hosts file the dns steps wrote in the newest
// lab-dns pod's directory of sb.
func hostsRecord(t *testing.T, sb *sandbox.Sandbox, host string) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(sb.Dir, "pods", "mc-gslb", "lab-dns-*", "addn"))
	if len(files) == 0 {
		t.Fatal("no hosts file addn in a lab-dns pod directory of cluster1")
	}
	sort.Slice(files, func(i, j int) bool {
		a, _ := os.Stat(files[i])
		b, _ := os.Stat(files[j])
		return a.ModTime().After(b.ModTime())
	})
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var addrs []string
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && !strings.HasPrefix(f[0], "#") && strings.Contains(" "+strings.Join(f[1:], " ")+" ", " "+host+" ") {
			addrs = append(addrs, f[0])
		}
	}
	return strings.Join(addrs, " ")
}
