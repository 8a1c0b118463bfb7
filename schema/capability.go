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

// Driver is one of a target's drivers: a field of Target that a kind's Run calls.
type Driver string

// The drivers, one per field of Target.
const (
	DriverCluster   Driver = "cluster"
	DriverExec      Driver = "exec"
	DriverLoad      Driver = "load"
	DriverStats     Driver = "stats"
	DriverLogs      Driver = "logs"
	DriverDNS       Driver = "dns"
	DriverProcesses Driver = "processes"
)

// Drivers is a set of drivers.
type Drivers map[Driver]bool

// Need is what a step needs of its target: a capability (what the target can do, in the
// scenario's terms) and the driver its Run calls for it. Need{} is nothing.
type Need struct {
	Cap    Capability
	Driver Driver
}

// TargetSpec is what a target can run, known before it is built: its capabilities and the
// drivers it has.
type TargetSpec struct {
	Caps    Caps
	Drivers Drivers
}

// BuiltinTarget returns what a built-in target can run, given the scenario's local world; ok
// is false for a target labrun does not know (a test's own). The targets the drivers build
// (driver/local, driver/kube composed with driver/local by cmd/labrun) are tested to match.
func BuiltinTarget(target string, local *Local) (spec TargetSpec, ok bool) {
	switch target {
	case "local":
		s := TargetSpec{
			Caps:    Caps{CapHost: true, CapProcesses: true, CapBackends: true},
			Drivers: Drivers{DriverExec: true, DriverLoad: true, DriverStats: true, DriverLogs: true, DriverProcesses: true},
		}
		if local != nil && local.DNS != nil {
			s.Caps[CapLocalDNS], s.Drivers[DriverDNS] = true, true
		}
		return s, true
	case "kube":
		// This machine too: commands, processes, load and HTTP reads from here run beside
		// the cluster's drivers (cmd/labrun composes them, see driver/compose).
		return TargetSpec{
			Caps: Caps{CapCluster: true, CapPods: true, CapHostsFile: true, CapHost: true, CapProcesses: true},
			Drivers: Drivers{DriverCluster: true, DriverExec: true, DriverLoad: true, DriverStats: true,
				DriverLogs: true, DriverDNS: true, DriverProcesses: true},
		}, true
	}
	return TargetSpec{}, false
}

// Drivers returns the drivers the target has: its fields that are set.
func (t *Target) Drivers() Drivers {
	d := Drivers{}
	for drv, set := range map[Driver]bool{
		DriverCluster: t.Cluster != nil, DriverExec: t.Exec != nil, DriverLoad: t.Load != nil,
		DriverStats: t.Stats != nil, DriverLogs: t.Logs != nil, DriverDNS: t.DNS != nil,
		DriverProcesses: t.Processes != nil,
	} {
		if set {
			d[drv] = true
		}
	}
	return d
}

// Unsupported says why a target that can run spec cannot run a step of kind with params p,
// or "".
func Unsupported(kind string, p Params, target string, spec TargetSpec) string {
	need := p.Needs()
	if need.Cap != "" && !spec.Caps[need.Cap] {
		return unsupportedCap(kind, need.Cap, target)
	}
	if need.Driver != "" && !spec.Drivers[need.Driver] {
		return MissingDriver(kind, need, target)
	}
	return ""
}

// MissingDriver says that a target has no driver for a step that needs it.
func MissingDriver(kind string, need Need, target string) string {
	what := "it"
	if need.Cap != "" {
		what = capabilityText[need.Cap]
	}
	return fmt.Sprintf("%s step needs the %s driver (for %s), which the %s target does not have", A(kind), need.Driver, what, target)
}

// unsupportedCap says why a target without capability need cannot run a step of kind.
func unsupportedCap(kind string, need Capability, target string) string {
	msg := fmt.Sprintf("%s step needs %s, which the %s target does not have", A(kind), capabilityText[need], target)
	switch need {
	case CapLocalDNS:
		if target == "kube" && kind == "dns" {
			// On a cluster the records live in a CoreDNS hosts file, which dns.server names.
			msg += `: on kube a dns step writes a CoreDNS hosts file: give server: {selector: "…", namespace: "…"} (the pod whose container writes it)`
		} else {
			msg += `: declare local: dns: {zone: "lab.internal"}`
		}
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
