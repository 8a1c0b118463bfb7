package schema

import (
	"context"
	"encoding/json"
	"strings"
)

// Await is the await step: it joins background steps by name.
type Await struct {
	Names []string
}

var awaitKind = Kind{
	Usage: "join background steps",
	New:   func() Params { return new(Await) },
}

// UnmarshalJSON reads one name or a list of names.
func (p *Await) UnmarshalJSON(b []byte) error {
	var one string
	if json.Unmarshal(b, &one) == nil {
		p.Names = []string{one}
		return nil
	}
	return json.Unmarshal(b, &p.Names)
}

// Joins names the awaited steps.
func (p *Await) Joins() []string { return p.Names }

// Check: at least one name (the loader checks each).
func (p *Await) Check(c Checker) {
	if len(p.Names) == 0 {
		c.Errorf("", "await of nothing: expected the names of background steps")
	}
}

// Summary names the awaited steps.
func (p *Await) Summary() string { return "waits for " + strings.Join(p.Names, ", ") }

// Plan: an await lasts until the awaited steps end.
func (p *Await) Plan() Plan { return Plan{Timeout: TimeoutNone} }

// Needs nothing.
func (p *Await) Needs() Need { return Need{} }

// Mutates nothing.
func (p *Await) Mutates(func(string) string) Mutation { return Mutation{} }

// Run joins the steps through the scheduler.
func (p *Await) Run(ctx context.Context, rt Runtime) error { return rt.Block(ctx) }
