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

// sweepSpools removes the spool folders in dir that runs killed before their end left (kill -9:
// no deferred removal ran), and says so on stderr: those whose lock file no process holds. A
// live run's (its lock held) is left, and so is a folder without a lock file: a labrun from
// before the lock, which may be running still.
func (p *process) sweepSpools(dir string) {
	if dir == "" {
		return // the system's temporary directory: others' folders, cleaned by the system
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
