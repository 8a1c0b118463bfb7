package main

import (
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
	}{
		{"go build in a checkout", stamped, checkout, "labrun v0.3.0 revision 0123456789ab (modified, 2026-12-01T12:00:00Z) go1.26.8 "},
		{"go run", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}}, checkout,
			"labrun (devel) revision fedcba987654 (2026-12-01T11:00:00Z, from the checkout /src/labrun) go1.26.8 "},
		{"no checkout either", &debug.BuildInfo{GoVersion: "go1.26.8"}, noCheckout, "labrun (devel) (no VCS revision recorded) go1.26.8 "},
	} {
		got := readVersion(tc.bi, true, tc.checkout).String()
		if !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s:\n got %q\nwant %q…", tc.name, got, tc.want)
		}
	}
}
