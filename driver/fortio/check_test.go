package fortio

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Real fortio results, and their merge, keep fortio's sums; each edit a person would make to
// turn a result into a pass (503s taken out of the codes, a percentile lowered, a bucket
// emptied) while the rest of the result still counts what fortio saw breaks one.
func TestContradictions(t *testing.T) {
	files := []string{"mixed-503.json", "duration-qps.json", "lowered-connections.json", "socket-errors.json"}
	var all [][]byte
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join("testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		if cs := Contradictions(b); len(cs) > 0 {
			t.Errorf("%s: %q, want none", f, cs)
		}
		all = append(all, b)
	}
	merged, err := MergeJSON(all[:2], []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	if cs := Contradictions(merged.Raw); len(cs) > 0 {
		t.Errorf("merged: %q, want none", cs)
	}
	mixed := all[0]
	for _, tc := range []struct {
		name string
		edit func(m map[string]any)
		want string
	}{
		{"503s made 200s", func(m map[string]any) {
			m["RetCodes"] = map[string]any{"200": 40.0}
		}, "its codes hold 0 calls answered with no success, but its histogram of failed calls (ErrorsDurationHistogram) counts 9"},
		{"503s taken out", func(m map[string]any) {
			m["RetCodes"] = map[string]any{"200": 31.0}
		}, "its codes (RetCodes) add up to 31 calls, but its latency histogram (DurationHistogram) counts 40"},
		{"p99 lowered", func(m map[string]any) {
			h := m["DurationHistogram"].(map[string]any)
			for _, p := range h["Percentiles"].([]any) {
				if p := p.(map[string]any); p["Percentile"] == 99.0 {
					p["Value"] = 0.001
				}
			}
		}, "its 99th percentile is 0.001s, but its latency histogram's buckets give"},
		{"slow bucket emptied", func(m map[string]any) {
			h := m["DurationHistogram"].(map[string]any)
			data := h["Data"].([]any)
			data[len(data)-1].(map[string]any)["Count"] = 0.0
		}, "is at 100% of the calls, but the buckets up to it hold 97.5%"},
		{"errors histogram emptied", func(m map[string]any) {
			e := m["ErrorsDurationHistogram"].(map[string]any)
			e["Count"] = 0.0
			m["RetCodes"] = map[string]any{"200": 40.0}
		}, "its histogram of failed calls (ErrorsDurationHistogram) buckets hold 9 calls, but its count is 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var m map[string]any
			if err := json.Unmarshal(mixed, &m); err != nil {
				t.Fatal(err)
			}
			tc.edit(m)
			b, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := DecodeJSON(b); err != nil {
				t.Fatalf("the edit does not decode: %v", err)
			}
			cs := Contradictions(b)
			if !strings.Contains(strings.Join(cs, "\n"), tc.want) {
				t.Errorf("got %q, want %q", cs, tc.want)
			}
		})
	}
}
