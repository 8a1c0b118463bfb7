package lsp

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/expr-lang/expr/builtin"
	"github.com/tliron/glsp"
	protocol "github.com/tliron/glsp/protocol_3_16"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/schema"
)

// requestWait bounds how long a request waits for the check of the document's current text.
const requestWait = 2 * time.Second

func (s *Server) completion(_ *glsp.Context, p *protocol.CompletionParams) (any, error) {
	d, t, scenarios, _ := s.analysis(p.TextDocument.URI, requestWait)
	if d == nil {
		return nil, nil // not open: an empty result, as gopls gives; an error reads as the server failing
	}
	off := t.offset(p.Position)
	src := cueSource(d.path, t.src)
	var items []protocol.CompletionItem
	if st := expressionAt(src, off, scenarios); st != nil {
		items = completeExpr(st, t, off)
	} else if pl := locate(src, off); pl != nil && pl.inStruct && len(pl.path) >= 1 && strings.Contains(src, "#Scenario") {
		if objItems, inObject := completeObjectFields(pl, t, off); inObject {
			items = objItems // a Kubernetes object's fields, as vet checks them
		} else {
			items = s.completeFields(pl, t, off)
		}
	} else if enum := completeObjectEnum(pl, t, off); enum != nil {
		items = enum
	} else if pl != nil && pl.lit != nil && s.opts.Values != nil {
		items = s.completeValue(pl, t, off)
	}
	return protocol.CompletionList{IsIncomplete: false, Items: items}, nil
}

// edit replaces the text from start to the cursor with newText.
func edit(t *text, start, off int, newText string) protocol.TextEdit {
	return protocol.TextEdit{Range: protocol.Range{Start: t.position(start), End: t.position(off)}, NewText: newText}
}

func item(label string, kind protocol.CompletionItemKind, detail, doc, sortKey string) protocol.CompletionItem {
	it := protocol.CompletionItem{Label: label, Kind: &kind}
	if detail != "" {
		it.Detail = &detail
	}
	if doc != "" {
		it.Documentation = protocol.MarkupContent{Kind: protocol.MarkupKindMarkdown, Value: doc}
	}
	if sortKey != "" {
		sk := sortKey
		it.SortText = &sk
	}
	return it
}

// completeExpr completes the expression at st: at the cursor off of the document t.
func completeExpr(st *site, t *text, off int) []protocol.CompletionItem {
	n := st.sc.ExprNames
	if n == nil {
		return nil
	}
	sp := scopeAt(st.sc, st.step, st.src)
	if a, ok := deltaArgAt(st.src); ok {
		return snapshotNames(sp, a, t, off-len(a.word), off)
	}
	chain, word, dotted := tail(st.src)
	start := off - len(word)
	lets := letsInForce(st.src)
	var items []protocol.CompletionItem
	if !dotted {
		items = topNames(sp)
		// The names a let binds before the cursor (let l = fortio; l): none was offered.
		// (The last of two lets of one name is the one in force.)
		for _, l := range slices.Backward(lets) {
			if !slices.ContainsFunc(items, func(it protocol.CompletionItem) bool { return it.Label == l.name }) {
				items = append(items, item(l.name, protocol.CompletionItemKindVariable, typeString(n, letPrefix(lets, l.name)+l.name), "let "+l.name+" = "+l.value, "0"+l.name))
			}
		}
	} else {
		segs := segments(chain)
		items = members(sp, letPrefix(lets, segs[0]), segs, t, start, off)
	}
	for i := range items {
		if items[i].TextEdit != nil {
			continue // a stat name: its edit replaces the whole name written so far
		}
		e := edit(t, start, off, items[i].Label)
		if items[i].InsertText != nil {
			e.NewText = *items[i].InsertText
		}
		items[i].TextEdit = e
	}
	return items
}

// snapshotNames are the snapshots a delta can compare, inside its quotes: as its second
// argument, those of the first's source (delta) or of another source (deltaAcross).
func snapshotNames(sp scope, a deltaArg, t *text, start, off int) []protocol.CompletionItem {
	var items []protocol.CompletionItem
	results := sp.sc.ExprNames.Results
	source := func(name string) string {
		if r := results[name]; r != nil && r.Type.Kind == schema.TStats && r.Type.Stats != nil {
			return r.Type.Stats.ID
		}
		return ""
	}
	firstSource := source(a.first)
	for _, name := range sortedNames(results) {
		r := results[name]
		if r.Type.Kind != schema.TStats || !sp.readable(dsl.Read{Step: name}) {
			continue
		}
		if firstSource != "" && (a.call == "delta") != (source(name) == firstSource) {
			continue // vet refuses delta across sources, and deltaAcross within one
		}
		it := item(name, protocol.CompletionItemKindVariable, r.Type.String(), stepDoc(sp.sc, name), "")
		it.TextEdit = edit(t, start, off, name)
		items = append(items, it)
	}
	return items
}

