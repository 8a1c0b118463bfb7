package schema

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Config is the config step: part of an Envoy config_dump.
type Config struct {
	Envoy    *PodRef `json:"envoy,omitempty"`
	Admin    string  `json:"admin,omitempty"`
	Cluster  string  `json:"cluster,omitempty"`
	Listener string  `json:"listener,omitempty"`
	Route    string  `json:"route,omitempty"`
	// Names is "clusters", "listeners" or "routes": record the list of their names.
	Names string `json:"names,omitempty"`
	Path  string `json:"path,omitempty"`
	// Durations is "seconds" to read protobuf Durations ("0.500s") as numbers (0.5).
	Durations string `json:"durations,omitempty"`
	// Until is polled after every read; the step ends when it holds.
	Until    string   `json:"until,omitempty"`
	Interval Duration `json:"interval,omitempty"`
}

// DurationsSeconds is the durations value that reads protobuf Durations as seconds.
const DurationsSeconds = "seconds"

var configKind = Kind{
	Usage: "record part of an Envoy config_dump",
	New:   func() Params { return new(Config) },
}

// Check: one Envoy, one resource (or its kind's names); until, interval and path where they
// mean something.
func (p *Config) Check(c Checker) {
	src := c.ExactlyOne("envoy", "admin")
	n := 0
	for _, x := range []string{p.Cluster, p.Listener, p.Route, p.Names} {
		if x != "" {
			n++
		}
	}
	switch {
	case n == 0 && p.Until != "":
		c.Errorf("until", "until reads the config again until it holds, but the step selects nothing to read: give cluster, listener, route or names")
	case n != 1:
		c.Errorf("", "config needs exactly one of cluster, listener, route, names")
	}
	if p.Names != "" && p.Path != "" {
		c.Errorf("path", "names records a list of %s names, which has no path %q: drop path, or read one resource with %s: \"<name>\"",
			strings.TrimSuffix(p.Names, "s"), p.Path, strings.TrimSuffix(p.Names, "s"))
	}
	if p.Names == "" {
		checkDottedPath(c, "path", p.Path)
	}
	if c.Has("interval") && p.Until == "" {
		c.Errorf("interval", "interval is the pause between reads of until, and the step has no until")
	} else {
		checkNotZero(c, "interval", p.Interval, defaultUntilInterval.String())
	}
	if src == "admin" && !c.Templated("admin") {
		if err := checkHTTPURL(p.Admin); err != nil {
			c.Errorf("admin", "%v", err)
		}
	}
	if p.Envoy != nil && p.Envoy.Pod == "" && p.Envoy.Selector == "" {
		c.Errorf("envoy", "envoy needs pod or selector: the pod whose sidecar to read")
	}
}

// Result: the selected part of the config_dump, as JSON-like data (its shape is Envoy's, not
// yet typed); with until, live: the step's own until reads it after each read.
func (p *Config) Result(c ResultContext) *Type { return AnyType }

// ExprField is until.
func (p *Config) ExprField() (string, bool) { return "until", p.Until != "" }

// PollInterval: with until, the step reads again every interval.
func (p *Config) PollInterval() (time.Duration, string) {
	if p.Until == "" {
		return 0, ""
	}
	return or(p.Interval.D(), defaultUntilInterval), "interval"
}

// ReadsOwnResult: until judges what the step has just read.
func (p *Config) ReadsOwnResult() bool { return p.Until != "" }

// SelfReader is a kind whose expression reads the step's own result while it runs (config's
// until, after each read).
type SelfReader interface {
	ReadsOwnResult() bool
}

// Plan: one read; with until, as long as a wait.
func (p *Config) Plan() Plan {
	if p.Until != "" {
		return Plan{Timeout: TimeoutWait}
	}
	return Plan{}
}

// Needs pods for a sidecar, this machine for an admin URL.
func (p *Config) Needs() Need {
	if p.Envoy != nil {
		return Need{CapPods, DriverStats}
	}
	return Need{CapHost, DriverStats}
}

// Mutates nothing.
func (p *Config) Mutates(func(string) string) Mutation { return Mutation{} }

// Summary names the resource and the path.
func (p *Config) Summary() string {
	what := or(p.Cluster, or(p.Listener, p.Route))
	if p.Names != "" {
		what = p.Names + " names"
	}
	s := strings.TrimSpace(what + " " + p.Path)
	if p.Until != "" {
		s += " until " + p.Until
	}
	return s
}

// Run reads the config dump and records the selected value; with until, again every interval
// until the expression holds, keeping the last read's value and artifacts.
func (p *Config) Run(ctx context.Context, rt Runtime) error {
	q := *p
	if q.Envoy != nil {
		e := *q.Envoy
		e.Namespace = rt.Namespace(e.Namespace)
		q.Envoy = &e
	}
	read := func() ([]Artifact, error) {
		res, err := rt.Target().Stats.Config(ctx, q)
		if err == nil {
			rt.Record(res.Value)
		}
		return res.Artifacts, err
	}
	if p.Until == "" {
		arts, err := read()
		for _, a := range arts {
			rt.Artifact(a.Name, a.Data)
		}
		return err
	}
	interval, _ := p.PollInterval()
	var last error
	var arts []Artifact
	defer func() {
		for _, a := range arts {
			rt.Artifact(a.Name, a.Data)
		}
	}()
	for reads := 1; ; reads++ {
		got, err := read()
		if len(got) > 0 || err == nil { // a read cut short by the timeout keeps the one before
			arts = got
		}
		if err == nil {
			if err = rt.Judge(); err == nil {
				return nil
			}
		}
		if ctx.Err() == nil || last == nil {
			last = err
		}
		if serr := rt.Sleep(ctx, interval); serr != nil || ctx.Err() != nil {
			// The runner reports its own timeout in place of this error: the warning keeps why.
			err := fmt.Errorf("config until %s: %w after %d reads; last: %v", p.Until, context.Cause(ctx), reads, last)
			if IsFailure(last) {
				return &Unmet{Err: err} // read, and judged false to the end: the run fails
			}
			rt.Warn(fmt.Sprintf("until %s did not hold after %d reads; last: %v", p.Until, reads, last))
			return err
		}
	}
}
