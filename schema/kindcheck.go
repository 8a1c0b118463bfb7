package schema

import (
	"fmt"
	"iter"
	"strings"

	"labrun.dev/labrun/internal/kubeshape"
)

// checkLookupKind checks the kind and apiVersion a step looks objects up by (a get's, a
// delete's by kind, a wait condition's; prefix is the fields' path below the step, "" or
// "condition."), as far as vet knows them without a cluster: an apiVersion Kubernetes removed,
// an Istio group's kind or version Istio does not serve, and an Istio kind's kubectl short
// name (dr, vs, se, gw, pa), which the run does not look up: the step would fail when it
// runs, after the steps before it changed the cluster. A built-in kind's short name (po,
// deploy, svc, cm) and a resource name (pods, destinationrules) are looked up as kubectl
// does, and pass.
func checkLookupKind(c Checker, prefix, kind, apiVersion string) {
	kf, af := prefix+"kind", prefix+"apiVersion"
	if kind == "" || c.Templated(kf) || c.Templated(af) || strings.Contains(kind+apiVersion, "${") {
		return
	}
	// A version Kubernetes removed errs when the step runs (no kind X in it): say so now,
	// with the version that replaced it, rather than check no field of it.
	if msg := kubeshape.Removed(apiVersion, kind); msg != "" {
		c.Errorf(af, "%s", msg)
		return
	}
	if field, msg := kubeshape.IstioServes(apiVersion, kind); msg != "" {
		// A kind or version a newer Istio may serve is the cluster's to judge, where the
		// scenario meets it first (ClusterJudge); a short name is no kind in any release.
		if _, short := kubeshape.IstioShortKind(kind); short != "" || !leaveToCluster(c, prefix+field, false, &IstioCheck{Kind: kind, APIVersion: apiVersion, Msg: msg}) {
			c.Errorf(prefix+field, "%s", msg)
		}
		return
	}
	if apiVersion == "" && kubeshape.ShortKind(kind) == "" {
		if group, k := kubeshape.IstioShortKind(kind); k != "" {
			c.ValueErrorf(kf, "kind %q is kubectl's short name for %s (%s), which labrun does not look up (it takes a built-in kind's short name, and a kind's resource name): the API server serves no kind %s, so the step fails when it runs; expected kind: %q", kind, k, group, kind, k)
		}
	}
}

// checkDeletedObjects checks the kind and apiVersion of each object a delete names, as an
// apply's (ObjectKindProblem): the delete looks the kind up exactly as written, so a kind the
// cluster does not serve deletes nothing, and the step fails, or with ignoreNotFound passes
// having deleted nothing. Their other fields are not the delete's concern.
func checkDeletedObjects(c Checker, objs []Object) {
	for field, o := range kindedObjects(c, objs) {
		if f, msg, istio := ObjectKindProblem(o); msg != "" {
			msg += "; a delete of it deletes nothing: the step fails, or passes with ignoreNotFound"
			if istio {
				kind, _ := o["kind"].(string)
				apiVersion, _ := o["apiVersion"].(string)
				if leaveToCluster(c, field+"."+f, true, &IstioCheck{Kind: kind, APIVersion: apiVersion, Msg: msg}) {
					continue
				}
			}
			c.ValueErrorf(field+"."+f, "%s", msg)
		}
	}
}

// kindedObjects yields, with its field (objects.N), each object of objs whose kind vet can
// judge now: none in a step written to fail (what the API server refuses is what it tests),
// not one whose kind checkObjects refuses, nor one whose kind or apiVersion is templated
// (known when the step runs).
func kindedObjects(c Checker, objs []Object) iter.Seq2[string, Object] {
	return func(yield func(string, Object) bool) {
		if c.ExpectsFailure() {
			return
		}
		for i, o := range objs {
			field := fmt.Sprintf("objects.%d", i)
			if k, ok := o["kind"].(string); !ok || strings.ContainsAny(k, " /.") {
				continue // said by checkObjects
			}
			if c.Templated(field+".kind") || c.Templated(field+".apiVersion") {
				continue // known when the step runs
			}
			if !yield(field, o) {
				return
			}
		}
	}
}
