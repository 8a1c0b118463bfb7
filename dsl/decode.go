package dsl

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"cuelang.org/go/cue"

	"labrun.dev/labrun/schema"
)

// decoder turns one scenario's CUE value into a Scenario, collecting every problem.
type decoder struct {
	l    *loader
	sc   *Scenario
	root cue.Value
	// order is every step in document order (its index is the step's pre-order number).
	order []*Step
	// parent maps a step to the step that holds it (nil at the top of a phase).
	parent map[*Step]*Step
	// stepValue keeps each step's CUE value for late checks.
	stepValue map[*Step]cue.Value
}

// scenario decodes one scenario: real is its value under the schema (for the schema's
// errors), v what the user wrote (built against the open schema, for decoding).
func (l *loader) scenario(name string, real, v cue.Value) {
	before := len(l.errs.errs)
	if err := real.Validate(cue.Concrete(true)); err != nil {
		l.addCUEErrorIn(err, v, name)
	}
	l.checkFields(v, l.schema().LookupPath(cue.ParsePath("#Scenario")), []string{name})
	l.decodeScenario(name, v, before)
}

// decodeScenario decodes v, what the user wrote; the scenario is kept when no problem has
// been found since the error count was before.
func (l *loader) decodeScenario(name string, v cue.Value, before int) {
	d := &decoder{l: l, root: v, parent: map[*Step]*Step{}, stepValue: map[*Step]cue.Value{}}
	sc := &Scenario{Name: name, Pos: l.valuePos(v), names: map[string]*Step{}}
	if sc.Pos.IsValid() {
		sc.Dir = filepath.Dir(sc.Pos.File)
	}
	d.sc = sc
	d.strings(map[string]*string{"doc": &sc.Doc, "target": &sc.Target})
	if sc.Target == "" {
		sc.Target = "local"
	}
	sc.Namespaces = d.stringList("namespaces")
	sc.AllowReset = d.stringList("allowReset")
	sc.Tags = d.stringList("tags")
	if b, err := v.LookupPath(cue.ParsePath("clusterScoped")).Bool(); err == nil {
		sc.ClusterScoped = b
	}
	sc.Timeout = d.duration(v.LookupPath(cue.ParsePath("timeout")))
	sc.CleanupTimeout = d.duration(v.LookupPath(cue.ParsePath("cleanupTimeout")))
	d.vars()
	if lv := v.LookupPath(cue.ParsePath("local")); lv.Exists() {
		var local schema.Local
		if err := lv.Decode(&local); err == nil {
			sc.Local = &local
		}
	}
	sc.Setup = d.steps(v.LookupPath(cue.ParsePath("setup")), PhaseSetup, "setup", nil)
	sc.Steps = d.steps(v.LookupPath(cue.ParsePath("steps")), PhaseSteps, "steps", nil)
	sc.Cleanup = d.steps(v.LookupPath(cue.ParsePath("cleanup")), PhaseCleanup, "cleanup", nil)
	d.checkStructure()
	names := d.names()
	d.compile(names)
	if len(l.errs.errs) == before {
		l.res.Scenarios = append(l.res.Scenarios, sc)
	}
}

func (d *decoder) err(pos Pos, path, format string, args ...any) {
	if !pos.IsValid() {
		pos = d.sc.Pos
	}
	if path != "" {
		path = d.sc.Name + "." + path
	}
	d.l.errs.add(pos, path, format, args...)
}

func (d *decoder) strings(fields map[string]*string) {
	for name, dst := range fields {
		if s, err := d.root.LookupPath(cue.ParsePath(name)).String(); err == nil {
			*dst = s
		}
	}
}

func (d *decoder) stringList(name string) []string {
	var out []string
	it, err := d.root.LookupPath(cue.ParsePath(name)).List()
	if err != nil {
		return nil
	}
	for it.Next() {
		if s, err := it.Value().String(); err == nil {
			out = append(out, s)
		}
	}
	return out
}

