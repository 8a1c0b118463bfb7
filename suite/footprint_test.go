package suite

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"labrun.dev/labrun/dsl"
)

const lab = `package lab

import "labrun.dev/schema"

_dr: {apiVersion: "networking.istio.io/v1", kind: "DestinationRule"}

fixed: schema.#Scenario & {
	target: "kube"
	namespaces: ["conn-lab", "istio-system"]
	systemNamespaces: ["istio-system"]
	steps: [{apply: objects: [
		_dr & {metadata: name: "backend", spec: host: "backend"},
		_dr & {metadata: name: "local", spec: {host: "other", exportTo: ["."]}},
		{apiVersion: "networking.istio.io/v1", kind: "ServiceEntry", metadata: name: "api",
			spec: {hosts: ["api.example.com"], ports: [{number: 80, name: "http", protocol: "HTTP"}], resolution: "DNS"}},
		{apiVersion: "networking.istio.io/v1", kind: "Sidecar", metadata: {name: "default", namespace: "istio-system"},
			spec: egress: [{hosts: ["./*"]}]},
	]}]
}

own: schema.#Scenario & {
	target: "kube"
	ephemeralNamespaces: ["app"]
	steps: [{apply: objects: [
		_dr & {metadata: name: "backend", spec: host: "backend"},
		_dr & {metadata: {name: "fq", namespace: "${ns.app}"}, spec: host: "backend.${ns.app}.svc.cluster.local"},
	]}]
}

// A mesh-wide DestinationRule in the root namespace, and a wildcard VirtualService.
wild: schema.#Scenario & {
	target: "kube"
	namespaces: ["istio-system"]
	systemNamespaces: ["istio-system"]
	ephemeralNamespaces: ["app"]
	steps: [{apply: objects: [
		_dr & {metadata: {name: "mtls", namespace: "istio-system"}, spec: {host: "*.local", trafficPolicy: tls: mode: "DISABLE"}},
		{apiVersion: "networking.istio.io/v1", kind: "VirtualService", metadata: {name: "all", namespace: "${ns.app}"},
			spec: {hosts: ["*"], http: [{route: [{destination: host: "x.${ns.app}.svc.cluster.local"}]}]}},
	]}]
}

local: schema.#Scenario & {
	local: backends: {a: {address: "127.0.0.2:8080"}, b: {}}
	steps: [{sleep: "1s"}]
}
`

func load(t *testing.T) map[string]*dsl.Scenario {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "lab.cue"), []byte(lab), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := dsl.Load([]string{filepath.Join(dir, "lab.cue")}, dsl.Options{AllowSystemNamespaces: true})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*dsl.Scenario{}
	for _, sc := range res.Scenarios {
		out[sc.Name] = sc
	}
	return out
}

func keys(rs []Resource) string {
	var out []string
	for _, r := range rs {
		k := r.Key
		if r.Shared {
			k += " (shared)"
		}
		out = append(out, k)
	}
	return strings.Join(out, "; ")
}

func TestFootprint(t *testing.T) {
	scs := load(t)
	for _, c := range []struct {
		scenario, target, want string
		leaks                  []string
	}{
		{"fixed", "kube", "host api.example.com; host backend.conn-lab.svc; mesh; namespace conn-lab; namespace istio-system", []string{
			"lab.cue:12:3: warning[mesh-wide]: DestinationRule backend configures backend.conn-lab.svc for every namespace (no exportTo)",
			"lab.cue:14:3: warning[mesh-wide]: ServiceEntry api adds api.example.com to the registry of every namespace (no exportTo)",
			"lab.cue:16:3: warning[mesh-wide]: Sidecar default in the root namespace istio-system applies to every proxy of the mesh",
		}},
		// The hosts of an ephemeral namespace are the run's own, whatever their exportTo.
		{"own", "kube", "mesh (shared)", nil},
		{"local", "local", "address 127.0.0.2:8080", nil},
		// probe p9 #04: a root-namespace DestinationRule for *.local is every run's policy
		// (it was "host *.local.svc", read as Service * of namespace local); "*" stays "*".
		{"wild", "kube", "host *; mesh; namespace istio-system", []string{
			"lab.cue:37:3: warning[mesh-wide]: DestinationRule mtls for *.local in the root namespace istio-system is the traffic policy of every Service of the mesh",
			"lab.cue:38:3: warning[mesh-wide]: VirtualService all configures * for every namespace (no exportTo)",
		}},
	} {
		res, leaks := Footprint(scs[c.scenario], c.target)
		if got := keys(res); got != c.want {
			t.Errorf("%s: resources %s, want %s", c.scenario, got, c.want)
		}
		if len(leaks) != len(c.leaks) {
			t.Errorf("%s: %d leaks, want %d: %v", c.scenario, len(leaks), len(c.leaks), leaks)
			continue
		}
		for i, l := range leaks {
			l.Pos = l.Pos.Rel(filepath.Dir(l.Pos.File))
			if !strings.HasPrefix(l.String(), c.leaks[i]) {
				t.Errorf("%s: leak %q, want it to start %q", c.scenario, l.String(), c.leaks[i])
			}
		}
	}
}
