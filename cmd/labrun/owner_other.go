//go:build !linux

package main

import (
	"os"
	"syscall"
)

// procStart says whether a process exists; its start time is not known here (0).
func procStart(pid int) (uint64, bool) {
	p, err := os.FindProcess(pid)
	if err != nil {
		return 0, false
	}
	return 0, p.Signal(syscall.Signal(0)) == nil
}
