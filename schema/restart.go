package schema

import "context"

// Restart is the restart step: a rollout restart of a Deployment.
type Restart struct {
	Deployment string `json:"deployment"`
	Namespace  string `json:"namespace,omitempty"`
	Wait       *bool  `json:"wait,omitempty"`
}

var restartKind = Kind{
	Usage: "rollout restart a Deployment and wait for it",
	New:   func() Params { return new(Restart) },
}

// Check: nothing beyond the schema.
func (p *Restart) Check(c Checker) {}

// Plan: a restart waits for the rollout.
func (p *Restart) Plan() Plan { return Plan{Timeout: TimeoutWait} }

// Needs the Kubernetes API.
func (p *Restart) Needs() Need { return Need{CapCluster, DriverCluster} }

// Mutates the Deployment's namespace.
func (p *Restart) Mutates(ns func(string) string) Mutation {
	return Mutation{Namespaces: []string{ns(p.Namespace)}}
}

// Summary names the Deployment.
func (p *Restart) Summary() string { return "deployment " + p.Deployment }

// Run restarts and, unless wait is false, waits for the rollout.
func (p *Restart) Run(ctx context.Context, rt Runtime) error {
	rt.SawObjects([]ObjectRef{{APIVersion: "apps/v1", Kind: "Deployment", Namespace: rt.Namespace(p.Namespace), Name: p.Deployment}})
	return rt.Target().Cluster.Restart(ctx, rt.Namespace(p.Namespace), p.Deployment, Bool(p.Wait, true))
}
