package schema

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"labrun.dev/labrun/internal/kubeshape"
)

// Wait is the wait step: until a rollout is ready, a condition holds, or an expression is true.
type Wait struct {
	Rollout   string     `json:"rollout,omitempty"`
	Condition *Condition `json:"condition,omitempty"`
	Match     Object     `json:"match,omitempty"`
	Absent    Object     `json:"absent,omitempty"`
	// MatchFiles and AbsentFiles are YAML (or JSON) files of partial objects, Chainsaw's and
	// KUTTL's assert and errors files: every object must match, or none may.
	MatchFiles  []string `json:"matchFiles,omitempty"`
	AbsentFiles []string `json:"absentFiles,omitempty"`
	AnyOrder    bool     `json:"anyOrder,omitempty"`
	Until       string   `json:"until,omitempty"`
	Interval    Duration `json:"interval,omitempty"`
	Namespace   string   `json:"namespace,omitempty"`
	// MayNeverExist lets an absent (or absentFiles) object by name, in one of the scenario's
	// namespaces, be one no step of the scenario applies, deletes or reads: one a command or
	// a controller makes, or one that must never exist. Without it, such a wait is refused
	// by vet, or fails when it finds the object absent at its start (see neverSeen).
	MayNeverExist bool `json:"mayNeverExist,omitempty"`
}

// ObjectWait is a wait for objects: until one matches Want, or (Absent) until none does.
type ObjectWait struct {
	// Want is a partial object: apiVersion, kind, metadata.name or labels, and fields to match.
	Want   Object
	Absent bool
	// AnyOrder matches lists in any order (each wanted element a different element of the list).
	AnyOrder bool
	// Once judges once, without polling: nil when it holds now, else an *Unmet saying what
	// was seen (an error reaching the system is returned as it is).
	Once bool
}

// Condition is a status condition of an object.
type Condition struct {
	Kind       string `json:"kind"`
	APIVersion string `json:"apiVersion,omitempty"`
	Name       string `json:"name,omitempty"`
	Selector   string `json:"selector,omitempty"`
	Type       string `json:"type"`
	Status     string `json:"status,omitempty"`
}

var waitKind = Kind{
	Usage: "wait for a rollout, a condition, an object's fields, an object's absence or an expression",
	New:   func() Params { return new(Wait) },
}

// Check needs exactly one thing to wait for.
func (p *Wait) Check(c Checker) {
	c.ExactlyOne("rollout", "condition", "match", "absent", "until", "matchFiles", "absentFiles")
	checkPartial(c, "match", p.Match, true)
	checkPartial(c, "absent", p.Absent, false)
	if p.AnyOrder {
		for field, o := range map[string]Object{"match": p.Match, "absent": p.Absent} {
			EmptyLists(o, func(path []string) {
				c.Errorf(field+"."+strings.Join(path, "."), "%s", EmptyAnyOrderList)
			})
		}
	}
	if p.AnyOrder && p.Match == nil && p.Absent == nil && len(p.MatchFiles)+len(p.AbsentFiles) == 0 {
		c.Errorf("anyOrder", "anyOrder applies to match, absent, matchFiles or absentFiles")
	}
	if p.MayNeverExist && p.Absent == nil && len(p.AbsentFiles) == 0 {
		c.Errorf("mayNeverExist", "mayNeverExist applies to absent or absentFiles")
	}
	if p.Condition != nil {
		checkLookupKind(c, "condition.", p.Condition.Kind, p.Condition.APIVersion)
	}
	if p.Condition != nil && p.Condition.Name == "" && p.Condition.Selector == "" {
		c.Errorf("condition", "condition needs name or selector")
	}
	if p.Condition != nil && p.Condition.Name != "" && p.Condition.Selector != "" {
		c.Errorf("condition", "condition takes name or selector, not both")
	}
	if p.Until != "" {
		checkNotZero(c, "interval", p.Interval, defaultUntilInterval.String())
	} else {
		checkNotZero(c, "interval", p.Interval, defaultPollInterval.String())
	}
	if p.Rollout != "" && c.Has("interval") {
		c.Errorf("interval", "interval is the pause between polls of a condition, match, absent or until; a rollout wait watches the Deployment and has none: drop interval")
	}
}

