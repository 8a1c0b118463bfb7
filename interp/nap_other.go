//go:build !linux

package interp

import "time"

// nap does nothing where no high-resolution sleep is known to labrun: Sleep spins instead.
func nap(time.Duration) {}
