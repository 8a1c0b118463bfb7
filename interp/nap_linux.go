package interp

import (
	"syscall"
	"time"
)

// nap blocks the calling thread for d in nanosleep, whose high-resolution timer wakes it
// within tens of microseconds (the thread's timer slack, 50 µs by default), using no CPU.
func nap(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	_ = syscall.Nanosleep(&ts, nil) // EINTR: wakes early, the spin covers the rest
}
