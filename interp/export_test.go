package interp

// SetSpinOnly makes PreciseClock spin its whole early stretch (true), as before it napped, or
// nap then spin (false), for BenchmarkPreciseSleep's comparison.
func SetSpinOnly(v bool) { spinOnly = v }
