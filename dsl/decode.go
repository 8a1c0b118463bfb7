package dsl

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/token"

	"labrun.dev/labrun/internal/kubeshape"
	"labrun.dev/labrun/internal/secretmask"
	"labrun.dev/labrun/schema"
)

// decoder turns one scenario's CUE value into a Scenario, collecting every problem.
type decoder struct {
	l    *loader
	sc   *Scenario
	root cue.Value
	// timeline is the steps' order and nesting, for what one step can know of another.
	*timeline
	// stepValue keeps each step's CUE value for late checks, kindValue its kind's value.
	stepValue map[*Step]cue.Value
	kindValue map[*Step]cue.Value
	// before is the number of problems the loader had when this scenario began.
	before int
	// stepFiles are the files steps name, read once (readStepFile): the templates' marks,
	// the partial objects, the absent names and the lints each read them.
	stepFiles map[string]stepFileRead
	// untyped are the names of steps written inside a field that is not a kind (see
	// nestedNames): not decoded, yet not unknown.
	untyped map[string]bool
	// unsure are the steps whose background is written but is no bool (background: "true"):
	// that is an error of its own, and an await of such a step is none besides it.
	unsure map[*Step]bool
	// warnings are the checks' warnings, kept when the scenario is (as the lints').
	warnings []*Warning
	// localOnKube says local is refused on the kube target: the steps that need the local
	// world are that one mistake.
	localOnKube bool
	// pending are the expressions' warnings, reported by lint.
	pending []*Warning
	// vacuous are the expectations' comparisons that cannot fail (or hold) whatever the run
	// records: errors when the scenario has no other.
	vacuous []*Error
	// vacuousOf is the expectation each of vacuous is of.
	vacuousOf []*Expr
	// refused are the steps whose kind's Check found a problem: later checks of them would
	// only repeat it.
	refused map[*Step]bool
	// filesUnknown says a step reads a file that cannot be read before the run (one a
	// command writes, one named by a ${...}): its ${...} may read any var.
	filesUnknown bool
	// fileExprs are the ${...} of the files each step reads, compiled (checkFileTemplates):
	// which vars the step reads through them.
	fileExprs map[*Step][]*Expr
	// cueReads is what the scenario's CUE could read of its vars (readsVar).
	cueReads *cueVarReads
}

// warn adds a warning with a lint code, unless the scenario's lint.ignore silences it.
func (d *decoder) warn(pos Pos, code, format string, args ...any) {
	if _, ok := d.sc.LintIgnore[code]; ok {
		return
	}
	d.warnings = append(d.warnings, &Warning{Pos: pos, Code: code, Scenario: d.sc.Name, Msg: fmt.Sprintf(format, args...)})
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
	d := &decoder{l: l, root: v, timeline: &timeline{parent: map[*Step]*Step{}}, stepValue: map[*Step]cue.Value{}, kindValue: map[*Step]cue.Value{}, before: before, refused: map[*Step]bool{}}
	defer d.hideSecrets(before, len(l.warnings))
	defer l.nameVarFlags(before, v)
	sc := &Scenario{Name: name, Pos: l.valuePos(v), names: map[string]*Step{}}
	if sc.Pos.IsValid() {
		sc.Dir = filepath.Dir(sc.Pos.File)
	}
	d.sc = sc
	if l.stepsOf != nil {
		defer func() {
			steps := map[string]Pos{}
			for n, s := range sc.names {
				steps[n] = s.Pos
			}
			l.stepsOf[name] = steps
		}()
	}
	d.strings(map[string]*string{"doc": &sc.Doc, "target": &sc.Target})
	if sc.Target == "" {
		sc.Target = "local"
	}
	if lv := v.LookupPath(cue.MakePath(cue.Str("lint"), cue.Str("ignore"))); lv.Exists() {
		_ = lv.Decode(&sc.LintIgnore) // the schema checks its shape
	}
	d.clusters()
	sc.Namespaces = d.stringList("namespaces")
	sc.SystemNamespaces = d.stringList("systemNamespaces")
	d.ephemeral()
	sc.AllowReset = d.stringList("allowReset")
	sc.Tags = d.stringList("tags")
	if sv := v.LookupPath(cue.MakePath(cue.Str("survivors"))); sv.Exists() {
		_ = decodeValue(d, sv, &sc.Survivors) // the schema checks its shape
		sc.SurvivorPos = d.survivorPos(plainLiteral(sv), sc.Survivors)
		for k := range sc.Survivors {
			if _, ok := sc.SurvivorPos[k]; !ok {
				sc.SurvivorPos[k] = d.l.valuePos(sv.LookupPath(cue.MakePath(cue.Str(k))))
			}
		}
	}
	if b, err := v.LookupPath(cue.MakePath(cue.Str("clusterScoped"))).Bool(); err == nil {
		sc.ClusterScoped = b
	}
	// Each looked up once: a lookup costs an OpContext (768 bytes), and more when the field
	// is missing.
	tv := v.LookupPath(cue.MakePath(cue.Str("timeout")))
	sc.Timeout = d.duration(tv)
	if sc.Timeout > 0 {
		sc.TimeoutPos = d.l.litPos(tv)
	}
	if d.zero(tv) {
		d.err(d.l.litPos(tv), "timeout", "%s", schema.ZeroDuration("timeout", "no timeout", ""))
	}
	tv = v.LookupPath(cue.MakePath(cue.Str("cleanupTimeout")))
	sc.CleanupTimeout = d.duration(tv)
	if sc.CleanupTimeout > 0 {
		sc.CleanupTimeoutPos = d.l.litPos(tv)
	}
	if d.zero(tv) {
		d.err(d.l.litPos(tv), "cleanupTimeout", "%s", schema.ZeroDuration("cleanupTimeout", "the default", ""))
	}
	d.vars()
	d.sweep()
	d.secrets()
	if lv := v.LookupPath(cue.MakePath(cue.Str("local"))); lv.Exists() {
		var local schema.Local
		if err := decodeValue(d, lv, &local); err == nil {
			sc.Local = &local
			if d.target() == "kube" {
				field := "local"
				for _, f := range []string{"backends", "blackholes", "dns"} {
					if lv.LookupPath(cue.MakePath(cue.Str(f))).Exists() {
						field = "local." + f
						break
					}
				}
				d.localOnKube = true
				d.err(d.rootFieldPos(field), field, "local declares the local target's world (backends, blackholes, a DNS zone), which the kube target does not build: what reads it would find nothing; drop local (on kube, talk to Services), or run on the local target")
			}
		} else if len(l.errs.errs) == before {
			// Never dropped silently: a local world that does not decode is reported here.
			d.err(d.l.valuePos(lv), "local", "local: %v", err)
		}
	}
	sc.Setup = d.steps(v.LookupPath(cue.MakePath(cue.Str("setup"))), PhaseSetup, "setup", nil, nil)
	stepsV := v.LookupPath(cue.MakePath(cue.Str("steps")))
	sc.Steps = d.steps(stepsV, PhaseSteps, "steps", nil, nil)
	if n, err := stepsV.Len().Int64(); err == nil && n == 0 {
		// Nothing would run and every expectation would read nothing: a pass that proves
		// nothing.
		d.err(d.l.litPos(stepsV), "steps", "steps is empty: expected at least one step (setup and cleanup run around them)")
	}
	sc.Catch = d.steps(v.LookupPath(cue.MakePath(cue.Str("catch"))), PhaseCatch, "catch", nil, nil)
	sc.Cleanup = d.steps(v.LookupPath(cue.MakePath(cue.Str("cleanup"))), PhaseCleanup, "cleanup", nil, nil)
	for _, s := range d.order { // parents come before their steps
		if p := d.parent[s]; s.Cluster == "" && p != nil {
			s.Cluster = p.Cluster // a block's cluster is its steps' default
		}
	}
	d.indexSteps()
	sc.timeline = d.timeline
	d.checkStructure()
	d.checkSystemNamespaces()
	d.shownNames()
	d.markFileTemplates()
	d.checkKinds()
	d.checkTimeline()
	d.checkLocalWorld()
	d.checkNamespaces()
	d.checkAbsentNames()
	d.checkFilePartials()
	names := d.names()
	sc.exprNames = names
	d.compile(names)
	d.checkBackendQueries()
	d.plot()
	d.checkSampledReads()
	d.checkMetaNames()
	d.checkShadowed(names)
	if len(l.errs.errs) == before {
		// Said once every expression has compiled: one that failed read no var.
		d.checkSweptVarsRead(names)
		d.checkMayFailChecks(names)
	}
	// An expectation that cannot fail is said with the other problems, not once they are
	// fixed (a newcomer fixing ten problems met two more): its finding is of its own compiled
	// expression (one that did not compile has none), unless it reads a step with a problem,
	// whose result's type the fix may change (a snapshot in a sampled block becomes a series).
	broken := d.brokenSteps(l.errs.errs[before:])
	for k, v := range d.vacuous {
		if !slices.ContainsFunc(d.vacuousOf[k].Names, func(n string) bool { return broken[n] }) {
			l.errs.errs = append(l.errs.errs, v)
		}
	}
	if len(l.errs.errs) == before {
		// A scenario left out by --scenario or --tag is not warned of: it will not run, and
		// --strict would refuse the run for it.
		if sel := l.opts.Selected; sel == nil || sel(sc.Name, sc.Tags) {
			l.warnings = append(l.warnings, d.warnings...)
			d.lint()
		}
		if l.opts.ForRun {
			d.detach()
		} else {
			l.undetached = append(l.undetached, d)
		}
		l.res.Scenarios = append(l.res.Scenarios, sc)
	} else if l.opts.Partial {
		if !sc.cueVarsKnown {
			d.knowCUEVars() // what a load's requests are, for the judge (interp.CheckCannotFailOf)
		}
		l.res.Partial = append(l.res.Partial, sc)
	}
	if l.opts.ForRun {
		d.dropRaw()
	}
}