// topNames are the names an expression of the scope can start with.
func topNames(sp scope) []protocol.CompletionItem {
	n := sp.sc.ExprNames
	var items []protocol.CompletionItem
	for _, name := range sortedNames(n.Results) {
		if !sp.readableStep(name) {
			continue
		}
		r := n.Results[name]
		items = append(items, item(name, protocol.CompletionItemKindVariable, fmt.Sprintf("%s (%s step)", r.Type, r.Kind), stepDoc(sp.sc, name), "0"+name))
	}
	plainDelta := sp.plainDelta()
	if plainDelta {
		items = append(items, item("delta", protocol.CompletionItemKindVariable, typeString(n, "delta"), deltaDoc(n)+"\n\n"+dsl.Functions["delta"], "1delta"))
	}
	if len(n.Vars) > 0 {
		items = append(items, item("vars", protocol.CompletionItemKindVariable, typeString(n, "vars"), "the scenario's vars: "+strings.Join(sortedNames(n.Vars), ", "), "1vars"))
	}
	if len(n.Steps) > 0 {
		for _, m := range sortedNames(stepMaps) {
			items = append(items, item(m, protocol.CompletionItemKindVariable, typeString(n, m), m+".<step>: "+stepMaps[m], "2"+m))
		}
	}
	if len(n.Backends) > 0 {
		items = append(items, item("backends", protocol.CompletionItemKindVariable, typeString(n, "backends"), "the local target's backends: "+strings.Join(sortedNames(n.Backends), ", "), "2backends"))
	}
	if len(n.Blackholes) > 0 {
		items = append(items, item("blackholes", protocol.CompletionItemKindVariable, typeString(n, "blackholes"), "the local target's blackholes: "+strings.Join(sortedNames(n.Blackholes), ", "), "2blackholes"))
	}
	items = append(items, item("target", protocol.CompletionItemKindVariable, typeString(n, "target"), "what the target gives expressions", "2target"))
	for _, f := range sortedNames(dsl.Functions) {
		if f == "delta" && plainDelta {
			continue // one item: delta, whose doc says delta("a", "b") too
		}
		it := item(f, protocol.CompletionItemKindFunction, dsl.Functions[f], "", "3"+f)
		ins := f + "("
		it.InsertText = &ins
		items = append(items, it)
	}
	for _, f := range builtin.Builtins {
		if strings.HasPrefix(f.Name, "$") || dsl.Functions[f.Name] != "" {
			continue
		}
		it := item(f.Name, protocol.CompletionItemKindFunction, "expr's builtin "+f.Name+"(…)", "", "4"+f.Name)
		ins := f.Name + "("
		it.InsertText = &ins
		items = append(items, it)
	}
	return items
}

// typeString is the type of the expression src, in words.
func typeString(n *dsl.Names, src string) string {
	if t := n.TypeOf(src); t != nil {
		return t.String()
	}
	return ""
}

// members are what can follow the chain segs (after the lets in force) and a dot: a struct's
// fields, a map's known keys, a stats map's stat names (which hold dots: each item then
// replaces the whole stat name written after the map, from its start).
func members(sp scope, lets string, segs []string, t *text, start, off int) []protocol.CompletionItem {
	n := sp.sc.ExprNames
	root := segs[0]
	if root == "delta" && !sp.plainDelta() {
		return nil // vet refuses it here: nothing to offer after it
	}
	m := typeChain(n, lets, segs)
	var items []protocol.CompletionItem
	if m != nil && m.stats != nil {
		written := m.stat + "."
		statStart := start - len(written)
		for _, st := range statNames(m.stats) {
			if !strings.HasPrefix(st.Name, written) {
				continue
			}
			it := item(st.Name, protocol.CompletionItemKindField, statDetail(st), st.Doc, "")
			it.TextEdit = edit(t, statStart, off, st.Name)
			filter := st.Name
			it.FilterText = &filter
			items = append(items, it)
		}
		return items
	}
	if m == nil {
		return nil
	}
	typ := m.typ
	switch typ.Kind {
	case schema.TStats:
		for _, f := range typ.Fields {
			items = append(items, item(f.Name, protocol.CompletionItemKindField, f.Type.String(), fieldDoc(f), "0"+f.Name))
		}
		for _, st := range statNames(typ) {
			it := item(st.Name, protocol.CompletionItemKindField, statDetail(st), st.Doc, "1"+st.Name)
			it.TextEdit = edit(t, start, off, st.Name)
			items = append(items, it)
		}
	case schema.TStruct:
		for i, f := range typ.Fields {
			if len(segs) == 1 && n.Results[root] != nil && !sp.readable(dsl.Read{Step: root, Field: f.Name}) {
				continue
			}
			doc := strings.TrimSpace(f.Doc) // vars, backends, target: there from the start
			if n.Results[root] != nil {
				doc = fieldDoc(f)
			}
			items = append(items, item(f.Name, protocol.CompletionItemKindField, f.Type.String(), doc, fmt.Sprintf("%03d", i)))
		}
	case schema.TMap:
		via := ""
		if _, ok := stepMaps[root]; ok && len(segs) == 1 {
			via = root
		}
		for _, k := range typ.Keys {
			if via != "" && !sp.readable(dsl.Read{Step: k, Via: via}) {
				continue
			}
			doc := ""
			if via != "" {
				doc = stepDoc(sp.sc, k)
			}
			items = append(items, item(k, protocol.CompletionItemKindField, typ.Elem.String(), doc, "0"+k))
		}
	}
	return items
}

