package main

import (
	"bytes"
	"debug/elf"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
)

// buildVersion is what labrun knows of its own build: the module version, and the VCS
// revision it was built from.
type buildVersion struct {
	Module  string
	Version string
	// Revision, Time and Modified come from the build's VCS stamp (go build in a checkout), or,
	// when the build has none (go run, -buildvcs=false), from the checkout the source is in.
	Revision string
	Time     string
	Modified bool
	// From says where the revision came from: "build" or "checkout DIR".
	From string
	// BuildID is the content part of the Go build ID of the running executable (the last of
	// `go tool buildid`'s parts: a hash of the binary), "" when it cannot be read: what tells
	// two builds apart that name one revision and neither is stamped or both are modified.
	BuildID  string
	Go       string
	Platform string
}

func (v buildVersion) String() string {
	var b strings.Builder
	b.WriteString("labrun " + v.Version)
	if v.Revision != "" {
		rev := v.Revision
		if len(rev) > 12 {
			rev = rev[:12]
		}
		b.WriteString(" revision " + rev)
		var notes []string
		if v.Modified {
			notes = append(notes, "modified")
		}
		if v.Time != "" {
			notes = append(notes, v.Time)
		}
		if v.From != "build" {
			notes = append(notes, "from the "+v.From+", not stamped by the build")
		}
		if v.weak() && v.BuildID != "" {
			notes = append(notes, "build "+v.BuildID) // as its records name it (buildWord)
		}
		if len(notes) > 0 {
			b.WriteString(" (" + strings.Join(notes, ", ") + ")")
		}
	} else if v.BuildID != "" {
		b.WriteString(" (no VCS revision recorded, build " + v.BuildID + ")")
	} else {
		b.WriteString(" (no VCS revision recorded)")
	}
	fmt.Fprintf(&b, " %s %s", v.Go, v.Platform)
	return b.String()
}

// readVersion reads the build info; checkout is asked for the revision when the build
// recorded none.
func readVersion(bi *debug.BuildInfo, ok bool, checkout func() (rev, time string, modified bool, dir string, found bool)) buildVersion {
	v := buildVersion{Module: "labrun.dev/labrun", Version: "(devel)", Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if ok && bi != nil {
		if bi.Main.Path != "" {
			v.Module = bi.Main.Path
		}
		if bi.Main.Version != "" {
			v.Version = bi.Main.Version
		}
		if bi.GoVersion != "" {
			v.Go = bi.GoVersion
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				v.Revision, v.From = s.Value, "build"
			case "vcs.time":
				v.Time = s.Value
			case "vcs.modified":
				v.Modified = s.Value == "true"
			}
		}
	}
	if v.Revision == "" && checkout != nil {
		if rev, t, mod, dir, found := checkout(); found {
			v.Revision, v.Time, v.Modified, v.From = rev, t, mod, "checkout "+dir
		}
	}
	return v
}

// version returns labrun's version line.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	v := readVersion(bi, ok, sourceCheckout)
	v.BuildID = ownBuildID()
	return v.String()
}

// sourceCheckout reads the revision of the checkout this file was compiled from, when it is
// still there: go run and builds with -buildvcs=false record no revision, but they run from
// one. It reads .git's files itself (HEAD, the ref it names, packed-refs) rather than running
// git, so `labrun version` starts no process; the commit time and whether the tree was modified
// would need git's object store and index, so they stay unknown.
func sourceCheckout() (rev, time string, modified bool, dir string, found bool) {
	_, file, _, ok := runtime.Caller(0)
	if !ok || !filepath.IsAbs(file) {
		return // -trimpath: no source path
	}
	top, gitDir, common, ok := findGitDir(filepath.Dir(file))
	if !ok {
		return
	}
	rev, ok = resolveHead(gitDir, common)
	if !ok {
		return
	}
	return rev, "", false, top, true
}

// findGitDir walks up from dir to the checkout's top: the folder holding .git, either a
// directory or, in a worktree, a file "gitdir: PATH". common is where shared refs live.
func findGitDir(dir string) (top, gitDir, common string, ok bool) {
	for d := dir; ; d = filepath.Dir(d) {
		g := filepath.Join(d, ".git")
		if fi, err := os.Stat(g); err == nil {
			gitDir = g
			if !fi.IsDir() {
				b, err := os.ReadFile(g)
				if err != nil {
					return "", "", "", false
				}
				p, found := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
				if !found {
					return "", "", "", false
				}
				if !filepath.IsAbs(p) {
					p = filepath.Join(d, p)
				}
				gitDir = p
			}
			common = gitDir
			if b, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
				c := strings.TrimSpace(string(b))
				if !filepath.IsAbs(c) {
					c = filepath.Join(gitDir, c)
				}
				common = filepath.Clean(c)
			}
			return d, gitDir, common, true
		}
		if filepath.Dir(d) == d {
			return "", "", "", false
		}
	}
}