// duration decodes a duration field; CUE's regexp has already checked its shape, but not that
// Go can parse it (e.g. an overflow).
func (d *decoder) duration(v cue.Value) time.Duration {
	if !v.Exists() {
		return 0
	}
	s, err := v.String()
	if err != nil {
		return 0
	}
	var dur schema.Duration
	if err := dur.UnmarshalText([]byte(s)); err != nil {
		if !durationShape.MatchString(s) {
			return 0 // the schema's pattern has reported it (v is the user's value, unchecked)
		}
		d.err(d.l.litPos(v), d.relPath(v), "expected a duration of at most %s, got %q", time.Duration(math.MaxInt64), s)
		return 0
	}
	return dur.D()
}

// durationShape is the schema's #Duration pattern.
var durationShape = regexp.MustCompile(`^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`)

// relPath is v's path inside the scenario, as errors print it ("steps.0.sleep").
func (d *decoder) relPath(v cue.Value) string {
	sels := v.Path().Selectors()
	var parts []string
	for _, s := range sels[min(len(d.root.Path().Selectors()), len(sels)):] {
		if s.Type() == cue.StringLabel {
			parts = append(parts, s.Unquoted())
		} else {
			parts = append(parts, s.String())
		}
	}
	return strings.Join(parts, ".")
}

// vars decodes the scenario's vars and applies --var overrides, keeping each var's type.
func (d *decoder) vars() {
	d.sc.Vars = map[string]any{}
	declared := map[string]Pos{}
	it, err := d.root.LookupPath(cue.ParsePath("vars")).Fields()
	if err == nil {
		for it.Next() {
			var x any
			if err := it.Value().Decode(&x); err == nil {
				d.sc.Vars[it.Selector().String()] = normalizeNumber(x)
				declared[it.Selector().String()] = d.l.litPos(it.Value())
			}
		}
	}
	for k, raw := range d.l.opts.Vars {
		cur, ok := d.sc.Vars[k]
		if !ok {
			// A --var for a name this scenario does not declare is still visible: scenarios
			// loaded together may declare different vars.
			d.sc.Vars[k] = raw
			continue
		}
		switch cur.(type) {
		case float64:
			f, err := strconv.ParseFloat(raw, 64)
			if err != nil {
				d.err(declared[k], "", "--var %s=%s: expected a number, as vars.%s is declared here", k, raw, k)
				continue
			}
			d.sc.Vars[k] = f
		case bool:
			b, err := strconv.ParseBool(raw)
			if err != nil {
				d.err(declared[k], "", "--var %s=%s: expected true or false, as vars.%s is declared here", k, raw, k)
				continue
			}
			d.sc.Vars[k] = b
		default:
			d.sc.Vars[k] = raw
		}
	}
}

// normalizeNumber makes every number a float64, the one number type expressions see.
func normalizeNumber(x any) any {
	switch n := x.(type) {
	case int:
		return float64(n)
	case int64:
		return float64(n)
	case json.Number:
		f, _ := n.Float64()
		return f
	}
	return x
}

// steps decodes a list of steps.
func (d *decoder) steps(v cue.Value, phase Phase, path string, parent *Step) []*Step {
	if !v.Exists() {
		return nil
	}
	it, err := v.List()
	if err != nil {
		return nil
	}
	var out []*Step
	for i := 0; it.Next(); i++ {
		s := d.step(it.Value(), phase, fmt.Sprintf("%s.%d", path, i), parent)
		if s != nil {
			out = append(out, s)
		}
	}
	return out
}

