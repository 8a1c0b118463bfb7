package fortio

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"

	"fortio.org/fortio/fhttp"
	"fortio.org/fortio/stats"

	"labrun.dev/labrun/schema"
)

// MergeJSON reads the outputs of one load run by several fortio processes at once (one per
// client pod; pods names them, in the same order) and returns their merged result: codes,
// requests, sockets, connections and addresses added, qps summed (the processes ran at the same
// time), the duration the longest, latencies from the merged histogram (see [Merge]), and each
// pod's own result in Pods. Raw is the merged result as fortio's JSON. The first output that is
// not a successful fortio run is the error.
func MergeJSON(outputs [][]byte, pods []string) (schema.LoadResponse, error) {
	runs := make([]*fhttp.HTTPRunnerResults, len(outputs))
	var out schema.LoadResponse
	perPod := make([]schema.LoadResult, len(outputs))
	for i, data := range outputs {
		one, err := DecodeJSON(data)
		if err != nil {
			return schema.LoadResponse{}, fmt.Errorf("pod %s: %w", pods[i], err)
		}
		var res fhttp.HTTPRunnerResults
		if err := json.Unmarshal(data, &res); err != nil { // DecodeJSON read it: cannot fail
			return schema.LoadResponse{}, fmt.Errorf("pod %s: %w", pods[i], err)
		}
		runs[i] = &res
		perPod[i] = one.LoadResult
		perPod[i].Pod = pods[i]
		for _, w := range one.Warnings {
			w = "pod " + pods[i] + ": " + w
			if !slices.Contains(out.Warnings, w) {
				out.Warnings = append(out.Warnings, w)
			}
		}
	}
	merged := Merge(runs)
	var warnings []string
	out.LoadResult, warnings = convert(merged)
	for _, w := range warnings {
		if !slices.Contains(out.Warnings, w) {
			out.Warnings = append(out.Warnings, w)
		}
	}
	out.Pods = perPod
	raw, err := json.MarshalIndent(merged, "", "  ")
	if err != nil {
		return schema.LoadResponse{}, fmt.Errorf("printing the merged fortio result: %w", err)
	}
	out.Raw = raw
	return out, nil
}

// Merge combines fortio results of runs that happened at the same time into one, as if one
// fortio had made all their requests: counts are added, ActualQPS summed, ActualDuration the
// longest, and the latency histograms merged. Percentiles are computed again from the merged
// histogram — never averaged — with each bucket's requests spread evenly over its interval, as
// fortio's own percentiles assume; the percentiles asked are those of the first run. Runs is
// not changed.
func Merge(runs []*fhttp.HTTPRunnerResults) *fhttp.HTTPRunnerResults {
	out := &fhttp.HTTPRunnerResults{RetCodes: map[int]int64{}, IPCountMap: map[string]int{}}
	if len(runs) == 0 {
		return out
	}
	first := runs[0]
	out.RunType, out.Labels, out.StartTime = first.RunType, first.Labels, first.StartTime
	out.RequestedQPS, out.RequestedDuration, out.Version = first.RequestedQPS, first.RequestedDuration, first.Version
	out.HTTPOptions = first.HTTPOptions
	var hists, sizes, errs []*stats.HistogramData
	allErrs := true // every run timed its failed calls apart: the merge keeps them too
	for _, r := range runs {
		if r.StartTime.Before(out.StartTime) {
			out.StartTime = r.StartTime
		}
		out.ActualQPS += r.ActualQPS
		out.ActualDuration = max(out.ActualDuration, r.ActualDuration)
		out.NumThreads += r.NumThreads
		out.SocketCount += r.SocketCount
		out.Sockets = append(out.Sockets, r.Sockets...)
		out.Exactly += r.Exactly
		for c, n := range r.RetCodes {
			out.RetCodes[c] += n
		}
		for ip, n := range r.IPCountMap {
			out.IPCountMap[ip] += n
		}
		hists = append(hists, r.DurationHistogram)
		sizes = append(sizes, r.Sizes)
		errs = append(errs, r.ErrorsDurationHistogram)
		allErrs = allErrs && r.ErrorsDurationHistogram != nil
	}
	var pcts []float64
	if first.DurationHistogram != nil {
		for _, p := range first.DurationHistogram.Percentiles {
			pcts = append(pcts, p.Percentile)
		}
	}
	out.DurationHistogram = MergeHistograms(hists, pcts)
	if allErrs {
		out.ErrorsDurationHistogram = MergeHistograms(errs, pcts)
	}
	out.Sizes = MergeHistograms(sizes, nil)
	return out
}

