package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
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
	From     string
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
			notes = append(notes, "from the "+v.From)
		}
		if len(notes) > 0 {
			b.WriteString(" (" + strings.Join(notes, ", ") + ")")
		}
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
	return readVersion(bi, ok, sourceCheckout).String()
}

// sourceCheckout asks git about the checkout this file was compiled from, when it is still
// there: go run and builds with -buildvcs=false record no revision, but they run from one.
func sourceCheckout() (rev, time string, modified bool, dir string, found bool) {
	_, file, _, ok := runtime.Caller(0)
	if !ok || !filepath.IsAbs(file) {
		return // -trimpath: no source path
	}
	dir = filepath.Dir(file)
	if _, err := os.Stat(dir); err != nil {
		return
	}
	git := func(args ...string) (string, bool) {
		out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).Output()
		return strings.TrimSpace(string(out)), err == nil
	}
	top, ok := git("rev-parse", "--show-toplevel")
	if !ok {
		return
	}
	if rev, ok = git("rev-parse", "HEAD"); !ok {
		return
	}
	time, _ = git("log", "-1", "--format=%cI", "HEAD")
	status, _ := git("status", "--porcelain", "--untracked-files=no")
	return rev, time, status != "", top, true
}
