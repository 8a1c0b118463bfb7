// Command labrun-sandbox builds and runs the labrun sandbox by hand:
//
//	go run ./sandbox/cmd/labrun-sandbox build   # build the binaries into the cache (once, ~25 min cold)
//	go run ./sandbox/cmd/labrun-sandbox up      # start, print the environment to use, run until Ctrl-C
//	go run ./sandbox/cmd/labrun-sandbox up --clusters 2   # two clusters, one mesh (multi-primary)
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"labrun.dev/labrun/sandbox"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

const usage = `usage: labrun-sandbox build | up [--clusters N]
  build  build the sandbox's binaries into the cache ($LABRUN_SANDBOX_CACHE, default ~/.cache/labrun/sandbox)
  up     start the sandbox on loopback, print the environment to use it, stop it on Ctrl-C
         --clusters N  N clusters (N >= 2) in one mesh, multi-primary on one network: each its own
                       control plane and istiod (CLUSTER_ID cluster1..N), each istiod with a remote
                       secret of every other cluster; one kubeconfig with contexts cluster1..N`

func run(args []string, stdout, stderr io.Writer) int {
	clusters := 1
	if len(args) == 3 && args[0] == "up" && args[1] == "--clusters" {
		n, err := strconv.Atoi(args[2])
		if err != nil || n < 1 {
			fmt.Fprintf(stderr, "labrun-sandbox: --clusters %q: expected a number of clusters, 1 or more\n%s\n", args[2], usage)
			return 2
		}
		clusters, args = n, args[:1]
	}
	if len(args) != 1 {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	switch args[0] {
	case "build":
		bins, err := sandbox.Build(ctx, stderr)
		if err != nil {
			fmt.Fprintln(stderr, "labrun-sandbox:", err)
			return 1
		}
		fmt.Fprintln(stdout, bins.Dir)
		return 0
	case "up":
		bins, err := sandbox.Build(ctx, stderr)
		if err != nil {
			fmt.Fprintln(stderr, "labrun-sandbox:", err)
			return 1
		}
		if clusters > 1 {
			return upClusters(ctx, bins, clusters, stdout, stderr)
		}
		sb, err := sandbox.Up(ctx, bins, stderr)
		if err != nil {
			fmt.Fprintln(stderr, "labrun-sandbox:", err)
			return 1
		}
		fmt.Fprintf(stdout, "export KUBECONFIG=%s\nexport PATH=%s:$PATH\n", sb.Kubeconfig, sb.BinDir)
		fmt.Fprintf(stdout, "# istiod xDS %s, debug http://%s/debug/registryz (ready: /ready)\n", sb.IstiodXDS, sb.IstiodHTTP)
		fmt.Fprintf(stdout, "# logs and state in %s; Ctrl-C stops everything\n", sb.Dir)
		<-ctx.Done()
		fmt.Fprintln(stderr, "labrun-sandbox: stopping")
		if err := sb.Stop(); err != nil {
			fmt.Fprintln(stderr, "labrun-sandbox:", err)
			return 1
		}
		return 0
	default:
		fmt.Fprintln(stderr, usage)
		return 2
	}
}

// upClusters starts n clusters in one mesh and runs until ctx ends.
func upClusters(ctx context.Context, bins sandbox.Binaries, n int, stdout, stderr io.Writer) int {
	cs, err := sandbox.UpClusters(ctx, bins, n, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "labrun-sandbox:", err)
		return 1
	}
	fmt.Fprintf(stdout, "export KUBECONFIG=%s\nexport PATH=%s:$PATH\n", cs.Kubeconfig, cs.Members[0].BinDir)
	for _, m := range cs.Members {
		fmt.Fprintf(stdout, "# context %s: istiod xDS %s, debug http://%s/debug/clusterz; logs and state in %s\n", m.ClusterID, m.IstiodXDS, m.IstiodHTTP, m.Dir)
	}
	fmt.Fprintln(stdout, "# Ctrl-C stops everything")
	<-ctx.Done()
	fmt.Fprintln(stderr, "labrun-sandbox: stopping")
	if err := cs.Stop(); err != nil {
		fmt.Fprintln(stderr, "labrun-sandbox:", err)
		return 1
	}
	return 0
}
