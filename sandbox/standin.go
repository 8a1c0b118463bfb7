package sandbox

import (
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
// answer. Fixtures replay Envoy's runtime state (counters, gauges, hosts); a test that relies on them
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
	if err := WriteFixtures(si.Dir, fixtures...); err != nil {
		t.Fatal(err)
	}
	return si
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