func (d *decoder) step(v cue.Value, phase Phase, path string, parent *Step) *Step {
	s := &Step{Pos: d.l.valuePos(v), Path: path, Phase: phase}
	d.order = append(d.order, s)
	d.parent[s] = parent
	d.stepValue[s] = v
	it, err := v.Fields()
	if err != nil {
		return nil
	}
	var kinds []string
	for it.Next() {
		name := it.Selector().String()
		fv := it.Value()
		switch name {
		case "name":
			s.Name, _ = fv.String()
		case "doc":
			s.Doc, _ = fv.String()
		case "at":
			s.At, s.HasAt = d.duration(fv), true
		case "timeout":
			s.Timeout = d.duration(fv)
		case "background":
			s.Background, _ = fv.Bool()
		case "every":
			s.Every = d.duration(fv)
			if s.Every == 0 && fv.Exists() {
				if str, _ := fv.String(); str != "" {
					if dd, err := time.ParseDuration(str); err == nil && dd == 0 {
						d.err(d.l.litPos(fv), path+".every", "expected a positive interval, got %q", str)
					}
				}
			}
		case "while":
			s.While, _ = fv.String()
		case "mayFail":
			s.MayFail, _ = fv.Bool()
		default:
			kinds = append(kinds, name)
		}
	}
	switch len(kinds) {
	case 0:
		d.err(s.Pos, path, "step has no kind: expected exactly one of %s", strings.Join(Kinds, ", "))
		return s
	case 1:
	default:
		d.err(s.Pos, path, "step has %d kinds (%s): expected exactly one; put them in separate steps", len(kinds), strings.Join(kinds, ", "))
		return s
	}
	s.Kind = kinds[0]
	kv := v.LookupPath(cue.MakePath(cue.Str(s.Kind)))
	kpath := path + "." + s.Kind
	switch s.Kind {
	case "parallel", "sequence":
		s.Children = d.steps(kv, phase, kpath, s)
		if len(s.Children) == 0 {
			d.err(d.l.valuePos(kv), kpath, "empty %s block: expected at least one step", s.Kind)
		}
	case "repeat":
		s.Children = d.steps(kv.LookupPath(cue.ParsePath("steps")), phase, kpath+".steps", s)
		s.MaxRounds = 10
		if n, err := kv.LookupPath(cue.ParsePath("max")).Int64(); err == nil {
			s.MaxRounds = int(n)
		}
		s.Interval = d.duration(kv.LookupPath(cue.ParsePath("interval")))
	case "await":
		if str, err := kv.String(); err == nil {
			s.Await = []string{str}
		} else if lit, err := kv.List(); err == nil {
			for lit.Next() {
				if str, err := lit.Value().String(); err == nil {
					s.Await = append(s.Await, str)
				}
			}
			if len(s.Await) == 0 {
				d.err(d.l.valuePos(kv), kpath, "await of nothing: expected the names of background steps")
			}
		}
	case "sleep":
		s.Sleep = d.duration(kv)
	case "assert":
	default:
		d.params(s, kv, kpath)
	}
	return s
}

// params decodes a kind's parameters and keeps its raw form and templates for run time.
func (d *decoder) params(s *Step, kv cue.Value, kpath string) {
	newParams, ok := paramTypes[s.Kind]
	if !ok {
		return
	}
	var raw any
	if err := kv.Decode(&raw); err != nil {
		return // CUE has reported it
	}
	s.raw = raw
	p := newParams()
	b, _ := json.Marshal(raw)
	if err := json.Unmarshal(b, p); err != nil {
		return // a value of the wrong type: the schema's error says which
	}
	s.Params = p
	d.checkParams(s, kv, kpath)
	if s.Kind == "wait" {
		w := p.(*schema.Wait)
		s.Interval = w.Interval.D()
	}
}

// exactlyOne checks that exactly one of fields is set in a kind's value.
func (d *decoder) exactlyOne(s *Step, kv cue.Value, kpath string, fields ...string) string {
	return d.exactlyOneNamed(s.Kind, kv, kpath, fields...)
}

// exactlyOneNamed is exactlyOne for a part of a step, named what (e.g. "ready").
func (d *decoder) exactlyOneNamed(what string, kv cue.Value, kpath string, fields ...string) string {
	var set []string
	for _, f := range fields {
		if kv.LookupPath(cue.MakePath(cue.Str(f))).Exists() {
			set = append(set, f)
		}
	}
	switch len(set) {
	case 1:
		return set[0]
	case 0:
		d.err(d.l.valuePos(kv), kpath, "%s needs one of %s", what, strings.Join(fields, ", "))
	default:
		d.err(d.l.valuePos(kv), kpath, "%s takes only one of %s, got %s", what, strings.Join(fields, ", "), strings.Join(set, " and "))
	}
	return ""
}

