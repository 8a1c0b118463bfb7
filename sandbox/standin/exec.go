package main

// The exec stand-in. The same binary, linked into the pods' PATH under another name (fortio,
// bash, …), answers a command run in a pod with a recorded result when the test wrote one for that
// pod and command, and runs the real program otherwise. kwok runs every exec on the host, where a
// pod's fortio cannot reach a Service name and a curl loop has no GSLB to watch: what those
// commands measured on a real cluster is replayed instead. Replays are fixtures, as stats are: a
// test that relies on one proves labrun's handling of the result, not the network's behaviour.
//
// Layout: <pod fixture dir>/exec_<command>/<NNNN>, each a JSON execFixture; the n-th run of the
// command in one pod gets the n-th file (the last repeats), like the admin paths.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// execFixture is one recorded run of a command (the writer is sandbox.ExecFixture).
type execFixture struct {
	Stdout string `json:"stdout"`
	Stderr string `json:"stderr,omitempty"`
	Exit   int    `json:"exit,omitempty"`
	// DelayMs is how long the replay takes before it answers: the recorded run's duration, so
	// that steps timed against it (samplers, at offsets) see it running.
	DelayMs int64 `json:"delayMs,omitempty"`
	// Logs are lines appended, when the replay ends, to containers' logs, stamped with that
	// time: by container name, of the same pod (e.g. the sidecar's access-log lines of the
	// requests a load made); by "<container>@<label selector>", of the newest pod of the same
	// namespace the selector matches (e.g. a waypoint's lines for the client's request). Envoy log
	// lines ("<time>\t<level>\tenvoy <logger> …") are appended only when the receiving pod's
	// logger is at that level (POST logging, logging.go). {{clusterIP …}} and {{podIP …}} are
	// filled in as in Stdout.
	Logs map[string][]string `json:"logs,omitempty"`
	// Match, when set, limits the replay to runs whose arguments (joined by spaces) contain it,
	// for runs of one command that start together (two curl loops to two URLs). Replays with the
	// same Match form one sequence; a run takes the longest Match it contains.
	Match string `json:"match,omitempty"`
}

// execStandIn runs command name with args: a replay if the pod has one, else the real program.
func execStandIn(name string, args []string, stdout, stderr io.Writer) int {
	env := environment{
		PodName:      os.Getenv("POD_NAME"),
		PodNamespace: os.Getenv("POD_NAMESPACE"),
		FixtureRoot:  os.Getenv("LABRUN_STANDIN_FIXTURES"),
		Kubeconfig:   os.Getenv("KUBECONFIG"),
		Mesh:         os.Getenv("LABRUN_MESH_KUBECONFIG"),
	}
	if env.PodName != "" && env.PodNamespace != "" && env.FixtureRoot != "" {
		f, err := execReplay(env, name, args)
		switch {
		case err != nil:
			fmt.Fprintf(stderr, "%s: exec stand-in (%s/%s): %v\n", name, env.PodNamespace, env.PodName, err)
			return 126
		case f != nil:
			return replay(env, f, stdout, stderr)
		}
	}
	return execReal(name, args, stderr)
}

// execReplay returns the pod's next recorded run of command name with args, or nil when none was
// written for it.
func execReplay(env environment, name string, args []string) (*execFixture, error) {
	dir, err := podFixtureDir(env)
	if errors.Is(err, errNoFixtures) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	series := "exec_" + name
	files, err := fixtureFiles(dir, series)
	if err != nil || len(files) == 0 {
		return nil, err
	}
	// The sequence of this run: the replays with the longest Match its arguments contain.
	argv := strings.Join(args, " ")
	var seq []*execFixture
	match := ""
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		var f execFixture
		if err := json.Unmarshal(b, &f); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		switch {
		case !strings.Contains(argv, f.Match) || len(f.Match) < len(match):
		case len(f.Match) > len(match) || seq == nil:
			match, seq = f.Match, []*execFixture{&f}
		case f.Match == match:
			seq = append(seq, &f)
		}
	}
	if seq == nil {
		return nil, nil
	}
	n, err := nextCall(dir, env.PodName, "exec "+name+"\x00"+match)
	if err != nil {
		return nil, err
	}
	f := seq[min(n, len(seq)-1)]
	memo := filepath.Join(dir, ".refs.json")
	if f.Stdout, err = expandRefs(env, f.Stdout, memo); err != nil {
		return nil, err
	}
	for c, lines := range f.Logs {
		for i, l := range lines {
			if lines[i], err = expandRefs(env, l, memo); err != nil {
				return nil, fmt.Errorf("log line for %s: %w", c, err)
			}
		}
	}
	return f, nil
}

