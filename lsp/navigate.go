package lsp

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/tliron/glsp"
	protocol "github.com/tliron/glsp/protocol_3_16"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/internal/didyoumean"
	"labrun.dev/labrun/schema"
)

// name is the name at the cursor in an expression: the chain it ends (its segments, the
// last being the name), where it is written, and whether it is a delta's string argument.
type name struct {
	st         *site
	segs       []string
	start, end int
	quoted     bool
	// call says the name is called: name(…).
	call bool
	// after are the names the chain goes on with after the name (.b.c of a.▮x.b.c).
	after []string
}

// nameAt is the name under the cursor off of the document, inside an expression (nil: none).
func (s *Server) nameAt(uri string, pos protocol.Position) (*name, *document, *text) {
	d, t, scenarios, _ := s.analysis(uri, requestWait)
	if d == nil {
		return nil, nil, nil
	}
	off := t.offset(pos)
	st := expressionAt(cueSource(d.path, t.src), off, scenarios)
	if st == nil || st.sc.ExprNames == nil {
		return nil, d, t
	}
	left, right := trailingWord(st.src), leadingWord(st.rest)
	word := left + right
	if word == "" {
		return nil, d, t
	}
	nm := &name{st: st, start: off - len(left), end: off + len(right)}
	if _, ok := inDeltaArg(st.src); ok {
		nm.segs, nm.quoted = []string{word}, true
		return nm, d, t
	}
	nm.call = strings.HasPrefix(strings.TrimLeft(st.rest[len(right):], " "), "(")
	for r := st.rest[len(right):]; strings.HasPrefix(r, "."); {
		w := leadingWord(r[1:])
		if w == "" {
			break
		}
		nm.after = append(nm.after, w)
		r = r[1+len(w):]
	}
	if chain, _, dotted := tail(st.src); dotted {
		nm.segs = append(segments(chain), word)
	} else {
		nm.segs = []string{word}
	}
	return nm, d, t
}

func (s *Server) hover(_ *glsp.Context, p *protocol.HoverParams) (*protocol.Hover, error) {
	nm, d, t := s.nameAt(p.TextDocument.URI, p.Position)
	if d == nil {
		return nil, nil // not open: an empty result, as gopls gives; an error reads as the server failing
	}
	if nm == nil {
		return hoverObjectField(d, t, p.Position), nil
	}
	md := explainName(nm)
	if md == "" {
		return nil, nil
	}
	r := protocol.Range{Start: t.position(nm.start), End: t.position(nm.end)}
	return &protocol.Hover{Contents: protocol.MarkupContent{Kind: protocol.MarkupKindMarkdown, Value: md}, Range: &r}, nil
}

// explainName is what a hover shows of a name: its type, the step it comes from, when it
// exists and whether the expression's step can read it.
func explainName(nm *name) string {
	sc, n := nm.st.sc, nm.st.sc.ExprNames
	sp := scopeAt(sc, nm.st.step, nm.st.src)
	word := nm.segs[len(nm.segs)-1]
	// delta not called is the plain delta (delta.<stat>), a value, not the function.
	plainDelta := len(nm.segs) == 1 && word == "delta" && !nm.call
	if nm.call || len(nm.segs) == 1 && dsl.Functions[word] != "" && n.Results[word] == nil && !plainDelta {
		if sig := dsl.Functions[word]; sig != "" {
			return "```\n" + sig + "\n```"
		}
		return ""
	}
	if nm.quoted {
		if sc.Step(word) == nil {
			return ""
		}
		return stepDoc(sc, word) + availability(sp, dsl.Read{Step: word})
	}
	// A chain from a let's name (let l = fortio; l.requests) types as its value's.
	lets := letPrefix(letsInForce(nm.st.src), nm.segs[0])
	if len(nm.after) > 0 {
		// Inside a stat's name, which holds dots (http.downstream_rq_total): the whole stat.
		whole := append(slices.Clip(nm.segs), nm.after...)
		if m := typeChain(n, lets, whole); m != nil && m.stats != nil && m.statAt < len(nm.segs) {
			nm.segs = whole
		}
	}
	chain := strings.Join(nm.segs, ".")
	m := typeChain(n, lets, nm.segs)
	if m == nil {
		if nm.segs[0] == "delta" && n.DeltaErr != "" {
			return "`delta`: " + n.DeltaErr
		}
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "`%s`: %s", chain, m.typ)
	root := nm.segs[0]
	switch {
	case m.stats != nil:
		what := "its source"
		if m.stats.Stats != nil && m.stats.Stats.What != "" {
			what = m.stats.Stats.What
		}
		if st, ok := lookupStat(m); ok {
			fmt.Fprintf(&b, "\n\nstat `%s` of %s: %s", m.stat, what, statDetail(st))
			if st.Doc != "" {
				b.WriteString(" — " + st.Doc)
			}
		} else {
			fmt.Fprintf(&b, "\n\nstat `%s`: not a stat %s is known to have", m.stat, what)
		}
	case m.field != nil && n.Results[root] != nil:
		b.WriteString("\n\n" + fieldDoc(m.field))
	case root == "vars" && len(nm.segs) == 2 && sc.Declared[word].IsValid():
		b.WriteString("\n\n" + varValues(sc, word))
	case m.field != nil && m.field.Doc != "":
		// vars, backends, target: there from the start, no step's moment
		b.WriteString("\n\n" + strings.TrimSpace(m.field.Doc))
	}
	switch {
	case root == "delta":
		b.WriteString(deltaHere(sp))
	case stepMaps[root] != "" && len(nm.segs) == 2 && sc.Step(nm.segs[1]) != nil:
		fmt.Fprintf(&b, "\n\n%s.<step>: %s\n\n%s", root, stepMaps[root], stepDoc(sc, nm.segs[1]))
		b.WriteString(availability(sp, dsl.Read{Step: nm.segs[1], Via: root}))
	case n.Results[root] != nil:
		b.WriteString("\n\nfrom " + stepDoc(sc, root))
		r := dsl.Read{Step: root}
		if len(nm.segs) > 1 && n.Results[root].Type.Field(nm.segs[1]) != nil {
			r.Field = nm.segs[1]
		}
		b.WriteString(availability(sp, r))
	}
	return b.String()
}

