package main

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"

	"labrun.dev/labrun/driver/local"
)

// backendHostArg is the hidden argument that makes labrun the backend host of a local run: the
// echo backends in a process (and Go runtime) of their own, apart from the load generator
// (driver/local.ServeBackendHost). The run that starts it talks to it on its stdin and stdout.
const backendHostArg = "__backend-host"

// serveBackendHost runs labrun as a backend host.
func serveBackendHost(p *process) int {
	// A Ctrl-C or a closed terminal reaches the whole process group: the run that started
	// this host stops its steps and closes the host's stdin when its cleanup is done.
	signal.Ignore(os.Interrupt, syscall.SIGHUP)
	if err := local.ServeBackendHost(p.Stdin, p.Stdout, p.Stderr); err != nil {
		fmt.Fprintln(p.Stderr, "labrun: "+err.Error())
		return exitInfra
	}
	return exitOK
}

// backendHostCmd is the command of a local run's backend host: this executable, with the
// hidden argument. Its argv[0] is the name labrun was called by (under testscript, the test
// binary acts as labrun when so called).
func backendHostCmd() *exec.Cmd {
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	return &exec.Cmd{Path: exe, Args: []string{filepath.Base(os.Args[0]), backendHostArg}}
}