// brokenSteps are the names of the steps that errs (the scenario's problems) are of, or of a
// block holding them.
func (d *decoder) brokenSteps(errs []*Error) map[string]bool {
	out := map[string]bool{}
	prefix := d.sc.Name + "."
	under := func(path, p string) bool { return path == p || strings.HasPrefix(path, p+".") }
	for _, e := range errs {
		rest, ok := strings.CutPrefix(e.Path, prefix)
		if !ok {
			continue
		}
		for _, s := range d.order {
			if s.Name != "" && s.Path != "" && (under(rest, s.Path) || under(s.Path, rest)) {
				out[s.Name] = true
			}
		}
	}
	return out
}

// dropRaw lets go of the decoded form of the parameters of every step that has no ${...} to
// fill when it starts (Resolve): nothing reads it after the decoding, and a run's steps
// outlive the load. A block's holds its steps' (a run of 10,000 steps in one parallel block:
// ~7 MB held to the end of the run).
func (d *decoder) dropRaw() {
	for _, s := range d.order {
		if len(s.templates) == 0 {
			s.raw = nil
		}
	}
}

// survivorPos is where the survivors keys are written, from lit, the survivors' plain literal
// and only conjunct (plainLiteral; nil: none), without a lookup per key: a key's value has
// the one conjunct, its field, whose position valuePos gives when it is in a user's file. A
// key it does not say (no literal, a position outside the user's files) is left out, for
// valuePos of the looked-up value. Each label is unquoted once: the keys are quoted labels.
func (d *decoder) survivorPos(lit *ast.StructLit, survivors map[string]string) map[string]Pos {
	out := make(map[string]Pos, len(survivors))
	if lit == nil || !decodeBySyntax {
		return out
	}
	for _, decl := range lit.Elts {
		f := decl.(*ast.Field) // plainStruct: every declaration is a regular field
		name, _ := literalLabel(f.Label)
		if _, ok := survivors[name]; !ok {
			continue
		}
		if p := d.l.pos(f.Pos()); p.IsValid() {
			out[name] = p
		}
	}
	return out
}

// detachEarlier detaches the scenarios of the loader's earlier builds (a load's other than a
// run's keeps its last build's scenarios attached: no build comes after it to hold its
// evaluation on top of, and the tables would only add to the peak — 1,000 quickstarts in one
// package: 265 → 307 MB RSS when detached). Attached, each build's whole evaluation stayed
// live until the load ended: vet of docs/ (12 documents, a build for each block) marked a
// live heap growing to 71 MB in each of its 21 collections; detached, ~30 MB and half the
// CPU.
func (l *loader) detachEarlier() {
	if l.opts.DropEvaluation {
		l.dropEvaluation() // no table: nothing will ask
		return
	}
	for _, d := range l.undetached {
		d.detach()
	}
	clear(l.undetached)
	l.undetached = l.undetached[:0]
}

// dropEvaluation lets go of the evaluation that the steps of the builds not detached look
// their fields' positions up in (Options.DropEvaluation), without the tables that detach
// makes: FieldPos then says each step's own position.
func (l *loader) dropEvaluation() {
	for _, d := range l.undetached {
		for _, s := range d.order {
			s.fieldPos = nil
		}
	}
	clear(l.undetached)
	l.undetached = l.undetached[:0]
}

// detach gives every step a table of where each field of its kind's value is written, in
// place of a lookup in the package's CUE evaluation: a scenario that outlives the load (a
// run) then holds no CUE value, and the evaluation (≈3 kB a step) is garbage once the load
// ends.
func (d *decoder) detach() {
	for _, s := range d.order {
		if s.fieldPos == nil {
			continue
		}
		kv, ok := d.kindValue[s]
		if !ok {
			s.fieldPos = nil
			continue
		}
		var t fieldTable
		t.add(d.l, kv, "")
		s.fieldPos = d.l.sharedFieldPos(t)
	}
}

// sharedFieldPos is t's lookup, shared with every step whose table is the same: steps made by
// one comprehension are written at the same places (a run of 10,000 such steps held 10,000
// equal tables, ~6 MB). A large table (a block's, which lists its steps' fields too) is
// its own: its key would cost as much as it.
func (l *loader) sharedFieldPos(t fieldTable) func(path string) Pos {
	if len(t) > maxSharedFieldTable {
		return slices.Clip(t).pos
	}
	var key strings.Builder
	for _, f := range t {
		key.WriteString(f.path)
		key.WriteByte(0)
		key.WriteString(f.pos.File)
		key.WriteByte(0)
		key.WriteString(strconv.Itoa(f.pos.Line))
		key.WriteByte(':')
		key.WriteString(strconv.Itoa(f.pos.Col))
		key.WriteByte(0)
		key.WriteString(f.pos.lit)
		key.WriteByte(0)
		key.WriteString(strconv.Itoa(f.pos.litOff))
		key.WriteByte(0)
	}
	if shared, ok := l.fieldPosOf[key.String()]; ok && slices.Equal(shared.t, t) {
		return shared.pos
	}
	if l.fieldPosOf == nil {
		l.fieldPosOf = map[string]sharedTable{}
	}
	t = slices.Clip(t)
	l.fieldPosOf[key.String()] = sharedTable{t, t.pos}
	return t.pos
}

// sharedTable is a table that sharedFieldPos shares, with its lookup.
type sharedTable struct {
	t   fieldTable
	pos func(path string) Pos
}

// maxSharedFieldTable is the most fields a step's table has for sharedFieldPos to share it.
const maxSharedFieldTable = 32

// fieldTable lists the dotted path of each field (and list item) written inside a step's kind
// value with where it is written, in the order of a walk of the value (a path before the
// paths inside it). A slice, not a map: most steps have a handful of fields.
type fieldTable []fieldAt

type fieldAt struct {
	path string
	pos  Pos
}

func (t *fieldTable) add(l *loader, v cue.Value, path string) {
	if p := l.valuePos(v); p.IsValid() {
		*t = append(*t, fieldAt{path, p})
	}
	join := func(sel string) string {
		if path == "" {
			return sel
		}
		return path + "." + sel
	}
	switch v.IncompleteKind() {
	case cue.StructKind:
		it, err := v.Fields()
		if err != nil {
			return
		}
		for it.Next() {
			t.add(l, it.Value(), join(it.Selector().Unquoted()))
		}
	case cue.ListKind:
		it, err := v.List()
		if err != nil {
			return
		}
		for i := 0; it.Next(); i++ {
			t.add(l, it.Value(), join(strconv.Itoa(i)))
		}
	}
}

// pos is FieldPos's lookup (the closest written parent of path), as the closure over the
// kind's value does it.
func (t fieldTable) pos(path string) Pos {
	parts := strings.Split(path, ".")
	for n := len(parts); n >= 0; n-- {
		prefix := strings.Join(parts[:n], ".")
		for _, f := range t {
			if f.path == prefix {
				return f.pos
			}
		}
	}
	return Pos{}
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
		if s, err := d.root.LookupPath(cue.MakePath(cue.Str(name))).String(); err == nil {
			*dst = s
		}
	}
}

// clusters decodes clusters: name → kubeconfig context, in declaration order. A scenario that
// declares clusters runs on the kube target.
func (d *decoder) clusters() {
	cv := d.root.LookupPath(cue.MakePath(cue.Str("clusters")))
	it, err := cv.Fields()
	if err != nil {
		return
	}
	for it.Next() {
		ctx, _ := it.Value().String()
		c := Cluster{Name: it.Selector().Unquoted(), Context: ctx, Pos: d.l.valuePos(it.Value())}
		// One context twice is one cluster twice: a cross-cluster claim would hold inside
		// one cluster with nothing crossing. The run refuses it when the kubeconfig says the
		// two reach one API server; vet said ok.
		if i := slices.IndexFunc(d.sc.Clusters, func(o Cluster) bool { return ctx != "" && o.Context == ctx }); i >= 0 {
			d.err(c.Pos, "clusters."+c.Name, "clusters %s and %s are one cluster (both context %q): a scenario's clusters are different clusters; give each its own context (or leave it empty and give it when the scenario runs: --cluster %s=<context>)",
				d.sc.Clusters[i].Name, c.Name, ctx, c.Name)
		}
		d.sc.Clusters = append(d.sc.Clusters, c)
	}
	if len(d.sc.Clusters) > 0 && d.target() == "local" {
		d.err(d.l.valuePos(cv), "clusters", "clusters name Kubernetes clusters, which the local target does not reach: set target: \"kube\" (or run with --target kube), or drop clusters")
	}
}

// stepCluster checks a step's cluster: one of the scenario's clusters, on the kube target.
func (d *decoder) stepCluster(s *Step, v cue.Value, path string) {
	pos, field := d.l.litPos(v), path+".cluster"
	switch {
	case s.Cluster == "", !identKey.MatchString(s.Cluster):
		// None, or no name at all ("${vars.x}"): the schema's #Ident refuses it at this
		// field already, and "unknown cluster" would say it twice.
	case d.target() == "local":
		d.err(pos, field, "cluster %q: the step runs on the local target, which reaches no cluster: set target: \"kube\" (or run with --target kube), or drop cluster", s.Cluster)
	case len(d.sc.Clusters) == 0:
		d.err(pos, field, "cluster %q: the scenario declares no clusters: declare clusters: {%s: \"<kubeconfig context>\", …}", s.Cluster, s.Cluster)
	case !slices.Contains(d.sc.ClusterNames(), s.Cluster):
		d.err(pos, field, "unknown cluster %q: expected one of the scenario's clusters (%s)%s", s.Cluster, strings.Join(d.sc.ClusterNames(), ", "), DidYouMean(s.Cluster, d.sc.ClusterNames()))
	}
}

