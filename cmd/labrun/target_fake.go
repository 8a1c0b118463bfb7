//go:build labrun_fakes

package main

import (
	"context"

	"labrun.dev/labrun/driver/fakes"
	"labrun.dev/labrun/driver/kube"
	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/schema"
)

// This file exists only in binaries built with -tags labrun_fakes, for tests that run the
// real binary against in-memory fakes (the interrupt tests), set up from the environment as
// the scripts' fake target is (fakes.FromEnv): LABRUN_FAKE_MARKER names a file the fakes
// append every call to; LABRUN_FAKE_STEP_TIME is how long each fake call takes;
// LABRUN_FAKE_READY lists a selector's ready pods; LABRUN_FAKE_OBJECTS=1 keeps the objects applied
// and judges a wait's match or absent of them with the kube driver's matcher.
func init() {
	fakeTarget = func(p *process) {
		if p.Targets == nil {
			p.Targets = map[string]func(context.Context, *dsl.Scenario) (*schema.Target, error){}
		}
		p.Targets["fake"] = func(context.Context, *dsl.Scenario) (*schema.Target, error) {
			w := fakes.FromEnv(p.Getenv)
			w.Match = kube.PartialMatches
			return w.Target(), nil
		}
	}
}
