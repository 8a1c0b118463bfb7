package dsl

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"cuelang.org/go/cue"
)

// varKinds records the type of each declared var, which sweep values and --sweep flags must
// have: "int", "number", "string" or "bool" ("" for any other).
func (d *decoder) varKinds() {
	d.sc.VarKinds = map[string]string{}
	it, err := d.root.LookupPath(cue.MakePath(cue.Str("vars"))).Fields()
	if err != nil {
		return
	}
	for it.Next() {
		name := it.Selector().Unquoted()
		if _, ok := d.sc.Vars[name]; ok {
			d.sc.VarKinds[name] = kindName(it.Value().IncompleteKind())
		}
	}
}

func kindName(k cue.Kind) string {
	switch k {
	case cue.IntKind:
		return "int"
	case cue.FloatKind, cue.NumberKind:
		return "number"
	case cue.StringKind:
		return "string"
	case cue.BoolKind:
		return "bool"
	}
	return ""
}

// kindFits reports whether a sweep value of kind k may be given to a var of kind want, and
// what was expected.
func kindFits(want string, k cue.Kind) (string, bool) {
	switch want {
	case "int":
		return "an integer", k == cue.IntKind
	case "number":
		return "a number", k == cue.IntKind || k == cue.FloatKind || k == cue.NumberKind
	case "string":
		return "a string", k == cue.StringKind
	case "bool":
		return "true or false", k == cue.BoolKind
	}
	return "", true
}

// sweep decodes the scenario's own sweep: each var must be declared, each value of the var's
// declared type (so that no combination fails after others have run).
func (d *decoder) sweep() {
	sc := d.sc
	d.varKinds()
	sw := d.root.LookupPath(cue.MakePath(cue.Str("sweep")))
	it, err := sw.Fields()
	if !sw.Exists() || err != nil {
		return // the schema reports a sweep of the wrong shape
	}
	sc.Sweep = map[string][]string{}
	for it.Next() {
		name := it.Selector().Unquoted()
		list, err := it.Value().List()
		if err != nil {
			continue
		}
		if _, ok := sc.Vars[name]; !ok {
			d.err(d.rootFieldPos("sweep."+name), "sweep."+name, "sweep names var %q, which the scenario does not declare: declare it under vars (its value is the default)%s", name, suggestVar(name, sc.Vars))
		}
		for list.Next() {
			v := list.Value()
			var x any
			if v.Decode(&x) != nil {
				continue
			}
			raw := Stringify(normalizeNumber(x))
			sc.Sweep[name] = append(sc.Sweep[name], raw)
			if want, ok := kindFits(sc.VarKinds[name], v.Kind()); !ok {
				d.err(d.l.valuePos(v), "sweep."+name, "expected %s, as vars.%s is declared %s; got %s", want, name, d.declaredAt(name), FormatValue(normalizeNumber(x)))
			}
		}
	}
}

// declaredAt says where a var is declared, for a message positioned elsewhere: the line in
// the same file, else file:line.
func (d *decoder) declaredAt(name string) string {
	p, ok := d.sc.Declared[name]
	if !ok || !p.IsValid() {
		return "under vars"
	}
	if p.File == d.sc.Pos.File {
		return fmt.Sprintf("at line %d", p.Line)
	}
	return fmt.Sprintf("at %s:%d", filepath.Base(p.File), p.Line)
}

// plot decodes what the summary draws first: y must be a value an expectation reads, x a
// declared var.
func (d *decoder) plot() {
	sc := d.sc
	it, err := d.root.LookupPath(cue.MakePath(cue.Str("plot"))).List()
	if err != nil {
		return
	}
	reads := ReadSources(sc.Expect)
	var vars []string
	for k := range sc.Vars {
		vars = append(vars, k)
	}
	slices.Sort(vars)
	for i := 0; it.Next(); i++ {
		var spec struct {
			Y, X, Unit string
		}
		v := it.Value()
		if v.Decode(&spec) != nil {
			continue // the schema reports its shape
		}
		path := fmt.Sprintf("plot.%d", i)
		p := PlotSpec{Y: NormalizeRead(spec.Y), X: spec.X, Unit: spec.Unit, Pos: d.l.valuePos(v)}
		if !slices.Contains(reads, p.Y) {
			msg := fmt.Sprintf("%q is not a value the expectations read", spec.Y)
			if s := closest(spec.Y, reads); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			if len(reads) > 0 {
				msg += "; they read: " + strings.Join(reads, ", ")
			}
			d.err(d.l.valuePos(v.LookupPath(cue.MakePath(cue.Str("y")))), path+".y", "%s", msg)
			continue
		}
		if p.X != "" {
			if _, ok := sc.Vars[p.X]; !ok {
				msg := fmt.Sprintf("x names var %q, which the scenario does not declare%s", p.X, suggestVar(p.X, sc.Vars))
				if len(vars) > 0 {
					msg += "; declared: " + strings.Join(vars, ", ")
				}
				d.err(d.l.valuePos(v.LookupPath(cue.MakePath(cue.Str("x")))), path+".x", "%s", msg)
				continue
			}
		}
		sc.Plot = append(sc.Plot, p)
	}
}
