package interp

import (
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
	for _, r := range dsl.ReadsOf(e) {
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