// envoyClusterNotKube refuses a snapshot's or config's Envoy cluster (cluster, endpoints)
// named as one of the scenario's clusters: those fields name the Envoy cluster to read, a
// step's own cluster the Kubernetes cluster its proxy runs in, and the run would look for an
// Envoy cluster called "west".
func (d *decoder) envoyClusterNotKube(kind string, kv cue.Value, kpath string) {
	if (kind != "snapshot" && kind != "config") || len(d.sc.Clusters) == 0 {
		return // no cluster for them to name (a missing field's lookup costs an error value)
	}
	for _, f := range []string{"cluster", "endpoints"} {
		fv := kv.LookupPath(cue.MakePath(cue.Str(f)))
		name, err := fv.String()
		if err != nil || !slices.Contains(d.sc.ClusterNames(), name) {
			continue
		}
		d.err(d.l.litPos(fv), kpath+"."+f, "%s %q names the Envoy cluster to read (e.g. \"outbound|8080||backend.lab.svc.cluster.local\"), but %s is one of the scenario's clusters: to read the proxy in cluster %s, write cluster: %q on the step", f, name, name, name, name)
	}
}

// ephemeral decodes ephemeralNamespaces: each a key, or a struct with its name, labels and
// annotations (the schema checks their shape). A key given twice, or also listed under
// namespaces, is refused.
func (d *decoder) ephemeral() {
	ev := d.root.LookupPath(cue.MakePath(cue.Str("ephemeralNamespaces")))
	if !ev.Exists() {
		return // List of no value is an error, with an OpContext of its own
	}
	it, err := ev.List()
	if err != nil {
		return
	}
	seen := map[string]bool{}
	for i := 0; it.Next(); i++ {
		v := it.Value()
		e := EphemeralNamespace{Pos: d.l.valuePos(v)}
		if key, err := v.String(); err == nil {
			e.Key = key
		} else {
			var x struct {
				Name        string            `json:"name"`
				Labels      map[string]string `json:"labels"`
				Annotations map[string]string `json:"annotations"`
			}
			if v.Decode(&x) != nil {
				continue // the schema reports it
			}
			e.Key, e.Labels, e.Annotations = x.Name, x.Labels, x.Annotations
		}
		if e.Key == "" {
			continue
		}
		field := "ephemeralNamespaces." + strconv.Itoa(i)
		switch {
		case seen[e.Key]:
			d.err(e.Pos, field, "ephemeral namespace %q is declared twice", e.Key)
			continue
		case slices.Contains(d.sc.Namespaces, e.Key):
			d.err(e.Pos, field, "%q is both a fixed namespace (namespaces) and an ephemeral one: a run names its ephemeral namespace %s, never %q; keep one", e.Key, EphemeralName(e.Key, "<run id>"), e.Key)
			continue
		}
		seen[e.Key] = true
		d.sc.Ephemeral = append(d.sc.Ephemeral, e)
	}
}

func (d *decoder) stringList(name string) []string {
	var out []string
	lv := d.root.LookupPath(cue.MakePath(cue.Str(name)))
	if !lv.Exists() {
		return nil // List of no value is an error, with an OpContext of its own
	}
	it, err := lv.List()
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
		if note := markedDefaultNote(v); note != "" {
			// The schema's pattern dropped the default for another term: nothing reported it.
			d.err(d.l.litPos(v), d.relPath(v), "expected a duration such as \"500ms\" or \"5s\", got %q%s", s, note)
			return 0
		}
		if !durationShape.MatchString(s) {
			return 0 // the schema's pattern has reported it (v is the user's value, unchecked)
		}
		d.err(d.l.litPos(v), d.relPath(v), "expected a duration of at most %s, got %q", time.Duration(math.MaxInt64), s)
		return 0
	}
	return dur.D()
}

// zero reports whether v is a duration written as zero ("0s", "0ms").
func (d *decoder) zero(v cue.Value) bool {
	if !v.Exists() {
		return false // String of no value is an error, with an OpContext of its own
	}
	s, err := v.String()
	if err != nil || !durationShape.MatchString(s) {
		return false
	}
	dd, err := time.ParseDuration(s)
	return err == nil && dd == 0
}

