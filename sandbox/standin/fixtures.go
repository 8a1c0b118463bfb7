package main

// Fixtures on disk (the writer is labrun.dev/labrun/sandbox, (*Sandbox).EnvoyStandIn):
//
//	$LABRUN_STANDIN_FIXTURES/<namespace>/<pod>/<series>/<file>          bodies, played in file-name order
//	$LABRUN_STANDIN_FIXTURES/<namespace>/<pod>/.calls/<pod name>/<key>  how often each request was answered
//
// <pod> is a pod name or a prefix of one (a Deployment's name); the longest directory name that
// prefixes the pod's name wins. When that directory holds sets/<NNNN>/ directories instead, each
// pod replays one set: the first pod to ask for a fixture claims set 1, the next pod set 2, and so
// on (recorded in .claims/<pod name>), for runs that recreate a Deployment once per scenario. <series> is the admin path with "/" replaced by "_", plus ".json"
// when the query says format=json and ".prom" for format=prometheus: "stats", "stats.json",
// "clusters", "clusters.json", "stats_prometheus". The n-th call of one request (path and query as
// given) gets the n-th file of its series; past the end the last file repeats. So a snapshot that asks
// `stats?type=Counters&filter=X` and `stats?type=Gauges&filter=X` gets file 1 for both, the next
// snapshot file 2 for both.

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// splitPath separates an admin path from its query.
func splitPath(path string) (string, url.Values) {
	endpoint, raw, _ := strings.Cut(path, "?")
	q, _ := url.ParseQuery(raw)
	return strings.Trim(endpoint, "/"), q
}

// seriesName names the fixture series that answers endpoint with query.
func seriesName(endpoint string, query url.Values) string {
	s := strings.ReplaceAll(strings.Trim(endpoint, "/"), "/", "_")
	switch query.Get("format") {
	case "json":
		s += ".json"
	case "prometheus":
		s += ".prom"
	}
	return s
}

// podFixtureDir finds the fixture directory of the pod: the longest entry of <root>/<namespace>
// that prefixes the pod's name.
func podFixtureDir(env environment) (string, error) {
	if env.FixtureRoot == "" {
		return "", fmt.Errorf("LABRUN_STANDIN_FIXTURES is not set")
	}
	nsDir := filepath.Join(env.FixtureRoot, env.PodNamespace)
	entries, err := os.ReadDir(nsDir)
	if err != nil && !os.IsNotExist(err) {
		return "", err
	}
	best := ""
	for _, e := range entries {
		if e.IsDir() && strings.HasPrefix(env.PodName, e.Name()) && len(e.Name()) > len(best) {
			best = e.Name()
		}
	}
	if best == "" {
		return "", fmt.Errorf("%w: no directory in %s is a prefix of %q "+
			"(write them with (*sandbox.Sandbox).EnvoyStandIn)", errNoFixtures, nsDir, env.PodName)
	}
	dir := filepath.Join(nsDir, best)
	if _, err := os.Stat(filepath.Join(dir, "sets")); err == nil {
		return claimSet(dir, env.PodName)
	}
	return dir, nil
}

// errNoFixtures: nothing was written for this pod.
var errNoFixtures = errors.New("no fixtures for this pod")

// claimSet returns the fixture set of pod in dir/sets: the set it claimed before, or the next
// unclaimed one. Pods claim sets in the order of their first fixture request, so the n-th pod of a
// Deployment to ask (the n-th scenario of a run that recreates it) replays the n-th set.
func claimSet(dir, pod string) (string, error) {
	lock, err := os.OpenFile(filepath.Join(dir, ".claims.lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return "", err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", err
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	claims := filepath.Join(dir, ".claims")
	if err := os.MkdirAll(claims, 0o755); err != nil {
		return "", err
	}
	if b, err := os.ReadFile(filepath.Join(claims, pod)); err == nil {
		return filepath.Join(dir, "sets", strings.TrimSpace(string(b))), nil
	}
	taken, err := os.ReadDir(claims)
	if err != nil {
		return "", err
	}
	sets, err := os.ReadDir(filepath.Join(dir, "sets"))
	if err != nil {
		return "", err
	}
	var names []string
	for _, e := range sets {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	if len(taken) >= len(names) {
		return "", fmt.Errorf("%w: all %d fixture sets of %s were claimed by earlier pods", errNoFixtures, len(names), dir)
	}
	set := names[len(taken)]
	if err := os.WriteFile(filepath.Join(claims, pod), []byte(set+"\n"), 0o644); err != nil {
		return "", err
	}
	return filepath.Join(dir, "sets", set), nil
}

// fixtureFiles lists a series' files in play order.
func fixtureFiles(dir, series string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(dir, series))
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, err
	}
	var files []string
	for _, e := range entries {
		if !e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			files = append(files, filepath.Join(dir, series, e.Name()))
		}
	}
	sort.Strings(files)
	return files, nil
}

// nextCall returns how many times request was answered before for this pod, and counts this call.
// A file lock keeps concurrent execs of the same request from getting the same fixture.
func nextCall(dir, pod, request string) (int, error) {
	sum := sha256.Sum256([]byte(request))
	callsDir := filepath.Join(dir, ".calls", pod)
	if err := os.MkdirAll(callsDir, 0o755); err != nil {
		return 0, err
	}
	f, err := os.OpenFile(filepath.Join(callsDir, hex.EncodeToString(sum[:8])), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return 0, err
	}
	defer syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	buf := make([]byte, 32)
	n, _ := f.ReadAt(buf, 0)
	count, _ := strconv.Atoi(strings.TrimSpace(string(buf[:n])))
	if err := f.Truncate(0); err != nil {
		return 0, err
	}
	if _, err := f.WriteAt([]byte(strconv.Itoa(count+1)+"\n"), 0); err != nil {
		return 0, err
	}
	return count, nil
}

// fixtureResponse answers a non-config_dump request from the pod's fixtures.
func fixtureResponse(env environment, endpoint, request string, query url.Values) (string, error) {
	dir, err := podFixtureDir(env)
	if err != nil {
		return "", fmt.Errorf("%s: %w", request, err)
	}
	series := seriesName(endpoint, query)
	files, err := fixtureFiles(dir, series)
	if err != nil {
		return "", err
	}
	derived := false
	if len(files) == 0 && endpoint == "stats" && query.Get("format") == "json" {
		// Envoy's JSON stats are the text stats in another shape: derive them.
		if files, err = fixtureFiles(dir, "stats"); err != nil {
			return "", err
		}
		derived = true
	}
	if len(files) == 0 {
		return "", fmt.Errorf("no fixture for %q: the stand-in answers config_dump from istiod and other paths only "+
			"from fixtures (looked in %s)", request, filepath.Join(dir, series))
	}
	n, err := nextCall(dir, env.PodName, request)
	if err != nil {
		return "", err
	}
	if n >= len(files) {
		n = len(files) - 1
	}
	raw, err := os.ReadFile(files[n])
	if err != nil {
		return "", err
	}
	body, err := expandRefs(env, string(raw), filepath.Join(dir, ".refs.json"))
	if err != nil {
		return "", err
	}
	if endpoint == "stats" && (series == "stats" || derived) {
		return renderStats(body, query)
	}
	return body, nil
}
