package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
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

// TestFixtureSetsPerPod: with sets/, the first pod to ask claims set 1, the next set 2; a pod
// keeps its set; a pod with none left gets an error; each pod's calls are counted in its set.
func TestFixtureSetsPerPod(t *testing.T) {
	root := t.TempDir()
	for set, v := range map[string]string{"0001": "1", "0002": "2"} {
		p := filepath.Join(root, "lab", "client", "sets", set, "stats", "0001")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("# counters\nc.x: "+v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := func(pod string) environment {
		return environment{PodName: pod, PodNamespace: "lab", FixtureRoot: root}
	}
	for _, c := range []struct{ pod, want string }{
		{"client-a-1", "c.x: 1\n"}, {"client-b-2", "c.x: 2\n"}, {"client-a-1", "c.x: 1\n"},
	} {
		got, err := serve(env(c.pod), "stats")
		if err != nil || got != c.want {
			t.Errorf("%s: %q, %v; want %q", c.pod, got, err, c.want)
		}
	}
	if _, err := serve(env("client-c-3"), "stats"); err == nil || !strings.Contains(err.Error(), "claimed") {
		t.Errorf("a third pod: %v, want an error saying both sets were claimed", err)
	}
	if _, err := serve(env("client-a-1"), "config_dump_not"); err == nil {
		t.Errorf("a path without fixtures was served")
	}
}

// TestExecReplay: a recorded run is replayed (stdout, exit code, container log lines after its
// duration) for the pod that has one, in order, the last repeating; a pod without one runs the
// real program.
func TestExecReplay(t *testing.T) {
	root, sandboxDir := t.TempDir(), t.TempDir()
	dir := filepath.Join(root, "lab", "client", "exec_fortio")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i, f := range []execFixture{
		{Stdout: `{"RunType":"HTTP"}` + "\n", DelayMs: 50, Logs: map[string][]string{"istio-proxy": {"line one", "line two"}}},
		{Stdout: "second\n", Exit: 3},
	} {
		b, _ := json.Marshal(f)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%04d", i+1)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("POD_NAME", "client-x-1")
	t.Setenv("POD_NAMESPACE", "lab")
	t.Setenv("LABRUN_STANDIN_FIXTURES", root)
	t.Setenv("LABRUN_SANDBOX_DIR", sandboxDir)
	var out, errb bytes.Buffer
	start := time.Now()
	if code := execStandIn("fortio", []string{"load", "-json", "-"}, &out, &errb); code != 0 || out.String() != `{"RunType":"HTTP"}`+"\n" {
		t.Fatalf("first run: exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
	if time.Since(start) < 50*time.Millisecond {
		t.Errorf("the replay did not last its recorded duration")
	}
	logb, err := os.ReadFile(filepath.Join(sandboxDir, "logs", "lab", "client-x-1", "istio-proxy.log"))
	if err != nil || !regexp.MustCompile(`(?m)^\S+Z stdout F line one\n\S+Z stdout F line two\n$`).Match(logb) {
		t.Errorf("container log = %q, %v", logb, err)
	}
	for range 2 {
		out.Reset()
		if code := execStandIn("fortio", nil, &out, &errb); code != 3 || out.String() != "second\n" {
			t.Errorf("later run: exit %d, stdout %q", code, out.String())
		}
	}
	if f, err := execReplay(environment{PodName: "server-1", PodNamespace: "lab", FixtureRoot: root}, "fortio", nil); f != nil || err != nil {
		t.Errorf("a pod without replays: %+v, %v; want the real program", f, err)
	}
	if f, err := execReplay(environment{PodName: "client-x-1", PodNamespace: "lab", FixtureRoot: root}, "bash", nil); f != nil || err != nil {
		t.Errorf("a command without replays: %+v, %v; want the real program", f, err)
	}
}

func TestExpandRefsWithoutPlaceholders(t *testing.T) {
	body := `{"address":"10.0.0.1"} {{ not a ref }}`
	got, err := expandRefs(environment{}, body, "")
	if err != nil || got != body {
		t.Errorf("expandRefs = %q, %v", got, err)
	}
	if _, err := expandRefs(environment{PodNamespace: "lab"}, "{{clusterIP backend-a}}", ""); err == nil || !strings.Contains(err.Error(), "KUBECONFIG") {
		t.Errorf("a ref without a cluster to ask: %v", err)
	}
	// A remembered address is used without asking the cluster (here there is none to ask).
	memo := filepath.Join(t.TempDir(), ".refs.json")
	if err := os.WriteFile(memo, []byte(`{"{{podIP app=backend-a}}":"10.0.0.7"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := expandRefs(environment{PodNamespace: "lab"}, "{{podIP app=backend-a}}:443", memo); err != nil || got != "10.0.0.7:443" {
		t.Errorf("a remembered ref: %q, %v", got, err)
	}
}

// TestExecReplayMatch: runs of one command that start together are told apart by their arguments.
func TestExecReplayMatch(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "lab", "client", "exec_bash")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i, f := range []execFixture{
		{Stdout: "pt 1\n", Match: "https://gslb-pt.lab.internal/"},
		{Stdout: "http 1\n", Match: "http://gslb.lab.internal/"},
		{Stdout: "pt 2\n", Match: "https://gslb-pt.lab.internal/"},
		{Stdout: "any\n"},
	} {
		b, _ := json.Marshal(f)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%04d", i+1)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := environment{PodName: "client-x-1", PodNamespace: "lab", FixtureRoot: root}
	for _, c := range []struct{ args, want string }{
		{"-c loop pt 40 https://gslb-pt.lab.internal/", "pt 1\n"},
		{"-c loop http 40 http://gslb.lab.internal/", "http 1\n"},
		{"-c loop pt 40 https://gslb-pt.lab.internal/", "pt 2\n"},
		{"-c echo", "any\n"},
		{"-c loop http 40 http://gslb.lab.internal/", "http 1\n"},
	} {
		f, err := execReplay(env, "bash", strings.Fields(c.args))
		if err != nil || f == nil || f.Stdout != c.want {
			t.Errorf("%s: %+v, %v; want %q", c.args, f, err, c.want)
		}
	}
}

// TestPostLogging: POST logging changes the pod's levels as Envoy's /logging does — one query
// parameter, all or nothing — answers with the active loggers, and remembers them for the pod.
func TestPostLogging(t *testing.T) {
	sandboxDir := t.TempDir()
	t.Setenv("POD_NAME", "waypoint-7d9-x1")
	t.Setenv("POD_NAMESPACE", "lab")
	t.Setenv("LABRUN_SANDBOX_DIR", sandboxDir)
	t.Setenv("LABRUN_STANDIN_FIXTURES", t.TempDir())
	post := func(path string) (int, string, string) {
		var out, errb bytes.Buffer
		code := run([]string{"request", "POST", path}, &out, &errb)
		return code, out.String(), errb.String()
	}
	// Two parameters: Envoy answers 400 and changes nothing; pilot-agent fails on it.
	code, out, errb := post("logging?connection=debug&pool=debug")
	if code != 1 || out != "" || !strings.Contains(errb, "received unsuccessful status code 400: error: invalid number of parameters") ||
		!strings.Contains(errb, "  connection: warning\n") {
		t.Errorf("two parameters: exit %d, stdout %q, stderr %q", code, out, errb)
	}
	code, out, errb = post("logging?paths=connection:debug,pool:debug")
	if code != 0 || !strings.HasPrefix(out, "active loggers:\n  admin: warning\n") ||
		!strings.Contains(out, "  connection: debug\n") || !strings.Contains(out, "  pool: debug\n") ||
		!strings.Contains(out, "  misc: error\n") || !strings.Contains(out, "  router: warning\n") {
		t.Errorf("paths: exit %d, stdout %q, stderr %q", code, out, errb)
	}
	// Kept: a later call shows them; a bad one (unknown logger) changes nothing.
	if code, _, errb := post("logging?paths=router:debug,nosuch:debug"); code != 1 || !strings.Contains(errb, "unknown logger name") {
		t.Errorf("unknown logger: exit %d, stderr %q", code, errb)
	}
	if code, _, errb := post("logging?router=loud"); code != 1 || !strings.Contains(errb, "unknown log level") {
		t.Errorf("unknown level: exit %d, stderr %q", code, errb)
	}
	if code, out, _ := post("logging?router=trace"); code != 0 || !strings.Contains(out, "  router: trace\n") || !strings.Contains(out, "  pool: debug\n") {
		t.Errorf("one logger: exit %d, stdout %q", code, out)
	}
	levels, err := readLevels(logLevelsPath(sandboxDir, "lab", "waypoint-7d9-x1"))
	if err != nil || levels("pool") != "debug" || levels("router") != "trace" || levels("http") != "warning" {
		t.Errorf("kept levels: pool %s, router %s, http %s (%v)", levels("pool"), levels("router"), levels("http"), err)
	}
	if code, out, _ := post("logging?level=info"); code != 0 || strings.Contains(out, ": debug\n") || !strings.Contains(out, "  misc: info\n") {
		t.Errorf("level=info: exit %d, stdout %q", code, out)
	}
	// Other POSTs are refused; GET logging is what it was (fixtures).
	var o, e bytes.Buffer
	if code := run([]string{"request", "POST", "quitquitquit"}, &o, &e); code != 1 || !strings.Contains(e.String(), "only GET and POST logging") {
		t.Errorf("POST quitquitquit: exit %d, stderr %q", code, e.String())
	}
}

// TestReplayLogLevels: Envoy debug lines a replay writes reach a pod's log only when its logger
// is at debug; other lines always; "<container>@<selector>" needs the cluster (none here).
func TestReplayLogLevels(t *testing.T) {
	sandboxDir := t.TempDir()
	env := environment{PodName: "waypoint-1", PodNamespace: "lab"}
	lines := []string{
		"2026-07-01T10:42:51.101Z\tdebug\tenvoy pool external/envoy/source/common/conn_pool/conn_pool_base.cc:265\t[Tags: \"ConnectionId\":\"79097\"] using existing fully connected connection\tthread=21",
		"2026-07-01T10:42:51.101Z\tdebug\tenvoy router external/envoy/source/common/router/router.cc:1\t[Tags: \"ConnectionId\":\"12\"] routing\tthread=21",
		"2026-07-01T10:42:51.102Z\twarning\tenvoy router external/envoy/source/common/router/router.cc:2\tsomething\tthread=21",
		`[2026-07-01T10:42:51.100Z] "GET / HTTP/1.1" 503 UC upstream_reset_before_response_started{connection_termination} - "-" 0 95 1 - "-" "curl/8.7.1" "r" "dummy:8080" "-" inbound-vip|8080|http|dummy - 10.96.0.9:8080 10.0.0.5:40000 - default`,
	}
	read := func() string {
		b, _ := os.ReadFile(filepath.Join(sandboxDir, "logs", "lab", "waypoint-1", "istio-proxy.log"))
		return string(b)
	}
	if err := appendPodLog(env, sandboxDir, "istio-proxy", lines); err != nil {
		t.Fatal(err)
	}
	if got := read(); strings.Contains(got, "\tdebug\t") || !strings.Contains(got, "\twarning\t") || !strings.Contains(got, "503 UC") {
		t.Errorf("at Istio's default levels: %q", got)
	}
	path := logLevelsPath(sandboxDir, "lab", "waypoint-1")
	if err := withLevels(path, true, func(l map[string]string) { l["pool"] = "debug" }); err != nil {
		t.Fatal(err)
	}
	if err := appendPodLog(env, sandboxDir, "istio-proxy", lines[:2]); err != nil {
		t.Fatal(err)
	}
	if got := read(); !strings.Contains(got, "using existing fully connected connection") || strings.Contains(got, "routing") {
		t.Errorf("with pool at debug: %q", got)
	}
	if err := appendPodLog(env, sandboxDir, "istio-proxy@app=waypoint", lines[:1]); err == nil || !strings.Contains(err.Error(), "KUBECONFIG") {
		t.Errorf("another pod's log without a cluster to find it: %v", err)
	}
}