// text is a string value as written.
func (d *decoder) text(v cue.Value) string {
	s, _ := v.String()
	return s
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

// vars decodes the scenario's vars. --var values were applied to the declared values before
// CUE evaluated the scenario (vars.go), so what is decoded is what the run uses; Declared and
// VarSource say where each value came from.
// hideSecrets writes the mask of each secret var's value (secretmask: "[secret NAME]") in what
// its decode said (the errors from errsFrom, the warnings from warnsFrom): an expectation that
// interpolates the secret (\(vars.token)) is quoted in them, and vet printed a --var token=…
// given on the command line. A value a sweep gives the var (--sweep's, else the scenario's
// own) is the one a run of that combination shows, "[secret NAME #i]": a combination's
// problem said "[secret token]" where its runs say "[secret token #2]". A value that is a mask
// already (a record's) stays.
func (d *decoder) hideSecrets(errsFrom, warnsFrom int) {
	sweep := map[string][]string{}
	for _, name := range d.sc.Secrets {
		if vs, ok := d.l.opts.Sweeps[name]; ok {
			sweep[name] = vs
		} else if vs := d.sc.Sweep[name]; len(vs) > 0 {
			sweep[name] = vs
		}
	}
	r := secretmask.Replacer(secretmask.Masks(d.sc.Secrets, d.sc.Vars, sweep))
	if r == nil {
		return
	}
	for _, e := range d.l.errs.errs[min(errsFrom, len(d.l.errs.errs)):] {
		e.Msg = r.Replace(e.Msg)
	}
	for _, w := range d.l.warnings[min(warnsFrom, len(d.l.warnings)):] {
		w.Msg = r.Replace(w.Msg)
	}
}

// secrets reads the names of the secret vars: each must be a declared var holding a string.
func (d *decoder) secrets() {
	d.sc.Secrets = d.stringList("secrets")
	for i, name := range d.sc.Secrets {
		pos := d.rootFieldPos("secrets")
		if v := d.root.LookupPath(cue.MakePath(cue.Str("secrets"), cue.Index(i))); v.Exists() {
			if p := d.l.valuePos(v); p.IsValid() {
				pos = p
			}
		}
		v, ok := d.sc.Vars[name]
		switch {
		case !ok:
			d.err(pos, fmt.Sprintf("secrets.%d", i), "secrets names var %q, which the scenario does not declare: declare it under vars%s", name, suggestVar(name, d.sc.Vars))
		case v == "":
		default:
			if _, ok := v.(string); !ok {
				d.err(pos, fmt.Sprintf("secrets.%d", i), "secrets names var %q, whose value %v is not a string: a secret is a string (a token, a password)", name, v)
			}
		}
	}
}

func (d *decoder) vars() {
	d.sc.Vars = map[string]any{}
	d.sc.Declared = map[string]Pos{}
	d.sc.VarSource = map[string]string{}
	it, err := d.root.LookupPath(cue.MakePath(cue.Str("vars"))).Fields()
	if err == nil {
		for it.Next() {
			var x any
			name := it.Selector().Unquoted()
			if err := it.Value().Decode(&x); err == nil {
				d.sc.Vars[name] = normalizeNumber(x)
				d.sc.Declared[name] = d.l.litPos(it.Value())
				d.sc.VarSource[name] = "default"
			}
		}
	}
	for k, raw := range d.l.opts.Vars {
		cur, ok := d.sc.Vars[k]
		switch {
		case !ok:
			// Not this scenario's var: scenarios loaded together may declare different vars
			// (the CLI refuses a --var that none declares).
			continue
		case d.l.varsSet[k] || d.l.varsFailed[k]:
			if d.l.varsSet[k] {
				d.sc.VarSource[k] = "command line"
			}
			continue
		}
		// A var declared by a value that is not a literal in a user file (e.g. from a kit's
		// definition): the expressions see the command line's value, typed as declared.
		d.sc.VarSource[k] = "command line (expressions only: the declared value is not a literal in a scenario file)"
		switch cur.(type) {
		case float64:
			f, err := strconv.ParseFloat(raw, 64)
			if err != nil {
				d.err(d.sc.Declared[k], "", "--var %s=%s: expected a number, as vars.%s is declared here", k, raw, k)
				continue
			}
			d.sc.Vars[k] = f
		case bool:
			b, err := strconv.ParseBool(raw)
			if err != nil {
				d.err(d.sc.Declared[k], "", "--var %s=%s: expected true or false, as vars.%s is declared here", k, raw, k)
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

// steps decodes a list of steps. raw, when not nil, is the list as the parent step's
// parameters decoded it (see step).
func (d *decoder) steps(v cue.Value, phase Phase, path string, parent *Step, raw []any) []*Step {
	if !v.Exists() {
		return nil
	}
	it, err := v.List()
	if err != nil {
		return nil
	}
	var out []*Step
	for i := 0; it.Next(); i++ {
		var rs map[string]any
		if i < len(raw) {
			rs, _ = raw[i].(map[string]any)
		}
		s := d.step(it.Value(), phase, path+"."+strconv.Itoa(i), parent, rs)
		if s != nil {
			out = append(out, s)
		}
	}
	return out
}

// step decodes one step. raw, when not nil, is the step as its parent's parameters decoded
// it: a block's parameters hold its children, so their own parameters are already decoded
// (Decode of a value is that part of the decoding of a value holding it).
func (d *decoder) step(v cue.Value, phase Phase, path string, parent *Step, raw map[string]any) *Step {
	s := &Step{Pos: d.l.valuePos(v), Path: path, Phase: phase}
	d.order = append(d.order, s)
	d.parent[s] = parent
	d.stepValue[s] = v
	it, err := v.Fields()
	if err != nil {
		return nil
	}
	var kinds, unknown []string
	var kindV cue.Value // the first kind's value, as the iteration found it
	for it.Next() {
		name := it.Selector().String()
		fv := it.Value()
		switch name {
		case "name":
			s.Name, _ = fv.String()
		case "cluster":
			s.Cluster, _ = fv.String()
			d.stepCluster(s, fv, path)
		case "doc":
			s.Doc, _ = fv.String()
		case "at":
			s.At, s.HasAt = d.duration(fv), true
		case "timeout":
			s.Timeout = d.duration(fv)
			if d.zero(fv) {
				d.err(d.l.litPos(fv), path+".timeout", "%s", schema.ZeroDuration("timeout", "the step's default", ""))
			}
		case "background":
			var err error
			if s.Background, err = fv.Bool(); err != nil {
				if d.unsure == nil {
					d.unsure = map[*Step]bool{}
				}
				d.unsure[s] = true
			}
		case "every":
			s.Every = d.duration(fv)
			if d.zero(fv) {
				d.err(d.l.litPos(fv), path+".every", "expected a positive interval, got %q", d.text(fv))
			}
		case "while":
			s.While, _ = fv.String()
		case "mayFail":
			s.MayFail, _ = fv.Bool()
		case "expectFail":
			d.expectFail(s, fv, path)
		default:
			if _, ok := schema.Kinds[name]; ok {
				if len(kinds) == 0 {
					kindV = fv
				}
				kinds = append(kinds, name)
			} else {
				unknown = append(unknown, name)
			}
		}
	}
	switch {
	case len(kinds) == 0 && len(unknown) > 0:
		// The schema has reported the field (a misspelled kind): the step's kind is not
		// known, and saying that it has none would repeat it.
		s.Kind = unknown[0]
		for _, name := range unknown {
			d.nestedNames(v.LookupPath(cue.MakePath(cue.Str(name))))
		}
		return s
	case len(kinds) == 0:
		d.err(s.Pos, path, "step has no kind: expected exactly one of %s", strings.Join(schema.KindNames(), ", "))
		return s
	case len(kinds) > 1:
		d.err(s.Pos, path, "step has %d kinds (%s): expected exactly one; put them in separate steps", len(kinds), strings.Join(kinds, ", "))
		return s
	}
	s.Kind = kinds[0]
	// The kind's field as the iteration gave it: the value LookupPath would find (a kind's
	// name is a regular field's label: a constraint's selector says "snapshot?" or
	// "snapshot!"), without another lookup and its OpContext, per step.
	kv := kindV
	kpath := path + "." + s.Kind
	d.envoyClusterNotKube(s.Kind, kv, kpath)
	k := schema.Kinds[s.Kind]
	d.kindValue[s] = kv
	l := d.l
	s.fieldPos = func(path string) Pos {
		parts := strings.Split(path, ".")
		for n := len(parts); n >= 0; n-- {
			c := &stepChecker{kv: kv}
			if v := c.lookup(strings.Join(parts[:n], ".")); v.Exists() {
				if p := l.valuePos(v); p.IsValid() {
					return p
				}
			}
		}
		return Pos{}
	}
	kraw, decoded := raw[s.Kind]
	d.params(s, k, kv, kpath, kraw, decoded)
	if pa, ok := s.Params.(schema.Parent); ok {
		cv, cpath, craw := kv, kpath, s.raw
		if f := pa.ChildField(); f != "" {
			cv, cpath = kv.LookupPath(cue.MakePath(cue.Str(f))), kpath+"."+f
			craw = nil
			if m, ok := s.raw.(map[string]any); ok {
				craw = m[f]
			}
		}
		list, _ := craw.([]any)
		s.Children = d.steps(cv, phase, cpath, s, list)
		if len(s.Children) == 0 && pa.ChildField() == "" {
			d.err(d.l.valuePos(kv), kpath, "empty %s block: expected at least one step", s.Kind)
		}
		if b, ok := s.Params.(interface{ SetChildren(int) }); ok {
			b.SetChildren(len(s.Children))
		}
	}
	if j, ok := s.Params.(schema.Joiner); ok {
		s.Await = j.Joins()
	}
	if d.l.opts.ForRun && !rawInterpolates(s.raw) {
		// No ${...} for templates to find (they look only where the decoded form has one),
		// and its steps are decoded: let it go now rather than hold every step's while the
		// rest of the scenario is decoded on top of its evaluation (dropRaw).
		s.raw = nil
	}
	return s
}

// nestedNames keeps the names of the steps written inside the value of a field that is not a
// kind (a misspelled block, e.g. paralel: [...]): expressions, while and await may read
// them, and saying that no step has those names would repeat the one mistake.
func (d *decoder) nestedNames(v cue.Value) {
	switch v.IncompleteKind() {
	case cue.ListKind:
		it, err := v.List()
		if err != nil {
			return
		}
		for it.Next() {
			d.nestedNames(it.Value())
		}
	case cue.StructKind:
		if name, err := v.LookupPath(cue.MakePath(cue.Str("name"))).String(); err == nil && name != "" {
			if d.untyped == nil {
				d.untyped = map[string]bool{}
			}
			d.untyped[name] = true
		}
		it, err := v.Fields()
		if err != nil {
			return
		}
		for it.Next() {
			if it.Value().IncompleteKind() == cue.ListKind { // a block's steps, a step's kind
				d.nestedNames(it.Value())
			} else if it.Value().IncompleteKind() == cue.StructKind && it.Selector().String() != "metadata" {
				d.nestedNames(it.Value())
			}
		}
	}
}

// openExitCode finds "exited with code N" at the end of a pattern or of an alternative, with
// nothing after the number: it matches the errors of longer codes too (N=1: 10–19, 100–199).
var openExitCode = regexp.MustCompile(`(exited with code ([0-9]+))(?:$|\|)`)

// expectFail decodes a step's expectFail: true, false, or an RE2 pattern its error must match.
func (d *decoder) expectFail(s *Step, v cue.Value, path string) {
	if b, err := v.Bool(); err == nil {
		s.ExpectFail = b
		return
	}
	src, err := v.String()
	if err != nil {
		return // the schema has reported a value that is neither
	}
	switch re, err := regexp.Compile(src); {
	case src == "":
		d.err(d.l.litPos(v), path+".expectFail", "expected true or an RE2 pattern the step's error must match, got an empty pattern (it would match any error: write true)")
	case err != nil:
		d.err(d.l.litPos(v), path+".expectFail", "invalid RE2 pattern: %v", err)
	case re.MatchString(""):
		d.err(d.l.litPos(v), path+".expectFail", "the pattern %q matches the empty string, so it matches any error (an empty alternative, a .* or x? alone): write true if any error will do, or a pattern only the expected error matches", src)
	case openExitCode.MatchString(src):
		m := openExitCode.FindStringSubmatch(src)
		longer := fmt.Sprintf("%s0", m[2])
		if strings.HasPrefix("127", m[2]) {
			longer = "127, a command not found"
		}
		d.err(d.l.litPos(v), path+".expectFail", "the pattern %q also matches longer exit codes (%q is in the error of code %s): close the number, e.g. %q", src, m[1], longer, m[1]+",")
	default:
		s.ExpectFail, s.ExpectFailRE, s.ExpectFailSrc = true, re, src
	}
}

// params decodes a kind's parameters and keeps its raw form and templates for run time. A
// value that does not decode is an error at its position: a step never runs without params.
// decoded says raw is kv already decoded (by a parent step).
func (d *decoder) params(s *Step, k schema.Kind, kv cue.Value, kpath string, raw any, decoded bool) {
	if !decoded {
		if f, ok := kv.Source().(*ast.Field); ok {
			raw, decoded = syntaxValue(f.Value, kv, d.l.refs)
		}
	}
	if !decoded {
		if err := kv.Decode(&raw); err != nil {
			d.l.addCUEErrorIn(err, kv, d.sc.Name)
			return
		}
	}
	s.raw = raw
	p := k.New()
	if !convertJSONLike(raw, p) {
		// What convertJSONLike leaves to json, and every problem: json's result and error.
		p = k.New()
		b, _ := json.Marshal(raw)
		if err := json.Unmarshal(b, p); err != nil {
			if len(d.l.errs.errs) == d.before {
				at, msg := d.l.litPos(kv), jsonProblem(err)
				if fv, written := typeProblemField(kv, err); fv.Exists() {
					if p := d.l.litPos(fv); p.IsValid() {
						at = p
					}
					msg += written
				}
				d.err(at, kpath, "%s", msg)
			}
			return
		}
	}
	s.Params = p
}

// jsonProblem says what a JSON decoding error means in the scenario's terms.
func jsonProblem(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field != "" && !strings.HasPrefix(te.Value, "number") {
			return fmt.Sprintf("%s: expected %s, got a %s", te.Field, strings.TrimSuffix(goTypeWord(te.Type.Kind().String()), " that fits in 64 bits"), te.Value)
		}
		if te.Field != "" {
			return fmt.Sprintf("%s: expected %s, got a %s that does not fit", te.Field, goTypeWord(te.Type.Kind().String()), te.Value)
		}
		return fmt.Sprintf("expected %s, got a %s", goTypeWord(te.Type.Kind().String()), te.Value)
	}
	return err.Error()
}

// typeProblemField is the field of kv that a JSON type error names, and what the message adds
// when its value is written as a disjunction with a marked default: steps are decoded without
// the schema (shallow.go), so the default is read as written, "ten" of *"ten" | 10, where
// the schema's type would drop it for 10.
func typeProblemField(kv cue.Value, err error) (cue.Value, string) {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) || te.Field == "" {
		return cue.Value{}, ""
	}
	var sels []cue.Selector
	for _, f := range strings.Split(te.Field, ".") {
		sels = append(sels, cue.Str(f))
	}
	fv := kv.LookupPath(cue.MakePath(sels...))
	return fv, markedDefaultNote(fv)
}

// markedDefaultNote is what a problem of v adds when v is written as a disjunction with a
// marked default (*"ten" | 10), else "".
func markedDefaultNote(v cue.Value) string {
	f, ok := v.Source().(*ast.Field)
	if !ok {
		return ""
	}
	if x, ok := f.Value.(*ast.BinaryExpr); ok && x.Op == token.OR && markedDefault(x) {
		return fmt.Sprintf(", the default that %s marks: labrun reads a step's field as written, so write the value alone", exprText(x))
	}
	return ""
}

// markedDefault reports whether a disjunction marks one of its terms as the default (*x).
func markedDefault(x ast.Expr) bool {
	switch x := x.(type) {
	case *ast.UnaryExpr:
		return x.Op == token.MUL
	case *ast.BinaryExpr:
		return x.Op == token.OR && (markedDefault(x.X) || markedDefault(x.Y))
	case *ast.ParenExpr:
		return markedDefault(x.X)
	}
	return false
}

func goTypeWord(k string) string {
	switch k {
	case "int", "int64", "int32":
		return "an integer that fits in 64 bits"
	case "float64":
		return "a number"
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "slice":
		return "a list"
	case "map", "struct":
		return "a struct"
	}
	return k
}

// exactlyOneNamed checks that exactly one of fields is set in kv, a value named what.
func (d *decoder) exactlyOneNamed(what string, kv cue.Value, kpath string, fields ...string) string {
	return d.exactlyOneSet(what, kv, kpath, func(f string) bool { return kv.LookupPath(cue.MakePath(cue.Str(f))).Exists() }, fields...)
}

// exactlyOneSet is exactlyOneNamed with has saying whether a field of kv is set.
func (d *decoder) exactlyOneSet(what string, kv cue.Value, kpath string, has func(string) bool, fields ...string) string {
	var set []string
	for _, f := range fields {
		if has(f) {
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

// shownNames sets what each step is called on the console and in JUnit (Step.Shown): a step
// without a name inside a named block is the block's name and its indexes below it.
func (d *decoder) shownNames() {
	for _, s := range d.order {
		s.Shown = s.Path
		if s.Name != "" {
			s.Shown = s.Name
			continue
		}
		for a := d.parent[s]; a != nil; a = d.parent[a] {
			if a.Name == "" {
				continue
			}
			var idx []string
			for _, part := range strings.Split(strings.TrimPrefix(s.Path, a.Path+"."), ".") {
				if _, err := strconv.Atoi(part); err == nil {
					idx = append(idx, part)
				}
			}
			s.Shown = a.Name + "." + strings.Join(idx, ".")
			break
		}
	}
}

// checkShadowed refuses, at its name, a step named like a builtin of expr's that the
// scenario's expressions call (count, now, len): there the name is the step's, and the call
// fails (see shadowedCall).
func (d *decoder) checkShadowed(names *Names) {
	for _, s := range d.order {
		if at, ok := names.shadowed[s.Name]; ok && s.Name != "" {
			d.err(d.fieldPos(s, "name"), s.Path+".name", "step name %q shadows expr's builtin %s(…), which an expression of the scenario calls (%s): there %s is this step's result, no function; choose another name", s.Name, s.Name, at.Rel(d.sc.Dir), s.Name)
		}
	}
}

// checkStructure checks names, at, background, await and every/while.
func (d *decoder) checkStructure() {
	sc := d.sc
	for _, s := range d.order {
		if s.Name == "" {
			continue
		}
		if Reserved[s.Name] || s.Name == "ns" && len(sc.Ephemeral) > 0 {
			d.err(d.fieldPos(s, "name"), s.Path+".name", "%q is a reserved name (it means something in expressions); choose another", s.Name)
			continue
		}
		if prev, ok := sc.names[s.Name]; ok {
			at, first := d.fieldPos(s, "name"), d.fieldPos(prev, "name")
			if at.Same(first) {
				// One text names both (a kit's template called twice, its name: N): that text
				// is not the mistake, the second call is. Said at the step as the scenario
				// writes it, both calls named.
				if !s.Pos.Same(at) && !s.Pos.Same(prev.Pos) {
					d.err(s.Pos, s.Path+".name", "duplicate step name %q: this step and the one at %s both take it from %s (one template used twice): expected each use to give its steps names of their own, e.g. a name parameter", s.Name, prev.Pos.Rel(sc.Dir), at.Rel(sc.Dir))
					continue
				}
				if line := d.l.lineOf(s.Pos.File, s.Pos.Line); s.Pos.Col >= 1 && s.Pos.Col <= len(line)+1 && forClauseRE.MatchString(line[:s.Pos.Col-1]) {
					// steps: [for n in [10, 20] {name: "fortio", ...}]: each element the same name.
					d.err(at, s.Path+".name", "duplicate step name %q: the comprehension at %s gives each element it makes this one name: expected a name of each element's own, e.g. name: \"%s_\\(n)\" with the comprehension's variable", s.Name, prev.Pos.Rel(sc.Dir), s.Name)
					continue
				}
				// One list of steps joined twice (list.Concat([kit.steps, kit.steps])): said
				// at the scenario's steps, which join it.
				d.err(d.stepsPos(s), s.Path+".name", "duplicate step name %q: the steps hold the step written at %s twice (one list of steps joined twice): expected each step once, or a template that takes the name as a parameter", s.Name, prev.Pos.Rel(sc.Dir))
				continue
			}
			d.err(at, s.Path+".name", "duplicate step name %q: first used at %s", s.Name, prev.Pos.Rel(sc.Dir))
			continue
		}
		sc.names[s.Name] = s
	}
	cycled := d.checkAwaitCycles()
	for _, s := range d.order {
		p := d.parent[s]
		if s.HasAt && (p == nil || p.Kind != "parallel") {
			d.err(d.fieldPos(s, "at"), s.Path+".at", "at is only allowed on a step directly inside a parallel block (it is the offset from the block's start); use sleep in a sequence")
		}
		if s.Background && s.Name == "" {
			d.err(d.fieldPos(s, "background"), s.Path+".background", "a background step needs a name, so that await can join it")
		}
		if s.ExpectFail {
			_, block := s.Params.(schema.Parent)
			_, joins := s.Params.(schema.Joiner)
			switch {
			case block || joins:
				d.err(d.fieldPos(s, "expectFail"), s.Path+".expectFail", "expectFail applies to one step, not to %s block: put it on the step inside that is expected to fail", schema.A(s.Kind))
			case s.Every > 0 || s.While != "":
				d.err(d.fieldPos(s, "expectFail"), s.Path+".expectFail", "expectFail does not apply to a sampler (every): each sample is its own step; assert on what the samples recorded instead")
			case s.Kind == "sleep" && !d.stepHas(s, "timeout"):
				// Vet said ok and every run failed: "the step succeeded, but it was expected
				// to fail".
				d.err(d.fieldPos(s, "expectFail"), s.Path+".expectFail", "a sleep cannot fail (it waits and ends), so expectFail on it fails every run: expected it on the step that is expected to fail, or no expectFail")
			}
		}
		if s.Background && (s.Phase == PhaseCleanup || s.Phase == PhaseCatch) {
			d.err(d.fieldPos(s, "background"), s.Path+".background", "background steps are not allowed in %s", s.Phase)
		}
		hasEvery := s.Every > 0 || d.stepHas(s, "every")
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
			case t == nil && d.untyped[s.While]:
			case t == nil && !stepNameRE.MatchString(s.While):
				// while: "fortio.code200 < 10", an expression where a step's name goes: the
				// schema's #Ident says so at the value; "no step has that name" is that again.
			case t == nil:
				d.err(d.fieldPos(s, "while"), s.Path+".while", "while names %q, but no step has that name%s", s.While, suggest(s.While, sc.names))
			case t == s:
				d.err(d.fieldPos(s, "while"), s.Path+".while", "a step cannot sample while itself runs")
			case !d.concurrent(s, t):
				d.err(d.fieldPos(s, "while"), s.Path+".while", "while names %q, which cannot be running when this step starts: put both in one parallel block, or make %q a background step declared earlier", s.While, s.While)
			case d.endedBefore(t, s):
				d.err(d.fieldPos(s, "while"), s.Path+".while", "while names %q, which has ended when this step starts: the sampler would take no sample; put both in one parallel block, or sample before %q is awaited", s.While, s.While)
			}
		}
		for _, a := range s.Await {
			t := sc.names[a]
			switch {
			case t == nil && d.untyped[a]:
			case t == nil:
				d.err(d.fieldPos(s, "await"), s.Path+".await", "await names %q, but no step has that name%s", a, suggest(a, sc.names))
			case !t.Background && d.unsure[t]:
				// background: "true" was refused at the field: whether the step is one is
				// what the user meant it to be.
			case !t.Background:
				d.err(d.fieldPos(s, "await"), s.Path+".await", "await names %q, which is not a background step: only background steps can be awaited", a)
			case t.Phase != s.Phase && phaseRank[t.Phase] < phaseRank[s.Phase]:
				// A phase joins its background steps at its end: the await is of a step that
				// has ended, and a load meant to run beside the steps ran before them.
				d.err(d.fieldPos(s, "await"), s.Path+".await", "await names %q, a background step of %s: %s joins its background steps at its end, so %q has ended before %s starts, and nothing of it runs beside this phase's steps; expected the background step and its await in one phase (a background step runs until awaited, or until the end of its own phase)", a, t.Phase, t.Phase, a, s.Phase)
			case d.ancestor(t, s):
				d.err(d.fieldPos(s, "await"), s.Path+".await", "await of %q inside %q itself would wait forever", a, a)
			case !d.concurrent(s, t) && !(cycled[t] && d.inCycled(s, cycled)):
				// In a cycle one await names a later step: the cycle's error says it.
				d.err(d.fieldPos(s, "await"), s.Path+".await", "await names %q, which starts after this step: it would wait forever", a)
			}
		}
	}
}

// stepHas reports whether step s has field (one label), from the step's plain literal when it
// shows (writtenIn): a lookup of a field most steps lack costs an OpContext and an error value.
func (d *decoder) stepHas(s *Step, field string) bool {
	v := d.stepValue[s]
	if _, exists, known := writtenIn(plainLiteral(v), field); known {
		return exists
	}
	return v.LookupPath(cue.MakePath(cue.Str(field))).Exists()
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

// forClauseRE finds a comprehension's for clause before a list's element on its line.
var forClauseRE = regexp.MustCompile(`\bfor\s+\w+(?:\s*,\s*\w+)?\s+in\b`)

// stepNameRE is the schema's #Ident: what a step's name, and a name that names one, may be.
var stepNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// stepsPos is where the scenario writes the list of steps that holds s (steps: list.Concat([kit.steps,
// kit.steps])): s's own position is a kit's then, the same as another step's. s.Pos when the
// scenario writes none.
func (d *decoder) stepsPos(s *Step) Pos {
	top := s
	for d.parent[top] != nil {
		top = d.parent[top]
	}
	if strings.HasPrefix(top.Path, "steps.") || strings.Contains(top.Path, ".steps.") {
		if p := d.l.pos(fieldAtPath(d.l.buildFiles, []string{d.sc.Name, "steps"})); p.IsValid() {
			return p
		}
	}
	return s.Pos
}

// inCycled says s is inside a background step of an await cycle.
func (d *decoder) inCycled(s *Step, cycled map[*Step]bool) bool {
	for p := d.parent[s]; p != nil; p = d.parent[p] {
		if cycled[p] {
			return true
		}
	}
	return false
}

// checkAwaitCycles finds background steps that await each other, and returns those of the
// cycle it reports.
func (d *decoder) checkAwaitCycles() map[*Step]bool {
	cycled := map[*Step]bool{}
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
					cycled[x] = true
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
	return cycled
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

// names computes what expressions may refer to: every named step's result, typed as its
// kind declares it for the step's parameters.
func (d *decoder) names() *Names {
	sc := d.sc
	n := &Names{
		Results: map[string]*StepResult{}, Vars: sc.Vars, Backends: map[string]bool{},
		Blackholes: map[string]bool{}, Steps: map[string]bool{}, Target: d.target(), Clusters: sc.ClusterNames(),
		Namespaces: map[string]bool{},
	}
	for _, c := range sc.AllowReset {
		if n.AllowReset == nil {
			n.AllowReset = map[string]bool{}
		}
		n.AllowReset[c] = true
	}
	for _, e := range sc.Ephemeral {
		n.Namespaces[e.Key] = true
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
	unknownKind := len(d.untyped) > 0
	for name := range d.untyped {
		if sc.names[name] == nil {
			n.Results[name], n.Steps[name] = &StepResult{Step: name, Type: schema.AnyType}, true
		}
	}
	for _, s := range d.order {
		if _, ok := schema.Kinds[s.Kind]; !ok {
			// A step whose kind is misspelled (or missing, or doubled) has been reported: what
			// it would record is not known, so its name reads as a value of any type, and no
			// expression that reads it, nor delta, is reported again (no cascade).
			unknownKind = true
			if s.Name != "" && sc.names[s.Name] == s {
				n.Results[s.Name] = &StepResult{Step: s.Name, Kind: s.Kind, Type: schema.AnyType}
			}
			continue
		}
		if s.Name != "" && sc.names[s.Name] == s && s.Params == nil {
			// A step whose parameters were refused (cluster: 42) has been reported: as with a
			// misspelled kind, what it records is not known, so its name reads as a value of
			// any type, and neither an expression that reads it nor delta is reported again
			// ("unknown name odc" of a step the scenario names).
			unknownKind = true
			n.Results[s.Name] = &StepResult{Step: s.Name, Kind: s.Kind, Type: schema.AnyType}
			continue
		}
		if s.Name == "" || sc.names[s.Name] != s || s.Params == nil {
			continue
		}
		t := schema.ResultOf(s.Params, &stepChecker{d: d, s: s, kv: d.kindValue[s]})
		if t == nil {
			continue
		}
		if t.Kind == schema.TStats && t.Stats != nil && len(sc.Clusters) > 1 {
			// One selector in two clusters is two Envoys: snapshots of one source are of one
			// cluster (a delta across them was judged as one source's, probe p9 #02).
			src := *t.Stats
			c := sc.ClusterOf(s)
			src.ID += " in cluster " + c
			src.What += " in cluster " + c
			nt := *t // its fields too: a snapshot with hosts: true has hosts and stats
			nt.Stats = &src
			t = &nt
		}
		n.Results[s.Name] = &StepResult{Step: s.Name, Kind: s.Kind, Sampled: s.Every > 0 || s.While != "", Type: t}
		if g, ok := s.Params.(*schema.Get); ok {
			sc := &stepChecker{d: d, s: s, kv: d.kindValue[s]}
			r := n.Results[s.Name]
			// An Istio kind's names, which a newer Istio may have, are checked against the
			// cluster's CRD where the load leaves them to it (interp).
			if !kubeshape.IstioGroup(g.APIVersion) || !d.judgedByCluster() {
				r.Object, r.ObjectKind, r.ObjectBase = objectShape(g, sc.Templated)
			}
			if r.Object != nil {
				r.ObjectFrom = kubeshape.From(g.APIVersion)
			}
		}
		if t.Kind == schema.TStats {
			sc.Snapshots = append(sc.Snapshots, s)
			sources[t.Stats.ID] = true
		}
	}
	if len(sc.Snapshots) > 0 {
		n.DeltaFrom, n.DeltaTo = sc.Snapshots[0].Name, sc.Snapshots[len(sc.Snapshots)-1].Name
	}
	switch {
	case unknownKind:
	case len(sc.Snapshots) < 2:
		n.DeltaErr = fmt.Sprintf("delta needs two snapshots of one source; this scenario has %d named snapshot(s)", len(sc.Snapshots))
	case len(sources) > 1:
		var names []string
		for _, s := range sc.Snapshots {
			names = append(names, s.Name)
		}
		n.DeltaErr = fmt.Sprintf(`delta is ambiguous: the snapshots (%s) read %d different sources; write delta("a", "b").<stat> with the two snapshots to compare`, strings.Join(names, ", "), len(sources))
	}
	n.freeze()
	d.l.shareCompiled(n)
	sc.ExprNames = n
	return n
}

// compile compiles every expression and template of the scenario.
func (d *decoder) compile(names *Names) {
	sc := d.sc
	if it, err := d.root.LookupPath(cue.MakePath(cue.Str("expect"))).List(); err == nil {
		// The first position of each expectation, as written but for its spacing: a copy
		// left unedited (the second meant code503, still reading code200) was judged twice,
		// and the claim meant never was.
		written := map[string]Pos{}
		for i := 0; it.Next(); i++ {
			v := it.Value()
			src, err := v.String()
			if err != nil {
				continue
			}
			key := strings.Join(strings.Fields(src), " ")
			if first, twice := written[key]; twice {
				d.err(d.l.litPos(v), fmt.Sprintf("expect.%d", i), "expectation %q is written twice, here and at %s: the second judges nothing the first does not; remove it, or write the claim it was meant to make", src, first.Rel(sc.Dir))
				continue
			}
			written[key] = d.l.litPos(v)
			e, cerr := compile(src, d.l.litPos(v), names, compileOpts{asBool: true, empty: claimRule})
			if cerr != nil {
				cerr.Path = fmt.Sprintf("%s.expect.%d", sc.Name, i)
				d.l.errs.errs = append(d.l.errs.errs, cerr)
				continue
			}
			catchSaid := map[string]bool{}
			for _, n := range e.Names {
				if st := sc.names[n]; st != nil && st.Phase == PhaseCatch {
					catchSaid[n] = true
					d.l.errs.add(e.Pos, fmt.Sprintf("%s.expect.%d", sc.Name, i), "expectations are judged when the run reached its end, and %q is a catch step, which runs only when the run failed: read it in the report, not in expect", n)
				}
			}
			for _, r := range e.Reads {
				// outcome.why, error.why, started.why, ended.why: the expectations decide
				// whether the catch runs (judged before it) and are judged again after it,
				// so such a claim judged its own effect: error.why == '' erred in a run
				// that passed, which ran the catch, after which it held and the run said
				// PASSED; outcome.why == 'skipped' failed a run whose steps and other
				// claims held, only because the catch it made run had passed.
				if st := sc.names[r.Step]; st != nil && st.Phase == PhaseCatch && r.Via != "" && !catchSaid[r.Step] {
					catchSaid[r.Step] = true
					d.l.errs.add(exprPos(e.Pos, e.Src, r.Col), fmt.Sprintf("%s.expect.%d", sc.Name, i), "%s.%s: %q is a catch step, and the expectations decide whether the catch runs (one that fails or errs runs it, and they are judged again after it): %s.%s would judge its own effect; expected no read of a catch step in expect: read it in the report, or in a cleanup step where it ran (outcome.%s != 'skipped' && …)", r.Via, r.Step, r.Step, r.Via, r.Step, r.Step)
				}
			}
			// has(ended, "why") and "why" in ended ask the same of the catch as ended.why
			// reads: whether it ran, which the expectations decide (not a Read: a guard).
			var asks [][]int
			if len(sc.Catch) > 0 { // a scenario with no catch pays no pattern per expectation
				asks = catchHas.FindAllStringSubmatchIndex(e.Src, -1)
			}
			for _, m := range asks {
				step := submatchOf(e.Src, m, 2, 3, 4, 5)
				if st := sc.names[step]; st != nil && st.Phase == PhaseCatch && !catchSaid[step] {
					catchSaid[step] = true
					d.l.errs.add(exprPos(e.Pos, e.Src, utf8.RuneCountInString(e.Src[:m[0]])), fmt.Sprintf("%s.expect.%d", sc.Name, i), "%s: %q is a catch step, and the expectations decide whether the catch runs (one that fails or errs runs it, and they are judged again after it): asking whether it ran would judge their own effect; expected no read of a catch step in expect: read it in the report, or in a cleanup step", e.Src[m[0]:m[1]], step)
				}
			}
			if !e.readsTheRun() {
				// vars, literals, the target's values: the same on every run.
				d.err(e.Pos, fmt.Sprintf("expect.%d", i), "expectation %q reads nothing the run records%s: it has the same value on every run, so it proves nothing; expected one that reads a step's result, a snapshot, delta or a time", src, e.outcomeKeyedWhy())
				continue
			}
			if !e.readsRecorded() {
				d.err(e.Pos, fmt.Sprintf("expect.%d", i), "expectation %q %s", src, clockOnly)
				continue
			}
			sc.Expect = append(sc.Expect, e)
			sc.expectAt = append(sc.expectAt, i)
			for _, v := range e.vacuous {
				d.vacuous = append(d.vacuous, &Error{Pos: exprPos(e.Pos, e.Src, v.col), Path: fmt.Sprintf("%s.expect.%d", sc.Name, i), Msg: fmt.Sprintf("in expression %q: %s", e.Src, v.msg)})
				d.vacuousOf = append(d.vacuousOf, e)
			}
			d.exprWarnings(e)
			d.checkDeltaOrder(e, fmt.Sprintf("%s.expect.%d", sc.Name, i))
		}
	}
	for _, s := range d.order {
		v := d.stepValue[s]
		var ev cue.Value
		if c, ok := s.Params.(schema.Conditional); ok {
			if field, ok := c.ExprField(); ok {
				ev = v.LookupPath(cue.MakePath(cue.Str(s.Kind)))
				if field != "" {
					ev = ev.LookupPath(cue.MakePath(cue.Str(field)))
				}
			}
		}
		if ev.Exists() {
			if src, err := ev.String(); err == nil {
				rule := untilRule // a wait's, a repeat's, a get's or a config's until
				if s.Kind == "assert" {
					rule = claimRule
				}
				e, cerr := compile(src, d.l.litPos(ev), names, compileOpts{asBool: true, empty: rule})
				if cerr != nil {
					cerr.Path = sc.Name + "." + s.Path + "." + s.Kind
					d.l.errs.errs = append(d.l.errs.errs, cerr)
				} else {
					s.Expr = e
					switch {
					case s.Kind != "assert":
					case !e.readsTheRun():
						// vars, literals, the target's values: refused as an expectation like it is.
						d.l.errs.add(e.Pos, sc.Name+"."+s.Path+".assert", "assert %q reads nothing the run records%s: it has the same value on every run, so it proves nothing; expected one that reads a step's result, a snapshot, delta or a time", src, e.outcomeKeyedWhy())
					case !e.readsRecorded():
						d.l.errs.add(e.Pos, sc.Name+"."+s.Path+".assert", "assert %q %s", src, clockOnly)
					}
					d.checkReads(s, e, sc.Name+"."+s.Path+"."+s.Kind)
					d.checkWaitChanges(s, e, sc.Name+"."+s.Path+"."+s.Kind)
					if sr, ok := s.Params.(schema.SelfReader); ok && sr.ReadsOwnResult() && (s.Name == "" || !slices.Contains(e.Names, s.Name)) {
						example, name := "%s.max_connections == 5", "cfg"
						if s.Kind == "get" {
							example, name = "%s.status.phase == 'Running'", "pod"
						}
						if s.Name == "" {
							d.l.errs.add(e.Pos, sc.Name+"."+s.Path+"."+s.Kind+".until", "%s's until judges what the step reads by the step's name, and the step has none: name it (name: \"%s\") and write e.g. "+example, s.Kind, name, name)
						} else {
							d.l.errs.add(e.Pos, sc.Name+"."+s.Path+"."+s.Kind+".until", "%s's until does not read %q, what the step reads: write e.g. "+example, s.Kind, s.Name, s.Name)
						}
					}
				}
			}
		}
		if s.FileTemplates {
			d.checkFileTemplates(s, names)
		}
		if s.raw != nil {
			d.templates(s, d.kindValue[s], names)
			for _, t := range s.templates {
				for _, e := range t.Exprs() {
					d.checkReads(s, e, sc.Name+"."+s.Path+"."+s.Kind)
				}
			}
		}
	}
}

// templates compiles every ${...} in a step's strings. The walk goes only into the values
// whose decoded form (s.raw, which is kv decoded) holds an interpolation: most parameters
// hold none, and listing a struct's fields in CUE costs a sort of them.
func (d *decoder) templates(s *Step, kv cue.Value, names *Names) {
	// A block's steps are steps of their own, with their own templates, evaluated when each
	// starts, not when the block does.
	children := ""
	if pa, ok := s.Params.(schema.Parent); ok {
		if children = pa.ChildField(); children == "" {
			return
		}
	}
	var walk func(v cue.Value, path string, raw any)
	walk = func(v cue.Value, path string, raw any) {
		if children != "" && path == pathSep+children {
			return
		}
		switch v.IncompleteKind() {
		case cue.StringKind:
			str, err := v.String()
			if err != nil {
				return
			}
			if at, text, meant := almostTemplate(str); at >= 0 {
				d.l.errs.errs = append(d.l.errs.errs, &Error{Pos: d.l.litPos(v).shift(at).inString(),
					Path: d.sc.Name + "." + s.Path + "." + s.Kind + strings.ReplaceAll(path, pathSep, "."),
					Msg:  fmt.Sprintf("in %q: %s is not interpolated, it would be sent as written: expected %s", str, text, meant)})
				return
			}
			// A string whose only ${ is escaped ($${HOME}) is a template too: its $${ is the
			// literal ${ the docs promise. It was sent as written, and sh -c "echo $${HOME}"
			// printed the shell's pid ($$) and {HOME} (probe p109).
			if !HasInterpolation(str) && !strings.Contains(str, "$${") {
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
			m, ok := raw.(map[string]any)
			if ok {
				// The decoded form names the fields: look up only those that interpolate
				// (in name order, so that problems at one position keep one order),
				// instead of listing every field, which CUE sorts.
				for _, name := range sortedKeys(m) {
					if sub := m[name]; rawInterpolates(sub) {
						walk(v.LookupPath(cue.MakePath(cue.Str(name))), path+pathSep+name, sub)
					}
				}
				return
			}
			it, err := v.Fields()
			if err != nil {
				return
			}
			for it.Next() {
				walk(it.Value(), path+pathSep+it.Selector().Unquoted(), unknownRaw{})
			}
		case cue.ListKind:
			a, ok := raw.([]any)
			if ok && !rawInterpolates(a) {
				return
			}
			it, err := v.List()
			if err != nil {
				return
			}
			for i := 0; it.Next(); i++ {
				var sub any = unknownRaw{}
				if ok && i < len(a) {
					if sub = a[i]; !rawInterpolates(sub) {
						continue
					}
				}
				walk(it.Value(), path+pathSep+strconv.Itoa(i), sub)
			}
		}
	}
	walk(kv, "", s.raw)
}

// unknownRaw stands for a value whose decoded form is not known: the walk goes into it.
type unknownRaw struct{}

// rawInterpolates reports whether a decoded value holds a string with an interpolation.
func rawInterpolates(x any) bool {
	switch x := x.(type) {
	case string:
		return HasInterpolation(x) || strings.Contains(x, "$${") || mayBeAlmostTemplate(x)
	case map[string]any:
		for _, v := range x {
			if rawInterpolates(v) {
				return true
			}
		}
	case []any:
		for _, v := range x {
			if rawInterpolates(v) {
				return true
			}
		}
	}
	return false
}

// readsTheRun reports whether the expression reads something the run records: a step's
// result, start, end or outcome, a delta, or the time.
func (e *Expr) readsTheRun() bool { return e.Now || e.readsRecorded() }

// readsRecorded reports whether the expression reads something the run recorded: a step's
// result, start, end or outcome, or a delta. now() is not one: the clock is read when the
// expression is judged, whatever the run did.
func (e *Expr) readsRecorded() bool {
	return len(e.Reads) > 0 || len(e.Refs) > 0 || slices.ContainsFunc(e.Names, func(n string) bool {
		// delta, and the steps' outcomes, errors and times read whole (all(values(outcome), ...));
		// not has(outcome, "x"): every named step has an outcome from the start.
		return n == "delta" || n == "outcome" && !e.outcomeKeyed || n == "error" || n == "started" || n == "ended"
	})
}

// outcomeKeyedWhy says why a look-up of a step's name in outcome reads nothing the run
// records, when the expression reads outcome so; "" otherwise.
func (e *Expr) outcomeKeyedWhy() string {
	if !e.outcomeKeyed {
		return ""
	}
	return " (a look-up of a step's name in outcome holds from the start: every named step has an outcome, \"pending\" before it runs and \"skipped\" if it never does; read outcome.<step> == \"passed\", or has(ended, \"<step>\") for whether it ran to its end)"
}

// clockOnly says why a claim (an expectation, an assert) that reads the clock and nothing the
// run recorded is refused: `now() > date('2020-01-01')` or `now().Year() >= 2026` can fail, as
// the clock moves, but whatever the run did it holds or fails the same, so it proves nothing
// of the run. Comparing now() with what the run recorded (now() - date(trim(stamp.stdout)) <
// duration('1m'), a step's started or ended) claims something.
const clockOnly = "reads nothing the run recorded: only the clock (now()) and constants, so it holds or fails by when it is judged, whatever the run did, and proves nothing of the run; expected one that compares now() with a value the run recorded (a step's result, started or ended), e.g. now() - date(trim(stamp.stdout)) < duration('1m')"

// ReadsVars reports whether the expression reads a var (by name or vars as a whole): its value
// may differ from one combination of a sweep, or one --var, to the next.
func (e *Expr) ReadsVars() bool { return len(e.vars) > 0 || e.allVars }

// VarsRead are the vars the expression reads by name, and whether it reads vars as a whole.
func (e *Expr) VarsRead() (names []string, whole bool) { return slices.Clone(e.vars), e.allVars }

// checkDeltaOrder refuses delta("a", "b") where b is always taken before a: every counter's
// delta would be negative (or a reset).
func (d *decoder) checkDeltaOrder(e *Expr, path string) {
	for _, r := range e.Refs {
		if r.Kind != RefDeltaPair {
			continue
		}
		from, to := d.sc.names[r.From], d.sc.names[r.To]
		if from != nil && to != nil && d.endedBefore(to, from) {
			d.l.errs.add(e.Pos, path, "%q: delta(%q, %q) subtracts %q from %q, but %q is taken first (every counter's delta would be negative); write the earlier snapshot first: delta(%q, %q)", e.Src, r.From, r.To, r.From, r.To, r.To, r.To, r.From)
			return
		}
	}
}

// checkReads refuses a read of step s's expression e (its assert, until or a ${...}) that
// cannot exist when s evaluates it: a step that has not run, or has not ended, or has not
// taken a sample yet, as the read needs (the moment its kind declares for the field).
func (d *decoder) checkReads(s *Step, e *Expr, path string) {
	d.exprWarnings(e)
	d.checkDeltaOrder(e, path)
	_, polls := s.Params.(*schema.Wait)
	seen := map[Read]bool{}
	for _, r := range e.Reads {
		t := d.sc.names[r.Step]
		if t == nil {
			continue
		}
		if t.Phase == PhaseCatch && s.Phase != PhaseCatch && r.Via != "outcome" && !r.Ran {
			// A catch step runs only when the run failed: a cleanup that reads it where it
			// did not run (a passing run) erred there, and the run ended ERROR.
			d.l.errs.add(exprPos(e.Pos, e.Src, r.Col), path, "%q reads %s of catch, which runs only when the run failed: in a run that passes it does not run, and %s has no value; read it only where it ran (has(ended, %q) ? … : …, or outcome.%s != 'skipped' && …), or read it in a catch step", e.Src, describeStep(t), r.text(), r.Step, r.Step)
			continue
		}
		key := Read{Step: r.Step, Via: r.Via, Field: r.Field}
		if seen[key] {
			continue
		}
		seen[key] = true
		if sr, ok := s.Params.(schema.SelfReader); ok && t == s && r.Via == "" && sr.ReadsOwnResult() && e == s.Expr {
			continue // config's until judges each read
		}
		n := d.sc.needOf(r)
		why, where, notStarted := d.unavailable(s, t, n, polls)
		if why == "" {
			continue
		}
		pos := exprPos(e.Pos, e.Src, r.Col)
		switch {
		case notStarted:
			d.l.errs.add(pos, path, "%q reads %s, which has not run when this step starts: move the step after %q, or read it in expect", e.Src, describeStep(t), r.Step)
		case t == s:
			d.l.errs.add(pos, path, "%q reads %s: %s; read it %s, or in expect", e.Src, r.text(), why, where)
		default:
			whole := ""
			if n == needSample {
				whole = " (a sampler's result grows with each sample until then)"
			}
			d.l.errs.add(pos, path, "%q reads %s, which is not available yet when this step runs: it becomes available when %s ends%s, and %s; read it %s, or in expect", e.Src, r.text(), describeStep(t), whole, why, where)
		}
	}
	d.checkDeltaTaken(s, e, path, polls)
}

// checkDeltaTaken refuses a plain delta read by step s's expression where fewer than two
// snapshots can have been taken: judged while the run is under way, delta is the first and
// the last snapshot taken so far, and with fewer the run errs there ("delta needs two
// snapshots").
func (d *decoder) checkDeltaTaken(s *Step, e *Expr, path string, polls bool) {
	n := d.sc.ExprNames
	if !e.deltaRead || n == nil || n.DeltaErr != "" {
		return
	}
	var taken []string
	for _, t := range d.sc.Snapshots {
		if why, _, _ := d.unavailable(s, t, needEnd, polls); why == "" {
			taken = append(taken, fmt.Sprintf("%q", t.Name))
		}
	}
	if len(taken) >= 2 {
		return
	}
	by := "none has"
	if len(taken) == 1 {
		by = "only " + taken[0] + " has"
	}
	d.l.errs.add(exprPos(e.Pos, e.Src, e.deltaCol), path, "%q reads delta, which needs two snapshots taken: judged while the run is under way, delta is the last snapshot taken so far minus the first, and when this step runs %s been taken; read delta after a second snapshot, or in expect", e.Src, by)
}

// text is the read as written: started.x, fortio.requests, fortio.
func (r Read) text() string {
	switch {
	case r.Via != "":
		return r.Via + "." + r.Step
	case r.Field != "":
		return r.Step + "." + r.Field
	}
	return r.Step
}

// checkWaitChanges refuses a wait whose until reads only values that are settled when the
// wait starts (steps that have ended, vars): it would hold at once, or never, until its
// timeout. A wait is for something that changes while it polls. A repeat's until is judged
// after each round: it must read a step of the repeat, which runs again each round (or one
// that runs meanwhile), or it holds after the first round, or never until max.
func (d *decoder) checkWaitChanges(s *Step, e *Expr, path string) {
	_, wait := s.Params.(*schema.Wait)
	_, repeat := s.Params.(*schema.Repeat)
	if !wait && !repeat || e.Now || d.refused[s] || repeat && e.allOutcomes {
		return
	}
	// A look-up of a step's name in started, ended, outcome or error reads that step's
	// start, end or outcome: has(ended, "bg") changes when bg ends.
	reads := append(slices.Clip(e.Reads), e.keyTests...)
	if wait && e.stepMapsWhole && d.anyMayChange(s) {
		return // len(ended), keys(outcome): a step that runs meanwhile changes them
	}
	if repeat && slices.Contains(e.Names, "delta") && d.sc.ExprNames != nil {
		// delta reads the first and the last snapshot.
		for _, n := range []string{d.sc.ExprNames.DeltaFrom, d.sc.ExprNames.DeltaTo} {
			reads = append(reads, Read{Step: n})
		}
	}
	var settled []string
	for _, r := range reads {
		t := d.sc.names[r.Step]
		if t == nil {
			continue
		}
		if r.Via == "" && r.Field == "" && slices.Contains(e.keyTests, r) {
			// has(outcome, "x"): every named step has an outcome from the start.
			if w := fmt.Sprintf("every step has an outcome, %q too", t.Name); !slices.Contains(settled, w) {
				settled = append(settled, w)
			}
			continue
		}
		if repeat && d.ancestor(s, t) {
			return // the repeat's own step: it runs again each round
		}
		fixed := d.endedBefore(t, s)
		if r.Via == "started" {
			fixed = fixed || d.startedBefore(t, s)
		}
		if !fixed {
			return
		}
		if w := fmt.Sprintf("%q has ended", t.Name); !slices.Contains(settled, w) {
			if r.Via == "started" && !d.endedBefore(t, s) {
				w = fmt.Sprintf("%q has started", t.Name)
			}
			settled = append(settled, w)
		}
	}
	what := "it reads no step's value"
	if len(settled) > 0 {
		what = "when it starts, " + strings.Join(settled, " and ")
	}
	if wait && e.stepMapsWhole {
		// len(ended), keys(outcome) with no step running beside the wait.
		if len(settled) > 0 {
			what += ", and no other step can start or end while it polls"
		} else {
			what = "no other step can start or end while it polls"
		}
	}
	if repeat && len(settled) == 0 {
		// until: "true" (one round), "false" (max rounds, then a failure): no step misread.
		return
	}
	if wait {
		d.l.errs.add(e.Pos, path+".until", "wait until %q cannot change while the wait polls (%s): it would hold at once or never; use assert for a check now, or wait for a value of a step that runs meanwhile", e.Src, what)
		return
	}
	var own []string
	for _, t := range d.order {
		if t.Name != "" && d.ancestor(s, t) {
			own = append(own, t.Name)
		}
	}
	hint := "give a step of the repeat a name and read it"
	if len(own) > 0 {
		hint = "read a step of the repeat, which runs again each round (" + strings.Join(own, ", ") + ")"
	}
	d.l.errs.add(e.Pos, path+".until", "repeat until %q cannot change from one round to the next (when it starts, %s, and it reads none of the repeat's own steps): it would hold after the first round or never; %s, or use assert for a check now", e.Src, strings.Join(settled, " and "), hint)
}

// anyMayChange reports whether a step other than s and the blocks that hold it can start or
// end while s runs: one that has started, or may have, and has not always ended by then (a
// background step, a sampler, another branch of a parallel block).
func (d *decoder) anyMayChange(s *Step) bool {
	for _, t := range d.order {
		if t != s && !d.ancestor(t, s) && !d.ancestor(s, t) && !d.endedBefore(t, s) && (d.startedBefore(t, s) || d.concurrent(s, t)) {
			return true
		}
	}
	return false
}

// exprWarnings keeps an expression's warnings (an undocumented Envoy stat, a time compared
// with a bare number) for lint, which
// reports them unless the scenario ignores their code.
func (d *decoder) exprWarnings(e *Expr) {
	for _, w := range e.warnings {
		code := w.code
		if code == "" {
			code = LintUnknownStat
		}
		d.pending = append(d.pending, &Warning{Pos: exprPos(e.Pos, e.Src, w.col), Code: code, Scenario: d.sc.Name, Msg: fmt.Sprintf("in expression %q: %s", e.Src, w.msg)})
	}
}

func suggestVar(name string, vars map[string]any) string {
	var names []string
	for k := range vars {
		names = append(names, k)
	}
	sort.Strings(names)
	if s := closest(name, names); s != "" {
		return fmt.Sprintf(" (did you mean %q?)", s)
	}
	return ""
}

// decodeBySyntax lets decodeValue read the user's syntax (tests turn it off to compare).
var decodeBySyntax = true

// decodeValue is v.Decode(dst), read from the user's syntax when v is one literal field
// (syntaxValue, convertJSONLike: a scenario's local world and survivors, 0.1 ms each by
// Decode, which lists and sorts every struct's fields in CUE); anything else, and every
// problem, is Decode's.
func decodeValue[T any](d *decoder, v cue.Value, dst *T) error {
	if decodeBySyntax {
		if f, ok := v.Source().(*ast.Field); ok {
			if raw, ok := syntaxValue(f.Value, v, d.l.refs); ok {
				var t T
				if convertJSONLike(raw, &t) {
					*dst = t
					return nil
				}
			}
		}
	}
	return v.Decode(dst)
}

// catchHas matches an expression's question whether a step ran: has(ended, "s") (or
// started, outcome, error) and "s" in ended.
var catchHas = regexp.MustCompile(`\bhas\(\s*(outcome|error|started|ended)\s*,\s*(?:"(\w+)"|'(\w+)')\s*\)|(?:"(\w+)"|'(\w+)')\s+in\s+(outcome|error|started|ended)\b`)

// submatchOf is the first of the groups of m (FindStringSubmatchIndex's) that matched in s.
func submatchOf(s string, m []int, groups ...int) string {
	for _, g := range groups {
		if m[2*g] >= 0 {
			return s[m[2*g]:m[2*g+1]]
		}
	}
	return ""
}
