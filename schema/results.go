package schema

// What expressions see besides the steps' results (each kind declares its own in its file).

// Step times: expressions read started.<step> and ended.<step>, in seconds from the start of
// the steps phase (setup steps are negative), e.g. "started.flip - started.fortio" or
// "first_b_answer - started.flip < 6".

// Endpoint is a local backend or blackhole as expressions see it.
type Endpoint struct {
	Address string  `expr:"address" json:"address"`
	Host    string  `expr:"host" json:"host"`
	Port    float64 `expr:"port" json:"port"`
	URL     string  `expr:"url" json:"url"`
}
