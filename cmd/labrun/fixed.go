package main

import (
	"fmt"
	"strings"

	"labrun.dev/labrun/interp"
)

// fixedSweep says, of a run whose scenario sweeps but whose every swept var --var fixed (a
// matrix of one combination, which writes no summary), which values it ran and how many of
// the scenario's combinations that leaves out: "its sweep fixed by --var: n=3 (the scenario
// sweeps 1, 2, 3): 1 of its 3 combinations ran". "" for any other run (a summary says what a
// matrix with combinations left fixed ran). Before, `labrun run --var n=3 .` (a var meant for
// another scenario of the folder) ran the one combination of a sweep whose n=2 fails and
// said "PASSED sw" and "2 scenarios: 2 passed", nothing saying the sweep did not run.
func fixedSweep(rec *interp.Record) string {
	u := rec.Unit
	if u == nil || u.Matrix == nil || len(u.Matrix.Fixed) == 0 || u.Matrix.Summarized() {
		return ""
	}
	var parts []string
	combos := 1
	for _, f := range u.Matrix.Fixed {
		p := f.Name + "=" + f.Value
		if len(f.Instead) > 0 {
			p += " (the scenario sweeps " + strings.Join(f.Instead, ", ") + ")"
			combos *= len(f.Instead)
		} else {
			// A secret's values are written nowhere: nor is their number.
			p += " (the scenario sweeps it)"
			combos = 0
		}
		parts = append(parts, p)
	}
	s := "its sweep fixed by --var: " + strings.Join(parts, ", ")
	if combos > 1 {
		s += fmt.Sprintf(": 1 of its %d combinations ran", combos)
	}
	return s
}
