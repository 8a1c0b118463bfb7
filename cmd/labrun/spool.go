package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// spoolPrefix begins the name of a run's spool folder (spoolDir); spoolLockName is the file in
// it whose lock the run holds while it uses the folder.
const (
	spoolPrefix   = ".labrun-spool-"
	spoolLockName = ".lock"
)

// sweepSpools removes the spool folders in dir ("": the system's temporary directory, where a
// run without a report directory spools) that runs killed before their end left (kill -9: no
// deferred removal ran), and says so on stderr: those whose lock file no process holds. A
// live run's (its lock held) is left, and so is a folder without a lock file: a labrun from
// before the lock, which may be running still, and another user's (its folder is its own
// only: its lock cannot be opened). Before, the temporary directory was not swept: each
// labrun run --report-dir "" killed with -9 left a .labrun-spool-* folder there for good.
func (p *process) sweepSpools(dir string) {
	if dir == "" {
		dir = os.TempDir()
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	var removed []string
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), spoolPrefix) {
			continue
		}
		d := filepath.Join(dir, e.Name())
		if !spoolDead(d) {
			continue
		}
		if err := os.RemoveAll(d); err == nil {
			removed = append(removed, e.Name())
		}
	}
	if len(removed) > 0 && p.Stderr != nil {
		fmt.Fprintf(p.Stderr, "labrun: warning: removed %s from %s: the output a run killed before its end (kill -9) was streaming, never reported, or the folder a run could not remove as it ended (its directory read-only then)\n", strings.Join(removed, ", "), dir)
	}
}
