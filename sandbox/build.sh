#!/usr/bin/env bash
# build.sh — build the sandbox's binaries from the Go module proxy, once, and cache them.
#
# Output: $LABRUN_SANDBOX_CACHE/<key>/bin/{etcd,kube-apiserver,kube-controller-manager,kube-scheduler,
# kubectl,kwok,pilot-discovery,fortio} and data/{istio-crds.yaml,gateway-api-crds.yaml,kwok-crds.yaml,
# kwok-stages.yaml}.
# <key> hashes every version below plus the Go version, so a version bump builds a new set and a
# warm cache is reused as is. Prints the cache directory on stdout (the last line) when done.
#
# The Envoy admin stand-in (sandbox/standin, its own Go module) is built into
# <key>/standin/<hash of its sources>/pilot-agent, so editing it rebuilds only it; its path is printed
# on stdout as "standin <path>" before the last line. Runs of this script for the same key are
# serialised with a lock file, so concurrent test packages wait for one build instead of racing.
set -euo pipefail

ETCD_VERSION=v3.6.16
KUBE_VERSION=v1.37.2
STAGING_VERSION=v0.37.2
KWOK_VERSION=v0.8.0
ISTIO_VERSION=v0.0.0-20260827124520-eed52ebb66ad
ISTIO_API_VERSION=v1.30.8
FORTIO_CLI_VERSION=v1.66.5   # newest fortio CLI that builds here (later ones import a module the proxy refuses)

GO_VERSION=$(go env GOVERSION)
key=$(printf '%s\n' "$ETCD_VERSION" "$KUBE_VERSION" "$STAGING_VERSION" "$KWOK_VERSION" "$ISTIO_VERSION" \
	"$ISTIO_API_VERSION" "$FORTIO_CLI_VERSION" "$GO_VERSION" | sha256sum | cut -c1-12)
cache_root=${LABRUN_SANDBOX_CACHE:-$HOME/.cache/labrun/sandbox}
out=$cache_root/$key
mkdir -p "$out/bin" "$out/data" "$out/src"
log() { printf 'sandbox build: %s\n' "$*" >&2; }
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

exec 9>"$out/.lock"
if ! flock -n 9; then
	log "waiting for another build of $out"
	flock 9
fi

export GOFLAGS=-mod=mod
export GOWORK=off
export CGO_ENABLED=0
# Builds run at low priority so that a test run beside them still gets the CPU it needs.
gobuild() { nice -n 10 go build -trimpath -ldflags='-s -w' "$@"; }

# wrapper DIR MODULE VERSION: a throwaway module that requires MODULE@VERSION.
wrapper() {
	local dir=$out/src/$1
	mkdir -p "$dir"
	if [ ! -f "$dir/go.mod" ]; then
		printf 'module wrap/%s\n\ngo 1.26\n\nrequire %s %s\n' "$1" "$2" "$3" >"$dir/go.mod"
	fi
	echo "$dir"
}

build_etcd() {
	[ -x "$out/bin/etcd" ] && return
	log "etcd $ETCD_VERSION"
	local d; d=$(wrapper etcd go.etcd.io/etcd/server/v3 "$ETCD_VERSION")
	printf '//go:build tools\n\npackage tools\n\nimport _ "go.etcd.io/etcd/server/v3"\n' >"$d/tools.go"
	(cd "$d" && go mod tidy >/dev/null 2>&1 || true; cd "$d" && gobuild -o "$out/bin/etcd.tmp" go.etcd.io/etcd/server/v3)
	mv "$out/bin/etcd.tmp" "$out/bin/etcd"
}

build_kube() {
	local missing=0 b
	for b in kube-apiserver kube-controller-manager kube-scheduler kubectl; do [ -x "$out/bin/$b" ] || missing=1; done
	[ $missing = 0 ] && return
	log "kubernetes $KUBE_VERSION (staging modules at $STAGING_VERSION)"
	local d=$out/src/kube
	mkdir -p "$d"
	if [ ! -f "$d/go.sum" ]; then
		(cd "$d" && go mod download -json "k8s.io/kubernetes@$KUBE_VERSION" >/dev/null)
		local K; K=$(go env GOMODCACHE)/k8s.io/kubernetes@$KUBE_VERSION
		{
			printf 'module wrap/kube\n\ngo 1.26\n\nrequire k8s.io/kubernetes %s\n\nreplace (\n' "$KUBE_VERSION"
			grep -E '^\s+k8s.io/[a-z0-9-]+ => ./staging' "$K/go.mod" | awk -v v="$STAGING_VERSION" '{print "\t"$1" => "$1" "v}'
			printf ')\n'
		} >"$d/go.mod"
		cat >"$d/tools.go" <<'GO'
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubectl/pkg/cmd"
)
GO
		(cd "$d" && go mod tidy)
	fi
	for b in kube-apiserver kube-controller-manager kube-scheduler; do
		[ -x "$out/bin/$b" ] && continue
		log "  $b"
		(cd "$d" && gobuild -o "$out/bin/$b.tmp" "k8s.io/kubernetes/cmd/$b")
		mv "$out/bin/$b.tmp" "$out/bin/$b"
	done
	if [ ! -x "$out/bin/kubectl" ]; then
		log "  kubectl"
		(cd "$d" && gobuild -o "$out/bin/kubectl.tmp" k8s.io/kubernetes/cmd/kubectl)
		mv "$out/bin/kubectl.tmp" "$out/bin/kubectl"
	fi
}

