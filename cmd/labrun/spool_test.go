//go:build unix

package main

import (
	"bytes"
	"fmt"
	"io"
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
	spool, done, err := p.spoolDir(dir, "dddd")
	if err != nil {
		t.Fatal(err)
	}
	defer done()
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
	_, done2, err := p.spoolDir(dir, "eeee")
	if err != nil {
		t.Fatal(err)
	}
	done2()
	if _, err := os.Stat(spool); err != nil || stderr.Len() > 0 {
		t.Errorf("a live spool was swept: %v, stderr %q", err, stderr.String())
	}
}

// TestSpoolEndedBesideAnotherRun: the runs of a --parallel suite (or labruns sharing a report
// directory) each sweep it as they start. A run that ended released its spool's lock before it
// removed the folder, and another run sweeping in between removed it too and warned "the
// output a run killed before its end (kill -9) was streaming, never reported" of a run that
// had reported everything (seen once in 27 runs of a --parallel 3 suite). A run's end removes
// its folder, then releases the lock: no sweep sees it unlocked.
func TestSpoolEndedBesideAnotherRun(t *testing.T) {
	dir := t.TempDir()
	var stderr bytes.Buffer
	sweeper := &process{Stderr: &stderr, Cwd: dir}
	stop := make(chan struct{})
	swept := make(chan struct{})
	go func() {
		defer close(swept)
		for {
			select {
			case <-stop:
				return
			default:
				sweeper.sweepSpools(dir)
			}
		}
	}()
	p := &process{Stderr: io.Discard, Cwd: dir}
	for i := 0; i < 1000; i++ {
		_, done, err := p.spoolDir(dir, fmt.Sprintf("r%d", i))
		if err != nil {
			t.Fatal(err)
		}
		done()
	}
	close(stop)
	<-swept
	if stderr.Len() > 0 {
		t.Errorf("a sweep beside runs that ended warned: %q", stderr.String())
	}
}

// TestSpoolLeftInReadOnlyDir: the report directory made read-only during a run (chmod from
// another shell): the run's end removed its spool's files, then failed to remove the folder,
// left it without its lock file, which no later sweep removes (a folder without a lock may be a
// labrun's from before the lock), and said nothing. The run says it could not remove it, and
// the folder keeps a lock file, which the next run, the directory writable again, finds
// unlocked and removes, saying so. root writes in a read-only folder: the test runs as
// another user only.
func TestSpoolLeftInReadOnlyDir(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root removes a folder from a read-only directory")
	}
	dir := t.TempDir()
	var stderr bytes.Buffer
	p := &process{Stderr: &stderr, Cwd: dir}
	spool, done, err := p.spoolDir(dir, "aaaa")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	done()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr.String(), "labrun: warning: could not remove the folder the run streamed its output to, "+spool+" (permission denied): remove it, or the next run in "+dir+" removes it when it can") {
		t.Errorf("stderr %q, want a warning naming the folder it could not remove", stderr.String())
	}
	stderr.Reset()
	_, done2, err := p.spoolDir(dir, "bbbb")
	if err != nil {
		t.Fatal(err)
	}
	done2()
	if _, err := os.Stat(spool); !os.IsNotExist(err) || !strings.Contains(stderr.String(), "warning: removed "+filepath.Base(spool)) {
		t.Errorf("the next run left %s (%v), stderr %q", spool, err, stderr.String())
	}
}

// TestSpoolLeftInTempDirByKilledRun: a run without a report directory (--report-dir "")
// spools in the system's temporary directory, and kill -9 of it left its folder there: the
// next run swept the report directory only, and TestKill9LeavesNoChildren's ten kills left ten
// .labrun-spool-* folders in /tmp on each run of the tests. The next run sweeps the temporary
// directory too, as it does a report directory: a dead run's folder is removed, a live one's
// and one without a lock are left.
func TestSpoolLeftInTempDirByKilledRun(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	dead := filepath.Join(dir, ".labrun-spool-aaaa-1")
	old := filepath.Join(dir, ".labrun-spool-cccc-3")
	for _, d := range []string{dead, old} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dead, spoolLockName), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	p := &process{Stderr: &stderr, Cwd: dir}
	spool, done, err := p.spoolDir("", "dddd")
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(spool) != dir {
		t.Fatalf("spool %s, want it in %s", spool, dir)
	}
	done()
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("the dead run's spool %s is still there (%v)", dead, err)
	}
	if _, err := os.Stat(old); err != nil {
		t.Errorf("%s: %v, want it kept", old, err)
	}
	if want := "labrun: warning: removed .labrun-spool-aaaa-1 from " + dir + ": "; !strings.HasPrefix(stderr.String(), want) {
		t.Errorf("stderr %q, want %q…", stderr.String(), want)
	}
}
