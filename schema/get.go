package schema

import (
	"context"
	"errors"
	"fmt"
	"labrun.dev/labrun/internal/kubeshape"
	"strings"
	"time"

	"labrun.dev/labrun/envoy/xdstype"
)

// Get is the get step: an object, a list of objects, or one field of them.
type Get struct {
	Kind       string `json:"kind"`
	APIVersion string `json:"apiVersion,omitempty"`
	Name       string `json:"name,omitempty"`
	Selector   string `json:"selector,omitempty"`
	Namespace  string `json:"namespace,omitempty"`
	Path       string `json:"path,omitempty"`
	// Until makes the get an expression wait: it reads again every Interval until the
	// expression, over what it read (by the step's name), holds.
	Until    string   `json:"until,omitempty"`
	Interval Duration `json:"interval,omitempty"`
}

var getKind = Kind{
	Usage: "capture a Kubernetes object or field",
	New:   func() Params { return new(Get) },
}

// Result: the object, the list of objects or the field, as JSON-like data whose shape is
// known only at run time.
func (p *Get) Result(c ResultContext) *Type { return AnyType }

// Check: name or selector, not both.
func (p *Get) Check(c Checker) {
	if p.Name != "" && p.Selector != "" {
		c.Errorf("", "get takes name or selector, not both")
	}
	checkDottedPath(c, "path", p.Path)
	checkLookupKind(c, "", p.Kind, p.APIVersion)
	// The fields of a path that does not parse are not asked of the kind.
	if parsed := checkPathSyntax(c, "path", p.Path); parsed && p.Path != "" && !c.Templated("path") && !c.Templated("kind") && !c.Templated("apiVersion") && !strings.ContainsAny(p.Path, `"'[]{$`) {
		// A misspelled path errs when the step runs: vet knows a built-in kind's fields.
		// An Istio kind's path, which a newer Istio may serve, is checked against the
		// cluster's CRD where the scenario meets its cluster first (vet --server, a run).
		if sh, kind := kubeshape.Known(p.APIVersion, p.Kind); sh != nil && !(kubeshape.IstioGroup(p.APIVersion) && judgedByCluster(c)) {
			path := strings.Split(p.Path, ".")
			if m := sh.Walk(path); m != nil {
				subject := kind
				if m.At > 0 {
					subject += " " + strings.Join(path[:m.At], ".")
				}
				hint := ""
				if m.Release {
					hint = kubeshape.Newer(p.APIVersion)
				}
				c.Errorf("path", "path %q: %s%s %s%s", p.Path, subject, kubeshape.From(p.APIVersion), m.Msg, hint)
			}
		}
	}
	if c.Has("interval") && p.Until == "" {
		c.Errorf("interval", "interval is the pause between reads of until, and the step has no until")
	}
	if p.Until != "" {
		checkNotZero(c, "interval", p.Interval, defaultPollInterval.String())
	}
}

// ExprField is until.
func (p *Get) ExprField() (string, bool) { return "until", p.Until != "" }

// PollInterval: with until, the step reads again every interval.
func (p *Get) PollInterval() (time.Duration, string) {
	if p.Until == "" {
		return 0, ""
	}
	return or(p.Interval.D(), defaultPollInterval), "interval"
}

// ReadsOwnResult: until judges what the step has just read.
func (p *Get) ReadsOwnResult() bool { return p.Until != "" }

// checkDottedPath refuses a kubectl JSONPath or jq path where labrun reads a dotted one: its
// first key would be "{" or "$", and nothing is ever found there.
func checkDottedPath(c Checker, field, path string) {
	if c.Templated(field) {
		return
	}
	if strings.HasPrefix(path, "{") || strings.HasPrefix(path, "$") || strings.HasPrefix(path, ".") {
		c.Errorf(field, "path %q looks like a JSONPath: write a dotted path, e.g. status.podIP or spec.containers.0.name", path)
	}
}

// checkPathSyntax refuses a path that does not parse; it reports whether the path parses (an empty step: status..phase), at the
// offset where it goes wrong, as the step would when it runs; a ${...} in it is a hole.
func checkPathSyntax(c Checker, field, path string) bool {
	if path == "" {
		return true
	}
	if strings.HasPrefix(path, "{") || strings.HasPrefix(path, "$") || strings.HasPrefix(path, ".") {
		return false // checkDottedPath said it
	}
	masked, offsets := path, []int(nil)
	if c.Templated(field) {
		masked, offsets = maskTemplates(path)
	}
	_, err := xdstype.ParsePath(masked)
	var pe *xdstype.PathError
	if !errors.As(err, &pe) {
		return true
	}
	at := pe.Offset
	if offsets != nil && at < len(offsets) {
		at = offsets[at]
	}
	c.ValueErrorAt(field, at, "path %q: %s; expected a dotted path, e.g. status.phase or spec.containers[0].name", path, pe.Msg)
	return false
}