// checkParams checks what the schema cannot say: one-of choices and cross-field rules.
func (d *decoder) checkParams(s *Step, kv cue.Value, kpath string) {
	switch p := s.Params.(type) {
	case *schema.Apply:
		if len(p.Objects) == 0 && len(p.Files) == 0 {
			d.err(d.l.valuePos(kv), kpath, "apply needs objects or files")
		}
	case *schema.Delete:
		if len(p.Objects) == 0 && len(p.Files) == 0 {
			d.err(d.l.valuePos(kv), kpath, "delete needs objects or files")
		}
	case *schema.Kill:
		d.exactlyOne(s, kv, kpath, "selector", "pod", "process")
	case *schema.Wait:
		d.exactlyOne(s, kv, kpath, "rollout", "condition", "until")
		if p.Condition != nil && p.Condition.Name == "" && p.Condition.Selector == "" {
			d.err(d.l.valuePos(kv.LookupPath(cue.ParsePath("condition"))), kpath+".condition", "condition needs name or selector")
		}
	case *schema.Get:
		if p.Name != "" && p.Selector != "" {
			d.err(d.l.valuePos(kv), kpath, "get takes name or selector, not both")
		}
	case *schema.Exec:
		if p.Pod != "" && p.Selector != "" {
			d.err(d.l.valuePos(kv), kpath, "exec takes pod or selector, not both")
		}
		d.checkRegexp(kv, kpath, "capture", p.Capture)
	case *schema.Load:
		if p.Requests > 0 && p.Duration > 0 {
			d.err(d.l.valuePos(kv.LookupPath(cue.ParsePath("duration"))), kpath+".duration",
				"load takes requests or duration, not both: requests=%d runs exactly that many", p.Requests)
		}
	case *schema.Snapshot:
		src := d.exactlyOne(s, kv, kpath, "envoy", "admin", "prometheus", "backend")
		if (src == "envoy" || src == "admin") && p.Cluster == "" {
			d.err(d.l.valuePos(kv), kpath, "a snapshot of Envoy needs cluster: the exact cluster name, e.g. \"outbound|8080||backend.conn-lab.svc.cluster.local\"")
		}
		if (src == "prometheus" || src == "backend") && (p.Hosts || p.Cluster != "") {
			d.err(d.l.valuePos(kv), kpath, "cluster and hosts apply only to an Envoy snapshot (envoy or admin)")
		}
		if src == "backend" && (d.sc.Local == nil || d.sc.Local.Backends[p.Backend] == (schema.Backend{}) && !hasKey(d.sc.Local.Backends, p.Backend)) {
			d.err(d.l.valuePos(kv.LookupPath(cue.ParsePath("backend"))), kpath+".backend",
				"no local backend named %q: expected one of local.backends (%s)", p.Backend, backendNames(d.sc.Local))
		}
	case *schema.Config:
		d.exactlyOne(s, kv, kpath, "envoy", "admin")
		n := 0
		for _, x := range []string{p.Cluster, p.Listener, p.Route} {
			if x != "" {
				n++
			}
		}
		if n != 1 {
			d.err(d.l.valuePos(kv), kpath, "config needs exactly one of cluster, listener, route")
		}
	case *schema.Logs:
		d.exactlyOneOf(kv, kpath, "logs", [][]string{{"pod", "selector"}, {"process"}, {"file"}})
		d.checkRegexp(kv, kpath, "match", p.Match)
		d.checkRegexp(kv, kpath, "capture", p.Capture)
	case *schema.Process:
		if p.Ready != nil {
			d.exactlyOneNamed("ready", kv.LookupPath(cue.ParsePath("ready")), kpath+".ready", "http", "tcp", "log")
			d.checkRegexp(kv.LookupPath(cue.ParsePath("ready")), kpath+".ready", "log", p.Ready.Log)
		}
	}
}

func hasKey[V any](m map[string]V, k string) bool {
	_, ok := m[k]
	return ok
}

func backendNames(l *schema.Local) string {
	if l == nil {
		return "none declared"
	}
	return keys(l.Backends)
}

