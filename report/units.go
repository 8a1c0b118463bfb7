package report

import (
	"labrun.dev/labrun/dsl"
	"labrun.dev/labrun/interp"
)

// The units and numbers of the reports and summaries are dsl's (dsl/units.go, the one place
// that writes a number for people); these are short names for them.

// Roots maps the names a record gives expressions to what recorded them (interp.Roots).
func Roots(rec *interp.Record) map[string]string { return interp.Roots(rec) }

// UnitOf is the unit of a value an expectation reads (dsl.UnitOf).
func UnitOf(value string, roots map[string]string) string { return dsl.UnitOf(value, roots) }

// Sig4 writes a number with at most 4 significant digits (dsl.Sig4).
func Sig4(x float64) string { return dsl.Sig4(x) }

func sig4(x float64) string { return dsl.Sig4(x) }

func withUnit(x float64, unit string) string { return dsl.WithUnit(x, unit) }