// checkPartial checks the partial object of match or absent: it must say which kind (match:
// and apiVersion), and its name and labels must be what the API server can select on.
func checkPartial(c Checker, field string, o Object, needAPIVersion bool) {
	if o == nil {
		return
	}
	if k, ok := o["kind"].(string); !ok || k == "" {
		c.Errorf(field, "%s needs a kind, e.g. kind: \"Deployment\"", field)
	} else if strings.ContainsAny(k, " /.") && !c.Templated(field+".kind") {
		c.Errorf(field+".kind", "expected a Kubernetes kind such as \"Deployment\", got %q", k)
	}
	if v, ok := o["apiVersion"].(string); needAPIVersion && (!ok || v == "") {
		c.Errorf(field, "%s needs an apiVersion, e.g. apiVersion: \"apps/v1\" (the fields to match depend on it)", field)
	}
	if k, _ := o["kind"].(string); k == "" || c.Templated(field+".kind") || c.Templated(field+".apiVersion") {
		ChainsawForms(o, func(path []string, msg string) { c.Errorf(field+"."+strings.Join(path, "."), "%s", msg) })
	} else {
		// A misspelled field would be asked absent (null) or matched nowhere: the kind's
		// fields are known for built-in kinds.
		PartialMisses(o, func(path []string, msg string, istio *IstioCheck) {
			if len(path) == 3 && path[0] == "metadata" && path[1] == "labels" && ChainsawKey(path[2]) == "" && !isString(metadataOf(o)["labels"], path[2]) {
				return // a label that is no string: said below
			}
			f := field + "." + strings.Join(path, ".")
			if istio != nil && istio.Path != nil && judgedByCluster(c) {
				return // an Istio kind's field: the run, and vet --server, check the match against the cluster's CRD
			}
			if !leaveToCluster(c, f, false, istio) {
				c.Errorf(f, "%s", msg)
			}
		})
	}
	md, _ := o["metadata"].(map[string]any)
	if ns, _ := md["namespace"].(string); NamespaceTemplate(ns) != "" && !c.Templated(field+".metadata.namespace") {
		c.Errorf(field+".metadata.namespace", "%s", NamespaceTemplate(ns))
	}
	if labels, ok := md["labels"]; ok {
		lm, ok := labels.(map[string]any)
		if !ok {
			c.Errorf(field+".metadata.labels", "expected labels as a struct of strings")
		}
		for k, v := range lm {
			if _, ok := v.(string); !ok {
				c.Errorf(field+".metadata.labels", "expected label %q to be a string, got %v", k, v)
			}
		}
	}
}

// PartialMisses calls miss for every field of the partial object o (a wait's match or absent,
// an object of its matchFiles or absentFiles) that o's kind, a built-in one, does not have,
// with its path and what is wrong ("Deployment spec has no field replica (did you mean
// replicas?)"), and for an apiVersion that no longer serves the kind (path ["apiVersion"]);
// an Istio kind's fields too, and an Istio group's kind or version Istio does not serve
// (kubeshape.Istio, IstioServes): for those, istio is the problem as the cluster's CRD can judge
// it instead (its Path nil for the kind or version, which a newer Istio may serve).
// A misspelled field asked null would hold at once, and one of an absence matches no object,
// so the absence holds at once too; one asked a value of a match never matches. A custom
// resource's fields are checked by the run, against its CRD. A Chainsaw expression key or
// value (ChainsawForms) is refused whatever the kind.
func PartialMisses(o Object, miss func(path []string, msg string, istio *IstioCheck)) {
	k, _ := o["kind"].(string)
	if k == "" {
		return
	}
	v, _ := o["apiVersion"].(string)
	if msg := kubeshape.Removed(v, k); msg != "" {
		miss([]string{"apiVersion"}, msg, nil)
	}
	if field, msg := kubeshape.IstioServes(v, k); msg != "" && !strings.Contains(k+v, "${") {
		var ic *IstioCheck
		if _, short := kubeshape.IstioShortKind(k); short == "" {
			ic = &IstioCheck{Kind: k, APIVersion: v, Msg: msg}
		}
		miss([]string{field}, msg, ic)
	}
	if _, ok := o["stringData"]; ok && k == "Secret" && (v == "" || v == "v1") {
		miss([]string{"stringData"}, "a Secret's stringData is write-only: the API server moves it into data, base64-encoded, and never returns it, so a match of it never holds and an absence of it holds at once; match data, its values base64-encoded (CUE's encoding/base64)", nil)
	}
	ChainsawForms(o, func(path []string, msg string) { miss(path, msg, nil) })
	if sh, kind := kubeshape.Known(v, k); sh != nil {
		sh.Check(map[string]any(o), func(path []string, m *kubeshape.Miss) {
			if hasChainsawKey(path) {
				return // said above
			}
			subject := kind
			if m.At > 0 {
				subject += " " + strings.Join(path[:m.At], ".")
			}
			msg := subject + kubeshape.From(v) + " " + m.Msg
			var ic *IstioCheck
			if kubeshape.IstioGroup(v) && m.Release {
				msg += kubeshape.Newer(v)
				ic = &IstioCheck{Kind: k, APIVersion: v, Object: o, Path: path, Msg: msg, Partial: true}
			}
			miss(path, msg, ic)
		})
	}
}