// exactlyOneOf is exactlyOne over groups of fields (any field of a group selects it).
func (d *decoder) exactlyOneOf(kv cue.Value, kpath, kind string, groups [][]string) {
	var set []string
	var all []string
	for _, g := range groups {
		all = append(all, strings.Join(g, " or "))
		for _, f := range g {
			if kv.LookupPath(cue.MakePath(cue.Str(f))).Exists() {
				set = append(set, f)
				break
			}
		}
	}
	if len(set) == 0 {
		d.err(d.l.valuePos(kv), kpath, "%s needs one of: %s", kind, strings.Join(all, "; "))
	} else if len(set) > 1 {
		d.err(d.l.valuePos(kv), kpath, "%s takes only one of: %s; got %s", kind, strings.Join(all, "; "), strings.Join(set, " and "))
	}
}

func (d *decoder) checkRegexp(kv cue.Value, kpath, field, re string) {
	if re == "" || HasInterpolation(re) {
		return
	}
	if _, err := compileRE(re); err != nil {
		fv := kv.LookupPath(cue.ParsePath(field))
		d.err(d.l.valuePos(fv), kpath+"."+field, "invalid RE2 pattern: %v", err)
	}
}

// checkStructure checks names, at, background, await and every/while.
func (d *decoder) checkStructure() {
	sc := d.sc
	for _, s := range d.order {
		if s.Name == "" {
			continue
		}
		if Reserved[s.Name] {
			d.err(d.fieldPos(s, "name"), s.Path+".name", "%q is a reserved name (it means something in expressions); choose another", s.Name)
			continue
		}
		if prev, ok := sc.names[s.Name]; ok {
			d.err(d.fieldPos(s, "name"), s.Path+".name", "duplicate step name %q: first used at %s", s.Name, prev.Pos.Rel(sc.Dir))
			continue
		}
		sc.names[s.Name] = s
	}
	index := map[*Step]int{}
	for i, s := range d.order {
		index[s] = i
	}
	for _, s := range d.order {
		p := d.parent[s]
		if s.HasAt && (p == nil || p.Kind != "parallel") {
			d.err(d.fieldPos(s, "at"), s.Path+".at", "at is only allowed on a step directly inside a parallel block (it is the offset from the block's start); use sleep in a sequence")
		}
		if s.Background && s.Name == "" {
			d.err(d.fieldPos(s, "background"), s.Path+".background", "a background step needs a name, so that await can join it")
		}
		if s.Background && s.Phase == PhaseCleanup {
			d.err(d.fieldPos(s, "background"), s.Path+".background", "background steps are not allowed in cleanup")
		}
		hasEvery := s.Every > 0 || d.stepValue[s].LookupPath(cue.ParsePath("every")).Exists()
		if hasEvery != (s.While != "") {
			if hasEvery {
				d.err(d.fieldPos(s, "every"), s.Path+".every", "every needs while: the name of the step during which to sample")
			} else {
				d.err(d.fieldPos(s, "while"), s.Path+".while", "while needs every: the sampling interval, e.g. every: \"1s\"")
			}
		}
		if s.While != "" {
			t := sc.names[s.While]
			switch {
			case t == nil:
				d.err(d.fieldPos(s, "while"), s.Path+".while", "while names %q, but no step has that name%s", s.While, suggest(s.While, sc.names))
			case t == s:
				d.err(d.fieldPos(s, "while"), s.Path+".while", "a step cannot sample while itself runs")
			case !d.concurrent(s, t, index):
				d.err(d.fieldPos(s, "while"), s.Path+".while", "while names %q, which cannot be running when this step starts: put both in one parallel block, or make %q a background step declared earlier", s.While, s.While)
			}
		}
		for _, a := range s.Await {
			t := sc.names[a]
			switch {
			case t == nil:
				d.err(d.fieldPos(s, "await"), s.Path+".await", "await names %q, but no step has that name%s", a, suggest(a, sc.names))
			case !t.Background:
				d.err(d.fieldPos(s, "await"), s.Path+".await", "await names %q, which is not a background step: only background steps can be awaited", a)
			case d.ancestor(t, s):
				d.err(d.fieldPos(s, "await"), s.Path+".await", "await of %q inside %q itself would wait forever", a, a)
			case !d.concurrent(s, t, index):
				d.err(d.fieldPos(s, "await"), s.Path+".await", "await names %q, which starts after this step: it would wait forever", a)
			}
		}
	}
	d.checkAwaitCycles()
}

