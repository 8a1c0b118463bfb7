package interp

import (
	"slices"

	"github.com/expr-lang/expr"

	"labrun.dev/labrun/dsl"
)

// Reads evaluates every value an expression reads (dsl.ReadsOf: operands, arguments of calls,
// let bindings), by source, keeping numbers, strings and booleans: what the summaries of
// repeated and swept runs tabulate. An expression that cannot be judged as written (a stat no
// snapshot holds) reads nothing: a missing value stays missing, never 0.
func (j *Judge) Reads(e *dsl.Expr) map[string]any {
	if reason, _ := j.check(e); reason != "" {
		return nil
	}
	out := map[string]any{}
	env := j.Env()
	skipped := notEvaluated(e, env)
	for _, r := range dsl.ReadsOf(e) {
		if skipped[r.Src] {
			// A side of && or || the judge did not evaluate: the value was never read (a
			// step that did not run reads 0 there), and reports and summaries show these.
			continue
		}
		prog := r.Value()
		if prog == nil {
			continue
		}
		v, err := expr.Run(prog, env)
		if err != nil {
			continue
		}
		switch x := v.(type) {
		case float64, string, bool:
			out[r.Src] = x
		case int:
			out[r.Src] = float64(x)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// notEvaluated are the reads of e found only in the sides of && and || the judge did not
// evaluate (the left side decided), as the explanation shows them ("…: not evaluated").
func notEvaluated(e *dsl.Expr, env map[string]any) map[string]bool {
	var skipped []*dsl.Explain
	// kept is e's source without the sides not evaluated.
	var kept func(x *dsl.Explain) string
	kept = func(x *dsl.Explain) string {
		if x == nil {
			return ""
		}
		switch x.Op {
		case "&&", "and", "||", "or":
			if held, ok := x.Left.Holds(env); ok && held == (x.Op == "||" || x.Op == "or") {
				skipped = append(skipped, x.Right)
				return "(" + kept(x.Left) + ")"
			}
			return "(" + kept(x.Left) + ") " + x.Op + " (" + kept(x.Right) + ")"
		case "!", "not":
			return "!(" + kept(x.Left) + ")"
		case "let":
			// The body's && and || too: a let at the top hid them, and the values held a
			// side that the explanation says was not evaluated.
			return "let " + x.Name + " = " + x.Left.Source() + "; (" + kept(x.Right) + ")"
		}
		if !hasConditional(x) {
			return x.Source()
		}
		// A conditional c ? a : b reads the branch its condition chose alone, as the
		// explanation shows it; the nodes above one are rebuilt around it. Before, the values
		// of the branch not taken were the run's too, and the HTML report listed them beside
		// those the expression read (fortio.code200 = 0 of vars.strict ? fortio.code503 :
		// fortio.code200).
		switch {
		case x.Op != "" && x.Left != nil && x.Right != nil:
			return "(" + kept(x.Left) + ") " + x.Op + " (" + kept(x.Right) + ")"
		case x.Infix == "?:" && len(x.Args) == 3:
			if held, ok := x.Args[0].Holds(env); ok {
				taken, not := x.Args[1], x.Args[2]
				if !held {
					taken, not = not, taken
				}
				skipped = append(skipped, not)
				return "(" + kept(x.Args[0]) + ") ? (" + kept(taken) + ") : (" + kept(taken) + ")"
			}
		case x.Infix == "[]" && len(x.Args) == 2:
			return "(" + kept(x.Args[0]) + ")[" + kept(x.Args[1]) + "]"
		case x.Infix != "" && len(x.Args) == 2:
			return "(" + kept(x.Args[0]) + ") " + x.Infix + " (" + kept(x.Args[1]) + ")"
		}
		return x.Source()
	}
	if e == nil || e.Explain == nil {
		return nil
	}
	src := kept(e.Explain)
	if len(skipped) == 0 {
		return nil
	}
	read := map[string]bool{}
	for _, r := range dsl.ReadsOf(&dsl.Expr{Src: src}) {
		read[r.Src] = true
	}
	out := map[string]bool{}
	for _, x := range skipped {
		for _, r := range dsl.ReadsOf(&dsl.Expr{Src: x.Source(), Explain: x}) {
			if !read[r.Src] {
				out[r.Src] = true
			}
		}
	}
	return out
}

// hasConditional says whether x is or holds a conditional c ? a : b outside a call's
// arguments (whose predicates are not rebuilt).
func hasConditional(x *dsl.Explain) bool {
	if x == nil {
		return false
	}
	if x.Infix == "?:" {
		return true
	}
	if x.Op != "" {
		return hasConditional(x.Left) || hasConditional(x.Right)
	}
	if x.Infix != "" {
		return slices.ContainsFunc(x.Args, hasConditional)
	}
	return false
}
