package dsl

import "labrun.dev/labrun/schema"

// IstioCheck is a problem of an Istio kind that a load left to the cluster's CRD
// (Options.IstioByCluster), where it is written.
type IstioCheck struct {
	schema.IstioCheck
	Pos Pos
	// Field is the field's path, as an Error's: scenario.step path.kind.field.
	Field string
	// Step is the step that writes it: the cluster it runs on judges it.
	Step *Step
	// Prefix is what a message about it begins with before the field's kind: which file's
	// object it is ("apply.files (lab.yaml, document 1): spec.x: "), "" for one written in CUE.
	Prefix string
}

// judgedByCluster says the load leaves Istio kinds to the cluster's CRDs (schema.ClusterJudge).
func (d *decoder) judgedByCluster() bool { return d.l.opts.ForRun || d.l.opts.IstioByCluster }