// fieldPos is where a step's field is written, else the step's position.
func (d *decoder) fieldPos(s *Step, field string) Pos {
	if v := d.stepValue[s].LookupPath(cue.MakePath(cue.Str(field))); v.Exists() {
		if p := d.l.valuePos(v); p.IsValid() {
			return p
		}
	}
	return s.Pos
}

// ancestor reports whether a holds s.
func (d *decoder) ancestor(a, s *Step) bool {
	for p := d.parent[s]; p != nil; p = d.parent[p] {
		if p == a {
			return true
		}
	}
	return false
}

// concurrent reports whether target can have started by the time s starts: it comes earlier
// in document order (and is not still to come in the same sequence), or both sit in different
// branches of one parallel block.
func (d *decoder) concurrent(s, target *Step, index map[*Step]int) bool {
	if target.Phase != s.Phase && !(target.Phase == PhaseSetup && s.Phase == PhaseSteps) {
		return false
	}
	// Different branches of a common parallel ancestor run together.
	for p := d.parent[s]; p != nil; p = d.parent[p] {
		if p.Kind == "parallel" && d.ancestor(p, target) {
			return d.branch(p, s) != d.branch(p, target)
		}
	}
	return index[target] < index[s] && (target.Background || d.parent[target] != nil && d.parent[target].Kind == "parallel")
}

// branch returns the child of block p that holds s.
func (d *decoder) branch(p, s *Step) *Step {
	for c := s; c != nil; c = d.parent[c] {
		if d.parent[c] == p {
			return c
		}
	}
	return nil
}

// checkAwaitCycles finds background steps that await each other.
func (d *decoder) checkAwaitCycles() {
	edges := map[*Step][]*Step{}
	for _, s := range d.order {
		for _, a := range s.Await {
			t := d.sc.names[a]
			if t == nil {
				continue
			}
			for p := d.parent[s]; p != nil; p = d.parent[p] {
				if p.Background && p != t { // p == t is reported as an await inside itself
					edges[p] = append(edges[p], t)
				}
			}
		}
	}
	state := map[*Step]int{}
	var stack []*Step
	var visit func(*Step) bool
	visit = func(s *Step) bool {
		state[s] = 1
		stack = append(stack, s)
		for _, t := range edges[s] {
			if state[t] == 1 {
				var names []string
				start := 0
				for i, x := range stack {
					if x == t {
						start = i
					}
				}
				for _, x := range stack[start:] {
					names = append(names, x.Name)
				}
				names = append(names, t.Name)
				d.err(t.Pos, t.Path, "await cycle: %s", strings.Join(names, " awaits "))
				return true
			}
			if state[t] == 0 && visit(t) {
				return true
			}
		}
		stack = stack[:len(stack)-1]
		state[s] = 2
		return false
	}
	for _, s := range d.order {
		if s.Background && state[s] == 0 {
			visit(s)
		}
	}
}

func suggest(name string, names map[string]*Step) string {
	var all []string
	for k := range names {
		all = append(all, k)
	}
	sort.Strings(all)
	if s := closest(name, all); s != "" {
		return fmt.Sprintf(" (did you mean %q?)", s)
	}
	if len(all) == 0 {
		return "; no step is named"
	}
	return "; named steps: " + strings.Join(all, ", ")
}

