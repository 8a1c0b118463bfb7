package local

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"testing"
	"time"

	"labrun.dev/labrun/schema"
)

// helperEnv makes the test binary act as a small program for process tests (see TestMain),
// so that those tests need nothing installed beyond /bin/sh.
const helperEnv = "LABRUN_LOCAL_TEST_HELPER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		runHelper(mode, os.Args[len(os.Args)-1])
		return
	}
	os.Exit(m.Run())
}

// runHelper is the helper program: every mode listens on loopback only.
func runHelper(mode, arg string) {
	switch mode {
	case "backend-host": // the backend host, as labrun's hidden argument runs it
		if err := ServeBackendHost(os.Stdin, os.Stdout, os.Stderr); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
	case "serve-http": // serve 200 at /ready on arg, after a short pause
		time.Sleep(200 * time.Millisecond)
		ln, err := net.Listen("tcp", arg)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		fmt.Println("serving on", ln.Addr())
		_ = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/ready" {
				http.NotFound(w, r)
			}
		}))
	case "listen-tcp": // accept and close on arg, after a short pause
		time.Sleep(200 * time.Millisecond)
		ln, err := net.Listen("tcp", arg)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		fmt.Println("listening on", ln.Addr())
		for {
			c, err := ln.Accept()
			if err != nil {
				os.Exit(0)
			}
			c.Close()
		}
	case "ignore-term": // survive TERM; only KILL ends it
		signal.Ignore(syscall.SIGTERM)
		fmt.Println("ignoring TERM")
		time.Sleep(time.Hour)
	case "exit-early":
		fmt.Println("starting")
		fmt.Fprintln(os.Stderr, "fatal: config is broken")
		os.Exit(7)
	default:
		fmt.Fprintln(os.Stderr, "unknown helper mode", mode)
		os.Exit(2)
	}
	os.Exit(0)
}

// helperProcess is a process step that runs the test binary as the helper.
func helperProcess(mode, arg string, ready *schema.Ready) schema.Process {
	return schema.Process{
		Argv:  []string{os.Args[0], "-test.run=^$", arg},
		Env:   map[string]string{helperEnv: mode},
		Ready: ready,
	}
}

// newTarget builds a local target that the test closes, checking Close's error.
func newTarget(t *testing.T, spec *schema.Local, opts Options) *schema.Target {
	t.Helper()
	if opts.Logf == nil {
		opts.Logf = t.Logf
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tg, err := New(ctx, spec, opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := tg.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return tg
}

// freePort returns a TCP port that is free on every given loopback IP (and UDP on the first),
// for worlds whose backends share a port on different addresses.
func freePort(t *testing.T, ips ...string) int {
	t.Helper()
	for range 20 {
		ln, err := net.Listen("tcp", net.JoinHostPort(ips[0], "0"))
		if err != nil {
			t.Fatal(err)
		}
		port := ln.Addr().(*net.TCPAddr).Port
		ok := true
		var held []net.Listener
		for _, ip := range ips[1:] {
			l, err := net.Listen("tcp", net.JoinHostPort(ip, fmt.Sprint(port)))
			if err != nil {
				ok = false
				break
			}
			held = append(held, l)
		}
		ln.Close()
		for _, l := range held {
			l.Close()
		}
		if ok {
			return port
		}
	}
	t.Fatal("no common free port")
	return 0
}

func bg() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 30*time.Second)
}
