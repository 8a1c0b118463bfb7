package sandbox

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Fixture is one scripted answer of the Envoy admin stand-in (the test program installed as
// pilot-agent in every pod) for an admin path other than config_dump, which is always istiod's real
// answer, or of the exec stand-in (ExecReplay, FortioReplay). Fixtures replay Envoy's runtime state (counters, gauges, hosts); a test that relies on them
// proves labrun's handling of that state, not Envoy's behaviour, and must say so.
type Fixture struct {
	// Path is the admin path the fixture answers, e.g. "stats", "clusters", "clusters?format=json",
	// "stats/prometheus". Of the query only format= matters: it selects the series.
	Path string
	// Body is the response body. Text stats bodies may carry "# counters", "# gauges",
	// "# histograms" section lines so that type= can be honoured (see sandbox/standin/stats.go).
	Body string
}

// StatsFixture is a text /stats answer; the stand-in applies filter= and type= to it and can serve
// it as format=json.
func StatsFixture(body string) Fixture { return Fixture{Path: "stats", Body: body} }

// ClustersFixture is a text /clusters answer.
func ClustersFixture(body string) Fixture { return Fixture{Path: "clusters", Body: body} }

// ClustersJSONFixture is a /clusters?format=json answer (what a snapshot with hosts: true reads).
func ClustersJSONFixture(body string) Fixture {
	return Fixture{Path: "clusters?format=json", Body: body}
}

// ExecReplay is a recorded run of a command in a pod, replayed by the exec stand-in: the sandbox
// links the command's name in the pods' PATH to the stand-in, which answers the n-th run of that
// command in a pod with the pod's n-th ExecReplay of it (the last repeats), and runs the real
// program in pods that have none. kwok runs pod commands on the host, where a pod's fortio cannot
// reach a Service and a curl loop has no backend: what they measured on a cluster is replayed.
type ExecReplay struct {
	// Command is the program's name as the exec gives it (argv[0]): "fortio", "bash".
	Command string
	// Stdout, Stderr and Exit are what the run printed and its exit code. In Stdout,
	// {{clusterIP NAME}} and {{podIP SELECTOR}} are filled in with this run's addresses
	// (sandbox/standin/refs.go).
	Stdout, Stderr string
	Exit           int
	// Duration is how long the replay takes before it answers (the recorded run's duration):
	// steps that sample while it runs, or start at an offset, see it running.
	Duration time.Duration
	// Logs are lines appended to containers' logs when the replay ends, stamped then: keyed by a
	// container of the same pod (e.g. "istio-proxy": the access-log lines of the requests a load
	// made), or by "<container>@<label selector>", a container of the newest live pod of the
	// namespace the selector matches (e.g. a waypoint's lines for a client's request). Envoy's own
	// lines ("<time>\t<level>\tenvoy <logger> …") reach a pod's log only at or above the level of
	// that logger in the pod (Istio's defaults, changed by `pilot-agent request POST logging?…`).
	// {{clusterIP …}} and {{podIP …}} are filled in as in Stdout.
	Logs map[string][]string
	// Match, when set, limits the replay to runs whose arguments (joined by spaces) contain it:
	// for runs of one command that start together, e.g. two curl loops to two URLs. Replays with
	// the same Match form one sequence; a run takes the longest Match it contains.
	Match string
}

// execReplayBody is an ExecReplay as the stand-in reads it from a fixture (sandbox/standin/exec.go).
type execReplayBody struct {
	Stdout  string              `json:"stdout"`
	Stderr  string              `json:"stderr,omitempty"`
	Exit    int                 `json:"exit,omitempty"`
	DelayMs int64               `json:"delayMs,omitempty"`
	Logs    map[string][]string `json:"logs,omitempty"`
	Match   string              `json:"match,omitempty"`
}

// Fixture is the replay as a fixture for EnvoyStandIn.
func (r ExecReplay) Fixture() Fixture {
	b, _ := json.Marshal(execReplayBody{r.Stdout, r.Stderr, r.Exit, r.Duration.Milliseconds(), r.Logs, r.Match})
	return Fixture{Path: execPathPrefix + r.Command, Body: string(b)}
}

// ParseExecReplay reads back a fixture that ExecReplay.Fixture wrote (e.g. one of ReplayDir's),
// for a test that changes a recorded run.
func ParseExecReplay(f Fixture) (ExecReplay, error) {
	command, ok := strings.CutPrefix(f.Path, execPathPrefix)
	if !ok {
		return ExecReplay{}, fmt.Errorf("fixture %s is not an exec replay", f.Path)
	}
	var b execReplayBody
	if err := json.Unmarshal([]byte(f.Body), &b); err != nil {
		return ExecReplay{}, fmt.Errorf("fixture %s: %w", f.Path, err)
	}
	return ExecReplay{Command: command, Stdout: b.Stdout, Stderr: b.Stderr, Exit: b.Exit,
		Duration: time.Duration(b.DelayMs) * time.Millisecond, Logs: b.Logs, Match: b.Match}, nil
}

// execPathPrefix marks exec replays among fixtures: series exec_<command>.
const execPathPrefix = "exec/"

// FortioReplay is a recorded `fortio load -json -` result (its stdout) as an ExecReplay of fortio,
// lasting the run's ActualDuration; logs as in ExecReplay.
func FortioReplay(resultJSON []byte, logs map[string][]string) (ExecReplay, error) {
	var res struct {
		RunType        string
		ActualDuration int64
	}
	if err := json.Unmarshal(resultJSON, &res); err != nil || res.RunType == "" {
		return ExecReplay{}, fmt.Errorf("not a fortio JSON result: %v", err)
	}
	return ExecReplay{Command: "fortio", Stdout: string(resultJSON), Duration: time.Duration(res.ActualDuration), Logs: logs}, nil
}

// StandIn holds the fixtures of the stand-in for the pods of one namespace whose names start with a
// given prefix (a pod name, or a Deployment's name for all its pods).
type StandIn struct {
	Dir string // <sandbox>/standin/<namespace>/<prefix>
}

// EnvoyStandIn (re)sets the stand-in's fixtures for the pods of namespace whose names start with pod,
// writes fixtures, and removes them when the test ends. Each call of one admin request (path and
// query) in one pod gets the next fixture of its path, in the order given; the last one repeats. So
// to script before/during/after snapshots, give three StatsFixtures. When several prefixes match a
// pod, the longest wins.
func (s *Sandbox) EnvoyStandIn(t testing.TB, namespace, pod string, fixtures ...Fixture) *StandIn {
	t.Helper()
	if namespace == "" || pod == "" || strings.ContainsAny(namespace+pod, `/\`) {
		t.Fatalf("EnvoyStandIn: bad namespace %q or pod %q", namespace, pod)
	}
	si := &StandIn{Dir: filepath.Join(s.Dir, "standin", namespace, pod)}
	if err := os.RemoveAll(si.Dir); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(si.Dir) })
	if err := s.linkExecStandIns(fixtures); err != nil {
		t.Fatal(err)
	}
	if err := WriteFixtures(si.Dir, fixtures...); err != nil {
		t.Fatal(err)
	}
	return si
}

// EnvoyStandInPerPod is EnvoyStandIn for a run that recreates the pods (e.g. `labrun doc` running
// one scenario after another, each creating its namespace anew): the first pod of namespace whose
// name starts with pod to ask the stand-in for a fixture (stats, clusters, an exec replay) replays
// perPod[0], the next such pod perPod[1], and so on; config_dump, always istiod's, claims nothing.
// A pod with no set left gets an error naming the sets already claimed.
func (s *Sandbox) EnvoyStandInPerPod(t testing.TB, namespace, pod string, perPod ...[]Fixture) *StandIn {
	t.Helper()
	si := s.EnvoyStandIn(t, namespace, pod)
	for i, fixtures := range perPod {
		if err := s.linkExecStandIns(fixtures); err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(si.Dir, "sets", fmt.Sprintf("%04d", i+1))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := WriteFixtures(dir, fixtures...); err != nil {
			t.Fatal(err)
		}
	}
	return si
}

// linkExecStandIns puts the exec stand-in in the pods' PATH under the name of every command the
// fixtures replay. A link stays for the sandbox's life: in a pod without a replay of the command,
// the stand-in runs the real program.
func (s *Sandbox) linkExecStandIns(fixtures []Fixture) error {
	for _, f := range fixtures {
		cmd, ok := strings.CutPrefix(f.Path, execPathPrefix)
		if !ok {
			continue
		}
		if cmd == "" || strings.ContainsAny(cmd, `/\`) || cmd == "pilot-agent" {
			return fmt.Errorf("exec replay of %q: not a command name the stand-in can take", cmd)
		}
		link := filepath.Join(s.Dir, "podbin", cmd)
		if _, err := os.Lstat(link); err == nil {
			continue
		}
		if err := os.Symlink(s.bins.StandIn, link); err != nil && !os.IsExist(err) {
			return err
		}
	}
	return nil
}

// Add appends fixtures after the ones already there.
func (si *StandIn) Add(fixtures ...Fixture) error { return WriteFixtures(si.Dir, fixtures...) }

// Rewind makes the next call of every request start again at its first fixture.
func (si *StandIn) Rewind() error { return os.RemoveAll(filepath.Join(si.Dir, ".calls")) }

// WriteFixtures appends fixtures to a stand-in fixture directory. The layout, read by
// sandbox/standin/fixtures.go: <dir>/<series>/<NNNN>, where series is the path with "/" replaced
// by "_" and ".json" (format=json) or ".prom" (format=prometheus) appended.
func WriteFixtures(dir string, fixtures ...Fixture) error {
	for _, f := range fixtures {
		series := seriesName(f.Path)
		sdir := filepath.Join(dir, series)
		if err := os.MkdirAll(sdir, 0o755); err != nil {
			return err
		}
		entries, err := os.ReadDir(sdir)
		if err != nil {
			return err
		}
		name := filepath.Join(sdir, fmt.Sprintf("%04d", len(entries)+1))
		if err := os.WriteFile(name+".tmp", []byte(f.Body), 0o644); err != nil {
			return err
		}
		if err := os.Rename(name+".tmp", name); err != nil {
			return err
		}
	}
	return nil
}

// seriesName mirrors the stand-in's naming of a fixture series.
func seriesName(path string) string {
	endpoint, raw, _ := strings.Cut(strings.TrimPrefix(path, "/"), "?")
	q, _ := url.ParseQuery(raw)
	s := strings.ReplaceAll(strings.Trim(endpoint, "/"), "/", "_")
	switch q.Get("format") {
	case "json":
		s += ".json"
	case "prometheus":
		s += ".prom"
	}
	return s
}

// WriteContainerLog appends lines to a container's log as kwok serves it (`kubectl logs`), each
// stamped now on stdout in the CRI log format. The pod need not exist yet.
func (s *Sandbox) WriteContainerLog(t testing.TB, namespace, pod, container string, lines ...string) {
	t.Helper()
	path := s.ContainerLogPath(namespace, pod, container)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(CRILogLine(time.Now(), "stdout", l))
	}
	if _, err := f.WriteString(b.String()); err != nil {
		t.Fatal(err)
	}
}

// CRILogLine formats one full line of a CRI container log: `<RFC3339Nano> <stream> F <line>\n`.
func CRILogLine(ts time.Time, stream, line string) string {
	return ts.UTC().Format(time.RFC3339Nano) + " " + stream + " F " + line + "\n"
}
