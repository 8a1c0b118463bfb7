package dsl

import (
	"fmt"
	"maps"
	"math"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/token"

	"labrun.dev/labrun/schema"
)

// The checks below run in vet and before every run, through the same code: each step kind's
// own Check, the target's capabilities, the namespace guard on every object known before the
// run, and the timeline. What remains for the run is what needs the world (vet --server).

// stepChecker is the schema.Checker of one step.
type stepChecker struct {
	d     *decoder
	s     *Step
	kv    cue.Value
	kpath string
	// lit is kv's struct literal when it is kv's only conjunct and plain (plainStruct), for
	// written (litDone: looked for).
	lit     *ast.StructLit
	litDone bool
	refs    map[string][]stringField // refStrings' walk, once
}

// checkerHook, when a test sets it, is called with each step's checker before its Check.
var checkerHook func(*stepChecker)

// written says what the syntax alone shows of field (dotted, as lookup takes it) in kv: known
// false, when it cannot tell, and LookupPath must; else whether it exists and, if it does,
// its scalar literal value as Decode gives it (writtenIn).
//
// A step's checks ask for absent fields most of all (a snapshot's ExactlyOne of four
// sources: three are absent), and each lookup costs an OpContext, and an error value when
// the field is missing (1,000 quickstarts: a fifth of the OpContexts of decoding).
func (c *stepChecker) written(field string) (val any, exists, known bool) {
	if !c.litDone {
		c.litDone = true
		c.lit = plainLiteral(c.kv)
	}
	return writtenIn(c.lit, field)
}

// plainLiteral is v's struct literal when it is v's only conjunct and plain (plainStruct),
// else nil.
func plainLiteral(v cue.Value) *ast.StructLit {
	if f, ok := v.Source().(*ast.Field); ok {
		if st, ok := f.Value.(*ast.StructLit); ok && plainStruct(st) {
			return st
		}
	}
	return nil
}

// writtenIn says what lit, a value's plain struct literal and only conjunct (plainLiteral;
// nil: none), shows of its field (dotted, as stepChecker.lookup takes it, numbers indexing
// lists): known false when it cannot tell; else whether the field exists and, if it does, its
// scalar literal value as Decode gives it.
//
// A plain struct literal that is a value's only conjunct is that value (as syntaxValue has
// it): its fields are exactly its declarations, so a label it does not declare is no field
// (LookupPath finds no arc), and a declared field whose value is a scalar literal exists and
// is that literal. Anything else (a reference, an expression, a struct or list value, a part
// that is not plain) is left to LookupPath.
func writtenIn(lit *ast.StructLit, field string) (val any, exists, known bool) {
	if lit == nil || field == "" {
		return nil, false, false
	}
	var x ast.Expr = lit
	top := true // lit is known plain
	for part := range strings.SplitSeq(field, ".") {
		if n, err := strconv.Atoi(part); err == nil {
			l, ok := x.(*ast.ListLit)
			if !ok || n < 0 || !plainList(l) {
				return nil, false, false
			}
			if n >= len(l.Elts) {
				return nil, false, true
			}
			x, top = l.Elts[n], false
			continue
		}
		st, ok := x.(*ast.StructLit)
		if !ok || !top && !plainStruct(st) {
			return nil, false, false
		}
		top = false
		var found ast.Expr
		for _, d := range st.Elts {
			f := d.(*ast.Field) // plainStruct: every declaration is a regular field
			if name, _ := literalLabel(f.Label); name == part {
				found = f.Value
				break
			}
		}
		if found == nil {
			return nil, false, true
		}
		x = found
	}
	if lit, ok := literalScalar(x); ok {
		return lit, true, true
	}
	return nil, false, false
}

// has reports whether field exists in kv, from the syntax when it shows (written).
func (c *stepChecker) has(field string) bool {
	if _, exists, known := c.written(field); known {
		return exists
	}
	return c.lookup(field).Exists()
}

// lookup finds a dotted field inside the kind's value ("" is the value itself).
func (c *stepChecker) lookup(field string) cue.Value {
	if field == "" {
		return c.kv
	}
	var sels []cue.Selector
	for _, part := range strings.Split(field, ".") {
		if n, err := strconv.Atoi(part); err == nil {
			sels = append(sels, cue.Index(n))
		} else {
			sels = append(sels, cue.Str(part))
		}
	}
	return c.kv.LookupPath(cue.MakePath(sels...))
}

func (c *stepChecker) Errorf(field, format string, args ...any) {
	pos, path := c.fieldPos(field, false)
	c.d.err(pos, path, format, args...)
}

func (c *stepChecker) ValueErrorf(field, format string, args ...any) {
	pos, path := c.fieldPos(field, true)
	c.d.err(pos, path, format, args...)
}

// fieldPos is where a problem of field is said (Errorf; with value, ValueErrorf: at its value
// when it is written), and its path below the scenario.
func (c *stepChecker) fieldPos(field string, value bool) (Pos, string) {
	v, path := c.kv, c.kpath
	if field != "" {
		if fv := c.lookup(field); fv.Exists() {
			if value {
				return c.d.l.litPos(fv), path + "." + field
			}
			v = fv
		}
		path += "." + field
	}
	return c.d.l.valuePos(v), path
}

// JudgedByCluster implements schema.ClusterJudge: a run's load, and vet --server's, leave an
// Istio kind's fields, kinds and versions to the cluster's CRDs (Options.IstioByCluster).
func (c *stepChecker) JudgedByCluster() bool {
	return c.d != nil && (c.d.l.opts.ForRun || c.d.l.opts.IstioByCluster)
}

// LeaveToCluster implements schema.ClusterJudge: the scenario keeps ic, at field, for its
// cluster's CRD to judge (Scenario.IstioChecks).
func (c *stepChecker) LeaveToCluster(field string, value bool, ic schema.IstioCheck) {
	pos, path := c.fieldPos(field, value)
	if !pos.IsValid() {
		pos = c.d.sc.Pos
	}
	c.d.sc.IstioChecks = append(c.d.sc.IstioChecks, &IstioCheck{IstioCheck: ic, Pos: pos, Field: c.d.sc.Name + "." + path, Step: c.s})
}

