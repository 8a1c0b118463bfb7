package schema

import (
	"context"
	"time"
)

// Sleep is the sleep step: a pause.
type Sleep struct {
	Duration
}

var sleepKind = Kind{
	Usage: "wait for a duration",
	New:   func() Params { return new(Sleep) },
}

// Check: the schema checks the duration.
func (p *Sleep) Check(c Checker) {}

// Plan: exactly its duration.
func (p *Sleep) Plan() Plan { return Plan{Duration: p.D(), Exact: true, Timeout: TimeoutNone} }

// Needs nothing.
func (p *Sleep) Needs() Need { return Need{} }

// Mutates nothing.
func (p *Sleep) Mutates(func(string) string) Mutation { return Mutation{} }

// Summary is the duration.
func (p *Sleep) Summary() string {
	if p.D() == 0 {
		return "0s"
	}
	return time.Duration(p.Duration).String()
}

// Run sleeps.
func (p *Sleep) Run(ctx context.Context, rt Runtime) error { return rt.Sleep(ctx, p.D()) }
