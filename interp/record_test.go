package interp_test

import (
	"encoding/json"
	"os"
	"reflect"
	"testing"
	"time"

	"labrun.dev/labrun/interp"
	"labrun.dev/labrun/schema"
)

// TestRecordRoundTrip: every result's value reads back in the Go form its kind declares, so
// that the judge evaluates a replayed record as it did the run.
func TestRecordRoundTrip(t *testing.T) {
	t0 := time.Unix(1000, 0).UTC()
	snap := &interp.SnapshotRecord{Name: "b", Source: "backend a", At: t0, Counters: schema.Stats{"rq_total": 3}, Gauges: schema.Stats{}}
	rec := &interp.Record{Version: interp.RecordVersion, StepsStart: t0}
	rec.Put("b", "snapshot", false, snap)
	rec.Put("g", "snapshot", true, &interp.SeriesRecord{Name: "g", Every: time.Second, Samples: []*interp.SnapshotRecord{snap}})
	rec.Put("f", "load", false, &interp.LoadRecord{LoadResult: schema.LoadResult{Requests: 2, Codes: map[string]float64{"200": 2}}, Start: t0, End: t0})
	rec.Put("x", "exec", false, schema.ExecResult{Stdout: "hi", Captured: map[string]string{"a": "b"}})
	rec.Put("l", "logs", false, schema.LogResult{Count: 1, Lines: []string{"x"}})
	rec.Put("p", "exec", true, schema.ExecResult{Exit: 1})
	rec.Put("o", "get", false, map[string]any{"k": []any{1.0}})
	back := throughJSON(t, rec)
	for name, r := range rec.Results {
		got := back.Results[name]
		if got == nil || got.Kind != r.Kind || got.Sampled != r.Sampled || !reflect.DeepEqual(got.Value, r.Value) {
			t.Errorf("%s: read back %#v, want %#v", name, got, r)
		}
	}
}

// TestRecordVersion1: a record of version 1 (one section per kind) reads into results, each
// with its kind; a value's kind is its step's.
func TestRecordVersion1(t *testing.T) {
	b, err := os.ReadFile("../docs/records/kitb-mode1_strict.json")
	if err != nil {
		t.Fatal(err)
	}
	var rec interp.Record
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Version != 1 {
		t.Fatalf("version %d: the file is no longer a version 1 record", rec.Version)
	}
	kinds := map[string]string{}
	for n, r := range rec.Results {
		kinds[n] = r.Kind
	}
	want := map[string]string{
		"settled": "snapshot", "before_flip": "snapshot", "after_flip": "snapshot", "warm": "load", "who": "exec",
		"drcfg": "config", "ip_a": "get", "ip_b": "get", "lab_dns_ip": "get", "pod_a": "get", "pod_b": "get",
	}
	if !reflect.DeepEqual(kinds, want) {
		t.Errorf("kinds %v, want %v", kinds, want)
	}
	if s := rec.Snapshot("after_flip"); s == nil || len(s.Hosts) != 1 {
		t.Errorf("after_flip: %+v", s)
	}
	if l := rec.Loads()["warm"]; l == nil || l.Requests == 0 || l.Start.IsZero() {
		t.Errorf("warm: %+v", l)
	}
	if e, ok := rec.Results["who"].Value.(schema.ExecResult); !ok || e.Stdout == "" {
		t.Errorf("who: %#v", rec.Results["who"].Value)
	}
}