// replay plays a recorded run: waits its duration, appends its log lines, prints its output.
func replay(env environment, f *execFixture, stdout, stderr io.Writer) int {
	if f.DelayMs > 0 {
		time.Sleep(time.Duration(f.DelayMs) * time.Millisecond)
	}
	if len(f.Logs) > 0 {
		root := os.Getenv("LABRUN_SANDBOX_DIR")
		if root == "" {
			fmt.Fprintln(stderr, "exec stand-in: LABRUN_SANDBOX_DIR is not set: cannot write the replay's container logs")
			return 126
		}
		for key, lines := range f.Logs {
			if err := appendPodLog(env, root, key, lines); err != nil {
				fmt.Fprintf(stderr, "exec stand-in: %v\n", err)
				return 126
			}
		}
	}
	io.WriteString(stdout, f.Stdout)
	io.WriteString(stderr, f.Stderr)
	return f.Exit
}

// appendPodLog appends a replay's lines to the log of the container key names: "<container>" of
// the pod itself, or "<container>@<label selector>" of the newest pod of its namespace the
// selector matches. Envoy log lines below the receiving pod's logger levels are left out.
func appendPodLog(env environment, sandboxDir, key string, lines []string) error {
	container, selector, other := strings.Cut(key, "@")
	pod := env.PodName
	if other {
		var err error
		if pod, err = newestPod(env, selector); err != nil {
			return fmt.Errorf("log lines for %s: %w", key, err)
		}
	}
	levels, err := readLevels(logLevelsPath(sandboxDir, env.PodNamespace, pod))
	if err != nil {
		return err
	}
	var kept []string
	for _, l := range lines {
		if keepLogLine(levels, l) {
			kept = append(kept, l)
		}
	}
	return appendCRILog(filepath.Join(sandboxDir, "logs", env.PodNamespace, pod, container+".log"), kept)
}

// newestPod is the name of the newest pod of env's namespace matching selector that is not being
// deleted.
func newestPod(env environment, selector string) (string, error) {
	cs, err := kubeClient(env, "")
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pods, err := cs.CoreV1().Pods(env.PodNamespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return "", err
	}
	name := ""
	var newest time.Time
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil && (name == "" || p.CreationTimestamp.After(newest)) {
			name, newest = p.Name, p.CreationTimestamp.Time
		}
	}
	if name == "" {
		return "", fmt.Errorf("no pod of namespace %s matches %s", env.PodNamespace, selector)
	}
	return name, nil
}

// appendCRILog appends lines to a container log file in the CRI format kwok serves.
func appendCRILog(path string, lines []string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	file, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(time.Now().UTC().Format(time.RFC3339Nano) + " stdout F " + l + "\n")
	}
	if _, err := file.WriteString(b.String()); err != nil {
		file.Close()
		return err
	}
	return file.Close()
}

// execReal replaces this process with the real program: $LABRUN_SANDBOX_DIR/podbin.real/<name>
// when the sandbox put one there (fortio, whose CLI is in the sandbox's cache), else the first
// <name> on PATH that is not this stand-in.
func execReal(name string, args []string, stderr io.Writer) int {
	path, err := realProgram(name)
	if err != nil {
		fmt.Fprintf(stderr, "%s: exec stand-in: %v\n", name, err)
		return 127
	}
	err = syscall.Exec(path, append([]string{name}, args...), os.Environ())
	fmt.Fprintf(stderr, "%s: exec stand-in: exec %s: %v\n", name, path, err)
	return 126
}

func realProgram(name string) (string, error) {
	if root := os.Getenv("LABRUN_SANDBOX_DIR"); root != "" {
		p := filepath.Join(root, "podbin.real", name)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	self, _ := os.Executable()
	self, _ = filepath.EvalSymlinks(self)
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if dir == "" {
			continue
		}
		p := filepath.Join(dir, name)
		st, err := os.Stat(p)
		if err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			continue
		}
		if r, err := filepath.EvalSymlinks(p); err == nil && r == self {
			continue
		}
		return p, nil
	}
	return "", fmt.Errorf("no %s on PATH besides the stand-in", name)
}
