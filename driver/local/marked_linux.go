//go:build linux

package local

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"labrun.dev/labrun/internal/keeper"
)

// signalMarked sends sig once to every process carrying marker, except self and the keepers
// (which stay until their trees are empty); it returns how many processes it found.
func signalMarked(marker string, self int, sig syscall.Signal) int {
	found := markedProcesses(marker, self)
	for pid := range found {
		_ = syscall.Kill(pid, sig)
	}
	return len(found)
}

// markedProcesses returns the live processes (pid → process group) whose environment holds
// markerEnv=marker, keepers left out. Processes of other users (unreadable environ) and
// zombies (empty environ) are skipped.
func markedProcesses(marker string, self int) map[int]int {
	want := []byte(markerEnv + "=" + marker)
	out := map[int]int{}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return out
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil || !hasEnvEntry(env, want) || hasEnvName(env, keeper.Env) {
			continue
		}
		st, err := readStat(pid)
		if err != nil || st.state == 'Z' || st.state == 'X' {
			continue
		}
		out[pid] = st.pgrp
	}
	return out
}

// hasEnvEntry reports whether a NUL-separated environment holds the entry exactly.
func hasEnvEntry(env, entry []byte) bool {
	return anyEnv(env, func(e []byte) bool { return bytes.Equal(e, entry) })
}

// hasEnvName reports whether a NUL-separated environment sets the variable name.
func hasEnvName(env []byte, name string) bool {
	prefix := []byte(name + "=")
	return anyEnv(env, func(e []byte) bool { return bytes.HasPrefix(e, prefix) })
}

// anyEnv reports whether an entry of a NUL-separated environment satisfies ok.
func anyEnv(env []byte, ok func([]byte) bool) bool {
	for len(env) > 0 {
		var e []byte
		e, env, _ = bytes.Cut(env, []byte{0})
		if ok(e) {
			return true
		}
	}
	return false
}

// isDescendant reports whether pid descends from ancestor, by the parent pids of /proc.
func isDescendant(pid, ancestor int) bool {
	for range 64 {
		st, err := readStat(pid)
		if err != nil || st.ppid <= 1 {
			return false
		}
		if st.ppid == ancestor {
			return true
		}
		pid = st.ppid
	}
	return false
}

// procStat is what labrun reads from /proc/<pid>/stat.
type procStat struct {
	comm  string
	state byte
	ppid  int
	pgrp  int
	// start is the process's start time in clock ticks since boot: with the pid, it names one
	// process for good (a recycled pid has another start time).
	start uint64
}

func readStat(pid int) (procStat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, err
	}
	return parseStat(string(b))
}

// parseStat parses /proc/<pid>/stat: "pid (comm) state ppid pgrp ...", comm possibly holding
// spaces and parentheses, hence the last ')'.
func parseStat(s string) (procStat, error) {
	open, closing := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || closing < open {
		return procStat{}, fmt.Errorf("unexpected /proc stat %q", s)
	}
	f := strings.Fields(s[closing+1:])
	// f[0] is field 3 (state); starttime is field 22.
	if len(f) < 20 || len(f[0]) != 1 {
		return procStat{}, fmt.Errorf("unexpected /proc stat %q", s)
	}
	st := procStat{comm: s[open+1 : closing], state: f[0][0]}
	var err1, err2, err3 error
	st.ppid, err1 = strconv.Atoi(f[1])
	st.pgrp, err2 = strconv.Atoi(f[2])
	st.start, err3 = strconv.ParseUint(f[19], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return procStat{}, fmt.Errorf("unexpected /proc stat %q", s)
	}
	return st, nil
}
