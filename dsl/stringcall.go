package dsl

import "fmt"

// stringFunc is the environment name that expr's string(x) is rewritten to (StringOf): expr
// writes a number with %v, so string(vars.x) of 1000000 was "1e+06" while ${vars.x} in a
// step's string wrote 1000000, and a claim comparing the two (trim(e.stdout) ==
// string(vars.x)) failed on a number the command had printed as the scenario wrote it.
const stringFunc = "__string"

// StringFunc is the environment name the interpreter must bind to StringOf.
const StringFunc = stringFunc

// StringOf is string(x) inside an expression: a number spelt as ${…} spells it (NumberText),
// anything else as expr's string writes it.
func StringOf(v any) string {
	switch v.(type) {
	case float64, float32, int, int64:
		return Stringify(v)
	}
	return fmt.Sprintf("%v", v)
}
