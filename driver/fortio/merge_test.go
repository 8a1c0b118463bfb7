package fortio

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"fortio.org/fortio/fhttp"
	"fortio.org/fortio/periodic"
	"fortio.org/fortio/stats"
)

// run is a fortio result with a histogram of the given buckets (seconds).
func run(qps float64, d time.Duration, threads int, codes map[int]int64, buckets ...stats.Bucket) *fhttp.HTTPRunnerResults {
	h := &stats.HistogramData{Min: math.Inf(1), Max: math.Inf(-1), Percentiles: []stats.Percentile{{Percentile: 50}, {Percentile: 90}, {Percentile: 99}}}
	for _, b := range buckets {
		h.Count += b.Count
		h.Min, h.Max = min(h.Min, b.Start), max(h.Max, b.End)
		h.Sum += float64(b.Count) * (b.Start + b.End) / 2
		h.Data = append(h.Data, b)
	}
	if h.Count == 0 {
		h.Min, h.Max = 0, 0
	} else {
		h.Avg = h.Sum / float64(h.Count)
	}
	return &fhttp.HTTPRunnerResults{
		RunnerResults: periodic.RunnerResults{RunType: "HTTP", ActualQPS: qps, ActualDuration: d, NumThreads: threads, DurationHistogram: h},
		RetCodes:      codes, IPCountMap: map[string]int{"10.0.0.1:80": threads}, SocketCount: int64(threads),
	}
}

func bucket(start, end float64, n int64) stats.Bucket {
	return stats.Bucket{Interval: stats.Interval{Start: start, End: end}, Count: n}
}

func TestMerge(t *testing.T) {
	for _, tc := range []struct {
		name  string
		runs  []*fhttp.HTTPRunnerResults
		count int64
		codes map[int]int64
		qps   float64
		dur   time.Duration
		pcts  map[float64]float64 // percentile → seconds
	}{{
		name: "two pods, fast 200s and slow 503s: the median is where the fast ones end",
		runs: []*fhttp.HTTPRunnerResults{
			run(100, 2*time.Second, 2, map[int]int64{200: 10}, bucket(0.010, 0.011, 10)),
			run(50, 3*time.Second, 2, map[int]int64{503: 10}, bucket(0.100, 0.101, 10)),
		},
		count: 20, codes: map[int]int64{200: 10, 503: 10}, qps: 150, dur: 3 * time.Second,
		pcts: map[float64]float64{50: 0.011, 90: 0.1008, 99: 0.10098},
	}, {
		name: "buckets that do not line up are spread evenly, not averaged",
		runs: []*fhttp.HTTPRunnerResults{
			run(1, time.Second, 1, map[int]int64{200: 2}, bucket(0, 2, 2)),
			run(1, time.Second, 1, map[int]int64{200: 2}, bucket(1, 3, 2)),
		},
		count: 4, codes: map[int]int64{200: 4}, qps: 2, dur: time.Second,
		// at 1: 1 request below; at 2: 2 of A + 1 of B = 3; the 2nd request is at 1.5.
		pcts: map[float64]float64{50: 1.5, 90: 2 + (3.6-3)/(4-3)*1},
	}, {
		name: "a pod that sent nothing adds its threads, not latencies",
		runs: []*fhttp.HTTPRunnerResults{
			run(10, time.Second, 1, map[int]int64{200: 4}, bucket(0.5, 0.5, 4)),
			run(0, time.Second, 3, map[int]int64{}),
		},
		count: 4, codes: map[int]int64{200: 4}, qps: 10, dur: time.Second,
		pcts: map[float64]float64{50: 0.5, 99: 0.5},
	}, {
		name:  "one pod is itself",
		runs:  []*fhttp.HTTPRunnerResults{run(5, time.Second, 1, map[int]int64{200: 10}, bucket(0, 1, 10))},
		count: 10, codes: map[int]int64{200: 10}, qps: 5, dur: time.Second,
		pcts: map[float64]float64{50: 0.5, 90: 0.9},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			m := Merge(tc.runs)
			h := m.DurationHistogram
			if h.Count != tc.count || !reflect.DeepEqual(m.RetCodes, tc.codes) || math.Abs(m.ActualQPS-tc.qps) > 1e-9 || m.ActualDuration != tc.dur {
				t.Errorf("count %d codes %v qps %v duration %v", h.Count, m.RetCodes, m.ActualQPS, m.ActualDuration)
			}
			threads := 0
			for _, r := range tc.runs {
				threads += r.NumThreads
			}
			if m.NumThreads != threads || m.SocketCount != int64(threads) || m.IPCountMap["10.0.0.1:80"] != threads {
				t.Errorf("threads %d sockets %d ips %v, want %d", m.NumThreads, m.SocketCount, m.IPCountMap, threads)
			}
			got := map[float64]float64{}
			for _, p := range h.Percentiles {
				got[p.Percentile] = p.Value
			}
			for p, want := range tc.pcts {
				if math.Abs(got[p]-want) > 1e-9 {
					t.Errorf("p%g = %v, want %v", p, got[p], want)
				}
			}
			if last := h.Data[len(h.Data)-1]; math.Abs(last.Percent-100) > 1e-9 {
				t.Errorf("cumulative percent ends at %v", last.Percent)
			}
		})
	}
	if m := Merge(nil); m.DurationHistogram != nil || len(m.RetCodes) != 0 {
		t.Errorf("no runs: %+v", m)
	}
}

