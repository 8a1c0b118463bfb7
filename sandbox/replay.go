package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// ReplayDir reads a directory of recorded answers as stand-in fixtures, so that what a scenario
// measured on a cluster can be kept as plain files next to its test and replayed in the sandbox.
// Files are taken in name order (prefix them 1-, 2-, … to order a series); the part of the name
// after the first dot says what a file is:
//
//	NAME.stats.txt        a text /stats answer (StatsFixture): one per snapshot, in call order
//	NAME.clusters.txt     a text /clusters answer (ClustersFixture)
//	NAME.clusters.json    a /clusters?format=json answer (ClustersJSONFixture)
//	NAME.fortio.json      a `fortio load -json -` result (FortioReplay), lasting its ActualDuration;
//	NAME.fortio.C.log     lines the fortio replay NAME appends to container C's log when it ends
//	NAME.exec.json        an ExecReplay as JSON: {"command", "stdout", "stderr", "exit",
//	                      "duration" (a Go duration), "logs": {container: [lines]}, "match"};
//	                      a logs key "container@selector" names another pod's container
//
// Other files (a README) are skipped. Lines of .log files are taken as written; empty lines and
// lines starting with # are skipped.
func ReplayDir(dir string) ([]Fixture, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	read := func(name string) ([]byte, error) { return os.ReadFile(filepath.Join(dir, name)) }
	var out []Fixture
	for _, name := range names {
		base, kind, ok := strings.Cut(name, ".")
		if !ok {
			continue
		}
		switch {
		case kind == "stats.txt":
			b, err := read(name)
			if err != nil {
				return nil, err
			}
			out = append(out, StatsFixture(string(b)))
		case kind == "clusters.txt":
			b, err := read(name)
			if err != nil {
				return nil, err
			}
			out = append(out, ClustersFixture(string(b)))
		case kind == "clusters.json":
			b, err := read(name)
			if err != nil {
				return nil, err
			}
			out = append(out, ClustersJSONFixture(string(b)))
		case kind == "fortio.json":
			b, err := read(name)
			if err != nil {
				return nil, err
			}
			logs, err := replayLogs(dir, names, base+".fortio.")
			if err != nil {
				return nil, err
			}
			r, err := FortioReplay(b, logs)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", filepath.Join(dir, name), err)
			}
			out = append(out, r.Fixture())
		case kind == "exec.json":
			b, err := read(name)
			if err != nil {
				return nil, err
			}
			var r struct {
				Command        string
				Stdout, Stderr string
				Exit           int
				Duration       string
				Logs           map[string][]string
				Match          string
			}
			if err := json.Unmarshal(b, &r); err != nil {
				return nil, fmt.Errorf("%s: %w", filepath.Join(dir, name), err)
			}
			var d time.Duration
			if r.Duration != "" {
				if d, err = time.ParseDuration(r.Duration); err != nil {
					return nil, fmt.Errorf("%s: duration: %w", filepath.Join(dir, name), err)
				}
			}
			if r.Command == "" {
				return nil, fmt.Errorf("%s: no command", filepath.Join(dir, name))
			}
			out = append(out, ExecReplay{Command: r.Command, Stdout: r.Stdout, Stderr: r.Stderr, Exit: r.Exit, Duration: d, Logs: r.Logs, Match: r.Match}.Fixture())
		}
	}
	return out, nil
}

// replayLogs collects the PREFIX<container>.log files of a replay.
func replayLogs(dir string, names []string, prefix string) (map[string][]string, error) {
	var logs map[string][]string
	for _, n := range names {
		rest, ok := strings.CutPrefix(n, prefix)
		if !ok {
			continue
		}
		container, ok := strings.CutSuffix(rest, ".log")
		if !ok || container == "" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			return nil, err
		}
		for _, l := range strings.Split(string(b), "\n") {
			if l = strings.TrimRight(l, "\r"); l == "" || strings.HasPrefix(l, "#") {
				continue
			}
			if logs == nil {
				logs = map[string][]string{}
			}
			logs[container] = append(logs[container], l)
		}
	}
	return logs, nil
}
