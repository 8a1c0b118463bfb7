package fakes

import (
	"context"

	"labrun.dev/labrun/schema"
)

// Probe is a step kind for tests only, never in schema.Kinds unless a test registers it
// (RegisterProbe). It needs this machine (CapHost) and calls the target's DNS driver for it,
// as a new kind could whose capability a target has without the driver behind it. With via,
// what it needs is decided when the step starts (via: "dns" needs the DNS driver, anything else
// nothing); with panic, its Run panics as a bug would.
type Probe struct {
	Via   string `json:"via,omitempty"`
	Panic bool   `json:"panic,omitempty"`
}

// ProbeCUE declares the probe kind's field of #Step: a file of the schema package (e.g.
// cue.mod/pkg/labrun.dev/schema/probe.cue in a test's module).
const ProbeCUE = "package schema\n\n#Step: probe?: {via?: string, panic?: bool}\n"

// RegisterProbe adds the probe kind to the registry; the returned func removes it.
func RegisterProbe() (unregister func()) {
	schema.Kinds["probe"] = schema.Kind{Usage: "a test-only kind", New: func() schema.Params { return new(Probe) }}
	return func() { delete(schema.Kinds, "probe") }
}

func (p *Probe) Check(schema.Checker)                        {}
func (p *Probe) Plan() schema.Plan                           { return schema.Plan{} }
func (p *Probe) Mutates(func(string) string) schema.Mutation { return schema.Mutation{} }
func (p *Probe) Summary() string                             { return "probe" }

// Needs the DNS driver, for this machine; nothing when via names something else.
func (p *Probe) Needs() schema.Need {
	if p.Via != "" && p.Via != "dns" {
		return schema.Need{}
	}
	return schema.Need{Cap: schema.CapHost, Driver: schema.DriverDNS}
}

// Run sets a record through the DNS driver, or panics.
func (p *Probe) Run(ctx context.Context, rt schema.Runtime) error {
	if p.Panic {
		var counts map[string]int
		counts["probe"]++ // a write to a nil map: the kind of bug a new kind ships with
	}
	return rt.Target().DNS.SetRecords(ctx, schema.DNS{Host: "probe", Addresses: []string{"127.0.0.1"}})
}
