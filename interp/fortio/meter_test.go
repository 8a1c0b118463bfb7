package fortio

import (
	"testing"

	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/schema"
)

// TestLoadMeterCounts: a load whose context carries a meter counts every request on it as it
// ends, errors apart, so live progress can show done/total and the error count.
func TestLoadMeterCounts(t *testing.T) {
	srv := newEchoServer(t)
	m := &interp.LoadMeter{Planned: 200}
	res, err := New().Load(interp.WithLoadMeter(t.Context(), m), schema.Load{URL: srv.URL + "/echo?status=503:50", Requests: 200})
	if err != nil {
		t.Fatal(err)
	}
	done, errs, counting := m.Read()
	if !counting || done != 200 || float64(errs) != res.Codes["503"] {
		t.Errorf("meter: done %d errors %d counting %v; want 200 done and %v errors (the 503s)", done, errs, counting, res.Codes["503"])
	}
}
