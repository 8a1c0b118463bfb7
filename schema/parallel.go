package schema

import (
	"context"
	"fmt"
)

// Parallel is the parallel block: its steps run at the same time, each at its offset.
type Parallel struct{ block }

var parallelKind = Kind{
	Usage: "run steps at the same time, each at its offset",
	New:   func() Params { return new(Parallel) },
}

// block is what the block kinds share: children decoded by the loader, run by the scheduler.
type block struct {
	// Children is how many steps the block holds (set by the loader).
	Children int `json:"-"`
}

// UnmarshalJSON skips the children: the loader decodes them as steps.
func (b *block) UnmarshalJSON([]byte) error { return nil }

// ChildField: the value itself is the list of steps.
func (b *block) ChildField() string { return "" }

// Check: the loader checks the children.
func (b *block) Check(c Checker) {}

// Plan: the planner computes a block's span from its children.
func (b *block) Plan() Plan { return Plan{Timeout: TimeoutNone} }

// Needs nothing itself.
func (b *block) Needs() Need { return Need{} }

// Mutates nothing itself.
func (b *block) Mutates(func(string) string) Mutation { return Mutation{} }

// Summary counts the steps.
func (b *block) Summary() string { return fmt.Sprintf("%d steps", b.Children) }

// Run runs the block through the scheduler.
func (b *block) Run(ctx context.Context, rt Runtime) error { return rt.Block(ctx) }

// SetChildren records how many steps the block holds.
func (b *block) SetChildren(n int) { b.Children = n }
