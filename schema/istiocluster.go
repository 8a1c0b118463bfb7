package schema

// IstioCheck is a problem vet finds, by Istio's CRDs of one release (kubeshape.IstioAPIVersion),
// in an Istio kind's object or in the kind and apiVersion a step names, that a newer Istio may
// not have: a field, a value, a kind or a version the newer one serves. Where the scenario
// meets its cluster before its first step (vet --server, a run), the cluster's CRD judges it
// instead (ClusterJudge); elsewhere it is an error that says how to ask the cluster
// (kubeshape.Newer).
type IstioCheck struct {
	Kind, APIVersion string
	// Object is the whole object an apply writes, whose field at Path is the problem; nil when
	// the problem is the kind or apiVersion (whether the cluster serves the kind in that
	// version).
	Object Object
	Path   []string
	// Partial says Object is a partial object a wait matches (of its matchFiles or
	// absentFiles), checked as a match is, not as an object written.
	Partial bool
	// Msg is the problem as Istio's CRDs of kubeshape.IstioAPIVersion have it: what is said
	// where the cluster cannot judge it (its CRD cannot be read).
	Msg string
}

// ClusterJudge is a Checker whose scenario meets its cluster before its first step (the
// loads of vet --server and of a run): an Istio kind's fields, kinds and versions are then
// its cluster's CRDs' to judge, not those of the Istio release vet knows.
type ClusterJudge interface {
	// JudgedByCluster reports whether the cluster's CRDs judge Istio kinds.
	JudgedByCluster() bool
	// LeaveToCluster records c, a problem at field (value: at its value), for the cluster's
	// CRD to judge.
	LeaveToCluster(field string, value bool, c IstioCheck)
}

// judgedByCluster reports whether c's scenario leaves Istio kinds to its cluster's CRDs.
func judgedByCluster(c Checker) bool {
	j, ok := c.(ClusterJudge)
	return ok && j.JudgedByCluster()
}

// leaveToCluster records ic, a problem at field, for the cluster's CRD to judge, where c's
// scenario leaves Istio kinds to it; false when not (the problem is an error now).
func leaveToCluster(c Checker, field string, value bool, ic *IstioCheck) bool {
	if ic == nil || !judgedByCluster(c) {
		return false
	}
	c.(ClusterJudge).LeaveToCluster(field, value, *ic)
	return true
}
