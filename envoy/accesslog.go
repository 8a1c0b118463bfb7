package envoy

import (
	"encoding/json"
	"net"
	"strconv"
	"strings"

	"labrun.dev/labrun/schema"
)

// AccessLog parses one access-log line written in Istio's default text format, its JSON
// format (meshConfig.accessLogEncoding: JSON) or Envoy's own default format (a plain Envoy,
// or a gateway without Istio's mesh config: Istio's format without the fields from
// %RESPONSE_CODE_DETAILS% to "%UPSTREAM_TRANSPORT_FAILURE_REASON%" and from %UPSTREAM_CLUSTER%
// on; see envoyDefaultTail). The text format, Istio's EnvoyTextLogFormat
// since 1.9 with %UPSTREAM_CLUSTER_RAW% in place of %UPSTREAM_CLUSTER% in recent releases, is:
//
//	[%START_TIME%] "%REQ(:METHOD)% %REQ(X-ENVOY-ORIGINAL-PATH?:PATH)% %PROTOCOL%" %RESPONSE_CODE%
//	%RESPONSE_FLAGS% %RESPONSE_CODE_DETAILS% %CONNECTION_TERMINATION_DETAILS%
//	"%UPSTREAM_TRANSPORT_FAILURE_REASON%" %BYTES_RECEIVED% %BYTES_SENT% %DURATION%
//	%RESP(X-ENVOY-UPSTREAM-SERVICE-TIME)% "%REQ(X-FORWARDED-FOR)%" "%REQ(USER-AGENT)%"
//	"%REQ(X-REQUEST-ID)%" "%REQ(:AUTHORITY)%" "%UPSTREAM_HOST%" %UPSTREAM_CLUSTER_RAW%
//	%UPSTREAM_LOCAL_ADDRESS% %DOWNSTREAM_LOCAL_ADDRESS% %DOWNSTREAM_REMOTE_ADDRESS%
//	%REQUESTED_SERVER_NAME% %ROUTE_NAME%
//
// The fields up to %DURATION% are read from the left; "%UPSTREAM_HOST%" and the six unquoted
// fields after it from the right, so a header value holding `" ` cannot shift them. Text
// before the opening '[' (a `kubectl logs --prefix` or --timestamps prefix) is ignored.
// Envoy writes "-" for an absent value: it becomes "" (Flags nil); of %DURATION% (a number),
// the field is unset (Unset: read, it errs) rather than 0. A TCP connection's line has
// "- - -" as request and code 0. Flags are split on ','.
//
// A line that is neither (Envoy's own log lines, pilot-agent's) gives ok false and an entry
// holding only Line.
func AccessLog(line string) (schema.LogEntry, bool) {
	line = strings.TrimRight(line, "\r\n")
	e := schema.LogEntry{Line: line}
	if i := strings.IndexByte(line, '{'); i >= 0 && strings.HasSuffix(strings.TrimRight(line, " \t"), "}") {
		if jsonAccessLog(line[i:], &e) {
			return e, true
		}
	}
	if !textAccessLog(line, &e) {
		return schema.LogEntry{Line: line}, false
	}
	e.Access = true
	return e, true
}

// textAccessLog fills e from a default-format line, reporting whether the line is one.
func textAccessLog(line string, e *schema.LogEntry) bool {
	// [%START_TIME%]: the first '[' followed by a digit.
	start := -1
	for i := 0; i+1 < len(line); i++ {
		if line[i] == '[' && line[i+1] >= '0' && line[i+1] <= '9' {
			start = i
			break
		}
	}
	if start < 0 {
		return false
	}
	closeAt := strings.IndexByte(line[start:], ']')
	if closeAt < 0 {
		return false
	}
	e.Time = line[start+1 : start+closeAt]
	s := line[start+closeAt+1:]

	// "%REQ(:METHOD)% %PATH% %PROTOCOL%"
	req, s, ok := quoted(s)
	if !ok {
		return false
	}
	method, rest, _ := strings.Cut(req, " ")
	path, proto := rest, ""
	if i := strings.LastIndexByte(rest, ' '); i >= 0 {
		path, proto = rest[:i], rest[i+1:]
	}
	e.Method, e.Path, e.Protocol = dash(method), dash(path), dash(proto)

	var code, flags string
	if code, s, ok = word(s); !ok {
		return false
	}
	n, err := strconv.ParseUint(code, 10, 16)
	if err != nil {
		return false
	}
	e.Code = float64(n)
	if flags, s, ok = word(s); !ok {
		return false
	}
	e.Flags = splitFlags(flags)
	if rest, ok := istioMiddle(s, e); ok {
		s = rest
	} else {
		e.Format = "envoy"
		return envoyDefaultTail(s, e)
	}
	e.Format = "istio"
	var bytesRx, bytesTx, dur string
	if bytesRx, s, ok = word(s); !ok {
		return false
	}
	if bytesTx, s, ok = word(s); !ok {
		return false
	}
	if dur, s, ok = word(s); !ok {
		return false
	}
	if !isNumberOrDash(bytesRx) || !isNumberOrDash(bytesTx) || !isNumberOrDash(dur) {
		return false
	}
	readDuration(dur, e)

	// From the right: "%UPSTREAM_HOST%" cluster upstream_local downstream_local
	// downstream_remote sni route. An end that is not that (a line cut short, a custom
	// format with a field more or less) keeps what the left gave, its upstream host and
	// cluster unknown: read as "", none(entries, .upstream_host == X) held of such lines.
	if host, cluster, ok := istioTail(s); ok {
		e.UpstreamHost, e.Cluster = host, cluster
	} else {
		e.Lacks = []string{"upstream_host", "cluster"}
	}
	return true
}

