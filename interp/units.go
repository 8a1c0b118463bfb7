package interp

// Roots maps the names a record gives expressions to what recorded them: "load", "snapshot",
// "series", "logs", "exec" (the roots dsl.UnitOf reads a value's unit by).
func Roots(rec *Record) map[string]string {
	out := map[string]string{}
	for k := range rec.Loads {
		out[k] = "load"
	}
	for k := range rec.Snapshots {
		out[k] = "snapshot"
	}
	for k := range rec.Series {
		out[k] = "series"
	}
	for k := range rec.Logs {
		out[k] = "logs"
	}
	for k := range rec.Execs {
		out[k] = "exec"
	}
	return out
}
