package main

import (
	"crypto/rand"
	"encoding/hex"
	"os"
)

// runInfo identifies one run of one scenario: its id is in the report's file names and in the
// labels of every object the run creates on a cluster, with the host and pid that own it.
type runInfo struct {
	id       string
	host     string
	pid      int
	pidStart uint64
	// over marks the run's steps over, its report next, once, and reports whether an
	// interrupt came before (runPhases.over); nil outside runOne.
	over func() bool
}

func newRunInfo() runInfo {
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	host, _ := os.Hostname()
	start, _ := procStart(os.Getpid())
	return runInfo{id: hex.EncodeToString(b), host: host, pid: os.Getpid(), pidStart: start}
}
