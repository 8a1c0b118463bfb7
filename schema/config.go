package schema

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
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
	// APIVersion and Spec are an object's, when the object itself is written: decoded, not read.
	APIVersion string `json:"apiVersion,omitempty"`
	Spec       any    `json:"spec,omitempty"`
}

// ObjectMeta is the part of an object's metadata that names it (labels and annotations are
// decoded, not read).
type ObjectMeta struct {
	Name        string            `json:"name"`
	Namespace   string            `json:"namespace,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
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

// Result: the selected part of the config_dump as Envoy's API types it (xdstype): a cluster,
// listener, route configuration or cluster load assignment, or the part of it at path, each
// message a struct of its fields, so that vet checks what expressions read of it (a misspelled
// field, an enum value that never matches); a list of strings for names. Where the type is
// known only at run time (a path with ${...} in a step's name, inside an Any of unknown type,
// free-form metadata) it is any. The step's own until reads it after each read.
func (p *Config) Result(c ResultContext) *Type {
	if p.Names != "" {
		return ListOf(Str("a " + strings.TrimSuffix(p.Names, "s") + " name"))
	}
	t := xdstype.Resource(p.ResourceKind())
	if t == nil {
		return AnyType
	}
	if p.Path != "" {
		path := p.Path
		if c.Templated("path") {
			path, _ = maskTemplates(p.Path)
		}
		at, err := t.At(path)
		if err != nil || at == nil {
			return AnyType
		}
		t = at
	}
	return EnvoyType(t, p.Durations == DurationsSeconds)
}

// EnvoyAnyType is an Envoy Any whose message is known only at run time, by its "@type" (a
// transport socket's typed_config): expressions read below it through xdstype.ReadAny, which
// gives a left-out field its default.
var EnvoyAnyType = &Type{Kind: TAny, Doc: "an Envoy Any: its \"@type\" names its message"}

// EnvoyJSONType is free-form JSON in an Envoy config (google.protobuf.Struct, Value,
// ListValue: a cluster's metadata.filter_metadata.istio): it has no schema, so expressions
// read below it through xdstype.ReadJSON, which gives a key it lacks no value (read nil, a
// misspelt key held == nil) unless it is read with ?..
var EnvoyJSONType = &Type{Kind: TAny, Doc: "free-form JSON (google.protobuf.Struct): its keys are known only at run time"}

// envoyTypes caches EnvoyType's answers: message types are graphs (a message may hold itself),
// built once per process.
var envoyTypes struct {
	sync.Mutex
	msgs map[envoyKey]*Type
}

type envoyKey struct {
	msg     *xdstype.Msg
	seconds bool
}

// EnvoyType is an Envoy API type (xdstype) in the type model of expressions: a message is a
// struct of its fields (an Any's, "@type" too), a repeated field a list, a map field a map, an
// enum a string of its values, 64-bit integers and wrappers numbers, a Duration a string ("0.500s")
// or, with seconds, a number of seconds; free-form JSON and an Any of unknown type are any.
func EnvoyType(t *xdstype.Type, seconds bool) *Type {
	envoyTypes.Lock()
	defer envoyTypes.Unlock()
	if envoyTypes.msgs == nil {
		envoyTypes.msgs = map[envoyKey]*Type{}
	}
	return envoyType(t, seconds)
}

func envoyType(t *xdstype.Type, seconds bool) *Type {
	if t == nil {
		return AnyType
	}
	switch t.Kind {
	case xdstype.Message, xdstype.Any:
		if t.Msg == nil {
			if t.Kind == xdstype.Any {
				return EnvoyAnyType
			}
			return AnyType
		}
		return envoyMessage(t.Msg, t.Kind == xdstype.Any, seconds)
	case xdstype.List:
		return ListOf(envoyType(t.Elem, seconds))
	case xdstype.Map:
		m := MapOf(StringType, envoyType(t.Elem, seconds))
		m.KeyChecked = true
		return m
	case xdstype.Number, xdstype.Int64:
		if t.Wrapper != "" {
			return &Type{Kind: TNumber, Wrapper: t.Wrapper, Go: NumberType.Go}
		}
		return NumberType
	case xdstype.Bool:
		if t.Wrapper != "" {
			return &Type{Kind: TBool, Wrapper: t.Wrapper, Go: BoolType.Go}
		}
		return BoolType
	case xdstype.String, xdstype.Bytes, xdstype.Timestamp, xdstype.FieldMask:
		return StringType
	case xdstype.Duration:
		// A Duration is a message: left out, it is unset and Envoy applies its own default
		// (outlier_detection.interval 10s), as for a wrapper; od.interval != "10s" held over nil.
		var d *Type
		if seconds {
			d = Num(Seconds)
		} else {
			d = StrForm("a protobuf Duration, e.g. \"0.500s\": compare with duration()", FormDuration)
		}
		d.Wrapper = "Duration"
		return d
	case xdstype.Enum:
		return &Type{Kind: TString, Enum: t.Enum.Values, Doc: "enum " + t.Enum.Name, Go: StringType.Go}
	case xdstype.JSON:
		return EnvoyJSONType
	}
	return AnyType
}

// filterNameType is the key of a typed_per_filter_config: an HTTP filter's name, most often
// one istiod gives the filters it configures (xdstype.Extensions) or one of Envoy's HTTP
// filters an Istio object or an EnvoyFilter adds.
var filterNameType = func() *Type {
	t := &Type{Kind: TString, Doc: "an HTTP filter's name", Go: StringType.Go}
	t.Known = []string{"envoy.filters.http.buffer", "envoy.filters.http.compressor", "envoy.filters.http.csrf",
		"envoy.filters.http.ext_authz", "envoy.filters.http.ext_proc", "envoy.filters.http.grpc_web",
		"envoy.filters.http.header_to_metadata", "envoy.filters.http.jwt_authn", "envoy.filters.http.local_ratelimit",
		"envoy.filters.http.lua", "envoy.filters.http.ratelimit", "envoy.filters.http.wasm"}
	for name := range xdstype.Extensions {
		if strings.HasPrefix(name, "envoy.filters.http.") {
			t.Known = append(t.Known, name)
		}
	}
	slices.Sort(t.Known)
	t.Known = slices.Compact(t.Known) // a name both listed here and istiod's
	return t
}()

// envoyMessage is message m as a struct; the caller holds envoyTypes.
func envoyMessage(m *xdstype.Msg, inAny, seconds bool) *Type {
	key := envoyKey{m, seconds}
	if st, ok := envoyTypes.msgs[key]; ok && !inAny {
		return st
	}
	st := &Type{Kind: TStruct, Doc: m.Name}
	if !inAny {
		envoyTypes.msgs[key] = st // before its fields: a field may be of this message
	}
	if inAny {
		st.Fields = append(st.Fields, F("@type", StringType, "the type URL of the message the Any holds"))
	}
	for _, f := range m.Fields {
		ft := envoyType(f.Type, seconds)
		if f.Name == "typed_per_filter_config" && ft.Kind == TMap {
			ft.Key = filterNameType
		}
		sf := F(f.Name, ft, envoyFieldDoc(f))
		sf.Default = f.Default()
		st.Fields = append(st.Fields, sf)
	}
	return st
}

// envoyFieldDoc says how a field reads when Envoy's JSON leaves it out.
func envoyFieldDoc(f *xdstype.Field) string {
	var doc string
	switch {
	case f.HasDefault():
		doc = fmt.Sprintf("%s; left out when %s, and reads so", f.Type, exprLiteral(f.Default()))
	case f.Oneof != "":
		doc = fmt.Sprintf("%s, one of %s: nil unless it is the one set", f.Type, f.Oneof)
	case f.Type.Wrapper != "":
		doc = fmt.Sprintf("a %s: nil when unset (Envoy's own default applies)", f.Type.Wrapper)
	default:
		doc = fmt.Sprintf("%s: nil when unset", f.Type)
	}
	if f.Deprecated {
		doc = "deprecated in Envoy's API; " + doc
	}
	return doc
}

// exprLiteral writes a default value as an expression would.
func exprLiteral(v any) string {
	switch x := v.(type) {
	case string:
		return fmt.Sprintf("%q", x)
	case []any:
		return "[]"
	case map[string]any:
		return "{}"
	}
	return fmt.Sprint(v)
}

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
	"Sidecar":            "wait for its effect with until (an egress scope: names: \"clusters\", until: \"!('<cluster it removes>' in <name>)\")",
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
	if r.Spec != nil && !xdstype.MarksObject(r.Kind, r.Spec) {
		// Written as the object: its spec says istiod leaves no mark of it.
		c.Errorf("reflects", "istiod marks a %s only in the inbound filter chains of its ingress listeners (virtualInbound), and this one has no ingress: the mark never comes, and the step would read until its timeout; %s", r.Kind, unmarked[r.Kind])
		return
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

// reflectedPathReads is how many reads in a row may carry the reflected object's mark and
// select nothing at the step's path before the path is taken as wrong.
const reflectedPathReads = 3

// pathAfterMark is a path that selects nothing in a resource that carries the mark the step
// waits for: reading again reads the same.
type pathAfterMark struct{ error }

func (e *pathAfterMark) Unwrap() error { return e.error }

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
	markedMisses := 0 // reads in a row whose resource carries the mark and whose path failed
	read := func() ([]Artifact, error) {
		res, err := rt.Target().Stats.Config(ctx, q)
		if err != nil {
			if p.Reflects != nil && p.Until == "" && p.Path != "" && res.Resource != nil {
				if ok, _ := xdstype.Reflects(res.Resource, want); ok {
					// istiod's push of the object has come, and the path selects nothing in
					// what it made: a few more reads for a push that follows, then the path
					// is wrong (it was read again to the timeout, 5 min by default).
					if markedMisses++; markedMisses > reflectedPathReads {
						return res.Artifacts, &pathAfterMark{fmt.Errorf("%w; the resource carries %s (istiod's push of it has come) and %d reads of it in a row selected nothing at this path: check the path", err, want, markedMisses)}
					}
					return res.Artifacts, err
				}
			}
			markedMisses = 0
			return res.Artifacts, err
		}
		markedMisses = 0
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
		if errors.As(err, new(*pathAfterMark)) {
			return err
		}
		if ctx.Err() == nil || last == nil {
			last = err
		}
		if serr := rt.Sleep(ctx, interval); serr != nil || ctx.Err() != nil {
			// The runner reports its own timeout in place of this error: the warning keeps why.
			if IsFailure(last) { // read, and judged false (or its collection empty) to the end: the run fails
				err := fmt.Errorf("config %s: %w after %d reads; last: %v", waits, context.Cause(ctx), reads, last)
				if errors.As(last, new(*EmptyUntil)) {
					err = &EmptyUntil{Err: err}
				}
				return &Unmet{Err: err}
			}
			rt.Warn(fmt.Sprintf("%s did not hold after %d reads; last: %v", waits, reads, last))
			// last is wrapped: an until that could not be evaluated (NotJudged) tested nothing
			return fmt.Errorf("config %s: %w after %d reads; last: %w", waits, context.Cause(ctx), reads, last)
		}
	}
}

// IstioDefault is what istiod writes into the field that the step's path followed by rest
// (the selectors an expression reads below the step's value: "retry_policy.num_retries")
// selects, where the Istio object that sets the field leaves it out (xdstype.IstioDefaults),
// as the step reads it (a Duration as a number of seconds with durations: "seconds"), and
// the field's name; false for no such field.
func (p *Config) IstioDefault(rest string) (xdstype.IstioDefault, string, bool) {
	t := xdstype.Resource(p.ResourceKind())
	if t == nil || p.Names != "" {
		return xdstype.IstioDefault{}, "", false
	}
	path, _ := maskTemplates(p.Path)
	switch {
	case path == "":
		path = rest
	case rest != "" && rest[0] != '[':
		path += "." + rest
	default:
		path += rest
	}
	d, field, ok := t.IstioDefaultAt(path)
	if s, isStr := d.Value.(string); ok && isStr && p.Durations == DurationsSeconds {
		if v, err := time.ParseDuration(s); err == nil {
			d.Value = v.Seconds()
		}
	}
	return d, field, ok
}
