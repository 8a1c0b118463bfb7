package schema

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"labrun.dev/labrun/envoy/xdstype"
)

// Config is the config step: part of an Envoy config_dump, read through Envoy's types.
type Config struct {
	Envoy    *PodRef `json:"envoy,omitempty"`
	Admin    string  `json:"admin,omitempty"`
	Cluster  string  `json:"cluster,omitempty"`
	Listener string  `json:"listener,omitempty"`
	Route    string  `json:"route,omitempty"`
	// Endpoints names the cluster whose endpoints (ClusterLoadAssignment) to read.
	Endpoints string `json:"endpoints,omitempty"`
	// Names is "clusters", "listeners" or "routes": record the list of their names.
	Names string `json:"names,omitempty"`
	Path  string `json:"path,omitempty"`
	// Durations is "seconds" to read protobuf Durations ("0.500s") as numbers (0.5).
	Durations string `json:"durations,omitempty"`
	// Until is polled after every read; the step ends when it holds.
	Until string `json:"until,omitempty"`
	// Reflects is an Istio object whose mark the resource must carry: the step reads until it
	// does.
	Reflects *Reflects `json:"reflects,omitempty"`
	Interval Duration  `json:"interval,omitempty"`
}

// Reflects names an Istio object: kind, name and namespace, or the object itself (its
// metadata).
type Reflects struct {
	Kind      string      `json:"kind"`
	Name      string      `json:"name,omitempty"`
	Namespace string      `json:"namespace,omitempty"`
	Metadata  *ObjectMeta `json:"metadata,omitempty"`
}

// ObjectMeta is the part of an object's metadata that names it.
type ObjectMeta struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
}

// Ref is the object the reflects names ("" namespace: the scenario's default).
func (r *Reflects) Ref() xdstype.ObjectRef {
	ref := xdstype.ObjectRef{Kind: r.Kind, Name: r.Name, Namespace: r.Namespace}
	if r.Metadata != nil {
		ref.Name = or(ref.Name, r.Metadata.Name)
		ref.Namespace = or(ref.Namespace, r.Metadata.Namespace)
	}
	return ref
}

// DurationsSeconds is the durations value that reads protobuf Durations as seconds.
const DurationsSeconds = "seconds"

var configKind = Kind{
	Usage: "record part of an Envoy config_dump, read through Envoy's types",
	New:   func() Params { return new(Config) },
}

// Result: the selected part of the config_dump, as JSON-like data (its shape is Envoy's, not
// yet typed); with until, live: the step's own until reads it after each read.
func (p *Config) Result(c ResultContext) *Type { return AnyType }

// ResourceKind is the Envoy type of what the step reads before its path (xdstype.Resource):
// "cluster", "listener", "route", "endpoints", "dump" (the whole config_dump), or "" for a
// list of names.
func (p *Config) ResourceKind() string {
	switch {
	case p.Names != "":
		return ""
	case p.Cluster != "":
		return "cluster"
	case p.Listener != "":
		return "listener"
	case p.Route != "":
		return "route"
	case p.Endpoints != "":
		return "endpoints"
	}
	return "dump"
}

// polls reports whether the step reads again until something holds.
func (p *Config) polls() bool { return p.Until != "" || p.Reflects != nil }