// istioTail reads "%UPSTREAM_HOST%" and %UPSTREAM_CLUSTER% from the end of an Istio text line
// (s: what follows %DURATION%): the quoted host and six unquoted fields after it. false when
// the end is not that.
func istioTail(s string) (host, cluster string, ok bool) {
	tail := strings.TrimRight(s, " \t")
	var fields [6]string
	for i := 5; i >= 0; i-- {
		j := strings.LastIndexByte(tail, ' ')
		if j < 0 {
			return "", "", false
		}
		fields[i], tail = tail[j+1:], strings.TrimRight(tail[:j], " ")
		if strings.ContainsRune(fields[i], '"') {
			return "", "", false // a quoted field where Istio's format has none: shifted
		}
	}
	if len(tail) < 2 || tail[len(tail)-1] != '"' {
		return "", "", false
	}
	q := strings.LastIndexByte(tail[:len(tail)-1], '"')
	if q < 0 || q > 0 && tail[q-1] != ' ' {
		return "", "", false
	}
	host = tail[q+1 : len(tail)-1]
	if !isUpstreamHost(host) {
		return "", "", false
	}
	return dash(host), dash(fields[0]), true
}

// isUpstreamHost says s can be what Envoy writes for %UPSTREAM_HOST%: "-", an ip:port, a
// pipe's path, or an internal address (envoy://connect_originate/10.0.0.5:8080, in ambient
// mode). Another text where the host is read means the line is not in the format read
// (a quoted field appended: a custom format), whose host is not known.
func isUpstreamHost(s string) bool {
	if s == "-" || strings.HasPrefix(s, "/") || strings.HasPrefix(s, "@") || strings.HasPrefix(s, "envoy://") {
		return true
	}
	_, port, err := net.SplitHostPort(s)
	if err != nil {
		return false
	}
	_, err = strconv.ParseUint(port, 10, 16)
	return err == nil
}

// istioMiddle reads the fields Istio's format has after %RESPONSE_FLAGS% and Envoy's default
// format has not: %RESPONSE_CODE_DETAILS% %CONNECTION_TERMINATION_DETAILS%
// "%UPSTREAM_TRANSPORT_FAILURE_REASON%". false (e unchanged) when s does not start with them.
func istioMiddle(s string, e *schema.LogEntry) (string, bool) {
	details, s, ok := word(s)
	if !ok || strings.HasPrefix(details, `"`) {
		return s, false
	}
	term, s, ok := word(s)
	if !ok || strings.HasPrefix(term, `"`) {
		return s, false
	}
	failure, s, ok := quoted(s)
	if !ok {
		return s, false
	}
	e.Details, e.Termination, e.Failure = dash(details), dash(term), dash(failure)
	return s, true
}

// envoyDefaultTail reads what follows %RESPONSE_FLAGS% in Envoy's default format:
//
//	%BYTES_RECEIVED% %BYTES_SENT% %DURATION% %RESP(X-ENVOY-UPSTREAM-SERVICE-TIME)%
//	"%REQ(X-FORWARDED-FOR)%" "%REQ(USER-AGENT)%" "%REQ(X-REQUEST-ID)%" "%REQ(:AUTHORITY)%"
//	"%UPSTREAM_HOST%"
//
// four numbers (or "-") and a quoted field at least; "%UPSTREAM_HOST%" is read from the
// right, as in Istio's format. The format has no details, termination, failure reason nor
// cluster: they are in e.Lacks (read, they err), as the upstream host is where the line
// does not end with a quoted field.
func envoyDefaultTail(s string, e *schema.LogEntry) bool {
	e.Lacks = []string{"details", "termination", "failure", "cluster"}
	var nums [4]string
	for i := range nums {
		var ok bool
		if nums[i], s, ok = word(s); !ok || !isNumberOrDash(nums[i]) {
			return false
		}
	}
	if _, _, ok := quoted(s); !ok {
		return false
	}
	readDuration(nums[2], e)
	tail := strings.TrimRight(s, " \t")
	if len(tail) >= 2 && tail[len(tail)-1] == '"' {
		if q := strings.LastIndexByte(tail[:len(tail)-1], '"'); q >= 0 && (q == 0 || tail[q-1] == ' ') && isUpstreamHost(tail[q+1:len(tail)-1]) {
			e.UpstreamHost = dash(tail[q+1 : len(tail)-1])
			return true
		}
	}
	e.Lacks = append(e.Lacks, "upstream_host")
	return true
}

