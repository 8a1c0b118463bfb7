package fortio

import (
	"encoding/json"
	"math"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"fortio.org/fortio/fhttp"
	"fortio.org/fortio/periodic"
	"fortio.org/fortio/stats"

	"labrun.dev/labrun/schema"
)

func TestConvert(t *testing.T) {
	pcts := func(vs ...float64) []stats.Percentile {
		var out []stats.Percentile
		for i := 0; i < len(vs); i += 2 {
			out = append(out, stats.Percentile{Percentile: vs[i], Value: vs[i+1]})
		}
		return out
	}
	for _, tc := range []struct {
		name     string
		res      fhttp.HTTPRunnerResults
		want     schema.LoadResult
		warnings []string
	}{{
		name: "codes, 418 is ok, -1 is an error",
		res: fhttp.HTTPRunnerResults{
			RunnerResults: periodic.RunnerResults{
				ActualQPS: 110, ActualDuration: 100 * time.Millisecond, NumThreads: 3,
				DurationHistogram: &stats.HistogramData{Count: 11, Min: 0.001, Max: 0.2, Avg: 0.02,
					Percentiles: pcts(50, 0.005, 90, 0.05, 99, 0.19, 99.9, 0.199)},
			},
			RetCodes:    map[int]int64{200: 6, 204: 1, 418: 1, 503: 2, -1: 1},
			IPCountMap:  map[string]int{"10.0.0.1:80": 2, "10.0.0.2:80": 3},
			SocketCount: 5,
		},
		want: schema.LoadResult{
			Requests: 11, Codes: map[string]float64{"200": 6, "204": 1, "418": 1, "503": 2, "-1": 1},
			OK: 8, Errors: 3, Sockets: 5, Connections: 3, QPS: 110, DurationS: 0.1,
			Avg: 20, Min: 1, Max: 200, P50: 5, P90: 50, P99: 190, P999: 199,
			IPs: map[string]float64{"10.0.0.1:80": 2, "10.0.0.2:80": 3},
		},
	}, {
		name: "a run that never started",
		res: fhttp.HTTPRunnerResults{RunnerResults: periodic.RunnerResults{
			DurationHistogram: &stats.HistogramData{}}},
		want: schema.LoadResult{Codes: map[string]float64{}, IPs: map[string]float64{}},
	}, {
		name: "no histogram at all",
		res:  fhttp.HTTPRunnerResults{},
		want: schema.LoadResult{Codes: map[string]float64{}, IPs: map[string]float64{}},
	}, {
		name: "percentiles missing (-p 50,99)",
		res: fhttp.HTTPRunnerResults{
			RunnerResults: periodic.RunnerResults{NumThreads: 1,
				DurationHistogram: &stats.HistogramData{Count: 2, Min: 0.001, Max: 0.003, Avg: 0.002,
					Percentiles: pcts(50, 0.002, 99, 0.003)}},
			RetCodes: map[int]int64{200: 2},
		},
		want: schema.LoadResult{Requests: 2, Codes: map[string]float64{"200": 2}, OK: 2, Connections: 1,
			Avg: 2, Min: 1, Max: 3, P50: 2, P99: 3, IPs: map[string]float64{}},
		warnings: []string{"fortio's result has no 90th percentile; p90 reads 0",
			"fortio's result has no 99.9th percentile; p999 reads 0"},
	}, {
		name: "responses as big as the fast client's buffer",
		res: fhttp.HTTPRunnerResults{
			RunnerResults: periodic.RunnerResults{DurationHistogram: &stats.HistogramData{}},
			Sizes:         &stats.HistogramData{Count: 1, Max: 131072},
		},
		want: schema.LoadResult{Codes: map[string]float64{}, IPs: map[string]float64{}},
		warnings: []string{"responses of up to 131072 bytes reached the fortio client's 128 KiB buffer: " +
			"larger ones were cut short"},
	}, {
		name: "big responses with the standard client",
		res: fhttp.HTTPRunnerResults{
			RunnerResults: periodic.RunnerResults{DurationHistogram: &stats.HistogramData{}},
			HTTPOptions:   fhttp.HTTPOptions{DisableFastClient: true},
			Sizes:         &stats.HistogramData{Count: 1, Max: 1 << 20},
		},
		want: schema.LoadResult{Codes: map[string]float64{}, IPs: map[string]float64{}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got, warnings := convert(&tc.res)
			if !reflect.DeepEqual(roundAll(got), tc.want) {
				t.Errorf("convert\n got %+v\nwant %+v", got, tc.want)
			}
			if strings.Join(warnings, "\n") != strings.Join(tc.warnings, "\n") {
				t.Errorf("warnings\n got %q\nwant %q", warnings, tc.warnings)
			}
		})
	}
}