// EmptyAnyOrderList says why an empty list is refused in a partial object matched with
// anyOrder.
const EmptyAnyOrderList = "with anyOrder, an empty list matches every list (each element written must match one of the list's, and none is written), so it asks nothing; write the elements wanted, or leave anyOrder out, where [] wants the list empty"

// EmptyLists calls f with the path of every empty list of the partial object o.
func EmptyLists(o Object, f func(path []string)) {
	walkObject(o, func(v any, path []string, _ bool) bool {
		if x, ok := v.([]any); ok && len(x) == 0 {
			f(path)
		}
		return true
	})
}

// ExprField is until.
func (p *Wait) ExprField() (string, bool) { return "until", p.Until != "" }

// PollInterval: until, a condition, match and absent poll; a rollout watches.
func (p *Wait) PollInterval() (time.Duration, string) {
	switch {
	case p.Rollout != "":
		return 0, ""
	case p.Until != "":
		return or(p.Interval.D(), defaultUntilInterval), "interval"
	}
	return or(p.Interval.D(), defaultPollInterval), "interval"
}

// The pauses between polls of a wait that sets no interval: an expression is cheap to judge
// again, a cluster object a request to the API server.
const (
	defaultUntilInterval = time.Second
	defaultPollInterval  = 500 * time.Millisecond
)

// Plan: a wait lasts until what it waits for holds; a rollout or a condition is bounded as a
// wait for pods and controllers (5m), a match, an absence or an expression as an assertion
// (30s).
func (p *Wait) Plan() Plan {
	if p.Rollout != "" || p.Condition != nil {
		return Plan{Timeout: TimeoutWait} // pods starting, a controller at work
	}
	return Plan{Timeout: TimeoutAssert}
}

// Needs the Kubernetes API for a rollout or a condition.
func (p *Wait) Needs() Need {
	if p.Until != "" {
		return Need{}
	}
	return Need{CapCluster, DriverCluster}
}

// Mutates nothing.
func (p *Wait) Mutates(func(string) string) Mutation { return Mutation{} }

// Summary says what is awaited.
func (p *Wait) Summary() string {
	switch {
	case p.Rollout != "":
		return "rollout of " + p.Rollout
	case p.Match != nil:
		return "match " + partialSummary(p.Match)
	case p.Absent != nil:
		return "absent " + partialSummary(p.Absent)
	case len(p.MatchFiles) > 0:
		return "match " + strings.Join(p.MatchFiles, " ")
	case len(p.AbsentFiles) > 0:
		return "absent " + strings.Join(p.AbsentFiles, " ")
	case p.Condition != nil:
		return fmt.Sprintf("%s %s%s %s=%s", p.Condition.Kind, p.Condition.Name, p.Condition.Selector, p.Condition.Type, or(p.Condition.Status, "True"))
	}
	return "until " + p.Until
}

