package schema

import (
	"fmt"
)

// Capability is something a step needs the target to do.
type Capability string

// The capabilities. A target has a set of them (Target.Caps); the loader knows the sets of
// the built-in targets (TargetCaps), so vet refuses a step the target cannot run, and the
// runner checks the same set again against the target it was given.
const (
	// CapCluster is the Kubernetes API (apply, delete, scale, restart, get, kill of pods).
	CapCluster Capability = "cluster"
	// CapPods is running inside pods: exec, load from a pod, a sidecar's Envoy admin, logs.
	CapPods Capability = "pods"
	// CapHost is this machine: commands, load from here, HTTP endpoints, files.
	CapHost Capability = "host"
	// CapProcesses is starting and stopping local processes.
	CapProcesses Capability = "processes"
	// CapBackends is the local target's echo backends.
	CapBackends Capability = "backends"
	// CapLocalDNS is the local target's lab DNS zone (local.dns).
	CapLocalDNS Capability = "local-dns"
	// CapHostsFile is a CoreDNS hosts file in a pod (dns.server).
	CapHostsFile Capability = "hosts-file"
)

// describe says what a capability is, for errors.
var capabilityText = map[Capability]string{
	CapCluster:   "a Kubernetes cluster",
	CapPods:      "pods to run in",
	CapHost:      "this machine (commands, load and HTTP reads from here)",
	CapProcesses: "local processes",
	CapBackends:  "local backends",
	CapLocalDNS:  "the local lab DNS zone (local.dns)",
	CapHostsFile: "a CoreDNS hosts file in a pod (dns.server)",
}

// Caps is a set of capabilities.
type Caps map[Capability]bool

// TargetCaps returns the capabilities of a built-in target, given the scenario's local world;
// ok is false for a target labrun does not know (a test's own).
func TargetCaps(target string, local *Local) (caps Caps, ok bool) {
	switch target {
	case "local":
		c := Caps{CapHost: true, CapProcesses: true, CapBackends: true}
		if local != nil && local.DNS != nil {
			c[CapLocalDNS] = true
		}
		return c, true
	case "kube":
		// This machine too: commands, processes, load and HTTP reads from here run beside
		// the cluster's drivers (cmd/labrun composes them, see driver/compose).
		return Caps{CapCluster: true, CapPods: true, CapHostsFile: true, CapHost: true, CapProcesses: true}, true
	}
	return nil, false
}

// Unsupported says why a target with caps cannot run a step of kind with params p, or "".
func Unsupported(kind string, p Params, target string, caps Caps) string {
	need := p.Needs()
	if need == "" || caps[need] {
		return ""
	}
	msg := fmt.Sprintf("%s step needs %s, which the %s target does not have", A(kind), capabilityText[need], target)
	switch need {
	case CapLocalDNS:
		msg += `: declare local: dns: {zone: "lab.internal"}`
	case CapCluster, CapPods, CapHostsFile:
		if target == "local" {
			msg += " (run it with --target kube, or set target: \"kube\")"
		}
	case CapBackends:
		if target == "kube" {
			msg += " (it runs on the local target)"
		}
	}
	return msg
}
