package fortio

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"

	"fortio.org/fortio/fhttp"
	"fortio.org/fortio/stats"

	"labrun.dev/labrun/schema"
)

// DecodeJSON reads the output of `fortio load -json - …` (stdout, which carries only the JSON;
// see CLIArgs) into fortio's own result type and converts it as Generator.Load does. Raw is data
// itself. A result that fortio marked as an error (a run that did not start) is an error.
func DecodeJSON(data []byte) (schema.LoadResponse, error) {
	var res fhttp.HTTPRunnerResults
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&res); err != nil {
		return schema.LoadResponse{}, fmt.Errorf("decoding fortio's JSON result: %w (output starts %q)", err, head(data))
	}
	out := schema.LoadResponse{Raw: data}
	if res.Error {
		// An error result has no requests (only, when fortio failed to start the run, two
		// made-up latencies for its UI's graph).
		out.LoadResult = emptyResult()
		msg := res.Message
		if res.Exception != "" {
			msg += ": " + res.Exception
		}
		return out, errors.New("fortio: " + msg)
	}
	if res.RunType == "" || res.DurationHistogram == nil {
		return schema.LoadResponse{}, fmt.Errorf("not a fortio load result (no RunType or DurationHistogram): output starts %q", head(data))
	}
	if res.RunType != "HTTP" {
		return schema.LoadResponse{}, fmt.Errorf("fortio's result is of a %s run, not HTTP", res.RunType)
	}
	out.LoadResult, out.Warnings = convert(&res)
	return out, nil
}

// emptyResult is the result of a load that sent nothing.
func emptyResult() schema.LoadResult {
	return schema.LoadResult{Codes: map[string]float64{}, IPs: map[string]float64{}}
}

func head(data []byte) []byte {
	const n = 80
	if len(data) > n {
		return data[:n]
	}
	return data
}

// convert turns fortio's result into labrun's units (milliseconds, seconds) and says what
// cannot be trusted in it.
func convert(res *fhttp.HTTPRunnerResults) (schema.LoadResult, []string) {
	var warnings []string
	r := schema.LoadResult{
		Codes:       make(map[string]float64, len(res.RetCodes)),
		Sockets:     float64(res.SocketCount),
		Connections: float64(res.NumThreads),
		QPS:         res.ActualQPS,
		DurationS:   res.ActualDuration.Seconds(),
		IPs:         make(map[string]float64, len(res.IPCountMap)),
	}
	for code, n := range res.RetCodes {
		r.Codes[strconv.Itoa(code)] = float64(n)
		if schema.OKCode(code) {
			r.OK += float64(n)
		}
	}
	for ip, n := range res.IPCountMap {
		r.IPs[ip] = float64(n)
	}
	if h := res.DurationHistogram; h != nil {
		r.Requests = float64(h.Count)
		r.Avg, r.Min, r.Max = ms(h.Avg), ms(h.Min), ms(h.Max)
		if h.Count > 0 {
			for _, pc := range []struct {
				p   float64
				dst *float64
			}{{50, &r.P50}, {90, &r.P90}, {99, &r.P99}, {99.9, &r.P999}} {
				v, ok := percentile(h, pc.p)
				if !ok {
					warnings = append(warnings, fmt.Sprintf("fortio's result has no %gth percentile; p%s reads 0",
						pc.p, percentileName(pc.p)))
				}
				*pc.dst = ms(v)
			}
		}
	}
	r.Errors = r.Requests - r.OK
	if h := res.ErrorsDurationHistogram; h != nil && h.Count > 0 && r.OK > 0 {
		// The failed calls timed apart (where every call failed they are the load's own):
		// errorLatency of a load some of whose calls were answered (record version 9).
		e := &schema.LoadLatency{Avg: ms(h.Avg), Min: ms(h.Min), Max: ms(h.Max)}
		for _, pc := range []struct {
			p   float64
			dst *float64
		}{{50, &e.P50}, {90, &e.P90}, {99, &e.P99}, {99.9, &e.P999}} {
			v, ok := percentile(h, pc.p)
			if !ok {
				warnings = append(warnings, fmt.Sprintf("fortio's result has no %gth percentile of its failed calls; errorLatency.p%s reads 0",
					pc.p, percentileName(pc.p)))
			}
			*pc.dst = ms(v)
		}
		r.ErrorLatency = e
	}
	if !res.DisableFastClient && res.Sizes != nil && res.Sizes.Count > 0 &&
		res.Sizes.Max >= float64(fhttp.BufferSizeKb*1024) {
		warnings = append(warnings, fmt.Sprintf(
			"responses of up to %.0f bytes reached the fortio client's %d KiB buffer: larger ones were cut short",
			res.Sizes.Max, fhttp.BufferSizeKb))
	}
	return r, warnings
}

func percentile(h *stats.HistogramData, p float64) (float64, bool) {
	for _, v := range h.Percentiles {
		if math.Abs(v.Percentile-p) < 1e-9 {
			return v.Value, true
		}
	}
	return 0, false
}

// percentileName is the suffix of the LoadResult field: 99.9 → "999".
func percentileName(p float64) string {
	s := strconv.FormatFloat(p, 'f', -1, 64)
	out := make([]byte, 0, len(s))
	for i := range len(s) {
		if s[i] != '.' {
			out = append(out, s[i])
		}
	}
	return string(out)
}

// ms converts fortio's seconds to milliseconds.
func ms(seconds float64) float64 { return seconds * 1000 }
