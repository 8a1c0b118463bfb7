//go:build unix

package main

import (
	"os"
	"path/filepath"
	"syscall"
)

// lockSpool takes the lock of spool folder dir and returns its release. The lock file is
// created, locked, then renamed into place, so that another run never sees it unlocked while
// this one lives.
func lockSpool(dir string) (func(), error) {
	f, err := os.CreateTemp(dir, ".lock-")
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, err
	}
	if err := os.Rename(f.Name(), filepath.Join(dir, spoolLockName)); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}

// spoolDead says no process holds the lock of spool folder dir: the run that made it is gone.
// A folder without a lock file is not said dead (a labrun before the lock may be using it).
func spoolDead(dir string) bool {
	f, err := os.Open(filepath.Join(dir, spoolLockName))
	if err != nil {
		return false
	}
	defer f.Close()
	// EWOULDBLOCK: a live run holds it. Taken, it is held by this process until f is closed,
	// as the folder is removed.
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		return false
	}
	// A run that ended removes its folder, then releases the lock (spoolDir): a lock taken
	// after that is of a file no longer in the folder, which is gone, not dead.
	held, err := f.Stat()
	if err != nil {
		return false
	}
	now, err := os.Stat(filepath.Join(dir, spoolLockName))
	return err == nil && os.SameFile(held, now)
}