// varValues says what a var holds: the value it is declared with and, when the scenario
// sweeps it, the values its runs read ("declared 10 (line 7); swept: 10, 20.5 (each run reads
// one)"); of a secret, only that it is one.
func varValues(sc *dsl.Scenario, name string) string {
	if slices.Contains(sc.Secrets, name) {
		return "a secret: its value is not shown"
	}
	out := fmt.Sprintf("declared %s (line %d)", dsl.Truncate(dsl.FormatValue(sc.Vars[name]), 80), sc.Declared[name].Line)
	if u := dsl.VarNameUnit(name); u != "" && isNumber(sc.Vars[name]) {
		// vet refuses it beside a time of the other unit (fortio.duration < vars.maxDurationMs).
		words := map[schema.Unit]string{schema.Millis: "milliseconds", schema.Seconds: "seconds"}[u]
		out += fmt.Sprintf("; %s by its name (a var's number has no unit of its own: vet refuses it beside a time in another unit; a duration is written \"2s\" and read as duration(vars.%s))", words, name)
	}
	if vals := sc.Sweep[name]; len(vals) > 0 {
		out += "; swept: " + dsl.Truncate(strings.Join(vals, ", "), 200) + " (each run reads one)"
	}
	return out
}

// isNumber says v is a var's number.
func isNumber(v any) bool {
	switch v.(type) {
	case int, int64, float64:
		return true
	}
	return false
}

// deltaHere says what the plain delta is where the scope's expression reads it: the plan's
// pair for the expectations; for a step's expression (judged while the run is under way) the
// first and the last snapshot taken by then, which must be two.
func deltaHere(sp scope) string {
	n := sp.sc.ExprNames
	if sp.step == nil || n.DeltaErr != "" {
		return "\n\n" + deltaDoc(n)
	}
	var taken []string
	for _, s := range sp.deltaTaken() {
		taken = append(taken, "`"+s+"`")
	}
	const running = "while the run is under way (an assert, an until, a ${…}), delta is the counters of the last snapshot taken so far minus those of the first"
	if len(taken) < 2 {
		by := "none"
		if len(taken) == 1 {
			by = "only " + taken[0]
		}
		return fmt.Sprintf("\n\n**Not readable here** (step %s): %s, and it needs two snapshots taken: by this step, %s can have been; read delta in expect, or in a step after a second snapshot.", sp.step.Path, running, by)
	}
	return fmt.Sprintf("\n\n%s: here %s minus those of %s (of %s, taken by then); delta(\"a\", \"b\") compares two others.\n\nReadable here (step %s).", running, taken[len(taken)-1], taken[0], strings.Join(taken, ", "), sp.step.Path)
}

// lookupStat is the catalogue's entry of the member's stat.
func lookupStat(m *member) (schema.Stat, bool) {
	if m.stats.Stats == nil || m.stats.Stats.Catalogue == nil {
		return schema.Stat{}, false
	}
	return m.stats.Stats.Catalogue.Lookup(m.stat)
}

// availability says when the step's expression can read r: a line for hovers.
func availability(sp scope, r dsl.Read) string {
	if why := sp.whyNot(r); why != "" && sp.step == nil {
		return fmt.Sprintf("\n\n**Not readable by the expectations**: %s.", why)
	}
	if sp.step == nil {
		return "\n\nRead by the expectations, judged when the run has ended."
	}
	if why := sp.whyNot(r); why != "" {
		return fmt.Sprintf("\n\n**Not readable here** (step %s): %s.", sp.step.Path, why)
	}
	return fmt.Sprintf("\n\nReadable here (step %s).", sp.step.Path)
}

