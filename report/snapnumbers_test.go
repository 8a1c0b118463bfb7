package report_test

import (
	"os"
	"strings"
	"testing"

	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/report"
	"labrun.dev/labrun/schema"
)

// TestSnapshotTableSig4: the report's snapshot table wrote a histogram's quantile as Go's
// %g of 6 digits (1234.57, 0.0123457), where every other number a user reads has at most 4
// significant digits. A quantile is written as the rest (1235, 0.01235); a counter's whole
// value stays whole (4294967295, Envoy's "no limit", is no 4-digit figure).
func TestSnapshotTableSig4(t *testing.T) {
	rec := sampleRecord()
	for _, n := range []string{"before", "mid", "after"} {
		sn := rec.Results[n].Value.(*interp.SnapshotRecord)
		sn.Histograms = schema.Stats{"upstream_rq_time.p99": 1234.5678, "upstream_cx_length.p50": 0.012345678}
		sn.Counters["upstream_cx_max"] = 4294967295
	}
	files, err := report.Write(t.TempDir(), rec)
	if err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(files.Markdown)
	for _, want := range []string{
		"| upstream_rq_time.p99 | quantile | 1235 | 1235 | 1235 | |",
		"| upstream_cx_length.p50 | quantile | 0.01235 | 0.01235 | 0.01235 | |",
		"| upstream_cx_max | counter | 4294967295 | 4294967295 | 4294967295 | +0 |",
	} {
		if !strings.Contains(string(md), want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
	if strings.Contains(string(md), "1234.57") || strings.Contains(string(md), "0.0123457") {
		t.Errorf("markdown writes a quantile with 6 digits:\n%s", md)
	}
}