// quoted reads a "…" token after optional spaces. The closing quote is a '"' followed by a
// space or the end of the line, so a quote inside a header value does not end it early.
func quoted(s string) (tok, rest string, ok bool) {
	s = strings.TrimLeft(s, " ")
	if len(s) == 0 || s[0] != '"' {
		return "", s, false
	}
	for i := 1; i < len(s); i++ {
		if s[i] == '"' && (i+1 == len(s) || s[i+1] == ' ') {
			return s[1:i], s[i+1:], true
		}
	}
	return "", s, false
}

// word reads a space-delimited token after optional spaces.
func word(s string) (tok, rest string, ok bool) {
	s = strings.TrimLeft(s, " ")
	if len(s) == 0 {
		return "", s, false
	}
	if i := strings.IndexByte(s, ' '); i >= 0 {
		return s[:i], s[i:], true
	}
	return s, "", true
}

// readDuration reads %DURATION% as written in a text line: "-" (Envoy had no value) leaves
// it unset (e.Unset), not 0.
func readDuration(s string, e *schema.LogEntry) {
	if d, err := strconv.ParseFloat(s, 64); err == nil {
		e.DurationMS = d
		return
	}
	e.Unset = append(e.Unset, "duration")
}

func dash(s string) string {
	if s == "-" {
		return ""
	}
	return s
}

func isNumberOrDash(s string) bool {
	if s == "-" {
		return true
	}
	_, err := strconv.ParseUint(s, 10, 64)
	return err == nil
}

func splitFlags(s string) []string {
	if s == "" || s == "-" {
		return nil
	}
	var out []string
	for f := range strings.SplitSeq(s, ",") {
		if f = strings.TrimSpace(f); f != "" && f != "-" {
			out = append(out, f)
		}
	}
	return out
}

// jsonAccessLog fills e from a JSON access-log object (Istio's EnvoyJSONLogFormatIstio keys:
// response_code, response_flags, response_code_details, …). Envoy writes numbers as numbers
// and absent values as null, or as "-" when the format quotes every operator; both are read.
func jsonAccessLog(s string, e *schema.LogEntry) bool {
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		return false
	}
	_, hasCode := m["response_code"]
	_, hasFlags := m["response_flags"]
	if !hasCode && !hasFlags {
		return false
	}
	str := func(k string) string {
		switch v := m[k].(type) {
		case string:
			return dash(v)
		case float64:
			return strconv.FormatFloat(v, 'f', -1, 64)
		case bool:
			return strconv.FormatBool(v)
		}
		return ""
	}
	// num reads a number; a key there whose value is no number (null, "-": a value Envoy did
	// not have) leaves field unset (e.Unset), not 0.
	num := func(k, field string) float64 {
		v, there := m[k]
		switch v := v.(type) {
		case float64:
			return v
		case string:
			f, err := strconv.ParseFloat(v, 64)
			if err == nil {
				return f
			}
		}
		if there {
			e.Unset = append(e.Unset, field)
		}
		return 0
	}
	e.Access = true
	e.Format = "json"
	// A key the format leaves out is a field it does not give (Lacks): read as "", a
	// format without upstream_cluster passed none(entries, .cluster == X). A key there with
	// null (or "-") is a value Envoy did not have: "".
	for _, f := range jsonFields {
		if _, ok := m[f.key]; !ok {
			e.Lacks = append(e.Lacks, f.field)
		}
	}
	e.Time = str("start_time")
	e.Method = str("method")
	e.Path = str("path")
	e.Protocol = str("protocol")
	e.Code = num("response_code", "code")
	e.Flags = splitFlags(str("response_flags"))
	e.Details = str("response_code_details")
	e.Termination = str("connection_termination_details")
	e.Failure = str("upstream_transport_failure_reason")
	e.DurationMS = num("duration", "duration")
	e.UpstreamHost = str("upstream_host")
	e.Cluster = str("upstream_cluster")
	return true
}

// jsonFields are the keys of Istio's JSON access-log format labrun reads, by the entry's
// field each fills.
var jsonFields = []struct{ key, field string }{
	{"method", "method"}, {"path", "path"}, {"protocol", "protocol"}, {"response_code", "code"},
	{"response_flags", "flags"}, {"response_code_details", "details"},
	{"connection_termination_details", "termination"}, {"upstream_transport_failure_reason", "failure"},
	{"duration", "duration"}, {"upstream_host", "upstream_host"}, {"upstream_cluster", "cluster"},
}