// roundAll rounds the float fields to 1e-9, hiding the error of seconds × 1000.
func roundAll(r schema.LoadResult) schema.LoadResult {
	for _, f := range []*float64{&r.Avg, &r.Min, &r.Max, &r.P50, &r.P90, &r.P99, &r.P999, &r.DurationS} {
		*f = math.Round(*f*1e9) / 1e9
	}
	if e := r.ErrorLatency; e != nil {
		c := *e
		for _, f := range []*float64{&c.Avg, &c.Min, &c.Max, &c.P50, &c.P90, &c.P99, &c.P999} {
			*f = math.Round(*f*1e9) / 1e9
		}
		r.ErrorLatency = &c
	}
	return r
}

// The files in testdata are the stdout of the real fortio CLI (v1.66.5), run with CLIArgs of
// the steps below against `fortio server` on loopback (socket-errors: a closed loopback port).
// LABRUN_UPDATE=1 go test -run TestDecodeJSON ./driver/fortio/ writes them again.
var cliCases = []struct {
	file string
	req  func(base string) schema.Load
	// check looks at what only this case tells.
	check func(t *testing.T, r schema.LoadResult)
}{{
	file: "mixed-503.json",
	req: func(base string) schema.Load {
		return schema.Load{URL: base + "/echo?status=503:25&delay=2ms", Requests: 40, Connections: 2}
	},
	check: func(t *testing.T, r schema.LoadResult) {
		if r.Requests != 40 || r.Codes["200"]+r.Codes["503"] != 40 || r.Codes["503"] == 0 ||
			r.Errors != r.Codes["503"] || r.Connections != 2 || r.P50 < 2 {
			t.Errorf("%+v", r)
		}
	},
}, {
	file: "socket-errors.json",
	req: func(string) schema.Load {
		return schema.Load{URL: "http://" + closedPort + "/", Requests: 6, Connections: 2}
	},
	check: func(t *testing.T, r schema.LoadResult) {
		if r.Requests != 6 || r.Codes["-1"] != 6 || r.Errors != 6 || r.OK != 0 {
			t.Errorf("%+v", r)
		}
	},
}, {
	file: "duration-qps.json",
	req: func(base string) schema.Load {
		return schema.Load{URL: base + "/echo", QPS: 40, Duration: schema.Duration(time.Second), Connections: 2,
			Headers: map[string]string{"Host": "backend.lab.test"}}
	},
	check: func(t *testing.T, r schema.LoadResult) {
		if r.Requests != 40 || r.OK != 40 || r.Connections != 2 || r.QPS < 30 || r.QPS > 50 || r.DurationS < 0.9 {
			t.Errorf("%+v", r)
		}
	},
}, {
	file: "lowered-connections.json",
	req: func(base string) schema.Load {
		return schema.Load{URL: base + "/echo", QPS: 100, Requests: 10, Connections: 8}
	},
	check: func(t *testing.T, r schema.LoadResult) {
		if r.Requests != 10 || r.Connections != 5 {
			t.Errorf("%+v", r)
		}
	},
}}

