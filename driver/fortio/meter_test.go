package fortio

import (
	"encoding/json"
	"testing"

	"labrun.dev/labrun/schema"
)

// TestLoadMeterCounts: a load whose context carries a meter counts every request on it as it
// ends, errors apart, so live progress can show done/total and the error count.
func TestLoadMeterCounts(t *testing.T) {
	srv := newEchoServer(t)
	m := &schema.LoadMeter{Planned: 200}
	res, err := New().Load(schema.WithLoadMeter(t.Context(), m), schema.Load{URL: srv.URL + "/echo?status=503:50", Requests: 200})
	if err != nil {
		t.Fatal(err)
	}
	done, errs, counting := m.Read()
	if !counting || done != 200 || float64(errs) != res.Codes["503"] {
		t.Errorf("meter: done %d errors %d counting %v; want 200 done and %v errors (the 503s)", done, errs, counting, res.Codes["503"])
	}
	var buckets []schema.CodesOverTime
	if err := json.Unmarshal(m.CodesJSON(), &buckets); err != nil || len(buckets) == 0 {
		t.Fatalf("codes over time: %v %s", err, m.CodesJSON())
	}
	sum := map[string]int{}
	for _, b := range buckets {
		for c, n := range b.Codes {
			sum[c] += n
		}
	}
	if float64(sum["503"]) != res.Codes["503"] || float64(sum["200"]) != res.Codes["200"] {
		t.Errorf("codes over time sum to %v, the load counted %v", sum, res.Codes)
	}
}