// names computes what expressions may refer to.
func (d *decoder) names() *Names {
	sc := d.sc
	n := &Names{
		Snapshots: map[string]bool{}, Series: map[string]bool{}, Loads: map[string]bool{},
		Execs: map[string]bool{}, Logs: map[string]bool{}, Values: map[string]bool{},
		Vars: sc.Vars, Backends: map[string]bool{}, Blackholes: map[string]bool{},
		Steps: map[string]bool{},
	}
	for name := range sc.names {
		n.Steps[name] = true
	}
	if sc.Local != nil {
		for k := range sc.Local.Backends {
			n.Backends[k] = true
		}
		for k := range sc.Local.Blackholes {
			n.Blackholes[k] = true
		}
	}
	sources := map[string]bool{}
	for _, s := range d.order {
		if s.Name == "" || sc.names[s.Name] != s {
			continue
		}
		switch s.Kind {
		case "snapshot":
			if s.Every > 0 {
				n.Series[s.Name] = true
				continue
			}
			n.Snapshots[s.Name] = true
			sc.Snapshots = append(sc.Snapshots, s)
			if p, ok := s.Params.(*schema.Snapshot); ok {
				sources[p.Source()] = true
			}
		case "load":
			n.Loads[s.Name] = true
		case "exec":
			n.Execs[s.Name] = true
		case "logs":
			n.Logs[s.Name] = true
		case "get", "config", "process":
			n.Values[s.Name] = true
		}
	}
	switch {
	case len(sc.Snapshots) < 2:
		n.DeltaErr = fmt.Sprintf("delta needs two snapshots of one source; this scenario has %d named snapshot(s)", len(sc.Snapshots))
	case len(sources) > 1:
		var names []string
		for _, s := range sc.Snapshots {
			names = append(names, s.Name)
		}
		n.DeltaErr = fmt.Sprintf(`delta is ambiguous: the snapshots (%s) read %d different sources; write delta("a", "b").<stat> with the two snapshots to compare`, strings.Join(names, ", "), len(sources))
	}
	return n
}

// compile compiles every expression and template of the scenario.
func (d *decoder) compile(names *Names) {
	sc := d.sc
	if it, err := d.root.LookupPath(cue.ParsePath("expect")).List(); err == nil {
		for i := 0; it.Next(); i++ {
			v := it.Value()
			src, err := v.String()
			if err != nil {
				continue
			}
			e, cerr := compile(src, d.l.litPos(v), names, compileOpts{asBool: true})
			if cerr != nil {
				cerr.Path = fmt.Sprintf("%s.expect.%d", sc.Name, i)
				d.l.errs.errs = append(d.l.errs.errs, cerr)
				continue
			}
			sc.Expect = append(sc.Expect, e)
		}
	}
	for _, s := range d.order {
		v := d.stepValue[s]
		var ev cue.Value
		switch s.Kind {
		case "assert":
			ev = v.LookupPath(cue.ParsePath("assert"))
		case "wait":
			ev = v.LookupPath(cue.ParsePath("wait.until"))
		case "repeat":
			ev = v.LookupPath(cue.ParsePath("repeat.until"))
		}
		if ev.Exists() {
			if src, err := ev.String(); err == nil {
				e, cerr := compile(src, d.l.litPos(ev), names, compileOpts{asBool: true})
				if cerr != nil {
					cerr.Path = sc.Name + "." + s.Path + "." + s.Kind
					d.l.errs.errs = append(d.l.errs.errs, cerr)
				} else {
					s.Expr = e
				}
			}
		}
		if s.raw != nil {
			d.templates(s, v.LookupPath(cue.MakePath(cue.Str(s.Kind))), names)
		}
	}
}

// templates compiles every ${...} in a step's strings.
func (d *decoder) templates(s *Step, kv cue.Value, names *Names) {
	var walk func(v cue.Value, path string)
	walk = func(v cue.Value, path string) {
		switch v.IncompleteKind() {
		case cue.StringKind:
			str, err := v.String()
			if err != nil || !HasInterpolation(str) {
				return
			}
			t, terr := parseTemplate(str, d.l.litPos(v), names)
			if terr != nil {
				terr.Path = d.sc.Name + "." + s.Path + "." + s.Kind + strings.ReplaceAll(path, pathSep, ".")
				d.l.errs.errs = append(d.l.errs.errs, terr)
				return
			}
			if s.templates == nil {
				s.templates = map[string]*Template{}
			}
			s.templates[path] = t
		case cue.StructKind:
			it, err := v.Fields()
			if err != nil {
				return
			}
			for it.Next() {
				walk(it.Value(), path+pathSep+it.Selector().Unquoted())
			}
		case cue.ListKind:
			it, err := v.List()
			if err != nil {
				return
			}
			for i := 0; it.Next(); i++ {
				walk(it.Value(), path+pathSep+strconv.Itoa(i))
			}
		}
	}
	walk(kv, "")
}
