package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// procStart is a process's start time in clock ticks since boot (/proc/<pid>/stat, field 22):
// with the pid, it names one process for good, since a recycled pid has another start time.
// ok is false when the process does not exist (or is a zombie).
func procStart(pid int) (start uint64, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 || f[0] == "Z" || f[0] == "X" {
		return 0, false
	}
	n, err := strconv.ParseUint(f[19], 10, 64)
	return n, err == nil
}
