package lsp

import (
	"strconv"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"

	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/schema"
)

// schemaDocs is labrun's schema compiled once: the fields of each definition, with their doc
// comments, for completion outside expressions.
type schemaDocs struct {
	scenario, step cue.Value
}

func (s *Server) schemaDocs() *schemaDocs {
	s.schemaOnce.Do(func() {
		v := dsl.Schema(cuecontext.New())
		s.schema = &schemaDocs{scenario: v.LookupPath(cue.ParsePath("#Scenario")), step: v.LookupPath(cue.ParsePath("#Step"))}
	})
	return s.schema
}

// schemaField is one field a struct of the schema can have.
type schemaField struct {
	name, doc, kind string
	// step says it is a step kind.
	step bool
}

// fieldsAt lists the fields the schema allows in the struct at path (from a scenario's
// top-level field: [name steps 2 load]).
func (d *schemaDocs) fieldsAt(path []string) []schemaField {
	v, rest := d.scenario, path[1:]
	if n := stepDepth(path); n > 0 {
		v, rest = d.step, path[n+1:]
	}
	inStep := len(rest) == 0 && len(path) > 1 && stepDepth(path) > 0
	for _, label := range rest {
		v = lookupLabel(v, label)
		if !v.Exists() {
			return nil
		}
	}
	it, err := v.Fields(cue.Optional(true))
	if err != nil {
		return nil
	}
	var out []schemaField
	for it.Next() {
		name := it.Selector().Unquoted()
		var doc []string
		for _, c := range it.Value().Doc() {
			doc = append(doc, strings.TrimSpace(c.Text()))
		}
		_, kind := schema.Kinds[name]
		out = append(out, schemaField{name: name, doc: strings.Join(doc, "\n"), kind: it.Value().IncompleteKind().String(), step: inStep && kind})
	}
	return out
}

// lookupLabel is the value of a field (optional, required or regular) or, for an index, a
// list's element.
func lookupLabel(v cue.Value, label string) cue.Value {
	if _, err := strconv.Atoi(label); err == nil {
		return v.LookupPath(cue.MakePath(cue.AnyIndex))
	}
	for _, sel := range []cue.Selector{cue.Str(label).Optional(), cue.Str(label), cue.Str(label).Required()} {
		if x := v.LookupPath(cue.MakePath(sel)); x.Exists() {
			return x
		}
	}
	return cue.Value{}
}