// Real fortio results merged: the per-pod results stay readable, the merge is fortio's JSON.
func TestMergeJSON(t *testing.T) {
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	mixed, dq := read("mixed-503.json"), read("duration-qps.json")
	res, err := MergeJSON([][]byte{mixed, dq}, []string{"client-a", "client-b"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 80 || res.Codes["200"] != 71 || res.Codes["503"] != 9 || res.OK != 71 || res.Errors != 9 || res.Connections != 4 {
		t.Errorf("merged: requests %v codes %v ok %v errors %v connections %v", res.Requests, res.Codes, res.OK, res.Errors, res.Connections)
	}
	if len(res.Pods) != 2 || res.Pods[0].Pod != "client-a" || res.Pods[0].Codes["503"] != 9 || res.Pods[1].Pod != "client-b" || res.Pods[1].Codes["200"] != 40 {
		t.Errorf("pods: %+v", res.Pods)
	}
	// duration-qps's 40 requests are all below 0.82 ms, mixed-503's all above 2.2 ms: the merged
	// median is the fastest of mixed-503, its p90 inside mixed-503's range.
	if res.P50 < 0.8 || res.P50 > 2.26 || res.P90 < 2.25 || res.P90 > res.Pods[0].P99 || res.Min != res.Pods[1].Min || res.Max != res.Pods[0].Max {
		t.Errorf("latencies p50 %v p90 %v min %v max %v; pods %+v", res.P50, res.P90, res.Min, res.Max, res.Pods)
	}
	if math.Abs(res.QPS-(res.Pods[0].QPS+res.Pods[1].QPS)) > 1e-9 {
		t.Errorf("qps %v", res.QPS)
	}
	again, err := DecodeJSON(res.Raw)
	if err != nil || again.Requests != 80 || again.P90 != res.P90 {
		t.Errorf("Raw is not a fortio result: %v %+v", err, again.LoadResult)
	}

	// The same run twice has the same latencies (within fortio's bucket interpolation).
	twice, err := MergeJSON([][]byte{mixed, mixed}, []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	one := twice.Pods[0]
	if twice.Requests != 2*one.Requests || math.Abs(twice.P50-one.P50) > 0.2 || math.Abs(twice.P99-one.P99) > 0.5 || twice.Avg != one.Avg {
		t.Errorf("twice: %+v\none: %+v", twice.LoadResult, one)
	}

	var failed fhttp.HTTPRunnerResults
	failed.RunType = "HTTP"
	failed.Error = true
	failed.Message = "bad host"
	bad, _ := json.Marshal(failed)
	if _, err := MergeJSON([][]byte{mixed, bad}, []string{"a", "b"}); err == nil || !strings.Contains(err.Error(), "pod b: fortio: bad host") {
		t.Errorf("a failed pod: %v", err)
	}
}
