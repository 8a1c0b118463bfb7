package main

import (
	"bytes"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const statsDump = `# counters
cluster.outbound|8080||backend.conn-lab.svc.cluster.local;.upstream_rq_pending_overflow: 21
cluster.outbound|8080||backend.other-lab.svc.cluster.local;.upstream_rq_pending_overflow: 3
# gauges
cluster.outbound|8080||backend.conn-lab.svc.cluster.local;.circuit_breakers.default.rq_pending_open: 1
# histograms
cluster.outbound|8080||backend.conn-lab.svc.cluster.local;.upstream_rq_time: P0(nan,1) P25(nan,2)
`

func TestRenderStats(t *testing.T) {
	tests := []struct {
		query string
		want  []string
	}{
		{"", []string{
			"cluster.outbound|8080||backend.conn-lab.svc.cluster.local;.upstream_rq_pending_overflow: 21",
			"cluster.outbound|8080||backend.other-lab.svc.cluster.local;.upstream_rq_pending_overflow: 3",
			"cluster.outbound|8080||backend.conn-lab.svc.cluster.local;.circuit_breakers.default.rq_pending_open: 1",
			"cluster.outbound|8080||backend.conn-lab.svc.cluster.local;.upstream_rq_time: P0(nan,1) P25(nan,2)",
		}},
		{"filter=backend&type=Counters", []string{
			"cluster.outbound|8080||backend.conn-lab.svc.cluster.local;.upstream_rq_pending_overflow: 21",
			"cluster.outbound|8080||backend.other-lab.svc.cluster.local;.upstream_rq_pending_overflow: 3",
		}},
		{"filter=" + url.QueryEscape(`backend\.conn-lab`) + "&type=Gauges", []string{
			"cluster.outbound|8080||backend.conn-lab.svc.cluster.local;.circuit_breakers.default.rq_pending_open: 1",
		}},
		{"type=Histograms", []string{
			"cluster.outbound|8080||backend.conn-lab.svc.cluster.local;.upstream_rq_time: P0(nan,1) P25(nan,2)",
		}},
		{"filter=^nothing$", nil},
	}
	for _, tt := range tests {
		q, _ := url.ParseQuery(tt.query)
		got, err := renderStats(statsDump, q)
		if err != nil {
			t.Fatalf("%s: %v", tt.query, err)
		}
		want := ""
		if len(tt.want) > 0 {
			want = strings.Join(tt.want, "\n") + "\n"
		}
		if got != want {
			t.Errorf("%s:\n got %q\nwant %q", tt.query, got, want)
		}
	}
	if _, err := renderStats(statsDump, url.Values{"type": {"Bogus"}}); err == nil {
		t.Error("type=Bogus accepted")
	}
}

func TestGuessKind(t *testing.T) {
	for name, want := range map[string]statKind{
		"cluster.a;.upstream_rq_pending_overflow: 3":             counterKind,
		"cluster.a;.upstream_cx_active: 2":                       gaugeKind,
		"cluster.a;.circuit_breakers.default.remaining_cx: 1":    gaugeKind,
		"cluster.a;.circuit_breakers.default.rq_pending_open: 0": gaugeKind,
		"cluster.a;.membership_change: 4":                        counterKind,
		"cluster.a;.upstream_rq_time: No recorded values":        histogramKind,
	} {
		st := parseStats(name)
		if len(st) != 1 || st[0].kind != want {
			t.Errorf("%s: %+v, want %s", name, st, want)
		}
	}
}

func TestStatsJSON(t *testing.T) {
	got, err := renderStats(statsDump, url.Values{"format": {"json"}, "filter": {"conn-lab"}})
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Stats []struct {
			Name  string `json:"name"`
			Value uint64 `json:"value"`
		} `json:"stats"`
	}
	if err := json.Unmarshal([]byte(got), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Stats) != 2 || doc.Stats[0].Value != 21 || doc.Stats[1].Value != 1 {
		t.Errorf("json stats = %+v", doc.Stats)
	}
}

// TestFixtureSequence checks the layout the sandbox package writes: prefix directories, series per
// path, one call counter per request, the last fixture repeating.
func TestFixtureSequence(t *testing.T) {
	root := t.TempDir()
	write := func(rel, body string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("lab/client/stats/0001", "# counters\nc.x: 1\n# gauges\ng.y: 5\n")
	write("lab/client/stats/0002", "# counters\nc.x: 7\n# gauges\ng.y: 0\n")
	write("lab/client/clusters.json/0001", `{"cluster_statuses":[]}`)
	write("lab/cli/stats/0001", "c.x: 999\n") // a shorter prefix loses

	env := environment{PodName: "client-6d4b9-x2x7q", PodNamespace: "lab", FixtureRoot: root}
	call := func(path string) string {
		t.Helper()
		var out, errb bytes.Buffer
		body, err := serve(env, path)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out.WriteString(body)
		_ = errb
		return out.String()
	}
	counters, gauges := "stats?type=Counters", "stats?type=Gauges"
	for i, want := range [][2]string{{"c.x: 1\n", "g.y: 5\n"}, {"c.x: 7\n", "g.y: 0\n"}, {"c.x: 7\n", "g.y: 0\n"}} {
		if got := call(counters); got != want[0] {
			t.Errorf("snapshot %d counters = %q, want %q", i+1, got, want[0])
		}
		if got := call(gauges); got != want[1] {
			t.Errorf("snapshot %d gauges = %q, want %q", i+1, got, want[1])
		}
	}
	if got := call("clusters?format=json"); got != `{"cluster_statuses":[]}` {
		t.Errorf("clusters json = %q", got)
	}
	if _, err := serve(env, "clusters"); err == nil {
		t.Error("clusters (text) served without a text fixture")
	}
	if _, err := serve(environment{PodName: "server-1", PodNamespace: "lab", FixtureRoot: root}, "stats"); err == nil {
		t.Error("a pod without fixtures got stats")
	}
}

func TestRunUsage(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"wait"}, &out, &errb); code != 2 {
		t.Errorf("pilot-agent wait: exit %d", code)
	}
	t.Setenv("POD_NAME", "")
	if code := run([]string{"request", "GET", "stats"}, &out, &errb); code != 1 || !strings.Contains(errb.String(), "POD_NAME") {
		t.Errorf("request without pod identity: exit %d, stderr %q", code, errb.String())
	}
}

func TestNameMatcher(t *testing.T) {
	m, err := nameMatcher(`outbound\|8080\|\|backend\..*`)
	if err != nil {
		t.Fatal(err)
	}
	if !m("outbound|8080||backend.conn-lab.svc.cluster.local") || m("xoutbound|8080||backend.a") {
		t.Error("name_regex must match the whole name, like Envoy's")
	}
}
