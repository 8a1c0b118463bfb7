package dsl

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
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
		if !varNameRE.MatchString(name) {
			// The schema's [#Ident] pattern does not apply to such a label, so nothing else
			// says that expressions can never read it as vars.<name>.
			pos := d.l.valuePos(it.Value())
			if f, ok := it.Value().Source().(*ast.Field); ok {
				pos = d.l.posOf(f.Label.Pos())
			}
			fix := strings.Map(func(r rune) rune {
				if r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
					return r
				}
				return '_'
			}, name)
			if fix != "" && fix[0] >= '0' && fix[0] <= '9' {
				fix = "_" + fix
			}
			d.err(pos, "vars", "var name %q: expected letters, digits and underscores, not starting with a digit (expressions read it as vars.<name>), e.g. %s", name, fix)
			continue
		}
		if _, ok := d.sc.Vars[name]; ok {
			kind := kindName(it.Value().IncompleteKind())
			if str, err := it.Value().String(); err == nil && kind == "string" && isDuration(str) {
				// A string that reads as a duration ("100ms") declares a duration: a value
				// swept or given for it that is not one would reach a field or a URL that
				// takes only durations (fortio's ?delay=, a timeout).
				kind = "duration"
			}
			d.sc.VarKinds[name] = kind
		}
	}
}

// varNameRE is schema's #Ident: what vars.<name> can read.
var varNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// describeKind is a value with its type, for a message that says the type was wrong:
// `the string "2"`, `the number 4.5`.
func describeKind(k cue.Kind, x any) string {
	switch k {
	case cue.StringKind:
		if s, ok := x.(string); ok && !isDuration(s) {
			return "the string " + FormatValue(x)
		}
		return FormatValue(x)
	case cue.IntKind, cue.FloatKind, cue.NumberKind:
		return "the number " + FormatValue(x)
	case cue.BoolKind:
		return FormatValue(x)
	}
	return FormatValue(x)
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
	case "duration":
		return durationWanted, k == cue.StringKind
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
	sc.SweepPos = map[string][]Pos{}
	written := map[string][]string{} // each var's values as the file writes them
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
			here := d.l.valuePos(v)
			want, ok := kindFits(sc.VarKinds[name], v.Kind())
			if str, isStr := x.(string); ok && isStr && sc.VarKinds[name] == "duration" && !isDuration(str) {
				want, ok = durationWanted, false
			}
			if !ok {
				d.err(here, "sweep."+name, "expected %s, as vars.%s is declared %s; got %s", want, name, d.declaredAt(name), describeKind(v.Kind(), normalizeNumber(x)))
			} else if i := slices.IndexFunc(written[name], func(prev string) bool {
				return sweptValue(sc.VarKinds[name], prev) == sweptValue(sc.VarKinds[name], raw)
			}); i >= 0 {
				show := func(raw string) string { return showSwept(sc.VarKinds[name], raw) }
				d.err(here, "sweep."+name, "%s", repeatedSweepValue(name, show(raw), show(written[name][i]), sc.SweepPos[name][i], here))
			}
			written[name] = append(written[name], raw)
			if k := sc.VarKinds[name]; ok && k != "string" {
				// Kept as a --sweep flag's value is (a duration "1000ms" as 1s), so that a
				// combination has one id however its values were given.
				raw = sweptValue(k, raw)
			}
			sc.Sweep[name] = append(sc.Sweep[name], raw)
			sc.SweepPos[name] = append(sc.SweepPos[name], here)
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
	pv := d.root.LookupPath(cue.MakePath(cue.Str("plot")))
	if !pv.Exists() {
		return // List of no value is an error, with an OpContext of its own
	}
	it, err := pv.List()
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
