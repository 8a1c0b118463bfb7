package report

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"labrun.dev/labrun/interp"
)

// SealFile is the seal of a record (records of version 8 on): a file in the record's folder
// (ArtifactsDir) that the run writes last, once the record and every file of its folder are
// written, with the SHA-256 of each, one per line as sha256sum writes them: the record first,
// by its path from the folder (../<base>.json), then each file of the folder by name. Run in
// the folder, `sha256sum -c seal.sha256` checks it. It guards against hand edits and
// corruption: an edit that computes the seal again is not told from the run's. It is not a
// signature.
const SealFile = "seal.sha256"

// SealVersion is the first record version whose run writes its SealFile.
const SealVersion = 8

// writeSeal writes the SealFile of the record f.JSON and of the files of its folder
// f.Artifacts.
func writeSeal(f Files) error {
	var b strings.Builder
	sum, err := interp.FileSHA256(f.JSON)
	if err != nil {
		return err
	}
	fmt.Fprintf(&b, "%s  ../%s\n", sum, filepath.Base(f.JSON))
	names, err := sealedNames(f.Artifacts)
	if err != nil {
		return err
	}
	for _, name := range names {
		sum, err := interp.FileSHA256(filepath.Join(f.Artifacts, name))
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s  %s\n", sum, name)
	}
	return WriteFile(filepath.Join(f.Artifacts, SealFile), []byte(b.String()))
}

// sealedNames are the files of dir a seal covers: every regular file but the seal, sorted.
func sealedNames(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if e.Type().IsRegular() && e.Name() != SealFile {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names, nil
}

var sealLine = regexp.MustCompile(`^([0-9a-f]{64})  (\S.*)$`)

// SealProblem says where the record at path and the files of its folder differ from its seal,
// naming the first file that differs, or "" when they match it (or the folder is not there:
// the record is judged alone, and says so). A record of version 8 on whose folder holds no
// seal lost it after the run (or its run stopped while writing its report); one of an older
// version that holds one had its version lowered. The record is its seal's first line
// whatever its name (a record copied with its folder under another name keeps the pair). show
// gives a path as the message names it (nil: as it is).
func SealProblem(path string, rec *interp.Record, show func(string) string) string {
	if show == nil {
		show = func(s string) string { return s }
	}
	dir := ArtifactsDir(path)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return ""
	}
	seal := filepath.Join(dir, SealFile)
	b, err := os.ReadFile(seal)
	if err != nil {
		if rec.Version < SealVersion {
			return ""
		}
		return fmt.Sprintf("its folder %s holds no %s, which a run of a record of version %d on writes last, the SHA-256 of the record and of each file of the folder: the seal was removed after the run, or the run stopped while it wrote its report; restore the files the run wrote, or run the scenario again", show(dir), SealFile, SealVersion)
	}
	if rec.Version < SealVersion {
		return fmt.Sprintf("it says it is of version %d, but its folder holds %s, which runs write since version %d: its version was lowered after the run (a record of an older version is held to fewer checks)", rec.Version, show(seal), SealVersion)
	}
	type entry struct{ sum, name string }
	var entries []entry
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		m := sealLine.FindStringSubmatch(sc.Text())
		if m == nil {
			return fmt.Sprintf("%s:%d: not a line of a seal (the SHA-256 in hex, two spaces, a file's name)", show(seal), n)
		}
		entries = append(entries, entry{m[1], m[2]})
	}
	if len(entries) == 0 || !strings.HasPrefix(entries[0].name, "../") {
		return fmt.Sprintf("%s:1: its first line is not the record's (../<name>.json): the seal was edited", show(seal))
	}
	const act = "the record was changed after the run or is corrupt: restore the files the run wrote, or run the scenario again (the seal guards against edits and corruption; an edit that computes it again is not told from the run's)"
	if sum, err := interp.FileSHA256(path); err != nil {
		return fmt.Sprintf("%s: %v", show(path), err)
	} else if sum != entries[0].sum {
		return fmt.Sprintf("the record %s is not the one its seal (%s) names: its SHA-256 is %s, the seal's %s; %s", show(path), show(seal), sum[:12], entries[0].sum[:12], act)
	}
	sealed := map[string]bool{}
	for _, e := range entries[1:] {
		sealed[e.name] = true
		if e.name != filepath.Base(e.name) || e.name == SealFile {
			return fmt.Sprintf("%s names %s, which is no file of its folder's: the seal was edited", show(seal), e.name)
		}
		sum, err := interp.FileSHA256(filepath.Join(dir, e.name))
		if err != nil {
			return fmt.Sprintf("its seal (%s) names %s, which its folder does not hold (taken out of the folder); %s", show(seal), e.name, act)
		}
		if sum != e.sum {
			return fmt.Sprintf("%s is not the file its seal (%s) names: its SHA-256 is %s, the seal's %s; %s", show(filepath.Join(dir, e.name)), show(seal), sum[:12], e.sum[:12], act)
		}
	}
	names, err := sealedNames(dir)
	if err != nil {
		return fmt.Sprintf("%s: %v", show(dir), err)
	}
	for _, name := range names {
		if !sealed[name] {
			return fmt.Sprintf("its folder holds %s, which its seal (%s) does not name (added after the run); %s", show(filepath.Join(dir, name)), show(seal), act)
		}
	}
	return ""
}