// resolveHead reads HEAD: a detached hash, or "ref: refs/heads/x" resolved through the loose
// ref file or packed-refs.
func resolveHead(gitDir, common string) (string, bool) {
	b, err := os.ReadFile(filepath.Join(gitDir, "HEAD"))
	if err != nil {
		return "", false
	}
	head := strings.TrimSpace(string(b))
	ref, isRef := strings.CutPrefix(head, "ref: ")
	if !isRef {
		return head, isHash(head)
	}
	for _, d := range []string{gitDir, common} {
		if b, err := os.ReadFile(filepath.Join(d, filepath.FromSlash(ref))); err == nil {
			h := strings.TrimSpace(string(b))
			return h, isHash(h)
		}
	}
	packed, err := os.ReadFile(filepath.Join(common, "packed-refs"))
	if err != nil {
		return "", false
	}
	for _, line := range strings.Split(string(packed), "\n") {
		if h, name, ok := strings.Cut(strings.TrimSpace(line), " "); ok && name == ref && isHash(h) {
			return h, true
		}
	}
	return "", false
}

func isHash(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, r := range s {
		if !('0' <= r && r <= '9' || 'a' <= r && r <= 'f') {
			return false
		}
	}
	return true
}

// labrunBuild is the build a record names (interp.Record's Labrun): the version, the full
// revision and "modified" when the build's tree was. A build the toolchain did not stamp (go
// run, -buildvcs=false) knows only the revision its checkout is at when it runs, which may
// be later than the one it was built from: it says "(checkout)" after it.
var labrunBuild = sync.OnceValue(func() string {
	bi, ok := debug.ReadBuildInfo()
	v := readVersion(bi, ok, sourceCheckout)
	v.BuildID = ownBuildID()
	return buildWord(v)
})

// buildWord is v as a record names it: "v1.2.0 <revision>", "v1.2.0 <revision> modified
// build <id>", "(devel) <revision> (checkout) build <id>". A build the toolchain stamped from
// a clean tree is named by its revision; one that is not stamped (go run, -buildvcs=false:
// the revision is its checkout's when it runs, or none) or was built from a modified tree
// also by its Go build ID. Before, two such builds of different code (a go run before and
// after an edit not committed) named one build, and merge took one labrun run's records made
// by both for one build's, without a word.
func buildWord(v buildVersion) string {
	s := v.Version
	if v.Revision != "" {
		s += " " + v.Revision
		if v.From != "build" {
			s += " (checkout)"
		}
	}
	if v.Modified {
		s += " modified"
	}
	if v.BuildID != "" && v.weak() {
		s += " build " + v.BuildID
	}
	return s
}

// weak says whether v's revision alone does not name its code: no revision, one the build did
// not stamp (its checkout's when it runs), or a modified tree.
func (v buildVersion) weak() bool { return v.Revision == "" || v.From != "build" || v.Modified }

// ownBuildID is the content part of the running executable's Go build ID, or "".
func ownBuildID() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	return goBuildID(exe)
}

// goBuildID reads the content part of the Go build ID of the executable at path (the last of
// its parts, as `go tool buildid` prints them), or "": an ELF file keeps it in the note
// .note.go.buildid; other formats at the start of their text, as "\xff Go build ID: \"...\"".
func goBuildID(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	var id string
	if ef, err := elf.NewFile(f); err == nil {
		if s := ef.Section(".note.go.buildid"); s != nil {
			if b, err := s.Data(); err == nil && len(b) >= 16 {
				name, desc := ef.ByteOrder.Uint32(b), ef.ByteOrder.Uint32(b[4:])
				off := 12 + (int(name)+3)&^3
				if name == 4 && string(b[12:14]) == "Go" && off+int(desc) <= len(b) {
					id = string(b[off : off+int(desc)])
				}
			}
		}
	} else {
		b := make([]byte, 1<<20)
		n, _ := io.ReadFull(f, b)
		const prefix = "\xff Go build ID: \""
		if _, rest, ok := bytes.Cut(b[:n], []byte(prefix)); ok {
			if v, _, ok := bytes.Cut(rest, []byte("\"\n \xff")); ok {
				id = string(v)
			}
		}
	}
	if i := strings.LastIndexByte(id, '/'); i >= 0 {
		id = id[i+1:]
	}
	return id
}
