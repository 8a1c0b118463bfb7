// Package multiclustere2e runs the real labrun binary on examples/multicluster against the
// two-cluster sandbox (sandbox.UpClusters): two control planes, each with its istiod, each
// istiod holding a remote secret of the other cluster. Its own package, so that only it starts
// the two clusters; its tests share one pair (sandbox.Main stops it).
package multiclustere2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"labrun.dev/labrun/cmd/labrun/internal/e2ebin"
	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/sandbox"
)

var exampleDir = filepath.Join("..", "..", "..", "examples", "multicluster")

// TestMulticlusterVet: the two-cluster experiments vet (no cluster needed).
func TestMulticlusterVet(t *testing.T) {
	bin := e2ebin.Build(t)
	cmd := exec.Command(bin, "vet", "--strict", ".")
	cmd.Dir = exampleDir
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "ok: 2 scenarios in 2 files") {
		t.Fatalf("labrun vet --strict examples/multicluster: %v\n%s", err, out)
	}
}

func TestMain(m *testing.M) { sandbox.Main(m) } // the tests share one pair of clusters

// TestE2EMulticluster: in the two-cluster sandbox, `labrun run` applies to both clusters, the
// client in cluster1 (east) gets cluster2's (west) pod as an endpoint from its own istiod, at the
// failover priority, and the run deletes its namespace in both clusters. The record names the
// cluster of every step.
func TestE2EMulticluster(t *testing.T) {
	cs := sandbox.StartClusters(t, 2)
	bin := e2ebin.Build(t)
	reports := t.TempDir()
	// failover.cue alone: gslb_flip.cue runs its data plane only with the replay of
	// TestE2EGSLBFlipReplayedDataPlane (without it, its load and curl loop would run on this
	// machine, towards a name outside the sandbox).
	cmd := exec.Command(bin, "run", "--kubeconfig", cs.Kubeconfig, "--report-dir", reports, "failover.cue")
	cmd.Dir = exampleDir
	cmd.Env = e2ebin.Env(t, cs.Members[0].BinDir)
	out, err := cmd.CombinedOutput()
	t.Logf("labrun run examples/multicluster/failover.cue:\n%s", out)
	if err != nil {
		t.Fatalf("labrun run: %v", err)
	}
	if !strings.Contains(string(out), "PASSED") {
		t.Errorf("cross_cluster_failover did not pass")
	}

	// Cleanup in both clusters: the namespace is gone or going in each.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, m := range cs.Members {
		c, err := kubernetes.NewForConfig(m.RESTConfig)
		if err != nil {
			t.Fatal(err)
		}
		ns, err := c.CoreV1().Namespaces().Get(ctx, "mc-failover", metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			t.Errorf("%s: %v", m.ClusterID, err)
		case ns.DeletionTimestamp == nil:
			t.Errorf("%s: namespace mc-failover left behind, not being deleted", m.ClusterID)
		}
	}

	// labrun clean looks in both clusters: nothing of a dead run is left in either.
	clean := exec.Command(bin, "clean", "--kubeconfig", cs.Kubeconfig, "--context", "cluster1", "--context", "cluster2")
	clean.Env = e2ebin.Env(t, cs.Members[0].BinDir)
	cout, err := clean.CombinedOutput()
	if err != nil || strings.Count(string(cout), "object(s) of") != 2 || !strings.Contains(string(cout), "cluster1") || !strings.Contains(string(cout), "cluster2") {
		t.Errorf("labrun clean of both clusters: %v\n%s", err, cout)
	}

	// The record: both clusters, and each step's.
	files, _ := filepath.Glob(filepath.Join(reports, "*.json"))
	if len(files) != 1 {
		t.Fatalf("want one record in %s, got %v", reports, files)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var rec interp.Record
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	if len(rec.Clusters) != 2 || rec.Clusters[0].Name != "east" || rec.Clusters[1].Name != "west" {
		t.Errorf("record's clusters: %+v", rec.Clusters)
	}
	byName := map[string]string{}
	for _, s := range rec.Steps {
		if s.Name != "" {
			byName[s.Name] = s.Cluster
		}
	}
	if byName["westPod"] != "west" || byName["eds"] != "east" {
		t.Errorf("steps' clusters: %v", byName)
	}
	for _, want := range []string{"in cluster east", "in cluster west"} {
		if !strings.Contains(strings.Join(rec.Cleanup, "\n"), want) {
			t.Errorf("the automatic cleanup says nothing %s: %q", want, rec.Cleanup)
		}
	}
}
