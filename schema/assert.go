package schema

import (
	"context"
	"encoding/json"
)

// Assert is the assert step: an expression checked now.
type Assert struct {
	// Expr is the expression's source.
	Expr string
}

var assertKind = Kind{
	Usage: "check an expression now",
	New:   func() Params { return new(Assert) },
}

// UnmarshalJSON reads the expression, written as the step's value.
func (p *Assert) UnmarshalJSON(b []byte) error { return json.Unmarshal(b, &p.Expr) }

// MarshalJSON writes the expression.
func (p *Assert) MarshalJSON() ([]byte, error) { return json.Marshal(p.Expr) }

// ExprField: the value itself is the expression.
func (p *Assert) ExprField() (string, bool) { return "", true }

// Check: the loader compiles the expression.
func (p *Assert) Check(c Checker) {}

// Plan: instant.
func (p *Assert) Plan() Plan { return Plan{Timeout: TimeoutNone} }

// Needs nothing.
func (p *Assert) Needs() Need { return Need{} }

// Mutates nothing.
func (p *Assert) Mutates(func(string) string) Mutation { return Mutation{} }

// Summary is the expression.
func (p *Assert) Summary() string { return p.Expr }

// Run judges the expression; false fails the run.
func (p *Assert) Run(ctx context.Context, rt Runtime) error { return rt.Judge() }
