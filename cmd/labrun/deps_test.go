package main

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestLinksTwoAPIGroups keeps labrun's binary to the two groups of k8s.io/api it uses, core/v1
// and apps/v1 (and what they import). client-go's kubernetes/scheme, which its discovery,
// restmapper and typed clients import, registers every group (56 packages): its init was the
// biggest of labrun's startup and its code about 8 MB of the binary. driver/kube has its own
// scheme, clients and discovery instead.
func TestLinksTwoAPIGroups(t *testing.T) {
	deps := goListDeps(t, ".")
	if slices.Contains(deps, "k8s.io/client-go/kubernetes/scheme") {
		t.Error("labrun links k8s.io/client-go/kubernetes/scheme (every k8s.io/api group): " +
			"see `go list -f '{{.ImportPath}}: {{.Imports}}' -deps . | grep kubernetes/scheme` for who imports it")
	}
	allowed := goListDeps(t, "k8s.io/api/core/v1", "k8s.io/api/apps/v1")
	var extra []string
	for _, p := range deps {
		if strings.HasPrefix(p, "k8s.io/api/") && !slices.Contains(allowed, p) {
			extra = append(extra, p)
		}
	}
	if len(extra) > 0 {
		t.Errorf("labrun links k8s.io/api groups besides core/v1 and apps/v1: %s", strings.Join(extra, " "))
	}
}

// TestLinksNoGoControlPlane keeps go-control-plane's generated packages out of labrun: they
// would add 20 MB to the binary and 110 package inits (BENCHMARKS.md). labrun reads config
// dumps through the descriptors of those packages' protos, embedded by envoy/xdstype (whose
// generator, a module of its own, is the only importer of go-control-plane).
func TestLinksNoGoControlPlane(t *testing.T) {
	for _, p := range goListDeps(t, ".") {
		if strings.HasPrefix(p, "github.com/envoyproxy/") || strings.HasPrefix(p, "github.com/cncf/xds/") {
			t.Errorf("labrun links %s: see `go list -f '{{.ImportPath}}: {{.Imports}}' -deps . | grep envoyproxy` for who imports it", p)
		}
	}
}

func goListDeps(t *testing.T, pkgs ...string) []string {
	t.Helper()
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	out, err := exec.Command(goTool, append([]string{"list", "-deps"}, pkgs...)...).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", strings.Join(pkgs, " "), err)
	}
	return strings.Fields(string(out))
}

// TestLinksTheLanguageServerLean keeps labrun lsp to the protocol's types and JSON-RPC: glsp's
// server package would link its logging library (commonlog, with terminal colour libraries)
// and jsonrpc2's WebSocket transport, which labrun does not use.
func TestLinksTheLanguageServerLean(t *testing.T) {
	deps := goListDeps(t, ".")
	for _, want := range []string{"github.com/tliron/glsp/protocol_3_16", "github.com/sourcegraph/jsonrpc2"} {
		if !slices.Contains(deps, want) {
			t.Errorf("labrun does not link %s: is labrun lsp gone?", want)
		}
	}
	for _, p := range deps {
		for _, banned := range []string{"github.com/tliron/glsp/server", "github.com/tliron/commonlog", "github.com/sourcegraph/jsonrpc2/websocket"} {
			if p == banned {
				t.Errorf("labrun links %s", p)
			}
		}
	}
}
