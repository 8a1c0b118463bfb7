//go:build unix

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestSpoolLeftByKilledRun: kill -9 of labrun left its .labrun-spool-* folder in the report
// directory, and nothing removed it later. Each spool holds a lock while its run uses it: the
// next run removes the folders whose lock no process holds, says so, and leaves a live run's
// (its lock held), and a folder with no lock (a labrun before the lock, which may be running).
func TestSpoolLeftByKilledRun(t *testing.T) {
	dir := t.TempDir()
	mk := func(name string, lock bool) string {
		d := filepath.Join(dir, name)
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if lock {
			if err := os.WriteFile(filepath.Join(d, spoolLockName), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return d
	}
	dead := mk(".labrun-spool-aaaa-1", true)
	live := mk(".labrun-spool-bbbb-2", true)
	old := mk(".labrun-spool-cccc-3", false)
	f, err := os.Open(filepath.Join(live, spoolLockName))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}

	var stderr bytes.Buffer
	p := &process{Stderr: &stderr, Cwd: dir}
	spool, release, err := p.spoolDir(dir, "dddd")
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("the dead run's spool %s is still there (%v)", dead, err)
	}
	for _, d := range []string{live, old, spool} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s: %v, want it kept", d, err)
		}
	}
	if !strings.Contains(stderr.String(), "warning: removed .labrun-spool-aaaa-1") || strings.Contains(stderr.String(), "bbbb") || strings.Contains(stderr.String(), "cccc") {
		t.Errorf("stderr %q, want a warning naming the dead run's spool only", stderr.String())
	}
	// The new spool is locked while in use: another run leaves it alone.
	g, err := os.Open(filepath.Join(spool, spoolLockName))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if err := syscall.Flock(int(g.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err == nil {
		t.Errorf("the new spool's lock is not held")
	}
	stderr.Reset()
	spool2, release2, err := p.spoolDir(dir, "eeee")
	if err != nil {
		t.Fatal(err)
	}
	release2()
	os.RemoveAll(spool2)
	if _, err := os.Stat(spool); err != nil || stderr.Len() > 0 {
		t.Errorf("a live spool was swept: %v, stderr %q", err, stderr.String())
	}
}
