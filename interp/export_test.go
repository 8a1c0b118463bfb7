package interp

// SetSpinOnly makes PreciseClock spin its whole early stretch (true), as before it napped, or
// nap then spin (false), for BenchmarkPreciseSleep's comparison.
func SetSpinOnly(v bool) { spinOnly = v }

// Apply applies mutant m to r (tests check what each mutant makes of a record).
func (m Mutant) Apply(r *Record) { m.apply(r) }

var CloneRecord = cloneRecord
