package schema

import (
	"encoding/json"
	"fmt"
)

// Repeat is the repeat block: its steps run again and again until an expression is true.
type Repeat struct {
	block
	Until    string   `json:"until"`
	Max      int      `json:"max,omitempty"`
	Interval Duration `json:"interval,omitempty"`
}

// DefaultRepeatMax is the rounds of a repeat that sets no max.
const DefaultRepeatMax = 10

var repeatKind = Kind{
	Usage: "run steps until an expression holds",
	New:   func() Params { return new(Repeat) },
}

// UnmarshalJSON reads until, max and interval; the loader decodes the steps.
func (p *Repeat) UnmarshalJSON(b []byte) error {
	var v struct {
		Until    string   `json:"until"`
		Max      int      `json:"max,omitempty"`
		Interval Duration `json:"interval,omitempty"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	p.Until, p.Max, p.Interval = v.Until, v.Max, v.Interval
	if p.Max == 0 {
		p.Max = DefaultRepeatMax
	}
	return nil
}

// ChildField: the steps are under steps.
func (p *Repeat) ChildField() string { return "steps" }

// ExprField is until.
func (p *Repeat) ExprField() (string, bool) { return "until", true }

// Summary: the condition and the limit.
func (p *Repeat) Summary() string { return fmt.Sprintf("until %s (max %d)", p.Until, p.Max) }