// statNames are the stats a map can hold, as its catalogue names them: for a delta, the
// counters only (a gauge or a histogram has none).
func statNames(t *schema.Type) []schema.Stat {
	if t.Stats == nil || t.Stats.Catalogue == nil {
		return nil
	}
	var out []schema.Stat
	for _, name := range t.Stats.Catalogue.Names() {
		st, ok := t.Stats.Catalogue.Lookup(name)
		if !ok {
			continue
		}
		if t.Stats.Deltas && st.Kind != schema.Counter {
			continue
		}
		if st.Kind == schema.Histogram && !t.Stats.Histograms {
			continue
		}
		st.Name = name
		out = append(out, st)
	}
	return out
}

func statDetail(st schema.Stat) string {
	if st.Unit != schema.Plain {
		return fmt.Sprintf("%s (%s)", st.Kind, st.Unit)
	}
	return st.Kind.String()
}

// fieldDoc is a result field's doc and when it exists.
func fieldDoc(f *schema.Field) string {
	doc := f.Doc
	if f.Absent != "" {
		doc += "\n\nNot recorded: " + f.Absent
	}
	return strings.TrimSpace(doc + "\n\nExists " + f.When.String() + ".")
}

// stepDoc says what the step called name is: its kind, where it is, what it records.
func stepDoc(sc *dsl.Scenario, name string) string {
	step := sc.Step(name)
	var b strings.Builder
	if step != nil {
		fmt.Fprintf(&b, "step `%s` (%s) at %s, line %d", name, step.Kind, step.Path, step.Pos.Line)
	}
	if r := sc.ExprNames.Results[name]; r != nil && len(r.Type.Fields) > 0 {
		b.WriteString("\n\n```\n" + r.Type.Describe() + "\n```")
	}
	return b.String()
}

// deltaDoc says what delta compares, or why there is no plain delta.
func deltaDoc(n *dsl.Names) string {
	if n.DeltaErr != "" {
		return "**No plain delta here**: " + n.DeltaErr
	}
	if n.DeltaFrom == "" {
		return "the counters of the last snapshot minus those of the first"
	}
	return fmt.Sprintf("the counters of snapshot `%s` minus those of `%s` (the last and the first); delta(\"a\", \"b\") compares two others", n.DeltaTo, n.DeltaFrom)
}

// completeFields lists the schema's fields of the struct at the cursor: a step's kinds and
// common fields, a kind's parameters, a scenario's fields.
func (s *Server) completeFields(pl *place, t *text, off int) []protocol.CompletionItem {
	word := off
	for word > 0 && isWordByte(t.src[word-1]) {
		word--
	}
	var items []protocol.CompletionItem
	fields := s.schemaDocs().fieldsAt(pl.path)
	sort.SliceStable(fields, func(i, j int) bool { return fields[i].step && !fields[j].step })
	hasKind := false
	for name := range pl.present {
		if _, ok := schema.Kinds[name]; ok {
			hasKind = true
		}
	}
	for i, f := range fields {
		if pl.present[f.name] || f.step && hasKind {
			continue // a step has one kind: vet refuses a second
		}
		kind, detail := protocol.CompletionItemKindField, f.kind
		if f.step {
			kind, detail = protocol.CompletionItemKindClass, "step kind: "+schema.Kinds[f.name].Usage
		}
		it := item(f.name, kind, detail, f.doc, fmt.Sprintf("%03d", i))
		it.TextEdit = edit(t, word, off, f.name+": ")
		items = append(items, it)
	}
	return items
}

// completeValue offers Options.Values inside a plain string of a step kind's field.
func (s *Server) completeValue(pl *place, t *text, off int) []protocol.CompletionItem {
	n := stepDepth(pl.path)
	if n == 0 || len(pl.path) != n+3 || off < pl.litStart {
		return nil
	}
	kind, field := pl.path[n+1], pl.path[n+2]
	var items []protocol.CompletionItem
	for _, v := range s.opts.Values(kind, field, t.src[pl.litStart:off], pl.present) {
		it := item(v, protocol.CompletionItemKindValue, field, "", "")
		it.TextEdit = edit(t, pl.litStart, off, v)
		items = append(items, it)
	}
	return items
}