func (c *stepChecker) ValueErrorAt(field string, offset int, format string, args ...any) {
	fv := c.lookup(field)
	if !fv.Exists() {
		c.Errorf(field, format, args...)
		return
	}
	pos := c.d.l.litPos(fv)
	if col, ok := literalColumn(fv, offset); ok && pos.IsValid() {
		pos.Col += col
	}
	c.d.err(pos, c.kpath+"."+field, format, args...)
}

// literalColumn is how many columns after the opening quote of v's string literal the byte
// offset of the string's value is written, escapes counted as written; false when v is not one
// single-line literal (an interpolation, a reference, a multi-line string).
func literalColumn(v cue.Value, offset int) (int, bool) {
	src := v.Source()
	if f, ok := src.(*ast.Field); ok {
		src = f.Value
	}
	lit, ok := src.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return 0, false
	}
	return rawColumn(lit.Value, offset)
}

// rawColumn is literalColumn for the literal as written (its quotes included): false for a
// multi-line string.
func rawColumn(written string, offset int) (int, bool) {
	dLine, col, ok := literalPlace(written, offset)
	return col, ok && dLine == 0
}

// literalPlace is where byte offset of the value of a string literal is written, the literal
// as in the source (its #s, quotes and escapes, `\n` or `\#n` counted as written): dLine lines
// below the literal's first and, on that first line, col columns after the literal's first
// character; on a line below it (a multi-line string), col is the line's own column (1-based).
// false when written is no string literal or holds no such byte.
func literalPlace(written string, offset int) (dLine, col int, ok bool) {
	hashes := len(written) - len(strings.TrimLeft(written, "#"))
	body := written[hashes:]
	quote := ""
	for _, q := range []string{`"""`, `'''`, `"`, `'`} {
		if strings.HasPrefix(body, q) {
			quote = q
			break
		}
	}
	closing := quote + strings.Repeat("#", hashes)
	if quote == "" || len(body) < len(quote)+len(closing) || !strings.HasSuffix(body, closing) {
		return 0, 0, false
	}
	raw := body[len(quote) : len(body)-len(closing)]
	esc := `\` + strings.Repeat("#", hashes)
	if len(quote) == 1 {
		i, n := valueIndex(raw, esc, offset)
		return 0, hashes + 1 + i, n == offset
	}
	// A multi-line string's value starts on the line after its opening quotes, and each line
	// loses the indentation of its closing quotes; the last line's newline is not in it.
	lines := strings.Split(raw, "\n")
	indent := lines[len(lines)-1]
	if len(lines) < 2 || strings.TrimSpace(lines[0]) != "" || strings.TrimLeft(indent, " \t") != "" {
		return 0, 0, false
	}
	for k, line := range lines[1 : len(lines)-1] {
		s := strings.TrimPrefix(strings.TrimRight(line, "\r"), indent)
		i, n := valueIndex(s, esc, offset)
		if n == offset {
			return k + 1, len(line) - len(strings.TrimPrefix(line, indent)) + 1 + i, true
		}
		offset -= n + 1 // the line's bytes and its newline
		if offset < 0 {
			break
		}
	}
	return 0, 0, false
}

// valueIndex walks raw, a line of a string literal's body whose escapes begin with esc, up to
// the byte of the value at offset: its index in raw and the value's bytes before it (offset
// when found; else the line's value's length, and the index its end).
func valueIndex(raw, esc string, offset int) (int, int) {
	n := 0
	for i := 0; i < len(raw); i++ {
		if n == offset {
			return i, n
		}
		if strings.HasPrefix(raw[i:], esc) && i+len(esc) < len(raw) {
			i += len(esc)
			width := map[byte]int{'u': 4, 'U': 8, 'x': 2}[raw[i]]
			if width > 0 && i+width < len(raw) {
				r, err := strconv.ParseUint(raw[i+1:i+1+width], 16, 32)
				i += width
				if err == nil && raw[i-width] != 'x' {
					n += utf8.RuneLen(rune(r)) - 1
				}
			}
		}
		n++
	}
	return len(raw), n
}

func (c *stepChecker) Has(field string) bool { return c.has(field) }

func (c *stepChecker) Templated(field string) bool {
	if val, exists, known := c.written(field); known {
		// String of a value that is no string, or of no value, is an error: not templated.
		s, ok := val.(string)
		return exists && ok && HasInterpolation(s)
	}
	s, err := c.lookup(field).String()
	return err == nil && HasInterpolation(s)
}

func (c *stepChecker) ExactlyOne(fields ...string) string {
	return c.d.exactlyOneSet(c.s.Kind, c.kv, c.kpath, c.hasLabel, fields...)
}

// hasLabel reports whether kv has a field labelled f (one label, as exactlyOneNamed looks it
// up): the syntax answers only for a name that written would not take for a path.
func (c *stepChecker) hasLabel(f string) bool {
	if _, err := strconv.Atoi(f); err != nil && !strings.Contains(f, ".") {
		if _, exists, known := c.written(f); known {
			return exists
		}
	}
	return c.kv.LookupPath(cue.MakePath(cue.Str(f))).Exists()
}

func (c *stepChecker) ExactlyOneOf(field string, fields ...string) string {
	return c.d.exactlyOneNamed(field, c.lookup(field), c.kpath+"."+field, fields...)
}

func (c *stepChecker) Target() string       { return c.d.target() }
func (c *stepChecker) Local() *schema.Local { return c.d.sc.Local }
func (c *stepChecker) Namespaces() []string { return c.d.sc.Allowed() }
func (c *stepChecker) Sampled() bool        { return c.s.Every > 0 || c.s.While != "" }
func (c *stepChecker) ExpectsFailure() bool { return c.s.ExpectFail }

func (c *stepChecker) Step(name string) (string, bool) {
	t := c.d.sc.names[name]
	if t == nil {
		return "", false
	}
	return t.Kind, true
}

func (c *stepChecker) Suggest(name string) string { return suggest(name, c.d.sc.names) }

func (c *stepChecker) Params(name string) schema.Params {
	if t := c.d.sc.names[name]; t != nil {
		return t.Params
	}
	return nil
}

func (c *stepChecker) StartedBefore(name string) bool {
	t := c.d.sc.names[name]
	return t != nil && c.d.startedBefore(t, c.s)
}

func (c *stepChecker) RunsDuring(name string) bool {
	t := c.d.sc.names[name]
	return t != nil && c.d.mayRun(t, c.s)
}

// target is the target the scenario will run on: the command line's, else the scenario's.
func (d *decoder) target() string {
	if o := d.l.opts; o.Target != "" && (o.Selected == nil || o.Selected(d.sc.Name, d.sc.Tags)) {
		return o.Target
	}
	return d.sc.Target
}

// checkSampledReads refuses an expression that reads what a sampler keeps only the last
// sample of: a sampled step records under its name at each sample, and only a snapshot sampled
// with every keeps them all (a series). A step of another kind sampled with every, or a step
// inside a sampled block, would be read as its last sample alone. (Its outcome is one.)
func (d *decoder) checkSampledReads() {
	sampledBy := map[string]*Step{}
	for _, s := range d.order {
		if s.Every == 0 {
			continue
		}
		if s.Name != "" && recordsResult(s.Kind) && !recordsSeries(s.Kind) {
			sampledBy[s.Name] = s
		}
		Walk(s.Children, func(c *Step) {
			if c.Name != "" && recordsResult(c.Kind) {
				sampledBy[c.Name] = s
			}
		})
	}
	if len(sampledBy) == 0 {
		return
	}
	// A block's names read outside it are reported once, at the block (one mistake: every on
	// a block); a sampled step's own result at each read.
	blockReads := map[*Step][]string{}
	check := func(s *Step, e *Expr, path string) {
		seen := map[string]bool{}
		for _, name := range e.Names {
			sampler := sampledBy[name]
			if sampler == nil || seen[name] || (s != nil && (s == sampler || d.ancestor(sampler, s))) {
				continue // inside the sampled block, a read sees the current sample
			}
			seen[name] = true
			if t := d.sc.names[name]; t == sampler {
				d.l.errs.add(e.Pos, path, "%q reads %q, %s sampled with every, which keeps only its last sample (only a snapshot records every sample, as a series): sample a snapshot, or read outcome.%s", e.Src, name, schema.A(t.Kind)+" step", name)
			} else if !slices.Contains(blockReads[sampler], name) {
				blockReads[sampler] = append(blockReads[sampler], name)
			}
		}
	}
	for i, e := range d.sc.Expect {
		check(nil, e, fmt.Sprintf("%s.expect.%d", d.sc.Name, i))
	}
	for _, s := range d.order {
		if s.Expr != nil {
			check(s, s.Expr, d.sc.Name+"."+s.Path+"."+s.Kind)
		}
		for _, k := range sortedKeys(s.templates) {
			for _, e := range s.templates[k].Exprs() {
				check(s, e, d.sc.Name+"."+s.Path+"."+s.Kind)
			}
		}
	}
	for _, b := range d.order {
		if names := blockReads[b]; len(names) > 0 {
			d.err(d.fieldPos(b, b.Kind), b.Path+"."+b.Kind, "every on %s block samples its steps as one: each sample overwrites what they record, and %s, read after the block, would hold only the last sample; put every on each step to sample (a sampled snapshot records a series), or take them out of the sampled block", schema.A(b.Kind), quoteList(names))
		}
	}
}

// quoteList is "a", "b" and "c".
func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " and " + q[len(q)-1]
}

// checkMetaNames checks the names written in the scenario's meta-fields, which nothing else
// reads before they silently do nothing: lint.ignore codes, allowReset counters. (survivors
// keys are checked against the mutants the scenario can have, see interp.CheckSurvivors.)
func (d *decoder) checkMetaNames() {
	sc := d.sc
	codes := sortedKeys(LintCodes)
	for _, code := range sortedKeys(sc.LintIgnore) {
		if _, ok := LintCodes[code]; ok {
			continue
		}
		field := "lint.ignore." + code
		d.err(d.rootFieldPos(field), field, "lint.ignore names %q, which is not a lint code, so it silences nothing%s; the codes: %s", code, DidYouMean(code, codes), strings.Join(codes, ", "))
	}
	if len(sc.AllowReset) == 0 {
		return
	}
	deltas := map[string]bool{}
	for _, e := range d.exprs() {
		for _, r := range e.Refs {
			if r.Kind == RefDelta || r.Kind == RefDeltaPair {
				deltas[r.Stat] = true
			}
		}
	}
	read := sortedKeys(deltas)
	it, err := d.root.LookupPath(cue.MakePath(cue.Str("allowReset"))).List()
	if err != nil {
		return
	}
	for i := 0; it.Next(); i++ {
		name, err := it.Value().String()
		if err != nil || deltas[name] {
			continue
		}
		which := "no expression reads a delta"
		if len(read) > 0 {
			which = "the counters deltas read: " + strings.Join(read, ", ")
		}
		d.err(d.l.litPos(it.Value()), fmt.Sprintf("allowReset.%d", i), "allowReset names %q, which no delta reads, so it allows nothing%s; %s", name, DidYouMean(name, read), which)
	}
}

// exprs are every compiled expression of the scenario: expectations, step expressions and
// the ${...} of templates.
func (d *decoder) exprs() []*Expr {
	out := append([]*Expr{}, d.sc.Expect...)
	for _, s := range d.order {
		if s.Expr != nil {
			out = append(out, s.Expr)
		}
		for _, k := range sortedKeys(s.templates) {
			out = append(out, s.templates[k].Exprs()...)
		}
	}
	return out
}

// DidYouMean is ` (did you mean "x"?)` for the candidate closest to name, or "".
func DidYouMean(name string, candidates []string) string {
	if s := closest(name, candidates); s != "" && s != name {
		return fmt.Sprintf(" (did you mean %q?)", s)
	}
	return ""
}

// recordsResult reports whether a step of kind records a result that expressions read by its
// name; recordsSeries whether it records every sample of a sampler (every) as a series.
func recordsResult(kind string) bool {
	k, ok := schema.Kinds[kind]
	return ok && schema.ResultOf(k.New(), schema.PlainContext) != nil
}

func recordsSeries(kind string) bool {
	k, ok := schema.Kinds[kind]
	return ok && schema.KeepsSamples(k.New())
}

// checkKinds runs every step kind's own check, then the checks that need the target.
func (d *decoder) checkKinds() {
	index := map[*Step]int{}
	for i, s := range d.order {
		index[s] = i
	}
	spec, knownTarget := schema.BuiltinTarget(d.target(), d.sc.Local)
	for _, s := range d.order {
		if s.Params == nil {
			continue
		}
		c := &stepChecker{d: d, s: s, kv: d.kindValue[s], kpath: s.Path + "." + s.Kind}
		if checkerHook != nil {
			checkerHook(c)
		}
		if d.schemaRefusedIn(d.sc.Name + "." + c.kpath) {
			// The schema refused a field of these params (URL: for url, a required field
			// missing): the kind's check would judge what json's case-insensitive match or
			// the zero value made of them, and add a message about a field the user did
			// not write as such ("the scheme must be http or https" of URL's template).
			d.refused[s] = true
			continue
		}
		before := len(d.l.errs.errs)
		s.Params.Check(c)
		if len(d.l.errs.errs) != before {
			d.refused[s] = true
			continue
		}
		if knownTarget {
			if msg := schema.Unsupported(s.Kind, s.Params, d.target(), spec); msg != "" {
				if need := s.Params.Needs().Cap; !d.localOnKube || (need != schema.CapBackends && need != schema.CapLocalDNS) {
					c.Errorf("", "%s", msg)
				}
				continue
			}
		}
		if d.checkSelectors(c) || d.checkNamespaceRefs(c) {
			d.refused[s] = true
			continue
		}
		if spec.Caps[schema.CapCluster] && !s.HasTemplates() {
			m := s.Params.Mutates(d.defaultNamespace)
			if name := unplaced(m); name != "" && !d.sc.ClusterScoped {
				c.Errorf("", "%s of %s names no namespace, and the scenario declares none: declare namespaces: [\"…\"] (mutations are allowed only there) or give it metadata.namespace", s.Kind, name)
				continue
			}
			if err := schema.Guard(s.Kind, m, staticRefs(m), d.sc.Allowed(), d.sc.ClusterScoped); err != nil {
				if len(d.sc.Clusters) > 1 {
					err = schema.InCluster(err, d.sc.ClusterOf(s)) // probe p30: which cluster's step
				}
				c.Errorf("", "%v", err)
			}
		}
	}
}

// checkSystemNamespaces refuses a system namespace among the scenario's namespaces unless
// the scenario opts in (systemNamespaces) and the command line allows it.
func (d *decoder) checkSystemNamespaces() {
	if spec, known := schema.BuiltinTarget(d.target(), d.sc.Local); known && !spec.Caps[schema.CapCluster] {
		return // no cluster to change: the namespaces are commands' LABRUN_NAMESPACE
	}
	probs := schema.CheckSystemNamespaces(d.sc.Namespaces, d.sc.SystemNamespaces, d.l.opts.AllowSystemNamespaces)
	for _, i := range slices.Sorted(maps.Keys(probs)) {
		if i < 0 {
			d.err(d.rootFieldPos("systemNamespaces"), "systemNamespaces", "%s", probs[i])
			continue
		}
		pos := d.sc.Pos
		if v := d.root.LookupPath(cue.MakePath(cue.Str("namespaces"), cue.Index(i))); v.Exists() {
			if p := d.l.valuePos(v); p.IsValid() {
				pos = p
			}
		}
		d.err(pos, fmt.Sprintf("namespaces.%d", i), "%s", probs[i])
	}
}

// defaultNamespace defaults a step's namespace as the run does: its own, else the scenario's
// first.
func (d *decoder) defaultNamespace(ns string) string {
	if ns != "" {
		return ns
	}
	return d.sc.DefaultNamespace()
}

// clusterScopedKinds are the cluster-scoped kinds a scenario is likely to apply; the guard
// knows them before the run. Other kinds without a namespace are checked when the run has the
// API server's discovery.
var clusterScopedKinds = []string{
	"Namespace", "CustomResourceDefinition", "ClusterRole", "ClusterRoleBinding", "Node",
	"PersistentVolume", "StorageClass", "PriorityClass", "MutatingWebhookConfiguration",
	"ValidatingWebhookConfiguration", "APIService", "IngressClass", "GatewayClass",
}

// unplaced names an object of m that would land in no declared namespace: it names none, its
// step names none and the scenario declares none (so the run would refuse it, whatever its
// scope).
func unplaced(m schema.Mutation) string {
	if m.Namespace != "" {
		return ""
	}
	for _, o := range m.Objects {
		kind, _ := o["kind"].(string)
		md, _ := o["metadata"].(map[string]any)
		name, _ := md["name"].(string)
		ns, _ := md["namespace"].(string)
		if ns == "" && kind != "Namespace" {
			return kind + " " + name
		}
	}
	return ""
}

// staticRefs are the objects of a mutation whose scope is known without the cluster.
func staticRefs(m schema.Mutation) []schema.ObjectRef {
	var refs []schema.ObjectRef
	for _, o := range m.Objects {
		kind, _ := o["kind"].(string)
		apiVersion, _ := o["apiVersion"].(string)
		md, _ := o["metadata"].(map[string]any)
		name, _ := md["name"].(string)
		ns, _ := md["namespace"].(string)
		if HasInterpolation(name) || HasInterpolation(ns) {
			continue
		}
		switch {
		case slices.Contains(clusterScopedKinds, kind):
			refs = append(refs, schema.ObjectRef{APIVersion: apiVersion, Kind: kind, Name: name})
		case ns != "":
			refs = append(refs, schema.ObjectRef{APIVersion: apiVersion, Kind: kind, Namespace: ns, Name: name})
		case m.Namespace != "":
			refs = append(refs, schema.ObjectRef{APIVersion: apiVersion, Kind: kind, Namespace: m.Namespace, Name: name})
		}
	}
	return refs
}

// checkTimeline checks what the plan can know: offsets inside their block's timeout, the
// scenario's timeout against its planned minimum, sampling intervals, local addresses.
func (d *decoder) checkTimeline() {
	for _, s := range d.order {
		p := d.parent[s]
		if s.HasAt && p != nil && p.Timeout > 0 && s.At >= p.Timeout {
			d.err(d.fieldPos(s, "at"), s.Path+".at", "at %s is at or beyond the block's timeout of %s (%s): the step could never start; raise the timeout or move the step earlier", s.At, p.Timeout, p.Path)
		}
		if s.Every > 0 && s.Every < minEvery {
			d.err(d.fieldPos(s, "every"), s.Path+".every", "expected a sampling interval of at least %s, got %s: each sample is a round trip to the target", minEvery, s.Every)
		}
	}
	d.checkPlannedTimes()
	if l := d.sc.Local; l != nil {
		seen := map[string]string{}
		check := func(what, name, addr string) {
			if addr == "" {
				return
			}
			field := "local." + what + "." + name + ".address"
			if what == "dns" {
				field = "local.dns.address"
			}
			if err := schema.CheckHostPort(addr); err != nil {
				d.err(d.rootFieldPos(field), field, "%v", err)
				return
			}
			if prev, ok := seen[addr]; ok {
				d.err(d.rootFieldPos(field), field, "address %s is already taken by %s: two local endpoints cannot listen on one address", addr, prev)
				return
			}
			seen[addr] = what + " " + name
		}
		for _, n := range sortedKeys(l.Backends) {
			check("backends", n, l.Backends[n].Address)
			field := "local.backends." + n + ".maxDelay"
			if mv := d.root.LookupPath(cue.MakePath(cue.Str("local"), cue.Str("backends"), cue.Str(n), cue.Str("maxDelay"))); d.zero(mv) {
				d.err(d.l.litPos(mv), field, "%s", schema.ZeroDuration("maxDelay", "the default", schema.DefaultMaxDelay.String()+", fortio's cap"))
			}
		}
		for _, n := range sortedKeys(l.Blackholes) {
			check("blackholes", n, l.Blackholes[n].Address)
		}
		if l.DNS != nil {
			check("dns", "", l.DNS.Address)
			zone := strings.TrimSuffix(strings.TrimSpace(l.DNS.Zone), ".")
			if zone == "" || strings.ContainsAny(zone, " \t/:@") || strings.Contains(zone, "..") {
				d.err(d.rootFieldPos("local.dns.zone"), "local.dns.zone", "expected a DNS zone such as \"lab.internal\", got %q", l.DNS.Zone)
			}
		}
	}
}

// checkPlannedTimes checks the timeouts against the plan, which counts every step's planned
// duration (sleeps, loads of a duration, blocks, awaits of background steps), known exactly or
// as a lower bound: a step, a block, the scenario or its cleanup whose planned minimum exceeds
// its timeout would always time out; a poll whose interval is not shorter than its timeout
// reads once. A step of unknown duration counts as 0, so nothing is refused that could pass.
func (d *decoder) checkPlannedTimes() {
	sc := d.sc
	plan := planTimes(sc)
	entries := map[string]*Entry{}
	for i := range plan.Entries {
		entries[plan.Entries[i].Path] = &plan.Entries[i]
	}
	setup := phaseMinimum(plan, PhaseSetup)
	for _, s := range d.order {
		e := entries[s.Path]
		if e == nil || s.Params == nil {
			continue
		}
		d.checkStepTimeout(s, e)
		d.checkPoll(s)
		d.checkSampling(s, entries)
		if r, ok := s.Params.(*schema.Repeat); ok && sc.Timeout > 0 && s.Phase != PhaseCleanup {
			start := e.Start.D
			if s.Phase == PhaseSteps {
				start += setup
			}
			if most, at := repeatMost(r, e); at > 0 && start+at > sc.Timeout {
				from := ""
				if start > 0 {
					from = " from its planned start at +" + fmtDur(start)
				}
				d.err(d.rootFieldPos("timeout"), "timeout", "timeout %s is shorter than the repeat at %s, whose %s%s: the timeout would end it before its last round; lower max or raise timeout", sc.Timeout, s.Path, most, from)
			}
		}
	}
	if sc.Timeout > 0 {
		if m := setup + phaseMinimum(plan, PhaseSteps); m > sc.Timeout {
			d.err(d.rootFieldPos("timeout"), "timeout", "timeout %s is shorter than the scenario's planned minimum of %s (labrun plan shows the timeline): the run would always time out", sc.Timeout, m)
		}
	}
	if m := phaseMinimum(plan, PhaseCleanup); m > 0 {
		switch {
		case sc.CleanupTimeout > 0 && m > sc.CleanupTimeout:
			d.err(d.rootFieldPos("cleanupTimeout"), "cleanupTimeout", "cleanupTimeout %s is shorter than the cleanup's planned minimum of %s (labrun plan shows the timeline): the cleanup would always be cut short, leaving behind what it should undo", sc.CleanupTimeout, m)
		case sc.CleanupTimeout == 0 && m > schema.DefaultCleanupTimeout:
			d.err(d.rootFieldPos("cleanup"), "cleanup", "the cleanup's planned minimum of %s exceeds the default cleanupTimeout of %s (labrun plan shows the timeline): it would always be cut short; set cleanupTimeout", m, schema.DefaultCleanupTimeout)
		}
	}
}

// checkStepTimeout checks a step's timeout against its planned minimum, its own limit (a
// readiness timeout) and, for a repeat, the time of its max rounds.
func (d *decoder) checkStepTimeout(s *Step, e *Entry) {
	if s.Timeout == 0 || slices.ContainsFunc(s.Children, func(c *Step) bool { return c.HasAt && c.At >= s.Timeout }) {
		return // a child at or beyond the timeout is reported as such
	}
	pos, path := d.timeoutPos(s), s.Path+".timeout"
	_, block := s.Params.(schema.Parent)
	pl := s.Params.Plan()
	m := minDuration(e)
	r, repeat := s.Params.(*schema.Repeat)
	switch {
	case m > s.Timeout && block:
		d.err(pos, path, "timeout %s is shorter than the %s block's planned minimum of %s (labrun plan shows the timeline): it would always time out", s.Timeout, s.Kind, m)
	case m > s.Timeout:
		d.err(pos, path, "timeout %s is shorter than the step's own duration of at least %s: it would always time out", s.Timeout, m)
	case pl.Limit > s.Timeout:
		d.err(pos, path, "timeout %s is shorter than %s %s: the step's timeout would always end it first; raise timeout or lower %s", s.Timeout, pl.LimitField, pl.Limit, pl.LimitField)
	case repeat:
		if most, at := repeatMost(r, e); at > s.Timeout {
			d.err(pos, path, "timeout %s is shorter than the repeat, whose %s: the timeout would end it before its last round; lower max or raise timeout", s.Timeout, most)
		}
	}
}

// repeatMost is the least time a repeat's max rounds take (each round at least its planned
// minimum, and the interval between rounds), with a description; 0 when nothing is known.
func repeatMost(r *schema.Repeat, e *Entry) (string, time.Duration) {
	round := minDuration(e) // the plan's minimum of a repeat is one round
	at := time.Duration(r.Max)*round + time.Duration(r.Max-1)*r.Interval.D()
	return fmt.Sprintf("max of %d rounds takes at least %s (rounds of at least %s, %s apart)", r.Max, at, fmtDur(round), fmtDur(r.Interval.D())), at
}

// timeoutPos is where a step's timeout value is written.
func (d *decoder) timeoutPos(s *Step) Pos {
	return d.stepLitPos(s, "timeout")
}

// stepLitPos is where the value of a step's own field (timeout, at) is written, else the field.
func (d *decoder) stepLitPos(s *Step, field string) Pos {
	if v := d.stepValue[s].LookupPath(cue.MakePath(cue.Str(field))); v.Exists() {
		if p := d.l.litPos(v); p.IsValid() {
			return p
		}
	}
	return d.fieldPos(s, field)
}

// checkPoll refuses a poll whose interval is not shorter than its timeout (its own, else the
// default): it would read once.
func (d *decoder) checkPoll(s *Step) {
	pl, ok := s.Params.(schema.Poller)
	if !ok {
		return
	}
	interval, field := pl.PollInterval()
	if field == "" {
		return
	}
	timeout, which := s.Timeout, "its timeout"
	if timeout == 0 {
		timeout, which = d.defaultTimeout(s), "the default timeout"
	}
	if timeout == 0 || interval < timeout {
		return
	}
	pos, written := s.FieldPos(field), " (the default)"
	if v := (&stepChecker{kv: d.kindValue[s]}).lookup(field); v.Exists() {
		pos, written = d.l.litPos(v), ""
	}
	d.err(pos, s.Path+"."+s.Kind+"."+field, "%s %s%s is not shorter than %s of %s: it would read once and time out before reading again; shorten %s or raise timeout", field, interval, written, which, timeout, field)
}

// checkSampling warns about a sampler whose interval is not shorter than the planned duration
// of the step it samples during: it would take no sample while it runs (one at once, one at its end).
func (d *decoder) checkSampling(s *Step, entries map[string]*Entry) {
	if s.Every == 0 || s.While == "" {
		return
	}
	t := d.sc.names[s.While]
	if t == nil || entries[t.Path] == nil {
		return
	}
	if m := minDuration(entries[t.Path]); m > 0 && s.Every >= m {
		pos := d.fieldPos(s, "every")
		if v := d.stepValue[s].LookupPath(cue.MakePath(cue.Str("every"))); v.Exists() {
			pos = d.l.litPos(v)
		}
		d.warn(pos, LintOneSample, "every %s is not shorter than the planned %s of %q, which it samples during: it would take no sample while it runs, only one at once and one at its end; sample more often", s.Every, fmtDur(m), s.While)
	}
}

// defaultTimeout is the runner's bound of a step that sets none (0: none).
func (d *decoder) defaultTimeout(s *Step) time.Duration {
	return s.Params.Plan().Timeout.Default()
}

// minDuration is an entry's planned duration, or its lower bound (0 when nothing is known).
func minDuration(e *Entry) time.Duration {
	switch {
	case e.Duration != nil:
		return *e.Duration
	case e.MinDuration != nil:
		return *e.MinDuration
	}
	return 0
}

// backendURL is a load's URL that starts at a local backend: ${backends.<name>.url} (or its
// address, host:port).
var backendURL = regexp.MustCompile(`^(?:http://)?\$\{\s*backends\.([A-Za-z_][A-Za-z0-9_]*)\.(?:url|address)\s*\}`)

// endpointInURL is a local backend's or blackhole's url or address in a load's URL, with what
// follows it: its kind (url, address, host) and the byte after it ("" at the end).
var endpointInURL = regexp.MustCompile(`\$\{\s*(?:backends|blackholes)\.[A-Za-z_][A-Za-z0-9_-]*\.(url|address|host)\s*\}(.?)`)

// checkEndpointURL refuses a load's URL that a local endpoint's ${...} makes one no request
// can go to, which vet would otherwise leave to the run (a templated URL is checked when the
// step starts, exit 3): a path glued to the port, ${backends.a.url}echo (the port reads
// "44089echo"), an address without a scheme, ${backends.a.address}/echo, and a url after a
// scheme, http://${backends.a.url}/echo.
func (d *decoder) checkEndpointURL(s *Step) {
	t := s.templates[pathSep+"url"]
	if t == nil {
		return
	}
	v := (&stepChecker{kv: d.kindValue[s]}).lookup("url")
	if !v.Exists() {
		return
	}
	for _, m := range endpointInURL.FindAllStringSubmatchIndex(t.Src, -1) {
		ref, kind, next := t.Src[m[0]:m[1]-(m[5]-m[4])], t.Src[m[2]:m[3]], t.Src[m[4]:m[5]]
		pos := d.l.litPos(v).shift(m[0]).inString()
		switch {
		case kind == "url" && strings.HasSuffix(t.Src[:m[0]], "://"):
			d.err(pos, s.Path+".load.url", "url %q: %s holds its scheme already (http://host:port), so the URL would read http://http://…: expected %s", t.Src, ref, t.Src[strings.LastIndex(t.Src[:m[0]], "/")+1:])
			return
		case m[0] == 0 && kind != "url":
			d.err(pos, s.Path+".load.url", "url %q has no scheme: %s is host:port; expected http://%s/… (or the endpoint's url, with its scheme)", t.Src, ref, ref)
			return
		case kind != "host" && next != "" && !strings.Contains("/?#$", next): // ${…url}${vars.path}: known when the step runs
			d.err(pos, s.Path+".load.url", "url %q: %s ends with the port, and %q follows it: expected %s/%s (a path starts with /)", t.Src, ref, t.Src[m[4]:], ref, t.Src[m[4]:])
			return
		}
	}
}

// backendParams are the query parameters a local backend reads: its own delay, and those of
// fortio's echo handler it answers with (driver/local.backend).
var backendParams = []string{"close", "delay", "gzip", "header", "size", "status"}

// maxEchoSize is the largest size= fortio's echo handler writes (fnet.MaxPayloadSize); a
// larger one is cut to it.
const maxEchoSize = 256 * 1024

// checkBackendQueries refuses what a local backend would not do as a load's URL says, when the
// URL reaches the backend before the run (${backends.<name>.url} at its start, or a backend's
// fixed address, written or through a ${...} known before the run): a ?delay= it would cap (at
// its maxDelay, default fortio's 1.5s) or could not read, and a parameter it does not read
// (?stauts=503:20), or one it cannot read (?status=503-20 answers 400, ?status=503:20% drops
// the parameter): the requests would be answered other than the URL says, and a claim about
// the responses would hold of others.
func (d *decoder) checkBackendQueries() {
	if d.sc.Local == nil {
		return
	}
	for _, s := range d.order {
		p, ok := s.Params.(*schema.Load)
		if !ok {
			continue
		}
		d.checkEndpointURL(s)
		name, u := d.backendOfURL(s, p)
		if u == nil {
			continue
		}
		be := d.sc.Local.Backends[name]
		pos := s.FieldPos("url")
		if v := (&stepChecker{kv: d.kindValue[s]}).lookup("url"); v.Exists() {
			pos = d.l.litPos(v)
		}
		fail := func(format string, args ...any) {
			d.err(pos, s.Path+".load.url", format, args...)
		}
		if msg := backendQuery(u); msg != "" {
			fail("%s", msg)
			continue
		}
		delay := u.Query().Get("delay")
		if delay == "" || HasInterpolation(delay) {
			continue
		}
		choices, err := schema.ParseDelay(delay)
		if err != nil {
			fail("?delay=%s: %v", delay, err)
			continue
		}
		limit, from := be.MaxDelay.D(), "its maxDelay"
		if limit == 0 {
			limit, from = schema.DefaultMaxDelay, "the default maxDelay, fortio's cap"
		}
		for _, c := range choices {
			if c.Delay > limit {
				fail("?delay=%s holds requests %s, more than backend %s's cap of %s (%s): it would answer after %s; raise local.backends.%s.maxDelay", delay, c.Delay, name, limit, from, limit, name)
				break
			}
		}
	}
}

// backendOfURL is the local backend a load's URL reaches as known before the run, and the URL
// (its host "backend" where the backend's address is known only at run time); "", nil when
// it reaches none that is known.
func (d *decoder) backendOfURL(s *Step, p *schema.Load) (string, *url.URL) {
	l := d.sc.Local
	raw := p.URL
	if t := s.templates[pathSep+"url"]; t != nil {
		raw = t.Static(d.staticValue)
	}
	if m := backendURL.FindStringSubmatch(raw); m != nil {
		if _, ok := l.Backends[m[1]]; !ok {
			return "", nil // an unknown backend is the expression's error
		}
		u, err := url.Parse("http://backend" + raw[len(m[0]):])
		if err != nil {
			return "", nil
		}
		return m[1], u
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" || HasInterpolation(u.Host) {
		return "", nil
	}
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = "80"
	}
	if strings.EqualFold(strings.TrimSuffix(host, "."), "localhost") {
		host = "127.0.0.1"
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return "", nil
	}
	addr := net.JoinHostPort(ip.String(), port)
	for _, n := range sortedKeys(l.Backends) {
		if fixedAddress(l.Backends[n].Address) == addr {
			return n, u
		}
	}
	return "", nil
}

// backendQuery says what of u's query a local backend would not do as written ("" when
// nothing): a parameter it does not read, one given twice, a value it cannot read. A pair
// holding a ${...} not known before the run is left alone.
func backendQuery(u *url.URL) string {
	known := "it reads " + strings.Join(backendParams, ", ")
	switch u.Path {
	case "/metrics":
		if u.RawQuery != "" {
			return fmt.Sprintf("?%s: a local backend answers /metrics with its counters, whatever the query: it does nothing here; load another path (/echo)", u.RawQuery)
		}
		return ""
	}
	seen := map[string]bool{}
	for _, pair := range strings.Split(u.RawQuery, "&") {
		if pair == "" || HasInterpolation(pair) {
			continue
		}
		if strings.Contains(pair, ";") {
			return fmt.Sprintf("?%s: a query's pairs are separated by &, not ;: the backend drops the pair", pair)
		}
		rawKey, rawValue, _ := strings.Cut(pair, "=")
		key, err := url.QueryUnescape(rawKey)
		if err == nil {
			var value string
			if value, err = url.QueryUnescape(rawValue); err == nil {
				if msg := backendParam(key, value, seen, known); msg != "" {
					return msg
				}
				if u.Path == "/who" && key != "delay" {
					return fmt.Sprintf("?%s: a local backend answers /who with its name: only ?delay= applies there, ?%s= does nothing; load /echo", pair, key)
				}
				continue
			}
		}
		return fmt.Sprintf("?%s: %v: the backend drops the pair, as if it were not written; a %% is written %%25 in a URL (status=503:20 is 20%%)", pair, err)
	}
	return ""
}

// backendParam says what a local backend would not do of one parameter ("" when nothing).
func backendParam(key, value string, seen map[string]bool, known string) string {
	at := "?" + key + "=" + value
	if !slices.Contains(backendParams, key) {
		return fmt.Sprintf("%s: a local backend reads no parameter %q%s; %s: it would do nothing", at, key, didYouMean(key, backendParams), known)
	}
	if seen[key] && key != "header" {
		return fmt.Sprintf("%s: ?%s= is given twice: the backend reads the first only; give it once (codes with percentages: status=503:20,429:5)", at, key)
	}
	seen[key] = true
	switch key {
	case "status":
		if msg := weightedInts(value, 200, 599, "a status code"); msg != "" {
			then := "the backend would answer every request 400"
			if strings.Contains(msg, " from 200 to 599") {
				then = "the backend would not answer with it as a response's status"
			}
			return fmt.Sprintf("%s: %s: %s; expected a status code (503) or codes with percentages (503:20,429:5: 20%% 503, 5%% 429, the rest 200)", at, msg, then)
		}
	case "size":
		if msg := weightedInts(value, 0, maxEchoSize, "a size in bytes"); msg != "" {
			return fmt.Sprintf("%s: %s: the backend would not answer as written (it echoes the request, or cuts the size to %d); expected a size in bytes (1024) or sizes with percentages (1024:20,0:80)", at, msg, maxEchoSize)
		}
	case "close", "gzip":
		if value == "true" || value == "false" {
			break
		}
		if p, err := strconv.ParseFloat(value, 64); err != nil || p < 0 || p > 100 {
			return fmt.Sprintf("%s: expected true, false or a percentage of the responses (0 to 100); the backend reads anything else as true", at)
		}
	case "header":
		if k, _, ok := strings.Cut(value, ":"); !ok || k == "" {
			return fmt.Sprintf("%s: expected Name:value (header=X-Lab:yes): the backend adds no header", at)
		}
	}
	return ""
}

// weightedInts says why v is not fortio's "n" or "n:percent,n:percent" with each n in [lo, hi]
// and the percentages 0 to 100 adding up to at most 100 ("" when it is).
func weightedInts(v string, lo, hi int, what string) string {
	if v == "" {
		return "it is empty"
	}
	entries := strings.Split(v, ",")
	if len(entries) == 1 && !strings.Contains(v, ":") {
		return inRange(v, lo, hi, what)
	}
	total := 0.0
	for _, e := range entries {
		n, percent, ok := strings.Cut(e, ":")
		if !ok || strings.Contains(percent, ":") {
			return fmt.Sprintf("%q is not %s:percentage", e, strings.TrimPrefix(strings.TrimPrefix(what, "a "), "an "))
		}
		if msg := inRange(n, lo, hi, what); msg != "" {
			return msg
		}
		p, err := strconv.ParseFloat(strings.TrimSuffix(percent, "%"), 64)
		if err != nil || p < 0 || p > 100 {
			return fmt.Sprintf("%q in %q is not a percentage (0 to 100)", percent, e)
		}
		total += p
	}
	if math.Round(total*1000)/1000 > 100 {
		return fmt.Sprintf("the percentages add up to %g, more than 100", total)
	}
	return ""
}

// inRange says why s is not an integer in [lo, hi] ("" when it is).
func inRange(s string, lo, hi int, what string) string {
	n, err := strconv.Atoi(s)
	switch {
	case err != nil:
		return fmt.Sprintf("%q is not %s", s, what)
	case n < lo || n > hi:
		return fmt.Sprintf("%d is not %s from %d to %d", n, what, lo, hi)
	}
	return ""
}

// minEvery is the shortest sampling interval.
const minEvery = time.Millisecond

// phaseMinimum is the planned minimum of one phase: the latest planned end of its steps (a
// duration known only as a lower bound counts as that bound). Every step counts, background
// steps inside blocks too (the phase joins them); a sampler ends with the step it samples.
func phaseMinimum(plan *Plan, phase Phase) time.Duration {
	var m time.Duration
	for i := range plan.Entries {
		e := &plan.Entries[i]
		if e.Phase != phase || e.Every > 0 {
			continue
		}
		d := minDuration(e)
		if e.Timeout > 0 {
			d = min(d, e.Timeout) // its timeout ends it (refused where it would)
		}
		m = max(m, e.Start.D+d)
	}
	return m
}

// rootFieldPos is where a field of the scenario is written (a dotted path).
func (d *decoder) rootFieldPos(field string) Pos {
	var sels []cue.Selector
	for _, part := range strings.Split(field, ".") {
		if part != "" {
			sels = append(sels, cue.Str(part))
		}
	}
	if v := d.root.LookupPath(cue.MakePath(sels...)); v.Exists() {
		if p := d.l.valuePos(v); p.IsValid() {
			return p
		}
	}
	return d.sc.Pos
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// describeStep is "step NAME (a KIND step)", for messages.
func describeStep(s *Step) string { return fmt.Sprintf("%q (%s step)", s.Name, schema.A(s.Kind)) }

// schemaRefusedIn says a problem is already reported at path or below it, before the kinds'
// checks.
func (d *decoder) schemaRefusedIn(path string) bool {
	for _, e := range d.l.errs.errs {
		if e.Warning == "" && (e.Path == path || strings.HasPrefix(e.Path, path+".")) {
			return true
		}
	}
	return false
}
