//go:build linux

package local

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"labrun.dev/labrun/schema"
)

// A process step's descendant that left its process group and session (setsid) is not reached
// by stopping the group; the reaper kills it when the target closes.
func TestCloseKillsEscapedDescendants(t *testing.T) {
	dir := t.TempDir()
	tg := newTarget(t, nil, Options{Dir: dir, StopGrace: 200 * time.Millisecond})
	ctx, cancel := bg()
	defer cancel()
	_, err := tg.Processes.Start(ctx, "srv", schema.Process{
		Argv:  []string{"sh", "-c", "setsid sh -c 'echo $$ > escaped.pid; exec sleep 300' & sleep 0.1; echo up; exec sleep 300"},
		Ready: &schema.Ready{Log: "^up$"},
	})
	if err != nil {
		t.Fatal(err)
	}
	pid := readPidFile(t, filepath.Join(dir, "escaped.pid"))
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	if !processAlive(pid) {
		t.Fatalf("escaped process %d is not running before Close", pid)
	}
	if err := tg.Close(ctx); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(3 * time.Second)
	for processAlive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("escaped process %d still alive 3s after Close", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func readPidFile(t *testing.T, p string) int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		b, err := os.ReadFile(p)
		if err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				return pid
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not written within 5s", p)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// processAlive reports a process that exists and is not a zombie.
func processAlive(pid int) bool {
	st, err := readStat(pid)
	return err == nil && st.state != 'Z' && st.state != 'X'
}

func TestParseStat(t *testing.T) {
	st, err := parseStat("1234 (a (b) c) S 1 1230 1230 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 1 0 98765 1000 10 18446744073709551615")
	if err != nil {
		t.Fatal(err)
	}
	if st.comm != "a (b) c" || st.state != 'S' || st.ppid != 1 || st.pgrp != 1230 || st.start != 98765 {
		t.Errorf("parsed %+v", st)
	}
	if _, err := parseStat("garbage"); err == nil {
		t.Error("garbage parsed")
	}
}
