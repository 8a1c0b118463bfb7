package kube

import (
	"context"
	"net/url"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"labrun.dev/labrun/envoy"
	"labrun.dev/labrun/sandbox"
	"labrun.dev/labrun/schema"
)

// BenchmarkE2ESnapshotExec compares one `pilot-agent request GET stats?filter=…&type=Counters`
// in the client pod's istio-proxy container, run through this package's in-process exec and
// through the kubectl CLI (the sandbox's kubectl v1.37.2), in the sandbox (the stand-in answers
// with a FIXTURE). Both sides run the same command in the same pod, alternately, so the stand-in's
// own start-up and kwok's local exec weigh on both; the difference is kubectl's process start,
// kubeconfig loading and connection set-up. It reports the median latency of each and their
// ratio, and fails above the bar of 0.5.
//
//	go test ./driver/kube -run '^$' -bench BenchmarkE2ESnapshotExec -benchtime 20x
func BenchmarkE2ESnapshotExec(b *testing.B) {
	sb := sandbox.Start(b)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	ns := "e2e-bench"
	tgt, err := New(ctx, Options{Kubeconfig: sb.Kubeconfig, AllowedNamespaces: []string{ns}, Getenv: func(string) string { return "" },
		Run: Run{ID: "e2e-bench", Scenario: "bench", Host: "e2e", PID: 1}}) // marked: its namespace may be deleted
	if err != nil {
		b.Fatal(err)
	}
	d := tgt.Cluster.(*driver)
	if _, err := d.Apply(ctx, []schema.Object{namespace(ns)}, nil, ""); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = d.Delete(context.Background(), []schema.ObjectRef{{APIVersion: "v1", Kind: "Namespace", Name: ns}}, false)
	})
	if _, err := d.Apply(ctx, []schema.Object{deployment("client", 1, "app", "istio-proxy")}, nil, ns); err != nil {
		b.Fatal(err)
	}
	if err := d.WaitRollout(ctx, ns, "client"); err != nil {
		b.Fatal(err)
	}
	pod, err := d.pickPod(ctx, ns, "", "app=client", false)
	if err != nil {
		b.Fatal(err)
	}
	sb.EnvoyStandIn(b, ns, "client", sandbox.StatsFixture(statsFixture(ns, 3)))
	cluster := "outbound|8080||backend." + ns + ".svc.cluster.local"
	path := "stats?filter=" + url.QueryEscape(envoy.StatsFilter(cluster)) + "&type=Counters"
	argv := []string{"pilot-agent", "request", "GET", path}
	kubectl := filepath.Join(sb.BinDir, "kubectl")

	inproc := func() []byte {
		r, err := d.stream(ctx, ns, pod.Name, proxyContainer, argv, nil)
		if err != nil || r.exit != 0 {
			b.Fatalf("in-process exec: %v, exit %d: %s", err, r.exit, r.stderr)
		}
		return r.stdout
	}
	cli := func() []byte {
		out, err := exec.CommandContext(ctx, kubectl, append([]string{"--kubeconfig", sb.Kubeconfig, "exec", "-n", ns, pod.Name,
			"-c", proxyContainer, "--"}, argv...)...).Output()
		if err != nil {
			b.Fatalf("kubectl exec: %v", err)
		}
		return out
	}
	// Same answer both ways, and warm both paths once.
	if a, c := inproc(), cli(); string(a) != string(c) {
		b.Fatalf("in-process and kubectl differ:\n%s\n---\n%s", a, c)
	}
	in := make([]time.Duration, b.N)
	cl := make([]time.Duration, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		inproc()
		in[i] = time.Since(start)
		start = time.Now()
		cli()
		cl[i] = time.Since(start)
	}
	b.StopTimer()
	// Medians: the two shared cores see other work come and go; a mean follows its spikes.
	median := func(ds []time.Duration) time.Duration {
		slices.Sort(ds)
		return ds[len(ds)/2]
	}
	mIn, mCLI := median(in), median(cl)
	ratio := float64(mIn) / float64(mCLI)
	b.ReportMetric(float64(mIn)/1e6, "inproc-median-ms")
	b.ReportMetric(float64(mCLI)/1e6, "kubectl-median-ms")
	b.ReportMetric(ratio, "ratio")
	if b.N >= 5 && ratio > 0.5 {
		b.Errorf("in-process exec takes %.2f of kubectl exec's time, above the bar of 0.5", ratio)
	}
}
