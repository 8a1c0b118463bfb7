package dsl

import (
	"slices"
	"testing"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"
)

// TestSchemaDefinitionsAreTheCompiledOnes: the open schema lists the definitions found in the
// schema's syntax; they must be exactly those of the compiled schema, or a definition would be
// missing from the open copy (an error a valid package does not have) or one too many.
func TestSchemaDefinitionsAreTheCompiledOnes(t *testing.T) {
	var compiled []string
	it, err := schemaValue(cuecontext.New()).Fields(cue.Definitions(true))
	if err != nil {
		t.Fatal(err)
	}
	for it.Next() {
		if it.Selector().IsDefinition() {
			compiled = append(compiled, it.Selector().String())
		}
	}
	got := slices.Clone(schemaDefinitions())
	slices.Sort(got)
	slices.Sort(compiled)
	if !slices.Equal(got, compiled) {
		t.Errorf("definitions from the syntax:\n%v\ncompiled:\n%v", got, compiled)
	}
	if len(got) < 20 {
		t.Errorf("only %d definitions", len(got))
	}
}