// Plan: one API call; with until, an assertion's wait.
func (p *Get) Plan() Plan {
	if p.Until != "" {
		return Plan{Timeout: TimeoutAssert}
	}
	return Plan{}
}

// Needs the Kubernetes API.
func (p *Get) Needs() Need { return Need{CapCluster, DriverCluster} }

// Mutates nothing.
func (p *Get) Mutates(func(string) string) Mutation { return Mutation{} }

// Summary names the object and the path.
func (p *Get) Summary() string {
	s := strings.TrimSpace(fmt.Sprintf("%s %s%s %s", p.Kind, p.Name, p.Selector, p.Path))
	if p.Until != "" {
		s += " until " + p.Until
	}
	return s
}

// notObservedInterval is the pause before a get without until reads again an object whose
// controller has not yet observed it (a Deployment's controller does within milliseconds).
const notObservedInterval = 100 * time.Millisecond

// Run reads the object and records it (or the field). With until it reads again every
// interval, until the expression holds: a fetch on every poll, the expression judged over
// what was just read. Until the end an object that does not exist, or an expression that is
// false (or over an empty collection), is what the wait saw: when its time runs out the run
// fails with it (schema.Unmet); a read that fails (the API server unreachable, forbidden), or
// an expression that could not be evaluated at the last read (a type error, a value that does
// not exist: NotJudged), is an error, as a wait's until is. A read whose status its controller has not yet written
// for the object's current generation (ErrNotObserved) is not recorded nor judged: the get
// reads again, with or without until, and says so if the step's time runs out first.
func (p *Get) Run(ctx context.Context, rt Runtime) error {
	q := *p
	q.Namespace = rt.Namespace(p.Namespace)
	q.Until, q.Interval = "", 0
	if p.Until == "" {
		for {
			v, err := rt.Target().Cluster.Get(ctx, q)
			if errors.Is(err, ErrNotObserved) {
				// A status not yet written for the object as it is (right after an apply):
				// what expectations would read of it is not yet so. Read again.
				if serr := rt.Sleep(ctx, notObservedInterval); serr != nil || ctx.Err() != nil {
					return lastState(ctx, rt, fmt.Errorf("%v: %w", err, context.Cause(ctx)))
				}
				continue
			}
			if err != nil {
				return err
			}
			p.saw(rt, q.Namespace, v)
			rt.Record(v)
			return nil
		}
	}
	interval, _ := p.PollInterval()
	var last error
	observed := false
	for reads := 1; ; reads++ {
		v, err := rt.Target().Cluster.Get(ctx, q)
		switch {
		case err == nil:
			p.saw(rt, q.Namespace, v)
			rt.Record(v)
			if err = rt.Judge(); err == nil {
				return nil
			}
			// An until judged false (or over an empty collection) is what the wait saw; one
			// that could not be evaluated (NotJudged: a type error, a value that does not
			// exist) tested nothing.
			observed = IsFailure(err) || errors.As(err, new(*EmptyUntil))
		case ctx.Err() != nil:
			// the read cut short by the timeout: the one before says what was seen
		default:
			// An object not there yet, or whose status its controller has not yet written
			// for it as it is now, is what the wait saw; until is not judged on it.
			observed = errors.Is(err, ErrNotFound) || errors.Is(err, ErrNotObserved)
		}
		if ctx.Err() == nil || last == nil {
			last = err
		}
		if serr := rt.Sleep(ctx, interval); serr != nil || ctx.Err() != nil {
			what := strings.TrimSpace(p.Kind + " " + p.Name + p.Selector)
			if observed {
				err := fmt.Errorf("get %s until %s: %w after %d reads; last: %v", what, p.Until, context.Cause(ctx), reads, last)
				if errors.As(last, new(*EmptyUntil)) {
					err = &EmptyUntil{Err: err}
				}
				return &Unmet{Err: err}
			}
			// last is wrapped: an until that could not be evaluated (NotJudged) tested nothing
			return fmt.Errorf("get %s until %s: %w after %d reads; last: %w", what, p.Until, context.Cause(ctx), reads, last)
		}
	}
}

// saw notes the object a get by name read, or the objects of the list it read (v): a wait:
// absent of one of them waits for an object the run has seen.
func (p *Get) saw(rt Runtime, ns string, v any) {
	if p.Name != "" {
		rt.SawObjects([]ObjectRef{{APIVersion: p.APIVersion, Kind: p.Kind, Namespace: ns, Name: p.Name}})
		return
	}
	list, _ := v.([]any)
	var refs []ObjectRef
	for _, o := range list {
		m, _ := o.(map[string]any)
		md, _ := m["metadata"].(map[string]any)
		r := ObjectRef{APIVersion: p.APIVersion, Kind: p.Kind, Namespace: ns}
		r.Name, _ = md["name"].(string)
		if k, _ := m["kind"].(string); k != "" {
			r.Kind = k
		}
		if n, _ := md["namespace"].(string); n != "" {
			r.Namespace = n
		}
		if r.Name != "" {
			refs = append(refs, r)
		}
	}
	rt.SawObjects(refs)
}
