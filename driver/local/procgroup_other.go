//go:build !unix

package local

import (
	"os"
	"os/exec"
	"syscall"
)

// Without process groups, signals reach only the process itself, and TERM is a kill.
func setProcessGroup(*exec.Cmd) {}

func signalGroup(p *os.Process, _ syscall.Signal) error {
	if p == nil {
		return nil
	}
	return p.Kill()
}

func exitCode(ps *os.ProcessState) int { return ps.ExitCode() }