// MergeHistograms merges fortio histograms (nil ones are skipped) and computes percentiles
// (e.g. 50, 99.9) of the merged data. Buckets with the same interval are added; the data of
// the merged histogram is read as a mixture of uniform intervals, so buckets of different runs
// need not line up (each run's first bucket starts at its own minimum, its last ends at its
// maximum). Nil when every histogram is nil.
func MergeHistograms(hs []*stats.HistogramData, percentiles []float64) *stats.HistogramData {
	var out *stats.HistogramData
	var sumSq float64
	byInterval := map[stats.Interval]int64{}
	for _, h := range hs {
		if h == nil {
			continue
		}
		if out == nil {
			out = &stats.HistogramData{Min: math.Inf(1), Max: math.Inf(-1)}
		}
		if h.Count == 0 {
			continue
		}
		out.Count += h.Count
		out.Sum += h.Sum
		out.Min = min(out.Min, h.Min)
		out.Max = max(out.Max, h.Max)
		sumSq += (h.StdDev*h.StdDev + h.Avg*h.Avg) * float64(h.Count)
		for _, b := range h.Data {
			byInterval[b.Interval] += b.Count
		}
	}
	if out == nil {
		return nil
	}
	if out.Count == 0 {
		out.Min, out.Max = 0, 0
		return out
	}
	n := float64(out.Count)
	out.Avg = out.Sum / n
	out.StdDev = math.Sqrt(max(0, sumSq/n-out.Avg*out.Avg))
	for iv, c := range byInterval {
		out.Data = append(out.Data, stats.Bucket{Interval: iv, Count: c})
	}
	sort.Slice(out.Data, func(i, j int) bool {
		a, b := out.Data[i], out.Data[j]
		if a.Start != b.Start {
			return a.Start < b.Start
		}
		return a.End < b.End
	})
	var total int64
	for i := range out.Data {
		total += out.Data[i].Count
		out.Data[i].Percent = 100 * float64(total) / n
	}
	for _, p := range percentiles {
		out.Percentiles = append(out.Percentiles, stats.Percentile{Percentile: p, Value: mixturePercentile(out.Data, total, p)})
	}
	return out
}

// mixturePercentile is the value below which p percent of the requests lie, when each bucket's
// requests are spread evenly over its interval (a zero-width bucket is a point mass).
func mixturePercentile(data []stats.Bucket, total int64, p float64) float64 {
	if len(data) == 0 || total == 0 {
		return 0
	}
	target := p / 100 * float64(total)
	edges := make([]float64, 0, 2*len(data))
	for _, b := range data {
		edges = append(edges, b.Start, b.End)
	}
	slices.Sort(edges)
	edges = slices.Compact(edges)
	// below(x) counts the requests at or below x; it is linear between consecutive edges.
	below := func(x float64) float64 {
		var c float64
		for _, b := range data {
			switch {
			case x >= b.End:
				c += float64(b.Count)
			case x > b.Start:
				c += float64(b.Count) * (x - b.Start) / (b.End - b.Start)
			}
		}
		return c
	}
	if target <= 0 {
		return edges[0]
	}
	prevX, prevC := edges[0], below(edges[0])
	if prevC >= target {
		return prevX
	}
	for _, x := range edges[1:] {
		c := below(x)
		if c >= target {
			return prevX + (target-prevC)/(c-prevC)*(x-prevX)
		}
		prevX, prevC = x, c
	}
	return edges[len(edges)-1]
}
