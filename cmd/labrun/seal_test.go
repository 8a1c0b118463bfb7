package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
)

// resealRecord writes the seal (seal.sha256) of the record at path and of the files of its
// folder again, as `sha256sum` would, the record first by ../<name>: what an edit that computes
// the seal again writes. The tests of what replay's other checks refuse reseal a record edited
// after the run; without it, the seal refuses each edit first.
func resealRecord(path string) error {
	dir := strings.TrimSuffix(path, ".json")
	sum := func(p string) (string, error) {
		b, err := os.ReadFile(p)
		if err != nil {
			return "", err
		}
		s := sha256.Sum256(b)
		return hex.EncodeToString(s[:]), nil
	}
	var b strings.Builder
	s, err := sum(path)
	if err != nil {
		return err
	}
	fmt.Fprintf(&b, "%s  ../%s\n", s, filepath.Base(path))
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var names []string
	for _, e := range entries {
		if e.Type().IsRegular() && e.Name() != "seal.sha256" {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	for _, n := range names {
		s, err := sum(filepath.Join(dir, n))
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s  %s\n", s, n)
	}
	return os.WriteFile(filepath.Join(dir, "seal.sha256"), []byte(b.String()), 0o644)
}

// cmdReseal is the `reseal RECORD.json...` script command (resealRecord); a RECORD with *, ?
// or [ is a glob.
func cmdReseal(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: reseal RECORD.json...")
	}
	for _, a := range args {
		paths := []string{ts.MkAbs(a)}
		if strings.ContainsAny(a, "*?[") { // a glob: records whose names a run chose
			paths, _ = filepath.Glob(ts.MkAbs(a))
			if len(paths) == 0 {
				ts.Fatalf("reseal: no record matches %s", a)
			}
		}
		for _, p := range paths {
			if err := resealRecord(p); err != nil {
				ts.Fatalf("reseal: %v", err)
			}
		}
	}
}
