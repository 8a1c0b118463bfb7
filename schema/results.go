package schema

// The types below are what expressions see at run time. The loader compiles every expression
// against them, so a typo in a field or a type error is a load-time error; the interpreter
// fills them in as steps record results.

// Stats maps a stat name (Envoy's, with the cluster prefix removed and ";." normalised to ".",
// e.g. "upstream_rq_pending_overflow" or "circuit_breakers.default.rq_pending_open") to its value.
// Expressions read it as <snapshot>.<stat>, with dotted stat names written as they are:
// `mid.circuit_breakers.default.rq_pending_open`.
type Stats map[string]float64

// Host is one upstream host of an Envoy cluster, from the /clusters view.
type Host struct {
	Address  string  `expr:"address" json:"address"`
	Hostname string  `expr:"hostname" json:"hostname,omitempty"`
	CxActive float64 `expr:"cx_active" json:"cx_active"`
	CxTotal  float64 `expr:"cx_total" json:"cx_total"`
	CxFail   float64 `expr:"cx_connect_fail" json:"cx_connect_fail"`
	RqActive float64 `expr:"rq_active" json:"rq_active"`
	RqTotal  float64 `expr:"rq_total" json:"rq_total"`
	RqError  float64 `expr:"rq_error" json:"rq_error"`
	Healthy  bool    `expr:"healthy" json:"healthy"`
	// Health is Envoy's health_flags text, e.g. "healthy" or "/failed_outlier_check".
	Health string  `expr:"health" json:"health"`
	Weight float64 `expr:"weight" json:"weight,omitempty"`
}

// Series is what a snapshot step with every records: one sample per tick. Expressions read
// <name>.max.<stat>, .min, .first, .last (per stat, over the samples that have it) and .count.
type Series struct {
	Samples []Stats `expr:"samples" json:"samples"`
	Max     Stats   `expr:"max" json:"max"`
	Min     Stats   `expr:"min" json:"min"`
	First   Stats   `expr:"first" json:"first"`
	Last    Stats   `expr:"last" json:"last"`
	Count   int     `expr:"count" json:"count"`
}

// LoadResult is what a load step records: fortio's results in the units people read.
// Latencies are in milliseconds.
type LoadResult struct {
	// Requests is the number of requests counted (warm-up excluded).
	Requests float64 `expr:"requests" json:"requests"`
	// Codes counts responses by HTTP status code; "-1" is a socket error or timeout. Expressions
	// may also write <load>.code503 for <load>.codes["503"].
	Codes map[string]float64 `expr:"codes" json:"codes"`
	// OK counts 2xx (and fortio's 418) responses.
	OK float64 `expr:"ok" json:"ok"`
	// Errors counts every other response, socket errors included.
	Errors float64 `expr:"errors" json:"errors"`
	// Sockets is the number of connections fortio opened.
	Sockets float64 `expr:"sockets" json:"sockets"`
	// Connections is the number of connections (threads) fortio actually ran.
	Connections float64 `expr:"connections" json:"connections"`
	// QPS is the achieved rate.
	QPS float64 `expr:"qps" json:"qps"`
	// DurationS is the load's duration in seconds.
	DurationS float64 `expr:"duration" json:"duration"`
	Avg       float64 `expr:"avg" json:"avg"`
	Min       float64 `expr:"min" json:"min"`
	Max       float64 `expr:"max" json:"max"`
	P50       float64 `expr:"p50" json:"p50"`
	P90       float64 `expr:"p90" json:"p90"`
	P99       float64 `expr:"p99" json:"p99"`
	P999      float64 `expr:"p999" json:"p999"`
	// IPs counts connections by destination address, as fortio saw them.
	IPs map[string]float64 `expr:"ips" json:"ips"`
	// Pods holds each client pod's own result when the load ran from several pods
	// (from.pods), in the order of the pods' names; the fields above are then their merge.
	Pods []LoadResult `expr:"pods" json:"pods,omitempty"`
	// Pod is the client pod of one of Pods.
	Pod string `expr:"pod" json:"pod,omitempty"`
}

// LogEntry is one log line; for an Istio access-log line, its parsed fields.
type LogEntry struct {
	Line         string            `expr:"line" json:"line"`
	Time         string            `expr:"time" json:"time,omitempty"`
	Access       bool              `expr:"access" json:"access"`
	Method       string            `expr:"method" json:"method,omitempty"`
	Path         string            `expr:"path" json:"path,omitempty"`
	Protocol     string            `expr:"protocol" json:"protocol,omitempty"`
	Code         float64           `expr:"code" json:"code,omitempty"`
	Flags        []string          `expr:"flags" json:"flags,omitempty"`
	Details      string            `expr:"details" json:"details,omitempty"`
	Termination  string            `expr:"termination" json:"termination,omitempty"`
	Failure      string            `expr:"failure" json:"failure,omitempty"`
	DurationMS   float64           `expr:"duration" json:"duration,omitempty"`
	UpstreamHost string            `expr:"upstream_host" json:"upstream_host,omitempty"`
	Cluster      string            `expr:"cluster" json:"cluster,omitempty"`
	Captures     map[string]string `expr:"captures" json:"captures,omitempty"`
}

// LogResult is what a logs step records.
type LogResult struct {
	Lines   []string   `expr:"lines" json:"lines"`
	Count   float64    `expr:"count" json:"count"`
	Entries []LogEntry `expr:"entries" json:"entries"`
	// Codes counts access-log lines by response code.
	Codes map[string]float64 `expr:"codes" json:"codes"`
	// Flags counts access-log lines by response flag (a line with "URX,UF" counts for both).
	Flags map[string]float64 `expr:"flags" json:"flags"`
	// Details counts access-log lines by response code details.
	Details map[string]float64 `expr:"details" json:"details"`
	// Captures holds the named groups of every line that matched the step's capture pattern.
	Captures []map[string]string `expr:"captures" json:"captures"`
	// Capture is the named groups of the first match (empty when none matched).
	Capture map[string]string `expr:"capture" json:"capture"`
	// Cut says lines, entries and captures hold only the first and the last lines (about
	// OutputHead and OutputTail bytes of them): count, codes, flags and details count every
	// line, and the step's artifact file holds them all.
	Cut bool `expr:"cut" json:"cut,omitempty"`
}

// ExecResult is what an exec step records. The named groups of its capture pattern are
// fields of Captured.
type ExecResult struct {
	Stdout   string            `expr:"stdout" json:"stdout"`
	Stderr   string            `expr:"stderr" json:"stderr"`
	Exit     float64           `expr:"exit" json:"exit"`
	Captured map[string]string `expr:"captured" json:"captured,omitempty"`
	// Cut says stdout or stderr was longer than labrun keeps (OutputHead + OutputTail): it
	// holds the first and the last bytes around a line saying how much is missing, and the
	// step's artifact files hold the whole.
	Cut bool `expr:"cut" json:"cut,omitempty"`
}

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
