package dsl

import (
	"reflect"
	"testing"

	"github.com/expr-lang/expr"
)

// TestReadsOf checks that an expectation's reads include the values inside function calls,
// arithmetic, conditions, closures and let bindings, that names bound by let and the
// closure's # are not reads, and that every read evaluates on its own.
func TestReadsOf(t *testing.T) {
	tests := []struct {
		src  string
		want map[string]any
	}{
		{"delta.upstream_rq_pending_overflow == fortio.code503", map[string]any{
			"delta.upstream_rq_pending_overflow": 12.0, "fortio.code503": 12.0}},
		{"within(fortio.requests, 0, 1000)", map[string]any{"fortio.requests": 30.0}},
		{"approx(fortio.ok, fortio.requests * 0.6, 0.1)", map[string]any{
			"fortio.ok": 18.0, "fortio.requests": 30.0}},
		{"let r = fortio.ok / fortio.requests; r > 0.5 && r < 0.7", map[string]any{
			"fortio.ok / fortio.requests": 0.6, "fortio.ok": 18.0, "fortio.requests": 30.0}},
		{"let f = fortio; f.ok == 18", map[string]any{"fortio": nil, "f.ok": 18.0}},
		// An operand that reads a bound name is a value too, evaluated with its binding: the
		// reports listed fortio.ok alone.
		{"let n = fortio.requests; n - fortio.ok == 12", map[string]any{
			"n - fortio.ok": 12.0, "fortio.requests": 30.0, "fortio.ok": 18.0}},
		{"vars.n == 10 ? after.rq_total == 30 : mid.rq_active > 0", map[string]any{
			"vars.n": 10.0, "after.rq_total": 30.0, "mid.rq_active": 3.0}},
		{`delta("before", "after").rq_total == 30`, map[string]any{`delta("before", "after").rq_total`: 30.0}},
		{"all(old, # != backends.a.host) && len(mid.hosts) == 1", map[string]any{
			"old": nil, "backends.a.host": "127.0.0.1", "len(mid.hosts)": 1, "mid.hosts": nil}},
		{"g.max.rq_active - g.min.rq_active >= 1", map[string]any{
			"g.max.rq_active - g.min.rq_active": 3.0, "g.max.rq_active": 3.0, "g.min.rq_active": 0.0}},
	}
	names := testNames()
	env := testEnv()
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			e, err := compile(tt.src, Pos{File: "x.cue", Line: 1, Col: 1}, names, compileOpts{asBool: true})
			if err != nil {
				t.Fatalf("compile: %v", err)
			}
			got := map[string]any{}
			for _, r := range ReadsOf(e) {
				if r.Value() == nil {
					t.Errorf("%s: no program", r.Src)
					continue
				}
				v, err := expr.Run(r.Value(), env)
				if err != nil {
					t.Errorf("%s: %v", r.Src, err)
					continue
				}
				if tt.want[r.Src] == nil {
					v = nil // a list or map: the test names it only
				}
				got[r.Src] = v
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("reads:\n got %v\nwant %v", got, tt.want)
			}
		})
	}
}
