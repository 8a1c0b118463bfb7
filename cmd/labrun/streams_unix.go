//go:build unix

package main

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// closedAtStart says whether the standard stream f was closed when the process started. Go's
// runtime opens /dev/null read-write on a closed standard descriptor before any Go code runs;
// a shell's `>/dev/null` opens it write-only. So /dev/null opened read-write is taken as a
// stream that was closed (`>&-`). (A parent that hands its child /dev/null read-write for
// output, as Python's subprocess.DEVNULL does, is taken so too: labrun then says so.)
func closedAtStart(f *os.File) bool {
	var st, null syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		return false
	}
	if err := syscall.Stat(os.DevNull, &null); err != nil {
		return false
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFCHR || st.Rdev != null.Rdev {
		return false
	}
	fl, err := unix.FcntlInt(f.Fd(), unix.F_GETFL, 0)
	return err == nil && fl&unix.O_ACCMODE == unix.O_RDWR
}
