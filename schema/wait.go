package schema

import (
	"context"
	"fmt"
	"time"
)

// Wait is the wait step: until a rollout is ready, a condition holds, or an expression is true.
type Wait struct {
	Rollout   string     `json:"rollout,omitempty"`
	Condition *Condition `json:"condition,omitempty"`
	Until     string     `json:"until,omitempty"`
	Interval  Duration   `json:"interval,omitempty"`
	Namespace string     `json:"namespace,omitempty"`
}

// Condition is a status condition of an object.
type Condition struct {
	Kind       string `json:"kind"`
	APIVersion string `json:"apiVersion,omitempty"`
	Name       string `json:"name,omitempty"`
	Selector   string `json:"selector,omitempty"`
	Type       string `json:"type"`
	Status     string `json:"status,omitempty"`
}

var waitKind = Kind{
	Usage:  "wait for a rollout, a condition or an expression",
	New:    func() Params { return new(Wait) },
	Result: ResultNone,
}

// Check needs exactly one thing to wait for.
func (p *Wait) Check(c Checker) {
	c.ExactlyOne("rollout", "condition", "until")
	if p.Condition != nil && p.Condition.Name == "" && p.Condition.Selector == "" {
		c.Errorf("condition", "condition needs name or selector")
	}
	if p.Condition != nil && p.Condition.Name != "" && p.Condition.Selector != "" {
		c.Errorf("condition", "condition takes name or selector, not both")
	}
}

// ExprField is until.
func (p *Wait) ExprField() (string, bool) { return "until", p.Until != "" }

// Plan: a wait lasts until what it waits for holds.
func (p *Wait) Plan() Plan { return Plan{Timeout: TimeoutWait} }

// Needs the Kubernetes API for a rollout or a condition.
func (p *Wait) Needs() Capability {
	if p.Until != "" {
		return ""
	}
	return CapCluster
}

// Mutates nothing.
func (p *Wait) Mutates(func(string) string) Mutation { return Mutation{} }

// Summary says what is awaited.
func (p *Wait) Summary() string {
	switch {
	case p.Rollout != "":
		return "rollout of " + p.Rollout
	case p.Condition != nil:
		return fmt.Sprintf("%s %s%s %s=%s", p.Condition.Kind, p.Condition.Name, p.Condition.Selector, p.Condition.Type, or(p.Condition.Status, "True"))
	}
	return "until " + p.Until
}

// Run polls until the wait is over.
func (p *Wait) Run(ctx context.Context, rt Runtime) error {
	switch {
	case p.Until != "":
		return rt.WaitUntil(ctx, or(p.Interval.D(), time.Second))
	case p.Rollout != "":
		return rt.Target().Cluster.WaitRollout(ctx, rt.Namespace(p.Namespace), p.Rollout)
	default:
		return rt.Target().Cluster.WaitCondition(ctx, rt.Namespace(p.Namespace), *p.Condition, or(p.Interval.D(), 500*time.Millisecond))
	}
}
