// Command labrun-sandbox builds and runs the labrun sandbox by hand:
//
//	go run ./sandbox/cmd/labrun-sandbox build   # build the binaries into the cache (once, ~25 min cold)
//	go run ./sandbox/cmd/labrun-sandbox up      # start, print the environment to use, run until Ctrl-C
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"labrun.dev/labrun/sandbox"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

const usage = `usage: labrun-sandbox build|up
  build  build the sandbox's binaries into the cache ($LABRUN_SANDBOX_CACHE, default ~/.cache/labrun/sandbox)
  up     start the sandbox on loopback, print the environment to use it, stop it on Ctrl-C`

func run(args []string, stdout, stderr io.Writer) int {
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