// closedPort is a loopback address where nothing listens, when the testdata was made.
var closedPort = "127.0.0.1:9"

func TestDecodeJSON(t *testing.T) {
	if os.Getenv("LABRUN_UPDATE") != "" {
		writeCLITestdata(t)
	}
	for _, tc := range cliCases {
		t.Run(tc.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			res, err := DecodeJSON(data)
			if err != nil {
				t.Fatal(err)
			}
			if string(res.Raw) != string(data) {
				t.Error("Raw is not the CLI's output")
			}
			if want := independentDecode(t, data); !reflect.DeepEqual(roundAll(res.LoadResult), roundAll(want)) {
				t.Errorf("DecodeJSON\n got %+v\nwant %+v", res.LoadResult, want)
			}
			tc.check(t, res.LoadResult)
		})
	}
}

// independentDecode reads the fields of fortio's JSON by name, without fortio's types, so a
// change of fortio's result type shows up as a difference.
func independentDecode(t *testing.T, data []byte) schema.LoadResult {
	t.Helper()
	var j struct {
		ActualQPS         float64
		ActualDuration    float64
		NumThreads        float64
		DurationHistogram struct {
			Count, Min, Max, Avg float64
			Percentiles          []struct{ Percentile, Value float64 }
		}
		ErrorsDurationHistogram struct {
			Count, Min, Max, Avg float64
			Percentiles          []struct{ Percentile, Value float64 }
		}
		RetCodes    map[string]float64
		IPCountMap  map[string]float64
		SocketCount float64
	}
	if err := json.Unmarshal(data, &j); err != nil {
		t.Fatal(err)
	}
	r := schema.LoadResult{
		Requests: j.DurationHistogram.Count, Codes: j.RetCodes, Sockets: j.SocketCount,
		Connections: j.NumThreads, QPS: j.ActualQPS, DurationS: j.ActualDuration / 1e9,
		Avg: j.DurationHistogram.Avg * 1000, Min: j.DurationHistogram.Min * 1000, Max: j.DurationHistogram.Max * 1000,
		IPs: j.IPCountMap,
	}
	if r.Codes == nil {
		r.Codes = map[string]float64{}
	}
	if r.IPs == nil {
		r.IPs = map[string]float64{}
	}
	for code, n := range r.Codes {
		c, _ := strconv.Atoi(code)
		if c >= 200 && c < 300 || c == 418 {
			r.OK += n
		}
	}
	r.Errors = r.Requests - r.OK
	for _, p := range j.DurationHistogram.Percentiles {
		switch p.Percentile {
		case 50:
			r.P50 = p.Value * 1000
		case 90:
			r.P90 = p.Value * 1000
		case 99:
			r.P99 = p.Value * 1000
		case 99.9:
			r.P999 = p.Value * 1000
		}
	}
	// The failed calls' own latencies, where some calls succeeded (where none did they are the
	// load's).
	if e := j.ErrorsDurationHistogram; e.Count > 0 && r.OK > 0 {
		l := schema.LoadLatency{Avg: e.Avg * 1000, Min: e.Min * 1000, Max: e.Max * 1000}
		for _, p := range e.Percentiles {
			switch p.Percentile {
			case 50:
				l.P50 = p.Value * 1000
			case 90:
				l.P90 = p.Value * 1000
			case 99:
				l.P99 = p.Value * 1000
			case 99.9:
				l.P999 = p.Value * 1000
			}
		}
		r.ErrorLatency = &l
	}
	return r
}

func writeCLITestdata(t *testing.T) {
	cli := fortioCLI(t)
	base := startCLIServer(t, cli)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedPort = l.Addr().String()
	l.Close()
	for _, tc := range cliCases {
		out, _ := runCLI(t, cli, tc.req(base))
		if err := os.WriteFile(filepath.Join("testdata", tc.file), out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
