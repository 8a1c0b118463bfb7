package dsl

import (
	"path/filepath"
	"strings"
	"sync"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/build"
	"cuelang.org/go/cue/cuecontext"
	"cuelang.org/go/cue/parser"

	"labrun.dev/labrun/schema"
)

// The step-by-step check of a package (cleanShallow).
//
// Built against the schema, a package holds every step unified with #Step at once. A step
// under #Step costs CUE several times the step alone (each optional field of #Step, one per
// kind and common field, is an arc of its own): a 10,000-step list held ≈140 MB live while it
// was checked, against ≈55 MB for the same list without the schema. cleanShallow reaches the
// same verdict with the schema's step lists left open in the package's build ([...#Step]
// written [...]) and each step then unified with #Step on its own and let go, so that the
// peak is the package plus one step. It only says whether a package is clean: a package in
// which it finds anything is built against the full schema, whose errors are reported as
// before (buildInstance).

// stepListsIn are where the schema holds lists of steps ([...#Step]): in a scenario, and in a
// step (its blocks' children). TestStepListsAreTheSchemas holds them to the schema.
var (
	scenarioStepLists = []string{"setup", "steps", "catch", "cleanup"}
	stepStepLists     = []string{"parallel", "sequence", "repeat.steps"}
)

// shallowSchemaSource is a schema file with its step lists left open.
func shallowSchemaSource(src []byte) string {
	return strings.ReplaceAll(string(src), "[...#Step]", "[...]")
}

// shallowSchemaFiles are the files of the schema package si with its step lists left open,
// parsed once per schema location under the names si's files have.
func (l *loader) shallowSchemaFiles(si *build.Instance) ([]*ast.File, bool) {
	if len(si.Files) == 0 {
		return nil, false
	}
	if len(l.shallowFiles) == len(si.Files) && l.shallowFiles[0].Filename == si.Files[0].Filename {
		return l.shallowFiles, true
	}
	files := make([]*ast.File, 0, len(si.Files))
	for _, f := range si.Files {
		src, err := schema.Files.ReadFile(filepath.Base(f.Filename))
		if err != nil {
			return nil, false // a file that is not the embedded schema's: build it in full
		}
		pf, err := parser.ParseFile(f.Filename, shallowSchemaSource(src), parser.ParseComments)
		if err != nil {
			return nil, false
		}
		files = append(files, pf)
	}
	l.shallowFiles = files
	return files, true
}

// shallowCopy is inst with the schema package, in inst and in every package it imports,
// replaced by its shallow files; the schema's copy is returned too (nil if inst does not
// import the schema, or its files are not the embedded schema's).
func (l *loader) shallowCopy(inst *build.Instance) (*build.Instance, *build.Instance) {
	var schemaCopy *build.Instance
	c, ok := withSchema(inst, map[*build.Instance]*build.Instance{}, func(s *build.Instance) bool {
		files, ok := l.shallowSchemaFiles(s)
		s.Files, schemaCopy = files, s
		return ok
	})
	if !ok || schemaCopy == nil {
		return nil, nil
	}
	return c, schemaCopy
}

// cleanShallow reports whether the package inst has no error at all, as clean does of its
// build against the schema, without holding every step under the schema at once. false may
// also mean that it cannot tell: the caller builds the package in full then.
func (l *loader) cleanShallow(inst *build.Instance) ([]cue.Selector, bool) {
	si, schemaInst := l.shallowCopy(inst)
	if si == nil {
		return nil, false
	}
	ctx := cuecontext.New()
	v := ctx.BuildInstance(si)
	step := ctx.BuildInstance(schemaInst).LookupPath(cue.ParsePath("#Step"))
	if step.Err() != nil || !step.Exists() {
		return nil, false
	}
	// Each step, unified with the schema's #Step on its own, is valid and concrete.
	return l.cleanTop(v, func(sv cue.Value) bool {
		return everyStep(sv, func(e cue.Value) (string, bool) {
			u := e.Unify(step)
			return "", u.Err() == nil && u.Validate(cue.Concrete(true)) == nil
		})
	}, nil)
}

// stepListPaths are the step lists' paths (scenarioStepLists, stepStepLists), parsed once:
// everyStep looks them up in every step of every scenario, and ParsePath parses CUE syntax
// (20 ms of a vet of 1,000 quickstarts, parsing the same seven strings).
var stepListPaths = sync.OnceValue(func() map[string]cue.Path {
	m := map[string]cue.Path{}
	for _, f := range append(append([]string{}, scenarioStepLists...), stepStepLists...) {
		m[f] = cue.ParsePath(f)
	}
	return m
})

// everyStep reports whether ok holds of every step of the scenario sv's step lists and of
// every step of their blocks, at every depth. ok also names the step's kind when only that
// kind's blocks can hold steps (a step closed under its kind's definition), else "".
func everyStep(sv cue.Value, ok func(step cue.Value) (kind string, good bool)) bool {
	var list func(v cue.Value, fields []string, kind string) bool
	list = func(v cue.Value, fields []string, kind string) bool {
		for _, f := range fields {
			if first, _, _ := strings.Cut(f, "."); kind != "" && first != kind {
				// Closed under its kind's definition, the step holds no other kind's
				// block: a lookup of a field that is not there costs an error value
				// (250 ms at 1,000 quickstarts).
				continue
			}
			lv := v.LookupPath(stepListPaths()[f])
			if !lv.Exists() {
				continue
			}
			it, err := lv.List()
			if err != nil {
				return false
			}
			for it.Next() {
				e := it.Value()
				k, good := ok(e)
				if !good || !list(e, stepStepLists, k) {
					return false
				}
			}
		}
		return true
	}
	return list(sv, scenarioStepLists, "")
}