// Check: one Envoy, one resource (or its kind's names, or the whole dump for reflects); a
// path that Envoy's types have; a reflects on an object istiod marks, in a resource it marks;
// until, interval and path where they mean something.
func (p *Config) Check(c Checker) {
	src := c.ExactlyOne("envoy", "admin")
	n := 0
	for _, x := range []string{p.Cluster, p.Listener, p.Route, p.Endpoints, p.Names} {
		if x != "" {
			n++
		}
	}
	switch {
	case n == 0 && p.Reflects != nil:
		// reflects alone searches the whole dump
	case n == 0 && p.Until != "":
		c.Errorf("until", "until reads the config again until it holds, but the step selects nothing to read: give cluster, listener, route, endpoints or names")
	case n != 1:
		c.Errorf("", "config needs exactly one of cluster, listener, route, endpoints, names")
	}
	if p.Names != "" && p.Path != "" {
		c.Errorf("path", "names records a list of %s names, which has no path %q: drop path, or read one resource with %s: \"<name>\"",
			strings.TrimSuffix(p.Names, "s"), p.Path, strings.TrimSuffix(p.Names, "s"))
	}
	if p.Names == "" && p.Path != "" {
		checkDottedPath(c, "path", p.Path)
		p.checkPathType(c)
	}
	p.checkReflects(c, n)
	if c.Has("interval") && !p.polls() {
		c.Errorf("interval", "interval is the pause between reads of until or reflects, and the step has neither")
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

// checkPathType checks the path against the type of the resource read: every step a field of
// the type, every selection's field and value. A ${...} in the path is a hole (xdstype.Hole):
// what it names is checked when the step runs.
func (p *Config) checkPathType(c Checker) {
	t := xdstype.Resource(p.ResourceKind())
	if t == nil {
		return
	}
	path, offsets := p.Path, []int(nil)
	if c.Templated("path") {
		path, offsets = maskTemplates(p.Path)
	}
	_, err := t.At(path)
	var pe *xdstype.PathError
	if !errors.As(err, &pe) {
		return
	}
	at := pe.Offset
	if offsets != nil && at < len(offsets) {
		at = offsets[at]
	}
	c.ValueErrorAt("path", at, "path %q: %s (type %s, go-control-plane %s)", p.Path, pe.Msg, t.Msg.Short(), strings.Fields(xdstype.APIVersion)[1])
}

// maskTemplates replaces each ${...} of s (not $${, which stands for "${") by xdstype.Hole, and
// returns, for each byte offset of the result, the offset in s it comes from.
func maskTemplates(s string) (string, []int) {
	var b strings.Builder
	var offsets []int
	for i := 0; i < len(s); {
		if strings.HasPrefix(s[i:], "$${") {
			b.WriteString("$${")
			offsets = append(offsets, i, i+1, i+2)
			i += 3
			continue
		}
		if strings.HasPrefix(s[i:], "${") {
			depth, j := 0, i+1
			for ; j < len(s); j++ {
				if s[j] == '{' {
					depth++
				} else if s[j] == '}' {
					if depth--; depth == 0 {
						break
					}
				}
			}
			b.WriteString(xdstype.Hole)
			for range len(xdstype.Hole) {
				offsets = append(offsets, i)
			}
			i = j + 1
			continue
		}
		b.WriteByte(s[i])
		offsets = append(offsets, i)
		i++
	}
	return b.String(), append(offsets, len(s))
}

// unmarked says, for the Istio kinds that leave no mark in Envoy's config, how to wait for
// their effect instead.
var unmarked = map[string]string{
	"PeerAuthentication": "wait for its effect with until: a STRICT policy leaves virtualInbound no filter chain for plain text (listener: \"virtualInbound\", until: \"none(<name>.filter_chains, .filter_chain_match?.transport_protocol == \\\"raw_buffer\\\")\")",
	"ServiceEntry":       "each host and port becomes a cluster (\"outbound|<port>||<host>\"): read that cluster; a read that fails is tried again with until, e.g. until: \"<name> != nil\"",
	"Service":            "each port becomes a cluster (\"outbound|<port>||<name>.<namespace>.svc.<domain>\"): read that cluster with until",
	"Telemetry":          "wait for its effect with until (an access log: a listener's access_log)",
	"EnvoyFilter":        "wait for the patched field with until",
}

// checkReflects checks the object a reflects names, and that the resource read can carry its
// mark.
func (p *Config) checkReflects(c Checker, resources int) {
	r := p.Reflects
	if r == nil {
		return
	}
	where, ok := xdstype.Marked[r.Kind]
	if !ok {
		kinds := make([]string, 0, len(xdstype.Marked))
		for k := range xdstype.Marked {
			kinds = append(kinds, k)
		}
		slices.Sort(kinds)
		msg := fmt.Sprintf("istiod writes no mark of %s into Envoy's config (it marks %s)", A(r.Kind), strings.Join(kinds, ", "))
		if how := unmarked[r.Kind]; how != "" {
			msg += ": " + how
		}
		c.ValueErrorf("reflects.kind", "%s", msg)
		return
	}
	ref := r.Ref()
	switch {
	case ref.Name == "":
		c.Errorf("reflects", "reflects needs the object's name: name, or the object itself (metadata.name)")
	case r.Name != "" && r.Metadata != nil && r.Metadata.Name != r.Name:
		c.Errorf("reflects.name", "name %q and metadata.name %q name two objects: write one", r.Name, r.Metadata.Name)
	}
	if p.Names != "" {
		c.Errorf("reflects", "reflects looks for the mark of %s in a resource, and names records only names: read a %s", r.Kind, where[0])
		return
	}
	if kind := p.ResourceKind(); resources == 1 && !slices.Contains(where, kind) {
		c.Errorf("reflects", "istiod marks %s in %s, not in %s %s: read %s: \"...\" (or neither, to search the whole dump)",
			A(r.Kind), strings.Join(plurals(where), " and "), A(kind), p.resourceName(), where[0])
	}
}

func plurals(kinds []string) []string {
	out := make([]string, len(kinds))
	for i, k := range kinds {
		out[i] = k + "s"
	}
	return out
}

// resourceName is the name of the resource the step reads.
func (p *Config) resourceName() string {
	return or(p.Cluster, or(p.Listener, or(p.Route, p.Endpoints)))
}

// ExprField is until.
func (p *Config) ExprField() (string, bool) { return "until", p.Until != "" }

// PollInterval: with until or reflects, the step reads again every interval.
func (p *Config) PollInterval() (time.Duration, string) {
	if !p.polls() {
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

// Plan: one read; with until or reflects, as long as a wait.
func (p *Config) Plan() Plan {
	if p.polls() {
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
	what := p.resourceName()
	switch {
	case p.Names != "":
		what = p.Names + " names"
	case p.Endpoints != "":
		what = "endpoints of " + p.Endpoints
	}
	s := strings.TrimSpace(what + " " + p.Path)
	if p.Reflects != nil {
		s = strings.TrimSpace(s + " reflects " + p.Reflects.Ref().String())
	}
	if p.Until != "" {
		s += " until " + p.Until
	}
	return s
}

// notReflected is a read that does not carry the mark reflects waits for: read, and judged
// false (a failure when it lasts to the timeout, not an error of the world).
type notReflected string

func (e notReflected) Error() string { return string(e) }

// Failure marks it as a failed expectation (IsFailure).
func (notReflected) Failure() {}

// waitsFor says what a polling step waits for, for messages.
func (p *Config) waitsFor(ref xdstype.ObjectRef) string {
	var parts []string
	if p.Reflects != nil {
		parts = append(parts, "reflects "+ref.String())
	}
	if p.Until != "" {
		parts = append(parts, "until "+p.Until)
	}
	return strings.Join(parts, " and ")
}

// Run reads the config dump and records the selected value; with until or reflects, again every
// interval until they hold, keeping the last read's value and artifacts, and saying on a timeout
// what the last read saw.
func (p *Config) Run(ctx context.Context, rt Runtime) error {
	q := *p
	if q.Envoy != nil {
		e := *q.Envoy
		e.Namespace = rt.Namespace(e.Namespace)
		q.Envoy = &e
	}
	var want xdstype.ObjectRef
	if p.Reflects != nil {
		want = p.Reflects.Ref()
		want.Namespace = rt.Namespace(want.Namespace)
	}
	read := func() ([]Artifact, error) {
		res, err := rt.Target().Stats.Config(ctx, q)
		if err != nil {
			return res.Artifacts, err
		}
		rt.Record(res.Value)
		if p.Reflects != nil {
			r := res.Resource
			if r == nil {
				r = res.Value
			}
			if ok, seen := xdstype.Reflects(r, want); !ok {
				return res.Artifacts, notReflected(fmt.Sprintf("%s %s", or(strings.TrimSpace(p.ResourceKind()+" "+p.resourceName()), "the config dump"), seen))
			}
		}
		return res.Artifacts, nil
	}
	if !p.polls() {
		arts, err := read()
		for _, a := range arts {
			rt.Artifact(a.Name, a.Data)
		}
		return err
	}
	interval, _ := p.PollInterval()
	waits := p.waitsFor(want)
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
		if err == nil && p.Until != "" {
			err = rt.Judge()
		}
		if err == nil {
			return nil
		}
		if ctx.Err() == nil || last == nil {
			last = err
		}
		if serr := rt.Sleep(ctx, interval); serr != nil || ctx.Err() != nil {
			// The runner reports its own timeout in place of this error: the warning keeps why.
			err := fmt.Errorf("config %s: %w after %d reads; last: %v", waits, context.Cause(ctx), reads, last)
			if IsFailure(last) {
				return &Unmet{Err: err} // read, and judged false to the end: the run fails
			}
			rt.Warn(fmt.Sprintf("%s did not hold after %d reads; last: %v", waits, reads, last))
			return err
		}
	}
}