func (s *Server) definition(_ *glsp.Context, p *protocol.DefinitionParams) (any, error) {
	nm, d, _ := s.nameAt(p.TextDocument.URI, p.Position)
	if d == nil {
		return nil, nil // not open: an empty result, as gopls gives; an error reads as the server failing
	}
	if nm == nil {
		return nil, nil
	}
	sc := nm.st.sc
	target := nm.segs[0]
	if stepMaps[target] != "" && len(nm.segs) >= 2 {
		target = nm.segs[1]
	}
	step := sc.Step(target)
	if step == nil || !step.Pos.IsValid() {
		return nil, nil
	}
	t := s.textOf(step.Pos.File)
	r := rangeAt(t, step.Pos)
	// The name as written, "name", after the step's start.
	from := t.at(step.Pos)
	if i := strings.Index(t.src[from:min(len(t.src), from+4000)], `"`+target+`"`); i >= 0 {
		r = protocol.Range{Start: t.position(from + i + 1), End: t.position(from + i + 1 + len(target))}
	}
	return []protocol.Location{{URI: uriOf(step.Pos.File), Range: r}}, nil
}

// textOf is a file's text: the open document's, else the file's on disk.
func (s *Server) textOf(path string) *text {
	s.mu.Lock()
	d := s.docs[path]
	s.mu.Unlock()
	if d != nil {
		return d.text
	}
	if s.opts.ReadFile != nil {
		if b, err := s.opts.ReadFile(path); err == nil {
			return newText(string(b))
		}
	}
	return newText("")
}

// meanRE finds a problem's suggestion: did you mean "requests"?, did you mean rq_total?,
// did you mean mean(…)?
var meanRE = regexp.MustCompile(`did you mean "?([^"?,(\s]+)`)

func (s *Server) codeAction(_ *glsp.Context, p *protocol.CodeActionParams) (any, error) {
	path := pathOf(p.TextDocument.URI)
	s.mu.Lock()
	d := s.docs[path]
	s.mu.Unlock()
	if d == nil {
		return nil, nil // not open: an empty result, as gopls gives; an error reads as the server failing
	}
	t := d.text
	kind := protocol.CodeActionKindQuickFix
	yes := true
	var actions []protocol.CodeAction
	for _, dg := range p.Context.Diagnostics {
		m := meanRE.FindStringSubmatch(dg.Message)
		if m == nil {
			continue
		}
		want := m[1]
		start := t.offset(dg.Range.Start)
		if start < len(t.src) && t.src[start] == '"' {
			start++ // a quoted label
		}
		dots := strings.Count(want, ".")
		end := nameEnd(t.src, start, dots)
		if end > start && didyoumean.Closest(t.src[start:end], []string{want}) == "" {
			// Not the misspelt name (delta("befor", "after") is reported at delta): the
			// first name after it on its line that is close to the suggestion.
			start, end = misspelt(t, start, want, dots)
		}
		if end <= start || t.src[start:end] == want {
			continue
		}
		r := protocol.Range{Start: t.position(start), End: t.position(end)}
		actions = append(actions, protocol.CodeAction{
			Title:       fmt.Sprintf("Change %s to %s", t.src[start:end], want),
			Kind:        &kind,
			Diagnostics: []protocol.Diagnostic{dg},
			IsPreferred: &yes,
			Edit:        &protocol.WorkspaceEdit{Changes: map[string][]protocol.TextEdit{p.TextDocument.URI: {{Range: r, NewText: want}}}},
		})
	}
	return actions, nil
}

// misspelt finds, on the line of from and after it, the first name (with dots dots) close to
// want but not want: the name a problem's suggestion replaces. 0, 0: none.
func misspelt(t *text, from int, want string, dots int) (int, int) {
	lineEnd := strings.IndexByte(t.src[from:], '\n')
	if lineEnd < 0 {
		lineEnd = len(t.src) - from
	}
	lineEnd += from
	for i := from; i < lineEnd; i++ {
		if !isWordByte(t.src[i]) || i > 0 && isWordByte(t.src[i-1]) {
			continue
		}
		end := min(nameEnd(t.src, i, dots), lineEnd)
		if w := t.src[i:end]; w != want && didyoumean.Closest(w, []string{want}) != "" {
			return i, end
		}
	}
	return 0, 0
}

// nameEnd is the end of the name at start that has dots dots (a stat name holds some).
func nameEnd(src string, start, dots int) int {
	end := start
	for end < len(src) {
		c := src[end]
		if c == '.' && dots > 0 && end+1 < len(src) && isWordByte(src[end+1]) {
			dots--
			end++
			continue
		}
		if c == '.' || !isWordByte(c) || c >= 0x80 {
			break
		}
		end++
	}
	return end
}