build_kwok() {
	[ -x "$out/bin/kwok" ] && [ -f "$out/data/kwok-stages.yaml" ] && return
	log "kwok $KWOK_VERSION"
	local d; d=$(wrapper kwok sigs.k8s.io/kwok "$KWOK_VERSION")
	printf '//go:build tools\n\npackage tools\n\nimport _ "sigs.k8s.io/kwok/cmd/kwok"\n' >"$d/tools.go"
	(cd "$d" && go mod tidy >/dev/null 2>&1 || true; cd "$d" && gobuild -o "$out/bin/kwok.tmp" sigs.k8s.io/kwok/cmd/kwok)
	mv "$out/bin/kwok.tmp" "$out/bin/kwok"
	local M; M=$(cd "$d" && go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)
	: >"$out/data/kwok-crds.yaml"
	for f in "$M"/kustomize/crd/bases/*.yaml; do printf -- '---\n' >>"$out/data/kwok-crds.yaml"; cat "$f" >>"$out/data/kwok-crds.yaml"; done
	: >"$out/data/kwok-stages.yaml"
	for f in node/fast/node-initialize.yaml pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml; do
		printf -- '---\n' >>"$out/data/kwok-stages.yaml"; cat "$M/kustomize/stage/$f" >>"$out/data/kwok-stages.yaml"
	done
}

build_istiod() {
	[ -x "$out/bin/pilot-discovery" ] && [ -f "$out/data/istio-crds.yaml" ] && return
	log "istiod (pilot-discovery) istio.io/istio $ISTIO_VERSION, CRDs istio.io/api $ISTIO_API_VERSION"
	local d; d=$(wrapper istio istio.io/istio "$ISTIO_VERSION")
	printf '//go:build tools\n\npackage tools\n\nimport _ "istio.io/istio/pilot/cmd/pilot-discovery"\n' >"$d/tools.go"
	if [ ! -x "$out/bin/pilot-discovery" ]; then
		(cd "$d" && go mod tidy >/dev/null 2>&1 || true; cd "$d" && gobuild -o "$out/bin/pilot-discovery.tmp" istio.io/istio/pilot/cmd/pilot-discovery)
		mv "$out/bin/pilot-discovery.tmp" "$out/bin/pilot-discovery"
	fi
	local A; A=$(cd "$d" && go mod download -json "istio.io/api@$ISTIO_API_VERSION" | sed -n 's/^\s*"Dir": "\(.*\)",$/\1/p')
	cp "$A/kubernetes/customresourcedefinitions.gen.yaml" "$out/data/istio-crds.yaml"
}

# Gateway API standard-channel CRDs (and their safe-upgrades admission policy), from the module
# cache: the sigs.k8s.io/gateway-api version that istio.io/istio@$ISTIO_VERSION requires (v1.6.0),
# so the key's ISTIO_VERSION already decides it. A warm cache of the same key gets the file added.
build_gateway_crds() {
	[ -f "$out/data/gateway-api-crds.yaml" ] && return
	local d; d=$(wrapper istio istio.io/istio "$ISTIO_VERSION")
	local v dir
	read -r v dir < <(cd "$d" && go list -m -f '{{.Version}} {{.Dir}}' sigs.k8s.io/gateway-api)
	if [ -z "$dir" ] || [ ! -d "$dir/config/crd/standard" ]; then
		(cd "$d" && go mod download sigs.k8s.io/gateway-api)
		read -r v dir < <(cd "$d" && go list -m -f '{{.Version}} {{.Dir}}' sigs.k8s.io/gateway-api)
	fi
	log "Gateway API $v standard CRDs (the version istio.io/istio $ISTIO_VERSION requires)"
	: >"$out/data/gateway-api-crds.yaml.tmp"
	for f in "$dir"/config/crd/standard/*.yaml; do
		printf -- '---\n' >>"$out/data/gateway-api-crds.yaml.tmp"; cat "$f" >>"$out/data/gateway-api-crds.yaml.tmp"
	done
	mv "$out/data/gateway-api-crds.yaml.tmp" "$out/data/gateway-api-crds.yaml"
}

build_fortio() {
	[ -x "$out/bin/fortio" ] && return
	log "fortio CLI $FORTIO_CLI_VERSION"
	GOBIN=$out/bin.tmp nice -n 10 go install "fortio.org/fortio@$FORTIO_CLI_VERSION"
	mv "$out/bin.tmp/fortio" "$out/bin/fortio"; rmdir "$out/bin.tmp"
}

# The stand-in is keyed by its sources (tests excluded), not by a version.
standin_src=$here/standin
standin_hash=$(cd "$standin_src" && find . -type f \( -name '*.go' -o -name go.mod -o -name go.sum \) ! -name '*_test.go' |
	LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-12)
standin_dir=$out/standin/$standin_hash

build_standin() {
	[ -x "$standin_dir/pilot-agent" ] && return
	log "Envoy admin stand-in (sandbox/standin, sources $standin_hash)"
	mkdir -p "$standin_dir"
	(cd "$standin_src" && gobuild -o "$standin_dir/pilot-agent.tmp" .)
	mv "$standin_dir/pilot-agent.tmp" "$standin_dir/pilot-agent"
}

only=${1:-all}
case $only in
all) build_etcd; build_kwok; build_fortio; build_kube; build_istiod; build_gateway_crds; build_standin ;;
etcd | kwok | fortio | kube | istiod | gateway_crds | standin) "build_$only" ;;
*) echo "usage: $0 [all|etcd|kwok|fortio|kube|istiod|gateway_crds|standin]" >&2; exit 2 ;;
esac
if [ "$only" = all ]; then touch "$out/complete"; fi
echo "standin $standin_dir/pilot-agent"
echo "$out"