// Run polls until the wait is over.
func (p *Wait) Run(ctx context.Context, rt Runtime) error {
	interval, _ := p.PollInterval()
	switch {
	case p.Until != "":
		return rt.WaitUntil(ctx, interval)
	case p.Match != nil || p.Absent != nil:
		w := ObjectWait{Want: p.Match, AnyOrder: p.AnyOrder}
		if p.Absent != nil {
			w = ObjectWait{Want: p.Absent, Absent: true, AnyOrder: p.AnyOrder}
			if err := p.neverSeen(ctx, rt, p.Absent); err != nil {
				return err
			}
		}
		err := rt.Target().Cluster.WaitObjects(ctx, rt.Namespace(p.Namespace), w, interval)
		if err == nil && p.Match != nil {
			p.saw(rt, p.Match)
		}
		return lastState(ctx, rt, err)
	case len(p.MatchFiles)+len(p.AbsentFiles) > 0:
		absent, files := false, p.MatchFiles
		if len(p.AbsentFiles) > 0 {
			absent, files = true, p.AbsentFiles
		}
		objs, err := rt.ReadObjects(ctx, files)
		if err != nil {
			return err
		}
		if absent {
			for _, o := range objs {
				if err := p.neverSeen(ctx, rt, o.Object); err != nil {
					return fmt.Errorf("%s: %w", o.Source, err)
				}
			}
		}
		// One after the other, within the step's time; then all of them at once, as KUTTL
		// judges a file's objects at each poll: an object that matched first and no longer
		// does when the last one matches is waited for again. (Before, each held at some
		// moment, and a file whose objects never held together passed.)
		for {
			for _, o := range objs {
				w := ObjectWait{Want: o.Object, Absent: absent, AnyOrder: p.AnyOrder}
				if err := rt.Target().Cluster.WaitObjects(ctx, rt.Namespace(p.Namespace), w, interval); err != nil {
					return lastState(ctx, rt, fmt.Errorf("%s: %w", o.Source, err))
				}
			}
			if len(objs) < 2 {
				break // one object: its wait was the moment
			}
			var apart error
			for _, o := range objs {
				w := ObjectWait{Want: o.Object, Absent: absent, AnyOrder: p.AnyOrder, Once: true}
				if err := rt.Target().Cluster.WaitObjects(ctx, rt.Namespace(p.Namespace), w, interval); err != nil {
					apart = fmt.Errorf("%s: %w", o.Source, err)
					break
				}
			}
			if apart == nil {
				break
			}
			if ctx.Err() != nil {
				var unmet *Unmet
				if errors.As(apart, &unmet) {
					return &Unmet{Err: fmt.Errorf("%w (the file's objects each held in turn, never all at once)", apart)}
				}
				return lastState(ctx, rt, apart)
			}
			t := time.NewTimer(interval)
			select {
			case <-ctx.Done():
			case <-t.C:
			}
			t.Stop()
		}
		if !absent {
			for _, o := range objs {
				p.saw(rt, o.Object)
			}
		}
		return nil
	case p.Rollout != "":
		rt.SawObjects([]ObjectRef{{APIVersion: "apps/v1", Kind: "Deployment", Namespace: rt.Namespace(p.Namespace), Name: p.Rollout}})
		return lastState(ctx, rt, rt.Target().Cluster.WaitRollout(ctx, rt.Namespace(p.Namespace), p.Rollout))
	default:
		if p.Condition.Name != "" {
			rt.SawObjects([]ObjectRef{{APIVersion: p.Condition.APIVersion, Kind: p.Condition.Kind, Namespace: rt.Namespace(p.Namespace), Name: p.Condition.Name}})
		}
		return lastState(ctx, rt, rt.Target().Cluster.WaitCondition(ctx, rt.Namespace(p.Namespace), *p.Condition, interval))
	}
}

// refOf is the object a partial object names: its kind, name and namespace (its own, else
// the step's, else the scenario's first); a Name of "" when it names none.
func (p *Wait) refOf(rt Runtime, o Object) ObjectRef {
	r := ObjectRef{Namespace: rt.Namespace(p.Namespace)}
	r.APIVersion, _ = o["apiVersion"].(string)
	r.Kind, _ = o["kind"].(string)
	md, _ := o["metadata"].(map[string]any)
	r.Name, _ = md["name"].(string)
	if ns, _ := md["namespace"].(string); ns != "" {
		r.Namespace = ns
	}
	return r
}

// saw notes the object a match by name found.
func (p *Wait) saw(rt Runtime, o Object) {
	if r := p.refOf(rt, o); r.Name != "" {
		rt.SawObjects([]ObjectRef{r})
	}
}

// NamespaceTemplate says what is wrong with a namespace that is no namespace name (a DNS
// label) and holds no ${...}: most often another tool's template left as written, KUTTL's
// $NAMESPACE or {{ .Namespace }}, Chainsaw's ($namespace). A wait: absent there reads a
// namespace that cannot exist, and holds at its first poll. "" for a namespace name.
func NamespaceTemplate(ns string) string {
	if ns == "" || strings.Contains(ns, "${") || len(validation.IsDNS1123Label(ns)) == 0 {
		return ""
	}
	return fmt.Sprintf("metadata.namespace %q is no namespace name, and no object can be there (an absence there holds at once, a match never does); KUTTL's $NAMESPACE and {{ .Namespace }}, and Chainsaw's ($namespace), are written ${ns.<key>} (the scenario's ephemeralNamespaces), or leave metadata.namespace out for the step's namespace", ns)
}

