package main

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

func TestReadVersion(t *testing.T) {
	stamped := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "labrun.dev/labrun", Version: "v0.3.0"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.time", Value: "2026-12-01T12:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	noCheckout := func() (string, string, bool, string, bool) { return "", "", false, "", false }
	checkout := func() (string, string, bool, string, bool) {
		return "fedcba9876543210", "2026-12-01T11:00:00Z", false, "/src/labrun", true
	}
	for _, tc := range []struct {
		name     string
		bi       *debug.BuildInfo
		checkout func() (string, string, bool, string, bool)
		want     string
		// record is the build as a record names it (interp.Record's Labrun).
		record string
	}{
		{"go build in a checkout", stamped, checkout, "labrun v0.3.0 revision 0123456789ab (modified, 2026-12-01T12:00:00Z) go1.26.8 ", "v0.3.0 0123456789abcdef0123 modified"},
		{"go run", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}}, checkout,
			"labrun (devel) revision fedcba987654 (2026-12-01T11:00:00Z, from the checkout /src/labrun, not stamped by the build) go1.26.8 ", "(devel) fedcba9876543210 (checkout)"},
		{"no checkout either", &debug.BuildInfo{GoVersion: "go1.26.8"}, noCheckout, "labrun (devel) (no VCS revision recorded) go1.26.8 ", "(devel)"},
	} {
		v := readVersion(tc.bi, true, tc.checkout)
		if got := v.String(); !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s:\n got %q\nwant %q…", tc.name, got, tc.want)
		}
		if got := buildWord(v); got != tc.record {
			t.Errorf("%s: a record names the build %q, want %q", tc.name, got, tc.record)
		}
	}
}

// TestSourceCheckoutReadsGitFiles: the revision of a go run build comes from .git's files, in a
// plain checkout (loose ref), a packed ref, a detached HEAD and a worktree (gitdir file).
func TestSourceCheckoutReadsGitFiles(t *testing.T) {
	const h1 = "0123456789abcdef0123456789abcdef01234567"
	const h2 = "89abcdef0123456789abcdef0123456789abcdef"
	write := func(path, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	root := t.TempDir()
	repo := filepath.Join(root, "repo")
	write(filepath.Join(repo, ".git", "HEAD"), "ref: refs/heads/main\n")
	write(filepath.Join(repo, ".git", "refs", "heads", "main"), h1+"\n")
	write(filepath.Join(repo, ".git", "packed-refs"), "# pack-refs with: peeled fully-peeled sorted\n"+h2+" refs/heads/packed\n")
	write(filepath.Join(repo, "cmd", "x", "f.go"), "")
	wt := filepath.Join(root, "wt")
	write(filepath.Join(wt, ".git"), "gitdir: "+filepath.Join(repo, ".git", "worktrees", "wt")+"\n")
	write(filepath.Join(repo, ".git", "worktrees", "wt", "HEAD"), "ref: refs/heads/packed\n")
	write(filepath.Join(repo, ".git", "worktrees", "wt", "commondir"), "../..\n")

	for _, tc := range []struct {
		name, dir, top, rev string
	}{
		{"loose ref, from a subfolder", filepath.Join(repo, "cmd", "x"), repo, h1},
		{"worktree, packed ref in the common dir", wt, wt, h2},
	} {
		top, gitDir, common, ok := findGitDir(tc.dir)
		if !ok || top != tc.top {
			t.Fatalf("%s: findGitDir = %q, %v; want top %q", tc.name, top, ok, tc.top)
		}
		if rev, ok := resolveHead(gitDir, common); !ok || rev != tc.rev {
			t.Errorf("%s: resolveHead = %q, %v; want %q", tc.name, rev, ok, tc.rev)
		}
	}
	write(filepath.Join(repo, ".git", "HEAD"), h2+"\n")
	if rev, ok := resolveHead(filepath.Join(repo, ".git"), filepath.Join(repo, ".git")); !ok || rev != h2 {
		t.Errorf("detached HEAD: resolveHead = %q, %v; want %q", rev, ok, h2)
	}
	write(filepath.Join(repo, ".git", "HEAD"), "ref: refs/heads/gone\n")
	if rev, ok := resolveHead(filepath.Join(repo, ".git"), filepath.Join(repo, ".git")); ok {
		t.Errorf("a ref that does not exist resolved to %q", rev)
	}
}

// TestRecordNamesUnstampedBuild: a build the toolchain did not stamp (go run, -buildvcs=false,
// as this test binary) names only the revision its checkout is at when it runs: two such
// builds of different code (a go run before and after an edit not committed) named one build
// in their records, and merge took one labrun run's records made by both for one build's,
// without a word (docs/json.md said so). The record names it by its Go build ID too (the
// content part, a hash of the binary), as `labrun version` does; a stamped build from a clean
// tree is named by its revision alone.
func TestRecordNamesUnstampedBuild(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	id := goBuildID(exe)
	if id == "" || strings.Contains(id, "/") {
		t.Fatalf("the test binary's Go build ID reads %q, want its content part", id)
	}
	bi, ok := debug.ReadBuildInfo()
	if v := readVersion(bi, ok, sourceCheckout); v.From == "build" && !v.Modified {
		t.Skip("this test binary was stamped from a clean tree")
	}
	if got := labrunBuild(); !strings.HasSuffix(got, " build "+id) {
		t.Errorf("a record names this unstamped build %q, without its build ID %s", got, id)
	}
	if got := version(); !strings.Contains(got, " build "+id+")") {
		t.Errorf("labrun version says %q, without the build ID %s its records name", got, id)
	}
	goRun := buildVersion{Version: "(devel)", Revision: "fedcba9876543210", From: "checkout /src/labrun"}
	a, b := goRun, goRun
	a.BuildID, b.BuildID = "AAAAAAAAAAAAAAAAAAAA", "BBBBBBBBBBBBBBBBBBBB"
	if buildWord(a) == buildWord(b) {
		t.Errorf("two unstamped builds of one checkout are named alike: %q", buildWord(a))
	}
	clean := buildVersion{Version: "v0.3.0", Revision: "0123456789abcdef0123", From: "build", BuildID: "AAAAAAAAAAAAAAAAAAAA"}
	if got := buildWord(clean); got != "v0.3.0 0123456789abcdef0123" {
		t.Errorf("a stamped build from a clean tree is named %q, want its version and revision alone", got)
	}
}
