//go:build !linux

package local

import "syscall"

// Without /proc the reaper cannot find what a run started: children are left to their process
// groups (signalled when the target closes).
func reaperSupported() bool { return false }

func killMarked(string, map[int]bool, int) int { return 0 }

func signalMarked(string, map[int]bool, int, syscall.Signal) int { return 0 }