// neverSeen is the error of a wait: absent of an object by name, in one of the scenario's
// namespaces, that no step of the run applied, deleted or read (Runtime.Unseen), and that
// does not exist when the wait starts: "webb is gone" would hold at the first poll over a
// typo of web, which lives on. nil when the object is there (the wait sees it go), when the
// run knows it, with mayNeverExist, or when the read fails otherwise (the wait says so).
func (p *Wait) neverSeen(ctx context.Context, rt Runtime, o Object) error {
	r := p.refOf(rt, o)
	if msg := NamespaceTemplate(r.Namespace); msg != "" {
		return fmt.Errorf("wait absent: %s", msg)
	}
	if p.MayNeverExist || r.Name == "" {
		return nil
	}
	unseen, seenIn := rt.Unseen(r)
	if !unseen {
		return nil
	}
	cl := rt.Target().Cluster
	_, err := cl.Get(ctx, Get{Kind: r.Kind, APIVersion: r.APIVersion, Namespace: r.Namespace, Name: r.Name})
	if !errors.Is(err, ErrNotFound) {
		return nil
	}
	msg := "wait absent: " + r.NotFound()
	if len(seenIn) > 0 {
		return fmt.Errorf("%s, a namespace the scenario does not own, where no step of this run applied, deleted or read it: the run knows it in %s; its absence in %s would hold at the first poll, whatever became of that one; leave metadata.namespace out for the step's namespace (%s), or say mayNeverExist: true for one that must never exist in %s",
			msg, strings.Join(seenIn, ", "), r.Namespace, rt.Namespace(p.Namespace), r.Namespace)
	}
	if near := nearName(ctx, cl, r); near != "" {
		msg += fmt.Sprintf(" (did you mean %s?)", near)
	}
	return fmt.Errorf("%s, and no step of this run applied, deleted or read it: its absence would hold at the first poll, for an object that never existed; mayNeverExist: true if a command or a controller makes it, or it must never exist", msg)
}

// Unmet is the error of a wait whose condition did not hold before its time ran out, when
// the last poll saw the system under test (an object with other fields, one still there, a
// condition not yet True, an expression still false) rather than an error reaching it: the
// run fails (a failed expectation, exit 1) instead of erroring (exit 3). Its message says
// what the wait last observed.
type Unmet struct{ Err error }

func (e *Unmet) Error() string { return e.Err.Error() }
func (e *Unmet) Unwrap() error { return e.Err }

// IsFailure reports an error that is a failed expectation (the runner's: an expression
// Runtime.Judge found false, an assertion), not an error of the world.
func IsFailure(err error) bool {
	var f interface{ Failure() }
	return errors.As(err, &f)
}

// lastState keeps what a cluster wait (or a delete's wait) last saw when the step's own timeout
// (or the scenario's) ends it: the runner reports such an error as the timeout alone, so the
// state (e.g. the closest object's diff of a match) becomes a warning of the step.
func lastState(ctx context.Context, rt Runtime, err error) error {
	if err == nil || ctx.Err() == nil {
		return err
	}
	var unmet *Unmet
	if errors.As(err, &unmet) {
		return err // the failure says it
	}
	msg := strings.TrimSuffix(err.Error(), ": "+context.Cause(ctx).Error())
	msg = strings.TrimSuffix(msg, ": "+ctx.Err().Error())
	if msg != context.Cause(ctx).Error() && msg != ctx.Err().Error() {
		rt.Warn(msg)
	}
	return err
}

// partialSummary is "Kind name", "Kind {labels}" or "Kind" for a partial object.
func partialSummary(o Object) string {
	kind, _ := o["kind"].(string)
	md, _ := o["metadata"].(map[string]any)
	if name, _ := md["name"].(string); name != "" {
		return kind + " " + name
	}
	if lm, ok := md["labels"].(map[string]any); ok && len(lm) > 0 {
		var parts []string
		for k, v := range lm {
			parts = append(parts, fmt.Sprintf("%s=%v", k, v))
		}
		sort.Strings(parts)
		return kind + " {" + strings.Join(parts, ",") + "}"
	}
	return kind
}

// KindKey is a kind as steps name it, in one spelling: Deployment, deployment and deployments
// are one kind (a get takes kubectl's names). It tells whether two steps name the same object.
func KindKey(kind string) string {
	k := strings.ToLower(kind)
	switch {
	case strings.HasSuffix(k, "ies"):
		return strings.TrimSuffix(k, "ies") + "y"
	case strings.HasSuffix(k, "sses"):
		return strings.TrimSuffix(k, "es")
	case strings.HasSuffix(k, "s") && !strings.HasSuffix(k, "ss"):
		return strings.TrimSuffix(k, "s")
	}
	return k
}

// metadataOf is the metadata of a partial object (nil without one).
func metadataOf(o Object) map[string]any {
	m, _ := o["metadata"].(map[string]any)
	return m
}

// isString says m (a map) holds a string at key.
func isString(m any, key string) bool {
	mm, _ := m.(map[string]any)
	_, ok := mm[key].(string)
	return ok
}
