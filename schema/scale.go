package schema

import (
	"context"
	"fmt"
)

// Scale is the scale step: a Deployment's replicas.
type Scale struct {
	Deployment string `json:"deployment"`
	Replicas   int    `json:"replicas"`
	Namespace  string `json:"namespace,omitempty"`
	Wait       *bool  `json:"wait,omitempty"`
}

var scaleKind = Kind{
	Usage: "set a Deployment's replicas and wait for the rollout",
	New:   func() Params { return new(Scale) },
}

// Check: the schema bounds replicas.
func (p *Scale) Check(c Checker) {}

// Plan: a scale waits for the rollout.
func (p *Scale) Plan() Plan { return Plan{Timeout: TimeoutWait} }

// Needs the Kubernetes API.
func (p *Scale) Needs() Need { return Need{CapCluster, DriverCluster} }

// Mutates the Deployment's namespace.
func (p *Scale) Mutates(ns func(string) string) Mutation {
	return Mutation{Namespaces: []string{ns(p.Namespace)}}
}

// Summary names the Deployment and the replicas.
func (p *Scale) Summary() string {
	return fmt.Sprintf("deployment %s → %d", p.Deployment, p.Replicas)
}

// Run scales and, unless wait is false, waits for the rollout.
func (p *Scale) Run(ctx context.Context, rt Runtime) error {
	rt.SawObjects([]ObjectRef{{APIVersion: "apps/v1", Kind: "Deployment", Namespace: rt.Namespace(p.Namespace), Name: p.Deployment}})
	return rt.Target().Cluster.Scale(ctx, rt.Namespace(p.Namespace), p.Deployment, p.Replicas, Bool(p.Wait, true))
}
