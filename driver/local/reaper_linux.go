//go:build linux

package local

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The reaper is what kills the children of a labrun that died without stopping them (kill -9,
// a crash, the OOM killer). Pdeathsig kills the direct children of labrun; the reaper takes
// care of what escapes it: a shell script's children, a daemon that forked, a program that
// moved to a new session or process group.
//
// It is this same binary, started again with reaperEnv set (see the init below): a small
// process in its own process group (so that the terminal's Ctrl-C, meant for labrun, does not
// reach it) that reads its stdin, a pipe whose other end only labrun holds. Labrun writes one
// line per process group it creates ("G <pgid>"). When the pipe reaches EOF — labrun closed
// it after stopping its processes, or labrun is gone — the reaper kills every process whose
// environment carries this run's marker (markerEnv, set on every command labrun starts and
// inherited by their children) and every registered group that still holds such a process,
// then exits. Marking by environment keeps it from killing a stranger that got a recycled pid.

func init() {
	// Any binary that links this package can be its own reaper: labrun, and test binaries.
	if marker := os.Getenv(reaperEnv); marker != "" {
		os.Exit(runReaper(os.Stdin, marker))
	}
}

func reaperSupported() bool { return true }

// runReaper is the reaper's main: it waits for EOF on in, then kills what carries marker.
func runReaper(in io.Reader, marker string) int {
	// It must outlive labrun's interrupt and a closed terminal: only EOF ends it.
	signal.Ignore(syscall.SIGINT, syscall.SIGHUP, syscall.SIGTERM, syscall.SIGPIPE)
	groups := map[int]bool{}
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 2 && f[0] == "G" {
			if n, err := strconv.Atoi(f[1]); err == nil && n > 1 {
				groups[n] = true
			}
		}
	}
	killMarked(marker, groups, os.Getpid())
	return 0
}

// killMarked kills, with SIGKILL, every process carrying marker (except self) and every group
// in groups that holds one. It scans again until none is left (a process may fork while it
// is being killed), a bounded number of times. It returns how many processes it signalled.
func killMarked(marker string, groups map[int]bool, self int) int {
	n := 0
	for round := range 20 {
		k := signalMarked(marker, groups, self, syscall.SIGKILL)
		if k == 0 {
			return n
		}
		n += k
		time.Sleep(time.Duration(5*(round+1)) * time.Millisecond)
	}
	return n
}

// signalMarked sends sig once to every process carrying marker (except self) and to every
// group in groups that holds one; it returns how many processes it found.
func signalMarked(marker string, groups map[int]bool, self int, sig syscall.Signal) int {
	found := markedProcesses(marker, self)
	signalled := map[int]bool{}
	for pid, pgrp := range found {
		if groups[pgrp] && !signalled[pgrp] {
			_ = syscall.Kill(-pgrp, sig)
			signalled[pgrp] = true
		}
		_ = syscall.Kill(pid, sig)
	}
	return len(found)
}

// markedProcesses returns the live processes (pid → process group) whose environment holds
// markerEnv=marker. Processes of other users (unreadable environ) and zombies (empty environ)
// are skipped.
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
		if err != nil || !hasEnvEntry(env, want) {
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
	for len(env) > 0 {
		var e []byte
		e, env, _ = bytes.Cut(env, []byte{0})
		if bytes.Equal(e, entry) {
			return true
		}
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
