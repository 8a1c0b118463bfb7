package fortio

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"

	"fortio.org/fortio/fhttp"
	"fortio.org/fortio/stats"

	"labrun.dev/labrun/schema"
)

// Contradictions says where fortio's JSON result data (as DecodeJSON reads it) breaks the sums
// fortio keeps in every result it writes, and its merge (MergeJSON) keeps too: its status codes
// add up to its latency histogram's count (each call records one code and one latency), its
// buckets' counts add up to that count too and their cumulative percents follow them, the
// histogram of the failed calls counts the calls answered with a code that is no success
// (a merged result keeps it where each pod's did), and each percentile is the one the buckets give (fortio's
// interpolation, or the merge's uniform mixture). None for data that does not decode.
//
// The load's results are converted from the codes and the percentiles alone (convert), so a
// copy of fortio.json whose codes or percentiles were edited along with the record's result
// was held to nothing: a result kept beside the record with 503s taken out of its codes (the
// histogram of the failed calls still counting them) replayed PASSED.
func Contradictions(data []byte) []string {
	var res fhttp.HTTPRunnerResults
	if err := json.Unmarshal(data, &res); err != nil || res.Error {
		return nil
	}
	h := res.DurationHistogram
	if h == nil {
		return nil
	}
	var msgs []string
	var calls, failed int64
	for code, n := range res.RetCodes {
		calls += n
		if !schema.OKCode(code) {
			failed += n
		}
	}
	if calls != h.Count {
		msgs = append(msgs, fmt.Sprintf("its codes (RetCodes) add up to %d calls, but its latency histogram (DurationHistogram) counts %d", calls, h.Count))
	}
	if e := res.ErrorsDurationHistogram; e != nil && e.Count != failed {
		msgs = append(msgs, fmt.Sprintf("its codes hold %d calls answered with no success, but its histogram of failed calls (ErrorsDurationHistogram) counts %d", failed, e.Count))
	}
	msgs = append(msgs, bucketContradictions("latency histogram (DurationHistogram)", h)...)
	if e := res.ErrorsDurationHistogram; e != nil {
		msgs = append(msgs, bucketContradictions("histogram of failed calls (ErrorsDurationHistogram)", e)...)
	}
	var inBuckets int64
	for _, b := range h.Data {
		inBuckets += b.Count
	}
	if h.Count > 0 && inBuckets == h.Count && len(h.Data) > 0 {
		for _, p := range h.Percentiles {
			own, mixed := h.CalcPercentile(p.Percentile), mixturePercentile(h.Data, inBuckets, p.Percentile)
			if !near(p.Value, own) && !near(p.Value, mixed) {
				msgs = append(msgs, fmt.Sprintf("its %gth percentile is %ss, but its latency histogram's buckets give %ss", p.Percentile, num(p.Value), num(own)))
			}
		}
	}
	return slices.Compact(msgs)
}

// bucketContradictions says where h's buckets do not add up to its count, or their cumulative
// percents do not follow their counts.
func bucketContradictions(what string, h *stats.HistogramData) []string {
	var in int64
	for i, b := range h.Data {
		in += b.Count
		if h.Count > 0 {
			if want := 100 * float64(in) / float64(h.Count); !near(b.Percent, want) {
				return []string{fmt.Sprintf("its %s bucket %d is at %s%% of the calls, but the buckets up to it hold %s%%", what, i+1, num(b.Percent), num(want))}
			}
		}
	}
	if in != h.Count && (len(h.Data) > 0 || h.Count > 0) {
		return []string{fmt.Sprintf("its %s buckets hold %d calls, but its count is %d", what, in, h.Count)}
	}
	return nil
}

// near says whether two of fortio's floats are one value, written and read back.
func near(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*max(1, math.Abs(a), math.Abs(b))
}

func num(f float64) string { return strconv.FormatFloat(f, 'g', 6, 64) }
